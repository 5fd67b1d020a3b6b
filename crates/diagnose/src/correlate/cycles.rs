//! PostgreSQL's side of an outage, from the server log alone: a child's death and the
//! crash-restart cycle that followed (terminate others → reinitializing → recovery → redo →
//! ready), what the log recorded just before it, and restarts with crash recovery that no
//! logged death explains (the postmaster or the host died).

use jiff::Timestamp;
use pgmortem_parse::pglog::{PgEvent, PgRecord, Severity};

use super::causes;
use crate::clock::{self, seconds_between};
use crate::digest::{is_cycle, severity_name};
use crate::report::{CauseLine, LogLine};
use crate::sources::PgSource;
use crate::sources::chain::{LogView, views};

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
    /// Why it died, when a line says so (see [`super::causes::of_event`]): the cause and the
    /// line, the process's own error first, else a PANIC in the minute before.
    pub cause: Option<(&'static str, CauseLine)>,
    /// True when the startup process died and the postmaster gave up (`shutting down due to
    /// startup process failure`, or no `ready` after it): the server did not come back.
    pub startup_gave_up: bool,
    /// True when the startup process was recovering (after a crash, or a start with crash or
    /// archive recovery) when it died, or died of what stops recovery (a missing checkpoint).
    pub in_recovery: bool,
}

impl Crash<'_> {
    /// The PID of the process that died.
    pub fn pid(&self) -> Option<u32> {
        dead_pid(self.record)
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

/// Every crash of every PostgreSQL log with its cycle (a log's files read as one: see
/// [`crate::sources::chain`]).
pub(crate) fn crashes(postgres: &[PgSource]) -> Vec<Crash<'_>> {
    let mut out = Vec::new();
    for view in views(postgres) {
        let records = &view.records;
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
                let record = records[j];
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
            let record = records[i];
            let at = record.time.as_ref().and_then(clock::postgres);
            let cause = death_cause(&view, i, at);
            let startup = dead_process(record).is_some_and(|p| p.contains("startup"))
                || cycle
                    .iter()
                    .any(|r| matches!(&r.event, Some(PgEvent::ShuttingDownAfterCrash { reason }) if reason.contains("startup")));
            let startup_gave_up = startup
                && (cycle
                    .iter()
                    .any(|r| matches!(r.event, Some(PgEvent::ShuttingDownAfterCrash { .. })))
                    || !cycle
                        .iter()
                        .any(|r| matches!(r.event, Some(PgEvent::Ready))));
            let in_recovery = recovering_before(records, i)
                || cause
                    .as_ref()
                    .is_some_and(|(c, _)| *c == "corruption" && startup);
            out.push(Crash {
                path: view.path(i),
                record,
                at,
                cycle,
                preceded_by: preceding(&view, i, at),
                sessions_lost,
                connections_refused,
                cause,
                startup_gave_up,
                in_recovery,
            });
            i = j;
        }
    }
    out
}

/// The process kind a death record names (`startup process`, `server process`, …).
fn dead_process(record: &PgRecord) -> Option<&str> {
    match &record.event {
        Some(
            PgEvent::TerminatedBySignal { process, .. } | PgEvent::ExitedWithCode { process, .. },
        ) => Some(process),
        _ => None,
    }
}

/// Whether the server was recovering when `records[i]` died: since the last start or
/// reinitialization, a crash restart (`reinitializing`: crash recovery follows), a start with
/// crash recovery, an interrupted recovery or a redo began.
fn recovering_before(records: &[&PgRecord], i: usize) -> bool {
    for record in records[..i].iter().rev().take(MAX_LOOKBACK) {
        match record.event {
            Some(PgEvent::Ready) | Some(PgEvent::ShutDownAt { .. }) => return false,
            Some(PgEvent::Reinitializing)
            | Some(PgEvent::AutomaticRecovery)
            | Some(PgEvent::RedoDone { .. })
            | Some(PgEvent::Interrupted { .. })
            | Some(PgEvent::InterruptedWhileInRecovery { .. })
            | Some(PgEvent::RedoStart { .. }) => return true,
            Some(PgEvent::Starting { .. }) => return false,
            _ => {}
        }
    }
    false
}

/// Why the process of the death at `records[i]` died, when a line names it: its own errors
/// (kept with the death by the digest) and its own lines in the [`PRECEDING_WINDOW_SECONDS`]
/// before it, and for a death of its own making (an abort, an exit code) a PANIC there; the
/// latest line that names a cause wins, but damage (`corruption`: a checkpoint not found) yields
/// to a storage failure of the same process before it (an I/O error that made the WAL
/// unreadable), which is the root of it.
fn death_cause(
    view: &LogView<'_>,
    i: usize,
    at: Option<Timestamp>,
) -> Option<(&'static str, CauseLine)> {
    let records = &view.records;
    let death = records[i];
    let pid = dead_pid(death);
    let from_outside = matches!(
        death.event,
        Some(PgEvent::TerminatedBySignal { signal, .. }) if signal != 6
    );
    // (cause, record, its file)
    let mut found: Vec<(&'static str, &PgRecord, &str)> = view
        .source(i)
        .digest
        .before_death
        .get(&death.line)
        .into_iter()
        .flatten()
        .filter_map(|r| causes::of_record(r).map(|c| (c, r, view.path(i))))
        .collect();
    for (k, record) in records[..i].iter().enumerate().rev().take(MAX_LOOKBACK) {
        if matches!(record.event, Some(PgEvent::Ready | PgEvent::Reinitializing)) {
            break;
        }
        let t = record.time.as_ref().and_then(clock::postgres);
        if let (Some(t), Some(at)) = (t, at)
            && seconds_between(t, at) > PRECEDING_WINDOW_SECONDS
        {
            break;
        }
        let own = record.pid.is_some() && record.pid == pid;
        let panic = record.severity == Some(Severity::Panic) && !from_outside;
        if (own || panic)
            && !found
                .iter()
                .any(|(_, r, p)| r.line == record.line && *p == view.path(k))
            && let Some(cause) = causes::of_record(record)
        {
            found.push((cause, record, view.path(k)));
        }
    }
    found.sort_by_key(|(_, r, p)| view.order(r.time.as_ref().and_then(clock::postgres), p, r.line));
    let (cause, record, path) = found
        .iter()
        .rev()
        .find(|(c, _, _)| *c != "corruption")
        .filter(|_| found.last().is_some_and(|(c, _, _)| *c == "corruption"))
        .or(found.last())?;
    Some((cause, causes::postgres_line(path, record)))
}

fn dead_pid(record: &PgRecord) -> Option<u32> {
    match &record.event {
        Some(PgEvent::TerminatedBySignal { pid, .. } | PgEvent::ExitedWithCode { pid, .. }) => {
            Some(*pid)
        }
        _ => None,
    }
}

fn starts_crash(records: &[&PgRecord], i: usize) -> bool {
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
        PgEvent::CouldNotWrite { .. }
        | PgEvent::CouldNotExtendFile { .. }
        | PgEvent::CouldNotOpenFile { .. } => event.file_errno().is_some(),
        _ => false,
    }
}

/// What the log recorded before the death at `records[i]`: the dead process's own error lines,
/// and events that explain deaths in the [`PRECEDING_WINDOW_SECONDS`] before it.
fn preceding(view: &LogView<'_>, i: usize, at: Option<Timestamp>) -> Vec<LogLine> {
    let records = &view.records;
    let death = records[i];
    let mut lines: Vec<LogLine> = view
        .source(i)
        .digest
        .before_death
        .get(&death.line)
        .map(|rs| rs.iter().map(|r| log_line(view.path(i), r)).collect())
        .unwrap_or_default();
    for (k, record) in records[..i].iter().enumerate().rev().take(MAX_LOOKBACK) {
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
            || record.severity == Some(Severity::Panic))
            && !lines
                .iter()
                .any(|l| l.line == record.line && l.path == view.path(k))
        {
            lines.push(log_line(view.path(k), record));
        }
    }
    lines.sort_by_key(|l| view.order(l.at, &l.path, l.line));
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
    for view in views(postgres) {
        let records = &view.records;
        let mut start: Option<usize> = None;
        // An immediate shutdown, or a shutdown after a crash (restart_after_crash off), is
        // followed by crash recovery at the next start: that recovery is explained.
        let mut explained_stop = false;
        let mut noticed: Option<&PgRecord> = None;
        for (i, &record) in records.iter().enumerate() {
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
                    for &r in &records[s..] {
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
                        path: view.path(i),
                        at: record.time.as_ref().and_then(clock::postgres),
                        start: Some(records[s]),
                        last_known_up,
                        cycle,
                        connections_refused,
                        last_before: s.checked_sub(1).map(|p| records[p]),
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

/// A start of the server that failed before the startup process ran: the postmaster logged
/// a FATAL (shared memory or huge pages it could not get, a lock file, a port in use, the data
/// directory's permissions or version, a setting) and exited.
pub(crate) struct FailedStart<'a> {
    /// The log.
    pub path: &'a str,
    /// When the postmaster gave up (its FATAL), UTC.
    pub at: Option<Timestamp>,
    /// The `starting PostgreSQL` record of that postmaster, when logged.
    pub start: Option<&'a PgRecord>,
    /// The postmaster's FATAL (or PANIC): why.
    pub reason: &'a PgRecord,
    /// `database system is shut down`, when logged.
    pub end: Option<&'a PgRecord>,
}

/// Failed starts for the refusals in `pending` (each with its file) that no `shut down` ended.
fn flush<'a>(
    pending: &mut Vec<(&'a PgRecord, &'a str)>,
    attempt: Option<(&'a PgRecord, Option<u32>)>,
    out: &mut Vec<FailedStart<'a>>,
) {
    for (reason, path) in pending.drain(..) {
        out.push(FailedStart {
            path,
            at: reason.time.as_ref().and_then(clock::postgres),
            start: attempt.filter(|(_, p)| *p == reason.pid).map(|(r, _)| r),
            reason,
            end: None,
        });
    }
}

/// True for the events that stop a postmaster before it serves, at FATAL.
fn refuses_start(event: &PgEvent) -> bool {
    let lock_file = |path: &str| path.ends_with("postmaster.pid") || path.ends_with(".lock");
    if let PgEvent::CouldNotWrite { path, .. } | PgEvent::CouldNotOpenFile { path, .. } = event {
        return lock_file(path);
    }
    matches!(
        event,
        PgEvent::SharedMemoryMapFailed { .. }
            | PgEvent::SharedMemoryCreateFailed { .. }
            | PgEvent::LockFileExists { .. }
            | PgEvent::ListenSocketFailed { .. }
            | PgEvent::DataDirectoryPermissions { .. }
            | PgEvent::IncompatibleDataFiles { .. }
    )
}

/// Every failed start of every PostgreSQL source, in log order: a postmaster's own FATAL or
/// PANIC followed by its `database system is shut down` (the FATAL kept with that line by the
/// digest), with no `ready`, shutdown request or child's death of that postmaster between; or
/// a FATAL that refuses a start (shared memory, lock file, sockets, data directory) with no
/// `ready` of its process after it. A startup process's death is a crash, not this.
pub(crate) fn failed_starts(postgres: &[PgSource]) -> Vec<FailedStart<'_>> {
    let mut out = Vec::new();
    for view in views(postgres) {
        let records = &view.records;
        // The start being watched: its `starting PostgreSQL` record and pid.
        let mut attempt: Option<(&PgRecord, Option<u32>)> = None;
        // Refusals seen and not yet ended by a `shut down`, with their files.
        let mut pending: Vec<(&PgRecord, &str)> = Vec::new();
        // A server is up (ready, not shut down or crashed since): a second postmaster refused
        // for the lock file or the port it holds is no outage.
        let mut serving = false;
        // A server ran since the last start (ready, or a child's death it reported): its
        // postmaster's FATAL and shutdown then end a run, not a start.
        let mut ran = false;
        // The file and line of the last start, ready or shut down: a reason must come after
        // it (the digest keeps the latest errors of a pid, and containers reuse the
        // postmaster's pid).
        let mut since: (&str, u64) = ("", 0);
        for (i, &record) in records.iter().enumerate() {
            let path = view.path(i);
            match &record.event {
                Some(PgEvent::Starting { .. }) => {
                    flush(&mut pending, attempt, &mut out);
                    attempt = Some((record, record.pid));
                    since = (path, record.line);
                    ran = false;
                }
                Some(PgEvent::Ready) => {
                    serving = true;
                    ran = true;
                    attempt = None;
                    since = (path, record.line);
                }
                Some(PgEvent::ShutdownRequested { .. })
                    if attempt.is_some_and(|(_, p)| p == record.pid) =>
                {
                    attempt = None;
                }
                Some(PgEvent::TerminatedBySignal { .. } | PgEvent::ExitedWithCode { .. })
                    if starts_crash(records, i) =>
                {
                    // A child died (the startup process among them): a crash, not this.
                    attempt = None;
                    pending.clear();
                    serving = false;
                    ran = true;
                }
                Some(PgEvent::ShutDown) => {
                    // (The errors kept with it are of its own file: after `since` when that is
                    // another, earlier file.)
                    let own_fatal = view
                        .source(i)
                        .digest
                        .before_death
                        .get(&record.line)
                        .into_iter()
                        .flatten()
                        .rev()
                        .find(|r| {
                            r.pid == record.pid
                                && (since.0 != path || r.line > since.1)
                                && matches!(r.severity, Some(Severity::Fatal | Severity::Panic))
                        })
                        .map(|r| (r, path));
                    let refusal = pending.iter().rposition(|(r, _)| r.pid == record.pid);
                    let reason = match refusal {
                        Some(k) => Some(pending.remove(k)),
                        None => own_fatal,
                    };
                    let watched = match attempt {
                        Some((_, p)) => p == record.pid,
                        None => !ran || refusal.is_some(),
                    };
                    if let Some((reason, reason_path)) = reason
                        && watched
                    {
                        out.push(FailedStart {
                            path: reason_path,
                            at: reason.time.as_ref().and_then(clock::postgres),
                            start: attempt.map(|(r, _)| r),
                            reason,
                            end: Some(record),
                        });
                    }
                    if attempt.is_some_and(|(_, p)| p == record.pid) {
                        attempt = None;
                    }
                    serving = false;
                    since = (path, record.line);
                }
                Some(event)
                    if refuses_start(event)
                        && matches!(record.severity, Some(Severity::Fatal | Severity::Panic)) =>
                {
                    let held_by_a_running_server = serving
                        && matches!(
                            event,
                            PgEvent::LockFileExists { .. } | PgEvent::ListenSocketFailed { .. }
                        );
                    if !held_by_a_running_server
                        && !pending.iter().any(|(r, _)| r.pid == record.pid)
                    {
                        pending.push((record, path));
                    }
                }
                _ => {}
            }
        }
        flush(&mut pending, attempt, &mut out);
    }
    out
}
