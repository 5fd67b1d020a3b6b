//! A filter in front of the tar reader that drops oversized extension headers.
//!
//! A GNU long name (`L`) or long link (`K`), or a PAX record set (`x`, `g`), is read whole into
//! memory by the tar crate before the entry it describes: a 1 GiB long name compressed into a
//! few kilobytes of zstd would take gigabytes. The filter follows the archive's block
//! structure as it streams through and removes any extension header whose data is larger than
//! a limit (header and data are skipped, never buffered); the entry after it keeps the name in
//! its own header, and the drop is reported. Everything else passes through byte for byte;
//! from the first block that is not a valid header on, it stops interpreting and passes the
//! rest unchanged (the tar reader reports the damage).

use std::cell::RefCell;
use std::io::{self, Read};
use std::rc::Rc;

const BLOCK: usize = 512;

/// Largest extension header kept (a path or link name, or PAX records): 64 KiB.
pub(crate) const MAX_EXTENSION_BYTES: u64 = 64 * 1024;

/// An extension header that was dropped: its name in the archive and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Dropped {
    pub name: String,
    pub reason: String,
}

enum State {
    /// Expecting a header block.
    Header,
    /// Passing `remaining` bytes of entry data and padding through.
    Data { remaining: u64 },
    /// Discarding `remaining` bytes of an oversized extension's data and padding.
    Skip { remaining: u64 },
    /// Passing GNU sparse extension blocks through (each says whether another follows).
    SparseExtension { data: u64 },
    /// Collecting a small PAX record set to learn a `size` record, then passing it on.
    Pax {
        remaining: u64,
        size: u64,
        records: Vec<u8>,
    },
    /// Not a tar stream we understand any more: everything passes through.
    Passthrough,
}

/// The filter (see the module documentation).
pub(crate) struct ExtensionGuard<R> {
    inner: R,
    state: State,
    /// Bytes ready to be handed out, from `pos`.
    out: Vec<u8>,
    pos: usize,
    /// The size a PAX `size` record gives the next entry.
    pax_size: Option<u64>,
    max_extension: u64,
    dropped: Rc<RefCell<Vec<Dropped>>>,
    eof: bool,
}

impl<R: Read> ExtensionGuard<R> {
    /// Filters `inner`; dropped headers are pushed to `dropped`.
    pub(crate) fn new(inner: R, max_extension: u64, dropped: Rc<RefCell<Vec<Dropped>>>) -> Self {
        Self {
            inner,
            state: State::Header,
            out: Vec::with_capacity(BLOCK),
            pos: 0,
            pax_size: None,
            max_extension,
            dropped,
            eof: false,
        }
    }

    /// Reads up to one block (fewer at the end of the stream).
    fn read_block(&mut self) -> io::Result<Vec<u8>> {
        let mut block = vec![0; BLOCK];
        let mut filled = 0;
        while filled < BLOCK {
            match self.inner.read(&mut block[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        block.truncate(filled);
        if filled < BLOCK {
            self.eof = true;
        }
        Ok(block)
    }

    /// Fills `out` with the next bytes to hand out; false at the end of the stream.
    fn refill(&mut self) -> io::Result<bool> {
        self.out.clear();
        self.pos = 0;
        while self.out.is_empty() {
            if self.eof {
                return Ok(false);
            }
            match &mut self.state {
                State::Passthrough => {
                    let block = self.read_block()?;
                    self.out = block;
                }
                State::Data { remaining } => {
                    let want = (*remaining).min(64 * 1024) as usize;
                    let mut buf = vec![0; want];
                    let n = self.inner.read(&mut buf)?;
                    if n == 0 {
                        self.eof = true;
                        return Ok(false);
                    }
                    buf.truncate(n);
                    *remaining -= n as u64;
                    if *remaining == 0 {
                        self.state = State::Header;
                    }
                    self.out = buf;
                }
                State::Skip { remaining } => {
                    let want = *remaining;
                    let skipped = io::copy(&mut (&mut self.inner).take(want), &mut io::sink())?;
                    if skipped < want {
                        self.eof = true;
                        return Ok(false);
                    }
                    self.state = State::Header;
                }
                State::SparseExtension { data } => {
                    let data = *data;
                    let block = self.read_block()?;
                    let more = block.get(504).is_some_and(|&b| b != 0);
                    if !more {
                        self.state = State::Data {
                            remaining: padded(data),
                        };
                    }
                    self.out = block;
                }
                State::Pax {
                    remaining,
                    size,
                    records,
                } => {
                    let mut buf = vec![0; (*remaining).min(64 * 1024) as usize];
                    let n = self.inner.read(&mut buf)?;
                    if n == 0 {
                        self.eof = true;
                        self.out = std::mem::take(records);
                        return Ok(!self.out.is_empty());
                    }
                    records.extend_from_slice(&buf[..n]);
                    *remaining -= n as u64;
                    if *remaining == 0 {
                        let real = records
                            .len()
                            .min(usize::try_from(*size).unwrap_or(usize::MAX));
                        self.pax_size = pax_size(&records[..real]);
                        self.out = std::mem::take(records);
                        self.state = State::Header;
                    }
                }
                State::Header => {
                    let block = self.read_block()?;
                    self.out = self.header(block);
                }
            }
        }
        Ok(true)
    }

    /// Decides what a header block becomes; returns the bytes to hand out (none when dropped).
    fn header(&mut self, block: Vec<u8>) -> Vec<u8> {
        if block.len() < BLOCK || block.iter().all(|&b| b == 0) {
            return block;
        }
        if !checksum_ok(&block) {
            self.state = State::Passthrough;
            return block;
        }
        let Some(size) = header_size(&block[124..136]) else {
            self.state = State::Passthrough;
            return block;
        };
        let kind = block[156];
        let extension = matches!(kind, b'L' | b'K' | b'x' | b'g' | b'X');
        if extension && size > self.max_extension {
            let what = match kind {
                b'L' => "GNU long name",
                b'K' => "GNU long link name",
                b'g' => "PAX global header",
                _ => "PAX extended header",
            };
            self.dropped.borrow_mut().push(Dropped {
                name: name_of(&block),
                reason: format!(
                    "{what} of {size} bytes, over the {} bytes kept: not read (the next entry \
                     keeps the name in its own header)",
                    self.max_extension
                ),
            });
            self.state = State::Skip {
                remaining: padded(size),
            };
            return Vec::new();
        }
        if kind == b'x' || kind == b'X' {
            self.state = if size == 0 {
                State::Header
            } else {
                State::Pax {
                    remaining: padded(size),
                    size,
                    records: Vec::new(),
                }
            };
            return block;
        }
        let data = if extension {
            size
        } else {
            self.pax_size.take().unwrap_or(size)
        };
        // A GNU sparse entry whose map goes on in extension blocks (`isextended`).
        if kind == b'S' && block[482] != 0 {
            self.state = State::SparseExtension { data };
        } else if data > 0 {
            self.state = State::Data {
                remaining: padded(data),
            };
        }
        block
    }
}

impl<R: Read> Read for ExtensionGuard<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pos >= self.out.len() && !self.refill()? {
            return Ok(0);
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// `n` rounded up to whole blocks.
fn padded(n: u64) -> u64 {
    n.div_ceil(BLOCK as u64).saturating_mul(BLOCK as u64)
}

/// The header's checksum matches (unsigned sum with the field as spaces).
fn checksum_ok(block: &[u8]) -> bool {
    let field = &block[148..156];
    let stored = std::str::from_utf8(field)
        .ok()
        .map(|s| s.trim_matches(|c: char| c == '\0' || c == ' '))
        .and_then(|s| u32::from_str_radix(s, 8).ok());
    let sum: u32 = block[..148]
        .iter()
        .chain(&block[156..])
        .map(|&b| u32::from(b))
        .sum::<u32>()
        + 8 * u32::from(b' ');
    stored == Some(sum)
}

/// The size field: octal, or GNU's base-256 (high bit of the first byte set).
fn header_size(field: &[u8]) -> Option<u64> {
    if field[0] & 0x80 != 0 {
        let mut v: u64 = u64::from(field[0] & 0x7f);
        for &b in &field[1..] {
            v = v.checked_mul(256)?.checked_add(u64::from(b))?;
        }
        return Some(v);
    }
    let s = std::str::from_utf8(field).ok()?;
    let s = s.trim_matches(|c: char| c == '\0' || c == ' ');
    if s.is_empty() {
        return Some(0);
    }
    u64::from_str_radix(s, 8).ok()
}

/// The name field of a header, for the report.
fn name_of(block: &[u8]) -> String {
    let name = &block[..100];
    let end = name.iter().position(|&b| b == 0).unwrap_or(100);
    String::from_utf8_lossy(&name[..end]).into_owned()
}

/// The `size` record of PAX extended header data (`LEN size=VALUE\n` records).
fn pax_size(records: &[u8]) -> Option<u64> {
    let mut rest = records;
    let mut size = None;
    while !rest.is_empty() {
        let space = rest.iter().position(|&b| b == b' ')?;
        let len: usize = std::str::from_utf8(&rest[..space]).ok()?.parse().ok()?;
        if len <= space || len > rest.len() {
            return size;
        }
        let record = &rest[space + 1..len];
        if let Some(value) = record.strip_prefix(b"size=") {
            let value = value.strip_suffix(b"\n").unwrap_or(value);
            size = std::str::from_utf8(value).ok()?.parse().ok();
        }
        rest = &rest[len..];
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(name: &str, kind: u8, size: u64) -> Vec<u8> {
        let mut h = tar::Header::new_gnu();
        h.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        h.set_size(size);
        h.set_entry_type(tar::EntryType::new(kind));
        h.set_mode(0o644);
        h.set_cksum();
        h.as_bytes().to_vec()
    }

    fn data(bytes: &[u8]) -> Vec<u8> {
        let mut v = bytes.to_vec();
        v.resize(padded(bytes.len() as u64) as usize, 0);
        v
    }

    fn filter(input: &[u8], max: u64) -> (Vec<u8>, Vec<Dropped>) {
        let dropped = Rc::new(RefCell::new(Vec::new()));
        let mut out = Vec::new();
        ExtensionGuard::new(input, max, dropped.clone())
            .read_to_end(&mut out)
            .unwrap();
        let d = dropped.borrow().clone();
        (out, d)
    }

    #[test]
    fn an_ordinary_archive_passes_byte_for_byte() {
        let mut b = tar::Builder::new(Vec::new());
        let long = format!("{}/server.log", "d".repeat(150));
        for (name, body) in [("a.log", &b"hello\n"[..]), (long.as_str(), &b"x"[..])] {
            let mut h = tar::Header::new_gnu();
            h.set_size(body.len() as u64);
            h.set_mode(0o644);
            b.append_data(&mut h, name, body).unwrap();
        }
        let tar = b.into_inner().unwrap();
        let (out, dropped) = filter(&tar, MAX_EXTENSION_BYTES);
        assert_eq!(out, tar);
        assert!(dropped.is_empty());
    }

    #[test]
    fn an_oversized_long_name_is_dropped_and_the_entry_keeps_its_own_name() {
        let mut input = header("././@LongLink", b'L', 5000);
        input.extend(data(&vec![b'a'; 5000]));
        input.extend(header("kernel/dmesg.txt", b'0', 3));
        input.extend(data(b"ok\n"));
        input.extend(vec![0; 1024]);
        let (out, dropped) = filter(&input, 1000);
        assert_eq!(dropped.len(), 1);
        assert!(dropped[0].reason.starts_with("GNU long name of 5000 bytes"));
        let mut archive = tar::Archive::new(&out[..]);
        let names: Vec<String> = archive
            .entries()
            .unwrap()
            .map(|e| e.unwrap().path().unwrap().display().to_string())
            .collect();
        assert_eq!(names, ["kernel/dmesg.txt"]);
    }

    #[test]
    fn a_pax_size_record_is_followed() {
        let records = b"16 size=1000000\n";
        let mut input = header("PaxHeaders/big.log", b'x', records.len() as u64);
        input.extend(data(records));
        // The ustar size field says 0; the data that follows is the PAX size.
        input.extend(header("big.log", b'0', 0));
        input.extend(data(&vec![b'z'; 1_000_000]));
        input.extend(header("././@LongLink", b'L', 2000));
        input.extend(data(&vec![b'n'; 2000]));
        input.extend(header("after.log", b'0', 2));
        input.extend(data(b"x\n"));
        let (out, dropped) = filter(&input, 1000);
        assert_eq!(dropped.len(), 1, "{dropped:?}");
        assert_eq!(out.len(), input.len() - 512 - 2048);
    }

    #[test]
    fn sizes_in_octal_and_base_256() {
        assert_eq!(header_size(b"00000001750\0"), Some(1000));
        assert_eq!(header_size(b"\0\0\0\0\0\0\0\0\0\0\0\0"), Some(0));
        let mut big = [0u8; 12];
        big[0] = 0x80;
        big[7] = 0x02; // 2 << 32
        assert_eq!(header_size(&big), Some(2 << 32));
        assert_eq!(header_size(b"zz"), None);
    }

    #[test]
    fn garbage_passes_through_unchanged() {
        let input: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (out, dropped) = filter(&input, 10);
        assert_eq!(out, input);
        assert!(dropped.is_empty());
    }
}
