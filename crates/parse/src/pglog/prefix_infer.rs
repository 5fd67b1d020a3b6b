//! Learning a `log_line_prefix` that nobody gave and no candidate fits, from the first lines.
//!
//! Takes the first lines of a stderr log (those with a severity word, at most
//! [`SAMPLE_LINES`]); yields prefix texts to try, most promising first ([`infer`]), and the one
//! that fits the most lines ([`best`]).
//!
//! The text before each line's severity word is that line's prefix ([`prefix_instance`]; the
//! word may follow a `]`, a `-` or the time zone with no space: `[4242]LOG:`, `UTC-…-LOG:`,
//! `UTCLOG:`). It is cut into tokens by the shapes PostgreSQL prints (`%m` and `%t` stamps,
//! `%n` epochs, `%c` session ids, `%v` virtual xids, SQLSTATEs, pids and other numbers,
//! `user@db`, client addresses, backend types, `key=value` pairs whose key names the field)
//! and literal words and punctuation. Lines whose token shapes agree are grouped; inside a
//! group a word that is the same on every line stays literal and a word that varies becomes a
//! free-text field. A group whose tokens continue another group's (fields that may print
//! nothing aside) is the same prefix with `%q` where background processes stop
//! (`%m [%p] %q%u@%d `). Every template is then tried on the lines: the one that fits the
//! most wins.
//!
//! What the values show decides between fields of the same shape, over all the lines: of two
//! stamps the line's time is the one with milliseconds, else the later one (the other is the
//! session start, `%s`); a number equal to the session id's pid is the pid; a number that is
//! negative or longer than ten digits on some line is a query id; one that is 0 on some line
//! is a transaction id (line numbers start at 1); one that is the same on every line is
//! literal text (`[%l-1]`); five digits where another line shows a SQLSTATE are one.
//!
//! ```text
//! 2026-11-21 18:40:01 UTC [4242]: [3-1] user=app,db=shop,app=psql,client=[local] LOG:  …
//! → %t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h
//! ```

use std::collections::{HashMap, HashSet};

use super::prefix::LogLinePrefix;
use super::prefix_tokens::{
    NUMBER, STAMP_MILLIS, STAMP_SECONDS, Token, Tokens, is_numeric, tokens,
};
use super::severity;

/// Lines whose prefixes are learned from (the first ones that have a severity word).
const SAMPLE_LINES: usize = 400;

/// Groups of equal token shapes turned into templates (the most common ones).
const TEMPLATES: usize = 8;

/// How far into a line its severity word is looked for.
const MAX_PREFIX_BYTES: usize = 1024;

/// Fields that may print nothing on some lines: a background process has no vxid, user,
/// database, client or command; a process outside a parallel group no leader.
fn may_be_empty(token: &Token) -> bool {
    match token {
        Token::Word(_) => true,
        Token::Field(c) => matches!(c, 'v' | 'P' | 'a' | 'u' | 'd' | 'h' | 'r' | 'i' | 'L' | '@'),
        Token::Punct(_) => false,
    }
}

/// The prefix text in front of `line`'s severity word, when the line has one: the first
/// colon that ends a severity word (`LOG`, `ERREUR`, `ASTUCE :`, …) whose word starts the
/// line, follows a character that is no letter or digit, follows a pid with no space
/// (`4242LOG:`), or follows a time zone with no space (`UTCLOG:`).
pub(crate) fn prefix_instance(line: &str) -> Option<&str> {
    let head = &line.as_bytes()[..line.len().min(MAX_PREFIX_BYTES)];
    memchr::memchr_iter(b':', head).find_map(|colon| {
        let before = line[..colon].strip_suffix(' ').unwrap_or(&line[..colon]);
        let run_start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric())
            .last()
            .map(|(i, _)| i)?;
        let run = &before[run_start..];
        if severity::split(&line[run_start..]).is_some() {
            return Some(&line[..run_start]);
        }
        // A word glued to what precedes it.
        run.char_indices().skip(1).find_map(|(k, _)| {
            let glued = &run[..k];
            let zone = (2..=5).contains(&glued.len())
                && glued.bytes().all(|b| b.is_ascii_alphabetic())
                && before[..run_start].ends_with(' ')
                && before[..run_start]
                    .trim_end_matches(' ')
                    .ends_with(|c: char| c.is_ascii_digit());
            let pid = glued.bytes().all(|b| b.is_ascii_digit());
            ((zone || pid) && severity::split(&line[run_start + k..]).is_some())
                .then(|| &line[..run_start + k])
        })
    })
}
/// Tokens with words and numbers reduced to placeholders (and `%r` to `%h`: `[local]` is
/// both): lines with the same shape.
fn shape_of(tokens: &[Token]) -> Vec<Token> {
    tokens
        .iter()
        .map(|t| match t {
            Token::Word(_) => Token::Word(String::new()),
            Token::Field(c) if is_numeric(*c) => Token::Field(NUMBER),
            Token::Field('r') => Token::Field('h'),
            other => other.clone(),
        })
        .collect()
}

/// How the tokens of a shorter shape line up with a longer one: where `short` ends inside
/// `long`, and the places of `long` that `short` skips, fields that may print nothing
/// (`[%p][][0]` against `[%p][3/12][911] …`; a bare number there is `%P`, the one number
/// PostgreSQL prints as nothing: `[%p] []` against `[%p] [4242]`).
fn align(short: &[Token], long: &[Token]) -> Option<(usize, Vec<usize>)> {
    let (mut i, mut j) = (0, 0);
    let mut skipped = Vec::new();
    while i < short.len() {
        let l = long.get(j)?;
        if *l == short[i] {
            i += 1;
            j += 1;
        } else if may_be_empty(l) || *l == Token::Field(NUMBER) {
            skipped.push(j);
            j += 1;
        } else {
            return None;
        }
    }
    Some((j, skipped))
}

/// What all the lines say about each line's tokens.
struct Evidence<'a> {
    /// The word is on nearly every line: a literal part of the prefix.
    common: &'a dyn Fn(&str) -> bool,
    /// Ordinals (among a prefix's numeric fields) where some line printed a SQLSTATE.
    sqlstate_ordinals: HashSet<usize>,
    /// Ordinals (among a prefix's numeric fields) where some line printed 0: not a line
    /// number (they start at 1).
    zero_ordinals: HashSet<usize>,
    /// Ordinals (among a prefix's numeric fields) where some line printed a negative number
    /// or one of more than ten digits: a query id (`%Q`), no pid, line or transaction id.
    query_id_ordinals: HashSet<usize>,
    /// Of two stamps, the ordinal of the line's time (the later one, more often).
    line_stamp: usize,
    /// Ordinals (among a prefix's numeric fields) where every line printed the same number
    /// but 0: literal text (the `1` of pgBadger's `[%l-1]`).
    constant_numbers: HashMap<usize, String>,
}

/// Prefix text from a group of same-shaped token lists (`%q` is inserted at `session_only`;
/// the numbers at `leaders` are `%P`, which other lines leave empty): words
/// that are the same on every line of the group and either name a key (`user=`) or are found
/// on nearly every line at all (`common`) stay literal, other words become free-text fields
/// (`%u`, `%d`, `%a`, … not otherwise used): a user name seen on every session line is still
/// a field, since background lines print none.
fn template(
    group: &[&Tokens<'_>],
    session_only: Option<usize>,
    leaders: &[usize],
    evidence: &Evidence,
) -> String {
    let first = &group[0].tokens;
    let used: Vec<char> = first
        .iter()
        .filter_map(|t| match t {
            Token::Field(c) => Some(*c),
            _ => None,
        })
        .collect();
    let mut free = ['u', 'd', 'a', 'h', 'b', 'L']
        .into_iter()
        .filter(|c| !(used.contains(c) || used.contains(&'@') && matches!(c, 'u' | 'd')));
    let mut out = String::new();
    let (mut numeric, mut stamps, mut lines_named) = (0, 0, false);
    for (i, token) in first.iter().enumerate() {
        if session_only == Some(i) {
            out.push_str("%q");
        }
        let pad = padding(group, i);
        out.push_str(&pad.before);
        let field_start = out.len();
        match token {
            Token::Field('@') => out.push_str("%u@%d"),
            Token::Field(NUMBER) if leaders.contains(&i) => {
                numeric += 1;
                out.push_str("%P");
            }
            Token::Field(c) if is_numeric(*c) => {
                if *c == NUMBER
                    && let Some(text) = evidence.constant_numbers.get(&numeric)
                {
                    numeric += 1;
                    out.push_str(text);
                    continue;
                }
                let letter = if evidence.sqlstate_ordinals.contains(&numeric) || *c == 'e' {
                    'e'
                } else if *c != NUMBER {
                    *c
                } else if evidence.query_id_ordinals.contains(&numeric) {
                    'Q'
                } else if evidence.zero_ordinals.contains(&numeric) || lines_named {
                    'x'
                } else {
                    lines_named = true;
                    'l'
                };
                numeric += 1;
                out.push('%');
                out.push(letter);
            }
            Token::Field(c @ (STAMP_MILLIS | STAMP_SECONDS)) => {
                let letter = if stamps != evidence.line_stamp {
                    's'
                } else if *c == STAMP_MILLIS {
                    'm'
                } else {
                    't'
                };
                stamps += 1;
                out.push('%');
                out.push(letter);
            }
            Token::Field('h')
                if group
                    .iter()
                    .any(|t| t.tokens.get(i) == Some(&Token::Field('r'))) =>
            {
                out.push_str("%r");
            }
            Token::Field(c) => {
                out.push('%');
                out.push(*c);
            }
            Token::Punct('%') => out.push_str("%%"),
            Token::Punct(c) => out.push(*c),
            Token::Word(w) => {
                let same_everywhere = group.iter().all(|t| t.tokens.get(i) == Some(token));
                let key = matches!(
                    (first.get(i + 1), first.get(i + 2)),
                    (Some(Token::Punct('=')), _)
                        | (Some(Token::Punct(' ')), Some(Token::Punct('=')))
                );
                let constant = same_everywhere && (key || (evidence.common)(w));
                let tag = !constant
                    && !used.contains(&'i')
                    && group
                        .iter()
                        .all(|t| t.values.get(i).is_some_and(|v| command_tag(v)));
                let letter = match (constant, tag) {
                    (true, _) => None,
                    (false, true) => Some('i'),
                    (false, false) => free.next(),
                };
                match letter {
                    Some(c) => {
                        out.push('%');
                        out.push(c);
                    }
                    None => out.push_str(&w.replace('%', "%%")),
                }
            }
        }
        // `%u` → `%-10u`: the width goes after the `%` of a field.
        if let Some(width) = &pad.width
            && out[field_start..].starts_with('%')
            && out.len() == field_start + 2
        {
            out.insert_str(field_start + 1, width);
        }
        out.push_str(&pad.after);
    }
    out
}

/// What `%i` prints: a command tag (`SELECT`, `CREATE`) or the session's state before one
/// (`idle`, `authentication`, `startup`).
fn command_tag(value: &str) -> bool {
    let v = value.trim();
    matches!(v, "idle" | "authentication" | "startup")
        || (v.len() >= 3 && v.bytes().all(|b| b.is_ascii_uppercase()))
}

/// How the values at one place of a group's lines are padded.
struct Padding {
    /// Printf padding to put in the field (`7`, `-10`), when the values show one.
    width: Option<String>,
    /// Spaces every line has before / after the value: literal text.
    before: String,
    after: String,
}

/// The padding of the values at place `i`: spaces the values carry (attached to them while
/// cutting) that every line has alike are literal text; spaces that fill values of different
/// lengths to one width are printf padding, right-aligned when they come first (`%7p`),
/// left-aligned when they come after (`%-10u`).
fn padding(group: &[&Tokens<'_>], i: usize) -> Padding {
    let mut none = Padding {
        width: None,
        before: String::new(),
        after: String::new(),
    };
    if !matches!(
        group[0].tokens.get(i),
        Some(Token::Field(_) | Token::Word(_))
    ) {
        return none;
    }
    let spans: Vec<(usize, usize, usize)> = group
        .iter()
        .filter_map(|t| t.values.get(i))
        .map(|v| {
            let lead = v.len() - v.trim_start_matches(' ').len();
            let trail = v.len() - v.trim_end_matches(' ').len();
            (lead, v.trim_matches(' ').chars().count(), trail)
        })
        .collect();
    let same_everywhere = |f: fn(&(usize, usize, usize)) -> usize| {
        spans.iter().map(f).collect::<HashSet<_>>().len() <= 1
    };
    let first = spans.first().copied().unwrap_or_default();
    let (leads, trails) = (spans.iter().any(|s| s.0 > 0), spans.iter().any(|s| s.2 > 0));
    if !leads && !trails {
        return none;
    }
    if same_everywhere(|s| s.0) && same_everywhere(|s| s.2) {
        none.before = " ".repeat(first.0);
        none.after = " ".repeat(first.2);
        return none;
    }
    let width = spans.iter().map(|s| s.0 + s.1 + s.2).max().unwrap_or(0);
    none.width = Some(if leads {
        width.to_string()
    } else {
        format!("-{width}")
    });
    none
}

/// Prefix texts learned from `lines`, most promising first (at most [`TEMPLATES`] groups,
/// plus their `%q` combinations).
pub(crate) fn infer<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<String> {
    let instances: Vec<Tokens<'a>> = lines
        .filter(|l| !l.starts_with('\t'))
        .filter_map(prefix_instance)
        .filter(|p| !p.is_empty())
        .take(SAMPLE_LINES)
        .map(tokens)
        .collect();
    let evidence_common = common_words(&instances);
    let common = |w: &str| evidence_common.contains(w);
    let evidence = Evidence {
        common: &common,
        sqlstate_ordinals: numeric_ordinals(&instances, |token, _| *token == Token::Field('e')),
        zero_ordinals: numeric_ordinals(&instances, |token, value| {
            *token == Token::Field(NUMBER) && value.trim().trim_start_matches('0').is_empty()
        }),
        query_id_ordinals: numeric_ordinals(&instances, |token, value| {
            *token == Token::Field(NUMBER)
                && (value.trim().starts_with('-') || value.trim().len() > 10)
        }),
        line_stamp: line_stamp(&instances),
        constant_numbers: constant_numbers(&instances),
    };
    let mut groups: HashMap<Vec<Token>, Vec<&Tokens<'_>>> = HashMap::new();
    for t in &instances {
        groups.entry(shape_of(&t.tokens)).or_default().push(t);
    }
    let mut groups: Vec<(Vec<Token>, Vec<&Tokens<'_>>)> = groups.into_iter().collect();
    // Biggest first; equal sizes in a fixed order so the result does not depend on hashing.
    groups.sort_by(|a, b| {
        b.1.len()
            .cmp(&a.1.len())
            .then_with(|| format!("{:?}", a.0).cmp(&format!("{:?}", b.0)))
    });
    groups.truncate(TEMPLATES);
    let mut out = Vec::new();
    for (_, members) in &groups {
        out.push(template(members, None, &[], &evidence));
    }
    // A background process's prefix is a session prefix cut short where `%q` stands, or the
    // same prefix with fields that printed nothing.
    for (short, _) in &groups {
        for (long, members) in &groups {
            if long.len() <= short.len() {
                continue;
            }
            let Some((at, skipped)) = align(short, long) else {
                continue;
            };
            let leaders: Vec<usize> = skipped
                .into_iter()
                .filter(|&k| long[k] == Token::Field(NUMBER))
                .collect();
            let cut = (at < long.len()).then_some(at);
            if cut.is_some() || !leaders.is_empty() {
                out.push(template(members, cut, &leaders, &evidence));
            }
        }
    }
    let mut seen = HashSet::new();
    out.retain(|t| seen.insert(t.clone()));
    out
}

/// Words found on nearly every line (nine in ten): literal parts of the prefix.
fn common_words<'a>(instances: &'a [Tokens<'_>]) -> HashSet<&'a str> {
    let mut lines_with: HashMap<&str, usize> = HashMap::new();
    for t in instances {
        let mut words: Vec<&str> = t
            .tokens
            .iter()
            .filter_map(|t| match t {
                Token::Word(w) => Some(w.as_str()),
                _ => None,
            })
            .collect();
        words.sort_unstable();
        words.dedup();
        for w in words {
            *lines_with.entry(w).or_default() += 1;
        }
    }
    lines_with
        .into_iter()
        .filter(|(_, n)| n * 10 >= instances.len() * 9)
        .map(|(w, _)| w)
        .collect()
}

/// The ordinals (among each line's numeric fields) where some line's token and value satisfy
/// `shows`.
fn numeric_ordinals(
    instances: &[Tokens<'_>],
    shows: impl Fn(&Token, &str) -> bool,
) -> HashSet<usize> {
    instances
        .iter()
        .flat_map(|t| {
            t.tokens
                .iter()
                .zip(&t.values)
                .filter(|(token, _)| matches!(token, Token::Field(c) if is_numeric(*c)))
                .enumerate()
                .filter(|(_, (token, value))| shows(token, value))
                .map(|(n, _)| n)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The ordinals (among each line's numeric fields) where every line (two at least) shows the
/// same bare number, not 0.
fn constant_numbers(instances: &[Tokens<'_>]) -> HashMap<usize, String> {
    let mut seen: HashMap<usize, Option<&str>> = HashMap::new();
    for t in instances {
        let numeric = t
            .tokens
            .iter()
            .zip(&t.values)
            .filter(|(token, _)| matches!(token, Token::Field(c) if is_numeric(*c)));
        for (n, (token, value)) in numeric.enumerate() {
            let value = (*token == Token::Field(NUMBER)).then_some(value.trim());
            seen.entry(n)
                .and_modify(|v| {
                    if *v != value {
                        *v = None;
                    }
                })
                .or_insert(value);
        }
    }
    if instances.len() < 2 {
        return HashMap::new();
    }
    seen.into_iter()
        .filter_map(|(n, v)| {
            let v = v?;
            (!v.trim_start_matches('0').is_empty()).then(|| (n, v.to_owned()))
        })
        .collect()
}

/// Which of a prefix's stamps is the line's time: the only one with milliseconds (`%s`
/// prints none), else the one later than the other on more lines (the session began before
/// the line); the first when the lines cannot tell.
fn line_stamp(instances: &[Tokens<'_>]) -> usize {
    let (mut first_later, mut second_later, mut millis) = (0usize, 0usize, [0usize; 2]);
    for t in instances {
        let stamps: Vec<(&Token, &str)> = t
            .tokens
            .iter()
            .zip(t.values.iter().copied())
            .filter(|(token, _)| matches!(token, Token::Field(STAMP_MILLIS | STAMP_SECONDS)))
            .collect();
        if let [(a, va), (b, vb), ..] = stamps[..] {
            millis[0] += usize::from(*a == Token::Field(STAMP_MILLIS));
            millis[1] += usize::from(*b == Token::Field(STAMP_MILLIS));
            // Same format up to the seconds: the text compares as the time does.
            match va.get(..19).cmp(&vb.get(..19)) {
                std::cmp::Ordering::Greater => first_later += 1,
                std::cmp::Ordering::Less => second_later += 1,
                std::cmp::Ordering::Equal => {}
            }
        }
    }
    match millis {
        [a, 0] if a > 0 => 0,
        [0, b] if b > 0 => 1,
        _ => usize::from(second_later > first_later),
    }
}

/// The learned prefix that fits the most of `lines`, with how many it fits; `None` when none
/// fits any line.
pub(crate) fn best(lines: &[&str]) -> Option<(LogLinePrefix, usize)> {
    let tail_ok = |rest: &str| severity::split(rest).is_some();
    let mut best: Option<(LogLinePrefix, usize)> = None;
    for text in infer(lines.iter().copied()) {
        let Ok(prefix) = LogLinePrefix::compile(&text) else {
            continue;
        };
        let fits = lines
            .iter()
            .filter(|l| prefix.match_line(l, &tail_ok).is_some())
            .count();
        if fits > 0 && best.as_ref().is_none_or(|(_, b)| fits > *b) {
            best = Some((prefix, fits));
        }
    }
    best
}

#[cfg(test)]
#[path = "prefix_infer_tests.rs"]
mod tests;
