//! ## What it finds
//! PostgreSQL's memory settings allow more than the memory it lives in: the worst case of
//! `work_mem × hash_mem_multiplier` for every process that can run a query,
//! `max_connections + min(max_parallel_workers, max_worker_processes, max_connections ×
//! max_parallel_workers_per_gather)` of them, plus shared memory plus autovacuum's
//! `autovacuum_work_mem` (`maintenance_work_mem` when it is -1) × `autovacuum_max_workers`, is
//! above the effective limit (the memory cgroup's limit when one is set below RAM, else RAM).
//!
//! ## Why it matters
//! Nothing in PostgreSQL bounds the sum of work_mem across sessions: each sort or hash node of
//! each session (and of each parallel worker) may use up to work_mem (hash nodes
//! work_mem × hash_mem_multiplier). Parallel workers are bounded for the whole server, not per
//! session: at most max_parallel_workers of them run at once, taken from the
//! max_worker_processes background workers, and no more than max_parallel_workers_per_gather
//! for each session's Gather. The worst case is rarely reached, but when enough sessions
//! run large sorts at once, memory runs out: the OOM killer kills a backend and the instance
//! crash-restarts, or under strict overcommit queries fail with `out of memory`.
//!
//! ## What to do
//! Size work_mem for the connections: the finding solves for the work_mem that keeps the worst
//! case within 80 % of the limit (a fifth left to the kernel and the page cache) once shared
//! memory and autovacuum are counted, and the max_connections that fit with the current
//! work_mem (their parallel workers within the same caps), and shows the formula with the
//! values. Raise work_mem per session or per role (`SET work_mem`, `ALTER ROLE … SET`) for
//! the few queries that need it; put a pooler in front to lower max_connections.
//!
//! ## Thresholds
//! Worst case > limit: a warning; critical when the bundle shows an OOM kill of a PostgreSQL
//! process (the finding is tied to it). Silent when the worst case fits.
//!
//! ## Evidence it needs
//! The server settings (pg_settings, else postgresql.conf with PostgreSQL's defaults for what
//! it does not set) and /proc/meminfo; the memory cgroup's limit and the kernel log when
//! present.
//!
//! ## Knowledge
//! [fr-memoire]: no instance-wide bound on work_mem, "the number of nodes of a plan, their
//! types, parallel processes, estimation errors", many moderate sorts exhausting memory
//! together, the OOM kill and crash-restart that follow. [pg-config] (work_mem,
//! hash_mem_multiplier, max_parallel_workers_per_gather, max_parallel_workers,
//! max_worker_processes, autovacuum_work_mem);
//! [pg-kernel-resources] ("Linux Memory Overcommit").

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::support::{kill_evidence, memory_limit, postgres_oom_kills, worst_case};
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "work-mem-exceeds-memory",
    title: "work_mem × connections × parallel workers can exceed the memory PostgreSQL has",
    severities: &[
        critical("when the bundle shows an OOM kill of a PostgreSQL process"),
        warning("without an OOM kill of a PostgreSQL process"),
    ],
    needs: &[Input::PgSettings, Input::Meminfo],
    uses: &[Input::Cgroup, Input::KernelLog, Input::PostgresLog],
};

/// Share of the limit left to the kernel and the page cache when solving for work_mem.
pub(crate) const HEADROOM: f64 = 0.20;
/// PostgreSQL's smallest work_mem.
const MIN_WORK_MEM: u64 = 64 << 10;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let (Some(worst), Some((limit, limit_name, limit_evidence))) =
        (worst_case(facts), memory_limit(facts))
    else {
        return Vec::new();
    };
    if worst.total <= limit {
        return Vec::new();
    }
    let pg = &facts.host.postgres;
    let kills: Vec<_> = postgres_oom_kills(facts).collect();
    let severity = if kills.is_empty() {
        Severity::Warning
    } else {
        Severity::Critical
    };

    let work_mem = pg.bytes("work_mem").unwrap_or(0).max(1);
    let multiplier = worst.multiplier;
    let budget = ((limit as f64 * (1.0 - HEADROOM)) as u64)
        .saturating_sub(worst.shared)
        .saturating_sub(worst.maintenance);
    let fitting_work_mem = if worst.nodes == 0 {
        0
    } else {
        (budget as f64 / (worst.nodes as f64 * multiplier)) as u64
    };
    let fitting_connections = worst.connections_within(budget);

    let settings: Vec<String> = worst.settings.iter().map(|s| s.describe()).collect();
    let ram = facts.host.memory.as_ref().map(|m| m.ram.value);
    let limit_text = match (limit_name, ram) {
        ("cgroup memory limit", Some(r)) => format!(
            "memory cgroup limit of {} (RAM is {}; the cgroup limit applies)",
            human_bytes(limit),
            human_bytes(r)
        ),
        _ => format!("{limit_name} of {}", human_bytes(limit)),
    };
    let kills_text = match kills.as_slice() {
        [] => String::new(),
        [(_, _, k)] => format!(
            " It happened: the kernel OOM killer killed {} {}.",
            crate::human::quote(&k.comm),
            k.pid
        ),
        more => format!(
            " It happened: the kernel OOM killer killed {} PostgreSQL processes.",
            more.len()
        ),
    };
    let fix = if budget == 0 {
        format!(
            "Shared memory ({}) and autovacuum ({}) alone exceed the {} that leaves a fifth of \
             the limit free: raise the limit, or lower shared_buffers and \
             maintenance_work_mem, before sizing work_mem.",
            human_bytes(worst.shared),
            human_bytes(worst.maintenance),
            human_bytes((limit as f64 * (1.0 - HEADROOM)) as u64)
        )
    } else {
        let work_mem_fix = if fitting_work_mem >= MIN_WORK_MEM {
            format!(
                "set work_mem = '{}' (({} × 80 % − {} shared − {} autovacuum) ÷ ({} × \
                 hash_mem_multiplier {multiplier})) and raise it per session or role for the \
                 queries that need more",
                pg_size(fitting_work_mem),
                human_bytes(limit),
                human_bytes(worst.shared),
                human_bytes(worst.maintenance),
                worst.nodes_formula()
            )
        } else {
            format!(
                "no work_mem fits {} (it would be under PostgreSQL's minimum of 64kB): \
                 lower max_connections",
                worst.nodes_formula()
            )
        };
        let connections_fix = if fitting_connections >= 1 {
            format!(
                "; or keep work_mem and lower max_connections to {fitting_connections} (a \
                 pooler in front)"
            )
        } else {
            format!(
                "; at the current work_mem of {} not even one connection fits",
                human_bytes(work_mem)
            )
        };
        format!("To fit 80 % of the limit, {work_mem_fix}{connections_fix}.")
    };

    let mut evidence: Vec<_> = worst.settings.iter().filter_map(|s| s.evidence()).collect();
    evidence.push(limit_evidence);
    evidence.extend(kills.iter().map(|(_, _, k)| {
        kill_evidence(
            k,
            format!("OOM kill of {} {}", crate::human::quote(&k.comm), k.pid),
        )
    }));
    let mut f = finding(
        &META,
        severity,
        format!(
            "The worst case of the memory settings, {}, is {} the {}",
            human_bytes(worst.total),
            times(worst.total as f64 / limit as f64),
            limit_text
        ),
    )
    .summary(format!(
        "Every process that can run a query (each connection, and each parallel worker the \
         server can start) running one sort or hash node at its limit, beside shared memory \
         and the autovacuum workers at theirs: {}. From {}.{}",
        worst.formula(),
        settings.join(", "),
        kills_text
    ))
    .recommend(fix)
    .evidence(evidence)
    .figure("worst_case_bytes", worst.total as f64)
    .figure("limit_bytes", limit as f64)
    .figure("worst_case_share", worst.total as f64 / limit as f64)
    .figure("per_node_bytes", worst.per_node as f64)
    .figure("nodes", worst.nodes as f64)
    .figure("parallel_workers", worst.parallel as f64)
    .figure("shared_bytes", worst.shared as f64)
    .figure("autovacuum_bytes", worst.maintenance as f64)
    .figure("recommended_work_mem_bytes", fitting_work_mem as f64)
    .figure("connections_that_fit", fitting_connections as f64)
    .figure("oom_kills", kills.len() as f64)
    .impact(worst.total.saturating_sub(limit) as f64);
    if let Some((index, incident, _)) = kills.first() {
        f = f.incident(*index).confidence(incident.confidence);
    }
    vec![f]
}

/// `1.02×`, `1201×`.
fn times(ratio: f64) -> String {
    if ratio < 10.0 {
        format!("{ratio:.2}×")
    } else {
        format!("{ratio:.0}×")
    }
}

/// A size as postgresql.conf takes it, rounded down to a whole unit: `12MB`, `127kB`.
fn pg_size(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{}GB", bytes >> 30)
    } else if bytes >= 1 << 20 {
        format!("{}MB", bytes >> 20)
    } else {
        format!("{}kB", bytes >> 10)
    }
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const SETTINGS: &str = "postgres/pg_settings.txt";

    /// The collected bundle: work_mem 4MB, hash_mem_multiplier 2, max_connections 20,
    /// 2 workers per gather within max_parallel_workers 8 and max_worker_processes 8,
    /// shared_memory_size 38MB, maintenance_work_mem 64MB × 3 (autovacuum_work_mem -1), in a
    /// 1 GiB memory cgroup: 8 MiB × (20 + min(8, 8, 40)) + 38 MiB + 192 MiB = 454 MiB.
    fn collected() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
    }

    fn with_work_mem_kb(kb: u64) -> Scratch {
        collected().set_line(
            SETTINGS,
            "work_mem|",
            &format!(
                "work_mem|{kb}|kB|configuration file|/var/lib/postgresql/15/main/postgresql.conf|f"
            ),
        )
    }

    /// `name|value||configuration file|…` in the collected bundle's dump.
    fn set(scratch: Scratch, name: &str, value: &str) -> Scratch {
        scratch.set_line(
            SETTINGS,
            &format!("{name}|"),
            &format!(
                "{name}|{value}||configuration file|/var/lib/postgresql/15/main/postgresql.conf|f"
            ),
        )
    }

    /// The processes and parallel workers the worst case counts, with work_mem raised to
    /// 100 GB so that it fires whatever the caps: `(nodes, parallel_workers)`.
    fn processes(scratch: Scratch) -> (f64, f64) {
        let f = scratch
            .set_line(SETTINGS, "work_mem|", "work_mem|104857600|kB|default||f")
            .run("work-mem-exceeds-memory")
            .one();
        (f.figures["nodes"], f.figures["parallel_workers"])
    }

    #[test]
    fn the_collected_configuration_fits_its_cgroup() {
        assert!(collected().run("work-mem-exceeds-memory").silent());
    }

    #[test]
    fn one_kilobyte_over_the_limit_fires_and_under_is_silent() {
        // 14519 kB × 2 × 28 processes + 38 MiB + 192 MiB = 1,073,750,016 B > 1 GiB;
        // 14518 kB gives 1,073,692,672 B.
        let f = with_work_mem_kb(14519).run("work-mem-exceeds-memory").one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["worst_case_bytes"], 1_073_750_016.0);
        assert_eq!(f.figures["limit_bytes"], (1u64 << 30) as f64);
        assert_eq!(f.figures["nodes"], 28.0);
        assert!(
            with_work_mem_kb(14518)
                .run("work-mem-exceeds-memory")
                .silent()
        );
    }

    #[test]
    fn the_work_mem_that_fits_and_every_setting_with_its_line() {
        let f = with_work_mem_kb(14519).run("work-mem-exceeds-memory").one();
        // (0.8 × 1 GiB − 38 MiB − 192 MiB) ÷ (28 × 2) = 617,820,979 B ÷ 56 = 11,032,517 B:
        // 10MB.
        assert_eq!(f.figures["recommended_work_mem_bytes"], 11_032_517.0);
        let text = f.recommendation.unwrap();
        assert!(text.contains("set work_mem = '10MB'"), "{text}");
        // The formula, with its values.
        assert!(
            text.contains(
                "÷ (28 processes (max_connections 20 + min(max_parallel_workers 8, \
                 max_worker_processes 8, 20 × max_parallel_workers_per_gather 2) parallel \
                 workers) × hash_mem_multiplier 2)"
            ),
            "{text}"
        );
        // 617,820,979 B hold 20 processes of 14519 kB × 2: 12 connections and their 8 workers.
        assert_eq!(f.figures["connections_that_fit"], 12.0);
        assert!(text.contains("lower max_connections to 12"), "{text}");
        assert!(
            f.summary.contains(
                "28 MiB (work_mem 14 MiB × hash_mem_multiplier 2) × 28 processes \
                 (max_connections 20 + min(max_parallel_workers 8, max_worker_processes 8, 20 \
                 × max_parallel_workers_per_gather 2) parallel workers) + 38 MiB shared + 192 \
                 MiB for autovacuum (3 workers × maintenance_work_mem 64 MiB) = 1.0 GiB"
            ),
            "{}",
            f.summary
        );
        assert!(
            f.summary
                .contains("work_mem = 14 MiB (postgres/pg_settings.txt:352)"),
            "{}",
            f.summary
        );
        for name in [
            "max_connections = 20 (postgres/pg_settings.txt:196)",
            "max_parallel_workers = 8 (postgres/pg_settings.txt:204)",
            "max_worker_processes = 8 (postgres/pg_settings.txt:218)",
        ] {
            assert!(f.summary.contains(name), "{name}: {}", f.summary);
        }
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("work_mem"))
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("memory.limit_in_bytes"))
        );
    }

    #[test]
    fn max_parallel_workers_caps_the_parallel_workers() {
        // Binding at 7 (below max_worker_processes 8 and 20 × 2); at 9, max_worker_processes
        // binds instead.
        assert_eq!(
            processes(set(collected(), "max_parallel_workers", "7")),
            (27.0, 7.0)
        );
        assert_eq!(
            processes(set(collected(), "max_parallel_workers", "9")),
            (28.0, 8.0)
        );
        // A dump without it (PostgreSQL 9.6 has none): max_worker_processes alone caps them.
        assert_eq!(
            processes(set(
                collected().set_line(SETTINGS, "max_parallel_workers|", ""),
                "max_worker_processes",
                "16"
            )),
            (36.0, 16.0)
        );
        assert_eq!(
            processes(set(collected(), "max_worker_processes", "16")),
            (28.0, 8.0)
        );
    }

    #[test]
    fn max_worker_processes_caps_the_parallel_workers() {
        // Binding at 5 (below max_parallel_workers 8); at 9, max_parallel_workers binds.
        assert_eq!(
            processes(set(collected(), "max_worker_processes", "5")),
            (25.0, 5.0)
        );
        assert_eq!(
            processes(set(collected(), "max_worker_processes", "9")),
            (28.0, 8.0)
        );
    }

    #[test]
    fn few_connections_get_per_gather_workers_each() {
        // 3 × 2 = 6 under the caps of 8; 4 × 2 = 8 at them; 5 × 2 = 10 capped to 8.
        assert_eq!(
            processes(set(collected(), "max_connections", "3")),
            (9.0, 6.0)
        );
        assert_eq!(
            processes(set(collected(), "max_connections", "4")),
            (12.0, 8.0)
        );
        assert_eq!(
            processes(set(collected(), "max_connections", "5")),
            (13.0, 8.0)
        );
        // No parallel query: the connections alone.
        assert_eq!(
            processes(set(collected(), "max_parallel_workers_per_gather", "0")),
            (20.0, 0.0)
        );
    }

    #[test]
    fn autovacuum_counts_autovacuum_work_mem_else_maintenance_work_mem() {
        let autovacuum = |s: Scratch| {
            s.set_line(SETTINGS, "work_mem|", "work_mem|104857600|kB|default||f")
                .run("work-mem-exceeds-memory")
                .one()
                .figures["autovacuum_bytes"]
        };
        // -1 (the dump's default): 3 × maintenance_work_mem 64 MiB.
        assert_eq!(autovacuum(collected()), (192u64 << 20) as f64);
        let set_kb = |kb: &str| {
            collected().set_line(
                SETTINGS,
                "autovacuum_work_mem|",
                &format!("autovacuum_work_mem|{kb}|kB|configuration file||f"),
            )
        };
        assert_eq!(autovacuum(set_kb("1048576")), (3u64 << 30) as f64);
        assert_eq!(autovacuum(set_kb("-1")), (192u64 << 20) as f64);
    }

    #[test]
    fn the_recorded_oom_kill_makes_it_critical_and_tied() {
        // work_mem = 1GB, max_connections 100, max_parallel_workers 8 in a 512 MiB cgroup:
        // 2 GiB × 108 processes + 143 MiB + 192 MiB = 216.3 GiB (not 300 processes).
        let f = Scratch::incident("pg15-memcg-oom-work-mem")
            .run("work-mem-exceeds-memory")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, Some(0));
        assert_eq!(f.figures["nodes"], 108.0);
        assert_eq!(f.figures["worst_case_bytes"], 232_279_506_944.0);
        assert!(f.title.contains("216.3 GiB, is 433× the"), "{}", f.title);
        assert!(
            f.title.contains("the memory cgroup limit of 512 MiB"),
            "{}",
            f.title
        );
        assert!(
            f.summary.contains("killed `postgres` 32691"),
            "{}",
            f.summary
        );
        // (0.8 × 512 MiB − 143 MiB − 192 MiB) ÷ (108 × 2) = 362,147 B.
        assert_eq!(f.figures["recommended_work_mem_bytes"], 362_147.0);
        let text = f.recommendation.unwrap();
        assert!(text.contains("set work_mem = '353kB'"), "{text}");
        assert!(text.contains("not even one connection fits"), "{text}");
        assert!(f.evidence.iter().any(|e| e.path == "kernel/dmesg.txt"));
    }

    #[test]
    fn another_clusters_oom_kill_does_not_make_it_critical() {
        // Main: 8 MiB × 108 processes + 143 MiB + 192 MiB = 1.2 GiB, under its 2 GiB cgroup;
        // with work_mem raised to 16 MB, over it. The other cluster's backend was killed in
        // its own cgroup: a warning, tied to nothing. Collected for the other cluster, whose
        // backend it was: critical and tied.
        let main = Scratch::incident("pg15-two-clusters-other-oom");
        assert!(main.run("work-mem-exceeds-memory").silent());
        let f = main
            .set_line(SETTINGS, "work_mem|", "work_mem|16384|kB|default||f")
            .run("work-mem-exceeds-memory")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.incident, None);
        assert_eq!(f.figures["oom_kills"], 0.0);
        let f = Scratch::incident("pg15-two-clusters-own-oom")
            .run("work-mem-exceeds-memory")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, Some(0));
    }

    #[test]
    fn shared_memory_alone_over_the_budget_says_so() {
        // The recorded capture with shared_memory_size edited to 300 MB: 300 + 192 MiB of
        // autovacuum exceed 80 % of the 512 MiB limit before any work_mem.
        let f = Scratch::incident("pg15-memcg-oom-work-mem")
            .set_line(
                SETTINGS,
                "shared_memory_size|",
                "shared_memory_size|300|MB|default||f",
            )
            .run("work-mem-exceeds-memory")
            .one();
        assert_eq!(f.figures["recommended_work_mem_bytes"], 0.0);
        let text = f.recommendation.unwrap();
        assert!(text.contains("alone exceed the 410 MiB"), "{text}");
    }

    #[test]
    fn the_recorded_postmaster_kill_fits_its_settings() {
        // work_mem 4MB, 20 connections, shared_buffers 256MB in a 1 GiB cgroup: the sort that
        // ran out had SET work_mem = '4GB' itself. The settings' worst case fits.
        assert!(
            Scratch::incident("pg15-oom-kill-postmaster")
                .run("work-mem-exceeds-memory")
                .silent()
        );
    }

    #[test]
    fn without_a_cgroup_ram_is_the_limit() {
        // work_mem edited to 100GB in the collected bundle, its cgroup files removed.
        let mut scratch = with_work_mem_kb(100 << 20);
        for path in scratch.paths("cgroup/") {
            scratch = scratch.remove(&path);
        }
        let f = scratch.run("work-mem-exceeds-memory").one();
        assert_eq!(f.figures["limit_bytes"], (24_684_092u64 * 1024) as f64);
        assert!(f.title.contains("the RAM of 23.5 GiB"), "{}", f.title);
    }

    #[test]
    fn without_settings_it_is_not_evaluated() {
        let scratch = collected()
            .remove(SETTINGS)
            .remove("postgres/postgresql.conf");
        assert!(matches!(
            scratch.run("work-mem-exceeds-memory"),
            Outcome::NotEvaluated(_)
        ));
    }
}
