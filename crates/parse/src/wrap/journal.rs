//! The journal's exports (`journalctl -o json` or `json-pretty`, `-o export`): entries that name
//! the program that wrote them. (The short forms are syslog's header: `syslog.rs`.)
//!
//! A journal entry's `MESSAGE` is the line; `SYSLOG_IDENTIFIER` (else `_COMM`) the program,
//! `kernel` for `_TRANSPORT=kernel`; `SYSLOG_PID` (else `_PID`) the PID;
//! `__REALTIME_TIMESTAMP` (µs since the epoch) the time, and for a kernel entry
//! `_SOURCE_MONOTONIC_TIMESTAMP` the kernel's own monotonic time of the record. In `-o json` a
//! value that is not valid UTF-8 is an array of bytes. In `-o export`
//! (systemd `JOURNAL_EXPORT_FORMATS`), a field is `KEY=value` on one line, or, when the value
//! holds a newline or bytes that are not text, `KEY` on its own line, the value's length as a
//! 64-bit little-endian integer, the bytes and a newline; an empty line ends the entry.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Part, Peeled, PeeledKind, Stamp, Written, lines_of, syslog};

/// The fields read, from either export.
#[derive(Debug, Default)]
struct Fields {
    message: Option<String>,
    identifier: Option<String>,
    comm: Option<String>,
    transport: Option<String>,
    syslog_pid: Option<String>,
    pid: Option<String>,
    realtime: Option<String>,
    source_monotonic: Option<String>,
    priority: Option<String>,
}

impl Fields {
    fn set(&mut self, key: &str, value: String) {
        let slot = match key {
            "MESSAGE" => &mut self.message,
            "SYSLOG_IDENTIFIER" => &mut self.identifier,
            "_COMM" => &mut self.comm,
            "_TRANSPORT" => &mut self.transport,
            "SYSLOG_PID" => &mut self.syslog_pid,
            "_PID" => &mut self.pid,
            "__REALTIME_TIMESTAMP" => &mut self.realtime,
            "_SOURCE_MONOTONIC_TIMESTAMP" => &mut self.source_monotonic,
            "PRIORITY" => &mut self.priority,
            _ => return,
        };
        *slot = Some(value);
    }

    /// The entry's line(s) to `out`.
    fn hand_out(self, line: u64, out: &mut dyn FnMut(Peeled<'_>)) {
        hand_out(
            line,
            Entry {
                message: self.message.map(Cow::Owned),
                identifier: self.identifier.map(Cow::Owned),
                comm: self.comm.map(Cow::Owned),
                transport: self.transport.map(Cow::Owned),
                syslog_pid: self.syslog_pid.map(Cow::Owned),
                pid: self.pid.map(Cow::Owned),
                realtime: self.realtime.map(Cow::Owned),
                source_monotonic: self.source_monotonic.map(Cow::Owned),
                priority: self.priority.map(Cow::Owned),
            },
            out,
        );
    }
}

/// One journal entry's fields, borrowed where the export allows.
struct Entry<'a> {
    message: Option<Cow<'a, str>>,
    identifier: Option<Cow<'a, str>>,
    comm: Option<Cow<'a, str>>,
    transport: Option<Cow<'a, str>>,
    syslog_pid: Option<Cow<'a, str>>,
    pid: Option<Cow<'a, str>>,
    realtime: Option<Cow<'a, str>>,
    source_monotonic: Option<Cow<'a, str>>,
    priority: Option<Cow<'a, str>>,
}

/// An entry's line(s) to `out`, or [`PeeledKind::Empty`] without a `MESSAGE`. A message sent
/// through the journal's syslog socket keeps syslog's `[N-M]`: taken off (a piece after the
/// first is [`Part::Piece`]).
fn hand_out(line: u64, e: Entry<'_>, out: &mut dyn FnMut(Peeled<'_>)) {
    let kernel = e.transport.as_deref() == Some("kernel");
    let program = if kernel {
        Some(Cow::Borrowed("kernel"))
    } else {
        e.identifier.or(e.comm)
    };
    let stamp = Stamp {
        written: e
            .realtime
            .and_then(|t| t.parse::<i64>().ok())
            .map(Written::EpochMicros),
        monotonic_us: e
            .source_monotonic
            .filter(|_| kernel)
            .and_then(|t| t.parse().ok()),
    };
    let pid = e.syslog_pid.or(e.pid).and_then(|p| p.parse().ok());
    let priority = e.priority.and_then(|p| p.parse().ok());
    let Some(message) = e.message else {
        out(Peeled {
            line,
            kind: PeeledKind::Empty,
            stamp,
            priority,
        });
        return;
    };
    let (sequence, body) = if kernel {
        (None, &*message)
    } else {
        syslog::sequence(&message)
    };
    let piece = sequence.map_or(1, |(_, m)| m);
    lines_of(
        line,
        Cow::Borrowed(body),
        program,
        pid,
        if piece > 1 { Part::Piece } else { Part::First },
        stamp,
        &mut |p| out(Peeled { priority, ..p }),
    );
}

/// The fields of a `journalctl -o json` entry read here: every value is a string, or an array
/// of bytes when it is not valid UTF-8.
#[derive(Debug, Deserialize)]
struct JsonEntry<'a> {
    #[serde(rename = "MESSAGE", borrow)]
    message: Option<JsonValue<'a>>,
    #[serde(rename = "SYSLOG_IDENTIFIER", borrow)]
    identifier: Option<JsonValue<'a>>,
    #[serde(rename = "_COMM", borrow)]
    comm: Option<JsonValue<'a>>,
    #[serde(rename = "_TRANSPORT", borrow)]
    transport: Option<JsonValue<'a>>,
    #[serde(rename = "SYSLOG_PID", borrow)]
    syslog_pid: Option<JsonValue<'a>>,
    #[serde(rename = "_PID", borrow)]
    pid: Option<JsonValue<'a>>,
    #[serde(rename = "__REALTIME_TIMESTAMP", borrow)]
    realtime: Option<JsonValue<'a>>,
    #[serde(rename = "_SOURCE_MONOTONIC_TIMESTAMP", borrow)]
    source_monotonic: Option<JsonValue<'a>>,
    #[serde(rename = "PRIORITY", borrow)]
    priority: Option<JsonValue<'a>>,
}

/// A journal field's value in JSON.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum JsonValue<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    /// Bytes that are not valid UTF-8 (decoded lossily).
    Bytes(Vec<u8>),
    /// A field the journal holds several times: its values, of which the first is read.
    Several(Vec<serde_json::Value>),
    Other(serde::de::IgnoredAny),
}

impl<'a> JsonValue<'a> {
    fn text(self) -> Option<Cow<'a, str>> {
        match self {
            JsonValue::Text(t) => Some(t),
            JsonValue::Bytes(b) => Some(Cow::Owned(String::from_utf8_lossy(&b).into_owned())),
            JsonValue::Several(values) => match values.into_iter().next()? {
                serde_json::Value::String(s) => Some(Cow::Owned(s)),
                _ => None,
            },
            JsonValue::Other(_) => None,
        }
    }
}

/// One `journalctl -o json` entry (its text gathered from one or several lines); false when
/// it is not a JSON object.
// {"__REALTIME_TIMESTAMP":"1795287673835912","_TRANSPORT":"kernel","_SOURCE_MONOTONIC_TIMESTAMP":"5531234567","MESSAGE":"oom-kill:constraint=CONSTRAINT_MEMCG,…"}
pub(super) fn json_entry(number: u64, entry: &str, out: &mut dyn FnMut(Peeled<'_>)) -> bool {
    fn text(v: Option<JsonValue<'_>>) -> Option<Cow<'_, str>> {
        v.and_then(JsonValue::text)
    }
    let Ok(e) = serde_json::from_str::<JsonEntry<'_>>(entry) else {
        return false;
    };
    hand_out(
        number,
        Entry {
            message: text(e.message),
            identifier: text(e.identifier),
            comm: text(e.comm),
            transport: text(e.transport),
            syslog_pid: text(e.syslog_pid),
            pid: text(e.pid),
            realtime: text(e.realtime),
            source_monotonic: text(e.source_monotonic),
            priority: text(e.priority),
        },
        out,
    );
    true
}

/// Whether `text` is a line of a journal export: `KEY=…` or a binary field's `KEY`, the key
/// upper case letters, digits and `_`.
pub(super) fn is_export_field(text: &str) -> bool {
    let key = text.split_once('=').map_or(text, |(k, _)| k);
    !key.is_empty()
        && key.len() <= 64
        && key
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
        && !key.as_bytes()[0].is_ascii_digit()
}

/// A journal export entry being read.
#[derive(Debug, Default)]
pub(super) struct ExportEntry {
    fields: Fields,
    /// The entry's first line (0: no entry open).
    first: u64,
    /// A binary field being read: its key, the bytes still to come (when the length could be
    /// read) and the value so far.
    binary: Option<(String, Option<usize>, String)>,
}

impl ExportEntry {
    pub(super) fn is_empty(&self) -> bool {
        self.first == 0
    }

    pub(super) fn push(
        &mut self,
        number: u64,
        text: &str,
        max_bytes: usize,
        out: &mut dyn FnMut(Peeled<'_>),
    ) {
        if let Some((key, left, mut value)) = self.binary.take() {
            self.binary_line(number, key, left, &mut value, text, max_bytes, out);
            return;
        }
        if text.is_empty() {
            if self.first != 0 {
                self.end(out);
            }
            out(Peeled::bare(number, PeeledKind::Blank));
            return;
        }
        if self.first == 0 {
            self.first = number;
        } else {
            out(Peeled::bare(number, PeeledKind::Pending));
        }
        match text.split_once('=') {
            // The first line of an entry is handed out when the entry ends.
            Some((key, value)) if is_export_field(key) => self.fields.set(key, value.to_owned()),
            _ if is_export_field(text) => {
                self.binary = Some((text.to_owned(), None, String::new()));
            }
            _ => {
                // Not a field: the entry is given up, its lines counted as not understood.
                let first = std::mem::replace(&mut self.first, 0);
                self.fields = Fields::default();
                out(Peeled::bare(first, PeeledKind::Unrecognized));
            }
        }
    }

    /// A line of a binary field's value: the first starts with the 8-byte length. When the
    /// length could not be read (its bytes were not text), the value ends at this line.
    #[allow(clippy::too_many_arguments)]
    fn binary_line(
        &mut self,
        number: u64,
        key: String,
        left: Option<usize>,
        value: &mut String,
        text: &str,
        max_bytes: usize,
        out: &mut dyn FnMut(Peeled<'_>),
    ) {
        out(Peeled::bare(number, PeeledKind::Pending));
        let (left, data) = match left {
            Some(left) => {
                value.push('\n');
                (Some(left.saturating_sub(1)), text)
            }
            None => {
                let b = text.as_bytes();
                let length = (b.len() >= 8 && b[..8].is_ascii())
                    .then(|| u64::from_le_bytes(b[..8].try_into().unwrap_or_default()));
                match length {
                    Some(n) => (usize::try_from(n).ok(), &text[8..]),
                    // The length's bytes were decoded lossily: the value is this line.
                    None => (Some(0), text.get(8..).unwrap_or("")),
                }
            }
        };
        if value.len() + data.len() <= max_bytes {
            value.push_str(data);
        }
        let left = left.map(|l| l.saturating_sub(data.len()));
        match left {
            Some(l) if l > 0 => self.binary = Some((key, Some(l), std::mem::take(value))),
            _ => self.fields.set(&key, std::mem::take(value)),
        }
    }

    fn end(&mut self, out: &mut dyn FnMut(Peeled<'_>)) {
        let first = std::mem::replace(&mut self.first, 0);
        std::mem::take(&mut self.fields).hand_out(first, out);
    }

    /// End of input: an entry without its closing empty line is handed out as it is.
    pub(super) fn finish(&mut self, out: &mut dyn FnMut(Peeled<'_>)) {
        if let Some((key, _, value)) = self.binary.take() {
            self.fields.set(&key, value);
        }
        if self.first != 0 {
            self.end(out);
        }
    }
}
