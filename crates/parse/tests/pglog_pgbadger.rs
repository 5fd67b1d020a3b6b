//! pgBadger's reference logs (fixtures/formats/pglog/pgbadger/, from darold/pgbadger
//! `t/fixtures`, see SOURCES.md there), read whole: every line is a record, part of one, or
//! counted as what it is (blank, another program's, an orphan secondary line), none
//! unrecognised; the counts of each are kept as a snapshot.

use std::io::Read;
use std::path::Path;

use pgmortem_parse::pglog::{self, PgLogOptions};

/// The text of a sample, decompressed as it is shipped (`.gz`, `.bz2` or plain).
fn decompressed(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = Vec::new();
    match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => {
            flate2::read::GzDecoder::new(&bytes[..])
                .read_to_end(&mut text)
                .expect("gzip sample");
        }
        Some("bz2") => {
            bzip2::read::BzDecoder::new(&bytes[..])
                .read_to_end(&mut text)
                .expect("bzip2 sample");
        }
        _ => text = bytes,
    }
    text
}

/// What a sample's reading is judged by: its counts, and the records' times.
#[derive(serde::Serialize)]
struct Reading {
    log: pglog::PgLog,
    /// Records without a time.
    records_without_time: usize,
    /// Records whose time is not on UTC (a zone abbreviation the parser does not place).
    records_off_utc: usize,
}

#[test]
fn pgbadger_reference_logs_are_read_whole() {
    let mut samples = 0;
    insta::glob!("../../../fixtures/formats/pglog/pgbadger", "*", |path| {
        let name = path.file_name().unwrap().to_string_lossy();
        if !path.is_file() || name.ends_with(".md") {
            return;
        }
        samples += 1;
        let bytes = decompressed(path);
        let mut log = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
        assert_eq!(
            log.stats.unrecognized_lines, 0,
            "{name}: {:?}",
            log.stats.unrecognized_examples
        );
        assert!(log.stats.records > 0, "{name}");
        let records = std::mem::take(&mut log.records);
        let reading = Reading {
            records_without_time: records.iter().filter(|r| r.time.is_none()).count(),
            records_off_utc: records
                .iter()
                .filter(|r| r.time.as_ref().is_some_and(|t| t.utc.is_none()))
                .count(),
            log,
        };
        insta::assert_json_snapshot!(reading);
    });
    assert_eq!(samples, 20, "pgBadger's 20 non-pgbouncer samples");
}

fn parse(text: &str) -> pglog::PgLog {
    pglog::parse(text.as_bytes(), &PgLogOptions::default()).unwrap()
}

#[test]
fn a_log_drains_heroku_line_names_the_drain_drops_the_colon_and_prints_tabs_as_spaces() {
    let log = parse(
        "2021-09-07T04:01:27+00:00 d.af28b93f-a129-45a1-87be-3f8a0cb710be app[postgres.5925] [AQUA] [921320-1]  sql_error_code = 00000 LOG:  duration: 1.0 ms  execute <unnamed>: UPDATE t SET x =\n\
         2021-09-07T04:01:27+00:00 d.af28b93f-a129-45a1-87be-3f8a0cb710be app[postgres.5925] [AQUA] [921320-2]           (select 1)\n",
    );
    assert_eq!(log.format, pglog::PgLogFormat::Heroku);
    assert_eq!(log.stats.unrecognized_lines, 0);
    assert_eq!(log.records.len(), 1);
    assert_eq!(log.records[0].pid, Some(5925));
    assert!(
        log.records[0]
            .message
            .ends_with("UPDATE t SET x =\n  (select 1)")
    );
}

#[test]
fn cloudnativepg_lines_without_a_record_are_the_postmasters_stderr_or_the_managers() {
    let log = parse(concat!(
        r#"{"level":"info","ts":1669574898.9461384,"logger":"postgres","msg":"2022-11-27 18:48:18.943 UTC [28] LOG:  redirecting log output to logging collector process","source":"/controller/log/postgres","logging_pod":"c-1"}"#,
        "\n",
        r#"{"level":"info","ts":1669574901.99,"msg":"Readiness probe failing","logging_pod":"c-1","err":"instance is not ready yet"}"#,
        "\n",
        r#"{"level":"info","ts":1669575482.09,"logger":"postgres","msg":"record","logging_pod":"c-1","record":{"log_time":"2022-11-27 18:58:02.096 UTC","process_id":"600","error_severity":"LOG","message":"checkpoint starting: time"}}"#,
        "\n",
        r#"{"no":"logger"}"#,
        "\n",
    ));
    assert_eq!(log.format, pglog::PgLogFormat::Cnpg);
    let got: Vec<_> = log
        .records
        .iter()
        .map(|r| (r.line, r.pid, r.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                1,
                Some(28),
                "redirecting log output to logging collector process"
            ),
            (3, Some(600), "checkpoint starting: time")
        ]
    );
    assert_eq!(log.other_program_lines, 1);
    assert_eq!(log.stats.unrecognized_lines, 1, "a JSON line of no one");
}

#[test]
fn a_csvlog_with_its_time_quoted_is_csvlog() {
    let log = parse(
        "\"2026-05-16 05:20:03.994 UTC\",\"u\",\"d\",1002,\"192.0.2.20:54322\",00000002.000003ea,2,\"idle\",\"2026-05-16 05:00:00 UTC\",2/2,0,LOG,00000,\"statement: SELECT 1\",,,,,,,,,\"app\",\"client backend\",0\n",
    );
    assert_eq!(log.format, pglog::PgLogFormat::Csv);
    assert_eq!(log.records.len(), 1);
    assert_eq!(log.records[0].pid, Some(1002));
}

#[test]
fn pg_ctls_lines_are_another_programs_and_spaces_for_a_tab_continue() {
    let log = parse(
        "2025-01-21 18:32:48.288 CET [77898] FATAL:  configuration file contains errors\n\
         pg_ctl: could not start server\n\
         Examine the log output.\n\
         2025-01-21 18:37:49.782 CET [78776] LOG:  statement: SELECT 1\n\
         \x20       LIMIT 1000\n\
         a line of no one\n",
    );
    assert_eq!(log.other_program_lines, 2);
    assert_eq!(log.records[1].message, "statement: SELECT 1\nLIMIT 1000");
    assert_eq!(log.continuation_lines, 1);
    assert_eq!(log.stats.unrecognized_lines, 1);
}
