//! ## What it finds
//! The perf profile shows CPU time in the MDS mitigation's buffer clearing (`verw`,
//! `mds_clear_cpu_buffers`, `clear_cpu_buffers`) while the kernel reports an MDS-class
//! mitigation (`Mitigation: Clear CPU buffers` for mds, tsx_async_abort, mmio_stale_data or
//! tsa).
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
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "perf-cpu-mitigation-overhead",
    title: "The MDS mitigation's CPU buffer clearing takes CPU time",
    severities: &[warning("")],
    needs: &[Input::Perf],
    uses: &[Input::CpuVulnerabilities],
};

/// Share of the busy samples from which the rule fires.
pub(crate) const THRESHOLD: f64 = 0.03;
/// The vulnerabilities whose mitigation clears CPU buffers (their file names under
/// /sys/devices/system/cpu/vulnerabilities).
const BUFFER_CLEARING: &[&str] = &[
    "mds",
    "tsa",
    "tsx_async_abort",
    "mmio_stale_data",
    "vmscape",
];

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
    use crate::rules::testing::{FrameIn, Scratch, perf_script};

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

    const VULNERABILITIES: &str = "cpu/vulnerabilities.txt";

    /// The plain pgbench capture (its CPU `mds: Not affected`) with a hand-made profile:
    /// `hits` of 100 samples in mds_clear_cpu_buffers.
    fn capture_with_clearing(hits: usize) -> Scratch {
        Scratch::incident("pg15-pgbench-baseline-perf").write(
            "perf/perf-script.txt",
            perf_script(100, hits, "mds_clear_cpu_buffers", FrameIn::Kernel),
        )
    }

    #[test]
    fn three_percent_clearing_fire_and_two_do_not() {
        // No capture can show it: the recording CPUs are not affected by MDS. The recorded
        // host's vulnerability files edited to a mitigated one's.
        let mitigated = |hits| {
            capture_with_clearing(hits).set_line(
                VULNERABILITIES,
                "/sys/devices/system/cpu/vulnerabilities/mds:",
                "/sys/devices/system/cpu/vulnerabilities/mds:Mitigation: Clear CPU buffers; SMT vulnerable",
            )
        };
        let f = mitigated(3).run("perf-cpu-mitigation-overhead").one();
        assert!((f.figures["mitigation_share"] - 0.03).abs() < 1e-9);
        assert_eq!(f.confidence, 0.9);
        assert!(
            f.summary
                .contains("The kernel reports mds: Mitigation: Clear CPU buffers"),
            "{}",
            f.summary
        );
        assert!(mitigated(2).run("perf-cpu-mitigation-overhead").silent());
    }

    #[test]
    fn a_tsx_async_abort_mitigation_confirms_it_too() {
        let f = capture_with_clearing(5)
            .set_line(
                VULNERABILITIES,
                "/sys/devices/system/cpu/vulnerabilities/tsx_async_abort:",
                "/sys/devices/system/cpu/vulnerabilities/tsx_async_abort:Mitigation: Clear CPU buffers; SMT vulnerable",
            )
            .run("perf-cpu-mitigation-overhead")
            .one();
        assert_eq!(f.confidence, 0.9);
    }

    #[test]
    fn frames_without_a_reported_mitigation_are_doubted() {
        // The capture's own files: every buffer-clearing vulnerability `Not affected`.
        let f = capture_with_clearing(5)
            .run("perf-cpu-mitigation-overhead")
            .one();
        assert_eq!(f.confidence, 0.5);
        // Without the files the mitigation cannot be confirmed either way.
        let f = capture_with_clearing(5)
            .remove(VULNERABILITIES)
            .run("perf-cpu-mitigation-overhead")
            .one();
        assert_eq!(f.confidence, 0.6);
    }
}
