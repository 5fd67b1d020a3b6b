//! Realistic PostgreSQL logs for the benches and the command-line measurements
//! (docs/performance.md), made from the real logs in fixtures/.
//!
//! Two ways:
//!
//! - [`generate`]: records drawn at random (seeded, so the same options give the same bytes)
//!   from the real records of fixtures/ — their messages, DETAIL, HINT, STATEMENT and CONTEXT
//!   lines and TAB-continued lines kept as PostgreSQL wrote them — in a mix measured from those
//!   logs by `measure_mix.py` (beside this file), and written with a `log_line_prefix` of your
//!   choice, its fields (time, pid, user, database, application, client, session id, line
//!   numbers, transaction ids, SQLSTATE) made up per session, as csvlog or jsonlog rows, or
//!   each stderr line in a wrapper (Docker json-file, CRI, `journalctl -o export` and
//!   `-o short-iso`, RFC 3164 and RFC 5424 syslog as rsyslog writes them);
//! - [`concatenated`]: real captures put end to end as they are, times moved forward.
//!
//! The mix (`python3 crates/parse/benches/realistic/measure_mix.py`, 2026-12-07): of the
//! records in pgBadger's reference logs of users' busy servers (20.99 MB, 119 059 prefixed
//! lines; rds.log alone 114 604 lines), 96.87 % are `duration: … statement:` lines, 2.99 %
//! autovacuum reports (TAB lines each: median 10, max 55), 0.07 % checkpoints, the rest
//! connections, temporary files, errors and `DETAIL:  parameters:`; statements are 68 bytes
//! at the median, 104 at p90, 408 at p99.9, 7 141 at most. Our own captures and the prefix
//! captures (68 files, 4 510 prefixed lines) are session and failure events: connections
//! 32 %, other LOG lines 30 %, disconnections 11 %, FATAL 7 %, ERROR 5 % (80 % of them with
//! their STATEMENT), checkpoints 7 %, WARNING, temporary files. The generator draws four
//! records in five from the busy servers' mix and one from our captures', per 10 000 records:
//! 7 751 statements with their duration, 688 connection lines, 638 other LOG lines, 240
//! autovacuum reports, 229 disconnections, 160 FATAL, 154 checkpoint lines, 108 ERROR, 25
//! WARNING, 8 temporary files ([`MIX`]); each record comes with the lines that followed it in
//! its capture (a STATEMENT, a DETAIL, TAB lines). Records of a kind are drawn from all the
//! captures of that kind, so the statements' lengths and TAB lines are the captures'.
//!
//! Only English captures are used; the PANIC records of the captures (2) are left out, since a
//! PANIC ends the server.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The `log_line_prefix` settings the benches measure, by name: Debian's and Ubuntu's default,
/// RHEL's (and PostgreSQL's own since 13), the one pgBadger recommends, the RDS and Aurora
/// default, and two with session fields (`%e %c %l`, `%x %v`) as captured in
/// fixtures/formats/pglog/prefixes.
pub const PREFIXES: &[(&str, &str)] = &[
    ("debian", "%m [%p] %q%u@%d "),
    ("rhel", "%m [%p] "),
    (
        "pgbadger",
        "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h ",
    ),
    ("rds", "%t:%r:%u@%d:[%p]:"),
    ("sqlstate-session-line", "%m [%p] %e %c %l "),
    ("xid-vxid", "%m [%p] %x %v "),
];

/// The prefix of a name in [`PREFIXES`], or the text itself (a custom prefix).
pub fn prefix_named(name: &str) -> &str {
    PREFIXES
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(name, |(_, p)| p)
}

/// What the log is written as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `log_destination = stderr`, with the prefix.
    Stderr,
    /// `csvlog` (PostgreSQL 15's 26 columns).
    Csvlog,
    /// `jsonlog` (PostgreSQL 15's keys).
    Jsonlog,
    /// Each stderr line in Docker's json-file log.
    DockerJson,
    /// Each stderr line in a CRI log (containerd, CRI-O).
    Cri,
    /// Each stderr line an entry of `journalctl -o export` (stdout transport).
    JournalExport,
    /// Each stderr line as `journalctl -o short-iso` prints it.
    JournalShortIso,
    /// `log_destination = syslog`, as an rsyslog relay writes RFC 3164.
    Syslog3164,
    /// `log_destination = syslog`, as an rsyslog relay writes RFC 5424.
    Syslog5424,
}

/// The formats by the names the example and the benches use.
pub const FORMATS: &[(&str, Format)] = &[
    ("stderr", Format::Stderr),
    ("csvlog", Format::Csvlog),
    ("jsonlog", Format::Jsonlog),
    ("docker-json", Format::DockerJson),
    ("cri", Format::Cri),
    ("journal-export", Format::JournalExport),
    ("journal-short-iso", Format::JournalShortIso),
    ("syslog-3164", Format::Syslog3164),
    ("syslog-5424", Format::Syslog5424),
];

/// The kinds of record the mix counts (as `measure_mix.py` names them) and how many of each
/// are drawn per 10 000 records.
pub const MIX: &[(&str, u32)] = &[
    ("duration with statement", 7751),
    ("connection", 688),
    ("other LOG", 638),
    ("autovacuum", 240),
    ("disconnection", 229),
    ("FATAL", 160),
    ("checkpoint", 154),
    ("ERROR", 108),
    ("WARNING", 25),
    ("temporary file", 8),
];

/// Kinds written by a backend of a client session (the others by the postmaster, the
/// checkpointer, the startup process or an autovacuum worker: no user, no database; `%q`
/// stops the prefix there).
const SESSION_KINDS: &[&str] = &[
    "duration with statement",
    "connection",
    "disconnection",
    "FATAL",
    "ERROR",
    "temporary file",
];

const SECONDARY: &[&str] = &[
    "DETAIL",
    "HINT",
    "STATEMENT",
    "CONTEXT",
    "QUERY",
    "LOCATION",
];
const SEVERITIES: &[&str] = &[
    "LOG",
    "ERROR",
    "FATAL",
    "PANIC",
    "WARNING",
    "NOTICE",
    "INFO",
    "DEBUG1",
    "DEBUG2",
    "DEBUG3",
    "DEBUG4",
    "DEBUG5",
    "DEBUG",
    "DETAIL",
    "HINT",
    "STATEMENT",
    "CONTEXT",
    "QUERY",
    "LOCATION",
];

/// Options of [`generate`].
#[derive(Clone, Debug)]
pub struct Options {
    /// The `log_line_prefix` (stderr and the wrappers; csvlog and jsonlog have none).
    pub prefix: String,
    /// What the log is written as.
    pub format: Format,
    /// Bytes to write at least (the record that passes it is written whole).
    pub size: usize,
    /// The seed of the draws.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            prefix: "%m [%p] %q%u@%d ".into(),
            format: Format::Stderr,
            size: 1 << 20,
            seed: 27,
        }
    }
}

/// fixtures/formats/pglog, where the real logs are.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/pglog")
}

/// A log under [`fixtures`], decompressed when its name ends in `.gz` or `.bz2`.
pub fn read_fixture(name: &str) -> Vec<u8> {
    let path = fixtures().join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    if name.ends_with(".bz2") {
        bzip2::read::BzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .expect("bzip2");
    } else if name.ends_with(".gz") {
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .expect("gzip");
    } else {
        out = bytes;
    }
    out
}

/// The captures the records are drawn from: the same as `measure_mix.py` reads.
fn corpus_files() -> Vec<String> {
    let mut names = Vec::new();
    let mut ours: Vec<String> = std::fs::read_dir(fixtures())
        .expect("fixtures/formats/pglog")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("pg") && n.ends_with(".log"))
        .filter(|n| {
            !(n.contains("journal")
                || n.contains("rds")
                || n.contains("fr-c-ctype")
                || ["-de-", "-es-", "-fr-", "-ja-", "-ru-", "-zh_CN-"]
                    .iter()
                    .any(|l| n.contains(l)))
        })
        .collect();
    ours.push("pg15-rds-sigkill.log".into());
    ours.sort();
    names.extend(ours);
    let mut prefixes: Vec<String> = std::fs::read_dir(fixtures().join("prefixes"))
        .expect("fixtures/formats/pglog/prefixes")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".log"))
        .map(|n| format!("prefixes/{n}"))
        .collect();
    prefixes.sort();
    names.extend(prefixes);
    for n in [
        "begin_end.log",
        "light.postgres.log.bz2",
        "multiline_param.log",
        "pg_rawcsv.log",
        "pg_vacuums.log.gz",
        "postgresql_param_range.log",
        "queryid.log.gz",
        "rds.log.bz2",
        "stmt_type.log",
        "tempfile_only.log.gz",
    ] {
        names.push(format!("pgbadger/{n}"));
    }
    names
}

/// One line of a record: its severity word and its text, TAB lines included (`\n\t…`).
#[derive(Clone, Debug)]
struct Line {
    severity: &'static str,
    text: String,
}

/// A record as a capture holds it: its first line and the lines of their own that followed.
type Record = Vec<Line>;

/// Where the severity word is in a line (`LOG:  `), as `measure_mix.py` finds it.
fn find_severity(line: &str) -> Option<(usize, &'static str)> {
    let mut from = 0;
    while let Some(at) = line[from..].find(":  ") {
        let end = from + at;
        let start = line[..end]
            .rfind(|c: char| !c.is_ascii_alphanumeric())
            .map_or(0, |i| i + 1);
        if let Some(s) = SEVERITIES.iter().find(|s| **s == &line[start..end]) {
            return Some((start, s));
        }
        from = end + 3;
    }
    None
}

fn kind_of(severity: &str, text: &str) -> String {
    let head = &text[..text.len().min(60)];
    if head.contains("duration: ") && head.contains(" ms  ") {
        return if text.contains("statement: ") || text.contains("execute ") {
            "duration with statement".into()
        } else {
            "duration".into()
        };
    }
    let starts = |p: &str| text.starts_with(p);
    if starts("statement: ") {
        "statement".into()
    } else if starts("connection received") || starts("connection authorized") {
        "connection".into()
    } else if starts("disconnection: ") {
        "disconnection".into()
    } else if starts("checkpoint") {
        "checkpoint".into()
    } else if starts("automatic vacuum") || starts("automatic analyze") {
        "autovacuum".into()
    } else if starts("temporary file: ") {
        "temporary file".into()
    } else if ["ERROR", "FATAL", "PANIC", "WARNING"].contains(&severity) {
        severity.into()
    } else {
        format!("other {severity}")
    }
}

/// The real records of the captures, by kind.
pub struct Corpus {
    kinds: Vec<(&'static str, u32, Vec<Record>)>,
}

impl Corpus {
    /// Reads the captures (about 21 MB, a second or so).
    pub fn load() -> Corpus {
        let mut by_kind: HashMap<String, Vec<Record>> = HashMap::new();
        for name in corpus_files() {
            let bytes = read_fixture(&name);
            let text = String::from_utf8_lossy(&bytes);
            let mut current: Option<(String, Record)> = None;
            for line in text.split('\n') {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if line.is_empty() {
                    continue;
                }
                let tab = line
                    .strip_prefix('\t')
                    .or_else(|| line.strip_prefix("        "));
                if let Some(rest) = tab {
                    if let Some((_, record)) = current.as_mut() {
                        let last = record.last_mut().expect("a line");
                        last.text.push_str("\n\t");
                        last.text.push_str(rest);
                    }
                    continue;
                }
                let Some((at, severity)) = find_severity(line) else {
                    continue;
                };
                let text = line[at + severity.len() + 3..].to_string();
                if SECONDARY.contains(&severity) {
                    if let Some((_, record)) = current.as_mut() {
                        record.push(Line { severity, text });
                    }
                    continue;
                }
                if let Some((kind, record)) = current.take() {
                    by_kind.entry(kind).or_default().push(record);
                }
                current = Some((kind_of(severity, &text), vec![Line { severity, text }]));
            }
            if let Some((kind, record)) = current.take() {
                by_kind.entry(kind).or_default().push(record);
            }
        }
        let kinds = MIX
            .iter()
            .map(|(kind, weight)| {
                let records = by_kind.remove(*kind).unwrap_or_default();
                assert!(!records.is_empty(), "no {kind} record in the captures");
                (*kind, *weight, records)
            })
            .collect();
        Corpus { kinds }
    }

    /// How many records of each kind the captures hold.
    pub fn counts(&self) -> Vec<(&'static str, usize)> {
        self.kinds.iter().map(|(k, _, r)| (*k, r.len())).collect()
    }
}

/// splitmix64: small, fast, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `YYYY-MM-DD HH:MM:SS` of a UNIX second (civil_from_days, H. Hinnant).
fn civil(second: i64) -> (i64, u32, u32, u32, u32, u32) {
    let days = second.div_euclid(86_400);
    let rem = second.rem_euclid(86_400) as u32;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rem / 3600, rem / 60 % 60, rem % 60)
}

fn stamp_second(second: i64) -> String {
    let (y, mo, d, h, mi, s) = civil(second);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// A client session: the prefix's fields for its lines.
struct Session {
    pid: u32,
    user: &'static str,
    database: &'static str,
    application: &'static str,
    host: &'static str,
    port: u32,
    start: i64,
    line: u64,
    vxid: u64,
}

const USERS: &[&str] = &["app", "postgres", "reporting", "billing"];
const DATABASES: &[&str] = &["shop", "postgres", "analytics"];
const APPLICATIONS: &[&str] = &["web", "pgbench", "psql", "[unknown]"];
const HOSTS: &[&str] = &["10.0.3.17", "10.0.3.18", "[local]", "192.168.40.12"];
/// Sessions open at a time.
const SESSIONS: usize = 48;
/// Where the log starts: 2026-11-02 08:00:00 UTC.
const START: i64 = 1_793_606_400;

/// The writer's state: the time, the sessions, the background processes' lines.
struct Writer<'a> {
    options: &'a Options,
    rng: Rng,
    millis: i64,
    second_text: (i64, String),
    sessions: Vec<Session>,
    next_pid: u32,
    background: Session,
    syslog_seq: HashMap<u32, u64>,
    xid: u64,
    out: Vec<u8>,
    /// The stderr lines of the record being written (for the wrappers).
    lines: Vec<u8>,
}

impl<'a> Writer<'a> {
    fn new(options: &'a Options) -> Self {
        let mut rng = Rng(options.seed);
        let mut next_pid = 4100;
        let background = Session {
            pid: 4000,
            user: "",
            database: "",
            application: "",
            host: "",
            port: 0,
            start: START,
            line: 0,
            vxid: 0,
        };
        let sessions = (0..SESSIONS)
            .map(|_| {
                next_pid += 1 + rng.below(7) as u32;
                new_session(&mut rng, next_pid, START)
            })
            .collect();
        Writer {
            options,
            rng,
            millis: START * 1000,
            second_text: (START, stamp_second(START)),
            sessions,
            next_pid,
            background,
            syslog_seq: HashMap::new(),
            xid: 731_000,
            out: Vec::with_capacity(options.size + (1 << 20)),
            lines: Vec::new(),
        }
    }

    fn second(&mut self) -> &str {
        let s = self.millis.div_euclid(1000);
        if self.second_text.0 != s {
            self.second_text = (s, stamp_second(s));
        }
        &self.second_text.1
    }

    /// `%m`.
    fn stamp_millis(&mut self) -> String {
        let ms = self.millis.rem_euclid(1000);
        format!("{}.{ms:03} UTC", self.second())
    }
}

fn new_session(rng: &mut Rng, pid: u32, start: i64) -> Session {
    Session {
        pid,
        user: USERS[rng.below(USERS.len() as u64) as usize],
        database: DATABASES[rng.below(DATABASES.len() as u64) as usize],
        application: APPLICATIONS[rng.below(APPLICATIONS.len() as u64) as usize],
        host: HOSTS[rng.below(HOSTS.len() as u64) as usize],
        port: 40_000 + rng.below(20_000) as u32,
        start,
        line: 0,
        vxid: 1,
    }
}

/// The fields of one line's prefix.
struct Fields<'s> {
    session: &'s Session,
    in_session: bool,
    sqlstate: &'s str,
    xid: u64,
    stamp_millis: &'s str,
    stamp_second: &'s str,
    millis: i64,
    backend: u32,
}

/// Writes `log_line_prefix` as PostgreSQL 15 does (elog.c `log_line_prefix`), for the escapes
/// people use; padding (`%-10u`) is not written.
fn write_prefix(out: &mut Vec<u8>, prefix: &str, f: &Fields<'_>) {
    let mut chars = prefix.chars();
    let s = f.session;
    while let Some(c) = chars.next() {
        if c != '%' {
            let mut b = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            continue;
        }
        let Some(e) = chars.next() else { break };
        let text: String = match e {
            'm' => f.stamp_millis.into(),
            't' => format!("{} UTC", f.stamp_second),
            'n' => format!("{}.{:03}", f.millis / 1000, f.millis % 1000),
            'p' => s.pid.to_string(),
            'u' if f.in_session => s.user.into(),
            'd' if f.in_session => s.database.into(),
            'a' if f.in_session => s.application.into(),
            'h' if f.in_session => s.host.into(),
            'r' if f.in_session && s.host == "[local]" => "[local]".into(),
            'r' if f.in_session => format!("{}({})", s.host, s.port),
            'u' | 'd' | 'a' | 'h' | 'r' => String::new(),
            'l' => s.line.to_string(),
            'c' => format!("{:x}.{:x}", s.start, s.pid),
            's' => format!("{} UTC", stamp_second(s.start)),
            'e' => f.sqlstate.into(),
            'x' => f.xid.to_string(),
            'v' if f.in_session => format!("{}/{}", f.backend, s.vxid),
            'v' => String::new(),
            'b' if f.in_session => "client backend".into(),
            'b' => "postmaster".into(),
            'i' if f.in_session => "SELECT".into(),
            'i' => String::new(),
            'Q' => "0".into(),
            'q' if !f.in_session => return,
            'q' => String::new(),
            '%' => "%".into(),
            other => format!("%{other}"),
        };
        out.extend_from_slice(text.as_bytes());
    }
}

fn sqlstate(severity: &str, text: &str) -> &'static str {
    match severity {
        "ERROR" if text.contains("does not exist") => "42P01",
        "ERROR" if text.contains("canceling statement") => "57014",
        "ERROR" => "XX000",
        "FATAL" if text.contains("recovery mode") || text.contains("starting up") => "57P03",
        "FATAL" if text.contains("too many") || text.contains("slots") => "53300",
        "FATAL" => "28000",
        "WARNING" => "01000",
        _ => "00000",
    }
}

fn csv_field(out: &mut Vec<u8>, text: &str) {
    if text.is_empty() {
        return;
    }
    out.push(b'"');
    for b in text.bytes() {
        if b == b'"' {
            out.push(b'"');
        }
        out.push(b);
    }
    out.push(b'"');
}

fn json_string(out: &mut Vec<u8>, text: &str) {
    out.push(b'"');
    for b in text.bytes() {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b if b < 0x20 => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            b => out.push(b),
        }
    }
    out.push(b'"');
}

/// Docker's json-file escapes `<`, `>` and `&` as Go's encoding/json does.
fn docker_string(out: &mut Vec<u8>, text: &str) {
    let mut plain = Vec::with_capacity(text.len() + 8);
    json_string(&mut plain, text);
    for b in plain {
        match b {
            b'<' => out.extend_from_slice(b"\\u003c"),
            b'>' => out.extend_from_slice(b"\\u003e"),
            b'&' => out.extend_from_slice(b"\\u0026"),
            b => out.push(b),
        }
    }
}

/// `MMM DD HH:MM:SS` of RFC 3164.
fn bsd_stamp(second: i64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (_, mo, d, h, mi, s) = civil(second);
    format!("{} {d:2} {h:02}:{mi:02}:{s:02}", MONTHS[mo as usize - 1])
}

/// PostgreSQL's syslog pieces of one line (elog.c `write_syslog`): at most 900 bytes, cut at
/// a character boundary and, where it can, before a space.
fn syslog_pieces(line: &str) -> Vec<&str> {
    const LIMIT: usize = 900;
    let mut pieces = Vec::new();
    let mut rest = line;
    loop {
        if rest.len() <= LIMIT {
            pieces.push(rest);
            return pieces;
        }
        let mut cut = LIMIT;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        if !rest.as_bytes()[cut].is_ascii_whitespace() {
            if let Some(space) = rest[..cut].rfind(|c: char| c.is_ascii_whitespace()) {
                if space > 0 {
                    cut = space;
                }
            }
        }
        pieces.push(&rest[..cut]);
        rest = &rest[cut..];
    }
}

impl Writer<'_> {
    /// Writes one record: its stderr lines with their prefixes, or its csvlog/jsonlog row, or
    /// its lines wrapped.
    fn record(&mut self, kind: &str, record: &Record) {
        self.millis += 1 + self.rng.below(3) as i64;
        let in_session = SESSION_KINDS.contains(&kind);
        let slot = self.rng.below(SESSIONS as u64) as usize;
        if kind == "connection" && record[0].text.starts_with("connection received") {
            self.next_pid += 1 + self.rng.below(5) as u32;
            let start = self.millis / 1000;
            self.sessions[slot] = new_session(&mut self.rng, self.next_pid, start);
        }
        if !in_session {
            self.background.pid = match kind {
                "checkpoint" => 4003,
                "autovacuum" => {
                    self.next_pid += 1;
                    self.next_pid
                }
                _ => 4000,
            };
        }
        let xid = if in_session && self.rng.below(3) == 0 {
            self.xid += 1 + self.rng.below(4);
            self.xid
        } else {
            0
        };
        let stamp_ms = self.stamp_millis();
        let stamp_s = self.second().to_string();
        let millis = self.millis;
        let first = &record[0];
        let state = sqlstate(first.severity, &first.text);
        let session = if in_session {
            &mut self.sessions[slot]
        } else {
            &mut self.background
        };
        session.vxid += 1;
        match self.options.format {
            Format::Csvlog => {
                session.line += 1;
                write_csv(
                    &mut self.out,
                    record,
                    session,
                    in_session,
                    &stamp_ms,
                    &stamp_s,
                    state,
                    xid,
                );
                return;
            }
            Format::Jsonlog => {
                session.line += 1;
                write_json_row(
                    &mut self.out,
                    record,
                    session,
                    in_session,
                    &stamp_ms,
                    &stamp_s,
                    state,
                    xid,
                );
                return;
            }
            _ => {}
        }
        self.lines.clear();
        for line in record {
            session.line += 1;
            let fields = Fields {
                session,
                in_session,
                sqlstate: state,
                xid,
                stamp_millis: &stamp_ms,
                stamp_second: &stamp_s,
                millis,
                backend: 3,
            };
            write_prefix(&mut self.lines, &self.options.prefix, &fields);
            self.lines.extend_from_slice(line.severity.as_bytes());
            self.lines.extend_from_slice(b":  ");
            self.lines.extend_from_slice(line.text.as_bytes());
            self.lines.push(b'\n');
        }
        let pid = session.pid;
        let lines = std::mem::take(&mut self.lines);
        self.wrap(&lines, pid, millis);
        self.lines = lines;
    }

    /// The record's stderr lines, each in the wrapper.
    fn wrap(&mut self, lines: &[u8], pid: u32, millis: i64) {
        let text = String::from_utf8_lossy(lines);
        let micros = millis * 1000 + self.rng.below(1000) as i64;
        let second = millis.div_euclid(1000);
        let (y, mo, d, h, mi, s) = civil(second);
        let iso = format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}");
        let frac = micros.rem_euclid(1_000_000);
        let out = &mut self.out;
        match self.options.format {
            Format::Stderr | Format::Csvlog | Format::Jsonlog => out.extend_from_slice(lines),
            Format::DockerJson => {
                for line in text.split_inclusive('\n') {
                    out.extend_from_slice(b"{\"log\":");
                    docker_string(out, line);
                    out.extend_from_slice(
                        format!(",\"stream\":\"stderr\",\"time\":\"{iso}.{frac:06}000Z\"}}\n")
                            .as_bytes(),
                    );
                }
            }
            Format::Cri => {
                for line in text.split_inclusive('\n') {
                    out.extend_from_slice(format!("{iso}.{frac:06}000Z stderr F ").as_bytes());
                    out.extend_from_slice(line.as_bytes());
                }
            }
            Format::JournalExport => {
                for line in text.lines() {
                    out.extend_from_slice(
                        format!(
                            "__REALTIME_TIMESTAMP={micros}\n__MONOTONIC_TIMESTAMP={}\nPRIORITY=6\n\
                             SYSLOG_IDENTIFIER=postgres\nMESSAGE={line}\n_TRANSPORT=stdout\n\
                             _PID={pid}\n_UID=1001\n_GID=1001\n_COMM=postgres\n_HOSTNAME=dbhost\n\n",
                            micros - 1_790_000_000_000_000
                        )
                        .as_bytes(),
                    );
                }
            }
            Format::JournalShortIso => {
                for line in text.lines() {
                    let line = match line.strip_prefix('\t') {
                        Some(rest) => format!("        {rest}"),
                        None => line.to_string(),
                    };
                    out.extend_from_slice(
                        format!("{iso}+0000 dbhost postgres[{pid}]: {line}\n").as_bytes(),
                    );
                }
            }
            Format::Syslog3164 | Format::Syslog5424 => {
                let seq = self.syslog_seq.entry(pid).or_insert(0);
                *seq += 1;
                let seq = *seq;
                let head = if self.options.format == Format::Syslog3164 {
                    format!("{} dbhost postgres[{pid}]: ", bsd_stamp(second))
                } else {
                    format!("<134>1 {iso}.{frac:06}+00:00 dbhost postgres {pid} - -  ")
                };
                let mut piece = 0;
                for line in text.lines() {
                    for part in syslog_pieces(line) {
                        piece += 1;
                        out.extend_from_slice(head.as_bytes());
                        out.extend_from_slice(format!("[{seq}-{piece}] ").as_bytes());
                        match part.strip_prefix('\t') {
                            Some(rest) => {
                                out.extend_from_slice(b"#011");
                                out.extend_from_slice(rest.as_bytes());
                            }
                            None => out.extend_from_slice(part.as_bytes()),
                        }
                        out.push(b'\n');
                    }
                }
            }
        }
    }
}

/// The record's DETAIL, HINT, CONTEXT and statement (STATEMENT or QUERY), for csvlog and
/// jsonlog.
fn secondaries(record: &Record) -> [&str; 4] {
    let mut found = [""; 4];
    for line in &record[1..] {
        let at = match line.severity {
            "DETAIL" => 0,
            "HINT" => 1,
            "CONTEXT" => 2,
            "STATEMENT" | "QUERY" => 3,
            _ => continue,
        };
        found[at] = &line.text;
    }
    found
}

#[allow(clippy::too_many_arguments)]
fn write_csv(
    out: &mut Vec<u8>,
    record: &Record,
    s: &Session,
    in_session: bool,
    stamp_ms: &str,
    stamp_s: &str,
    state: &str,
    xid: u64,
) {
    let [detail, hint, context, statement] = secondaries(record);
    let (user, db, host, app) = if in_session {
        (s.user, s.database, s.host, s.application)
    } else {
        ("", "", "", "")
    };
    out.extend_from_slice(stamp_ms.as_bytes());
    out.push(b',');
    csv_field(out, user);
    out.push(b',');
    csv_field(out, db);
    out.extend_from_slice(format!(",{},", s.pid).as_bytes());
    csv_field(out, host);
    out.extend_from_slice(format!(",{:x}.{:x},{},", s.start, s.pid, s.line).as_bytes());
    csv_field(out, if in_session { "SELECT" } else { "" });
    let _ = stamp_s;
    out.extend_from_slice(format!(",{} UTC,", stamp_second(s.start)).as_bytes());
    if in_session {
        out.extend_from_slice(format!("3/{}", s.vxid).as_bytes());
    }
    out.extend_from_slice(format!(",{xid},{},{state},", record[0].severity).as_bytes());
    csv_field(out, &record[0].text);
    for (i, field) in [detail, hint, "", "", context, statement, "", ""]
        .iter()
        .enumerate()
    {
        out.push(b',');
        if i == 3 || i == 6 {
            continue; // internal_query_pos, query_pos: empty
        }
        csv_field(out, field);
    }
    out.push(b',');
    csv_field(out, app);
    out.push(b',');
    csv_field(
        out,
        if in_session {
            "client backend"
        } else {
            "postmaster"
        },
    );
    out.extend_from_slice(b",,0\n");
}

#[allow(clippy::too_many_arguments)]
fn write_json_row(
    out: &mut Vec<u8>,
    record: &Record,
    s: &Session,
    in_session: bool,
    stamp_ms: &str,
    _stamp_s: &str,
    state: &str,
    xid: u64,
) {
    let [detail, hint, context, statement] = secondaries(record);
    out.extend_from_slice(b"{\"timestamp\":");
    json_string(out, stamp_ms);
    if in_session {
        out.extend_from_slice(b",\"user\":");
        json_string(out, s.user);
        out.extend_from_slice(b",\"dbname\":");
        json_string(out, s.database);
    }
    out.extend_from_slice(format!(",\"pid\":{}", s.pid).as_bytes());
    if in_session {
        out.extend_from_slice(b",\"remote_host\":");
        json_string(out, s.host);
        if s.host != "[local]" {
            out.extend_from_slice(format!(",\"remote_port\":{}", s.port).as_bytes());
        }
    }
    out.extend_from_slice(
        format!(
            ",\"session_id\":\"{:x}.{:x}\",\"line_num\":{}",
            s.start, s.pid, s.line
        )
        .as_bytes(),
    );
    if in_session {
        out.extend_from_slice(b",\"ps\":\"SELECT\"");
    }
    out.extend_from_slice(
        format!(",\"session_start\":\"{} UTC\"", stamp_second(s.start)).as_bytes(),
    );
    if in_session {
        out.extend_from_slice(format!(",\"vxid\":\"3/{}\"", s.vxid).as_bytes());
    }
    out.extend_from_slice(format!(",\"txid\":{xid},\"error_severity\":").as_bytes());
    json_string(out, record[0].severity);
    if state != "00000" {
        out.extend_from_slice(format!(",\"state_code\":\"{state}\"").as_bytes());
    }
    out.extend_from_slice(b",\"message\":");
    json_string(out, &record[0].text);
    for (key, value) in [
        ("detail", detail),
        ("hint", hint),
        ("statement", statement),
        ("context", context),
    ] {
        if !value.is_empty() {
            out.extend_from_slice(format!(",\"{key}\":").as_bytes());
            json_string(out, value);
        }
    }
    if in_session {
        out.extend_from_slice(b",\"application_name\":");
        json_string(out, s.application);
    }
    out.extend_from_slice(
        format!(
            ",\"backend_type\":\"{}\",\"query_id\":0}}\n",
            if in_session {
                "client backend"
            } else {
                "postmaster"
            }
        )
        .as_bytes(),
    );
}

/// A log of at least `options.size` bytes drawn from the corpus (see the module's doc).
pub fn generate(corpus: &Corpus, options: &Options) -> Vec<u8> {
    let mut writer = Writer::new(options);
    let total: u64 = corpus.kinds.iter().map(|(_, w, _)| u64::from(*w)).sum();
    while writer.out.len() < options.size {
        let mut pick = writer.rng.below(total);
        let (kind, records) = corpus
            .kinds
            .iter()
            .find_map(|(k, w, r)| {
                if pick < u64::from(*w) {
                    Some((*k, r))
                } else {
                    pick -= u64::from(*w);
                    None
                }
            })
            .expect("a kind");
        let record = &records[writer.rng.below(records.len() as u64) as usize];
        writer.record(kind, record);
    }
    writer.out
}

/// Real captures end to end until `size` bytes, each copy's stamps (`YYYY-MM-DD HH:MM:SS` at
/// the start of a line, as `%m` and `%t` print them) moved so the log runs forward: the copies
/// start ten minutes apart, from 2026-11-02 08:00:00 UTC. `files` are names under
/// fixtures/formats/pglog.
pub fn concatenated(files: &[&str], size: usize) -> Vec<u8> {
    struct Template {
        bytes: Vec<u8>,
        stamps: Vec<(usize, i64)>,
        first: i64,
    }
    fn second_of(text: &[u8]) -> Option<i64> {
        let t = std::str::from_utf8(text).ok()?;
        let civil: jiff::civil::DateTime = t.parse().ok()?;
        Some(
            civil
                .to_zoned(jiff::tz::TimeZone::UTC)
                .ok()?
                .timestamp()
                .as_second(),
        )
    }
    let templates: Vec<Template> = files
        .iter()
        .map(|name| {
            let bytes = read_fixture(name);
            let mut stamps = Vec::new();
            let mut at = 0;
            for line in bytes.split_inclusive(|&b| b == b'\n') {
                let stamp_like = line.len() > 19
                    && line[4] == b'-'
                    && line[10] == b' '
                    && line[13] == b':'
                    && line[16] == b':';
                if stamp_like {
                    if let Some(second) = second_of(&line[..19]) {
                        stamps.push((at, second));
                    }
                }
                at += line.len();
            }
            let first = stamps.first().map_or(0, |s| s.1);
            Template {
                bytes,
                stamps,
                first,
            }
        })
        .collect();
    let mut out = Vec::with_capacity(size + (1 << 20));
    let mut copy = 0i64;
    let mut names: HashMap<i64, String> = HashMap::new();
    while out.len() < size {
        for t in &templates {
            let shift = START + copy * 600 - t.first;
            let base = out.len();
            out.extend_from_slice(&t.bytes);
            for (at, second) in &t.stamps {
                let moved = second + shift;
                let text = names.entry(moved).or_insert_with(|| stamp_second(moved));
                out[base + at..base + at + 19].copy_from_slice(text.as_bytes());
            }
            names.clear();
            copy += 1;
        }
    }
    out
}

/// The real captures of each prefix class for [`concatenated`]: the English `%m [%p] ` logs,
/// Debian's prefix, pgBadger's, RDS's.
pub const CAPTURES: &[(&str, &[&str])] = &[
    (
        "rhel",
        &[
            "pg15-events.log",
            "pg15-backend-sigkill.log",
            "pg15-backend-sigsegv.log",
            "pg13-backend-sigkill.log",
            "pg13-parallel-worker-sigkill.log",
            "pg18-backend-sigkill.log",
            "pg10-parallel-worker-sigkill.log",
        ],
    ),
    (
        "debian",
        &[
            "pg15-debian-checkpointer-sigkill.log",
            "pgbadger/pg_rawcsv.log",
        ],
    ),
    (
        "pgbadger",
        &[
            "prefixes/pg15-pgbadger.log",
            "pgbadger/light.postgres.log.bz2",
        ],
    ),
    ("rds", &["pg15-rds-sigkill.log", "pgbadger/rds.log.bz2"]),
];
