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
    step(Step::Diagnosing {
        sources: bundle.sources.len(),
        bytes: bundle.sources.iter().map(|s| s.size()).sum(),
    });
    Ok(pgmortem_diagnose::diagnose(&bundle, options)?)
}
