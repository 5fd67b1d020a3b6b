//! Line splitting shared by every text parser: memchr over `\n`, a trailing `\r` removed, a
//! final line without a newline kept, each line decoded as UTF-8 (lossily when it is not, and
//! said so), NUL bytes kept as they are.

use std::borrow::Cow;

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
        if let [head @ .., b'\r'] = bytes {
            bytes = head;
        }
        self.pos += advance;
        self.number += 1;
        let (text, lossy) = decode(bytes);
        Some(Line {
            number: self.number,
            offset: start,
            text,
            lossy,
        })
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
}
