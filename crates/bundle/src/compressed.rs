//! Files compressed one by one inside a bundle: the rotated `postgresql-2026-11-20.log.gz` or
//! `kern.log.1.zst` a collector (or logrotate) leaves next to the live log. They are
//! decompressed as a stream, capped like an archive, and named without their suffix so that
//! their kind comes from the name the log had before it was rotated.
//!
//! [`decompressing`] does the same for a single input stream (`pgmortem parse pglog
//! postgresql.log.1.gz`, the Python bindings' paths).

use std::io::{self, BufReader, Read};

use crate::archive::{Capped, Container, container};
use crate::tail::{Kept, read_tail};

/// A compressed file's content, decompressed.
pub(crate) struct Decompressed {
    /// The name without its compression suffix (`.gz`, `.zst`, …).
    pub path: String,
    /// What was kept (the end, when over the per-file limit).
    pub kept: Kept,
    /// What it was compressed with, and how far decompression went, for the file's note.
    pub note: String,
}

/// The compression of a file starting with `head`: `Some("gzip")` or `Some("zstd")`.
pub(crate) fn compression(head: &[u8]) -> Option<&'static str> {
    match container(head) {
        Container::Gzip => Some("gzip"),
        Container::Zstd => Some("zstd"),
        Container::Tar | Container::Plain => None,
    }
}

/// `name` without the suffix of its compression: `a.log.gz` → `a.log`, `a.tgz` → `a.tar`.
pub(crate) fn strip_suffix(name: &str, compression: &str) -> String {
    let suffixes: &[(&str, &str)] = match compression {
        "gzip" => &[(".gz", ""), (".gzip", ""), (".tgz", ".tar")],
        _ => &[(".zst", ""), (".zstd", ""), (".tzst", ".tar")],
    };
    suffixes
        .iter()
        .find_map(|(s, r)| name.strip_suffix(s).map(|stem| format!("{stem}{r}")))
        .unwrap_or_else(|| name.to_owned())
}

/// Decompresses `reader` (whose first bytes said `compression`), keeping the last `keep`
/// bytes and stopping at `limit` decompressed bytes. A stream cut short (a log copied while
/// being compressed) keeps what came out before the cut, and the note says where it stopped.
///
/// # Errors
/// Only when the decompressor cannot start (a zstd frame header it rejects).
pub(crate) fn decompress<R: Read>(
    reader: R,
    name: &str,
    compression: &'static str,
    keep: u64,
    limit: u64,
) -> io::Result<Decompressed> {
    let (kept, stopped) = match compression {
        "gzip" => keep_until_error(flate2::read::MultiGzDecoder::new(reader), keep, limit)?,
        _ => keep_until_error(zstd::stream::read::Decoder::new(reader)?, keep, limit)?,
    };
    let mut note = format!("decompressed from {compression}");
    if let Some(why) = stopped {
        note.push_str(&format!(
            " (stopped after {} bytes: {why}; the lines before are read)",
            kept.total
        ));
    }
    Ok(Decompressed {
        path: strip_suffix(name, compression),
        kept,
        note,
    })
}

/// Reads the decompressed stream to its end or its first error, whichever comes first.
fn keep_until_error<R: Read>(
    decoder: R,
    keep: u64,
    limit: u64,
) -> io::Result<(Kept, Option<String>)> {
    let mut stream = StopAtError {
        inner: Capped::new(decoder, limit),
        error: None,
    };
    let kept = read_tail(&mut stream, keep)?;
    Ok((kept, stream.error.map(|e| e.to_string())))
}

/// Ends the stream at the first error instead of failing it, and keeps the error.
struct StopAtError<R> {
    inner: R,
    error: Option<io::Error>,
}

impl<R: Read> Read for StopAtError<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.error.is_some() {
            return Ok(0);
        }
        loop {
            match self.inner.read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.error = Some(e);
                    return Ok(0);
                }
            }
        }
    }
}

/// `reader` as the stream of its decompressed bytes when its first bytes are a gzip or zstd
/// magic, else as it is. The first bytes are read until there are four or the input ends (a
/// pipe may hand them out one at a time); nothing is lost.
///
/// # Errors
/// When the first bytes cannot be read, or a zstd decoder cannot be set up.
pub fn decompressing(mut reader: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    let mut head = Vec::with_capacity(4);
    (&mut reader).take(4).read_to_end(&mut head)?;
    let found = compression(&head);
    let stream = BufReader::with_capacity(1 << 20, io::Cursor::new(head).chain(reader));
    Ok(match found {
        Some("gzip") => Box::new(flate2::read::MultiGzDecoder::new(stream)),
        Some(_) => Box::new(zstd::stream::read::Decoder::with_buffer(stream)?),
        None => Box::new(stream),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn names_lose_their_compression_suffix() {
        assert_eq!(
            strip_suffix("pg/postgresql.log.gz", "gzip"),
            "pg/postgresql.log"
        );
        assert_eq!(strip_suffix("kern.log.1.zst", "zstd"), "kern.log.1");
        assert_eq!(strip_suffix("old.tgz", "gzip"), "old.tar");
        assert_eq!(strip_suffix("no-suffix", "gzip"), "no-suffix");
    }

    #[test]
    fn gzip_and_zstd_are_recognised_by_their_magic() {
        assert_eq!(compression(&gzip(b"x")), Some("gzip"));
        let z = zstd::encode_all(&b"x"[..], 1).unwrap();
        assert_eq!(compression(&z), Some("zstd"));
        assert_eq!(compression(b"2026-11-21 LOG:  x"), None);
    }

    #[test]
    fn a_whole_stream_is_decompressed_and_noted() {
        let text = b"line one\nline two\n".repeat(100);
        let d = decompress(&gzip(&text)[..], "a.log.gz", "gzip", 1 << 20, 1 << 30).unwrap();
        assert_eq!(d.path, "a.log");
        assert_eq!(d.kept.bytes, text);
        assert_eq!(d.note, "decompressed from gzip");
        let z = zstd::encode_all(&text[..], 3).unwrap();
        let d = decompress(&z[..], "a.log.zst", "zstd", 1 << 20, 1 << 30).unwrap();
        assert_eq!(d.kept.bytes, text);
    }

    #[test]
    fn a_truncated_stream_keeps_what_came_before_the_cut() {
        let text: Vec<u8> = (0..20_000)
            .flat_map(|i| format!("line {i} of a rotated log\n").into_bytes())
            .collect();
        let whole = gzip(&text);
        let cut = &whole[..whole.len() / 2];
        let d = decompress(cut, "a.log.gz", "gzip", 1 << 30, 1 << 30).unwrap();
        assert!(!d.kept.bytes.is_empty());
        assert!(text.starts_with(&d.kept.bytes));
        assert!(d.note.contains("stopped after"), "{}", d.note);
    }

    #[test]
    fn a_stream_is_decompressed_when_its_magic_says_so() {
        let text = b"2026-11-21 17:08:44.123 UTC [42] LOG:  x\n".repeat(50);
        for input in [
            gzip(&text),
            zstd::encode_all(&text[..], 3).unwrap(),
            text.clone(),
        ] {
            let mut out = Vec::new();
            decompressing(Box::new(io::Cursor::new(input)))
                .unwrap()
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, text);
        }
        let mut out = Vec::new();
        decompressing(Box::new(io::Cursor::new(b"ab".to_vec())))
            .unwrap()
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, b"ab");
    }

    #[test]
    fn a_bomb_stops_at_the_limit() {
        let zeros = vec![0u8; 4 << 20];
        let d = decompress(&gzip(&zeros)[..], "z.gz", "gzip", 1 << 10, 1 << 20).unwrap();
        assert!(d.kept.total <= (1 << 20) + (1 << 20));
        assert!(d.note.contains("decompression limit"), "{}", d.note);
        assert!(d.kept.bytes.len() <= 1 << 10);
    }
}
