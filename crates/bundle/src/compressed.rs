//! Files compressed one by one inside a bundle: the rotated `postgresql-2026-11-20.log.gz`,
//! `kern.log.1.xz` or `messages.bz2` a collector (or logrotate) leaves next to the live log.
//! They are decompressed once, as a stream, into memory or a temporary file (by
//! [`crate::gather`]), capped like an archive, and named without their suffix so that their kind comes from the
//! name the log had before it was rotated.
//!
//! [`decompressing`] does the same for a single input stream (`pgmortem parse pglog
//! postgresql.log.1.gz`, the Python bindings' paths).

use std::cell::RefCell;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

/// Memory the xz decoder may take: enough for any preset (`xz -9` needs 65 MiB), not for a
/// crafted header asking for a dictionary of gigabytes.
pub(crate) const XZ_DECODER_MEMORY: u64 = 96 << 20;

/// A compression pgmortem decompresses, recognised by its magic bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compression {
    /// gzip (`.gz`, `.tgz`), any number of members.
    Gzip,
    /// Zstandard (`.zst`, `.tzst`).
    Zstd,
    /// xz (`.xz`, `.txz`), any number of streams: the sosreport default.
    Xz,
    /// bzip2 (`.bz2`, `.tbz2`), any number of streams.
    Bzip2,
}

impl Compression {
    /// Its name, for notes: `gzip`, `zstd`, `xz`, `bzip2`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Bzip2 => "bzip2",
        }
    }

    /// The suffixes of its files, each with what it stands for once decompressed.
    fn suffixes(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Compression::Gzip => &[(".gz", ""), (".gzip", ""), (".tgz", ".tar")],
            Compression::Zstd => &[(".zst", ""), (".zstd", ""), (".tzst", ".tar")],
            Compression::Xz => &[(".xz", ""), (".txz", ".tar")],
            Compression::Bzip2 => &[
                (".bz2", ""),
                (".bz", ""),
                (".tbz2", ".tar"),
                (".tbz", ".tar"),
            ],
        }
    }

    /// `reader` decompressed. A gzip stream's members and trailing data are counted in
    /// `shape`.
    ///
    /// # Errors
    /// When the decoder cannot be set up (a zstd frame header it rejects, the xz decoder's
    /// memory).
    pub(crate) fn decoder<'a, R: Read + 'a>(
        self,
        reader: R,
        shape: Rc<RefCell<GzipShape>>,
    ) -> io::Result<Box<dyn Read + 'a>> {
        Ok(match self {
            Compression::Gzip => Box::new(GzipMembers::new(BufReader::new(reader), shape)),
            Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(reader)?),
            Compression::Xz => Box::new(xz_decoder(reader)?),
            Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(reader)),
        })
    }
}

/// An xz decoder of concatenated streams (as `xz -d` reads them) within
/// [`XZ_DECODER_MEMORY`].
fn xz_decoder<R: Read>(reader: R) -> io::Result<liblzma::read::XzDecoder<R>> {
    let stream = liblzma::stream::Stream::new_stream_decoder(
        XZ_DECODER_MEMORY,
        liblzma::stream::CONCATENATED,
    )
    .map_err(io::Error::other)?;
    Ok(liblzma::read::XzDecoder::new_stream(reader, stream))
}

/// Bytes [`compression`] needs to tell every compression apart (bzip2's block magic ends at
/// the tenth byte).
pub(crate) const MAGIC_BYTES: usize = 16;

/// The compression of a file starting with `head` (its first [`MAGIC_BYTES`] bytes, fewer
/// when it is shorter).
pub(crate) fn compression(head: &[u8]) -> Option<Compression> {
    if head.starts_with(&[0x1f, 0x8b]) {
        Some(Compression::Gzip)
    } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        Some(Compression::Zstd)
    } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
        Some(Compression::Xz)
    } else if is_bzip2(head) {
        Some(Compression::Bzip2)
    } else {
        None
    }
}

/// `BZh`, the block size (`1`–`9`), then the magic of a first block (the digits of pi) or of
/// the end of an empty stream (of sqrt(pi)): a text file that starts with `BZh9` is not taken
/// for one.
fn is_bzip2(head: &[u8]) -> bool {
    const BLOCK: [u8; 6] = [0x31, 0x41, 0x59, 0x26, 0x53, 0x59];
    const END: [u8; 6] = [0x17, 0x72, 0x45, 0x38, 0x50, 0x90];
    head.len() >= 10
        && head.starts_with(b"BZh")
        && (b'1'..=b'9').contains(&head[3])
        && (head[4..10] == BLOCK || head[4..10] == END)
}

/// `name` without the suffix of its compression: `a.log.gz` → `a.log`, `a.tgz` → `a.tar`,
/// `sosreport-db1.tar.xz` → `sosreport-db1.tar`.
pub(crate) fn strip_suffix(name: &str, compression: Compression) -> String {
    compression
        .suffixes()
        .iter()
        .find_map(|(s, r)| name.strip_suffix(s).map(|stem| format!("{stem}{r}")))
        .unwrap_or_else(|| name.to_owned())
}

/// Reads `inner` until its first error, then ends there, keeping the error: a damaged
/// compressed file keeps what came out before the damage.
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

/// `reader` as the stream of its decompressed bytes when its first bytes are a gzip, zstd, xz
/// or bzip2 magic, else as it is. The first bytes are read until there are
/// [`MAGIC_BYTES`] or the input ends (a pipe may hand them out one at a time); nothing is lost.
///
/// # Errors
/// When the first bytes cannot be read, or a zstd or xz decoder cannot be set up.
pub fn decompressing(mut reader: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
    let mut head = Vec::with_capacity(MAGIC_BYTES);
    (&mut reader)
        .take(MAGIC_BYTES as u64)
        .read_to_end(&mut head)?;
    let found = compression(&head);
    let stream = BufReader::with_capacity(1 << 20, io::Cursor::new(head).chain(reader));
    Ok(match found {
        Some(Compression::Gzip) => Box::new(flate2::read::MultiGzDecoder::new(stream)),
        Some(Compression::Zstd) => Box::new(zstd::stream::read::Decoder::with_buffer(stream)?),
        Some(Compression::Xz) => Box::new(xz_decoder(stream)?),
        Some(Compression::Bzip2) => Box::new(bzip2::read::MultiBzDecoder::new(stream)),
        None => Box::new(stream),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gather::{Gather, Place};
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
            strip_suffix("pg/postgresql.log.gz", Compression::Gzip),
            "pg/postgresql.log"
        );
        assert_eq!(
            strip_suffix("kern.log.1.zst", Compression::Zstd),
            "kern.log.1"
        );
        assert_eq!(strip_suffix("old.tgz", Compression::Gzip), "old.tar");
        assert_eq!(strip_suffix("no-suffix", Compression::Gzip), "no-suffix");
        assert_eq!(
            strip_suffix("sosreport-db1-2026.tar.xz", Compression::Xz),
            "sosreport-db1-2026.tar"
        );
        assert_eq!(strip_suffix("b.txz", Compression::Xz), "b.tar");
        assert_eq!(strip_suffix("messages.bz2", Compression::Bzip2), "messages");
        assert_eq!(strip_suffix("b.tbz2", Compression::Bzip2), "b.tar");
    }

    fn xz(data: &[u8]) -> Vec<u8> {
        let mut enc = liblzma::write::XzEncoder::new(Vec::new(), 1);
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    fn bzip2(data: &[u8]) -> Vec<u8> {
        let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
        enc.write_all(data).unwrap();
        enc.finish().unwrap()
    }

    #[test]
    fn compressions_are_recognised_by_their_magic() {
        assert_eq!(compression(&gzip(b"x")), Some(Compression::Gzip));
        let z = zstd::encode_all(&b"x"[..], 1).unwrap();
        assert_eq!(compression(&z), Some(Compression::Zstd));
        assert_eq!(compression(&xz(b"x")), Some(Compression::Xz));
        assert_eq!(compression(&bzip2(b"x")), Some(Compression::Bzip2));
        // An empty bzip2 stream: the end-of-stream magic follows the header.
        assert_eq!(compression(&bzip2(b"")), Some(Compression::Bzip2));
        assert_eq!(compression(b"2026-11-21 LOG:  x"), None);
        assert_eq!(compression(b"BZh9 is how a text may start\n"), None);
        assert_eq!(compression(b"BZh9"), None);
    }

    /// What a decompressed file became: its path and note.
    struct Decompressed {
        path: String,
        note: String,
    }

    /// Decompresses `data` as a file of a bundle is (into memory, or a temporary file past
    /// `memory_file_bytes`), within `limit` decompressed bytes.
    fn decompress_all(
        data: &[u8],
        name: &str,
        compression: Compression,
        limit: u64,
    ) -> (Decompressed, Vec<u8>) {
        assert_eq!(super::compression(data), Some(compression));
        let options = OpenOptions {
            max_decompressed_bytes: limit,
            ..OpenOptions::default()
        };
        let mut gather = Gather::new(&options);
        let place = Place {
            path: name.to_owned(),
            root: String::new(),
            nesting: 0,
            top: false,
        };
        gather.file(&mut &data[..], &place, None).unwrap();
        let member = gather.members.pop().expect("one file");
        let (bytes, _) = member.content.into_bytes(u64::MAX).unwrap();
        let d = Decompressed {
            path: member.path,
            note: member.note.unwrap_or_default(),
        };
        (d, bytes)
    }

    #[test]
    fn a_whole_stream_is_decompressed_and_noted() {
        let text = b"line one\nline two\n".repeat(100);
        let (d, bytes) = decompress_all(&gzip(&text), "a.log.gz", Compression::Gzip, 1 << 30);
        assert_eq!(d.path, "a.log");
        assert_eq!(bytes, text);
        assert_eq!(d.note, "decompressed from gzip");
        let z = zstd::encode_all(&text[..], 3).unwrap();
        let (_, bytes) = decompress_all(&z, "a.log.zst", Compression::Zstd, 1 << 30);
        assert_eq!(bytes, text);
        let (d, bytes) = decompress_all(&xz(&text), "a.log.xz", Compression::Xz, 1 << 30);
        assert_eq!((d.path.as_str(), bytes == text), ("a.log", true));
        assert_eq!(d.note, "decompressed from xz");
        let (d, bytes) = decompress_all(&bzip2(&text), "a.log.bz2", Compression::Bzip2, 1 << 30);
        assert_eq!((d.path.as_str(), bytes == text), ("a.log", true));
        assert_eq!(d.note, "decompressed from bzip2");
    }

    #[test]
    fn a_truncated_stream_keeps_what_came_before_the_cut() {
        let text: Vec<u8> = (0..20_000)
            .flat_map(|i| format!("line {i} of a rotated log\n").into_bytes())
            .collect();
        for (compression, whole) in [
            (Compression::Gzip, gzip(&text)),
            (Compression::Xz, xz(&text)),
            (Compression::Bzip2, bzip2(&text)),
        ] {
            let cut = &whole[..whole.len() / 2];
            let (d, bytes) = decompress_all(cut, "a.log", compression, 1 << 30);
            assert!(text.starts_with(&bytes), "{compression:?}");
            assert!(d.note.contains("stopped after"), "{}", d.note);
        }
    }

    #[test]
    fn a_stream_is_decompressed_when_its_magic_says_so() {
        let text = b"2026-11-21 17:08:44.123 UTC [42] LOG:  x\n".repeat(50);
        for input in [
            gzip(&text),
            zstd::encode_all(&text[..], 3).unwrap(),
            xz(&text),
            bzip2(&text),
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
        for (compression, bomb) in [
            (Compression::Gzip, gzip(&zeros)),
            (Compression::Xz, xz(&zeros)),
            (Compression::Bzip2, bzip2(&zeros)),
        ] {
            let (d, bytes) = decompress_all(&bomb, "z", compression, 1 << 20);
            assert!(bytes.len() <= 2 << 20, "{compression:?}");
            assert!(d.note.contains("decompression limit"), "{}", d.note);
        }
    }

    #[test]
    fn a_stream_that_ends_at_the_limit_is_whole() {
        let text = b"line\n".repeat(1000);
        let (d, bytes) = decompress_all(&xz(&text), "a.log.xz", Compression::Xz, 5000);
        assert_eq!(
            (bytes.len(), d.note.as_str()),
            (5000, "decompressed from xz")
        );
        let (d, bytes) = decompress_all(&xz(&text), "a.log.xz", Compression::Xz, 4999);
        assert!(bytes.len() < 5000);
        assert!(d.note.contains("decompression limit"), "{}", d.note);
    }

    #[test]
    fn an_xz_header_asking_for_too_much_memory_is_refused() {
        // An ordinary stream whose block header is made to declare a 2 GiB dictionary (the
        // header's CRC32 computed again).
        let mut data = xz(b"x\n");
        let header = &mut data[12..24];
        assert_eq!(&header[..4], &[0x02, 0x00, 0x21, 0x01], "one LZMA2 filter");
        header[4] = 36;
        let mut crc = flate2::Crc::new();
        crc.update(&header[..8]);
        header[8..].copy_from_slice(&crc.sum().to_le_bytes());
        let mut out = Vec::new();
        let err = compression_decoder(&data)
            .read_to_end(&mut out)
            .unwrap_err();
        assert!(out.is_empty());
        assert!(err.to_string().to_lowercase().contains("memory"), "{err}");
    }

    fn compression_decoder(data: &[u8]) -> Box<dyn Read + '_> {
        Compression::Xz
            .decoder(data, Rc::new(RefCell::new(GzipShape::default())))
            .unwrap()
    }
}
