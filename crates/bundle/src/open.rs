//! Opening a bundle: a directory of loose files, an archive (tar: plain, `.tar.gz`, `.tar.zst`,
//! `.tar.xz`, `.tar.bz2`, read as a stream; zip), one file (compressed or not), or several of
//! these given together ([`open_paths`]); archives inside are opened too. Then each file's
//! kind is recognised ([`classify`]).

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::archive::Member;
use crate::body::{Body, Content, SourceReader};
use crate::checks;
use crate::gather::{Gather, Place, join};
use crate::human::human_bytes;
use crate::kind::{SourceKind, kind_from_path, recognize};
use crate::layout::{self, LayoutFound};
use crate::manifest::{Manifest, ServerLogRole};

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
    /// Bytes decompressed for the whole bundle (every archive and compressed file, nested ones
    /// included): a decompression bomb stops here with a clear reason. Default 64 GiB.
    pub max_decompressed_bytes: u64,
    /// Entries read from one archive. Default 100 000.
    pub max_entries: usize,
    /// Archives opened inside one another (a zip holding a `.tar.gz` holding a `.tar.xz` is 3
    /// deep; the bundle itself, when an archive, counts): one deeper is listed as skipped.
    /// Default 4.
    pub max_nesting: usize,
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
            max_nesting: 4,
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
    /// What the file is to the server when the collector's manifest lists it among the
    /// server's log files (`server_logs`): its current file, an earlier one, the postmaster's
    /// standard error, its syslog lines; `None` for every other file, and for every file of a
    /// bundle whose manifest lists none (older collectors, other layouts).
    pub server_log: Option<ServerLogOf>,
    body: Body,
}

/// One of the server's log files, as the manifest that lists it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerLogOf {
    /// What it is to the server.
    pub role: ServerLogRole,
    /// The root the listing manifest sits at (empty for the bundle's own; an archive's path
    /// inside the bundle for one nested in it): the files of one server's log share it.
    pub root: String,
    /// Its modification time on the host (RFC 3339 UTC), when the manifest gives it.
    pub modified: Option<String>,
    /// The file it was copied from on the host (or the command, for a journal).
    pub source: String,
    /// How the collector found it (`current_logfiles`, `/proc/PID/fd/2`, `--log`, …).
    pub found_from: String,
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
    /// It is an archive or compressed file that could not be read, at all or past some
    /// point: what it holds is missing from the bundle, and a report says so first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive: Option<ArchiveTrouble>,
}

/// What went wrong with an archive or compressed file of the bundle ([`Skipped::archive`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ArchiveTrouble {
    /// Not opened at all: a format pgmortem does not read (7z, RAR, lz4, lzip, `.Z`),
    /// corrupt from its start, every file encrypted, or nested too deep.
    NotOpened,
    /// Read up to a point (cut short, corrupt further on, over a limit): the files after it
    /// are missing.
    NotReadWhole,
}

impl Skipped {
    /// A file not read, for `reason`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        Skipped {
            path: path.into(),
            reason: reason.into(),
            archive: None,
        }
    }
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
    /// The collector's manifest, when the bundle has a readable one: the one at its top, else
    /// the first of an archive inside it (a directory holding the collector's archive).
    pub manifest: Option<Manifest>,
    /// The known collector's layout the bundle's paths show (pgmortem's collector, a
    /// sosreport), with what a sosreport's `sos clean` obfuscated; `None` for files from
    /// anywhere.
    pub layout: Option<LayoutFound>,
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

/// Opens `path`: a directory (every regular file below it, symlinks not followed), an archive
/// (tar, plain or compressed with gzip, zstd, xz or bzip2, read once as a stream: never
/// extracted; zip), or a single file (compressed with one of those or not), recognised by
/// its first bytes. Archives found inside are opened in turn (their files listed under the
/// archive's path), down to [`OpenOptions::max_nesting`]. Per-file problems do not fail the
/// bundle; they are listed in [`Bundle::skipped`]. Each file's kind comes from the collector's
/// `manifest.json` when it names one, else from the path (relative to the archive it came
/// out of), else from the content. A pipe (`/dev/stdin`) is read whole, in a temporary file
/// past what memory allows.
///
/// # Errors
/// When `path` cannot be read, or it is an archive or compressed file that cannot be opened
/// (7z, RAR, lz4, lzip, `.Z`, corrupt, encrypted): the message names the format and what to
/// do.
pub fn open(path: &Path, options: &OpenOptions) -> Result<Bundle, BundleError> {
    let mut gather = Gather::new(options);
    let place = Place {
        path: input_name(path),
        root: String::new(),
        nesting: 0,
        top: true,
    };
    read_input(path, &place, &mut gather)?;
    Ok(classify(gather.members, gather.skipped, options))
}

/// Opens several inputs as one bundle: each file, archive or directory in `paths` is read as
/// [`open`] reads it, under its own name (a directory's files and an archive's below it, their
/// kinds recognised relative to it). Two inputs with the same name are told apart by their
/// path as given (`a/postgresql.log`, `b/postgresql.log`), and their files' notes say so. One
/// path is exactly [`open`].
///
/// # Errors
/// As [`open`], for the first input that cannot be read.
pub fn open_paths(paths: &[PathBuf], options: &OpenOptions) -> Result<Bundle, BundleError> {
    if let [path] = paths {
        return open(path, options);
    }
    let mut gather = Gather::new(options);
    for (path, (name, renamed)) in paths.iter().zip(input_names(paths)) {
        let before = gather.members.len();
        let place = Place {
            root: name.rsplit_once('/').map_or("", |(dir, _)| dir).to_owned(),
            path: name.clone(),
            nesting: 0,
            top: false,
        };
        read_input(path, &place, &mut gather)?;
        if renamed {
            let note = format!(
                "given as {}: another input has the same name, so this one is under {name:?}",
                path.display()
            );
            for m in &mut gather.members[before..] {
                m.note = Some(match m.note.take() {
                    Some(n) => format!("{note}; {n}"),
                    None => note.clone(),
                });
            }
        }
    }
    Ok(classify(gather.members, gather.skipped, options))
}

/// The name an input goes under: its file name (`stdin` for `/dev/stdin`).
fn input_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .or_else(|| {
            fs::canonicalize(path)
                .ok()?
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| path.display().to_string())
}

/// Each input's name in a bundle of several, and whether it had to be told apart from
/// another's: by its path as given (without `/`, `.` and `..`), then by a number.
fn input_names(paths: &[PathBuf]) -> Vec<(String, bool)> {
    let names: Vec<String> = paths.iter().map(|p| input_name(p)).collect();
    let mut taken = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(paths.len());
    for (i, (path, name)) in paths.iter().zip(&names).enumerate() {
        let clash = names.iter().enumerate().any(|(j, n)| j != i && n == name);
        if !clash && taken.insert(name.clone()) {
            out.push((name.clone(), false));
            continue;
        }
        let long: Vec<String> = path
            .components()
            .filter_map(|c| match c {
                std::path::Component::Normal(p) => Some(p.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let mut candidate = if long.is_empty() {
            name.clone()
        } else {
            long.join("/")
        };
        let mut n = 2;
        while !taken.insert(candidate.clone()) {
            candidate = format!("{name}~{n}");
            n += 1;
        }
        out.push((candidate, true));
    }
    out
}

/// Reads one input (the bundle, or one of several) at `place` into `gather`.
fn read_input(path: &Path, place: &Place, gather: &mut Gather) -> Result<(), BundleError> {
    let io_err = |source| BundleError::Io {
        path: path.to_owned(),
        source,
    };
    // Opened once, without waiting (a FIFO with no writer), and judged by what was opened:
    // a symlink to /dev/zero or to a FIFO is refused or read like its target, never hangs.
    let file = open_nonblocking(path).map_err(io_err)?;
    let meta = file.metadata().map_err(io_err)?;
    if meta.is_dir() {
        drop(file);
        fs::read_dir(path).map_err(io_err)?;
        let inside = place.inside();
        gather.walk(path, &inside, &inside, 0);
        return Ok(());
    }
    if !meta.is_file() && !is_pipe(&meta) {
        return Err(BundleError::NotAFileOrDirectory {
            path: path.to_owned(),
        });
    }
    // Process substitution, /dev/stdin: a pipe read as it comes, whole.
    let disk = meta.is_file().then_some(path);
    let mut file = PipeOrFile(file);
    let before = gather.members.len();
    gather
        .file(&mut file, place, disk)
        .map_err(|reason| BundleError::Archive {
            path: path.to_owned(),
            reason,
        })?;
    if is_pipe(&meta) {
        // A FIFO nobody has open for writing reads as empty at once: said, not waited for.
        for m in gather.members[before..]
            .iter_mut()
            .filter(|m| m.content.len() == 0)
        {
            m.note = Some(
                "a pipe that gave nothing (no writer had it open, or the writer wrote nothing)"
                    .to_owned(),
            );
        }
    }
    Ok(())
}

/// The kinds read as streams, never held whole unless small: the logs.
fn streamed(kind: SourceKind) -> bool {
    matches!(
        kind,
        SourceKind::PostgresLog
            | SourceKind::KernelLog
            | SourceKind::SystemLog
            | SourceKind::PgbouncerLog
            | SourceKind::PatroniLog
            | SourceKind::PgbackrestLog
    )
}

/// Decides each file's kind (manifest, then path, then content; content overrules a name it
/// clearly contradicts), notes what is odd about each file, cuts what is over a limit, lists
/// the manifest's entries the bundle lacks, and sorts everything.
fn classify(members: Vec<Member>, mut skipped: Vec<Skipped>, options: &OpenOptions) -> Bundle {
    // One manifest per root: the bundle's own, and one per archive inside it.
    let mut manifests: BTreeMap<String, Result<Manifest, String>> = BTreeMap::new();
    for m in members.iter().filter(|m| m.relative() == "manifest.json") {
        let read = match &m.content {
            Content::Memory(bytes) => Manifest::read(bytes),
            _ => Err(format!(
                "{} bytes, more than a manifest holds",
                m.content.len()
            )),
        };
        manifests.entry(m.root.clone()).or_insert(read);
    }
    let manifest = manifests.values().find_map(|r| r.as_ref().ok()).cloned();
    let mut found = layout::detect(
        members
            .iter()
            .map(|m| m.path.as_str())
            .chain(skipped.iter().map(|s| s.path.as_str())),
    );
    if let Some(f) = found.as_mut() {
        f.read_obfuscation(&|path| {
            members
                .iter()
                .find(|m| m.path == path)
                .and_then(|m| match &m.content {
                    Content::Memory(bytes) => Some(bytes.clone()),
                    _ => None,
                })
        });
    }
    let mut renamed = Vec::new();
    let mut total = 0u64;
    let mut sources = Vec::with_capacity(members.len());
    for member in members {
        let rel = member.relative().to_owned();
        let Member {
            path,
            root,
            content,
            note: read_note,
        } = member;
        let manifest_read = manifests.get(&root);
        let root_manifest = manifest_read.and_then(|r| r.as_ref().ok());
        let file_size = content.len();
        let mut head = match content.head(options.sniff_bytes) {
            Ok(h) => h,
            Err(e) => {
                skipped.push(Skipped::new(path, format!("cannot read: {e}")));
                continue;
            }
        };
        let entry = root_manifest.and_then(|m| m.file(&rel));
        let mut notes: Vec<String> = read_note.into_iter().collect();
        // A manifest's `reference` (kept for a person) yields to a kind the layout's table
        // reads: collectors before 0.2 declared identity/uname.txt and os-release so.
        let table_reads = |path: &str| {
            found
                .as_ref()
                .and_then(|f| f.lookup(path))
                .is_some_and(|(_, k)| k != SourceKind::Reference)
        };
        let declared = entry
            .and_then(|f| SourceKind::from_name(&f.kind))
            .filter(|k| *k != SourceKind::Unknown)
            .filter(|k| *k != SourceKind::Reference || !table_reads(&path))
            .map(|k| (k, RecognizedBy::Manifest))
            .or_else(|| {
                let f = found.as_ref()?;
                match f.lookup(&path)? {
                    // A name `sos clean` rewrote (`proc/host0stat`): the table names it only
                    // with a catch-all, its content says what it is.
                    (pattern, kind) if f.renamed(&path, pattern, kind) => {
                        renamed.push(path.clone());
                        notes.push(format!(
                            "its name was rewritten by sos clean (the host name became {}): \
                             read by its content, not its name",
                            f.obfuscation.as_ref().map_or("", |o| o.host.as_str())
                        ));
                        None
                    }
                    (_, kind) => Some((kind, RecognizedBy::Path)),
                }
            })
            .or_else(|| kind_from_path(&rel).map(|k| (k, RecognizedBy::Path)));
        let binary = checks::binary_note(&head);
        // A text file with NUL runs (cut by a crash) is recognised without them.
        let nul_in_head = binary.is_none() && checks::strip_nul(&mut head) > 0;
        // Binary data is no kind pgmortem reads, whatever its name says.
        let (kind, recognized_by) = if let Some(binary) = binary {
            notes.push(binary);
            match declared {
                // A file kept for a person (a sosreport's ACPI tables) may well be binary.
                Some((SourceKind::Reference, by)) => (SourceKind::Reference, by),
                Some((kind, by)) => {
                    notes.push(format!("{} says {}", by.describe(), kind.as_str()));
                    (SourceKind::Unknown, RecognizedBy::Content)
                }
                None => (SourceKind::Unknown, RecognizedBy::Content),
            }
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
                skipped.push(Skipped::new(path, format!("cannot read: {e}")));
                continue;
            }
        };
        if !streamed(kind) {
            total += held.bytes.len() as u64;
            if total > options.max_total_bytes {
                total -= held.bytes.len() as u64;
                skipped.push(Skipped::new(
                    path,
                    format!(
                        "would take the bundle over its {}-byte total limit",
                        options.max_total_bytes
                    ),
                ));
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
        } else if file_size == 0 && kind != SourceKind::SysctlValue {
            // (A /proc/sys file of a write-only setting, `vm.drop_caches`, reads empty.)
            notes.push("empty file".to_owned());
        }
        notes.extend(checks::size_note(entry, file_size));
        if kind == SourceKind::Manifest
            && let Some(Err(why)) = manifest_read.filter(|_| rel == "manifest.json")
        {
            notes.push(format!(
                "not a pgmortem manifest ({why}): kinds come from paths and content"
            ));
        }
        let server_log = root_manifest
            .and_then(|m| m.server_log(&rel))
            .map(|l| ServerLogOf {
                role: l.role,
                root: root.clone(),
                modified: l.modified.clone(),
                source: l.source.clone(),
                found_from: l.found_from.clone(),
            });
        sources.push(Source {
            path,
            kind,
            recognized_by,
            bytes: held.bytes,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
            server_log,
            body: held.body,
        });
    }
    for (root, m) in manifests
        .iter()
        .filter_map(|(root, m)| Some((root, m.as_ref().ok()?)))
    {
        let present = |p: &str| {
            let p = join(root, p);
            sources.iter().any(|s| s.path == p) || skipped.iter().any(|s| s.path == p)
        };
        let missing: Vec<Skipped> = checks::not_in_bundle(m, &present)
            .into_iter()
            .map(|s| Skipped {
                path: join(root, &s.path),
                ..s
            })
            .collect();
        skipped.extend(missing);
    }
    sources.sort_by(|a, b| a.path.cmp(&b.path));
    skipped.sort_by(|a, b| a.path.cmp(&b.path));
    if let Some(o) = found.as_mut().and_then(|f| f.obfuscation.as_mut()) {
        renamed.sort();
        o.renamed = renamed;
    }
    Bundle {
        sources,
        skipped,
        manifest,
        layout: found,
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

/// Kinds read line by line whose records may be long enough to fill a file's first bytes.
fn is_log(kind: SourceKind) -> bool {
    matches!(
        kind,
        SourceKind::PostgresLog
            | SourceKind::KernelLog
            | SourceKind::SystemLog
            | SourceKind::PgbouncerLog
            | SourceKind::PatroniLog
            | SourceKind::PgbackrestLog
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
