//! PostgreSQL lines inside another log's envelope: a line of that log is taken apart into the
//! PostgreSQL text it carries (with the PID and time the envelope gives) and that text goes to
//! the stderr assembler, like a syslog line's body (see `syslog.rs`). The same [`Splitter`]
//! takes other programs' lines out of syslog and journal envelopes (pgbouncer's, see
//! `crate::pgbouncer`): it is built for the program whose lines it hands on.
//!
//! | `--format`     | one line of the file                                                        |
//! |----------------|-----------------------------------------------------------------------------|
//! | `syslog5424`   | `<134>1 2026-11-21T19:01:13.835739+00:00 dbhost postgres 1048 - -  [5-1] …` |
//! | `journal`      | `Nov 21 19:01:13 dbhost postgres[1048]: 2026-11-21 19:01:13.835 UTC [1048] LOG:  …` (`journalctl -o short`, `short-iso`, `short-precise`) |
//! | `journal_json` | `{"__REALTIME_TIMESTAMP":"1795…","SYSLOG_IDENTIFIER":"postgres","MESSAGE":"…","_PID":"1048",…}` (`journalctl -o json`, or `json-pretty` over several lines) |
//! | `heroku`       | `2026-11-21T19:01:25.603089+00:00 app[postgres.1911]: [DATABASE] [5-3] …` (`heroku logs`) |
//! | `cloudsql`     | a Cloud Logging `LogEntry` whose `textPayload` is the PostgreSQL message, one per line or the JSON array `gcloud logging read --format=json` prints |
//!
//! Lines of other programs (another syslog tag or journal identifier, a Heroku dyno that is not
//! `postgres`, a `LogEntry` without `textPayload`) and journalctl's `-- Boot … --` markers are
//! counted in `other_program_lines`. journalctl's short forms print a TAB that starts a message
//! as eight spaces: such a line is read as PostgreSQL's TAB continuation. The further lines of a JSON entry written over several
//! lines, and the `[` / `]` around a JSON array, are counted in `continuation_lines`; so are
//! the further lines of a PostgreSQL message inside one JSON payload (a `textPayload` holding a
//! line and its TAB lines), which makes the counts add up to more than the physical lines.
//!
//! When the `log_line_prefix` has no time stamp (Heroku's ` sql_error_code = %e `), a record
//! takes the envelope's time (RFC 3339 stamps and the journal's microseconds; BSD stamps have
//! no year and are not used).

use std::borrow::Cow;
use std::collections::BTreeMap;

use jiff::Timestamp;
use jiff::tz::{Offset, TimeZone};
use serde::Deserialize;

use super::assemble::{Assembler, Join};
use super::jsongather::{Gathered, JsonGather};
use super::{Counters, PgLogFormat, PgRecord, PgTime, severity, syslog};

/// The time an envelope gives, converted only when a record needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stamp<'a> {
    /// `2026-11-21T19:01:13.835739+00:00`, `2026-11-21T19:01:13+0000`, `…Z`.
    Rfc3339(Cow<'a, str>),
    /// The journal's `__REALTIME_TIMESTAMP`: microseconds since the epoch.
    EpochMicros(i64),
    /// A BSD stamp without year or zone (`Nov 21 19:01:13`, journalctl's
    /// `Nov 21 19:01:13.835739`): never a time by itself; a reader that knows the year may read
    /// it.
    Bsd(&'a str),
}

impl Stamp<'_> {
    /// The time as a record holds it.
    pub(crate) fn to_time(&self) -> Option<PgTime> {
        match self {
            Stamp::Rfc3339(text) => rfc3339_time(text),
            Stamp::EpochMicros(us) => {
                let utc = Timestamp::from_microsecond(*us).ok()?;
                Some(PgTime {
                    civil: utc.to_zoned(TimeZone::UTC).datetime(),
                    zone: Some(Cow::Borrowed("UTC")),
                    utc: Some(utc),
                })
            }
            Stamp::Bsd(_) => None,
        }
    }
}

/// `2026-11-21T19:01:13.835739+00:00` (also `+0000` and `Z`) → its instant, the civil time
/// and the offset as written.
fn rfc3339_time(text: &str) -> Option<PgTime> {
    let b = text.as_bytes();
    let (zone, offset_seconds) = if let Some(stripped) = text.strip_suffix('Z') {
        (&text[stripped.len()..], 0)
    } else {
        let sign_at = text.rfind(['+', '-']).filter(|&i| i > 10)?;
        let digits: Vec<i32> = b[sign_at + 1..]
            .iter()
            .filter(|c| **c != b':')
            .map(|c| c.is_ascii_digit().then(|| i32::from(c - b'0')))
            .collect::<Option<_>>()?;
        let [h1, h2, m1, m2] = digits[..] else {
            return None;
        };
        let seconds = (h1 * 10 + h2) * 3600 + (m1 * 10 + m2) * 60;
        let sign = if b[sign_at] == b'-' { -1 } else { 1 };
        (&text[sign_at..], sign * seconds)
    };
    let offset = Offset::from_seconds(offset_seconds).ok()?;
    let civil: jiff::civil::DateTime = text[..text.len() - zone.len()].parse().ok()?;
    let utc = offset.to_timestamp(civil).ok()?;
    Some(PgTime {
        civil,
        zone: Some(Cow::Owned(zone.to_owned())),
        utc: Some(utc),
    })
}

/// One PostgreSQL line (or message: a JSON payload may hold several lines) out of its envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Inner<'a> {
    /// The line the envelope starts on (a JSON entry may span several).
    pub(crate) line: u64,
    /// The PID the envelope names (syslog PROCID, `_PID`, Heroku's `postgres.<pid>`).
    pub(crate) pid: Option<u32>,
    /// The piece M of syslog's `[N-M]` (1 when there is none).
    pub(crate) piece: u32,
    /// The PostgreSQL text.
    pub(crate) body: Cow<'a, str>,
    /// True when control characters are written as `#011` (rsyslog).
    pub(crate) escaped: bool,
    /// The envelope's time.
    pub(crate) stamp: Option<Stamp<'a>>,
    /// The syslog severity the envelope gives (RFC 5424's PRI modulo 8, the journal's
    /// `PRIORITY`): 2 critical, 3 error, 4 warning, 6 info, 7 debug.
    pub(crate) priority: Option<u8>,
}

/// What one line of a wrapped log holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unwrapped<'a> {
    /// The program's text (PostgreSQL's, or the program the splitter was built for).
    Message(Inner<'a>),
    /// A line of another program, or a journal marker.
    Other,
    /// A further line of a JSON entry still being gathered, or the `[`, `]` of an array.
    Gathering,
    /// An empty line.
    Blank,
    /// Not this envelope.
    Unrecognized,
    /// A JSON entry over several lines that does not parse or grew too long: its first line
    /// and how many lines it took.
    Broken {
        /// Where it started.
        first_line: u64,
        /// The first line's text.
        head: String,
        /// Lines it spanned.
        lines: u64,
    },
}

/// Takes one envelope format apart, line by line.
pub(crate) struct Splitter {
    format: PgLogFormat,
    gather: JsonGather,
    /// The syslog tag / journal identifier of the program whose lines are handed on (a tag
    /// that starts with it: `postgres`, `postgresql-15`); other programs' lines are
    /// [`Unwrapped::Other`].
    program: &'static str,
}

impl Splitter {
    /// A splitter of PostgreSQL's lines in `format` (one of the wrapped formats); JSON entries
    /// over several lines give up at `max_entry_bytes`.
    pub(crate) fn new(format: PgLogFormat, max_entry_bytes: usize) -> Self {
        Splitter::for_program(format, max_entry_bytes, "postgres")
    }

    /// A splitter of the lines of `program` (`pgbouncer`) in `format`: syslog (BSD or RFC
    /// 3339 stamps, rsyslog's `#011` escapes), `syslog5424`, `journal` or `journal_json`.
    pub(crate) fn for_program(
        format: PgLogFormat,
        max_entry_bytes: usize,
        program: &'static str,
    ) -> Self {
        Splitter {
            format,
            gather: JsonGather::new(max_entry_bytes),
            program,
        }
    }

    /// The PostgreSQL text of line `number`, or what else the line is.
    pub(crate) fn unwrap<'t>(&mut self, number: u64, text: &'t str) -> Unwrapped<'t> {
        if text.trim().is_empty() && !self.gather.is_open() {
            return Unwrapped::Blank;
        }
        match self.format {
            PgLogFormat::Syslog5424 => {
                from_syslog(number, syslog::split_rfc5424(text), true, self.program)
            }
            // PostgreSQL's own syslog files are read by `syslog.rs`: this is for other programs.
            PgLogFormat::Syslog => from_syslog(number, syslog::split(text), true, self.program),
            PgLogFormat::Journal if is_journal_marker(text) => Unwrapped::Other,
            PgLogFormat::Journal => {
                match from_syslog(number, syslog::split(text), false, self.program) {
                    Unwrapped::Message(inner) => Unwrapped::Message(journal_tab(inner)),
                    other => other,
                }
            }
            PgLogFormat::Heroku => heroku(number, text),
            PgLogFormat::CloudSql | PgLogFormat::JournalJson => {
                match self.gather.push(number, text) {
                    Gathered::Pending | Gathered::Syntax => Unwrapped::Gathering,
                    Gathered::NotJson => Unwrapped::Unrecognized,
                    Gathered::Broken {
                        first_line,
                        head,
                        lines,
                    } => Unwrapped::Broken {
                        first_line,
                        head,
                        lines,
                    },
                    Gathered::Complete {
                        first_line,
                        text: entry,
                        lines,
                    } => {
                        let parsed = if self.format == PgLogFormat::CloudSql {
                            cloudsql_entry(first_line, &entry)
                        } else {
                            journal_entry(first_line, &entry, self.program)
                        };
                        match parsed {
                            Some(u) => u,
                            None => Unwrapped::Broken {
                                first_line,
                                head: entry.lines().next().unwrap_or("").to_owned(),
                                lines,
                            },
                        }
                    }
                }
            }
            _ => Unwrapped::Unrecognized,
        }
    }

    /// The first line of a JSON entry still open at the end of the input, and its line count.
    pub(crate) fn finish(&mut self) -> Option<(u64, String, u64)> {
        self.gather.take_open()
    }
}

/// `-- Boot 0e5f… --`, `-- No entries --`, `-- Logs begin at … --`: journalctl's own lines.
fn is_journal_marker(text: &str) -> bool {
    text.starts_with("-- ") && text.ends_with(" --")
}

/// `journalctl -o short*` prints a TAB at the start of a message as eight spaces: PostgreSQL's
/// newline + TAB continuation lines come back as such.
// Nov 21 19:09:02 dbhost postgres[14709]:           FROM pgbench_accounts AS a, pg_sleep(600) AS s
fn journal_tab(mut inner: Inner<'_>) -> Inner<'_> {
    if let Some(rest) = inner.body.strip_prefix("        ") {
        inner.body = Cow::Owned(format!("\t{rest}"));
    }
    inner
}

/// A BSD or RFC 5424 syslog line (also journalctl's short forms) of `program`.
fn from_syslog<'t>(
    number: u64,
    line: Option<syslog::SyslogLine<'t>>,
    escaped: bool,
    program: &str,
) -> Unwrapped<'t> {
    let Some(line) = line else {
        return Unwrapped::Unrecognized;
    };
    if !line.program.starts_with(program) {
        return Unwrapped::Other;
    }
    let stamp = line.stamp.map(|s| {
        if s.as_bytes().get(10) == Some(&b'T') {
            Stamp::Rfc3339(Cow::Borrowed(s))
        } else {
            Stamp::Bsd(s)
        }
    });
    Unwrapped::Message(Inner {
        line: number,
        pid: line.pid,
        piece: line.sequence.map_or(1, |(_, m)| m),
        body: Cow::Borrowed(line.body),
        escaped,
        stamp,
        priority: line.priority,
    })
}

/// `heroku logs`: `TIME SOURCE[DYNO]: [ADDON COLOR] [N-M] TEXT`. PostgreSQL's dyno is
/// `postgres.<pid>`; other dynos (`heroku-postgres` metrics, `router`, `web.1`) are other
/// programs.
// 2026-11-21T19:01:25.603089+00:00 app[postgres.1911]: [DATABASE] [5-3] #011  FROM pgbench_accounts
fn heroku(number: u64, text: &str) -> Unwrapped<'_> {
    let Some((stamp, dyno, rest)) = heroku_header(text) else {
        return Unwrapped::Unrecognized;
    };
    let Some(pid) = dyno
        .strip_prefix("postgres")
        .map(|p| p.strip_prefix('.').and_then(|n| n.parse().ok()))
    else {
        return Unwrapped::Other;
    };
    let rest = addon_color(rest);
    let (sequence, body) = syslog::sequence(rest);
    let piece = sequence.map_or(1, |(_, m)| m);
    // A drain's copy prints the TAB that starts a further line of a message as eight spaces
    // (`[921320-2]         (`), as journalctl does.
    let body = match body.strip_prefix("        ") {
        Some(rest) if piece > 1 => Cow::Owned(format!("\t{rest}")),
        _ => Cow::Borrowed(body),
    };
    Unwrapped::Message(Inner {
        line: number,
        pid,
        piece,
        body,
        escaped: true,
        stamp: Some(Stamp::Rfc3339(Cow::Borrowed(stamp))),
        priority: None,
    })
}

// `2026-11-21T19:01:25.603089+00:00 app[postgres.1911]: ` → (stamp, `postgres.1911`, rest)
// A log drain's copy names the drain and drops the colon (pgBadger's `logplex` fixture):
// `2021-09-07T04:01:27+00:00 d.af28b93f-a129-45a1-87be-3f8a0cb710be app[postgres.5925] `
fn heroku_header(text: &str) -> Option<(&str, &str, &str)> {
    let (stamp, rest) = text.split_once(' ')?;
    let b = stamp.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' {
        return None;
    }
    let rest = match rest.split_once(' ') {
        Some((drain, after)) if drain.starts_with("d.") && !drain.contains('[') => after,
        _ => rest,
    };
    let (source, rest) = rest.split_once('[')?;
    if source.is_empty() || !source.bytes().all(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let (dyno, rest) = rest.split_once(']')?;
    let rest = rest.strip_prefix(':').unwrap_or(rest).strip_prefix(' ')?;
    if dyno.is_empty() || dyno.contains(' ') {
        return None;
    }
    Some((stamp, dyno, rest))
}

// `[DATABASE] ` / `[HEROKU_POSTGRESQL_CRIMSON] ` (the add-on's name) → the rest
fn addon_color(rest: &str) -> &str {
    let color = rest.strip_prefix('[').and_then(|r| r.split_once("] "));
    match color {
        Some((name, after))
            if !name.is_empty()
                && name
                    .bytes()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_') =>
        {
            after
        }
        _ => rest,
    }
}

/// The keys of a Cloud Logging `LogEntry` read here.
#[derive(Debug, Deserialize)]
struct LogEntry {
    #[serde(rename = "textPayload")]
    text_payload: Option<String>,
    timestamp: Option<String>,
    #[serde(rename = "logName")]
    log_name: Option<String>,
}

// {"insertId":"s=…;i=7","logName":"projects/p/logs/cloudsql.googleapis.com%2Fpostgres.log","resource":{…},"severity":"INFO","textPayload":"2026-11-21 19:02:19.187 UTC [5003]: [3-1] db=,user= LOG:  redo starts at 0/1D5A9D0","timestamp":"2026-11-21T19:02:19.187000Z"}
fn cloudsql_entry(first_line: u64, entry: &str) -> Option<Unwrapped<'static>> {
    let e: LogEntry = serde_json::from_str(entry).ok()?;
    let is_postgres = e.log_name.as_deref().is_none_or(|n| n.contains("postgres"));
    let Some(text) = e.text_payload.filter(|_| is_postgres) else {
        return Some(Unwrapped::Other);
    };
    let body = match text.strip_suffix('\n') {
        Some(t) => t.to_owned(),
        None => text,
    };
    Some(Unwrapped::Message(Inner {
        line: first_line,
        pid: None,
        piece: 1,
        body: Cow::Owned(body),
        escaped: false,
        stamp: e.timestamp.map(|t| Stamp::Rfc3339(Cow::Owned(t))),
        priority: None,
    }))
}

/// The journal fields read here (`journalctl -o json`; every value is a string, MESSAGE an
/// array of bytes when it is not valid UTF-8).
#[derive(Debug, Deserialize)]
struct JournalEntry {
    #[serde(rename = "MESSAGE")]
    message: Option<serde_json::Value>,
    #[serde(rename = "SYSLOG_IDENTIFIER")]
    identifier: Option<String>,
    #[serde(rename = "_COMM")]
    comm: Option<String>,
    #[serde(rename = "SYSLOG_PID")]
    syslog_pid: Option<String>,
    #[serde(rename = "_PID")]
    pid: Option<String>,
    #[serde(rename = "__REALTIME_TIMESTAMP")]
    realtime: Option<String>,
    #[serde(rename = "PRIORITY")]
    priority: Option<String>,
}

// {"__REALTIME_TIMESTAMP":"1795287673835912","SYSLOG_IDENTIFIER":"postgres","MESSAGE":"2026-11-21 19:01:13.835 UTC [1048] LOG:  server process (PID 1366) was terminated by signal 9: Killed","_PID":"1048"}
fn journal_entry(first_line: u64, entry: &str, program: &str) -> Option<Unwrapped<'static>> {
    let e: JournalEntry = serde_json::from_str(entry).ok()?;
    let identifier = e.identifier.or(e.comm).unwrap_or_default();
    if !identifier.starts_with(program) {
        return Some(Unwrapped::Other);
    }
    let message = match e.message? {
        serde_json::Value::String(s) => s,
        serde_json::Value::Array(bytes) => {
            let bytes: Vec<u8> = bytes
                .iter()
                .map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                .collect::<Option<_>>()?;
            String::from_utf8_lossy(&bytes).into_owned()
        }
        _ => return None,
    };
    let (sequence, body) = syslog::sequence(&message);
    let pid = e.syslog_pid.or(e.pid).and_then(|p| p.parse().ok());
    Some(Unwrapped::Message(Inner {
        line: first_line,
        pid,
        piece: sequence.map_or(1, |(_, m)| m),
        body: Cow::Owned(body.to_owned()),
        escaped: false,
        stamp: e
            .realtime
            .and_then(|t| t.parse().ok())
            .map(Stamp::EpochMicros),
        priority: e.priority.and_then(|p| p.parse().ok()),
    }))
}

/// The shape of one line, for [`super::sniff_format`]: `Some` when it says which wrapped
/// format the log is (decisively); syslog lines that could be rsyslog's or journalctl's (BSD
/// stamp, with or without `[N-M]`) are left to the caller. journalctl prints a TAB as eight
/// spaces, also after `[N-M] ` when PostgreSQL logged to journald's syslog socket.
pub(crate) fn sniff_line(text: &str) -> Option<PgLogFormat> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('"') || text.contains(" {\"") {
        if text.contains("\"textPayload\"") {
            return Some(PgLogFormat::CloudSql);
        }
        if text.contains("\"logging_pod") && text.contains("\"record\"") {
            return Some(PgLogFormat::Cnpg);
        }
        if text.contains("\"__REALTIME_TIMESTAMP\"") && text.contains("\"MESSAGE\"") {
            return Some(PgLogFormat::JournalJson);
        }
        if trimmed.starts_with("\"__REALTIME_TIMESTAMP\"") {
            return Some(PgLogFormat::JournalJson);
        }
    }
    if text.starts_with('<') {
        return syslog::split_rfc5424(text)
            .filter(|l| l.program.starts_with("postgres"))
            .map(|_| PgLogFormat::Syslog5424);
    }
    if let Some((_, dyno, _)) = heroku_header(text)
        && dyno.starts_with("postgres")
    {
        return Some(PgLogFormat::Heroku);
    }
    if text.starts_with("-- Boot ") || text.starts_with("-- Logs begin at ") {
        return Some(PgLogFormat::Journal);
    }
    let line = syslog::split(text).filter(|l| l.program.starts_with("postgres"))?;
    let stamp = line.stamp.unwrap_or("").as_bytes();
    let bsd_fraction = stamp.len() > 16 && stamp[15] == b'.';
    let iso_offset_without_colon =
        stamp.len() > 20 && stamp[10] == b'T' && stamp[stamp.len() - 3] != b':';
    let journal_tab = line.body.starts_with('\t') || line.body.starts_with("        ");
    if bsd_fraction || iso_offset_without_colon || journal_tab {
        return Some(PgLogFormat::Journal);
    }
    None
}

/// Reads a wrapped log: envelopes taken off by a [`Splitter`], PostgreSQL text assembled into
/// records by the stderr [`Assembler`].
pub(crate) struct WrappedReader {
    splitter: Splitter,
    assembler: Assembler,
    /// Envelope times by line, kept only when the prefix has no time of its own.
    times: BTreeMap<u64, PgTime>,
    keep_times: bool,
    max_entry_bytes: usize,
}

/// At most this many envelope times wait for their record.
const MAX_TIMES: usize = 4096;

impl WrappedReader {
    /// A reader of `format` feeding `assembler`.
    pub(crate) fn new(format: PgLogFormat, assembler: Assembler, max_entry_bytes: usize) -> Self {
        let prefix = assembler.prefix().as_str();
        let keep_times = !["%m", "%t", "%n"].iter().any(|e| prefix.contains(e));
        WrappedReader {
            splitter: Splitter::new(format, max_entry_bytes),
            assembler,
            times: BTreeMap::new(),
            keep_times,
            max_entry_bytes,
        }
    }

    /// A reader of the same format and prefix, at the start of a log.
    pub(crate) fn fresh(&self) -> Self {
        WrappedReader::new(
            self.splitter.format,
            self.assembler.fresh(),
            self.max_entry_bytes,
        )
    }

    /// True when both readers read further lines the same way: no JSON entry open, no
    /// envelope time waiting, the same assembler state.
    pub(crate) fn same_state(&self, other: &WrappedReader) -> bool {
        !self.splitter.gather.is_open()
            && !other.splitter.gather.is_open()
            && self.times.is_empty()
            && other.times.is_empty()
            && self.assembler.same_state(&other.assembler)
    }

    /// The `log_line_prefix` in use.
    pub(crate) fn prefix(&self) -> &str {
        self.assembler.prefix().as_str()
    }

    /// Counters so far.
    pub(crate) fn counters(&self) -> &Counters {
        self.assembler.counters()
    }

    /// Counters, to update.
    pub(crate) fn counters_mut(&mut self) -> &mut Counters {
        self.assembler.counters_mut()
    }

    /// Feeds one physical line.
    pub(crate) fn push(&mut self, number: u64, text: &str) {
        match self.splitter.unwrap(number, text) {
            Unwrapped::Message(inner) => self.feed(text, inner),
            Unwrapped::Other => self.counters_mut().other_program_lines += 1,
            Unwrapped::Gathering => self.counters_mut().continuation_lines += 1,
            Unwrapped::Blank => self.counters_mut().blank_lines += 1,
            Unwrapped::Unrecognized => self.counters_mut().stats.unrecognized(number, text),
            Unwrapped::Broken {
                first_line,
                head,
                lines,
            } => self.broken(first_line, &head, lines, lines.saturating_sub(1)),
        }
    }

    /// A JSON entry of `lines` lines given up: all are unrecognised, and the `counted` of them
    /// already counted as continuation lines while it was gathered no longer are.
    fn broken(&mut self, first_line: u64, head: &str, lines: u64, counted: u64) {
        let c = self.counters_mut();
        c.stats.unrecognized(first_line, head);
        c.stats.unrecognized_lines += lines.saturating_sub(1);
        c.continuation_lines = c.continuation_lines.saturating_sub(counted);
    }

    fn feed(&mut self, raw: &str, inner: Inner<'_>) {
        if self.keep_times
            && let Some(time) = inner.stamp.as_ref().and_then(Stamp::to_time)
        {
            if self.times.len() >= MAX_TIMES {
                self.times.pop_first();
            }
            self.times.entry(inner.line).or_insert(time);
        }
        let body = if inner.escaped {
            syslog::unescape(&inner.body)
        } else {
            Cow::Borrowed(inner.body.as_ref())
        };
        for (k, text) in body.split('\n').enumerate() {
            let piece = if k == 0 { inner.piece } else { 2 };
            let join = if k == 0 { Join::Direct } else { Join::Newline };
            feed_piece(
                &mut self.assembler,
                inner.line,
                raw,
                inner.pid,
                piece,
                join,
                text,
            );
        }
    }

    /// End of input.
    pub(crate) fn finish(&mut self) {
        if let Some((first_line, head, lines)) = self.splitter.finish() {
            self.broken(first_line, &head, lines, lines);
        }
        self.assembler.finish();
    }

    /// The next finished record, with the envelope's time when its prefix had none.
    pub(crate) fn pop(&mut self) -> Option<Box<PgRecord>> {
        let mut record = self.assembler.pop()?;
        if self.keep_times && !self.times.is_empty() {
            if record.time.is_none() {
                record.time = self.times.get(&record.line).cloned();
            }
            self.times = self.times.split_off(&record.line);
        }
        Some(record)
    }
}

/// One piece of PostgreSQL text to the assembler. A piece after the first (syslog's `[N-2]`,
/// a further line of a JSON payload) that neither starts with a TAB nor fits the prefix
/// continues the open text: `join` says how.
fn feed_piece(
    a: &mut Assembler,
    number: u64,
    raw: &str,
    pid: Option<u32>,
    piece: u32,
    join: Join,
    body: &str,
) {
    if piece > 1 && !body.starts_with('\t') {
        let tail_ok = |rest: &str| severity::split(rest).is_some();
        if a.prefix().match_line(body, &tail_ok).is_none() {
            if !a.continue_open(number, body, join) {
                a.counters_mut().stats.unrecognized(number, raw);
            }
            return;
        }
    }
    a.push(number, body, pid);
}

/// The PostgreSQL text of the first lines of a wrapped log (for choosing the prefix).
pub(crate) fn head_bodies(
    format: PgLogFormat,
    lines: impl Iterator<Item = (u64, String)>,
    max_entry_bytes: usize,
) -> Vec<(u64, String)> {
    let mut splitter = Splitter::new(format, max_entry_bytes);
    let mut out = Vec::new();
    for (number, text) in lines {
        if let Unwrapped::Message(inner) = splitter.unwrap(number, &text) {
            let body = if inner.escaped {
                syslog::unescape(&inner.body).into_owned()
            } else {
                inner.body.into_owned()
            };
            out.extend(body.split('\n').map(|l| (number, l.to_owned())));
        }
    }
    out
}

#[cfg(test)]
#[path = "envelope_tests.rs"]
mod tests;
