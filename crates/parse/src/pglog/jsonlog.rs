//! jsonlog (`log_destination = 'jsonlog'`, PostgreSQL ≥ 15): one JSON object per line, read with
//! serde_json. Keys absent from a record are simply missing.
//!
//! ```text
//! {"timestamp":"2026-11-21 17:57:13.121 UTC","pid":18557,"session_id":"6b01db79.487d","line_num":2,"session_start":"2026-11-21 17:57:13 UTC","txid":0,"error_severity":"FATAL","state_code":"53100","message":"could not resize shared memory segment \"/PostgreSQL.1542476226\" to 1048576 bytes: No space left on device","backend_type":"startup","query_id":0}
//! ```

use std::borrow::Cow;
use std::collections::VecDeque;

use serde::Deserialize;

use super::severity::{self, Tag};
use super::translate::{self, Languages};
use super::{Counters, PgRecord, classify, time};

/// The keys PostgreSQL writes (src/backend/utils/error/jsonlog.c).
#[derive(Debug, Deserialize)]
struct JsonRecord<'a> {
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(borrow)]
    user: Option<Cow<'a, str>>,
    #[serde(borrow)]
    dbname: Option<Cow<'a, str>>,
    pid: Option<u32>,
    #[serde(borrow)]
    remote_host: Option<Cow<'a, str>>,
    remote_port: Option<u32>,
    #[serde(borrow)]
    session_id: Option<Cow<'a, str>>,
    line_num: Option<u64>,
    #[serde(borrow)]
    ps: Option<Cow<'a, str>>,
    #[serde(borrow)]
    session_start: Option<Cow<'a, str>>,
    #[serde(borrow)]
    vxid: Option<Cow<'a, str>>,
    txid: Option<u64>,
    #[serde(borrow)]
    error_severity: Option<Cow<'a, str>>,
    #[serde(borrow)]
    state_code: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
    #[serde(borrow)]
    detail: Option<Cow<'a, str>>,
    #[serde(borrow)]
    hint: Option<Cow<'a, str>>,
    #[serde(borrow)]
    internal_query: Option<Cow<'a, str>>,
    #[serde(borrow)]
    context: Option<Cow<'a, str>>,
    #[serde(borrow)]
    statement: Option<Cow<'a, str>>,
    #[serde(borrow)]
    func_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    file_name: Option<Cow<'a, str>>,
    file_line_num: Option<u64>,
    #[serde(borrow)]
    application_name: Option<Cow<'a, str>>,
    #[serde(borrow)]
    backend_type: Option<Cow<'a, str>>,
    leader_pid: Option<u32>,
    query_id: Option<i64>,
}

/// Reads jsonlog lines.
pub(crate) struct JsonReader {
    langs: Languages,
    pub(crate) counters: Counters,
    out: VecDeque<Box<PgRecord>>,
}

impl JsonReader {
    pub(crate) fn new() -> Self {
        JsonReader {
            langs: Languages::default(),
            counters: Counters::default(),
            out: VecDeque::new(),
        }
    }

    /// True when both readers read further lines the same way (same languages seen).
    pub(crate) fn same_state(&self, other: &JsonReader) -> bool {
        self.langs == other.langs && self.out.is_empty() && other.out.is_empty()
    }

    pub(crate) fn pop(&mut self) -> Option<Box<PgRecord>> {
        self.out.pop_front()
    }

    /// The line of the next finished record, if any.
    pub(crate) fn peek_line(&self) -> Option<u64> {
        self.out.front().map(|r| r.line)
    }

    /// Records started so far, and the first line of the latest (counted as they are read).
    pub(crate) fn started(&self) -> (u64, u64) {
        (
            self.counters.stats.records,
            self.out.back().map_or(0, |r| r.line),
        )
    }

    /// Feeds one line (without its newline).
    pub(crate) fn push(&mut self, number: u64, text: &str) {
        if text.trim().is_empty() {
            self.counters.blank_lines += 1;
            return;
        }
        let parsed = serde_json::from_str::<JsonRecord<'_>>(text)
            .ok()
            .and_then(|j| record_of(j, &mut self.langs));
        match parsed {
            Some((mut record, unreadable_stamp)) => {
                if let Some(stamp) = unreadable_stamp {
                    self.counters.unreadable_stamps.add(number, &stamp);
                }
                record.line = number;
                record.end_line = number;
                classify::classify_record(&mut record, self.langs);
                self.counters.stats.records += 1;
                self.out.push_back(Box::new(record));
            }
            None => self.counters.stats.unrecognized(number, text),
        }
    }
}

/// One object → a record (not yet classified), with its `timestamp` when that is no time (a
/// month 13): the record is kept without one.
fn record_of(j: JsonRecord<'_>, langs: &mut Languages) -> Option<(PgRecord, Option<String>)> {
    let own = |c: Option<Cow<'_, str>>| c.map(Cow::into_owned);
    let (tag, lang) = severity::word(j.error_severity.as_deref()?)?;
    let Tag::Main(severity) = tag else {
        return None;
    };
    if let Some(lang) = lang {
        langs.add(lang);
    }
    let client = j.remote_host.map(|h| match j.remote_port {
        Some(port) => format!("{h}({port})"),
        None => h.into_owned(),
    });
    let location = match (j.func_name, j.file_name, j.file_line_num) {
        (Some(f), Some(file), Some(line)) => Some(format!("{f}, {file}:{line}")),
        (None, Some(file), Some(line)) => Some(format!("{file}:{line}")),
        _ => None,
    };
    let time = j
        .timestamp
        .as_deref()
        .and_then(|t| time::pg_time_from_stamp(t, true));
    let unreadable_stamp = match (&time, &j.timestamp) {
        (None, Some(stamp)) => Some(stamp.to_string()),
        _ => None,
    };
    let record = PgRecord {
        time,
        pid: j.pid,
        session_id: own(j.session_id),
        session_line: j.line_num,
        user: own(j.user),
        database: own(j.dbname),
        application: own(j.application_name),
        client,
        backend_type: own(j.backend_type),
        sqlstate: own(j.state_code),
        command_tag: own(j.ps),
        session_start: own(j.session_start),
        xid: j.txid,
        vxid: own(j.vxid),
        leader_pid: j.leader_pid,
        query_id: j.query_id,
        severity: Some(severity),
        message: own(j.message).unwrap_or_default(),
        detail: own(j.detail),
        hint: own(j.hint),
        context: own(j.context),
        statement: own(j.statement),
        query: own(j.internal_query),
        location,
        language: lang.map(translate::language_name),
        ..PgRecord::default()
    };
    Some((record, unreadable_stamp))
}

/// True when `line` looks like a jsonlog line.
pub(crate) fn looks_like_line(line: &str) -> bool {
    line.starts_with("{\"timestamp\":\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_record_and_counts_garbage() {
        let mut r = JsonReader::new();
        r.push(
            1,
            r#"{"timestamp":"2026-11-21 17:57:40.817 UTC","user":"postgres","dbname":"postgres","pid":20424,"remote_host":"[local]","session_id":"6b01db84.4fc8","line_num":1,"ps":"SELECT","session_start":"2026-11-21 17:57:40 UTC","vxid":"3/2","txid":0,"error_severity":"ERROR","state_code":"53200","message":"out of memory","detail":"Failed on request of size 1000000004 in memory context \"MessageContext\".","statement":"SELECT length(repeat('x', 1000000000))","application_name":"psql","backend_type":"client backend","query_id":0}"#,
        );
        r.push(2, "{\"timestamp\": 3");
        r.push(3, "");
        let rec = r.pop().unwrap();
        assert_eq!(rec.client.as_deref(), Some("[local]"));
        assert_eq!(
            rec.event,
            Some(super::super::PgEvent::OutOfMemory {
                request_bytes: Some(1000000004),
                memory_context: Some("MessageContext".into())
            })
        );
        assert_eq!(r.counters.stats.unrecognized_lines, 1);
        assert_eq!(r.counters.blank_lines, 1);
    }
}
