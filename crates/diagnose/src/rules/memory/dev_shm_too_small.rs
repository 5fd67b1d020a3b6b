//! ## What it finds
//! /dev/shm is too small for PostgreSQL's dynamic shared memory: the log has `could not resize
//! shared memory segment "/PostgreSQL.N" to N bytes: No space left on device`, or `df` shows a
//! /dev/shm smaller than one parallel hash join may need while `dynamic_shared_memory_type =
//! posix` and parallel query is on.
//!
//! ## Why it matters
//! With `dynamic_shared_memory_type = posix` (the default on Linux) every parallel query
//! creates its shared memory segment in /dev/shm: the tuple queues, the shared hash table of a
//! parallel hash join (up to work_mem × hash_mem_multiplier per participant), and more.
//! Containers get a 64 MB /dev/shm by default (Docker), and `posix_fallocate` of a larger
//! segment fails with ENOSPC: the query errors out, and at start (where the startup process
//! sizes its segment) the server fails to start at all.
//!
//! ## What to do
//! Give /dev/shm room: `--shm-size` for `docker run` (`shm_size` in compose), an `emptyDir`
//! with `medium: Memory` and a `sizeLimit` mounted on /dev/shm in Kubernetes, `mount -o
//! remount,size=…` (and /etc/fstab) on a host. Or, from PostgreSQL 14, reserve the space in
//! the main shared memory at start with `min_dynamic_shared_memory`, which parallel queries
//! use before /dev/shm (it counts in shared_memory_size, and in huge pages when they are
//! used). The finding gives the size for this configuration.
//!
//! ## Thresholds
//! ENOSPC errors in the log: a warning, critical when an incident (a crash or a failed start)
//! cites one among the lines before it (the finding is tied to it). /dev/shm smaller than
//! max(256 MiB, work_mem × hash_mem_multiplier × (the workers of one Gather + 1)) with
//! posix dynamic shared memory, parallel query on and `min_dynamic_shared_memory` below that
//! size: a warning. The workers of one Gather are max_parallel_workers_per_gather within
//! max_parallel_workers and max_worker_processes. The size recommended is the larger of that figure and the largest segment
//! refused, rounded up to 64 MiB.
//!
//! ## Evidence it needs
//! The PostgreSQL log; `df` of /dev/shm and the server settings for the size check; the
//! server version (min_dynamic_shared_memory exists from PostgreSQL 14).
//!
//! ## Knowledge
//! [zh-low-level]: Docker's 64 MB /dev/shm, `fallocate(…, 50438144) = -1 ENOSPC` in
//! `dsm_create` under `ExecInitParallelPlan`, found with `strace -k`. [pg-kernel-resources]
//! ("Shared Memory and Semaphores": POSIX shared memory in /dev/shm); [pg-config]
//! (dynamic_shared_memory_type, min_dynamic_shared_memory, max_parallel_workers_per_gather,
//! hash_mem_multiplier).

use pgmortem_parse::pglog::PgEvent;

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::support::ParallelCaps;
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "dev-shm-too-small",
    title: "/dev/shm is too small for PostgreSQL's dynamic shared memory",
    severities: &[
        critical("when an incident cites a /dev/shm ENOSPC among the lines before it"),
        warning("for ENOSPC errors alone, or a /dev/shm smaller than a parallel hash join needs"),
    ],
    needs: &[Input::PostgresLog],
    uses: &[Input::DevShm, Input::PgSettings, Input::PgVersion],
};

/// The least /dev/shm a server with parallel query should have.
pub(crate) const MIN_DEV_SHM: u64 = 256 << 20;
/// The size recommended is rounded up to a multiple of this.
const ROUND_TO: u64 = 64 << 20;
/// Log records cited, at most.
const CITED: usize = 3;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let refused = facts
        .log
        .records(|e| matches!(e, PgEvent::SharedMemoryResizeFailed { no_space: true, .. }));
    let largest = refused
        .iter()
        .filter_map(|(_, r)| match &r.event {
            Some(PgEvent::SharedMemoryResizeFailed { bytes, .. }) => Some(*bytes),
            _ => None,
        })
        .max();
    let tied = facts.incidents.iter().enumerate().find(|(_, i)| {
        i.preceded_by.iter().any(|l| {
            refused
                .iter()
                .any(|(path, r)| *path == l.path && r.line == l.line)
        })
    });

    // What one parallel hash join may put in /dev/shm.
    let pg = &facts.host.postgres;
    let posix = pg
        .setting("dynamic_shared_memory_type")
        .is_some_and(|s| s.value.eq_ignore_ascii_case("posix"));
    let workers = ParallelCaps::of(pg).per_query();
    let per_hash = pg.bytes("work_mem").map(|w| {
        (w as f64 * pg.number("hash_mem_multiplier").unwrap_or(1.0)) as u64 * (workers + 1)
    });
    let need = per_hash.unwrap_or(0).max(MIN_DEV_SHM);
    let preallocated = pg.bytes("min_dynamic_shared_memory").unwrap_or(0);
    let dev_shm = facts.host.dev_shm.as_ref();
    let small =
        dev_shm.filter(|d| posix && workers > 0 && preallocated < need && d.size.value < need);

    if refused.is_empty() && small.is_none() {
        return Vec::new();
    }
    let severity = match (tied, refused.is_empty()) {
        (Some(_), _) => Severity::Critical,
        _ => Severity::Warning,
    };
    let recommended = need.max(largest.unwrap_or(0)).div_ceil(ROUND_TO) * ROUND_TO;

    let mut said = Vec::new();
    if !refused.is_empty() {
        let when = |r: &pgmortem_parse::pglog::PgRecord| {
            r.time
                .as_ref()
                .and_then(crate::clock::postgres)
                .map_or_else(|| "?".to_owned(), |t| t.to_string())
        };
        let window = if refused.len() == 1 {
            format!("once, at {}", when(refused[0].1))
        } else {
            format!(
                "{} times between {} and {}",
                refused.len(),
                when(refused[0].1),
                when(refused[refused.len() - 1].1)
            )
        };
        said.push(format!(
            "PostgreSQL could not create a dynamic shared memory segment in /dev/shm (No space \
             left on device) {window}; the largest asked for was {}.",
            human_bytes(largest.unwrap_or(0))
        ));
    }
    if let Some((_, incident)) = tied {
        said.push(format!(
            "It preceded a {} ({}){}.",
            match incident.kind {
                "crash_restart" => "crash-restart",
                "unclean_restart" => "restart",
                other => other,
            },
            incident.postgres_crash.as_ref().map_or_else(
                || "a process died".to_owned(),
                |c| format!("{} {} died", c.process, c.pid)
            ),
            incident
                .outage_seconds
                .map(|s| format!("; the instance was down {}", crate::human::duration(s)))
                .unwrap_or_default()
        ));
    }
    if let Some(d) = dev_shm {
        let how_full = d
            .used
            .map(|u| format!(", {} in use", human_bytes(u)))
            .unwrap_or_default();
        if small.is_some() {
            said.push(format!(
                "/dev/shm is {}{how_full}, less than the {} one parallel hash join may need \
                 here (work_mem × hash_mem_multiplier × ({} parallel workers + 1), at least \
                 {}).",
                human_bytes(d.size.value),
                human_bytes(need),
                workers,
                human_bytes(MIN_DEV_SHM)
            ));
        } else {
            said.push(format!(
                "/dev/shm is {}{how_full}.",
                human_bytes(d.size.value)
            ));
        }
    }

    let min_dsm = match pg.major() {
        Some(v) if v < 14 => String::new(),
        _ => format!(
            " Or, as PostgreSQL 14 and later allow, set min_dynamic_shared_memory = '{}MB'{}: \
             reserved in the main shared memory at start (shared_memory_size grows by as much, \
             in huge pages when they are used), parallel queries take from it before /dev/shm.",
            recommended >> 20,
            pg.setting("min_dynamic_shared_memory")
                .map(|s| format!(" (now {})", s.describe()))
                .unwrap_or_default()
        ),
    };
    let fix = format!(
        "Give /dev/shm {} or more: docker run --shm-size={}m (shm_size in compose); in \
         Kubernetes an emptyDir with medium: Memory and sizeLimit: {}Mi mounted on /dev/shm; on \
         a host mount -o remount,size={}M /dev/shm and the same in /etc/fstab.{min_dsm}",
        human_bytes(recommended),
        recommended >> 20,
        recommended >> 20,
        recommended >> 20
    );

    let mut evidence: Vec<Evidence> = refused
        .iter()
        .take(CITED)
        .map(|(path, r)| Evidence {
            path: (*path).to_owned(),
            line: r.line,
            what: crate::human::quote_cut(&r.message, 160),
            key: None,
            host_file: None,
            host_line: None,
        })
        .collect();
    if let Some(d) = dev_shm {
        evidence.push(
            d.size
                .evidence(format!("/dev/shm {}", human_bytes(d.size.value))),
        );
    }
    if small.is_some() {
        evidence.extend(
            [
                "dynamic_shared_memory_type",
                "work_mem",
                "hash_mem_multiplier",
                "max_parallel_workers_per_gather",
                "min_dynamic_shared_memory",
            ]
            .iter()
            .filter_map(|n| pg.setting(n)?.evidence()),
        );
    }

    let title = match (refused.len(), small, dev_shm) {
        (0, _, Some(d)) => format!(
            "/dev/shm is {}: too small for parallel query ({} needed)",
            human_bytes(d.size.value),
            human_bytes(need)
        ),
        (n, _, Some(d)) => format!(
            "/dev/shm ({}) ran out of space {n} time{} for dynamic shared memory",
            human_bytes(d.size.value),
            if n == 1 { "" } else { "s" }
        ),
        (n, _, None) => format!(
            "/dev/shm ran out of space {n} time{} for dynamic shared memory",
            if n == 1 { "" } else { "s" }
        ),
    };
    let mut f = finding(&META, severity, title)
        .summary(said.join(" "))
        .recommend(fix)
        .evidence(evidence)
        .figure("enospc_errors", refused.len() as f64)
        .figure("dev_shm_need_bytes", need as f64)
        .figure("recommended_dev_shm_bytes", recommended as f64);
    if let Some(b) = largest {
        f = f.figure("largest_request_bytes", b as f64);
    }
    if let Some(d) = dev_shm {
        f = f.figure("dev_shm_bytes", d.size.value as f64);
    }
    if let Some((index, incident)) = tied {
        f = f
            .incident(index)
            .impact(incident.outage_seconds.unwrap_or(0.0));
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const DF: &str = "storage/df.txt";
    const SETTINGS: &str = "postgres/pg_settings.txt";

    /// A real log with three ENOSPC refusals: the startup process's 1 MiB (line 4, then
    /// `shutting down due to startup process failure`), and two 4 MiB ones of a parallel hash
    /// join (lines 158 and 162).
    fn events() -> Scratch {
        Scratch::new().copy("postgres/server.log", "formats/pglog/pg15-events.log")
    }

    /// The collected bundle (/dev/shm 23.5 GiB, posix, 2 workers per gather, work_mem 4MB)
    /// with df's /dev/shm row edited to `kb` 1024-blocks.
    fn dev_shm_kb(kb: u64) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz").set_line(
            DF,
            "tmpfs",
            &format!(
                "tmpfs          {kb:>11}     1036 {:>9}       1% /dev/shm",
                kb - 1036
            ),
        )
    }

    fn setting(s: Scratch, name: &str, value: &str, unit: &str) -> Scratch {
        s.set_line(
            SETTINGS,
            &format!("{name}|"),
            &format!(
                "{name}|{value}|{unit}|configuration file|/var/lib/postgresql/15/main/postgresql.conf|f"
            ),
        )
    }

    #[test]
    fn a_failed_start_after_enospc_is_critical() {
        let f = events().run("dev-shm-too-small").one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, Some(0));
        assert_eq!(f.figures["enospc_errors"], 3.0);
        assert_eq!(f.figures["largest_request_bytes"], 4_194_304.0);
        assert_eq!(f.evidence[0].line, 4);
        assert!(
            f.summary.contains("startup process 21799 died"),
            "{}",
            f.summary
        );
        // No settings: the floor of 256 MiB.
        assert!(
            f.recommendation
                .unwrap()
                .contains("docker run --shm-size=256m")
        );
    }

    #[test]
    fn enospc_without_a_crash_after_it_is_a_warning() {
        // The startup failure's error edited to ENOMEM: the two refusals of the parallel hash
        // join remain, and nothing died of them.
        let f = events()
            .set_line(
                "postgres/server.log",
                "2026-11-21 17:58:07.801 UTC [21799] FATAL:",
                "2026-11-21 17:58:07.801 UTC [21799] FATAL:  could not resize shared memory segment \"/PostgreSQL.290295146\" to 1048576 bytes: Cannot allocate memory",
            )
            .run("dev-shm-too-small")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.incident, None);
        assert_eq!(f.figures["enospc_errors"], 2.0);
        assert!(f.summary.contains("2 times between"), "{}", f.summary);
    }

    #[test]
    fn the_recorded_1_mb_dev_shm() {
        // Five parallel hash joins refused 2105344 bytes each on a 1024 kB tmpfs; no crash.
        let f = Scratch::incident("pg15-dev-shm-1mb-parallel-hash")
            .run("dev-shm-too-small")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.incident, None);
        assert_eq!(f.figures["enospc_errors"], 5.0);
        assert_eq!(f.figures["largest_request_bytes"], 2_105_344.0);
        assert_eq!(f.figures["dev_shm_bytes"], (1u64 << 20) as f64);
        assert!(
            f.title
                .contains("/dev/shm (1 MiB) ran out of space 5 times"),
            "{}",
            f.title
        );
        // Both halves: the errors, and the size against max(256 MiB, 4MB × 2 × 3).
        assert!(f.summary.contains("less than the 256 MiB"), "{}", f.summary);
        assert!(f.evidence.iter().any(|e| e.path == "storage/df.txt"));
        // The recorder preallocated 4MB, too little for these joins.
        let text = f.recommendation.unwrap();
        assert!(
            text.contains("(now min_dynamic_shared_memory = 4 MiB (postgres/pg_settings.txt:219))"),
            "{text}"
        );
    }

    #[test]
    fn the_collected_host_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("dev-shm-too-small")
                .silent()
        );
    }

    #[test]
    fn docker_sized_dev_shm_fires_and_256_mib_is_enough() {
        let f = dev_shm_kb(65_536).run("dev-shm-too-small").one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["dev_shm_bytes"], (64u64 << 20) as f64);
        assert_eq!(f.figures["dev_shm_need_bytes"], (256u64 << 20) as f64);
        assert!(f.title.contains("/dev/shm is 64 MiB"), "{}", f.title);
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path == DF && e.key.as_deref() == Some("/dev/shm"))
        );
        assert_eq!(
            dev_shm_kb(262_143).run("dev-shm-too-small").one().severity,
            Severity::Warning
        );
        assert!(dev_shm_kb(262_144).run("dev-shm-too-small").silent());
    }

    #[test]
    fn a_large_work_mem_needs_more_than_the_floor() {
        // work_mem 64MB × 2 × 3 participants = 384 MiB.
        let f = setting(dev_shm_kb(262_144), "work_mem", "65536", "kB")
            .run("dev-shm-too-small")
            .one();
        assert_eq!(f.figures["dev_shm_need_bytes"], (384u64 << 20) as f64);
        let text = f.recommendation.unwrap();
        assert!(text.contains("--shm-size=384m"), "{text}");
        assert!(
            text.contains("min_dynamic_shared_memory = '384MB'"),
            "{text}"
        );
    }

    #[test]
    fn no_parallel_query_sysv_or_preallocated_memory_is_silent() {
        for (name, value, unit) in [
            ("max_parallel_workers_per_gather", "0", ""),
            ("dynamic_shared_memory_type", "sysv", ""),
            ("min_dynamic_shared_memory", "256", "MB"),
        ] {
            assert!(
                setting(dev_shm_kb(65_536), name, value, unit)
                    .run("dev-shm-too-small")
                    .silent(),
                "{name}"
            );
        }
    }

    #[test]
    fn without_a_log_it_is_not_evaluated() {
        assert!(matches!(
            dev_shm_kb(65_536)
                .remove("postgres/server.log")
                .run("dev-shm-too-small"),
            Outcome::NotEvaluated(_)
        ));
    }
}
