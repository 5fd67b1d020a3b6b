//! Rewrites a pgmortem bundle so that it can be shared: host names, IP addresses, user,
//! database and application names and the literals of queries become stable tokens (the same
//! original gives the same token in every file, so that events still correlate), and paths
//! under home directories are cut. What was replaced is counted by kind, never listed.
//!
//! The rewriting is line by line ([`Redactor::redact_line`]), knowing the forms the bundle's
//! files take: `key=value` fields of log line prefixes and connection lines, quoted role and
//! database names of messages, process titles (`postgres: user db host(port) state`), the
//! `pg_stat_activity` dump's columns, pgbouncer's `C-0x…: db/user@addr:port` prefix, the text after `statement:` / `STATEMENT:` / `QUERY:` /
//! `parameters:` and its continuation lines. [`redact_bundle`] applies it to every file of a
//! bundle and writes a `.tar.gz` with `redaction.json` beside the files.

mod archive;
mod sql;

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

pub use archive::{RedactError, Redacted, redact_bundle};

/// What a token stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// The host's name, and client host names.
    Hostname,
    /// IPv4 and IPv6 addresses (loopback and unspecified ones are kept).
    IpAddress,
    /// Database roles and OS user names.
    User,
    /// Database names.
    Database,
    /// `application_name` values.
    Application,
    /// String and numeric constants of queries, and key values of constraint messages.
    QueryLiteral,
    /// Paths below a home directory (cut after the user's directory).
    HomePath,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 7] = [
        Kind::Hostname,
        Kind::IpAddress,
        Kind::User,
        Kind::Database,
        Kind::Application,
        Kind::QueryLiteral,
        Kind::HomePath,
    ];
}

/// Names that identify nothing: PostgreSQL's and the OS's built-in ones, kept as they are.
const KEPT_NAMES: &[&str] = &[
    "",
    "postgres",
    "template0",
    "template1",
    "root",
    "[unknown]",
    "unknown",
    "[local]",
    "localhost",
    "(none)",
    "kernel",
    "linux",
    "(nodb)",
    "(nouser)",
];

/// How many of each kind were replaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    /// Occurrences replaced.
    pub occurrences: u64,
    /// Distinct originals (tokens handed out).
    pub distinct: u64,
}

/// The line-by-line rewriter, holding the tokens handed out so far.
#[derive(Debug, Default)]
pub struct Redactor {
    tokens: HashMap<(Kind, String), String>,
    counts: BTreeMap<Kind, Count>,
    hostnames: Vec<String>,
    os_users: Vec<String>,
}

/// Where a file's reading stands between lines.
#[derive(Debug, Default, Clone)]
pub struct LineState {
    /// The previous line opened a query that tab-indented lines continue.
    in_query: bool,
    /// Columns of a `|`-separated table with a header line: (index, what it holds).
    columns: Option<Vec<Column>>,
    /// The user column of a `ps` listing whose header the file began with.
    ps_user: Option<usize>,
    /// Lines read so far.
    lines: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Name(Kind),
    Host,
    Query,
    Other,
}

static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r#"(^|[^\w])(user|usename|role|db|database|datname|dbname|app|appname|application_name|application|host|client_addr|client_hostname|remote_host)=("[^"]*"|[^\s,;\]\)\[]+)"#,
    )
    .expect("a valid pattern")
});
/// pgbouncer's connection prefix: `C-0x55d5c7a0f9e0: appdb/app@10.0.0.7:51234` (the user may
/// hold `@`: the address is what follows the last one before `:port`).
static POOLER_CONNECTION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b([CS]-[0-9A-Fa-fx]+: )([^\s/]+)/(\S+)@(\[[0-9A-Fa-f:.%]+\]|unix(?:\(\d+\))?|\d{1,3}(?:\.\d{1,3}){3}):(\d+)",
    )
    .expect("a valid pattern")
});
static QUOTED_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\b(role|user|database) "([^"]+)""#).expect("a valid pattern"));
static TITLE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"postgres: (\S+) (\S+) (\[local\]|\S+?)(\(\d+\))?( |$)").expect("a valid pattern")
});
static OS_IDS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d+)\(([^)]+)\)").expect("a valid pattern"));
static PG_USER_FLAG: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(^|\s)(-U ?|--username[= ])(\S+)").expect("a valid pattern"));
/// Whether a word between `before` and `after` (the rest of its line) is the namespace of a
/// kernel setting, not a name: `vm` of `vm.swappiness = 60` (sysctl -a), of
/// `/proc/sys/vm/swappiness` and of a copied `proc/sys/vm/` (a host named `vm` stays a host
/// name everywhere else).
fn is_sysctl_namespace(before: &str, after: &str) -> bool {
    if before.ends_with("proc/sys/") && after.starts_with('/') {
        return true;
    }
    let Some(key) = after.strip_prefix('.') else {
        return false;
    };
    let at_start = before.is_empty() || before.ends_with(char::is_whitespace);
    let end = key
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '.'))
        .unwrap_or(key.len());
    at_start && end > 0 && key[end..].trim_start().starts_with('=')
}

/// Candidates: the boundaries and the parse decide ([`Redactor::addresses`]).
static IPV4: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}").expect("a valid pattern"));
static IPV6: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:]*").expect("a valid pattern")
});
static HOME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"/(home|Users)/([^/\s'":,;)\]]+)(/[^\s'":,;)\]]*)?|/root/[^\s'":,;)\]]+"#)
        .expect("a valid pattern")
});
static KEY_DETAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"Key \(([^)]*)\)=\((.*)\) (already exists|is not present|conflicts)")
        .expect("a valid pattern")
});
/// Where the text of a query starts on a PostgreSQL log line.
static QUERY_MARKER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(statement: |STATEMENT:  |QUERY:  |execute [^:\s]+: |parameters: |CONTEXT:  SQL statement )")
        .expect("a valid pattern")
});

impl Redactor {
    /// A redactor that has handed out no token yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `name` a host name to replace wherever it appears as a whole word (the bundle's
    /// own host: from `uname -a`, the perf header, the archive's name).
    pub fn learn_hostname(&mut self, name: &str) {
        let name = name.trim();
        if name.len() < 2 || KEPT_NAMES.contains(&name.to_ascii_lowercase().as_str()) {
            return;
        }
        if !self.hostnames.iter().any(|h| h == name) {
            self.hostnames.push(name.to_owned());
            // Longest first: a short name inside a longer one is replaced after it.
            self.hostnames.sort_by_key(|h| std::cmp::Reverse(h.len()));
        }
    }

    /// Makes `name` an OS user to replace wherever it appears as a whole word (the user
    /// PostgreSQL runs as, from a `ps` listing: it also owns files a listing of directories
    /// shows, and names the processes of `ps -elfL`'s `UID` column).
    pub fn learn_os_user(&mut self, name: &str) {
        let name = name.trim();
        if name.len() < 2
            || KEPT_NAMES.contains(&name.to_ascii_lowercase().as_str())
            || is_token(name)
            || name.bytes().all(|b| b.is_ascii_digit())
        {
            return;
        }
        if !self.os_users.iter().any(|u| u == name) {
            self.os_users.push(name.to_owned());
            self.os_users.sort_by_key(|u| std::cmp::Reverse(u.len()));
        }
    }

    /// Counts of what was replaced, by kind (every kind present, zero when none).
    pub fn counts(&self) -> BTreeMap<Kind, Count> {
        Kind::ALL
            .iter()
            .map(|k| (*k, self.counts.get(k).copied().unwrap_or_default()))
            .collect()
    }

    /// The token of `original` of `kind`: the same original always gets the same token.
    fn token(&mut self, kind: Kind, original: &str) -> String {
        let count = self.counts.entry(kind).or_default();
        count.occurrences += 1;
        if let Some(t) = self.tokens.get(&(kind, original.to_owned())) {
            return t.clone();
        }
        count.distinct += 1;
        let n = count.distinct;
        let token = match kind {
            Kind::Hostname => format!("host-{n}"),
            Kind::IpAddress if original.contains(':') => format!("2001:db8::{n:x}"),
            Kind::IpAddress => ipv4_token(n),
            Kind::User => format!("user_{n}"),
            Kind::Database => format!("db_{n}"),
            Kind::Application => format!("app_{n}"),
            Kind::QueryLiteral => format!("'lit_{n}'"),
            Kind::HomePath => format!("home_{n}"),
        };
        self.tokens
            .insert((kind, original.to_owned()), token.clone());
        token
    }

    /// A name of `kind`, replaced unless it is one of the built-in names kept.
    fn name(&mut self, kind: Kind, original: &str) -> String {
        let bare = original.trim_matches('"');
        if KEPT_NAMES.contains(&bare) || is_token(bare) {
            return original.to_owned();
        }
        let token = self.token(kind, bare);
        if original.starts_with('"') {
            format!("\"{token}\"")
        } else {
            token
        }
    }

    /// Rewrites one line of a file (without its line end). `state` carries what a line tells
    /// about the next ones (a query continued on tab-indented lines, a table's columns).
    pub fn redact_line(&mut self, line: &str, state: &mut LineState) -> String {
        state.lines += 1;
        if let Some(out) = self.ps_row(line, state) {
            return self.everywhere(&out);
        }
        if let Some(out) = self.table_row(line, state) {
            return self.everywhere(&out);
        }
        let (head, query) = if state.in_query && line.starts_with('\t') {
            ("", Some(line))
        } else if let Some(m) = QUERY_MARKER.find(line) {
            (&line[..m.end()], Some(&line[m.end()..]))
        } else {
            (line, None)
        };
        state.in_query = query.is_some();
        let mut out = self.names(head);
        if let Some(q) = query {
            out.push_str(&self.query(q));
        }
        if out.contains("Key (") {
            out = self.key_detail(&out);
        }
        self.everywhere(&out)
    }

    /// Host names, addresses and home paths, wherever they are.
    fn everywhere(&mut self, text: &str) -> String {
        let mut out = self.addresses(text);
        if out.contains("/home/") || out.contains("/Users/") || out.contains("/root/") {
            out = self.home_paths(&out);
        }
        for i in 0..self.hostnames.len() {
            let host = self.hostnames[i].clone();
            if out.contains(&host) {
                out = self.replace_word(&out, &host, Kind::Hostname);
            }
        }
        for i in 0..self.os_users.len() {
            let user = self.os_users[i].clone();
            if out.contains(&user) {
                out = self.replace_word(&out, &user, Kind::User);
            }
        }
        out
    }

    /// The names of `key=value` fields, quoted role and database names, process titles,
    /// `id` output and `-U` flags.
    fn names(&mut self, text: &str) -> String {
        let mut out = text.to_owned();
        if out.contains('=') {
            out = replace_captures(&KEY_VALUE, &out, |caps| {
                let kind = match &caps[2] {
                    "user" | "usename" | "role" => Some(Kind::User),
                    "db" | "database" | "datname" | "dbname" => Some(Kind::Database),
                    "app" | "appname" | "application_name" | "application" => {
                        Some(Kind::Application)
                    }
                    _ => None,
                };
                let value = match kind {
                    Some(k) => self.name(k, &caps[3]),
                    None => self.host_or_address(&caps[3]),
                };
                format!("{}{}={value}", &caps[1], &caps[2])
            });
        }
        if out.contains("-0x") || out.contains("S-") || out.contains("C-") {
            out = replace_captures(&POOLER_CONNECTION, &out, |caps| {
                format!(
                    "{}{}/{}@{}:{}",
                    &caps[1],
                    self.name(Kind::Database, &caps[2]),
                    self.name(Kind::User, &caps[3]),
                    &caps[4],
                    &caps[5]
                )
            });
        }
        if out.contains(" \"") {
            out = replace_captures(&QUOTED_NAME, &out, |caps| {
                let kind = if &caps[1] == "database" {
                    Kind::Database
                } else {
                    Kind::User
                };
                format!("{} \"{}\"", &caps[1], self.name(kind, &caps[2]))
            });
        }
        if out.contains("postgres: ") {
            out = replace_captures(&TITLE, &out, |caps| {
                let client = caps.get(4).is_some() || &caps[3] == "[local]";
                if !client {
                    return caps[0].to_owned();
                }
                let host = if &caps[3] == "[local]" {
                    caps[3].to_owned()
                } else {
                    self.host_or_address(&caps[3])
                };
                format!(
                    "postgres: {} {} {host}{}{}",
                    self.name(Kind::User, &caps[1]),
                    self.name(Kind::Database, &caps[2]),
                    caps.get(4).map_or("", |m| m.as_str()),
                    &caps[5]
                )
            });
        }
        if out.starts_with("uid=") {
            out = replace_captures(&OS_IDS, &out, |caps| {
                format!("{}({})", &caps[1], self.name(Kind::User, &caps[2]))
            });
        }
        if out.contains("-U") || out.contains("--username") {
            out = replace_captures(&PG_USER_FLAG, &out, |caps| {
                format!(
                    "{}{}{}",
                    &caps[1],
                    &caps[2],
                    self.name(Kind::User, &caps[3])
                )
            });
        }
        out
    }

    /// A client host: an address, or a name.
    fn host_or_address(&mut self, value: &str) -> String {
        let bare = value.trim_matches('"');
        if bare.parse::<std::net::IpAddr>().is_ok() || is_token(bare) {
            // Addresses are replaced with the rest of the line's.
            return value.to_owned();
        }
        if KEPT_NAMES.contains(&bare) || bare.is_empty() {
            return value.to_owned();
        }
        self.token(Kind::Hostname, bare)
    }

    /// `sql` with its literals replaced.
    fn query(&mut self, sql: &str) -> String {
        let mut out = String::with_capacity(sql.len());
        let mut at = 0;
        for lit in sql::literals(sql) {
            let (s, e, string) = match lit {
                sql::Literal::String(s, e) => (s, e, true),
                sql::Literal::Number(s, e) => (s, e, false),
            };
            out.push_str(&sql[at..s]);
            let token = self.token(Kind::QueryLiteral, &sql[s..e]);
            if string {
                out.push_str(&token);
            } else {
                // A number's token is left unquoted, where the number stood.
                out.push_str(token.trim_matches('\''));
            }
            at = e;
        }
        out.push_str(&sql[at..]);
        out
    }

    /// `Key (email)=(a@b.c) already exists`: the values become a token.
    fn key_detail(&mut self, text: &str) -> String {
        replace_captures(&KEY_DETAIL, text, |caps| {
            format!(
                "Key ({})=({}) {}",
                &caps[1],
                self.token(Kind::QueryLiteral, &caps[2]),
                &caps[3]
            )
        })
    }

    /// IPv4 and IPv6 addresses standing alone (not inside a longer dotted or hex word, not a
    /// version such as 1.2.3.4.5), loopback and unspecified addresses kept.
    fn addresses(&mut self, text: &str) -> String {
        let mut out = text.to_owned();
        if out.bytes().filter(|b| *b == b'.').count() >= 3 {
            out = self.replace_candidates(&IPV4, &out, |before, after, after2| {
                let word =
                    |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                // Not inside a dotted word (a version 1.2.3.4.5); a full stop may end it.
                let dotted = before == Some('.') || (after == Some('.') && word(after2));
                !(word(before) || word(after) || dotted)
            });
        }
        if out.bytes().filter(|b| *b == b':').count() >= 2 {
            out = self.replace_candidates(&IPV6, &out, |before, after, _| {
                !before
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == ':')
                    && !after.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            });
        }
        out
    }

    /// The matches of `re` in `text` that `alone` accepts (given the characters before, after,
    /// and after that) and that parse as a non-loopback, specified IP address, replaced.
    fn replace_candidates(
        &mut self,
        re: &Regex,
        text: &str,
        alone: impl Fn(Option<char>, Option<char>, Option<char>) -> bool,
    ) -> String {
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for m in re.find_iter(text) {
            let before = text[..m.start()].chars().next_back();
            let mut rest = text[m.end()..].chars();
            let (after, after2) = (rest.next(), rest.next());
            let keep = !alone(before, after, after2)
                || match m.as_str().parse::<std::net::IpAddr>() {
                    Ok(a) => {
                        a.is_loopback()
                            || a.is_unspecified()
                            || m.as_str() == "255.255.255.255"
                            || m.as_str().starts_with("2001:db8:")
                    }
                    Err(_) => true,
                };
            out.push_str(&text[at..m.start()]);
            if keep {
                out.push_str(m.as_str());
            } else {
                out.push_str(&self.token(Kind::IpAddress, m.as_str()));
            }
            at = m.end();
        }
        out.push_str(&text[at..]);
        out
    }

    fn home_paths(&mut self, text: &str) -> String {
        replace_captures(&HOME, text, |caps| match caps.get(1) {
            Some(root) => {
                let user = self.name(Kind::User, &caps[2]);
                // Counted as a path cut (its token is not printed: the cut path is).
                self.token(Kind::HomePath, &caps[0]);
                let cut = if caps.get(3).is_some_and(|m| m.as_str().len() > 1) {
                    "/…"
                } else {
                    caps.get(3).map_or("", |m| m.as_str())
                };
                format!("/{}/{user}{cut}", root.as_str())
            }
            None => {
                self.token(Kind::HomePath, &caps[0]);
                "/root/…".to_owned()
            }
        })
    }

    /// `text` with `word` replaced where it stands as a whole word (not inside a longer name).
    fn replace_word(&mut self, text: &str, word: &str, kind: Kind) -> String {
        let mut out = String::with_capacity(text.len());
        let mut rest = text;
        let inside = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        while let Some(p) = rest.find(word) {
            let before = rest[..p].chars().next_back();
            let after_text = &rest[p + word.len()..];
            let after = after_text.chars().next();
            out.push_str(&rest[..p]);
            if before.is_some_and(|c| inside(c) || c == '.')
                || after.is_some_and(inside)
                || is_sysctl_namespace(&out, after_text)
            {
                out.push_str(word);
            } else {
                out.push_str(&self.token(kind, word));
            }
            rest = after_text;
        }
        out.push_str(rest);
        out
    }

    /// A row of a `ps` listing (a first line of upper-case column names with `USER`), its user
    /// column replaced; `None` when the file is not one.
    fn ps_row(&mut self, line: &str, state: &mut LineState) -> Option<String> {
        if state.lines == 1 {
            let header: Vec<&str> = line.split_whitespace().collect();
            if header.len() >= 3
                && header
                    .iter()
                    .all(|h| h.bytes().all(|b| b.is_ascii_uppercase() || b == b'%'))
            {
                state.ps_user = header
                    .iter()
                    .position(|h| matches!(*h, "USER" | "RUSER" | "EUSER" | "UNAME"));
            }
            return state.ps_user.map(|_| line.to_owned());
        }
        let column = state.ps_user?;
        // The n-th field, replaced in place: the spacing of the others is kept.
        let mut out = String::with_capacity(line.len());
        let mut field = 0;
        let mut rest = line;
        while let Some(start) = rest.find(|c: char| !c.is_whitespace()) {
            out.push_str(&rest[..start]);
            let word_end = rest[start..]
                .find(char::is_whitespace)
                .map_or(rest.len(), |e| start + e);
            let word = &rest[start..word_end];
            if field == column {
                out.push_str(&self.name(Kind::User, word));
            } else {
                out.push_str(word);
            }
            field += 1;
            rest = &rest[word_end..];
        }
        out.push_str(rest);
        Some(out)
    }

    /// A row of a `|`-separated table with a header (psql `-A`), rewritten by column; `None`
    /// when the line is not one.
    fn table_row(&mut self, line: &str, state: &mut LineState) -> Option<String> {
        if state.columns.is_none() {
            let header: Vec<&str> = line.split('|').collect();
            if header.len() < 3 || !header.iter().all(|h| is_column_name(h)) {
                return None;
            }
            let columns = header
                .iter()
                .map(|h| match *h {
                    "usename" | "rolname" | "user" => Column::Name(Kind::User),
                    "datname" | "database" => Column::Name(Kind::Database),
                    "application_name" => Column::Name(Kind::Application),
                    "client_addr" | "client_hostname" => Column::Host,
                    "query" => Column::Query,
                    _ => Column::Other,
                })
                .collect::<Vec<_>>();
            if !columns.iter().any(|c| *c != Column::Other) {
                return None;
            }
            state.columns = Some(columns);
            return Some(line.to_owned());
        }
        let columns = state.columns.clone()?;
        if line.starts_with('(') && line.ends_with(')') {
            return Some(line.to_owned()); // `(12 rows)`
        }
        // The last column takes the rest: a query may hold `|`.
        let cells: Vec<&str> = line.splitn(columns.len(), '|').collect();
        if cells.len() != columns.len() {
            // A query's continuation line.
            return Some(self.query(line));
        }
        let out: Vec<String> = cells
            .iter()
            .zip(&columns)
            .map(|(cell, column)| match column {
                Column::Name(kind) => self.name(*kind, cell),
                Column::Host => self.host_or_address(cell),
                Column::Query => self.query(cell),
                Column::Other => (*cell).to_owned(),
            })
            .collect();
        Some(out.join("|"))
    }
}

/// The `n`th IPv4 token: the documentation networks 192.0.2.0/24, 198.51.100.0/24 and
/// 203.0.113.0/24, then 100.64.0.0/10.
fn ipv4_token(n: u64) -> String {
    let i = n - 1;
    match i / 254 {
        0 => format!("192.0.2.{}", i % 254 + 1),
        1 => format!("198.51.100.{}", i % 254 + 1),
        2 => format!("203.0.113.{}", i % 254 + 1),
        _ => {
            let j = i - 3 * 254;
            format!("100.{}.{}.{}", 64 + (j >> 16) % 64, (j >> 8) & 255, j & 255)
        }
    }
}

/// Whether `s` is a token this crate hands out.
fn is_token(s: &str) -> bool {
    let numbered = |prefix: &str| {
        s.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    numbered("host-") || numbered("user_") || numbered("db_") || numbered("app_")
}

fn is_column_name(h: &str) -> bool {
    !h.is_empty()
        && h.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// `re` applied to `text`, each match replaced by what `f` makes of its captures.
fn replace_captures(
    re: &Regex,
    text: &str,
    mut f: impl FnMut(&regex::Captures<'_>) -> String,
) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for caps in re.captures_iter(text) {
        let m = caps.get(0).expect("the whole match");
        out.push_str(&text[at..m.start()]);
        out.push_str(&f(&caps));
        at = m.end();
    }
    out.push_str(&text[at..]);
    out
}

#[cfg(test)]
mod tests;
