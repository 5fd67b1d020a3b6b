//! Opening a bundle: a directory of loose files, or one file.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::kind::{SourceKind, recognize};

/// Limits applied while reading a bundle.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// Files larger than this are not read (listed as skipped). Default 2 GiB.
    pub max_file_bytes: u64,
    /// How many bytes of a file are used to recognise its kind. Default 16 KiB.
    pub sniff_bytes: usize,
    /// Directory depth explored below the bundle root. Default 8.
    pub max_depth: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            max_file_bytes: 2 << 30,
            sniff_bytes: 16 * 1024,
            max_depth: 8,
        }
    }
}

/// One readable file of a bundle, its kind recognised.
#[derive(Debug, Clone)]
pub struct Source {
    /// Path relative to the bundle root (or the file name for a single-file bundle), with `/`
    /// separators, as reports show it.
    pub path: String,
    /// What the file holds.
    pub kind: SourceKind,
    /// The file's bytes.
    pub bytes: Vec<u8>,
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
    /// Files that could not be read, sorted by path.
    pub skipped: Vec<Skipped>,
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
}

/// Opens `path`: a directory (every regular file below it, symlinks not followed) or a single
/// file. Per-file read errors do not fail the bundle; they are listed in [`Bundle::skipped`].
pub fn open(path: &Path, options: &OpenOptions) -> Result<Bundle, BundleError> {
    let meta = fs::symlink_metadata(path).map_err(|source| BundleError::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut bundle = Bundle::default();
    if meta.is_dir() {
        walk(path, path, 0, options, &mut bundle).map_err(|source| BundleError::Io {
            path: path.to_owned(),
            source,
        })?;
    } else if meta.is_file() || meta.file_type().is_symlink() {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        read_one(path, name, options, &mut bundle);
        if let [skipped] = bundle.skipped.as_slice() {
            if bundle.sources.is_empty() {
                return Err(BundleError::Io {
                    path: path.to_owned(),
                    source: std::io::Error::other(skipped.reason.clone()),
                });
            }
        }
    } else {
        return Err(BundleError::NotAFileOrDirectory {
            path: path.to_owned(),
        });
    }
    bundle.sources.sort_by(|a, b| a.path.cmp(&b.path));
    bundle.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(bundle)
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    options: &OpenOptions,
    bundle: &mut Bundle,
) -> std::io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let rel = relative(root, &path);
        let Ok(file_type) = entry.file_type() else {
            bundle.skipped.push(Skipped {
                path: rel,
                reason: "cannot stat".into(),
            });
            continue;
        };
        if file_type.is_dir() {
            if depth + 1 >= options.max_depth {
                bundle.skipped.push(Skipped {
                    path: rel,
                    reason: "directory too deep".into(),
                });
            } else if let Err(e) = walk(root, &path, depth + 1, options, bundle) {
                bundle.skipped.push(Skipped {
                    path: rel,
                    reason: e.to_string(),
                });
            }
        } else if file_type.is_file() {
            read_one(&path, rel, options, bundle);
        } else {
            let what = if file_type.is_symlink() {
                "symbolic link"
            } else {
                "not a regular file"
            };
            bundle.skipped.push(Skipped {
                path: rel,
                reason: format!("{what}, not followed"),
            });
        }
    }
    Ok(())
}

fn read_one(path: &Path, rel: String, options: &OpenOptions, bundle: &mut Bundle) {
    match read_limited(path, options.max_file_bytes) {
        Ok(bytes) => {
            let head = &bytes[..bytes.len().min(options.sniff_bytes)];
            let kind = recognize(head);
            bundle.sources.push(Source {
                path: rel,
                kind,
                bytes,
            });
        }
        Err(e) => bundle.skipped.push(Skipped {
            path: rel,
            reason: e.to_string(),
        }),
    }
}

fn read_limited(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    let file = fs::File::open(path)?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::other(format!(
            "larger than the {max}-byte limit"
        )));
    }
    Ok(bytes)
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
    fn a_file_over_the_limit_is_skipped_with_its_reason() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("big"), vec![b'x'; 100]).unwrap();
        let options = OpenOptions {
            max_file_bytes: 10,
            ..OpenOptions::default()
        };
        let bundle = open(dir.path(), &options).unwrap();
        assert!(bundle.sources.is_empty());
        assert!(bundle.skipped[0].reason.contains("10-byte limit"));
    }

    #[test]
    fn a_missing_path_is_an_error_naming_it() {
        let err = open(Path::new("/nonexistent/bundle"), &OpenOptions::default()).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/bundle"));
    }
}
