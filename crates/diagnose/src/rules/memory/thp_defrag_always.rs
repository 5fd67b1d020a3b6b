//! ## What it finds
//! Transparent huge page defragmentation runs in the page-fault path
//! (`/sys/kernel/mm/transparent_hugepage/defrag` = `always`) while transparent huge pages are
//! in use (`enabled` is not `never`).
//!
//! ## Why it matters
//! With defrag = always, a process that faults in memory where a transparent huge page may go
//! stalls while the kernel reclaims and compacts memory to assemble one (`compaction_alloc`).
//! On a host with much memory and steady transactions this shows as system CPU time spikes
//! that stop PostgreSQL for tens of seconds, connections piling up meanwhile. With
//! enabled = always every backend is exposed; with madvise only programs that ask for THP are
//! (PostgreSQL does not).
//!
//! ## What to do
//! Set defrag to `madvise` (direct compaction only for regions that asked for it) or `defer`
//! (compaction left to kcompactd in the background): `echo madvise >
//! /sys/kernel/mm/transparent_hugepage/defrag` now, and for good a tuned profile
//! (`[vm] transparent_hugepage.defrag=madvise` on tuned versions that have it), a systemd
//! oneshot unit or /etc/rc.local writing the file at boot. Better still, `enabled = madvise`
//! (thp-always).
//!
//! ## Thresholds
//! defrag = always: a warning when enabled = always, info when enabled = madvise (only
//! programs that madvise stall), a warning of confidence 0.7 when the bundle lacks the enabled
//! file; silent when enabled = never or defrag is anything but always. A perf profile whose
//! busy samples fall under compaction (1 % or more, the share perf-thp-compaction counts) is cited.
//!
//! ## Evidence it needs
//! The THP `defrag` and `enabled` files; a perf profile when present.
//!
//! ## Knowledge
//! [ja-thp-defrag]: sys-time spikes from `compaction_alloc` (42.59 % in perf top) stopping
//! PostgreSQL 9.4 and 8.2 for tens of seconds on a 200 GB RHEL 6 host, fixed with `echo
//! madvise > /sys/kernel/mm/transparent_hugepage/defrag`. [fr-memoire]: THP "may lead the
//! kernel to defragment memory… which can generate latency". [kernel-thp] (defrag: always,
//! defer, defer+madvise, madvise, never).

use crate::facts::Facts;
use crate::report::{Finding, Severity};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "thp-defrag-always",
    title: "Transparent huge page defragmentation runs in the page-fault path",
    severities: &[
        warning("with enabled = always, or no enabled file (confidence 0.7)"),
        info("with enabled = madvise"),
    ],
    needs: &[Input::ThpDefrag],
    uses: &[Input::Perf],
};

/// Share of a perf profile's samples under compaction from which the finding cites it.
pub(crate) const PERF_SHARE_CITED: f64 = 0.01;
/// Confidence when the enabled file is missing (THP may be off).
pub(crate) const UNKNOWN_ENABLED_CONFIDENCE: f64 = 0.7;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let thp = &facts.host.thp;
    let Some(defrag) = &thp.defrag else {
        return Vec::new();
    };
    if defrag.value != "always" {
        return Vec::new();
    }
    let enabled = thp.enabled.as_ref().map(|e| e.value.as_str());
    let (severity, exposed, confidence) = match enabled {
        Some("never") => return Vec::new(),
        Some("always") => (
            Severity::Warning,
            "enabled = always: every backend's page faults may stall on compaction",
            1.0,
        ),
        Some("madvise") => (
            Severity::Info,
            "enabled = madvise: only programs that madvise() for huge pages stall (PostgreSQL \
             does not), but they stall in full",
            1.0,
        ),
        _ => (
            Severity::Warning,
            "the bundle does not say whether THP is enabled (no enabled file)",
            UNKNOWN_ENABLED_CONFIDENCE,
        ),
    };
    let mut evidence = vec![defrag.evidence("transparent_hugepage/defrag = always")];
    if let Some(e) = &thp.enabled {
        evidence.push(e.evidence(format!("transparent_hugepage/enabled = {}", e.value)));
    }
    let mut perf = String::new();
    let mut share = None;
    for p in &facts.perf {
        // The busy share, as perf-thp-compaction counts it: the two findings quote one figure.
        let s = p.busy_share("thp_compaction");
        if s >= PERF_SHARE_CITED {
            perf = format!(
                " The perf profile has {} of its busy samples under compaction (see \
                 perf-thp-compaction).",
                crate::human::percent(s)
            );
            evidence.push(p.evidence(format!(
                "{} of busy samples under compaction",
                crate::human::percent(s)
            )));
            share = Some(s);
            break;
        }
    }
    let mut f = finding(
        &META,
        severity,
        "Transparent huge page defragmentation runs in the page-fault path (defrag = always)",
    )
    .summary(format!(
        "With defrag = always a page fault that could take a transparent huge page waits while \
         the kernel reclaims and compacts memory to make one: system CPU spikes that stall \
         queries. Here {exposed}.{perf}"
    ))
    .recommend(format!(
        "Set defrag to madvise (or defer, leaving compaction to kcompactd): echo madvise > \
         /sys/kernel/mm/transparent_hugepage/defrag now (it reads {}), and at every boot \
         through a tuned profile, a systemd oneshot unit or /etc/rc.local; better still, \
         enabled = madvise (see thp-always).",
        crate::human::quote(&defrag.path)
    ))
    .evidence(evidence)
    .confidence(confidence);
    if let Some(s) = share {
        f = f.figure("perf_compaction_share", s);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const DEFRAG: &str = "memory/thp-defrag.txt";
    const ENABLED: &str = "memory/thp-enabled.txt";

    /// The collected bundle (defrag `always defer defer+madvise [madvise] never`, enabled
    /// `always [madvise] never`) with defrag's selection moved to always.
    fn defrag_always() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz").set_line(
            DEFRAG,
            "always",
            "[always] defer defer+madvise madvise never",
        )
    }

    #[test]
    fn the_collected_madvise_is_silent_and_defer_too() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("thp-defrag-always")
                .silent()
        );
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .set_line(
                    DEFRAG,
                    "always",
                    "always [defer] defer+madvise madvise never"
                )
                .run("thp-defrag-always")
                .silent()
        );
    }

    #[test]
    fn always_with_thp_madvise_is_info_and_with_always_a_warning() {
        let f = defrag_always().run("thp-defrag-always").one();
        assert_eq!(f.severity, Severity::Info);
        assert!(f.summary.contains("enabled = madvise"), "{}", f.summary);
        let w = defrag_always()
            .set_line(ENABLED, "always", "[always] madvise never")
            .run("thp-defrag-always")
            .one();
        assert_eq!(w.severity, Severity::Warning);
        assert_eq!(w.confidence, 1.0);
        assert!(w.recommendation.unwrap().contains("echo madvise"));
    }

    #[test]
    fn never_enabled_is_silent() {
        assert!(
            defrag_always()
                .set_line(ENABLED, "always", "always madvise [never]")
                .run("thp-defrag-always")
                .silent()
        );
    }

    #[test]
    fn without_the_enabled_file_it_warns_less_surely() {
        let f = defrag_always()
            .remove(ENABLED)
            .run("thp-defrag-always")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.confidence, 0.7);
    }

    #[test]
    fn a_profile_under_compaction_is_cited() {
        // A real pgbench profile (593 samples) whose nine page faults were edited into
        // compaction: every `asm_exc_page_fault` frame renamed `compaction_alloc`.
        let real = std::fs::read_to_string(
            crate::rules::testing::fixtures().join("formats/perf/local-pg15-pgbench-a-g.txt"),
        )
        .unwrap();
        let edited = real.replace(" asm_exc_page_fault+", " compaction_alloc+");
        assert_ne!(real, edited);
        let f = defrag_always()
            .set_line(ENABLED, "always", "[always] madvise never")
            .write("perf/perf-script.txt", edited)
            .run("thp-defrag-always")
            .one();
        assert!(f.figures["perf_compaction_share"] >= 0.01);
        assert!(f.summary.contains("under compaction"), "{}", f.summary);
        assert!(f.evidence.iter().any(|e| e.path == "perf/perf-script.txt"));
        // The same profile unedited has nothing under compaction: not cited.
        let plain = defrag_always()
            .set_line(ENABLED, "always", "[always] madvise never")
            .write("perf/perf-script.txt", real)
            .run("thp-defrag-always")
            .one();
        assert!(!plain.figures.contains_key("perf_compaction_share"));
    }

    #[test]
    fn without_thp_files_it_is_not_evaluated() {
        assert!(matches!(
            defrag_always()
                .remove(DEFRAG)
                .remove(ENABLED)
                .run("thp-defrag-always"),
            Outcome::NotEvaluated(_)
        ));
    }
}
