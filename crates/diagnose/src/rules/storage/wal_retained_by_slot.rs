//! ## What it finds
//! A replication slot nobody consumes (inactive) that keeps more WAL than `max_wal_size`, or
//! more than a tenth of the file system pg_wal is on, or whose WAL is already `unreserved` or
//! `lost`. A slot keeps every WAL segment from its `restart_lsn` on, whatever `max_wal_size`
//! says, until its consumer (a standby, a logical subscriber, a backup tool) reads them.
//!
//! ## Why it matters
//! The WAL a forgotten slot keeps grows with every write until pg_wal's file system fills;
//! then PostgreSQL PANICs and restarts, and cannot write again until room is made. A slot
//! whose WAL was removed (`lost`, under `max_slot_wal_keep_size`) can no longer serve its
//! consumer, which must be rebuilt.
//!
//! ## What to do
//! Bring the consumer back, or drop the slot (`SELECT pg_drop_replication_slot('name')`) when
//! nothing will use it again. Set `max_slot_wal_keep_size` (PostgreSQL 13+) below pg_wal's
//! free room, so that a slot can never fill the volume (it is then invalidated instead), and
//! alert on `pg_replication_slots` where `active` is false.
//!
//! ## Thresholds
//! An inactive slot retaining more than `max_wal_size` (1 GB when unknown) or more than 10% of
//! pg_wal's file system; or any slot with `wal_status` `unreserved` or `lost`. Critical when
//! pg_wal's file system was full (`No space left on device` for a pg_wal file in the log) or
//! is 90% used or more, or when the slot is `lost` (the WAL it needed is gone); warning
//! otherwise.
//!
//! ## Evidence it needs
//! The replication slots (`pg_replication_slots` with retained bytes); reads `max_wal_size`,
//! pg_wal's file system and the log when present.
//!
//! ## Knowledge
//! [pg-slots], [pg-wal], [pg-disk-full].

use crate::facts::{Facts, SlotFacts};
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::places::{volume_evidence, volume_of, volume_text};
use crate::rules::storage::disk_full::no_space_file;
use crate::rules::support::settings_evidence;
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "wal-retained-by-slot",
    title: "A replication slot nobody consumes keeps WAL",
    severities: &[
        critical("when pg_wal's file system was full or is 90 % used or more, or the slot is lost"),
        warning("otherwise"),
    ],
    needs: &[Input::ReplicationSlots],
    uses: &[Input::PgSettings, Input::Storage, Input::PostgresLog],
};

/// `max_wal_size` when the settings do not say (PostgreSQL's default).
const DEFAULT_MAX_WAL_BYTES: u64 = 1 << 30;

/// Share of pg_wal's file system an inactive slot may keep before this rule speaks.
const VOLUME_SHARE: f64 = 0.10;

/// pg_wal's use, in percent, from which a slot keeping WAL is critical.
const CRITICAL_PERCENT: u8 = 90;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(slots) = &facts.host.storage.slots else {
        return Vec::new();
    };
    let max_wal = facts
        .host
        .postgres
        .bytes("max_wal_size")
        .unwrap_or(DEFAULT_MAX_WAL_BYTES);
    let volume = volume_of(facts, "pg_wal");
    let volume_bytes = volume.and_then(|v| v.size_bytes.as_ref()).map(|k| k.value);
    let wal_full_logged = facts
        .log
        .records(|e| {
            no_space_file(e).is_some_and(|f| crate::rules::places::place_of(facts, f) == "pg_wal")
        })
        .first()
        .map(|(path, r)| (path.to_owned(), r.line));
    let mut out = Vec::new();
    for slot in slots {
        let retained = slot.retained_bytes.unwrap_or(0).max(0) as u64;
        let status = slot.wal_status.as_deref().unwrap_or("");
        let lost = matches!(status, "unreserved" | "lost");
        let over_max = retained > max_wal;
        let over_share = volume_bytes.is_some_and(|v| retained as f64 > v as f64 * VOLUME_SHARE);
        if !(lost || (slot.active != Some(true) && (over_max || over_share))) {
            continue;
        }
        let nearly_full = volume
            .and_then(|v| v.use_percent)
            .is_some_and(|p| p >= CRITICAL_PERCENT);
        let critical = wal_full_logged.is_some() || nearly_full || status == "lost";
        let severity = if critical {
            Severity::Critical
        } else {
            Severity::Warning
        };
        let mut summary = format!(
            "The {} slot {} is {} and retains {} of WAL{} (max_wal_size is {}).",
            slot.slot_type.as_deref().unwrap_or("replication"),
            crate::human::quote(&slot.name.value),
            activity(slot),
            human_bytes(retained),
            if status.is_empty() {
                String::new()
            } else {
                format!(", wal_status `{status}`")
            },
            human_bytes(max_wal),
        );
        let mut evidence = vec![slot.name.evidence("the slot and the WAL it retains")];
        if let Some(v) = volume {
            summary.push_str(&format!(" pg_wal's file system: {}.", volume_text(v)));
            evidence.extend(volume_evidence(v, "df: pg_wal's file system"));
        }
        if let Some((path, line)) = &wal_full_logged {
            summary.push_str(
                " pg_wal's file system filled: PostgreSQL could not write WAL (No space left \
                 on device).",
            );
            evidence.push(crate::report::Evidence {
                path: (*path).to_owned(),
                line: *line,
                what: "No space left on device in pg_wal".to_owned(),
                key: None,
                host_file: None,
                host_line: None,
            });
        }
        if status == "lost" {
            summary.push_str(
                " Its WAL is already removed: its consumer cannot resume from it and must be \
                 rebuilt.",
            );
        }
        evidence.extend(settings_evidence(
            facts,
            &["max_wal_size", "max_slot_wal_keep_size"],
        ));
        let cap = volume_bytes.map(|v| v.saturating_sub(2 * max_wal));
        let mut advice = format!(
            "Bring the slot's consumer back, or drop the slot if nothing will use it again: \
             SELECT pg_drop_replication_slot('{}');",
            slot.name.value
        );
        match cap.filter(|c| *c > 0) {
            Some(c) => advice.push_str(&format!(
                " Set max_slot_wal_keep_size to at most {} (pg_wal's file system less twice \
                 max_wal_size), so that a slot is invalidated before it fills the volume.",
                human_bytes(c)
            )),
            None => advice.push_str(
                " Set max_slot_wal_keep_size (PostgreSQL 13+) below pg_wal's free room, so \
                 that a slot is invalidated before it fills the volume.",
            ),
        }
        advice.push_str(" Alert on inactive slots (pg_replication_slots.active = false).");
        out.push(
            finding(
                &META,
                severity,
                format!(
                    "Replication slot {} keeps {} of WAL",
                    crate::human::quote(&slot.name.value),
                    human_bytes(retained)
                ),
            )
            .summary(summary)
            .recommend(advice)
            .evidence(evidence)
            .figure("retained_bytes", retained as f64)
            .figure("max_wal_size_bytes", max_wal as f64)
            .impact(retained as f64),
        );
    }
    out
}

fn activity(slot: &SlotFacts) -> String {
    match (slot.active, &slot.inactive_since) {
        (Some(true), _) => "active".to_owned(),
        (_, Some(since)) => format!("inactive since {since}"),
        (Some(false), None) => "inactive".to_owned(),
        (None, None) => "of unknown activity".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::Scratch;

    fn slot_wal_full() -> Scratch {
        Scratch::bundle(&crate::rules::testing::incident_archive(
            "pg15-slot-wal-full",
        ))
    }

    #[test]
    fn the_slot_that_filled_pg_wal_is_critical() {
        // Real capture: the inactive slot `standby_gone` kept 95 MB of WAL on pg_wal's own
        // 144 MiB file system until it filled and the server PANICked.
        let f = slot_wal_full().run("wal-retained-by-slot").one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(f.title.contains("standby_gone"), "{}", f.title);
        assert!(f.summary.contains("inactive"), "{}", f.summary);
        assert!(f.summary.contains("could not write WAL"), "{}", f.summary);
        assert!(
            f.recommendation
                .unwrap()
                .contains("pg_drop_replication_slot('standby_gone')")
        );
    }

    #[test]
    fn without_the_full_disk_the_same_slot_warns() {
        let f = slot_wal_full()
            .remove("postgres/server.log")
            .run("wal-retained-by-slot")
            .one();
        assert_eq!(f.severity, Severity::Warning);
    }

    #[test]
    fn an_active_slot_or_one_under_the_thresholds_is_silent() {
        let active = slot_wal_full()
            .remove("postgres/server.log")
            .edit("postgres/replication-slots.txt", |t| {
                t.replace("standby_gone|physical||f|f|", "standby_gone|physical||f|t|")
            });
        assert!(active.run("wal-retained-by-slot").silent());
        // 10 MB: under max_wal_size (32 MB) and under a tenth of the 144 MiB file system.
        let small = slot_wal_full()
            .remove("postgres/server.log")
            .edit("postgres/replication-slots.txt", |t| {
                t.replace("||95418808|", "||10485760|")
            });
        assert!(small.run("wal-retained-by-slot").silent());
    }

    #[test]
    fn no_slot_is_silent() {
        assert!(
            Scratch::bundle(&crate::rules::testing::incident_archive("pg15-disk-full"))
                .run("wal-retained-by-slot")
                .silent()
        );
    }
}
