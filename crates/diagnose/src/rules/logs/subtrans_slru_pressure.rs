//! ## What it finds
//! Sessions waiting on the subtransaction SLRU when the bundle was collected (wait events
//! `SubtransSLRU` and `SubtransBuffer`; `SubtransControlLock` and `subtrans` before
//! PostgreSQL 13, in the `pg_stat_activity` summary), and a `pg_subtrans` directory holding many
//! segment files.
//!
//! ## Why it matters
//! A backend keeps the ids of its first 64 subtransactions (`SAVEPOINT`, each PL/pgSQL block
//! with an `EXCEPTION` clause entered, a driver's automatic savepoints) in shared memory. Past
//! 64 its entry overflows, and every snapshot taken while that transaction runs is marked
//! overflowed: to tell whether a transaction id is still running, other sessions must then
//! look its parent up in `pg_subtrans`, through a small cache (32 pages of 2,048 ids each, 65,536
//! ids, before PostgreSQL 17) searched under one lock. The lookups cover the ids from the
//! looking snapshot's oldest transaction to now; `pg_subtrans` keeps the ids from the oldest
//! transaction still running at the last checkpoint, one 256 kB segment file per 65,536 ids,
//! the older segments removed at each checkpoint. Many segments mean a wide
//! range (a long transaction holds its start back), so lookups miss the cache and read pages
//! under the lock: throughput can fall several times over, with sessions piling up on
//! `SubtransSLRU`.
//!
//! ## What to do
//! Keep every transaction under 64 subtransactions: no `SAVEPOINT` per statement (pgJDBC's
//! `autosave=always`, ORM nested transactions), no PL/pgSQL `EXCEPTION` block inside a loop
//! (catch once, outside). End long transactions and sessions idle in transaction
//! (`pg_stat_activity.xact_start`; `idle_in_transaction_session_timeout`). From PostgreSQL 17,
//! size the cache with `subtransaction_buffers` to cover the range (the finding computes the
//! pages for this host); before 17 the cache cannot be resized.
//!
//! ## Thresholds
//! Two sessions or more caught waiting ([`WARN_WAITING_SESSIONS`]): a warning; one: info (a
//! single sample). `pg_subtrans` with 16 segment files or more ([`MANY_SEGMENTS`]: 1,048,576
//! transaction ids, sixteen times the cache before PostgreSQL 17): info, and part of the
//! warning when sessions wait. Fewer files and no waits: silent.
//!
//! ## Evidence it needs
//! The `pg_stat_activity` summary or the `pg_subtrans` file count. Reads when present: the
//! version and settings (`subtransaction_buffers`, `shared_buffers`).
//!
//! ## Knowledge
//! [ru-anomalies]: `SubtransControlLock`/`SubtransSLRU` waits in `pg_stat_activity` are the
//! sign; 64 subtransactions per connection in the ProcArray; 32 SLRU buffers of 8 kB, 65,536
//! subtransactions; "check how many files pg_subtrans holds right now"; the cure is not to
//! exceed 64; a larger cache searched linearly does not help by itself. [pg-subtrans]: the
//! arithmetic (4 bytes per id, 2,048 per page, 32 pages per segment, the cache size by
//! version, truncation at checkpoints). [pg-config] (subtransaction_buffers).

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::support::{counted, pg_size, settings_evidence};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "subtrans-slru-pressure",
    title: "Sessions contend on the subtransaction SLRU",
    severities: &[
        warning("with two sessions or more waiting on the SLRU"),
        info("with one session waiting, or 16 pg_subtrans files or more"),
    ],
    needs: &[Input::Subtrans],
    uses: &[Input::PgSettings, Input::PgVersion],
};

/// Sessions caught waiting from which it is a warning.
pub(crate) const WARN_WAITING_SESSIONS: u64 = 2;
/// Segment files from which `pg_subtrans` is reported.
pub(crate) const MANY_SEGMENTS: u64 = 16;
/// Transaction ids per 8 kB page of `pg_subtrans` (four bytes each).
pub(crate) const XIDS_PER_PAGE: u64 = 2_048;
/// Pages per segment file.
pub(crate) const PAGES_PER_SEGMENT: u64 = 32;
/// Pages cached before PostgreSQL 17.
pub(crate) const CACHED_PAGES_BEFORE_17: u64 = 32;
/// `subtransaction_buffers` bounds: the automatic size's floor and ceiling, the maximum, and
/// the bank size every value is a multiple of.
const AUTO_MIN_PAGES: u64 = 16;
const AUTO_MAX_PAGES: u64 = 1_024;
const MAX_PAGES: u64 = 131_072;
const BANK_PAGES: u64 = 16;

/// Pages of the subtransaction cache: 32 before 17; from 17 `subtransaction_buffers`, its 0
/// meaning shared_buffers / 512 within 16–1024.
pub(crate) fn cached_pages(
    major: Option<u32>,
    setting_pages: Option<u64>,
    shared_buffer_pages: Option<u64>,
) -> u64 {
    match major {
        Some(v) if v >= 17 => match setting_pages {
            Some(p) if p > 0 => p,
            _ => {
                (shared_buffer_pages.unwrap_or(16_384) / 512).clamp(AUTO_MIN_PAGES, AUTO_MAX_PAGES)
            }
        },
        _ => CACHED_PAGES_BEFORE_17,
    }
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(subtrans) = &facts.host.subtrans else {
        return Vec::new();
    };
    let waiting: u64 = subtrans.waits.iter().map(|w| w.value).sum();
    let files = subtrans.files.as_ref();
    let many = files.filter(|f| f.value >= MANY_SEGMENTS);
    if waiting == 0 && many.is_none() {
        return Vec::new();
    }
    let severity = if waiting >= WARN_WAITING_SESSIONS {
        Severity::Warning
    } else {
        Severity::Info
    };
    let pg = &facts.host.postgres;
    let major = pg.major();
    let page = |name: &str| pg.bytes(name).map(|b| b / 8192);
    let pages = cached_pages(
        major,
        page("subtransaction_buffers"),
        page("shared_buffers"),
    );
    let cached_xids = pages * XIDS_PER_PAGE;

    let mut summary = String::new();
    if waiting > 0 {
        summary.push_str(&format!(
            "When the bundle was collected, {waiting} of {} waited on the subtransaction SLRU \
             ({}): a transaction with more than 64 subtransactions overflowed, and other \
             sessions look transaction ids up in pg_subtrans under its lock.",
            counted(subtrans.sessions.unwrap_or(waiting), "session"),
            subtrans
                .waits
                .iter()
                .map(|w| format!("{} {}", w.key, w.value))
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    if let Some(f) = files {
        let range = f.value * PAGES_PER_SEGMENT * XIDS_PER_PAGE;
        if f.value >= MANY_SEGMENTS || waiting > 0 {
            let ratio = range as f64 / cached_xids as f64;
            let against = if ratio <= 1.0 {
                "within".to_owned()
            } else if ratio >= 10.0 {
                format!("{ratio:.0} times")
            } else {
                format!("{ratio:.1} times")
            };
            summary.push_str(&format!(
                " pg_subtrans holds {} ({}): up to {range} transaction ids since the oldest one \
                 still running at the last checkpoint, {against} the {cached_xids} ids its \
                 cache holds ({pages} pages{}).",
                counted(f.value, "segment file"),
                human_bytes(f.value * 256 * 1024),
                match major {
                    Some(v) if v >= 17 => " of subtransaction_buffers".to_owned(),
                    Some(v) => format!(", fixed before PostgreSQL 17; this is {v}"),
                    None => ", fixed before PostgreSQL 17".to_owned(),
                }
            ));
        }
    }

    let mut advice = vec![
        "Keep each transaction under 64 subtransactions: no SAVEPOINT per statement (pgJDBC \
         autosave=always, ORM nested transactions), no PL/pgSQL EXCEPTION block entered in a \
         loop (catch once, outside it). End long transactions and sessions idle in transaction \
         (pg_stat_activity.xact_start; idle_in_transaction_session_timeout): they widen the \
         range of ids looked up."
            .to_owned(),
    ];
    let needed = files.map(|f| {
        (f.value * PAGES_PER_SEGMENT)
            .div_ceil(BANK_PAGES)
            .saturating_mul(BANK_PAGES)
            .min(MAX_PAGES)
    });
    match (major, needed) {
        (Some(v), Some(n)) if v >= 17 && n > pages => advice.push(format!(
            "On PostgreSQL {v}, subtransaction_buffers = {n} ({} of 8 kB pages) would cache the \
             whole range (now {pages} pages); it needs a restart.",
            pg_size(n * 8192)
        )),
        (Some(v), _) if v < 17 => advice.push(format!(
            "PostgreSQL {v} cannot resize this cache; from 17, subtransaction_buffers can."
        )),
        _ => {}
    }

    let mut evidence: Vec<_> = subtrans
        .waits
        .iter()
        .map(|w| w.evidence(format!("{} sessions waiting on {}", w.value, w.key)))
        .collect();
    if let Some(f) = files {
        evidence.push(f.evidence(format!("{} pg_subtrans segment files", f.value)));
    }
    evidence.extend(settings_evidence(facts, &["subtransaction_buffers"]));

    let title = match (waiting, many) {
        (0, Some(f)) => format!(
            "pg_subtrans holds {} segment files: a wide range of transaction ids to look up",
            f.value
        ),
        (w, _) => format!(
            "{} waiting on the subtransaction SLRU",
            counted(w, "session")
        ),
    };
    let mut f = finding(&META, severity, title)
        .summary(summary.trim_start().to_owned())
        .recommend(advice.join(" "))
        .evidence(evidence)
        .figure("subtrans_waiting_sessions", waiting as f64)
        .figure("cached_xids", cached_xids as f64);
    if let Some(s) = subtrans.sessions {
        f = f.figure("sessions", s as f64);
    }
    if let Some(files) = files {
        f = f.figure("pg_subtrans_files", files.value as f64).figure(
            "xid_range",
            (files.value * PAGES_PER_SEGMENT * XIDS_PER_PAGE) as f64,
        );
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use super::cached_pages;
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const ACTIVITY: &str = "postgres/activity-summary.txt";
    const FILES: &str = "storage/pg_subtrans-files.txt";

    fn collected() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
    }

    /// The collected summary with its one active client row edited to `count` sessions
    /// waiting on `event`.
    fn waiting(event: &str, count: u64) -> Scratch {
        collected().set_line(
            ACTIVITY,
            "active|||client backend|",
            &format!("active|LWLock|{event}|client backend|{count}"),
        )
    }

    #[test]
    fn the_collected_bundles_are_silent() {
        // One pg_subtrans segment, no session waiting on it.
        assert!(collected().run("subtrans-slru-pressure").silent());
        assert!(
            Scratch::incident("pg15-fork-failure")
                .run("subtrans-slru-pressure")
                .silent()
        );
    }

    #[test]
    fn two_waiting_sessions_are_a_warning_and_one_is_info() {
        let f = waiting("SubtransSLRU", 2)
            .run("subtrans-slru-pressure")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["subtrans_waiting_sessions"], 2.0);
        // The summary's rows: 1 + 2 + 5 auxiliary + 1 idle.
        assert_eq!(f.figures["sessions"], 9.0);
        assert!(
            f.summary.contains("2 of 9 sessions waited"),
            "{}",
            f.summary
        );
        // Its one segment file: 65,536 ids, as many as the 32 cached pages of PostgreSQL 15.
        assert!(f.summary.contains("65536 transaction ids"), "{}", f.summary);
        assert!(
            f.summary.contains("within the 65536 ids its cache holds"),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("fixed before PostgreSQL 17; this is 15"),
            "{}",
            f.summary
        );
        let advice = f.recommendation.unwrap();
        assert!(advice.contains("under 64 subtransactions"), "{advice}");
        assert!(advice.contains("PostgreSQL 15 cannot resize"), "{advice}");
        assert_eq!(
            (f.evidence[0].path.as_str(), f.evidence[0].line),
            (ACTIVITY, 3)
        );
        let one = waiting("SubtransSLRU", 1)
            .run("subtrans-slru-pressure")
            .one();
        assert_eq!(one.severity, Severity::Info);
    }

    #[test]
    fn the_names_before_postgresql_13_count_too() {
        for event in ["SubtransControlLock", "subtrans", "SubtransBuffer"] {
            let f = waiting(event, 3).run("subtrans-slru-pressure").one();
            assert_eq!(f.severity, Severity::Warning, "{event}");
            assert_eq!(f.figures["subtrans_waiting_sessions"], 3.0, "{event}");
        }
        // Another LWLock is not this rule's.
        assert!(
            waiting("BufferMapping", 3)
                .run("subtrans-slru-pressure")
                .silent()
        );
    }

    #[test]
    fn sixteen_segment_files_are_info_and_fifteen_are_silent() {
        // The collected count edited from 1 to the threshold, then one below.
        let f = collected()
            .write(FILES, "16\n")
            .run("subtrans-slru-pressure")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.figures["xid_range"], 1_048_576.0);
        assert!(
            f.title.starts_with("pg_subtrans holds 16 segment files"),
            "{}",
            f.title
        );
        assert!(
            f.summary.contains("16 times the 65536 ids"),
            "{}",
            f.summary
        );
        assert!(
            collected()
                .write(FILES, "15\n")
                .run("subtrans-slru-pressure")
                .silent()
        );
    }

    #[test]
    fn on_17_the_buffers_that_would_cover_the_range_are_computed() {
        // The collected pg_settings edited into a PostgreSQL 17 dump: its version row, and an
        // unrelated row replaced by subtransaction_buffers = 256 pages (2 MB).
        let f = collected()
            .write(FILES, "20\n")
            .set_line(
                "postgres/pg_settings.txt",
                "server_version_num|",
                "server_version_num|170004||default||f",
            )
            .set_line(
                "postgres/pg_settings.txt",
                "debug_pretty_print|",
                "subtransaction_buffers|256|8kB|configuration file|/var/lib/postgresql/17/main/postgresql.conf|f",
            )
            .run("subtrans-slru-pressure")
            .one();
        // 20 segments × 32 pages = 640 pages, a multiple of the 16-page bank.
        let advice = f.recommendation.unwrap();
        assert!(
            advice.contains("subtransaction_buffers = 640 (5MB of 8 kB pages)"),
            "{advice}"
        );
        assert_eq!(f.figures["cached_xids"], (256 * 2048) as f64);
        assert!(
            f.summary.contains("2.5 times the 524288 ids"),
            "{}",
            f.summary
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("subtransaction_buffers"))
        );
    }

    #[test]
    fn the_cache_size_by_version() {
        assert_eq!(cached_pages(Some(15), Some(9999), None), 32);
        assert_eq!(cached_pages(None, None, None), 32);
        // 17 with 0: shared_buffers / 512 within 16–1024 pages.
        assert_eq!(cached_pages(Some(17), Some(0), Some(4_096)), 16);
        assert_eq!(cached_pages(Some(17), Some(0), Some(262_144)), 512);
        assert_eq!(cached_pages(Some(17), Some(0), Some(4_194_304)), 1_024);
        assert_eq!(cached_pages(Some(18), Some(256), Some(4_096)), 256);
    }

    #[test]
    fn without_the_summary_or_the_count_it_is_not_evaluated() {
        assert!(matches!(
            collected()
                .remove(ACTIVITY)
                .remove(FILES)
                .run("subtrans-slru-pressure"),
            Outcome::NotEvaluated(_)
        ));
    }
}
