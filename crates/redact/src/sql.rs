//! The literals of a piece of SQL: string constants (`'…'`, `E'…'`, `$tag$…$tag$`) and numeric
//! constants, found by a small scanner that knows identifiers, quoted identifiers, comments
//! and `$1` parameters, so that it replaces values, never names or syntax.

/// One literal of a query, as [`literals`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Literal {
    /// A string constant: its byte range, quotes included.
    String(usize, usize),
    /// A numeric constant: its byte range.
    Number(usize, usize),
}

/// The literals of `sql`, in order. A string left open at the end of the text (a query cut by
/// the log, or continued on the next line) runs to the end.
pub(crate) fn literals(sql: &str) -> Vec<Literal> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b'-' if b.get(i + 1) == Some(&b'-') => break, // a comment to the end of the line
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i = find(b, i + 2, b"*/").map_or(b.len(), |e| e + 2);
            }
            b'"' => i = end_of_quoted(b, i, b'"'),
            b'\'' => {
                let end = end_of_quoted(b, i, b'\'');
                out.push(Literal::String(i, end));
                i = end;
            }
            b'$' => {
                // `$1`: a parameter; `$tag$…$tag$` or `$$…$$`: a string.
                let tag_end = b[i + 1..]
                    .iter()
                    .position(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
                    .map(|p| i + 1 + p);
                match tag_end {
                    Some(e)
                        if b[e] == b'$' && !b[i + 1..e].first().is_some_and(u8::is_ascii_digit) =>
                    {
                        let tag = &b[i..=e];
                        let end = find(b, e + 1, tag).map_or(b.len(), |p| p + tag.len());
                        out.push(Literal::String(i, end));
                        i = end;
                    }
                    _ => {
                        i += 1;
                        while i < b.len() && b[i].is_ascii_digit() {
                            i += 1;
                        }
                    }
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                // E'…', B'…', X'…', U&'…' are strings with a prefix.
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric()
                        || b[i] == b'_'
                        || b[i] == b'$'
                        || b[i] >= 0x80)
                {
                    i += 1;
                }
                let word = &b[start..i];
                let prefix = matches!(
                    word,
                    [b'e' | b'E' | b'b' | b'B' | b'x' | b'X' | b'n' | b'N']
                );
                if prefix && b.get(i) == Some(&b'\'') {
                    let end = end_of_quoted(b, i, b'\'');
                    out.push(Literal::String(start, end));
                    i = end;
                } else if matches!(word, [b'u' | b'U'])
                    && b.get(i) == Some(&b'&')
                    && b.get(i + 1) == Some(&b'\'')
                {
                    let end = end_of_quoted(b, i + 1, b'\'');
                    out.push(Literal::String(start, end));
                    i = end;
                }
            }
            c if c.is_ascii_digit()
                || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) =>
            {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.' || b[i] == b'_')
                {
                    // 1e-5: the sign of an exponent belongs to the number.
                    if (b[i] == b'e' || b[i] == b'E') && matches!(b.get(i + 1), Some(b'-' | b'+')) {
                        i += 1;
                    }
                    i += 1;
                }
                out.push(Literal::Number(start, i));
            }
            _ => i += 1,
        }
    }
    out
}

/// The end (exclusive) of the quoted text opening at `start` with `quote`, a doubled quote
/// being one quote inside; the end of `b` when it is not closed.
fn end_of_quoted(b: &[u8], start: usize, quote: u8) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == quote {
            if b.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        if b[i] == b'\\' && quote == b'\'' {
            // E'…' strings escape with a backslash; in a standard string it is a character
            // and skipping the next one only matters for `\'`, which E'…' means as a quote.
            i += 2;
            continue;
        }
        i += 1;
    }
    b.len()
}

fn find(b: &[u8], from: usize, needle: &[u8]) -> Option<usize> {
    if from > b.len() {
        return None;
    }
    b[from..]
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|p| from + p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(sql: &str) -> Vec<&str> {
        literals(sql)
            .into_iter()
            .map(|l| match l {
                Literal::String(s, e) | Literal::Number(s, e) => &sql[s..e],
            })
            .collect()
    }

    #[test]
    fn strings_and_numbers_but_not_names_or_parameters() {
        assert_eq!(
            texts(
                r#"SELECT "id1", t2.x FROM t2 WHERE name = 'O''Brien' AND n > 42 AND m = $1 LIMIT 1.5e-3"#
            ),
            ["'O''Brien'", "42", "1.5e-3"]
        );
        assert_eq!(
            texts("select E'a\\'b', x'1f', $$dollar 'q'$$, $f$x$f$"),
            ["E'a\\'b'", "x'1f'", "$$dollar 'q'$$", "$f$x$f$"]
        );
        assert_eq!(texts("SELECT 1 -- 'not a literal'"), ["1"]);
        assert_eq!(texts("SELECT /* 'no' */ 'yes'"), ["'yes'"]);
        assert_eq!(texts("SELECT col_2, tbl3.c FROM tbl3"), Vec::<&str>::new());
    }

    #[test]
    fn an_open_string_runs_to_the_end() {
        assert_eq!(texts("INSERT INTO t VALUES ('cut short"), ["'cut short"]);
    }
}
