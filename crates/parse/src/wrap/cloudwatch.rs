//! Amazon CloudWatch Logs exports of an RDS or Aurora PostgreSQL log group
//! (`/aws/rds/instance/NAME/postgresql`, `/aws/rds/cluster/NAME/postgresql`): each event's
//! `message` is one line of the server's log (`%t:%r:%u@%d:[%p]:`), its `timestamp` CloudWatch's
//! time of the event in milliseconds since the epoch.
//!
//! * JSON as `aws logs filter-log-events` and `aws logs get-log-events` print it (an object whose
//!   `events` array holds `{"logStreamName", "timestamp", "message", "ingestionTime",
//!   "eventId"}`, pretty-printed or not), or the events one per line (`jq -c '.events[]'`);
//!   API: https://docs.aws.amazon.com/AmazonCloudWatchLogs/latest/APIReference/API_FilteredLogEvent.html
//! * CSV as the console's log events viewer downloads it (`log-events-viewer-result.csv`): the
//!   time without a zone (`2024-10-02 13:00:00.000`, read as UTC), the message (quoted when it
//!   holds a quote), the log stream; a header row (`timestamp,message,…`) when there is one.

use std::borrow::Cow;

use serde::Deserialize;

use super::csvrows::{CsvRows, Row, fields};
use super::records::{Found, LineKind, RecordGather};
use super::{Part, Peeled, PeeledKind, Stamp, Written, lines_of};

/// One event.
#[derive(Debug, Deserialize)]
struct Event<'a> {
    timestamp: Option<i64>,
    #[serde(borrow)]
    message: Option<Cow<'a, str>>,
}

/// Reads a CloudWatch export, JSON or CSV (the first line that says decides).
#[derive(Debug)]
pub(super) struct Reader {
    json: RecordGather,
    csv: CsvRows,
    form: Option<Form>,
    max_bytes: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Json,
    Csv,
}

/// `2024-10-02 13:00:00.000,` at the start of a line: the console's CSV.
// 2024-10-02 13:00:00.000,"2024-10-02 13:00:00 UTC::@:[554]:LOG:  background worker ""pg_cron"" (PID 25883) was terminated by signal 11: Segmentation fault",xxx:/aws/rds/cluster/xxx/postgresql
pub(super) fn is_csv_line(text: &str) -> bool {
    let b = text.as_bytes();
    let stamp = b.len() > 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b' '
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b',';
    let message = text.get(24..).unwrap_or("");
    let message = message.strip_prefix('"').unwrap_or(message).as_bytes();
    stamp
        && message.len() > 19
        && message[4] == b'-'
        && message[10] == b' '
        && message[..4].iter().all(u8::is_ascii_digit)
}

/// Whether a line of JSON is CloudWatch's (an event's field only CloudWatch names so).
pub(super) fn is_json_line(text: &str) -> bool {
    text.contains("\"ingestionTime\"")
        || text.contains("\"logStreamName\"")
        || text.contains("\"nextForwardToken\"")
}

impl Reader {
    pub(super) fn new(max_bytes: usize) -> Self {
        Reader {
            json: RecordGather::new(max_bytes),
            csv: CsvRows::default(),
            form: None,
            max_bytes,
        }
    }

    pub(super) fn is_idle(&self) -> bool {
        !self.json.is_open() && !self.csv.is_open()
    }

    /// True when both are idle and read further lines the same way: the same form, the same
    /// JSON state (a record given up, the last key read).
    pub(super) fn same_state(&self, other: &Reader) -> bool {
        self.is_idle() && other.is_idle() && self.form == other.form && self.json == other.json
    }

    pub(super) fn push(&mut self, number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
        if self.form.is_none() && !self.csv.is_open() {
            let t = text.trim_start();
            if t.is_empty() {
                out(Peeled::bare(number, PeeledKind::Blank));
                return;
            }
            self.form = Some(if t.starts_with('{') || t.starts_with('[') {
                Form::Json
            } else {
                Form::Csv
            });
        }
        match self.form {
            Some(Form::Json) => self.json_line(number, text, out),
            _ => self.csv_line(number, text, out),
        }
    }

    fn json_line(&mut self, number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
        if text.trim().is_empty() && !self.json.is_open() {
            out(Peeled::bare(number, PeeledKind::Blank));
            return;
        }
        let mut ended = false;
        let kind = self.json.push(number, text, &mut |found| {
            ended = true;
            event(found, out);
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
    }

    fn csv_line(&mut self, number: u64, text: &str, out: &mut dyn FnMut(Peeled<'_>)) {
        if text.trim().is_empty() && !self.csv.is_open() {
            out(Peeled::bare(number, PeeledKind::Blank));
            return;
        }
        let (first, row) = match self.csv.push(number, text, self.max_bytes) {
            Row::Pending => {
                out(Peeled::bare(number, PeeledKind::Pending));
                return;
            }
            Row::Complete(first, _, row) => (first, row),
        };
        csv_row(first, &row, out);
    }

    pub(super) fn finish(&mut self, out: &mut dyn FnMut(Peeled<'_>)) {
        if let Some((first_line, head, lines)) = self.json.take_open() {
            out(Peeled::bare(
                first_line,
                PeeledKind::Broken {
                    head,
                    lines,
                    pending: lines,
                },
            ));
        }
        if let Some((first_line, row, lines)) = self.csv.take_open() {
            out(Peeled::bare(
                first_line,
                PeeledKind::Broken {
                    head: row.lines().next().unwrap_or("").to_owned(),
                    lines,
                    pending: lines,
                },
            ));
        }
    }
}

/// One event found in the JSON.
fn event(found: Found, out: &mut dyn FnMut(Peeled<'_>)) {
    let Some((first_line, text, lines)) = found.record_or_broken(out) else {
        return;
    };
    let Ok(e) = serde_json::from_str::<Event<'_>>(&text) else {
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
    let stamp = Stamp {
        written: e
            .timestamp
            .and_then(|ms| ms.checked_mul(1000))
            .map(Written::EpochMicros),
        monotonic_us: None,
    };
    match e.message {
        Some(message) => lines_of(first_line, message, None, None, Part::First, stamp, out),
        None => out(Peeled {
            line: first_line,
            kind: PeeledKind::Empty,
            stamp,
            priority: None,
        }),
    }
}

/// One row of the console's CSV: time, message, log stream.
fn csv_row(first_line: u64, row: &str, out: &mut dyn FnMut(Peeled<'_>)) {
    let (time, rest) = row.split_once(',').unwrap_or((row, ""));
    if !time.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        let header = time.trim_matches('"').trim_start_matches('@');
        let kind = if header.eq_ignore_ascii_case("timestamp") {
            PeeledKind::Header
        } else {
            PeeledKind::Unrecognized
        };
        out(Peeled::bare(first_line, kind));
        return;
    }
    let message: Cow<'_, str> = if rest.starts_with('"') {
        match fields(rest).into_iter().next() {
            Some(m) => m,
            None => Cow::Borrowed(""),
        }
    } else {
        // Not quoted: the message may hold commas; the log stream after the last one has
        // no space.
        match rest.rsplit_once(',') {
            Some((message, stream)) if !stream.contains(' ') => Cow::Borrowed(message),
            _ => Cow::Borrowed(rest),
        }
    };
    let stamp = Stamp {
        written: Some(Written::UtcCivil(Cow::Borrowed(time))),
        monotonic_us: None,
    };
    lines_of(first_line, message, None, None, Part::First, stamp, out);
}
