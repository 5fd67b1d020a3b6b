//! ## What it finds
//! The perf profile shows the CPUs busy compacting memory for transparent huge pages:
//! `compaction_alloc`, `compact_zone`, `__alloc_pages_direct_compact`, `isolate_migratepages*`
//! under page faults. Direct compaction runs in the faulting process: a backend touching new
//! memory stops until the kernel has moved enough pages to build a 2 MiB one.
//!
//! ## Why it matters
//! On hosts with much RAM and a fragmented page cache this shows as system CPU time that
//! spikes, queries that stall for seconds, sessions that pile up (and, behind a cluster
//! manager, failovers). PostgreSQL gains little from THP on its private memory.
//!
//! ## What to do
//! Stop compaction in the fault path: `echo madvise > /sys/kernel/mm/transparent_hugepage/defrag`
//! (or `never`, or `defer`), and `enabled = madvise` or `never`; make it permanent
//! (`transparent_hugepage=madvise` on the kernel command line, a tuned profile, or a unit that
//! writes the files at boot). Use classic huge pages for shared_buffers instead
//! (hugepages-not-used).
//!
//! ## Thresholds
//! Compaction frames in ≥ 5 % of the busy samples (all samples but the idle task): a warning;
//! below, silent.
//!
//! ## Evidence it needs
//! A perf profile with call graphs (`collector --perf SECONDS`: `perf record -g`); the THP
//! settings, when present, are named in the finding.
//!
//! ## Knowledge
//! [ja-thp-defrag]: `perf top` showed 42.59 % in `compaction_alloc` during sys-time spikes
//! that froze PostgreSQL for tens of seconds on a 200 GB host, cured by `defrag = madvise`;
//! [fr-memoire] and [kernel-thp] on THP and databases.

use crate::facts::Facts;
use crate::human::percent;
use crate::report::{Finding, Severity};
use crate::rules::support::perf_coverage;
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "perf-thp-compaction",
    title: "The CPUs spend time compacting memory for transparent huge pages",
    severities: &[warning("")],
    needs: &[Input::Perf],
    uses: &[Input::Thp],
};

/// Share of the busy samples from which the rule fires.
pub(crate) const THRESHOLD: f64 = 0.05;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &facts.perf {
        let share = p.busy_share("thp_compaction");
        if share < THRESHOLD {
            continue;
        }
        let thp = &facts.host.thp;
        let settings = match (&thp.enabled, &thp.defrag) {
            (Some(e), Some(d)) => format!(
                " THP is enabled = {}, defrag = {} ({}, {}).",
                e.value, d.value, e.path, d.path
            ),
            _ => String::new(),
        };
        let top: Vec<String> = p
            .top_matching(
                &[
                    "compaction_alloc",
                    "compact_zone*",
                    "__alloc_pages_direct_compact",
                    "isolate_migratepages*",
                    "try_to_compact_pages",
                ],
                4,
            )
            .into_iter()
            .map(|(s, f)| format!("{s} {}", percent(f)))
            .collect();
        let mut evidence =
            vec![p.evidence(format!("{} of busy samples compacting", percent(share)))];
        evidence.extend(
            thp.defrag
                .as_ref()
                .map(|d| d.evidence(format!("defrag = {}", d.value))),
        );
        out.push(
            finding(
                &META,
                Severity::Warning,
                format!(
                    "{} of the busy CPU time is memory compaction for THP",
                    percent(share)
                ),
            )
            .summary(format!(
                "{} of the busy samples ({}) have compaction frames in their stack{}: \
                 processes stall in page faults while the kernel builds huge pages.{settings}",
                percent(share),
                perf_coverage(p),
                if top.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", top.join(", "))
                }
            ))
            .recommend(
                "Set /sys/kernel/mm/transparent_hugepage/defrag to madvise (or defer, never) and \
                 enabled to madvise or never, permanently (transparent_hugepage=madvise on the \
                 kernel command line, or a tuned profile); give shared_buffers classic huge pages \
                 instead.",
            )
            .evidence(evidence)
            .figure("compaction_share", share)
            .impact(share),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::{FrameIn, Scratch, perf_script};

    #[test]
    fn a_plain_pgbench_profile_is_silent() {
        assert!(
            Scratch::new()
                .copy(
                    "perf/perf-script.txt",
                    "formats/perf/local-pg15-pgbench-a-g.txt"
                )
                .run("perf-thp-compaction")
                .silent()
        );
    }

    #[test]
    fn compaction_frames_fire() {
        // A hand-made edge case: three samples, one under compaction_alloc (33 %).
        let f = Scratch::new()
            .copy(
                "perf/perf-script.txt",
                "formats/perf/edge-kvm-exit-multi.txt",
            )
            .run("perf-thp-compaction")
            .one();
        assert!((f.figures["compaction_share"] - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn no_profile_no_evaluation() {
        assert!(matches!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz").run("perf-thp-compaction"),
            crate::rules::testing::Outcome::NotEvaluated(_)
        ));
    }

    #[test]
    fn huge_page_faults_compacting_fragmented_memory_fire() {
        // Real capture: THP enabled and defrag `always`, memory fragmented by page cache,
        // backends sorting gigabytes.
        let f = Scratch::incident("pg15-thp-compaction-perf")
            .run("perf-thp-compaction")
            .one();
        assert!(f.figures["compaction_share"] > 0.05, "{f:#?}");
    }

    #[test]
    fn a_pgbench_run_with_thp_madvise_is_silent() {
        // Real capture: plain pgbench TPC-B, THP madvise.
        assert!(
            Scratch::incident("pg15-pgbench-baseline-perf")
                .run("perf-thp-compaction")
                .silent()
        );
    }

    #[test]
    fn five_percent_of_samples_compacting_fire_and_four_do_not() {
        // Hand-made edge cases: 100 samples, 5 (then 4) of them in __compact_zone.
        let run = |hits| {
            Scratch::new()
                .write(
                    "perf/perf-script.txt",
                    perf_script(100, hits, "__compact_zone", FrameIn::Kernel),
                )
                .run("perf-thp-compaction")
        };
        assert!((run(5).one().figures["compaction_share"] - 0.05).abs() < 1e-9);
        assert!(run(4).silent());
    }
}
