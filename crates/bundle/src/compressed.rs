//! Files compressed one by one inside a bundle: the rotated `postgresql-2026-11-20.log.gz` or
//! `kern.log.1.zst` a collector (or logrotate) leaves next to the live log. They are
//! decompressed once, as a stream, into memory or a temporary file ([`Spool`]), capped like an
//! archive, and named without their suffix so that their kind comes from the name the log had
//! before it was rotated.
//!
//! [`decompressing`] does the same for a single input stream (`pgmortem parse pglog
//! postgresql.log.1.gz`, the Python bindings' paths).

use std::cell::RefCell;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use crate::archive::{Capped, Container, container};
use crate::body::{CopyError, Spool};

/// A compressed file, decompressed into a [`Spool`].
pub(crate) struct Decompressed {
    /// The name without its compression suffix (`.gz`, `.zst`, …).
    pub path: String,
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

/// Decompresses `reader` (whose first bytes said `compression`) into `spool`, stopping at
/// `limit` decompressed bytes. A stream cut short (a log copied while being compressed) keeps
/// what came out before the cut, and the note says where it stopped.
///
/// # Errors
/// When the decompressor cannot start (a zstd frame header it rejects), or `spool` cannot take
/// the bytes (its temporary file cannot be written, or is full).
pub(crate) fn decompress<R: Read>(
    reader: R,
    name: &str,
    compression: &'static str,
    spool: &mut Spool<'_>,
    limit: u64,
) -> io::Result<Decompressed> {
    let shape = Rc::new(RefCell::new(GzipShape::default()));
    let stopped = match compression {
        "gzip" => copy_until_error(
            GzipMembers::new(BufReader::new(reader), shape.clone()),
            spool,
            limit,
        )?,
        _ => copy_until_error(zstd::stream::read::Decoder::new(reader)?, spool, limit)?,
    };
    let mut note = format!("decompressed from {compression}");
    if let Some(shape) = shape.borrow().describe() {
        note.push_str(&format!(" ({shape})"));
    }
    if let Some(why) = stopped {
        note.push_str(&format!(
            " (stopped after {} bytes: {why}; the lines before are read)",
            spool.len()
        ));
    }
    Ok(Decompressed {
        path: strip_suffix(name, compression),
        note,
    })
}

/// Copies the decompressed stream to its end or its first read error, whichever comes first;
/// returns that error.
fn copy_until_error<R: Read>(
    decoder: R,
    spool: &mut Spool<'_>,
    limit: u64,
) -> io::Result<Option<String>> {
    let mut stream = StopAtError {
        inner: Capped::new(decoder, limit),
        error: None,
    };
    match spool.copy_from(&mut stream) {
        // Read errors end the stream (StopAtError): only the spool's can come out.
        Ok(_) => Ok(stream.error.map(|e| e.to_string())),
        Err(CopyError::Read(e) | CopyError::Spool(e)) => Err(e),
    }
}

/// Ends the stream at the first error instead of failing it, and keeps the error.
/// Reads `inner` until its first error, then ends there, keeping the error.
pub(crate) struct StopAtError<R> {
    pub inner: R,
    pub error: Option<io::Error>,
}

/// What a gzip stream held besides its data.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct GzipShape {
    /// Members read (more than one: files concatenated with `cat a.gz b.gz`).
    pub members: u32,
    /// Bytes that are not a gzip member came after the last one (zero padding, garbage).
    pub trailing: bool,
}

impl GzipShape {
    /// A note for the report when the stream was not one plain member.
    pub(crate) fn describe(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.members > 1 {
            parts.push(format!(
                "{} concatenated gzip members, read one after the other",
                self.members
            ));
        }
        if self.trailing {
            parts.push("data after the last gzip member, not gzip, was not read".to_owned());
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// A gzip stream of any number of members, decoded one after the other as `gzip -d` does;
/// the members and any trailing data are counted in `shape` for the report. Each member's
/// CRC and length are checked (a mismatch is an error after its data).
pub(crate) struct GzipMembers<R: BufRead> {
    decoder: Option<flate2::bufread::GzDecoder<R>>,
    shape: Rc<RefCell<GzipShape>>,
}

impl<R: BufRead> GzipMembers<R> {
    /// Decodes `inner`, counting into `shape`.
    pub(crate) fn new(inner: R, shape: Rc<RefCell<GzipShape>>) -> Self {
        shape.borrow_mut().members = 1;
        Self {
            decoder: Some(flate2::bufread::GzDecoder::new(inner)),
            shape,
        }
    }
}

impl<R: BufRead> Read for GzipMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(decoder) = self.decoder.as_mut() else {
                return Ok(0);
            };
            let n = decoder.read(buf)?;
            if n > 0 || buf.is_empty() {
                return Ok(n);
            }
            // This member is done: another one, trailing data, or the end.
            let mut inner = self.decoder.take().expect("a decoder").into_inner();
            let rest = inner.fill_buf()?;
            if rest.is_empty() {
                return Ok(0);
            }
            if rest.starts_with(&[0x1f, 0x8b]) {
                self.shape.borrow_mut().members += 1;
                self.decoder = Some(flate2::bufread::GzDecoder::new(inner));
            } else {
                self.shape.borrow_mut().trailing = true;
                return Ok(0);
            }
        }
    }
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
    use crate::body::Budget;
    use crate::open::OpenOptions;
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

    /// Decompresses into memory (or a temporary file past `memory_file_bytes`).
    fn decompress_all(
        data: &[u8],
        name: &str,
        compression: &'static str,
        limit: u64,
    ) -> (Decompressed, Vec<u8>) {
        let options = OpenOptions::default();
        let mut budget = Budget::new(&options);
        let mut spool = Spool::new(&options, &mut budget);
        let d = decompress(data, name, compression, &mut spool, limit).unwrap();
        let content = spool.finish();
        let (bytes, _) = content.into_bytes(u64::MAX).unwrap();
        (d, bytes)
    }

    #[test]
    fn a_whole_stream_is_decompressed_and_noted() {
        let text = b"line one\nline two\n".repeat(100);
        let (d, bytes) = decompress_all(&gzip(&text), "a.log.gz", "gzip", 1 << 30);
        assert_eq!(d.path, "a.log");
        assert_eq!(bytes, text);
        assert_eq!(d.note, "decompressed from gzip");
        let z = zstd::encode_all(&text[..], 3).unwrap();
        let (_, bytes) = decompress_all(&z, "a.log.zst", "zstd", 1 << 30);
        assert_eq!(bytes, text);
    }

    #[test]
    fn a_truncated_stream_keeps_what_came_before_the_cut() {
        let text: Vec<u8> = (0..20_000)
            .flat_map(|i| format!("line {i} of a rotated log\n").into_bytes())
            .collect();
        let whole = gzip(&text);
        let cut = &whole[..whole.len() / 2];
        let (d, bytes) = decompress_all(cut, "a.log.gz", "gzip", 1 << 30);
        assert!(!bytes.is_empty());
        assert!(text.starts_with(&bytes));
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
        let (d, bytes) = decompress_all(&gzip(&zeros), "z.gz", "gzip", 1 << 20);
        assert!(bytes.len() <= 2 << 20);
        assert!(d.note.contains("decompression limit"), "{}", d.note);
    }
}
