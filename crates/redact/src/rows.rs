//! The rows of listings, rewritten column by column with their spacing kept: `ps` (its user
//! and group columns, by the header the file begins with), `ls -l` (owner and group, when they
//! are an OS user the bundle runs PostgreSQL as), psql's unaligned tables (`|`-separated, by
//! their header: users, databases, applications, client hosts, query text).

use std::sync::LazyLock;

use regex::Regex;

use crate::line::LineState;
use crate::{Kind, Redactor};

/// What a column of a psql table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Column {
    Name(Kind),
    Host,
    Query,
    Other,
}

/// `ls -l`: mode, links, owner, group (after the size in blocks with `-s`).
static LS_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:\s*\d+ )?[-dlcbpsD][rwxsStTlL-]{9}[.+@]?\s+\d+\s+(\S+)\s+(\S+)\s")
        .expect("a valid pattern")
});

impl Redactor {
    /// A row of a `ps` listing (a first line of upper-case column names with `USER`, or a
    /// `UID` column that prints names as `ps -elfL` does), its user columns replaced in place;
    /// `None` when the file is not one.
    pub(crate) fn ps_row(&mut self, line: &str, state: &mut LineState) -> Option<String> {
        if state.lines == 1 {
            let header: Vec<&str> = line.split_whitespace().collect();
            if header.len() >= 3
                && header
                    .iter()
                    .all(|h| h.bytes().all(|b| b.is_ascii_uppercase() || b == b'%'))
            {
                let users: Vec<usize> = header
                    .iter()
                    .enumerate()
                    .filter(|(_, h)| {
                        matches!(
                            **h,
                            "USER"
                                | "RUSER"
                                | "EUSER"
                                | "UNAME"
                                | "UID"
                                | "RUID"
                                | "GROUP"
                                | "RGROUP"
                                | "EGROUP"
                        )
                    })
                    .map(|(i, _)| i)
                    .collect();
                state.ps_users = (!users.is_empty()).then_some(users);
            }
            return state.ps_users.as_ref().map(|_| line.to_owned());
        }
        let columns = state.ps_users.clone()?;
        let mut out = line.to_owned();
        // From the last column back, so that the earlier fields' offsets hold.
        let fields = field_spans(line);
        for &column in columns.iter().rev() {
            let Some(&(start, end)) = fields.get(column) else {
                continue;
            };
            let word = &line[start..end];
            if word.bytes().all(|b| b.is_ascii_digit()) {
                continue;
            }
            let new = self.name(Kind::User, word);
            out = replace_aligned(&out, start, end, &new);
        }
        Some(out)
    }

    /// A row of `ls -l`: its owner and group replaced when they are an OS user the bundle is
    /// known to run PostgreSQL as.
    pub(crate) fn ls_row(&mut self, line: &str) -> Option<String> {
        // `-s` prints the size in blocks first.
        let at = line
            .trim_start()
            .split_once(' ')
            .filter(|(blocks, _)| !blocks.is_empty() && blocks.bytes().all(|b| b.is_ascii_digit()))
            .map_or(0, |(_, rest)| line.len() - rest.len());
        let mode = line.as_bytes().get(at + 1..at + 10)?;
        if !mode.iter().all(|b| b"rwxsStTlL-".contains(b)) {
            return None;
        }
        let c = LS_ROW.captures(line)?;
        let mut out = line.to_owned();
        for group in [2, 1] {
            let m = c.get(group).expect("owner and group");
            if self.os_users.iter().any(|k| k.name == m.as_str()) {
                let new = self.name(Kind::User, m.as_str());
                out = replace_aligned(&out, m.start(), m.end(), &new);
            }
        }
        Some(out)
    }

    /// A row of a `|`-separated table with a header (psql `-A`), rewritten by column; `None`
    /// when the line is not one.
    pub(crate) fn table_row(&mut self, line: &str, state: &mut LineState) -> Option<String> {
        if state.columns.is_none() {
            // The header is the first line of psql's unaligned output.
            if state.lines != 1 {
                return None;
            }
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

fn is_column_name(h: &str) -> bool {
    !h.is_empty()
        && h.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
}

/// The byte ranges of the whitespace-separated fields of `line`.
fn field_spans(line: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in line.char_indices() {
        match (c.is_whitespace(), start) {
            (false, None) => start = Some(i),
            (true, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, line.len()));
    }
    out
}

/// `line` with `line[start..end]` replaced by `new`, the spaces after it grown or shrunk so
/// that the next column starts where it did (at least one space kept).
fn replace_aligned(line: &str, start: usize, end: usize, new: &str) -> String {
    let old = end - start;
    let rest = &line[end..];
    let spaces = rest.len() - rest.trim_start_matches(' ').len();
    let mut out = String::with_capacity(line.len() + new.len());
    out.push_str(&line[..start]);
    out.push_str(new);
    if spaces == 0 || rest.len() == spaces {
        out.push_str(rest);
        return out;
    }
    let width = old + spaces;
    let pad = width.saturating_sub(new.chars().count()).max(1);
    out.extend(std::iter::repeat_n(' ', pad));
    out.push_str(&rest[spaces..]);
    out
}
