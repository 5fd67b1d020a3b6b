//! Wrappers taken off log lines in one place, below the PostgreSQL and kernel readers: a line
//! of a container runtime's log, a journal entry, a syslog relay's line, a cloud service's
//! JSON goes in, the line the program wrote comes out ([`Peeled`]) with what the wrapper said
//! of it (its time, program, PID). The readers then see the lines they know.
//!
//! | [`Wrapper`] | one entry |
//! |---|---|
//! | `DockerJson` | Docker's json-file driver: `{"log":"…\n","stream":"stderr","time":"2026-11-21T19:01:13.835739123Z"}` |
//! | `Cri` | containerd / CRI-O (`/var/log/pods/*/*.log`): `2026-11-21T19:01:13.835739123Z stderr F …` (`P` for a partial line) |
//! | `Timestamped` | `kubectl logs --timestamps`, `docker logs -t`: `2026-11-21T19:01:13.835739123Z …` |
//! | `JournalShort` | `journalctl -o short`, `short-iso`, `short-precise`: `Nov 21 19:01:13 dbhost postgres[1048]: …` |
//! | `JournalJson` | `journalctl -o json` (or `json-pretty`): `{"__REALTIME_TIMESTAMP":"…","_TRANSPORT":"kernel","MESSAGE":"…",…}` |
//! | `JournalExport` | `journalctl -o export`: `KEY=value` lines, an empty line between entries, binary fields as `KEY`, a 64-bit length and the bytes |
//! | `Syslog` | a syslog file as rsyslog writes it: `Nov 21 18:40:01 dbhost postgres[4242]: [5-1] …`, or with an RFC 3339 stamp |
//! | `Syslog5424` | an RFC 5424 relay: `<134>1 2026-11-21T19:01:13.835739+00:00 dbhost postgres 1048 - -  [5-1] …` |
//! | `Heroku` | `heroku logs`: `2026-11-21T19:01:25.603089+00:00 app[postgres.1911]: [DATABASE] [5-3] …` |
//! | `CloudSql` | Cloud Logging entries of Cloud SQL / AlloyDB: `{"textPayload":"…","timestamp":"…",…}` (or `jsonPayload`), one per line or a JSON array |
//! | `Cnpg` | CloudNativePG's instance manager: `{"level":"info","ts":…,"logger":"postgres","msg":"record","record":{csvlog columns}}` |
//! | `CloudWatch` | Amazon CloudWatch Logs of RDS / Aurora: `aws logs filter-log-events` / `get-log-events` JSON (`{"events":[{"timestamp":…,"message":"…"}]}`), or the console's CSV (`2024-10-02 13:00:00.000,"…",stream`) |
//! | `Azure` | Azure Monitor's exports of Azure Database for PostgreSQL: Log Analytics rows (`TimeGenerated`, `Message`, `errorLevel_s`, `processId_d`, …) as CSV or JSON, resource logs (`{"records":[{"time","category":"PostgreSQLLogs","properties":{…}}]}`) |
//!
//! Each is recognised by the shape of its first lines ([`sniff`]; the PostgreSQL reader also
//! recognises the older ones by its own first-line rules). A wrapper may cut a line in pieces
//! (Docker's entries without a final newline, CRI's `P` entries, syslog's `[N-M]` pieces) or
//! hold several lines in one entry (a journal entry's or a JSON payload's newlines): Docker's
//! and CRI's pieces are joined here; syslog's pieces and the further lines of an entry are
//! handed out one by one, each saying how it continues the one before ([`Part`]), since only
//! the reader knows whether it starts a line of its own. What a wrapper gives no line for (a
//! journal entry without `MESSAGE`, an entry that is not the wrapper's shape) is said by
//! [`PeeledKind`]: never dropped silently.
//!
//! Times are kept as the wrapper wrote them ([`Stamp`]) and read only when a reader asks
//! (most lines' times are never needed: only a record's first line's).

mod azure;
mod cloudwatch;
mod cnpg;
mod container;
mod csvrows;
mod heroku;
mod journal;
mod jsongather;
mod payload;
mod records;
pub(crate) mod syslog;

use std::borrow::Cow;

use jiff::Timestamp;
use jiff::tz::Offset;
use serde::Serialize;

pub use container::parse_rfc3339;

/// A wrapper around log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Wrapper {
    /// Docker's json-file logging driver (`/var/lib/docker/containers/ID/ID-json.log`).
    DockerJson,
    /// The CRI log format of containerd and CRI-O (`/var/log/pods/NS_POD_UID/CONTAINER/N.log`).
    Cri,
    /// An RFC 3339 UTC stamp before each line: `kubectl logs --timestamps`, `docker logs -t`.
    Timestamped,
    /// `journalctl -o json` (or `json-pretty`), one entry per line or spread over several.
    JournalJson,
    /// `journalctl -o export`: the journal's export format.
    JournalExport,
    /// RFC 5424 syslog as a relay writes it (`<PRI>1 TIME HOST APP PROCID MSGID SD MSG`).
    Syslog5424,
    /// A syslog file as rsyslog writes it: a BSD (`Nov 21 18:40:01`) or RFC 3339 stamp, the
    /// host, `program[pid]: `, control characters as `#011`.
    Syslog,
    /// `journalctl -o short`, `short-iso`, `short-precise`: syslog's header, a TAB that starts
    /// a message printed as eight spaces, `-- Boot … --` markers.
    #[serde(rename = "journal")]
    JournalShort,
    /// `heroku logs` (logplex): `TIME SOURCE[DYNO]: [ADDON] [N-M] TEXT`.
    Heroku,
    /// Google Cloud Logging entries of Cloud SQL or AlloyDB (`textPayload` or `jsonPayload`).
    #[serde(rename = "cloudsql")]
    CloudSql,
    /// CloudNativePG's JSON lines: the csvlog columns in `record`, the instance manager's own
    /// lines beside them.
    Cnpg,
    /// Amazon CloudWatch Logs' events of an RDS or Aurora log group, as JSON or the console's
    /// CSV.
    #[serde(rename = "cloudwatch")]
    CloudWatch,
    /// Azure Monitor's rows of Azure Database for PostgreSQL's `PostgreSQLLogs`, as CSV or
    /// JSON.
    Azure,
}

impl Wrapper {
    /// The name `--format` takes and reports print.
    pub fn as_str(self) -> &'static str {
        match self {
            Wrapper::DockerJson => "docker_json",
            Wrapper::Cri => "cri",
            Wrapper::Timestamped => "timestamped",
            Wrapper::JournalJson => "journal_json",
            Wrapper::JournalExport => "journal_export",
            Wrapper::Syslog5424 => "syslog5424",
            Wrapper::Syslog => "syslog",
            Wrapper::JournalShort => "journal",
            Wrapper::Heroku => "heroku",
            Wrapper::CloudSql => "cloudsql",
            Wrapper::Cnpg => "cnpg",
            Wrapper::CloudWatch => "cloudwatch",
            Wrapper::Azure => "azure",
        }
    }

    /// Whether its entries name the program that wrote them (journal, syslog, a Heroku dyno, a
    /// Cloud Logging log name, CloudNativePG's logger): a container's lines are all of the one
    /// program the container runs.
    pub fn names_programs(self) -> bool {
        !matches!(
            self,
            Wrapper::DockerJson | Wrapper::Cri | Wrapper::Timestamped | Wrapper::CloudWatch
        )
    }

    /// Whether an entry may spread over several physical lines (partial lines, export entries,
    /// pretty-printed JSON): then a physical line alone never says where an entry starts.
    pub fn spans_lines(self) -> bool {
        matches!(
            self,
            Wrapper::JournalExport
                | Wrapper::JournalJson
                | Wrapper::CloudSql
                | Wrapper::CloudWatch
                | Wrapper::Azure
        )
    }

    /// Whether it may relay the server's stderr lines with PostgreSQL's default prefix
    /// ([`Content::DefaultStderr`]).
    pub fn relays_default_stderr(self) -> bool {
        matches!(self, Wrapper::Cnpg | Wrapper::CloudSql)
    }
}

impl std::str::FromStr for Wrapper {
    type Err = String;

    /// The names [`Wrapper::as_str`] gives, `-` or `_` between words (`docker-json`,
    /// `journal_export`, …).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let name = s.replace('-', "_");
        [
            Wrapper::DockerJson,
            Wrapper::Cri,
            Wrapper::Timestamped,
            Wrapper::JournalJson,
            Wrapper::JournalExport,
            Wrapper::Syslog5424,
            Wrapper::Syslog,
            Wrapper::JournalShort,
            Wrapper::Heroku,
            Wrapper::CloudSql,
            Wrapper::Cnpg,
            Wrapper::CloudWatch,
            Wrapper::Azure,
        ]
        .into_iter()
        .find(|w| w.as_str() == name)
        .ok_or_else(|| format!("unknown log wrapper {s:?}"))
    }
}

/// Whether a program name is PostgreSQL's server (`postgres`, `postgresql-15`, `postmaster`).
pub fn is_postgres(program: &str) -> bool {
    program.starts_with("postgres") || program.starts_with("postmaster")
}

/// A wrapper's time as it wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written<'a> {
    /// RFC 3339: `2026-11-21T19:01:13.835739+00:00`, `…+0000`, `…Z`.
    Rfc3339(Cow<'a, str>),
    /// Microseconds since the epoch (the journal's `__REALTIME_TIMESTAMP`).
    EpochMicros(i64),
    /// A BSD stamp without year or zone (`Nov 21 19:01:13`, journalctl's
    /// `Nov 21 19:01:13.835739`): no time by itself; a reader that knows the year may read it.
    Bsd(Cow<'a, str>),
    /// A civil time written without a zone, known to be UTC (CloudWatch's console:
    /// `2024-10-02 13:00:00.000`).
    UtcCivil(Cow<'a, str>),
}

/// What the wrapper said of a line's time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stamp<'a> {
    /// When the wrapper received the line (a container runtime's time, the journal's
    /// `__REALTIME_TIMESTAMP`, the relay's header time), as written.
    pub written: Option<Written<'a>>,
    /// The kernel's monotonic time of the record in microseconds (the journal's
    /// `_SOURCE_MONOTONIC_TIMESTAMP` of a kernel entry).
    pub monotonic_us: Option<u64>,
}

/// A wrapper's time read: the instant, and the offset it was written at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrapperTime {
    /// The instant.
    pub utc: Timestamp,
    /// The civil time as the wrapper wrote it (at `offset`; in UTC for `Z` and epoch times).
    pub civil: jiff::civil::DateTime,
    /// The offset the wrapper wrote it at; `None` for UTC written as `Z` or as epoch time.
    pub offset: Option<WrittenOffset>,
}

/// A numeric UTC offset as written (`+00:00`, `+0000`, `-05:30`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WrittenOffset {
    /// Seconds east of UTC.
    pub seconds: i32,
    /// Written with a colon (`+02:00`) rather than without (`+0200`).
    pub colon: bool,
}

impl WrittenOffset {
    /// The offset as it was written.
    pub fn text(self) -> String {
        let sign = if self.seconds < 0 { '-' } else { '+' };
        let s = self.seconds.unsigned_abs();
        let (h, m) = (s / 3600, s % 3600 / 60);
        if self.colon {
            format!("{sign}{h:02}:{m:02}")
        } else {
            format!("{sign}{h:02}{m:02}")
        }
    }

    /// As a jiff offset.
    pub fn offset(self) -> Offset {
        Offset::from_seconds(self.seconds).unwrap_or(Offset::UTC)
    }
}

impl Stamp<'_> {
    /// The stamp without borrowing the line.
    pub fn into_owned(self) -> Stamp<'static> {
        Stamp {
            written: self.written.map(|w| match w {
                Written::Rfc3339(t) => Written::Rfc3339(Cow::Owned(t.into_owned())),
                Written::EpochMicros(us) => Written::EpochMicros(us),
                Written::Bsd(t) => Written::Bsd(Cow::Owned(t.into_owned())),
                Written::UtcCivil(t) => Written::UtcCivil(Cow::Owned(t.into_owned())),
            }),
            monotonic_us: self.monotonic_us,
        }
    }

    /// The wrapper's time, read; `None` when it wrote none or one that is no time.
    pub fn time(&self) -> Option<WrapperTime> {
        match self.written.as_ref()? {
            Written::Rfc3339(text) => container::rfc3339_with_offset(text),
            Written::EpochMicros(us) => {
                let utc = Timestamp::from_microsecond(*us).ok()?;
                Some(WrapperTime {
                    utc,
                    civil: Offset::UTC.to_datetime(utc),
                    offset: None,
                })
            }
            Written::UtcCivil(text) => {
                let civil: jiff::civil::DateTime = text.trim().parse().ok()?;
                Some(WrapperTime {
                    utc: Offset::UTC.to_timestamp(civil).ok()?,
                    civil,
                    offset: None,
                })
            }
            Written::Bsd(_) => None,
        }
    }

    /// The wrapper's time as an instant.
    pub fn utc(&self) -> Option<Timestamp> {
        self.time().map(|t| t.utc)
    }
}

/// How a line handed out continues the one before it of the same entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Part {
    /// The first (or only) line of an entry.
    #[default]
    First,
    /// A further piece of a line the relay cut at its length limit (syslog's `[N-M]`, M > 1):
    /// it continues the text without a newline, unless it starts a line of its own.
    Piece,
    /// A further line of an entry that held several (a journal entry's, a JSON payload's
    /// newlines): it continues the text after a newline, unless it starts a line of its own.
    NextLine,
}

/// What a line handed out holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Content {
    /// A line as the program wrote it.
    #[default]
    Text,
    /// A csvlog row rebuilt from the wrapper's fields (CloudNativePG's `record`): it may hold
    /// newlines inside its quoted fields.
    CsvRow,
    /// A line of the server's stderr with PostgreSQL's default `log_line_prefix` (`%m [%p] `),
    /// written before its logging collector took over (CloudNativePG's `postgres` logger
    /// without a `record`).
    DefaultStderr,
}

/// What one entry of a wrapped log holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PeeledKind<'a> {
    /// A line a program wrote.
    Line {
        /// The line, without the wrapper (a message over several lines is handed out one
        /// [`Peeled`] per line).
        text: Cow<'a, str>,
        /// The program that wrote it, when the wrapper names it (`kernel`, `postgres`, …).
        program: Option<Cow<'a, str>>,
        /// Its PID, when the wrapper names it.
        pid: Option<u32>,
        /// How it continues the line before it.
        part: Part,
        /// What it holds.
        content: Content,
    },
    /// A physical line that is part of an entry still being read (a partial line, a further
    /// line of a journal export entry or of a JSON entry over several lines, the `[`, `]` of a
    /// JSON array).
    Pending,
    /// An empty line.
    Blank,
    /// An entry with no line in it (a journal entry without `MESSAGE`, journalctl's
    /// `-- Boot … --` markers).
    Empty,
    /// Not the wrapper's shape.
    Unrecognized,
    /// A CSV export's header row naming its columns.
    Header,
    /// An entry over several physical lines given up (a JSON entry that does not parse, or
    /// that grew past the limit): its first line's text, the physical lines it took, and how
    /// many of them were handed out as [`PeeledKind::Pending`] before.
    Broken {
        /// The entry's first line.
        head: String,
        /// Physical lines it took.
        lines: u64,
        /// Of those, lines handed out as pending before.
        pending: u64,
    },
}

/// One line out of its wrapper.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Peeled<'a> {
    /// The physical line number of the entry's first line (the evidence's line).
    pub line: u64,
    /// What the entry holds.
    pub kind: PeeledKind<'a>,
    /// The wrapper's time.
    pub stamp: Stamp<'a>,
    /// The syslog severity the wrapper gives (RFC 5424's PRI modulo 8, the journal's
    /// `PRIORITY`): 2 critical, 3 error, 4 warning, 6 info, 7 debug.
    pub priority: Option<u8>,
}

impl<'a> Peeled<'a> {
    /// An entry of `kind` on `line` without a time.
    pub(crate) fn bare(line: u64, kind: PeeledKind<'a>) -> Self {
        Peeled {
            line,
            kind,
            stamp: Stamp::default(),
            priority: None,
        }
    }
}

/// How sure it is that `head` is wrapped, and in what: the wrapper most of its first 50
/// non-empty lines have the shape of (a journal export by its `__CURSOR=` /
/// `__REALTIME_TIMESTAMP=` fields). `None` for lines no wrapper fits. Only the wrappers every
/// line of which has the shape are voted for (container runtimes, journal JSON, RFC 5424); the
/// PostgreSQL reader recognises the others from its first lines.
pub fn sniff(head: &[u8]) -> Option<Wrapper> {
    let mut counts = [0usize; VOTED.len()];
    let mut lines = 0;
    for line in crate::lines::Lines::new(head).take(400) {
        let text = line.text.trim_end();
        if text.is_empty() {
            continue;
        }
        if journal::is_export_field(text) {
            if text.starts_with("__REALTIME_TIMESTAMP=") || text.starts_with("__CURSOR=") {
                return Some(Wrapper::JournalExport);
            }
            continue;
        }
        lines += 1;
        if let Some(w) = sniff_line(text)
            && let Some(i) = VOTED.iter().position(|v| *v == w)
        {
            counts[i] += 1;
        }
        if lines >= 50 {
            break;
        }
    }
    let (best, n) = counts
        .iter()
        .enumerate()
        .max_by_key(|(i, n)| (**n, std::cmp::Reverse(*i)))?;
    (*n > 0 && n * 2 >= lines).then(|| VOTED[best])
}

/// The wrappers [`sniff`] votes between, ties to the earlier.
const VOTED: [Wrapper; 5] = [
    Wrapper::DockerJson,
    Wrapper::Cri,
    Wrapper::Timestamped,
    Wrapper::JournalJson,
    Wrapper::Syslog5424,
];

/// The wrapper one line has the shape of.
fn sniff_line(text: &str) -> Option<Wrapper> {
    if text.starts_with('{') {
        if container::docker_entry(text).is_some() {
            return Some(Wrapper::DockerJson);
        }
        if text.contains("\"__REALTIME_TIMESTAMP\"") && text.contains("\"MESSAGE\"") {
            return Some(Wrapper::JournalJson);
        }
        return None;
    }
    if text.starts_with('<') {
        return syslog::split_rfc5424(text).map(|_| Wrapper::Syslog5424);
    }
    if container::cri_line(text).is_some() {
        return Some(Wrapper::Cri);
    }
    container::timestamped_line(text).map(|_| Wrapper::Timestamped)
}

/// The shape of one line of a wrapper that a single line can say for sure (the PostgreSQL
/// reader's first-line rules): a CloudWatch event or CSV row, an Azure row, a Cloud Logging entry, a CloudNativePG line, a journal JSON
/// entry (also the first field of `json-pretty`), an RFC 5424 line of `postgres`, a Heroku
/// line of a `postgres` dyno, a journalctl marker or a journal short line of `postgres` (its
/// stamp's fraction, an ISO stamp whose offset has no colon, a TAB printed as eight spaces).
/// Syslog lines that could be rsyslog's or journalctl's are `None`: [`is_postgres_syslog`]
/// says those.
pub fn decisive_line(text: &str) -> Option<Wrapper> {
    let trimmed = text.trim_start();
    if cloudwatch::is_csv_line(text) {
        return Some(Wrapper::CloudWatch);
    }
    if azure::is_azure_line(text) {
        return Some(Wrapper::Azure);
    }
    if trimmed.starts_with('{') || trimmed.starts_with('"') || text.contains(" {\"") {
        if cloudwatch::is_json_line(text) {
            return Some(Wrapper::CloudWatch);
        }
        if text.contains("\"textPayload\"") || payload::is_cloud_sql_json_payload(text) {
            return Some(Wrapper::CloudSql);
        }
        if text.contains("\"logging_pod") && text.contains("\"record\"") {
            return Some(Wrapper::Cnpg);
        }
        if text.contains("\"__REALTIME_TIMESTAMP\"") && text.contains("\"MESSAGE\"") {
            return Some(Wrapper::JournalJson);
        }
        if trimmed.starts_with("\"__REALTIME_TIMESTAMP\"") {
            return Some(Wrapper::JournalJson);
        }
    }
    if text.starts_with('<') {
        return syslog::split_rfc5424(text)
            .filter(|l| l.program.starts_with("postgres"))
            .map(|_| Wrapper::Syslog5424);
    }
    if let Some((_, dyno, _)) = heroku::header(text)
        && dyno.starts_with("postgres")
    {
        return Some(Wrapper::Heroku);
    }
    if text.starts_with("-- Boot ") || text.starts_with("-- Logs begin at ") {
        return Some(Wrapper::JournalShort);
    }
    let line = syslog::split(text).filter(|l| l.program.starts_with("postgres"))?;
    let stamp = line.stamp.unwrap_or("").as_bytes();
    let bsd_fraction = stamp.len() > 16 && stamp[15] == b'.';
    let iso_offset_without_colon =
        stamp.len() > 20 && stamp[10] == b'T' && stamp[stamp.len() - 3] != b':';
    let journal_tab = line.body.starts_with('\t') || line.body.starts_with("        ");
    if bsd_fraction || iso_offset_without_colon || journal_tab {
        return Some(Wrapper::JournalShort);
    }
    None
}

/// Whether `text` is a syslog line (BSD or RFC 3339 stamp) of a `postgres…` program.
pub fn is_postgres_syslog(text: &str) -> bool {
    syslog::split(text).is_some_and(|l| l.program.starts_with("postgres"))
}

/// Takes a wrapper off line after line.
#[derive(Debug)]
pub struct Peeler {
    wrapper: Wrapper,
    container: container::Partials,
    export: journal::ExportEntry,
    gather: jsongather::JsonGather,
    cloudwatch: Option<Box<cloudwatch::Reader>>,
    azure: Option<Box<azure::Reader>>,
    max_entry_bytes: usize,
}

impl Peeler {
    /// A peeler of `wrapper`; a partial line or an entry over several lines stops growing at
    /// `max_entry_bytes` (what follows is cut, and said in the entry's text; a JSON entry is
    /// given up).
    pub fn new(wrapper: Wrapper, max_entry_bytes: usize) -> Self {
        Peeler {
            wrapper,
            container: container::Partials::default(),
            export: journal::ExportEntry::default(),
            gather: jsongather::JsonGather::new(max_entry_bytes),
            cloudwatch: (wrapper == Wrapper::CloudWatch)
                .then(|| Box::new(cloudwatch::Reader::new(max_entry_bytes))),
            azure: (wrapper == Wrapper::Azure)
                .then(|| Box::new(azure::Reader::new(max_entry_bytes))),
            max_entry_bytes,
        }
    }

    /// The wrapper taken off.
    pub fn wrapper(&self) -> Wrapper {
        self.wrapper
    }

    /// True when no entry is half read (a partial line, an export entry, a JSON entry).
    pub fn is_idle(&self) -> bool {
        self.container.is_empty()
            && self.export.is_empty()
            && !self.gather.is_open()
            && self.cloudwatch.as_ref().is_none_or(|r| r.is_idle())
            && self.azure.as_ref().is_none_or(|r| r.is_idle())
    }

    /// True when both are idle (see [`Peeler::is_idle`]) and read further lines the same way: a
    /// cloud export's reader keeps its form, header and JSON state between entries.
    pub fn same_state(&self, other: &Peeler) -> bool {
        fn both<T>(a: &Option<Box<T>>, b: &Option<Box<T>>, same: impl Fn(&T, &T) -> bool) -> bool {
            match (a, b) {
                (Some(a), Some(b)) => same(a, b),
                (None, None) => true,
                _ => false,
            }
        }
        self.is_idle()
            && other.is_idle()
            && self.wrapper == other.wrapper
            && both(
                &self.cloudwatch,
                &other.cloudwatch,
                cloudwatch::Reader::same_state,
            )
            && both(&self.azure, &other.azure, azure::Reader::same_state)
    }

    /// Takes physical line `number` off its wrapper; `out` gets what it held (several lines
    /// when the entry held several, [`PeeledKind::Pending`] while an entry is still open).
    pub fn push(&mut self, number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
        match self.wrapper {
            Wrapper::DockerJson | Wrapper::Cri | Wrapper::Timestamped => {
                self.container
                    .push(self.wrapper, number, text, self.max_entry_bytes, out);
            }
            Wrapper::JournalJson | Wrapper::CloudSql => self.json(number, text, out),
            Wrapper::JournalExport => self.export.push(number, text, self.max_entry_bytes, out),
            Wrapper::Syslog5424 | Wrapper::Syslog | Wrapper::JournalShort => {
                syslog::line(self.wrapper, number, text, out);
            }
            Wrapper::Heroku => heroku::line(number, text, out),
            Wrapper::Cnpg => cnpg::line(number, text, out),
            Wrapper::CloudWatch => {
                if let Some(r) = &mut self.cloudwatch {
                    r.push(number, text, out);
                }
            }
            Wrapper::Azure => {
                if let Some(r) = &mut self.azure {
                    r.push(number, text, out);
                }
            }
        }
    }

    /// A line of a log of JSON entries, each on one line or spread over several.
    fn json(&mut self, number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
        use jsongather::Gathered;
        if text.trim().is_empty() && !self.gather.is_open() {
            out(Peeled::bare(number, PeeledKind::Blank));
            return;
        }
        let entry = |first_line: u64, entry: &str, out: &mut dyn FnMut(Peeled<'_>)| {
            if self.wrapper == Wrapper::CloudSql {
                payload::cloud_logging_entry(first_line, entry, out)
            } else {
                journal::json_entry(first_line, entry, out)
            }
        };
        match self.gather.push(number, text) {
            Gathered::Pending | Gathered::Syntax => {
                out(Peeled::bare(number, PeeledKind::Pending));
            }
            Gathered::NotJson => out(Peeled::bare(number, PeeledKind::Unrecognized)),
            Gathered::Broken {
                first_line,
                head,
                lines,
            } => out(Peeled::bare(
                first_line,
                PeeledKind::Broken {
                    head,
                    lines,
                    pending: lines.saturating_sub(1),
                },
            )),
            Gathered::Complete {
                first_line,
                text: whole,
                lines,
            } => {
                if !entry(first_line, &whole, out) {
                    out(Peeled::bare(
                        first_line,
                        PeeledKind::Broken {
                            head: whole.lines().next().unwrap_or("").to_owned(),
                            lines,
                            pending: lines.saturating_sub(1),
                        },
                    ));
                }
            }
        }
    }

    /// End of input: what an open entry held.
    pub fn finish(&mut self, out: &mut dyn FnMut(Peeled<'_>)) {
        self.container.finish(out);
        self.export.finish(out);
        if let Some(r) = &mut self.cloudwatch {
            r.finish(out);
        }
        if let Some(r) = &mut self.azure {
            r.finish(out);
        }
        if let Some((first_line, head, lines)) = self.gather.take_open() {
            out(Peeled::bare(
                first_line,
                PeeledKind::Broken {
                    head,
                    lines,
                    pending: lines,
                },
            ));
        }
    }
}

/// One line of text handed out.
pub(crate) fn text_line<'a>(
    line: u64,
    text: Cow<'a, str>,
    program: Option<Cow<'a, str>>,
    pid: Option<u32>,
    part: Part,
    stamp: Stamp<'a>,
) -> Peeled<'a> {
    Peeled {
        line,
        kind: PeeledKind::Line {
            text,
            program,
            pid,
            part,
            content: Content::Text,
        },
        stamp,
        priority: None,
    }
}

/// Splits a message that holds several lines into one [`Peeled`] per line (a journal entry or
/// a JSON payload may), the newline at its end dropped; the first line continues as `first`
/// says, the others are [`Part::NextLine`].
pub(crate) fn lines_of<'a>(
    line: u64,
    text: Cow<'a, str>,
    program: Option<Cow<'a, str>>,
    pid: Option<u32>,
    first: Part,
    stamp: Stamp<'a>,
    out: &mut dyn FnMut(Peeled<'_>),
) {
    let trimmed = text.strip_suffix('\n').unwrap_or(&text);
    let trimmed = trimmed.strip_suffix('\r').unwrap_or(trimmed);
    if memchr::memchr(b'\n', trimmed.as_bytes()).is_none() {
        out(text_line(
            line,
            Cow::Borrowed(trimmed),
            program,
            pid,
            first,
            stamp,
        ));
        return;
    }
    for (k, part) in trimmed.split('\n').enumerate() {
        out(text_line(
            line,
            Cow::Borrowed(part.strip_suffix('\r').unwrap_or(part)),
            program.clone(),
            pid,
            if k == 0 { first } else { Part::NextLine },
            stamp.clone(),
        ));
    }
}

#[cfg(test)]
mod tests;
