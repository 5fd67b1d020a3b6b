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
use crate::rules::{Input, RuleMeta, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "unclean-restart",
    title: "The server restarted with crash recovery and the log does not say why",
    severity: Severity::Critical,
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
