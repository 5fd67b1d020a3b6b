//! Opening a bundle: a directory of loose files, a tar archive (plain, `.tar.gz`, `.tar.zst`)
//! read as a stream, or one file (compressed or not).

use std::fs;
use std::io::{Cursor, Read};
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::archive::{Capped, Container, Member, container, read_tar};
use crate::checks;
use crate::compressed;
use crate::kind::{SourceKind, kind_from_path, recognize};
use crate::manifest::Manifest;
use crate::tail::{human_bytes, read_file_tail, read_tail};

/// Limits applied while reading a bundle. Memory use is bounded by `max_total_bytes` (and a
/// single file by `max_file_bytes`), whatever the size of the bundle.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Files larger than this keep only their last `max_file_bytes` bytes, from a line start
    /// (the newest lines of a log), with a note saying so. Default 20 MiB, what the collector
    /// keeps of the server log: parsed, a log takes about 7 times its size in memory.
    pub max_file_bytes: u64,
    /// Bytes kept in memory for the whole bundle: files past it are listed as skipped.
    /// Default 512 MiB.
    pub max_total_bytes: u64,
    /// Bytes decompressed from one archive: a decompression bomb stops here with a clear
    /// reason (what it costs is time, not memory). Default 64 GiB.
    pub max_decompressed_bytes: u64,
    /// Entries read from one archive. Default 100 000.
    pub max_entries: usize,
    /// How many bytes of a file are used to recognise its kind. Default 16 KiB.
    pub sniff_bytes: usize,
    /// Directory depth explored below the bundle root. Default 8.
    pub max_depth: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            max_file_bytes: 20 << 20,
            max_total_bytes: 512 << 20,
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
    /// The file's bytes.
    pub bytes: Vec<u8>,
    /// What a reader should know before trusting the file: empty, binary data, a kind the
    /// content contradicted (`manifest.json says meminfo, but the content reads as
    /// kernel_log`), a size that disagrees with the manifest, a manifest that is not one.
    pub note: Option<String>,
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
/// archive (plain, gzip or zstd, recognised by its magic bytes, read as a stream: never
/// extracted), or a single file (gzip- or zstd-compressed or not). Per-file problems do not
/// fail the bundle; they are listed in [`Bundle::skipped`]. Each file's kind comes from the
/// collector's `manifest.json` when it names one, else from the path, else from the content.
pub fn open(path: &Path, options: &OpenOptions) -> Result<Bundle, BundleError> {
    let io_err = |source| BundleError::Io {
        path: path.to_owned(),
        source,
    };
    let meta = fs::symlink_metadata(path).map_err(io_err)?;
    let mut members = Vec::new();
    let mut skipped = Vec::new();
    if meta.is_dir() {
        walk(path, path, 0, options, &mut members, &mut skipped).map_err(io_err)?;
    } else if meta.is_file() || meta.file_type().is_symlink() {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let mut file = fs::File::open(path).map_err(io_err)?;
        let mut head = Vec::with_capacity(512);
        (&mut file)
            .take(512)
            .read_to_end(&mut head)
            .map_err(io_err)?;
        let stream = Cursor::new(head.clone()).chain(file);
        let archived = match container(&head) {
            Container::Gzip => Some(read_stream(
                flate2::read::MultiGzDecoder::new(stream),
                &name,
                Some("gzip"),
                options,
            )),
            Container::Zstd => match zstd::stream::read::Decoder::new(stream) {
                Ok(d) => Some(read_stream(d, &name, Some("zstd"), options)),
                Err(e) => return Err(io_err(e)),
            },
            Container::Tar => Some(read_stream(stream, &name, None, options)),
            Container::Plain => None,
        };
        match archived {
            Some(Ok((m, s))) => {
                members = m;
                skipped = s;
            }
            Some(Err(reason)) => {
                return Err(BundleError::Archive {
                    path: path.to_owned(),
                    reason,
                });
            }
            None => match read_file_tail(path, options.max_file_bytes) {
                Ok(kept) => members.push(Member {
                    path: name,
                    bytes: kept.bytes,
                    total: kept.total,
                    note: None,
                }),
                Err(e) => return Err(io_err(e)),
            },
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
    compression: Option<&str>,
    options: &OpenOptions,
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
        let kept = read_tail(stream, options.max_file_bytes)
            .map_err(|e| format!("cannot decompress: {e}"))?;
        return Ok((
            vec![Member {
                path: inner,
                bytes: kept.bytes,
                total: kept.total,
                note: None,
            }],
            Vec::new(),
        ));
    }
    let contents = read_tar(stream, options);
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

/// Decides each file's kind (manifest, then path, then content; content overrules a name it
/// clearly contradicts), notes what is odd about each file, lists the manifest's entries the
/// bundle lacks, and sorts everything.
fn classify(members: Members, mut skipped: Vec<Skipped>, options: &OpenOptions) -> Bundle {
    let manifest_read = members
        .iter()
        .find(|m| m.path == "manifest.json")
        .map(|m| Manifest::read(&m.bytes));
    let manifest = manifest_read
        .as_ref()
        .and_then(|r| r.as_ref().ok())
        .cloned();
    let mut total = 0u64;
    let mut sources = Vec::with_capacity(members.len());
    for Member {
        path,
        bytes,
        total: file_size,
        note: read_note,
    } in members
    {
        total += bytes.len() as u64;
        if total > options.max_total_bytes {
            skipped.push(Skipped {
                path,
                reason: format!(
                    "would take the bundle over its {}-byte total limit",
                    options.max_total_bytes
                ),
            });
            continue;
        }
        let head = &bytes[..bytes.len().min(options.sniff_bytes)];
        let entry = manifest.as_ref().and_then(|m| m.file(&path));
        let declared = entry
            .and_then(|f| SourceKind::from_name(&f.kind))
            .filter(|k| *k != SourceKind::Unknown)
            .map(|k| (k, RecognizedBy::Manifest))
            .or_else(|| kind_from_path(&path).map(|k| (k, RecognizedBy::Path)));
        let mut notes: Vec<String> = read_note.into_iter().collect();
        // Binary data is no kind pgmortem reads, whatever its name says.
        let (kind, recognized_by) = if let Some(binary) = checks::binary_note(head) {
            notes.push(binary);
            if let Some((kind, by)) = declared {
                notes.push(format!("{} says {}", by.describe(), kind.as_str()));
            }
            (SourceKind::Unknown, RecognizedBy::Content)
        } else if let Some((kind, by)) = declared {
            let (kind, by, note) = checks::settle_kind(kind, by, head);
            notes.extend(note);
            (kind, by)
        } else {
            (recognize(head), RecognizedBy::Content)
        };
        if (bytes.len() as u64) < file_size {
            notes.push(format!(
                "only its last {} of {} were read: files over the {}-byte limit keep their \
                 end, older lines are not analysed",
                human_bytes(bytes.len() as u64),
                human_bytes(file_size),
                options.max_file_bytes
            ));
        } else if bytes.is_empty() {
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
            bytes,
            note: (!notes.is_empty()).then(|| notes.join("; ")),
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

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    options: &OpenOptions,
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
            } else if let Err(e) = walk(root, &path, depth + 1, options, members, skipped) {
                skipped.push(Skipped {
                    path: rel,
                    reason: e.to_string(),
                });
            }
        } else if file_type.is_file() {
            match read_loose_file(&path, rel.clone(), options) {
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

/// A loose file: its end when it is plain, its decompressed end when it is gzip or zstd.
fn read_loose_file(path: &Path, name: String, options: &OpenOptions) -> std::io::Result<Member> {
    let mut file = fs::File::open(path)?;
    let mut head = Vec::with_capacity(4);
    (&mut file).take(4).read_to_end(&mut head)?;
    let Some(compression) = compressed::compression(&head) else {
        let kept = read_file_tail(path, options.max_file_bytes)?;
        return Ok(Member {
            path: name,
            bytes: kept.bytes,
            total: kept.total,
            note: None,
        });
    };
    let stream = Cursor::new(head).chain(file);
    let d = compressed::decompress(
        stream,
        &name,
        compression,
        options.max_file_bytes,
        options.max_decompressed_bytes,
    )?;
    Ok(Member {
        path: d.path,
        bytes: d.kept.bytes,
        total: d.kept.total,
        note: Some(d.note),
    })
}

fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
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
