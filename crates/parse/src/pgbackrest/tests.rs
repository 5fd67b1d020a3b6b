//! Edge cases of the pgBackRest reader, on lines as pgBackRest 2.45 printed them
//! (fixtures/formats/pgbackrest) and on hand-made damage.

use super::*;

fn read(text: &str) -> BackrestLog {
    parse(text.as_bytes(), &BackrestOptions::default())
}

const RUN: &str = "\
-------------------PROCESS START-------------------
2026-11-28 14:58:45.948 P00   INFO: check command begin 2.45: --archive-timeout=10 --stanza=db
2026-11-28 14:58:56.668 P00  ERROR: [082]: WAL segment 000000010000000000000006 was not archived before the 10000ms timeout
                                    HINT: check the archive_command to ensure that all options are correct (especially --stanza).
2026-11-28 14:58:56.668 P00   INFO: check command end: aborted with exception [082]

";

#[test]
fn a_run_its_command_error_code_and_continuation() {
    let log = read(RUN);
    assert_eq!(log.records.len(), 3);
    assert_eq!(log.process_starts, 1);
    assert_eq!(log.blank_lines, 1);
    assert_eq!(log.continuation_lines, 1);
    let begin = &log.records[0];
    assert_eq!(
        begin.event,
        Some(BackrestEvent::CommandBegin {
            version: "2.45".into()
        })
    );
    assert_eq!(begin.command.as_deref(), Some("check"));
    let error = &log.records[1];
    assert_eq!(
        (error.level, error.code, error.process),
        (BackrestLevel::Error, Some(82), 0)
    );
    assert!(
        error
            .message
            .starts_with("WAL segment 000000010000000000000006 was not archived")
    );
    assert!(error.message.ends_with("\nHINT: check the archive_command to ensure that all options are correct (especially --stanza)."));
    assert_eq!((error.line, error.end_line), (3, 4));
    assert_eq!(error.command.as_deref(), Some("check"));
    assert_eq!(
        log.records[2].event,
        Some(BackrestEvent::CommandEnd { ok: false })
    );
    assert_eq!(log.levels, [0, 1, 0, 2, 0, 0, 0]);
    assert_eq!(log.stats.unrecognized_lines, 0);
}

#[test]
fn a_new_run_forgets_the_command_of_the_last() {
    let text = format!(
        "{RUN}-------------------PROCESS START-------------------\n2026-11-28 15:00:00.000 P00   WARN: no command yet\n"
    );
    let log = read(&text);
    assert_eq!(log.records.last().unwrap().command, None);
    assert_eq!(log.records.last().unwrap().level, BackrestLevel::Warn);
}

#[test]
fn archive_events() {
    let cases = [
        (
            "push 2 WAL file(s) to archive: 000000010000000000000005...000000010000000000000006",
            Some(BackrestEvent::WalPushed { count: 2 }),
        ),
        (
            "pushed WAL file '000000010000000000000007' to the archive",
            Some(BackrestEvent::WalPushed { count: 1 }),
        ),
        (
            "could not push WAL file '000000010000000000000005' to the archive (will be retried): [104] raised",
            Some(BackrestEvent::WalPushFailed {
                segment: "000000010000000000000005".into(),
            }),
        ),
        (
            "new backup label = 20261128-145424F",
            Some(BackrestEvent::BackupCompleted {
                label: "20261128-145424F".into(),
            }),
        ),
        (
            "archive-push:async command end: completed successfully (860ms)",
            Some(BackrestEvent::CommandEnd { ok: true }),
        ),
        ("push x WAL file(s) to archive: A", None),
        ("not a command begin 2.45", None),
    ];
    for (message, event) in cases {
        assert_eq!(classify(message), event, "{message}");
    }
}

#[test]
fn error_codes_only_when_bracketed_digits() {
    assert_eq!(error_code("[082]: text"), (Some(82), "text"));
    assert_eq!(
        error_code("[CommandError] on retry"),
        (None, "[CommandError] on retry")
    );
    assert_eq!(error_code("[]: x"), (None, "[]: x"));
    assert_eq!(error_code("[99999]: x"), (None, "x"));
}

#[test]
fn damage_is_counted_not_lost() {
    let text = "\
   continuation with no record before
2026-11-28 14:58:56.668 P00  NOTICE: not a level
2026-11-28 14:58:56.668 Px   INFO: no process
2026-11-28 14:58:56.668 P00   INFO: a record
garbage
";
    let log = read(text);
    assert_eq!(log.records.len(), 1);
    assert_eq!(log.stats.unrecognized_lines, 4);
}

#[test]
fn long_messages_are_bounded() {
    let mut text = String::from("2026-11-28 14:58:56.668 P00  ERROR: [104]: x\n");
    for _ in 0..100 {
        text.push_str("                                    repo1: [FileOpenError] unable to open file 'a' for write: [13] Permission denied\n");
    }
    let log = read(&text);
    assert_eq!(log.continuation_lines, 100);
    assert!(log.records[0].message.len() <= MAX_MESSAGE_BYTES);
    assert_eq!(log.records[0].end_line, 101);
    let long = format!("2026-11-28 14:58:56.668 P00   INFO: {}\n", "y".repeat(500));
    let log = parse(
        long.as_bytes(),
        &BackrestOptions {
            max_line_bytes: 100,
        },
    );
    assert_eq!(log.stats.oversized_lines, 1);
    assert_eq!(log.records.len(), 1);
}

#[test]
fn sniffing_tells_pgbackrest_from_patroni_and_postgresql() {
    assert!(sniff(RUN.as_bytes()).is_some());
    assert!(
        sniff(b"2026-11-28 15:01:34,977 INFO: no action. I am (a), the leader with the lock\n")
            .is_none()
    );
    assert!(
        sniff(b"2026-11-28 15:01:24.865 UTC [20826] LOG:  database system is ready\n").is_none()
    );
}
