//! Cutting the prefix of one log line into tokens for [`super::prefix_infer`]: the shapes
//! PostgreSQL prints (`%m` and `%t` stamps, `%n` epochs, `%c` session ids, `%v` virtual xids,
//! SQLSTATEs, numbers, `user@db`, client addresses, backend types, `key=value` pairs whose key
//! names the field, printf padding) and literal words and punctuation.
//!
//! Takes the text in front of a line's severity word; yields [`Tokens`], each token with the
//! text it stands for, the pid named where the line itself says which number it is (the
//! session id's pid, a number alone in brackets), the other numbers left for the evidence of
//! every line to name.

use super::time;

/// One piece of a line's prefix.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Token {
    /// A field whose shape or key says which escape it is (`p`, `u`, …), or one of the
    /// placeholders below, settled once every line was seen.
    Field(char),
    /// A run of letters, digits, `_`, `-`, `.`: literal if it never varies, else free text.
    Word(String),
    /// Any other character, literal.
    Punct(char),
}

/// A bare number before it is named.
pub(super) const NUMBER: char = '#';
/// A time stamp with milliseconds (`%m`, or `%s` when another stamp is the line's).
pub(super) const STAMP_MILLIS: char = 'M';
/// A time stamp in whole seconds (`%t` or `%s`).
pub(super) const STAMP_SECONDS: char = 'T';

/// Fields that print digits (a SQLSTATE may be all digits: `22012`).
pub(super) fn is_numeric(letter: char) -> bool {
    matches!(letter, NUMBER | 'l' | 'x' | 'e')
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
pub(super) struct Tokens<'a> {
    /// The tokens, in order.
    pub(super) tokens: Vec<Token>,
    /// The text of the line each token stands for (padding included).
    pub(super) values: Vec<&'a str>,
}

impl<'a> Tokens<'a> {
    fn push(&mut self, token: Token, value: &'a str) {
        self.tokens.push(token);
        self.values.push(value);
    }
}

/// Cuts a prefix instance into tokens.
pub(super) fn tokens(text: &str) -> Tokens<'_> {
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
