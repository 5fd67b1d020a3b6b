//! Rewrites a pgmortem bundle so that it can be shared: host names, IP addresses, user,
//! database and application names and the literals of queries become stable tokens (the same
//! original gives the same token in every file, so that events still correlate), and paths
//! under home directories are cut. What was replaced is counted by kind, never listed.
//!
//! Every file keeps its format ([`redact_bundle`]): JSON is parsed and only its string values
//! are rewritten, each by what its key holds ([`json`]); a csvlog is rewritten field by field,
//! keeping its columns; every other file line by line ([`Redactor::redact_line`]),
//! knowing the forms names and queries take in them:
//!
//! - names where they are names: `uname -a`'s node name, `hostname`'s output, the
//!   `kernel.hostname` setting, the host field of syslog and journal lines, the archives'
//!   names (`pgmortem-HOST-…`, `sosreport-HOST-…`); the `log_line_prefix`'s `%u`, `%d`, `%a`,
//!   `%r`/`%h` fields, `key=value` fields, connection and authentication messages in every
//!   language of PostgreSQL's catalogs, process titles, `ps` and `ls -l` user columns, `id`
//!   output, `-U`/`-h`/`-d` arguments of command lines, pgbouncer's `C-0x…: db/user@addr:port`;
//! - the bundle's own host and OS user elsewhere too, as whole tokens, never inside a word, a
//!   path or a setting's name, and only when the name is not a common word of a bundle
//!   (else [`Redacted::names_only_in_fields`] says so, with a [`FieldsOnlyReason`]): a host called `vm` is replaced in `uname -a` but leaves `vm.swappiness`,
//!   `/proc/sys/vm/` and `total-vm:` alone;
//! - the literals of query text wherever a log prints it: `statement:`,
//!   `STATEMENT:`, `QUERY:`, `execute …:`, `parameters:`, `Failed process was running:`,
//!   `CONTEXT:`'s SQL statements and COPY lines, constraint violations' values,
//!   auto_explain's plans, memory-context dumps, the `pg_stat_activity` dump's `query` column.

mod archive;
mod csv;
pub mod json;
mod line;
mod names;
mod pglog;
mod rows;
mod sql;

use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

pub use archive::{FieldsOnly, RedactError, Redacted, redact_bundle};
pub use line::LineState;
pub use names::FieldsOnlyReason;

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
    /// String and numeric constants of queries, and the values of constraint messages.
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

/// Role, user, database and application names that identify nothing: PostgreSQL's and the
/// OS's built-in ones and PostgreSQL's own programs, kept as they are (the translations of
/// `[unknown]` too).
const KEPT_NAMES: &[&str] = &[
    "",
    "psql",
    "pgbench",
    "pg_dump",
    "pg_dumpall",
    "pg_restore",
    "pg_basebackup",
    "pg_receivewal",
    "pg_recvlogical",
    "vacuumdb",
    "reindexdb",
    "clusterdb",
    "walreceiver",
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

/// Host names that name no host: kept.
const HOSTS_KEPT: &[&str] = &[
    "[local]",
    "localhost",
    "localhost.localdomain",
    "(none)",
    "[unknown]",
    "unknown",
    "-",
];

/// Whether `name` is one of [`KEPT_NAMES`] or a translation of `[unknown]`.
fn is_kept(name: &str) -> bool {
    KEPT_NAMES.contains(&name) || pglog::is_unknown_translation(name)
}

/// Whether a role, database or application name is kept as it is, identifying nothing
/// (`postgres`, `template1`, `psql`, `[unknown]` in any catalog language, …), or is a token
/// this crate hands out (`user_1`, `db_2`): what a redacted bundle may still name.
pub fn is_kept_or_token(name: &str) -> bool {
    is_kept(name) || is_token(name)
}

/// How many of each kind were replaced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Count {
    /// Occurrences replaced.
    pub occurrences: u64,
    /// Distinct originals (tokens handed out).
    pub distinct: u64,
}

/// The rewriter, holding the tokens handed out so far and the names the bundle is known to
/// hold.
#[derive(Debug, Default)]
pub struct Redactor {
    tokens: HashMap<(Kind, String), String>,
    counts: BTreeMap<Kind, Count>,
    hostnames: Vec<names::Known>,
    os_users: Vec<names::Known>,
}

impl Redactor {
    /// A redactor that has handed out no token yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes `name` the bundle's host name (from `uname -a`, `hostname`, the perf header, the
    /// archive's name): replaced in every field that names the host, and wherever else it
    /// stands as a whole token unless it is a common word (a kernel, system or PostgreSQL
    /// word such as `vm`, `data`, `main`, or shorter than three characters). A fully qualified name makes its first label known too.
    pub fn learn_hostname(&mut self, name: &str) {
        let name = name.trim();
        if name.is_empty()
            || matches!(
                name.to_ascii_lowercase().as_str(),
                "localhost" | "localhost.localdomain" | "(none)" | "(unknown)"
            )
            || is_token(name)
            || name.contains(char::is_whitespace)
        {
            return;
        }
        names::add(&mut self.hostnames, name, names::scope_of(name));
        if let Some((first, _)) = name.split_once('.')
            && !first.is_empty()
            && !first.bytes().all(|b| b.is_ascii_digit())
        {
            names::add(&mut self.hostnames, first, names::scope_of(first));
        }
    }

    /// Makes `name` an OS user PostgreSQL runs as (from a `ps` listing, the collector's
    /// manifest): replaced in user fields (`ps`, `ls -l`, `id`), and wherever else it stands as
    /// a whole token unless it is a common word. The built-in users (`postgres`, `root`) and
    /// numeric ids are kept.
    pub fn learn_os_user(&mut self, name: &str) {
        let name = name.trim();
        if name.is_empty()
            || is_kept(name)
            || is_token(name)
            || name.bytes().all(|b| b.is_ascii_digit())
            || name.contains(char::is_whitespace)
        {
            return;
        }
        names::add(&mut self.os_users, name, names::scope_of(name));
    }

    /// Narrows a known name to its name fields because the bundle uses the same word as a
    /// path component or a setting's name.
    pub(crate) fn note_structural_uses(&mut self, text: &str) {
        for list in [&mut self.hostnames, &mut self.os_users] {
            for known in list.iter_mut() {
                if known.scope == names::Scope::Everywhere
                    && names::used_structurally(text, &known.name)
                {
                    known.scope =
                        names::Scope::FieldsOnly(names::FieldsOnlyReason::UsedInTheBundle);
                }
            }
        }
    }

    /// Counts of what was replaced, by kind (every kind present, zero when none).
    pub fn counts(&self) -> BTreeMap<Kind, Count> {
        Kind::ALL
            .iter()
            .map(|k| (*k, self.counts.get(k).copied().unwrap_or_default()))
            .collect()
    }

    /// The known names replaced only in their fields, as their tokens and why (never the
    /// names); a name no field printed has no token and is not listed.
    pub fn fields_only(&mut self) -> Vec<FieldsOnly> {
        let mut out = Vec::new();
        let lists = [
            (Kind::Hostname, self.hostnames.clone()),
            (Kind::User, self.os_users.clone()),
        ];
        for (kind, list) in lists {
            for known in list {
                if let names::Scope::FieldsOnly(reason) = known.scope
                    && let Some(token) = self.tokens.get(&(kind, known.name.clone()))
                {
                    out.push(FieldsOnly {
                        kind,
                        token: token.clone(),
                        reason,
                    });
                }
            }
        }
        out.sort_by(|a, b| (a.kind, &a.token).cmp(&(b.kind, &b.token)));
        out
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

    /// A name of `kind` in a field that names one, replaced unless it is a built-in name kept
    /// or already a token; quotes around it are kept.
    fn name(&mut self, kind: Kind, original: &str) -> String {
        let bare = original.trim_matches('"');
        if is_kept(bare) || is_token(bare) {
            return original.to_owned();
        }
        let token = self.token(kind, bare);
        if original.starts_with('"') && original.ends_with('"') && original.len() > 1 {
            format!("\"{token}\"")
        } else {
            token
        }
    }

    /// A host in a field that names one: an address (replaced with the rest of the text's), a
    /// socket directory or `[local]` (kept), or a name.
    fn host_or_address(&mut self, value: &str) -> String {
        let bare = value.trim_matches('"');
        if bare.parse::<std::net::IpAddr>().is_ok() {
            return self.addresses(value);
        }
        if bare.is_empty()
            || is_token(bare)
            || HOSTS_KEPT.contains(&bare)
            || bare.starts_with('/')
            || bare.starts_with('@')
        {
            return value.to_owned();
        }
        let token = self.token(Kind::Hostname, bare);
        if value.starts_with('"') && value.ends_with('"') && value.len() > 1 {
            format!("\"{token}\"")
        } else {
            token
        }
    }

    /// `sql` with its literals replaced (a number's token unquoted, where the number stood).
    fn query(&mut self, sql: &str) -> String {
        let mut out = String::with_capacity(sql.len());
        let mut at = 0;
        for lit in sql::literals(sql) {
            let (s, e, string) = match lit {
                sql::Literal::String(s, e) => (s, e, true),
                sql::Literal::Number(s, e) => (s, e, false),
            };
            out.push_str(&sql[at..s]);
            let original = &sql[s..e];
            if original == "'<redacted>'" || is_token(original) {
                // The collector's own redaction of a password; a token already.
                out.push_str(original);
            } else {
                let token = self.token(Kind::QueryLiteral, original);
                if string {
                    out.push_str(&token);
                } else {
                    out.push_str(token.trim_matches('\''));
                }
            }
            at = e;
        }
        out.push_str(&sql[at..]);
        if has_ignore_case(&out, "ROLE")
            || has_ignore_case(&out, "USER")
            || has_ignore_case(&out, "DATABASE")
            || has_ignore_case(&out, "GROUP")
            || has_ignore_case(&out, "OWNER")
            || has_ignore_case(&out, "AUTHORIZATION")
        {
            out = self.ddl_names(&out);
        }
        out
    }

    /// The roles and databases SQL names as such: `CREATE|ALTER|DROP ROLE|USER|GROUP|DATABASE
    /// name`, `OWNER TO name` (and `OWNER [=] name` in `CREATE DATABASE`), `SET ROLE name`,
    /// `SET SESSION AUTHORIZATION name`; SQL's own `CURRENT_USER`, `PUBLIC`, … kept.
    fn ddl_names(&mut self, sql: &str) -> String {
        static DDL: LazyLock<Regex> = LazyLock::new(|| {
            Regex::new(
                r#"(?i)\b((?:CREATE|ALTER|DROP)\s+(ROLE|USER|GROUP|DATABASE)\s+(?:IF\s+(?:NOT\s+)?EXISTS\s+)?|(OWNER)\s+TO\s+|SET\s+(?:SESSION\s+)?(ROLE|SESSION\s+AUTHORIZATION)\s+|(OWNER)\s*=?\s*)("[^"]+"|[A-Za-z_][A-Za-z0-9_$]*)"#,
            )
            .expect("a valid pattern")
        });
        let create_database = has_ignore_case(sql, "CREATE DATABASE");
        crate::line::replace_captures(&DDL, sql, |caps| {
            let name = &caps[6];
            let keyword = matches!(
                name.to_ascii_uppercase().as_str(),
                "CURRENT_USER"
                    | "SESSION_USER"
                    | "CURRENT_ROLE"
                    | "PUBLIC"
                    | "NONE"
                    | "DEFAULT"
                    | "ALL"
                    | "MAPPING"
                    | "WITH"
                    | "TO"
                    | "LOGIN"
                    | "SUPERUSER"
                    | "PASSWORD"
            );
            // `OWNER` alone is a column's name but in `CREATE DATABASE … OWNER x`.
            if keyword || (caps.get(5).is_some() && !create_database) {
                return caps[0].to_owned();
            }
            let kind = match caps.get(2).map(|m| m.as_str().to_ascii_uppercase()) {
                Some(k) if k == "DATABASE" => Kind::Database,
                _ => Kind::User,
            };
            format!("{}{}", &caps[1], self.name(kind, name))
        })
    }

    /// A value a message prints whole (a constraint's key, a failing row, a COPY line): one
    /// token, the parentheses and column names around it kept.
    fn values(&mut self, text: &str) -> String {
        if text.is_empty() || is_token(text) {
            return text.to_owned();
        }
        // `(email)=(a@b.c)`: the columns stay, the values go.
        if let Some((cols, vals)) = text.split_once(")=(")
            && cols.starts_with('(')
            && let Some(inner) = vals.strip_suffix(')')
        {
            if is_token(inner) {
                return text.to_owned();
            }
            // Keyed as the query's literal of the same value is (`'a@b.c'`, `42`), so that
            // the violation and the statement that set it off share a token.
            if inner.parse::<f64>().is_ok() {
                let token = self.token(Kind::QueryLiteral, inner);
                return format!("{cols})=({})", token.trim_matches('\''));
            }
            let quoted = format!("'{}'", inner.replace('\'', "''"));
            return format!("{cols})=({})", self.token(Kind::QueryLiteral, &quoted));
        }
        if let Some(inner) = text.strip_prefix('(').and_then(|t| t.strip_suffix(')')) {
            if is_token(inner) {
                return text.to_owned();
            }
            return format!("({})", self.token(Kind::QueryLiteral, inner));
        }
        // A value the message quotes itself (`COPY people, line 1, column age: "thirty"`).
        self.token(Kind::QueryLiteral, text)
            .trim_matches('\'')
            .to_owned()
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

/// Whether `needle` is in `text` (memchr's search: every line of a bundle asks several times).
fn has(text: &str, needle: &str) -> bool {
    memchr::memmem::find(text.as_bytes(), needle.as_bytes()).is_some()
}

/// Whether `needle` (upper-case ASCII) is in `text`, whatever its case.
fn has_ignore_case(text: &str, needle: &str) -> bool {
    text.as_bytes()
        .windows(needle.len())
        .any(|w| w.eq_ignore_ascii_case(needle.as_bytes()))
}

/// Whether `s` is a token this crate hands out.
fn is_token(s: &str) -> bool {
    let s = s.trim_matches('\'');
    let numbered = |prefix: &str| {
        s.strip_prefix(prefix)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    };
    numbered("host-")
        || numbered("user_")
        || numbered("db_")
        || numbered("app_")
        || numbered("lit_")
}

#[cfg(test)]
mod tests;
