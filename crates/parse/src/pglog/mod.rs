//! PostgreSQL server logs: stderr output with a `log_line_prefix`, records with their
//! DETAIL/HINT/CONTEXT/STATEMENT continuation, and the crash-cycle events classified with their
//! fields.

mod types;

pub use types::*;

use crate::ParseStats;
use serde::Serialize;

/// Context for the PostgreSQL log parser.
#[derive(Debug, Clone)]
pub struct PgLogOptions {
    /// The server's `log_line_prefix`; `None` tries the defaults of each version.
    pub prefix: Option<String>,
    /// Lines longer than this many bytes are cut (and counted). Default 1 MiB.
    pub max_line_bytes: usize,
}

impl Default for PgLogOptions {
    fn default() -> Self {
        Self {
            prefix: None,
            max_line_bytes: 1024 * 1024,
        }
    }
}

/// Everything parsed out of one PostgreSQL log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PgLog {
    /// The `log_line_prefix` the lines were read with.
    pub prefix: String,
    /// Records in input order.
    pub records: Vec<PgRecord>,
    /// What was understood and what was not.
    pub stats: ParseStats,
    /// Lines attached to a record as continuation (DETAIL, tab-indented lines, …).
    pub continuation_lines: u64,
}

/// Errors of the PostgreSQL log parser.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PgLogError {
    /// The `log_line_prefix` has an escape this parser does not know.
    #[error("invalid log_line_prefix {prefix:?}: {reason}")]
    InvalidPrefix {
        /// The prefix given.
        prefix: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// Parses a whole PostgreSQL stderr log held in memory.
pub fn parse(input: &[u8], options: &PgLogOptions) -> Result<PgLog, PgLogError> {
    let mut stats = ParseStats::default();
    for line in crate::lines::Lines::new(input) {
        stats.lines += 1;
        stats.unrecognized(line.number, &line.text);
    }
    Ok(PgLog {
        prefix: options.prefix.clone().unwrap_or_default(),
        records: Vec::new(),
        stats,
        continuation_lines: 0,
    })
}

/// How sure it is that `head` (the first few KiB of a file) is a PostgreSQL log; `None` when it
/// is not one.
pub fn sniff(head: &[u8]) -> Option<f32> {
    let _ = head;
    None
}
