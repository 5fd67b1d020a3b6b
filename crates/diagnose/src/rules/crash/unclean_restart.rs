//! ## What it finds
//! The server started with crash recovery (`database system was not properly shut down;
//! automatic recovery in progress`) after a new postmaster's `starting PostgreSQL` line, and
//! the log shows no death of a child before it: the previous postmaster died without logging
//! it (kill -9, an OOM kill the kernel log does not cover), or the whole host crashed, rebooted
//! or lost power.
//!
//! ## Why it matters
//! The instance was down from its last sign of life to `ready`; the log cannot say how long
//! exactly. A host that crashes or a postmaster that is killed repeats.
//!
//! ## What to do
//! Look at the host's history for that time: `last -x` (reboots), the previous boot's journal
//! (`journalctl -b -1`), the hypervisor's events, the supervisor's logs; compare the bundle's
//! boot time with the restart: a restart right after boot is a host crash or reboot.
//!
//! ## Thresholds
//! Every start with crash recovery outside a crash cycle, not already explained by an OOM kill
//! of the postmaster (oom-kill-postmaster).
//!
//! ## Evidence it needs
//! The PostgreSQL log (PostgreSQL 12 and later log `starting PostgreSQL`).
//!
//! ## Knowledge
//! [pg-wal] (crash recovery replays WAL from the last checkpoint); the start sequence of
//! docs/pglog-events.md.

use crate::facts::Facts;
use crate::report::{Finding, Severity};
use crate::rules::support::incident_evidence;
use crate::rules::{Input, RuleMeta, critical, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "unclean-restart",
    title: "The server restarted with crash recovery and the log does not say why",
    severities: &[critical("")],
    needs: &[Input::PostgresLog],
    uses: &[Input::KernelLog],
};

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    facts
        .incidents
        .iter()
        .enumerate()
        .filter(|(_, i)| i.kind == "unclean_restart")
        .map(|(index, incident)| {
            let when = incident
                .started_at
                .map_or_else(|| "at an unknown time".to_owned(), |t| format!("at {t}"));
            finding(
                &META,
                Severity::Critical,
                format!("The server restarted with crash recovery {when}, after an unlogged stop"),
            )
            .summary(incident.notes.join("; "))
            .recommend(
                "Find what stopped the previous server: reboots (`last -x`), the previous boot's \
                 journal (`journalctl -b -1`), hypervisor or cloud events, the supervisor's logs, \
                 and a kernel log that covers that time (an OOM kill of the postmaster shows \
                 there).",
            )
            .evidence(incident_evidence(incident))
            .confidence(0.8)
            .incident(index)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    #[test]
    fn a_restart_the_kernel_log_explains_is_not_unclean() {
        // Real capture: the postmaster OOM-killed; the kernel log has the kill.
        assert!(
            Scratch::incident("pg15-oom-kill-postmaster")
                .run("unclean-restart")
                .silent()
        );
    }

    #[test]
    fn a_crash_recovery_after_an_unlogged_stop_fires() {
        // The same capture without the kernel log: the log shows children cut off by the
        // postmaster's exit, then a start with crash recovery.
        let scratch = Scratch::incident("pg15-oom-kill-postmaster");
        let scratch = scratch
            .paths("kernel/")
            .iter()
            .fold(scratch, |s, p| s.remove(p));
        let f = scratch.run("unclean-restart").one();
        assert_eq!(f.severity, crate::Severity::Critical);
        assert!(f.title.contains("2026-11-24T05:29:16"), "{}", f.title);
        assert!(!f.evidence.is_empty());
    }

    #[test]
    fn a_crash_restart_cycle_is_not_unclean() {
        // Real capture: a backend's kill -9, the postmaster's own crash cycle.
        assert!(
            Scratch::incident("pg15-long-crash-recovery")
                .run("unclean-restart")
                .silent()
        );
    }

    #[test]
    fn a_clean_start_is_silent() {
        // Real capture of a healthy host: shut down cleanly, started.
        assert!(
            Scratch::incident("pg15-healthy-hugepages-protected-edited")
                .run("unclean-restart")
                .silent()
        );
    }
}
