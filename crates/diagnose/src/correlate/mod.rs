//! Tying kernel OOM kills to PostgreSQL's outages.
//!
//! A PostgreSQL crash is a child's `terminated by signal` line (any process kind: a kill of any
//! of them restarts the instance), or an abnormal `exited with exit code` line followed by
//! `terminating any other active server processes` ([`cycles`]). An OOM kill of PID P is tied
//! to `(PID P) was terminated by signal 9` within a tolerance; when no PID matches (PostgreSQL
//! in a PID namespace prints its own PIDs), a `postgres` victim is tied to the nearest signal-9
//! crash within a tighter window, with lower confidence, and the incident says so. A kill of
//! the postmaster's own PID is tied to the next start with crash recovery. What is left over
//! stands alone: crashes with no kill, starts with crash recovery that nothing logged explains,
//! kills with no PostgreSQL side. Ties are found through indexes (by PID, by time), so the cost
//! grows as n log n in kills and crashes. Each kill says whose process the victim was
//! ([`owner`]); one the bundle shows was a stranger's (another cluster's, another job's) is tied
//! on time to no crash.

mod causes;
mod cycles;
mod faults;
mod incident;
mod outage;
mod owner;
mod units;

use std::collections::HashMap;

use jiff::Timestamp;
use pgmortem_parse::kernel::{KernelEvent, KernelRecord, OomReport};

pub(crate) use causes::tie_kernel as tie_kernel_causes;
pub(crate) use cycles::{
    Crash, FailedStart, UncleanStart, crashes, failed_starts, postmaster_pids, unclean_starts,
};
pub(crate) use faults::{process_faults, tie as tie_faults};
pub(crate) use incident::by_time;
use incident::{PgSide, Tie};
pub(crate) use outage::mark_still_down;
pub(crate) use owner::Instance;
pub(crate) use units::tie as tie_units;

use crate::clock::{Clock, same_kernel_moment, seconds_between};
use crate::options::DiagnoseOptions;
use crate::report::Incident;
use crate::sources::KernelSource;

/// An OOM report placed on the clock, deduplicated across copies of the same kernel log.
pub(crate) struct OomKill<'a> {
    /// The kernel log it was read from.
    pub path: &'a str,
    /// Its record.
    pub record: &'a KernelRecord,
    /// The report.
    pub report: &'a OomReport,
    /// When (UTC) and with what error bar.
    pub at: Option<(Timestamp, f64)>,
}

/// Every OOM report of every kernel source, one per event: the same kill printed in a raw
/// `dmesg` and a `dmesg -T` copy counts once (the copy with a monotonic time is kept). Copies
/// are recognised by victim, and by time on `clock` (whose boot anchor is the one the bundle's
/// own readings agree on: see [`crate::clock`]).
pub(crate) fn oom_kills<'a>(kernel: &'a [KernelSource], clock: &Clock) -> Vec<OomKill<'a>> {
    type Key<'k> = (Option<u32>, Option<&'k str>, Option<u64>);
    let mut kills: Vec<(OomKill<'a>, Option<(Timestamp, f64)>)> = Vec::new();
    let mut by_victim: HashMap<Key<'a>, Vec<usize>> = HashMap::new();
    for source in kernel {
        for record in &source.log.records {
            let KernelEvent::OomReport(report) = &record.event else {
                continue;
            };
            let candidate = OomKill {
                path: &source.path,
                record,
                report,
                at: clock.kernel(&record.time),
            };
            let dedup_at = candidate.at;
            let key: Key<'a> = match &report.victim {
                Some(v) => (Some(v.pid), Some(v.comm.as_str()), v.total_vm_kb),
                None => (None, report.trigger.as_ref().map(|t| t.comm.as_str()), None),
            };
            let same = by_victim.get(&key).and_then(|idx| {
                idx.iter().copied().find(|&i| {
                    let (k, at) = &kills[i];
                    !std::ptr::eq(k.path, candidate.path) && same_kernel_moment(*at, dedup_at)
                })
            });
            match same {
                Some(i) => {
                    let existing = &mut kills[i];
                    if existing.0.record.time.monotonic_us.is_none()
                        && record.time.monotonic_us.is_some()
                    {
                        *existing = (candidate, dedup_at);
                    }
                }
                None => {
                    by_victim.entry(key).or_default().push(kills.len());
                    kills.push((candidate, dedup_at));
                }
            }
        }
    }
    let mut kills: Vec<OomKill<'a>> = kills.into_iter().map(|(k, _)| k).collect();
    kills.sort_by(|a, b| a.at.map(|t| t.0).cmp(&b.at.map(|t| t.0)));
    kills
}

/// PostgreSQL's side of the bundle's outages, from its logs.
pub(crate) struct PgOutages<'a> {
    /// Children's deaths with their cycles.
    pub crashes: Vec<Crash<'a>>,
    /// Starts with crash recovery no logged death explains.
    pub unclean: Vec<UncleanStart<'a>>,
    /// Starts the postmaster gave up before the startup process ran.
    pub failed_starts: Vec<FailedStart<'a>>,
    /// The pids the postmaster logged under, with when.
    pub postmasters: Vec<(u32, Option<Timestamp>, &'a str)>,
}

/// Ties kills to PostgreSQL's outages and builds the incidents, oldest first; each kill says
/// whose process the victim was, as far as `instance` tells.
pub(crate) fn incidents(
    kills: &[OomKill<'_>],
    pg: &PgOutages<'_>,
    options: &DiagnoseOptions,
    instance: &Instance<'_>,
) -> Vec<Incident> {
    let crashes = &pg.crashes;
    let mut crash_taken = vec![false; crashes.len()];
    let mut unclean_taken = vec![false; pg.unclean.len()];
    let sigkill = |c: &Crash<'_>| c.signal() == Some(9);
    // Indexes: signal-9 crashes by pid, and by time.
    let mut by_pid: HashMap<u32, Vec<usize>> = HashMap::new();
    let mut by_time: Vec<(Timestamp, usize)> = Vec::new();
    for (i, c) in crashes.iter().enumerate() {
        if !sigkill(c) {
            continue;
        }
        if let Some(pid) = c.pid() {
            by_pid.entry(pid).or_default().push(i);
        }
        if let Some(at) = c.at {
            by_time.push((at, i));
        }
    }
    by_time.sort();

    let delta = |kill_at: Option<Timestamp>, c: &Crash<'_>| match (kill_at, c.at) {
        (Some(k), Some(c)) => Some(seconds_between(k, c)),
        _ => None,
    };
    // 1. The same pid, signal 9, within the tolerance: first for every kill, so that a tie on
    // time alone (2.) never takes the crash another kill's PID names.
    let same_pids: Vec<Option<usize>> = kills
        .iter()
        .map(|kill| {
            let victim = kill.report.victim.as_ref()?;
            let kill_at = kill.at.map(|t| t.0);
            let found = by_pid.get(&victim.pid).and_then(|idx| {
                idx.iter()
                    .copied()
                    .filter(|&i| {
                        !crash_taken[i]
                            && delta(kill_at, &crashes[i])
                                .is_none_or(|d| d.abs() <= options.match_tolerance_seconds)
                    })
                    .min_by(|&a, &b| {
                        let da = delta(kill_at, &crashes[a]).map_or(f64::MAX, f64::abs);
                        let db = delta(kill_at, &crashes[b]).map_or(f64::MAX, f64::abs);
                        da.total_cmp(&db)
                    })
            });
            if let Some(i) = found {
                crash_taken[i] = true;
            }
            found
        })
        .collect();

    let mut out = Vec::new();
    for (kill, same_pid) in kills.iter().zip(same_pids) {
        let Some(victim) = &kill.report.victim else {
            out.push(incident::build(
                Some(kill),
                PgSide::None,
                Tie::alone(Vec::new()),
            ));
            continue;
        };
        let kill_at = kill.at.map(|t| t.0);
        let delta = |c: &Crash<'_>| delta(kill_at, c);
        if let Some(i) = same_pid {
            let (confidence, how) = match delta(&crashes[i]) {
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
            out.push(incident::build(
                Some(kill),
                PgSide::Crash(&crashes[i]),
                Tie {
                    confidence,
                    matched_by: Some(how),
                    notes,
                },
            ));
            continue;
        }
        // 2. A postgres victim and the nearest signal-9 crash in time (PID namespace), unless
        // the bundle shows it was a stranger's.
        let task_memcg = kill
            .report
            .memcg
            .as_ref()
            .and_then(|m| m.task_path.as_deref());
        let stranger = instance
            .owner(victim.pid, task_memcg, kill_at)
            .is_some_and(|o| !o.is_instance());
        let nearest = match (kill_at, victim.comm.starts_with("postgres") && !stranger) {
            (Some(k), true) => nearest_crash(&by_time, &crash_taken, k, options),
            _ => None,
        };
        if let Some(i) = nearest {
            crash_taken[i] = true;
            let note = format!(
                "kernel PID {} differs from PostgreSQL's PID {}: PostgreSQL runs in a PID \
                 namespace (container); tied on time, signal 9 and process name, with lower \
                 confidence",
                victim.pid,
                crashes[i]
                    .pid()
                    .map_or_else(|| "?".into(), |p| p.to_string())
            );
            out.push(incident::build(
                Some(kill),
                PgSide::Crash(&crashes[i]),
                Tie {
                    confidence: 0.5,
                    matched_by: Some("time_signal_and_name"),
                    notes: vec![note],
                },
            ));
            continue;
        }
        // 3. The postmaster itself: the next start with crash recovery.
        let postmaster = pg.postmasters.iter().any(|(pid, seen, _)| {
            *pid == victim.pid
                && match (seen, kill_at) {
                    (Some(s), Some(k)) => *s <= k,
                    _ => true,
                }
        });
        if postmaster && (victim.comm.starts_with("postgres") || victim.comm == "postmaster") {
            let next = pg
                .unclean
                .iter()
                .enumerate()
                .filter(|(j, u)| {
                    !unclean_taken[*j]
                        && match (kill_at, u.at) {
                            (Some(k), Some(a)) => {
                                seconds_between(k, a) >= -options.match_tolerance_seconds
                            }
                            _ => true,
                        }
                })
                .min_by_key(|(_, u)| u.at)
                .map(|(j, _)| j);
            let side = match next {
                Some(j) => {
                    unclean_taken[j] = true;
                    PgSide::Unclean(&pg.unclean[j])
                }
                None => PgSide::None,
            };
            let mut notes = vec![format!(
                "the victim, pid {}, is the postmaster (it logged the server's start and \
                 readiness under that pid)",
                victim.pid
            )];
            if next.is_none() {
                notes.push(
                    "the log shows no start after the kill: the server was still down when the \
                     bundle was collected, or the log does not cover the restart"
                        .to_owned(),
                );
            }
            let mut incident = incident::build(
                Some(kill),
                side,
                Tie {
                    confidence: 0.9,
                    matched_by: Some("postmaster_pid"),
                    notes,
                },
            );
            incident.kind = "postmaster_killed";
            incident.cause = "oom_killer";
            out.push(incident);
            continue;
        }
        out.push(incident::build(
            Some(kill),
            PgSide::None,
            Tie::alone(Vec::new()),
        ));
    }

    for (i, crash) in crashes.iter().enumerate() {
        if crash_taken[i] {
            continue;
        }
        let mut notes = Vec::new();
        if sigkill(crash) {
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
        out.push(incident::build(
            None,
            PgSide::Crash(crash),
            Tie::alone(notes),
        ));
    }
    for (j, start) in pg.unclean.iter().enumerate() {
        if !unclean_taken[j] {
            out.push(incident::build(
                None,
                PgSide::Unclean(start),
                Tie::alone(Vec::new()),
            ));
        }
    }
    for start in &pg.failed_starts {
        out.push(incident::build(
            None,
            PgSide::FailedStart(start),
            Tie::alone(Vec::new()),
        ));
    }
    for incident in &mut out {
        let logged = incident.postgres_crash.is_some() || incident.kind == "postmaster_killed";
        let postmaster = incident.kind == "postmaster_killed";
        if let Some(k) = incident.kernel_kill.as_mut().filter(|k| k.pid != 0) {
            k.owner = if logged {
                Some(owner::logged_death(postmaster))
            } else {
                let task_memcg = k.memcg.as_ref().and_then(|m| m.task_path.as_deref());
                instance.owner(k.pid, task_memcg, k.at)
            };
        }
    }
    out.sort_by(incident::by_time);
    fold_kills_after_postmaster(&mut out, options);
    out
}

/// After the postmaster is killed its children live on until they notice, and one still
/// allocating may be killed next: such kills of `postgres` processes, between the postmaster's
/// kill and the next start (or within the tolerance when the log shows none), belong to the
/// same outage. They become notes of the postmaster's incident instead of incidents of their
/// own with no crash to tie.
fn fold_kills_after_postmaster(incidents: &mut Vec<Incident>, options: &DiagnoseOptions) {
    let mut i = 0;
    while i < incidents.len() {
        if incidents[i].kind != "postmaster_killed" {
            i += 1;
            continue;
        }
        let Some(from) = incidents[i].started_at else {
            i += 1;
            continue;
        };
        let until = incidents[i]
            .recovery
            .as_ref()
            .and_then(|r| r.ready_at)
            .unwrap_or_else(|| {
                from.checked_add(jiff::SignedDuration::from_secs_f64(
                    options.match_tolerance_seconds,
                ))
                .unwrap_or(from)
            });
        let mut notes = Vec::new();
        let mut j = 0;
        while j < incidents.len() {
            let follows = j != i
                && incidents[j].kind == "kernel_oom"
                && incidents[j].kernel_kill.as_ref().is_some_and(|k| {
                    k.comm.starts_with("postgres")
                        && !k.is_stranger()
                        && k.at.is_some_and(|at| at >= from && at <= until)
                });
            if !follows {
                j += 1;
                continue;
            }
            let Some(k) = incidents.remove(j).kernel_kill else {
                continue;
            };
            if j < i {
                i -= 1;
            }
            notes.push(format!(
                "the OOM killer also killed postgres {} ({}{}) {:.3} s later: a child still \
                 running after the postmaster died ({}:{})",
                k.pid,
                k.anon_rss_kb
                    .map(|kb| format!("anon-rss {}", crate::human::human_kb(kb)))
                    .unwrap_or_else(|| "size unknown".to_owned()),
                k.oom_score_adj
                    .map(|a| format!(", oom_score_adj {a}"))
                    .unwrap_or_default(),
                k.at.map_or(0.0, |at| seconds_between(from, at)),
                k.path,
                k.line
            ));
        }
        incidents[i].notes.extend(notes);
        i += 1;
    }
}

/// The untaken signal-9 crash nearest to `at`, within the PID-namespace tolerance.
fn nearest_crash(
    by_time: &[(Timestamp, usize)],
    taken: &[bool],
    at: Timestamp,
    options: &DiagnoseOptions,
) -> Option<usize> {
    let window = options.pid_namespace_tolerance_seconds;
    let start = by_time.partition_point(|(t, _)| seconds_between(*t, at) > window);
    by_time[start..]
        .iter()
        .take_while(|(t, _)| seconds_between(at, *t) <= window)
        .filter(|(_, i)| !taken[*i])
        .min_by(|(a, _), (b, _)| {
            seconds_between(at, *a)
                .abs()
                .total_cmp(&seconds_between(at, *b).abs())
        })
        .map(|(_, i)| *i)
}

#[cfg(test)]
mod tests;
