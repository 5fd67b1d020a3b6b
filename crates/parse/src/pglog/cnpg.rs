//! CloudNativePG (`--format cnpg`): the instance manager writes every csvlog row PostgreSQL
//! produces as a JSON line on the pod's standard output, the csvlog column names as keys of
//! `record` (`kubectl logs`, possibly with `--timestamps` before each line):
//!
//! ```text
//! {"level":"info","ts":"2026-11-21T19:02:40.118000Z","logger":"postgres","msg":"record","logging_pod":"cluster-example-1","record":{"log_time":"2026-11-21 19:02:40.118 UTC","user_name":"","database_name":"","process_id":"6052","connection_from":"","session_id":"6b01eab0.17a4","session_line_num":"6","command_tag":"","session_start_time":"2026-11-21 19:02:08 UTC","virtual_transaction_id":"","transaction_id":"0","error_severity":"LOG","sql_state_code":"00000","message":"server process (PID 6362) was terminated by signal 9: Killed","detail":"Failed process was running: SELECT count(*)\n  FROM pgbench_accounts AS a, pg_sleep(600) AS s\n WHERE a.abalance >= 0;","backend_type":"postmaster","query_id":"0"}}
//! ```
//!
//! The record is turned back into its csvlog row and read by the csvlog reader, so it gives
//! exactly the record csvlog gives. Before the logging collector starts, the postmaster's own
//! stderr lines come as `"logger":"postgres"` lines whose `msg` is the line itself
//! (`2022-11-27 18:48:18.943 UTC [28] LOG:  redirecting log output to logging collector
//! process`): they are read as stderr with PostgreSQL's default prefix `%m [%p] `. Lines of
//! other loggers (the instance manager's own, `pg_controldata`, `wal-archive`, pgaudit) and of
//! the instance manager without a logger (`{"level":"info","ts":…,"msg":"Readiness probe
//! failing",…}`) are counted in `other_program_lines`.

use serde::Deserialize;

use super::assemble::Assembler;
use super::csvlog::CsvReader;
use super::prefix::LogLinePrefix;
use super::{Counters, PgRecord};

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
struct CnpgLine {
    logger: Option<String>,
    msg: Option<String>,
    logging_pod: Option<String>,
    level: Option<String>,
    record: Option<serde_json::Map<String, serde_json::Value>>,
}

/// Reads CloudNativePG lines.
pub(crate) struct CnpgReader {
    csv: CsvReader,
    /// The postmaster's stderr lines before the logging collector starts.
    stderr: Box<Assembler>,
    row: String,
    max_row_bytes: usize,
}

/// The prefix of the postmaster's stderr lines CloudNativePG relays: PostgreSQL's default.
const STDERR_PREFIX: &str = "%m [%p] ";

impl CnpgReader {
    /// A reader whose rows stop growing at `max_row_bytes`.
    pub(crate) fn new(max_row_bytes: usize) -> Self {
        let prefix =
            LogLinePrefix::compile(STDERR_PREFIX).unwrap_or_else(|_| LogLinePrefix::empty());
        CnpgReader {
            csv: CsvReader::new(max_row_bytes),
            stderr: Box::new(Assembler::new(prefix, max_row_bytes)),
            row: String::new(),
            max_row_bytes,
        }
    }

    /// A reader with the same limits, at the start of a log.
    pub(crate) fn fresh(&self) -> Self {
        CnpgReader::new(self.max_row_bytes)
    }

    /// True when both readers read further lines the same way (each line is a whole entry:
    /// only the csv reader's and the stderr assembler's states count).
    pub(crate) fn same_state(&self, other: &CnpgReader) -> bool {
        self.csv.same_state(&other.csv) && self.stderr.same_state(&other.stderr)
    }

    /// What the stderr assembler counted, moved into the csv reader's counters (which are the
    /// reader's).
    fn merge_stderr_counters(&mut self) {
        let side = std::mem::take(self.stderr.counters_mut());
        let c = &mut self.csv.counters;
        c.stats.records += side.stats.records;
        c.stats.oversized_lines += side.stats.oversized_lines;
        for (line, text) in &side.stats.unrecognized_examples {
            c.stats.unrecognized(*line, text);
        }
        c.stats.unrecognized_lines += side
            .stats
            .unrecognized_lines
            .saturating_sub(side.stats.unrecognized_examples.len() as u64);
        c.continuation_lines += side.continuation_lines;
        c.orphan_lines += side.orphan_lines;
        c.memory_context_lines += side.memory_context_lines;
        c.other_program_lines += side.other_program_lines;
        c.unreadable_stamps.count += side.unreadable_stamps.count;
        let room =
            crate::ParseStats::MAX_EXAMPLES.saturating_sub(c.unreadable_stamps.examples.len());
        c.unreadable_stamps
            .examples
            .extend(side.unreadable_stamps.examples.into_iter().take(room));
    }

    /// Counters so far.
    pub(crate) fn counters(&self) -> &Counters {
        &self.csv.counters
    }

    /// Counters, to update.
    pub(crate) fn counters_mut(&mut self) -> &mut Counters {
        &mut self.csv.counters
    }

    /// The next finished record: of the two readers' next ones, the one of the earlier line.
    pub(crate) fn pop(&mut self) -> Option<Box<PgRecord>> {
        let csv_line = self.csv.peek_line();
        let stderr_line = self.stderr.peek_line();
        match (csv_line, stderr_line) {
            (Some(c), Some(s)) if s < c => self.stderr.pop(),
            (None, Some(_)) => self.stderr.pop(),
            _ => self.csv.pop(),
        }
    }

    /// End of input.
    pub(crate) fn finish(&mut self) {
        self.csv.finish();
        self.stderr.finish();
        self.merge_stderr_counters();
    }

    /// Feeds one line.
    pub(crate) fn push(&mut self, number: u64, text: &str) {
        if text.trim().is_empty() {
            self.csv.counters.blank_lines += 1;
            return;
        }
        let json = strip_kubectl_stamp(text);
        let Ok(line) = serde_json::from_str::<CnpgLine>(json) else {
            self.csv.counters.stats.unrecognized(number, text);
            return;
        };
        match (line.logger.as_deref(), line.record, line.msg) {
            (Some("postgres"), Some(record), _) => {
                if !self.stderr.is_idle() {
                    // The collector took over: the stderr lines before are all there are.
                    self.stderr.finish();
                    self.merge_stderr_counters();
                }
                csv_row(&record, &mut self.row);
                let row = std::mem::take(&mut self.row);
                self.csv.push(number, &row);
                self.row = row;
            }
            (Some("postgres"), None, Some(msg)) => {
                for (k, part) in msg.trim_end_matches('\n').split('\n').enumerate() {
                    if k > 0 && !part.starts_with('\t') {
                        self.stderr.push(number, &format!("\t{part}"), None);
                    } else {
                        self.stderr.push(number, part, None);
                    }
                }
                self.merge_stderr_counters();
            }
            (Some(_), _, _) => self.csv.counters.other_program_lines += 1,
            // The instance manager's own lines carry no logger.
            (None, _, Some(_)) if line.logging_pod.is_some() || line.level.is_some() => {
                self.csv.counters.other_program_lines += 1;
            }
            (None, _, _) => self.csv.counters.stats.unrecognized(number, text),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pglog::PgEvent;

    #[test]
    fn a_record_with_a_multi_line_detail_and_other_loggers() {
        let mut r = CnpgReader::new(1 << 20);
        r.push(
            1,
            r#"2026-11-21T19:02:40.118334567Z {"level":"info","ts":"2026-11-21T19:02:40.118000Z","logger":"postgres","msg":"record","logging_pod":"cluster-example-1","record":{"log_time":"2026-11-21 19:02:40.118 UTC","user_name":"","database_name":"","process_id":"6052","connection_from":"","session_id":"6b01eab0.17a4","session_line_num":"6","command_tag":"","session_start_time":"2026-11-21 19:02:08 UTC","virtual_transaction_id":"","transaction_id":"0","error_severity":"LOG","sql_state_code":"00000","message":"server process (PID 6362) was terminated by signal 9: Killed","detail":"Failed process was running: SELECT \"a\"\n  FROM t","backend_type":"postmaster","query_id":"0"}}"#,
        );
        r.push(
            2,
            r#"{"level":"info","ts":"2026-11-21T19:02:40Z","logger":"instance-manager","msg":"Checking for free disk space"}"#,
        );
        r.push(
            3,
            r#"{"level":"info","ts":1795287760.118,"logger":"postgres","msg":"record","logging_pod":"cluster-example-1","record":{"log_time":"2026-11-21 19:02:41.001 UTC","user_name":"app","database_name":"shop","process_id":6400,"error_severity":"ERROR","sql_state_code":"42601","message":"syntax error at or near \"FROM\"\nsecond line","query":"SELECT\n  FROM"}}"#,
        );
        r.push(4, r#"{"level":"info"}"#);
        r.push(5, "");
        let rec = r.pop().unwrap();
        assert_eq!(rec.pid, Some(6052));
        assert_eq!(rec.user, None);
        assert_eq!(
            rec.detail.as_deref(),
            Some("Failed process was running: SELECT \"a\"\n  FROM t")
        );
        assert!(matches!(
            rec.event,
            Some(PgEvent::TerminatedBySignal { pid: 6362, .. })
        ));
        let rec = r.pop().unwrap();
        assert_eq!(
            (rec.pid, rec.user.as_deref(), rec.database.as_deref()),
            (Some(6400), Some("app"), Some("shop"))
        );
        assert_eq!(rec.message, "syntax error at or near \"FROM\"\nsecond line");
        assert_eq!(rec.statement.as_deref(), Some("SELECT\n  FROM"));
        assert_eq!(rec.line, 3);
        assert!(r.pop().is_none());
        let c = r.counters();
        assert_eq!(
            (
                c.other_program_lines,
                c.stats.unrecognized_lines,
                c.blank_lines
            ),
            (1, 1, 1)
        );
    }
}
