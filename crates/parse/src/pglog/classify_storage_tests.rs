//! Unit tests of the storage, archiving and start-failure messages, in their English forms of
//! PostgreSQL 10–18 and in the translations of catalog.rs.
use super::super::classify::{classify, classify_record};
use super::super::translate::Languages;
use super::super::{Lsn, PgEvent, PgRecord, Severity};

fn lsn(s: &str) -> Lsn {
    Lsn::parse(s).unwrap()
}

/// A record as the assembler hands it over, classified in any language.
fn record(severity: Severity, message: &str, detail: Option<&str>, hint: Option<&str>) -> PgRecord {
    let mut r = PgRecord {
        severity: Some(severity),
        message: message.into(),
        detail: detail.map(str::to_owned),
        hint: hint.map(str::to_owned),
        ..PgRecord::default()
    };
    classify_record(&mut r, Languages::default());
    r
}

fn fsync(path: &str, error: &str, io_error: bool) -> PgEvent {
    PgEvent::CouldNotFsync {
        path: path.into(),
        error: error.into(),
        io_error,
        no_space: false,
        read_only: false,
    }
}

#[test]
fn fsync_failures_in_every_form() {
    // fixtures/incidents-pending/pg15-io-errors (PANIC, data_sync_retry off)
    assert_eq!(
        classify("could not fsync file \"base/5/16384_fsm\": Input/output error"),
        Some(fsync("base/5/16384_fsm", "Input/output error", true))
    );
    // the WAL's fsync with wal_sync_method = fdatasync (the Linux default) and PG 10–11's form
    assert_eq!(
        classify("could not fdatasync file \"000000010000000000000003\": Input/output error"),
        Some(fsync(
            "000000010000000000000003",
            "Input/output error",
            true
        ))
    );
    assert_eq!(
        classify("could not fsync log file 000000010000000000000003: Input/output error"),
        Some(fsync(
            "000000010000000000000003",
            "Input/output error",
            true
        ))
    );
    assert_eq!(
        classify("could not fsync write-through file \"pg_wal/x\": Invalid argument"),
        Some(fsync("pg_wal/x", "Invalid argument", false))
    );
    let Some(PgEvent::CouldNotFsync {
        no_space,
        read_only,
        io_error,
        ..
    }) = classify("could not fsync file \"base/5/1\": No space left on device")
    else {
        panic!("not classified")
    };
    assert_eq!((no_space, read_only, io_error), (true, false, false));
    assert_eq!(classify("could not fsync file base/5/1: EIO"), None);
    assert_eq!(
        classify("could not fsync bootstrap write-ahead log file"),
        None
    );
}

#[test]
fn open_and_create_failures_carry_the_errno_flags() {
    // fixtures/incidents-pending/pg15-read-only-fs, pg15-io-errors
    assert_eq!(
        classify("could not open file \"base/5/2601\": Read-only file system"),
        Some(PgEvent::CouldNotOpenFile {
            path: "base/5/2601".into(),
            error: "Read-only file system".into(),
            create: false,
            read_only: true,
            io_error: false,
            no_space: false,
        })
    );
    assert_eq!(
        classify("could not create file \"base/5/16390\": No space left on device"),
        Some(PgEvent::CouldNotOpenFile {
            path: "base/5/16390".into(),
            error: "No space left on device".into(),
            create: true,
            read_only: false,
            io_error: false,
            no_space: true,
        })
    );
    // A relation segment missing under its predecessor (md.c): the text after the block.
    let Some(PgEvent::CouldNotOpenFile { path, error, .. }) = classify(
        "could not open file \"base/5/16384.1\" (target block 131072): previous segment is only 12 blocks",
    ) else {
        panic!("not classified")
    };
    assert_eq!(
        (path.as_str(), error.as_str()),
        ("base/5/16384.1", "previous segment is only 12 blocks")
    );
    let Some(PgEvent::CouldNotOpenFile { io_error, .. }) =
        classify("could not open file \"pg_wal/000000010000000000000001\": Input/output error")
    else {
        panic!("not classified")
    };
    assert!(io_error);
    assert_eq!(classify("could not open file base/5/1: EIO"), None);
}

#[test]
fn writes_and_reads_flag_read_only_and_io_errors() {
    let Some(PgEvent::CouldNotWrite {
        read_only,
        io_error,
        no_space,
        ..
    }) = classify("could not write to file \"pg_wal/xlogtemp.9\": Read-only file system")
    else {
        panic!("not classified")
    };
    assert_eq!((read_only, io_error, no_space), (true, false, false));
    let Some(PgEvent::CouldNotExtendFile { io_error, .. }) =
        classify("could not extend file \"base/5/16384\": Input/output error")
    else {
        panic!("not classified")
    };
    assert!(io_error);
    let Some(PgEvent::CouldNotReadBlock { io_error, .. }) =
        classify("could not read block 4 in file \"base/5/16384\": Input/output error")
    else {
        panic!("not classified")
    };
    assert!(io_error);
    // XLogWrite: the segment bare (≤ 16) or quoted (≥ 17), then offset and length.
    for message in [
        "could not write to log file 000000010000000000000003 at offset 655360, length 8192: No space left on device",
        "could not write to log file \"000000010000000000000003\" at offset 655360, length 8192: No space left on device",
    ] {
        assert_eq!(
            classify(message),
            Some(PgEvent::CouldNotWrite {
                path: "000000010000000000000003".into(),
                error: "No space left on device".into(),
                no_space: true,
                read_only: false,
                io_error: false,
            }),
            "{message}"
        );
    }
}

#[test]
fn archive_command_failures_with_their_command() {
    // fixtures/incidents-pending/pg15-archive-failing
    let r = record(
        Severity::Log,
        "archive command failed with exit code 1",
        Some(
            "The failed archive command was: test ! -f /archive/000000010000000000000001 && cp pg_wal/000000010000000000000001 /archive/000000010000000000000001",
        ),
        None,
    );
    assert_eq!(
        r.event,
        Some(PgEvent::ArchiveCommandFailed {
            exit_code: Some(1),
            signal: None,
            command: Some(
                "test ! -f /archive/000000010000000000000001 && cp pg_wal/000000010000000000000001 /archive/000000010000000000000001"
                    .into()
            ),
        })
    );
    assert_eq!(
        classify("archive command was terminated by signal 9: Killed"),
        Some(PgEvent::ArchiveCommandFailed {
            exit_code: None,
            signal: Some(9),
            command: None
        })
    );
    for message in [
        "archive command was terminated by exception 0xC0000005",
        "archive command exited with unrecognized status 77",
    ] {
        assert_eq!(
            classify(message),
            Some(PgEvent::ArchiveCommandFailed {
                exit_code: None,
                signal: None,
                command: None
            }),
            "{message}"
        );
    }
    assert_eq!(
        classify(
            "archiving write-ahead log file \"000000010000000000000001\" failed too many times, will try again later"
        ),
        Some(PgEvent::ArchiveFailedTooManyTimes {
            segment: "000000010000000000000001".into()
        })
    );
    for message in [
        "archive_mode enabled, yet archive_command is not set",
        "archive_mode enabled, yet archiving is not configured",
        "\"archive_mode\" enabled, yet archiving is not configured",
    ] {
        assert_eq!(
            classify(message),
            Some(PgEvent::ArchiveNotConfigured),
            "{message}"
        );
    }
    assert_eq!(classify("archive command failed with exit code x"), None);
    assert_eq!(classify("archive command started"), None);
}

#[test]
fn a_start_that_finds_no_checkpoint_or_redo() {
    assert_eq!(
        classify("could not locate a valid checkpoint record"),
        Some(PgEvent::NoValidCheckpoint {
            lsn: None,
            required: false
        })
    );
    // PG ≥ 17 (fixtures/formats/pglog/pg18-panic-no-checkpoint.log)
    assert_eq!(
        classify("could not locate a valid checkpoint record at 0/1B0A300"),
        Some(PgEvent::NoValidCheckpoint {
            lsn: Some(lsn("0/1B0A300")),
            required: false
        })
    );
    assert_eq!(
        classify("could not locate required checkpoint record at 0/2000060"),
        Some(PgEvent::NoValidCheckpoint {
            lsn: Some(lsn("0/2000060")),
            required: true
        })
    );
    assert_eq!(
        classify("could not locate a valid checkpoint record somewhere"),
        None
    );
    for (message, which) in [
        ("invalid primary checkpoint record", Some("primary")),
        ("invalid secondary checkpoint record", Some("secondary")),
        ("invalid checkpoint record", None),
    ] {
        assert_eq!(
            classify(message),
            Some(PgEvent::InvalidCheckpointRecord {
                which: which.map(str::to_owned)
            }),
            "{message}"
        );
    }
    assert_eq!(
        classify("invalid resource manager ID in checkpoint record"),
        None
    );
    assert_eq!(
        classify("could not find redo location referenced by checkpoint record"),
        Some(PgEvent::RedoLocationMissing {
            redo: None,
            checkpoint: None
        })
    );
    assert_eq!(
        classify(
            "could not find redo location 0/01000028 referenced by checkpoint record at 0/01000060"
        ),
        Some(PgEvent::RedoLocationMissing {
            redo: Some(lsn("0/1000028")),
            checkpoint: Some(lsn("0/1000060"))
        })
    );
    assert_eq!(
        classify("requested WAL segment 000000010000000000000002 has already been removed"),
        Some(PgEvent::WalSegmentRemoved {
            segment: "000000010000000000000002".into()
        })
    );
}

#[test]
fn shared_memory_at_start_takes_the_size_from_hint_and_detail() {
    // fixtures/incidents-pending/pg15-hugepages-on-none
    let r = record(
        Severity::Fatal,
        "could not map anonymous shared memory: Cannot allocate memory",
        None,
        Some(
            "This error usually means that PostgreSQL's request for a shared memory segment exceeded available memory, swap space, or huge pages. To reduce the request size (currently 150994944 bytes), reduce PostgreSQL's shared memory usage, perhaps by reducing shared_buffers or max_connections.",
        ),
    );
    assert_eq!(
        r.event,
        Some(PgEvent::SharedMemoryMapFailed {
            error: "Cannot allocate memory".into(),
            request_bytes: Some(150_994_944)
        })
    );
    let r = record(
        Severity::Fatal,
        "could not create shared memory segment: Invalid argument",
        Some("Failed system call was shmget(key=5432001, size=56, 03600)."),
        None,
    );
    assert_eq!(
        r.event,
        Some(PgEvent::SharedMemoryCreateFailed {
            error: "Invalid argument".into(),
            request_bytes: Some(56)
        })
    );
}

/// (language, severity, message, DETAIL, HINT, the event it must give).
type Case = (
    &'static str,
    Severity,
    &'static str,
    Option<&'static str>,
    Option<&'static str>,
    PgEvent,
);

/// The same failures as a server with lc_messages in another language logs them: the texts of
/// catalog.rs (Debian's postgresql-13/15/17/18 and glibc's catalogs) filled in.
#[test]
fn storage_failures_in_other_languages() {
    let cases: &[Case] = &[
        (
            "de",
            Severity::Panic,
            "konnte Datei »base/5/16384_fsm« nicht fsyncen: Eingabe-/Ausgabefehler",
            None,
            None,
            fsync("base/5/16384_fsm", "Input/output error", true),
        ),
        (
            "fr",
            Severity::Fatal,
            "n'a pas pu ouvrir le fichier « base/5/2601 » : Système de fichiers accessible en lecture seulement",
            None,
            None,
            PgEvent::CouldNotOpenFile {
                path: "base/5/2601".into(),
                error: "Read-only file system".into(),
                create: false,
                read_only: true,
                io_error: false,
                no_space: false,
            },
        ),
        (
            "ja",
            Severity::Log,
            "アーカイブコマンドがリターンコード 1で失敗しました",
            Some(
                "失敗したアーカイブコマンドは次のとおりです: cp pg_wal/000000010000000000000001 /archive/",
            ),
            None,
            PgEvent::ArchiveCommandFailed {
                exit_code: Some(1),
                signal: None,
                command: Some("cp pg_wal/000000010000000000000001 /archive/".into()),
            },
        ),
        (
            "ru",
            Severity::Warning,
            "заархивировать файл журнала предзаписи \"000000010000000000000001\" не удалось много раз подряд; следующая попытка будет сделана позже",
            None,
            None,
            PgEvent::ArchiveFailedTooManyTimes {
                segment: "000000010000000000000001".into(),
            },
        ),
        (
            "es",
            Severity::Panic,
            "no se pudo localizar un registro de punto de control válido",
            None,
            None,
            PgEvent::NoValidCheckpoint {
                lsn: None,
                required: false,
            },
        ),
        (
            "ja",
            Severity::Panic,
            "0/1B0A300には有効なチェックポイントレコードがありませんでした",
            None,
            None,
            PgEvent::NoValidCheckpoint {
                lsn: Some(lsn("0/1B0A300")),
                required: false,
            },
        ),
        (
            "fr",
            Severity::Error,
            "le segment demandé du journal de transaction, 000000010000000000000002, a déjà été supprimé",
            None,
            None,
            PgEvent::WalSegmentRemoved {
                segment: "000000010000000000000002".into(),
            },
        ),
    ];
    for (lang, severity, message, detail, hint, event) in cases {
        let r = record(*severity, message, *detail, *hint);
        assert_eq!(r.event.as_ref(), Some(event), "{message}");
        assert_eq!(r.language, Some(*lang), "{message}");
    }
}

#[test]
fn the_huge_page_hint_in_german_gives_the_size() {
    let hint = super::super::catalog::MESSAGES
        .iter()
        .find(|(lang, english, _)| *lang == 0 && english.starts_with("This error usually means"))
        .map(|(_, _, german)| german.replace("%zu", "150994944"))
        .unwrap();
    let r = record(
        Severity::Fatal,
        "konnte anonymes Shared Memory nicht mappen: Nicht genügend Hauptspeicher verfügbar",
        None,
        Some(&hint),
    );
    assert!(
        matches!(
            r.event,
            Some(PgEvent::SharedMemoryMapFailed {
                request_bytes: Some(150_994_944),
                ..
            })
        ),
        "{:?} {hint}",
        r.event
    );
}
