//! `postgresql.conf`: settings and include directives, as PostgreSQL's own lexer reads them.
//! Includes are listed, never followed (no I/O here).

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
}

/// A parsed `postgresql.conf`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PgConf {
    /// Settings in file order; a name set twice appears twice (the last one wins).
    pub entries: Vec<ConfEntry>,
    /// Include directives in file order.
    pub includes: Vec<ConfInclude>,
    /// Line accounting (comment and blank lines count as lines, not as unrecognised).
    pub stats: ParseStats,
}

impl PgConf {
    /// The effective value of `name` in this file: its last assignment.
    pub fn get(&self, name: &str) -> Option<&ConfEntry> {
        let name = name.to_ascii_lowercase();
        self.entries.iter().rev().find(|e| e.name == name)
    }
}

/// Parses a postgresql.conf.
pub fn parse_pg_conf(input: &[u8]) -> PgConf {
    let mut conf = PgConf::default();
    for line in Lines::new(input) {
        conf.stats.lines += 1;
        if line.lossy {
            conf.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.as_ref();
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
                    });
                } else {
                    conf.entries.push(ConfEntry {
                        name,
                        value,
                        line: line.number,
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
}
