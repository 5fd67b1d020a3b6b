//! The journal's exports (`journalctl -o json`, `-o export`) and RFC 5424 relays: entries that
//! name the program that wrote them.
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

use jiff::Timestamp;

use super::{Peeled, PeeledKind, Stamp, lines_of};

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
            _ => return,
        };
        *slot = Some(value);
    }

    /// The entry's line(s) to `out`, or [`PeeledKind::Empty`] without a `MESSAGE`.
    fn hand_out(self, line: u64, out: &mut dyn FnMut(Peeled<'_>)) {
        let kernel = self.transport.as_deref() == Some("kernel");
        let program = if kernel {
            Some("kernel".to_owned())
        } else {
            self.identifier.or(self.comm)
        };
        let stamp = Stamp {
            utc: self
                .realtime
                .and_then(|t| t.parse::<i64>().ok())
                .and_then(|us| Timestamp::from_microsecond(us).ok()),
            monotonic_us: self
                .source_monotonic
                .filter(|_| kernel)
                .and_then(|t| t.parse().ok()),
        };
        let pid = self.syslog_pid.or(self.pid).and_then(|p| p.parse().ok());
        match self.message {
            Some(message) => lines_of(
                line,
                Cow::Owned(message),
                program.map(Cow::Owned),
                pid,
                stamp,
                out,
            ),
            None => out(Peeled {
                line,
                kind: PeeledKind::Empty,
                stamp,
            }),
        }
    }
}

// {"__REALTIME_TIMESTAMP":"1795287673835912","_TRANSPORT":"kernel","_SOURCE_MONOTONIC_TIMESTAMP":"5531234567","MESSAGE":"oom-kill:constraint=CONSTRAINT_MEMCG,…"}
pub(super) fn json_line(number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
    if text.trim().is_empty() {
        out(Peeled {
            line: number,
            kind: PeeledKind::Blank,
            stamp: Stamp::default(),
        });
        return;
    }
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(text) else {
        out(Peeled {
            line: number,
            kind: PeeledKind::Unrecognized,
            stamp: Stamp::default(),
        });
        return;
    };
    let mut fields = Fields::default();
    for (key, value) in map {
        let value = match value {
            serde_json::Value::String(s) => s,
            // Bytes that are not text: decoded lossily.
            serde_json::Value::Array(bytes) => {
                let bytes: Vec<u8> = bytes
                    .iter()
                    .filter_map(|b| b.as_u64().and_then(|b| u8::try_from(b).ok()))
                    .collect();
                String::from_utf8_lossy(&bytes).into_owned()
            }
            _ => continue,
        };
        fields.set(&key, value);
    }
    fields.hand_out(number, out);
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
            out(Peeled {
                line: number,
                kind: PeeledKind::Blank,
                stamp: Stamp::default(),
            });
            return;
        }
        if self.first == 0 {
            self.first = number;
        } else {
            out(Peeled {
                line: number,
                kind: PeeledKind::Pending,
                stamp: Stamp::default(),
            });
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
                out(Peeled {
                    line: first,
                    kind: PeeledKind::Unrecognized,
                    stamp: Stamp::default(),
                });
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
        out(Peeled {
            line: number,
            kind: PeeledKind::Pending,
            stamp: Stamp::default(),
        });
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

/// An RFC 5424 line taken apart: (stamp, program, pid, message).
pub(super) fn rfc5424(text: &str) -> Option<(Option<&str>, &str, Option<u32>, &str)> {
    let line = crate::pglog::syslog_rfc5424(text)?;
    Some(line)
}

// <6>1 2026-11-21T19:01:13.835739+00:00 dbhost kernel - - - Memory cgroup out of memory: Killed process 1366 (postgres) …
pub(super) fn rfc5424_line(number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
    if text.trim().is_empty() {
        out(Peeled {
            line: number,
            kind: PeeledKind::Blank,
            stamp: Stamp::default(),
        });
        return;
    }
    match rfc5424(text) {
        Some((stamp, program, pid, message)) => {
            let stamp = Stamp {
                utc: stamp.and_then(super::parse_rfc3339),
                monotonic_us: None,
            };
            lines_of(
                number,
                Cow::Borrowed(message),
                Some(Cow::Borrowed(program)),
                pid,
                stamp,
                out,
            );
        }
        None => out(Peeled {
            line: number,
            kind: PeeledKind::Unrecognized,
            stamp: Stamp::default(),
        }),
    }
}
