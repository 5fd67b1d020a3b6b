//! Opening a bundle: a directory of loose files, a tar archive (plain, `.tar.gz`, `.tar.zst`,
//! `.tar.xz`, `.tar.bz2`) read as a stream, or one file (compressed or not).

use std::cell::RefCell;
use std::fs;
use std::io::{self, Cursor, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::Serialize;

use crate::archive::{Capped, Container, Member, container, read_tar};
use crate::body::{Body, Budget, Content, SourceReader, Spool};
use crate::checks;
use crate::compressed;
use crate::human::human_bytes;
use crate::kind::{SourceKind, kind_from_path, recognize};
use crate::manifest::Manifest;

/// Limits applied while reading a bundle.
///
/// Memory: files of every kind but the logs are held in memory ([`Source::bytes`]), at most
/// `max_file_bytes` each and `max_total_bytes` in all. Logs (`postgres_log`, `kernel_log`) are
/// read whole, as streams ([`Source::reader`]): a log up to `memory_file_bytes` is held in
/// memory, a bigger one stays in its file (a directory's loose file, read when it is analysed)
/// or in a temporary file (an archive member or a compressed file, decompressed once), so a
/// log of any size costs no memory until it is read, and then only what its reader holds.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// `None` (the default): logs are read whole. `Some(n)`: a log larger than `n` bytes keeps
    /// only its last `n` bytes, from a line start, with a note saying how much was read of
    /// how much (a report puts it at the top: `log_not_read_whole`).
    pub max_log_bytes: Option<u64>,
    /// Files up to this size are held in memory as they are read; a bigger log stays on disk
    /// (its own file, or a temporary copy when it came out of an archive or a compressed
    /// file). Default 8 MiB.
    pub memory_file_bytes: u64,
    /// Files of every kind but the logs (snapshots, perf scripts, files of no known kind) are
    /// held in memory; one larger than this keeps only its last `max_file_bytes` bytes, from a
    /// line start, with a note saying so. Default 256 MiB, more than the collector keeps of a
    /// perf script (200 MiB).
    pub max_file_bytes: u64,
    /// Bytes held in memory for the whole bundle: files past it are spooled while reading, and
    /// files that must be held (every kind but the logs) are listed as skipped. Default 512 MiB.
    pub max_total_bytes: u64,
    /// Bytes written to temporary files for the whole bundle (archive members and compressed
    /// files too big for memory): files past it are listed as skipped. Default 64 GiB.
    pub max_spool_bytes: u64,
    /// Where temporary files go; `None`: the system's temporary directory (`TMPDIR`).
    pub spool_dir: Option<PathBuf>,
    /// Bytes decompressed from one archive or compressed file: a decompression bomb stops here
    /// with a clear reason. Default 64 GiB.
    pub max_decompressed_bytes: u64,
    /// Entries read from one archive. Default 100 000.
    pub max_entries: usize,
    /// How many bytes of a file are used to recognise its kind. Default 16 KiB.
    pub sniff_bytes: usize,
    /// Directory depth explored below the bundle root. Default 8.
    pub max_depth: usize,
}

impl OpenOptions {
    /// The default options, with what is held in memory fitted to `bytes`: the total held
    /// ([`OpenOptions::max_total_bytes`]) and the end kept of one file
    /// ([`OpenOptions::max_file_bytes`]) at most `bytes`, one file held while read
    /// ([`OpenOptions::memory_file_bytes`]) at most a 64th of it.
    pub fn within(bytes: u64) -> Self {
        let defaults = OpenOptions::default();
        OpenOptions {
            max_total_bytes: bytes,
            max_file_bytes: defaults.max_file_bytes.min(bytes),
            memory_file_bytes: defaults.memory_file_bytes.min(bytes / 64),
            ..defaults
        }
    }
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            max_log_bytes: None,
            memory_file_bytes: 8 << 20,
            max_file_bytes: 256 << 20,
            max_total_bytes: 512 << 20,
            max_spool_bytes: 64 << 30,
            spool_dir: None,
            max_decompressed_bytes: 64 << 30,
            max_entries: 100_000,
            sniff_bytes: 16 * 1024,
            max_depth: 8,
        }
    }
}

/// How a file's kind was decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RecognizedBy {
    /// The collector's manifest named it.
    Manifest,
    /// Its path did (`proc/meminfo`, `memory.max`, …).
    Path,
    /// Its first bytes did (or nothing did: [`SourceKind::Unknown`]).
    Content,
}

impl RecognizedBy {
    /// `manifest.json`, `its path` or `its content`, for notes.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            RecognizedBy::Manifest => "manifest.json",
            RecognizedBy::Path => "its path",
            RecognizedBy::Content => "its content",
        }
    }
}

/// One readable file of a bundle, its kind recognised.
#[derive(Debug, Clone)]
pub struct Source {
    /// Path relative to the bundle root (or the file name for a single-file bundle), with `/`
    /// separators, as reports show it. For an archive whose entries all sit in one top
    /// directory (`pgmortem-db1-20261121T170844Z/…`), relative to that directory.
    pub path: String,
    /// What the file holds.
    pub kind: SourceKind,
    /// How `kind` was decided.
    pub recognized_by: RecognizedBy,
    /// The file's bytes, for every file held in memory: every kind but the logs, and logs up
    /// to [`OpenOptions::memory_file_bytes`]. Empty for a bigger log: read it with
    /// [`Source::reader`], which works for every file.
    pub bytes: Vec<u8>,
    /// What a reader should know before trusting the file: empty, binary data, a kind the
    /// content contradicted (`manifest.json says meminfo, but the content reads as
    /// kernel_log`), a size that disagrees with the manifest, a manifest that is not one.
    pub note: Option<String>,
    body: Body,
}

impl Source {
    /// The file's bytes as a stream, from memory, from its file or from its temporary copy:
    /// what [`Source::size`] counts.
    ///
    /// # Errors
    /// When its file cannot be opened (removed since the bundle was opened, …).
    pub fn reader(&self) -> io::Result<SourceReader<'_>> {
        self.body.reader(&self.bytes)
    }

    /// Bytes [`Source::reader`] gives (for a log under [`OpenOptions::max_log_bytes`], the end
    /// that is read; the note says of how much).
    pub fn size(&self) -> u64 {
        self.body.size(&self.bytes)
    }

    /// True when the bytes are in [`Source::bytes`].
    pub fn in_memory(&self) -> bool {
        matches!(self.body, Body::Memory)
    }
}

/// A file of the bundle that was not read, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    /// Path relative to the bundle root.
    pub path: String,
    /// Why it was not read.
    pub reason: String,
}

/// An opened bundle.
#[derive(Debug, Clone, Default)]
pub struct Bundle {
    /// Readable files, sorted by path.
    pub sources: Vec<Source>,
    /// Files that could not be read, sorted by path. An archive that ended early is listed
    /// under its own name with the reason; a file the manifest lists but the bundle lacks is
    /// listed with the reason `not in the bundle: …` and what the collector recorded.
    pub skipped: Vec<Skipped>,
    /// The collector's manifest, when the bundle has a readable one.
    pub manifest: Option<Manifest>,
}

/// Errors opening a bundle (per-file problems are [`Skipped`] entries instead).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BundleError {
    /// The bundle path itself could not be read.
    #[error("cannot open bundle {path}: {source}")]
    Io {
        /// The path given.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The path is neither a regular file nor a directory.
    #[error("{path} is neither a file nor a directory")]
    NotAFileOrDirectory {
        /// The path given.
        path: PathBuf,
    },
    /// An archive gave no file at all.
    #[error("cannot read archive {path}: {reason}")]
    Archive {
        /// The path given.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// Opens `path`: a directory (every regular file below it, symlinks not followed), a tar
/// archive (plain, gzip, zstd, xz or bzip2, recognised by its magic bytes, read once as a
/// stream: never extracted), or a single file (compressed with one of those or not). Per-file problems do not
/// fail the bundle; they are listed in [`Bundle::skipped`]. Each file's kind comes from the
/// collector's `manifest.json` when it names one, else from the path, else from the content.
pub fn open(path: &Path, options: &OpenOptions) -> Result<Bundle, BundleError> {
    let io_err = |source| BundleError::Io {
        path: path.to_owned(),
        source,
    };
    // Opened once, without waiting (a FIFO with no writer), and judged by what was opened:
    // a symlink to /dev/zero or to a FIFO is refused or read like its target, never hangs.
    let file = open_nonblocking(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    let mut members = Vec::new();
    let mut skipped = Vec::new();
    let mut budget = Budget::new(options);
    if meta.is_dir() {
        drop(file);
        walk(
            path,
            path,
            0,
            options,
            &mut budget,
            &mut members,
            &mut skipped,
        )
        .map_err(io_err)?;
    } else if meta.is_file() || is_pipe(&meta) {
        let pipe = is_pipe(&meta);
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        // Process substitution, /dev/stdin: a pipe read as it comes.
        let mut file = PipeOrFile(file);
        let mut head = Vec::with_capacity(512);
        (&mut file)
            .take(512)
            .read_to_end(&mut head)
            .map_err(io_err)?;
        let stream = Cursor::new(head.clone()).chain(file);
        let gzip_shape = Rc::new(RefCell::new(compressed::GzipShape::default()));
        let archived = match container(&head) {
            Container::Compressed(compression) => {
                let decoder = compression
                    .decoder(stream, gzip_shape.clone())
                    .map_err(io_err)?;
                Some(read_stream(
                    decoder,
                    &name,
                    Some(compression),
                    options,
                    &mut budget,
                ))
            }
            Container::Tar => Some(read_stream(stream, &name, None, options, &mut budget)),
            Container::Plain if pipe => {
                let member = read_plain_stream(stream, name.clone(), options, &mut budget);
                members.push(member.map_err(io_err)?);
                None
            }
            Container::Plain => None,
        };
        match archived {
            Some(Ok((m, s))) => {
                members = m;
                skipped = s;
                if let Some(shape) = gzip_shape.borrow().describe() {
                    skipped.push(Skipped {
                        path: name.clone(),
                        reason: format!("the archive itself: {shape}"),
                    });
                }
            }
            Some(Err(reason)) => {
                return Err(BundleError::Archive {
                    path: path.to_owned(),
                    reason,
                });
            }
            None if pipe => {}
            None => {
                members.push(read_plain_file(path, name, options, &mut budget).map_err(io_err)?)
            }
        }
    } else {
        return Err(BundleError::NotAFileOrDirectory {
            path: path.to_owned(),
        });
    }
    Ok(classify(members, skipped, options))
}

type Members = Vec<Member>;

/// Reads a (decompressed) stream: a tar archive, or else one compressed file named after the
/// archive without its compression suffix.
fn read_stream<R: Read>(
    reader: R,
    name: &str,
    compression: Option<compressed::Compression>,
    options: &OpenOptions,
    budget: &mut Budget,
) -> Result<(Members, Vec<Skipped>), String> {
    let mut reader = Capped::new(reader, options.max_decompressed_bytes);
    let mut head = Vec::with_capacity(512);
    (&mut reader)
        .take(512)
        .read_to_end(&mut head)
        .map_err(|e| format!("cannot decompress: {e}"))?;
    let stream = Cursor::new(head.clone()).chain(reader);
    if container(&head) != Container::Tar {
        let inner =
            compression.map_or_else(|| name.to_owned(), |c| compressed::strip_suffix(name, c));
        let mut spool = Spool::new(options, budget);
        // A damaged stream (a bad CRC or length, cut short) keeps what came out before the
        // damage, with a note; nothing at all is an error.
        let mut stopping = compressed::StopAtError {
            inner: stream,
            error: None,
        };
        spool.copy_from(&mut stopping).map_err(|e| match e {
            crate::body::CopyError::Read(e) => format!("cannot decompress: {e}"),
            crate::body::CopyError::Spool(e) => e.to_string(),
        })?;
        let note = match stopping.error {
            Some(e) if spool.len() == 0 => return Err(format!("cannot decompress: {e}")),
            Some(e) => Some(format!(
                "decompressed from {} (stopped after {} bytes: {e}; the lines before are read)",
                compression.map_or("its compression", |c| c.name()),
                spool.len()
            )),
            None => None,
        };
        return Ok((
            vec![Member {
                path: inner,
                content: spool.finish(),
                note,
            }],
            Vec::new(),
        ));
    }
    let contents = read_tar(stream, options, budget);
    let mut members: Members = contents.members;
    let mut skipped = contents.skipped;
    strip_common_top(&mut members, &mut skipped);
    if let Some(reason) = contents.stopped {
        if members.is_empty() && skipped.is_empty() {
            return Err(reason);
        }
        skipped.push(Skipped {
            path: name.to_owned(),
            reason,
        });
    }
    Ok((members, skipped))
}

/// Drops the one top directory every entry sits in (what `tar czf x.tgz dir/` makes).
fn strip_common_top(members: &mut Members, skipped: &mut [Skipped]) {
    let paths = members
        .iter()
        .map(|m| m.path.as_str())
        .chain(skipped.iter().map(|s| s.path.as_str()));
    let mut top: Option<&str> = None;
    for p in paths {
        let Some((first, _)) = p.split_once('/') else {
            return;
        };
        match top {
            None => top = Some(first),
            Some(t) if t == first => {}
            Some(_) => return,
        }
    }
    let Some(top) = top.map(|t| format!("{t}/")) else {
        return;
    };
    for m in members.iter_mut() {
        m.path = m.path[top.len()..].to_owned();
    }
    for s in skipped.iter_mut() {
        if let Some(rest) = s.path.strip_prefix(&top) {
            s.path = rest.to_owned();
        }
    }
}

/// The kinds read as streams, never held whole unless small: the logs.
fn streamed(kind: SourceKind) -> bool {
    matches!(
        kind,
        SourceKind::PostgresLog | SourceKind::KernelLog | SourceKind::SystemLog
    )
}

/// Decides each file's kind (manifest, then path, then content; content overrules a name it
/// clearly contradicts), notes what is odd about each file, cuts what is over a limit, lists
/// the manifest's entries the bundle lacks, and sorts everything.
fn classify(members: Members, mut skipped: Vec<Skipped>, options: &OpenOptions) -> Bundle {
    let manifest_read =
        members
            .iter()
            .find(|m| m.path == "manifest.json")
            .map(|m| match &m.content {
                Content::Memory(bytes) => Manifest::read(bytes),
                _ => Err(format!(
                    "{} bytes, more than a manifest holds",
                    m.content.len()
                )),
            });
    let manifest = manifest_read
        .as_ref()
        .and_then(|r| r.as_ref().ok())
        .cloned();
    let mut total = 0u64;
    let mut sources = Vec::with_capacity(members.len());
    for Member {
        path,
        content,
        note: read_note,
    } in members
    {
        let file_size = content.len();
        let mut head = match content.head(options.sniff_bytes) {
            Ok(h) => h,
            Err(e) => {
                skipped.push(Skipped {
                    path,
                    reason: format!("cannot read: {e}"),
                });
                continue;
            }
        };
        let entry = manifest.as_ref().and_then(|m| m.file(&path));
        let declared = entry
            .and_then(|f| SourceKind::from_name(&f.kind))
            .filter(|k| *k != SourceKind::Unknown)
            .map(|k| (k, RecognizedBy::Manifest))
            .or_else(|| kind_from_path(&path).map(|k| (k, RecognizedBy::Path)));
        let mut notes: Vec<String> = read_note.into_iter().collect();
        let binary = checks::binary_note(&head);
        // A text file with NUL runs (cut by a crash) is recognised without them.
        let nul_in_head = binary.is_none() && checks::strip_nul(&mut head) > 0;
        // Binary data is no kind pgmortem reads, whatever its name says.
        let (kind, recognized_by) = if let Some(binary) = binary {
            notes.push(binary);
            if let Some((kind, by)) = declared {
                notes.push(format!("{} says {}", by.describe(), kind.as_str()));
            }
            (SourceKind::Unknown, RecognizedBy::Content)
        } else if let Some((kind, by)) = declared {
            let (kind, by, note) = checks::settle_kind(kind, by, &head);
            notes.extend(note);
            (kind, by)
        } else {
            match recognize(&head) {
                // A log whose first bytes are the inside of one long record (a multi-line
                // statement where a tail was cut) reads as nothing: its end tells.
                SourceKind::Unknown => match content.tail(options.sniff_bytes) {
                    Ok(mut tail) if checks::binary_note(&tail).is_none() => {
                        checks::strip_nul(&mut tail);
                        let kind = recognize(&tail);
                        if is_log(kind) {
                            notes.push(format!(
                                "its first {} bytes read as no kind (the inside of a long \
                                 record?); recognised from its end",
                                head.len()
                            ));
                            (kind, RecognizedBy::Content)
                        } else {
                            (SourceKind::Unknown, RecognizedBy::Content)
                        }
                    }
                    _ => (SourceKind::Unknown, RecognizedBy::Content),
                },
                kind => (kind, RecognizedBy::Content),
            }
        };
        let mut held = match hold(content, kind, options) {
            Ok(held) => held,
            Err(e) => {
                skipped.push(Skipped {
                    path,
                    reason: format!("cannot read: {e}"),
                });
                continue;
            }
        };
        if !streamed(kind) {
            total += held.bytes.len() as u64;
            if total > options.max_total_bytes {
                total -= held.bytes.len() as u64;
                skipped.push(Skipped {
                    path,
                    reason: format!(
                        "would take the bundle over its {}-byte total limit",
                        options.max_total_bytes
                    ),
                });
                continue;
            }
        }
        if matches!(held.body, Body::Memory) {
            let removed = checks::strip_nul(&mut held.bytes);
            if removed > 0 {
                notes.push(format!(
                    "{removed} NUL bytes taken out (a file written up to a crash holds such runs)"
                ));
            }
        } else if nul_in_head {
            notes.push(
                "NUL bytes in its first bytes: lines holding them may not be recognised".to_owned(),
            );
        }
        let kept = held.body.size(&held.bytes);
        if let Some(limit) = held.cut_by {
            notes.push(cut_note(kept, file_size, limit, streamed(kind)));
        } else if file_size == 0 {
            notes.push("empty file".to_owned());
        }
        notes.extend(checks::size_note(entry, file_size));
        if kind == SourceKind::Manifest
            && let Some(Err(why)) = manifest_read.as_ref().filter(|_| path == "manifest.json")
        {
            notes.push(format!(
                "not a pgmortem manifest ({why}): kinds come from paths and content"
            ));
        }
        sources.push(Source {
            path,
            kind,
            recognized_by,
            bytes: held.bytes,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
            body: held.body,
        });
    }
    if let Some(m) = &manifest {
        let present =
            |p: &str| sources.iter().any(|s| s.path == p) || skipped.iter().any(|s| s.path == p);
        let missing = checks::not_in_bundle(m, &present);
        skipped.extend(missing);
    }
    sources.sort_by(|a, b| a.path.cmp(&b.path));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Bundle {
        sources,
        skipped,
        manifest,
    }
}

/// A file's bytes as its source keeps them.
struct Held {
    bytes: Vec<u8>,
    body: Body,
    /// The limit that cut it, when one did.
    cut_by: Option<u64>,
}

/// Keeps a log where it is (in memory when small, else in its file), from a line start within
/// its last [`OpenOptions::max_log_bytes`] when that cap is asked for and the log is larger;
/// takes every other kind into memory, its end only when over [`OpenOptions::max_file_bytes`]
/// (or [`OpenOptions::memory_file_bytes`] for a file of no known kind).
fn hold(content: Content, kind: SourceKind, options: &OpenOptions) -> io::Result<Held> {
    let len = content.len();
    if !streamed(kind) {
        // A file of no known kind is only counted: it is not worth much memory.
        let limit = match kind {
            SourceKind::Unknown => options.max_file_bytes.min(options.memory_file_bytes),
            _ => options.max_file_bytes,
        };
        let (bytes, cut) = content.into_bytes(limit)?;
        return Ok(Held {
            bytes,
            body: Body::Memory,
            cut_by: cut.then_some(limit),
        });
    }
    let cap = options.max_log_bytes.filter(|cap| len > *cap);
    let from = match cap {
        Some(cap) => content.line_start_from(len - cap)?,
        None => 0,
    };
    let (mut bytes, mut body) = content.into_body();
    body.skip_to(&mut bytes, from);
    Ok(Held {
        bytes,
        body,
        cut_by: cap,
    })
}

/// The note of a file cut to its end.
fn cut_note(kept: u64, size: u64, limit: u64, log: bool) -> String {
    let why = if log {
        format!(
            "the {limit}-byte cap on logs asked for (max_log_bytes, --max-log-bytes) keeps the \
             end of a larger log"
        )
    } else {
        format!("files held in memory over the {limit}-byte limit keep their end")
    };
    format!(
        "only its last {} of {} were read: {why}, older lines are not analysed",
        human_bytes(kept),
        human_bytes(size)
    )
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    options: &OpenOptions,
    budget: &mut Budget,
    members: &mut Members,
    skipped: &mut Vec<Skipped>,
) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let rel = relative(root, &path);
        let Ok(file_type) = entry.file_type() else {
            skipped.push(Skipped {
                path: rel,
                reason: "cannot stat".into(),
            });
            continue;
        };
        if file_type.is_dir() {
            if depth + 1 >= options.max_depth {
                skipped.push(Skipped {
                    path: rel,
                    reason: "directory too deep".into(),
                });
            } else if let Err(e) = walk(root, &path, depth + 1, options, budget, members, skipped) {
                skipped.push(Skipped {
                    path: rel,
                    reason: e.to_string(),
                });
            }
        } else if file_type.is_file() {
            match read_loose_file(&path, rel.clone(), options, budget) {
                Ok(member) => members.push(member),
                Err(e) => skipped.push(Skipped {
                    path: rel,
                    reason: e.to_string(),
                }),
            }
        } else {
            let what = if file_type.is_symlink() {
                "symbolic link"
            } else {
                "not a regular file"
            };
            skipped.push(Skipped {
                path: rel,
                reason: format!("{what}, not followed"),
            });
        }
    }
    Ok(())
}

/// A loose file: decompressed once (into memory, or a temporary file when big) when it is gzip,
/// zstd, xz or bzip2, else as [`read_plain_file`].
fn read_loose_file(
    path: &Path,
    name: String,
    options: &OpenOptions,
    budget: &mut Budget,
) -> std::io::Result<Member> {
    let mut file = fs::File::open(path)?;
    let mut head = Vec::with_capacity(compressed::MAGIC_BYTES);
    (&mut file)
        .take(compressed::MAGIC_BYTES as u64)
        .read_to_end(&mut head)?;
    let Some(compression) = compressed::compression(&head) else {
        return read_plain_file(path, name, options, budget);
    };
    let stream = Cursor::new(head).chain(file);
    let mut spool = Spool::new(options, budget);
    let d = compressed::decompress(
        stream,
        &name,
        compression,
        &mut spool,
        options.max_decompressed_bytes,
    )?;
    Ok(Member {
        path: d.path,
        content: spool.finish(),
        note: Some(d.note),
    })
}

/// A plain file: read into memory when small, else left in place to be read when needed.
/// Opens `path` (following symlinks) for reading without waiting for a FIFO's writer.
fn open_nonblocking(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Whether the opened file is a pipe (a FIFO, process substitution, a piped stdin).
fn is_pipe(meta: &fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        meta.file_type().is_fifo()
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        false
    }
}

/// A file opened with O_NONBLOCK, read as if it were not: a pipe with no data yet is waited
/// for (polling every few milliseconds), one with no writer left is at its end.
struct PipeOrFile(fs::File);

impl Read for PipeOrFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.0.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                other => return other,
            }
        }
    }
}

/// A single file given as a pipe: held in memory up to what memory allows, its end kept when
/// it is longer (as a log over the limits is), with a note.
fn read_plain_stream(
    stream: impl Read,
    name: String,
    options: &OpenOptions,
    budget: &mut Budget,
) -> io::Result<Member> {
    let limit = options.memory_file_bytes.min(budget.memory_left);
    let mut bytes = Vec::new();
    let read = stream
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    let note = (read as u64 > limit).then(|| {
        bytes.truncate(limit as usize);
        format!(
            "read from a pipe: its first {} only (give a file to read it whole)",
            human_bytes(limit)
        )
    });
    budget.memory_left = budget.memory_left.saturating_sub(bytes.len() as u64);
    Ok(Member {
        path: name,
        content: Content::Memory(bytes),
        note,
    })
}

fn read_plain_file(
    path: &Path,
    name: String,
    options: &OpenOptions,
    budget: &mut Budget,
) -> std::io::Result<Member> {
    let len = fs::metadata(path)?.len();
    let content = if len <= options.memory_file_bytes && len <= budget.memory_left {
        // Read to the end: a file still growing may be longer than its metadata said.
        let mut bytes = Vec::with_capacity(len as usize);
        fs::File::open(path)?.read_to_end(&mut bytes)?;
        budget.memory_left = budget.memory_left.saturating_sub(bytes.len() as u64);
        Content::Memory(bytes)
    } else {
        Content::File {
            path: path.to_owned(),
            len,
        }
    };
    Ok(Member {
        path: name,
        content,
        note: None,
    })
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Kinds read line by line whose records may be long enough to fill a file's first bytes.
fn is_log(kind: SourceKind) -> bool {
    matches!(
        kind,
        SourceKind::PostgresLog
            | SourceKind::KernelLog
            | SourceKind::SystemLog
            | SourceKind::PerfScript
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_unreadable_and_unknown_files_instead_of_dropping_them() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("uptime"), "5196.43 9876.54\n").unwrap();
        fs::write(dir.path().join("notes.bin"), [0u8, 1, 2, 3]).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        let bundle = open(dir.path(), &OpenOptions::default()).unwrap();
        let kinds: Vec<_> = bundle
            .sources
            .iter()
            .map(|s| (s.path.as_str(), s.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                ("notes.bin", SourceKind::Unknown),
                ("uptime", SourceKind::Uptime)
            ]
        );
        assert_eq!(bundle.skipped.len(), 1);
        assert_eq!(bundle.skipped[0].path, "link");
        assert!(bundle.skipped[0].reason.contains("symbolic link"));
    }

    #[test]
    fn a_file_over_the_limit_keeps_its_end_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let log: Vec<u8> = (0..100)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        fs::write(dir.path().join("big.log"), &log).unwrap();
        let options = OpenOptions {
            max_file_bytes: 30,
            ..OpenOptions::default()
        };
        let bundle = open(dir.path(), &options).unwrap();
        let s = &bundle.sources[0];
        assert_eq!(s.bytes, b"line 97\nline 98\nline 99\n");
        let note = s.note.as_deref().unwrap();
        assert!(
            note.starts_with("only its last 24 bytes of 790 bytes were read"),
            "{note}"
        );
        assert!(note.contains("30-byte limit"), "{note}");
    }

    #[test]
    fn a_missing_path_is_an_error_naming_it() {
        let err = open(Path::new("/nonexistent/bundle"), &OpenOptions::default()).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/bundle"));
    }
}
