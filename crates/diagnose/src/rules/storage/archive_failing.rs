//! ## What it finds
//! WAL archiving is failing: `pg_stat_archiver` shows a failure later than the last success
//! (or failures and no success at all), segments wait in `pg_wal/archive_status` as `.ready`,
//! pgBackRest's log shows `archive-push` failing, or the server's own log shows the archive
//! command failing (`archive command failed with exit code N` with the command in its DETAIL,
//! `archiving write-ahead log file "…" failed too many times, will try again later`). It gives
//! the count of failures, the segment that fails and since when, the command and its exit
//! code, the segments waiting, and pg_wal's file system.
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
//! waiting (`.ready`) while the archiver fails, or pgBackRest archive-push failures in its log,
//! or in the server's log a `failed too many times` warning (three failures in a row) or 3
//! failed archive commands, unless `pg_stat_archiver` shows a success since: warning; critical
//! when pg_wal's file system is 90% used or more.
//!
//! ## Evidence it needs
//! The archiver's statistics, pg_wal's listing, pgBackRest's log or the PostgreSQL log; reads
//! pg_wal's file system and `archive_mode` when present.
//!
//! ## Knowledge
//! [pg-archiving], [pg-wal].

use pgmortem_parse::pglog::{PgEvent, PgRecord};

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::places::{record_evidence, volume_evidence, volume_of, volume_text};
use crate::rules::support::settings_evidence;
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "archive-failing",
    title: "WAL archiving is failing: pg_wal keeps every segment not archived",
    severities: &[
        critical("when pg_wal's file system is 90 % used or more"),
        warning("otherwise"),
    ],
    needs: &[],
    uses: &[
        Input::Archiver,
        Input::Storage,
        Input::PgSettings,
        Input::PostgresLog,
    ],
};

/// pg_wal's use, in percent, from which failing archiving is critical.
const CRITICAL_PERCENT: u8 = 90;

/// Failed archive commands in the server's log from which archiving is taken to be failing
/// when nothing else says so (the archiver itself warns after three failures in a row).
const LOG_FAILURES: usize = 3;

fn is_archive_failure(event: &PgEvent) -> bool {
    matches!(
        event,
        PgEvent::ArchiveCommandFailed { .. } | PgEvent::ArchiveFailedTooManyTimes { .. }
    )
}

/// What the server's log says of its failing archive command: a sentence, the evidence, and
/// the segment it last gave up on.
fn log_failures(logged: &[(&str, &PgRecord)]) -> (String, Vec<Evidence>, Option<String>) {
    let commands: Vec<_> = logged
        .iter()
        .filter(|(_, r)| matches!(r.event, Some(PgEvent::ArchiveCommandFailed { .. })))
        .collect();
    let gave_up: Vec<_> = logged
        .iter()
        .filter(|(_, r)| matches!(r.event, Some(PgEvent::ArchiveFailedTooManyTimes { .. })))
        .collect();
    let mut parts: Vec<String> = Vec::new();
    let mut evidence = Vec::new();
    if let Some((path, r)) = commands.first() {
        let (exit_code, signal, command) = match &r.event {
            Some(PgEvent::ArchiveCommandFailed {
                exit_code,
                signal,
                command,
            }) => (*exit_code, *signal, command.as_deref()),
            _ => (None, None, None),
        };
        let how = match (exit_code, signal) {
            (Some(c), _) => format!(" (exit code {c})"),
            (None, Some(s)) => format!(" (killed by signal {s})"),
            _ => String::new(),
        };
        parts.push(format!(
            "the server's log shows the archive command failing {}{how}{}",
            crate::human::times(commands.len()),
            command
                .map(|c| format!(": {}", crate::human::quote_cut(c, 200)))
                .unwrap_or_default()
        ));
        evidence.push(record_evidence(path, r, "the first failed archive command"));
    }
    let segment = gave_up.last().and_then(|(_, r)| match &r.event {
        Some(PgEvent::ArchiveFailedTooManyTimes { segment }) => Some(segment.clone()),
        _ => None,
    });
    if let (Some((path, r)), Some(seg)) = (gave_up.last(), &segment) {
        parts.push(format!(
            "the archiver gave up {} after three failures in a row (`failed too many \
             times, will try again later`), the last on {seg}",
            crate::human::times(gave_up.len())
        ));
        evidence.push(record_evidence(
            path,
            r,
            "the archiver gave up on a segment",
        ));
    }
    let mut text = crate::human::capitalised(&parts.join("; "));
    if !text.is_empty() {
        text.push('.');
    }
    (text, evidence, segment)
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let storage = &facts.host.storage;
    let archiver = storage
        .archiver
        .as_ref()
        .filter(|a| a.failing == Some(true));
    let pgbackrest = &facts.archiving.failures;
    let logged = facts.log.records(is_archive_failure);
    // The log's failures count when the archiver's statistics do not show a success since.
    let recovered = storage
        .archiver
        .as_ref()
        .is_some_and(|a| a.failing == Some(false));
    let log_says = !recovered
        && (logged.len() >= LOG_FAILURES
            || logged
                .iter()
                .any(|(_, r)| matches!(r.event, Some(PgEvent::ArchiveFailedTooManyTimes { .. }))));
    if archiver.is_none() && pgbackrest.is_empty() && !log_says {
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
            " pgBackRest failed to archive {} time{} between {} and {}: {}.",
            pgbackrest.len(),
            if pgbackrest.len() == 1 { "" } else { "s" },
            first.time,
            last.time,
            // Its message is quoted in it already, cut to the summary's length.
            first.summary
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
    let mut log_segment = None;
    if log_says || (archiver.is_some() && !logged.is_empty()) {
        let (text, log_evidence, segment) = log_failures(&logged);
        summary.push(' ');
        summary.push_str(&text);
        evidence.extend(log_evidence);
        log_segment = segment;
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
        match archiver
            .and_then(|a| a.last_failed_wal.as_deref())
            .or(log_segment.as_deref())
        {
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
            .unwrap_or((pgbackrest.len() + logged.len()) as u64) as f64,
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

    /// Real log: the archive command copies to a directory that is not there
    /// (the server log of pg15-archive-failing): three failures, then `failed too many times`.
    const LOG: &str = "formats/pglog-storage/pg15-archive-failing.log";

    fn log_lines(lines: usize) -> Scratch {
        Scratch::new()
            .copy("postgresql.log", LOG)
            .edit("postgresql.log", move |t| {
                t.lines().take(lines).map(|l| format!("{l}\n")).collect()
            })
    }

    #[test]
    fn the_servers_log_alone_names_the_command_its_exit_code_and_the_segment() {
        let f = Scratch::new()
            .copy("postgresql.log", LOG)
            .run("archive-failing")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.title.contains("000000010000000000000001"), "{}", f.title);
        assert!(f.summary.contains("(exit code 1)"), "{}", f.summary);
        assert!(
            f.summary
                .contains("`test ! -f /var/lib/postgresql/wal-archive/"),
            "{}",
            f.summary
        );
        assert!(f.summary.contains("failed too many times"), "{}", f.summary);
        assert_eq!(f.evidence[0].line, 6);
    }

    #[test]
    fn the_log_speaks_from_three_failures_or_the_archivers_warning() {
        // Lines 1-10: two failed commands (lines 6 and 9), no warning yet: silent.
        assert!(log_lines(10).run("archive-failing").silent());
        // Line 12: the third failure; line 14: the archiver's warning.
        let f = log_lines(13).run("archive-failing").one();
        assert!(f.summary.contains("failing 3 times"), "{}", f.summary);
        assert!(!f.title.contains("segment"), "{}", f.title);
        let f = log_lines(14).run("archive-failing").one();
        assert!(f.title.contains("000000010000000000000001"), "{}", f.title);
    }

    #[test]
    fn the_capture_cites_the_servers_own_lines_beside_pg_stat_archiver() {
        let f = failing().run("archive-failing").one();
        assert!(f.summary.contains("(exit code 1)"), "{}", f.summary);
        assert!(f.evidence.iter().any(|e| e.path == "postgres/server.log"));
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
