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
    // fixtures/incidents/pg15-io-errors (PANIC, data_sync_retry off)
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
    // fixtures/incidents/pg15-read-only-fs, pg15-io-errors
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
fn musls_eio_text_is_an_io_error_and_eremoteio_is_not() {
    // musl (Alpine-based images) prints EIO as `I/O error`: nextcloud/all-in-one#3083's PANIC.
    let io = |message: &str| match classify(message) {
        Some(PgEvent::CouldNotFsync { io_error, .. }) => io_error,
        other => panic!("not a failed fsync: {other:?}"),
    };
    assert!(io(
        "could not fdatasync file \"000000010000000100000040\": I/O error"
    ));
    assert!(io(
        "could not fsync file \"base/5/16384\": Input/output error"
    ));
    assert!(!io(
        "could not fsync file \"base/5/16384\": Remote I/O error"
    ));
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
    // fixtures/incidents/pg15-archive-failing
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
    // fixtures/incidents/pg15-hugepages-on-none
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

#[test]
fn wraparound_warnings_and_refusals_of_every_version() {
    let warning = |database: Option<&str>, oid: Option<u32>, remaining, multixact| {
        Some(PgEvent::WraparoundWarning {
            database: database.map(str::to_owned),
            database_oid: oid,
            remaining,
            multixact,
        })
    };
    assert_eq!(
        classify("database \"postgres\" must be vacuumed within 39999985 transactions"),
        warning(Some("postgres"), None, 39_999_985, false)
    );
    assert_eq!(
        classify("database with OID 5 must be vacuumed within 2999999 transactions"),
        warning(None, Some(5), 2_999_999, false)
    );
    assert_eq!(
        classify("database \"app\" must be vacuumed before 1 more MultiXactId is used"),
        warning(Some("app"), None, 1, true)
    );
    assert_eq!(
        classify("database with OID 16384 must be vacuumed before 9 more MultiXactIds are used"),
        warning(None, Some(16384), 9, true)
    );
    assert_eq!(
        classify(
            "database with OID 16384 must be vacuumed before 1000 more multixact members are used"
        ),
        warning(None, Some(16384), 1000, true)
    );
    assert_eq!(
        classify("database \"app\" must be vacuumed within many transactions"),
        None
    );
    let refused = |database: Option<&str>, oid: Option<u32>, multixact| {
        Some(PgEvent::WraparoundRefused {
            database: database.map(str::to_owned),
            database_oid: oid,
            multixact,
        })
    };
    for (message, want) in [
        (
            "database is not accepting commands to avoid wraparound data loss in database \"app\"",
            refused(Some("app"), None, false),
        ),
        (
            "database is not accepting commands to avoid wraparound data loss in database with OID 16384",
            refused(None, Some(16384), false),
        ),
        (
            "database is not accepting commands that generate new MultiXactIds to avoid wraparound data loss in database \"app\"",
            refused(Some("app"), None, true),
        ),
        // PG ≥ 17
        (
            "database is not accepting commands that assign new transaction IDs to avoid wraparound data loss in database \"app\"",
            refused(Some("app"), None, false),
        ),
        (
            "database is not accepting commands that assign new MultiXactIds to avoid wraparound data loss in database with OID 1",
            refused(None, Some(1), true),
        ),
    ] {
        assert_eq!(classify(message), want, "{message}");
    }
}

#[test]
fn replication_slots_invalidated_for_their_wal() {
    // 13–15: the reason in the message.
    assert_eq!(
        classify(
            "invalidating slot \"standby1\" because its restart_lsn 0/5000000 exceeds max_slot_wal_keep_size"
        ),
        Some(PgEvent::SlotInvalidated {
            slot: "standby1".into(),
            restart_lsn: Some(lsn("0/5000000")),
            excess_bytes: None,
            wal_limit: true,
        })
    );
    // ≥ 16: the reason in the DETAIL.
    let r = record(
        Severity::Log,
        "invalidating obsolete replication slot \"standby1\"",
        Some("The slot's restart_lsn 0/5000000 exceeds the limit by 16777216 bytes."),
        None,
    );
    assert_eq!(
        r.event,
        Some(PgEvent::SlotInvalidated {
            slot: "standby1".into(),
            restart_lsn: Some(lsn("0/5000000")),
            excess_bytes: Some(16_777_216),
            wal_limit: true,
        })
    );
    let r = record(
        Severity::Log,
        "invalidating obsolete replication slot \"logical1\"",
        Some("The slot conflicted with xid horizon 748."),
        None,
    );
    assert!(matches!(
        r.event,
        Some(PgEvent::SlotInvalidated {
            wal_limit: false,
            restart_lsn: None,
            ..
        })
    ));
    assert_eq!(
        classify("terminating process 4242 to release replication slot \"standby1\""),
        Some(PgEvent::SlotHolderTerminated {
            pid: 4242,
            slot: "standby1".into()
        })
    );
}

#[test]
fn signs_of_corrupted_data() {
    assert_eq!(
        classify("missing chunk number 0 for toast value 16391 in pg_toast_16384"),
        Some(PgEvent::ToastChunkMissing {
            chunk: 0,
            value: 16391,
            relation: "pg_toast_16384".into()
        })
    );
    let xid = |field: &str, xid, name: Option<&str>, cutoff| {
        Some(PgEvent::TupleXidCorruption {
            field: field.into(),
            xid,
            cutoff_name: name.map(str::to_owned),
            cutoff,
        })
    };
    for (message, want) in [
        (
            "found xmin 1234 from before relfrozenxid 5678",
            xid("xmin", 1234, Some("relfrozenxid"), Some(5678)),
        ),
        (
            "found xmax 1234 from before relfrozenxid 5678",
            xid("xmax", 1234, Some("relfrozenxid"), Some(5678)),
        ),
        (
            "found update xid 1234 from before xid cutoff 5678",
            xid("update xid", 1234, Some("xid cutoff"), Some(5678)),
        ),
        (
            "found multixact 12 from before relminmxid 34",
            xid("multixact", 12, Some("relminmxid"), Some(34)),
        ),
        (
            "uncommitted xmin 1234 from before xid cutoff 5678 needs to be frozen",
            xid("xmin", 1234, Some("xid cutoff"), Some(5678)),
        ),
        (
            "multixact 12 from before multi freeze cutoff 34 found to be still running",
            xid("multixact", 12, Some("multi freeze cutoff"), Some(34)),
        ),
        (
            "cannot freeze committed xmax 1234",
            xid("xmax", 1234, None, None),
        ),
        (
            "cannot freeze committed update xid 1234",
            xid("update xid", 1234, None, None),
        ),
    ] {
        assert_eq!(classify(message), want, "{message}");
    }
    assert_eq!(classify("found nothing from before the war"), None);
    assert_eq!(classify("multixact 12 from before 34"), None);
    assert_eq!(
        classify("invalid memory alloc request size 18446744073709551613"),
        Some(PgEvent::InvalidAllocSize {
            bytes: 18_446_744_073_709_551_613
        })
    );
    for message in [
        "unexpected data beyond EOF in block 12 of relation base/5/16384",
        "unexpected data beyond EOF in block 12 of relation \"base/5/16384\"",
    ] {
        assert_eq!(
            classify(message),
            Some(PgEvent::DataBeyondEof {
                block: 12,
                relation: "base/5/16384".into()
            }),
            "{message}"
        );
    }
}

#[test]
fn a_server_that_will_not_start() {
    let r = record(
        Severity::Fatal,
        "lock file \"postmaster.pid\" already exists",
        None,
        Some(
            "Is another postmaster (PID 4242) running in data directory \"/var/lib/postgresql/15/main\"?",
        ),
    );
    assert_eq!(
        r.event,
        Some(PgEvent::LockFileExists {
            path: "postmaster.pid".into(),
            pid: Some(4242)
        })
    );
    assert_eq!(
        classify("could not bind IPv4 address \"127.0.0.1\": Address already in use"),
        Some(PgEvent::CouldNotBind {
            family: "IPv4".into(),
            address: "127.0.0.1".into(),
            error: "Address already in use".into(),
            in_use: true
        })
    );
    assert_eq!(
        classify("could not create listen socket for \"localhost\""),
        Some(PgEvent::ListenSocketFailed {
            address: Some("localhost".into())
        })
    );
    assert_eq!(
        classify("could not create any TCP/IP sockets"),
        Some(PgEvent::ListenSocketFailed { address: None })
    );
    for message in [
        "data directory \"/var/lib/postgresql/15/main\" has invalid permissions",
        "data directory \"/var/lib/postgresql/15/main\" has group or world access",
    ] {
        assert_eq!(
            classify(message),
            Some(PgEvent::DataDirectoryPermissions {
                path: "/var/lib/postgresql/15/main".into()
            }),
            "{message}"
        );
    }
    let r = record(
        Severity::Fatal,
        "database files are incompatible with server",
        Some(
            "The data directory was initialized by PostgreSQL version 13, which is not compatible with this version 15.18 (Debian 15.18-0+deb12u1).",
        ),
        None,
    );
    assert_eq!(
        r.event,
        Some(PgEvent::IncompatibleDataFiles {
            data_version: Some("13".into()),
            server_version: Some("15.18 (Debian 15.18-0+deb12u1)".into())
        })
    );
}

#[test]
fn wraparound_and_start_failures_in_other_languages() {
    let cases: &[Case] = &[
        (
            "de",
            Severity::Warning,
            "Datenbank »postgres« muss innerhalb von 39999985 Transaktionen gevacuumt werden",
            None,
            None,
            PgEvent::WraparoundWarning {
                database: Some("postgres".into()),
                database_oid: None,
                remaining: 39_999_985,
                multixact: false,
            },
        ),
        (
            // The French msgstr holds a newline: the server continues it on a TAB line.
            "fr",
            Severity::Warning,
            "un VACUUM doit être exécuté sur la base de données « postgres » dans un maximum de\n39999985 transactions",
            None,
            None,
            PgEvent::WraparoundWarning {
                database: Some("postgres".into()),
                database_oid: None,
                remaining: 39_999_985,
                multixact: false,
            },
        ),
        (
            "ru",
            Severity::Error,
            "база данных не принимает команды, назначающие новые идентификаторы транзакций, во избежание потери данных из-за зацикливания в базе данных \"app\"",
            None,
            None,
            PgEvent::WraparoundRefused {
                database: Some("app".into()),
                database_oid: None,
                multixact: false,
            },
        ),
        (
            "de",
            Severity::Fatal,
            "Sperrdatei »postmaster.pid« existiert bereits",
            None,
            Some(
                "Läuft bereits ein anderer postmaster-Prozess (PID 4242) im Datenverzeichnis »/var/lib/postgresql/15/main«?",
            ),
            PgEvent::LockFileExists {
                path: "postmaster.pid".into(),
                pid: Some(4242),
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
fn a_lock_file_that_cannot_be_written_or_created() {
    // Public log (fixtures/wild/nextcloud-aio-1638-*): a full data volume at start.
    assert_eq!(
        classify("could not write lock file \"postmaster.pid\": No space left on device"),
        Some(PgEvent::CouldNotWrite {
            path: "postmaster.pid".into(),
            error: "No space left on device".into(),
            no_space: true,
            read_only: false,
            io_error: false,
        })
    );
    assert_eq!(
        classify("could not create lock file \"postmaster.pid\": Read-only file system"),
        Some(PgEvent::CouldNotOpenFile {
            path: "postmaster.pid".into(),
            error: "Read-only file system".into(),
            create: true,
            read_only: true,
            io_error: false,
            no_space: false,
        })
    );
}

#[test]
fn a_wal_segment_that_cannot_be_read() {
    // Public log (fixtures/wild/noobaa-6611-*), PostgreSQL 12's wording.
    assert_eq!(
        classify(
            "could not read from log segment 000000010000000000000001, offset 0: Input/output error"
        ),
        Some(PgEvent::CouldNotReadWal {
            segment: "000000010000000000000001".into(),
            offset: Some(0),
            error: "Input/output error".into(),
            io_error: true,
        })
    );
    // PostgreSQL 13 and later, and a short read.
    assert_eq!(
        classify(
            "could not read from WAL segment 000000010000000000000003, offset 8192: read 0 of 8192"
        ),
        Some(PgEvent::CouldNotReadWal {
            segment: "000000010000000000000003".into(),
            offset: Some(8192),
            error: "read 0 of 8192".into(),
            io_error: false,
        })
    );
}

#[test]
fn a_file_operation_s_storage_error_is_read_from_its_message() {
    use super::super::FileErrno;
    let errno = |message: &str| classify(message).and_then(|e| e.file_errno());
    // fixtures/incidents/pg15-disk-full, pg15-read-only-fs, pg15-io-errors: the real lines.
    assert_eq!(
        errno(r#"could not extend file "base/5/16385.1": No space left on device"#),
        Some(FileErrno::NoSpace)
    );
    assert_eq!(
        errno(r#"could not open file "global/pg_control": Read-only file system"#),
        Some(FileErrno::ReadOnly)
    );
    assert_eq!(
        errno(r#"could not fsync file "base/5/16384_fsm": Input/output error"#),
        Some(FileErrno::IoError)
    );
    // Not the storage's: a missing file, a permission; and not a file operation.
    assert_eq!(
        errno(r#"could not open file "base/5/1259": No such file or directory"#),
        None
    );
    assert_eq!(
        errno(r#"could not open file "base/5/1259": Permission denied"#),
        None
    );
    assert_eq!(errno("out of memory"), None);
}
