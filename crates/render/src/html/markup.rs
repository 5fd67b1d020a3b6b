//! Escaping and the small formatting helpers every part of the page shares.
//!
//! Everything a bundle wrote (log lines, queries, process names, paths, symbols) is hostile
//! input: it goes into the page only through [`esc`], which makes it inert text in element
//! content and in quoted attribute values alike, inside HTML and inline SVG.

use jiff::Timestamp;

/// `text` escaped for HTML and SVG text and double- or single-quoted attribute values: `&`,
/// `<`, `>`, `"` and `'` become character references; NUL and the other C0 controls but tab,
/// line feed and carriage return (invalid in the page) become U+FFFD.
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// A UTC time for a reader: `2026-11-24 05:29:29.924 UTC` (milliseconds kept when not zero).
pub(crate) fn time(at: Timestamp) -> String {
    let text = at.strftime("%Y-%m-%d %H:%M:%S%.3f").to_string();
    let text = text.strip_suffix(".000").unwrap_or(&text).to_owned();
    format!("{text} UTC")
}

/// [`time`], or `unknown time`.
pub(crate) fn time_or_unknown(at: Option<Timestamp>) -> String {
    at.map_or_else(|| "unknown time".to_owned(), time)
}

/// Seconds for a reader: `0.439 s`, `31.2 s`, `4 min 12 s`, `2 h 05 min`.
pub(crate) fn seconds(s: f64) -> String {
    if !s.is_finite() {
        return "? s".to_owned();
    }
    if s < 10.0 {
        format!("{s:.3} s")
    } else if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{} min {:02} s", (s / 60.0) as u64, (s % 60.0) as u64)
    } else {
        format!(
            "{} h {:02} min",
            (s / 3600.0) as u64,
            ((s % 3600.0) / 60.0) as u64
        )
    }
}

/// `path:line`, escaped, in a `<code>` element.
pub(crate) fn place(path: &str, line: u64) -> String {
    format!("<code class=\"place\">{}:{line}</code>", esc(path))
}

/// `n` with thin thousands separators: `3 894`, `79 478 472`.
pub(crate) fn count(n: u64) -> String {
    crate::fold::thousands_with(n, '\u{202f}')
}

/// A sentence of the report escaped, with each code span (pgmortem's `` `x` `` and the bundle
/// text it quotes, read as CommonMark reads them: [`crate::spans`]) shown as `<code>`: the
/// renderings' one convention for code in prose. A backtick that opens no span is text.
pub(crate) fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    for piece in crate::spans::pieces(text) {
        match piece {
            crate::spans::Piece::Prose(words) => out.push_str(&esc(words)),
            crate::spans::Piece::Code(code) => {
                out.push_str("<code>");
                out.push_str(&esc(code));
                out.push_str("</code>");
            }
        }
    }
    out
}

/// A share 0–1 as `35.5 %`.
pub(crate) fn percent(share: f64) -> String {
    format!("{:.1}\u{a0}%", share * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_quotes_and_controls() {
        assert_eq!(
            esc("<script>alert(\"x\" & 'y')</script>\u{0}"),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;\u{fffd}"
        );
        assert_eq!(esc("a\tb\nc"), "a\tb\nc");
    }

    #[test]
    fn code_spans_in_own_prose_become_code_elements_escaped() {
        assert_eq!(
            prose("set `transparent_hugepage=madvise` on <the> kernel"),
            "set <code>transparent_hugepage=madvise</code> on &lt;the&gt; kernel"
        );
        assert_eq!(prose("`<x>`"), "<code>&lt;x&gt;</code>");
        // A backtick that opens no span is text; a longer fence holds backticks.
        assert_eq!(prose("it`s"), "it`s");
        assert_eq!(
            prose("ran: ``a `b` <c>`` then"),
            "ran: <code>a `b` &lt;c&gt;</code> then"
        );
    }

    #[test]
    fn numbers_and_durations_read_well() {
        assert_eq!(count(79_478_472), "79\u{202f}478\u{202f}472");
        assert_eq!(count(12), "12");
        assert_eq!(seconds(0.4391), "0.439 s");
        assert_eq!(seconds(252.0), "4 min 12 s");
        let at: Timestamp = "2026-11-24T05:29:29.924706954Z".parse().unwrap();
        assert_eq!(time(at), "2026-11-24 05:29:29.924 UTC");
        let at: Timestamp = "2026-11-24T05:29:29Z".parse().unwrap();
        assert_eq!(time(at), "2026-11-24 05:29:29 UTC");
    }
}
