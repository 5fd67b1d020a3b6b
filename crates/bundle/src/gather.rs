//! Gathering a bundle's files before their kinds are known: a directory walked, an archive
//! (tar, plain or compressed; zip) read once, in order, a compressed file decompressed, and
//! every archive found inside any of them opened in turn, down to
//! [`OpenOptions::max_nesting`] archives deep, all within one [`Budget`] (memory, temporary
//! files, decompressed bytes). Yields [`Member`]s, each with the root its kind is recognised
//! from (the bundle's top, or the archive it came out of), and the files not read, with why.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Cursor, Read};
use std::path::Path;

use crate::archive::{Capped, Container, Member, container, read_tar};
use crate::body::{Budget, Content, CopyError, Spool};
use crate::compressed::{self, Compression, GzipShape, StopAtError};
use crate::open::{ArchiveTrouble, OpenOptions, Skipped};
use crate::zipfile::read_zip;

/// Bytes read from a file before deciding what it is: a tar header's magic ends at 262.
const HEAD_BYTES: usize = 512;

/// Where a file sits in the bundle.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// Its path in the bundle, as reports show it (for the bundle itself: its file name).
    pub path: String,
    /// The path its kind is recognised relative to: the bundle's top (`""`), or the archive
    /// (or input) it belongs to.
    pub root: String,
    /// Archives it is inside.
    pub nesting: usize,
    /// It is the bundle itself: an archive's files go at the top, not under its name.
    pub top: bool,
}

impl Place {
    /// Where the files of this archive go: under its path, or at the top for the bundle.
    pub(crate) fn inside(&self) -> String {
        if self.top {
            self.root.clone()
        } else {
            self.path.clone()
        }
    }

    /// A file of this archive, at `rel` (relative to the archive's root).
    pub(crate) fn child(&self, rel: &str) -> Place {
        let inside = self.inside();
        Place {
            path: join(&inside, rel),
            root: inside,
            nesting: self.nesting + 1,
            top: false,
        }
    }
}

/// `prefix/rel`, or `rel` when the prefix is empty.
pub(crate) fn join(prefix: &str, rel: &str) -> String {
    if prefix.is_empty() {
        rel.to_owned()
    } else {
        format!("{prefix}/{rel}")
    }
}

/// Counts the bytes read through it and keeps the first read error: whether an archive's
/// own stream broke (truncated, corrupt) is told apart from a member that could not be used.
pub(crate) struct Counted<R> {
    pub inner: R,
    pub read: u64,
    pub error: Option<String>,
}

impl<R> Counted<R> {
    pub(crate) fn new(inner: R) -> Self {
        Counted {
            inner,
            read: 0,
            error: None,
        }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read(buf) {
            Ok(n) => {
                self.read += n as u64;
                Ok(n)
            }
            Err(e) => {
                if e.kind() != io::ErrorKind::Interrupted && self.error.is_none() {
                    self.error = Some(e.to_string());
                }
                Err(e)
            }
        }
    }
}

/// What has been gathered so far, and the budget left.
pub(crate) struct Gather<'o> {
    pub options: &'o OpenOptions,
    pub budget: Budget,
    pub members: Vec<Member>,
    pub skipped: Vec<Skipped>,
    /// Paths taken by members: a second file under a taken path is skipped, not merged.
    taken: HashSet<String>,
}

impl<'o> Gather<'o> {
    pub(crate) fn new(options: &'o OpenOptions) -> Self {
        Gather {
            options,
            budget: Budget::new(options),
            members: Vec::new(),
            skipped: Vec::new(),
            taken: HashSet::new(),
        }
    }

    /// Lists `path` as not read, for `reason`.
    pub(crate) fn skip(&mut self, path: String, reason: impl Into<String>) {
        self.skipped.push(Skipped::new(path, reason));
    }

    /// Lists an archive or compressed file that could not be opened at all: the report says
    /// so at its top.
    pub(crate) fn unopened(&mut self, path: String, reason: String) {
        self.skipped.push(Skipped {
            archive: Some(ArchiveTrouble::NotOpened),
            ..Skipped::new(path, reason)
        });
    }

    /// Keeps a member, unless its path is taken.
    fn keep(&mut self, member: Member) {
        if self.taken.insert(member.path.clone()) {
            self.members.push(member);
        } else {
            let reason = format!(
                "another file of the bundle is already {:?}; the first one is used",
                member.path
            );
            self.skip(member.path, reason);
        }
    }

    /// Reads one file from `stream`: an archive's files are gathered under its path (opened
    /// when fewer than [`OpenOptions::max_nesting`] archives hold it), a compressed file is
    /// decompressed (under its name without the suffix), anything else is kept as it is.
    /// `disk`: the file's own path, when it is a file of the file system (read again when
    /// needed, never copied).
    ///
    /// Returns `Err(reason)` when the file is an archive or compressed data that cannot be
    /// opened at all (a format pgmortem does not read, corrupt from its first bytes, nested
    /// too deep): the caller lists it ([`Gather::unopened`]) or fails the bundle.
    pub(crate) fn file(
        &mut self,
        stream: &mut dyn Read,
        place: &Place,
        disk: Option<&Path>,
    ) -> Result<(), String> {
        let mut head = Vec::with_capacity(HEAD_BYTES);
        if let Err(e) = stream.take(HEAD_BYTES as u64).read_to_end(&mut head) {
            self.skip(place.path.clone(), format!("cannot read: {e}"));
            return Ok(());
        }
        let kind = container(&head);
        if matches!(kind, Container::Tar | Container::Zip) {
            self.may_open(place)?;
        }
        let mut stream = Cursor::new(head).chain(stream);
        match kind {
            Container::Unsupported(what) => Err(what.reason().to_owned()),
            Container::Tar => self.tar(&mut stream, place),
            Container::Zip => self.zip(&mut stream, place, disk),
            Container::Compressed(c) => self.compressed(c, &mut stream, place),
            Container::Plain => {
                self.plain(&mut stream, place, disk);
                Ok(())
            }
        }
    }

    /// `Err` when an archive at `place` is nested too deep to be opened.
    fn may_open(&self, place: &Place) -> Result<(), String> {
        if place.nesting >= self.options.max_nesting {
            return Err(format!(
                "an archive inside {} others: not opened (pgmortem opens archives {} deep); \
                 extract it and give what it holds",
                place.nesting, self.options.max_nesting
            ));
        }
        Ok(())
    }

    /// A file kept as it is: a file of the file system stays where it is when big; a stream
    /// is taken whole, in memory while it fits, else in a temporary file.
    fn plain(&mut self, stream: &mut dyn Read, place: &Place, disk: Option<&Path>) {
        if let Some(path) = disk {
            match plain_file(path, self.options, &mut self.budget) {
                Ok(content) => self.keep(Member::new(place, content, None)),
                Err(e) => self.skip(place.path.clone(), e.to_string()),
            }
            return;
        }
        let mut spool = Spool::new(self.options, &mut self.budget);
        match spool.copy_from(stream) {
            Ok(_) => {
                let content = spool.finish();
                self.keep(Member::new(place, content, None));
            }
            Err(CopyError::Spool(e)) => self.skip(place.path.clone(), e.to_string()),
            Err(CopyError::Read(e)) => self.skip(place.path.clone(), format!("cannot read: {e}")),
        }
    }

    /// A compressed stream: a tar or zip archive inside is opened, else the one file it holds
    /// is kept under its name without the compression's suffix.
    fn compressed(
        &mut self,
        compression: Compression,
        stream: &mut dyn Read,
        place: &Place,
    ) -> Result<(), String> {
        let name = compression.name();
        let shape = std::rc::Rc::new(std::cell::RefCell::new(GzipShape::default()));
        let decoder = compression
            .decoder(stream, shape.clone())
            .map_err(|e| format!("corrupt {name} data: {e}"))?;
        let mut capped = Capped::new(decoder, &self.budget);
        let mut head = Vec::with_capacity(HEAD_BYTES);
        let head_error = (&mut capped)
            .take(HEAD_BYTES as u64)
            .read_to_end(&mut head)
            .err();
        let kind = container(&head);
        if head_error.is_none() && matches!(kind, Container::Tar | Container::Zip) {
            self.may_open(place)?;
            let mut inner = Cursor::new(head).chain(capped);
            let read = if kind == Container::Tar {
                self.tar(&mut inner, place)
            } else {
                self.zip(&mut inner, place, None)
            };
            if let Some(shape) = shape.borrow().describe() {
                self.skip(place.path.clone(), format!("the archive itself: {shape}"));
            }
            return read;
        }
        if let Some(e) = head_error.as_ref().filter(|_| head.is_empty()) {
            return Err(format!("corrupt {name} data: {e}"));
        }
        let path = compressed::strip_suffix(&place.path, compression);
        let mut stopping = StopAtError {
            inner: Cursor::new(head).chain(capped),
            error: head_error,
        };
        let mut spool = Spool::new(self.options, &mut self.budget);
        if let Err(e) = spool.copy_from(&mut stopping) {
            let reason = match e {
                CopyError::Spool(e) | CopyError::Read(e) => e.to_string(),
            };
            self.skip(place.path.clone(), reason);
            return Ok(());
        }
        let spooled = spool.len();
        let content = spool.finish();
        let mut note = format!("decompressed from {name}");
        if let Some(shape) = shape.borrow().describe() {
            // The bundle's own shape is said beside its files, a member's in its note.
            if place.top {
                self.skip(place.path.clone(), format!("the archive itself: {shape}"));
            } else {
                note.push_str(&format!(" ({shape})"));
            }
        }
        if let Some(e) = stopping.error {
            if spooled == 0 {
                return Err(format!("corrupt {name} data: {e}"));
            }
            note.push_str(&format!(
                " (stopped after {spooled} bytes: {e}; the lines before are read)"
            ));
        }
        let place = Place {
            path,
            ..place.clone()
        };
        self.keep(Member::new(&place, content, Some(note)));
        Ok(())
    }

    /// A tar archive: its files gathered under [`Place::inside`], then its one common top
    /// directory dropped (what `tar czf x.tgz dir/` makes). `Err` when it gave nothing.
    fn tar(&mut self, stream: &mut dyn Read, place: &Place) -> Result<(), String> {
        let from = (self.members.len(), self.skipped.len());
        let (entries, stopped) = read_tar(stream, place, self);
        self.settle_archive(place, from, &entries, stopped)
    }

    /// A zip archive: read from its file, or spooled first (its directory is at its end).
    fn zip(
        &mut self,
        stream: &mut dyn Read,
        place: &Place,
        disk: Option<&Path>,
    ) -> Result<(), String> {
        let content = match disk {
            Some(path) => Content::File {
                path: path.to_owned(),
                len: fs::metadata(path).map_err(|e| e.to_string())?.len(),
            },
            None => {
                let mut spool = Spool::new(self.options, &mut self.budget);
                match spool.copy_from(stream) {
                    Ok(_) => spool.finish(),
                    Err(CopyError::Spool(e)) => {
                        return Err(format!(
                            "a zip archive is read from a temporary copy, which cannot be \
                             made: {e}"
                        ));
                    }
                    Err(CopyError::Read(e)) => return Err(format!("cannot read: {e}")),
                }
            }
        };
        let from = (self.members.len(), self.skipped.len());
        let (entries, stopped) = read_zip(&content, place, self)?;
        self.settle_archive(place, from, &entries, stopped)
    }

    /// After an archive's files were gathered (from the indexes `from` on; `entries`: the
    /// paths of its own entries, relative to it): drops their common top directory, and says
    /// why the archive stopped early, if it did.
    fn settle_archive(
        &mut self,
        place: &Place,
        from: (usize, usize),
        entries: &[String],
        stopped: Option<String>,
    ) -> Result<(), String> {
        strip_common_top(
            &place.inside(),
            entries,
            &mut self.members[from.0..],
            &mut self.skipped[from.1..],
        );
        self.taken = self.members.iter().map(|m| m.path.clone()).collect();
        if let Some(reason) = stopped {
            if self.members.len() == from.0 && self.skipped.len() == from.1 {
                return Err(reason);
            }
            self.skipped.push(Skipped {
                archive: Some(ArchiveTrouble::NotReadWhole),
                ..Skipped::new(place.path.clone(), reason)
            });
        }
        Ok(())
    }

    /// Every regular file below `dir` (`rel`: its path in the bundle), links not followed.
    pub(crate) fn walk(&mut self, dir: &Path, rel: &str, root: &str, depth: usize) {
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) => {
                self.skip(rel.to_owned(), e.to_string());
                return;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    self.skip(rel.to_owned(), e.to_string());
                    return;
                }
            };
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let child = join(rel, &name);
            let Ok(file_type) = entry.file_type() else {
                self.skip(child, "cannot stat");
                continue;
            };
            if file_type.is_dir() {
                if depth + 1 >= self.options.max_depth {
                    self.skip(child, "directory too deep");
                } else {
                    self.walk(&path, &child, root, depth + 1);
                }
            } else if file_type.is_file() {
                let place = Place {
                    path: child,
                    root: root.to_owned(),
                    nesting: 0,
                    top: false,
                };
                match fs::File::open(&path) {
                    Ok(mut file) => {
                        if let Err(reason) = self.file(&mut file, &place, Some(&path)) {
                            self.unopened(place.path, reason);
                        }
                    }
                    Err(e) => self.skip(place.path, e.to_string()),
                }
            } else {
                // A link's target is said, as the archive reader says it: a sosreport's links
                // (`date`, `ps`, …) point at files it holds and reads anyway.
                let reason = if file_type.is_symlink() {
                    match fs::read_link(&path) {
                        Ok(target) => format!("symbolic link to {target:?}, not followed"),
                        Err(_) => "symbolic link, not followed".to_owned(),
                    }
                } else {
                    "not a regular file, not followed".to_owned()
                };
                self.skip(child, reason);
            }
        }
    }
}

/// A plain file of the file system: read into memory when small, else left in place to be
/// read when needed.
fn plain_file(path: &Path, options: &OpenOptions, budget: &mut Budget) -> io::Result<Content> {
    let len = fs::metadata(path)?.len();
    if len <= options.memory_file_bytes && len <= budget.memory_left {
        // Read to the end: a file still growing may be longer than its metadata said.
        let mut bytes = Vec::with_capacity(len as usize);
        fs::File::open(path)?.read_to_end(&mut bytes)?;
        budget.memory_left = budget.memory_left.saturating_sub(bytes.len() as u64);
        Ok(Content::Memory(bytes))
    } else {
        Ok(Content::File {
            path: path.to_owned(),
            len,
        })
    }
}

/// Drops the one top directory every entry of an archive sits in (what `tar czf x.tgz dir/`
/// makes): `entries` are the paths of the archive's own entries, relative to it (an archive
/// inside it is one entry, whatever it holds); the paths of what was gathered below `inside`
/// (the archive's place), and the roots of what archives nested in it held, lose it.
fn strip_common_top(
    inside: &str,
    entries: &[String],
    members: &mut [Member],
    skipped: &mut [Skipped],
) {
    let mut top: Option<&str> = None;
    for rel in entries {
        let Some((first, _)) = rel.split_once('/') else {
            return;
        };
        match top {
            None => top = Some(first),
            Some(t) if t == first => {}
            Some(_) => return,
        }
    }
    let Some(top) = top else {
        return;
    };
    let from = join(inside, &format!("{top}/"));
    let to = if inside.is_empty() {
        String::new()
    } else {
        format!("{inside}/")
    };
    let strip = |p: &mut String| {
        if let Some(rest) = p.strip_prefix(&from) {
            *p = format!("{to}{rest}");
        }
    };
    for m in members.iter_mut() {
        strip(&mut m.path);
        strip(&mut m.root);
    }
    for s in skipped.iter_mut() {
        strip(&mut s.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(path: &str, root: &str) -> Member {
        Member {
            path: path.into(),
            root: root.into(),
            content: Content::Memory(Vec::new()),
            note: None,
        }
    }

    #[test]
    fn the_common_top_directory_is_dropped_below_the_archive_only() {
        let mut members = vec![
            member("b.tgz/top/kernel/dmesg.txt", "b.tgz"),
            member("b.tgz/top/inner.tar.xz/x/meminfo", "b.tgz/top/inner.tar.xz"),
        ];
        let entries = ["top/kernel/dmesg.txt".into(), "top/inner.tar.xz".into()];
        strip_common_top("b.tgz", &entries, &mut members, &mut []);
        let got: Vec<_> = members
            .iter()
            .map(|m| (m.path.as_str(), m.root.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("b.tgz/kernel/dmesg.txt", "b.tgz"),
                ("b.tgz/inner.tar.xz/x/meminfo", "b.tgz/inner.tar.xz"),
            ]
        );
        let mut top = vec![
            member("pgmortem-x/uptime", ""),
            member("pgmortem-x/a/b", ""),
        ];
        let entries = ["pgmortem-x/uptime".into(), "pgmortem-x/a/b".into()];
        strip_common_top("", &entries, &mut top, &mut []);
        assert_eq!(top[0].path, "uptime");
        assert_eq!(top[1].path, "a/b");
        let mut two = vec![member("a/x", ""), member("b/y", "")];
        strip_common_top("", &["a/x".into(), "b/y".into()], &mut two, &mut []);
        assert_eq!(two[0].path, "a/x");
        // An archive's one entry is an archive: its name is no directory to drop.
        let mut one = vec![member("x.tar.xz/uptime", "x.tar.xz")];
        strip_common_top("", &["x.tar.xz".into()], &mut one, &mut []);
        assert_eq!(one[0].path, "x.tar.xz/uptime");
    }
}
