//! ## What it finds
//! Recovery could not start or finish: the startup process found no valid checkpoint to
//! start from (`could not locate a valid checkpoint record`, `could not find redo location
//! referenced by checkpoint record`), or a WAL segment it needs is gone (`requested WAL
//! segment … has already been removed` in the startup process, a `pg_wal` file missing), and
//! the postmaster shut down (`shutting down due to startup process failure`) instead of
//! serving. Tied to the incident; says whether the server was still down when the log ends.
//!
//! ## Why it matters
//! Without a checkpoint to start from or the WAL after it, PostgreSQL cannot make the data
//! directory consistent: it does not start, and every restart fails the same way. The usual
//! causes are WAL removed by hand or by a script (a full pg_wal "cleaned"), a copy of the data
//! directory taken without its WAL, or storage that lost writes.
//!
//! ## What to do
//! Do not run `pg_resetwal` first: it makes the server start by discarding WAL, and the data
//! may be inconsistent after it. Find the missing WAL (the archive, a backup, a copy of pg_wal
//! moved elsewhere) and put it back; else restore the last base backup and replay the archive.
//! Only when neither exists, copy the whole data directory, then `pg_resetwal` and dump and
//! reload the data, checking it.
//!
//! ## Thresholds
//! Any of those messages from the startup process, at PANIC or FATAL (critical).
//!
//! ## Evidence it needs
//! The PostgreSQL log.
//!
//! ## Knowledge
//! [pg-wal] (crash recovery starts at the last checkpoint's redo location and needs every WAL
//! segment after it).

use pgmortem_parse::pglog::{PgEvent, Severity as Level};

use crate::facts::Facts;
use crate::report::{Finding, Severity};
use crate::rules::places::{incident_of, record_evidence};
use crate::rules::support::outage_text;
use crate::rules::{Input, RuleMeta, critical, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "recovery-failed",
    title: "Recovery found no checkpoint or WAL to start from: the server does not start",
    severities: &[critical("")],
    needs: &[Input::PostgresLog],
    uses: &[],
};

fn is_recovery_failure(event: &PgEvent) -> bool {
    matches!(
        event,
        PgEvent::NoValidCheckpoint { .. }
            | PgEvent::RedoLocationMissing { .. }
            | PgEvent::WalSegmentRemoved { .. }
    )
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let failures: Vec<_> = facts
        .log
        .records(is_recovery_failure)
        .into_iter()
        .filter(|(_, r)| matches!(r.severity, Some(Level::Panic | Level::Fatal)))
        // A walsender's `requested WAL segment … has already been removed` (a standby asking)
        // is not this server's recovery.
        .filter(|(_, r)| {
            !matches!(r.event, Some(PgEvent::WalSegmentRemoved { .. }))
                || r.backend_type.as_deref().is_none_or(|b| b == "startup")
        })
        .collect();
    let Some((path, first)) = failures.first().copied() else {
        return Vec::new();
    };
    let incident = failures
        .iter()
        .find_map(|(p, r)| incident_of(facts, p, r.line));
    let failed_at = first.time.as_ref().and_then(crate::clock::postgres);
    let still_down = facts
        .log
        .kind("ready")
        .is_none_or(|ready| match (ready.last.2, failed_at) {
            (Some(ready_at), Some(failed)) => ready_at < failed,
            _ => ready.last.0 == path && ready.last.1 < first.line,
        });
    let mut summary = format!(
        "The startup process could not recover: {}{}.",
        crate::human::quote_line(
            first
                .severity
                .map_or("LOG", crate::rules::places::level_name),
            &first.message,
            200
        ),
        if failures.len() > 1 {
            format!(
                " ({} times: every start fails the same way)",
                failures.len()
            )
        } else {
            String::new()
        }
    );
    summary.push_str(if still_down {
        " The log shows no start after it: the server was still down when the log ends."
    } else {
        " A later start succeeded."
    });
    let mut f = finding(
        &META,
        Severity::Critical,
        format!(
            "Recovery failed: {}{}",
            crate::human::quote_cut(&first.message, 80),
            incident
                .map(|i| outage_text(&facts.incidents[i]))
                .unwrap_or_default()
        ),
    )
    .summary(summary)
    .recommend(
        "Do not run pg_resetwal first: it starts the server by discarding WAL, and the data \
         may be inconsistent after it. Find the missing WAL (the archive, a backup, a copy of \
         pg_wal moved elsewhere) and put it back into pg_wal, or restore the last base backup \
         and replay the archive. Only when neither exists: copy the whole data directory, then \
         pg_resetwal, then dump, reload and check the data.",
    )
    .evidence([record_evidence(
        path,
        first,
        "the startup process's failure",
    )])
    .figure("failures", failures.len() as f64)
    .impact(f64::MAX / 8.0);
    if let Some(i) = incident {
        f = f.incident(i);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::{Scratch, incident_archive};

    #[test]
    fn a_missing_checkpoint_segment_leaves_the_server_down() {
        // Real capture: the segment of the last checkpoint removed after an immediate stop.
        let f = Scratch::bundle(&incident_archive("pg15-recovery-missing-wal"))
            .run("recovery-failed")
            .one();
        assert!(
            f.title
                .contains("could not locate a valid checkpoint record"),
            "{}",
            f.title
        );
        assert!(f.summary.contains("still down"), "{}", f.summary);
        assert!(f.incident.is_some());
    }

    #[test]
    fn a_crash_recovery_that_ends_ready_is_silent() {
        assert!(
            Scratch::incident("pg15-sigkill-backend")
                .run("recovery-failed")
                .silent()
        );
    }
}
