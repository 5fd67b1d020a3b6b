//! What a file is from its first bytes ([`container`]), and reading a tar archive as a
//! stream, once, in order: nothing is extracted, no link is followed, and every size is
//! capped. Each regular file is handed to [`Gather::file`], which keeps it (in memory when
//! small, else spooled to a temporary file of its own, see [`crate::body`]), decompresses
//! it, or opens the archive it is.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::io::{self, Read};
use std::rc::Rc;

use crate::body::{Budget, Content};
use crate::compressed::{self, Compression};
use crate::gather::{Counted, Gather, Place};
use crate::open::OpenOptions;
use crate::tar_guard;

/// What a compressed or archived file is, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Container {
    /// Compressed (a tar archive or one file inside).
    Compressed(Compression),
    Tar,
    Zip,
    /// An archive or compression pgmortem does not read.
    Unsupported(Unsupported),
    Plain,
}

/// Archive and compression formats recognised only to say they cannot be read, and how to
/// make them readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unsupported {
    SevenZip,
    Rar,
    Lz4,
    Lzip,
    UnixCompress,
}

impl Unsupported {
    /// Why the file is not read, and what to do.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Unsupported::SevenZip => {
                "7z archives cannot be read: extract it (7z x FILE) and give the directory"
            }
            Unsupported::Rar => {
                "RAR archives cannot be read: extract it (unrar x FILE) and give the directory"
            }
            Unsupported::Lz4 => {
                "lz4-compressed files cannot be read: decompress it (lz4 -d FILE) and give the \
                 result"
            }
            Unsupported::Lzip => {
                "lzip-compressed files cannot be read: decompress it (lzip -d FILE) and give the \
                 result"
            }
            Unsupported::UnixCompress => {
                "Unix compress (.Z) files cannot be read: decompress it (gzip -d FILE, or \
                 uncompress FILE) and give the result"
            }
        }
    }
}

/// What the file whose first bytes are `head` is (512 bytes tell a tar header).
pub(crate) fn container(head: &[u8]) -> Container {
    if let Some(c) = compressed::compression(head) {
        Container::Compressed(c)
    } else if let Some(u) = unsupported(head) {
        Container::Unsupported(u)
    } else if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        // A zip's first local file header, or the end record of an empty zip.
        Container::Zip
    } else if is_tar(head) {
        Container::Tar
    } else {
        Container::Plain
    }
}

fn unsupported(head: &[u8]) -> Option<Unsupported> {
    let magic: &[(&[u8], Unsupported)] = &[
        (b"7z\xbc\xaf\x27\x1c", Unsupported::SevenZip),
        (b"Rar!\x1a\x07", Unsupported::Rar),
        // lz4 frames, and the legacy format of `lz4 -l`.
        (b"\x04\x22\x4d\x18", Unsupported::Lz4),
        (b"\x02\x21\x4c\x18", Unsupported::Lz4),
        // `LZIP` and version 1.
        (b"LZIP\x01", Unsupported::Lzip),
        (b"\x1f\x9d", Unsupported::UnixCompress),
    ];
    magic
        .iter()
        .find(|(m, _)| head.starts_with(m))
        .map(|(_, u)| *u)
}

/// A ustar/GNU header (`ustar` magic at 257), or a v7 header whose checksum adds up.
fn is_tar(head: &[u8]) -> bool {
    if head.len() < 512 {
        return false;
    }
    if &head[257..262] == b"ustar" {
        return true;
    }
    let stored = std::str::from_utf8(&head[148..156])
        .ok()
        .map(|s| s.trim_matches(|c: char| c == '\0' || c == ' '))
        .and_then(|s| u32::from_str_radix(s, 8).ok());
    let sum: u32 = head[..512]
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            if (148..156).contains(&i) {
                32
            } else {
                u32::from(b)
            }
        })
        .sum();
    stored == Some(sum) && head[0] != 0
}

/// Counts bytes read through it against the bundle's decompression budget and fails once it
/// is spent: a decompression bomb stops here, before its output is buffered anywhere, and
/// archives nested in archives share the one budget.
pub(crate) struct Capped<R> {
    inner: R,
    left: Rc<Cell<u64>>,
    limit: u64,
}

impl<R> Capped<R> {
    /// `inner`, counted against what `budget` has left to decompress.
    pub(crate) fn new(inner: R, budget: &Budget) -> Self {
        Self {
            inner,
            left: budget.decompressed_left.clone(),
            limit: budget.decompressed_limit,
        }
    }
}

pub(crate) const OVER_LIMIT: &str = "decompressed data over the bundle's decompression limit";

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let over = || io::Error::other(format!("{OVER_LIMIT} ({} bytes)", self.limit));
        let left = self.left.get();
        // One byte more than is left is asked for: a stream that ends exactly at the limit is
        // whole, one that goes on is over it.
        let want = usize::try_from(left.saturating_add(1)).map_or(buf.len(), |l| l.min(buf.len()));
        let n = self.inner.read(&mut buf[..want])?;
        if n as u64 > left {
            self.left.set(0);
            return Err(over());
        }
        self.left.set(left - n as u64);
        Ok(n)
    }
}

/// One regular file read from a bundle.
pub(crate) struct Member {
    /// Its path in the bundle, as reports show it.
    pub path: String,
    /// The path its kind is recognised relative to (see [`Place::root`]).
    pub root: String,
    /// Its bytes (decompressed, for a compressed file).
    pub content: Content,
    /// What was done to read it (decompressed from gzip, …), for the file's note.
    pub note: Option<String>,
}

impl Member {
    pub(crate) fn new(place: &Place, content: Content, note: Option<String>) -> Self {
        Member {
            path: place.path.clone(),
            root: place.root.clone(),
            content,
            note,
        }
    }

    /// Its path relative to its root: what its kind and the manifest are looked up by.
    pub(crate) fn relative(&self) -> &str {
        relative_to(&self.root, &self.path)
    }
}

/// `path` relative to `root` (the whole path when it is not below it).
pub(crate) fn relative_to<'a>(root: &str, path: &'a str) -> &'a str {
    if root.is_empty() {
        return path;
    }
    path.strip_prefix(root)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or(path)
}

/// Reads every entry of the tar stream `reader` into `gather`, under [`Place::inside`] of
/// `place`. Returns the paths of its entries (relative to it) and why the archive stopped
/// early, if it did.
pub(crate) fn read_tar(
    reader: &mut dyn Read,
    place: &Place,
    gather: &mut Gather,
) -> (Vec<String>, Option<String>) {
    // Extension headers over 64 KiB are dropped before the tar reader would hold them whole.
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let guarded =
        tar_guard::ExtensionGuard::new(reader, tar_guard::MAX_EXTENSION_BYTES, dropped.clone());
    let mut archive = tar::Archive::new(guarded);
    let options: &OpenOptions = gather.options;
    let inside = place.inside();
    let mut stopped = None;
    let mut seen = HashSet::new();
    let mut names = Vec::new();
    let entries = match archive.entries() {
        Ok(e) => e,
        Err(e) => return (names, Some(format!("not a readable tar archive: {e}"))),
    };
    for (index, entry) in entries.enumerate() {
        if index >= options.max_entries {
            stopped = Some(format!(
                "more than {} entries; the rest was not read",
                options.max_entries
            ));
            break;
        }
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                stopped = Some(format!(
                    "archive truncated or corrupt after {index} entries: {e}"
                ));
                break;
            }
        };
        let kind = entry.header().entry_type();
        if kind == tar::EntryType::Directory {
            // `tar -C dir .` writes `./` first: a directory holds nothing to read itself.
            continue;
        }
        let raw_path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let rel = match safe_path(&raw_path) {
            Ok(p) => p,
            Err(reason) => {
                names.push(raw_path.clone());
                gather.skip(crate::gather::join(&inside, &raw_path), reason);
                continue;
            }
        };
        let child = place.child(&rel);
        let link = || {
            entry
                .link_name_bytes()
                .map(|l| String::from_utf8_lossy(&l).into_owned())
                .unwrap_or_default()
        };
        let reason = match kind {
            tar::EntryType::Regular | tar::EntryType::Continuous => None,
            tar::EntryType::Symlink => Some(format!("symbolic link to {:?}, not followed", link())),
            tar::EntryType::Link => Some(format!("hard link to {:?}, not followed", link())),
            tar::EntryType::Char | tar::EntryType::Block => Some("device file, not read".into()),
            tar::EntryType::Fifo => Some("fifo, not read".into()),
            tar::EntryType::GNUSparse => Some("sparse file, not read".into()),
            other => Some(format!("tar entry of type {other:?}, not read")),
        };
        names.push(rel.clone());
        if let Some(reason) = reason {
            gather.skip(child.path, reason);
            continue;
        }
        if !seen.insert(rel) {
            gather.skip(
                child.path,
                "duplicate name in the archive; the first copy is used",
            );
            continue;
        }
        // The entry's size, from a PAX `size` record when there is one (files over 8 GiB).
        let size = entry.size();
        let before = (gather.members.len(), gather.skipped.len());
        let mut counted = Counted::new((&mut entry).take(size));
        if let Err(reason) = gather.file(&mut counted, &child, None) {
            gather.unopened(child.path.clone(), reason);
        }
        // What the file's reader left (a nested archive's padding), read so the count is
        // whole; a read error is the archive's.
        let _ = io::copy(&mut counted, &mut io::sink());
        if let Some(e) = counted.error {
            drop_since(gather, before);
            gather.skip(child.path, format!("cannot read: {e}"));
            stopped = Some(format!("archive unreadable from here on: {e}"));
            break;
        }
        if counted.read < size {
            drop_since(gather, before);
            gather.skip(
                child.path,
                format!("truncated: {} of {size} bytes in the archive", counted.read),
            );
            stopped = Some("archive truncated".into());
            break;
        }
    }
    if stopped.is_none() {
        // Read on to the end of the stream (a few MiB at most): so the decompressor reaches
        // any trailer or trailing data to report, and data after the archive's end is named.
        let mut after = archive.into_inner().take(16 << 20);
        let mut buf = vec![0; 64 * 1024];
        let mut nonzero = 0u64;
        while let Ok(n) = after.read(&mut buf) {
            if n == 0 {
                break;
            }
            nonzero += buf[..n].iter().filter(|&&b| b != 0).count() as u64;
        }
        if nonzero > 0 {
            names.push("(after the end of the tar archive)".into());
            gather.skip(
                crate::gather::join(&inside, "(after the end of the tar archive)"),
                format!("{nonzero} bytes of data after the archive's end, not read"),
            );
        }
    }
    for d in dropped.borrow_mut().drain(..) {
        names.push(d.name.clone());
        gather.skip(crate::gather::join(&inside, &d.name), d.reason);
    }
    (names, stopped)
}

/// Forgets what a file that turned out truncated or unreadable left in `gather`.
fn drop_since(gather: &mut Gather, (members, skipped): (usize, usize)) {
    gather.members.truncate(members);
    gather.skipped.truncate(skipped);
}

/// A relative path without `..`, `.` segments or a leading `/`; `/` separators.
pub(crate) fn safe_path(raw: &str) -> Result<String, &'static str> {
    if raw.starts_with('/') {
        return Err("absolute path in the archive, not read");
    }
    let mut parts = Vec::new();
    for part in raw.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("path climbs out of the bundle ('..'), not read"),
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err("empty path, not read");
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsafe_paths() {
        assert!(safe_path("/etc/passwd").is_err());
        assert!(safe_path("a/../../b").is_err());
        assert!(safe_path("./").is_err());
        assert_eq!(safe_path("./a//b/./c").unwrap(), "a/b/c");
    }

    #[test]
    fn formats_pgmortem_does_not_read_are_named() {
        for (head, what) in [
            (&b"7z\xbc\xaf\x27\x1c\x00\x04"[..], "7z archives"),
            (b"Rar!\x1a\x07\x01\x00", "RAR archives"),
            (b"\x04\x22\x4d\x18\x64\x40", "lz4-compressed"),
            (b"LZIP\x01\x0c", "lzip-compressed"),
            (b"\x1f\x9d\x90", "Unix compress (.Z)"),
        ] {
            let Container::Unsupported(u) = container(head) else {
                panic!("{head:?}");
            };
            assert!(u.reason().starts_with(what), "{}", u.reason());
        }
        assert_eq!(container(b"PK\x03\x04\x14\x00"), Container::Zip);
        assert_eq!(container(b"LZIP is a word"), Container::Plain);
    }

    #[test]
    fn magic_numbers() {
        assert_eq!(
            container(&[0x1f, 0x8b, 8]),
            Container::Compressed(Compression::Gzip)
        );
        assert_eq!(
            container(&[0x28, 0xb5, 0x2f, 0xfd]),
            Container::Compressed(Compression::Zstd)
        );
        assert_eq!(container(b"hello"), Container::Plain);
        let mut header = tar::Header::new_gnu();
        header.set_path("x").unwrap();
        header.set_size(0);
        header.set_cksum();
        assert_eq!(container(header.as_bytes()), Container::Tar);
        let mut old = tar::Header::new_old();
        old.set_path("x").unwrap();
        old.set_size(0);
        old.set_cksum();
        assert_eq!(container(old.as_bytes()), Container::Tar);
    }
}
