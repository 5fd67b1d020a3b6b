//! ## What it finds
//! The perf profile shows the CPUs spinning on locks: PostgreSQL's spinlocks (`s_lock`,
//! `perform_spin_delay`) and lightweight locks (`LWLockAcquire`, `LWLockWaitForVar`), and the
//! kernel's queued spinlock slow path (`native_queued_spin_lock_slowpath`).
//!
//! ## Why it matters
//! Spinning burns CPU without progress; it grows with the number of sessions competing for
//! one structure (a hot buffer page, the WAL insert lock, the lock manager's partitions, a
//! sequence) and, in virtual machines, when the hypervisor preempts the vCPU holding the lock.
//!
//! ## What to do
//! Find the lock from the stacks (the callers of LWLockAcquire / s_lock in the flame graph):
//! spread the hot spot (a sequence cache, partitioning, fewer concurrent writers per row),
//! lower the concurrency to a few active sessions per core with a pooler, and in VMs check the
//! host's overcommitment of vCPUs and its pause-loop exiting.
//!
//! ## Thresholds
//! Lock-spinning frames in ≥ 10 % of the busy samples: a warning.
//!
//! ## Evidence it needs
//! A perf profile with call graphs.
//!
//! ## Knowledge
//! [zh-low-level] (lock holder preemption: a vCPU spinning on a spinlock held by a preempted
//! vCPU, PAUSE-loop exiting), [ru-anomalies] (flame graphs of contended PostgreSQL code paths).

use crate::facts::Facts;
use crate::human::percent;
use crate::report::{Finding, Severity};
use crate::rules::support::perf_coverage;
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "perf-spinlock-contention",
    title: "The CPUs spin on contended locks",
    severities: &[warning("")],
    needs: &[Input::Perf],
    uses: &[],
};

/// Share of the busy samples from which the rule fires.
pub(crate) const THRESHOLD: f64 = 0.10;
/// Frames of lock spinning: PostgreSQL's spinlocks and LWLocks, the kernel's slow path.
const SPINNING: &[&str] = &[
    "s_lock",
    "perform_spin_delay",
    "LWLockAcquire",
    "LWLockAcquireOrWait",
    "LWLockWaitForVar",
    "native_queued_spin_lock_slowpath",
    "queued_spin_lock_slowpath",
];

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &facts.perf {
        let share = p.busy_share_of(SPINNING);
        if share < THRESHOLD {
            continue;
        }
        let postgres = p.busy_share_of(&SPINNING[..5]);
        let kernel = p.busy_share_of(&SPINNING[5..]);
        let top: Vec<String> = p
            .top_matching(SPINNING, 4)
            .into_iter()
            .map(|(s, f)| format!("{s} {}", percent(f)))
            .collect();
        out.push(
            finding(
                &META,
                Severity::Warning,
                format!("{} of the busy CPU time spins on locks", percent(share)),
            )
            .summary(format!(
                "{} of the busy samples ({}) are spinning on a lock: {} in PostgreSQL's \
                 spinlocks and LWLocks, {} in the kernel's spinlock slow path{}.",
                percent(share),
                perf_coverage(p),
                percent(postgres),
                percent(kernel),
                if top.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", top.join(", "))
                }
            ))
            .recommend(
                "Find the lock in the flame graph (the callers of LWLockAcquire / s_lock): spread \
                 the hot spot, keep active sessions to a few per core with a pooler, and in a VM \
                 check vCPU overcommitment on the host.",
            )
            .evidence([p.evidence(format!("{} of busy samples spinning", percent(share)))])
            .figure("spinning_share", share)
            .figure("postgres_lock_share", postgres)
            .figure("kernel_spinlock_share", kernel)
            .impact(share),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::{FrameIn, Scratch, perf_script};

    #[test]
    fn a_plain_pgbench_profile_is_silent() {
        assert!(
            Scratch::new()
                .copy(
                    "perf/perf-script.txt",
                    "formats/perf/local-pg15-pgbench-a-g.txt"
                )
                .run("perf-spinlock-contention")
                .silent()
        );
    }

    #[test]
    fn ten_percent_of_samples_spinning_fire_and_nine_do_not() {
        // Hand-made edge cases: 100 samples, 10 (then 9) of them in s_lock.
        let f = Scratch::new()
            .write(
                "perf/perf-script.txt",
                perf_script(100, 10, "s_lock", FrameIn::Postgres),
            )
            .run("perf-spinlock-contention")
            .one();
        assert!((f.figures["spinning_share"] - 0.10).abs() < 1e-9, "{f:#?}");
        assert!(
            Scratch::new()
                .write(
                    "perf/perf-script.txt",
                    perf_script(100, 9, "s_lock", FrameIn::Postgres)
                )
                .run("perf-spinlock-contention")
                .silent()
        );
    }

    #[test]
    fn the_kernel_slow_path_counts_too() {
        let f = Scratch::new()
            .write(
                "perf/perf-script.txt",
                perf_script(100, 30, "native_queued_spin_lock_slowpath", FrameIn::Kernel),
            )
            .run("perf-spinlock-contention")
            .one();
        assert!(
            (f.figures["kernel_spinlock_share"] - 0.30).abs() < 1e-9,
            "{f:#?}"
        );
        assert_eq!(f.figures["postgres_lock_share"], 0.0);
    }

    #[test]
    fn sixty_four_clients_on_one_row_over_two_cpus_wait_rather_than_spin() {
        // Real capture: 0.1 % of the samples spin; the contention shows as lock waits.
        assert!(
            Scratch::incident("pg15-spinlock-contention-perf")
                .run("perf-spinlock-contention")
                .silent()
        );
    }
}
