//! Unit tests of the English message classifier.
use super::*;

fn lsn(s: &str) -> Lsn {
    Lsn::parse(s).unwrap()
}

#[test]
fn backend_killed_on_pg10_to_17_and_18() {
    assert_eq!(
        classify("server process (PID 24797) was terminated by signal 9: Killed"),
        Some(PgEvent::TerminatedBySignal {
            process: "server process".into(),
            pid: 24797,
            signal: 9,
            signal_name: "Killed".into(),
            query: None
        })
    );
    let Some(PgEvent::TerminatedBySignal {
        process,
        signal,
        signal_name,
        ..
    }) = classify("client backend (PID 5) was terminated by signal 11: Segmentation fault")
    else {
        panic!("not classified")
    };
    assert_eq!(
        (process.as_str(), signal, signal_name.as_str()),
        ("client backend", 11, "Segmentation fault")
    );
}

#[test]
fn background_processes_killed() {
    for (msg, want_process, want_pid) in [
        (
            "checkpointer process (PID 31) was terminated by signal 9: Killed",
            "checkpointer process",
            31,
        ),
        (
            "background worker \"parallel worker\" (PID 77) was terminated by signal 9: Killed",
            "background worker \"parallel worker\"",
            77,
        ),
        (
            "worker process: parallel worker for PID 30491 (PID 31458) was terminated by signal 9: Killed",
            "worker process: parallel worker for PID 30491",
            31458,
        ),
    ] {
        let Some(PgEvent::TerminatedBySignal {
            process,
            pid,
            signal: 9,
            ..
        }) = classify(msg)
        else {
            panic!("{msg}")
        };
        assert_eq!((process.as_str(), pid), (want_process, want_pid));
    }
    // A localised signal name is kept; the number is the key.
    let Some(PgEvent::TerminatedBySignal {
        signal: 9,
        signal_name,
        ..
    }) = classify("server process (PID 1) was terminated by signal 9: Processus arrêté")
    else {
        panic!()
    };
    assert_eq!(signal_name, "Processus arrêté");
}

#[test]
fn exits() {
    assert_eq!(
        classify(
            "background worker \"logical replication launcher\" (PID 31) exited with exit code 1"
        ),
        Some(PgEvent::ExitedWithCode {
            process: "background worker \"logical replication launcher\"".into(),
            pid: 31,
            code: 1,
            query: None
        })
    );
    assert_eq!(
        classify("server process (PID 7) exited with unrecognized status 1234"),
        Some(PgEvent::ExitedWithUnrecognizedStatus {
            process: "server process".into(),
            pid: 7,
            status: 1234
        })
    );
    assert_eq!(
        classify("server process (PID x) exited with exit code 1"),
        None
    );
    assert_eq!(classify(" (PID 5) exited with exit code 1"), None);
}

#[test]
fn crash_cycle_phrases() {
    assert_eq!(
        classify("terminating any other active server processes"),
        Some(PgEvent::TerminatingOtherProcesses)
    );
    assert_eq!(
        classify("all server processes terminated; reinitializing"),
        Some(PgEvent::Reinitializing)
    );
    assert_eq!(
        classify("database system was interrupted; last known up at 2026-11-21 17:08:44 UTC"),
        Some(PgEvent::Interrupted {
            last_known_up: "2026-11-21 17:08:44 UTC".into()
        })
    );
    assert_eq!(
        classify("database system was not properly shut down; automatic recovery in progress"),
        Some(PgEvent::AutomaticRecovery)
    );
    assert_eq!(
        classify("redo starts at 0/1500780"),
        Some(PgEvent::RedoStart {
            lsn: lsn("0/1500780")
        })
    );
    assert_eq!(
        classify("redo done at 0/2C31F28"),
        Some(PgEvent::RedoDone {
            lsn: lsn("0/2C31F28"),
            elapsed_seconds: None
        })
    );
    assert_eq!(
        classify(
            "redo done at 16/B374D848 system usage: CPU: user: 0.05 s, system: 0.03 s, elapsed: 31.47 s"
        ),
        Some(PgEvent::RedoDone {
            lsn: lsn("16/B374D848"),
            elapsed_seconds: Some(31.47)
        })
    );
    assert_eq!(
        classify("database system is ready to accept connections"),
        Some(PgEvent::Ready)
    );
    assert_eq!(
        classify("redo is not required"),
        Some(PgEvent::RedoNotRequired)
    );
    assert_eq!(
        classify("invalid record length at 0/2C31F60: wanted 24, got 0"),
        Some(PgEvent::InvalidRecordLength {
            lsn: lsn("0/2C31F60")
        })
    );
    assert_eq!(
        classify("invalid record length at 0/2C31F60: expected at least 24, got 0"),
        Some(PgEvent::InvalidRecordLength {
            lsn: lsn("0/2C31F60")
        })
    );
    assert_eq!(
        classify("checkpoint starting: end-of-recovery immediate wait"),
        Some(PgEvent::CheckpointStarting {
            flags: vec!["end-of-recovery".into(), "immediate".into(), "wait".into()]
        })
    );
    assert_eq!(
        classify(
            "database system was interrupted while in recovery at log time 2026-11-21 17:00:00 UTC"
        ),
        Some(PgEvent::InterruptedWhileInRecovery {
            at: "2026-11-21 17:00:00 UTC".into()
        })
    );
}

#[test]
fn lifecycle_phrases() {
    assert_eq!(
        classify("database system was shut down at 2026-11-21 17:05:02 UTC"),
        Some(PgEvent::ShutDownAt {
            at: "2026-11-21 17:05:02 UTC".into()
        })
    );
    assert_eq!(
        classify("received fast shutdown request"),
        Some(PgEvent::ShutdownRequested {
            mode: "fast".into()
        })
    );
    assert_eq!(
        classify("database system is shut down"),
        Some(PgEvent::ShutDown)
    );
    assert_eq!(
        classify("the database system is in recovery mode"),
        Some(PgEvent::InRecoveryMode)
    );
    assert_eq!(
        classify("the database system is not yet accepting connections"),
        Some(PgEvent::NotYetAcceptingConnections)
    );
    assert_eq!(
        classify("terminating connection because of crash of another server process"),
        Some(PgEvent::TerminatingConnectionCrash)
    );
    assert_eq!(
        classify("shutting down because \"restart_after_crash\" is off"),
        Some(PgEvent::ShuttingDownAfterCrash {
            reason: "shutting down because \"restart_after_crash\" is off".into()
        })
    );
    assert_eq!(
        classify("starting PostgreSQL 18.4 on x86_64-pc-linux-gnu, compiled by gcc, 64-bit"),
        Some(PgEvent::Starting {
            version: "18.4".into()
        })
    );
    assert_eq!(classify("redo starts at nowhere"), None);
    assert_eq!(classify("checkpoint completed: wrote 3 buffers"), None);
}

fn record(message: &str, detail: &str) -> PgRecord {
    let mut r = PgRecord {
        message: message.into(),
        detail: Some(detail.into()),
        event: classify(message),
        ..PgRecord::default()
    };
    let detail = r.detail.clone();
    complete(&mut r, detail.as_deref(), None);
    r
}

#[test]
fn detail_gives_the_failed_query_and_oom_request() {
    let r = record(
        "server process (PID 9) was terminated by signal 9: Killed",
        "Failed process was running: select pg_sleep(600)",
    );
    let Some(PgEvent::TerminatedBySignal { query, .. }) = r.event else {
        panic!()
    };
    assert_eq!(query.as_deref(), Some("select pg_sleep(600)"));
    let r = record(
        "out of memory",
        "Failed on request of size 600000004 in memory context \"ExprContext\".",
    );
    assert_eq!(
        r.event,
        Some(PgEvent::OutOfMemory {
            request_bytes: Some(600000004),
            memory_context: Some("ExprContext".into())
        })
    );
    let r = record("out of memory", "Failed on request of size 8192.");
    assert_eq!(
        r.event,
        Some(PgEvent::OutOfMemory {
            request_bytes: Some(8192),
            memory_context: None
        })
    );
}

#[test]
fn memory_and_fork_failures() {
    assert_eq!(
        classify("could not fork new process for connection: Cannot allocate memory"),
        Some(PgEvent::ForkFailed {
            process: "new process for connection".into(),
            error: "Cannot allocate memory".into()
        })
    );
    for (msg, process) in [
        (
            "could not fork autovacuum worker process: Resource temporarily unavailable",
            "autovacuum worker process",
        ),
        (
            "could not fork worker process: Cannot allocate memory",
            "worker process",
        ),
        (
            "could not fork \"autovacuum worker\" process: Cannot allocate memory",
            "\"autovacuum worker\" process",
        ),
    ] {
        let Some(PgEvent::ForkFailed { process: p, .. }) = classify(msg) else {
            panic!("{msg}")
        };
        assert_eq!(p, process);
    }
    assert_eq!(
        classify(
            "could not resize shared memory segment \"/PostgreSQL.1\" to 4194304 bytes: No space left on device"
        ),
        Some(PgEvent::SharedMemoryResizeFailed {
            segment: "/PostgreSQL.1".into(),
            bytes: 4194304,
            error: "No space left on device".into(),
            no_space: true
        })
    );
    assert_eq!(
        classify("could not map anonymous shared memory: Cannot allocate memory"),
        Some(PgEvent::SharedMemoryMapFailed {
            error: "Cannot allocate memory".into(),
            request_bytes: None
        })
    );
}

#[test]
fn disk_and_integrity() {
    assert_eq!(
        classify("could not write block 7 in file \"base/5/16384\": No space left on device"),
        Some(PgEvent::CouldNotWrite {
            path: "base/5/16384".into(),
            error: "No space left on device".into(),
            no_space: true,
            read_only: false,
            io_error: false
        })
    );
    assert_eq!(
        classify(
            "could not extend file \"base/5/16384\": wrote only 4096 of 8192 bytes at block 12"
        ),
        Some(PgEvent::CouldNotExtendFile {
            path: "base/5/16384".into(),
            error: "wrote only 4096 of 8192 bytes at block 12".into(),
            no_space: true,
            read_only: false,
            io_error: false
        })
    );
    assert_eq!(
        classify("could not read block 3 in file \"base/5/16384\": read only 0 of 8192 bytes"),
        Some(PgEvent::CouldNotReadBlock {
            block: 3,
            path: "base/5/16384".into(),
            error: "read only 0 of 8192 bytes".into(),
            io_error: false
        })
    );
    // PG 17+ reads in vectors: the first block of the range is the one reported.
    // (fixtures/formats/pglog/pg18-storage-faults.log)
    assert_eq!(
        classify(
            "could not read blocks 15..15 in file \"base/5/16384\": read only 0 of 8192 bytes"
        ),
        Some(PgEvent::CouldNotReadBlock {
            block: 15,
            path: "base/5/16384".into(),
            error: "read only 0 of 8192 bytes".into(),
            io_error: false
        })
    );
    assert_eq!(
        classify(
            "could not read blocks 7..9 in file \"base/5/1259\": read only 8192 of 24576 bytes"
        ),
        Some(PgEvent::CouldNotReadBlock {
            block: 7,
            path: "base/5/1259".into(),
            error: "read only 8192 of 24576 bytes".into(),
            io_error: false
        })
    );
    assert_eq!(
        classify("could not read blocks x..9 in file \"base/5/1\": read only 0 of 8192 bytes"),
        None
    );
    // PG 18 quotes the relation (pg18-storage-faults.log); PG 15 does not (pg15-storage-faults.log).
    for message in [
        "invalid page in block 0 of relation \"base/5/16392\"",
        "invalid page in block 0 of relation base/5/16392",
    ] {
        assert_eq!(
            classify(message),
            Some(PgEvent::InvalidPage {
                block: 0,
                relation: "base/5/16392".into()
            }),
            "{message}"
        );
    }
    assert_eq!(
        classify("page verification failed, calculated checksum 20919 but expected 15254"),
        Some(PgEvent::ChecksumFailure {
            calculated: 20919,
            expected: 15254
        })
    );
    // A PANIC no kind describes is `panic`; one a kind describes keeps its kind.
    let mut panic = PgRecord {
        severity: Some(Severity::Panic),
        message: "xlog flush request 0/1000000 is not satisfied --- flushed only to 0/F00000"
            .into(),
        ..PgRecord::default()
    };
    classify_record(&mut panic, Languages::default());
    assert_eq!(panic.event, Some(PgEvent::Panic));
    panic.message = "could not locate a valid checkpoint record".into();
    classify_record(&mut panic, Languages::default());
    assert_eq!(
        panic.event,
        Some(PgEvent::NoValidCheckpoint {
            lsn: None,
            required: false
        })
    );
}

#[test]
fn load() {
    assert_eq!(
        classify("remaining connection slots are reserved for roles with the SUPERUSER attribute"),
        Some(PgEvent::ReservedConnectionSlots {
            reserved_for: "roles with the SUPERUSER attribute".into()
        })
    );
    assert_eq!(
        classify("too many connections for role \"app\""),
        Some(PgEvent::TooManyConnections {
            scope: "role".into(),
            name: "app".into()
        })
    );
    assert_eq!(
        classify("checkpoints are occurring too frequently (1 second apart)"),
        Some(PgEvent::CheckpointsTooFrequent { seconds: 1 })
    );
    assert_eq!(
        classify("canceling statement due to conflict with recovery"),
        Some(PgEvent::StatementCanceled {
            reason: "conflict with recovery".into()
        })
    );
    for (msg, event) in [
        (
            "terminating connection due to idle-session timeout",
            PgEvent::IdleSessionTimeout,
        ),
        (
            "terminating connection due to administrator command",
            PgEvent::TerminatedByAdministrator,
        ),
        (
            "using stale statistics instead of current ones because stats collector is not responding",
            PgEvent::StaleStatistics,
        ),
        ("canceling autovacuum task", PgEvent::AutovacuumCanceled),
    ] {
        assert_eq!(classify(msg), Some(event), "{msg}");
    }
    // PG 18: SLRU buffers after the percentage, LSNs at the end.
    assert_eq!(
        classify(
            "checkpoint complete: wrote 3 buffers (0.0%), wrote 1 SLRU buffers; 0 WAL file(s) added, 0 removed, 1 recycled; write=0.101 s, sync=0.002 s, total=0.109 s; sync files=2, longest=0.001 s, average=0.001 s; distance=16384 kB, estimate=16384 kB; lsn=0/3000060, redo lsn=0/3000028"
        ),
        Some(PgEvent::CheckpointComplete {
            buffers: 3,
            buffers_percent: Some(0.0),
            wal_added: Some(0),
            wal_removed: Some(0),
            wal_recycled: Some(1),
            write_seconds: Some(0.101),
            sync_seconds: Some(0.002),
            total_seconds: Some(0.109),
            distance_kb: Some(16384),
            estimate_kb: Some(16384)
        })
    );
}

/// A record of `severity` holding `message`, classified in any language.
fn translated(severity: Severity, message: &str) -> PgRecord {
    let mut r = PgRecord {
        severity: Some(severity),
        message: message.into(),
        ..PgRecord::default()
    };
    classify_record(&mut r, Languages::default());
    r
}

/// PostgreSQL 16–18 wordings in other languages: the translations are those of the Debian
/// postgresql-17 and postgresql-18 catalogs (catalog.rs), filled in as the server prints them.
#[test]
fn pg16_to_18_wordings_in_other_languages() {
    let read_short = PgEvent::CouldNotReadBlock {
        block: 15,
        path: "base/5/16384".into(),
        error: "read only 0 of 8192 bytes".into(),
        io_error: false,
    };
    let cases = [
        (
            "de",
            "die verbleibenden Verbindungen sind für Rollen mit dem SUPERUSER-Attribut reserviert",
            PgEvent::ReservedConnectionSlots {
                reserved_for: "roles with the SUPERUSER attribute".into(),
            },
        ),
        (
            "de",
            // as a postmaster started from a C environment prints it
            "die verbleibenden Verbindungen sind f?r Rollen mit den Privilegien der Rolle >>pg_use_reserved_connections<< reserviert",
            PgEvent::ReservedConnectionSlots {
                reserved_for: "roles with privileges of the \"pg_use_reserved_connections\" role"
                    .into(),
            },
        ),
        (
            "de",
            "Client-Backend (PID 1423) wurde von Signal 9 beendet: Getötet",
            PgEvent::TerminatedBySignal {
                process: "client backend".into(),
                pid: 1423,
                signal: 9,
                signal_name: "Getötet".into(),
                query: None,
            },
        ),
        (
            "es",
            "no se pudo leer los bloques 15..15 del archivo «base/5/16384»: se leyeron sólo 0 de 8192 bytes",
            read_short.clone(),
        ),
        (
            "fr",
            "longueur invalide de l'enregistrement à 0/17BB4F0 : attendait au moins 24, a eu 0",
            PgEvent::InvalidRecordLength {
                lsn: lsn("0/17BB4F0"),
            },
        ),
        (
            "ja",
            "ファイル\"base/5/16384\"でブロック範囲 15...15 を読み取れませんでした: 8192バイト中0バイト分のみ読み込みました",
            read_short,
        ),
        (
            "ja",
            "\"自動VACUUMワーカー\"プロセスをforkできませんでした: リソースが一時的に利用できません",
            PgEvent::ForkFailed {
                process: "\"autovacuum worker\" process".into(),
                error: "Resource temporarily unavailable".into(),
            },
        ),
        (
            "ru",
            "клиентский обслуживающий процесс (PID 1423) был завершён по сигналу 9: Убито",
            PgEvent::TerminatedBySignal {
                process: "client backend".into(),
                pid: 1423,
                signal: 9,
                signal_name: "Убито".into(),
                query: None,
            },
        ),
        (
            "ru",
            "некорректная страница в блоке 0 отношения \"base/5/16392\"",
            PgEvent::InvalidPage {
                block: 0,
                relation: "base/5/16392".into(),
            },
        ),
    ];
    for (lang, message, event) in cases {
        let r = translated(Severity::Error, message);
        assert_eq!(r.event.as_ref(), Some(&event), "{message}");
        assert_eq!(r.language, Some(lang), "{message}");
    }
}

/// PostgreSQL 10–14 wordings in other languages, from the Debian postgresql-13 catalogs.
#[test]
fn pg10_to_14_wordings_in_other_languages() {
    let cases = [
        (
            "ru",
            "используется просроченная статистика вместо текущей, так как сборщик статистики не отвечает",
            PgEvent::StaleStatistics,
        ),
        (
            "zh_CN",
            "由于统计收集器无响应而使用旧的统计信息来代替当前的统计信息",
            PgEvent::StaleStatistics,
        ),
        (
            // The French msgstr holds a newline: the server continues it on a TAB line.
            "fr",
            "utilise de vieilles statistiques à la place des actuelles car le collecteur de\nstatistiques ne répond pas",
            PgEvent::StaleStatistics,
        ),
        (
            "ja",
            "データベースシステムはリードオンリー接続の受け付け準備ができました",
            PgEvent::ReadyReadOnly,
        ),
        (
            "de",
            "Redo fertig bei 0/2C31F28",
            PgEvent::RedoDone {
                lsn: lsn("0/2C31F28"),
                elapsed_seconds: None,
            },
        ),
    ];
    for (lang, message, event) in cases {
        let r = translated(Severity::Log, message);
        assert_eq!(r.event.as_ref(), Some(&event), "{message}");
        assert_eq!(r.language, Some(lang), "{message}");
    }
}

#[test]
fn a_logged_statement_is_never_an_event() {
    for message in [
        "duration: 0.512 ms  statement: SELECT 'server process (PID 5) was terminated by signal 9: Killed'",
        "statement: SELECT 'could not write to file \"base/5/1\": No space left on device'",
        "execute S_1: SELECT 'database system is ready to accept connections'",
        "duration: 1.0 ms  execute <unnamed>: SELECT 'background worker \"x\" (PID 7) exited with exit code 1'",
    ] {
        assert_eq!(classify(message), None, "{message}");
    }
    // Each message in it, alone, is one.
    assert!(classify("server process (PID 5) was terminated by signal 9: Killed").is_some());
    assert!(classify("database system is ready to accept connections").is_some());
    // A message that only starts with the word is not statement logging.
    assert!(!is_statement_log("duration: unknown"));
    assert!(!is_statement_log("statements were lost"));
}
