//! Translated messages back to English, through PostgreSQL's own catalogs ([`super::catalog`],
//! generated): a translation is a printf format (`%s (PID %d) a été arrêté par le signal %d : %s`);
//! matching it against a message yields the arguments, which are then printed into the English
//! msgid (`%s (PID %d) was terminated by signal %d: %s`) for the English classifier. Arguments
//! that are themselves translated texts (process names, strerror, the `pg_rusage` summary) are
//! translated too, one level deep.
//!
//! Cost: nothing for English messages the classifier knows; for the others one hash lookup on
//! the first bytes of the message (and one on the text after `(PID n)` when there is one).

use super::catalog;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::OnceLock;

/// FNV-1a: the keys are a few bytes, looked up once per unclassified record; SipHash's
/// protection against chosen keys is not needed for a fixed table.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// A map with [`Fnv`] hashing.
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<Fnv>>;

/// A language of [`catalog::LANGUAGES`], by index.
pub(crate) type Lang = u8;

/// The name of a language index (`fr`, `zh_CN`, …).
pub(crate) fn language_name(lang: Lang) -> &'static str {
    catalog::LANGUAGES
        .get(usize::from(lang))
        .copied()
        .unwrap_or("")
}

/// One element of a printf format.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Literal(String),
    /// A conversion: the argument's index and what it matches.
    Arg {
        index: usize,
        shape: ArgShape,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArgShape {
    /// `%d`, `%u`, `%ld`, `%zu`, `%lu`, `%02d`: optional minus, digits.
    Integer,
    /// `%X`, `%x`: hex digits.
    Hex,
    /// `%.1f`: digits, dot, digits.
    Float,
    /// `%s`, `%m`: any text.
    Text,
}

/// A compiled printf format.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Format {
    pieces: Vec<Piece>,
}

/// One element of a printf format, as [`printf_pieces`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PrintfPiece {
    /// Text printed as it is (`%%` already made `%`).
    Literal(String),
    /// A conversion: which argument it prints (0-based; `%2$s` is 1) and its conversion
    /// character (`s`, `d`, `u`, `x`, `f`, `m`, …; length modifiers such as `ll` and `z`
    /// skipped).
    Conversion {
        /// The argument's index.
        index: usize,
        /// The conversion character.
        conversion: char,
    },
}

/// The pieces of a printf format such as PostgreSQL's messages are (`%s (PID %d)`, `%2$s`,
/// `%.1f%%`, `%ld.%03d`, `%m`), in order. A lone `%` at the end is literal text.
pub fn printf_pieces(text: &str) -> Vec<PrintfPiece> {
    let mut pieces = Vec::new();
    let mut literal = String::new();
    let mut next_index = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&d) = chars.peek() {
            chars.next();
            spec.push(d);
            if d.is_ascii_alphabetic() && !matches!(d, 'l' | 'z' | 'h' | 'j' | 't' | 'L')
                || d == '%'
            {
                break;
            }
        }
        let Some(conversion) = spec.chars().last() else {
            literal.push('%');
            continue;
        };
        if conversion == '%' {
            literal.push('%');
            continue;
        }
        let index = match spec.split_once('$') {
            Some((n, _)) => n
                .parse::<usize>()
                .map_or(next_index, |n| n.saturating_sub(1)),
            None => next_index,
        };
        next_index = index + 1;
        if !literal.is_empty() {
            pieces.push(PrintfPiece::Literal(std::mem::take(&mut literal)));
        }
        pieces.push(PrintfPiece::Conversion { index, conversion });
    }
    if !literal.is_empty() {
        pieces.push(PrintfPiece::Literal(literal));
    }
    pieces
}

impl Format {
    /// Compiles `%s (PID %d)`, `%2$s`, `%.1f%%`, `%ld.%03d`, `%m`.
    fn compile(text: &str) -> Format {
        let pieces = printf_pieces(text)
            .into_iter()
            .map(|p| match p {
                PrintfPiece::Literal(l) => Piece::Literal(l),
                PrintfPiece::Conversion { index, conversion } => Piece::Arg {
                    index,
                    shape: match conversion {
                        'd' | 'i' | 'u' => ArgShape::Integer,
                        'x' | 'X' => ArgShape::Hex,
                        'f' | 'g' | 'e' => ArgShape::Float,
                        _ => ArgShape::Text,
                    },
                },
            })
            .collect();
        Format { pieces }
    }

    /// Arguments of `text` read with this format, by index; `None` when it does not fit.
    fn read<'t>(&self, text: &'t str) -> Option<Vec<&'t str>> {
        let mut args = Vec::new();
        let mut budget = 256u32;
        self.read_from(0, text, 0, &mut args, &mut budget)
            .then_some(args)
    }

    fn read_from<'t>(
        &self,
        piece: usize,
        text: &'t str,
        pos: usize,
        args: &mut Vec<&'t str>,
        budget: &mut u32,
    ) -> bool {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let Some(p) = self.pieces.get(piece) else {
            return pos == text.len();
        };
        let rest = &text[pos..];
        match p {
            Piece::Literal(lit) => {
                rest.starts_with(lit.as_str())
                    && self.read_from(piece + 1, text, pos + lit.len(), args, budget)
            }
            &Piece::Arg { index, shape } => {
                let ends: Vec<usize> = match shape {
                    ArgShape::Text => match self.pieces.get(piece + 1) {
                        None => vec![rest.len()],
                        Some(Piece::Literal(next)) => rest
                            .match_indices(next.as_str())
                            .map(|(i, _)| i)
                            .take(8)
                            .collect(),
                        Some(Piece::Arg { .. }) => vec![0],
                    },
                    _ => {
                        let b = rest.as_bytes();
                        let sign = usize::from(b.first() == Some(&b'-'));
                        let n = b[sign..]
                            .iter()
                            .take_while(|c| match shape {
                                ArgShape::Hex => c.is_ascii_hexdigit(),
                                ArgShape::Float => c.is_ascii_digit() || **c == b'.',
                                _ => c.is_ascii_digit(),
                            })
                            .count();
                        if n == 0 {
                            return false;
                        }
                        vec![sign + n]
                    }
                };
                for end in ends {
                    if args.len() <= index {
                        args.resize(index + 1, "");
                    }
                    args[index] = &rest[..end];
                    if self.read_from(piece + 1, text, pos + end, args, budget) {
                        return true;
                    }
                }
                false
            }
        }
    }

    /// Bytes of literal text in this format.
    fn literal_len(&self) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Literal(l) => l.len(),
                Piece::Arg { .. } => 0,
            })
            .sum()
    }

    /// Prints `args` into this format.
    fn render(&self, args: &[String]) -> String {
        let mut out = String::new();
        for p in &self.pieces {
            match p {
                Piece::Literal(l) => out.push_str(l),
                Piece::Arg { index, .. } => {
                    out.push_str(args.get(*index).map_or("", String::as_str));
                }
            }
        }
        out
    }
}

/// One catalog entry, compiled.
struct Entry {
    lang: Lang,
    english: Format,
    translated: Format,
    /// What a message needs to hold for `translated` to read it, tested before reading.
    gate: Gate,
}

/// A cheap test a message passes whenever a format that starts with an argument can read it
/// (every literal of the format appears in a message it reads): most messages to translate
/// are English ones no translation reads, and reading tries every place each literal after
/// an argument is found. Formats starting with a literal need none (reading fails at once).
struct Gate {
    /// A literal of the format holds non-ASCII bytes: no ASCII message can be read.
    non_ascii: bool,
    /// The format's longest literal, when it starts with an argument.
    longest: Option<memchr::memmem::Finder<'static>>,
}

impl Gate {
    fn of(format: &Format) -> Gate {
        let literals = || {
            format.pieces.iter().filter_map(|p| match p {
                Piece::Literal(l) => Some(l.as_str()),
                Piece::Arg { .. } => None,
            })
        };
        let starts_with_arg = matches!(format.pieces.first(), Some(Piece::Arg { .. }));
        Gate {
            non_ascii: literals().any(|l| !l.is_ascii()),
            longest: literals()
                .max_by_key(|l| l.len())
                .filter(|_| starts_with_arg)
                .map(|l| memchr::memmem::Finder::new(l.as_bytes()).into_owned()),
        }
    }

    /// False when the format cannot read `message` (`ascii`: the message is all ASCII).
    fn may_read(&self, message: &str, ascii: bool) -> bool {
        if self.non_ascii && ascii {
            return false;
        }
        self.longest
            .as_ref()
            .is_none_or(|f| f.find(message.as_bytes()).is_some())
    }
}

/// Bytes of a message's start used as the lookup key.
const KEY: usize = 4;

/// The compiled catalog and its indexes.
struct Catalog {
    entries: Vec<Entry>,
    /// First [`KEY`] bytes of a translation → entries.
    by_start: FastMap<&'static [u8], Vec<usize>>,
    /// Translations that start with `%s (PID %d)`: first [`KEY`] bytes of what follows → entries.
    by_pid_tail: FastMap<&'static [u8], Vec<usize>>,
    /// Translations that start with `%s` and end with text: last [`KEY`] bytes → entries
    /// (`%s startet`, `%s を起動しています`).
    by_end: FastMap<&'static [u8], Vec<usize>>,
    /// Translations that start with numbers (`%X/%X 处的记录长度…`): the first [`KEY`] bytes
    /// after the leading run of [`NUMBER_CHARS`] → entries.
    by_after_number: FastMap<&'static [u8], Vec<usize>>,
    /// Translations no index above fits (`"%s"プロセスをforkできませんでした: %m`: too
    /// short a start, an argument at the end): tried one by one, last.
    loose: Vec<usize>,
    /// Whole-text translations (process names, fixed messages, strerror), by their first
    /// [`KEY`] bytes → (translation, language, English).
    exact: FastMap<&'static [u8], Vec<(&'static str, Lang, &'static str)>>,
}

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        let mut c = Catalog {
            entries: Vec::new(),
            by_start: FastMap::default(),
            by_pid_tail: FastMap::default(),
            by_end: FastMap::default(),
            by_after_number: FastMap::default(),
            loose: Vec::new(),
            exact: FastMap::default(),
        };
        let fixed = catalog::STRERROR.iter().chain(
            catalog::MESSAGES
                .iter()
                .filter(|(_, _, translated)| !translated.contains('%')),
        );
        for &(lang, english, translated) in fixed {
            let bucket = c.exact.entry(start_key(translated)).or_default();
            if !bucket.iter().any(|&(t, l, _)| t == translated && l == lang) {
                bucket.push((translated, lang, english));
            }
        }
        for &(lang, english, translated) in catalog::MESSAGES {
            if !translated.contains('%') {
                continue;
            }
            let idx = c.entries.len();
            let translated_format = Format::compile(translated);
            let entry = Entry {
                lang,
                english: Format::compile(english),
                gate: Gate::of(&translated_format),
                translated: translated_format,
            };
            if let Some(tail) = translated.strip_prefix("%s (PID %d)") {
                let tail = tail.trim_start_matches(' ');
                if let Some(key) = key_of(tail) {
                    c.by_pid_tail.entry(key).or_default().push(idx);
                }
            } else if let Some(key) = key_of(translated) {
                c.by_start.entry(key).or_default().push(idx);
            } else if let Some(key) = key_after_number(translated) {
                c.by_after_number.entry(key).or_default().push(idx);
            } else if let Some(key) = key_of_end(translated) {
                c.by_end.entry(key).or_default().push(idx);
            } else {
                c.loose.push(idx);
            }
            c.entries.push(entry);
        }
        // A format with more literal text is the more specific one: try it first, so that
        // `…: read only %zu of %zu bytes` wins over `…: %m` for the same start.
        let entries = &c.entries;
        for bucket in [
            &mut c.by_start,
            &mut c.by_pid_tail,
            &mut c.by_end,
            &mut c.by_after_number,
        ] {
            for candidates in bucket.values_mut() {
                candidates.sort_by_key(|&i| std::cmp::Reverse(entries[i].translated.literal_len()));
            }
        }
        c
    })
}

/// The first [`KEY`] bytes of a text (all of it when shorter).
fn start_key(text: &str) -> &[u8] {
    &text.as_bytes()[..text.len().min(KEY)]
}

/// The whole-text translation `text` is, in one of `langs`.
fn exact(c: &Catalog, text: &str, langs: Languages) -> Option<(Lang, &'static str)> {
    c.exact
        .get(start_key(text))?
        .iter()
        .find(|&&(t, lang, _)| t == text && langs.allows(lang))
        .map(|&(_, lang, english)| (lang, english))
}

/// The first [`KEY`] bytes of a `'static` text, when it has that many before a `%`.
fn key_of(text: &'static str) -> Option<&'static [u8]> {
    let literal = text.split('%').next().unwrap_or("");
    (literal.len() >= KEY).then(|| &text.as_bytes()[..KEY])
}

/// What numeric conversions print (`0/5369B30`, `12.5`, `-3`).
const NUMBER_CHARS: &[u8] = b"0123456789abcdefABCDEF/.:-";

/// A translation starting with numeric conversions: the first [`KEY`] bytes after them and
/// after any [`NUMBER_CHARS`] that follow (the message is read the same way).
fn key_after_number(text: &'static str) -> Option<&'static [u8]> {
    let mut rest = text;
    loop {
        let skipped =
            rest.trim_start_matches(|c: char| c.is_ascii() && NUMBER_CHARS.contains(&(c as u8)));
        let conv = skipped.strip_prefix('%').and_then(|r| {
            let spec_len = r.find(|c: char| c.is_ascii_alphabetic() && !matches!(c, 'l' | 'z'))?;
            let conv = r.as_bytes()[spec_len];
            matches!(conv, b'd' | b'u' | b'x' | b'X' | b'f' | b'i').then(|| &r[spec_len + 1..])
        });
        match conv {
            Some(after) => rest = after,
            None if rest.len() == text.len() => return None,
            None => return key_of(skipped),
        }
    }
}

/// A translation starting with `%s` and ending with at least [`KEY`] bytes of text.
fn key_of_end(text: &'static str) -> Option<&'static [u8]> {
    if !text.starts_with("%s") {
        return None;
    }
    let tail = text.rsplit('%').next()?;
    let literal = tail.get(1..)?;
    (literal.len() >= KEY).then(|| &text.as_bytes()[text.len() - KEY..])
}

/// Which languages to try: a bit per [`Lang`]; all when empty.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Languages(u32);

impl Languages {
    /// Adds `lang`.
    pub(crate) fn add(&mut self, lang: Lang) {
        self.0 |= 1 << lang;
    }

    fn allows(self, lang: Lang) -> bool {
        self.0 == 0 || self.0 & (1 << lang) != 0
    }
}

/// `message` in English, when it is a translation of a catalog message of one of `langs`.
pub(crate) fn to_english(message: &str, langs: Languages) -> Option<(Lang, String)> {
    let c = catalog();
    if let Some((lang, english)) = exact(c, message, langs) {
        return Some((lang, english.to_owned()));
    }
    let bytes = message.as_bytes();
    let ascii = bytes.is_ascii();
    if bytes.len() >= KEY
        && let Some(candidates) = c.by_start.get(&bytes[..KEY])
        && let Some(found) = first_fit(c, candidates, message, ascii, langs)
    {
        return Some(found);
    }
    // `0/5369B30のレコード長が不正です:…`
    if bytes.first().is_some_and(u8::is_ascii_digit) {
        let start = bytes
            .iter()
            .position(|b| !NUMBER_CHARS.contains(b))
            .unwrap_or(bytes.len());
        if let Some(key) = bytes.get(start..start + KEY)
            && let Some(candidates) = c.by_after_number.get(key)
            && let Some(found) = first_fit(c, candidates, message, ascii, langs)
        {
            return Some(found);
        }
    }
    // `PostgreSQL 15.18 … 64-bit startet`
    if bytes.len() >= KEY
        && let Some(candidates) = c.by_end.get(&bytes[bytes.len() - KEY..])
        && let Some(found) = first_fit(c, candidates, message, ascii, langs)
    {
        return Some(found);
    }
    // `processus serveur (PID 5) a été arrêté par le signal 9 : Processus arrêté`
    if let Some((_, tail)) = super::classify::split_pid_marker(message)
        && let Some(candidates) = tail
            .as_bytes()
            .get(..KEY)
            .and_then(|k| c.by_pid_tail.get(k))
        && let Some(found) = first_fit(c, candidates, message, ascii, langs)
    {
        return Some(found);
    }
    first_fit(c, &c.loose, message, ascii, langs)
}

fn first_fit(
    c: &Catalog,
    candidates: &[usize],
    message: &str,
    ascii: bool,
    langs: Languages,
) -> Option<(Lang, String)> {
    candidates.iter().find_map(|&i| {
        let e = &c.entries[i];
        if !langs.allows(e.lang) || !e.gate.may_read(message, ascii) {
            return None;
        }
        let args = e.translated.read(message)?;
        Some((e.lang, render_english(c, e, &args)))
    })
}

/// The English msgid of `e` with `args`, each argument translated when it is itself a
/// catalog text (a process name, a strerror, the `pg_rusage` summary).
fn render_english(c: &Catalog, e: &Entry, args: &[&str]) -> String {
    let args: Vec<String> = args
        .iter()
        .map(|a| {
            let mut only = Languages::default();
            only.add(e.lang);
            if let Some((_, english)) = exact(c, a, only) {
                return english.to_owned();
            }
            let bytes = a.as_bytes();
            if bytes.len() >= KEY
                && let Some(candidates) = c.by_start.get(&bytes[..KEY])
            {
                for &i in candidates {
                    let inner = &c.entries[i];
                    if inner.lang != e.lang {
                        continue;
                    }
                    if let Some(inner_args) = inner.translated.read(a) {
                        let owned: Vec<String> =
                            inner_args.iter().map(|s| (*s).to_owned()).collect();
                        return inner.english.render(&owned);
                    }
                }
            }
            (*a).to_owned()
        })
        .collect();
    e.english.render(&args)
}

/// `[inconnu]`, `[н/д]`, … → the language, when `value` is a translation of `[unknown]`.
pub(crate) fn unknown_language(value: &str) -> Option<Lang> {
    catalog::UNKNOWN
        .iter()
        .find(|(_, t)| *t == value)
        .map(|&(lang, _)| lang)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fr() -> Languages {
        let mut l = Languages::default();
        l.add(catalog::LANGUAGES.iter().position(|&n| n == "fr").unwrap() as Lang);
        l
    }

    #[test]
    fn the_gate_lets_through_every_message_a_translation_reads() {
        let c = catalog();
        let mut read = 0;
        for e in &c.entries {
            let args: Vec<String> = (0..16)
                .map(|i| {
                    let shape = e.translated.pieces.iter().find_map(|p| match p {
                        Piece::Arg { index, shape } if *index == i => Some(*shape),
                        _ => None,
                    });
                    match shape {
                        Some(ArgShape::Integer) => "42".to_owned(),
                        Some(ArgShape::Hex) => "1F".to_owned(),
                        Some(ArgShape::Float) => "0.5".to_owned(),
                        _ => "x y".to_owned(),
                    }
                })
                .collect();
            let message = e.translated.render(&args);
            if e.translated.read(&message).is_some() {
                read += 1;
                assert!(e.gate.may_read(&message, message.is_ascii()), "{message:?}");
            }
        }
        assert!(read > c.entries.len() / 2, "{read} of {}", c.entries.len());
    }

    #[test]
    fn formats_read_and_render() {
        let f = Format::compile("%s (PID %d) a été arrêté par le signal %d : %s");
        assert_eq!(
            f.read("processus serveur (PID 25124) a été arrêté par le signal 9 : Processus arrêté"),
            Some(vec!["processus serveur", "25124", "9", "Processus arrêté"])
        );
        let f = Format::compile("メモリコンテクスト\"%2$s\"でサイズ%1$zuの要求が失敗しました。");
        assert_eq!(
            f.read("メモリコンテクスト\"ExprContext\"でサイズ600000004の要求が失敗しました。"),
            Some(vec!["600000004", "ExprContext"])
        );
        let f = Format::compile("wrote %d buffers (%.1f%%); x=%ld.%03d s");
        assert_eq!(
            f.read("wrote 33 buffers (0.8%); x=0.333 s"),
            Some(vec!["33", "0.8", "0", "333"])
        );
        assert_eq!(
            Format::compile("redo starts at %X/%X").render(&["0".into(), "1500780".into()]),
            "redo starts at 0/1500780"
        );
        assert_eq!(f.read("wrote x buffers"), None);
    }

    #[test]
    fn french_messages_become_english() {
        assert_eq!(
            to_english(
                "processus serveur (PID 25124) a été arrêté par le signal 9 : Processus arrêté",
                Languages::default()
            )
            .map(|(_, s)| s),
            Some("server process (PID 25124) was terminated by signal 9: Processus arrêté".into())
        );
        assert_eq!(
            to_english(
                "tous les processus serveur sont arrêtés ; réinitialisation",
                fr()
            )
            .map(|(_, s)| s),
            Some("all server processes terminated; reinitializing".into())
        );
        assert_eq!(
            to_english(
                "rejeu exécuté à 0/53A9FF0 utilisation système : CPU : utilisateur : 0.04 s, système : 0.04 s, temps passé : 0.12 s",
                fr()
            )
            .map(|(_, s)| s),
            Some(
                "redo done at 0/53A9FF0 system usage: CPU: user: 0.04 s, system: 0.04 s, elapsed: 0.12 s"
                    .into()
            )
        );
        assert_eq!(to_english("connection received: host=[local]", fr()), None);
        assert_eq!(
            to_english(
                "PostgreSQL 15.18 on x86_64-pc-linux-gnu, 64-bit startet",
                Languages::default()
            )
            .map(|(_, s)| s),
            Some("starting PostgreSQL 15.18 on x86_64-pc-linux-gnu, 64-bit".into())
        );
        assert_eq!(
            to_english(
                "0/5360C30 处的记录长度不合法：想要 24，但得到的是 0",
                Languages::default()
            )
            .map(|(_, s)| s),
            Some("invalid record length at 0/5360C30: wanted 24, got 0".into())
        );
    }
}
