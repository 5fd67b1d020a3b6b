//! Tying kernel OOM kills to PostgreSQL crash-restart cycles.
//!
//! A PostgreSQL crash is a child's `terminated by signal` line (any process kind: a kill of any
//! of them restarts the instance), or an abnormal `exited with exit code` line followed by
//! `terminating any other active server processes`. Its cycle is chained forward in the same
//! log: terminate others → reinitializing → recovery → redo → ready, ending at `ready` or at
//! the next crash. An OOM kill of PID P is tied to `(PID P) was terminated by signal 9` within
//! a tolerance; when no PID matches (PostgreSQL in a PID namespace prints its own PIDs), a
//! `postgres` victim is tied to the nearest signal-9 crash within a tighter window, with lower
//! confidence, and the incident says so.

use jiff::Timestamp;
use pgmortem_parse::kernel::{KernelEvent, KernelRecord, OomReport};
use pgmortem_parse::pglog::{PgEvent, PgRecord};

use crate::DiagnoseOptions;
use crate::clock::{self, Clock, seconds_between};
use crate::report::{Incident, KernelKill, MemcgLimit, PostgresCrash, Recovery};
use crate::sources::{KernelSource, PgSource};

/// An OOM report placed on the clock, deduplicated across copies of the same kernel log.
pub(crate) struct OomKill<'a> {
    pub path: &'a str,
    pub record: &'a KernelRecord,
    pub report: &'a OomReport,
    pub at: Option<(Timestamp, f64)>,
}

/// A PostgreSQL crash and the cycle that followed it.
pub(crate) struct Crash<'a> {
    pub path: &'a str,
    pub record: &'a PgRecord,
    pub at: Option<Timestamp>,
    pub cycle: Vec<&'a PgRecord>,
}

/// Every OOM report of every kernel source, one per event: the same kill printed in a raw
/// `dmesg` and a `dmesg -T` copy counts once (the copy with a monotonic time is kept).
pub(crate) fn oom_kills<'a>(kernel: &'a [KernelSource], clock: &Clock) -> Vec<OomKill<'a>> {
    let mut kills: Vec<OomKill<'a>> = Vec::new();
    for source in kernel {
        for record in &source.log.records {
            let KernelEvent::OomReport(report) = &record.event else {
                continue;
            };
            let at = clock.kernel(&record.time);
            let candidate = OomKill {
                path: &source.path,
                record,
                report,
                at,
            };
            match kills.iter_mut().find(|k| same_event(k, &candidate)) {
                Some(existing) => {
                    if existing.record.time.monotonic_us.is_none()
                        && record.time.monotonic_us.is_some()
                    {
                        *existing = candidate;
                    }
                }
                None => kills.push(candidate),
            }
        }
    }
    kills.sort_by(|a, b| a.at.map(|t| t.0).cmp(&b.at.map(|t| t.0)));
    kills
}

fn same_event(a: &OomKill<'_>, b: &OomKill<'_>) -> bool {
    if std::ptr::eq(a.path, b.path) {
        return false;
    }
    let same_victim = match (&a.report.victim, &b.report.victim) {
        (Some(x), Some(y)) => x.pid == y.pid && x.comm == y.comm && x.total_vm_kb == y.total_vm_kb,
        (None, None) => a.report.trigger == b.report.trigger,
        _ => false,
    };
    let close = match (a.at, b.at) {
        (Some((x, ex)), Some((y, ey))) => seconds_between(x, y).abs() <= 2.0 + ex + ey,
        _ => true,
    };
    same_victim && close
}

/// Every crash of every PostgreSQL source with its cycle.
pub(crate) fn crashes(postgres: &[PgSource]) -> Vec<Crash<'_>> {
    let mut out = Vec::new();
    for source in postgres {
        let records = &source.log.records;
        let mut i = 0;
        while i < records.len() {
            if !starts_crash(records, i) {
                i += 1;
                continue;
            }
            let mut cycle = Vec::new();
            let mut j = i + 1;
            while j < records.len() && !starts_crash(records, j) {
                let record = &records[j];
                if is_cycle_event(record) {
                    cycle.push(record);
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
    matches!(
        record.event,
        Some(
            PgEvent::TerminatingOtherProcesses
                | PgEvent::Reinitializing
                | PgEvent::Interrupted { .. }
                | PgEvent::AutomaticRecovery
                | PgEvent::RedoStart { .. }
                | PgEvent::RedoDone { .. }
                | PgEvent::Ready
        )
    )
}

/// An OOM kill (index into the kills), the crash tied to it (index into the crashes), how
/// sure the tie is, how it was made, and notes.
type Tie = (usize, Option<usize>, f64, Option<&'static str>, Vec<String>);

/// Ties kills to crashes and builds the incidents, oldest first.
pub(crate) fn incidents(
    kills: &[OomKill<'_>],
    crashes: &[Crash<'_>],
    options: &DiagnoseOptions,
) -> Vec<Incident> {
    let mut crash_taken = vec![false; crashes.len()];
    let mut ties: Vec<Tie> = Vec::new();

    for (k, kill) in kills.iter().enumerate() {
        let Some(victim) = &kill.report.victim else {
            ties.push((k, None, 1.0, None, Vec::new()));
            continue;
        };
        let delta = |c: &Crash<'_>| match (kill.at, c.at) {
            (Some((kt, _)), Some(ct)) => Some(seconds_between(kt, ct)),
            _ => None,
        };
        let sigkill = |c: &Crash<'_>| {
            matches!(
                c.record.event,
                Some(PgEvent::TerminatedBySignal { signal: 9, .. })
            )
        };
        let by_pid = crashes.iter().enumerate().find(|(i, c)| {
            !crash_taken[*i]
                && sigkill(c)
                && crash_pid(c) == Some(victim.pid)
                && delta(c).is_none_or(|d| d.abs() <= options.match_tolerance_seconds)
        });
        if let Some((i, c)) = by_pid {
            crash_taken[i] = true;
            let (confidence, how) = match delta(c) {
                Some(d) if d.abs() <= 5.0 => (0.95, "pid_and_time"),
                Some(_) => (0.8, "pid_and_time"),
                None => (0.6, "pid_only"),
            };
            let mut notes = Vec::new();
            if how == "pid_only" {
                notes.push(
                    "tied by PID alone: one side's time could not be put on UTC, so the tie is \
                     not checked in time"
                        .to_owned(),
                );
            }
            ties.push((k, Some(i), confidence, Some(how), notes));
            continue;
        }
        let by_time = crashes
            .iter()
            .enumerate()
            .filter(|(i, c)| {
                !crash_taken[*i]
                    && sigkill(c)
                    && victim.comm.starts_with("postgres")
                    && delta(c).is_some_and(|d| d.abs() <= options.pid_namespace_tolerance_seconds)
            })
            .min_by(|(_, a), (_, b)| {
                let (da, db) = (
                    delta(a).unwrap_or(f64::MAX).abs(),
                    delta(b).unwrap_or(f64::MAX).abs(),
                );
                da.total_cmp(&db)
            });
        if let Some((i, c)) = by_time {
            crash_taken[i] = true;
            let note = format!(
                "kernel PID {} differs from PostgreSQL's PID {}: PostgreSQL runs in a PID \
                 namespace (container); tied on time, signal 9 and process name, with lower \
                 confidence",
                victim.pid,
                crash_pid(c).map_or_else(|| "?".into(), |p| p.to_string())
            );
            ties.push((k, Some(i), 0.5, Some("time_signal_and_name"), vec![note]));
            continue;
        }
        ties.push((k, None, 1.0, None, Vec::new()));
    }

    let mut out: Vec<Incident> = ties
        .into_iter()
        .map(|(k, c, confidence, how, notes)| {
            build(
                Some(&kills[k]),
                c.map(|i| &crashes[i]),
                confidence,
                how,
                notes,
            )
        })
        .collect();
    for (i, crash) in crashes.iter().enumerate() {
        if !crash_taken[i] {
            let mut notes = Vec::new();
            if matches!(
                crash.record.event,
                Some(PgEvent::TerminatedBySignal { signal: 9, .. })
            ) {
                notes.push(if kills.is_empty() {
                    "killed by SIGKILL with no kernel OOM report in the bundle: killed from outside \
                     (kill -9, a supervisor, a userspace OOM killer such as systemd-oomd), or the \
                     kernel log does not cover this time"
                        .to_owned()
                } else {
                    "killed by SIGKILL, but no kernel OOM kill of this PID near this time: killed \
                     from outside (kill -9, a supervisor, a userspace OOM killer)"
                        .to_owned()
                });
            }
            out.push(build(None, Some(crash), 1.0, None, notes));
        }
    }
    out.sort_by(|a, b| match (a.started_at, b.started_at) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    out
}

fn crash_pid(crash: &Crash<'_>) -> Option<u32> {
    match &crash.record.event {
        Some(PgEvent::TerminatedBySignal { pid, .. } | PgEvent::ExitedWithCode { pid, .. }) => {
            Some(*pid)
        }
        _ => None,
    }
}

fn build(
    kill: Option<&OomKill<'_>>,
    crash: Option<&Crash<'_>>,
    confidence: f64,
    matched_by: Option<&'static str>,
    mut notes: Vec<String>,
) -> Incident {
    let kernel_kill = kill.map(kernel_kill);
    if let Some(kill) = kill {
        notes.extend(kill.report.notes.iter().cloned());
    }
    let postgres_crash = crash.and_then(postgres_crash);
    let recovery = crash.map(recovery);
    let kind = match (kill, crash) {
        (Some(_), Some(_)) => "oom_kill",
        (None, Some(_)) => "crash_restart",
        _ => "kernel_oom",
    };
    let crash_at = crash.and_then(|c| c.at);
    let started_at = kernel_kill.as_ref().and_then(|k| k.at).or(crash_at);
    let outage_seconds = match (crash_at, recovery.as_ref().and_then(|r| r.ready_at)) {
        (Some(a), Some(b)) => Some(round3(seconds_between(a, b))),
        _ => None,
    };
    if crash.is_some() && outage_seconds.is_none() {
        notes.push(
            "no `ready to accept connections` after this crash in the log: the outage length \
             is unknown (the log ends, or another crash came first)"
                .to_owned(),
        );
    }
    let (redo_seconds, wal_replayed_bytes) = crash.map_or((None, None), redo);
    let clock_skew_seconds = match (kill.and_then(|k| k.at), crash_at) {
        (Some((k, _)), Some(c)) if matched_by.is_some() => Some(round3(seconds_between(k, c))),
        _ => None,
    };
    Incident {
        kind,
        started_at,
        kernel_kill,
        postgres_crash,
        recovery,
        outage_seconds,
        redo_seconds,
        wal_replayed_bytes,
        clock_skew_seconds,
        confidence,
        matched_by,
        notes,
    }
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn kernel_kill(kill: &OomKill<'_>) -> KernelKill {
    let report = kill.report;
    let victim = report.victim.clone().unwrap_or_default();
    let memcg = report.memcg.as_ref().map(|m| MemcgLimit {
        path: m.path.clone(),
        task_path: m.task_path.clone(),
        limit_kb: m.memory.and_then(|c| c.limit_kb),
        usage_kb: m.memory.map(|c| c.usage_kb),
        failcnt: m.memory.map(|c| c.failcnt),
    });
    KernelKill {
        pid: victim.pid,
        comm: victim.comm,
        anon_rss_kb: victim.anon_rss_kb,
        file_rss_kb: victim.file_rss_kb,
        shmem_rss_kb: victim.shmem_rss_kb,
        total_vm_kb: victim.total_vm_kb,
        pgtables_kb: victim.pgtables_kb,
        oom_score_adj: victim.oom_score_adj,
        constraint: report.constraint.clone(),
        memcg,
        trigger_comm: report.trigger.as_ref().map(|t| t.comm.clone()),
        trigger_pid: report.trigger.as_ref().and_then(|t| t.pid),
        at: kill.at.map(|t| t.0),
        path: kill.path.to_owned(),
        line: kill.record.line,
    }
}

fn postgres_crash(crash: &Crash<'_>) -> Option<PostgresCrash> {
    let (pid, process, signal, exit_code, query) = match &crash.record.event {
        Some(PgEvent::TerminatedBySignal {
            process,
            pid,
            signal,
            query,
            ..
        }) => (*pid, process.clone(), Some(*signal), None, query.clone()),
        Some(PgEvent::ExitedWithCode {
            process,
            pid,
            code,
            query,
        }) => (*pid, process.clone(), None, Some(*code), query.clone()),
        _ => return None,
    };
    Some(PostgresCrash {
        pid,
        process,
        signal,
        exit_code,
        query,
        at: crash.at,
        path: crash.path.to_owned(),
        line: crash.record.line,
    })
}

fn recovery(crash: &Crash<'_>) -> Recovery {
    let mut r = Recovery::default();
    for record in &crash.cycle {
        let at = record.time.as_ref().and_then(clock::postgres);
        match &record.event {
            Some(PgEvent::TerminatingOtherProcesses) => {
                r.terminated_others_at = r.terminated_others_at.or(at)
            }
            Some(PgEvent::Reinitializing) => r.reinitialized_at = r.reinitialized_at.or(at),
            Some(PgEvent::RedoStart { lsn }) => {
                r.redo_started_at = at;
                r.redo_start_lsn = Some(lsn.to_string());
            }
            Some(PgEvent::RedoDone { lsn, .. }) => {
                r.redo_done_at = at;
                r.redo_end_lsn = Some(lsn.to_string());
            }
            Some(PgEvent::Ready) => {
                r.ready_at = at;
                r.ready_line = Some(record.line);
            }
            _ => {}
        }
    }
    r
}

/// Redo seconds (PostgreSQL's own `elapsed:` when printed, else start → done) and WAL bytes.
fn redo(crash: &Crash<'_>) -> (Option<f64>, Option<u64>) {
    let mut start = None;
    let mut done = None;
    for record in &crash.cycle {
        match &record.event {
            Some(PgEvent::RedoStart { lsn }) => start = Some((*lsn, record)),
            Some(PgEvent::RedoDone {
                lsn,
                elapsed_seconds,
            }) => done = Some((*lsn, *elapsed_seconds, record)),
            _ => {}
        }
    }
    let Some((end_lsn, elapsed, done_record)) = done else {
        return (None, None);
    };
    let Some((start_lsn, start_record)) = start else {
        return (elapsed, None);
    };
    let seconds = elapsed.or_else(|| {
        let a = start_record.time.as_ref().and_then(clock::postgres)?;
        let b = done_record.time.as_ref().and_then(clock::postgres)?;
        Some(round3(seconds_between(a, b)))
    });
    (seconds, end_lsn.0.checked_sub(start_lsn.0))
}
