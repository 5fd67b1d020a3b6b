//! PostgreSQL's side of an outage, from the server log alone: a child's death and the
//! crash-restart cycle that followed (terminate others → reinitializing → recovery → redo →
//! ready), what the log recorded just before it, and restarts with crash recovery that no
//! logged death explains (the postmaster or the host died).

use jiff::Timestamp;
use pgmortem_parse::pglog::{PgEvent, PgRecord};

use crate::clock::{self, seconds_between};
use crate::digest::{is_cycle, severity_name};
use crate::report::LogLine;
use crate::sources::PgSource;

/// How far back (seconds) an event that explains deaths is looked for before one.
pub(crate) const PRECEDING_WINDOW_SECONDS: f64 = 60.0;
/// Lines cited before one death.
const MAX_PRECEDING: usize = 20;
/// Records looked at backwards from a death for its window.
const MAX_LOOKBACK: usize = 400;

/// A PostgreSQL crash and the cycle that followed it.
pub(crate) struct Crash<'a> {
    /// The log.
    pub path: &'a str,
    /// The `terminated by signal` / `exited with exit code` record.
    pub record: &'a PgRecord,
    /// Its time on UTC.
    pub at: Option<Timestamp>,
    /// The cycle's records: terminate others, reinitializing, recovery, redo, ready.
    pub cycle: Vec<&'a PgRecord>,
    /// What the log recorded just before, oldest first.
    pub preceded_by: Vec<LogLine>,
    /// `terminating connection because of crash of another server process` records.
    pub sessions_lost: u64,
    /// Connections refused during recovery.
    pub connections_refused: u64,
}

impl Crash<'_> {
    /// The PID of the process that died.
    pub fn pid(&self) -> Option<u32> {
        match &self.record.event {
            Some(PgEvent::TerminatedBySignal { pid, .. } | PgEvent::ExitedWithCode { pid, .. }) => {
                Some(*pid)
            }
            _ => None,
        }
    }

    /// The signal that killed it, when one did.
    pub fn signal(&self) -> Option<i32> {
        match &self.record.event {
            Some(PgEvent::TerminatedBySignal { signal, .. }) => Some(*signal),
            _ => None,
        }
    }
}

/// A server start with crash recovery that no logged death explains: the postmaster (or the
/// host) died without the log saying so.
pub(crate) struct UncleanStart<'a> {
    /// The log.
    pub path: &'a str,
    /// The time of the `database system was not properly shut down; automatic recovery in
    /// progress` record.
    pub at: Option<Timestamp>,
    /// The `starting PostgreSQL` record of the new postmaster, when logged.
    pub start: Option<&'a PgRecord>,
    /// `database system was interrupted; last known up at …`: the text of that time.
    pub last_known_up: Option<&'a str>,
    /// The recovery that followed, up to `ready`.
    pub cycle: Vec<&'a PgRecord>,
    /// Connections refused during recovery.
    pub connections_refused: u64,
    /// The last record before the new start, when the log has one: the old instance's last
    /// sign of life.
    pub last_before: Option<&'a PgRecord>,
    /// The first `terminating connection due to unexpected postmaster exit` a backend logged
    /// before the new start: the postmaster died while the host stayed up.
    pub children_noticed: Option<&'a PgRecord>,
}

/// Every crash of every PostgreSQL source with its cycle.
pub(crate) fn crashes(postgres: &[PgSource]) -> Vec<Crash<'_>> {
    let mut out = Vec::new();
    for source in postgres {
        let records = &source.digest.records;
        let mut i = 0;
        while i < records.len() {
            if !starts_crash(records, i) {
                i += 1;
                continue;
            }
            let mut cycle = Vec::new();
            let mut sessions_lost = 0;
            let mut connections_refused = 0;
            let mut j = i + 1;
            while j < records.len() && !starts_crash(records, j) {
                let record = &records[j];
                if is_cycle_event(record) {
                    cycle.push(record);
                }
                match record.event {
                    Some(PgEvent::TerminatingConnectionCrash) => sessions_lost += 1,
                    Some(
                        PgEvent::InRecoveryMode
                        | PgEvent::StartingUp
                        | PgEvent::NotYetAcceptingConnections,
                    ) => connections_refused += 1,
                    _ => {}
                }
                j += 1;
                if matches!(record.event, Some(PgEvent::Ready)) {
                    break;
                }
            }
            let record = &records[i];
            let at = record.time.as_ref().and_then(clock::postgres);
            out.push(Crash {
                path: &source.path,
                record,
                at,
                cycle,
                preceded_by: preceding(source, i, at),
                sessions_lost,
                connections_refused,
            });
            i = j;
        }
    }
    out
}

fn starts_crash(records: &[PgRecord], i: usize) -> bool {
    match &records[i].event {
        Some(PgEvent::TerminatedBySignal { .. }) => true,
        Some(PgEvent::ExitedWithCode { code, .. }) if *code != 0 => records[i + 1..]
            .iter()
            .take(3)
            .any(|r| matches!(r.event, Some(PgEvent::TerminatingOtherProcesses))),
        _ => false,
    }
}

fn is_cycle_event(record: &PgRecord) -> bool {
    record.event.as_ref().is_some_and(is_cycle)
}

/// Events that explain why processes die.
fn explains_deaths(event: &PgEvent) -> bool {
    match event {
        PgEvent::OutOfMemory { .. }
        | PgEvent::ForkFailed { .. }
        | PgEvent::Panic
        | PgEvent::SharedMemoryMapFailed { .. } => true,
        PgEvent::CouldNotFsync { .. }
        | PgEvent::NoValidCheckpoint { .. }
        | PgEvent::RedoLocationMissing { .. } => true,
        PgEvent::SharedMemoryResizeFailed { no_space, .. } => *no_space,
        PgEvent::CouldNotWrite {
            no_space,
            read_only,
            io_error,
            ..
        }
        | PgEvent::CouldNotExtendFile {
            no_space,
            read_only,
            io_error,
            ..
        }
        | PgEvent::CouldNotOpenFile {
            no_space,
            read_only,
            io_error,
            ..
        } => *no_space || *read_only || *io_error,
        _ => false,
    }
}

/// What the log recorded before the death at `records[i]`: the dead process's own error lines,
/// and events that explain deaths in the [`PRECEDING_WINDOW_SECONDS`] before it.
fn preceding(source: &PgSource, i: usize, at: Option<Timestamp>) -> Vec<LogLine> {
    let records = &source.digest.records;
    let death = &records[i];
    let mut lines: Vec<LogLine> = source
        .digest
        .before_death
        .get(&death.line)
        .map(|rs| rs.iter().map(|r| log_line(&source.path, r)).collect())
        .unwrap_or_default();
    for record in records[..i].iter().rev().take(MAX_LOOKBACK) {
        // The previous outage ended there: what came before belongs to it.
        if matches!(record.event, Some(PgEvent::Ready | PgEvent::Reinitializing)) {
            break;
        }
        let t = record.time.as_ref().and_then(clock::postgres);
        if let (Some(t), Some(at)) = (t, at)
            && seconds_between(t, at) > PRECEDING_WINDOW_SECONDS
        {
            break;
        }
        // Any PANIC explains a death (the server's own abort), whatever its kind.
        if (record.event.as_ref().is_some_and(explains_deaths)
            || record.severity == Some(pgmortem_parse::pglog::Severity::Panic))
            && !lines.iter().any(|l| l.line == record.line)
        {
            lines.push(log_line(&source.path, record));
        }
    }
    lines.sort_by_key(|l| l.line);
    if lines.len() > MAX_PRECEDING {
        lines.drain(..lines.len() - MAX_PRECEDING);
    }
    lines
}

/// A record as an incident cites it.
pub(crate) fn log_line(path: &str, record: &PgRecord) -> LogLine {
    let at = record.time.as_ref().and_then(clock::postgres);
    LogLine {
        at,
        wrapper_at: clock::wrapper_at(record, at),
        path: path.to_owned(),
        line: record.line,
        pid: record.pid,
        severity: record.severity.map(severity_name),
        kind: record.event.as_ref().map(PgEvent::kind),
        message: record.message.clone(),
    }
}

/// Starts with crash recovery that are not part of a crash cycle: each `automatic recovery in
/// progress` after a new postmaster's `starting PostgreSQL` line, with no logged death
/// between the two, and no immediate shutdown (or shutdown after a crash) logged before that
/// start to explain the recovery.
pub(crate) fn unclean_starts<'a>(
    postgres: &'a [PgSource],
    crashes: &[Crash<'a>],
) -> Vec<UncleanStart<'a>> {
    let in_cycle = |r: &PgRecord| {
        crashes
            .iter()
            .any(|c| c.cycle.iter().any(|x| std::ptr::eq(*x, r)))
    };
    let mut out = Vec::new();
    for source in postgres {
        let records = &source.digest.records;
        let mut start: Option<usize> = None;
        // An immediate shutdown, or a shutdown after a crash (restart_after_crash off), is
        // followed by crash recovery at the next start: that recovery is explained.
        let mut explained_stop = false;
        let mut noticed: Option<&PgRecord> = None;
        for (i, record) in records.iter().enumerate() {
            match &record.event {
                Some(PgEvent::UnexpectedPostmasterExit) => {
                    noticed.get_or_insert(record);
                }
                Some(PgEvent::Ready) => noticed = None,
                Some(PgEvent::ShutdownRequested { mode }) if mode == "immediate" => {
                    explained_stop = true;
                }
                Some(PgEvent::ShuttingDownAfterCrash { .. }) => explained_stop = true,
                Some(PgEvent::Starting { .. }) => {
                    start = (!explained_stop).then_some(i);
                    explained_stop = false;
                }
                Some(PgEvent::TerminatedBySignal { .. } | PgEvent::ExitedWithCode { .. })
                    if starts_crash(records, i) =>
                {
                    start = None;
                }
                Some(PgEvent::AutomaticRecovery) if !in_cycle(record) => {
                    let Some(s) = start.take() else { continue };
                    let mut cycle = Vec::new();
                    let mut connections_refused = 0;
                    let mut last_known_up = None;
                    for r in &records[s..] {
                        match &r.event {
                            Some(PgEvent::Interrupted { last_known_up: t }) => {
                                last_known_up = Some(t.as_str());
                            }
                            Some(
                                PgEvent::InRecoveryMode
                                | PgEvent::StartingUp
                                | PgEvent::NotYetAcceptingConnections,
                            ) => connections_refused += 1,
                            _ => {}
                        }
                        if is_cycle_event(r) {
                            cycle.push(r);
                        }
                        if matches!(r.event, Some(PgEvent::Ready)) {
                            break;
                        }
                    }
                    out.push(UncleanStart {
                        path: &source.path,
                        at: record.time.as_ref().and_then(clock::postgres),
                        start: Some(&records[s]),
                        last_known_up,
                        cycle,
                        connections_refused,
                        last_before: s.checked_sub(1).map(|p| &records[p]),
                        children_noticed: noticed.take(),
                    });
                }
                _ => {}
            }
        }
    }
    out
}

/// The pids the postmaster logged under (the pid of `ready to accept connections`,
/// `starting PostgreSQL`, and of the lines announcing a child's death), with the times seen.
pub(crate) fn postmaster_pids(postgres: &[PgSource]) -> Vec<(u32, Option<Timestamp>, &str)> {
    let mut out = Vec::new();
    for source in postgres {
        for record in &source.digest.records {
            let by_postmaster = matches!(
                record.event,
                Some(
                    PgEvent::Ready
                        | PgEvent::Starting { .. }
                        | PgEvent::TerminatedBySignal { .. }
                        | PgEvent::TerminatingOtherProcesses
                        | PgEvent::Reinitializing
                )
            );
            if let (true, Some(pid)) = (by_postmaster, record.pid) {
                out.push((
                    pid,
                    record.time.as_ref().and_then(clock::postgres),
                    source.path.as_str(),
                ));
            }
        }
    }
    out
}
