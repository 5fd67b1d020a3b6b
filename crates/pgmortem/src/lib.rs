//! pgmortem: an offline analyzer for PostgreSQL support bundles.
//!
//! ```no_run
//! let report = pgmortem::analyze("fixtures/incidents/pg15-memcg-oom-sort".as_ref(), &Default::default())?;
//! for incident in &report.incidents {
//!     println!("{} at {:?}: outage {:?} s", incident.kind, incident.started_at, incident.outage_seconds);
//! }
//! # Ok::<(), pgmortem::Error>(())
//! ```
//!
//! [`analyze`] opens a bundle (a directory of loose files, an archive or one file, archives
//! inside opened too; kinds recognised by manifest, path or content; [`analyze_paths`] for
//! several files given together), reads every source (every log whole, as a
//! stream, in bounded memory), puts events on one clock and returns the [`Report`]. The
//! parsers are re-exported for callers that want records rather than a diagnosis.

use std::path::{Path, PathBuf};

pub mod check;
pub mod diff;

pub use pgmortem_bundle as bundle;
pub use pgmortem_diagnose::{self as diagnose, DiagnoseOptions, Report};
pub use pgmortem_parse as parse;
pub use pgmortem_redact as redact;
pub use pgmortem_render as render;

/// Errors of [`analyze`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bundle could not be opened.
    #[error(transparent)]
    Bundle(#[from] pgmortem_bundle::BundleError),
    /// The bundle could not be diagnosed with the options given.
    #[error(transparent)]
    Diagnose(#[from] pgmortem_diagnose::DiagnoseError),
    /// No file of the bundle is of a kind pgmortem reads (an empty file or directory, a FIFO
    /// nobody writes to, `/etc/passwd`, an archive of unrelated files): there is nothing to
    /// diagnose, and a report would read like a clean bill of health. The message says what the
    /// input held and what pgmortem looks for ([`pgmortem_bundle::WHAT_IS_READ`]).
    #[error(
        "nothing pgmortem can read in {input}: {found}\n  pgmortem reads {}",
        pgmortem_bundle::WHAT_IS_READ
    )]
    NothingToRead {
        /// The input as given: its path, or `3 inputs (a, b, c)` for several.
        input: String,
        /// What it held instead: `no file`, `1 empty file`, `2 files of no kind pgmortem
        /// knows (a.txt, b.csv)`, the files it could not read.
        found: String,
    },
}

/// Analyzes the bundle at `path` (a directory, an archive or a single file). Logs are read
/// whole unless [`DiagnoseOptions::max_log_bytes`] asks for a cap.
pub fn analyze(path: &Path, options: &DiagnoseOptions) -> Result<Report, Error> {
    analyze_with_progress(path, options, &mut |_| {})
}

/// A step of [`analyze_with_progress`], for a caller that shows progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// The bundle is being opened: a directory listed, an archive read once and its large
    /// members spooled, each file's kind recognised.
    Opening,
    /// The bundle is open; its sources (every log whole, as a stream) are being read and the
    /// diagnosis made.
    Diagnosing {
        /// Files in the bundle.
        sources: usize,
        /// Their total size in bytes.
        bytes: u64,
    },
}

/// Analyzes several files, archives or directories given together (the attachments of one
/// ticket: `dmesg.txt` and `postgresql.log`) as one bundle, each under its own name (see
/// [`pgmortem_bundle::open_paths`]). One path is [`analyze`].
pub fn analyze_paths(paths: &[PathBuf], options: &DiagnoseOptions) -> Result<Report, Error> {
    analyze_paths_with_progress(paths, options, &mut |_| {})
}

/// [`analyze`], calling `step` as each step begins (on the calling thread, once per step).
/// The report is the same.
pub fn analyze_with_progress(
    path: &Path,
    options: &DiagnoseOptions,
    step: &mut dyn FnMut(Step),
) -> Result<Report, Error> {
    analyze_paths_with_progress(&[path.to_owned()], options, step)
}

/// [`analyze_paths`], calling `step` as each step begins (on the calling thread, once per
/// step). The report is the same.
pub fn analyze_paths_with_progress(
    paths: &[PathBuf],
    options: &DiagnoseOptions,
    step: &mut dyn FnMut(Step),
) -> Result<Report, Error> {
    let open = pgmortem_bundle::OpenOptions {
        max_log_bytes: options.max_log_bytes,
        ..pgmortem_bundle::OpenOptions::within(options.memory_limit / 2)
    };
    step(Step::Opening);
    let bundle = pgmortem_bundle::open_paths(paths, &open)?;
    if !bundle.sources.iter().any(|s| s.kind.is_read()) {
        return Err(Error::NothingToRead {
            input: input_name(paths),
            found: what_was_found(&bundle),
        });
    }
    step(Step::Diagnosing {
        sources: bundle.sources.len(),
        bytes: bundle.sources.iter().map(|s| s.size()).sum(),
    });
    Ok(pgmortem_diagnose::diagnose(&bundle, options)?)
}

/// The inputs as a person gave them: one path, or `3 inputs (a, b, c)`.
fn input_name(paths: &[PathBuf]) -> String {
    match paths {
        [one] if one == Path::new("/dev/stdin") => "standard input".to_owned(),
        [one] => one.display().to_string(),
        many => format!(
            "{} inputs ({})",
            many.len(),
            many.iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// What a bundle with nothing to read held instead: `no file`, or its empty files, its files of
/// no known kind (the first few named), the files pgmortem lists but does not read, and those it
/// could not read (the first with its reason).
fn what_was_found(bundle: &pgmortem_bundle::Bundle) -> String {
    fn files(n: usize) -> String {
        format!("{n} file{}", if n == 1 { "" } else { "s" })
    }
    fn named<'a>(paths: impl Iterator<Item = &'a str>, n: usize) -> String {
        let shown: Vec<&str> = paths.take(3).collect();
        let more = if n > shown.len() { ", …" } else { "" };
        format!("{}{more}", shown.join(", "))
    }
    if bundle.sources.is_empty() && bundle.skipped.is_empty() {
        return "no file in it".to_owned();
    }
    let mut parts = Vec::new();
    let empty = bundle.sources.iter().filter(|s| s.size() == 0);
    // A FIFO nobody writes to reads as empty at once; the bundle notes it.
    let (pipes, files_empty): (Vec<_>, Vec<_>) = empty.partition(|s| {
        s.note
            .as_deref()
            .is_some_and(|n| n.contains("a pipe that gave nothing"))
    });
    if !files_empty.is_empty() {
        parts.push(format!(
            "{} empty file{}",
            files_empty.len(),
            if files_empty.len() == 1 { "" } else { "s" }
        ));
    }
    if !pipes.is_empty() {
        parts.push(format!(
            "{} that gave nothing (no writer had {}, or the writer wrote nothing)",
            if pipes.len() == 1 {
                "a pipe".to_owned()
            } else {
                format!("{} pipes", pipes.len())
            },
            if pipes.len() == 1 {
                "it open"
            } else {
                "them open"
            }
        ));
    }
    let full = || bundle.sources.iter().filter(|s| s.size() > 0);
    let unknown: Vec<&str> = full()
        .filter(|s| s.kind == pgmortem_bundle::SourceKind::Unknown)
        .map(|s| s.path.as_str())
        .collect();
    if !unknown.is_empty() {
        parts.push(format!(
            "{} of no kind pgmortem knows ({})",
            files(unknown.len()),
            named(unknown.iter().copied(), unknown.len())
        ));
    }
    let mut listed: Vec<&str> = full()
        .filter(|s| s.kind != pgmortem_bundle::SourceKind::Unknown)
        .map(|s| s.kind.as_str())
        .collect();
    let listed_files = listed.len();
    listed.sort_unstable();
    listed.dedup();
    if listed_files > 0 {
        parts.push(format!(
            "{} it lists but reads nothing from ({})",
            files(listed_files),
            listed.join(", ")
        ));
    }
    if let Some(first) = bundle.skipped.first() {
        parts.push(format!(
            "{} it could not read ({}: {})",
            files(bundle.skipped.len()),
            first.path,
            first.reason
        ));
    }
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bundle_with_nothing_to_read_is_a_typed_error() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "call the vendor\n").unwrap();
        std::fs::write(dir.path().join("empty"), "").unwrap();
        std::fs::write(dir.path().join("manifest.json"), "{}").unwrap();
        let err = analyze(dir.path(), &DiagnoseOptions::default()).unwrap_err();
        let Error::NothingToRead { input, found } = &err else {
            panic!("{err:?}");
        };
        assert_eq!(input, &dir.path().display().to_string());
        assert_eq!(
            found,
            "1 empty file; 1 file of no kind pgmortem knows (notes.txt); 1 file it lists but \
             reads nothing from (manifest)"
        );
        assert!(err.to_string().contains(pgmortem_bundle::WHAT_IS_READ));
    }

    #[test]
    fn files_of_kinds_read_by_nothing_are_said_as_such() {
        let dir = tempfile::tempdir().unwrap();
        // What a sosreport writes about its own run: listed, never read.
        std::fs::create_dir_all(dir.path().join("sos_logs")).unwrap();
        std::fs::write(dir.path().join("sos_logs/sos.log"), "collecting\n").unwrap();
        std::fs::write(dir.path().join("version.txt"), "sosreport: 4.5.6\n").unwrap();
        let err = analyze(dir.path(), &DiagnoseOptions::default()).unwrap_err();
        assert!(
            matches!(&err, Error::NothingToRead { found, .. }
                if found.contains("it lists but reads nothing from (collector_log)")),
            "{err}"
        );
    }

    #[test]
    fn one_meminfo_is_something_to_read() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("meminfo"),
            "MemTotal:       16384000 kB\nMemFree:         1024000 kB\n",
        )
        .unwrap();
        let report = analyze(dir.path(), &DiagnoseOptions::default()).unwrap();
        assert_eq!(report.sources[0].kind, "meminfo");
    }
}
