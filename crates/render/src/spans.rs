//! The code spans in a sentence, read as CommonMark reads them.
//!
//! pgmortem's sentences mark code and bundle text as code spans (`` `x` ``, fenced with more
//! backticks when the text holds some: `pgmortem_diagnose::quote`). Markdown keeps them as
//! spans and HTML shows them as `<code>`; both need the sentence cut into its prose and its
//! spans. [`pieces`] does it by CommonMark's rule: a run of N backticks opens a span that the
//! next run of exactly N backticks closes; a run with no such closer is literal text; inside,
//! one space is taken from each end when both ends are spaces and the span is not all spaces.

/// A piece of a sentence: prose, or the text of a code span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece<'a> {
    /// Words, to escape for where they land.
    Prose(&'a str),
    /// What a code span holds, fences and padding taken away.
    Code(&'a str),
}

/// `text` cut into prose and code spans, in order; prose pieces are never empty and two
/// never follow each other.
pub(crate) fn pieces(text: &str) -> Vec<Piece<'_>> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut prose_from = 0;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let open = run_at(bytes, i);
        match closer(bytes, i + open, open) {
            Some(close) => {
                if prose_from < i {
                    out.push(Piece::Prose(&text[prose_from..i]));
                }
                out.push(Piece::Code(unpadded(&text[i + open..close])));
                i = close + open;
                prose_from = i;
            }
            // No closer of this length: the run is text, and so is each shorter run inside it
            // (CommonMark does not split a run).
            None => i += open,
        }
    }
    if prose_from < bytes.len() {
        out.push(Piece::Prose(&text[prose_from..]));
    }
    out
}

/// The length of the run of backticks starting at `at`.
fn run_at(bytes: &[u8], at: usize) -> usize {
    bytes[at..].iter().take_while(|&&b| b == b'`').count()
}

/// Where the next run of exactly `len` backticks from `from` starts.
fn closer(bytes: &[u8], from: usize, len: usize) -> Option<usize> {
    let mut i = from;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let run = run_at(bytes, i);
            if run == len {
                return Some(i);
            }
            i += run;
        } else {
            i += 1;
        }
    }
    None
}

/// A span's text with one space taken from each end when both ends are spaces and it is not
/// all spaces.
fn unpadded(inner: &str) -> &str {
    if inner.len() >= 2
        && inner.starts_with(' ')
        && inner.ends_with(' ')
        && inner.bytes().any(|b| b != b' ')
    {
        &inner[1..inner.len() - 1]
    } else {
        inner
    }
}

#[cfg(test)]
mod tests {
    use super::Piece::{Code, Prose};
    use super::*;
    use pgmortem_diagnose::quote;

    #[test]
    fn spans_and_prose_in_order() {
        assert_eq!(
            pieces("It was running: `select 1` when killed"),
            vec![
                Prose("It was running: "),
                Code("select 1"),
                Prose(" when killed")
            ]
        );
        assert_eq!(pieces("`a``b`"), vec![Code("a``b")]);
    }

    #[test]
    fn a_run_without_its_closer_is_text() {
        assert_eq!(pieces("it`s"), vec![Prose("it`s")]);
        assert_eq!(pieces("``a`"), vec![Prose("``a`")]);
        assert_eq!(pieces("a ``b` c`"), vec![Prose("a ``b"), Code(" c")]);
    }

    #[test]
    fn every_quote_and_markdown_span_reads_back_as_its_text() {
        for text in [
            "plain",
            "a `b` c",
            "`lead",
            "trail`",
            " both ",
            "```",
            "x ``` y",
            " ",
            "   ",
            "ünïcødé `",
        ] {
            // As the rules quote it, and as the Markdown report writes a span again.
            for quoted in [quote(text), crate::markdown::code(text)] {
                let sentence = format!("before {quoted} after");
                assert_eq!(
                    pieces(&sentence),
                    vec![Prose("before "), Code(text), Prose(" after")],
                    "{text:?} quoted as {quoted:?}"
                );
            }
        }
    }
}
