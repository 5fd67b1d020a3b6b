//! PostgreSQL's log lines, in every language of its catalogs: the prefix's name fields by
//! position ([`LogLinePrefix::line_parts`](pgmortem_parse::pglog::LogLinePrefix::line_parts)),
//! then the message by what its label says (`STATEMENT:` and `QUERY:` are query text) and by
//! which message it is ([`NAMED_ARGS`]: connection and authentication messages name roles,
//! databases and hosts; `statement:`, `Failed process was running:`, `parameters:` and
//! `CONTEXT:`'s SQL statements print query text; constraint violations print a row's values),
//! then the TAB-indented lines that continue a query or an auto_explain plan, and the
//! memory-context dump's identifiers.

use std::sync::LazyLock;

use pgmortem_parse::pglog::{
    LineLabel, PrefixName, PrintfPiece, Severity, catalog_translations, printf_pieces,
};
use regex::{Regex, RegexSet};

use crate::line::{Continuation, LineState, replace_captures};
use crate::{Kind, Redactor, has};

/// What an argument of a named message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arg {
    /// A role.
    User,
    /// A database.
    Database,
    /// An application name.
    Application,
    /// A client's host name or address.
    Host,
    /// Query text: its literals are replaced.
    Query,
    /// A row's or a key's values, printed whole: one token.
    Values,
    /// Anything else (a port, a duration, a table): kept.
    Other,
}

use Arg::{Application, Database, Host, Other, Query, User, Values};

/// The messages that print a name or query text, by their English msgid, and what each of
/// their conversions (`%s`, `%d`, … in order) prints. Their translations come from
/// PostgreSQL's catalogs (`NAMED_MESSAGES` of `fixtures/record/pglog-translations.py`).
pub(crate) const NAMED_ARGS: &[(&str, &[Arg])] = &[
    ("connection authorized: user=%s", &[User]),
    ("replication connection authorized: user=%s", &[User]),
    (" database=%s", &[Database]),
    (" application_name=%s", &[Application]),
    ("connection received: host=%s port=%s", &[Host, Other]),
    ("connection received: host=%s", &[Host]),
    (
        "disconnection: session time: %d:%02d:%02d.%03d user=%s database=%s host=%s%s%s",
        &[
            Other, Other, Other, Other, User, Database, Host, Other, Other,
        ],
    ),
    ("password authentication failed for user \"%s\"", &[User]),
    ("Peer authentication failed for user \"%s\"", &[User]),
    ("Ident authentication failed for user \"%s\"", &[User]),
    ("\"trust\" authentication failed for user \"%s\"", &[User]),
    ("certificate authentication failed for user \"%s\"", &[User]),
    ("LDAP authentication failed for user \"%s\"", &[User]),
    ("PAM authentication failed for user \"%s\"", &[User]),
    ("GSSAPI authentication failed for user \"%s\"", &[User]),
    ("RADIUS authentication failed for user \"%s\"", &[User]),
    (
        "no pg_hba.conf entry for host \"%s\", user \"%s\", database \"%s\", %s",
        &[Host, User, Database, Other],
    ),
    (
        "no pg_hba.conf entry for replication connection from host \"%s\", user \"%s\", %s",
        &[Host, User, Other],
    ),
    ("role \"%s\" does not exist", &[User]),
    ("Role \"%s\" does not exist.", &[User]),
    ("role \"%s\" is not permitted to log in", &[User]),
    ("database \"%s\" does not exist", &[Database]),
    (
        "database \"%s\" is not currently accepting connections",
        &[Database],
    ),
    ("permission denied for database \"%s\"", &[Database]),
    ("permission denied for database %s", &[Database]),
    ("too many connections for role \"%s\"", &[User]),
    ("too many connections for database \"%s\"", &[Database]),
    (
        "automatic vacuum of table \"%s.%s.%s\"",
        &[Database, Other, Other],
    ),
    (
        "automatic analyze of table \"%s.%s.%s\"",
        &[Database, Other, Other],
    ),
    ("statement: %s", &[Query]),
    ("duration: %s ms  statement: %s", &[Other, Query]),
    (
        "duration: %s ms  %s %s%s%s: %s",
        &[Other, Other, Other, Other, Other, Query],
    ),
    (
        "duration: %s ms  bind %s%s%s: %s",
        &[Other, Other, Other, Other, Query],
    ),
    ("duration: %s ms  parse %s: %s", &[Other, Other, Query]),
    ("parameters: %s", &[Query]),
    ("prepare: %s", &[Query]),
    ("portal \"%s\" with parameters: %s", &[Other, Query]),
    ("unnamed portal with parameters: %s", &[Query]),
    ("SQL statement \"%s\"", &[Query]),
    ("SQL expression \"%s\"", &[Query]),
    ("PL/pgSQL expression \"%s\"", &[Query]),
    (
        "COPY %s, line %llu, column %s: \"%s\"",
        &[Other, Other, Other, Values],
    ),
    ("COPY %s, line %llu: \"%s\"", &[Other, Other, Values]),
    ("invalid input syntax for type %s: \"%s\"", &[Other, Values]),
    ("value \"%s\" is out of range for type %s", &[Values, Other]),
    ("invalid input value for enum %s: \"%s\"", &[Other, Values]),
    ("date/time field value out of range: \"%s\"", &[Values]),
    ("Failing row contains %s.", &[Values]),
    ("Key %s already exists.", &[Values]),
    ("Key %s conflicts with existing key %s.", &[Values, Values]),
    (
        "Key (%s)=(%s) is not present in table \"%s\".",
        &[Other, Values, Other],
    ),
    (
        "Key (%s)=(%s) is still referenced from table \"%s\".",
        &[Other, Values, Other],
    ),
    ("Failed process was running: %s", &[Query]),
];

/// One named message in one language, compiled: its pattern and what each capture group is.
struct Form {
    regex: Regex,
    groups: Vec<Arg>,
}

/// Every named message in English and in each translation, and a set to find which fit.
struct Forms {
    set: RegexSet,
    forms: Vec<Form>,
}

static FORMS: LazyLock<Forms> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let mut forms = Vec::new();
    for &(english, args) in NAMED_ARGS {
        let mut texts = vec![english];
        texts.extend(catalog_translations(english).into_iter().map(|(_, t)| t));
        for text in texts {
            if let Some((pattern, groups)) = compile(text, english, args)
                && !patterns.contains(&pattern)
                && let Ok(regex) = Regex::new(&pattern)
            {
                patterns.push(pattern);
                forms.push(Form { regex, groups });
            }
        }
    }
    // log_statement's `execute S_1: …` (`%s %s%s%s: %s`, its first word translated alone).
    let mut execute = vec!["execute".to_owned(), "execute fetch from".to_owned()];
    for word in ["execute", "execute fetch from"] {
        execute.extend(
            catalog_translations(word)
                .into_iter()
                .map(|(_, t)| t.to_owned()),
        );
    }
    let words: Vec<String> = execute.iter().map(|w| regex::escape(w)).collect();
    let pattern = format!("^(?s)(?:{}) ([^:]*): (.*)$", words.join("|"));
    if let Ok(regex) = Regex::new(&pattern) {
        patterns.push(pattern);
        forms.push(Form {
            regex,
            groups: vec![Other, Query],
        });
    }
    let set = RegexSet::new(&patterns).expect("patterns compiled one by one");
    Forms { set, forms }
});

/// The pattern of a printf `format` (the English msgid `english`'s, or a translation's) whose
/// conversions print `args`, and the arg of each capture group; `None` for a format with
/// a conversion the table does not describe.
fn compile(format: &str, english: &str, args: &[Arg]) -> Option<(String, Vec<Arg>)> {
    enum Piece {
        Lit(String),
        Conv { index: usize, text: bool },
    }
    let pieces: Vec<Piece> = printf_pieces(format)
        .into_iter()
        .map(|p| match p {
            PrintfPiece::Literal(l) => Piece::Lit(l),
            PrintfPiece::Conversion { index, conversion } => Piece::Conv {
                index,
                text: matches!(conversion, 's' | 'm'),
            },
        })
        .collect();
    // A fragment (` database=%s`) is found anywhere in the message, a message from its start.
    let mut pattern = String::from("(?s)");
    if !english.starts_with(' ') {
        pattern.push('^');
    }
    let mut groups = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        match piece {
            Piece::Lit(l) => pattern.push_str(&regex::escape(l)),
            &Piece::Conv { index, text } => {
                let arg = *args.get(index)?;
                let next_lit = match pieces.get(i + 1) {
                    Some(Piece::Lit(l)) => Some(l.as_str()),
                    _ => None,
                };
                let last = pieces[i + 1..].iter().all(|p| matches!(p, Piece::Lit(_)));
                let group = match (arg, text) {
                    (Query, _) if last => {
                        // To the end; a closing quote, when printed, is not the query's.
                        groups.push(arg);
                        pattern.push_str("(.*?)");
                        if let Some(l) = next_lit {
                            pattern.push_str(&format!("(?:{})?", regex::escape(l)));
                        }
                        pattern.push('$');
                        return Some((pattern, groups));
                    }
                    (Values, _) if last => "(.+)",
                    (_, false) => "(-?[0-9A-Fa-f.]+)",
                    (User | Database | Application | Host, true) => {
                        let quoted = next_lit
                            .and_then(|l| l.chars().next())
                            .is_some_and(|c| !c.is_alphanumeric() && c != ' ' && c != '=');
                        if quoted { "(.+?)" } else { "([^\\s,]+)" }
                    }
                    _ => "(.*?)",
                };
                groups.push(arg);
                pattern.push_str(group);
            }
        }
    }
    Some((pattern, groups))
}

/// English severity words and labels, and every translation the catalog has, each with what
/// it introduces: for lines of a log whose prefix is not known.
static LABELS: LazyLock<(Regex, Vec<(String, LineLabel)>)> = LazyLock::new(|| {
    let english = [
        ("LOG", LineLabel::Main(Severity::Log)),
        ("ERROR", LineLabel::Main(Severity::Error)),
        ("FATAL", LineLabel::Main(Severity::Fatal)),
        ("PANIC", LineLabel::Main(Severity::Panic)),
        ("WARNING", LineLabel::Main(Severity::Warning)),
        ("NOTICE", LineLabel::Main(Severity::Notice)),
        ("INFO", LineLabel::Main(Severity::Info)),
        ("DEBUG", LineLabel::Main(Severity::Debug)),
        ("DETAIL", LineLabel::Detail),
        ("HINT", LineLabel::Hint),
        ("CONTEXT", LineLabel::Context),
        ("STATEMENT", LineLabel::Statement),
        ("QUERY", LineLabel::Query),
        ("LOCATION", LineLabel::Location),
    ];
    let mut words: Vec<(String, LineLabel)> = Vec::new();
    for (word, label) in english {
        words.push((word.to_owned(), label));
        for n in 1..=5 {
            if word == "DEBUG" {
                words.push((format!("DEBUG{n}"), label));
            }
        }
        for (_, t) in catalog_translations(word) {
            if !words.iter().any(|(w, _)| w == t) {
                words.push((t.to_owned(), label));
            }
        }
    }
    words.sort_by_key(|(w, _)| std::cmp::Reverse(w.len()));
    let alternatives: Vec<String> = words.iter().map(|(w, _)| regex::escape(w)).collect();
    let pattern = format!(r"(?:^|[\s\]\):>])({}) ?:  ", alternatives.join("|"));
    (Regex::new(&pattern).expect("escaped words"), words)
});

/// auto_explain's plan line: `duration: 0.042 ms  plan:`.
static PLAN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^duration: [\d.]+ ms  plan:").expect("a valid pattern"));
/// A memory-context dump's line with an identifier, as a backend writes it to stderr before
/// `out of memory` or logs it for `pg_log_backend_memory_contexts` (`level: 2; `):
/// `CachedPlanSource: 4096 total in 3 blocks; 1776 free (0 chunks); 2320 used: SELECT …`.
static MEMORY_CONTEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(\s*(?:level: \d+; )?[^:;]+: \d+ total in \d+ blocks?; \d+ free \(\d+ chunks?\); \d+ used: )(.*)$",
    )
    .expect("a valid pattern")
});
/// The keys of a plan whose values are expressions, which hold a query's literals.
const PLAN_EXPRESSIONS: &[&str] = &[
    "Cache Key",
    "Filter",
    "Group Key",
    "Hash Cond",
    "Hash Key",
    "Index Cond",
    "Join Filter",
    "Merge Cond",
    "One-Time Filter",
    "Order By",
    "Output",
    "Presorted Key",
    "Recheck Cond",
    "Run Condition",
    "Sort Key",
    "TID Cond",
];

/// The translations of `[unknown]` (what `%u` and `%d` print before a session has a role).
static UNKNOWN: LazyLock<Vec<&'static str>> = LazyLock::new(|| {
    catalog_translations("[unknown]")
        .into_iter()
        .map(|(_, t)| t)
        .collect()
});

/// Whether `name` is a translation of `[unknown]`.
pub(crate) fn is_unknown_translation(name: &str) -> bool {
    name.starts_with('[') && UNKNOWN.contains(&name)
}

/// Where a severity word or label starts, what it introduces and where the message starts,
/// found without knowing the prefix.
fn find_label(text: &str) -> Option<(usize, LineLabel, usize)> {
    // Every label ends with a colon and two spaces.
    if !has(text, ":  ") {
        return None;
    }
    let (re, words) = &*LABELS;
    let c = re.captures(text)?;
    let word = c.get(1).expect("the word");
    let label = words.iter().find(|(w, _)| w == word.as_str())?.1;
    Some((word.start(), label, c.get(0).expect("the match").end()))
}

impl Redactor {
    /// A PostgreSQL log line (with the file's prefix when known, else any text before a
    /// severity word), redacted; `None` when the line is not one.
    pub(crate) fn pg_line(&mut self, text: &str, state: &mut LineState) -> Option<String> {
        let parts = state.prefix().and_then(|p| p.line_parts(text));
        let mut out = String::with_capacity(text.len());
        let (label, message_start) = match parts {
            Some(parts) => {
                let mut at = 0;
                for (name, range) in &parts.names {
                    out.push_str(&text[at..range.start]);
                    let value = &text[range.clone()];
                    out.push_str(&match name {
                        PrefixName::User => self.name(Kind::User, value),
                        PrefixName::Database => self.name(Kind::Database, value),
                        PrefixName::Application => self.name(Kind::Application, value),
                        PrefixName::RemoteHost => self.host_or_address(value),
                        PrefixName::LocalAddress => value.to_owned(),
                    });
                    at = range.end;
                }
                out.push_str(&text[at..parts.message_start]);
                (parts.label, parts.message_start)
            }
            None => {
                let (label_start, label, message_start) = find_label(text)?;
                out.push_str(&self.fields(&text[..label_start], state));
                out.push_str(&text[label_start..message_start]);
                (label, message_start)
            }
        };
        out.push_str(&self.message(label, &text[message_start..], state));
        Some(out)
    }

    /// A message (a log line's after its label, a csvlog or jsonlog field) redacted by what
    /// its label says and which message it is.
    pub(crate) fn message(
        &mut self,
        label: LineLabel,
        message: &str,
        state: &mut LineState,
    ) -> String {
        match label {
            LineLabel::Statement | LineLabel::Query => {
                state.continuation = Continuation::Query;
                self.query(message)
            }
            LineLabel::Location => message.to_owned(),
            _ => {
                if let Some(out) = self.memory_context_line(message) {
                    return out;
                }
                let (out, query) = self.named(message);
                if query {
                    state.continuation = Continuation::Query;
                } else if PLAN.is_match(message) {
                    state.continuation = Continuation::Plan(false);
                }
                self.fields(&out, state)
            }
        }
    }

    /// The arguments of the named messages `message` is (in any language) replaced; whether
    /// one of them is query text, which the TAB-indented lines after it continue.
    fn named(&mut self, message: &str) -> (String, bool) {
        let forms = &*FORMS;
        let mut spans: Vec<(usize, usize, Arg)> = Vec::new();
        for i in forms.set.matches(message).iter() {
            let form = &forms.forms[i];
            let Some(c) = form.regex.captures(message) else {
                continue;
            };
            for (g, arg) in form.groups.iter().enumerate() {
                if *arg == Other {
                    continue;
                }
                if let Some(m) = c.get(g + 1)
                    && !m.as_str().is_empty()
                {
                    spans.push((m.start(), m.end(), *arg));
                }
            }
        }
        if spans.is_empty() {
            return (message.to_owned(), false);
        }
        // Query text and values over names; the earliest and longest first; no overlaps.
        spans.sort_by_key(|&(s, e, arg)| (!matches!(arg, Query | Values), s, std::cmp::Reverse(e)));
        let mut chosen: Vec<(usize, usize, Arg)> = Vec::new();
        for span in spans {
            if chosen.iter().all(|c| span.1 <= c.0 || span.0 >= c.1) {
                chosen.push(span);
            }
        }
        chosen.sort_by_key(|&(s, _, _)| s);
        let mut out = String::with_capacity(message.len());
        let mut at = 0;
        let mut query = false;
        for (s, e, arg) in chosen {
            out.push_str(&message[at..s]);
            let value = &message[s..e];
            out.push_str(&match arg {
                User => self.name(Kind::User, value),
                Database => self.name(Kind::Database, value),
                Application => self.name(Kind::Application, value),
                Host => self.host_or_address(value),
                Query => {
                    // Open to the end of the message: the lines after it may continue it.
                    query |= e == message.len();
                    self.query(value)
                }
                Values => self.values(value),
                Other => value.to_owned(),
            });
            at = e;
        }
        out.push_str(&message[at..]);
        (out, query)
    }

    /// A line of an auto_explain plan (text or JSON format): `Query Text:` and the text that
    /// continues it, and the expressions of `Filter:`, `Index Cond:`, … have their literals
    /// replaced; node lines and figures are kept.
    pub(crate) fn plan_line(
        &mut self,
        text: &str,
        in_query: bool,
        state: &mut LineState,
    ) -> String {
        let body = text.trim_start();
        let indent = &text[..text.len() - body.len()];
        // JSON format: `"Query Text": "…",`, `"Filter": "(x = 'a'::text)",`.
        if let Some(rest) = body.strip_prefix('"')
            && let Some((key, value)) = rest.split_once("\": ")
        {
            state.continuation = Continuation::Plan(false);
            if key == "Query Text" || PLAN_EXPRESSIONS.contains(&key) {
                return format!("{indent}\"{key}\": {}", self.query_in_json_string(value));
            }
            return text.to_owned();
        }
        if let Some(q) = body.strip_prefix("Query Text: ") {
            state.continuation = Continuation::Plan(true);
            return format!("{indent}Query Text: {}", self.query(q));
        }
        let node = body.starts_with("->")
            || has(body, "(cost=")
            || has(body, "(actual ")
            || has(body, "(never executed)");
        if node {
            state.continuation = Continuation::Plan(false);
            return text.to_owned();
        }
        if let Some((key, value)) = body.split_once(": ")
            && PLAN_EXPRESSIONS.contains(&key)
        {
            state.continuation = Continuation::Plan(false);
            return format!("{indent}{key}: {}", self.query(value));
        }
        if in_query {
            return self.query(text);
        }
        text.to_owned()
    }

    /// A JSON string (`"…"`, then maybe `,`) holding an expression: its literals replaced,
    /// its escapes kept.
    fn query_in_json_string(&mut self, value: &str) -> String {
        let trimmed = value.trim_end_matches(',');
        let tail = &value[trimmed.len()..];
        match serde_json::from_str::<String>(trimmed) {
            Ok(s) => {
                let redacted = self.query(&s);
                let json = serde_json::to_string(&redacted).unwrap_or_else(|_| trimmed.to_owned());
                format!("{json}{tail}")
            }
            Err(_) => self.query(value),
        }
    }

    /// A line of a memory-context dump whose identifier may be query text (`CachedPlanSource`,
    /// `SQL function`): its literals replaced; `None` for any other line.
    pub(crate) fn memory_context_line(&mut self, text: &str) -> Option<String> {
        if !has(text, " used: ") || !MEMORY_CONTEXT.is_match(text) {
            return None;
        }
        let out = replace_captures(&MEMORY_CONTEXT, text, |caps| {
            format!("{}{}", &caps[1], self.query(&caps[2]))
        });
        Some(out)
    }
}

#[cfg(test)]
mod tests;
