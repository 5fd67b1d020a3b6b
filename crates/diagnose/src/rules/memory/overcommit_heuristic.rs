//! ## What it finds
//! `vm.overcommit_memory` is 0 (heuristic, the Linux default) or 1 (always): the kernel grants
//! allocations it may not be able to back, and when memory runs out the OOM killer picks a
//! process to kill instead of failing the allocation.
//!
//! ## Why it matters
//! PostgreSQL handles a failed allocation cleanly (`ERROR: out of memory`: one query fails,
//! the instance stays up), but a killed backend makes the postmaster restart every session.
//! With strict accounting (mode 2) a runaway query fails alone; the rest keep running and the
//! page cache keeps its share of RAM.
//!
//! ## What to do
//! Set `vm.overcommit_memory = 2` and `vm.overcommit_ratio` so that CommitLimit leaves a fifth
//! of RAM to the page cache: ratio = (80 % × RAM − swap − huge pages) ÷ (RAM − huge pages),
//! which gives CommitLimit = swap + (RAM − huge pages) × ratio. The finding computes it for this
//! host. On a host shared with software that reserves much more memory than it uses (JVMs,
//! hypervisors), mode 2 needs care: check Committed_AS against the new limit first (it is
//! shown).
//!
//! ## Thresholds
//! Mode 0 or 1: a warning when the bundle shows a global OOM kill (one that host memory, not a
//! cgroup, ran out for), info otherwise. Mode 2: silent (overcommit-strict-near-limit watches
//! that mode).
//!
//! ## Evidence it needs
//! The vm sysctls and /proc/meminfo (RAM, swap, huge pages, Committed_AS).
//!
//! ## Knowledge
//! [fr-memoire]: the derivation of the ratio ("CommitLimit + HP + Cache OS = RAM; Cache OS =
//! 20 % RAM"), 60 for its 5 GB host with 1 GB of swap, and the query that fails with `out of
//! memory` instead of taking the instance down once mode 2 is set. [kernel-overcommit];
//! [pg-kernel-resources] ("Linux Memory Overcommit").

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::support::{commit_limit_for, overcommit_ratio_for};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "overcommit-heuristic",
    title: "The kernel overcommits memory: an exhausted host kills instead of failing allocations",
    severities: &[
        warning("when the bundle shows a global OOM kill"),
        info("without a global OOM kill"),
    ],
    needs: &[Input::VmSysctls, Input::Meminfo],
    uses: &[Input::KernelLog],
};

/// Share of RAM the recommended ratio leaves to the page cache.
pub(crate) const CACHE_SHARE: f64 = 0.2;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let (Some(mode), Some(mem)) = (&facts.host.vm.overcommit_memory, &facts.host.memory) else {
        return Vec::new();
    };
    if !matches!(mode.value, 0 | 1) {
        return Vec::new();
    }
    let global_kills: Vec<_> = facts
        .incidents
        .iter()
        .filter_map(|i| i.kernel_kill.as_ref())
        .filter(|k| k.constraint.as_deref() != Some("memcg"))
        .collect();
    let ram = mem.ram.value;
    let swap = mem.swap_total.as_ref().map_or(0, |s| s.value);
    let huge = mem.hugepage_pool_bytes();
    let ratio = overcommit_ratio_for(ram, swap, huge, CACHE_SHARE);
    let limit = commit_limit_for(ram, swap, huge, ratio);
    let committed = mem.committed_as.as_ref().map(|c| c.value);
    let severity = if global_kills.is_empty() {
        Severity::Info
    } else {
        Severity::Warning
    };
    let mode_name = if mode.value == 0 {
        "heuristic"
    } else {
        "always"
    };
    let oom = if global_kills.is_empty() {
        String::new()
    } else {
        format!(
            " The bundle shows {} OOM kill{} for want of host memory.",
            global_kills.len(),
            if global_kills.len() == 1 { "" } else { "s" }
        )
    };
    let fits = match committed {
        Some(c) if c > limit => format!(
            " Committed_AS is {} now, above that limit: find what reserves so much before \
             switching (new allocations would fail).",
            human_bytes(c)
        ),
        Some(c) => format!(" Committed_AS is {} now, within it.", human_bytes(c)),
        None => String::new(),
    };
    let mut evidence = vec![mode.evidence(format!("vm.overcommit_memory = {}", mode.value))];
    evidence.push(mem.ram.evidence(format!("MemTotal {}", human_bytes(ram))));
    if let Some(s) = &mem.swap_total {
        evidence.push(s.evidence(format!("SwapTotal {}", human_bytes(s.value))));
    }
    if let Some(c) = &mem.committed_as {
        evidence.push(c.evidence(format!("Committed_AS {}", human_bytes(c.value))));
    }
    evidence.extend(global_kills.iter().map(|k| crate::report::Evidence {
        path: k.path.clone(),
        line: k.line,
        what: format!("OOM kill of {} {}", crate::human::quote(&k.comm), k.pid),
        key: None,
        host_file: None,
        host_line: None,
    }));
    let mut f = finding(
        &META,
        severity,
        format!(
            "vm.overcommit_memory = {} ({mode_name}): memory exhaustion ends in OOM kills, not \
             in failed allocations",
            mode.value
        ),
    )
    .summary(format!(
        "The kernel grants allocations beyond what RAM and swap can back; when memory runs out \
         the OOM killer kills a process (a backend: every session is cut).{oom}"
    ))
    .recommend(format!(
        "Set vm.overcommit_memory = 2 and vm.overcommit_ratio = {ratio} (in \
         /etc/sysctl.d/99-postgresql.conf): CommitLimit becomes {} + ({} − {}) × {ratio} % = \
         {}, leaving a fifth of RAM to the page cache.{fits}",
        human_bytes(swap),
        human_bytes(ram),
        human_bytes(huge),
        human_bytes(limit),
    ))
    .evidence(evidence)
    .figure("overcommit_memory", mode.value as f64)
    .figure("recommended_overcommit_ratio", ratio as f64)
    .figure("recommended_commit_limit_bytes", limit as f64);
    if let Some(c) = committed {
        f = f.figure("committed_as_bytes", c as f64);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::Scratch;

    const SYSCTL: &str = "memory/sysctl-vm.txt";

    fn collected() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
    }

    #[test]
    fn the_default_mode_is_info_with_the_ratio_for_this_host() {
        // 24,684,092 kB of RAM, no swap, no huge pages: ratio 80, CommitLimit 18.8 GiB.
        let f = collected().run("overcommit-heuristic").one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.figures["recommended_overcommit_ratio"], 80.0);
        assert!(
            f.recommendation
                .unwrap()
                .contains("vm.overcommit_ratio = 80")
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("vm.overcommit_memory"))
        );
    }

    #[test]
    fn mode_one_fires_and_mode_two_is_silent() {
        let one = collected()
            .set_line(
                SYSCTL,
                "/proc/sys/vm/overcommit_memory:",
                "/proc/sys/vm/overcommit_memory:1",
            )
            .run("overcommit-heuristic")
            .one();
        assert_eq!(one.figures["overcommit_memory"], 1.0);
        assert!(
            collected()
                .set_line(
                    SYSCTL,
                    "/proc/sys/vm/overcommit_memory:",
                    "/proc/sys/vm/overcommit_memory:2"
                )
                .run("overcommit-heuristic")
                .silent()
        );
    }

    #[test]
    fn swap_and_huge_pages_lower_the_ratio() {
        // The same host with 4 GiB of swap and 2 GiB of huge pages:
        // (0.8 × 24,684,092 − 4,194,304 − 2,097,152) ÷ (24,684,092 − 2,097,152) = 59 %.
        let f = collected()
            .set_line(
                "memory/meminfo.txt",
                "SwapTotal:",
                "SwapTotal:       4194304 kB",
            )
            .set_line(
                "memory/meminfo.txt",
                "HugePages_Total:",
                "HugePages_Total:    1024",
            )
            .run("overcommit-heuristic")
            .one();
        assert_eq!(f.figures["recommended_overcommit_ratio"], 59.0);
    }

    #[test]
    fn a_global_oom_kill_makes_it_a_warning_and_a_memcg_one_does_not() {
        let memcg = Scratch::incident("pg15-memcg-oom-sort")
            .copy("memory/meminfo.txt", "formats/system/meminfo/meminfo.txt")
            .copy(
                "memory/sysctl-vm.txt",
                "formats/system/sysctl/sysctl-vm.txt",
            )
            .run("overcommit-heuristic")
            .one();
        assert_eq!(memcg.severity, Severity::Info);
        // The same capture with the kill's constraint edited to CONSTRAINT_NONE: host memory,
        // not the cgroup, ran out.
        let global = Scratch::incident("pg15-memcg-oom-sort")
            .copy("memory/meminfo.txt", "formats/system/meminfo/meminfo.txt")
            .copy("memory/sysctl-vm.txt", "formats/system/sysctl/sysctl-vm.txt")
            .remove("dmesg-T.txt")
            .set_line(
                "dmesg.txt",
                "[  522.922412] oom-kill:",
                "[  522.922412] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,task_memcg=/pgmortem-record/pgmortem-oom-memcg,task=postgres,pid=24718,uid=1002",
            )
            .run("overcommit-heuristic")
            .one();
        assert_eq!(global.severity, Severity::Warning);
        assert!(
            global
                .summary
                .contains("1 OOM kill for want of host memory"),
            "{}",
            global.summary
        );
    }

    #[test]
    fn without_sysctls_it_is_not_evaluated() {
        assert!(matches!(
            collected().remove(SYSCTL).run("overcommit-heuristic"),
            crate::rules::testing::Outcome::NotEvaluated(_)
        ));
    }
}
