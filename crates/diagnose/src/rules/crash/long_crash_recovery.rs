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
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "long-crash-recovery",
    title: "Crash recovery kept the instance down long",
    severities: &[
        critical("for an outage of 300 s or more"),
        warning("for a redo, or an outage under 300 s, of 30 s or more"),
    ],
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

#[cfg(test)]
mod tests {
    use super::{CRITICAL_SECONDS, LONG_SECONDS};
    use crate::Severity;
    use crate::rules::testing::Scratch;

    const LOG: &str = "postgres/server.log";
    /// The crash line of the capture: 06:28:25.768 (ms of the day).
    const CRASH_MS: u64 = (6 * 3600 + 28 * 60 + 25) * 1000 + 768;
    /// Its outage: the crash to `ready to accept connections` at 06:29:00.464.
    const OUTAGE_MS: u64 = 34_696;

    /// Milliseconds of the day of a `2026-11-24 HH:MM:SS.mmm UTC` line.
    fn ms_of_day(line: &str) -> Option<u64> {
        let t = line.get(11..23)?;
        let n = |r: std::ops::Range<usize>| t.get(r)?.parse::<u64>().ok();
        Some(((n(0..2)? * 60 + n(3..5)?) * 60 + n(6..8)?) * 1000 + n(9..12)?)
    }

    /// The capture (a backend's `kill -9` with ~5 GB of WAL to replay) with every line after
    /// the crash moved so that the outage lasts `outage_ms`, and the redo's `elapsed:` set to
    /// `redo`.
    fn recovery(outage_ms: u64, redo: &str) -> Scratch {
        Scratch::incident("pg15-long-crash-recovery").edit(LOG, |log| {
            let mut out = String::new();
            for line in log.lines() {
                let line = match ms_of_day(line) {
                    Some(t) if t > CRASH_MS => {
                        let moved = CRASH_MS + (t - CRASH_MS) * outage_ms / OUTAGE_MS;
                        let (h, m, s, ms) = (
                            moved / 3_600_000,
                            moved / 60_000 % 60,
                            moved / 1000 % 60,
                            moved % 1000,
                        );
                        format!("{}{h:02}:{m:02}:{s:02}.{ms:03}{}", &line[..11], &line[23..])
                    }
                    _ => line.to_owned(),
                };
                out.push_str(&line.replace("elapsed: 30.47 s", &format!("elapsed: {redo} s")));
                out.push('\n');
            }
            out
        })
    }

    /// The rule's finding on `scratch`, if any: its severity and outage.
    fn verdict(scratch: &Scratch) -> Option<(Severity, f64)> {
        let f = scratch.run("long-crash-recovery").findings();
        f.first().map(|f| (f.severity, f.figures["outage_seconds"]))
    }

    #[test]
    fn thirty_seconds_replaying_five_gigabytes_is_long() {
        // Real capture: checkpoint_timeout 1h, max_wal_size 16GB, a bulk load, kill -9.
        let f = Scratch::incident("pg15-long-crash-recovery")
            .run("long-crash-recovery")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["outage_seconds"], 34.696);
        assert_eq!(f.figures["redo_seconds"], 30.47);
        // 30 s of redo at the rate this one showed.
        let rate = f.figures["redo_bytes_per_second"];
        assert!((f.figures["recommended_max_wal_size_bytes"] - 30.0 * rate).abs() < 1.0);
        assert!(f.recommendation.unwrap().contains("max_wal_size"));
    }

    #[test]
    fn the_outage_threshold_on_both_sides() {
        let long = (LONG_SECONDS * 1000.0) as u64;
        assert_eq!(
            verdict(&recovery(long, "29.99")),
            Some((Severity::Warning, LONG_SECONDS))
        );
        assert_eq!(verdict(&recovery(long - 1, "29.99")), None);
    }

    #[test]
    fn a_redo_of_thirty_seconds_is_long_whatever_the_outage() {
        assert!(matches!(
            verdict(&recovery((LONG_SECONDS * 1000.0) as u64 - 1, "30.00")),
            Some((Severity::Warning, _))
        ));
    }

    #[test]
    fn five_minutes_down_is_critical() {
        let critical = (CRITICAL_SECONDS * 1000.0) as u64;
        assert_eq!(
            verdict(&recovery(critical, "30.47")),
            Some((Severity::Critical, CRITICAL_SECONDS))
        );
        assert!(matches!(
            verdict(&recovery(critical - 1, "30.47")),
            Some((Severity::Warning, _))
        ));
    }

    #[test]
    fn a_crash_recovered_in_a_second_is_silent() {
        // Real capture: the postmaster OOM-killed and started again, redo of nothing.
        assert!(
            Scratch::incident("pg15-oom-kill-postmaster")
                .run("long-crash-recovery")
                .silent()
        );
    }
}
