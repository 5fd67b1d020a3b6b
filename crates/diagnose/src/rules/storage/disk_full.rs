//! ## What it finds
//! A file system holding PostgreSQL's files ran out of space: the log says `No space left on
//! device` (in any language) for a file of the data directory, pg_wal or a tablespace (`could
//! not extend file "base/5/16384"`, `could not write to file "pg_wal/xlogtemp.N"`), or `df`
//! shows the volume of the data directory, pg_wal or a tablespace 95% full or more. It names
//! the file system with its size and use from `df`, pg_wal's size against `max_wal_size`, and
//! what keeps WAL there: an inactive replication slot and the WAL it retains, an archiver
//! that fails. A full pg_wal is a PANIC and a crash-restart (tied to the incident); a full data
//! directory makes every write fail while the server stays up.
//!
//! ## Why it matters
//! PostgreSQL cannot write WAL or extend a table on a full file system: inserts and updates
//! fail (`could not extend file`), and when WAL cannot be written the server PANICs, restarts,
//! and may not come back until room is made. It repeats as soon as the space fills again.
//!
//! ## What to do
//! Make room on the file system named, never by deleting files from pg_wal by hand (that
//! loses the database): drop or advance a replication slot nobody consumes
//! (`pg_drop_replication_slot`), fix the archive command so that pg_wal can recycle its
//! segments, set `max_slot_wal_keep_size` so that a slot can never fill the volume, remove
//! other files, or grow the volume. Give pg_wal a volume with room for `max_wal_size` and
//! more. Then watch the volume's use (alert at 80%).
//!
//! ## Thresholds
//! Critical: a `No space left on device` error for a file of the data directory, pg_wal or a
//! tablespace in the PostgreSQL log. Warning: no such error, but `df` shows the volume of one
//! of those places at 95% use or more when the bundle was collected.
//!
//! ## Evidence it needs
//! The PostgreSQL log or the file systems (`df`); reads the slots, the archiver, pg_wal's
//! listing and `max_wal_size` when present.
//!
//! ## Knowledge
//! [pg-wal] (pg_wal holds the WAL since the last checkpoint, up to `max_wal_size`, and more
//! while a slot or a failing archive command keeps segments); [pg-disk-full] (a full WAL disk
//! PANICs the server; a full data disk fails writes while reads go on).

use pgmortem_parse::pglog::{PgEvent, PgRecord};

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::places::{
    incident_of, place_name, place_of, record_evidence, volume_evidence, volume_of, volume_text,
    wal_keepers,
};
use crate::rules::support::settings_evidence;
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "disk-full",
    title: "A file system holding PostgreSQL's files is full",
    severities: &[
        critical("for a `No space left on device` error on PostgreSQL's files"),
        warning("for a volume at 95 % use or more with no such error logged"),
    ],
    needs: &[],
    uses: &[
        Input::PostgresLog,
        Input::Storage,
        Input::ReplicationSlots,
        Input::Archiver,
        Input::PgSettings,
    ],
};

/// Use, in percent, from which a volume of PostgreSQL's is called full without an error.
pub(crate) const FULL_PERCENT: u8 = 95;

/// The file a record says it could not write for want of space, when it says so.
pub(crate) fn no_space_file(event: &PgEvent) -> Option<&str> {
    match event {
        PgEvent::CouldNotExtendFile {
            path,
            no_space: true,
            ..
        }
        | PgEvent::CouldNotWrite {
            path,
            no_space: true,
            ..
        } => Some(path),
        _ => None,
    }
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let errors = facts.log.records(|e| no_space_file(e).is_some());
    let mut out = Vec::new();
    // One finding per place whose writes failed, most severe record first.
    let mut places: Vec<&'static str> = Vec::new();
    for (_, r) in &errors {
        let file = r.event.as_ref().and_then(no_space_file).unwrap_or("");
        let place = place_of(facts, file);
        if !places.contains(&place) {
            places.push(place);
        }
    }
    for place in &places {
        let mine: Vec<&(&str, &PgRecord)> = errors
            .iter()
            .filter(|(_, r)| {
                r.event
                    .as_ref()
                    .and_then(no_space_file)
                    .is_some_and(|f| place_of(facts, f) == *place)
            })
            .collect();
        out.push(full_with_errors(facts, place, &mine));
    }
    // Volumes nearly full with no error logged for them.
    for v in &facts.host.storage.volumes {
        let Some(pct) = v.use_percent.filter(|p| *p >= FULL_PERCENT) else {
            continue;
        };
        let holds: Vec<&str> = v
            .places
            .iter()
            .map(|p| p.role.as_str())
            .filter(|r| *r != "log_directory")
            .collect();
        if holds.is_empty()
            || holds.iter().any(|r| {
                let place = if r.starts_with("tablespace") {
                    "tablespace"
                } else {
                    r
                };
                places.contains(&place)
            })
        {
            continue;
        }
        out.push(
            finding(
                &META,
                Severity::Warning,
                format!("{} is {pct}% full", crate::human::quote(&v.mount_point)),
            )
            .summary(format!(
                "The file system of {} is {pct}% full when the bundle was collected: {}. \
                 PostgreSQL fails its writes when it fills (a PANIC and a restart when it \
                 holds pg_wal).",
                holds.join(", "),
                volume_text(v)
            ))
            .recommend(advice(facts, holds.contains(&"pg_wal")))
            .evidence(volume_evidence(v, "df: the volume's use"))
            .figure("use_percent", f64::from(pct))
            .impact(f64::from(pct)),
        );
    }
    out
}

fn full_with_errors(facts: &Facts<'_>, place: &str, records: &[&(&str, &PgRecord)]) -> Finding {
    let (path, first) = *records[0];
    let worst = records
        .iter()
        .max_by_key(|(_, r)| severity_rank(r))
        .map_or(first, |(_, r)| *r);
    let volume = volume_of(facts, place);
    let on = volume.map_or_else(
        || {
            format!(
                " The bundle has no df of {}: its file system is unknown.",
                place_name(place)
            )
        },
        |v| format!(" Its file system: {}.", volume_text(v)),
    );
    let mut summary = format!(
        "PostgreSQL could not write to {} for want of space {}: {}.{on}",
        place_name(place),
        crate::human::times(records.len()),
        crate::human::quote_cut(&worst.message, 200),
    );
    let mut evidence = vec![record_evidence(path, first, "No space left on device")];
    if !std::ptr::eq(worst, first) {
        let (wpath, _) = records
            .iter()
            .find(|(_, r)| std::ptr::eq(*r, worst))
            .map_or((path, first), |x| **x);
        evidence.push(record_evidence(wpath, worst, "the most severe of them"));
    }
    if let Some(v) = volume {
        evidence.extend(volume_evidence(v, "df: the volume's size and use"));
    }
    let mut f = finding(
        &META,
        Severity::Critical,
        format!(
            "{} full: PostgreSQL's writes failed with No space left on device",
            match volume {
                Some(v) => format!(
                    "{} ({})",
                    crate::human::quote(&v.mount_point),
                    place_name(place)
                ),
                None => place_name(place).to_owned(),
            }
        ),
    );
    if place == "pg_wal" {
        let (keepers, keeper_evidence) = wal_keepers(facts);
        if let Some(wal) = &facts.host.storage.pg_wal {
            let max = facts.host.postgres.bytes("max_wal_size");
            summary.push_str(&format!(
                " pg_wal holds {} segments{}{}.",
                wal.segments.value,
                wal.bytes
                    .map(|b| format!(" ({})", human_bytes(b)))
                    .unwrap_or_default(),
                max.map(|m| format!(" against a max_wal_size of {}", human_bytes(m)))
                    .unwrap_or_default()
            ));
            evidence.push(wal.segments.evidence("pg_wal's segments"));
            if let Some(b) = wal.bytes {
                f = f.figure("pg_wal_bytes", b as f64);
            }
        }
        if keepers.is_empty() {
            summary.push_str(
                " Nothing in the bundle shows a slot or an archiver keeping WAL: the volume may \
                 be too small for max_wal_size, or other files fill it.",
            );
        } else {
            summary.push_str(&format!(" What keeps WAL: {}.", keepers.join("; ")));
        }
        evidence.extend(keeper_evidence);
        evidence.extend(settings_evidence(facts, &["max_wal_size"]));
    }
    if let Some(v) = volume {
        if let Some(size) = &v.size_bytes {
            f = f.figure("volume_bytes", size.value as f64);
        }
        if let Some(avail) = v.available_bytes {
            f = f.figure("available_bytes", avail as f64);
        }
    }
    let tied = records
        .iter()
        .find_map(|(p, r)| incident_of(facts, p, r.line));
    if let Some(i) = tied {
        f = f.incident(i);
    }
    f.summary(summary)
        .recommend(advice(facts, place == "pg_wal"))
        .evidence(evidence)
        .figure("errors", records.len() as f64)
        .impact(records.len() as f64)
}

/// PANIC above FATAL above ERROR above the rest.
fn severity_rank(record: &PgRecord) -> u8 {
    use pgmortem_parse::pglog::Severity as Level;
    match record.severity {
        Some(Level::Panic) => 3,
        Some(Level::Fatal) => 2,
        Some(Level::Error) => 1,
        _ => 0,
    }
}

fn advice(facts: &Facts<'_>, wal: bool) -> String {
    let mut text = String::from(
        "Make room on that file system, never by deleting files from pg_wal by hand (that \
         loses the database).",
    );
    if wal {
        let (keepers, _) = wal_keepers(facts);
        if keepers.iter().any(|k| k.contains("slot")) {
            text.push_str(
                " Drop the replication slot nobody consumes (SELECT \
                 pg_drop_replication_slot('name')) or bring its consumer back, and set \
                 max_slot_wal_keep_size so that a slot can never fill the volume.",
            );
        }
        if keepers.iter().any(|k| k.contains("archiver")) {
            text.push_str(
                " Fix the archive command (its error is in the log): pg_wal keeps every \
                 segment not archived.",
            );
        }
        let max = facts.host.postgres.bytes("max_wal_size");
        if let Some(m) = max {
            text.push_str(&format!(
                " Give pg_wal a volume of at least twice max_wal_size ({}), with room for \
                 what slots may retain.",
                human_bytes(2 * m)
            ));
        }
    } else {
        text.push_str(
            " Remove what is not the database's, or grow the volume; VACUUM FULL and \
             REINDEX need free space themselves, so make room first.",
        );
    }
    text.push_str(" Then alert on the volume's use at 80%.");
    text
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::Scratch;

    use crate::rules::testing::incident_archive;

    fn bundle(name: &str) -> Scratch {
        Scratch::bundle(&incident_archive(name))
    }

    const DISK_FULL: &str = "pg15-disk-full";
    const SLOT_WAL_FULL: &str = "pg15-slot-wal-full";

    #[test]
    fn a_full_data_directory_names_its_file_system() {
        // Real capture: the data directory's 64 MB ext4 filled under a bulk load.
        let f = bundle(DISK_FULL).run("disk-full").one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(
            f.title.contains("/var/lib/postgresql/15/main"),
            "{}",
            f.title
        );
        assert!(f.summary.contains("could not extend file"), "{}", f.summary);
        assert!(f.summary.contains("(98%)"), "{}", f.summary);
        assert!(f.evidence.iter().any(|e| e.path == "storage/df.txt"));
        assert!(f.incident.is_none());
    }

    #[test]
    fn a_full_pg_wal_names_the_slot_that_filled_it() {
        // Real capture: an inactive physical slot kept every segment until pg_wal's own
        // 160 MB ext4 filled and the server PANICked.
        let f = bundle(SLOT_WAL_FULL).run("disk-full").one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(f.title.contains("walfs"), "{}", f.title);
        assert!(f.summary.contains("standby_gone"), "{}", f.summary);
        assert!(
            f.summary.contains("max_wal_size of 32 MiB"),
            "{}",
            f.summary
        );
        assert!(f.incident.is_some(), "tied to the crash-restart");
        assert!(
            f.recommendation
                .unwrap()
                .contains("pg_drop_replication_slot")
        );
    }

    #[test]
    fn a_volume_at_the_threshold_warns_and_below_it_does_not() {
        // The full data directory's df after its error lines are gone from the log.
        let at = bundle(DISK_FULL)
            .remove("postgres/server.log")
            .edit("storage/df.txt", |t| t.replace(" 98% ", " 95% "));
        let f = at.run("disk-full").one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.title.contains("95% full"), "{}", f.title);
        let below = bundle(DISK_FULL)
            .remove("postgres/server.log")
            .edit("storage/df.txt", |t| t.replace(" 98% ", " 94% "));
        assert!(below.run("disk-full").silent());
    }

    #[test]
    fn a_healthy_bundle_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("disk-full")
                .silent()
        );
    }
}
