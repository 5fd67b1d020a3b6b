//! Building an [`Incident`] from its parts: the kernel's kill, PostgreSQL's crash or unclean
//! start, and the recovery that followed; with its cause and figures (outage, redo, WAL).

use pgmortem_parse::pglog::{PgEvent, PgRecord};

use super::OomKill;
use super::cycles::{Crash, FailedStart, UncleanStart, log_line};
use crate::clock::{self, seconds_between};
use crate::report::{
    Incident, KernelKill, MemcgLimit, OOM_TOP_TASKS, OomTaskRss, PostgresCrash, Recovery,
};

/// PostgreSQL's side of an incident.
pub(crate) enum PgSide<'x, 'a> {
    /// Nothing in the server log.
    None,
    /// A child died and the postmaster crash-restarted.
    Crash(&'x Crash<'a>),
    /// The server started with crash recovery and no logged death before.
    Unclean(&'x UncleanStart<'a>),
    /// The postmaster refused to start.
    FailedStart(&'x FailedStart<'a>),
}

/// How a kill and PostgreSQL's side were tied.
pub(crate) struct Tie {
    /// 0–1.
    pub confidence: f64,
    /// `pid_and_time`, `pid_only`, `time_signal_and_name`, `postmaster_pid`, or none.
    pub matched_by: Option<&'static str>,
    /// Explanations.
    pub notes: Vec<String>,
}

impl Tie {
    /// A lone event: nothing to tie.
    pub fn alone(notes: Vec<String>) -> Tie {
        Tie {
            confidence: 1.0,
            matched_by: None,
            notes,
        }
    }
}

/// The highest confidence of an incident whose kernel OOM report was cut short.
pub(crate) const TRUNCATED_REPORT_CONFIDENCE: f64 = 0.6;

/// The incident made of `kill` and `side`.
pub(crate) fn build(kill: Option<&OomKill<'_>>, side: PgSide<'_, '_>, tie: Tie) -> Incident {
    let Tie {
        confidence,
        matched_by,
        mut notes,
    } = tie;
    // A report cut before its end (the kill line, the task table) may have lost the very
    // facts the incident rests on: what it has is kept, at a lower confidence.
    let confidence = if kill.is_some_and(|k| k.report.truncated) {
        confidence.min(TRUNCATED_REPORT_CONFIDENCE)
    } else {
        confidence
    };
    let kernel_kill = kill.map(kernel_kill);
    if let Some(kill) = kill {
        notes.extend(kill.report.notes.iter().cloned());
    }
    let kill_at = kill.and_then(|k| k.at).map(|t| t.0);
    let (kind, cause, cycle, postgres_crash, pg_at, preceded_by, sessions_lost, refused) =
        match &side {
            PgSide::Crash(c) => (
                crash_kind(c, kill.is_some()),
                if kill.is_some() {
                    "oom_killer"
                } else if let Some((cause, _)) = &c.cause {
                    cause
                } else if crash_kind(c, false) == "startup_failed" {
                    "startup_failed"
                } else {
                    crash_cause(c)
                },
                c.cycle.as_slice(),
                postgres_crash(c),
                c.at,
                c.preceded_by.clone(),
                (c.sessions_lost > 0).then_some(c.sessions_lost),
                c.connections_refused,
            ),
            PgSide::Unclean(u) => (
                if kill.is_some() {
                    "postmaster_killed"
                } else {
                    "unclean_restart"
                },
                match (kill.is_some(), u.children_noticed.is_some()) {
                    (true, _) => "oom_killer",
                    (false, true) => "postmaster_killed",
                    (false, false) => "unknown",
                },
                u.cycle.as_slice(),
                None,
                u.start
                    .and_then(|s| s.time.as_ref())
                    .and_then(clock::postgres)
                    .or(u.at),
                {
                    let mut lines: Vec<_> = u
                        .children_noticed
                        .iter()
                        .chain(u.last_before.iter())
                        .map(|r| log_line(u.path, r))
                        .collect();
                    lines.sort_by_key(|l| l.line);
                    lines.dedup_by_key(|l| l.line);
                    lines
                },
                None,
                u.connections_refused,
            ),
            PgSide::FailedStart(f) => (
                "startup_failed",
                f.reason
                    .event
                    .as_ref()
                    .and_then(super::causes::of_event)
                    .unwrap_or("startup_failed"),
                &[][..],
                None,
                f.at,
                vec![log_line(f.path, f.reason)],
                None,
                0,
            ),
            PgSide::None => (
                "kernel_oom",
                "oom_killer",
                &[][..],
                None,
                None,
                Vec::new(),
                None,
                0,
            ),
        };
    let recovery = match side {
        PgSide::None | PgSide::FailedStart(_) => None,
        _ => Some(recovery(cycle)),
    };
    let cause_line = match &side {
        PgSide::Crash(c) if kill.is_none() => c.cause.as_ref().map(|(_, l)| l.clone()),
        _ => None,
    };
    let ready_at = recovery.as_ref().and_then(|r| r.ready_at);
    let outage_from = match side {
        PgSide::Unclean(_) => kill_at,
        _ => pg_at,
    };
    let outage_seconds = match (outage_from, ready_at) {
        (Some(a), Some(b)) => Some(round3(seconds_between(a, b))),
        _ => None,
    };
    let ready_line = recovery.as_ref().and_then(|r| r.ready_line);
    match &side {
        PgSide::Crash(_) if outage_seconds.is_none() && ready_line.is_some() => {
            notes.push(format!(
                "ready to accept connections again at line {}, but the log's lines carry no \
                 time (its log_line_prefix prints none, or it was pasted without): the outage \
                 length is unknown",
                ready_line.unwrap_or_default()
            ));
        }
        PgSide::Crash(_) if outage_seconds.is_none() => notes.push(
            "no `ready to accept connections` after this crash in the log: the outage length \
             is unknown (the log ends, the server stopped, or another crash came first)"
                .to_owned(),
        ),
        PgSide::Unclean(u) => notes.push(unclean_note(u, kill.is_some())),
        PgSide::FailedStart(f) => notes.push(failed_start_note(f)),
        _ => {}
    }
    let (redo_seconds, wal_replayed_bytes) = redo(cycle);
    let clock_skew_seconds = match (kill_at, pg_at, &side) {
        (Some(k), Some(c), PgSide::Crash(_)) if matched_by.is_some() => {
            Some(round3(seconds_between(k, c)))
        }
        _ => None,
    };
    Incident {
        cause_line,
        kernel_kill,
        postgres_crash,
        recovery,
        outage_seconds,
        redo_seconds,
        wal_replayed_bytes,
        clock_skew_seconds,
        preceded_by,
        sessions_lost,
        connections_refused: refused,
        confidence,
        matched_by,
        notes,
        ..Incident::new(kind, cause, kill_at.or(pg_at))
    }
}

/// What a death without a kernel kill (`killed`: with one) was: a crash-restart, or for the
/// startup process when the postmaster gave up, a failed recovery (it was recovering) or a
/// failed start.
fn crash_kind(crash: &Crash<'_>, killed: bool) -> &'static str {
    match (killed, crash.startup_gave_up, crash.in_recovery) {
        (true, _, _) => "oom_kill",
        (false, true, true) => "recovery_failed",
        (false, true, false) => "startup_failed",
        (false, false, _) => "crash_restart",
    }
}

fn failed_start_note(f: &FailedStart<'_>) -> String {
    let mut note = format!(
        "the postmaster did not start: it logged {} ({}:{}){}; nothing serves connections \
         until a start succeeds",
        crate::human::quote_cut(&f.reason.message, 200),
        f.path,
        f.reason.line,
        if f.end.is_some() {
            " and shut down"
        } else {
            " and exited"
        }
    );
    if f.start.is_none() {
        note.push_str(
            " (the log holds no `starting PostgreSQL` line for it: the attempt is known by its \
             error alone)",
        );
    }
    note
}

/// Why a child died, from how it died and what its process logged before.
fn crash_cause(crash: &Crash<'_>) -> &'static str {
    let pid = crash.pid();
    let panicked = crash
        .preceded_by
        .iter()
        .any(|l| l.severity == Some("PANIC") && (l.pid == pid || l.pid.is_none()));
    match crash.signal() {
        Some(6) => "abort_or_panic",
        _ if panicked => "abort_or_panic",
        Some(9 | 15 | 1 | 2 | 3) => "signal_from_outside",
        Some(11 | 7 | 4 | 8) => "segfault",
        Some(_) => "unknown",
        None => "abnormal_exit",
    }
}

fn unclean_note(u: &UncleanStart<'_>, killed: bool) -> String {
    let mut note = if killed {
        "the postmaster was killed: its children exited, and nothing served connections until \
         the server was started again; it started with crash recovery"
            .to_owned()
    } else if let Some(r) = u.children_noticed {
        format!(
            "the postmaster died while the host stayed up: a backend logged `terminating \
             connection due to unexpected postmaster exit` ({}:{}); nothing served connections \
             until the server was started again, with crash recovery. A postmaster dies of \
             kill -9 (an operator, a supervisor, a userspace OOM killer) or of an OOM kill the \
             kernel log does not cover",
            u.path, r.line
        )
    } else {
        "the server started with crash recovery (`database system was not properly shut down`) \
         and the log shows no death before it: the postmaster was killed (kill -9, an OOM kill \
         the kernel log does not cover), or the host crashed or lost power"
            .to_owned()
    };
    if let Some(t) = u.last_known_up {
        note.push_str(&format!("; last known up at {t} (its last checkpoint)"));
    }
    if let Some(r) = u.last_before {
        let at = r
            .time
            .as_ref()
            .and_then(clock::postgres)
            .map_or_else(|| "?".to_owned(), |t| t.to_string());
        note.push_str(&format!(
            "; the last line before the new start was logged at {at} ({}:{})",
            u.path, r.line
        ));
    }
    note
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn kernel_kill(kill: &OomKill<'_>) -> KernelKill {
    let report = kill.report;
    let victim = report.victim.clone().unwrap_or_default();
    let page_kb = page_kb(report);
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
        unit: None,
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
        trigger_gfp_mask: report.trigger.as_ref().and_then(|t| t.gfp_mask.clone()),
        trigger_order: report.trigger.as_ref().and_then(|t| t.order),
        tasks: top_tasks(report, page_kb),
        task_count: report.tasks.len() as u64,
        tasks_rss_kb: report
            .tasks
            .iter()
            .map(|t| t.rss_pages)
            .sum::<Option<u64>>()
            .filter(|_| !report.tasks.is_empty())
            .map(|pages| pages.saturating_mul(page_kb)),
        page_kb,
        at: kill.at.map(|t| t.0),
        path: kill.path.to_owned(),
        line: kill.record.line,
        owner: None,
    }
}

/// The page size (kB) the task table counts in: the power of two in 4–64 that makes the
/// victim's row (rss pages) agree within a quarter with its kill line (anon + file + shmem kB);
/// 4 when there is nothing to compare.
fn page_kb(report: &pgmortem_parse::kernel::OomReport) -> u64 {
    let Some(victim) = &report.victim else {
        return 4;
    };
    let killed_kb = [victim.anon_rss_kb, victim.file_rss_kb, victim.shmem_rss_kb]
        .into_iter()
        .flatten()
        .sum::<u64>();
    let Some(pages) = report
        .tasks
        .iter()
        .find(|t| t.pid == victim.pid)
        .and_then(|t| t.rss_pages)
        .filter(|p| *p > 0)
    else {
        return 4;
    };
    let ratio = killed_kb as f64 / pages as f64;
    [4u64, 16, 64]
        .into_iter()
        .find(|size| (ratio / *size as f64 - 1.0).abs() < 0.25)
        .unwrap_or(4)
}

/// The heaviest rows of the task table by RSS (ties by pid), converted to kB.
fn top_tasks(report: &pgmortem_parse::kernel::OomReport, page_kb: u64) -> Vec<OomTaskRss> {
    let victim = report.victim.as_ref().map(|v| v.pid);
    let kb = |pages: Option<u64>| pages.map(|p| p.saturating_mul(page_kb));
    let mut rows: Vec<&pgmortem_parse::kernel::OomTask> = report.tasks.iter().collect();
    rows.sort_by(|a, b| {
        b.rss_pages
            .unwrap_or(0)
            .cmp(&a.rss_pages.unwrap_or(0))
            .then(a.pid.cmp(&b.pid))
    });
    rows.into_iter()
        .take(OOM_TOP_TASKS)
        .map(|t| OomTaskRss {
            pid: t.pid,
            name: t.name.clone(),
            rss_kb: kb(t.rss_pages),
            rss_anon_kb: kb(t.rss_anon_pages),
            rss_file_kb: kb(t.rss_file_pages),
            rss_shmem_kb: kb(t.rss_shmem_pages),
            total_vm_kb: kb(t.total_vm_pages),
            pgtables_kb: t.pgtables_bytes.map(|b| b / 1024),
            swap_kb: kb(t.swapents),
            oom_score_adj: t.oom_score_adj,
            victim: Some(t.pid) == victim,
        })
        .collect()
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

fn recovery(cycle: &[&PgRecord]) -> Recovery {
    let mut r = Recovery::default();
    for record in cycle {
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
fn redo(cycle: &[&PgRecord]) -> (Option<f64>, Option<u64>) {
    let mut start = None;
    let mut done = None;
    for record in cycle {
        match &record.event {
            Some(PgEvent::RedoStart { lsn }) => start = Some((*lsn, *record)),
            Some(PgEvent::RedoDone {
                lsn,
                elapsed_seconds,
            }) => done = Some((*lsn, *elapsed_seconds, *record)),
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

/// Orders incidents oldest first (those without a time last, in input order).
pub(crate) fn by_time(a: &Incident, b: &Incident) -> std::cmp::Ordering {
    match (a.started_at, b.started_at) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    }
}
