//! The unified timeline: every notable event of every source on UTC.

use pgmortem_parse::kernel::KernelEvent;
use pgmortem_parse::pglog::PgEvent;

use crate::clock::{self, Clock};
use crate::facts::PerfFacts;
use crate::ha::HaSource;
use crate::human::human_kb;
use crate::report::{PerfSummary, TimelineEvent};
use crate::sources::{KernelSource, PgSource};

/// Every source's notable events, and Kubernetes' container kills (`containers`), oldest first;
/// events without a time after the timed ones, in their sources' order.
pub(crate) fn build(
    kernel: &[KernelSource],
    postgres: &[PgSource],
    containers: Vec<TimelineEvent>,
    clock: &Clock,
) -> Vec<TimelineEvent> {
    let mut events = Vec::new();
    for source in kernel {
        for record in &source.log.records {
            let at = clock.kernel(&record.time);
            let (kind, summary) = kernel_summary(&record.event);
            events.push(TimelineEvent {
                at: at.map(|t| t.0),
                uncertainty_seconds: at.map(|t| t.1),
                origin: "kernel",
                kind: kind.to_owned(),
                summary,
                path: source.path.clone(),
                line: record.line,
                wrapper_at: None,
            });
        }
    }
    for source in postgres {
        for record in &source.digest.records {
            let Some(event) = &record.event else { continue };
            // Routine, high-volume kinds (one per checkpoint, one per temporary file) stay off
            // the timeline; findings read them from the records.
            if matches!(
                event,
                PgEvent::CheckpointComplete { .. } | PgEvent::TempFile { .. }
            ) {
                continue;
            }
            let at = record.time.as_ref().and_then(clock::postgres);
            events.push(TimelineEvent {
                at,
                uncertainty_seconds: record.time.as_ref().map(|t| {
                    if t.civil.subsec_nanosecond() == 0 {
                        1.0
                    } else {
                        0.001
                    }
                }),
                origin: "postgres",
                kind: event.kind().to_owned(),
                summary: record.message.clone(),
                path: source.path.clone(),
                line: record.line,
                wrapper_at: clock::wrapper_at(record, at),
            });
        }
    }
    events.extend(containers);
    sort(&mut events);
    events
}

/// Stable: events without a time keep their source order after the timed ones.
fn sort(events: &mut [TimelineEvent]) {
    events.sort_by(|a, b| match (a.at, b.at) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
}

/// Adds what Patroni did to the server and pgBackRest's errors, warnings and backups: their
/// stamps print no zone and are read at the host's offset (`--host-utc-offset`), to the
/// millisecond.
pub(crate) fn add_ha(events: &mut Vec<TimelineEvent>, sources: &[HaSource], clock: &Clock) {
    if sources.is_empty() {
        return;
    }
    for source in sources {
        for event in &source.events {
            let at = event.at(clock);
            events.push(TimelineEvent {
                at,
                uncertainty_seconds: at.map(|_| 0.001),
                origin: source.tool.origin(),
                kind: event.kind.to_owned(),
                summary: event.summary.clone(),
                path: source.path.clone(),
                line: event.line,
                wrapper_at: None,
            });
        }
    }
    sort(events);
}

fn kernel_summary(event: &KernelEvent) -> (&'static str, String) {
    match event {
        KernelEvent::OomReport(r) => {
            let text = match &r.victim {
                Some(v) => format!(
                    "OOM killer killed {} {}{}{}",
                    v.comm,
                    v.pid,
                    v.anon_rss_kb
                        .map(|kb| format!(", anon-rss {}", human_kb(kb)))
                        .unwrap_or_default(),
                    r.constraint
                        .as_deref()
                        .map(|c| format!(", constraint {c}"))
                        .unwrap_or_default()
                ),
                None => "OOM killer ran; no victim recorded".to_owned(),
            };
            ("oom_report", text)
        }
        KernelEvent::Segfault(s) => (
            "segfault",
            format!(
                "{} {} segfault at {}{}",
                s.comm,
                s.pid,
                s.address,
                s.object
                    .as_deref()
                    .map(|o| format!(" in {o}"))
                    .unwrap_or_default()
            ),
        ),
        KernelEvent::PageAllocationFailure(p) => (
            "page_allocation_failure",
            format!("{} page allocation failure, order {}", p.comm, p.order),
        ),
        KernelEvent::HungTask(h) => (
            "hung_task",
            format!("{} {} blocked for more than {} s", h.comm, h.pid, h.seconds),
        ),
        KernelEvent::Trap(t) => (
            "trap",
            format!(
                "{} {} {} at ip {}{}",
                t.comm,
                t.pid,
                t.trap,
                t.ip,
                t.object
                    .as_deref()
                    .map(|o| format!(" in {o}"))
                    .unwrap_or_default()
            ),
        ),
        KernelEvent::CoreDumpFailed(c) => (
            "core_dump_failed",
            format!("{} {} left no core dump: {}", c.comm, c.pid, c.reason),
        ),
        KernelEvent::StorageError(e) => ("storage_error", e.message.clone()),
        KernelEvent::CrashReport(c) => (
            "crash_report",
            format!(
                "{} {} died{}; {} {}",
                c.comm,
                c.pid,
                c.signal
                    .map(|s| format!(" of signal {s}"))
                    .unwrap_or_default(),
                c.reporter,
                match c.core_dumped {
                    Some(true) => "dumped its core",
                    Some(false) => "kept no core",
                    None => "reported it",
                }
            ),
        ),
        KernelEvent::UnitEvent(u) => {
            use pgmortem_parse::kernel::UnitEventKind as K;
            let detail = u.detail.as_deref().unwrap_or("");
            let text = match u.what {
                K::OomKill => format!(
                    "{}: the kernel's OOM killer killed a process of this unit{}",
                    u.unit,
                    if u.ancestors.is_empty() {
                        String::new()
                    } else {
                        format!(" (also reported for {})", u.ancestors.join(", "))
                    }
                ),
                K::OomdKill => format!("{}: systemd-oomd killed {detail} process(es)", u.unit),
                K::Failed => format!("{}: failed with result '{detail}'", u.unit),
                K::MainProcessExited => format!("{}: main process exited, {detail}", u.unit),
                K::MemoryPeak => format!("{}: memory peak {detail}", u.unit),
                _ => format!("{}: {detail}", u.unit),
            };
            ("unit_event", text)
        }
        _ => ("kernel_event", "kernel event".to_owned()),
    }
}

/// A perf profile for the report: its sample density placed on UTC. perf stamps samples with
/// the kernel's local clock, seconds since boot, as the kernel log does, so the boot time
/// places both.
pub(crate) fn perf_summary(perf: PerfFacts, clock: &Clock) -> PerfSummary {
    let profile = perf.profile;
    let started_at = profile.timeline.first().and_then(|b| {
        let boot = clock.boot?;
        boot.at
            .checked_add(jiff::SignedDuration::from_secs_f64(b.start))
            .ok()
    });
    PerfSummary {
        path: perf.path,
        event: profile.event,
        samples: profile.samples,
        cpus: profile.cpus,
        duration_seconds: profile.duration_seconds,
        kernel_share: profile.kernel_share,
        started_at,
        bucket_seconds: profile.bucket_seconds,
        density: profile.timeline.iter().map(|b| b.samples).collect(),
        stacks: perf.stacks,
    }
}
