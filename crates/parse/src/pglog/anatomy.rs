//! A stderr log line cut into its parts, for tools that rewrite a log rather than read it (the
//! redaction): where each name field of the prefix is (`%u`, `%d`, `%a`, `%r`/`%h`, `%L`),
//! which severity word or label follows the prefix, in which language, and where the message
//! starts; and the catalog's translations of a message, so that a rewriter finds the same
//! message in every language PostgreSQL prints it in.

use std::ops::Range;

use super::catalog;
use super::detect_prefix;
use super::prefix::{Escape, LogLinePrefix};
use super::severity::{self, Tag as LineLabel};
use super::translate::language_name;

/// What a name field of a `log_line_prefix` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrefixName {
    /// `%u`: the role.
    User,
    /// `%d`: the database.
    Database,
    /// `%a`: the application name.
    Application,
    /// `%r` (without its `(port)`) or `%h`: the client's host name or address, `[local]`.
    RemoteHost,
    /// `%L`: the server's local address.
    LocalAddress,
}

/// One stderr log line's parts, as byte ranges of the line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineParts {
    /// The name fields the prefix printed (empty ones absent), in the order of the prefix.
    pub names: Vec<(PrefixName, Range<usize>)>,
    /// Where the prefix ends (the severity word starts there).
    pub prefix_end: usize,
    /// The severity word or label.
    pub label: LineLabel,
    /// The catalog's language of the word when it is a translation that differs from English
    /// (`fr` for `ERREUR`; `None` for `LOG`, which every language prints alike).
    pub language: Option<&'static str>,
    /// Where the message starts (after the word, its colon and spaces).
    pub message_start: usize,
}

impl LogLinePrefix {
    /// Cuts `line` into its parts when it starts with this prefix and then a severity word
    /// or label (in English or a catalog's language); `None` for any other line (a TAB
    /// continuation, a memory-context dump, another program's output).
    pub fn line_parts(&self, line: &str) -> Option<LineParts> {
        let tail_ok = |rest: &str| severity::split(rest).is_some();
        let (fields, prefix_end) = self.match_line(line, &tail_ok)?;
        let (label, lang, message) = severity::split_with_language(&line[prefix_end..])?;
        let offset = |s: &str| s.as_ptr() as usize - line.as_ptr() as usize;
        let mut names = Vec::new();
        for &escape in self.escapes() {
            let name = match escape {
                Escape::User => PrefixName::User,
                Escape::Database => PrefixName::Database,
                Escape::Application => PrefixName::Application,
                Escape::RemoteHost | Escape::RemoteHostPort => PrefixName::RemoteHost,
                Escape::LocalAddress => PrefixName::LocalAddress,
                _ => continue,
            };
            let Some(value) = fields.get(escape) else {
                continue;
            };
            // `%r` prints `host(port)`: the port is no name.
            let value = match escape {
                Escape::RemoteHostPort => without_port(value),
                _ => value,
            };
            if !value.is_empty() {
                let start = offset(value);
                names.push((name, start..start + value.len()));
            }
        }
        Some(LineParts {
            names,
            prefix_end,
            label,
            language: lang.map(language_name),
            message_start: offset(message),
        })
    }
}

/// `10.0.0.7(51234)` → `10.0.0.7`; anything else as it is.
fn without_port(value: &str) -> &str {
    match value.strip_suffix(')').and_then(|v| v.rsplit_once('(')) {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => value,
    }
}

/// The `log_line_prefix` a stderr log was written with, chosen from its first lines (TAB
/// continuations and blank lines skipped) the way [`super::parse`] chooses it: the candidate
/// prefix that fits most lines, or one learned from them.
pub fn detect_log_prefix<'a>(lines: impl Iterator<Item = &'a str>) -> LogLinePrefix {
    detect_prefix(lines).0
}

/// The catalog's translations of the English msgid or label `english` (`"statement: %s"`,
/// `"STATEMENT"`, `"password authentication failed for user \"%s\""`): (language,
/// translation) for every language and plural form the catalog holds, in catalog order, the
/// forms a process with a C `LC_CTYPE` prints among them. Empty for a text the catalog does not
/// list: it lists the classified messages, the severity words and labels, `[unknown]` (what
/// `%u` and `%d` print before a session has a role), and the messages that print a role,
/// database, host or query (`NAMED_MESSAGES` of `fixtures/record/pglog-translations.py`).
pub fn catalog_translations(english: &str) -> Vec<(&'static str, &'static str)> {
    let unknown = catalog::UNKNOWN
        .iter()
        .filter(|_| english == "[unknown]")
        .map(|&(lang, translated)| (language_name(lang), translated));
    catalog::SEVERITY_WORDS
        .iter()
        .chain(catalog::MESSAGES)
        .chain(catalog::NAMED)
        .filter(|(_, en, _)| *en == english)
        .map(|&(lang, _, translated)| (language_name(lang), translated))
        .chain(unknown)
        .collect()
}

/// Every English msgid of the catalog's `NAMED` table: the messages that print a role, a
/// database, a host or query text, whose translations [`catalog_translations`] gives.
pub fn named_messages() -> Vec<&'static str> {
    let mut out: Vec<&'static str> = Vec::new();
    for &(_, english, _) in catalog::NAMED {
        if !out.contains(&english) {
            out.push(english);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_fields_of_a_debian_prefix() {
        let prefix = LogLinePrefix::compile("%m [%p] %q%u@%d ").unwrap();
        let line = "2026-11-24 05:29:10.800 UTC [24032] alice@shop LOG:  statement: SELECT 1";
        let parts = prefix.line_parts(line).unwrap();
        let names: Vec<(PrefixName, &str)> = parts
            .names
            .iter()
            .map(|(n, r)| (*n, &line[r.clone()]))
            .collect();
        assert_eq!(
            names,
            [(PrefixName::User, "alice"), (PrefixName::Database, "shop")]
        );
        assert_eq!(parts.label, LineLabel::Main(crate::pglog::Severity::Log));
        assert_eq!(&line[parts.message_start..], "statement: SELECT 1");
        assert_eq!(parts.language, None);
        // `%q`: a background process prints nothing after it.
        let line = "2026-11-24 05:29:10.800 UTC [24030] LOG:  checkpoint starting: time";
        assert!(prefix.line_parts(line).unwrap().names.is_empty());
    }

    #[test]
    fn the_port_of_r_is_no_name_and_translated_labels_are_known() {
        let prefix = LogLinePrefix::compile("%t [%p]: user=%u,db=%d,app=%a,client=%r ").unwrap();
        let line = "2026-11-24 05:29:10 UTC [24032]: user=bob,db=shop,app=psql,client=10.1.2.3(5432) ANWEISUNG:  SELECT 1";
        let parts = prefix.line_parts(line).unwrap();
        let names: Vec<&str> = parts.names.iter().map(|(_, r)| &line[r.clone()]).collect();
        assert_eq!(names, ["bob", "shop", "psql", "10.1.2.3"]);
        assert_eq!(parts.label, LineLabel::Statement);
        assert_eq!(parts.language, Some("de"));
        assert_eq!(&line[parts.message_start..], "SELECT 1");
        // A TAB continuation has no parts.
        assert_eq!(prefix.line_parts("\tFROM t"), None);
    }

    #[test]
    fn translations_of_labels_and_named_messages() {
        let statement = catalog_translations("STATEMENT");
        assert!(statement.contains(&("de", "ANWEISUNG")), "{statement:?}");
        assert!(statement.contains(&("fr", "INSTRUCTION")), "{statement:?}");
        let failed = catalog_translations("password authentication failed for user \"%s\"");
        assert!(
            failed.contains(&(
                "de",
                "Passwort-Authentifizierung für Benutzer »%s« fehlgeschlagen"
            )),
            "{failed:?}"
        );
        assert!(named_messages().contains(&"statement: %s"));
        assert!(catalog_translations("[unknown]").contains(&("de", "[unbekannt]")));
        assert!(catalog_translations("not a msgid").is_empty());
    }

    #[test]
    fn the_detected_prefix_is_the_one_the_parser_reads_with() {
        let log = "2026-11-24 05:29:10.800 UTC [24032] alice@shop LOG:  statement: SELECT 1\n\
                   2026-11-24 05:29:10.900 UTC [24030] LOG:  checkpoint starting: time\n";
        let prefix = detect_log_prefix(log.lines());
        assert_eq!(prefix.as_str(), "%m [%p] %q%u@%d ");
    }
}
