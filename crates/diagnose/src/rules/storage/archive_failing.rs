//! ## What it finds
//! WAL archiving is failing: `pg_stat_archiver` shows a failure later than the last success
//! (or failures and no success at all), segments wait in `pg_wal/archive_status` as `.ready`,
//! or pgBackRest's log shows `archive-push` failing. It gives the count of failures, the
//! segment that fails and since when, the segments waiting, and pg_wal's file system.
//!
//! ## Why it matters
//! PostgreSQL keeps every WAL segment that is not archived: pg_wal grows with every write
//! while the archive command fails, until its file system fills and the server PANICs. The
//! backups' point-in-time recovery stops at the last segment archived, and a standby fed from
//! the archive falls behind.
//!
//! ## What to do
//! Run the archive command by hand as the server's user with the failing segment (its text is
//! in the log's DETAIL `The failed archive command was: …`) and fix what it says: a
//! destination that is missing, full or unreachable, credentials, a repository's lock. Never
//! remove `.ready` files or WAL segments by hand. Watch `pg_stat_archiver.failed_count` and
//! the age of `last_archived_time`.
//!
//! ## Thresholds
//! The archiver's last failure later than its last success (or no success), or segments
//! waiting (`.ready`) while the archiver fails, or pgBackRest archive-push failures in its log:
//! warning; critical when pg_wal's file system is 90% used or more.
//!
//! ## Evidence it needs
//! The archiver's statistics, pg_wal's listing or pgBackRest's log; reads pg_wal's file system
//! and `archive_mode` when present.
//!
//! ## Knowledge
//! [pg-archiving], [pg-wal].

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::places::{volume_evidence, volume_of, volume_text};
use crate::rules::support::settings_evidence;
use crate::rules::{Input, RuleMeta, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "archive-failing",
    title: "WAL archiving is failing: pg_wal keeps every segment not archived",
    severity: Severity::Critical,
    needs: &[],
    uses: &[Input::Archiver, Input::Storage, Input::PgSettings],
};

/// pg_wal's use, in percent, from which failing archiving is critical.
const CRITICAL_PERCENT: u8 = 90;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let storage = &facts.host.storage;
    let archiver = storage
        .archiver
        .as_ref()
        .filter(|a| a.failing == Some(true));
    let pgbackrest = &facts.archiving.failures;
    if archiver.is_none() && pgbackrest.is_empty() {
        return Vec::new();
    }
    let mut summary = String::new();
    let mut evidence: Vec<Evidence> = Vec::new();
    if let Some(a) = archiver {
        summary.push_str(&format!(
            "pg_stat_archiver counts {} failed attempt{} and {} archived segment{}: the last \
             failure ({} at {}) is later than the last success ({}).",
            a.failed_count.unwrap_or(0),
            if a.failed_count == Some(1) { "" } else { "s" },
            a.archived_count.as_ref().map_or(0, |k| k.value),
            if a.archived_count.as_ref().is_some_and(|k| k.value == 1) {
                ""
            } else {
                "s"
            },
            a.last_failed_wal.as_deref().unwrap_or("?"),
            a.last_failed_time.as_deref().unwrap_or("?"),
            match (&a.last_archived_wal, &a.last_archived_time) {
                (Some(w), Some(t)) => format!("{w} at {t}"),
                _ => "none since the statistics were reset".to_owned(),
            }
        ));
        if let Some(k) = &a.archived_count {
            evidence.push(k.evidence("pg_stat_archiver: failing"));
        }
    }
    if let Some(first) = pgbackrest.first() {
        let last = &pgbackrest[pgbackrest.len() - 1];
        summary.push_str(&format!(
            " pgBackRest failed to archive {} time{} between {} and {}: `{}`.",
            pgbackrest.len(),
            if pgbackrest.len() == 1 { "" } else { "s" },
            first.time,
            last.time,
            crate::human::cut(first.summary, 200)
        ));
        for f in [first, last] {
            evidence.push(Evidence {
                path: f.path.to_owned(),
                line: f.line,
                what: "pgBackRest could not archive WAL".to_owned(),
                key: None,
                host_file: None,
                host_line: None,
            });
        }
        evidence.dedup_by(|a, b| a.path == b.path && a.line == b.line);
    }
    let mut f_figures: Vec<(&'static str, f64)> = Vec::new();
    if let Some(wal) = &storage.pg_wal {
        if let Some(ready) = wal.archive_ready.filter(|n| *n > 0) {
            let segment = wal
                .bytes
                .zip(Some(wal.segments.value).filter(|n| *n > 0))
                .map(|(b, n)| b / n);
            summary.push_str(&format!(
                " {ready} segment{} wait to be archived{}; pg_wal holds {} segments{}.",
                if ready == 1 { "" } else { "s" },
                segment
                    .map(|s| format!(" ({})", human_bytes(s * ready)))
                    .unwrap_or_default(),
                wal.segments.value,
                wal.bytes
                    .map(|b| format!(" ({})", human_bytes(b)))
                    .unwrap_or_default()
            ));
            evidence.push(wal.segments.evidence("pg_wal's segments and those waiting"));
            f_figures.push(("segments_waiting", ready as f64));
        }
    }
    let volume = volume_of(facts, "pg_wal");
    if let Some(v) = volume {
        summary.push_str(&format!(" pg_wal's file system: {}.", volume_text(v)));
        evidence.extend(volume_evidence(v, "df: pg_wal's file system"));
    }
    summary.push_str(
        " PostgreSQL keeps every segment not archived: pg_wal grows until it is archived or \
         its file system fills.",
    );
    evidence.extend(settings_evidence(facts, &["archive_mode"]));
    let critical = volume
        .and_then(|v| v.use_percent)
        .is_some_and(|p| p >= CRITICAL_PERCENT);
    let mut f = finding(
        &META,
        if critical {
            Severity::Critical
        } else {
            Severity::Warning
        },
        match archiver.and_then(|a| a.last_failed_wal.as_deref()) {
            Some(w) => format!("WAL archiving is failing (segment {w})"),
            None => "WAL archiving is failing".to_owned(),
        },
    )
    .summary(summary.trim_start().to_owned())
    .recommend(
        "Run the archive command by hand as the server's user with the failing segment (the \
         log's DETAIL `The failed archive command was: …` gives it) and fix what it says: a \
         destination that is missing, full or unreachable, credentials, a repository's lock. \
         Never remove .ready files or WAL segments by hand. Alert on \
         pg_stat_archiver.failed_count rising and on the age of last_archived_time.",
    )
    .evidence(evidence)
    .impact(
        archiver
            .and_then(|a| a.failed_count)
            .unwrap_or(pgbackrest.len() as u64) as f64,
    );
    for (name, value) in f_figures {
        f = f.figure(name, value);
    }
    if let Some(n) = archiver.and_then(|a| a.failed_count) {
        f = f.figure("failed_count", n as f64);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::{Scratch, incident_archive};

    fn failing() -> Scratch {
        Scratch::bundle(&incident_archive("pg15-archive-failing"))
    }

    #[test]
    fn a_failing_archive_command_names_the_segment_and_the_backlog() {
        // Real capture: archive_command copies to a directory that is not there.
        let f = failing().run("archive-failing").one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.title.contains("000000010000000000000001"), "{}", f.title);
        assert!(f.summary.contains("54 failed attempts"), "{}", f.summary);
        assert!(f.summary.contains("18 segments wait"), "{}", f.summary);
        assert_eq!(f.figures["segments_waiting"], 18.0);
    }

    #[test]
    fn an_archiver_that_succeeded_since_its_last_failure_is_silent() {
        let recovered = failing().edit("postgres/archiver.txt", |t| {
            t.replace(
                "0|||54|",
                "55|000000010000000000000012|2026-11-28 15:52:40+00|54|",
            )
        });
        assert!(recovered.run("archive-failing").silent());
    }

    #[test]
    fn a_healthy_bundle_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("archive-failing")
                .silent()
        );
    }
}
