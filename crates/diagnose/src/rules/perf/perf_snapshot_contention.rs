//! ## What it finds
//! On PostgreSQL 13 or older, the perf profile shows much of the CPU in `GetSnapshotData`:
//! every snapshot walks the whole array of connections, idle ones included, under a shared
//! ProcArrayLock.
//!
//! ## Why it matters
//! The cost of a snapshot grows with max_connections, and READ COMMITTED takes one per
//! statement (PL/pgSQL even per simple expression before PostgreSQL 13): with hundreds or
//! thousands of connections the CPUs spend their time building snapshots instead of running
//! queries. PostgreSQL 14 reworked snapshots to scale with active transactions.
//!
//! ## What to do
//! Upgrade to PostgreSQL 14 or later; meanwhile lower the number of connections (a pooler such
//! as PgBouncer in transaction mode, max_connections sized to the cores), take fewer snapshots
//! (REPEATABLE READ for long read-only transactions, fewer PL/pgSQL simple expressions in hot
//! loops).
//!
//! ## Thresholds
//! `GetSnapshotData` frames in ≥ 10 % of the busy samples, PostgreSQL ≤ 13, and at least 100
//! connections (sessions in the activity summary, else collected backends, else
//! max_connections): a warning. PostgreSQL 14 and later: silent.
//!
//! ## Evidence it needs
//! A perf profile with call graphs and the server version; the connection count when
//! collected.
//!
//! ## Knowledge
//! [ru-anomalies]: a flame graph dominated by GetSnapshotData called from
//! GetTransactionSnapshot and exec_eval_simple_expr; before PostgreSQL 14 a snapshot walks every
//! connection, and up to 13 each PL/pgSQL simple expression took one.

use crate::facts::Facts;
use crate::human::percent;
use crate::report::{Finding, Severity};
use crate::rules::support::perf_coverage;
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "perf-snapshot-contention",
    title: "Snapshots cost much CPU on PostgreSQL 13 or older with many connections",
    severities: &[warning("")],
    needs: &[Input::Perf, Input::PgVersion],
    uses: &[Input::Subtrans, Input::Processes, Input::PgSettings],
};

/// Share of the busy samples from which the rule fires.
pub(crate) const THRESHOLD: f64 = 0.10;
/// Connections from which the walk over all of them is the suspect.
pub(crate) const MANY_CONNECTIONS: u64 = 100;
/// The last major version whose snapshots walk every connection.
pub(crate) const LAST_AFFECTED_MAJOR: u32 = 13;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(version) = &facts.host.postgres.version else {
        return Vec::new();
    };
    if version.value.major > LAST_AFFECTED_MAJOR {
        return Vec::new();
    }
    let (connections, counted) = connections(facts);
    if connections < MANY_CONNECTIONS {
        return Vec::new();
    }
    let mut out = Vec::new();
    for p in &facts.perf {
        let share = p.busy_share("snapshot_contention");
        if share < THRESHOLD {
            continue;
        }
        out.push(
            finding(
                &META,
                Severity::Warning,
                format!(
                    "{} of the busy CPU time builds snapshots (GetSnapshotData) on PostgreSQL {} \
                     with {connections} connections",
                    percent(share),
                    version.value.text
                ),
            )
            .summary(format!(
                "{} of the busy samples ({}) are inside GetSnapshotData. On PostgreSQL {} a \
                 snapshot walks every connection ({connections} {counted}), so its cost grows \
                 with the connections, idle ones included.",
                percent(share),
                perf_coverage(p),
                version.value.major
            ))
            .recommend(format!(
                "Upgrade to PostgreSQL 14 or later (snapshots scale with active transactions \
                 there); until then put a pooler in front (PgBouncer, transaction mode) and bring \
                 the {connections} connections down to a few per core, and take fewer snapshots \
                 (REPEATABLE READ for long read-only work, fewer PL/pgSQL simple expressions in \
                 hot loops)."
            ))
            .evidence([
                p.evidence(format!(
                    "{} of busy samples in GetSnapshotData",
                    percent(share)
                )),
                version.evidence(format!("PostgreSQL {}", version.value.text)),
            ])
            .figure("get_snapshot_data_share", share)
            .figure("connections", connections as f64)
            .impact(share),
        );
    }
    out
}

/// Connections, and how they were counted.
fn connections(facts: &Facts<'_>) -> (u64, &'static str) {
    if let Some(n) = facts.host.subtrans.as_ref().and_then(|s| s.sessions) {
        return (n, "sessions in pg_stat_activity");
    }
    let backends = facts.host.processes.backends().count() as u64;
    if backends > 0 {
        return (backends, "client backends collected");
    }
    match facts.host.postgres.number("max_connections") {
        Some(n) => (n as u64, "allowed by max_connections"),
        None => (0, ""),
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    const ACTIVITY: &str = "postgres/activity-summary.txt";

    /// The collected bundle (8 sessions) with a profile a third of whose samples are in
    /// GetSnapshotData (a hand-made edge case), its version edited to `version`.
    fn bundle(version: &str) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .copy(
                "perf/perf-script.txt",
                "formats/perf/edge-kvm-exit-multi.txt",
            )
            .set_line(
                "postgres/pg_settings.txt",
                "server_version_num|",
                &format!("server_version_num|{version}||default||f"),
            )
    }

    /// The one active session without a wait event becomes `n` of them.
    fn sessions(scratch: Scratch, n: u32) -> Scratch {
        scratch.set_line(
            ACTIVITY,
            "active|||client backend|",
            &format!("active|||client backend|{n}"),
        )
    }

    #[test]
    fn thirteen_fires_from_a_hundred_sessions() {
        // 7 other sessions + 93 = 100.
        let f = sessions(bundle("130023"), 93)
            .run("perf-snapshot-contention")
            .one();
        assert_eq!(f.figures["connections"], 100.0);
        assert!((f.figures["get_snapshot_data_share"] - 1.0 / 3.0).abs() < 1e-9);
        assert!(f.recommendation.unwrap().contains("PostgreSQL 14"));
        assert!(
            sessions(bundle("130023"), 92)
                .run("perf-snapshot-contention")
                .silent()
        );
    }

    #[test]
    fn fourteen_and_later_are_silent() {
        assert!(
            sessions(bundle("140010"), 500)
                .run("perf-snapshot-contention")
                .silent()
        );
    }

    #[test]
    fn a_profile_without_snapshots_is_silent() {
        assert!(
            sessions(bundle("130023"), 500)
                .copy(
                    "perf/perf-script.txt",
                    "formats/perf/local-pg15-pgbench-a-g.txt"
                )
                .run("perf-snapshot-contention")
                .silent()
        );
    }

    /// The PostgreSQL 13 capture with `idle` of its 814 idle client sessions kept (822
    /// sessions in all: 817 client backends and 5 others).
    fn pg13_capture_with_idle(idle: u32) -> Scratch {
        Scratch::incident("pg13-snapshot-contention-perf").set_line(
            ACTIVITY,
            "idle|Client|ClientRead|client backend|",
            &format!("idle|Client|ClientRead|client backend|{idle}"),
        )
    }

    #[test]
    fn eight_hundred_connections_on_thirteen_fire() {
        // Real capture: PostgreSQL 13.23, 822 sessions (817 client backends), a PL/pgSQL loop
        // taking a snapshot per expression.
        let f = Scratch::incident("pg13-snapshot-contention-perf")
            .run("perf-snapshot-contention")
            .one();
        assert_eq!(f.figures["connections"], 822.0);
        assert!(f.figures["get_snapshot_data_share"] > 0.35, "{f:#?}");
        assert!(f.title.contains("PostgreSQL 13.23"), "{}", f.title);
    }

    #[test]
    fn the_thirteen_capture_needs_a_hundred_connections() {
        assert_eq!(
            pg13_capture_with_idle(92)
                .run("perf-snapshot-contention")
                .one()
                .figures["connections"],
            100.0
        );
        assert!(
            pg13_capture_with_idle(91)
                .run("perf-snapshot-contention")
                .silent()
        );
    }

    #[test]
    fn the_same_load_and_connections_on_fifteen_are_silent() {
        // Real capture: PostgreSQL 15.18, 817 client backends, the same load.
        let fifteen = Scratch::incident("pg15-snapshot-many-connections-perf");
        assert!(fifteen.run("perf-snapshot-contention").silent());
        // Said to be PostgreSQL 13, its 7.2 % of samples under GetSnapshotData (no idle CPU
        // time: the busy share too) stay under the threshold.
        let said_thirteen = fifteen
            .set_line(
                "postgres/pg_settings.txt",
                "server_version|",
                "server_version|13.23||default||f",
            )
            .set_line(
                "postgres/pg_settings.txt",
                "server_version_num|",
                "server_version_num|130023||default||f",
            )
            .set_line(
                "postgres/version.txt",
                "PostgreSQL 15",
                "PostgreSQL 13.23 on x86_64-pc-linux-gnu, compiled by gcc, 64-bit\
                 |2026-11-24 05:36:24.868685+00|f|2026-11-24 05:54:59.940565+00",
            );
        assert!(said_thirteen.run("perf-snapshot-contention").silent());
        // … and the edit took: a third of the samples under GetSnapshotData fire.
        let f = said_thirteen
            .copy(
                "perf/perf-script.txt",
                "formats/perf/edge-kvm-exit-multi.txt",
            )
            .run("perf-snapshot-contention")
            .one();
        assert!(f.title.contains("PostgreSQL 13.23"), "{}", f.title);
    }
}
