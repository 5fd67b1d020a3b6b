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
//! duration and CPUs): ≥ 400 info, ≥ 1000 a warning. Set from real captures of the collector
//! on two vCPUs: ordinary loads count 1 to 345 a second per CPU (pgbench TPC-B 345, a
//! snapshot-heavy load 17 and 28, a load slowed by audit rules 121), CPU-bound backends under a
//! one-CPU CFS quota 1562, 64 clients taking turns on one row lock 1839.
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
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "perf-cpu-migrations",
    title: "The scheduler migrates tasks between CPUs often",
    severities: &[
        warning("from 1,000 migrations a second per CPU"),
        info("from 400 migrations a second per CPU"),
    ],
    needs: &[Input::Perf],
    uses: &[],
};

/// Migrations per second per CPU from which the rule says so.
pub(crate) const INFO_RATE: f64 = 400.0;
/// … and from which it is a warning.
pub(crate) const WARNING_RATE: f64 = 1000.0;

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
    use super::{INFO_RATE, WARNING_RATE};
    use crate::Severity;
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
        assert!(
            Scratch::new()
                .copy(
                    "perf/perf-script.txt",
                    "formats/perf/local-pg15-pgbench-multi-g.txt",
                )
                .run("perf-cpu-migrations")
                .silent()
        );
    }

    /// The capture of backends under a one-CPU CFS quota, its profile said to last `ms`.
    fn quota_capture_lasting(ms: f64) -> Scratch {
        Scratch::incident("pg15-cpu-migrations-perf").set_line(
            "perf/perf-script.txt",
            "# sample duration",
            &format!("# sample duration : {ms:.3} ms"),
        )
    }

    #[test]
    fn a_cpu_quota_bounces_backends_between_cpus() {
        // Real capture: pgbench -S -c 32 against a server in a cpu cgroup with a one-CPU quota,
        // on two vCPUs: 62479 migrations in 20.0 s.
        let f = Scratch::incident("pg15-cpu-migrations-perf")
            .run("perf-cpu-migrations")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["migrations"], 62479.0);
        assert!(
            (f.figures["migrations_per_second_per_cpu"] - 1562.0).abs() < 1.0,
            "{f:#?}"
        );
    }

    #[test]
    fn the_same_migrations_over_a_longer_profile_cross_each_threshold() {
        // The capture's 62479 migrations on 2 CPUs over a profile said to last longer: a rate
        // of r a second per CPU is a duration of 62479 / 2 / r seconds.
        let at = |rate: f64, ms_more: f64| {
            let f = quota_capture_lasting(62479.0 / 2.0 / rate * 1000.0 + ms_more)
                .run("perf-cpu-migrations")
                .findings();
            f.first()
                .map(|f| (f.severity, f.figures["migrations_per_second_per_cpu"]))
        };
        assert!(matches!(at(WARNING_RATE, -1.0), Some((Severity::Warning, r)) if r > 1000.0));
        assert!(matches!(at(WARNING_RATE, 1.0), Some((Severity::Info, r)) if r < 1000.0));
        assert!(matches!(at(INFO_RATE, -1.0), Some((Severity::Info, r)) if r > 400.0));
        assert_eq!(at(INFO_RATE, 1.0), None);
    }

    #[test]
    fn an_ordinary_pgbench_load_is_silent() {
        // Real capture: pgbench TPC-B on two vCPUs, 345 migrations a second per CPU.
        assert!(
            Scratch::incident("pg15-pgbench-baseline-perf")
                .run("perf-cpu-migrations")
                .silent()
        );
    }

    #[test]
    fn a_busy_two_cpu_host_without_a_quota_is_silent() {
        // Real capture: 17 migrations a second per CPU under the snapshot load.
        assert!(
            Scratch::incident("pg13-snapshot-contention-perf")
                .run("perf-cpu-migrations")
                .silent()
        );
    }
}
