//! Record assembly: prefixed lines start records, secondary lines (DETAIL, HINT, …) and
//! TAB-indented lines join them, everything else is counted.

use super::prefix::{Escape, LogLinePrefix, PrefixFields};
use super::severity::{self, Tag};
use super::{PgLog, PgRecord, PgTime, classify, time};
use crate::ParseStats;

/// How far back (in records) a secondary line looks for its parent of the same PID.
/// Lines of concurrent processes interleave on stderr; the parent is nearly always within a few.
const PARENT_WINDOW: usize = 16;

/// The part of a record that TAB-indented lines continue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    Message,
    Detail,
    Hint,
    Context,
    Statement,
    Query,
    Location,
}

impl Part {
    fn of(tag: Tag) -> Part {
        match tag {
            Tag::Main(_) => Part::Message,
            Tag::Detail => Part::Detail,
            Tag::Hint => Part::Hint,
            Tag::Context => Part::Context,
            Tag::Statement => Part::Statement,
            Tag::Query => Part::Query,
            Tag::Location => Part::Location,
        }
    }

    /// The optional field a secondary part fills; `None` for the main message.
    fn slot(self, record: &mut PgRecord) -> Option<&mut Option<String>> {
        Some(match self {
            Part::Message => return None,
            Part::Detail => &mut record.detail,
            Part::Hint => &mut record.hint,
            Part::Context => &mut record.context,
            Part::Statement => &mut record.statement,
            Part::Query => &mut record.query,
            Part::Location => &mut record.location,
        })
    }

    /// The text a TAB-indented line continues.
    fn text(self, record: &mut PgRecord) -> &mut String {
        let slot = match self {
            Part::Message => return &mut record.message,
            Part::Detail => &mut record.detail,
            Part::Hint => &mut record.hint,
            Part::Context => &mut record.context,
            Part::Statement => &mut record.statement,
            Part::Query => &mut record.query,
            Part::Location => &mut record.location,
        };
        slot.get_or_insert_with(String::new)
    }
}

/// Builds a [`PgLog`] line by line.
pub(crate) struct Assembler<'p> {
    prefix: &'p LogLinePrefix,
    log: PgLog,
    /// The record and part that a TAB-indented line continues.
    open: Option<(usize, Part)>,
}

impl<'p> Assembler<'p> {
    pub(crate) fn new(prefix: &'p LogLinePrefix) -> Self {
        let log = PgLog {
            prefix: prefix.as_str().to_owned(),
            ..PgLog::default()
        };
        Assembler {
            prefix,
            log,
            open: None,
        }
    }

    /// Feeds one line (without its newline).
    pub(crate) fn push(&mut self, number: u64, text: &str) {
        if text.is_empty() {
            self.log.blank_lines += 1;
            return;
        }
        // `\tautomatic recovery in progress`, `\tFROM t` (a message or query with newlines).
        if let Some(rest) = text.strip_prefix('\t') {
            match self.open {
                Some((idx, part)) => {
                    let record = &mut self.log.records[idx];
                    let joined = part.text(record);
                    joined.push('\n');
                    joined.push_str(rest);
                    record.end_line = number;
                    self.log.continuation_lines += 1;
                }
                None => self.log.stats.unrecognized(number, text),
            }
            return;
        }
        let tail_ok = |rest: &str| severity::split(rest).is_some();
        let matched = self
            .prefix
            .match_line(text, &tail_ok)
            .and_then(|(fields, end)| {
                severity::split(&text[end..]).map(|(tag, msg)| (fields, tag, msg))
            });
        match matched {
            Some((fields, Tag::Main(severity), message)) => {
                let mut record = record_from(number, &fields);
                record.severity = Some(severity);
                record.message = message.to_owned();
                self.log.records.push(record);
                self.open = Some((self.log.records.len() - 1, Part::Message));
            }
            Some((fields, tag, text)) => self.attach(number, &fields, Part::of(tag), text),
            None if is_memory_context_stats(text) => {
                self.log.memory_context_lines += 1;
                self.open = None;
            }
            None => {
                self.log.stats.unrecognized(number, text);
                self.open = None;
            }
        }
    }

    /// `DETAIL:  Failed process was running: select …` → the latest record of the same PID,
    /// when that record has no DETAIL yet; else an orphan record holding only this part.
    fn attach(&mut self, number: u64, fields: &PrefixFields<'_>, part: Part, text: &str) {
        let pid = fields.get(Escape::Pid).and_then(|p| p.parse::<u32>().ok());
        let records = &mut self.log.records;
        let from = records.len().saturating_sub(PARENT_WINDOW);
        let parent = (from..records.len())
            .rev()
            .find(|&i| pid.is_none() || records[i].pid == pid)
            .filter(|&i| matches!(part.slot(&mut records[i]), Some(None)));
        let idx = match parent {
            Some(idx) => {
                self.log.continuation_lines += 1;
                idx
            }
            None => {
                self.log.orphan_lines += 1;
                records.push(record_from(number, fields));
                records.len() - 1
            }
        };
        let record = &mut records[idx];
        if let Some(slot) = part.slot(record) {
            *slot = Some(text.to_owned());
        }
        record.end_line = number;
        self.open = Some((idx, part));
    }

    /// Classifies the records and returns the log.
    pub(crate) fn finish(mut self) -> PgLog {
        for record in &mut self.log.records {
            if record.severity.is_some() {
                record.event = classify::classify(&record.message);
                classify::complete_from_detail(record);
            }
        }
        self.log.stats.records = self.log.records.len() as u64;
        self.log
    }

    /// Counts lines the caller dropped or cut (read by `parse`).
    pub(crate) fn stats_mut(&mut self) -> &mut ParseStats {
        &mut self.log.stats
    }
}

/// A fresh record carrying what the prefix said.
fn record_from(number: u64, fields: &PrefixFields<'_>) -> PgRecord {
    let text = |e: Escape| fields.get(e).map(str::to_owned);
    let mut time: Option<PgTime> = fields
        .get(Escape::Timestamp)
        .and_then(|t| time::pg_time_from_stamp(t, true))
        .or_else(|| {
            fields
                .get(Escape::TimestampSeconds)
                .and_then(|t| time::pg_time_from_stamp(t, false))
        });
    let epoch = fields.get(Escape::Epoch).and_then(time::pg_time_from_epoch);
    match (&mut time, epoch) {
        (Some(t), Some(e)) if t.utc.is_none() => t.utc = e.utc,
        (None, Some(e)) => time = Some(e),
        _ => {}
    }
    PgRecord {
        line: number,
        end_line: number,
        time,
        pid: fields.get(Escape::Pid).and_then(|p| p.parse().ok()),
        session_id: text(Escape::SessionId),
        session_line: fields.get(Escape::SessionLine).and_then(|l| l.parse().ok()),
        user: text(Escape::User),
        database: text(Escape::Database),
        application: text(Escape::Application),
        client: text(Escape::RemoteHostPort).or_else(|| text(Escape::RemoteHost)),
        backend_type: text(Escape::BackendType),
        sqlstate: text(Escape::Sqlstate),
        command_tag: text(Escape::CommandTag),
        session_start: text(Escape::SessionStart),
        xid: fields.get(Escape::Xid).and_then(|x| x.parse().ok()),
        vxid: text(Escape::Vxid),
        leader_pid: fields.get(Escape::LeaderPid).and_then(|p| p.parse().ok()),
        query_id: fields.get(Escape::QueryId).and_then(|q| q.parse().ok()),
        local_address: text(Escape::LocalAddress),
        ..PgRecord::default()
    }
}

/// The un-prefixed dump `MemoryContextStats()` writes to stderr before `ERROR:  out of memory`:
/// `TopMemoryContext: 97696 total in 5 blocks; 14288 free (11 chunks); 83408 used`,
/// `  ExprContext: 600000104 total in 2 blocks; …`,
/// `  12 more child contexts containing 45056 total in 7 blocks; …`,
/// `Grand total: 1234567 bytes in 45 blocks; 12345 free (67 chunks); 1222222 used`.
fn is_memory_context_stats(text: &str) -> bool {
    let t = text.trim_start_matches(' ');
    t.starts_with("Grand total: ")
        || (t.contains(" total in ") && t.contains(" blocks; ") && t.ends_with(" used"))
        || (t.contains(" total in ") && t.contains(" blocks; ") && t.contains(" used: "))
}
