//! The line-by-line rewriting of text files: the fields that print a name in any file (a
//! syslog line's host, `uname -a`, `key=value`, process titles, `ps` and `ls -l` columns,
//! command lines' `-U`/`-h`/`-d`), then PostgreSQL's lines ([`crate::pglog`]), then what is
//! replaced wherever it stands (addresses, home directories, archive names, the bundle's own
//! host and OS user as whole tokens).

use std::sync::{Arc, LazyLock};

use pgmortem_parse::pglog::LogLinePrefix;
use regex::Regex;

use crate::names::{self, Scope};
use crate::rows::Column;
use crate::{Kind, Redactor, has};

/// Where a file's reading stands between lines, and what the file is known to be.
#[derive(Debug, Default, Clone)]
pub struct LineState {
    /// What the TAB-indented lines after this one continue.
    pub(crate) continuation: Continuation,
    /// Columns of a `|`-separated table with a header line.
    pub(crate) columns: Option<Vec<Column>>,
    /// The user columns of a `ps` listing whose header the file began with.
    pub(crate) ps_users: Option<Vec<usize>>,
    /// Lines read so far.
    pub(crate) lines: u64,
    /// The `log_line_prefix` of a PostgreSQL log, when the file is one.
    prefix: Option<Arc<LogLinePrefix>>,
    /// Every line is a host name (`hostname`'s output, `/etc/hostname`).
    host_lines: bool,
    /// Every argument of the file's command lines may name a PostgreSQL host, user or
    /// database (the collector's `arguments`).
    pg_command_line: bool,
    /// A `perf script` output: only its `#` header prints names in fields.
    profile: bool,
}

/// What a TAB-indented line continues.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Continuation {
    /// Nothing to redact but names.
    #[default]
    Text,
    /// Query text.
    Query,
    /// An auto_explain plan; `true` while its `Query Text:` goes on.
    Plan(bool),
}

impl LineState {
    /// The state of a PostgreSQL log written with `prefix`: each line's prefix fields are
    /// known by position.
    pub fn for_log(prefix: LogLinePrefix) -> Self {
        LineState {
            prefix: Some(Arc::new(prefix)),
            ..Self::default()
        }
    }

    /// The state of a file whose every line is a host name.
    pub fn for_host_names() -> Self {
        LineState {
            host_lines: true,
            ..Self::default()
        }
    }

    /// The state of a `perf script` output: its `#` header read for names like any text, its
    /// samples and frames only for what is replaced everywhere.
    pub fn for_profile() -> Self {
        LineState {
            profile: true,
            ..Self::default()
        }
    }

    /// The state of a PostgreSQL client's command line (`-h HOST -U USER -d DB`).
    pub(crate) fn for_pg_command_line() -> Self {
        LineState {
            pg_command_line: true,
            ..Self::default()
        }
    }

    pub(crate) fn prefix(&self) -> Option<&LogLinePrefix> {
        self.prefix.as_deref()
    }
}

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("a valid pattern")
}

/// `key=value` fields that name a role, a database, an application or a host.
static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(^|[^\w.-])(user|usename|role|db|database|datname|dbname|app|appname|application_name|application|host|hostname|nodename|client|client_addr|client_hostname|remote_host)=("[^"]*"|'[^']*'|[^\s,;\]\)\["'&]+)"#,
    )
});
/// pgbouncer's connection prefix: `C-0x55d5c7a0f9e0: appdb/app@10.0.0.7:51234` (the user may
/// hold `@`: the address is what follows the last one before `:port`).
static POOLER_CONNECTION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b([CS]-[0-9A-Fa-fx]+: )([^\s/]+)/(\S+)@(\[[0-9A-Fa-f:.%]+\]|unix(?:\(\d+\))?|\d{1,3}(?:\.\d{1,3}){3}):(\d+)",
    )
});
static QUOTED_NAME: LazyLock<Regex> = LazyLock::new(|| re(r#"\b(role|user|database) "([^"]+)""#));
static OS_IDS: LazyLock<Regex> = LazyLock::new(|| re(r"(\d+)\(([^)]+)\)"));
/// `-U NAME`, `--username=NAME` anywhere; `-h`, `--host`, `-d`, `--dbname` of PostgreSQL's
/// clients only (`df -h`, `ls -d` are other programs' flags).
static PG_USER_FLAG: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(^|\s)(-U ?|--username[= ])([^\s"',;:)]+)"#));
static PG_HOST_DB_FLAG: LazyLock<Regex> =
    LazyLock::new(|| re(r#"(^|\s)(-h ?|--host[= ]|-d ?|--dbname[= ])([^\s"',;)]*[^\s"',;:)])"#));
static PG_CLIENT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(psql|pg_dump|pg_dumpall|pg_restore|pgbench|pg_basebackup|pg_receivewal|pg_isready|createdb|dropdb|createuser|vacuumdb|reindexdb|clusterdb|pgmortem-collect(?:\.sh)?)\b",
    )
});
/// The collector's `postgres -C NAME (as USER)`.
static AS_USER: LazyLock<Regex> = LazyLock::new(|| re(r"\(as ([^\s)]+)\)"));
/// `uname -a`: the node name is the second field.
static UNAME: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^((?:GNU/)?Linux|Darwin|FreeBSD|OpenBSD|NetBSD|SunOS) (\S+) \d+\.\d+\S* #")
});
/// The fields that hold the host's name: sysctl's `kernel.hostname`, its `/proc` file as
/// `grep -r` prints it, `hostnamectl`, the perf header, ld.so's diagnostics, `HOSTNAME=`.
static HOST_FIELD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^(\s*kernel\.hostname\s*=\s*|\S*proc/sys/kernel/hostname:|\s*(?:Static|Transient|Pretty) hostname: |# hostname : |uname\.nodename=")([^\s"]+)|(^|\s)(HOSTNAME=)([^\s"']+)"#,
    )
});
/// A syslog or journal line's header: stamp, host, tag. BSD (`Nov 24 05:29:10 HOST tag[pid]:`,
/// with journalctl's fractions and zone), ISO (`2026-11-24T05:29:10.123456+00:00 HOST
/// tag:`), RFC 5424 (`<134>1 STAMP HOST APP PROCID MSGID`).
static ENVELOPE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^((?:<\d{1,3}>)?(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?(?: [+-]\d{4})?|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?) )([^\s:\[\]]+)( [^\s:\[]+(?:\[\d+\])?: ?)",
    )
});
static RFC5424: LazyLock<Regex> = LazyLock::new(|| re(r"^(<\d{1,3}>1 \S+ )(\S+)( \S+ \S+ \S+ )"));
/// rsyslog's split of a long message: `[5-2] ` (the second line of the fifth message).
static SYSLOG_SEQUENCE: LazyLock<Regex> = LazyLock::new(|| re(r"^\[\d+-(\d+)\] "));
/// The host part of the collectors' archive names, wherever they are printed.
static ARCHIVE_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\b(sosreport-|pgmortem-)([A-Za-z0-9][A-Za-z0-9._-]*?)(-\d{4}-\d\d-\d\d(?:-[a-z]{3,}|\b)|-\d{14}\b|-\d{8}T\d{6}Z)",
    )
});
static HOME: LazyLock<Regex> = LazyLock::new(|| {
    re(r#"/(home|Users)/([^/\s'":,;)\]]+)(/[^\s'":,;)\]]*)?|/root/[^\s'":,;)\]]+"#)
});
static KEY_DETAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"Key \(([^)]*)\)=\((.*)\) (already exists|is not present|is still referenced|conflicts)")
});
/// Candidates: the boundaries and the parse decide ([`Redactor::addresses`]).
static IPV4: LazyLock<Regex> = LazyLock::new(|| re(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}"));
static IPV6: LazyLock<Regex> = LazyLock::new(|| re(r"[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:]*"));

/// The text of a line after any syslog or journal header and rsyslog's sequence number: what
/// PostgreSQL wrote.
pub(crate) fn peel(line: &str) -> &str {
    let rest = if let Some(m) = ENVELOPE.find(line) {
        &line[m.end()..]
    } else if let Some(m) = RFC5424.find(line) {
        &line[m.end()..]
    } else {
        return line;
    };
    match SYSLOG_SEQUENCE.find(rest) {
        Some(m) => &rest[m.end()..],
        None => rest,
    }
}

impl Redactor {
    /// Rewrites one line of a text file (without its line end). `state` carries what a line
    /// tells about the next ones (a query continued on TAB-indented lines, a table's columns)
    /// and what the file is known to be ([`LineState::for_log`]).
    pub fn redact_line(&mut self, line: &str, state: &mut LineState) -> String {
        state.lines += 1;
        if state.host_lines {
            let name = line.trim();
            let out = if name.is_empty() {
                line.to_owned()
            } else {
                line.replacen(name, &self.host_or_address(name), 1)
            };
            return self.everywhere(&out);
        }
        if let Some(out) = self.ps_row(line, state) {
            return self.everywhere(&out);
        }
        if state.profile && !line.starts_with('#') {
            // A perf script's samples and frames: commands, addresses, symbols, paths.
            return self.everywhere(line);
        }
        if let Some(out) = self.table_row(line, state) {
            return self.everywhere(&out);
        }
        if let Some(out) = self.ls_row(line) {
            return self.everywhere(&out);
        }
        let (mut out, body, continued) = self.envelope(line);
        out.push_str(&self.body(body, continued, state));
        self.everywhere(&out)
    }

    /// A syslog or journal header's host replaced; the rest of the line; whether rsyslog's
    /// sequence number says the line continues the message before (`[5-2] `).
    fn envelope<'l>(&mut self, line: &'l str) -> (String, &'l str, bool) {
        // Every header starts with a month's capital, a year's digit or a priority's `<`.
        if !line.starts_with(|c: char| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '<') {
            return (String::new(), line, false);
        }
        let (mut head, mut rest) = if let Some(c) = ENVELOPE.captures(line) {
            let all = c.get(0).expect("the whole match");
            let head = format!("{}{}{}", &c[1], self.host_or_address(&c[2]), &c[3]);
            (head, &line[all.end()..])
        } else if let Some(c) = RFC5424.captures(line) {
            let all = c.get(0).expect("the whole match");
            let host = if &c[2] == "-" {
                "-".to_owned()
            } else {
                self.host_or_address(&c[2])
            };
            (format!("{}{host}{}", &c[1], &c[3]), &line[all.end()..])
        } else {
            return (String::new(), line, false);
        };
        let mut continued = false;
        if let Some(c) = SYSLOG_SEQUENCE.captures(rest) {
            continued = &c[1] != "1";
            let end = c.get(0).expect("the whole match").end();
            head.push_str(&rest[..end]);
            rest = &rest[end..];
        }
        (head, rest, continued)
    }

    /// The text after any envelope: a PostgreSQL line, a continuation, or any other line.
    fn body(&mut self, text: &str, continued: bool, state: &mut LineState) -> String {
        let tabbed = text
            .strip_prefix('\t')
            .or_else(|| text.strip_prefix("#011"));
        // PostgreSQL numbers every line of a record it sends to syslog, not only the pieces
        // syslog_split_messages cuts: `[5-2] ` may be the record's STATEMENT or DETAIL line,
        // which begins with the log's prefix and is read as a line of its own.
        let own_line = continued
            && tabbed.is_none()
            && state.prefix().is_some_and(|p| p.line_parts(text).is_some());
        if tabbed.is_some() || (continued && !own_line) {
            return self.continuation(text, state);
        }
        state.continuation = Continuation::Text;
        if let Some(out) = self.pg_line(text, state) {
            return out;
        }
        if let Some(out) = self.memory_context_line(text) {
            return out;
        }
        self.fields(text, state)
    }

    /// The fields that print a name, in any line: `key=value`, pgbouncer's connection
    /// prefix, quoted role and database names, process titles, `id`'s output, command lines'
    /// flags, `uname -a`, the host name fields, a constraint's key values.
    pub(crate) fn fields(&mut self, text: &str, state: &LineState) -> String {
        let mut out = text.to_owned();
        if has(&out, "=") {
            out = replace_captures(&KEY_VALUE, &out, |caps| {
                let kind = match &caps[2] {
                    "user" | "usename" | "role" => Some(Kind::User),
                    "db" | "database" | "datname" | "dbname" => Some(Kind::Database),
                    "app" | "appname" | "application_name" | "application" => {
                        Some(Kind::Application)
                    }
                    _ => None,
                };
                let value = &caps[3];
                let value = match (kind, value.strip_prefix('\'')) {
                    (Some(k), Some(inner)) => {
                        format!("'{}'", self.name(k, inner.trim_end_matches('\'')))
                    }
                    (Some(k), None) => self.name(k, value),
                    (None, Some(inner)) => {
                        format!("'{}'", self.host_or_address(inner.trim_end_matches('\'')))
                    }
                    (None, None) => self.host_or_address(value),
                };
                format!("{}{}={value}", &caps[1], &caps[2])
            });
        }
        if has(&out, "-0x") || has(&out, "S-") || has(&out, "C-") {
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
        if has(&out, " \"") {
            out = replace_captures(&QUOTED_NAME, &out, |caps| {
                let kind = if &caps[1] == "database" {
                    Kind::Database
                } else {
                    Kind::User
                };
                format!("{} \"{}\"", &caps[1], self.name(kind, &caps[2]))
            });
        }
        if has(&out, "postgres: ") {
            out = self.title(&out);
        }
        if out.starts_with("uid=") {
            out = replace_captures(&OS_IDS, &out, |caps| {
                format!("{}({})", &caps[1], self.name(Kind::User, &caps[2]))
            });
        }
        if has(&out, "-U") || has(&out, "--username") {
            out = replace_captures(&PG_USER_FLAG, &out, |caps| {
                format!(
                    "{}{}{}",
                    &caps[1],
                    &caps[2],
                    self.name(Kind::User, &caps[3])
                )
            });
        }
        if (state.pg_command_line || PG_CLIENT.is_match(&out))
            && (has(&out, "-h") || has(&out, "-d") || has(&out, "--"))
        {
            out = replace_captures(&PG_HOST_DB_FLAG, &out, |caps| {
                let value = if caps[2].starts_with("-h") || caps[2].starts_with("--host") {
                    self.host_or_address(&caps[3])
                } else {
                    self.name(Kind::Database, &caps[3])
                };
                format!("{}{}{value}", &caps[1], &caps[2])
            });
        }
        if has(&out, "(as ") {
            out = replace_captures(&AS_USER, &out, |caps| {
                format!("(as {})", self.name(Kind::User, &caps[1]))
            });
        }
        if out.starts_with(|c: char| c.is_ascii_uppercase() || c == 'G')
            && let Some(c) = UNAME.captures(&out)
        {
            let host = c.get(2).expect("the node name");
            let token = self.host_or_address(host.as_str());
            out = format!("{}{token}{}", &out[..host.start()], &out[host.end()..]);
        }
        if has(&out, "ostname") || has(&out, "nodename") || has(&out, "HOSTNAME") {
            out = replace_captures(&HOST_FIELD, &out, |caps| match caps.get(2) {
                Some(host) => format!("{}{}", &caps[1], self.host_or_address(host.as_str())),
                None => format!("{}{}{}", &caps[3], &caps[4], self.host_or_address(&caps[5])),
            });
        }
        if has(&out, "Key (") {
            out = replace_captures(&KEY_DETAIL, &out, |caps| {
                if crate::is_token(&caps[2]) {
                    return caps[0].to_owned();
                }
                format!(
                    "Key ({})=({}) {}",
                    &caps[1],
                    self.token(Kind::QueryLiteral, &caps[2]),
                    &caps[3]
                )
            });
        }
        out
    }

    /// A process title's names: a client backend's user, database and client host
    /// (`postgres: [CLUSTER: ]USER DB HOST(PORT) STATE`), a WAL sender's user and host, an
    /// autovacuum worker's database.
    fn title(&mut self, text: &str) -> String {
        use pgmortem_parse::system::{PgRole, parse_title};
        let Some(at) = text.find("postgres: ") else {
            return text.to_owned();
        };
        let title = &text[at..];
        let Some(parsed) = parse_title(title) else {
            return text.to_owned();
        };
        let after = &title["postgres: ".len()..];
        let body_at = match &parsed.cluster {
            Some(c) => c.len() + 2,
            None => 0,
        };
        let (head, body) = after.split_at(body_at.min(after.len()));
        let rewritten = match parsed.role {
            PgRole::ClientBackend { .. } => {
                let mut words = body.splitn(4, ' ');
                let user = words.next().unwrap_or_default();
                let db = words.next().unwrap_or_default();
                let host = words.next().unwrap_or_default();
                let rest = words.next();
                let (host_name, port) = match host.rfind('(') {
                    Some(open) if host != "[local]" => host.split_at(open),
                    _ => (host, ""),
                };
                let mut s = format!(
                    "{} {} {}{port}",
                    self.name(Kind::User, user),
                    self.name(Kind::Database, db),
                    self.host_or_address(host_name)
                );
                if let Some(rest) = rest {
                    s.push(' ');
                    s.push_str(rest);
                }
                s
            }
            PgRole::WalSender { .. } => {
                // `walsender USER HOST(PORT) STATE`
                let mut words = body.splitn(4, ' ');
                let (w, user, host, rest) = (
                    words.next().unwrap_or_default(),
                    words.next(),
                    words.next(),
                    words.next(),
                );
                let mut s = w.to_owned();
                if let Some(user) = user {
                    s.push(' ');
                    s.push_str(&self.name(Kind::User, user));
                }
                if let Some(host) = host {
                    let (name, port) = match host.rfind('(') {
                        Some(open) => host.split_at(open),
                        None => (host, ""),
                    };
                    s.push(' ');
                    s.push_str(&self.host_or_address(name));
                    s.push_str(port);
                }
                if let Some(rest) = rest {
                    s.push(' ');
                    s.push_str(rest);
                }
                s
            }
            PgRole::AutovacuumWorker { detail } if !detail.is_empty() => {
                match body.rfind(detail.as_str()) {
                    Some(p) => {
                        let db = self.name(Kind::Database, &detail);
                        format!("{}{db}{}", &body[..p], &body[p + detail.len()..])
                    }
                    None => body.to_owned(),
                }
            }
            _ => return text.to_owned(),
        };
        format!("{}postgres: {head}{rewritten}", &text[..at])
    }

    /// A TAB-indented line (or rsyslog's continuation of a split message).
    fn continuation(&mut self, text: &str, state: &mut LineState) -> String {
        match state.continuation {
            Continuation::Query => self.query(text),
            Continuation::Plan(in_query) => self.plan_line(text, in_query, state),
            Continuation::Text => self.fields(text, state),
        }
    }

    /// Host names, addresses, home paths and archive names, wherever they are; the bundle's
    /// own host and OS user wherever they stand as whole tokens, when they are not common
    /// words.
    pub(crate) fn everywhere(&mut self, text: &str) -> String {
        let mut out = self.in_paths(text);
        for kind in [Kind::Hostname, Kind::User] {
            let list = match kind {
                Kind::Hostname => &self.hostnames,
                _ => &self.os_users,
            };
            let everywhere: Vec<String> = list
                .iter()
                .filter(|k| k.scope == Scope::Everywhere && has(&out, &k.name))
                .map(|k| k.name.clone())
                .collect();
            for name in everywhere {
                let spans = names::whole_tokens(&out, &name);
                if spans.is_empty() {
                    continue;
                }
                let mut s = String::with_capacity(out.len());
                let mut at = 0;
                for (start, end) in spans {
                    s.push_str(&out[at..start]);
                    s.push_str(&self.token(kind, &name));
                    at = end;
                }
                s.push_str(&out[at..]);
                out = s;
            }
        }
        out
    }

    /// What is replaced even inside a path: addresses, home directories (cut after the
    /// user's), the host part of the collectors' archive names. A name that is a directory's
    /// (`/proc/sys/vm/`, `/var/lib/postgresql/15/main`) stays.
    pub(crate) fn in_paths(&mut self, text: &str) -> String {
        let mut out = self.addresses(text);
        if has(&out, "/home/") || has(&out, "/Users/") || has(&out, "/root/") {
            out = self.home_paths(&out);
        }
        if has(&out, "sosreport-") || has(&out, "pgmortem-") {
            out = replace_captures(&ARCHIVE_NAME, &out, |caps| {
                format!("{}{}{}", &caps[1], self.host_or_address(&caps[2]), &caps[3])
            });
        }
        out
    }

    /// IPv4 and IPv6 addresses standing alone (not inside a longer dotted or hex word, not a
    /// version such as 1.2.3.4.5), loopback and unspecified addresses kept.
    pub(crate) fn addresses(&mut self, text: &str) -> String {
        let mut out = text.to_owned();
        if memchr::memchr_iter(b'.', out.as_bytes()).nth(2).is_some() {
            out = self.replace_candidates(&IPV4, &out, |before, after, after2| {
                let word =
                    |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
                // Not inside a dotted word (a version 1.2.3.4.5); a full stop may end it. A
                // hyphen and a letter after it make a version too (`1.0.2.0-k`).
                let dotted = before == Some('.') || (after == Some('.') && word(after2));
                let suffixed =
                    after == Some('-') && after2.is_some_and(|c| c.is_ascii_alphabetic());
                !(word(before) || word(after) || dotted || suffixed)
            });
        }
        if memchr::memchr_iter(b':', out.as_bytes()).nth(1).is_some() {
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
                            || is_documentation_v4(m.as_str())
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
}

/// 192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24: the tokens' own networks.
fn is_documentation_v4(a: &str) -> bool {
    a.starts_with("192.0.2.") || a.starts_with("198.51.100.") || a.starts_with("203.0.113.")
}

/// `re` applied to `text`, each match replaced by what `f` makes of its captures.
pub(crate) fn replace_captures(
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
