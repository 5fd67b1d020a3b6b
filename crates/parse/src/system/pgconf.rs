//! `postgresql.conf`: settings and include directives, as PostgreSQL's own lexer reads them.
//! Includes are listed, never followed (no I/O here).
//!
//! The collector may hand over the main file with its includes inlined and
//! `postgresql.auto.conf` appended, each part between marker comments naming the file on the
//! database host:
//!
//! ```text
//! # pgmortem-collect: file /etc/postgresql/15/main/postgresql.conf
//! include_dir = 'conf.d'
//! # pgmortem-collect: file /etc/postgresql/15/main/conf.d/10-mem.conf
//! work_mem = 64MB
//! # pgmortem-collect: end /etc/postgresql/15/main/conf.d/10-mem.conf
//! include_if_exists = 'missing.conf'
//! # pgmortem-collect: not read /etc/postgresql/15/main/missing.conf: no such file
//! # pgmortem-collect: end /etc/postgresql/15/main/postgresql.conf
//! ```
//!
//! Markers are comments, so the last assignment of a name over the whole file is still the
//! value PostgreSQL uses; each entry also says which host file and line it came from, and the
//! files the collector could not read are listed with why.

use serde::Serialize;

use crate::ParseStats;
use crate::lines::Lines;

/// One `name = value` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfEntry {
    /// The name, lower-cased as PostgreSQL compares names (`shared_buffers`, `pg_stat_statements.max`).
    pub name: String,
    /// The value with quotes removed and escapes resolved (`'%m [%p] '` → `%m [%p] `).
    pub value: String,
    /// 1-based line number.
    pub line: u64,
    /// The file on the database host this line was copied from, when the collector marked it
    /// (the main file, an included one, `postgresql.auto.conf`); `None` in a file without
    /// markers.
    pub host_file: Option<String>,
    /// The line's 1-based number in `host_file` (`None` without markers).
    pub host_line: Option<u64>,
}

/// An include directive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfInclude {
    /// `include`, `include_if_exists` or `include_dir`.
    pub directive: String,
    /// The path as written (relative paths are relative to the including file's directory).
    pub path: String,
    /// 1-based line number.
    pub line: u64,
    /// The host file holding the directive, when the collector marked it (see [`ConfEntry`]).
    pub host_file: Option<String>,
    /// The directive's line in `host_file`.
    pub host_line: Option<u64>,
}

/// A file the collector could not inline (`# pgmortem-collect: not read PATH: REASON`): an
/// include whose target was missing or unreadable, or `postgresql.auto.conf` refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfNotRead {
    /// The file on the host.
    pub path: String,
    /// Why, as the collector put it (`no such file`, `permission denied`); empty when it gave
    /// none.
    pub reason: String,
    /// 1-based line of the marker.
    pub line: u64,
    /// The host file whose include asked for it, when inside one.
    pub host_file: Option<String>,
}

/// A parsed `postgresql.conf`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PgConf {
    /// Settings in file order; a name set twice appears twice (the last one wins).
    pub entries: Vec<ConfEntry>,
    /// Include directives in file order.
    pub includes: Vec<ConfInclude>,
    /// Files the collector could not inline, in file order.
    pub not_read: Vec<ConfNotRead>,
    /// Line accounting (comment, blank and marker lines count as lines, not as unrecognised;
    /// an `end` marker closing no open file is unrecognised).
    pub stats: ParseStats,
}

impl PgConf {
    /// The effective value of `name` in this file: its last assignment.
    pub fn get(&self, name: &str) -> Option<&ConfEntry> {
        let name = name.to_ascii_lowercase();
        self.entries.iter().rev().find(|e| e.name == name)
    }
}

/// What starts the collector's marker comments.
const MARKER: &str = "# pgmortem-collect: ";

/// A marker comment of the collector.
#[derive(Debug, PartialEq, Eq)]
enum Marker<'a> {
    /// `file PATH`: the lines that follow are PATH's.
    File(&'a str),
    /// `end PATH`: PATH's lines are over.
    End(&'a str),
    /// `not read PATH: REASON`.
    NotRead(&'a str, &'a str),
}

// # pgmortem-collect: file /etc/postgresql/15/main/conf.d/10-mem.conf
// # pgmortem-collect: not read /etc/postgresql/15/main/missing.conf: no such file
/// The marker on a line, if it is one.
fn marker(text: &str) -> Option<Marker<'_>> {
    let rest = text.strip_prefix(MARKER)?.trim_end();
    if let Some(path) = rest.strip_prefix("file ") {
        return Some(Marker::File(path));
    }
    if let Some(path) = rest.strip_prefix("end ") {
        return Some(Marker::End(path));
    }
    let tail = rest.strip_prefix("not read ")?;
    Some(match tail.split_once(": ") {
        Some((path, reason)) => Marker::NotRead(path, reason.trim()),
        None => Marker::NotRead(tail.strip_suffix(':').unwrap_or(tail), ""),
    })
}

/// Parses a postgresql.conf, with or without the collector's markers.
pub fn parse_pg_conf(input: &[u8]) -> PgConf {
    let mut conf = PgConf::default();
    // The host files open at this point, innermost last, with the lines of each seen so far.
    let mut open: Vec<(String, u64)> = Vec::new();
    for line in Lines::new(input) {
        conf.stats.lines += 1;
        if line.lossy {
            conf.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.as_ref();
        match marker(text) {
            Some(Marker::File(path)) => {
                open.push((path.to_owned(), 0));
                continue;
            }
            Some(Marker::End(path)) => {
                // Close `path` and whatever it left open (a file cut by the collector's cap).
                match open.iter().rposition(|(p, _)| p == path) {
                    Some(at) => open.truncate(at),
                    None => conf.stats.unrecognized(line.number, text),
                }
                continue;
            }
            Some(Marker::NotRead(path, reason)) => {
                conf.not_read.push(ConfNotRead {
                    path: path.to_owned(),
                    reason: reason.to_owned(),
                    line: line.number,
                    host_file: open.last().map(|(p, _)| p.clone()),
                });
                continue;
            }
            None => {}
        }
        let (host_file, host_line) = match open.last_mut() {
            Some((path, lines)) => {
                *lines += 1;
                (Some(path.clone()), Some(*lines))
            }
            None => (None, None),
        };
        match conf_line(text) {
            Ok(None) => {}
            Ok(Some((name, value))) => {
                conf.stats.records += 1;
                if matches!(
                    name.as_str(),
                    "include" | "include_if_exists" | "include_dir"
                ) {
                    conf.includes.push(ConfInclude {
                        directive: name,
                        path: value,
                        line: line.number,
                        host_file,
                        host_line,
                    });
                } else {
                    conf.entries.push(ConfEntry {
                        name,
                        value,
                        line: line.number,
                        host_file,
                        host_line,
                    });
                }
            }
            Err(()) => conf.stats.unrecognized(line.number, text),
        }
    }
    conf
}

// shared_buffers = 128MB			# min 128kB
// log_line_prefix = '%m [%p] %q%u@%d '
// include_if_exists 'extra.conf'
/// One line: nothing (blank or comment), a `name [=] value` pair, or an error.
fn conf_line(text: &str) -> Result<Option<(String, String)>, ()> {
    let rest = text.trim_start();
    if rest.is_empty() || rest.starts_with('#') {
        return Ok(None);
    }
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '-'))
        .unwrap_or(rest.len());
    if name_len == 0 || !rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        return Err(());
    }
    let name = rest[..name_len].to_ascii_lowercase();
    let mut after = rest[name_len..].trim_start();
    if let Some(a) = after.strip_prefix('=') {
        after = a.trim_start();
    }
    let (value, tail) = conf_value(after)?;
    let tail = tail.trim_start();
    if !(tail.is_empty() || tail.starts_with('#')) {
        return Err(());
    }
    Ok(Some((name, value)))
}

/// A quoted string (`''` and backslash escapes) or an unquoted token.
fn conf_value(input: &str) -> Result<(String, &str), ()> {
    if let Some(body) = input.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = body.char_indices().peekable();
        while let Some((i, c)) = chars.next() {
            match c {
                '\'' if matches!(chars.peek(), Some((_, '\''))) => {
                    chars.next();
                    out.push('\'');
                }
                '\'' => return Ok((out, &body[i + 1..])),
                '\\' => match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, 'r')) => out.push('\r'),
                    Some((_, 'b')) => out.push('\u{8}'),
                    Some((_, 'f')) => out.push('\u{c}'),
                    Some((_, other)) => out.push(other),
                    None => return Err(()),
                },
                c => out.push(c),
            }
        }
        return Err(());
    }
    let end = input
        .find(|c: char| c.is_whitespace() || c == '#')
        .unwrap_or(input.len());
    if end == 0 {
        return Err(());
    }
    Ok((input[..end].to_owned(), &input[end..]))
}

/// Sniffs a postgresql.conf: `name = value` lines and `#`-comments naming well-known settings.
pub fn sniff_pg_conf(head: &[u8]) -> Option<f32> {
    let text = String::from_utf8_lossy(head);
    let markers = [
        "max_connections",
        "shared_buffers",
        "listen_addresses",
        "FILE LOCATIONS",
        "data_directory",
        "dynamic_shared_memory_type",
    ];
    let hits = markers.iter().filter(|m| text.contains(*m)).count();
    let conf = parse_pg_conf(head);
    let ok = conf.stats.unrecognized_lines * 10 <= conf.stats.lines;
    (hits >= 2 && ok && conf.stats.lines > 0).then_some(0.7)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_quotes_escapes_and_includes() {
        let conf = parse_pg_conf(b"# comment\nshared_buffers = 128MB\t\t# min 128kB\nlog_line_prefix = '%m [%p] %q%u@%d '\nsearch_path '\"$user\", public'\nx.y=1\nmsg = 'it''s \\'ok\\''\ninclude_dir 'conf.d'\ninclude_if_exists = 'extra.conf' # optional\nSHARED_BUFFERS = 1GB\n= 5\nbad value here\nunterminated = 'abc\n");
        assert_eq!(conf.get("shared_buffers").unwrap().value, "1GB");
        assert_eq!(
            conf.get("log_line_prefix").unwrap().value,
            "%m [%p] %q%u@%d "
        );
        assert_eq!(conf.get("search_path").unwrap().value, "\"$user\", public");
        assert_eq!(conf.get("x.y").unwrap().value, "1");
        assert_eq!(conf.get("msg").unwrap().value, "it's 'ok'");
        assert_eq!(conf.includes.len(), 2);
        assert_eq!(conf.includes[1].directive, "include_if_exists");
        assert_eq!(conf.includes[1].path, "extra.conf");
        assert_eq!(conf.stats.unrecognized_lines, 3);
    }

    /// The example of the collector's contract: the main file, an included one, a missing
    /// include, postgresql.auto.conf appended.
    const MARKED: &str = "\
# pgmortem-collect: file /etc/postgresql/15/main/postgresql.conf
shared_buffers = 128MB
include_dir = 'conf.d'
# pgmortem-collect: file /etc/postgresql/15/main/conf.d/10-mem.conf
work_mem = 64MB
# pgmortem-collect: end /etc/postgresql/15/main/conf.d/10-mem.conf
include_if_exists = 'missing.conf'
# pgmortem-collect: not read /etc/postgresql/15/main/missing.conf: no such file
max_connections = 300
# pgmortem-collect: end /etc/postgresql/15/main/postgresql.conf
# pgmortem-collect: file /var/lib/postgresql/15/main/postgresql.auto.conf
# Do not edit this file manually!
work_mem = '1GB'
# pgmortem-collect: end /var/lib/postgresql/15/main/postgresql.auto.conf
";

    fn place(e: &ConfEntry) -> (u64, Option<&str>, Option<u64>) {
        (e.line, e.host_file.as_deref(), e.host_line)
    }

    #[test]
    fn markers_give_each_line_its_host_file_and_line() {
        let conf = parse_pg_conf(MARKED.as_bytes());
        let main = Some("/etc/postgresql/15/main/postgresql.conf");
        assert_eq!(place(&conf.entries[0]), (2, main, Some(1)));
        assert_eq!(
            place(&conf.entries[1]),
            (
                5,
                Some("/etc/postgresql/15/main/conf.d/10-mem.conf"),
                Some(1)
            )
        );
        // After the included file, the main file goes on at its own next line: the include
        // directives are its lines 2 and 3, max_connections its line 4.
        assert_eq!(place(&conf.entries[2]), (9, main, Some(4)));
        assert_eq!(conf.includes[1].host_line, Some(3));
        assert_eq!(conf.includes[1].host_file.as_deref(), main);
        assert_eq!(conf.stats.unrecognized_lines, 0);
        assert_eq!(conf.stats.records, 6);
    }

    #[test]
    fn postgresql_auto_conf_appended_last_wins() {
        let conf = parse_pg_conf(MARKED.as_bytes());
        let work_mem = conf.get("work_mem").unwrap();
        assert_eq!(work_mem.value, "1GB");
        assert_eq!(
            place(work_mem),
            (
                13,
                Some("/var/lib/postgresql/15/main/postgresql.auto.conf"),
                Some(2)
            )
        );
        assert_eq!(conf.get("max_connections").unwrap().value, "300");
    }

    #[test]
    fn files_not_read_are_listed_with_their_reason_and_includer() {
        let conf = parse_pg_conf(MARKED.as_bytes());
        assert_eq!(
            conf.not_read,
            [ConfNotRead {
                path: "/etc/postgresql/15/main/missing.conf".into(),
                reason: "no such file".into(),
                line: 8,
                host_file: Some("/etc/postgresql/15/main/postgresql.conf".into()),
            }]
        );
        // A reason holding colons keeps them; a marker without a reason has an empty one.
        let conf = parse_pg_conf(
            b"# pgmortem-collect: not read /var/lib/pg/postgresql.auto.conf: cat: Permission denied\n\
              # pgmortem-collect: not read /x.conf\n",
        );
        assert_eq!(conf.not_read[0].reason, "cat: Permission denied");
        assert_eq!(conf.not_read[0].host_file, None);
        assert_eq!(
            (
                conf.not_read[1].path.as_str(),
                conf.not_read[1].reason.as_str()
            ),
            ("/x.conf", "")
        );
    }

    #[test]
    fn files_nest_and_an_unclosed_file_is_closed_by_its_includer() {
        let conf = parse_pg_conf(
            b"# pgmortem-collect: file /a.conf\n\
              include 'b.conf'\n\
              # pgmortem-collect: file /b.conf\n\
              include 'c.conf'\n\
              # pgmortem-collect: file /c.conf\n\
              x = 1\n\
              # pgmortem-collect: end /c.conf\n\
              y = 2\n\
              # pgmortem-collect: file /d.conf\n\
              cut = 3\n\
              # pgmortem-collect: end /b.conf\n\
              z = 4\n\
              # pgmortem-collect: end /a.conf\n\
              # pgmortem-collect: end /a.conf\n\
              after = 5\n",
        );
        let at = |name: &str| {
            let e = conf.get(name).unwrap();
            (e.host_file.clone().unwrap_or_default(), e.host_line)
        };
        assert_eq!(at("x"), ("/c.conf".into(), Some(1)));
        assert_eq!(at("y"), ("/b.conf".into(), Some(2)));
        // /d.conf was never ended (cut): ending /b.conf closes it too.
        assert_eq!(at("cut"), ("/d.conf".into(), Some(1)));
        assert_eq!(at("z"), ("/a.conf".into(), Some(2)));
        assert_eq!(at("after"), (String::new(), None));
        // The second `end /a.conf` closes nothing.
        assert_eq!(conf.stats.unrecognized_lines, 1);
        assert_eq!(conf.stats.unrecognized_examples[0].0, 14);
    }

    #[test]
    fn a_file_without_markers_has_no_host_places() {
        let conf =
            parse_pg_conf(b"# an ordinary comment\nshared_buffers = 1GB\ninclude 'x.conf'\n");
        let e = conf.get("shared_buffers").unwrap();
        assert_eq!(place(e), (2, None, None));
        assert_eq!(conf.includes[0].host_file, None);
        assert!(conf.not_read.is_empty());
        assert_eq!(conf.stats.unrecognized_lines, 0);
    }
}
