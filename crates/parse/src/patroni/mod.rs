//! Patroni's log: what the high-availability agent in front of PostgreSQL (Crunchy Postgres for
//! Kubernetes, Zalando's Spilo, plain Patroni) did to the server. Around a crash it says
//! whether PostgreSQL died under Patroni (`Postgresql is not running.`), whether Patroni
//! started it again (`starting as readonly because i had the session lock`, `postmaster
//! pid=N`), demoted it (`demoted self because DCS is not accessible and I was a leader`) or
//! handed the leader lock to another member (`promoted self to leader by acquiring session
//! lock`).
//!
//! Input: the bytes of one log (a file of `log.dir`, or Patroni's lines on a container's
//! standard error), pushed line by line ([`PatroniReader`]) or whole ([`parse`]). Output:
//! [`PatroniRecord`]s (time, level, message, the [`PatroniEvent`] it is) and counts
//! ([`PatroniLog`]). No I/O.
//!
//! # Form
//!
//! Patroni's default `log.format`, `%(asctime)s %(levelname)s: %(message)s` (patroni/log.py of
//! 2.x and 3.x; Python's `asctime` is the local time, `,` before the milliseconds, no zone):
//! ```text
//! 2026-11-28 15:01:34,977 INFO: no action. I am (hippo-instance1-abcd-0), the leader with the lock
//! 2026-11-28 15:01:44,865 WARNING: Postgresql is not running.
//! 2026-11-28 15:01:40,153 ERROR: Exception when called state_handler.last_operation()
//! ```
//! A message of several lines (`pg_controldata:` and its `  key: value` lines, a traceback)
//! continues on lines that do not start with a stamp: they belong to the record before
//! ([`PatroniRecord::end_line`], [`PatroniLog::continuation_lines`]). Levels are Python's
//! (`DEBUG`, `INFO`, `WARNING`, `ERROR`, `CRITICAL`; `WARN` and `FATAL` are read as their
//! aliases). Lines of other programs (PostgreSQL's stderr in the same container log) are
//! counted as unrecognised, as a line before the first record is.
//!
//! # Messages read ([`PatroniEvent`])
//!
//! From patroni/ha.py and patroni/postgresql/__init__.py of 3.0 (the texts are the same in 2.x
//! but for the letter case of a few): PostgreSQL found not running, crash recovery in single
//! user mode, PostgreSQL started again by Patroni (`starting as readonly …`, `starting primary
//! after failure`, `restarting after failure in progress`), as a replica (`starting as a
//! secondary`), `postmaster pid=N`, demotion (`demoting self …`, `Demoting self (…)`,
//! `demoted self because …`), promotion (`promoted self to leader …`, `acquired session lock
//! as a leader`), the DCS unreachable (`Error communicating with DCS`, `DCS is not
//! accessible`, `failed to update leader lock`), a manual failover (`manual failover: …`).

mod events;
#[cfg(test)]
mod tests;

use serde::Serialize;

pub use events::PatroniEvent;

use crate::ParseStats;
use crate::civil::{local_stamp, local_time};
use crate::lines::{Lines, cut_at_char as cut};
use crate::pglog::PgTime;

/// How severe Patroni said a line was (Python's logging level names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum PatroniLevel {
    /// `CRITICAL` (also printed `FATAL`).
    Critical,
    /// `ERROR`.
    Error,
    /// `WARNING` (also printed `WARN`).
    Warning,
    /// `INFO`.
    Info,
    /// `DEBUG`.
    Debug,
}

impl PatroniLevel {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "CRITICAL" | "FATAL" => PatroniLevel::Critical,
            "ERROR" => PatroniLevel::Error,
            "WARNING" | "WARN" => PatroniLevel::Warning,
            "INFO" => PatroniLevel::Info,
            "DEBUG" => PatroniLevel::Debug,
            _ => return None,
        })
    }
}

/// One record of a Patroni log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PatroniRecord {
    /// 1-based number of the record's first line.
    pub line: u64,
    /// 1-based number of its last line (continuation lines included).
    pub end_line: u64,
    /// The stamp: local time, no zone.
    pub time: PgTime,
    /// The level.
    pub level: PatroniLevel,
    /// The message's first line (its continuation lines are counted, not kept).
    pub message: String,
    /// What the message says, when it is one the diagnosis reads.
    pub event: Option<PatroniEvent>,
}

/// What reading a Patroni log gave.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PatroniLog {
    /// The records, in log order ([`parse`] only; the reader hands them out one by one).
    pub records: Vec<PatroniRecord>,
    /// Lines that continue a record's message (`pg_controldata` values, tracebacks).
    pub continuation_lines: u64,
    /// Blank lines.
    pub blank_lines: u64,
    /// Records by level: `[critical, error, warning, info, debug]`.
    pub levels: [u64; 5],
    /// Lines read, records, unrecognised lines with examples.
    pub stats: ParseStats,
}

/// Options of the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatroniOptions {
    /// Lines longer than this are cut here and counted in `stats.oversized_lines` (default
    /// 64 KiB: Patroni's own lines are short, a traceback's lines too).
    pub max_line_bytes: usize,
}

impl Default for PatroniOptions {
    fn default() -> Self {
        PatroniOptions {
            max_line_bytes: 64 << 10,
        }
    }
}

/// Line-by-line reader of a Patroni log of any size: feed each line to
/// [`PatroniReader::line`], which hands back the record the line closed, if any; call
/// [`PatroniReader::finish`] at the end for the last one. Memory: one record.
#[derive(Debug, Default)]
pub struct PatroniReader {
    options: PatroniOptions,
    open: Option<PatroniRecord>,
    /// The open record's message goes on with a Python traceback: every line up to the next
    /// record is the traceback's (its last line, `module.Exception: text`, has any shape).
    in_traceback: bool,
    log: PatroniLog,
}

impl PatroniReader {
    /// A reader with these options.
    pub fn new(options: PatroniOptions) -> Self {
        PatroniReader {
            options,
            open: None,
            in_traceback: false,
            log: PatroniLog::default(),
        }
    }

    /// Reads one line (`number` 1-based, `text` without its newline, `lossy` when it was not
    /// valid UTF-8); returns the record it closed.
    pub fn line(&mut self, number: u64, text: &str, lossy: bool) -> Option<PatroniRecord> {
        self.log.stats.lines += 1;
        if lossy {
            self.log.stats.invalid_utf8_lines += 1;
        }
        let text = if text.len() > self.options.max_line_bytes {
            self.log.stats.oversized_lines += 1;
            cut(text, self.options.max_line_bytes)
        } else {
            text
        };
        if let Some((time, level, message)) = head(text) {
            let record = PatroniRecord {
                line: number,
                end_line: number,
                time: local_time(time),
                level,
                event: events::classify(message),
                message: message.to_owned(),
            };
            self.log.stats.records += 1;
            self.log.levels[level as usize] += 1;
            self.in_traceback = false;
            return self.open.replace(record);
        }
        if text.trim().is_empty() {
            self.log.blank_lines += 1;
            // A blank line inside a message (pg_controldata ends with one) belongs to it.
            if let Some(open) = &mut self.open {
                open.end_line = number;
            }
        } else if let Some(open) = self
            .open
            .as_mut()
            .filter(|_| self.in_traceback || is_continuation(text))
        {
            open.end_line = number;
            self.log.continuation_lines += 1;
            self.in_traceback |= text.starts_with("Traceback (");
        } else {
            self.log.stats.unrecognized(number, text);
        }
        None
    }

    /// The last record, once every line was read.
    pub fn finish(&mut self) -> Option<PatroniRecord> {
        self.open.take()
    }

    /// The counts so far (records not included).
    pub fn summary(&self) -> PatroniLog {
        self.log.clone()
    }
}

/// Whether a line without a stamp continues the record before: indented (`  pg_control
/// version number: 1300`, `  File "…", line 243, in update_lock`) or a traceback's head
/// (`Traceback (most recent call last):`; what follows it is the traceback's).
fn is_continuation(text: &str) -> bool {
    text.starts_with([' ', '\t']) || text.starts_with("Traceback (")
}

/// `STAMP LEVEL: message`: the time, the level and the message.
fn head(text: &str) -> Option<(jiff::civil::DateTime, PatroniLevel, &str)> {
    let (rest, time) = local_stamp(',')(text).ok()?;
    let rest = rest.strip_prefix(' ')?;
    let (name, message) = rest.split_once(':')?;
    let level = PatroniLevel::from_name(name)?;
    Some((time, level, message.strip_prefix(' ').unwrap_or(message)))
}

/// Reads a whole Patroni log held in memory.
pub fn parse(input: &[u8], options: &PatroniOptions) -> PatroniLog {
    let mut reader = PatroniReader::new(options.clone());
    let mut records = Vec::new();
    for line in Lines::new(input) {
        records.extend(reader.line(line.number, &line.text, line.lossy));
    }
    records.extend(reader.finish());
    let mut log = reader.summary();
    log.records = records;
    log
}

/// How sure the first lines are a Patroni log: most non-blank lines of the first KiBs are
/// Patroni's records or their continuations, and at least one is a record.
pub fn sniff(head_bytes: &[u8]) -> Option<f32> {
    let mut records = 0usize;
    let mut others = 0usize;
    for line in Lines::new(head_bytes).take(50) {
        if head(&line.text).is_some() {
            records += 1;
        } else if !line.text.trim().is_empty() && !is_continuation(&line.text) {
            others += 1;
        }
    }
    (records > 0 && records >= others * 2).then_some(0.85)
}
