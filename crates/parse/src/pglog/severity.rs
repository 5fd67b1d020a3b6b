//! The severity word after the prefix (`LOG:  `, `ERROR:  `, `DETAIL:  `, …), normalised to
//! English: English words by a `match`, translated ones (`ERREUR`, `DÉTAIL`, `ASTUCE :  ` with
//! its space before the colon, `СООБЩЕНИЕ`, `詳細`, `致命错误`, …) through the table generated
//! from PostgreSQL's catalogs ([`super::catalog`]).

use super::Severity;
use super::catalog;
use super::translate::FastMap;
use super::translate::Lang;
use std::sync::OnceLock;

/// What a severity word introduces: a new record, or a part of the previous one (public as
/// [`super::LineLabel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
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

/// An English severity word or label.
fn english(word: &str) -> Option<Tag> {
    // `LOG` and `DETAIL` are most lines of a log: compared as bytes before the general match
    // (which calls `memcmp` for every word of a matching length).
    match word.as_bytes() {
        [b'L', b'O', b'G'] => return Some(Tag::Main(Severity::Log)),
        [b'D', b'E', b'T', b'A', b'I', b'L'] => return Some(Tag::Detail),
        [b'E', b'R', b'R', b'O', b'R'] => return Some(Tag::Main(Severity::Error)),
        [first, ..] if !first.is_ascii_uppercase() => return None,
        _ => {}
    }
    Some(match word {
        "LOG" => Tag::Main(Severity::Log),
        "ERROR" => Tag::Main(Severity::Error),
        "FATAL" => Tag::Main(Severity::Fatal),
        "PANIC" => Tag::Main(Severity::Panic),
        "WARNING" => Tag::Main(Severity::Warning),
        "NOTICE" => Tag::Main(Severity::Notice),
        "INFO" => Tag::Main(Severity::Info),
        "DEBUG" | "DEBUG1" | "DEBUG2" | "DEBUG3" | "DEBUG4" | "DEBUG5" => {
            Tag::Main(Severity::Debug)
        }
        "DETAIL" => Tag::Detail,
        "HINT" => Tag::Hint,
        "CONTEXT" => Tag::Context,
        "STATEMENT" => Tag::Statement,
        "QUERY" => Tag::Query,
        "LOCATION" => Tag::Location,
        _ => return None,
    })
}

/// Translated words that differ from English → (tag, language).
fn translated() -> &'static FastMap<&'static str, (Tag, Lang)> {
    static WORDS: OnceLock<FastMap<&'static str, (Tag, Lang)>> = OnceLock::new();
    WORDS.get_or_init(|| {
        catalog::SEVERITY_WORDS
            .iter()
            .filter(|(_, en, tr)| en != tr && english(tr).is_none())
            .filter_map(|&(lang, en, tr)| english(en).map(|tag| (tr, (tag, lang))))
            .collect()
    })
}

/// A bare severity word (csvlog's and jsonlog's `error_severity`): its tag and, when it is a
/// translation that differs from English, its language.
pub(crate) fn word(word: &str) -> Option<(Tag, Option<Lang>)> {
    match english(word) {
        Some(tag) => Some((tag, None)),
        None => translated().get(word).map(|&(tag, lang)| (tag, Some(lang))),
    }
}

/// The longest severity word we look for, in bytes (`比致命错误还过分的错误` is 33).
const MAX_WORD: usize = 48;

/// Splits `LOG:  database system is ready` into the tag and the message text. The word must be
/// followed by `:` (maybe after a space) and up to two spaces (PostgreSQL prints two; a message
/// cut to nothing has none). `None` when the text does not start with a known severity word.
pub(crate) fn split(rest: &str) -> Option<(Tag, &str)> {
    split_with_language(rest).map(|(tag, _, msg)| (tag, msg))
}

/// [`split`], also saying the word's language when it is a translation that differs from
/// English (`ERREUR` → French; `LOG` → none).
pub(crate) fn split_with_language(rest: &str) -> Option<(Tag, Option<Lang>, &str)> {
    let head = &rest.as_bytes()[..rest.len().min(MAX_WORD)];
    let colon = memchr::memchr(b':', head)?;
    let after = &rest[colon + 1..];
    if !(after.is_empty() || after.starts_with(' ') || source_location(after).is_some()) {
        return None;
    }
    let word = &rest[..colon];
    let (tag, lang) = match english(word) {
        Some(tag) => (tag, None),
        None => {
            let &(tag, lang) = translated().get(word.trim_end_matches(' '))?;
            (tag, Some(lang))
        }
    };
    let message = after
        .strip_prefix("  ")
        .or_else(|| after.strip_prefix(' '))
        .unwrap_or(after);
    let message = source_location(message).unwrap_or(message);
    Some((tag, lang, message))
}

/// AlloyDB prints the source location before the message, with or without spaces around it
/// (`ERROR:[parse_relation.c:1395]relation "cars5" does not exist`, `LOG:  [postgres.c:1214]
/// statement: …`): the message after it.
fn source_location(text: &str) -> Option<&str> {
    let inner = text.strip_prefix('[')?;
    let close = memchr::memchr(b']', &inner.as_bytes()[..inner.len().min(64)])?;
    let (file, line) = inner[..close].rsplit_once(':')?;
    let ok = (file.ends_with(".c") || file.ends_with(".h"))
        && !file.contains(' ')
        && !line.is_empty()
        && line.bytes().all(|c| c.is_ascii_digit());
    ok.then(|| inner[close + 1..].trim_start_matches(' '))
}

#[cfg(test)]
#[test]
fn alloydb_source_locations_are_taken_off() {
    assert_eq!(
        split("ERROR:[parse_relation.c:1395]relation \"cars5\" does not exist"),
        Some((
            Tag::Main(Severity::Error),
            "relation \"cars5\" does not exist"
        ))
    );
    assert_eq!(
        split("LOG:  [postgres.c:1214]  statement: SELECT 1"),
        Some((Tag::Main(Severity::Log), "statement: SELECT 1"))
    );
    assert_eq!(
        split("LOG: [postgres.c:1187] statement: x"),
        Some((Tag::Main(Severity::Log), "statement: x"))
    );
    // Not a location: kept.
    assert_eq!(
        split("LOG:  [5-1] x"),
        Some((Tag::Main(Severity::Log), "[5-1] x"))
    );
    assert_eq!(split("ERROR:[x] y"), None);
}

#[cfg(test)]
fn lookup(word: &str) -> Option<Tag> {
    english(word).or_else(|| translated().get(word).map(|&(tag, _)| tag))
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
    fn translated_words() {
        let (tag, lang, msg) = split_with_language("ERREUR:  mémoire épuisée").unwrap();
        assert_eq!((tag, msg), (Tag::Main(Severity::Error), "mémoire épuisée"));
        assert_eq!(super::super::translate::language_name(lang.unwrap()), "fr");
        assert_eq!(split("ASTUCE :  x"), Some((Tag::Hint, "x")));
        assert_eq!(split("ВАЖНО:  x"), Some((Tag::Main(Severity::Fatal), "x")));
        assert_eq!(split("詳細:  x"), Some((Tag::Detail, "x")));
        assert_eq!(split("日志:  x"), Some((Tag::Main(Severity::Log), "x")));
        assert_eq!(
            split("比致命错误还过分的错误:  x"),
            Some((Tag::Main(Severity::Panic), "x"))
        );
        assert_eq!(split_with_language("LOG:  x").unwrap().1, None);
        assert!(lookup("FEHLER").is_some());
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
