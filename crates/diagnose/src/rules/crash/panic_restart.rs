//! ## What it finds
//! A PostgreSQL process logged a PANIC and died (SIGABRT): the postmaster crash-restarted the
//! instance, or, when the startup process PANICked, the server shut down and did not come back.
//!
//! ## Why it matters
//! PANIC is how PostgreSQL stops when continuing could corrupt data: WAL could not be written
//! or flushed (a full or failing WAL disk), a checkpoint record is missing, an fsync failed.
//! The cause is on the host or in storage, and the restart will hit it again until it is
//! removed: a full WAL volume PANICs every backend that writes.
//!
//! ## What to do
//! Read the PANIC message cited: `No space left on device` on pg_wal means the WAL volume is
//! full (free space, fix archiving or a stuck replication slot, size the volume for
//! max_wal_size plus headroom); `could not locate a valid checkpoint record` needs a restore or
//! expert repair (never `pg_resetwal` without a backup); I/O errors mean failing storage.
//!
//! ## Thresholds
//! Every crash incident whose dead process logged a PANIC just before dying (or died of
//! SIGABRT after one).
//!
//! ## Evidence it needs
//! The PostgreSQL log.
//!
//! ## Knowledge
//! [pg-wal] ("Reliability and the Write-Ahead Log", "WAL Configuration"); the PANIC and crash
//! messages of docs/pglog-events.md.

use crate::facts::Facts;
use crate::human::{quote_cut, quote_line};
use crate::report::{Finding, Severity};
use crate::rules::support::{incident_evidence, outage_text};
use crate::rules::{Input, RuleMeta, critical, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "panic-restart",
    title: "A PostgreSQL process PANICked and took the instance down",
    severities: &[critical("")],
    needs: &[Input::PostgresLog],
    uses: &[],
};

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (index, incident) in facts.incidents.iter().enumerate() {
        if !matches!(
            incident.kind,
            "crash_restart" | "recovery_failed" | "startup_failed"
        ) || !incident.died_of_panic()
        {
            continue;
        }
        let Some(panic) = incident
            .preceded_by
            .iter()
            .rev()
            .find(|l| l.severity == Some("PANIC"))
        else {
            continue;
        };
        let Some(c) = &incident.postgres_crash else {
            continue;
        };
        let restarted = incident
            .recovery
            .as_ref()
            .is_some_and(|r| r.ready_at.is_some());
        let what_next = if restarted {
            "the postmaster terminated every session and restarted the instance".to_owned()
        } else if c.process.contains("startup") {
            "the server could not start and shut down: it stays down until the cause is removed"
                .to_owned()
        } else {
            "the log shows no `ready to accept connections` after it".to_owned()
        };
        let wal_full = panic.message.contains("pg_wal") || panic.message.contains("xlog");
        let advice = if panic.message.contains("No space left on device") && wal_full {
            "The WAL volume is full: free space on it, then find why WAL piled up (a failing \
             archive_command, an inactive replication slot holding WAL: \
             pg_replication_slots.wal_status, a max_wal_size beyond the volume), and size the \
             volume for max_wal_size plus headroom."
        } else if panic.message.contains("No space left on device") {
            "A volume PostgreSQL must write to is full: free space on it and size it with \
             headroom."
        } else if panic.message.contains("checkpoint record") {
            "The WAL holding the last checkpoint is missing or damaged: restore from a backup, \
             or get expert help; pg_resetwal loses data and is a last resort after a copy of \
             the data directory."
        } else {
            "Read the PANIC message cited: it names the operation that failed (a write, an \
             fsync, a missing file); fix the storage or configuration behind it before the \
             restart hits it again."
        };
        out.push(
            finding(
                &META,
                Severity::Critical,
                format!(
                    "PostgreSQL {} {} PANICked: {}{}",
                    c.process,
                    c.pid,
                    quote_cut(&panic.message, 120),
                    outage_text(incident)
                ),
            )
            .summary(format!(
                "{} {} logged {} and aborted (signal 6); {what_next}.",
                c.process,
                c.pid,
                quote_line("PANIC", &panic.message, 300)
            ))
            .recommend(advice)
            .evidence(incident_evidence(incident))
            .confidence(incident.confidence)
            .incident(index)
            .impact(incident.outage_seconds.unwrap_or(f64::MAX / 4.0)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    #[test]
    fn a_startup_panic_is_an_outage_that_does_not_end() {
        let f = Scratch::new()
            .copy(
                "postgresql.log",
                "formats/pglog/pg15-panic-no-checkpoint.log",
            )
            .run("panic-restart")
            .one();
        assert!(f.title.contains("checkpoint record"), "{}", f.title);
        assert!(f.summary.contains("could not start"), "{}", f.summary);
        assert!(f.recommendation.unwrap().contains("pg_resetwal"));
    }

    #[test]
    fn a_segfault_is_not_a_panic() {
        assert!(
            Scratch::new()
                .copy("postgresql.log", "formats/pglog/pg15-backend-sigsegv.log")
                .run("panic-restart")
                .silent()
        );
    }

    #[test]
    fn a_backend_panic_on_a_full_wal_volume_fires() {
        // Real capture: pg_wal on an 80 MB tmpfs filled by a bulk load; the backend PANICs
        // (`could not write to file "pg_wal/xlogtemp.N"`), crash-restart once it is grown.
        let f = Scratch::incident("pg15-panic-wal-full")
            .run("panic-restart")
            .one();
        assert_eq!(f.severity, crate::Severity::Critical);
        assert!(f.summary.contains("pg_wal"), "{}", f.summary);
    }
}
