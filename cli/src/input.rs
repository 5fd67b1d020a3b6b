//! Opening a command's input: a file or standard input (`-`), decompressed on the fly when it
//! starts with a gzip, zstd, xz or bzip2 magic (a rotated `postgresql.log.1.gz`, a
//! `perf.txt.zst`), so every `parse` command reads compressed logs as a stream without a temporary copy.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use pgmortem::bundle::decompressing;

/// Longest line the `parse kernel`, `parse perf` and `collapse-perf` inputs keep: a kernel
/// line is at most about 1 KiB and a perf frame line a few hundred bytes, so a longer one
/// is damage (a run of NULs, a file of another kind, a decompression bomb with no newline).
pub(crate) const MAX_LINE_BYTES: usize = 64 * 1024;

/// `path` (or standard input for `-`) as a stream of its decompressed bytes.
pub(crate) fn open(path: &Path) -> Result<Box<dyn Read + Send>> {
    let raw: Box<dyn Read + Send> = if path == Path::new("-") {
        Box::new(std::io::stdin())
    } else {
        Box::new(File::open(path).with_context(|| format!("cannot read {}", path.display()))?)
    };
    decompressing(raw).with_context(|| format!("cannot read {}", path.display()))
}

/// A command's input with its lines cut (see [`open_lines`]).
pub(crate) type CappedInput = LineCap<Box<dyn Read + Send>>;

/// [`open`], every line cut to [`MAX_LINE_BYTES`]; the counter says how many were cut.
pub(crate) fn open_lines(path: &Path) -> Result<(CappedInput, Arc<AtomicU64>)> {
    let cut = Arc::new(AtomicU64::new(0));
    Ok((LineCap::new(open(path)?, MAX_LINE_BYTES, cut.clone()), cut))
}

/// Says on standard error how many lines of `path` were cut, if any.
pub(crate) fn report_cut(path: &Path, cut: &AtomicU64) {
    let n = cut.load(Ordering::Relaxed);
    if n > 0 {
        #[allow(clippy::print_stderr)]
        {
            eprintln!(
                "pgmortem: note: {}: {n} line{} longer than {MAX_LINE_BYTES} bytes kept only \
                 {} first bytes",
                path.display(),
                if n == 1 { "" } else { "s" },
                if n == 1 { "its" } else { "their" }
            );
        }
    }
}

/// Passes a stream through with each line cut to `max` bytes (the newline kept), counting the
/// lines cut: memory for a line stays bounded whatever the input. The bytes are cut where they
/// are read, in the caller's buffer: nothing is copied unless a line is cut.
pub(crate) struct LineCap<R> {
    inner: R,
    max: usize,
    /// Bytes of the current line passed so far.
    line: usize,
    cut: Arc<AtomicU64>,
    /// The current line was cut: its bytes are dropped up to its newline.
    dropping: bool,
}

impl<R: Read> LineCap<R> {
    /// Cuts the lines of `inner` to `max` bytes, counting into `cut`.
    pub(crate) fn new(inner: R, max: usize, cut: Arc<AtomicU64>) -> Self {
        Self {
            inner,
            max,
            line: 0,
            cut,
            dropping: false,
        }
    }

    /// Cuts the lines of `buf` (the next bytes of the stream) in place; returns how many bytes
    /// are kept at its start.
    fn cap_in_place(&mut self, buf: &mut [u8]) -> usize {
        let n = buf.len();
        let (mut read, mut write) = (0, 0);
        while read < n {
            if self.dropping {
                // The rest of a cut line: skipped up to its newline, which is kept.
                match memchr::memchr(b'\n', &buf[read..]) {
                    Some(i) => {
                        buf[write] = b'\n';
                        write += 1;
                        self.line = 0;
                        self.dropping = false;
                        read += i + 1;
                    }
                    None => read = n,
                }
                continue;
            }
            // Within the next `room + 1` bytes, the last newline: every line up to it fits
            // (the current one ends there or before, the next ones span less than `max`), so
            // that stretch is kept at once. One search per `max` bytes, not per line.
            let room = self.max - self.line;
            let window = (n - read).min(room + 1);
            let keep = match memchr::memrchr(b'\n', &buf[read..read + window]) {
                Some(i) => {
                    self.line = 0;
                    i + 1
                }
                None if window <= room => {
                    // The bytes end inside a line that still fits.
                    self.line += window;
                    window
                }
                None => {
                    // The current line is longer than `max`: its first bytes are kept.
                    self.line += room;
                    self.dropping = true;
                    self.cut.fetch_add(1, Ordering::Relaxed);
                    room
                }
            };
            if write != read {
                buf.copy_within(read..read + keep, write);
            }
            write += keep;
            read += keep;
        }
        write
    }
}

impl<R: Read> Read for LineCap<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        loop {
            let n = self.inner.read(out)?;
            if n == 0 {
                return Ok(0);
            }
            let kept = self.cap_in_place(&mut out[..n]);
            if kept > 0 {
                return Ok(kept);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cap(input: &[u8], max: usize) -> (Vec<u8>, u64) {
        let cut = Arc::new(AtomicU64::new(0));
        let mut out = Vec::new();
        LineCap::new(input, max, cut.clone())
            .read_to_end(&mut out)
            .unwrap();
        (out, cut.load(Ordering::Relaxed))
    }

    #[test]
    fn long_lines_are_cut_and_counted_short_ones_pass() {
        assert_eq!(cap(b"ab\ncdefgh\nij", 4), (b"ab\ncdef\nij".to_vec(), 1));
        assert_eq!(cap(b"abcd\n", 4), (b"abcd\n".to_vec(), 0));
        assert_eq!(cap(&[b'a'; 10_000], 4), (b"aaaa".to_vec(), 1));
        assert_eq!(cap(b"", 4), (Vec::new(), 0));
    }

    /// Hands its bytes out `n` at a time.
    struct Trickle<'a>(&'a [u8], usize);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(out.len()).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn lines_are_cut_the_same_across_reads_of_any_size() {
        let input = b"abcdefgh\nab\n\nabcd\nabcde\nxyz";
        for step in 1..=input.len() {
            let cut = Arc::new(AtomicU64::new(0));
            let mut out = Vec::new();
            LineCap::new(Trickle(input, step), 4, cut.clone())
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, b"abcd\nab\n\nabcd\nabcd\nxyz", "step {step}");
            assert_eq!(cut.load(Ordering::Relaxed), 2, "step {step}");
        }
    }
}
