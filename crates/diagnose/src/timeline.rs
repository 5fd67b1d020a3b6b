//! The unified timeline: every notable event of every source on UTC.

use std::collections::HashMap;

use jiff::Timestamp;
use pgmortem_parse::kernel::{HardwareError, HardwareSource, KernelEvent};
use pgmortem_parse::pglog::PgEvent;

use crate::clock::{self, Clock};
use crate::facts::PerfFacts;
use crate::ha::HaSource;
use crate::human::human_kb;
use crate::human::kernel;
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
    let mut kernel_events = KernelCopies::default();
    for (source_index, source) in kernel.iter().enumerate() {
        for record in &source.log.records {
            let at = clock.kernel(&record.time);
            let (kind, summary) = kernel_summary(&record.event);
            let event = TimelineEvent {
                at: at.map(|t| t.0),
                uncertainty_seconds: at.map(|t| t.1),
                origin: "kernel",
                kind: kind.to_owned(),
                summary,
                path: source.path.clone(),
                line: record.line,
                wrapper_at: None,
                failure: storage_failure(&record.event),
            };
            kernel_events.add(event, at, source_index, record.time.monotonic_us.is_some());
        }
    }
    let mut events = kernel_events.into_events();
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
                failure: None,
            });
        }
    }
    events.extend(containers);
    sort(&mut events);
    events
}

/// The kernel's events, each once: a line printed in two kernel logs of the bundle (a raw
/// `dmesg` and its `dmesg -T` copy, the journal's `-k`, the syslog file) is one event, as the
/// same OOM kill is one kill (see `correlate::oom_kills`). A copy is an event of the same kind
/// and summary from another log at the same moment ([`clock::same_kernel_moment`]); each event
/// takes at most one copy from each other log, so a line the kernel printed twice stays twice.
/// The copy with a monotonic time is the one kept (its time has the smaller error bar).
#[derive(Default)]
struct KernelCopies {
    events: Vec<KernelCopy>,
    by_text: HashMap<(String, String), Vec<usize>>,
}

/// One kernel event, with where it came from and the logs its copies came from.
struct KernelCopy {
    event: TimelineEvent,
    at: Option<(Timestamp, f64)>,
    source: usize,
    monotonic: bool,
    copies_from: Vec<usize>,
}

impl KernelCopies {
    fn add(
        &mut self,
        event: TimelineEvent,
        at: Option<(Timestamp, f64)>,
        source: usize,
        monotonic: bool,
    ) {
        let key = (event.kind.clone(), event.summary.clone());
        let same = self.by_text.get(&key).and_then(|indices| {
            indices.iter().copied().find(|&i| {
                let kept = &self.events[i];
                kept.source != source
                    && !kept.copies_from.contains(&source)
                    && clock::same_kernel_moment(kept.at, at)
            })
        });
        match same {
            Some(i) => {
                let kept = &mut self.events[i];
                kept.copies_from.push(source);
                if monotonic && !kept.monotonic {
                    kept.event = event;
                    kept.at = at;
                    kept.monotonic = true;
                }
            }
            None => {
                self.by_text.entry(key).or_default().push(self.events.len());
                self.events.push(KernelCopy {
                    event,
                    at,
                    source,
                    monotonic,
                    copies_from: Vec::new(),
                });
            }
        }
    }

    fn into_events(self) -> Vec<TimelineEvent> {
        self.events.into_iter().map(|c| c.event).collect()
    }
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
                failure: None,
            });
        }
    }
    sort(events);
}

/// What a storage error says happened (the file system's error, its read-only remount or
/// shutdown, the device's failure), for the timeline event's `failure`; `None` for every other
/// kind of event.
fn storage_failure(event: &KernelEvent) -> Option<&'static str> {
    match event {
        KernelEvent::StorageError(e) => Some(e.failure.as_str()),
        _ => None,
    }
}

/// A hardware error with the count its line gives (`corrected memory error on memory
/// controller 0 at CPU#0Channel#2_DIMM#0 page 0x0, 4 errors`); the bare notice that records
/// follow as such.
fn hardware_summary(e: &HardwareError) -> String {
    if kernel::bare_notice(e) {
        return "machine check events logged (the records follow, or went to mcelog)".to_owned();
    }
    let text = kernel::hardware_error(e);
    match e.count {
        Some(n) if e.source != HardwareSource::Thermal => {
            format!("{text}, {n} error{}", if n == 1 { "" } else { "s" })
        }
        _ => text,
    }
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
        KernelEvent::StorageError(e) => ("storage_error", kernel::storage_error(e)),
        KernelEvent::HardwareError(e) => ("hardware_error", hardware_summary(e)),
        KernelEvent::UserspaceOomKill(k) => ("userspace_oom_kill", kernel::userspace_oom_kill(k)),
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

#[cfg(test)]
mod tests {
    use pgmortem_parse::kernel::{self, KernelOptions};

    use super::{kernel_summary, storage_failure};

    /// The kind (with a storage error's `failure` after a colon) and summary of every event the
    /// kernel-log `text` holds.
    fn summaries(text: &str) -> Vec<(String, String)> {
        kernel::parse(text.as_bytes(), &KernelOptions::default())
            .records
            .iter()
            .map(|r| {
                let (kind, summary) = kernel_summary(&r.event);
                match storage_failure(&r.event) {
                    Some(failure) => (format!("{kind}:{failure}"), summary),
                    None => (kind.to_owned(), summary),
                }
            })
            .collect()
    }

    fn pair(kind: &str, summary: &str) -> (String, String) {
        (kind.to_owned(), summary.to_owned())
    }

    #[test]
    fn a_file_system_error_its_journal_and_the_read_only_remount_are_storage_errors_with_their_failure()
     {
        // fixtures/incidents/pg15-read-only-fs, kernel/dmesg.txt: `trigger_fs_error` on ext4
        // mounted errors=remount-ro.
        let got = summaries(
            "[  403.071300] EXT4-fs error (device loop0): trigger_test_error:129: comm bash: 1\n\
             [  403.072999] Aborting journal on device loop0-8.\n\
             [  403.087090] EXT4-fs (loop0): Remounting filesystem read-only\n",
        );
        assert_eq!(
            got,
            [
                pair(
                    "storage_error:filesystem_error",
                    "ext4 error on loop0 (met by `bash`): `trigger_test_error:129: 1`"
                ),
                pair(
                    "storage_error:shutdown",
                    "the jbd2 journal loop0-8 aborted: its file system stops writing"
                ),
                pair(
                    "storage_error:read_only",
                    "ext4 on loop0 remounted read-only"
                ),
            ]
        );
    }

    #[test]
    fn io_errors_of_the_block_layer_and_the_file_system_stay_storage_errors() {
        // fixtures/incidents/pg15-io-errors, kernel/dmesg-T.txt: a loop device whose sparse
        // backing file's tmpfs filled.
        let got = summaries(
            "[Sat Nov 28 16:04:42 2026] critical space allocation error, dev loop0, sector 475568 op 0x1:(WRITE) flags 0x0 phys_seg 32 prio class 2\n\
             [Sat Nov 28 16:04:42 2026] EXT4-fs warning (device loop0): ext4_end_bio:368: I/O error 3 writing to inode 993 starting block 59446)\n",
        );
        assert_eq!(
            got,
            [
                pair(
                    "storage_error:no_space",
                    "WRITE failed on loop0 at sector 475568: critical space allocation error \
                     (the device's backing store is full)"
                ),
                pair(
                    "storage_error:io_error",
                    "ext4 I/O error on loop0: `ext4_end_bio:368: I/O error 3 writing to inode \
                     993 starting block 59446)`"
                ),
            ]
        );
        // fixtures/wild/longhorn-ext4-errors-postgres-volume: the SCSI disk's reset; a read
        // error of the block layer (fixtures/formats/kernel/public-blk-update-request-dmesg.txt).
        let got = summaries(
            "sd 5:0:0:1: Power-on or device reset occurred\n\
             blk_update_request: I/O error, dev nvme1n1, sector 823872 op 0x0:(READ) flags 0x80700 phys_seg 1 prio class 0\n",
        );
        assert_eq!(
            got,
            [
                pair(
                    "storage_error:device_reset",
                    "SCSI disk 5:0:0:1 reset or taken offline: `Power-on or device reset occurred`"
                ),
                pair(
                    "storage_error:io_error",
                    "READ failed on nvme1n1 at sector 823872: I/O error"
                ),
            ]
        );
    }

    #[test]
    fn an_xfs_shutdown_names_the_file_system_and_why() {
        let got = summaries("XFS (dm-0): Filesystem has been shut down due to log error (0x2).\n");
        assert_eq!(
            got,
            [pair(
                "storage_error:shutdown",
                "XFS on dm-0 shut down: `Filesystem has been shut down due to log error (0x2).`"
            )]
        );
    }

    #[test]
    fn hardware_errors_are_named_with_their_dimm_and_count() {
        let got = summaries(include_str!(
            "../../../fixtures/wild/radiasoft-edac-ce-dimm-replaced/syslog"
        ));
        assert_eq!(
            got[..2],
            [
                pair(
                    "hardware_error",
                    "machine check events logged (the records follow, or went to mcelog)"
                ),
                pair(
                    "hardware_error",
                    "corrected memory error on memory controller 1 at \
                     CPU_SrcID#1_Ha#0_Chan#0_DIMM#0 page 0xee30a0, 1 error"
                ),
            ]
        );
        let got = summaries(include_str!(
            "../../../fixtures/formats/kernel/public-edac-ce-kern-log.txt"
        ));
        assert_eq!(
            got[1],
            pair(
                "hardware_error",
                "corrected memory error on memory controller 0 at CPU#0Channel#2_DIMM#0 page \
                 0x0, 4 errors"
            )
        );
        let got = summaries(include_str!(
            "../../../fixtures/formats/kernel/public-thermal-dmesg.txt"
        ));
        assert_eq!(
            got[0],
            pair(
                "hardware_error",
                "`CPU2: Core temperature above threshold, cpu clock throttled (total events = \
                 2675)`"
            )
        );
        let got = summaries(include_str!(
            "../../../fixtures/formats/kernel/public-memory-failure-inject-dmesg.txt"
        ));
        assert_eq!(
            got[0],
            pair(
                "hardware_error",
                "memory failure at page 0x39c2 (Recovered)"
            )
        );
    }

    #[test]
    fn user_space_oom_kills_say_who_killed_what_and_why() {
        let got = summaries(include_str!(
            "../../../fixtures/wild/systemd-oomd-kills-journald-system-slice/journal.txt"
        ));
        assert!(
            got.contains(&pair(
                "userspace_oom_kill",
                "systemd-oomd killed `/system.slice/systemd-journald.service` (1 process): \
                 memory pressure of `/system.slice` at 85.03%, over its limit of 80.00% for more \
                 than 2s"
            )),
            "{got:?}"
        );
        // The unit's own line stays a unit event.
        assert!(got.iter().any(|(k, s)| *k == "unit_event"
            && s == "systemd-journald.service: systemd-oomd killed 1 process(es)"));
        let got = summaries(include_str!(
            "../../../fixtures/formats/kernel/public-earlyoom-journal.txt"
        ));
        assert_eq!(
            got.iter()
                .filter(|(k, _)| *k == "userspace_oom_kill")
                .map(|(_, s)| s.as_str())
                .next(),
            Some(
                "earlyoom sent SIGTERM to `Web Content` 1024668 (VmRSS 79 MiB, oom_score 823): \
                 available memory and free swap at or below its limits (mem 10.00%, swap \
                 10.00%)"
            )
        );
    }

    /// The kernel events of `report`'s timeline, as (path, line, kind, summary).
    fn kernel_events(report: &crate::Report) -> Vec<(String, u64, String, String)> {
        report
            .timeline
            .iter()
            .filter(|e| e.origin == "kernel")
            .map(|e| (e.path.clone(), e.line, e.kind.clone(), e.summary.clone()))
            .collect()
    }

    #[test]
    fn a_kernel_line_in_the_raw_dmesg_and_its_dmesg_t_copy_is_one_event() {
        // fixtures/incidents/pg15-io-errors: the collector's kernel/dmesg.txt and
        // kernel/dmesg-T.txt are two prints of one ring buffer.
        let both = crate::rules::testing::Scratch::incident("pg15-io-errors");
        let got = kernel_events(&both.report());
        let raw_only = kernel_events(&both.remove("kernel/dmesg-T.txt").report());
        assert_eq!(
            got, raw_only,
            "the raw copy is kept, with its monotonic time"
        );
        assert_eq!(
            got.iter().filter(|e| e.2 == "storage_error").count(),
            34,
            "{got:#?}"
        );
        assert!(got.iter().all(|e| e.0 == "kernel/dmesg.txt"), "{got:#?}");
    }

    #[test]
    fn a_line_the_kernel_printed_twice_stays_twice_and_a_copy_from_dmesg_t_alone_stays() {
        let line = "EXT4-fs (loop0): Remounting filesystem read-only";
        let scratch = crate::rules::testing::Scratch::incident("pg15-io-errors");
        let remounts = |r: &crate::Report| {
            kernel_events(r)
                .into_iter()
                .filter(|e| e.3 == "ext4 on loop0 remounted read-only")
                .count()
        };
        assert_eq!(remounts(&scratch.report()), 1);
        // The same line again at the same stamp, in both copies: the kernel printed it twice.
        let twice = scratch
            .edit("kernel/dmesg.txt", |t| {
                let at = t.find(line).expect("the remount in dmesg.txt");
                let stamp = &t[t[..at].rfind('[').expect("its stamp")..at];
                format!("{t}{stamp}{line}\n")
            })
            .edit("kernel/dmesg-T.txt", |t| {
                let at = t.find(line).expect("the remount in dmesg-T.txt");
                let stamp = &t[t[..at].rfind('[').expect("its stamp")..at];
                format!("{t}{stamp}{line}\n")
            });
        assert_eq!(remounts(&twice.report()), 2);
        // Only in dmesg -T (the raw copy lost it): kept once, from dmesg -T.
        let raw_lost = twice.edit("kernel/dmesg.txt", |t| {
            let first = t.find(line).expect("the remount");
            let start = t[..first].rfind('\n').map_or(0, |i| i + 1);
            let end = first + line.len() + 1;
            format!("{}{}", &t[..start], &t[end..])
        });
        let events = kernel_events(&raw_lost.report());
        let kept: Vec<_> = events
            .iter()
            .filter(|e| e.3 == "ext4 on loop0 remounted read-only")
            .map(|e| e.0.as_str())
            .collect();
        assert_eq!(kept.len(), 2, "{kept:?}");
        assert!(kept.contains(&"kernel/dmesg.txt"), "{kept:?}");
    }
}
