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
use super::{severity, time};

/// Lines whose prefixes are learned from (the first ones that have a severity word).
const SAMPLE_LINES: usize = 400;

/// Groups of equal token shapes turned into templates (the most common ones).
const TEMPLATES: usize = 8;

/// How far into a line its severity word is looked for.
const MAX_PREFIX_BYTES: usize = 1024;

/// One piece of a line's prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Token {
    /// A field whose shape or key says which escape it is (`p`, `u`, …), or one of the
    /// placeholders below, settled once every line was seen.
    Field(char),
    /// A run of letters, digits, `_`, `-`, `.`: literal if it never varies, else free text.
    Word(String),
    /// Any other character, literal.
    Punct(char),
}

/// A bare number before it is named.
const NUMBER: char = '#';
/// A time stamp with milliseconds (`%m`, or `%s` when another stamp is the line's).
const STAMP_MILLIS: char = 'M';
/// A time stamp in whole seconds (`%t` or `%s`).
const STAMP_SECONDS: char = 'T';

/// Fields that print digits (a SQLSTATE may be all digits: `22012`).
fn is_numeric(letter: char) -> bool {
    matches!(letter, NUMBER | 'l' | 'x' | 'e')
}

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
        "xid" | "tid" | "txid" | "x" | "transaction_id" | "trx_id" => 'x',
        "vxid" | "vtid" | "v" | "virtual_transaction_id" => 'v',
        "sql_error_code" | "sqlstate" | "state" | "e" | "sql_state_code" => 'e',
        "time_ms" | "time" | "ts" | "timestamp" | "log_time" => STAMP_MILLIS,
        "proc_start_time" | "session_start" | "session_start_time" | "s" => 's',
        "backend_type" | "type" | "b" => 'b',
        "query_id" | "queryid" | "qid" | "q" => 'Q',
        "cmd" | "command_tag" | "tag" | "command" | "i" => 'i',
        "leader" | "leader_pid" => 'P',
        _ => return None,
    })
}

/// What `%b` prints: the backend types of PostgreSQL 10–18 (`GetBackendTypeDesc`) and the
/// background workers' types that come with it, longest first where one starts another.
const BACKEND_TYPES: &[&str] = &[
    "autovacuum launcher",
    "autovacuum worker",
    "background worker",
    "background writer",
    "checkpointer",
    "client backend",
    "dead-end client backend",
    "io worker",
    "logical replication launcher",
    "logical replication apply worker",
    "logical replication parallel worker",
    "logical replication tablesync worker",
    "logical replication worker",
    "logger",
    "parallel worker",
    "postmaster",
    "slotsync worker",
    "standalone backend",
    "startup",
    "archiver",
    "walreceiver",
    "walsender",
    "walsummarizer",
    "walwriter",
    "WAL receiver",
    "WAL sender",
    "WAL writer",
    "WAL summarizer",
];

/// One line's prefix cut into tokens, with the text each token stands for.
struct Tokens<'a> {
    tokens: Vec<Token>,
    values: Vec<&'a str>,
}

impl<'a> Tokens<'a> {
    fn push(&mut self, token: Token, value: &'a str) {
        self.tokens.push(token);
        self.values.push(value);
    }
}

/// Cuts a prefix instance into tokens.
fn tokens(text: &str) -> Tokens<'_> {
    let mut out = Tokens {
        tokens: Vec::new(),
        values: Vec::new(),
    };
    let mut at = 0;
    // Spaces of padding in front of the next token (`[%7p]`: `[  4242]`).
    let mut lead = 0;
    while at < text.len() {
        let rest = &text[at..];
        // Runs of spaces: padding of the field before (`%-10u `) or after (`%7p`), one space
        // of literal text between.
        let spaces = rest.bytes().take_while(|&b| b == b' ').count();
        if spaces > 0 && lead == 0 {
            let after = &rest[spaces..];
            let digit_follows = after.as_bytes().first().is_some_and(u8::is_ascii_digit);
            let opens = matches!(out.tokens.last(), None | Some(Token::Punct('[' | '(')));
            let padded_before = matches!(out.tokens.last(), Some(Token::Field(_) | Token::Word(_)));
            if digit_follows && opens {
                lead = spaces;
                at += spaces;
                continue;
            }
            if spaces >= 2 && (digit_follows || padded_before) {
                if padded_before && !digit_follows {
                    // The value before, padded to its width: its spaces but the last.
                    let last = out.values.len() - 1;
                    let value = out.values[last];
                    let start = value.as_ptr() as usize - text.as_ptr() as usize;
                    out.values[last] = &text[start..at + spaces - 1];
                } else {
                    lead = spaces - 1;
                }
                out.push(Token::Punct(' '), &rest[spaces - 1..spaces]);
                at += spaces;
                continue;
            }
        }
        // `key=value` / `key = value` / `key="value"`: the previous word names the field.
        if rest.starts_with('=')
            && let Some(letter) = key_before(&out.tokens).and_then(escape_for_key)
        {
            out.push(Token::Punct('='), &rest[..1]);
            at += 1;
            while text[at..].starts_with(' ') && out_is_spaced_equals(text, at) {
                out.push(Token::Punct(' '), &text[at..at + 1]);
                at += 1;
            }
            at += key_value(&text[at..], letter, &mut out);
            continue;
        }
        // `-6553453415325823`: a negative query id (`%Q`) after a separator.
        let signed = rest.starts_with('-')
            && rest.as_bytes().get(1).is_some_and(u8::is_ascii_digit)
            && matches!(
                out.tokens.last(),
                None | Some(Token::Punct(' ' | '[' | '(' | '=' | ',' | '|' | ':' | '"'))
            );
        let (token, len) = match signed {
            true => match shaped(&rest[1..]) {
                Some((Token::Field(NUMBER), len)) => (Token::Field(NUMBER), len + 1),
                _ => word_or_punct(rest),
            },
            false => shaped(rest).unwrap_or_else(|| word_or_punct(rest)),
        };
        out.push(token, &text[at - lead..at + len]);
        lead = 0;
        at += len;
    }
    name_numbers(&mut out);
    out
}

/// The value after `key=`: a stamp or an epoch by its shape, a quoted value, a bracketed one
/// (`[unknown]`), else up to the next separator. Returns the bytes used.
fn key_value<'a>(value: &'a str, letter: char, out: &mut Tokens<'a>) -> usize {
    if let Some(quoted) = value.strip_prefix('"') {
        let end = quoted.find('"').map_or(quoted.len(), |e| e);
        out.push(Token::Punct('"'), &value[..1]);
        out.push(Token::Field(letter), &quoted[..end]);
        if end < quoted.len() {
            out.push(Token::Punct('"'), &quoted[end..end + 1]);
            return end + 2;
        }
        return end + 1;
    }
    if let Some((Token::Field(c), len)) = shaped(value)
        && matches!(c, STAMP_MILLIS | STAMP_SECONDS | 'n')
    {
        out.push(Token::Field(c), &value[..len]);
        return len;
    }
    let end = if value.starts_with('[') {
        value.find(']').map_or(value.len(), |e| e + 1)
    } else {
        value
            .find([',', ' ', ']', ')', ';', '|'])
            .unwrap_or(value.len())
    };
    out.push(Token::Field(letter), &value[..end]);
    end
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

/// True when the byte at `at` (if any) cannot continue a word.
fn ends_word(b: &[u8], at: usize) -> bool {
    b.get(at)
        .is_none_or(|c| !c.is_ascii_alphanumeric() && *c != b'_' && *c != b'@')
}

/// A token whose shape says which field it is, with its length.
fn shaped(rest: &str) -> Option<(Token, usize)> {
    if let Some(len) = time::stamp_len(rest, true) {
        return Some((Token::Field(STAMP_MILLIS), len));
    }
    if let Some(len) = time::stamp_len(rest, false) {
        return Some((Token::Field(STAMP_SECONDS), len));
    }
    let b = rest.as_bytes();
    let run = |from: usize, ok: fn(u8) -> bool| b[from..].iter().take_while(|&&c| ok(c)).count();
    // `1763744924.123` (%n)
    let d = run(0, |c| c.is_ascii_digit());
    if d == 10
        && b.get(10) == Some(&b'.')
        && run(11, |c| c.is_ascii_digit()) == 3
        && ends_word(b, 14)
    {
        return Some((Token::Field('n'), 14));
    }
    // `3/12` (%v)
    if d > 0 && b.get(d) == Some(&b'/') {
        let e = run(d + 1, |c| c.is_ascii_digit());
        if e > 0 && ends_word(b, d + 1 + e) {
            return Some((Token::Field('v'), d + 1 + e));
        }
    }
    if let Some(len) = session_id_len(b) {
        return Some((Token::Field('c'), len));
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
    if rest.starts_with("[local]") && ends_word(b, 7) {
        return Some((Token::Field('h'), 7));
    }
    // `client backend`, `checkpointer` (%b)
    if let Some(kind) = BACKEND_TYPES
        .iter()
        .filter(|k| rest.starts_with(**k) && ends_word(b, k.len()))
        .max_by_key(|k| k.len())
    {
        return Some((Token::Field('b'), kind.len()));
    }
    // `user@db`, `[unknown]@[unknown]`, `@` (empty user and database).
    let word = user_at_db_len(rest);
    let span = rest[..word].replace("[unknown]", "");
    if span.contains('@') && !span.contains(['=', '"', '(', '[', ']']) {
        return Some((Token::Field('@'), word));
    }
    if sqlstate_shaped(b) {
        return Some((Token::Field('e'), 5));
    }
    // Bare numbers: which is the pid is settled once the whole prefix is cut
    // ([`name_numbers`]), the others once every line is seen ([`template`]).
    if d > 0 && ends_word(b, d) {
        return Some((Token::Field(NUMBER), d));
    }
    None
}

/// `691f9e2c.6a1c` (%c): lowercase hex, a dot, lowercase hex.
fn session_id_len(b: &[u8]) -> Option<usize> {
    let hex = |from: usize| {
        b[from.min(b.len())..]
            .iter()
            .take_while(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase())
            .count()
    };
    let h = hex(0);
    if !(6..=8).contains(&h) || b.get(h) != Some(&b'.') {
        return None;
    }
    let e = hex(h + 1);
    (e > 0 && ends_word(b, h + 1 + e)).then_some(h + 1 + e)
}

/// `00000`, `57P01`, `XX000` (%e): five of `[0-9A-Z]` with a letter or a leading zero.
fn sqlstate_shaped(b: &[u8]) -> bool {
    b.len() >= 5
        && b[..5]
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        && (b[0] == b'0' || b[..5].iter().any(u8::is_ascii_uppercase))
        && ends_word(b, 5)
}

/// Five of `[0-9A-Z]` ending a word: a SQLSTATE, or five digits that may be one (`22012`).
fn five_code(b: &[u8]) -> bool {
    b.len() >= 5
        && b[..5]
            .iter()
            .all(|c| c.is_ascii_digit() || c.is_ascii_uppercase())
        && ends_word(b, 5)
}

/// Names the bare numbers that are the pid: a number equal to the session id's pid (its hex
/// after the dot) when the line prints one, else the first number alone in brackets
/// (`[4242]`, `(4242)`), else the first number. A pid already named by its key is not named
/// twice; a line whose session id names a pid no number equals has its pid there only.
fn name_numbers(t: &mut Tokens<'_>) {
    if t.tokens.contains(&Token::Field('p')) {
        return;
    }
    let numbers: Vec<usize> = (0..t.tokens.len())
        .filter(|&i| t.tokens[i] == Token::Field(NUMBER))
        .collect();
    let session_pid = t
        .tokens
        .iter()
        .position(|k| *k == Token::Field('c'))
        .and_then(|i| t.values[i].split_once('.'))
        .and_then(|(_, pid)| u32::from_str_radix(pid, 16).ok());
    let pid = match session_pid {
        Some(pid) => numbers
            .iter()
            .copied()
            .find(|&i| t.values[i].trim().parse::<u32>() == Ok(pid)),
        None => {
            let bracketed = |i: usize| {
                i > 0
                    && matches!(t.tokens[i - 1], Token::Punct('[' | '('))
                    && matches!(t.tokens.get(i + 1), Some(Token::Punct(']' | ')')))
            };
            numbers
                .iter()
                .copied()
                .find(|&i| bracketed(i))
                .or(numbers.first().copied())
        }
    };
    if let Some(i) = pid {
        t.tokens[i] = Token::Field('p');
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

/// A word (letters, digits, `_`, and `-`, `.` inside it; `[unknown]`, what PostgreSQL prints
/// for a name it does not know yet) or a single other character. A word
/// ends before a `-` or `.` that a stamp, a session id or a SQLSTATE follows (`%p-%t`,
/// `PG-%e`): names may hold dashes (`db-prod-01`), fields printed after a dash are kept apart.
fn word_or_punct(rest: &str) -> (Token, usize) {
    if rest.starts_with("[unknown]") {
        return (Token::Word("[unknown]".to_owned()), "[unknown]".len());
    }
    let word_char = |c: char| c.is_alphanumeric() || c == '_';
    let mut len = 0;
    for (i, c) in rest.char_indices() {
        if word_char(c) {
            len = i + c.len_utf8();
            continue;
        }
        if matches!(c, '-' | '.') && i > 0 {
            let after = &rest[i + 1..];
            let next_is_word = after.chars().next().is_some_and(word_char);
            let field_follows = time::stamp_len(after, false).is_some()
                || time::stamp_len(after, true).is_some()
                || session_id_len(after.as_bytes()).is_some()
                || five_code(after.as_bytes());
            if next_is_word && !field_follows {
                len = i + 1;
                continue;
            }
        }
        break;
    }
    if len > 0 {
        return (Token::Word(rest[..len].to_owned()), len);
    }
    let c = rest.chars().next().unwrap_or(' ');
    (Token::Punct(c), c.len_utf8())
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
