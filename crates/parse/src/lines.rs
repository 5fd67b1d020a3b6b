//! Line splitting shared by every text parser: memchr over `\n`, a trailing `\r` removed, a
//! final line without a newline kept, each line decoded as UTF-8 (lossily when it is not, and
//! said so), NUL bytes kept as they are.

use std::borrow::Cow;

/// `text` cut to at most `max` bytes, before the character byte `max` falls inside: every
/// reader keeps heads and examples this way.
pub(crate) fn cut_at_char(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// One physical line of an input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line<'a> {
    /// 1-based line number in the input.
    pub number: u64,
    /// Byte offset of the line's first byte in the input.
    pub offset: usize,
    /// The line's text without its `\n` / `\r\n`. Borrowed when the bytes were valid UTF-8.
    pub text: Cow<'a, str>,
    /// True when the bytes were not valid UTF-8 and `text` holds a lossy decoding.
    pub lossy: bool,
    /// True when the line ended in `\r\n` (the `\r` is not in `text`).
    pub crlf: bool,
}

/// Iterator over the lines of a byte buffer. Cheap: one memchr per line, no copy unless a line
/// is invalid UTF-8.
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    input: &'a [u8],
    pos: usize,
    number: u64,
}

impl<'a> Lines<'a> {
    /// Splits `input` into lines.
    pub fn new(input: &'a [u8]) -> Self {
        Self {
            input,
            pos: 0,
            number: 0,
        }
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = Line<'a>;

    fn next(&mut self) -> Option<Line<'a>> {
        if self.pos >= self.input.len() {
            return None;
        }
        let start = self.pos;
        let rest = &self.input[start..];
        let (mut bytes, advance) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        let crlf = bytes.last() == Some(&b'\r');
        if crlf {
            bytes = &bytes[..bytes.len() - 1];
        }
        self.pos += advance;
        self.number += 1;
        let (text, lossy) = decode(bytes);
        Some(Line {
            number: self.number,
            offset: start,
            text,
            lossy,
            crlf,
        })
    }
}

/// Reads a stream in blocks of whole lines, for parsers that take a buffer at a time (the
/// parallel PostgreSQL-log reader, the kernel-log reader of a file too big to hold): each block
/// is about `block_bytes` long and ends after a newline; only the last block of the stream may
/// end inside a line. A line longer than `max_line_bytes` + 4 with no newline in sight is handed
/// out cut there (a block of its own that ends without a newline) and the rest of it skipped,
/// as the parsers cut such lines anyway: memory stays at one block whatever the input.
///
/// The bytes handed out, put end to end, are the stream's bytes but for the skipped parts of
/// over-long lines.
pub struct LineBlocks<R> {
    input: R,
    buf: Vec<u8>,
    /// Bytes of `buf` read and not handed out yet start at `start` and end at `filled`.
    start: usize,
    filled: usize,
    size: usize,
    max_line: usize,
    /// Dropping the rest of an over-long line.
    skipping: bool,
    eof: bool,
}

impl<R: std::io::Read> LineBlocks<R> {
    /// Blocks of about `block_bytes` (at least `max_line_bytes` + 5) of `input`.
    pub fn new(input: R, block_bytes: usize, max_line_bytes: usize) -> Self {
        LineBlocks {
            input,
            buf: Vec::new(),
            start: 0,
            filled: 0,
            size: block_bytes.max(max_line_bytes.saturating_add(5)),
            max_line: max_line_bytes,
            skipping: false,
            eof: false,
        }
    }

    /// The next block, `None` at the end of the stream.
    ///
    /// # Errors
    /// The stream's read errors (`Interrupted` is retried).
    pub fn next_block(&mut self) -> std::io::Result<Option<&[u8]>> {
        // Move what is left of the previous block to the front, then fill up to `size`.
        self.buf.copy_within(self.start..self.filled, 0);
        self.filled -= self.start;
        self.start = 0;
        if self.buf.len() < self.size {
            self.buf.resize(self.size, 0);
        }
        loop {
            while !self.eof && self.filled < self.size {
                match self.input.read(&mut self.buf[self.filled..]) {
                    Ok(0) => self.eof = true,
                    Ok(n) => self.filled += n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            }
            if self.skipping {
                match memchr::memchr(b'\n', &self.buf[..self.filled]) {
                    Some(nl) => {
                        self.skipping = false;
                        self.buf.copy_within(nl + 1..self.filled, 0);
                        self.filled -= nl + 1;
                        continue;
                    }
                    None if self.eof => return Ok(None),
                    None => {
                        self.filled = 0;
                        continue;
                    }
                }
            }
            break;
        }
        if self.filled == 0 {
            return Ok(None);
        }
        let end = if self.eof {
            self.filled
        } else {
            match memchr::memrchr(b'\n', &self.buf[..self.filled]) {
                Some(nl) => nl + 1,
                None => {
                    // One line fills the whole block: keep its first max_line + 4 bytes.
                    self.skipping = true;
                    self.max_line + 4
                }
            }
        };
        self.start = end;
        Ok(Some(&self.buf[..end]))
    }
}

/// A line's bytes as text: borrowed when valid UTF-8, else decoded lossily (`true`).
pub(crate) fn decode(bytes: &[u8]) -> (Cow<'_, str>, bool) {
    match utf8(bytes) {
        Some(s) => (Cow::Borrowed(s), false),
        None => (String::from_utf8_lossy(bytes), true),
    }
}

/// `bytes` as text when they are valid UTF-8. Validation runs on SIMD where the CPU has it
/// (simdutf8): it is a pass over every byte of every log, and std's validator is several times
/// slower on the long lines of csvlog and on whole runs of stderr.
pub(crate) fn utf8(bytes: &[u8]) -> Option<&str> {
    simdutf8::basic::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_crlf_and_keeps_last_line_without_newline() {
        let lines: Vec<_> = Lines::new(b"a\r\nb\n\nc").collect();
        let texts: Vec<_> = lines.iter().map(|l| l.text.as_ref()).collect();
        assert_eq!(texts, ["a", "b", "", "c"]);
        assert_eq!(lines[3].number, 4);
        assert_eq!(lines[3].offset, 6);
    }

    #[test]
    fn invalid_utf8_is_decoded_lossily_and_flagged() {
        let lines: Vec<_> = Lines::new(b"ok\n\xff\xfebad\n").collect();
        assert!(!lines[0].lossy);
        assert!(lines[1].lossy);
        assert_eq!(lines[1].text, "\u{fffd}\u{fffd}bad");
    }

    #[test]
    fn empty_input_has_no_lines() {
        assert_eq!(Lines::new(b"").count(), 0);
    }

    /// Hands out a few bytes per read.
    struct Trickle<'a>(&'a [u8], usize);
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(buf.len()).min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn blocks(input: &[u8], step: usize, size: usize, max_line: usize) -> Vec<Vec<u8>> {
        let mut blocks = LineBlocks::new(Trickle(input, step), size, max_line);
        let mut out = Vec::new();
        while let Some(b) = blocks.next_block().unwrap() {
            out.push(b.to_vec());
        }
        out
    }

    #[test]
    fn blocks_end_after_a_newline_and_add_up_to_the_stream() {
        let input: Vec<u8> = (0..2000)
            .flat_map(|i| format!("line {i} {}\n", "x".repeat(i % 37)).into_bytes())
            .chain(b"last line without newline".iter().copied())
            .collect();
        for step in [1, 7, 100, 1 << 20] {
            let got = blocks(&input, step, 1000, 100);
            assert_eq!(got.concat(), input, "step {step}");
            let (last, rest) = got.split_last().unwrap();
            assert!(rest.iter().all(|b| b.ends_with(b"\n") && b.len() <= 1000));
            assert!(last.ends_with(b"newline"));
        }
        assert!(blocks(b"", 1, 100, 10).is_empty());
    }

    #[test]
    fn an_over_long_line_is_cut_and_the_rest_of_it_skipped() {
        let mut input = b"short\n".to_vec();
        input.extend(std::iter::repeat_n(b'y', 5000));
        input.extend(b"\nafter\n");
        let got = blocks(&input, 64, 200, 100);
        let all = got.concat();
        assert!(all.starts_with(b"short\n"));
        assert!(all.ends_with(b"after\n"));
        // The long line keeps its first 104 bytes.
        let ys = all.iter().filter(|&&b| b == b'y').count();
        assert_eq!(ys, 104);
    }
}
