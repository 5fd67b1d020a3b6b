//! ## What it finds
//! The host has swap and `vm.swappiness` is above 10: the kernel readily swaps anonymous
//! memory out (backends' private memory, the postmaster's) to keep page cache.
//!
//! ## Why it matters
//! On a database host the page cache and the processes' working memory are both worth more
//! than anything swap can give back: a swapped-out backend stalls on the disk when it runs
//! again, and a host that swaps is already short of cache. The default of 60 balances a desktop
//! or a general server; a dedicated PostgreSQL host wants swap as a last resort, for the few
//! idle processes nobody uses.
//!
//! ## What to do
//! Set `vm.swappiness = 10` (in /etc/sysctl.d/99-postgresql.conf, then `sysctl --system`), keep
//! swap small (1–2 GB), and bound memory with `vm.overcommit_memory = 2` so a runaway query
//! fails instead of pushing the host into swap.
//!
//! ## Thresholds
//! `vm.swappiness` > 10 with SwapTotal > 0: a warning when 64 MiB or more of swap is in use
//! (the threshold of swap-in-use), info otherwise. Silent at 10 or below, and on a host
//! without swap (where swappiness changes nothing for anonymous memory).
//!
//! ## Evidence it needs
//! The vm sysctls (`vm.swappiness`) and /proc/meminfo (SwapTotal, SwapFree).
//!
//! ## Knowledge
//! [fr-memoire]: "vm.swappiness = 10", set through /etc/sysctl.d/99-postgresql.conf; the sort
//! that swapped 2.6 GB took 5 minutes where temporary files took 76 s, and pgbench fell from
//! 230 to 17 tps meanwhile. [kernel-vm-sysctl] (swappiness).

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "swappiness-high",
    title: "vm.swappiness is above 10 on a host with swap",
    severities: &[
        warning("with 64 MiB or more of swap in use"),
        info("with less than 64 MiB of swap in use"),
    ],
    needs: &[Input::VmSysctls, Input::Meminfo],
    uses: &[],
};

/// The swappiness a database host should not exceed.
pub(crate) const RECOMMENDED: i64 = 10;
/// Swap in use from which the finding is a warning (as swap-in-use counts it).
pub(crate) const SWAP_USED_WARNING_BYTES: u64 = 64 << 20;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let (Some(swappiness), Some(mem)) = (&facts.host.vm.swappiness, &facts.host.memory) else {
        return Vec::new();
    };
    let Some(total) = mem.swap_total.as_ref().filter(|t| t.value > 0) else {
        return Vec::new();
    };
    if swappiness.value <= RECOMMENDED {
        return Vec::new();
    }
    let used = mem.swap_used().unwrap_or(0);
    let severity = if used >= SWAP_USED_WARNING_BYTES {
        Severity::Warning
    } else {
        Severity::Info
    };
    let state = if used >= SWAP_USED_WARNING_BYTES {
        format!(
            "{} of the {} of swap is in use: memory has already been pushed out.",
            human_bytes(used),
            human_bytes(total.value)
        )
    } else {
        format!(
            "{} of swap is configured and {} of it in use.",
            human_bytes(total.value),
            human_bytes(used)
        )
    };
    let mut evidence = vec![
        swappiness.evidence(format!("vm.swappiness = {}", swappiness.value)),
        total.evidence(format!("SwapTotal {}", human_bytes(total.value))),
    ];
    if let Some(free) = &mem.swap_free {
        evidence.push(free.evidence(format!("SwapFree {}", human_bytes(free.value))));
    }
    vec![
        finding(
            &META,
            severity,
            format!(
                "vm.swappiness = {} with {} of swap ({} in use)",
                swappiness.value,
                human_bytes(total.value),
                human_bytes(used)
            ),
        )
        .summary(format!(
            "At swappiness {} the kernel swaps anonymous memory (the backends' working memory) \
             out early to keep page cache; a database host wants swap as a last resort. {state}",
            swappiness.value
        ))
        .recommend(format!(
            "Set vm.swappiness = {RECOMMENDED} in /etc/sysctl.d/99-postgresql.conf and apply it \
             with sysctl --system (now {} at {}:{}); keep swap to 1–2 GB and bound memory with \
             vm.overcommit_memory = 2 so a runaway query fails instead of swapping.",
            swappiness.value, swappiness.path, swappiness.line
        ))
        .evidence(evidence)
        .figure("swappiness", swappiness.value as f64)
        .figure("swap_total_bytes", total.value as f64)
        .figure("swap_used_bytes", used as f64),
    ]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const MEMINFO: &str = "memory/meminfo.txt";
    const SYSCTL: &str = "memory/sysctl-vm.txt";

    /// The collected bundle (swappiness 60, no swap) with swap edited in.
    fn with_swap(total_kb: u64, free_kb: u64) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .set_line(
                MEMINFO,
                "SwapTotal:",
                &format!("SwapTotal:      {total_kb:>8} kB"),
            )
            .set_line(
                MEMINFO,
                "SwapFree:",
                &format!("SwapFree:       {free_kb:>8} kB"),
            )
    }

    fn swappiness(s: Scratch, value: u32) -> Scratch {
        s.set_line(
            SYSCTL,
            "/proc/sys/vm/swappiness:",
            &format!("/proc/sys/vm/swappiness:{value}"),
        )
    }

    #[test]
    fn no_swap_is_silent_whatever_the_swappiness() {
        // The real capture: swappiness 60, SwapTotal 0.
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("swappiness-high")
                .silent()
        );
    }

    #[test]
    fn swap_configured_but_unused_is_info() {
        let f = with_swap(1_048_576, 1_048_576).run("swappiness-high").one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.figures["swappiness"], 60.0);
        let text = f.recommendation.unwrap();
        assert!(text.contains("vm.swappiness = 10"), "{text}");
        assert!(text.contains("memory/sysctl-vm.txt:42"), "{text}");
    }

    #[test]
    fn eleven_fires_and_ten_is_silent() {
        assert_eq!(
            swappiness(with_swap(1_048_576, 1_048_576), 11)
                .run("swappiness-high")
                .one()
                .figures["swappiness"],
            11.0
        );
        assert!(
            swappiness(with_swap(1_048_576, 1_048_576), 10)
                .run("swappiness-high")
                .silent()
        );
    }

    #[test]
    fn sixty_four_mib_in_use_makes_it_a_warning() {
        let f = with_swap(1_048_576, 1_048_576 - 65_536)
            .run("swappiness-high")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        let below = with_swap(1_048_576, 1_048_576 - 65_535)
            .run("swappiness-high")
            .one();
        assert_eq!(below.severity, Severity::Info);
    }

    #[test]
    fn without_sysctls_it_is_not_evaluated() {
        assert!(matches!(
            with_swap(1_048_576, 0)
                .remove(SYSCTL)
                .run("swappiness-high"),
            Outcome::NotEvaluated(_)
        ));
    }
}
