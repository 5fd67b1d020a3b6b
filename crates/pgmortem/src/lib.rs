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
//! [`analyze`] opens a bundle (a directory of loose files, an archive or one file; kinds
//! recognised by manifest, path or content), reads every source (every log whole, as a
//! stream, in bounded memory), puts events on one clock and returns the [`Report`]. The
//! parsers are re-exported for callers that want records rather than a diagnosis.

use std::path::Path;

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
    let open = pgmortem_bundle::OpenOptions {
        max_log_bytes: options.max_log_bytes,
        ..pgmortem_bundle::OpenOptions::default()
    };
    let bundle = pgmortem_bundle::open(path, &open)?;
    Ok(pgmortem_diagnose::diagnose(&bundle, options)?)
}
