//! ## What it finds
//! The kernel's hung-task detector reported PostgreSQL processes (or the file system's own
//! threads, such as `jbd2/sdb1-8`) blocked in uninterruptible sleep for longer than
//! `kernel.hung_task_timeout_secs`: `INFO: task postgres:1234 blocked for more than 120
//! seconds.` Such a wait is almost always on storage: a device that stopped answering, a
//! frozen file system (`fsfreeze`, a snapshot tool), an NFS server gone, a saturated volume.
//!
//! ## Why it matters
//! A backend blocked in the kernel cannot be cancelled or terminated (not even by SIGKILL)
//! until its I/O completes: sessions hang, connections pile up to `max_connections`, and a
//! checkpointer or WAL writer that is blocked stops the whole server's writes. Supervisors
//! that probe the server may restart it, which waits on the same I/O.
//!
//! ## What to do
//! Find what the storage was doing at that time: a snapshot or backup that froze the file
//! system, the volume's latency and queue (iostat, the cloud volume's throttling and burst
//! credits), a failing device (the kernel log's I/O errors), a network file system. Keep
//! freezes short, give the volume the throughput the workload needs, and do not restart the
//! server while its processes wait on I/O.
//!
//! ## Thresholds
//! Any hung-task report of a process named `postgres` or `postmaster`, or of a PostgreSQL
//! pid the bundle lists (warning). Reports of other tasks alone are left out.
//!
//! ## Evidence it needs
//! The kernel log.
//!
//! ## Knowledge
//! [kernel-hung-task] (`kernel.hung_task_timeout_secs`, tasks in state D).

use pgmortem_parse::kernel::KernelEvent;

use crate::facts::Facts;
use crate::report::{Finding, Severity};
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "io-stall-hung-task",
    title: "PostgreSQL processes were blocked in the kernel (hung tasks)",
    severities: &[warning("")],
    needs: &[Input::KernelLog],
    uses: &[Input::Processes],
};

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let pids: Vec<u32> = facts
        .host
        .processes
        .processes
        .iter()
        .map(|p| p.pid)
        .collect();
    let hung = facts.kernel.records(|e| {
        matches!(e, KernelEvent::HungTask(t)
            if t.comm == "postgres" || t.comm == "postmaster" || pids.contains(&t.pid))
    });
    let Some(first) = hung.first() else {
        return Vec::new();
    };
    let tasks: Vec<(u32, u64)> = hung
        .iter()
        .filter_map(|h| match &h.record.event {
            KernelEvent::HungTask(t) => Some((t.pid, t.seconds)),
            _ => None,
        })
        .collect();
    let mut distinct: Vec<u32> = tasks.iter().map(|t| t.0).collect();
    distinct.sort_unstable();
    distinct.dedup();
    let longest = tasks.iter().map(|t| t.1).max().unwrap_or(0);
    let last = hung[hung.len() - 1];
    let when = match (first.at, last.at) {
        (Some(a), Some(b)) if a != b => format!(" between {a} and {b}"),
        (Some(a), _) => format!(" at {a}"),
        _ => String::new(),
    };
    let shown: Vec<String> = distinct.iter().take(8).map(u32::to_string).collect();
    let mut evidence = vec![first.evidence("a PostgreSQL process blocked in the kernel")];
    if hung.len() > 1 {
        evidence.push(last.evidence("the last report"));
    }
    vec![
        finding(
            &META,
            Severity::Warning,
            format!(
                "{} PostgreSQL process{} blocked in the kernel for more than {longest} s",
                distinct.len(),
                if distinct.len() == 1 { "" } else { "es" }
            ),
        )
        .summary(format!(
            "The kernel's hung-task detector reported {} time{}{when} that PostgreSQL processes \
             (pids {}{}) were blocked in uninterruptible sleep for more than {longest} seconds: \
             waiting on storage (a device that stopped answering, a frozen file system, a \
             saturated volume). They could not be cancelled or killed until the I/O completed.",
            hung.len(),
            if hung.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if distinct.len() > shown.len() {
                ", …"
            } else {
                ""
            }
        ))
        .recommend(
            "Find what the storage did at that time: a snapshot or backup freezing the file \
             system (fsfreeze), the volume's latency, queue and throttling (iostat, the cloud \
             volume's burst credits), I/O errors in the kernel log, a network file system. Keep \
             freezes short and give the volume the throughput the workload needs; do not \
             restart the server while its processes wait on I/O.",
        )
        .evidence(evidence)
        .figure("blocked_seconds", longest as f64)
        .figure("processes", distinct.len() as f64)
        .impact(longest as f64),
    ]
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::{Scratch, incident_archive};

    fn frozen() -> Scratch {
        Scratch::bundle(&incident_archive("pg15-fsfreeze-hung-task"))
    }

    #[test]
    fn blocked_backends_of_a_frozen_file_system_are_reported() {
        // Real capture: the data directory's ext4 frozen under load past a 10 s hung-task
        // timeout.
        let f = frozen().run("io-stall-hung-task").one();
        assert!(
            f.title.contains("blocked in the kernel for more than 10 s"),
            "{}",
            f.title
        );
        assert!(f.summary.contains("21573"), "{}", f.summary);
        assert!(f.evidence.iter().any(|e| e.path.starts_with("kernel/")));
    }

    #[test]
    fn another_programs_hung_task_is_silent() {
        // Another name and pids the bundle's processes do not list: not PostgreSQL's.
        let other = frozen()
            .edit("kernel/dmesg.txt", |t| {
                t.replace("task postgres:2", "task rsync:9")
            })
            .edit("kernel/dmesg-T.txt", |t| {
                t.replace("task postgres:2", "task rsync:9")
            });
        let outcome = other.run("io-stall-hung-task");
        assert!(outcome.silent(), "{outcome:?}");
    }
}
