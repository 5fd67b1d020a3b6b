//! JSON rewritten in place: the document is parsed, each string value is handed over with
//! the keys that lead to it and replaced by what comes back, and everything else (keys,
//! numbers, spaces, the order of keys, the escapes of strings left alone) is copied byte for
//! byte. A JSON file stays valid JSON, laid out as it was.

use pgmortem_parse::pglog::{LineLabel, Severity};

use crate::line::LineState;
use crate::{Kind, Redactor};

/// One step from a document's root to a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// An object's member.
    Key(String),
    /// An array's element.
    Index(usize),
}

/// A scalar handed to the rewriter's callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scalar<'a> {
    /// A string, decoded.
    String(&'a str),
    /// A number, as written.
    Number(&'a str),
}

/// Why a text could not be rewritten as JSON.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum JsonError {
    /// It is not valid JSON.
    #[error("not valid JSON: {0}")]
    Invalid(#[from] serde_json::Error),
    /// It nests deeper than [`MAX_DEPTH`].
    #[error("JSON nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// How deep a document may nest.
pub const MAX_DEPTH: usize = 256;

/// `text` (one JSON document) with each scalar replaced by what `f` returns for it (`None`:
/// kept as written). A replaced string is written with JSON's escapes; a replaced number as
/// returned.
pub fn rewrite(
    text: &str,
    mut f: impl FnMut(&[Step], Scalar<'_>) -> Option<String>,
) -> Result<String, JsonError> {
    serde_json::from_str::<serde::de::IgnoredAny>(text)?;
    let mut w = Writer {
        text,
        at: 0,
        out: String::with_capacity(text.len()),
        path: Vec::new(),
    };
    w.value(&mut f, 0)?;
    w.out.push_str(&text[w.at..]);
    Ok(w.out)
}

struct Writer<'t> {
    text: &'t str,
    at: usize,
    out: String,
    path: Vec<Step>,
}

type Visit<'f> = dyn FnMut(&[Step], Scalar<'_>) -> Option<String> + 'f;

impl Writer<'_> {
    fn bytes(&self) -> &[u8] {
        self.text.as_bytes()
    }

    /// Copies whitespace.
    fn space(&mut self) {
        let start = self.at;
        while self
            .bytes()
            .get(self.at)
            .is_some_and(|b| b.is_ascii_whitespace())
        {
            self.at += 1;
        }
        self.out.push_str(&self.text[start..self.at]);
    }

    /// Copies one byte of structure (`{`, `:`, `,`, …).
    fn punct(&mut self) {
        self.out.push_str(&self.text[self.at..self.at + 1]);
        self.at += 1;
    }

    /// The end (exclusive) of the string starting at `self.at`.
    fn string_end(&self) -> usize {
        let b = self.bytes();
        let mut i = self.at + 1;
        while i < b.len() {
            match b[i] {
                b'\\' => i += 2,
                b'"' => return i + 1,
                _ => i += 1,
            }
        }
        b.len()
    }

    fn value(&mut self, f: &mut Visit<'_>, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep);
        }
        self.space();
        match self.bytes().get(self.at) {
            Some(b'{') => {
                self.punct();
                loop {
                    self.space();
                    match self.bytes().get(self.at) {
                        Some(b'}') => {
                            self.punct();
                            return Ok(());
                        }
                        Some(b',') => {
                            self.punct();
                            continue;
                        }
                        Some(b'"') => {}
                        _ => return Ok(()),
                    }
                    let end = self.string_end();
                    let raw = &self.text[self.at..end];
                    let key: String = serde_json::from_str(raw)?;
                    self.out.push_str(raw);
                    self.at = end;
                    self.space();
                    if self.bytes().get(self.at) == Some(&b':') {
                        self.punct();
                    }
                    self.path.push(Step::Key(key));
                    let r = self.value(f, depth + 1);
                    self.path.pop();
                    r?;
                }
            }
            Some(b'[') => {
                self.punct();
                let mut index = 0;
                loop {
                    self.space();
                    match self.bytes().get(self.at) {
                        Some(b']') => {
                            self.punct();
                            return Ok(());
                        }
                        Some(b',') => {
                            self.punct();
                            continue;
                        }
                        None => return Ok(()),
                        _ => {}
                    }
                    self.path.push(Step::Index(index));
                    let r = self.value(f, depth + 1);
                    self.path.pop();
                    r?;
                    index += 1;
                }
            }
            Some(b'"') => {
                let end = self.string_end();
                let raw = &self.text[self.at..end];
                let value: String = serde_json::from_str(raw)?;
                match f(&self.path, Scalar::String(&value)) {
                    Some(new) if new != value => {
                        self.out
                            .push_str(&serde_json::to_string(&new).unwrap_or_else(|_| raw.into()));
                    }
                    _ => self.out.push_str(raw),
                }
                self.at = end;
                Ok(())
            }
            Some(_) => {
                let start = self.at;
                while self
                    .bytes()
                    .get(self.at)
                    .is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace())
                {
                    self.at += 1;
                }
                let raw = &self.text[start..self.at];
                let is_number = raw.starts_with(|c: char| c == '-' || c.is_ascii_digit());
                match is_number
                    .then(|| f(&self.path, Scalar::Number(raw)))
                    .flatten()
                {
                    Some(new) => self.out.push_str(&new),
                    None => self.out.push_str(raw),
                }
                Ok(())
            }
            None => Ok(()),
        }
    }
}

/// What a JSON string holds, by its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Name(Kind),
    Host,
    Query,
    Message(LineLabel),
    /// A whole log line (the journal's `MESSAGE`, a container runtime's `log`).
    LogLine,
    /// A command line (`-U`, `-h`, `-d`): of a PostgreSQL client when `true`.
    CommandLine(bool),
    /// A path: only home directories and archive names in it.
    Path,
    Text,
}

/// The keys of jsonlog, csvlog-named JSON (CloudNativePG's `record`), the journal's export,
/// container logs, Kubernetes objects and pgmortem's manifest, by what their values hold.
fn field(key: &str) -> Field {
    match key {
        "user" | "user_name" | "usename" | "role" | "rolname" | "username" => {
            Field::Name(Kind::User)
        }
        "dbname" | "database" | "database_name" | "datname" | "db" => Field::Name(Kind::Database),
        "application_name" | "app" | "appname" => Field::Name(Kind::Application),
        "remote_host" | "client_addr" | "client_hostname" | "connection_from" | "hostname"
        | "_HOSTNAME" | "nodeName" | "node_name" | "nodename" | "host_name" => Field::Host,
        "query" | "statement" | "internal_query" => Field::Query,
        "message" | "msg" => Field::Message(LineLabel::Main(Severity::Log)),
        "detail" => Field::Message(LineLabel::Detail),
        "hint" => Field::Message(LineLabel::Hint),
        "context" => Field::Message(LineLabel::Context),
        "MESSAGE" | "log" | "textPayload" => Field::LogLine,
        "arguments" => Field::CommandLine(true),
        "command" | "_CMDLINE" | "cmdline" | "args" => Field::CommandLine(false),
        "path" | "data_directory" | "_EXE" | "file" => Field::Path,
        _ => Field::Text,
    }
}

/// What the string at `path` holds: by its key ([`field`]), except in pgmortem's manifest's
/// list of the server log's files (`server_logs: [{path, role, source, found_from,
/// modified}]`), where `role` says what the file is to the server (`current`, `earlier`,
/// `stderr`, `syslog`), not a PostgreSQL role, and `source` is the file's path on the host.
fn field_at(path: &[Step]) -> Field {
    let key = path.iter().rev().find_map(|s| match s {
        Step::Key(k) => Some(k.as_str()),
        Step::Index(_) => None,
    });
    let in_server_logs = matches!(path.first(), Some(Step::Key(k)) if k == "server_logs");
    match key {
        Some("role") if in_server_logs => Field::Text,
        Some("source") if in_server_logs => Field::Path,
        Some(k) => field(k),
        None => Field::Text,
    }
}

impl Redactor {
    /// A JSON string value at `path` redacted by what its key says it holds; `lines` is the
    /// file's state for whole log lines (the journal's `MESSAGE` of one entry continues the
    /// query of the one before).
    pub(crate) fn json_string(
        &mut self,
        path: &[Step],
        value: &str,
        lines: &mut LineState,
    ) -> String {
        match field_at(path) {
            Field::Name(kind) => self.name(kind, value),
            Field::Host => self.host_with_port(value),
            Field::Query => self.query(value),
            Field::Message(label) => {
                let mut state = LineState::default();
                let out = self.message(label, value, &mut state);
                self.everywhere(&out)
            }
            Field::LogLine => self.text_lines(value, lines),
            Field::CommandLine(pg) => {
                let state = if pg {
                    LineState::for_pg_command_line()
                } else {
                    LineState::default()
                };
                let out = self.fields(value, &state);
                self.everywhere(&out)
            }
            Field::Path => self.in_paths(value),
            Field::Text => self.text_lines(value, &mut LineState::default()),
        }
    }

    /// A host with its port (`10.0.0.7:5432`, `db1(5432)`), the port kept.
    pub(crate) fn host_with_port(&mut self, value: &str) -> String {
        let split = value.rfind([':', '(']).filter(|&i| {
            let port = value[i + 1..].trim_end_matches(')');
            !port.is_empty()
                && port.bytes().all(|b| b.is_ascii_digit())
                && value[..i].parse::<std::net::Ipv6Addr>().is_err()
                && !value[..i].ends_with(':')
        });
        match split {
            Some(i) => format!("{}{}", self.host_or_address(&value[..i]), &value[i..]),
            None => self.host_or_address(value),
        }
    }

    /// Text of several lines, each rewritten with `state`.
    pub(crate) fn text_lines(&mut self, text: &str, state: &mut LineState) -> String {
        let mut out = String::with_capacity(text.len());
        for (i, line) in text.split('\n').enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&self.redact_line(line, state));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_log_file_s_role_in_the_manifest_is_not_a_postgresql_role() {
        let at = |keys: &[&str]| -> Vec<Step> {
            let mut path = vec![Step::Key(keys[0].into()), Step::Index(1)];
            path.extend(keys[1..].iter().map(|k| Step::Key((*k).into())));
            path
        };
        assert_eq!(field_at(&at(&["server_logs", "role"])), Field::Text);
        assert_eq!(field_at(&at(&["server_logs", "source"])), Field::Path);
        // A role anywhere else is a PostgreSQL role: a jsonlog's, a Kubernetes object's.
        assert_eq!(
            field_at(&[Step::Key("role".into())]),
            Field::Name(Kind::User)
        );
        assert_eq!(field_at(&at(&["items", "role"])), Field::Name(Kind::User));
    }

    #[test]
    fn layout_escapes_and_key_order_are_kept() {
        let text = "{\"b\": \"x\\u00e9\", \"a\":[1, \"keep\" ,{\"c\":\"y\"}],\n \"n\": 12}\n";
        let out = rewrite(text, |path, v| match v {
            Scalar::String("y") => {
                assert_eq!(
                    path,
                    [Step::Key("a".into()), Step::Index(2), Step::Key("c".into())]
                );
                Some("q\"z".into())
            }
            Scalar::Number(n) => Some(format!("{}", n.parse::<u32>().unwrap() + 1)),
            _ => None,
        })
        .unwrap();
        assert_eq!(
            out,
            "{\"b\": \"x\\u00e9\", \"a\":[2, \"keep\" ,{\"c\":\"q\\\"z\"}],\n \"n\": 13}\n"
        );
        assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok());
    }

    #[test]
    fn invalid_or_too_deep_json_is_an_error() {
        assert!(matches!(
            rewrite("{\"a\": ", |_, _| None),
            Err(JsonError::Invalid(_))
        ));
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        // serde_json refuses it first (its own limit is 128).
        assert!(rewrite(&deep, |_, _| None).is_err());
    }

    #[test]
    fn a_host_with_its_port() {
        let mut r = Redactor::new();
        assert_eq!(r.host_with_port("10.1.2.3:5432"), "192.0.2.1:5432");
        assert_eq!(r.host_with_port("db1.example(5432)"), "host-1(5432)");
        assert_eq!(r.host_with_port("[local]"), "[local]");
        assert_eq!(r.host_with_port("fe80::1"), "2001:db8::2");
    }
}
