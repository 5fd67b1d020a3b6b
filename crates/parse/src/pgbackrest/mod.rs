//! pgBackRest's log files: what the backup and WAL-archiving tool did, one file per stanza and
//! command (`db-archive-push-async.log`, `db-backup.log`, `db-check.log`, … in its
//! `log-path`; Crunchy Postgres for Kubernetes keeps them in `pgdata/pgbackrest/log/` and, on
//! the repository host, `pgbackrest/repoN/log/`). When WAL cannot be archived, PostgreSQL's
//! `pg_wal` grows until the disk is full; these files say why it could not.
//!
//! Input: the bytes of one log, pushed line by line ([`BackrestReader`]) or whole
//! ([`parse`]). Output: [`BackrestRecord`]s (time, process, level, error code, the command
//! the process ran, the [`BackrestEvent`] it is) and counts ([`BackrestLog`]). No I/O.
//!
//! # Form
//!
//! pgBackRest's file log (src/common/log.c of 2.x): each run starts with a banner, each line
//! with the local time (`.` and milliseconds, no zone), the process (`P00` the main one,
//! `P01`… its local workers), the level right-aligned and a colon; an error's code follows in
//! brackets; a message of several lines continues on lines indented past the head:
//! ```text
//! -------------------PROCESS START-------------------
//! 2026-11-28 14:58:27.062 P00   INFO: archive-push:async command begin 2.45: [/var/lib/postgresql/data/pg_wal] --archive-async …
//! 2026-11-28 14:58:38.734 P01   WARN: could not push WAL file '000000010000000000000005' to the archive (will be retried): [104] raised from local-1 protocol: …
//!                                     repo1: [FileOpenError] unable to open file '…' for write: [13] Permission denied
//! 2026-11-28 14:58:56.668 P00  ERROR: [082]: WAL segment 000000010000000000000006 was not archived before the 10000ms timeout
//! ```
//! Levels: `ERROR`, `WARN`, `INFO`, `DETAIL`, `DEBUG`, `TRACE` (and `ASSERT` for an
//! assertion). Blank lines separate runs. A line that is none of these is counted as
//! unrecognised.
//!
//! # Messages read ([`BackrestEvent`])
//!
//! `COMMAND command begin VERSION: …` and `COMMAND command end: completed successfully
//! (Nms)` / `aborted with exception [NNN]` (src/command/command.c), WAL segments pushed
//! (`pushed WAL file '…' to the archive`, `push N WAL file(s) to archive: A...B`) and not
//! pushed (`could not push WAL file '…' to the archive (will be retried)`), a backup's end
//! (`new backup label = …`). Every record knows the command its run was ([`BackrestRecord::
//! command`], from the run's `command begin` line), so that an `ERROR` of `archive-push` is
//! told from one of `backup`.

#[cfg(test)]
mod tests;

use serde::Serialize;

use crate::ParseStats;
use crate::civil::{local_stamp, local_time};
use crate::lines::{Lines, cut_at_char as cut};
use crate::pglog::PgTime;

/// pgBackRest's log levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum BackrestLevel {
    /// `ASSERT`: an assertion failed (a bug).
    Assert,
    /// `ERROR`: the command failed.
    Error,
    /// `WARN`: something went wrong and was worked around (or will be retried).
    Warn,
    /// `INFO`.
    Info,
    /// `DETAIL`.
    Detail,
    /// `DEBUG`.
    Debug,
    /// `TRACE`.
    Trace,
}

impl BackrestLevel {
    fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "ASSERT" => BackrestLevel::Assert,
            "ERROR" => BackrestLevel::Error,
            "WARN" => BackrestLevel::Warn,
            "INFO" => BackrestLevel::Info,
            "DETAIL" => BackrestLevel::Detail,
            "DEBUG" => BackrestLevel::Debug,
            "TRACE" => BackrestLevel::Trace,
            _ => return None,
        })
    }
}

/// What a pgBackRest message says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum BackrestEvent {
    /// `COMMAND command begin VERSION: ARGS`.
    CommandBegin {
        /// pgBackRest's version (`2.45`).
        version: String,
    },
    /// `COMMAND command end: …`.
    CommandEnd {
        /// `completed successfully`, else `aborted with exception [NNN]`.
        ok: bool,
    },
    /// WAL segments pushed to the repository: `pushed WAL file 'F' to the archive` (one), or
    /// the asynchronous process's `push N WAL file(s) to archive: A...B` (about to push N).
    WalPushed {
        /// How many segments.
        count: u32,
    },
    /// `could not push WAL file 'F' to the archive (will be retried)`: the asynchronous
    /// archiver failed on a segment.
    WalPushFailed {
        /// The segment (`000000010000000000000005`).
        segment: String,
    },
    /// `new backup label = LABEL`: a backup completed.
    BackupCompleted {
        /// The label (`20261128-145424F`).
        label: String,
    },
}

/// One record of a pgBackRest log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BackrestRecord {
    /// 1-based number of the record's first line.
    pub line: u64,
    /// 1-based number of its last line (continuation lines included).
    pub end_line: u64,
    /// The stamp: local time, no zone.
    pub time: PgTime,
    /// The process: 0 the command's main process, 1… its local workers.
    pub process: u32,
    /// The level.
    pub level: BackrestLevel,
    /// The error's code (`082` for `ERROR: [082]: …`), for an `ERROR` or `ASSERT`.
    pub code: Option<u16>,
    /// The command this run was (`archive-push`, `archive-push:async`, `backup`, `check`),
    /// from its `command begin` line; `None` before one.
    pub command: Option<String>,
    /// The message (after the code); continuation lines joined with `\n`, at most 2 KiB.
    pub message: String,
    /// What the message says, when it is one the diagnosis reads.
    pub event: Option<BackrestEvent>,
}

/// What reading a pgBackRest log gave.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BackrestLog {
    /// The records, in log order ([`parse`] only; the reader hands them out one by one).
    pub records: Vec<BackrestRecord>,
    /// `-------------------PROCESS START-------------------` banners: runs of a command.
    pub process_starts: u64,
    /// Lines that continue a record's message.
    pub continuation_lines: u64,
    /// Blank lines.
    pub blank_lines: u64,
    /// Records by level: `[assert, error, warn, info, detail, debug, trace]`.
    pub levels: [u64; 7],
    /// Lines read, records, unrecognised lines with examples.
    pub stats: ParseStats,
}

/// Options of the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BackrestOptions {
    /// Lines longer than this are cut here and counted in `stats.oversized_lines` (default
    /// 64 KiB: a `command begin` line lists every option, a few KiB at most).
    pub max_line_bytes: usize,
}

impl Default for BackrestOptions {
    fn default() -> Self {
        BackrestOptions {
            max_line_bytes: 64 << 10,
        }
    }
}

/// The most of a message kept with its continuation lines.
const MAX_MESSAGE_BYTES: usize = 2048;

/// The banner that starts each run in the file.
const PROCESS_START: &str = "-------------------PROCESS START-------------------";

/// Line-by-line reader of a pgBackRest log of any size: feed each line to
/// [`BackrestReader::line`], which hands back the record the line closed, if any; call
/// [`BackrestReader::finish`] at the end for the last one. Memory: one record.
#[derive(Debug, Default)]
pub struct BackrestReader {
    options: BackrestOptions,
    /// The command of the current run.
    command: Option<String>,
    open: Option<BackrestRecord>,
    log: BackrestLog,
}

impl BackrestReader {
    /// A reader with these options.
    pub fn new(options: BackrestOptions) -> Self {
        BackrestReader {
            options,
            ..BackrestReader::default()
        }
    }

    /// Reads one line (`number` 1-based, `text` without its newline, `lossy` when it was not
    /// valid UTF-8); returns the record it closed.
    pub fn line(&mut self, number: u64, text: &str, lossy: bool) -> Option<BackrestRecord> {
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
        if let Some(head) = head(text) {
            let (code, message) = error_code(head.message);
            let event = classify(message);
            if let Some(BackrestEvent::CommandBegin { .. }) = &event {
                self.command = message
                    .split_once(" command begin")
                    .map(|(c, _)| c.to_owned());
            }
            let record = BackrestRecord {
                line: number,
                end_line: number,
                time: local_time(head.time),
                process: head.process,
                level: head.level,
                code,
                command: self.command.clone(),
                message: cut(message, MAX_MESSAGE_BYTES).to_owned(),
                event,
            };
            self.log.stats.records += 1;
            self.log.levels[head.level as usize] += 1;
            return self.open.replace(record);
        }
        if text == PROCESS_START {
            self.log.process_starts += 1;
            self.command = None;
            return self.open.take();
        }
        if text.trim().is_empty() {
            self.log.blank_lines += 1;
            return self.open.take();
        }
        match self.open.as_mut().filter(|_| text.starts_with(' ')) {
            Some(open) => {
                open.end_line = number;
                self.log.continuation_lines += 1;
                let more = text.trim_start();
                if open.message.len() + 1 + more.len() <= MAX_MESSAGE_BYTES {
                    open.message.push('\n');
                    open.message.push_str(more);
                }
            }
            None => self.log.stats.unrecognized(number, text),
        }
        None
    }

    /// The last record, once every line was read.
    pub fn finish(&mut self) -> Option<BackrestRecord> {
        self.open.take()
    }

    /// The counts so far (records not included).
    pub fn summary(&self) -> BackrestLog {
        self.log.clone()
    }
}

/// A record's first line, taken apart.
struct Head<'a> {
    time: jiff::civil::DateTime,
    process: u32,
    level: BackrestLevel,
    message: &'a str,
}

/// `STAMP PNN LEVEL: message` (the level right-aligned: `P00   INFO:`, `P00  ERROR:`).
fn head(text: &str) -> Option<Head<'_>> {
    let (rest, time) = local_stamp('.')(text).ok()?;
    let rest = rest.strip_prefix(" P")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let process = rest[..digits].parse().ok()?;
    let rest = rest[digits..].trim_start_matches(' ');
    let (name, message) = rest.split_once(':')?;
    let level = BackrestLevel::from_name(name)?;
    Some(Head {
        time,
        process,
        level,
        message: message.strip_prefix(' ').unwrap_or(message),
    })
}

/// `[082]: text` → the code and the text.
fn error_code(message: &str) -> (Option<u16>, &str) {
    let Some(rest) = message.strip_prefix('[') else {
        return (None, message);
    };
    match rest.split_once("]: ") {
        Some((code, text)) if !code.is_empty() && code.bytes().all(|b| b.is_ascii_digit()) => {
            (code.parse().ok(), text)
        }
        _ => (None, message),
    }
}

/// The event a message is, if any.
fn classify(message: &str) -> Option<BackrestEvent> {
    if let Some((command, rest)) = message.split_once(" command begin ")
        && !command.contains(' ')
    {
        let version = rest.split_once(':').map_or(rest, |(v, _)| v);
        return Some(BackrestEvent::CommandBegin {
            version: version.to_owned(),
        });
    }
    if let Some((command, rest)) = message.split_once(" command end: ")
        && !command.contains(' ')
    {
        return Some(BackrestEvent::CommandEnd {
            ok: rest.starts_with("completed successfully"),
        });
    }
    if message.starts_with("pushed WAL file '") && message.contains("' to the archive") {
        return Some(BackrestEvent::WalPushed { count: 1 });
    }
    if let Some(rest) = message.strip_prefix("push ")
        && let Some((n, _)) = rest.split_once(" WAL file(s) to archive")
    {
        return n
            .parse()
            .ok()
            .map(|count| BackrestEvent::WalPushed { count });
    }
    if let Some(rest) = message.strip_prefix("could not push WAL file '")
        && let Some((segment, _)) = rest.split_once('\'')
    {
        return Some(BackrestEvent::WalPushFailed {
            segment: segment.to_owned(),
        });
    }
    if let Some(label) = message.strip_prefix("new backup label = ") {
        return Some(BackrestEvent::BackupCompleted {
            label: label.trim().to_owned(),
        });
    }
    None
}

/// Reads a whole pgBackRest log held in memory.
pub fn parse(input: &[u8], options: &BackrestOptions) -> BackrestLog {
    let mut reader = BackrestReader::new(options.clone());
    let mut records = Vec::new();
    for line in Lines::new(input) {
        records.extend(reader.line(line.number, &line.text, line.lossy));
    }
    records.extend(reader.finish());
    let mut log = reader.summary();
    log.records = records;
    log
}

/// How sure the first lines are a pgBackRest log: a `PROCESS START` banner or records, and
/// most non-blank lines records, banners or continuations.
pub fn sniff(head_bytes: &[u8]) -> Option<f32> {
    let mut records = 0usize;
    let mut banners = 0usize;
    let mut others = 0usize;
    for line in Lines::new(head_bytes).take(50) {
        let text = &line.text;
        if head(text).is_some() {
            records += 1;
        } else if text.as_ref() == PROCESS_START {
            banners += 1;
        } else if !text.trim().is_empty() && !text.starts_with(' ') {
            others += 1;
        }
    }
    (records > 0 && records + banners >= others * 2).then_some(0.9)
}
