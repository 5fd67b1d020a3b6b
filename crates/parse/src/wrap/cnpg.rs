//! CloudNativePG: the instance manager writes every csvlog row PostgreSQL produces as a JSON
//! line on the pod's standard output, the csvlog column names as keys of `record` (`kubectl
//! logs`, possibly with `--timestamps` before each line):
//!
//! ```text
//! {"level":"info","ts":"2026-11-21T19:02:40.118000Z","logger":"postgres","msg":"record","logging_pod":"cluster-example-1","record":{"log_time":"2026-11-21 19:02:40.118 UTC","user_name":"","database_name":"","process_id":"6052","connection_from":"","session_id":"6b01eab0.17a4","session_line_num":"6","command_tag":"","session_start_time":"2026-11-21 19:02:08 UTC","virtual_transaction_id":"","transaction_id":"0","error_severity":"LOG","sql_state_code":"00000","message":"server process (PID 6362) was terminated by signal 9: Killed","detail":"Failed process was running: SELECT count(*)\n  FROM pgbench_accounts AS a, pg_sleep(600) AS s\n WHERE a.abalance >= 0;","backend_type":"postmaster","query_id":"0"}}
//! ```
//!
//! The record is turned back into its csvlog row ([`Content::CsvRow`]), so the csvlog reader
//! gives exactly the record csvlog gives. Before the logging collector starts, the postmaster's
//! own stderr lines come as `"logger":"postgres"` lines whose `msg` is the line itself
//! (`2022-11-27 18:48:18.943 UTC [28] LOG:  redirecting log output to logging collector
//! process`): handed out as [`Content::DefaultStderr`]. Lines of other loggers (the instance
//! manager's own, `pg_controldata`, `wal-archive`, pgaudit) and of the instance manager without
//! a logger (`{"level":"info","ts":…,"msg":"Readiness probe failing",…}`) are other programs',
//! and so are the JSON strings `kubectl cnpg report cluster --logs` writes around a
//! container's previous log (`"====== Beginning of Previous Log ====="`).
//! The time is `ts` (RFC 3339, or seconds since the epoch).

use std::borrow::Cow;

use serde::Deserialize;

use super::{Content, Part, Peeled, PeeledKind, Stamp, Written};

/// csvlog's columns in order (PostgreSQL 13–17; older servers leave the last ones out).
const CSV_COLUMNS: [&str; 26] = [
    "log_time",
    "user_name",
    "database_name",
    "process_id",
    "connection_from",
    "session_id",
    "session_line_num",
    "command_tag",
    "session_start_time",
    "virtual_transaction_id",
    "transaction_id",
    "error_severity",
    "sql_state_code",
    "message",
    "detail",
    "hint",
    "internal_query",
    "internal_query_pos",
    "context",
    "query",
    "query_pos",
    "location",
    "application_name",
    "backend_type",
    "leader_pid",
    "query_id",
];

/// The instance manager's line.
#[derive(Debug, Deserialize)]
struct CnpgLine<'a> {
    #[serde(borrow)]
    logger: Option<Cow<'a, str>>,
    #[serde(borrow)]
    msg: Option<Cow<'a, str>>,
    logging_pod: Option<serde::de::IgnoredAny>,
    level: Option<serde::de::IgnoredAny>,
    ts: Option<Ts<'a>>,
    record: Option<serde_json::Map<String, serde_json::Value>>,
}

/// `ts`: RFC 3339 text or seconds since the epoch.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Ts<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Seconds(f64),
    Other(serde::de::IgnoredAny),
}

impl<'a> Ts<'a> {
    fn written(self) -> Option<Written<'a>> {
        match self {
            Ts::Text(t) => Some(Written::Rfc3339(t)),
            Ts::Seconds(s) if s.is_finite() && s.abs() < 1e13 => {
                Some(Written::EpochMicros((s * 1e6).round() as i64))
            }
            Ts::Seconds(_) | Ts::Other(_) => None,
        }
    }
}

/// One line of a CloudNativePG pod's log.
pub(super) fn line(number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
    if text.trim().is_empty() {
        out(Peeled::bare(number, PeeledKind::Blank));
        return;
    }
    let json = strip_kubectl_stamp(text);
    if json.starts_with('"') && serde_json::from_str::<Cow<'_, str>>(json).is_ok() {
        // `kubectl cnpg report cluster --logs` writes its own lines as JSON strings around a
        // container's previous log (`"====== Beginning of Previous Log ====="`, `"Error
        // fetching previous logs: …"`, `"====== End of Previous Log ====="`).
        out(line_of(
            number,
            Cow::Borrowed(""),
            Cow::Borrowed("kubectl-cnpg-report"),
            Part::First,
            Content::Text,
            Stamp {
                written: None,
                monotonic_us: None,
            },
        ));
        return;
    }
    let Ok(line) = serde_json::from_str::<CnpgLine<'_>>(json) else {
        out(Peeled::bare(number, PeeledKind::Unrecognized));
        return;
    };
    let stamp = Stamp {
        written: line.ts.and_then(Ts::written),
        monotonic_us: None,
    };
    let entry =
        |text, program, part, content| line_of(number, text, program, part, content, stamp.clone());
    match (line.logger, line.record, line.msg) {
        (Some(logger), Some(record), _) if logger == "postgres" => {
            let mut row = String::new();
            csv_row(&record, &mut row);
            out(entry(Cow::Owned(row), logger, Part::First, Content::CsvRow));
        }
        (Some(logger), None, Some(msg)) if logger == "postgres" => {
            let msg = msg.trim_end_matches('\n');
            for (k, part) in msg.split('\n').enumerate() {
                let part_kind = if k == 0 { Part::First } else { Part::NextLine };
                out(entry(
                    Cow::Borrowed(part),
                    Cow::Borrowed("postgres"),
                    part_kind,
                    Content::DefaultStderr,
                ));
            }
        }
        (Some(logger), _, _) => out(entry(Cow::Borrowed(""), logger, Part::First, Content::Text)),
        // The instance manager's own lines carry no logger.
        (None, _, Some(_)) if line.logging_pod.is_some() || line.level.is_some() => out(entry(
            Cow::Borrowed(""),
            Cow::Borrowed("instance-manager"),
            Part::First,
            Content::Text,
        )),
        (None, _, _) => out(Peeled::bare(number, PeeledKind::Unrecognized)),
    }
}

/// A line of the pod's log as a [`Peeled`] line.
fn line_of<'a>(
    number: u64,
    text: Cow<'a, str>,
    program: Cow<'a, str>,
    part: Part,
    content: Content,
    stamp: Stamp<'a>,
) -> Peeled<'a> {
    Peeled {
        line: number,
        kind: PeeledKind::Line {
            text,
            program: Some(program),
            pid: None,
            part,
            content,
        },
        stamp,
        priority: None,
    }
}

/// `kubectl logs --timestamps` puts `2026-11-21T19:02:40.118334567Z ` before each line.
fn strip_kubectl_stamp(text: &str) -> &str {
    match text.split_once(' ') {
        Some((stamp, json))
            if json.starts_with('{') && stamp.len() >= 20 && stamp.as_bytes()[10] == b'T' =>
        {
            json
        }
        _ => text,
    }
}

/// The csvlog row of a record: empty (unquoted) where a key is missing or empty, every other
/// value quoted with `"` doubled.
fn csv_row(record: &serde_json::Map<String, serde_json::Value>, row: &mut String) {
    row.clear();
    for (i, column) in CSV_COLUMNS.iter().enumerate() {
        if i > 0 {
            row.push(',');
        }
        let value = match record.get(*column) {
            Some(serde_json::Value::String(s)) => std::borrow::Cow::Borrowed(s.as_str()),
            Some(serde_json::Value::Number(n)) => std::borrow::Cow::Owned(n.to_string()),
            _ => continue,
        };
        if value.is_empty() {
            continue;
        }
        row.push('"');
        for (k, part) in value.split('"').enumerate() {
            if k > 0 {
                row.push_str("\"\"");
            }
            row.push_str(part);
        }
        row.push('"');
    }
}
