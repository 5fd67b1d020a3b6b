//! Google Cloud Logging entries (`LogEntry`) of PostgreSQL: one JSON object per line (a log
//! sink's export) or the array `gcloud logging read --format=json` prints (gathered by the
//! peeler). (`LogEntry`: https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry.)
//!
//! * Cloud SQL and AlloyDB write the server's line as `textPayload`
//!   (`cloudsql.googleapis.com%2Fpostgres.log`, `alloydb.googleapis.com%2Fpostgres.log`); older
//!   Cloud SQL instances wrote it without a time (`[153735]: [10-1] db=…,user=… LOG:  …`), so
//!   the entry's `timestamp` is the record's.
//! * The Ops Agent's PostgreSQL receiver writes each line's parts as `jsonPayload` (`level`,
//!   `message`, `tid`; GoogleCloudPlatform/ops-agent `apps/postgresql.go`,
//!   `transformation_test/testdata/logging_processor-postgresql`): handed out as the server's
//!   stderr line with PostgreSQL's default prefix, built from the entry's `timestamp` and
//!   `tid` ([`Content::DefaultStderr`]).
//!
//! An entry of another log (`logName` not naming `postgres`), or without a payload, is
//! another program's.

use std::borrow::Cow;

use serde::Deserialize;

use super::{Content, Part, Peeled, PeeledKind, Stamp, Written, lines_of};

/// The keys of a `LogEntry` read here.
#[derive(Debug, Deserialize)]
struct LogEntry<'a> {
    #[serde(rename = "textPayload", borrow)]
    text_payload: Option<Cow<'a, str>>,
    #[serde(borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "logName", borrow)]
    log_name: Option<Cow<'a, str>>,
    #[serde(rename = "jsonPayload", borrow)]
    json_payload: Option<JsonPayload<'a>>,
}

/// The Ops Agent's PostgreSQL fields.
#[derive(Debug, Deserialize)]
struct JsonPayload<'a> {
    #[serde(borrow)]
    level: Option<Cow<'a, str>>,
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
    tid: Option<f64>,
}

/// Whether a line is a `LogEntry` whose payload is the Ops Agent's PostgreSQL fields.
pub(super) fn is_cloud_sql_json_payload(text: &str) -> bool {
    text.contains("\"jsonPayload\"") && text.contains("\"level\"") && text.contains("\"tid\"")
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
    match (e.text_payload, e.json_payload) {
        (Some(text), _) => lines_of(
            first_line,
            text,
            Some(program),
            None,
            Part::First,
            stamp,
            out,
        ),
        (
            None,
            Some(JsonPayload {
                level: Some(level),
                message: Some(message),
                tid,
            }),
        ) => {
            let Some(prefix) = default_prefix(&stamp, tid) else {
                out(Peeled {
                    line: first_line,
                    kind: PeeledKind::Unrecognized,
                    stamp,
                    priority: None,
                });
                return true;
            };
            let message = message.trim_end_matches('\n');
            for (k, part) in message.split('\n').enumerate() {
                let text = if k == 0 {
                    Cow::Owned(format!("{prefix}{level}:  {part}"))
                } else {
                    Cow::Borrowed(part)
                };
                out(Peeled {
                    line: first_line,
                    kind: PeeledKind::Line {
                        text,
                        program: Some(program.clone()),
                        pid: None,
                        part: if k == 0 { Part::First } else { Part::NextLine },
                        content: Content::DefaultStderr,
                    },
                    stamp: stamp.clone(),
                    priority: None,
                });
            }
        }
        _ => out(Peeled {
            line: first_line,
            kind: PeeledKind::Empty,
            stamp,
            priority: None,
        }),
    }
    true
}

/// `2025-07-21 10:14:21.123 UTC [21763] `: PostgreSQL's default prefix for an entry's time and
/// thread id.
fn default_prefix(stamp: &Stamp<'_>, tid: Option<f64>) -> Option<String> {
    let utc = stamp.utc()?;
    let tid = tid.filter(|t| t.is_finite() && *t >= 0.0 && *t < 4.3e9)? as u64;
    let c = utc.to_zoned(jiff::tz::TimeZone::UTC).datetime();
    Some(format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} UTC [{tid}] ",
        c.year(),
        c.month(),
        c.day(),
        c.hour(),
        c.minute(),
        c.second(),
        c.subsec_nanosecond() / 1_000_000
    ))
}
