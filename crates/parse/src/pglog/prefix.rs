//! The `log_line_prefix` compiler: prefix text → a sequence of literals and typed fields, and a
//! matcher that reads those fields back out of a log line.
//!
//! Each escape has a *shape*. Fields with a grammar of their own (`%m`, `%p`, `%c`, `%e`, …)
//! are read by that grammar; free-text fields (`%u`, `%d`, `%a`, `%r`, `%b`, `%i`, …) end where
//! whatever follows them in the prefix matches, trying the shortest value first and
//! backtracking if the rest of the line does not fit. The line fits only when the text after
//! the prefix starts with a severity word, which settles `%q` (a non-session process stops the
//! prefix there) and free text at the end of the prefix. Backtracking runs on a fixed step
//! budget per line and free-text values are at most [`MAX_TEXT_FIELD`] bytes, so a hostile line
//! costs bounded time.
//!
//! Padding (`%-10u`, `%10p`) is printf's: the value is right-aligned in (`10`) or left-aligned
//! and space-filled to (`-10`) at least that many bytes; the spaces are stripped from the value.

use super::{PgLogError, time};

/// The escapes of `log_line_prefix` this parser reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Escape {
    /// `%m`: `2026-11-21 17:08:44.123 UTC`
    Timestamp,
    /// `%t`: `2026-11-21 17:08:44 UTC`
    TimestampSeconds,
    /// `%n`: `1763744924.123`
    Epoch,
    /// `%p`: `24797`
    Pid,
    /// `%l`: session line number
    SessionLine,
    /// `%c`: `691f9e2c.6a1c`
    SessionId,
    /// `%u`: user
    User,
    /// `%d`: database
    Database,
    /// `%a`: application name
    Application,
    /// `%r`: `127.0.0.1(54321)`, `[local]`
    RemoteHostPort,
    /// `%h`: `127.0.0.1`, `[local]`
    RemoteHost,
    /// `%b`: `client backend`, `checkpointer`, …
    BackendType,
    /// `%e`: `53200`
    Sqlstate,
    /// `%x`: transaction id
    Xid,
    /// `%v`: `3/12`
    Vxid,
    /// `%i`: command tag
    CommandTag,
    /// `%s`: session start, like `%t`
    SessionStart,
    /// `%P`: parallel leader PID
    LeaderPid,
    /// `%Q`: query id
    QueryId,
    /// `%L`: local address
    LocalAddress,
}

/// Number of [`Escape`] variants (size of the field table).
const ESCAPES: usize = 20;

/// Longest free-text field value considered, in bytes (NAMEDATALEN is 64, host names 255).
pub(crate) const MAX_TEXT_FIELD: usize = 1024;

/// Backtracking steps allowed per line.
const STEP_BUDGET: u32 = 4096;

/// How a field's extent is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// `%m` (`millis`) / `%t` / `%s`.
    Stamp { millis: bool },
    /// `%n`.
    Epoch,
    /// Digits, maybe empty (`%P` prints nothing outside parallel workers), maybe signed (`%Q`).
    Digits { signed: bool },
    /// `%c`: hex `.` hex.
    SessionId,
    /// `%v`: digits `/` digits, or nothing.
    Vxid,
    /// `%e`: five of `[0-9A-Z]`.
    Sqlstate,
    /// Anything, delimited by what follows.
    Text,
}

impl Escape {
    fn from_letter(c: char) -> Option<Escape> {
        Some(match c {
            'm' => Escape::Timestamp,
            't' => Escape::TimestampSeconds,
            'n' => Escape::Epoch,
            'p' => Escape::Pid,
            'l' => Escape::SessionLine,
            'c' => Escape::SessionId,
            'u' => Escape::User,
            'd' => Escape::Database,
            'a' => Escape::Application,
            'r' => Escape::RemoteHostPort,
            'h' => Escape::RemoteHost,
            'b' => Escape::BackendType,
            'e' => Escape::Sqlstate,
            'x' => Escape::Xid,
            'v' => Escape::Vxid,
            'i' => Escape::CommandTag,
            's' => Escape::SessionStart,
            'P' => Escape::LeaderPid,
            'Q' => Escape::QueryId,
            'L' => Escape::LocalAddress,
            _ => return None,
        })
    }

    fn shape(self) -> Shape {
        match self {
            Escape::Timestamp => Shape::Stamp { millis: true },
            Escape::TimestampSeconds | Escape::SessionStart => Shape::Stamp { millis: false },
            Escape::Epoch => Shape::Epoch,
            Escape::Pid | Escape::SessionLine | Escape::Xid | Escape::LeaderPid => {
                Shape::Digits { signed: false }
            }
            Escape::QueryId => Shape::Digits { signed: true },
            Escape::SessionId => Shape::SessionId,
            Escape::Vxid => Shape::Vxid,
            Escape::Sqlstate => Shape::Sqlstate,
            Escape::User
            | Escape::Database
            | Escape::Application
            | Escape::RemoteHostPort
            | Escape::RemoteHost
            | Escape::BackendType
            | Escape::CommandTag
            | Escape::LocalAddress => Shape::Text,
        }
    }
}

/// One element of a compiled prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Item {
    /// Text printed as is (`%%` becomes `%`).
    Literal(String),
    /// An escape with its printf padding (0 = none).
    Field { escape: Escape, padding: i32 },
    /// `%q`: non-session processes stop the prefix here.
    SessionOnlyFromHere,
}

/// A compiled `log_line_prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLinePrefix {
    text: String,
    items: Vec<Item>,
    /// No free-text field and no `%q`: the line is read left to right without backtracking.
    simple: bool,
    /// The escapes the prefix prints, each once, in order: what a record is filled from.
    escapes: Vec<Escape>,
}

/// The raw field values read from one line's prefix (padding stripped; empty values absent),
/// as byte ranges of the line: small enough to live on the stack and be reset for every line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrefixFields<'a> {
    line: &'a str,
    spans: [Span; ESCAPES],
}

/// A field's bytes in the line (`start == end`: not printed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Span {
    start: u32,
    end: u32,
}

impl<'a> PrefixFields<'a> {
    /// No field read yet from `line`.
    pub(crate) fn new(line: &'a str) -> Self {
        PrefixFields {
            line,
            spans: [Span::default(); ESCAPES],
        }
    }

    /// The value of `escape`, when the prefix has it and the line printed something for it.
    pub(crate) fn get(&self, escape: Escape) -> Option<&'a str> {
        let Span { start, end } = self.spans[escape as usize];
        if start == end {
            return None;
        }
        self.line.get(start as usize..end as usize)
    }

    /// Records `value`, a slice of the line (nothing when it is empty).
    fn set(&mut self, escape: Escape, value: &'a str) {
        let start = value.as_ptr() as usize - self.line.as_ptr() as usize;
        // Lines longer than u32::MAX are refused before matching (`match_into`).
        self.spans[escape as usize] = Span {
            start: start as u32,
            end: (start + value.len()) as u32,
        };
    }

    fn clear(&mut self, escape: Escape) {
        self.spans[escape as usize] = Span::default();
    }
}

impl LogLinePrefix {
    /// Compiles prefix text such as `%m [%p] %q%u@%d `. Fails on an escape PostgreSQL does not
    /// print, on padding without an escape letter and on a lone `%` at the end.
    pub fn compile(text: &str) -> Result<LogLinePrefix, PgLogError> {
        let invalid = |reason: String| PgLogError::InvalidPrefix {
            prefix: text.to_owned(),
            reason,
        };
        let mut items = Vec::new();
        let mut literal = String::new();
        let mut chars = text.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            if c != '%' {
                literal.push(c);
                continue;
            }
            let mut pad = String::new();
            while let Some(&(_, d)) = chars.peek() {
                if d.is_ascii_digit() || (d == '-' && pad.is_empty()) {
                    pad.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            let Some((_, letter)) = chars.next() else {
                return Err(invalid(format!(
                    "`%{pad}` at byte {at} has no escape letter"
                )));
            };
            if letter == '%' && pad.is_empty() {
                literal.push('%');
                continue;
            }
            if !literal.is_empty() {
                items.push(Item::Literal(std::mem::take(&mut literal)));
            }
            if letter == 'q' && pad.is_empty() {
                items.push(Item::SessionOnlyFromHere);
                continue;
            }
            let escape = Escape::from_letter(letter)
                .ok_or_else(|| invalid(format!("unknown escape `%{pad}{letter}` at byte {at}")))?;
            let padding = match pad.as_str() {
                "" => 0,
                "-" => return Err(invalid(format!("padding `%-` without width at byte {at}"))),
                p => p
                    .parse::<i32>()
                    .map_err(|_| invalid(format!("padding `{p}` at byte {at}")))?,
            };
            if padding.unsigned_abs() > MAX_TEXT_FIELD as u32 {
                return Err(invalid(format!(
                    "padding {padding} at byte {at} is too wide"
                )));
            }
            items.push(Item::Field { escape, padding });
        }
        if !literal.is_empty() {
            items.push(Item::Literal(literal));
        }
        let simple = items.iter().all(|i| match i {
            Item::Literal(_) => true,
            Item::Field { escape, .. } => escape.shape() != Shape::Text,
            Item::SessionOnlyFromHere => false,
        });
        let mut escapes = Vec::new();
        for item in &items {
            if let Item::Field { escape, .. } = item
                && !escapes.contains(escape)
            {
                escapes.push(*escape);
            }
        }
        Ok(LogLinePrefix {
            text: text.to_owned(),
            items,
            simple,
            escapes,
        })
    }

    /// The empty prefix (PostgreSQL < 10's default): lines start with the severity word.
    pub fn empty() -> LogLinePrefix {
        LogLinePrefix {
            text: String::new(),
            items: Vec::new(),
            simple: true,
            escapes: Vec::new(),
        }
    }

    /// True when the prefix has a free-text field (`%u`, `%d`, `%a`, …) or `%q`: a field
    /// whose end is found by what follows it.
    pub(crate) fn has_free_text(&self) -> bool {
        !self.simple
    }

    /// The escapes the prefix prints, each once, in prefix order.
    pub(crate) fn escapes(&self) -> &[Escape] {
        &self.escapes
    }

    /// The prefix text this was compiled from.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Reads the prefix of `line`. `tail_ok` says whether the text after a candidate prefix is
    /// acceptable (a severity word); returns the fields and the byte offset where the prefix
    /// ends.
    pub(crate) fn match_line<'a>(
        &self,
        line: &'a str,
        tail_ok: &dyn Fn(&'a str) -> bool,
    ) -> Option<(PrefixFields<'a>, usize)> {
        let mut fields = PrefixFields::new(line);
        let end = self.match_into(&mut fields, tail_ok)?;
        Some((fields, end))
    }

    /// [`LogLinePrefix::match_line`] writing into `fields` (fresh, from
    /// [`PrefixFields::new`]): the per-line path, where returning the table by value would copy
    /// it. Returns the byte offset where the prefix ends.
    pub(crate) fn match_into<'a>(
        &self,
        fields: &mut PrefixFields<'a>,
        tail_ok: &dyn Fn(&'a str) -> bool,
    ) -> Option<usize> {
        let line = fields.line;
        if u32::try_from(line.len()).is_err() {
            return None;
        }
        if self.simple {
            return self.match_simple(line, tail_ok, fields);
        }
        let mut m = Matcher {
            items: &self.items,
            line,
            tail_ok,
            budget: STEP_BUDGET,
            fields,
        };
        m.at(0, 0)
    }
}

impl LogLinePrefix {
    /// [`LogLinePrefix::match_line`] for a prefix of literals and shaped fields only (`%m [%p] `,
    /// `%t [%p]: [%l-1] `): each item has one possible extent, so a single left-to-right pass.
    fn match_simple<'a>(
        &self,
        line: &'a str,
        tail_ok: &dyn Fn(&'a str) -> bool,
        fields: &mut PrefixFields<'a>,
    ) -> Option<usize> {
        let bytes = line.as_bytes();
        let mut pos = 0;
        for item in &self.items {
            match item {
                Item::Literal(lit) => {
                    if !starts_with_short(&bytes[pos..], lit.as_bytes()) {
                        return None;
                    }
                    pos += lit.len();
                }
                &Item::Field { escape, padding } => {
                    let mut start = pos;
                    if padding > 0 {
                        while bytes.get(start) == Some(&b' ') {
                            start += 1;
                        }
                    }
                    let len = shape_len(escape.shape(), &line[start..])?;
                    let mut end = start + len;
                    if padding < 0 {
                        let width = padding.unsigned_abs() as usize;
                        while end - pos < width && bytes.get(end) == Some(&b' ') {
                            end += 1;
                        }
                    }
                    if len > 0 {
                        fields.set(escape, &line[start..start + len]);
                    }
                    pos = end;
                }
                Item::SessionOnlyFromHere => return None,
            }
        }
        tail_ok(&line[pos..]).then_some(pos)
    }
}

struct Matcher<'p, 'a, 't, 'f> {
    items: &'p [Item],
    line: &'a str,
    tail_ok: &'t dyn Fn(&'a str) -> bool,
    budget: u32,
    fields: &'f mut PrefixFields<'a>,
}

impl<'a> Matcher<'_, 'a, '_, '_> {
    /// Matches items from `idx` on at byte `pos`; returns where the whole prefix ends.
    fn at(&mut self, idx: usize, pos: usize) -> Option<usize> {
        if self.budget == 0 {
            return None;
        }
        self.budget -= 1;
        let Some(item) = self.items.get(idx) else {
            return self.end_here(pos);
        };
        match item {
            Item::Literal(lit) => {
                if starts_with_short(&self.line.as_bytes()[pos..], lit.as_bytes()) {
                    self.at(idx + 1, pos + lit.len())
                } else {
                    None
                }
            }
            Item::SessionOnlyFromHere => self.at(idx + 1, pos).or_else(|| self.end_here(pos)),
            &Item::Field { escape, padding } => match escape.shape() {
                Shape::Text => self.text_field(idx, pos, escape, padding),
                shape => self.shaped_field(idx, pos, escape, padding, shape),
            },
        }
    }

    fn end_here(&self, pos: usize) -> Option<usize> {
        (self.tail_ok)(&self.line[pos..]).then_some(pos)
    }

    fn set(&mut self, escape: Escape, value: &'a str) {
        self.fields.set(escape, value);
    }

    fn shaped_field(
        &mut self,
        idx: usize,
        pos: usize,
        escape: Escape,
        padding: i32,
        shape: Shape,
    ) -> Option<usize> {
        let bytes = self.line.as_bytes();
        let mut start = pos;
        if padding > 0 {
            while bytes.get(start) == Some(&b' ') {
                start += 1;
            }
        }
        let len = shape_len(shape, &self.line[start..])?;
        let mut end = start + len;
        if padding < 0 {
            let width = padding.unsigned_abs() as usize;
            while end - pos < width && bytes.get(end) == Some(&b' ') {
                end += 1;
            }
        }
        self.set(escape, &self.line[start..start + len]);
        let found = self.at(idx + 1, end);
        if found.is_none() {
            self.fields.clear(escape);
        }
        found
    }

    fn text_field(
        &mut self,
        idx: usize,
        pos: usize,
        escape: Escape,
        padding: i32,
    ) -> Option<usize> {
        let line = self.line;
        let min = ceil_boundary(line, pos + padding.unsigned_abs() as usize);
        let limit = ceil_boundary(line, pos + MAX_TEXT_FIELD);
        if min > line.len() {
            return None;
        }
        match self.items.get(idx + 1) {
            Some(Item::Literal(lit)) => {
                // The places `lit` is found from `min` on, left to right and not overlapping
                // (what `match_indices` gives), found by its first byte with `memchr`: a
                // string searcher built for every field of every line cost more than the
                // search.
                let hay = &line.as_bytes()[min..];
                let lit = lit.as_bytes();
                // Literals are never empty (`compile` keeps only text it has).
                let first = lit.first().copied().unwrap_or_default();
                let mut free_from = 0;
                for off in memchr::memchr_iter(first, hay) {
                    let end = min + off;
                    if end > limit || self.budget == 0 {
                        break;
                    }
                    if off < free_from || !starts_with_short(&hay[off..], lit) {
                        continue;
                    }
                    free_from = off + lit.len();
                    if let Some(found) = self.try_text_end(idx, pos, end, escape) {
                        return Some(found);
                    }
                }
                None
            }
            _ => {
                let mut end = min;
                while end <= limit && self.budget > 0 {
                    if let Some(found) = self.try_text_end(idx, pos, end, escape) {
                        return Some(found);
                    }
                    end = ceil_boundary(line, end + 1);
                    if end > line.len() {
                        break;
                    }
                }
                None
            }
        }
    }

    fn try_text_end(
        &mut self,
        idx: usize,
        pos: usize,
        end: usize,
        escape: Escape,
    ) -> Option<usize> {
        self.set(escape, self.line[pos..end].trim_matches(' '));
        let found = self.at(idx + 1, end);
        if found.is_none() {
            self.fields.clear(escape);
        }
        found
    }
}

/// `hay.starts_with(lit)` for the short literals of a prefix (` [`, `] `): a byte loop, where
/// the slice comparison calls `memcmp` once per literal of every line.
#[inline]
fn starts_with_short(hay: &[u8], lit: &[u8]) -> bool {
    hay.len() >= lit.len() && hay.iter().zip(lit).all(|(a, b)| a == b)
}

/// The smallest char boundary of `s` at or after `i` (`s.len() + 1` when `i` is past the end).
fn ceil_boundary(s: &str, i: usize) -> usize {
    if i > s.len() {
        return s.len() + 1;
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Length in bytes of the value of a shaped field at the start of `s`.
fn shape_len(shape: Shape, s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let run = |from: usize, pred: fn(&u8) -> bool| {
        b[from.min(b.len())..]
            .iter()
            .take_while(|c| pred(c))
            .count()
    };
    match shape {
        Shape::Stamp { millis } => time::stamp_len(s, millis),
        Shape::Epoch => {
            let (rest, _) = time::epoch(s).ok()?;
            Some(s.len() - rest.len())
        }
        Shape::Digits { signed } => {
            let sign = usize::from(signed && b.first() == Some(&b'-'));
            let n = run(sign, u8::is_ascii_digit);
            if n > 20 {
                return None;
            }
            Some(if n == 0 { 0 } else { sign + n })
        }
        Shape::SessionId => {
            let hi = run(0, u8::is_ascii_hexdigit);
            if hi == 0 || b.get(hi) != Some(&b'.') {
                return None;
            }
            let lo = run(hi + 1, u8::is_ascii_hexdigit);
            (lo > 0).then_some(hi + 1 + lo)
        }
        Shape::Vxid => {
            let hi = run(0, u8::is_ascii_digit);
            if hi == 0 || b.get(hi) != Some(&b'/') {
                return Some(0);
            }
            let lo = run(hi + 1, u8::is_ascii_digit);
            Some(if lo == 0 { 0 } else { hi + 1 + lo })
        }
        Shape::Sqlstate => {
            let n = run(0, |c| c.is_ascii_digit() || c.is_ascii_uppercase());
            (n == 5).then_some(5)
        }
        Shape::Text => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sev(rest: &str) -> bool {
        crate::pglog::severity::split(rest).is_some()
    }

    /// Matches `line` with `prefix`; returns (escape letter → value) and the message start.
    fn read(prefix: &str, line: &str) -> Option<(Vec<(Escape, String)>, String)> {
        let p = LogLinePrefix::compile(prefix).unwrap();
        let (f, end) = p.match_line(line, &sev)?;
        let all = [
            Escape::Timestamp,
            Escape::TimestampSeconds,
            Escape::Epoch,
            Escape::Pid,
            Escape::SessionLine,
            Escape::SessionId,
            Escape::User,
            Escape::Database,
            Escape::Application,
            Escape::RemoteHostPort,
            Escape::RemoteHost,
            Escape::BackendType,
            Escape::Sqlstate,
            Escape::Xid,
            Escape::Vxid,
            Escape::CommandTag,
            Escape::SessionStart,
            Escape::LeaderPid,
            Escape::QueryId,
            Escape::LocalAddress,
        ];
        assert_eq!(all.len(), ESCAPES);
        let vals = all
            .iter()
            .filter_map(|&e| f.get(e).map(|v| (e, v.to_owned())))
            .collect();
        Some((vals, line[end..].to_owned()))
    }

    fn one(prefix: &str, line: &str, escape: Escape) -> Option<String> {
        read(prefix, line)?
            .0
            .into_iter()
            .find(|(e, _)| *e == escape)
            .map(|(_, v)| v)
    }

    #[test]
    fn default_prefix_of_pg10_and_later() {
        // 2026-11-21 17:08:44.123 UTC [24797] LOG:  redo starts at 0/1500780
        let (f, rest) = read(
            "%m [%p] ",
            "2026-11-21 17:08:44.123 UTC [24797] LOG:  redo starts at 0/1500780",
        )
        .unwrap();
        assert_eq!(
            f,
            vec![
                (Escape::Timestamp, "2026-11-21 17:08:44.123 UTC".into()),
                (Escape::Pid, "24797".into())
            ]
        );
        assert_eq!(rest, "LOG:  redo starts at 0/1500780");
    }

    #[test]
    fn debian_prefix_with_and_without_session() {
        let p = "%m [%p] %q%u@%d ";
        let (f, rest) = read(
            p,
            "2026-11-21 17:08:44.123 UTC [501] postgres@bench ERROR:  boom",
        )
        .unwrap();
        assert!(f.contains(&(Escape::User, "postgres".into())));
        assert!(f.contains(&(Escape::Database, "bench".into())));
        assert_eq!(rest, "ERROR:  boom");
        // Non-session process: the prefix stops at %q.
        let (f, rest) = read(
            p,
            "2026-11-21 17:08:44.123 UTC [500] LOG:  checkpoint starting: time",
        )
        .unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(rest, "LOG:  checkpoint starting: time");
        // A session line before authentication prints [unknown]@[unknown].
        assert_eq!(
            one(
                p,
                "2026-11-21 17:08:44.123 UTC [502] [unknown]@[unknown] LOG:  connection received: host=[local]",
                Escape::User
            ),
            Some("[unknown]".into())
        );
        // A message that itself holds `@` does not fool %q.
        let (f, rest) = read(
            p,
            "2026-11-21 17:08:44.123 UTC [500] LOG:  mail me@example.org now",
        )
        .unwrap();
        assert_eq!(f.len(), 2);
        assert_eq!(rest, "LOG:  mail me@example.org now");
    }

    #[test]
    fn every_escape_reads_its_value() {
        let cases: &[(&str, &str, Escape, &str)] = &[
            (
                "%t ",
                "2026-11-21 17:08:44 UTC LOG:  x",
                Escape::TimestampSeconds,
                "2026-11-21 17:08:44 UTC",
            ),
            (
                "%n ",
                "1763744924.123 LOG:  x",
                Escape::Epoch,
                "1763744924.123",
            ),
            ("[%l] ", "[17] LOG:  x", Escape::SessionLine, "17"),
            (
                "%c ",
                "691f9e2c.6a1c LOG:  x",
                Escape::SessionId,
                "691f9e2c.6a1c",
            ),
            (
                "app=%a ",
                "app=pgbench tool LOG:  x",
                Escape::Application,
                "pgbench tool",
            ),
            (
                "%r ",
                "127.0.0.1(54321) LOG:  x",
                Escape::RemoteHostPort,
                "127.0.0.1(54321)",
            ),
            ("%h ", "[local] LOG:  x", Escape::RemoteHost, "[local]"),
            (
                "%b ",
                "client backend LOG:  x",
                Escape::BackendType,
                "client backend",
            ),
            (
                "%e ",
                "53200 ERROR:  out of memory",
                Escape::Sqlstate,
                "53200",
            ),
            ("%x ", "745 LOG:  x", Escape::Xid, "745"),
            ("%v ", "3/12 LOG:  x", Escape::Vxid, "3/12"),
            (
                "%i ",
                "CREATE TABLE LOG:  x",
                Escape::CommandTag,
                "CREATE TABLE",
            ),
            (
                "%s ",
                "2026-11-21 17:00:00 UTC LOG:  x",
                Escape::SessionStart,
                "2026-11-21 17:00:00 UTC",
            ),
            ("%P ", "4242 LOG:  x", Escape::LeaderPid, "4242"),
            (
                "%Q ",
                "-6553453415325823 LOG:  x",
                Escape::QueryId,
                "-6553453415325823",
            ),
            ("%L ", "10.0.0.5 LOG:  x", Escape::LocalAddress, "10.0.0.5"),
            ("%u:%d ", "bob:shop LOG:  x", Escape::Database, "shop"),
        ];
        for &(prefix, line, escape, want) in cases {
            assert_eq!(
                one(prefix, line, escape).as_deref(),
                Some(want),
                "{prefix:?} on {line:?}"
            );
        }
    }

    #[test]
    fn empty_values_are_absent() {
        // %v prints nothing for processes without a virtual xid; %P outside parallel workers.
        let (f, rest) = read("[%v] [%P] ", "[] [] LOG:  x").unwrap();
        assert!(f.is_empty());
        assert_eq!(rest, "LOG:  x");
        assert_eq!(read("%a|", "|LOG:  x").unwrap().0, vec![]);
    }

    #[test]
    fn percent_literal() {
        assert_eq!(
            one("100%% %p ", "100% 42 LOG:  x", Escape::Pid).as_deref(),
            Some("42")
        );
        assert!(read("100%% %p ", "100 42 LOG:  x").is_none());
    }

    #[test]
    fn padding_is_tolerated() {
        // %-10u: left-aligned, filled to 10 bytes.
        let p = "%m [%10p] %-10u %d ";
        let line = "2026-11-21 17:08:44.123 UTC [      4242] bob        shop LOG:  x";
        let (f, rest) = read(p, line).unwrap();
        assert!(f.contains(&(Escape::Pid, "4242".into())));
        assert!(f.contains(&(Escape::User, "bob".into())));
        assert!(f.contains(&(Escape::Database, "shop".into())));
        assert_eq!(rest, "LOG:  x");
        // A value longer than the width is printed whole.
        let line = "2026-11-21 17:08:44.123 UTC [      4242] averyveryverylonguser shop LOG:  x";
        assert_eq!(
            one(p, line, Escape::User).as_deref(),
            Some("averyveryverylonguser")
        );
        // %-6p pads the pid on the right.
        assert_eq!(
            one("[%-6p] ", "[42    ] LOG:  x", Escape::Pid).as_deref(),
            Some("42")
        );
    }

    #[test]
    fn free_text_at_the_end_backtracks_to_the_severity() {
        let (f, rest) = read("%p %a", "42 my app LOG:  x").unwrap();
        assert!(f.contains(&(Escape::Application, "my app".into())));
        assert_eq!(rest, "LOG:  x");
    }

    #[test]
    fn lines_without_the_prefix_do_not_match() {
        assert!(read("%m [%p] ", "TopMemoryContext: 97696 total in 5 blocks").is_none());
        assert!(read("%m [%p] ", "2026-11-21 17:08:44.123 UTC [x] LOG:  x").is_none());
        assert!(read("%m [%p] ", "2026-11-21 17:08:44 UTC [1] LOG:  x").is_none());
        assert!(read("%m [%p] ", "2026-11-21 17:08:44.123 UTC [1] not a severity").is_none());
        assert!(read("%m [%p] ", "").is_none());
    }

    #[test]
    fn invalid_prefixes_are_errors() {
        for bad in ["%", "%m %", "%Z", "%-", "%-5", "%5q", "%99999u"] {
            assert!(
                matches!(
                    LogLinePrefix::compile(bad),
                    Err(PgLogError::InvalidPrefix { .. })
                ),
                "{bad:?} should be invalid"
            );
        }
        assert!(LogLinePrefix::compile("").is_ok());
        assert!(LogLinePrefix::compile("%m [%p] %q%u@%d ").is_ok());
    }

    #[test]
    fn hostile_lines_stay_bounded() {
        let p = LogLinePrefix::compile("%u %d %a %r ").unwrap();
        let line = " ".repeat(1 << 20);
        assert!(p.match_line(&line, &sev).is_none());
        let line = "é".repeat(5000);
        assert!(p.match_line(&line, &sev).is_none());
    }
}
