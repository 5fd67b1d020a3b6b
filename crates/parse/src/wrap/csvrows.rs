//! CSV exports read row by row (RFC 4180: fields quoted with `"`, `""` inside, a quoted field
//! may hold newlines, so a row may span lines).

use std::borrow::Cow;

/// Physical lines gathered into rows.
#[derive(Debug, Default)]
pub(super) struct CsvRows {
    partial: String,
    first_line: u64,
    lines: u64,
    in_quotes: bool,
}

/// What a line did.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Row {
    /// A row ended on this line: its first line, the lines it spans, its text.
    Complete(u64, u64, String),
    /// The line is inside a quoted field that goes on.
    Pending,
}

impl CsvRows {
    /// True while a quoted field is open.
    pub(super) fn is_open(&self) -> bool {
        self.in_quotes
    }

    /// Takes line `number`; a row longer than `max_bytes` is cut (its quote closed).
    pub(super) fn push(&mut self, number: u64, text: &str, max_bytes: usize) -> Row {
        if !self.in_quotes {
            self.partial.clear();
            self.first_line = number;
            self.lines = 0;
        } else {
            self.partial.push('\n');
        }
        self.lines += 1;
        let quotes = memchr::memchr_iter(b'"', text.as_bytes()).count();
        if quotes % 2 == 1 {
            self.in_quotes = !self.in_quotes;
        }
        if self.partial.len() + text.len() <= max_bytes {
            self.partial.push_str(text);
        } else {
            self.in_quotes = false;
        }
        if self.in_quotes {
            return Row::Pending;
        }
        Row::Complete(
            self.first_line,
            self.lines,
            std::mem::take(&mut self.partial),
        )
    }

    /// The row still open at the end of the input: (first line, text, lines).
    pub(super) fn take_open(&mut self) -> Option<(u64, String, u64)> {
        if !self.in_quotes {
            return None;
        }
        self.in_quotes = false;
        Some((
            self.first_line,
            std::mem::take(&mut self.partial),
            self.lines,
        ))
    }
}

/// The fields of one row (quotes taken off, `""` turned back into `"`).
pub(super) fn fields(row: &str) -> Vec<Cow<'_, str>> {
    let mut out = Vec::new();
    let mut rest = row;
    loop {
        match rest.strip_prefix('"') {
            Some(quoted) => {
                let mut value = String::new();
                let mut r = quoted;
                loop {
                    match r.find('"') {
                        Some(i) if r[i + 1..].starts_with('"') => {
                            value.push_str(&r[..=i]);
                            r = &r[i + 2..];
                        }
                        Some(i) => {
                            value.push_str(&r[..i]);
                            r = &r[i + 1..];
                            break;
                        }
                        None => {
                            value.push_str(r);
                            r = "";
                            break;
                        }
                    }
                }
                out.push(Cow::Owned(value));
                match r.find(',') {
                    Some(i) => rest = &r[i + 1..],
                    None => return out,
                }
            }
            None => match rest.find(',') {
                Some(i) => {
                    out.push(Cow::Borrowed(&rest[..i]));
                    rest = &rest[i + 1..];
                }
                None => {
                    out.push(Cow::Borrowed(rest));
                    return out;
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_and_rows_over_lines() {
        assert_eq!(fields(r#"a,"b ""c"", d",,e"#), ["a", "b \"c\", d", "", "e"]);
        let mut rows = CsvRows::default();
        assert_eq!(rows.push(1, r#"x,"first"#, 1 << 20), Row::Pending);
        assert_eq!(
            rows.push(2, r#"second",y"#, 1 << 20),
            Row::Complete(1, 2, "x,\"first\nsecond\",y".into())
        );
        assert_eq!(rows.push(3, "\"never closed", 1 << 20), Row::Pending);
        assert_eq!(rows.take_open(), Some((3, "\"never closed".into(), 1)));
    }
}
