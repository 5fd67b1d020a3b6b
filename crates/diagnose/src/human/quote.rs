//! Bundle text in a sentence, kept apart from pgmortem's own words.
//!
//! A finding's sentence often carries text the bundle wrote: a log message, a query, a path,
//! a cgroup, a process name. Written bare, `It was running: select pg_sleep(600) killed by
//! SIGKILL` reads as one sentence, and a message that ends in a full stop or holds a quote
//! blurs where pgmortem's words begin. [`quote`] writes such text as a CommonMark code span:
//! the text between two runs of backticks, each one longer than any run inside it, so that
//! the span ends where the text ends whatever the text holds. Every rendering reads the same
//! convention: the text and JSON outputs show the backticks, Markdown keeps the span, HTML
//! turns it into `<code>`.

use super::cut;

/// `text` as a code span on one line: fenced with one backtick more than its longest run of
/// backticks, padded with a space inside the fence when it starts or ends with a backtick or
/// starts and ends with a space and is not all spaces (the padding CommonMark takes away
/// again). Line ends become spaces, as a span holds one line. Empty text is a span of one
/// space, as CommonMark has no empty span.
pub fn quote(text: &str) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if matches!(c, '\n' | '\r') { ' ' } else { c })
        .collect();
    let mut longest = 0;
    let mut run = 0;
    for c in one_line.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    if one_line.is_empty() {
        return "` `".to_owned();
    }
    let pad = one_line.starts_with('`')
        || one_line.ends_with('`')
        || (one_line.starts_with(' ')
            && one_line.ends_with(' ')
            && one_line.bytes().any(|b| b != b' '));
    let pad = if pad { " " } else { "" };
    format!("{fence}{pad}{one_line}{pad}{fence}")
}

/// `text` cut to at most `max` bytes (with `…` when cut, see [`cut`]), then quoted: the cut
/// is made before the fence, so that a long text never loses its closing backticks.
pub fn quote_cut(text: &str, max: usize) -> String {
    quote(&cut(text, max))
}

/// A log line as the log wrote it, `SEVERITY: message` with the message cut to `max` bytes,
/// quoted as one span (see [`quote`]).
pub fn quote_line(severity: &str, message: &str, max: usize) -> String {
    quote(&format!("{severity}: {}", cut(message, max)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_gets_one_backtick() {
        assert_eq!(quote("select pg_sleep(600)"), "`select pg_sleep(600)`");
    }

    #[test]
    fn the_fence_is_longer_than_any_run_inside() {
        assert_eq!(quote("a `b` c"), "``a `b` c``");
        assert_eq!(quote("x ``` y"), "````x ``` y````");
    }

    #[test]
    fn edges_that_would_merge_with_the_fence_are_padded() {
        assert_eq!(quote("`x"), "`` `x ``");
        assert_eq!(quote("x`"), "`` x` ``");
        assert_eq!(quote(" x "), "`  x  `");
        assert_eq!(quote(" x"), "` x`");
        assert_eq!(quote(" "), "` `");
        assert_eq!(quote(""), "` `");
    }

    #[test]
    fn line_ends_become_spaces() {
        assert_eq!(quote("SELECT 1\nFROM t\r\n"), "`SELECT 1 FROM t  `");
    }

    #[test]
    fn the_cut_comes_before_the_fence() {
        assert_eq!(quote_cut("abcdef", 3), "`abc…`");
        assert_eq!(quote_cut("ab`def", 3), "``ab`…``");
        assert_eq!(quote_line("FATAL", "abcdef", 3), "`FATAL: abc…`");
    }
}
