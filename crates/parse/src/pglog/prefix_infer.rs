//! Learning a `log_line_prefix` that nobody gave and no candidate fits, from the first lines.
//!
//! The text before each line's severity word is that line's prefix. It is cut into tokens by
//! the shapes PostgreSQL prints (`%m` and `%t` stamps, `%n` epochs, `%c` session ids, `%v`
//! virtual xids, pids and line numbers, `user@db`, client addresses, `key=value` pairs whose
//! key names the field) and literal words and punctuation. Lines whose token shapes agree are
//! grouped; inside a group a word that is the same on every line stays literal and a word that
//! varies becomes a free-text field. A group whose tokens continue another group's is the same
//! prefix with `%q` where background processes stop (`%m [%p] %q%u@%d `). Every template is
//! then tried on the lines: the one that fits the most wins.
//!
//! ```text
//! 2026-11-21 18:40:01 UTC [4242]: [3-1] user=app,db=shop,app=psql,client=[local] LOG:  …
//! → %t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h
//! ```

use std::collections::HashMap;

use super::prefix::LogLinePrefix;
use super::{severity, time};

/// Lines whose prefixes are learned from (the first ones that have a severity word).
const SAMPLE_LINES: usize = 400;

/// Groups of equal token shapes turned into templates (the most common ones).
const TEMPLATES: usize = 8;

/// One piece of a line's prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Token {
    /// A field whose shape or key says which escape it is (`m`, `p`, `u`, …).
    Field(char),
    /// A run of letters, digits, `_`, `-`, `.`: literal if it never varies, else free text.
    Word(String),
    /// Any other character, literal.
    Punct(char),
}

/// The prefix text in front of `line`'s severity word, when the line has one.
pub(crate) fn prefix_instance(line: &str) -> Option<&str> {
    memchr::memmem::find_iter(line.as_bytes(), b":").find_map(|colon| {
        let word_start = line[..colon]
            .rfind([' ', ']', ':', '>', ')', '|', '\t'])
            .map_or(0, |i| i + 1);
        severity::split(&line[word_start..]).map(|_| &line[..word_start])
    })
}

/// Field letters for the names keys are given in prefixes (`user=%u`, `pid="%p"`).
fn escape_for_key(key: &str) -> Option<char> {
    Some(match key.to_ascii_lowercase().as_str() {
        "user" | "usr" | "u" | "user_name" | "username" | "role" => 'u',
        "db" | "database" | "dbname" | "d" | "database_name" => 'd',
        "app" | "application" | "application_name" | "appname" | "a" => 'a',
        "client" | "host" | "remote" | "connection_source" | "client_addr" | "h" | "r" => 'h',
        "pid" | "p" | "process_id" => 'p',
        "session" | "session_id" | "sess" | "c" => 'c',
        "line" | "log_line" | "l" | "session_line_num" => 'l',
        "xid" | "tid" | "txid" | "x" | "transaction_id" => 'x',
        "vxid" | "vtid" | "v" | "virtual_transaction_id" => 'v',
        "sql_error_code" | "sqlstate" | "state" | "e" | "sql_state_code" => 'e',
        "time_ms" | "time" | "ts" | "timestamp" | "log_time" => 'm',
        "proc_start_time" | "session_start" | "session_start_time" | "s" => 's',
        "backend_type" | "type" | "b" => 'b',
        "query_id" | "queryid" | "qid" | "q" => 'Q',
        "cmd" | "command_tag" | "tag" | "command" | "i" => 'i',
        "leader" | "leader_pid" => 'P',
        _ => return None,
    })
}

/// Cuts a prefix instance into tokens.
fn tokens(text: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut at = 0;
    let mut stamps_seen = 0;
    while at < text.len() {
        let rest = &text[at..];
        // `key=value` / `key = value` / `key="value"`: the previous word names the field.
        if rest.starts_with('=')
            && let Some(letter) = key_before(&out).and_then(escape_for_key)
        {
            out.push(Token::Punct('='));
            at += 1;
            while text[at..].starts_with(' ') && out_is_spaced_equals(text, at) {
                out.push(Token::Punct(' '));
                at += 1;
            }
            let value = &text[at..];
            let (quoted, end) = match value.strip_prefix('"') {
                Some(inner) => (true, inner.find('"').map_or(inner.len(), |e| e + 2)),
                None => (
                    false,
                    value
                        .find([',', ' ', ']', ')', ';', '|'])
                        .unwrap_or(value.len()),
                ),
            };
            if quoted {
                out.push(Token::Punct('"'));
                out.push(Token::Field(letter));
                if value[..end].ends_with('"') && end >= 2 {
                    out.push(Token::Punct('"'));
                }
            } else {
                out.push(Token::Field(letter));
            }
            at += end;
            continue;
        }
        let (token, len) = shaped(rest, &mut stamps_seen).unwrap_or_else(|| word_or_punct(rest));
        out.push(token);
        at += len;
    }
    name_numbers(&mut out);
    out
}

/// The word right before a `=` (skipping one space, for `sql_error_code = 00000`).
fn key_before(out: &[Token]) -> Option<&str> {
    match out {
        [.., Token::Word(w)] | [.., Token::Word(w), Token::Punct(' ')] => Some(w),
        _ => None,
    }
}

/// `key = value` puts a space after the `=` as well; `key=` followed by a space is an empty
/// value.
fn out_is_spaced_equals(text: &str, at: usize) -> bool {
    at >= 2 && text.as_bytes()[at - 2] == b' '
}

/// A token whose shape says which field it is, with its length.
fn shaped(rest: &str, stamps_seen: &mut u32) -> Option<(Token, usize)> {
    if let Some(len) = time::stamp_len(rest, true) {
        *stamps_seen += 1;
        return Some((Token::Field(if *stamps_seen == 1 { 'm' } else { 's' }), len));
    }
    if let Some(len) = time::stamp_len(rest, false) {
        *stamps_seen += 1;
        return Some((Token::Field(if *stamps_seen == 1 { 't' } else { 's' }), len));
    }
    let b = rest.as_bytes();
    let run = |from: usize, ok: fn(u8) -> bool| b[from..].iter().take_while(|&&c| ok(c)).count();
    let end_ok = |at: usize| {
        b.get(at)
            .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_' && *c != b'@')
    };
    // `1763744924.123` (%n)
    let d = run(0, |c| c.is_ascii_digit());
    if d == 10 && b.get(10) == Some(&b'.') && run(11, |c| c.is_ascii_digit()) == 3 && end_ok(14) {
        return Some((Token::Field('n'), 14));
    }
    // `3/12` (%v)
    if d > 0 && b.get(d) == Some(&b'/') {
        let e = run(d + 1, |c| c.is_ascii_digit());
        if e > 0 && end_ok(d + 1 + e) {
            return Some((Token::Field('v'), d + 1 + e));
        }
    }
    // `691f9e2c.6a1c` (%c): hex, a dot, hex.
    let h = run(0, |c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase());
    if (6..=8).contains(&h) && b.get(h) == Some(&b'.') {
        let e = run(h + 1, |c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase());
        if e > 0 && end_ok(h + 1 + e) {
            return Some((Token::Field('c'), h + 1 + e));
        }
    }
    // `127.0.0.1(54321)` (%r) or `127.0.0.1` (%h), `[local]`.
    if let Some(len) = ipv4_len(b) {
        if b.get(len) == Some(&b'(') {
            let p = run(len + 1, |c| c.is_ascii_digit());
            if p > 0 && b.get(len + 1 + p) == Some(&b')') {
                return Some((Token::Field('r'), len + 2 + p));
            }
        }
        return Some((Token::Field('h'), len));
    }
    if rest.starts_with("[local]") && end_ok(7) {
        return Some((Token::Field('h'), 7));
    }
    // `user@db`, `[unknown]@[unknown]`, `@` (empty user and database).
    let word = user_at_db_len(rest);
    let span = rest[..word].replace("[unknown]", "");
    if span.contains('@') && !span.contains(['=', '"', '(', '[', ']']) {
        return Some((Token::Field('@'), word));
    }
    // `00000`, `57P01`, `XX000` (%e): five of [0-9A-Z] with a letter or a leading zero.
    if b.len() >= 5
        && b[..5]
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        && (b[0] == b'0' || b[..5].iter().any(u8::is_ascii_uppercase))
        && end_ok(5)
    {
        return Some((Token::Field('e'), 5));
    }
    // Bare numbers: which is the pid is settled once the whole prefix is cut
    // ([`name_numbers`]).
    if d > 0 && end_ok(d) {
        return Some((Token::Field(NUMBER), d));
    }
    None
}

/// A bare number before it is named.
const NUMBER: char = '#';

/// Fields that print digits (a SQLSTATE may be all digits: `22012`).
fn is_numeric(letter: char) -> bool {
    matches!(letter, NUMBER | 'p' | 'l' | 'x' | 'e')
}

/// Names the bare numbers of one prefix: the pid is the first one alone in brackets
/// (`[4242]`, `(4242)`), else the first one; the others are the session line number, then the
/// transaction id. A pid already named by its key is not named twice.
fn name_numbers(tokens: &mut [Token]) {
    let bracketed = |i: usize| {
        i > 0
            && matches!(tokens[i - 1], Token::Punct('[' | '('))
            && matches!(tokens.get(i + 1), Some(Token::Punct(']' | ')')))
    };
    let numbers: Vec<usize> = (0..tokens.len())
        .filter(|&i| tokens[i] == Token::Field(NUMBER))
        .collect();
    let has_pid = tokens.contains(&Token::Field('p'));
    let pid = (!has_pid)
        .then(|| {
            numbers
                .iter()
                .copied()
                .find(|&i| bracketed(i))
                .or(numbers.first().copied())
        })
        .flatten();
    let mut others = ['l', 'x'].into_iter();
    for i in numbers {
        tokens[i] = Token::Field(if Some(i) == pid {
            'p'
        } else {
            others.next().unwrap_or('x')
        });
    }
}

/// Length of the run that could be `user@db`: up to a space, `,`, `;`, `|` or a `]` that does
/// not close `[unknown]`.
fn user_at_db_len(rest: &str) -> usize {
    let mut at = 0;
    while at < rest.len() {
        if rest[at..].starts_with("[unknown]") {
            at += "[unknown]".len();
            continue;
        }
        if matches!(rest.as_bytes()[at], b' ' | b',' | b';' | b'|' | b']') {
            break;
        }
        at += rest[at..].chars().next().map_or(1, char::len_utf8);
    }
    at
}

/// Length of a dotted IPv4 address at the start of `b`.
fn ipv4_len(b: &[u8]) -> Option<usize> {
    let mut at = 0;
    for part in 0..4 {
        let n = b[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        if !(1..=3).contains(&n) {
            return None;
        }
        at += n;
        if part < 3 {
            if b.get(at) != Some(&b'.') {
                return None;
            }
            at += 1;
        }
    }
    Some(at)
}

/// A word (letters, digits, `_`, `-`, `.`) or a single other character.
fn word_or_punct(rest: &str) -> (Token, usize) {
    let len: usize = rest
        .char_indices()
        .take_while(|&(_, c)| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
        .map(|(_, c)| c.len_utf8())
        .sum();
    if len > 0 {
        return (Token::Word(rest[..len].to_owned()), len);
    }
    let c = rest.chars().next().unwrap_or(' ');
    (Token::Punct(c), c.len_utf8())
}

/// Tokens with words and numbers reduced to placeholders: lines with the same shape.
fn shape_of(tokens: &[Token]) -> Vec<Token> {
    tokens
        .iter()
        .map(|t| match t {
            Token::Word(_) => Token::Word(String::new()),
            Token::Field(c) if is_numeric(*c) => Token::Field(NUMBER),
            other => other.clone(),
        })
        .collect()
}

/// Prefix text from a group of same-shaped token lists: words that are the same on every line
/// of the group and found on nearly every line at all (`common`) stay literal, other words
/// become free-text fields (`%u`, `%d`, `%a`, … not otherwise used): a user name seen on every
/// session line is still a field, since background lines print none. `%q` is inserted at
/// `session_only`.
fn template(group: &[&Vec<Token>], session_only: Option<usize>, evidence: &Evidence) -> String {
    let first = group[0];
    let used: Vec<char> = first
        .iter()
        .filter_map(|t| match t {
            Token::Field(c) => Some(*c),
            _ => None,
        })
        .collect();
    let mut free = ['u', 'd', 'a', 'h', 'b', 'i', 'L']
        .into_iter()
        .filter(|c| !(used.contains(c) || used.contains(&'@') && matches!(c, 'u' | 'd')));
    let mut out = String::new();
    let mut numeric = 0;
    for (i, token) in first.iter().enumerate() {
        if session_only == Some(i) {
            out.push_str("%q");
        }
        match token {
            Token::Field('@') => out.push_str("%u@%d"),
            Token::Field(c) if is_numeric(*c) => {
                // A SQLSTATE with a letter or a leading zero on any line names the position.
                let sqlstate = evidence.sqlstate_ordinals.contains(&numeric);
                numeric += 1;
                out.push('%');
                out.push(if sqlstate { 'e' } else { *c });
            }
            Token::Field(c) => {
                out.push('%');
                out.push(*c);
            }
            Token::Punct('%') => out.push_str("%%"),
            Token::Punct(c) => out.push(*c),
            Token::Word(w) => {
                let constant =
                    (evidence.common)(w) && group.iter().all(|t| t.get(i) == Some(token));
                match (!constant).then(|| free.next()).flatten() {
                    Some(c) => {
                        out.push('%');
                        out.push(c);
                    }
                    None => out.push_str(&w.replace('%', "%%")),
                }
            }
        }
    }
    out
}

/// What all the lines say about each line's tokens.
struct Evidence<'a> {
    /// The word is on nearly every line: a literal part of the prefix.
    common: &'a dyn Fn(&str) -> bool,
    /// Ordinals (among a prefix's numeric fields) where some line printed a SQLSTATE.
    sqlstate_ordinals: std::collections::HashSet<usize>,
}

/// Prefix texts learned from `lines`, most promising first (at most [`TEMPLATES`] groups,
/// plus their `%q` combinations).
pub(crate) fn infer<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<String> {
    let instances: Vec<Vec<Token>> = lines
        .filter(|l| !l.starts_with('\t'))
        .filter_map(prefix_instance)
        .filter(|p| !p.is_empty())
        .take(SAMPLE_LINES)
        .map(tokens)
        .collect();
    // Lines each word is found on: a literal part of the prefix is on nearly all of them.
    let mut lines_with: HashMap<&str, usize> = HashMap::new();
    for t in &instances {
        let mut words: Vec<&str> = t
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
    let common = |w: &str| lines_with.get(w).copied().unwrap_or(0) * 10 >= instances.len() * 9;
    // The n-th numeric field of a prefix is a SQLSTATE when any line shows one there.
    let sqlstate_ordinals = instances
        .iter()
        .flat_map(|t| {
            t.iter()
                .filter(|t| matches!(t, Token::Field(c) if is_numeric(*c)))
                .enumerate()
                .filter(|(_, t)| **t == Token::Field('e'))
                .map(|(n, _)| n)
        })
        .collect();
    let evidence = Evidence {
        common: &common,
        sqlstate_ordinals,
    };
    let mut groups: HashMap<Vec<Token>, Vec<&Vec<Token>>> = HashMap::new();
    for t in &instances {
        groups.entry(shape_of(t)).or_default().push(t);
    }
    let mut groups: Vec<(Vec<Token>, Vec<&Vec<Token>>)> = groups.into_iter().collect();
    // Biggest first; equal sizes in a fixed order so the result does not depend on hashing.
    groups.sort_by(|a, b| {
        b.1.len()
            .cmp(&a.1.len())
            .then_with(|| format!("{:?}", a.0).cmp(&format!("{:?}", b.0)))
    });
    groups.truncate(TEMPLATES);
    let mut out = Vec::new();
    for (_, members) in &groups {
        out.push(template(members, None, &evidence));
    }
    // A background process's prefix is a session prefix cut short where `%q` stands.
    for (short, _) in &groups {
        for (long, members) in &groups {
            if long.len() > short.len() && long.starts_with(short) {
                out.push(template(members, Some(short.len()), &evidence));
            }
        }
    }
    out.dedup();
    out
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
mod tests {
    use super::*;

    fn learned(lines: &[&str]) -> String {
        best(lines)
            .map(|(p, _)| p.as_str().to_owned())
            .unwrap_or_default()
    }

    #[test]
    fn the_instance_is_what_precedes_the_severity_word() {
        assert_eq!(
            prefix_instance("2026-11-21 18:40:01 UTC [42]: LOG:  checkpoint starting: time"),
            Some("2026-11-21 18:40:01 UTC [42]: ")
        );
        assert_eq!(prefix_instance("LOG:  x"), Some(""));
        assert_eq!(prefix_instance("no severity here: at all"), None);
    }

    #[test]
    fn key_value_prefixes_are_learned_with_their_keys() {
        let lines = [
            "2026-11-21 18:40:01 UTC [4242]: [3-1] user=app,db=shop,app=psql,client=[local] LOG:  statement: select 1",
            "2026-11-21 18:40:02 UTC [4243]: [1-1] user=bob,db=crm,app=,client=10.0.0.7 FATAL:  password authentication failed for user \"bob\"",
            "2026-11-21 18:40:03 UTC [4100]: [2-1] user=,db=,app=,client= LOG:  checkpoint starting: time",
        ];
        assert_eq!(
            learned(&lines),
            "%t [%p]: [%l-1] user=%u,db=%d,app=%a,client=%h "
        );
    }

    #[test]
    fn quoted_values_and_spaced_equals_are_learned() {
        // Heroku's prefix: sql_error_code = %e time_ms = "%m" pid="%p" …
        let lines = [
            "sql_error_code = 00000 time_ms = \"2026-11-21 18:40:01.123 UTC\" pid=\"4242\" LOG:  checkpoint starting: time",
            "sql_error_code = 57P01 time_ms = \"2026-11-21 18:40:02.456 UTC\" pid=\"4243\" FATAL:  terminating connection due to administrator command",
        ];
        assert_eq!(
            learned(&lines),
            "sql_error_code = %e time_ms = \"%m\" pid=\"%p\" "
        );
    }

    #[test]
    fn background_lines_teach_where_q_stands() {
        let lines = [
            "2026-11-21 18:40:01.123 UTC [4242] app@shop LOG:  statement: select 1",
            "2026-11-21 18:40:01.200 UTC [4100] LOG:  checkpoint starting: time",
            "2026-11-21 18:40:02.123 UTC [4243] bob@crm ERROR:  relation \"x\" does not exist",
            "2026-11-21 18:40:03.123 UTC [4101] LOG:  checkpoint complete",
        ];
        let (prefix, fits) = best(&lines).unwrap();
        assert_eq!(prefix.as_str(), "%m [%p] %q%u@%d ");
        assert_eq!(fits, 4);
    }

    #[test]
    fn unkeyed_words_that_vary_become_fields_and_constant_ones_stay() {
        let lines = [
            "2026-11-21 18:40:01 UTC db01 app shop [4242] LOG:  statement: select 1",
            "2026-11-21 18:40:02 UTC db01 bob crm [4243] ERROR:  relation \"x\" does not exist",
            "2026-11-21 18:40:03 UTC db01 eve hr [4244] LOG:  disconnection",
        ];
        assert_eq!(learned(&lines), "%t db01 %u %d [%p] ");
    }

    #[test]
    fn a_user_on_every_session_line_is_still_a_field() {
        let lines = [
            "2026-11-21 18:40:01.123 UTC|4242|691f9e2c.1092|1|00000|postgres|shop|psql| LOG:  statement: select 1",
            "2026-11-21 18:40:01.200 UTC|4100|691f9e2b.1004|3|00000|||| LOG:  checkpoint starting: time",
            "2026-11-21 18:40:02.123 UTC|4242|691f9e2c.1092|2|42P01|postgres|shop|psql| ERROR:  relation \"x\" does not exist",
            "2026-11-21 18:40:03.123 UTC|4100|691f9e2b.1004|4|00000|||| LOG:  checkpoint complete",
        ];
        let (prefix, fits) = best(&lines).unwrap();
        assert_eq!(prefix.as_str(), "%m|%p|%c|%l|%e|%u|%d|%a| ");
        // A SQLSTATE of digits only (22012) is still read as one when another line shows a
        // SQLSTATE at that place.
        let (prefix, _) = best(&[
            lines[0],
            lines[1],
            "2026-11-21 18:40:04.123 UTC|4242|691f9e2c.1092|3|22012|postgres|shop|psql| ERROR:  division by zero",
        ])
        .unwrap();
        assert_eq!(prefix.as_str(), "%m|%p|%c|%l|%e|%u|%d|%a| ");
        assert_eq!(fits, 4);
    }

    #[test]
    fn session_ids_vxids_and_epochs_are_recognised() {
        let lines = [
            "1763744924.123 691f9e2c.6a1c 3/12 LOG:  statement: select 1",
            "1763744925.456 691f9e2d.6a1d 4/7 ERROR:  canceling statement due to user request",
        ];
        assert_eq!(learned(&lines), "%n %c %v ");
    }

    #[test]
    fn nothing_is_learned_from_lines_without_severity() {
        assert!(best(&["hello world", "no: severity"]).is_none());
    }
}
