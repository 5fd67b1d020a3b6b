//! ## What it finds
//! The profile counts many CPU migrations: the scheduler moves tasks from one CPU to another,
//! from `cpu-migrations` events recorded beside the CPU samples.
//!
//! ## Why it matters
//! A migrated backend finds cold caches on its new CPU; with more runnable processes than
//! cores (too many active connections, a noisy neighbour, CPU limits in a container) the
//! migrations multiply and latency rises while CPU usage looks normal.
//!
//! ## What to do
//! Keep active sessions to a few per core (a pooler), look for what competes for the CPUs
//! (the profile's processes), and in containers or VMs prefer dedicated or pinned CPUs over
//! CFS quotas that throttle and bounce tasks.
//!
//! ## Thresholds
//! Migrations per second per CPU (the sum of the cpu-migrations periods over the profile's
//! duration and CPUs): ≥ 100 info, ≥ 500 a warning.
//!
//! ## Evidence it needs
//! A perf profile holding the `cpu-migrations` event (the collector records it with
//! `--perf`).
//!
//! ## Knowledge
//! [zh-low-level]: two pgbench scripts mixed made the long query slower; `perf record -e
//! cache-misses,cpu-migrations` showed the same cache-miss rate but three times the
//! migrations (10,460 against 2,750).

use crate::facts::Facts;
use crate::report::{Finding, Severity};
use crate::rules::support::perf_coverage;
use crate::rules::{Input, RuleMeta, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "perf-cpu-migrations",
    title: "The scheduler migrates tasks between CPUs often",
    severity: Severity::Warning,
    needs: &[Input::Perf],
    uses: &[],
};

/// Migrations per second per CPU from which the rule says so.
pub(crate) const INFO_RATE: f64 = 100.0;
/// … and from which it is a warning.
pub(crate) const WARNING_RATE: f64 = 500.0;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &facts.perf {
        let (Some(migrations), Some(seconds)) = (p.event("cpu-migrations"), p.seconds()) else {
            continue;
        };
        let cpus = p.profile.cpus.unwrap_or(1).max(1);
        let rate = migrations.weight as f64 / seconds / f64::from(cpus);
        if rate < INFO_RATE {
            continue;
        }
        let severity = if rate >= WARNING_RATE {
            Severity::Warning
        } else {
            Severity::Info
        };
        out.push(
            finding(
                &META,
                severity,
                format!("{rate:.0} CPU migrations per second per CPU"),
            )
            .summary(format!(
                "{} migrations in {seconds:.1} s on {cpus} CPU(s) ({}): tasks keep moving between \
                 CPUs and lose their caches.",
                migrations.weight,
                perf_coverage(p)
            ))
            .recommend(
                "Keep active sessions to a few per core (a pooler), find what competes for the \
                 CPUs, and prefer dedicated or pinned CPUs to CFS quotas in containers and VMs.",
            )
            .evidence([p.evidence(format!("{} cpu-migrations", migrations.weight))])
            .figure("migrations", migrations.weight as f64)
            .figure("migrations_per_second_per_cpu", rate)
            .impact(rate),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    #[test]
    fn a_profile_without_the_event_is_silent() {
        assert!(
            Scratch::new()
                .copy(
                    "perf/perf-script.txt",
                    "formats/perf/local-pg15-pgbench-a-g.txt"
                )
                .run("perf-cpu-migrations")
                .silent()
        );
    }

    #[test]
    fn a_quiet_pgbench_run_counts_few_migrations() {
        // 453 migrations in 3.0 s: 151/s on one CPU (the file has no header giving the CPUs).
        let f = Scratch::new()
            .copy(
                "perf/perf-script.txt",
                "formats/perf/local-pg15-pgbench-multi-g.txt",
            )
            .run("perf-cpu-migrations")
            .one();
        assert_eq!(f.figures["migrations"], 453.0);
        assert_eq!(f.severity, crate::Severity::Info);
    }
}
