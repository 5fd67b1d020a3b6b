//! The severity word after the prefix (`LOG:  `, `ERROR:  `, `DETAIL:  `, …), normalised to
//! English through per-language tables. Only English is filled for now; a translation is one
//! more table in [`LANGUAGES`] (the French catalog, for one, writes `ASTUCE :  ` with a space
//! before the colon, which [`split`] already accepts).

use super::Severity;

/// What a severity word introduces: a new record, or a part of the previous one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tag {
    /// A record of its own.
    Main(Severity),
    /// `DETAIL:`
    Detail,
    /// `HINT:`
    Hint,
    /// `CONTEXT:`
    Context,
    /// `STATEMENT:`
    Statement,
    /// `QUERY:`
    Query,
    /// `LOCATION:`
    Location,
}

/// English severity words, as `error_severity()` and the `_("DETAIL")`… labels print them.
const ENGLISH: &[(&str, Tag)] = &[
    ("LOG", Tag::Main(Severity::Log)),
    ("ERROR", Tag::Main(Severity::Error)),
    ("FATAL", Tag::Main(Severity::Fatal)),
    ("PANIC", Tag::Main(Severity::Panic)),
    ("WARNING", Tag::Main(Severity::Warning)),
    ("NOTICE", Tag::Main(Severity::Notice)),
    ("INFO", Tag::Main(Severity::Info)),
    ("DEBUG", Tag::Main(Severity::Debug)),
    ("DEBUG1", Tag::Main(Severity::Debug)),
    ("DEBUG2", Tag::Main(Severity::Debug)),
    ("DEBUG3", Tag::Main(Severity::Debug)),
    ("DEBUG4", Tag::Main(Severity::Debug)),
    ("DEBUG5", Tag::Main(Severity::Debug)),
    ("DETAIL", Tag::Detail),
    ("HINT", Tag::Hint),
    ("CONTEXT", Tag::Context),
    ("STATEMENT", Tag::Statement),
    ("QUERY", Tag::Query),
    ("LOCATION", Tag::Location),
];

/// Every language the parser reads, tried in order.
const LANGUAGES: &[&[(&str, Tag)]] = &[ENGLISH];

/// The longest severity word we look for, in bytes (leaves room for translations).
const MAX_WORD: usize = 48;

/// Splits `LOG:  database system is ready` into the tag and the message text. The word must be
/// followed by `:` and up to two spaces (PostgreSQL prints exactly two; a message cut to
/// nothing has none). `None` when the text does not start with a known severity word.
pub(crate) fn split(rest: &str) -> Option<(Tag, &str)> {
    let head = &rest.as_bytes()[..rest.len().min(MAX_WORD)];
    let colon = memchr::memchr(b':', head)?;
    let word = rest[..colon].trim_end_matches(' ');
    let tag = lookup(word)?;
    let after = &rest[colon + 1..];
    let message = after
        .strip_prefix("  ")
        .or_else(|| after.strip_prefix(' '))
        .unwrap_or(after);
    if !(after.is_empty() || after.starts_with(' ')) {
        return None;
    }
    Some((tag, message))
}

fn lookup(word: &str) -> Option<Tag> {
    LANGUAGES
        .iter()
        .flat_map(|table| table.iter())
        .find(|(w, _)| *w == word)
        .map(|&(_, tag)| tag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_main_and_secondary_words() {
        assert_eq!(
            split("LOG:  redo starts at 0/1500780"),
            Some((Tag::Main(Severity::Log), "redo starts at 0/1500780"))
        );
        assert_eq!(split("DEBUG2:  x"), Some((Tag::Main(Severity::Debug), "x")));
        assert_eq!(
            split("DETAIL:  Failed process was running: select 1"),
            Some((Tag::Detail, "Failed process was running: select 1"))
        );
        assert_eq!(
            split("STATEMENT:  select"),
            Some((Tag::Statement, "select"))
        );
        assert_eq!(
            split("LOCATION:  exec_simple_query, postgres.c:1"),
            Some((Tag::Location, "exec_simple_query, postgres.c:1"))
        );
        assert_eq!(split("FATAL:  "), Some((Tag::Main(Severity::Fatal), "")));
        assert_eq!(split("PANIC:"), Some((Tag::Main(Severity::Panic), "")));
    }

    #[test]
    fn rejects_other_text() {
        assert_eq!(split("TopMemoryContext: 97696 total in 5 blocks"), None);
        assert_eq!(split("LOGGING:  x"), None);
        assert_eq!(split("LOG:x"), None);
        assert_eq!(split("waiting for server to start.... done"), None);
        assert_eq!(split(""), None);
    }
}
