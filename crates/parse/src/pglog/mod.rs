//! PostgreSQL server logs: stderr output with a `log_line_prefix`, records with their
//! DETAIL/HINT/CONTEXT/STATEMENT continuation, and the crash-cycle events classified with their
//! fields.
//!
//! # How lines become records
//!
//! * A line that fits the prefix and then starts with a severity word (`LOG:  `, `ERROR:  `, …)
//!   starts a record.
//! * A fitting line whose word is `DETAIL`, `HINT`, `CONTEXT`, `STATEMENT`, `QUERY` or
//!   `LOCATION` fills that field of the latest record of the same PID (among the last 16
//!   records; the latest record at all when the prefix has no `%p`), if the field is still
//!   empty. Otherwise it becomes an *orphan* record: `severity: null`, empty message, only that
//!   field set; counted in [`PgLog::orphan_lines`].
//! * A line starting with a TAB continues the text last filled (message or secondary field):
//!   PostgreSQL writes every newline inside a message as newline + TAB. Joined with `\n`.
//! * Attached secondary lines and TAB lines are counted in [`PgLog::continuation_lines`].
//! * The un-prefixed `MemoryContextStats` dump written before `ERROR:  out of memory`
//!   (`TopMemoryContext: … total in … blocks; …`, `Grand total: …`) is recognised and counted
//!   in [`PgLog::memory_context_lines`]; it is not glued to any record.
//! * Empty lines are counted in [`PgLog::blank_lines`].
//! * Every other line (what `pg_ctl` or a crashing library wrote, a TAB line with nothing open
//!   before it, a prefixed line with an unknown severity word) is counted in
//!   `stats.unrecognized_lines` with the first examples kept; it never joins a record.
//! * Lines longer than [`PgLogOptions::max_line_bytes`] are cut there (at a character
//!   boundary), counted in `stats.oversized_lines`, and parsed as cut.

mod assemble;
mod classify;
mod prefix;
mod severity;
mod time;

pub use time::fixed_offset;
mod types;

pub use prefix::LogLinePrefix;
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
    /// Secondary lines (DETAIL, HINT, …) with no parent record to join; each became a record
    /// with `severity: null`.
    pub orphan_lines: u64,
    /// Lines of the un-prefixed `MemoryContextStats` dump that precedes `out of memory`.
    pub memory_context_lines: u64,
    /// Empty lines.
    pub blank_lines: u64,
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

/// The prefixes tried, in order of preference, when none is given: PostgreSQL ≥ 10's default,
/// the Debian/Ubuntu packages' default, common pgBadger and managed-service settings, and the
/// empty prefix of PostgreSQL < 10.
pub const CANDIDATE_PREFIXES: &[&str] = &[
    "%m [%p] ",
    "%m [%p] %q%u@%d ",
    "%t [%p] ",
    "%t [%p]: [%l-1] ",
    "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
    "%t:%r:%u@%d:[%p]:",
    "",
];

/// How many lines from the start are read to choose a prefix.
const DETECTION_LINES: usize = 1000;

/// Parses a whole PostgreSQL stderr log held in memory.
///
/// Cost: one pass, one memchr per line; the prefix match is a handful of comparisons per line.
/// Memory: the records (owned strings).
///
/// # Errors
/// [`PgLogError::InvalidPrefix`] when `options.prefix` does not compile.
pub fn parse(input: &[u8], options: &PgLogOptions) -> Result<PgLog, PgLogError> {
    let prefix = match &options.prefix {
        Some(text) => LogLinePrefix::compile(text)?,
        None => detect_prefix(input, options.max_line_bytes),
    };
    let mut assembler = assemble::Assembler::new(&prefix);
    for line in crate::lines::Lines::new(input) {
        let stats = assembler.stats_mut();
        stats.lines += 1;
        if line.lossy {
            stats.invalid_utf8_lines += 1;
        }
        let text = cut(&line.text, options.max_line_bytes);
        if text.len() < line.text.len() {
            assembler.stats_mut().oversized_lines += 1;
        }
        assembler.push(line.number, text);
    }
    Ok(assembler.finish())
}

/// Picks the candidate prefix that fits the most of the first lines (ties go to the earlier).
fn detect_prefix(input: &[u8], max_line_bytes: usize) -> LogLinePrefix {
    let candidates: Vec<LogLinePrefix> = CANDIDATE_PREFIXES
        .iter()
        .filter_map(|p| LogLinePrefix::compile(p).ok())
        .collect();
    let mut scores = vec![0usize; candidates.len()];
    let tail_ok = |rest: &str| severity::split(rest).is_some();
    for line in crate::lines::Lines::new(input).take(DETECTION_LINES) {
        let text = cut(&line.text, max_line_bytes);
        for (score, candidate) in scores.iter_mut().zip(&candidates) {
            if candidate.match_line(text, &tail_ok).is_some() {
                *score += 1;
            }
        }
    }
    let mut best = 0;
    for (i, &score) in scores.iter().enumerate() {
        if score > scores[best] {
            best = i;
        }
    }
    candidates
        .into_iter()
        .nth(best)
        .unwrap_or_else(LogLinePrefix::empty)
}

/// `text` cut to at most `max` bytes at a character boundary.
fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// How sure it is that `head` (the first few KiB of a file) is a PostgreSQL stderr log; `None`
/// when it is not one.
///
/// A line counts fully when it fits one of [`CANDIDATE_PREFIXES`] other than the empty one and
/// then a severity word, half when it merely holds `LOG:  `, `ERROR:  `, … somewhere (a prefix
/// we do not guess). The confidence is the weighted share of non-empty lines, the last line
/// ignored when `head` ends inside it. Kernel lines (`[ 1234.567890] …`, `Apr  5 18:24:23 host
/// kernel: …`) never count.
pub fn sniff(head: &[u8]) -> Option<f32> {
    let complete = match memchr::memrchr(b'\n', head) {
        Some(last) if last + 1 < head.len() && head.len() >= 4096 => &head[..=last],
        _ => head,
    };
    let candidates: Vec<LogLinePrefix> = CANDIDATE_PREFIXES
        .iter()
        .filter(|p| !p.is_empty())
        .filter_map(|p| LogLinePrefix::compile(p).ok())
        .collect();
    let tail_ok = |rest: &str| severity::split(rest).is_some();
    let (mut lines, mut weight) = (0u32, 0f32);
    for line in crate::lines::Lines::new(complete).take(200) {
        let text = cut(&line.text, 4096);
        if text.trim().is_empty() {
            continue;
        }
        lines += 1;
        if candidates
            .iter()
            .any(|c| c.match_line(text, &tail_ok).is_some())
        {
            weight += 1.0;
        } else if has_severity_word(text) {
            weight += 0.5;
        }
    }
    if lines == 0 || weight == 0.0 {
        return None;
    }
    Some((weight / lines as f32).min(1.0))
}

/// True when `LOG:  `, `ERROR:  `, … appears after a space or at the start of the line.
fn has_severity_word(text: &str) -> bool {
    memchr::memmem::find_iter(text.as_bytes(), b":  ").any(|colon| {
        let word_start = text[..colon].rfind([' ', ']', ':']).map_or(0, |i| i + 1);
        severity::split(&text[word_start..]).is_some()
    })
}
