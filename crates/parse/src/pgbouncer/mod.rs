//! pgbouncer's log: what the pooler in front of PostgreSQL logged about its clients and its
//! server connections. During an outage it is what the applications saw: logins refused,
//! clients cut off, `pooler error:` messages, server logins failing.
//!
//! Input: the bytes of one log; output: [`BouncerRecord`]s (time, pid, level, the connection
//! a line is about, the message and the [`BouncerEvent`] it is) and counts ([`BouncerLog`]).
//! No I/O: [`parse`] reads a buffer, [`BouncerReader`] takes chunks of a log of any size.
//!
//! # Forms ([`BouncerForm`])
//!
//! * `file`: pgbouncer's own `logfile` (and its stderr), `TIME [PID] LEVEL MESSAGE`:
//!   ```text
//!   2026-11-28 05:30:10.375 UTC [31113] WARNING C-0x55e5be25d0b0: reportdb/postgres@127.0.0.1:40092 pooler error: the database system is in recovery mode
//!   2018-09-12 16:08:54.775 3392 LOG file descriptor limit: 1024 (H:4096), max_client_conn: 100, max fds possible: 150
//!   ```
//!   Versions 1.12 and later print the zone abbreviation (`tzname`) and bracket the pid;
//!   1.7–1.11 print neither (libusual's `format_time_ms` and `log_generic`). Both are read,
//!   with or without milliseconds. A message with newlines continues on lines starting with a
//!   TAB (`log_generic` writes `\n\t`): they are joined to the record's message.
//! * `syslog` (BSD or RFC 3339 stamps, as rsyslog writes them), `syslog5424`, `journal`
//!   (`journalctl -o short`, `short-iso`, `short-precise`) and `journal_json`
//!   (`journalctl -o json`, `json-pretty`): with `syslog = 1`, or under systemd (whose journal
//!   stream pgbouncer detects, 1.15 and later, and writes each message with
//!   `sd_journal_print`), pgbouncer sends the message alone: the envelope gives the time, the
//!   pid and, where it has one (RFC 5424's PRI, the journal's `PRIORITY`), the level. Lines of
//!   other programs are counted in [`BouncerLog::other_program_lines`]. The envelopes are taken
//!   off by the same layer as PostgreSQL's ([`crate::wrap`]). A BSD stamp has no year: it
//!   is read in [`BouncerOptions::year`] (or the year of [`BouncerOptions::collected_on`]), and
//!   gives no time without one. A journal entry whose message is a whole stderr line (no
//!   journal stream detected) is read as the file form.
//!
//! [`BouncerOptions::form`] `None` chooses the form from the first line whose shape says
//! ([`sniff_form`]).
//!
//! # Messages read ([`BouncerEvent`])
//!
//! From pgbouncer's printf formats (src/client.c, server.c, objects.c, janitor.c, main.c,
//! stats.c, proto.c of 1.7 to 1.24): `login attempt:`, `login failed:`, `closing because:
//! REASON (age=Ns)` (its reason grouped by [`CloseCause`]: `client close request`,
//! `no more connections allowed (max_client_conn)`, `query_wait_timeout`,
//! `client_login_timeout`, `server conn crashed?`, `server login has been failing …
//! (server_login_retry)`, the server's refusal handed to waiting clients, …), `pooler error:`,
//! `server login failed: FATAL …` and `S: login failed: FATAL: …`, `new connection to
//! server`, `stats:` (every `stats_period`: xacts/s, queries/s, bytes, average xact, query and
//! wait times; the fields of each version), `process up:`, `listening on`, `got SIGINT`,
//! `got SIGTERM` and the other signals, `… connections dropped, exiting`, `taking connection
//! from reserve_pool`, and `FATAL @file:line in function f(): …`. The connection prefix
//! `C-0x…: db/user@addr:port ` (`S-` for server connections; `[v6]`, `unix(pid)`,
//! `(nodb)/(nouser)`, `peer-N@`) is read into a [`Connection`]. Any other message is a record
//! without an event.
//!
//! # What counts as unrecognised
//!
//! Every line is a record's line, a TAB-continued line ([`BouncerLog::continuation_lines`]), a
//! blank line, a line of another program in a syslog/journal file, or unrecognised
//! (`stats.unrecognized_lines`, the first examples kept): a line without pgbouncer's head in
//! the file form, a TAB line with no record before it, a line no envelope fits. Lines longer
//! than [`BouncerOptions::max_line_bytes`] are cut there and counted in
//! `stats.oversized_lines` (pgbouncer's own lines never pass 2 KiB); invalid UTF-8 is decoded
//! lossily and counted in `stats.invalid_utf8_lines`.

mod events;
mod grammar;
mod read;
mod types;

use std::collections::BTreeMap;

use serde::Serialize;

pub use read::BouncerReader;
pub use types::*;

use crate::lines::cut_at_char as cut;
use crate::wrap::{Wrapper, decisive_line, syslog};
use crate::{CountedLines, ParseStats};

/// The form a pgbouncer log was written in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BouncerForm {
    /// pgbouncer's `logfile` (or its stderr): `TIME [PID] LEVEL MESSAGE`.
    #[default]
    File,
    /// syslog as rsyslog writes it to a file (BSD or RFC 3339 stamps).
    Syslog,
    /// RFC 5424 syslog.
    Syslog5424,
    /// `journalctl -o short`, `short-iso`, `short-precise`.
    Journal,
    /// `journalctl -o json` or `json-pretty`.
    JournalJson,
}

impl std::str::FromStr for BouncerForm {
    type Err = String;

    /// `file` (or `stderr`), `syslog`, `syslog5424` (or `rfc5424`), `journal`,
    /// `journal_json` (or `journal-json`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "file" | "stderr" => BouncerForm::File,
            "syslog" => BouncerForm::Syslog,
            "syslog5424" | "rfc5424" => BouncerForm::Syslog5424,
            "journal" => BouncerForm::Journal,
            "journal_json" | "journal-json" => BouncerForm::JournalJson,
            other => return Err(format!("unknown pgbouncer log form {other:?}")),
        })
    }
}

/// Context for the pgbouncer log reader.
#[derive(Debug, Clone)]
pub struct BouncerOptions {
    /// The form; `None` chooses it from the first lines.
    pub form: Option<BouncerForm>,
    /// The year of BSD syslog and journal short stamps (which print none); `None` leaves
    /// them without a time unless [`BouncerOptions::collected_on`] is given.
    pub year: Option<i16>,
    /// The day the log was collected: stamps without a year take its year, or the year before
    /// for a day after it (a December line of a log collected in January).
    pub collected_on: Option<jiff::civil::Date>,
    /// Lines longer than this are cut (and counted). Default 64 KiB.
    pub max_line_bytes: usize,
}

impl Default for BouncerOptions {
    fn default() -> Self {
        Self {
            form: None,
            year: None,
            collected_on: None,
            max_line_bytes: 64 * 1024,
        }
    }
}

/// Everything read from one pgbouncer log (by [`parse`]), or the counts so far (by
/// [`BouncerReader::summary`], `records` empty).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BouncerLog {
    /// The form it was read in.
    pub form: BouncerForm,
    /// Records in input order.
    pub records: Vec<BouncerRecord>,
    /// What was understood and what was not.
    pub stats: ParseStats,
    /// TAB lines that continued a message (and the further lines of a journal entry).
    pub continuation_lines: u64,
    /// Empty lines.
    pub blank_lines: u64,
    /// syslog / journal lines of other programs, skipped.
    pub other_program_lines: u64,
    /// Stamps of the right shape that are no time (a month 13): the record is kept without a
    /// time.
    #[serde(skip_serializing_if = "CountedLines::is_empty")]
    pub unreadable_stamps: CountedLines,
    /// Records by event kind.
    pub events: BTreeMap<&'static str, u64>,
    /// Client connections closed, by cause ([`CloseCause`]).
    pub client_closings: BTreeMap<&'static str, u64>,
    /// Server connections closed, by cause.
    pub server_closings: BTreeMap<&'static str, u64>,
    /// `pooler error:` lines, by cause.
    pub pooler_errors: BTreeMap<&'static str, u64>,
}

/// Reads a whole pgbouncer log held in memory. Never fails and never panics: what cannot be
/// read is counted. Linear in the input; memory is the records.
pub fn parse(input: &[u8], options: &BouncerOptions) -> BouncerLog {
    let mut reader = BouncerReader::new(options.clone());
    let mut records = Vec::new();
    reader.push(input);
    reader.finish();
    while let Some(record) = reader.next_record() {
        records.push(*record);
    }
    let mut log = reader.summary();
    log.records = records;
    log
}

/// The form one line says its log is in, if it says: pgbouncer's own head, a syslog or
/// journal line (of any program: a system log holds others too), a journal JSON entry.
pub(crate) fn sniff_line(text: &str) -> Option<BouncerForm> {
    if text.trim().is_empty() {
        return None;
    }
    if grammar::head(text).is_ok() {
        return Some(BouncerForm::File);
    }
    match decisive_line(text) {
        Some(Wrapper::JournalJson) => return Some(BouncerForm::JournalJson),
        Some(Wrapper::JournalShort) => return Some(BouncerForm::Journal),
        _ => {}
    }
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') && text.contains("\"MESSAGE\"") {
        return Some(BouncerForm::JournalJson);
    }
    if text.starts_with('<') && syslog::split_rfc5424(text).is_some() {
        return Some(BouncerForm::Syslog5424);
    }
    let line = syslog::split(text)?;
    let stamp = line.stamp.unwrap_or("").as_bytes();
    // journalctl's marks: fractional seconds after a BSD stamp, an ISO offset without a colon.
    let bsd_fraction = stamp.len() > 16 && stamp[15] == b'.';
    let iso_offset_without_colon =
        stamp.len() > 20 && stamp[10] == b'T' && stamp[stamp.len() - 3] != b':';
    if bsd_fraction || iso_offset_without_colon {
        Some(BouncerForm::Journal)
    } else {
        Some(BouncerForm::Syslog)
    }
}

/// The form of a log from its first lines (the first line that says), `None` when none says.
pub fn sniff_form(head: &[u8]) -> Option<BouncerForm> {
    crate::lines::Lines::new(head)
        .take(200)
        .find_map(|line| sniff_line(cut(&line.text, 4096)))
}

/// How sure it is that `head` (the first few KiB of a file) is a pgbouncer log; `None` when
/// it is not one. The share of its non-blank lines (of the first 200, the last one ignored
/// when `head` ends inside it) that are pgbouncer's: a line with pgbouncer's own head, or a
/// syslog / journal line tagged `pgbouncer`.
pub fn sniff(head: &[u8]) -> Option<f32> {
    let complete = match memchr::memrchr(b'\n', head) {
        Some(last) if last + 1 < head.len() && head.len() >= 4096 => &head[..=last],
        _ => head,
    };
    let (mut lines, mut ours) = (0u32, 0u32);
    for line in crate::lines::Lines::new(complete).take(200) {
        let text = cut(&line.text, 4096);
        if text.trim().is_empty() {
            continue;
        }
        lines += 1;
        if is_pgbouncer_line(text) {
            ours += 1;
        }
    }
    (lines > 0 && ours > 0).then(|| ours as f32 / lines as f32)
}

/// Whether a line is pgbouncer's (own head, or a syslog / journal line of `pgbouncer`).
fn is_pgbouncer_line(text: &str) -> bool {
    if grammar::head(text).is_ok() {
        return true;
    }
    let tagged = |program: &str| program.starts_with("pgbouncer");
    if text.starts_with('<') {
        return syslog::split_rfc5424(text).is_some_and(|l| tagged(l.program));
    }
    if text.trim_start().starts_with('{') {
        return text.contains("\"SYSLOG_IDENTIFIER\":\"pgbouncer")
            || text.contains("\"_COMM\":\"pgbouncer");
    }
    syslog::split(text).is_some_and(|l| tagged(l.program))
}

#[cfg(test)]
mod tests;
