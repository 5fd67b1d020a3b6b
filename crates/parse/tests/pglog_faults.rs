//! The fault captures (fixtures/record/pglog-{storage-faults,panic,fork-failure}.sh and
//! pglog-pg13-stale-statistics.sh): each event with its fields, on every version and in every
//! language it was recorded in.

use pgmortem_parse::pglog::{self, PgEvent, PgLogFormat, PgLogOptions, PgRecord, Severity};

mod common;

fn records(name: &str) -> Vec<PgRecord> {
    let log = pglog::parse(&common::pglog_fixture(name), &PgLogOptions::default()).unwrap();
    assert_eq!(log.stats.unrecognized_lines, 0, "{name}");
    log.records
}

/// The events of `kinds`, in order, with the severity of their record.
fn events(name: &str, kinds: &[&str]) -> Vec<(Option<Severity>, PgEvent)> {
    records(name)
        .into_iter()
        .filter_map(|r| Some((r.severity, r.event?)))
        .filter(|(_, e)| kinds.contains(&e.kind()))
        .collect()
}

const STORAGE: &[&str] = &["could_not_read_block", "checksum_failure", "invalid_page"];

#[test]
fn a_short_file_and_a_bad_checksum_on_pg15_in_three_languages() {
    let english = events("pg15-storage-faults.log", STORAGE);
    let read = PgEvent::CouldNotReadBlock {
        block: 15,
        path: "base/5/16384".into(),
        error: "read only 0 of 8192 bytes".into(),
        io_error: false,
    };
    assert_eq!(english[0], (Some(Severity::Error), read));
    assert!(matches!(
        english[1],
        (Some(Severity::Warning), PgEvent::ChecksumFailure { calculated, expected }) if calculated != expected
    ));
    assert!(matches!(
        &english[2],
        (Some(Severity::Error), PgEvent::InvalidPage { block: 0, relation }) if relation.starts_with("base/5/")
    ));
    assert_eq!(english.len(), 3);
    // Same data, same damage: the same events, field for field.
    for file in ["pg15-de-storage-faults.log", "pg15-ja-storage-faults.log"] {
        let translated = events(file, STORAGE);
        let kinds = |v: &[(Option<Severity>, PgEvent)]| -> Vec<(Option<Severity>, &'static str)> {
            v.iter().map(|(s, e)| (*s, e.kind())).collect()
        };
        assert_eq!(kinds(&translated), kinds(&english), "{file}");
        assert_eq!(translated[0], english[0], "{file}");
        assert_eq!(translated[1], english[1], "{file}");
    }
}

#[test]
fn pg18_reads_block_ranges_and_quotes_the_relation() {
    let pg18 = events("pg18-storage-faults.log", STORAGE);
    let kinds: Vec<(Option<Severity>, &str)> = pg18.iter().map(|(s, e)| (*s, e.kind())).collect();
    assert_eq!(
        kinds,
        [
            (Some(Severity::Log), "could_not_read_block"),
            (Some(Severity::Error), "could_not_read_block"),
            (Some(Severity::Log), "checksum_failure"),
            (Some(Severity::Log), "invalid_page"),
            (Some(Severity::Error), "invalid_page"),
        ]
    );
    assert!(
        matches!(&pg18[1].1, PgEvent::CouldNotReadBlock { block: 15, path, .. } if path == "base/5/16384")
    );
    assert!(
        matches!(&pg18[4].1, PgEvent::InvalidPage { block: 0, relation } if !relation.contains('"'))
    );
}

#[test]
fn a_missing_checkpoint_panics_the_startup_process() {
    for (file, at) in [
        ("pg15-panic-no-checkpoint.log", None),
        ("pg18-panic-no-checkpoint.log", Some("0/1774A98")),
        ("pg15-ru-panic-no-checkpoint.log", None),
    ] {
        let got = events(
            file,
            &[
                "invalid_checkpoint_record",
                "no_valid_checkpoint",
                "panic",
                "terminated_by_signal",
                "shutting_down_after_crash",
            ],
        );
        assert_eq!(got.len(), 4, "{file}: {got:?}");
        // ≤ 16: `invalid primary checkpoint record`; ≥ 17: `invalid checkpoint record`.
        assert!(
            matches!(
                &got[0],
                (Some(Severity::Log), PgEvent::InvalidCheckpointRecord { .. })
            ),
            "{file}: {got:?}"
        );
        assert_eq!(
            got[1],
            (
                Some(Severity::Panic),
                PgEvent::NoValidCheckpoint {
                    lsn: at.and_then(pgmortem_parse::pglog::Lsn::parse),
                    required: false
                }
            ),
            "{file}"
        );
        assert!(
            matches!(&got[2].1, PgEvent::TerminatedBySignal { process, signal: 6, .. } if process == "startup process"),
            "{file}: {got:?}"
        );
        assert_eq!(
            got[3].1,
            PgEvent::ShuttingDownAfterCrash {
                reason: "shutting down due to startup process failure".into()
            },
            "{file}"
        );
    }
}

#[test]
fn fork_failures_name_what_could_not_start() {
    for (file, processes) in [
        (
            "pg15-fork-failure.log",
            [
                "autovacuum worker process",
                "new process for connection",
                "worker process",
            ],
        ),
        (
            "pg15-fr-fork-failure.log",
            [
                "autovacuum worker process",
                "new process for connection",
                "worker process",
            ],
        ),
        (
            "pg18-fork-failure.log",
            [
                "\"autovacuum worker\" process",
                "background worker process",
                "new process for connection",
            ],
        ),
    ] {
        let mut got: Vec<String> = events(file, &["fork_failed"])
            .into_iter()
            .map(|(_, e)| match e {
                PgEvent::ForkFailed { process, error } => {
                    assert_eq!(error, "Resource temporarily unavailable", "{file}");
                    process
                }
                _ => unreachable!(),
            })
            .collect();
        // sorted, each once
        got.sort();
        got.dedup();
        assert_eq!(got, processes, "{file}");
    }
}

#[test]
fn a_stopped_stats_collector_gives_stale_statistics() {
    let got = events("pg13-stale-statistics.log", &["stale_statistics"]);
    assert!(!got.is_empty());
    assert!(got.iter().all(|(s, _)| *s == Some(Severity::Log)));
}

#[test]
fn stamps_out_of_range_never_land_inside_names() {
    // A month 13 and a year 99999 among ordinary lines: the learned prefix that fits every
    // line would read the year as %l and the month and day as %u; `%m [%p] ` is kept, the
    // month-13 record has no time and its stamp is counted, the year-99999 line is counted.
    let log = pglog::parse(
        b"2026-11-21 17:15:11.884 UTC [100] LOG:  database system is ready to accept connections\n\
          2026-13-45 99:99:99.000 UTC [200] LOG:  server process (PID 300) was terminated by signal 9: Killed\n\
          99999-11-21 17:15:11.884 UTC [201] LOG:  all server processes terminated; reinitializing\n",
        &PgLogOptions::default(),
    )
    .unwrap();
    assert_eq!(log.prefix, "%m [%p] ");
    assert_eq!(log.records.len(), 2);
    assert!(
        log.records
            .iter()
            .all(|r| r.user.is_none() && r.session_line.is_none())
    );
    assert!(log.records[0].time.is_some());
    assert!(log.records[1].time.is_none());
    assert_eq!(log.records[1].pid, Some(200));
    // Both are counted and shown: the month-13 record's stamp, the year-99999 line.
    assert_eq!(log.unreadable_stamps.count, 1);
    assert_eq!(
        log.unreadable_stamps.examples,
        [(2, "2026-13-45 99:99:99.000 UTC".to_owned())]
    );
    assert_eq!(log.stats.unrecognized_lines, 1);
    assert!(
        log.stats.unrecognized_examples[0]
            .1
            .starts_with("99999-11-21")
    );
}

#[test]
fn csvlog_and_jsonlog_stamps_that_are_no_time_are_counted_and_the_records_kept() {
    // Real rows (PostgreSQL 15 csvlog and jsonlog), the second one's stamp edited to a month 13.
    let csv = b"2026-11-21 17:57:13.106 UTC,,,18553,,6b01db79.4879,1,,2026-11-21 17:57:13 UTC,,0,LOG,00000,\"starting PostgreSQL 15.18 on x86_64-pc-linux-gnu\",,,,,,,,,\"\",\"postmaster\",,0\n\
2026-13-21 17:57:40.817 UTC,\"postgres\",\"postgres\",20424,\"[local]\",6b01db84.4fc8,3,\"SELECT\",2026-11-21 17:57:40 UTC,3/2,0,ERROR,42601,\"out of memory\",,,,,,\"SELECT 1\",,,\"psql\",\"client backend\",,0\n";
    let json = b"{\"timestamp\":\"2026-11-21 17:57:13.121 UTC\",\"pid\":18557,\"error_severity\":\"LOG\",\"message\":\"database system is ready to accept connections\",\"backend_type\":\"postmaster\",\"query_id\":0}\n\
{\"timestamp\":\"2026-13-21 17:57:40.817 UTC\",\"pid\":20424,\"error_severity\":\"ERROR\",\"state_code\":\"53200\",\"message\":\"out of memory\",\"backend_type\":\"client backend\",\"query_id\":0}\n";
    for (input, format) in [(&csv[..], PgLogFormat::Csv), (&json[..], PgLogFormat::Json)] {
        let options = PgLogOptions {
            format: Some(format),
            ..PgLogOptions::default()
        };
        let log = pglog::parse(input, &options).unwrap();
        assert_eq!(log.records.len(), 2, "{format:?}");
        assert!(log.records[0].time.is_some());
        assert!(log.records[1].time.is_none());
        assert_eq!(log.records[1].pid, Some(20424));
        assert_eq!(log.stats.unrecognized_lines, 0);
        assert_eq!(
            log.unreadable_stamps.examples,
            [(2, "2026-13-21 17:57:40.817 UTC".to_owned())],
            "{format:?}"
        );
        assert_eq!(log.unreadable_stamps.count, 1);
    }
}
