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
    complete(&mut r, detail.as_deref());
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
