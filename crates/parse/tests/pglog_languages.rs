//! The localised PostgreSQL 15 logs (fixtures/formats/pglog/pg15-<lang>-sigkill.log, recorded by
//! fixtures/record/pglog-pg15-localized.sh) read as well as English: same events, same fields.

use pgmortem_parse::pglog::{self, PgEvent, PgLogOptions, Severity};

const LANGUAGES: &[(&str, &str)] = &[
    ("de", "pg15-de-sigkill.log"),
    ("es", "pg15-es-sigkill.log"),
    ("fr", "pg15-fr-sigkill.log"),
    ("fr", "pg15-fr-c-ctype-sigkill.log"),
    ("ja", "pg15-ja-sigkill.log"),
    ("ru", "pg15-ru-sigkill.log"),
    ("zh_CN", "pg15-zh_CN-sigkill.log"),
];

mod common;

fn read(name: &str) -> pglog::PgLog {
    pglog::parse(&common::pglog_fixture(name), &PgLogOptions::default()).unwrap()
}

#[test]
fn every_language_gives_the_crash_cycle_with_its_fields() {
    for &(lang, file) in LANGUAGES {
        let log = read(file);
        assert_eq!(log.stats.unrecognized_lines, 0, "{file}");
        assert_eq!(log.orphan_lines, 0, "{file}");
        let kinds: Vec<&str> = log
            .records
            .iter()
            .filter_map(|r| r.event.as_ref())
            .map(PgEvent::kind)
            .filter(|k| {
                [
                    "terminated_by_signal",
                    "terminating_other_processes",
                    "reinitializing",
                    "interrupted",
                    "automatic_recovery",
                    "redo_start",
                    "invalid_record_length",
                    "redo_done",
                    "ready",
                ]
                .contains(k)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "ready",
                "terminated_by_signal",
                "terminating_other_processes",
                "reinitializing",
                "interrupted",
                "automatic_recovery",
                "redo_start",
                "invalid_record_length",
                "redo_done",
                "ready"
            ],
            "{file}"
        );
        let crash = log
            .records
            .iter()
            .find_map(|r| match &r.event {
                Some(PgEvent::TerminatedBySignal {
                    process,
                    signal,
                    query,
                    ..
                }) => Some((process.clone(), *signal, query.clone(), r.language)),
                _ => None,
            })
            .unwrap();
        assert_eq!(crash.1, 9, "{file}");
        assert_eq!(crash.3, Some(lang), "{file}");
        assert!(
            crash
                .2
                .as_deref()
                .unwrap_or("")
                .starts_with("SELECT count(*)\n"),
            "{file}: {crash:?}"
        );
        let redo_done = log.records.iter().find_map(|r| match &r.event {
            Some(PgEvent::RedoDone {
                elapsed_seconds, ..
            }) => Some(*elapsed_seconds),
            _ => None,
        });
        assert!(redo_done.unwrap().is_some(), "{file}: elapsed");
        let oom = log
            .records
            .iter()
            .find(|r| matches!(r.event, Some(PgEvent::OutOfMemory { .. })))
            .unwrap();
        assert_eq!(oom.severity, Some(Severity::Error), "{file}");
        assert_eq!(
            oom.event,
            Some(PgEvent::OutOfMemory {
                request_bytes: Some(1000000004),
                memory_context: Some("ExprContext".into())
            }),
            "{file}"
        );
        assert!(oom.memory_context_dump.is_some(), "{file}");
        assert!(
            log.records
                .iter()
                .any(|r| matches!(r.event, Some(PgEvent::StatementCanceled { ref reason }) if reason == "statement timeout")),
            "{file}"
        );
        // `[unknown]` in %u@%d is normalised.
        assert!(
            log.records
                .iter()
                .any(|r| r.user.as_deref() == Some("[unknown]")),
            "{file}"
        );
        assert!(
            log.records.iter().filter(|r| r.user.is_some()).all(|r| !r
                .user
                .as_deref()
                .unwrap()
                .starts_with("[")
                || r.user.as_deref() == Some("[unknown]")),
            "{file}"
        );
    }
}

#[test]
fn signal_names_stay_as_libc_printed_them() {
    let names: Vec<String> = LANGUAGES
        .iter()
        .filter_map(|&(_, file)| {
            read(file).records.into_iter().find_map(|r| match r.event {
                Some(PgEvent::TerminatedBySignal { signal_name, .. }) => Some(signal_name),
                _ => None,
            })
        })
        .collect();
    assert_eq!(
        names,
        [
            "Getötet",
            "Terminado (killed)",
            "Processus arrêté",
            "Processus arr?t?",
            "強制終了",
            "Убито",
            "已杀死"
        ]
    );
}
