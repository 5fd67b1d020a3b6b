//! ## What it finds
//! A crash recovery that kept the instance down long: the outage (crash line to `ready to
//! accept connections`) or the WAL redo took longer than the threshold.
//!
//! ## Why it matters
//! After a crash PostgreSQL replays every WAL record since the last checkpoint before it
//! accepts a connection. The WAL between checkpoints grows with `max_wal_size` and
//! `checkpoint_timeout`: generous values make checkpoints cheap and recoveries long.
//!
//! ## What to do
//! Bound the WAL that can pile up between checkpoints by the recovery time you can afford: at
//! the redo rate this recovery showed, the WAL replayable in the target time is the
//! `max_wal_size` to set (the WAL between two checkpoints stays under it), with a
//! `checkpoint_timeout` short enough for the write rate; faster storage raises the rate.
//!
//! ## Thresholds
//! Outage ≥ 30 s, or redo ≥ 30 s: a warning; outage ≥ 300 s: critical. The recommendation
//! targets 30 s of redo at the observed rate (WAL replayed ÷ redo seconds).
//!
//! ## Evidence it needs
//! The PostgreSQL log with the crash cycle (`redo starts at`, `redo done at`, `ready`).
//!
//! ## Knowledge
//! [pg-wal] ("WAL Configuration": checkpoints bound the WAL to replay, and so the crash
//! recovery time); [fr-memoire]: a restart is not always a matter of seconds when tens of GB of
//! WAL must be replayed.

use crate::facts::Facts;
use crate::human::{duration, human_bytes};
use crate::report::{Finding, Severity};
use crate::rules::support::incident_evidence;
use crate::rules::{Input, RuleMeta, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "long-crash-recovery",
    title: "Crash recovery kept the instance down long",
    severity: Severity::Critical,
    needs: &[Input::PostgresLog],
    uses: &[Input::PgSettings],
};

/// Outage or redo seconds from which a recovery is long.
pub(crate) const LONG_SECONDS: f64 = 30.0;
/// Outage seconds from which it is critical.
pub(crate) const CRITICAL_SECONDS: f64 = 300.0;
/// The redo time the recommendation aims for.
const TARGET_REDO_SECONDS: f64 = 30.0;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (index, incident) in facts.incidents.iter().enumerate() {
        let outage = incident.outage_seconds.unwrap_or(0.0);
        let redo = incident.redo_seconds.unwrap_or(0.0);
        if outage < LONG_SECONDS && redo < LONG_SECONDS {
            continue;
        }
        let severity = if outage >= CRITICAL_SECONDS {
            Severity::Critical
        } else {
            Severity::Warning
        };
        let mut summary = format!(
            "The instance was down {} after the crash{}.",
            duration(outage),
            if redo > 0.0 {
                format!(", {} of it replaying WAL", duration(redo))
            } else {
                String::new()
            }
        );
        let mut recommendation = "Bound the WAL between checkpoints (max_wal_size, \
            checkpoint_timeout) by the recovery time you can afford."
            .to_owned();
        let mut f = finding(
            &META,
            severity,
            format!("Crash recovery took {}", duration(outage.max(redo))),
        );
        if let (Some(bytes), true) = (incident.wal_replayed_bytes, redo > 0.0) {
            let rate = bytes as f64 / redo;
            let target = (rate * TARGET_REDO_SECONDS) as u64;
            summary.push_str(&format!(
                " Redo replayed {} at {}/s.",
                human_bytes(bytes),
                human_bytes(rate as u64)
            ));
            let current = facts
                .host
                .postgres
                .setting("max_wal_size")
                .map(|s| format!(" (now {})", s.describe()))
                .unwrap_or_default();
            recommendation = format!(
                "At {}/s of redo, {} s of recovery replays about {}: set max_wal_size to at \
                 most {}{current} and keep checkpoint_timeout short enough that a checkpoint \
                 comes before that much WAL is written; faster storage raises the rate.",
                human_bytes(rate as u64),
                TARGET_REDO_SECONDS,
                human_bytes(target),
                human_bytes(target),
            );
            f = f
                .figure("redo_bytes_per_second", rate)
                .figure("recommended_max_wal_size_bytes", target as f64);
        }
        let mut evidence = incident_evidence(incident);
        if let Some(s) = facts
            .host
            .postgres
            .setting("max_wal_size")
            .and_then(|s| s.evidence())
        {
            evidence.push(s);
        }
        out.push(
            f.summary(summary)
                .recommend(recommendation)
                .evidence(evidence)
                .figure("outage_seconds", outage)
                .figure("redo_seconds", redo)
                .incident(index)
                .impact(outage),
        );
    }
    out
}
