//! Google Cloud Logging entries (`LogEntry`) of Cloud SQL and AlloyDB for PostgreSQL: one JSON
//! object per line (a log sink's export) or the array `gcloud logging read --format=json`
//! prints (gathered by the peeler). The PostgreSQL line is `textPayload`; an entry of another
//! log (`logName` not naming `postgres`), or without a payload, is another program's.
//! (`LogEntry`: https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry.)

use std::borrow::Cow;

use serde::Deserialize;

use super::{Part, Peeled, Stamp, Written, lines_of};

/// The keys of a `LogEntry` read here.
#[derive(Debug, Deserialize)]
struct LogEntry<'a> {
    #[serde(rename = "textPayload", borrow)]
    text_payload: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "logName", borrow)]
    log_name: Option<Cow<'a, str>>,
}

/// Whether a line is a `LogEntry` whose payload is JSON in a form read here.
pub(super) fn is_cloud_sql_json_payload(_text: &str) -> bool {
    false
}

/// One entry (its text gathered from one or several lines); false when it is not a JSON
/// object.
// {"insertId":"s=…;i=7","logName":"projects/p/logs/cloudsql.googleapis.com%2Fpostgres.log","resource":{…},"severity":"INFO","textPayload":"2026-11-21 19:02:19.187 UTC [5003]: [3-1] db=,user= LOG:  redo starts at 0/1D5A9D0","timestamp":"2026-11-21T19:02:19.187000Z"}
pub(super) fn cloud_logging_entry(
    first_line: u64,
    entry: &str,
    out: &mut dyn FnMut(Peeled<'_>),
) -> bool {
    let Ok(e) = serde_json::from_str::<LogEntry<'_>>(entry) else {
        return false;
    };
    let program = match &e.log_name {
        Some(name) if !name.contains("postgres") => name.clone(),
        _ => Cow::Borrowed("postgres"),
    };
    let stamp = Stamp {
        written: e.timestamp.map(Written::Rfc3339),
        monotonic_us: None,
    };
    match e.text_payload {
        Some(text) => lines_of(
            first_line,
            text,
            Some(program),
            None,
            Part::First,
            stamp,
            out,
        ),
        None => out(Peeled {
            line: first_line,
            kind: super::PeeledKind::Empty,
            stamp,
            priority: None,
        }),
    }
    true
}
