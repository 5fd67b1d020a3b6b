//! Azure Database for PostgreSQL (single server and flexible server) logs exported from Azure
//! Monitor: each row names the message's fields, which are put back into PostgreSQL's csvlog
//! row ([`Content::CsvRow`]) so the csvlog reader reads them as it reads csvlog.
//!
//! * Log Analytics' `AzureDiagnostics` table, category `PostgreSQLLogs`: `TimeGenerated`,
//!   `Category`, `Message` (the primary message), `errorLevel_s`, `Detail_s`, `Prefix_s`,
//!   `processId_d`, `sqlerrcode_s`, … (Microsoft's "Logs in Azure Database for PostgreSQL",
//!   `articles/postgresql/concepts-server-logs.md`, field table); the flexible server's
//!   resource table `PGSQLServerLogs` (`ErrorLevel`, `Message`, `ProcessId`, `SqlerrCode`,
//!   `Detail`, `Hint`, `Context`, `BackendType`, …); the `record_*_s` columns (the csvlog
//!   column names) pgBadger reads (`parse_jsonazure_input`).
//! * As a CSV the portal exports (a header row naming the columns, `TimeGenerated [UTC]`), as
//!   JSON `az monitor log-analytics query` prints (an array of rows), or as resource logs sent
//!   to a storage account or an event hub (`{"records": [{"time", "category", "properties":
//!   {"message", "errorLevel", "prefix", …}}]}`, or one record per line).
//!
//! Column names are compared without case, a `record_` before and Log Analytics' type suffix
//! (`_s`, `_d`) after. A row of another category (`PostgreSQLFlexSessions`, …) is another
//! program's. `TimeGenerated` (or `time`) is the wrapper's time, and the record's own when the
//! row has no time of PostgreSQL's.

use std::borrow::Cow;
use std::collections::HashMap;

use super::csvrows::{CsvRows, Row, fields};
use super::records::{Found, LineKind, RecordGather};
use super::{Content, Part, Peeled, PeeledKind, Stamp, Written};

/// Reads an Azure export, JSON or CSV (the first line that says decides).
#[derive(Debug)]
pub(super) struct Reader {
    json: RecordGather,
    csv: CsvRows,
    /// The CSV's columns, once its header is read.
    header: Option<Vec<String>>,
    form: Option<Form>,
    max_bytes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Json,
    Csv,
}

/// Whether a line is one of an Azure export: a JSON field naming the `PostgreSQLLogs` category
/// or a `record_*_s` column, or a CSV header with `TimeGenerated` and `Message`.
pub(super) fn is_azure_line(text: &str) -> bool {
    if text.contains("\"PostgreSQLLogs\"") || text.contains("\"record_message_s\"") {
        return true;
    }
    let t = text.trim_start_matches('\u{feff}');
    let header =
        !t.starts_with('{') && !t.starts_with('[') && !t.starts_with('"') || t.starts_with("\"T");
    header
        && t.contains("TimeGenerated")
        && (t.contains(",Message") || t.contains(",\"Message") || t.contains("errorLevel"))
}

impl Reader {
    pub(super) fn new(max_bytes: usize) -> Self {
        Reader {
            json: RecordGather::new(max_bytes),
            csv: CsvRows::default(),
            header: None,
            form: None,
            max_bytes,
        }
    }

    pub(super) fn is_idle(&self) -> bool {
        !self.json.is_open() && !self.csv.is_open()
    }

    /// True when both are idle and read further lines the same way: the same form, the same
    /// JSON state (a record given up, the last key read), the same CSV header.
    pub(super) fn same_state(&self, other: &Reader) -> bool {
        self.is_idle()
            && other.is_idle()
            && self.form == other.form
            && self.header == other.header
            && self.json == other.json
    }

    pub(super) fn push(&mut self, number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
        let text = if number == 1 {
            text.trim_start_matches('\u{feff}')
        } else {
            text
        };
        if text.trim().is_empty() && self.is_idle() {
            out(Peeled::bare(number, PeeledKind::Blank));
            return;
        }
        if self.form.is_none() {
            let t = text.trim_start();
            self.form = Some(if t.starts_with('{') || t.starts_with('[') {
                Form::Json
            } else {
                Form::Csv
            });
        }
        if self.form == Some(Form::Json) {
            let mut ended = false;
            let kind = self.json.push(number, text, &mut |found| {
                ended = true;
                json_record(found, out);
            });
            if !ended {
                out(Peeled::bare(
                    number,
                    match kind {
                        LineKind::Layout => PeeledKind::Pending,
                        LineKind::NotJson => PeeledKind::Unrecognized,
                    },
                ));
            }
            return;
        }
        let (first, row) = match self.csv.push(number, text, self.max_bytes) {
            Row::Pending => {
                out(Peeled::bare(number, PeeledKind::Pending));
                return;
            }
            Row::Complete(first, _, row) => (first, row),
        };
        let values = fields(&row);
        match &self.header {
            None if values
                .iter()
                .any(|v| key(v) == "timegenerated" || key(v) == "message") =>
            {
                self.header = Some(values.iter().map(|v| key(v)).collect());
                out(Peeled::bare(first, PeeledKind::Header));
            }
            None => out(Peeled::bare(first, PeeledKind::Unrecognized)),
            Some(header) => {
                let row: HashMap<String, Cow<'_, str>> =
                    header.iter().cloned().zip(values).collect();
                hand_out(first, &row, out);
            }
        }
    }

    pub(super) fn finish(&mut self, out: &mut dyn FnMut(Peeled<'_>)) {
        let open = self.json.take_open().or_else(|| self.csv.take_open());
        if let Some((first_line, head, lines)) = open {
            out(Peeled::bare(
                first_line,
                PeeledKind::Broken {
                    head: head.lines().next().unwrap_or("").to_owned(),
                    lines,
                    pending: lines,
                },
            ));
        }
    }
}

/// A column's name as compared: lower case, without `record_`, a type suffix, ` [UTC]`.
fn key(name: &str) -> String {
    let name = name.trim().trim_end_matches(" [UTC]");
    let name = name.strip_prefix("record_").unwrap_or(name);
    let name = ["_s", "_d", "_g", "_t", "_b"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .unwrap_or(name);
    name.to_ascii_lowercase()
}

/// One JSON record: its fields, and those of its `properties` object.
fn json_record(found: Found, out: &mut dyn FnMut(Peeled<'_>)) {
    let Some((first_line, text, lines)) = found.record_or_broken(out) else {
        return;
    };
    let Ok(serde_json::Value::Object(map)) = serde_json::from_str(&text) else {
        out(Peeled::bare(
            first_line,
            PeeledKind::Broken {
                head: text.lines().next().unwrap_or("").to_owned(),
                lines,
                pending: lines.saturating_sub(1),
            },
        ));
        return;
    };
    let mut row: HashMap<String, Cow<'_, str>> = HashMap::new();
    let mut put = |k: &str, v: &serde_json::Value| {
        let value = match v {
            serde_json::Value::String(s) => Cow::Owned(s.clone()),
            serde_json::Value::Number(n) => Cow::Owned(number_text(n)),
            _ => return,
        };
        row.entry(key(k)).or_insert(value);
    };
    for (k, v) in &map {
        put(k, v);
    }
    if let Some(serde_json::Value::Object(props)) = map.get("properties") {
        for (k, v) in props {
            put(k, v);
        }
    }
    hand_out(first_line, &row, out);
}

/// A number as the csvlog row wants it: `1234` for `1234.0` (Log Analytics' `_d` columns).
fn number_text(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i.to_string(),
        (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
        _ => n.to_string(),
    }
}

/// The csvlog columns, each with the names an Azure export gives it.
const COLUMNS: [&[&str]; 26] = [
    &["log_time", "timestamp"],
    &["user_name", "username"],
    &["database_name", "databasename"],
    &["process_id", "processid"],
    &["connection_from"],
    &["session_id", "sessionid"],
    &["session_line_num"],
    &["command_tag"],
    &["session_start_time"],
    &["virtual_transaction_id"],
    &["transaction_id"],
    &["error_severity", "errorlevel"],
    &["sql_state_code", "sqlerrcode"],
    &["message"],
    &["detail", "detaillog"],
    &["hint"],
    &["internal_query"],
    &["internal_query_pos"],
    &["context"],
    &["query"],
    &["query_pos"],
    &["location"],
    &["application_name", "applicationname"],
    &["backend_type", "backendtype"],
    &["leader_pid"],
    &["query_id", "queryid"],
];

/// One row (column → value) as a csvlog row, or another category's line.
fn hand_out(first_line: u64, row: &HashMap<String, Cow<'_, str>>, out: &mut dyn FnMut(Peeled<'_>)) {
    let get = |names: &[&str]| {
        names
            .iter()
            .find_map(|n| row.get(*n).filter(|v| !v.is_empty()))
    };
    let generated = get(&["timegenerated", "time"]);
    let stamp = Stamp {
        written: generated
            .filter(|t| t.as_bytes().get(10) == Some(&b'T'))
            .map(|t| Written::Rfc3339(Cow::Owned(t.to_string()))),
        monotonic_us: None,
    };
    let category = get(&["category"]).map(|c| c.to_string());
    if let Some(c) = &category
        && !c.eq_ignore_ascii_case("PostgreSQLLogs")
    {
        out(Peeled {
            line: first_line,
            kind: PeeledKind::Line {
                text: Cow::Borrowed(""),
                program: Some(Cow::Owned(c.clone())),
                pid: None,
                part: Part::First,
                content: Content::Text,
            },
            stamp,
            priority: None,
        });
        return;
    }
    if get(&["message"]).is_none() && get(&["errorlevel", "error_severity"]).is_none() {
        out(Peeled {
            line: first_line,
            kind: PeeledKind::Empty,
            stamp,
            priority: None,
        });
        return;
    }
    let mut csv = String::new();
    for (i, names) in COLUMNS.iter().enumerate() {
        if i > 0 {
            csv.push(',');
        }
        let value = match (i, get(names)) {
            (_, Some(v)) if i == 0 => Some(pg_time(v).unwrap_or_else(|| v.to_string())),
            (0, None) => generated.and_then(|t| pg_time(t)),
            (_, v) => v.map(|v| v.to_string()),
        };
        if let Some(v) = value {
            csv.push('"');
            csv.push_str(&v.replace('"', "\"\""));
            csv.push('"');
        }
    }
    out(Peeled {
        line: first_line,
        kind: PeeledKind::Line {
            text: Cow::Owned(csv),
            program: Some(Cow::Borrowed("postgres")),
            pid: None,
            part: Part::First,
            content: Content::CsvRow,
        },
        stamp,
        priority: None,
    });
}

/// An ISO time (`2026-11-21T19:01:13.8357391Z`) as csvlog's `%m` in UTC
/// (`2026-11-21 19:01:13.835 UTC`); a time already in PostgreSQL's form as it is.
fn pg_time(text: &str) -> Option<String> {
    if text.as_bytes().get(10) == Some(&b' ') {
        return Some(text.to_owned());
    }
    let utc = super::container::parse_rfc3339(text)?;
    let civil = utc.to_zoned(jiff::tz::TimeZone::UTC).datetime();
    Some(format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} UTC",
        civil.year(),
        civil.month(),
        civil.day(),
        civil.hour(),
        civil.minute(),
        civil.second(),
        civil.subsec_nanosecond() / 1_000_000
    ))
}
