//! The wrapped forms read through [`crate::wrap`]: syslog and RFC 5424 relays, the journal's
//! short forms and JSON, Heroku, Cloud SQL.

use crate::pglog::{PgEvent, PgLogFormat, PgLogOptions, Severity, parse};
use crate::wrap::{Stamp, Written, syslog};

fn read(format: PgLogFormat, text: &str) -> crate::pglog::PgLog {
    let options = PgLogOptions {
        format: Some(format),
        ..PgLogOptions::default()
    };
    parse(text.as_bytes(), &options).unwrap()
}

#[test]
fn rfc5424_nilvalues_and_structured_data() {
    let l = syslog::split_rfc5424(
        "<134>1 2026-11-21T19:01:13.835739+00:00 dbhost postgres 1048 - -  [5-1] 2026-11-21 19:01:13.835 UTC [1048] LOG:  x",
    )
    .unwrap();
    assert_eq!(
        (l.program, l.pid, l.sequence, l.body),
        (
            "postgres",
            Some(1048),
            Some((5, 1)),
            "2026-11-21 19:01:13.835 UTC [1048] LOG:  x"
        )
    );
    assert_eq!(l.stamp, Some("2026-11-21T19:01:13.835739+00:00"));
    // Every header field NILVALUE, structured data with escaped `]`, `"` and `\`, a BOM.
    let l = syslog::split_rfc5424(
        "<134>1 - - postgres - - [meta x=\"a\\]b\\\"c\\\\\"][origin ip=\"192.0.2.1\"] \u{feff}LOG:  y",
    )
    .unwrap();
    assert_eq!((l.pid, l.stamp, l.body), (None, None, "LOG:  y"));
    // No message at all.
    let l = syslog::split_rfc5424("<134>1 - - postgres - - -").unwrap();
    assert_eq!(l.body, "");
    // An unclosed structured-data element, a missing version, a missing field.
    assert_eq!(
        syslog::split_rfc5424("<134>1 - h postgres 1 - [x a=\"b] LOG:  z"),
        None
    );
    assert_eq!(syslog::split_rfc5424("<134> - h postgres 1 - - x"), None);
    assert_eq!(syslog::split_rfc5424("<134>1 - h postgres"), None);
}

#[test]
fn rfc5424_lines_give_records_with_the_envelope_pid() {
    let log = read(
        PgLogFormat::Syslog5424,
        "<134>1 2026-11-21T19:01:13.835739+00:00 dbhost postgres 1048 - [origin ip=\"192.0.2.1\"] [5-1] LOG:  server process (PID 1366) was terminated by signal 9: Killed\n\
         <134>1 2026-11-21T19:01:13.835758+00:00 dbhost postgres 1048 - - [5-2] DETAIL:  Failed process was running: SELECT 1\n\
         <134>1 2026-11-21T19:01:13.835759+00:00 dbhost postgres 1048 - - [5-3] #011  FROM t\n\
         <30>1 2026-11-21T19:01:13.9+00:00 dbhost systemd 1 - - Started x.\n",
    );
    assert_eq!(log.format, PgLogFormat::Syslog5424);
    assert_eq!(log.prefix, "");
    assert_eq!(log.records.len(), 1);
    let r = &log.records[0];
    assert_eq!(r.pid, Some(1048));
    assert_eq!(
        r.detail.as_deref(),
        Some("Failed process was running: SELECT 1\n  FROM t")
    );
    // The prefix has no time: the envelope's.
    let t = r.time.as_ref().unwrap();
    assert_eq!(
        t.utc.unwrap().to_string(),
        "2026-11-21T19:01:13.835739Z".to_string()
    );
    assert_eq!(log.other_program_lines, 1);
    assert_eq!(log.stats.unrecognized_lines, 0);
}

#[test]
fn journal_lines_of_other_programs_and_markers_are_counted() {
    let text = "-- Boot 0e5f2c1a9d4b4f6e8c3b2a1908f7e6d5 --\n\
        Nov 21 19:02:55.101010 dbhost postgres[7001]: 2026-11-21 19:02:55.101 UTC [7001] LOG:  database system is ready to accept connections\n\
        Nov 21 19:02:55.201010 dbhost pgmortem-other[7010]: a line of another program\n\
        Nov 21 19:02:56.000001 dbhost postgres[7001]: 2026-11-21 19:02:56.000 UTC [7020] ERROR:  boom\n\
        Nov 21 19:02:56.000002 dbhost postgres[7001]:         second line\n\
        garbage\n";
    assert_eq!(
        crate::pglog::sniff_format(text.as_bytes()),
        PgLogFormat::Journal
    );
    let log = parse(text.as_bytes(), &PgLogOptions::default()).unwrap();
    assert_eq!(log.format, PgLogFormat::Journal);
    assert_eq!(log.other_program_lines, 2);
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.records[0].event, Some(PgEvent::Ready));
    // The stream's PID (the postmaster's) only stands in; the prefix has the backend's.
    assert_eq!(log.records[1].pid, Some(7020));
    assert_eq!(log.records[1].message, "boom\nsecond line");
    assert_eq!(log.stats.unrecognized_lines, 1);
}

#[test]
fn short_iso_stamps_and_journal_json() {
    let time = |text: &str| {
        Stamp {
            written: Some(Written::Rfc3339(text.into())),
            monotonic_us: None,
        }
        .time()
    };
    let t = time("2026-11-21T19:02:55+0100").unwrap();
    assert_eq!(t.utc.to_string(), "2026-11-21T18:02:55Z");
    assert_eq!(t.offset.map(|o| o.text()).as_deref(), Some("+0100"));
    let t = time("2026-11-21T19:02:55.5Z").unwrap();
    assert_eq!(t.utc.to_string(), "2026-11-21T19:02:55.5Z");
    assert_eq!(t.offset, None);
    assert_eq!(time("2026-11-21T19:02:55+01"), None);
    let text = concat!(
        r#"{"__REALTIME_TIMESTAMP":"1795287775101010","SYSLOG_IDENTIFIER":"postgres","MESSAGE":"[3-1] LOG:  database system is ready to accept connections","_PID":"7001"}"#,
        "\n",
        r#"{"__REALTIME_TIMESTAMP":"1795287775201010","SYSLOG_IDENTIFIER":"cron","MESSAGE":"x"}"#,
        "\n",
        r#"{"__REALTIME_TIMESTAMP":"1795287775301010","SYSLOG_IDENTIFIER":"postgres","MESSAGE":[76,79,71,58,32,32,255],"_PID":"7001"}"#,
        "\n{\"MESSAGE\": \n"
    );
    assert_eq!(
        crate::pglog::sniff_format(text.as_bytes()),
        PgLogFormat::JournalJson
    );
    let log = read(PgLogFormat::JournalJson, text);
    assert_eq!(log.records.len(), 2);
    let r = &log.records[0];
    assert_eq!((r.pid, &r.event), (Some(7001), &Some(PgEvent::Ready)));
    assert_eq!(
        r.time.as_ref().unwrap().utc.unwrap().to_string(),
        "2026-11-21T19:02:55.10101Z"
    );
    assert_eq!(log.records[1].message, "\u{fffd}");
    assert_eq!(log.other_program_lines, 1);
    // The entry never closed: its line is unrecognised, and only that.
    assert_eq!(log.stats.unrecognized_lines, 1);
    assert_eq!(log.continuation_lines, 0);
    assert_eq!(
        log.stats.lines,
        log.stats.records + log.other_program_lines + log.stats.unrecognized_lines
    );
}

#[test]
fn heroku_without_time_in_the_prefix_takes_the_envelope_time_and_pid() {
    let text = "2026-11-21T19:01:25.603077+00:00 app[postgres.1911]: [DATABASE] [5-1]  sql_error_code = 00000 LOG:  server process (PID 2041) was terminated by signal 9: Killed\n\
        2026-11-21T19:01:25.603089+00:00 app[postgres.1911]: [DATABASE] [5-2]  sql_error_code = 00000 DETAIL:  Failed process was running: SELECT count(*)\n\
        2026-11-21T19:01:25.603099+00:00 app[postgres.1911]: [DATABASE] [5-3] #011  FROM pgbench_accounts\n\
        2026-11-21T19:01:26+00:00 app[heroku-postgres]: source=DATABASE addon=postgresql-x sample#active-connections=3\n\
        2026-11-21T19:01:26+00:00 heroku[router]: at=info method=GET path=\"/\"\n";
    assert_eq!(
        crate::pglog::sniff_format(text.as_bytes()),
        PgLogFormat::Heroku
    );
    let log = parse(text.as_bytes(), &PgLogOptions::default()).unwrap();
    assert_eq!(log.prefix, " sql_error_code = %e ");
    assert_eq!(log.records.len(), 1);
    let r = &log.records[0];
    assert_eq!((r.pid, r.sqlstate.as_deref()), (Some(1911), Some("00000")));
    assert_eq!(
        r.time.as_ref().unwrap().utc.unwrap().to_string(),
        "2026-11-21T19:01:25.603077Z"
    );
    assert!(matches!(
        r.event,
        Some(PgEvent::TerminatedBySignal { pid: 2041, .. })
    ));
    assert_eq!(
        r.detail.as_deref(),
        Some("Failed process was running: SELECT count(*)\n  FROM pgbench_accounts")
    );
    assert_eq!(log.other_program_lines, 2);
}

#[test]
fn cloudsql_text_payload_with_newlines_and_other_entries() {
    let text = concat!(
        r#"{"logName":"projects/p/logs/cloudsql.googleapis.com%2Fpostgres.log","textPayload":"2026-11-21 19:02:19.187 UTC [5003]: [7-1] db=,user= LOG:  server process (PID 5010) was terminated by signal 9: Killed\n2026-11-21 19:02:19.187 UTC [5003]: [8-1] db=,user= DETAIL:  Failed process was running: SELECT 1\n\t  FROM t\n","timestamp":"2026-11-21T19:02:19.187000Z"}"#,
        "\n",
        r#"{"logName":"projects/p/logs/cloudaudit.googleapis.com%2Factivity","protoPayload":{"methodName":"x"}}"#,
        "\n",
        r#"{"logName":"projects/p/logs/cloudsql.googleapis.com%2Fpostgres.log","textPayload":"2026-11-21 19:02:19.200 UTC [5003]: [9-1] db=,user= LOG:  all server processes terminated; reinitializing"}"#,
        "\n"
    );
    assert_eq!(
        crate::pglog::sniff_format(text.as_bytes()),
        PgLogFormat::CloudSql
    );
    let log = parse(text.as_bytes(), &PgLogOptions::default()).unwrap();
    assert_eq!(log.prefix, "%m [%p]: [%l-1] db=%d,user=%u ");
    assert_eq!(log.records.len(), 2);
    let r = &log.records[0];
    assert_eq!((r.pid, r.line, r.end_line), (Some(5003), 1, 1));
    assert_eq!(r.severity, Some(Severity::Log));
    assert_eq!(
        r.detail.as_deref(),
        Some("Failed process was running: SELECT 1\n  FROM t")
    );
    assert_eq!(log.records[1].event, Some(PgEvent::Reinitializing));
    assert_eq!(log.other_program_lines, 1);
    assert_eq!(log.stats.unrecognized_lines, 0);
}

#[test]
fn a_json_entry_that_does_not_parse_is_counted_with_its_lines() {
    let text = "[\n  {\n    \"textPayload\": 3,\n  }\n]\n";
    let log = read(PgLogFormat::CloudSql, text);
    assert_eq!(log.records.len(), 0);
    assert_eq!(log.stats.unrecognized_lines, 3);
    assert_eq!(log.continuation_lines, 2);
    assert_eq!(log.stats.unrecognized_examples[0].0, 2);
}

#[test]
fn sniffing_keeps_plain_syslog_and_stderr() {
    let syslog =
        "Nov 21 18:40:01 dbhost postgres[4242]: [5-1] 2026-11-21 18:40:01.123 UTC [4242] LOG:  x\n";
    assert_eq!(
        crate::pglog::sniff_format(syslog.as_bytes()),
        PgLogFormat::Syslog
    );
    let no_sequence =
        "Nov 21 18:40:01 dbhost postgres[4242]: 2026-11-21 18:40:01.123 UTC [4242] LOG:  x\n";
    assert_eq!(
        crate::pglog::sniff_format(no_sequence.as_bytes()),
        PgLogFormat::Syslog
    );
    let rds = "2026-11-21 19:01:30 UTC:[local]:postgres@postgres:[2400]:LOG:  connection authorized: user=postgres database=postgres application_name=psql\n";
    assert_eq!(
        crate::pglog::sniff_format(rds.as_bytes()),
        PgLogFormat::Stderr
    );
    let log = parse(rds.as_bytes(), &PgLogOptions::default()).unwrap();
    assert_eq!(log.prefix, "%t:%r:%u@%d:[%p]:");
    assert_eq!(log.records[0].user.as_deref(), Some("postgres"));
}

#[test]
fn crlf_gives_the_same_records() {
    let lf = "<134>1 2026-11-21T19:01:13.835739+00:00 dbhost postgres 1048 - -  [5-1] 2026-11-21 19:01:13.835 UTC [1048] LOG:  database system is ready to accept connections\n";
    let crlf = lf.replace('\n', "\r\n");
    let a = read(PgLogFormat::Syslog5424, lf);
    let b = read(PgLogFormat::Syslog5424, &crlf);
    assert_eq!(a.records, b.records);
    assert_eq!(b.records[0].event, Some(PgEvent::Ready));
}

#[test]
fn journal_of_syslog_messages_keeps_the_sequence_and_the_tab() {
    let text = "Nov 21 19:15:31 dbhost postgres[11163]: [5-1] 2026-11-21 19:15:31.108 UTC [11163] LOG:  server process (PID 11321) was terminated by signal 9: Killed\n\
        Nov 21 19:15:31 dbhost postgres[11163]: [5-2] 2026-11-21 19:15:31.108 UTC [11163] DETAIL:  Failed process was running: SELECT count(*)\n\
        Nov 21 19:15:31 dbhost postgres[11163]: [5-3]           FROM pgbench_accounts\n";
    assert_eq!(
        crate::pglog::sniff_format(text.as_bytes()),
        PgLogFormat::Journal
    );
    let log = parse(text.as_bytes(), &PgLogOptions::default()).unwrap();
    assert_eq!(
        log.records[0].detail.as_deref(),
        Some("Failed process was running: SELECT count(*)\n  FROM pgbench_accounts")
    );
    // Without that line nothing tells rsyslog's file from journalctl's: read as syslog.
    let head: String = text.lines().take(2).map(|l| format!("{l}\n")).collect();
    assert_eq!(
        crate::pglog::sniff_format(head.as_bytes()),
        PgLogFormat::Syslog
    );
}

#[test]
fn cnpg_records_with_a_multi_line_detail_and_other_loggers() {
    let text = concat!(
        r#"2026-11-21T19:02:40.118334567Z {"level":"info","ts":"2026-11-21T19:02:40.118000Z","logger":"postgres","msg":"record","logging_pod":"cluster-example-1","record":{"log_time":"2026-11-21 19:02:40.118 UTC","user_name":"","database_name":"","process_id":"6052","connection_from":"","session_id":"6b01eab0.17a4","session_line_num":"6","command_tag":"","session_start_time":"2026-11-21 19:02:08 UTC","virtual_transaction_id":"","transaction_id":"0","error_severity":"LOG","sql_state_code":"00000","message":"server process (PID 6362) was terminated by signal 9: Killed","detail":"Failed process was running: SELECT \"a\"\n  FROM t","backend_type":"postmaster","query_id":"0"}}"#,
        "\n",
        r#"{"level":"info","ts":"2026-11-21T19:02:40Z","logger":"instance-manager","msg":"Checking for free disk space"}"#,
        "\n",
        r#"{"level":"info","ts":1795287760.118,"logger":"postgres","msg":"record","logging_pod":"cluster-example-1","record":{"log_time":"2026-11-21 19:02:41.001 UTC","user_name":"app","database_name":"shop","process_id":6400,"error_severity":"ERROR","sql_state_code":"42601","message":"syntax error at or near \"FROM\"\nsecond line","query":"SELECT\n  FROM"}}"#,
        "\n",
        r#"{"level":"info"}"#,
        "\n\n",
    );
    let log = read(PgLogFormat::Cnpg, text);
    assert_eq!(log.format, PgLogFormat::Cnpg);
    assert_eq!(log.wrapper, None, "cnpg is a format of its own");
    let rec = &log.records[0];
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
    // The record keeps the instance manager's `ts` beside its own time.
    assert_eq!(
        rec.wrapper_time.as_ref().unwrap().utc.unwrap().to_string(),
        "2026-11-21T19:02:40.118Z"
    );
    let rec = &log.records[1];
    assert_eq!(
        (rec.pid, rec.user.as_deref(), rec.database.as_deref()),
        (Some(6400), Some("app"), Some("shop"))
    );
    assert_eq!(rec.message, "syntax error at or near \"FROM\"\nsecond line");
    assert_eq!(rec.statement.as_deref(), Some("SELECT\n  FROM"));
    assert_eq!(rec.line, 3);
    assert_eq!(log.records.len(), 2);
    assert_eq!(
        (
            log.other_program_lines,
            log.stats.unrecognized_lines,
            log.blank_lines
        ),
        (1, 1, 1)
    );
}

/// The lines `kubectl cnpg report cluster --logs` writes around a container's previous log
/// (cloudnative-pg `pkg/podlogs/writer.go`, `sendLogsToWriter`) are the plugin's, not unread
/// lines; a JSON value that is no string still is unread.
#[test]
fn cnpg_report_plugins_own_lines_are_another_programs() {
    let text = concat!(
        r#""====== Beginning of Previous Log =====""#,
        "\n",
        r#""Error fetching previous logs: when opening the log stream: not found""#,
        "\n",
        r#""====== End of Previous Log =====""#,
        "\n",
        r#"{"level":"info","ts":"2026-11-21T19:02:41Z","logger":"postgres","msg":"record","logging_pod":"p","record":{"log_time":"2026-11-21 19:02:41.001 UTC","process_id":"7","error_severity":"LOG","message":"database system is ready to accept connections"}}"#,
        "\n42\n\"unterminated\n",
    );
    let log = read(PgLogFormat::Cnpg, text);
    assert_eq!(log.records.len(), 1);
    assert_eq!(
        (log.other_program_lines, log.stats.unrecognized_lines),
        (3, 2)
    );
}
