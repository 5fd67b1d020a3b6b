//! Message classification: the English text of a record's main line → a [`PgEvent`] with its
//! fields, then the record's DETAIL filling in what the main line does not say (the query a
//! crashed backend was running, the size an out-of-memory request asked for).
//!
//! Matching is by the message's structure (`(PID n)`, the signal number, `X/Y` LSNs), so a
//! translated catalog only needs its fixed phrases added here, not a new grammar.

use super::{Lsn, PgEvent, PgRecord};

/// Classifies a main-line message. `None` for messages this slice does not know.
pub(crate) fn classify(message: &str) -> Option<PgEvent> {
    child_exit(message)
        .or_else(|| fixed_phrase(message))
        .or_else(|| with_argument(message))
}

/// Completes `record.event` from the record's DETAIL.
pub(crate) fn complete_from_detail(record: &mut PgRecord) {
    let Some(detail) = record.detail.as_deref() else {
        return;
    };
    match &mut record.event {
        Some(PgEvent::TerminatedBySignal { query, .. } | PgEvent::ExitedWithCode { query, .. }) => {
            // DETAIL:  Failed process was running: select pg_sleep(600)
            if let Some(q) = detail.strip_prefix("Failed process was running: ") {
                *query = Some(q.to_owned());
            }
        }
        Some(PgEvent::OutOfMemory {
            request_size,
            memory_context,
        }) => {
            // DETAIL:  Failed on request of size 600000004 in memory context "ExprContext".
            if let Some(rest) = detail.strip_prefix("Failed on request of size ") {
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                *request_size = rest[..digits].parse().ok();
                *memory_context = rest[digits..]
                    .strip_prefix(" in memory context \"")
                    .and_then(|r| r.rsplit_once('"'))
                    .map(|(name, _)| name.to_owned());
            }
        }
        _ => {}
    }
}

/// `server process (PID 24797) was terminated by signal 9: Killed`
/// `client backend (PID 24797) was terminated by signal 9: Killed` (PG 18)
/// `worker process: parallel worker for PID 30491 (PID 31458) was terminated by signal 9: Killed` (PG 10)
/// `background worker "logical replication launcher" (PID 31) exited with exit code 1`
/// `server process (PID 77) exited with unrecognized status 1234`
fn child_exit(message: &str) -> Option<PgEvent> {
    let (head, tail) = split_pid_marker(message)?;
    let (process, pid) = head;
    if let Some(rest) = tail.strip_prefix("was terminated by signal ") {
        let (signal, name) = rest
            .split_once(':')
            .map_or((rest, ""), |(s, n)| (s, n.trim_start()));
        return Some(PgEvent::TerminatedBySignal {
            process,
            pid,
            signal: signal.trim().parse().ok()?,
            signal_name: name.to_owned(),
            query: None,
        });
    }
    if let Some(code) = tail.strip_prefix("exited with exit code ") {
        return Some(PgEvent::ExitedWithCode {
            process,
            pid,
            code: code.trim().parse().ok()?,
            query: None,
        });
    }
    if let Some(status) = tail.strip_prefix("exited with unrecognized status ") {
        return Some(PgEvent::ExitedWithUnrecognizedStatus {
            process,
            pid,
            status: status.trim().parse().ok()?,
        });
    }
    None
}

/// Splits `<process> (PID n) <tail>` at its last `(PID n) `, so a process name that itself
/// holds `PID` (PG 10's `parallel worker for PID 30491`) stays whole.
fn split_pid_marker(message: &str) -> Option<((String, u32), &str)> {
    let open = message.rfind(" (PID ")?;
    let after = &message[open + " (PID ".len()..];
    let close = after.find(") ")?;
    let pid = after[..close].parse().ok()?;
    let process = &message[..open];
    if process.is_empty() {
        return None;
    }
    Some(((process.to_owned(), pid), &after[close + 2..]))
}

/// Messages that are the whole text, no arguments.
fn fixed_phrase(message: &str) -> Option<PgEvent> {
    Some(match message.trim_end() {
        "terminating any other active server processes" => PgEvent::TerminatingOtherProcesses,
        "all server processes terminated; reinitializing" => PgEvent::Reinitializing,
        "database system was not properly shut down; automatic recovery in progress" => {
            PgEvent::AutomaticRecovery
        }
        "database system is ready to accept connections" => PgEvent::Ready,
        "redo is not required" => PgEvent::RedoNotRequired,
        "database system is shut down" => PgEvent::ShutDown,
        "the database system is in recovery mode" => PgEvent::InRecoveryMode,
        "the database system is starting up" => PgEvent::StartingUp,
        "the database system is not yet accepting connections" => {
            PgEvent::NotYetAcceptingConnections
        }
        "terminating connection because of crash of another server process" => {
            PgEvent::TerminatingConnectionCrash
        }
        "out of memory" => PgEvent::OutOfMemory {
            request_size: None,
            memory_context: None,
        },
        "shutting down because restart_after_crash is off"
        | "shutting down because \"restart_after_crash\" is off"
        | "shutting down due to startup process failure"
        | "aborting startup due to startup process failure" => PgEvent::ShuttingDownAfterCrash {
            reason: message.trim_end().to_owned(),
        },
        _ => return None,
    })
}

/// Messages with one argument after a fixed start.
fn with_argument(message: &str) -> Option<PgEvent> {
    // redo starts at 0/1500780
    if let Some(rest) = message.strip_prefix("redo starts at ") {
        return Some(PgEvent::RedoStart {
            lsn: Lsn::parse(first_word(rest))?,
        });
    }
    // redo done at 0/2C31F28 system usage: CPU: user: 0.05 s, system: 0.03 s, elapsed: 0.12 s
    if let Some(rest) = message.strip_prefix("redo done at ") {
        let lsn = Lsn::parse(first_word(rest))?;
        return Some(PgEvent::RedoDone {
            lsn,
            elapsed_seconds: elapsed_seconds(rest),
        });
    }
    // database system was interrupted; last known up at 2026-11-21 17:08:44 UTC
    if let Some(at) = message.strip_prefix("database system was interrupted; last known up at ") {
        return Some(PgEvent::Interrupted {
            last_known_up: at.to_owned(),
        });
    }
    // database system was interrupted while in recovery at [log time ]2026-11-21 17:08:44 UTC
    if let Some(at) = message.strip_prefix("database system was interrupted while in recovery at ")
    {
        let at = at.strip_prefix("log time ").unwrap_or(at);
        return Some(PgEvent::InterruptedWhileInRecovery { at: at.to_owned() });
    }
    // last completed transaction was at log time 2026-11-21 17:18:47.201369+00
    if let Some(at) = message.strip_prefix("last completed transaction was at log time ") {
        return Some(PgEvent::LastCompletedTransaction { at: at.to_owned() });
    }
    // invalid record length at 0/2C31F60: wanted 24, got 0
    if let Some(rest) = message.strip_prefix("invalid record length at ") {
        let lsn = rest.split(':').next().and_then(Lsn::parse)?;
        return Some(PgEvent::InvalidRecordLength { lsn });
    }
    // checkpoint starting: end-of-recovery immediate wait
    if let Some(flags) = message.strip_prefix("checkpoint starting:") {
        return Some(PgEvent::CheckpointStarting {
            flags: flags.split_whitespace().map(str::to_owned).collect(),
        });
    }
    // database system was shut down at 2026-11-21 17:05:02 UTC
    if let Some(at) = message.strip_prefix("database system was shut down at ") {
        return Some(PgEvent::ShutDownAt { at: at.to_owned() });
    }
    // received fast shutdown request
    if let Some(mode) = message
        .strip_prefix("received ")
        .and_then(|r| r.strip_suffix(" shutdown request"))
    {
        return Some(PgEvent::ShutdownRequested {
            mode: mode.to_owned(),
        });
    }
    // starting PostgreSQL 15.14 (Debian 15.14-0+deb12u1) on x86_64-pc-linux-gnu, compiled by …
    if let Some(rest) = message.strip_prefix("starting PostgreSQL ") {
        let version = rest.split_once(" on ").map_or(rest, |(v, _)| v);
        return Some(PgEvent::Starting {
            version: version.to_owned(),
        });
    }
    None
}

fn first_word(s: &str) -> &str {
    s.split([' ', ',', ';']).next().unwrap_or("")
}

/// `… elapsed: 0.12 s` → 0.12.
fn elapsed_seconds(s: &str) -> Option<f64> {
    let (_, rest) = s.rsplit_once("elapsed: ")?;
    rest.split(' ').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
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
        assert_eq!(classify("checkpoint complete: wrote 3 buffers"), None);
    }

    fn record(message: &str, detail: &str) -> PgRecord {
        let mut r = PgRecord {
            message: message.into(),
            detail: Some(detail.into()),
            event: classify(message),
            ..PgRecord::default()
        };
        complete_from_detail(&mut r);
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
                request_size: Some(600000004),
                memory_context: Some("ExprContext".into())
            })
        );
        let r = record("out of memory", "Failed on request of size 8192.");
        assert_eq!(
            r.event,
            Some(PgEvent::OutOfMemory {
                request_size: Some(8192),
                memory_context: None
            })
        );
    }
}
