//! ## What it finds
//! The kernel's OOM killer ran but the log shows no victim: the report was cut (rate limiting,
//! a log buffer that wrapped), or the killer found nothing it could kill.
//!
//! ## Why it matters
//! Memory ran out; what was killed, if anything, is unknown, so a crash elsewhere in the bundle
//! may still be this kill.
//!
//! ## What to do
//! Read the kernel log around the report for the kill line (`Killed process`, `oom-kill:`);
//! raise the kernel log buffer (`log_buf_len`) or collect the journal so reports are kept whole.
//!
//! ## Thresholds
//! Every kernel OOM report with no victim.
//!
//! ## Evidence it needs
//! A kernel log.
//!
//! ## Knowledge
//! [kernel-oom]: a report ends without a kill line when the chosen task was already exiting,
//! and rate limiting drops parts of reports.

use crate::facts::Facts;
use crate::report::{Finding, Severity};
use crate::rules::support::incident_evidence;
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "kernel-oom-no-victim",
    title: "The kernel OOM killer ran but no victim was recorded",
    severities: &[warning("")],
    needs: &[Input::KernelLog],
    uses: &[],
};

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    facts
        .incidents
        .iter()
        .enumerate()
        .filter(|(_, i)| {
            i.kind == "kernel_oom"
                && i.kernel_kill
                    .as_ref()
                    .is_some_and(|k| k.pid == 0 && k.comm.is_empty() && k.unit.is_none())
        })
        .map(|(index, incident)| {
            finding(&META, Severity::Warning, META.title)
                .summary(incident.notes.join(" "))
                .recommend(
                    "Look for the kill line around the report; keep reports whole with a larger \
                     kernel log buffer (log_buf_len) or the journal.",
                )
                .evidence(incident_evidence(incident))
                .incident(index)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    #[test]
    fn a_report_without_a_kill_line_is_reported() {
        // Three reports: the first names a task already exiting and kills nothing, the second
        // is cut by the next report, the third kills pid 30141.
        let found = Scratch::new()
            .copy(
                "dmesg.txt",
                "formats/kernel/edge-header-without-kill-line.txt",
            )
            .run("kernel-oom-no-victim")
            .findings();
        assert_eq!(found.len(), NO_VICTIM_REPORTS, "{found:#?}");
        assert!(found.iter().all(|f| f.id == "kernel-oom-no-victim"));
    }

    const NO_VICTIM_REPORTS: usize = 2;

    #[test]
    fn a_report_with_its_victim_is_not() {
        assert!(
            Scratch::new()
                .copy("dmesg.txt", "incidents/pg15-memcg-oom-sort/dmesg.txt")
                .run("kernel-oom-no-victim")
                .silent()
        );
    }
}
