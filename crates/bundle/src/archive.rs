//! Reading a tar archive (plain or compressed) as a stream, once, in order: nothing is
//! extracted, no link is followed, and every size is capped. Each regular file is kept in
//! memory when small, else spooled to a temporary file of its own (see [`crate::body`]).

use std::cell::RefCell;
use std::collections::HashSet;
use std::io::{self, Read};
use std::rc::Rc;

use crate::body::{Budget, Content, CopyError, Spool};
use crate::compressed::{self, Compression};
use crate::open::{OpenOptions, Skipped};
use crate::tar_guard;

/// What a compressed or archived file is, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Container {
    /// Compressed (a tar archive or one file inside).
    Compressed(Compression),
    Tar,
    Plain,
}

/// What the file whose first bytes are `head` is (512 bytes tell a tar header).
pub(crate) fn container(head: &[u8]) -> Container {
    if let Some(c) = compressed::compression(head) {
        Container::Compressed(c)
    } else if is_tar(head) {
        Container::Tar
    } else {
        Container::Plain
    }
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

/// Counts bytes read through it and fails once `limit` is passed: a decompression bomb stops
/// here, before its output is buffered anywhere.
pub(crate) struct Capped<R> {
    inner: R,
    read: u64,
    limit: u64,
}

impl<R> Capped<R> {
    pub(crate) fn new(inner: R, limit: u64) -> Self {
        Self {
            inner,
            read: 0,
            limit,
        }
    }
}

pub(crate) const OVER_LIMIT: &str = "decompressed data over the bundle's decompression limit";

impl<R: Read> Read for Capped<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.read > self.limit {
            return Err(io::Error::other(format!(
                "{OVER_LIMIT} ({} bytes)",
                self.limit
            )));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        if self.read > self.limit {
            return Err(io::Error::other(format!(
                "{OVER_LIMIT} ({} bytes)",
                self.limit
            )));
        }
        Ok(n)
    }
}

/// One regular file read from a bundle.
pub(crate) struct Member {
    pub path: String,
    /// Its bytes (decompressed, for a compressed file).
    pub content: Content,
    /// What was done to read it (decompressed from gzip, …), for the file's note.
    pub note: Option<String>,
}

/// Everything read from an archive: files, entries not read (and why), and the reason the
/// archive stopped early, if it did.
pub(crate) struct ArchiveContents {
    pub members: Vec<Member>,
    pub skipped: Vec<Skipped>,
    pub stopped: Option<String>,
}

/// Reads every entry of the tar stream `reader`. Regular files are kept in memory or spooled
/// (`budget` says how much of each is left; the caller wraps `reader` in [`Capped`] for the
/// decompressed total); everything else is listed.
pub(crate) fn read_tar<R: Read>(
    reader: R,
    options: &OpenOptions,
    budget: &mut Budget,
) -> ArchiveContents {
    // Extension headers over 64 KiB are dropped before the tar reader would hold them whole.
    let dropped = Rc::new(RefCell::new(Vec::new()));
    let guarded =
        tar_guard::ExtensionGuard::new(reader, tar_guard::MAX_EXTENSION_BYTES, dropped.clone());
    let mut archive = tar::Archive::new(guarded);
    let mut out = ArchiveContents {
        members: Vec::new(),
        skipped: Vec::new(),
        stopped: None,
    };
    let mut seen = HashSet::new();
    let entries = match archive.entries() {
        Ok(e) => e,
        Err(e) => {
            out.stopped = Some(format!("not a readable tar archive: {e}"));
            return out;
        }
    };
    for (index, entry) in entries.enumerate() {
        if index >= options.max_entries {
            out.stopped = Some(format!(
                "more than {} entries; the rest was not read",
                options.max_entries
            ));
            break;
        }
        let mut entry = match entry {
            Ok(e) => e,
            Err(e) => {
                out.stopped = Some(format!(
                    "archive truncated or corrupt after {index} entries: {e}"
                ));
                break;
            }
        };
        let raw_path = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let path = match safe_path(&raw_path) {
            Ok(p) => p,
            Err(reason) => {
                out.skipped.push(Skipped {
                    path: raw_path,
                    reason: reason.into(),
                });
                continue;
            }
        };
        let kind = entry.header().entry_type();
        let link = || {
            entry
                .link_name_bytes()
                .map(|l| String::from_utf8_lossy(&l).into_owned())
                .unwrap_or_default()
        };
        let reason = match kind {
            tar::EntryType::Regular | tar::EntryType::Continuous => None,
            tar::EntryType::Directory => continue,
            tar::EntryType::Symlink => Some(format!("symbolic link to {:?}, not followed", link())),
            tar::EntryType::Link => Some(format!("hard link to {:?}, not followed", link())),
            tar::EntryType::Char | tar::EntryType::Block => Some("device file, not read".into()),
            tar::EntryType::Fifo => Some("fifo, not read".into()),
            tar::EntryType::GNUSparse => Some("sparse file, not read".into()),
            other => Some(format!("tar entry of type {other:?}, not read")),
        };
        if let Some(reason) = reason {
            out.skipped.push(Skipped { path, reason });
            continue;
        }
        if !seen.insert(path.clone()) {
            out.skipped.push(Skipped {
                path,
                reason: "duplicate name in the archive; the first copy is used".into(),
            });
            continue;
        }
        // The entry's size, from a PAX `size` record when there is one (files over 8 GiB).
        let size = entry.size();
        // A file compressed on its own (a rotated log) is decompressed as it is read.
        let mut head = Vec::with_capacity(compressed::MAGIC_BYTES);
        let magic = (compressed::MAGIC_BYTES as u64).min(size);
        if let Err(e) = (&mut entry).take(magic).read_to_end(&mut head) {
            out.skipped.push(Skipped {
                path,
                reason: format!("cannot read: {e}"),
            });
            out.stopped = Some(format!("archive unreadable from here on: {e}"));
            break;
        }
        let rest = (&mut entry).take(size - head.len() as u64);
        let stream = io::Cursor::new(head.clone()).chain(rest);
        let mut spool = Spool::new(options, budget);
        if let Some(compression) = compressed::compression(&head) {
            match compressed::decompress(
                stream,
                &path,
                compression,
                &mut spool,
                options.max_decompressed_bytes,
            ) {
                Ok(d) if d.path == path || seen.insert(d.path.clone()) => {
                    out.members.push(Member {
                        path: d.path,
                        content: spool.finish(),
                        note: Some(d.note),
                    });
                }
                Ok(d) => out.skipped.push(Skipped {
                    path,
                    reason: format!("decompresses to {:?}, which the archive also holds", d.path),
                }),
                Err(e) => out.skipped.push(Skipped {
                    path,
                    reason: format!("cannot decompress: {e}"),
                }),
            }
            continue;
        }
        let mut stream = stream;
        match spool.copy_from(&mut stream) {
            Ok(read) if read == size => out.members.push(Member {
                path,
                content: spool.finish(),
                note: None,
            }),
            Ok(read) => {
                out.skipped.push(Skipped {
                    path,
                    reason: format!("truncated: {read} of {size} bytes in the archive"),
                });
                out.stopped = Some("archive truncated".into());
                break;
            }
            // The temporary files are full (or cannot be written): this file is not read,
            // smaller ones may still be.
            Err(CopyError::Spool(e)) => out.skipped.push(Skipped {
                path,
                reason: e.to_string(),
            }),
            Err(CopyError::Read(e)) => {
                out.skipped.push(Skipped {
                    path,
                    reason: format!("cannot read: {e}"),
                });
                out.stopped = Some(format!("archive unreadable from here on: {e}"));
                break;
            }
        }
    }
    if out.stopped.is_none() {
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
            out.skipped.push(Skipped {
                path: "(after the end of the tar archive)".into(),
                reason: format!("{nonzero} bytes of data after the archive's end, not read"),
            });
        }
    }
    out.skipped
        .extend(dropped.borrow_mut().drain(..).map(|d| Skipped {
            path: d.name,
            reason: d.reason,
        }));
    out
}

/// A relative path without `..`, `.` segments or a leading `/`; `/` separators.
fn safe_path(raw: &str) -> Result<String, &'static str> {
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
