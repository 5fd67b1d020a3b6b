//! csvlog (`log_destination = 'csvlog'`): one CSV row per record, fields quoted with `"` (and
//! `""` inside), newlines inside quoted fields, so a row may span lines. The column set is read
//! from the row's width, never from a version: 23 columns (PG 10–12), 24 with `backend_type`
//! (13), 26 with `leader_pid` and `query_id` (14–18).
//!
//! A row cut outside its quotes (a paste that broke the line after a comma, a ticket's tool
//! that slipped a link into it) is held while its lines give too few columns and rejoined with
//! the lines that follow it; a line that cannot continue it (no comma, no quote, or a join that
//! is no row) is counted as not understood and at most [`MAX_FOREIGN_IN_ROW`] such lines are
//! passed over before the cut row is given up.
//!
//! ```text
//! 2026-11-21 17:57:13.121 UTC,,,18557,,6b01db79.487d,2,,2026-11-21 17:57:13 UTC,,0,FATAL,53100,"could not resize shared memory segment ""/PostgreSQL.1542476226"" to 1048576 bytes: No space left on device",,,,,,,,,"","startup",,0
//! ```

use std::borrow::Cow;
use std::collections::VecDeque;

use super::severity::{self, Tag};
use super::translate::{self, Languages};
use super::{Counters, PgRecord, classify, time};

/// Lines a cut row may span before it is given up.
const MAX_CUT_ROW_LINES: u64 = 6;
/// Foreign lines passed over inside a cut row.
pub(crate) const MAX_FOREIGN_IN_ROW: u64 = 2;

/// A row that begins with a stamp but has too few columns: a line cut outside its quotes,
/// waiting for the rest of its columns on the lines that follow.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CutRow {
    text: String,
    first_line: u64,
    lines: u64,
    foreign: u64,
}

/// Reads csvlog rows line by line.
pub(crate) struct CsvReader {
    /// A row cut outside its quotes, waiting for its other columns.
    cut: Option<CutRow>,
    /// The row read so far when it spans lines.
    partial: String,
    /// Line number of the row's first line.
    first_line: u64,
    /// Lines in `partial`.
    partial_lines: u64,
    /// True while a quoted field is open at the end of `partial`.
    in_quotes: bool,
    max_row_bytes: usize,
    langs: Languages,
    pub(crate) counters: Counters,
    out: VecDeque<Box<PgRecord>>,
}

impl CsvReader {
    pub(crate) fn new(max_row_bytes: usize) -> Self {
        CsvReader {
            cut: None,
            partial: String::new(),
            first_line: 0,
            partial_lines: 0,
            in_quotes: false,
            max_row_bytes,
            langs: Languages::default(),
            counters: Counters::default(),
            out: VecDeque::new(),
        }
    }

    /// A reader with the same limits, at the start of a log.
    pub(crate) fn fresh(&self) -> Self {
        CsvReader::new(self.max_row_bytes)
    }

    /// True when both readers read further lines the same way (same partial row, languages).
    pub(crate) fn same_state(&self, other: &CsvReader) -> bool {
        self.in_quotes == other.in_quotes
            && self.cut == other.cut
            && self.langs == other.langs
            && self.out.is_empty()
            && other.out.is_empty()
            && (!self.in_quotes
                || (self.partial == other.partial
                    && self.first_line == other.first_line
                    && self.partial_lines == other.partial_lines))
    }

    pub(crate) fn pop(&mut self) -> Option<Box<PgRecord>> {
        self.out.pop_front()
    }

    /// The line of the next finished record, if any.
    pub(crate) fn peek_line(&self) -> Option<u64> {
        self.out.front().map(|r| r.line)
    }

    /// Records started so far, and the first line of the latest (counted as they are read).
    pub(crate) fn started(&self) -> (u64, u64) {
        (
            self.counters.stats.records,
            self.out.back().map_or(0, |r| r.line),
        )
    }

    /// Feeds one line (without its newline).
    pub(crate) fn push(&mut self, number: u64, text: &str) {
        let quotes = memchr::memchr_iter(b'"', text.as_bytes()).count();
        if let Some(cut) = self.cut.take() {
            if text.is_empty() || looks_like_row(text) {
                self.give_up_cut(&cut);
            } else if self.continue_cut(cut, number, text, quotes) {
                return;
            }
        }
        if self.in_quotes && looks_like_row(text) {
            // A quote that never closed, and here is the next row: give the broken one up.
            self.give_up();
            self.in_quotes = false;
        }
        if self.in_quotes {
            if self.partial.len() + text.len() >= self.max_row_bytes {
                // A quote that never closes: give the row and this line up, counted.
                self.give_up();
                self.counters.stats.unrecognized(number, text);
                self.in_quotes = false;
                return;
            }
            self.partial.push('\n');
            self.partial.push_str(text);
            self.partial_lines += 1;
            self.counters.continuation_lines += 1;
        } else {
            if text.is_empty() {
                self.counters.blank_lines += 1;
                return;
            }
            self.first_line = number;
            self.partial_lines = 1;
            if quotes % 2 == 0 {
                // A whole row on one line (most rows): read in place, not copied.
                match self.row(number, text) {
                    Row::Read => {}
                    Row::TooFewColumns if looks_like_row(text) => {
                        self.cut = Some(CutRow {
                            text: text.to_owned(),
                            first_line: number,
                            lines: 1,
                            foreign: 0,
                        });
                    }
                    _ => self.count_failed_row(text),
                }
                return;
            }
            self.partial.clear();
            self.partial.push_str(text);
            self.first_line = number;
            self.partial_lines = 1;
        }
        if quotes % 2 == 1 {
            self.in_quotes = !self.in_quotes;
        }
        if !self.in_quotes {
            let row = std::mem::take(&mut self.partial);
            if self.row(number, &row) != Row::Read {
                self.count_failed_row(&row);
            }
            self.partial = row;
            self.partial.clear();
        }
    }

    /// `line` after a row cut outside its quotes: joined to it when it can continue it (true:
    /// the line is taken), else counted as a foreign line inside the row, or (false) the cut
    /// row is given up and the line is read as any other.
    fn continue_cut(&mut self, mut cut: CutRow, number: u64, text: &str, quotes: usize) -> bool {
        let mut joined = String::with_capacity(cut.text.len() + text.len());
        joined.push_str(&cut.text);
        joined.push_str(text);
        if quotes % 2 == 1 {
            // A quoted field opens here and goes on below: the row continues as a multi-line one.
            self.counters.continuation_lines += cut.lines;
            self.partial = joined;
            self.first_line = cut.first_line;
            self.partial_lines = cut.lines + 1;
            self.in_quotes = true;
            return true;
        }
        let columns = fields(&joined).map(|f| f.len());
        if let Some(23..=26) = columns {
            self.first_line = cut.first_line;
            self.partial_lines = cut.lines + 1;
            if self.row(number, &joined) == Row::Read {
                self.counters.continuation_lines += cut.lines;
                return true;
            }
        }
        let can_continue = text.contains(',') || text.contains('"');
        if can_continue
            && columns.is_some_and(|n| n < 23)
            && cut.lines < MAX_CUT_ROW_LINES
            && joined.len() < self.max_row_bytes
        {
            cut.text = joined;
            cut.lines += 1;
            self.cut = Some(cut);
            return true;
        }
        if !can_continue && cut.foreign < MAX_FOREIGN_IN_ROW && cut.lines < MAX_CUT_ROW_LINES {
            // A line that is no piece of a row (a link, a remark): passed over, counted.
            self.counters.stats.unrecognized(number, text);
            cut.foreign += 1;
            self.cut = Some(cut);
            return true;
        }
        self.give_up_cut(&cut);
        false
    }

    /// A cut row that found no rest: its lines are counted as not understood.
    fn give_up_cut(&mut self, cut: &CutRow) {
        let first = cut.text.as_str();
        self.counters.stats.unrecognized(cut.first_line, first);
        self.counters.stats.unrecognized_lines += cut.lines.saturating_sub(1);
    }

    /// A complete row that gave no record: counted as not understood, its other lines too.
    fn count_failed_row(&mut self, row: &str) {
        let first = row.lines().next().unwrap_or("");
        self.counters.stats.unrecognized(self.first_line, first);
        self.counters.stats.unrecognized_lines += self.partial_lines.saturating_sub(1);
        self.counters.continuation_lines = self
            .counters
            .continuation_lines
            .saturating_sub(self.partial_lines.saturating_sub(1));
    }

    /// End of input: a row still open (a broken quote, a cut row) is counted.
    pub(crate) fn finish(&mut self) {
        if let Some(cut) = self.cut.take() {
            self.give_up_cut(&cut);
        }
        if self.in_quotes {
            self.give_up();
            self.in_quotes = false;
        }
    }

    fn give_up(&mut self) {
        let first = self.partial.lines().next().unwrap_or("").to_owned();
        self.counters.stats.unrecognized(self.first_line, &first);
        // The row's other lines were counted as continuations; they are lost with it.
        self.counters.stats.unrecognized_lines += self.partial_lines.saturating_sub(1);
        self.counters.continuation_lines = self
            .counters
            .continuation_lines
            .saturating_sub(self.partial_lines.saturating_sub(1));
        self.counters.broken_rows += 1;
        self.partial.clear();
        self.partial_lines = 0;
    }

    /// Reads one complete row; the caller counts a row that gave no record.
    fn row(&mut self, last_line: u64, row: &str) -> Row {
        let Some(columns) = fields(row) else {
            return Row::NotCsvlog;
        };
        if columns.len() < 23 {
            return Row::TooFewColumns;
        }
        match record_of(columns, &mut self.langs) {
            Some(mut record) => {
                if record.time.is_none() {
                    // The first field, a stamp (no comma in one).
                    let stamp = row.split(',').next().unwrap_or_default();
                    self.counters.unreadable_stamps.add(self.first_line, stamp);
                }
                record.line = self.first_line;
                record.end_line = last_line;
                classify::classify_record(&mut record, self.langs);
                self.counters.stats.records += 1;
                self.out.push_back(record);
                Row::Read
            }
            None => Row::NotCsvlog,
        }
    }
}

/// What reading one complete row gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Row {
    /// A record.
    Read,
    /// Well-formed CSV with fewer columns than any csvlog row: maybe a row cut in two.
    TooFewColumns,
    /// No csvlog row.
    NotCsvlog,
}

/// Splits a complete row into its fields: `None` for an empty unquoted field, the unescaped
/// text otherwise (borrowed from the row unless it held `""`). `None` overall when a quote is
/// misplaced.
pub(crate) fn fields(row: &str) -> Option<Vec<Option<Cow<'_, str>>>> {
    let mut out = Vec::with_capacity(26);
    let b = row.as_bytes();
    let mut i = 0;
    loop {
        if b.get(i) == Some(&b'"') {
            let start = i + 1;
            let mut q = start + memchr::memchr(b'"', &b[start..])?;
            let value = if b.get(q + 1) == Some(&b'"') {
                // An escaped quote: the value is rebuilt without the doubling.
                let mut value = String::with_capacity(q - start + 16);
                let mut from = start;
                loop {
                    value.push_str(&row[from..q]);
                    if b.get(q + 1) != Some(&b'"') {
                        break;
                    }
                    value.push('"');
                    from = q + 2;
                    q = from + memchr::memchr(b'"', &b[from..])?;
                }
                Cow::Owned(value)
            } else {
                Cow::Borrowed(&row[start..q])
            };
            i = q + 1;
            out.push(Some(value));
            match b.get(i) {
                None => return Some(out),
                Some(b',') => i += 1,
                Some(_) => return None,
            }
        } else {
            // Unquoted fields are short (`18557`, `6b01db79.487d`, often empty): a byte loop,
            // not a memchr call, finds their end; a quote inside one is misplaced.
            let end = b[i..]
                .iter()
                .position(|&c| c == b',' || c == b'"')
                .map_or(b.len(), |e| i + e);
            if b.get(end) == Some(&b'"') {
                return None;
            }
            let value = &row[i..end];
            out.push((!value.is_empty()).then_some(Cow::Borrowed(value)));
            if end == b.len() {
                return Some(out);
            }
            i = end + 1;
        }
    }
}

/// One row's fields → a record (not yet classified). `None` when the row is not a csvlog row.
fn record_of(mut f: Vec<Option<Cow<'_, str>>>, langs: &mut Languages) -> Option<Box<PgRecord>> {
    if !(23..=26).contains(&f.len()) {
        return None;
    }
    let mut take = |i: usize| f.get_mut(i).and_then(Option::take);
    // A stamp that is no time (a month 13) leaves the record without one; the reader counts
    // it in `unreadable_stamps`.
    let time = time::pg_time_from_stamp(&take(0)?, true);
    let (tag, lang) = severity::word(&take(11)?)?;
    let Tag::Main(severity) = tag else {
        return None;
    };
    // Filled in its box: a record is large, and building it on the stack would copy it.
    let mut record = Box::<PgRecord>::default();
    let r = &mut *record;
    let owned = |c: Option<Cow<'_, str>>| c.map(Cow::into_owned);
    r.time = time;
    r.user = owned(take(1));
    r.database = owned(take(2));
    r.pid = take(3).and_then(|p| p.parse().ok());
    r.client = owned(take(4));
    r.session_id = owned(take(5));
    r.session_line = take(6).and_then(|l| l.parse().ok());
    r.command_tag = owned(take(7));
    r.session_start = owned(take(8));
    r.vxid = owned(take(9));
    r.xid = take(10).and_then(|x| x.parse().ok());
    r.severity = Some(severity);
    r.sqlstate = owned(take(12));
    r.message = owned(take(13)).unwrap_or_default();
    r.detail = owned(take(14));
    r.hint = owned(take(15));
    r.query = owned(take(16));
    r.context = owned(take(18));
    r.statement = owned(take(19));
    r.location = owned(take(21));
    r.application = owned(take(22));
    r.backend_type = owned(take(23));
    r.leader_pid = take(24).and_then(|p| p.parse().ok());
    r.query_id = take(25).and_then(|q| q.parse().ok());
    if let Some(lang) = lang {
        langs.add(lang);
        r.language = Some(translate::language_name(lang));
    }
    Some(record)
}

/// True when `line` looks like the start of a csvlog row: a `%m` stamp then a comma.
///
/// The first column may also be quoted, as a CSV tool that quotes every text column writes it:
/// `"2026-05-16 05:11:50.269 UTC","example_user",…`.
pub(crate) fn looks_like_row(line: &str) -> bool {
    let (line, close) = match line.strip_prefix('"') {
        Some(quoted) => (quoted, "\","),
        None => (line, ","),
    };
    match time::civil_stamp(line, true) {
        Ok((rest, _)) => rest.starts_with(close),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_quotes_commas_and_newlines() {
        assert_eq!(
            fields("a,,\"b,\"\"c\"\"\nd\",\"\"").unwrap(),
            vec![
                Some("a".into()),
                None,
                Some("b,\"c\"\nd".into()),
                Some("".into())
            ]
        );
        assert_eq!(fields("\"open"), None);
        assert_eq!(fields("a\"b,c"), None);
        assert_eq!(fields("\"a\"b"), None);
    }

    #[test]
    fn rows_of_each_width() {
        let pg13 = "2026-11-21 17:57:13.106 UTC,,,18553,,6b01db79.4879,1,,2026-11-21 17:57:13 UTC,,0,LOG,00000,\"database system is ready to accept connections\",,,,,,,,,\"\",\"postmaster\"";
        let mut reader = CsvReader::new(1 << 20);
        reader.push(1, pg13);
        let pg10 = "2026-11-21 17:57:13.106 UTC,\"postgres\",\"postgres\",18553,\"[local]\",6b01db79.4879,1,\"SELECT\",2026-11-21 17:57:13 UTC,3/4,0,ERREUR,53200,\"mémoire épuisée\",\"Échec d'une requête de taille 8192 dans le contexte mémoire « ExprContext ».\",,,,,,,,\"psql\"";
        reader.push(2, pg10);
        reader.push(3, "2026-11-21 17:57:13.106 UTC,too,few");
        reader.finish();
        let a = reader.pop().unwrap();
        assert_eq!(a.backend_type.as_deref(), Some("postmaster"));
        assert_eq!(a.event, Some(super::super::PgEvent::Ready));
        let b = reader.pop().unwrap();
        assert_eq!(b.language, Some("fr"));
        assert_eq!(
            b.event,
            Some(super::super::PgEvent::OutOfMemory {
                request_bytes: Some(8192),
                memory_context: Some("ExprContext".into())
            })
        );
        assert_eq!(reader.counters.stats.unrecognized_lines, 1);
    }

    #[test]
    fn multi_line_rows_and_a_broken_quote() {
        let mut reader = CsvReader::new(1 << 20);
        reader.push(1, "2026-11-21 17:57:13.106 UTC,,,1,,a.b,1,,2026-11-21 17:57:13 UTC,,0,ERROR,42601,\"syntax error\",,,,,,\"SELECT");
        reader.push(2, "  FROM\",,,\"psql\",\"client backend\",,0");
        reader.push(3, "2026-11-21 17:57:13.106 UTC,,,1,,a.b,2,,2026-11-21 17:57:13 UTC,,0,LOG,00000,\"never closed");
        reader.push(4, "more");
        // The next row ends the broken one.
        reader.push(5, "2026-11-21 17:57:13.106 UTC,,,1,,a.b,3,,2026-11-21 17:57:13 UTC,,0,LOG,00000,\"redo is not required\",,,,,,,,,\"\"");
        reader.push(
            6,
            "2026-11-21 17:57:13.106 UTC,,,1,,a.b,2,,2026-11-21 17:57:13 UTC,,0,LOG,00000,\"cut",
        );
        reader.finish();
        let r = reader.pop().unwrap();
        assert_eq!(r.statement.as_deref(), Some("SELECT\n  FROM"));
        assert_eq!((r.line, r.end_line), (1, 2));
        let r = reader.pop().unwrap();
        assert_eq!(
            (r.line, &r.event),
            (5, &Some(super::super::PgEvent::RedoNotRequired))
        );
        assert!(reader.pop().is_none());
        assert_eq!(reader.counters.stats.unrecognized_lines, 3);
        assert_eq!(reader.counters.broken_rows, 2);
    }

    /// Feeds `lines` (numbered from 1) to a fresh reader and ends the input.
    fn read_all(lines: &[&str]) -> CsvReader {
        let mut reader = CsvReader::new(1 << 20);
        for (i, line) in lines.iter().enumerate() {
            reader.push(i as u64 + 1, line);
        }
        reader.finish();
        reader
    }

    #[test]
    fn a_row_cut_outside_its_quotes_is_rejoined_past_a_foreign_line() {
        // The form of a public report (fixtures/wild/oracle-fdw-528-*): a ticket's link slipped
        // into the first row after `CST,,,`.
        let mut reader = read_all(&[
            "2022-04-15 13:00:01.220 CST,,,",
            "[store_procedure_ddl.txt](https://example.invalid/files/store_procedure_ddl.txt)",
            "13254,,62484fca.33c6,161,,2022-04-02 21:29:46 CST,,0,LOG,00000,\"server process (PID 28476) was terminated by signal 11: Segmentation fault\",\"Failed process was running: call p($1)\",,,,,,,,\"\"",
        ]);
        let r = reader.pop().expect("the rejoined row");
        assert_eq!((r.line, r.end_line, r.pid), (1, 3, Some(13254)));
        assert!(matches!(
            r.event,
            Some(super::super::PgEvent::TerminatedBySignal {
                pid: 28476,
                signal: 11,
                ..
            })
        ));
        assert_eq!(reader.counters.stats.unrecognized_lines, 1);
        assert_eq!(reader.counters.continuation_lines, 1);
    }

    #[test]
    fn a_row_cut_in_three_and_into_a_quoted_field_is_rejoined() {
        let mut reader = read_all(&[
            "2026-11-21 17:57:13.106 UTC,,,1,,a.b,",
            "1,,2026-11-21 17:57:13 UTC,,0,ERROR,42601,\"syntax",
            " error\",,,,,,,,,\"\"",
        ]);
        let r = reader.pop().expect("the rejoined row");
        assert_eq!((r.line, r.end_line), (1, 3));
        assert_eq!(r.message, "syntax\n error");
        assert_eq!(reader.counters.stats.unrecognized_lines, 0);
        assert_eq!(reader.counters.continuation_lines, 2);
    }

    #[test]
    fn a_cut_row_with_no_rest_is_counted_not_lost_and_the_next_row_is_read() {
        let mut reader = read_all(&[
            "2026-11-21 17:57:13.106 UTC,,,1,,a.b,",
            "a remark",
            "another remark",
            "a third remark",
            "2026-11-21 17:57:13.106 UTC,,,1,,a.b,3,,2026-11-21 17:57:13 UTC,,0,LOG,00000,\"redo is not required\",,,,,,,,,\"\"",
            "2026-11-21 17:57:13.106 UTC,,,1,,a.b,",
        ]);
        let r = reader.pop().expect("the whole row");
        assert_eq!(r.line, 5);
        assert!(reader.pop().is_none());
        // The cut row (line 1), two remarks passed over, the third that gave the row up, and
        // the cut row at the end of the input.
        assert_eq!(reader.counters.stats.unrecognized_lines, 5);
        assert_eq!(reader.counters.continuation_lines, 0);
    }
}
