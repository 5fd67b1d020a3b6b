//! PostgreSQL server logs in all four destinations (stderr with a `log_line_prefix`, csvlog,
//! jsonlog, syslog) and seven languages (English and the catalogs' de, es, fr, ja, ru, zh_CN):
//! records with their DETAIL/HINT/CONTEXT/STATEMENT, and the events a diagnosis needs (crash
//! cycle, start and stop, memory, disk, load, integrity) classified with their fields
//! ([`PgEvent`]; catalog in docs/pglog-events.md).
//!
//! Three ways in, one engine: [`parse`] (everything in a [`PgLog`]), [`records`] (an iterator
//! over a buffer, memory bounded by a 16-record window) and [`PgLogReader`] (push chunks, pull
//! records: for files of any size). [`ParallelParser`] reads blocks on several threads with the
//! same result, and [`parse_reader`] drives either over a stream.
//!
//! # Formats
//!
//! [`PgLogOptions::format`] `None` sniffs it from the first lines ([`sniff_format`]): a line
//! starting `{"timestamp":"` is jsonlog, a `%m` stamp followed by a comma csvlog, a syslog
//! header (`Nov 21 18:40:01 host postgres[pid]: `) syslog, anything else stderr. Logs wrapped
//! by a log pipeline or a cloud service are read too, each by its envelope's shape (the name
//! is the `--format` value). Every wrapper, syslog's header included, is taken off by
//! [`crate::wrap`] below the stderr, csvlog and jsonlog readers (`peeled.rs`); these keep
//! their format names:
//!
//! * `syslog5424`: RFC 5424 syslog (`<134>1 2026-11-21T18:40:01.123456+00:00 host postgres 1234 - - …`);
//! * `journal`: `journalctl -o short`, `short-iso`, `short-precise` of the server's stderr or
//!   syslog; `journal_json`: `journalctl -o json` / `json-pretty`;
//! * `heroku`: `heroku logs` (`… app[postgres.1234]: [DATABASE] [5-1]  sql_error_code = …`);
//! * `cloudsql`: Google Cloud SQL's Cloud Logging entries (`textPayload`), one JSON per line or
//!   `gcloud logging read --format=json`'s array;
//! * `cnpg`: CloudNativePG's JSON lines (`"logger":"postgres"`, csvlog columns in `record`).
//!
//! Amazon RDS logs are stderr with `%t:%r:%u@%d:[%p]:`, one of [`CANDIDATE_PREFIXES`]. The
//! wrappers added since (container runtimes, journal exports, …) report the format inside and
//! the wrapper beside it ([`PgLog::wrapper`]).
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
//! * A line starting with spaces that neither fits the prefix nor is part of a memory-context
//!   dump continues the open text too (a TAB turned into spaces by an editor or a pipeline;
//!   eight leading spaces are read as the TAB).
//! * Attached secondary lines and TAB lines are counted in [`PgLog::continuation_lines`].
//! * What `pg_ctl` wrote into the log file (`pg_ctl: could not start server`, `Examine the log
//!   output.`, `waiting for server to start…`) is counted in [`PgLog::other_program_lines`].
//! * The un-prefixed `MemoryContextStats` dump written before `ERROR:  out of memory`
//!   (`TopMemoryContext: … total in … blocks; …`, `Grand total: …`) is recognised and counted
//!   in [`PgLog::memory_context_lines`]; it is not glued to any record.
//! * Empty lines are counted in [`PgLog::blank_lines`].
//! * Every other line (what a crashing library wrote, a TAB line with nothing open
//!   before it, a prefixed line with an unknown severity word) is counted in
//!   `stats.unrecognized_lines` with the first examples kept; it never joins a record.
//! * Lines longer than [`PgLogOptions::max_line_bytes`] are cut there (at a character
//!   boundary), counted in `stats.oversized_lines`, and parsed as cut; a record part stops
//!   growing at [`PgLogOptions::max_record_bytes`] (further lines counted the same way).
//! * The memory-context dump (lines counted in [`PgLog::memory_context_lines`]) is parsed into
//!   [`MemoryContextDump`] and moved into the `out of memory` record that follows it; a dump no
//!   such record follows stays a record of its own with `severity: null`.
//!
//! # Languages
//!
//! Severity words, `[unknown]` and every classified message are read through tables generated
//! from PostgreSQL's catalogs (`fixtures/record/pglog-translations.py` → `catalog.rs`): a
//! translated message is turned back into its English msgid with the same arguments, then
//! classified as English. The record's `language` says which catalog matched.

mod anatomy;
mod assemble;
#[rustfmt::skip]
mod catalog;
mod classify;
mod classify_storage;
mod csvlog;
mod json_line;
mod jsonlog;
mod memdump;
mod parallel;
mod peeled;
mod prefix;
mod prefix_infer;
mod prefix_tokens;
mod read;
mod severity;
mod stream;
mod texts;
pub(crate) mod time;
mod translate;
mod types;
mod unpaste;

pub use anatomy::{LineParts, PrefixName, catalog_translations, detect_log_prefix, named_messages};
pub use classify_storage::FileErrno;
pub use json_line::write_json;
pub use parallel::{ParallelParser, parse_parallel};
pub(crate) use peeled::wrapper_pg_time;
pub use prefix::LogLinePrefix;
pub use read::{ReadError, ReadOptions, parse_reader};
pub use severity::Tag as LineLabel;
pub use stream::{PgLogReader, PgRecords, records};
pub use texts::TextsCut;
pub use time::fixed_offset;
pub use translate::{PrintfPiece, printf_pieces};
pub use types::*;

use std::collections::BTreeMap;

use crate::lines::cut_at_char as cut;
use crate::paste::{Paste, PasteCounts, PasteReport};
use crate::{CountedLines, ParseStats};
use serde::Serialize;

/// The destination a log was written by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PgLogFormat {
    /// `log_destination = 'stderr'`: lines with a `log_line_prefix`.
    #[default]
    Stderr,
    /// `csvlog`: CSV rows.
    Csv,
    /// `jsonlog` (PG ≥ 15): a JSON object per line.
    Json,
    /// `syslog`, as written to a file by rsyslog (BSD or RFC 3339 stamps).
    Syslog,
    /// `syslog` in RFC 5424 form (`<134>1 2026-11-21T18:40:01.123456+00:00 host postgres 1234 - - …`).
    Syslog5424,
    /// `journalctl -o short` / `short-iso` / `short-precise` of the server's stderr or syslog.
    Journal,
    /// `journalctl -o json` (or `json-pretty`): `MESSAGE`, `_PID`, `SYSLOG_IDENTIFIER`,
    /// `__REALTIME_TIMESTAMP` of each entry.
    JournalJson,
    /// `heroku logs`: `2026-11-21T18:40:01.123456+00:00 app[postgres.1234]: [DATABASE] [5-1] …`.
    Heroku,
    /// Google Cloud SQL through Cloud Logging: `LogEntry` JSON whose `textPayload` is the line
    /// (one entry per line, or the array `gcloud logging read --format=json` prints).
    #[serde(rename = "cloudsql")]
    CloudSql,
    /// CloudNativePG's instance manager: `{"logger":"postgres","record":{csvlog columns}}`.
    Cnpg,
}

impl std::str::FromStr for PgLogFormat {
    type Err = String;

    /// `stderr`, `csv` (or `csvlog`), `json` (or `jsonlog`), `syslog`, `syslog5424` (or
    /// `rfc5424`), `journal`, `journal_json` (or `journal-json`), `heroku`, `cloudsql` (or
    /// `cloud-sql`), `cnpg` (or `cloudnativepg`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "stderr" => PgLogFormat::Stderr,
            "csv" | "csvlog" => PgLogFormat::Csv,
            "json" | "jsonlog" => PgLogFormat::Json,
            "syslog" => PgLogFormat::Syslog,
            "syslog5424" | "rfc5424" => PgLogFormat::Syslog5424,
            "journal" => PgLogFormat::Journal,
            "journal_json" | "journal-json" => PgLogFormat::JournalJson,
            "heroku" => PgLogFormat::Heroku,
            "cloudsql" | "cloud-sql" => PgLogFormat::CloudSql,
            "cnpg" | "cloudnativepg" => PgLogFormat::Cnpg,
            other => return Err(format!("unknown PostgreSQL log format {other:?}")),
        })
    }
}

/// Context for the PostgreSQL log parser.
#[derive(Debug, Clone)]
pub struct PgLogOptions {
    /// The server's `log_line_prefix` (stderr and syslog); `None` tries the defaults of each
    /// version. A prefix given here that fits none of the first lines is an error.
    pub prefix: Option<String>,
    /// The destination format; `None` sniffs it.
    pub format: Option<PgLogFormat>,
    /// The wrapper around the lines ([`crate::wrap`]: a container runtime's log, a journal
    /// export); `None` sniffs it (only when `format` is `None` too).
    pub wrapper: Option<crate::wrap::Wrapper>,
    /// Lines longer than this many bytes are cut (and counted). Default 1 MiB.
    pub max_line_bytes: usize,
    /// A record's message or secondary field stops growing at this many bytes (continuation
    /// lines beyond are counted in `stats.oversized_lines`). Default 64 MiB.
    pub max_record_bytes: usize,
}

impl Default for PgLogOptions {
    fn default() -> Self {
        Self {
            prefix: None,
            format: None,
            wrapper: None,
            max_line_bytes: 1024 * 1024,
            max_record_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Everything parsed out of one PostgreSQL log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PgLog {
    /// The `log_line_prefix` the lines were read with (empty for csvlog and jsonlog).
    pub prefix: String,
    /// The destination format the log was read as.
    pub format: PgLogFormat,
    /// The wrapper its lines were taken out of (a container runtime's log, a journal export),
    /// if any. Not serialised when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapper: Option<crate::wrap::Wrapper>,
    /// Records in input order.
    pub records: Vec<PgRecord>,
    /// What was understood and what was not.
    pub stats: ParseStats,
    /// Lines attached to a record as continuation (DETAIL, tab-indented lines, further lines
    /// of a csvlog row, …).
    pub continuation_lines: u64,
    /// Secondary lines (DETAIL, HINT, …) with no parent record to join; each became a record
    /// with `severity: null`.
    pub orphan_lines: u64,
    /// Lines of the un-prefixed `MemoryContextStats` dump that precedes `out of memory`.
    pub memory_context_lines: u64,
    /// Empty lines.
    pub blank_lines: u64,
    /// Lines of other programs, skipped: syslog or journal lines not tagged `postgres…`, other
    /// loggers of an envelope, what `pg_ctl` wrote into the log file.
    pub other_program_lines: u64,
    /// Header rows of a CSV export naming its columns (CloudWatch's, Azure's). Not serialised
    /// when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub header_lines: u64,
    /// csvlog rows given up because a quote never closed (their lines are in
    /// `stats.unrecognized_lines`).
    pub broken_rows: u64,
    /// Records whose stamp has the right shape (in the prefix, csvlog's first column,
    /// jsonlog's `timestamp`) but is no time (a month 13, an hour 99): kept without a time,
    /// counted here with the first few stamps, never read as another time.
    #[serde(skip_serializing_if = "CountedLines::is_empty")]
    pub unreadable_stamps: CountedLines,
    /// How `prefix` was chosen and how many of the first lines it fits (`None` for csvlog and
    /// jsonlog, which have no prefix).
    pub prefix_choice: Option<PrefixChoice>,
    /// What pasting the log into a ticket or a mail did to its lines (quote marks, code-block
    /// indentation, mail line wraps, cut marks, CRLF) and what was undone; `None` when nothing
    /// was ([`crate::paste`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pasted: Option<PasteReport>,
    /// Records by event kind ([`PgEvent::kind`]), for the records handed out so far.
    pub events: BTreeMap<&'static str, u64>,
    /// Records by the language their message was read in (only translated ones: `fr`, `de`,
    /// …), for the records handed out so far.
    pub languages: BTreeMap<&'static str, u64>,
}

/// How the `log_line_prefix` of a stderr or syslog log was chosen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PrefixChoice {
    /// `given` (the caller's), `candidate` (one of [`CANDIDATE_PREFIXES`]) or `inferred`
    /// (learned from the lines, when it fits more of them than any candidate).
    pub method: &'static str,
    /// Lines among the first [`DETECTION_LINES`] it was tried on (neither blank nor
    /// TAB-continued).
    pub lines_tried: u64,
    /// Of those, lines it fits (prefix, then a severity word).
    pub lines_fitting: u64,
}

/// Line counters shared by every format's reader.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Counters {
    pub(crate) stats: ParseStats,
    pub(crate) continuation_lines: u64,
    pub(crate) orphan_lines: u64,
    pub(crate) memory_context_lines: u64,
    pub(crate) blank_lines: u64,
    pub(crate) other_program_lines: u64,
    pub(crate) header_lines: u64,
    pub(crate) broken_rows: u64,
    pub(crate) unreadable_stamps: CountedLines,
    pub(crate) prefix_choice: Option<PrefixChoice>,
    /// What the paste did to the lines (learned from the first lines) and what was undone.
    pub(crate) paste_shape: Paste,
    pub(crate) paste: PasteCounts,
    pub(crate) events: NameCounts,
    pub(crate) languages: NameCounts,
}

impl Counters {
    /// Counts a record handed out: its event kind and its language.
    pub(crate) fn count(&mut self, record: &PgRecord) {
        if let Some(event) = &record.event {
            self.events.add(event.kind(), 1);
        }
        if let Some(language) = record.language {
            self.languages.add(language, 1);
        }
    }
}

/// Whether a count is 0 (for `skip_serializing_if`).
fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Counts by a static name (an event kind, a language), cheap on the hot path: a handful of
/// names, found by address before their text is compared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct NameCounts(Vec<(&'static str, u64)>);

impl NameCounts {
    /// Adds `n` (wrapping, so that a count can be taken back) to `name`.
    pub(crate) fn add(&mut self, name: &'static str, n: u64) {
        let found = self
            .0
            .iter()
            .position(|(k, _)| std::ptr::eq(k.as_ptr(), name.as_ptr()))
            .or_else(|| self.0.iter().position(|(k, _)| *k == name));
        match found {
            Some(i) => self.0[i].1 = self.0[i].1.wrapping_add(n),
            None => self.0.push((name, n)),
        }
    }

    /// The names and counts.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        self.0.iter().copied()
    }

    /// By name, without names counted 0.
    pub(crate) fn to_map(&self) -> BTreeMap<&'static str, u64> {
        let mut map = BTreeMap::new();
        for (name, n) in self.iter() {
            *map.entry(name).or_default() += n;
        }
        map.retain(|_, n| *n != 0);
        map
    }
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
    /// The `log_line_prefix` given fits none of the first lines of the log.
    #[error(
        "log_line_prefix {prefix:?} fits none of the first {lines_tried} lines; first line not \
         fitting (line {line_number}): {line:?}"
    )]
    PrefixMatchesNothing {
        /// The prefix given.
        prefix: String,
        /// How many lines were tried.
        lines_tried: u64,
        /// Number of the first non-empty line.
        line_number: u64,
        /// That line (cut to 200 bytes).
        line: String,
    },
}

/// The prefixes tried, in order of preference, when none is given: PostgreSQL ≥ 10's default,
/// the Debian/Ubuntu packages' default, common pgBadger and managed-service settings (Amazon
/// RDS `%t:%r:%u@%d:[%p]:`, Google Cloud SQL `%m [%p]: [%l-1] db=%d,user=%u `, Heroku's two),
/// and the empty prefix of PostgreSQL < 10.
pub const CANDIDATE_PREFIXES: &[&str] = &[
    "%m [%p] ",
    "%m [%p] %q%u@%d ",
    "%t [%p] ",
    "%t [%p]: [%l-1] ",
    "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
    "%t:%r:%u@%d:[%p]:",
    "%m [%p]: [%l-1] db=%d,user=%u ",
    " sql_error_code = %e ",
    " sql_error_code = %e time_ms = \"%m\" pid=\"%p\" proc_start_time=\"%s\" session_id=\"%c\" \
     vtid=\"%v\" tid=\"%x\" log_line=\"%l\" %qdatabase=\"%d\" connection_source=\"%r\" user=\"%u\" \
     application_name=\"%a\" ",
    "",
];

/// How many lines from the start are read to choose a prefix and a format.
pub(crate) const DETECTION_LINES: usize = 1000;

/// Parses a whole PostgreSQL log held in memory, in any format (see [`PgLogOptions::format`]).
///
/// Cost: one pass, one memchr per line; the prefix match is a handful of comparisons per line.
/// Memory: the records (owned strings). For bounded memory use [`records`] or [`PgLogReader`].
///
/// # Errors
/// [`PgLogError::InvalidPrefix`] when `options.prefix` does not compile,
/// [`PgLogError::PrefixMatchesNothing`] when it fits none of the first lines.
pub fn parse(input: &[u8], options: &PgLogOptions) -> Result<PgLog, PgLogError> {
    let mut iter = records(input, options)?;
    let records: Vec<PgRecord> = iter.by_ref().map(|r| *r).collect();
    let mut log = iter.summary();
    log.records = records;
    Ok(log)
}

/// Whether a `log_line_prefix` prints a time (`%m`, `%t`, `%n`).
pub(crate) fn has_time(prefix: &str) -> bool {
    let mut chars = prefix.chars();
    while let Some(c) = chars.next() {
        if c == '%' && matches!(chars.next(), Some('m' | 't' | 'n')) {
            return true;
        }
    }
    false
}

/// Picks the candidate prefix that fits the most of `lines` (ties go to the earlier); when
/// none fits them all, a prefix learned from the lines ([`prefix_infer`]) wins if it fits
/// more.
pub(crate) fn detect_prefix<'a>(
    lines: impl Iterator<Item = &'a str>,
) -> (LogLinePrefix, PrefixChoice) {
    let lines: Vec<&str> = lines
        .take(DETECTION_LINES)
        .filter(|l| !l.trim().is_empty() && !l.starts_with('\t'))
        .collect();
    let candidates: Vec<LogLinePrefix> = CANDIDATE_PREFIXES
        .iter()
        .filter_map(|p| LogLinePrefix::compile(p).ok())
        .collect();
    let mut scores = vec![0usize; candidates.len()];
    let tail_ok = |rest: &str| severity::split(rest).is_some();
    for text in &lines {
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
    let best_score = scores.get(best).copied().unwrap_or(0);
    let choice = |method, fitting: usize| PrefixChoice {
        method,
        lines_tried: lines.len() as u64,
        lines_fitting: fitting as u64,
    };
    // A candidate with a time stamp that fits at least half of the lines is kept over a
    // learned prefix without one: a few stamps out of range (a month 13, a year 99999) make
    // `%m` miss their lines, and the prefix learned to fit them too would cut every stamp
    // into other fields (the year as a session line, the month and day as a user name).
    let timed = |p: &LogLinePrefix| has_time(p.as_str());
    let candidate_holds = candidates.get(best).is_some_and(timed) && best_score * 2 >= lines.len();
    // A candidate with free text (`%u@%d`) may fit every line by taking more into a field
    // than the field printed (`postgres idle:` as the database of `%q%u@%d %i: `): a learned
    // prefix that fits as many lines and continues the candidate's text is the real one.
    let absorbs = candidates
        .get(best)
        .is_some_and(|c| c.has_free_text() && best_score > 0);
    if (best_score < lines.len() || absorbs)
        && let Some((learned, fits)) = prefix_infer::best(&lines)
    {
        let better = fits > best_score && (timed(&learned) || !candidate_holds);
        let longer = fits >= best_score
            && best_score > 0
            && candidates.get(best).is_some_and(|c| {
                learned.as_str().len() > c.as_str().len()
                    && learned.as_str().starts_with(c.as_str())
            });
        if better || longer {
            return (learned, choice("inferred", fits));
        }
    }
    let prefix = candidates
        .into_iter()
        .nth(best)
        .unwrap_or_else(LogLinePrefix::empty);
    (prefix, choice("candidate", best_score))
}

/// The destination format of a log, from its first lines (the first one that says: jsonlog,
/// csvlog, a syslog form, a journal form, an envelope); stderr when none does.
///
/// BSD-stamped syslog lines are rsyslog's or `journalctl -o short`'s: fractional seconds, an
/// ISO stamp whose offset has no colon (`+0000`), a message starting with a TAB or with the
/// eight spaces journalctl prints for one, or a `-- Boot … --` marker say journal; without any
/// of these in the first lines it is syslog (both read the same but for those TABs and
/// rsyslog's `#011`).
pub fn sniff_format(head: &[u8]) -> PgLogFormat {
    sniff_head(head).0
}

/// [`sniff_format`], with the wrapper that a first line names (the formats of old are both a
/// format and a wrapper; CloudWatch's and Azure's exports only a wrapper, their format stderr or
/// csvlog inside).
pub(crate) fn sniff_head(head: &[u8]) -> (PgLogFormat, Option<crate::wrap::Wrapper>) {
    let mut bsd_syslog = false;
    for line in crate::lines::Lines::new(head).take(DETECTION_LINES) {
        let text = cut(&line.text, 4096);
        if text.trim().is_empty() {
            continue;
        }
        if jsonlog::looks_like_line(text) {
            return (PgLogFormat::Json, None);
        }
        if let Some(wrapper) = crate::wrap::decisive_line(text) {
            match stream::legacy_format(wrapper) {
                Some(format) => return (format, Some(wrapper)),
                // CloudWatch's CSV has a csvlog-looking time before its first comma.
                None if !csvlog::looks_like_row(text)
                    || wrapper == crate::wrap::Wrapper::CloudWatch =>
                {
                    return (PgLogFormat::Stderr, Some(wrapper));
                }
                None => {}
            }
        }
        if csvlog::looks_like_row(text) {
            return (PgLogFormat::Csv, None);
        }
        if crate::wrap::is_postgres_syslog(text) {
            bsd_syslog = true;
            continue;
        }
        let tail_ok = |rest: &str| severity::split(rest).is_some();
        let prefixed = CANDIDATE_PREFIXES.iter().any(|p| {
            !p.is_empty()
                && LogLinePrefix::compile(p).is_ok_and(|c| c.match_line(text, &tail_ok).is_some())
        });
        if prefixed && !bsd_syslog {
            return (PgLogFormat::Stderr, None);
        }
    }
    if bsd_syslog {
        (PgLogFormat::Syslog, Some(crate::wrap::Wrapper::Syslog))
    } else {
        (PgLogFormat::Stderr, None)
    }
}

/// How sure it is that `head` (the first few KiB of a file) is a PostgreSQL log (stderr, or
/// csvlog / jsonlog / syslog with a `postgres` tag, which count fully); `None` when it is not one.
///
/// A line counts fully when it fits one of [`CANDIDATE_PREFIXES`] other than the empty one and
/// then a severity word, half when it merely holds `LOG:  `, `ERROR:  `, … somewhere (a prefix
/// no candidate fits, learned when the log is read), glued to the prefix or not. The confidence is the weighted share of non-empty lines, the last line
/// ignored when `head` ends inside it. Kernel lines (`[ 1234.567890] …`, `Apr  5 18:24:23 host
/// kernel: …`) never count.
pub fn sniff(head: &[u8]) -> Option<f32> {
    sniff_peeling(head, true)
}

/// [`sniff`], taking a wrapper off first when `peel` (one wrapper deep).
fn sniff_peeling(head: &[u8], peel: bool) -> Option<f32> {
    let complete = match memchr::memrchr(b'\n', head) {
        Some(last) if last + 1 < head.len() && head.len() >= 4096 => &head[..=last],
        _ => head,
    };
    let (format, _) = sniff_head(complete);
    match format {
        PgLogFormat::Stderr => {}
        // A journal export is PostgreSQL's when its entries are: it may hold only another
        // program's (pgbouncer's).
        PgLogFormat::JournalJson if !journal_names_postgres(complete) => return None,
        _ => return Some(1.0),
    }
    if let Some(wrapper) = stream::sniff_wrapper(complete).filter(|_| peel) {
        // A container's log, a cloud service's export, a journal export with the server's
        // lines: what the wrapper holds decides.
        let mut peeler = crate::wrap::Peeler::new(wrapper, 1 << 20);
        let mut inner = Vec::new();
        let mut rows = false;
        for line in crate::lines::Lines::new(complete) {
            peeler.push(line.number, &line.text, &mut |p| {
                if let crate::wrap::PeeledKind::Line {
                    text,
                    program,
                    content,
                    ..
                } = p.kind
                    && (!wrapper.names_programs()
                        || program.as_deref().is_some_and(crate::wrap::is_postgres))
                {
                    if content == crate::wrap::Content::Text {
                        inner.extend_from_slice(text.as_bytes());
                        inner.push(b'\n');
                    } else {
                        rows = true;
                    }
                }
            });
        }
        if rows {
            return Some(1.0);
        }
        return if inner.is_empty() {
            None
        } else {
            sniff_peeling(&inner, false)
        };
    }
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
        } else if has_severity_word(text)
            || (text.contains(":  ") && prefix_infer::prefix_instance(text).is_some())
        {
            // A prefix no candidate fits, maybe glued to its severity word (`…-LOG:  `).
            weight += 0.5;
        }
    }
    if lines == 0 || weight == 0.0 {
        return None;
    }
    Some((weight / lines as f32).min(1.0))
}

/// Whether a journal export's first entries name PostgreSQL as their program
/// (`SYSLOG_IDENTIFIER` or `_COMM`, in `-o json` or `json-pretty` spacing).
fn journal_names_postgres(head: &[u8]) -> bool {
    [
        &b"\"SYSLOG_IDENTIFIER\":\"postgres"[..],
        b"\"SYSLOG_IDENTIFIER\" : \"postgres",
        b"\"_COMM\":\"postgres",
        b"\"_COMM\" : \"postgres",
    ]
    .iter()
    .any(|key| memchr::memmem::find(head, key).is_some())
}

/// True when `LOG:  `, `ERROR:  `, … appears after a space or at the start of the line.
fn has_severity_word(text: &str) -> bool {
    memchr::memmem::find_iter(text.as_bytes(), b":  ").any(|colon| {
        let word_start = text[..colon].rfind([' ', ']', ':']).map_or(0, |i| i + 1);
        severity::split(&text[word_start..]).is_some()
    })
}

#[cfg(test)]
#[path = "wrapped_tests.rs"]
mod wrapped_tests;
