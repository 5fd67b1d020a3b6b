//! ## What it finds
//! The perf profile shows CPU time in the MDS mitigation's buffer clearing (`verw`,
//! `mds_clear_cpu_buffers`, `clear_cpu_buffers`) while the kernel reports an MDS-class
//! mitigation (`Mitigation: Clear CPU buffers` for mds, taa or mmio_stale_data).
//!
//! ## Why it matters
//! The mitigation flushes CPU buffers on every return from the kernel to user space: a
//! database making many system calls (reads, writes, socket I/O, timing calls) pays it on each.
//! It is a security trade-off, not a misconfiguration, but it can explain a throughput drop
//! after a kernel upgrade or a move to other hardware.
//!
//! ## What to do
//! Decide it with whoever owns the host's security: keep the mitigation (and reduce system
//! calls: a pooler, larger batches, huge pages, a clock source with vDSO), or on dedicated
//! hosts that run no untrusted code disable it (`mds=off`, or `mitigations=off`), measuring
//! before and after.
//!
//! ## Thresholds
//! Buffer-clearing frames in ≥ 3 % of the busy samples: a warning (confidence 0.6 when the
//! bundle lacks the CPU vulnerability files, as the mitigation cannot be confirmed).
//!
//! ## Evidence it needs
//! A perf profile with call graphs; /sys/devices/system/cpu/vulnerabilities when collected.
//!
//! ## Knowledge
//! [zh-low-level]: the annotated kernel showed 28.94 % on `verw`, the MDS fix flushing CPU
//! buffers through `mds_clear_cpu_buffers()`, with `do_syscall_64` appearing in the profile
//! only on the mitigated kernel.

use crate::facts::Facts;
use crate::human::percent;
use crate::report::{Finding, Severity};
use crate::rules::support::perf_coverage;
use crate::rules::{Input, RuleMeta, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "perf-cpu-mitigation-overhead",
    title: "The MDS mitigation's CPU buffer clearing takes CPU time",
    severity: Severity::Warning,
    needs: &[Input::Perf],
    uses: &[Input::CpuVulnerabilities],
};

/// Share of the busy samples from which the rule fires.
pub(crate) const THRESHOLD: f64 = 0.03;
/// The vulnerabilities whose mitigation clears CPU buffers.
const BUFFER_CLEARING: &[&str] = &["mds", "tsa", "taa", "mmio_stale_data", "vmscape"];

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &facts.perf {
        let share = p.busy_share("mds_mitigation");
        if share < THRESHOLD {
            continue;
        }
        let cpu = &facts.host.cpu;
        let mitigations: Vec<_> = BUFFER_CLEARING
            .iter()
            .filter_map(|name| cpu.vulnerability(name))
            .filter(|v| v.value.contains("Clear CPU buffers") || v.value.contains("VERW"))
            .collect();
        let (confidence, status) = match (cpu.vulnerabilities.is_empty(), mitigations.first()) {
            (true, _) => (
                0.6,
                " The bundle has no CPU vulnerability files to confirm the mitigation.".to_owned(),
            ),
            (false, Some(v)) => (0.9, format!(" The kernel reports {}: {}.", v.key, v.value)),
            (false, None) => (
                0.5,
                " Yet no CPU vulnerability file reports a buffer-clearing mitigation: check the \
                 symbols."
                    .to_owned(),
            ),
        };
        let mut evidence = vec![p.evidence(format!(
            "{} of busy samples clearing CPU buffers",
            percent(share)
        ))];
        evidence.extend(
            mitigations
                .iter()
                .map(|v| v.evidence(format!("{}: {}", v.key, v.value))),
        );
        out.push(
            finding(
                &META,
                Severity::Warning,
                format!(
                    "{} of the busy CPU time clears CPU buffers (MDS mitigation)",
                    percent(share)
                ),
            )
            .summary(format!(
                "{} of the busy samples ({}) are in the buffer clearing the kernel does on each \
                 return to user space.{status}",
                percent(share),
                perf_coverage(p)
            ))
            .recommend(
                "Weigh it with the host's security owner: keep the mitigation and make fewer \
                 system calls (pooler, batching), or on a dedicated host without untrusted code \
                 boot with mds=off (or mitigations=off), measuring throughput before and after.",
            )
            .evidence(evidence)
            .confidence(confidence)
            .figure("mitigation_share", share)
            .impact(share),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    #[test]
    fn a_host_without_the_mitigation_in_its_profile_is_silent() {
        // The recording host reports `mds: Not affected`; its pgbench profile has no verw.
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .copy(
                    "perf/perf-script.txt",
                    "formats/perf/local-pg15-pgbench-a-g.txt"
                )
                .run("perf-cpu-mitigation-overhead")
                .silent()
        );
    }
}
