//! ## What it finds
//! PostgreSQL logged `checkpoints are occurring too frequently (N seconds apart)`: checkpoints
//! were forced by the volume of WAL (`max_wal_size` reached) within `checkpoint_warning`
//! (30 s by default) of each other, instead of coming every `checkpoint_timeout`. A checkpoint
//! starts when the WAL since the last one reaches `max_wal_size / (1 + checkpoint_completion_
//! target)`: over the seconds each warning gives, that is the rate at which WAL was written,
//! and from it the `max_wal_size` that would let checkpoints come on time.
//!
//! ## Why it matters
//! Each checkpoint writes every dirty buffer, and the first change of each page after it
//! writes a whole page image to WAL: checkpoints a few seconds apart multiply the I/O and the
//! WAL written, slow writes down, lengthen crash recovery's replay less than they cost, and
//! fill the archive and the standbys' links.
//!
//! ## What to do
//! Raise `max_wal_size` to hold the WAL of one `checkpoint_timeout` at the observed rate
//! (the figure given; PostgreSQL starts a checkpoint when the WAL since the last one reaches
//! `max_wal_size / (1 + checkpoint_completion_target)`), with the room on pg_wal's file system
//! it needs; for a one-off bulk load, raise it for the load only.
//!
//! ## Thresholds
//! Warning: 10 warnings or more, or warnings spread over an hour or more. Info: fewer (a
//! single bulk load).
//!
//! ## Evidence it needs
//! The PostgreSQL log; reads `max_wal_size`, `checkpoint_timeout` and
//! `checkpoint_completion_target` when present.
//!
//! ## Knowledge
//! [pg-wal] (WAL configuration: `max_wal_size`, `checkpoint_timeout`,
//! `checkpoint_completion_target`, `checkpoint_warning`).

use pgmortem_parse::pglog::PgEvent;

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::places::record_evidence;
use crate::rules::support::settings_evidence;
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "checkpoints-too-frequent",
    title: "Checkpoints forced by WAL volume, seconds apart",
    severities: &[
        warning("for 10 warnings or more, or warnings spread over an hour or more"),
        info("for fewer warnings within an hour (a single bulk load)"),
    ],
    needs: &[Input::PostgresLog],
    uses: &[Input::PgSettings],
};

/// Warnings from which the finding is a warning.
const MANY: u64 = 10;

/// A spread of warnings (seconds) from which the finding is a warning.
const LASTING_SECONDS: f64 = 3600.0;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(kind) = facts.log.kind("checkpoints_too_frequent") else {
        return Vec::new();
    };
    // PostgreSQL starts a checkpoint when the WAL since the last one reaches max_wal_size /
    // (1 + checkpoint_completion_target): that much WAL was written in the seconds each warning
    // gives (at least one).
    let pg = &facts.host.postgres;
    let timeout = pg
        .setting("checkpoint_timeout")
        .and_then(|s| s.seconds)
        .unwrap_or(300.0);
    let target = pg.number("checkpoint_completion_target").unwrap_or(0.9);
    let max_wal = pg.bytes("max_wal_size");
    let warnings = facts
        .log
        .records(|e| matches!(e, PgEvent::CheckpointsTooFrequent { .. }));
    let mut rates: Vec<f64> = match max_wal {
        Some(m) => warnings
            .iter()
            .filter_map(|(_, r)| match r.event {
                Some(PgEvent::CheckpointsTooFrequent { seconds }) => {
                    Some(m as f64 / (1.0 + target) / seconds.max(1) as f64)
                }
                _ => None,
            })
            .collect(),
        None => Vec::new(),
    };
    rates.sort_by(f64::total_cmp);
    let rate = rates.get(rates.len() / 2).copied();
    let needed = rate.map(|r| (r * timeout * (1.0 + target)) as u64);
    let lasting = kind.window_seconds().is_some_and(|s| s >= LASTING_SECONDS);
    let severity = if kind.count >= MANY || lasting {
        Severity::Warning
    } else {
        Severity::Info
    };
    let mut summary = format!(
        "PostgreSQL logged `checkpoints are occurring too frequently` {}: checkpoints were \
         forced by the volume of WAL instead of coming every {} s (checkpoint_timeout).",
        kind.describe(),
        timeout
    );
    if let Some(r) = rate {
        summary.push_str(&format!(
            " WAL was written at about {}/s between them (the median of {} warnings: \
             max_wal_size / (1 + checkpoint_completion_target) over the seconds apart)",
            human_bytes(r as u64),
            rates.len()
        ));
        if let Some(m) = max_wal {
            summary.push_str(&format!("; max_wal_size is {}", human_bytes(m)));
        }
        summary.push('.');
    }
    let advice = match (needed, max_wal) {
        (Some(n), Some(m)) if n > m => format!(
            "Raise max_wal_size to about {} (the WAL of one checkpoint_timeout of {timeout} s \
             at the observed rate, times 1 + checkpoint_completion_target {target}), with that \
             much room on pg_wal's file system; for a one-off bulk load, raise it for the load \
             only.",
            human_bytes(n)
        ),
        _ => "Raise max_wal_size so that one checkpoint_timeout of WAL fits in it (with the \
              room on pg_wal's file system), or spread the bulk writes that force checkpoints."
            .to_owned(),
    };
    let mut evidence = vec![crate::report::Evidence {
        path: kind.first.0.clone(),
        line: kind.first.1,
        what: "the first warning".to_owned(),
        key: None,
        host_file: None,
        host_line: None,
    }];
    if let Some((path, r)) = warnings.get(warnings.len() / 2) {
        evidence.push(record_evidence(path, r, "the warning of the median"));
    }
    evidence.extend(settings_evidence(
        facts,
        &["max_wal_size", "checkpoint_timeout"],
    ));
    let mut f = finding(
        &META,
        severity,
        format!(
            "Checkpoints forced by WAL volume {} time{}",
            kind.count,
            if kind.count == 1 { "" } else { "s" }
        ),
    )
    .summary(summary)
    .recommend(advice)
    .evidence(evidence)
    .figure("warnings", kind.count as f64)
    .impact(kind.count as f64);
    if let Some(r) = rate {
        f = f.figure("wal_bytes_per_second", r);
    }
    if let Some(n) = needed {
        f = f.figure("max_wal_size_needed_bytes", n as f64);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::Scratch;

    #[test]
    fn a_bulk_load_s_warnings_give_the_wal_rate_and_the_size_needed() {
        // Real capture: a bulk load under the default max_wal_size (1 GB), 3 warnings.
        let f = Scratch::incident("pg15-thp-always-hugepages-try")
            .run("checkpoints-too-frequent")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.figures["warnings"], 3.0);
        assert!(f.figures["wal_bytes_per_second"] > 1e6, "{:?}", f.figures);
        assert!(
            f.figures["max_wal_size_needed_bytes"] > 1024.0 * 1048576.0,
            "{:?}",
            f.figures
        );
        assert!(
            f.recommendation
                .unwrap()
                .contains("Raise max_wal_size to about")
        );
    }

    #[test]
    fn without_settings_the_rate_is_not_guessed() {
        let f = Scratch::new()
            .copy("postgresql.log", "formats/pglog/pg15-events.log")
            .run("checkpoints-too-frequent")
            .one();
        assert_eq!(f.figures["warnings"], 8.0);
        assert!(!f.figures.contains_key("wal_bytes_per_second"));
    }

    #[test]
    fn many_warnings_warn() {
        let log = std::fs::read_to_string(
            crate::rules::testing::fixtures().join("formats/pglog/pg15-events.log"),
        )
        .expect("the log");
        // The same load twice more: 24 warnings.
        let f = Scratch::new()
            .write("postgresql.log", format!("{log}{log}{log}"))
            .run("checkpoints-too-frequent")
            .one();
        assert_eq!(f.severity, Severity::Warning);
    }

    #[test]
    fn a_log_without_the_warning_is_silent() {
        assert!(
            Scratch::incident("pg15-sigkill-backend")
                .run("checkpoints-too-frequent")
                .silent()
        );
    }
}
