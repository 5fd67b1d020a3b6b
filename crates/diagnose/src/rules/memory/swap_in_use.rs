//! ## What it finds
//! The host has swapped memory out: `SwapTotal − SwapFree` is above the threshold, and the
//! PostgreSQL processes' own `VmSwap` says how much of it is theirs when the bundle has them.
//!
//! ## Why it matters
//! On a database host memory serves as cache for the disks; when swap is in use the page cache
//! is already gone, the queries that need swapped pages wait on the disk, and a swapping
//! backend slows everything around it. Swap does not protect against a query that needs more
//! memory than there is: the host crawls for a long time, then the OOM killer runs anyway.
//!
//! ## What to do
//! Find what pushed memory out (the largest processes, a work_mem too large for the
//! connections), keep swap small (1–2 GB) and discouraged (`vm.swappiness = 10` or less), and
//! bound memory with `vm.overcommit_memory = 2` so a runaway query fails instead of swapping.
//!
//! ## Thresholds
//! Swap used ≥ 64 MiB: a warning; below, silent. A host without swap is silent.
//!
//! ## Evidence it needs
//! /proc/meminfo; the processes' status files when present.
//!
//! ## Knowledge
//! [fr-memoire]: a sort that spills into 2.6 GB of swap takes 5 minutes instead of 76 s with
//! temporary files, pgbench's throughput falls from 230 to 17 tps meanwhile, and "adding swap
//! is a bad idea".

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "swap-in-use",
    title: "The database host is swapping",
    severities: &[warning("")],
    needs: &[Input::Meminfo],
    uses: &[Input::Processes, Input::VmSysctls],
};

/// Swap used from which the rule fires.
pub(crate) const THRESHOLD_BYTES: u64 = 64 << 20;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(mem) = &facts.host.memory else {
        return Vec::new();
    };
    let Some(used) = mem.swap_used() else {
        return Vec::new();
    };
    if used < THRESHOLD_BYTES {
        return Vec::new();
    }
    let total = mem.swap_total.as_ref().map_or(0, |s| s.value);
    let postgres: u64 = facts
        .host
        .processes
        .processes
        .iter()
        .filter_map(|p| p.swap_bytes)
        .sum();
    let theirs = if facts.host.processes.processes.is_empty() {
        String::new()
    } else {
        format!(
            " PostgreSQL's processes hold {} of it (their VmSwap).",
            human_bytes(postgres)
        )
    };
    let swappiness = facts
        .host
        .vm
        .swappiness
        .as_ref()
        .map(|s| format!(" vm.swappiness is {}.", s.value))
        .unwrap_or_default();
    let mut evidence = Vec::new();
    if let Some(t) = &mem.swap_total {
        evidence.push(t.evidence(format!("SwapTotal {}", human_bytes(t.value))));
    }
    if let Some(f) = &mem.swap_free {
        evidence.push(f.evidence(format!("SwapFree {}", human_bytes(f.value))));
    }
    vec![
        finding(
            &META,
            Severity::Warning,
            format!(
                "{} of swap in use ({} configured)",
                human_bytes(used),
                human_bytes(total)
            ),
        )
        .summary(format!(
            "The host has pushed {} of memory out to swap: the page cache was exhausted before \
             that, and whatever needs those pages waits on the disk.{theirs}{swappiness}",
            human_bytes(used)
        ))
        .recommend(
            "Find what pushed memory out (the largest processes, work_mem × connections), keep \
             swap to 1–2 GB and discouraged (vm.swappiness = 10), and bound memory with \
             vm.overcommit_memory = 2 (see overcommit-heuristic) so a runaway query fails \
             instead of swapping.",
        )
        .evidence(evidence)
        .figure("swap_used_bytes", used as f64)
        .figure("swap_total_bytes", total as f64)
        .figure("postgres_swap_bytes", postgres as f64),
    ]
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    const MEMINFO: &str = "memory/meminfo.txt";

    fn with_swap(total_kb: u64, free_kb: u64) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .set_line(
                MEMINFO,
                "SwapTotal:",
                &format!("SwapTotal:       {total_kb} kB"),
            )
            .set_line(
                MEMINFO,
                "SwapFree:",
                &format!("SwapFree:        {free_kb} kB"),
            )
    }

    #[test]
    fn a_host_without_swap_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("swap-in-use")
                .silent()
        );
    }

    #[test]
    fn fires_at_64_mib_used_and_not_below() {
        let f = with_swap(1_048_576, 1_048_576 - 65_536)
            .run("swap-in-use")
            .one();
        assert_eq!(f.figures["swap_used_bytes"], (64u64 << 20) as f64);
        assert!(f.title.starts_with("64 MiB of swap in use"), "{}", f.title);
        assert!(
            with_swap(1_048_576, 1_048_576 - 65_535)
                .run("swap-in-use")
                .silent()
        );
    }
}
