//! ## What it finds
//! Transparent huge pages are enabled for every process
//! (`/sys/kernel/mm/transparent_hugepage/enabled` = `always`). The finding says how much
//! anonymous memory is in transparent huge pages on the host (`AnonHugePages`) and in the
//! PostgreSQL processes.
//!
//! ## Why it matters
//! PostgreSQL does not `madvise()` its memory, so `madvise` already keeps transparent huge
//! pages away from it; only `always` gives them to the backends' private memory. Then page
//! faults may stall while the kernel assembles a huge page (compaction, per the defrag
//! setting), khugepaged rewrites memory in the background, and a backend's memory grows by
//! 2 MiB at a time: latency spikes and system CPU time for no gain to a database. Shared
//! memory is not what benefits from huge pages here: it needs real huge pages
//! (hugepages-not-used).
//!
//! ## What to do
//! Set `enabled` to `madvise` (programs that ask for THP keep it) or `never`:
//! `echo madvise > /sys/kernel/mm/transparent_hugepage/enabled` now, and for good the kernel
//! command line `transparent_hugepage=madvise` (GRUB_CMDLINE_LINUX, then update-grub or
//! grub2-mkconfig), a tuned profile (`[vm] transparent_hugepages=madvise`), or a systemd
//! oneshot unit that writes the file before PostgreSQL starts.
//!
//! ## Thresholds
//! `enabled = always`: a warning. `madvise` or `never`: silent.
//!
//! ## Evidence it needs
//! The THP `enabled` file; /proc/meminfo (`AnonHugePages`) and the PostgreSQL processes'
//! smaps_rollup (`AnonHugePages`, `ShmemPmdMapped`) when present.
//!
//! ## Knowledge
//! [fr-memoire]: "all the documentation advises against THP for databases", how to turn them
//! off (`echo never`, the kernel command line, a systemd timer) and to check AnonHugePages is
//! 0 kB. [ja-thp-defrag]: THP enabled by default on RHEL 6 behind sys-time spikes of tens of
//! seconds. [zh-low-level]: "do not confuse classical huge pages with transparent huge
//! pages". [kernel-thp] (enabled: always, madvise, never).

use crate::facts::{Facts, PgProcess};
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "thp-always",
    title: "Transparent huge pages are enabled for every process",
    severities: &[warning("")],
    needs: &[Input::Thp],
    uses: &[Input::Meminfo, Input::Processes],
};

/// PostgreSQL processes cited by their transparent huge pages, at most.
const CITED: usize = 3;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(enabled) = &facts.host.thp.enabled else {
        return Vec::new();
    };
    if enabled.value != "always" {
        return Vec::new();
    }
    let anon = facts
        .host
        .memory
        .as_ref()
        .and_then(|m| m.anon_huge_pages.as_ref());
    let processes = &facts.host.processes.processes;
    let measured: Vec<&PgProcess> = processes.iter().filter(|p| p.thp_bytes.is_some()).collect();
    let postgres: u64 = measured.iter().filter_map(|p| p.thp_bytes).sum();

    let mut seen = Vec::new();
    if let Some(a) = anon {
        seen.push(format!(
            "The host has {} of anonymous memory in transparent huge pages (AnonHugePages).",
            human_bytes(a.value)
        ));
    }
    if !measured.is_empty() {
        seen.push(format!(
            "PostgreSQL's {} processes map {} of it.",
            measured.len(),
            human_bytes(postgres)
        ));
    }
    let mut evidence = vec![enabled.evidence("transparent_hugepage/enabled = always")];
    if let Some(a) = anon {
        evidence.push(a.evidence(format!("AnonHugePages {}", human_bytes(a.value))));
    }
    let mut largest: Vec<&PgProcess> = measured
        .iter()
        .copied()
        .filter(|p| p.thp_bytes.is_some_and(|b| b > 0))
        .collect();
    largest.sort_by_key(|p| std::cmp::Reverse(p.thp_bytes));
    evidence.extend(largest.iter().take(CITED).filter_map(|p| {
        p.evidence(
            "AnonHugePages",
            format!(
                "{} (pid {}) maps {} in transparent huge pages",
                p.role,
                p.pid,
                human_bytes(p.thp_bytes.unwrap_or(0))
            ),
        )
    }));

    let mut f = finding(
        &META,
        Severity::Warning,
        "Transparent huge pages are enabled for every process (enabled = always)",
    )
    .summary(format!(
        "With enabled = always the kernel backs the backends' private memory with transparent \
         huge pages (PostgreSQL does not madvise, so madvise would leave it alone): page \
         faults may stall on compaction, khugepaged rewrites memory behind them, and memory \
         grows 2 MiB at a time. {}",
        seen.join(" ")
    ))
    .recommend(format!(
        "Set it to madvise (or never): echo madvise > \
         /sys/kernel/mm/transparent_hugepage/enabled now (it reads {}), and for good the \
         kernel command line transparent_hugepage=madvise (GRUB_CMDLINE_LINUX, then update-grub \
         or grub2-mkconfig), a tuned profile with [vm] transparent_hugepages=madvise, or a \
         systemd oneshot unit that writes the file before PostgreSQL starts. For PostgreSQL's \
         shared memory, use real huge pages (vm.nr_hugepages, huge_pages = on).",
        crate::human::quote(&enabled.path)
    ))
    .evidence(evidence);
    if let Some(a) = anon {
        f = f.figure("anon_huge_pages_bytes", a.value as f64);
    }
    if !measured.is_empty() {
        f = f.figure("postgres_thp_bytes", postgres as f64);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const ENABLED: &str = "memory/thp-enabled.txt";

    /// The collected bundle, whose enabled file reads `always [madvise] never`, with the
    /// selection moved.
    fn enabled(line: &str) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz").set_line(ENABLED, "always", line)
    }

    #[test]
    fn madvise_and_never_are_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("thp-always")
                .silent()
        );
        assert!(enabled("always madvise [never]").run("thp-always").silent());
    }

    #[test]
    fn always_warns_with_what_is_mapped() {
        let f = enabled("[always] madvise never").run("thp-always").one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.evidence[0].path, ENABLED);
        assert_eq!(f.figures["anon_huge_pages_bytes"], 0.0);
        assert_eq!(f.figures["postgres_thp_bytes"], 0.0);
        assert!(
            f.recommendation
                .unwrap()
                .contains("transparent_hugepage=madvise")
        );
    }

    #[test]
    fn a_backends_transparent_huge_pages_are_cited() {
        // The active backend's smaps_rollup edited to map 4 MiB of AnonHugePages (line 16),
        // meminfo's AnonHugePages to the same.
        let f = enabled("[always] madvise never")
            .set_line(
                "processes/16893/smaps_rollup",
                "AnonHugePages:",
                "AnonHugePages:      4096 kB",
            )
            .set_line(
                "memory/meminfo.txt",
                "AnonHugePages:",
                "AnonHugePages:      4096 kB",
            )
            .run("thp-always")
            .one();
        assert_eq!(f.figures["postgres_thp_bytes"], (4u64 << 20) as f64);
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path == "processes/16893/smaps_rollup" && e.line == 16)
        );
        assert!(f.summary.contains("map 4 MiB of it"), "{}", f.summary);
    }

    #[test]
    fn without_thp_files_it_is_not_evaluated() {
        assert!(matches!(
            enabled("[always] madvise never")
                .remove(ENABLED)
                .remove("memory/thp-defrag.txt")
                .run("thp-always"),
            Outcome::NotEvaluated(_)
        ));
    }
}
