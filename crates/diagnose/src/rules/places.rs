//! What the storage rules share: which of PostgreSQL's places a file named in a log line is
//! in, the volume holding it described with `df`'s figures, what keeps WAL in pg_wal (slots,
//! a failing archiver), and the incident a log line is tied to.

use pgmortem_parse::pglog::PgRecord;

use crate::facts::{Facts, Volume};
use crate::human::human_bytes;
use crate::report::Evidence;

/// The place (`pg_wal`, `tablespace`, `data_directory`) of a file PostgreSQL named relative
/// to its data directory (`pg_wal/xlogtemp.123`, `base/5/16384`, `pg_tblspc/16385/…`), or by
/// an absolute path under one of the bundle's places.
pub(crate) fn place_of(facts: &Facts<'_>, file: &str) -> &'static str {
    let storage = &facts.host.storage;
    if file.starts_with('/') {
        // The longest place that holds it.
        let best = storage
            .volumes
            .iter()
            .flat_map(|v| &v.places)
            .filter(|p| file.starts_with(&p.path))
            .max_by_key(|p| p.path.len());
        if let Some(p) = best {
            return match p.role.as_str() {
                "pg_wal" => "pg_wal",
                "log_directory" => "log_directory",
                r if r.starts_with("tablespace") => "tablespace",
                _ => "data_directory",
            };
        }
    }
    if file.starts_with("pg_wal/") || file.starts_with("pg_xlog/") || file.contains("/pg_wal/") {
        "pg_wal"
    } else if file.starts_with("pg_tblspc/") {
        "tablespace"
    } else {
        "data_directory"
    }
}

/// `pg_wal` → `pg_wal`, `data_directory` → `the data directory`, for a person.
pub(crate) fn place_name(place: &str) -> &'static str {
    match place {
        "pg_wal" => "pg_wal",
        "tablespace" => "a tablespace",
        "log_directory" => "the log directory",
        _ => "the data directory",
    }
}

/// The volume holding `place`, when the bundle shows it (a tablespace: the first one).
pub(crate) fn volume_of<'f>(facts: &'f Facts<'_>, place: &str) -> Option<&'f Volume> {
    let storage = &facts.host.storage;
    match place {
        "tablespace" => storage
            .volumes
            .iter()
            .find(|v| v.places.iter().any(|p| p.role.starts_with("tablespace"))),
        _ => storage.volume_of(place),
    }
}

/// `/var/lib/postgresql/15/main (ext4 on /dev/loop0): 55 MB of 57 MB used (98%), 1.3 MB free`.
pub(crate) fn volume_text(v: &Volume) -> String {
    let what = match (&v.fs_type, &v.device) {
        (Some(t), Some(d)) => format!(" ({t} on {d})"),
        (None, Some(d)) => format!(" (on {d})"),
        (Some(t), None) => format!(" ({t})"),
        (None, None) => String::new(),
    };
    let use_text = match (&v.size_bytes, v.used_bytes, v.use_percent) {
        (Some(size), Some(used), Some(pct)) => format!(
            ": {} of {} used ({pct}%), {} free",
            human_bytes(used),
            human_bytes(size.value),
            human_bytes(v.available_bytes.unwrap_or(0))
        ),
        (Some(size), _, _) => format!(": {}", human_bytes(size.value)),
        _ => String::new(),
    };
    format!("{}{what}{use_text}", crate::human::quote(&v.mount_point))
}

/// Evidence for a volume: its `df` line, else its mountinfo line.
pub(crate) fn volume_evidence(v: &Volume, what: &str) -> Vec<Evidence> {
    v.size_bytes
        .as_ref()
        .map(|k| k.evidence(what))
        .or_else(|| v.read_only.as_ref().map(|k| k.evidence(what)))
        .into_iter()
        .collect()
}

/// A record's level as PostgreSQL prints it.
pub(crate) fn level_name(level: pgmortem_parse::pglog::Severity) -> &'static str {
    use pgmortem_parse::pglog::Severity as Level;
    match level {
        Level::Debug => "DEBUG",
        Level::Info => "INFO",
        Level::Notice => "NOTICE",
        Level::Warning => "WARNING",
        Level::Error => "ERROR",
        Level::Log => "LOG",
        Level::Fatal => "FATAL",
        Level::Panic => "PANIC",
    }
}

/// Evidence for a log record.
pub(crate) fn record_evidence(path: &str, record: &PgRecord, what: impl Into<String>) -> Evidence {
    Evidence {
        path: path.to_owned(),
        line: record.line,
        what: what.into(),
        key: None,
        host_file: None,
        host_line: None,
    }
}

/// The incident whose lines before the death include `path:line`, or whose recovery window
/// holds the record's time.
pub(crate) fn incident_of(facts: &Facts<'_>, path: &str, line: u64) -> Option<usize> {
    facts.incidents.iter().position(|i| {
        i.preceded_by
            .iter()
            .any(|l| l.path == path && l.line == line)
            || i.postgres_crash
                .as_ref()
                .is_some_and(|c| c.path == path && c.line == line)
    })
}

/// What keeps WAL in pg_wal: inactive slots and what they retain, a failing archiver and the
/// segments waiting for it, as sentences, with evidence; empty when nothing does.
pub(crate) fn wal_keepers(facts: &Facts<'_>) -> (Vec<String>, Vec<Evidence>) {
    let storage = &facts.host.storage;
    let mut said = Vec::new();
    let mut evidence = Vec::new();
    for slot in storage.slots.iter().flatten() {
        let Some(retained) = slot.retained_bytes.filter(|b| *b > 0) else {
            continue;
        };
        if slot.active == Some(true) {
            continue;
        }
        said.push(format!(
            "the inactive {} slot {} retains {} of WAL{}",
            slot.slot_type.as_deref().unwrap_or("replication"),
            crate::human::quote(&slot.name.value),
            human_bytes(retained.unsigned_abs()),
            slot.wal_status
                .as_deref()
                .map(|s| format!(" (wal_status {s})"))
                .unwrap_or_default()
        ));
        evidence.push(
            slot.name
                .evidence("an inactive replication slot retaining WAL"),
        );
    }
    if let Some(a) = &storage.archiver
        && a.failing == Some(true)
    {
        said.push(format!(
            "the archiver is failing (last failure {} at {}{})",
            a.last_failed_wal.as_deref().unwrap_or("?"),
            a.last_failed_time.as_deref().unwrap_or("?"),
            storage
                .pg_wal
                .as_ref()
                .and_then(|w| w.archive_ready)
                .filter(|n| *n > 0)
                .map(|n| format!("; {n} segments wait to be archived"))
                .unwrap_or_default()
        ));
        if let Some(k) = &a.archived_count {
            evidence
                .push(k.evidence("pg_stat_archiver: the last failure is after the last success"));
        }
    }
    (said, evidence)
}

/// The kernel's name of a device (`loop0`, `sdb`, `sdb1`, `nvme0n1`, `dm-0`, jbd2's `loop0-8`)
/// without a journal's `-N` inode suffix.
fn kernel_device(name: &str) -> &str {
    match name.rsplit_once('-') {
        Some((dev, inode))
            if !dev.is_empty()
                && !dev.starts_with("dm")
                && !inode.is_empty()
                && inode.bytes().all(|b| b.is_ascii_digit()) =>
        {
            dev
        }
        _ => name,
    }
}

/// True when the kernel's device `name` is the volume's device, or the disk it is a
/// partition of (`sdb` for `/dev/sdb1`, `nvme0n1` for `/dev/nvme0n1p2`).
pub(crate) fn on_device(volume: &Volume, name: &str) -> bool {
    let Some(device) = volume.device.as_deref() else {
        return false;
    };
    let device = device.strip_prefix("/dev/").unwrap_or(device);
    let name = kernel_device(name);
    if name.is_empty() {
        return false;
    }
    // A disk whose name ends in a digit numbers its partitions after a `p` (`loop0p1`,
    // `nvme0n1p2`); the others right after the name (`sdb1`).
    let separator = if name.ends_with(|c: char| c.is_ascii_digit()) {
        "p"
    } else {
        ""
    };
    device == name
        || device
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix(separator))
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// The volume holding one of PostgreSQL's places (not the log directory alone) that the
/// kernel's device `name` is.
pub(crate) fn postgres_volume_on<'f>(facts: &'f Facts<'_>, name: &str) -> Option<&'f Volume> {
    facts
        .host
        .storage
        .volumes
        .iter()
        .find(|v| on_device(v, name) && v.places.iter().any(|p| p.role != "log_directory"))
}

/// The roles a volume holds, for a person (`the data directory, pg_wal`).
pub(crate) fn roles_text(volume: &Volume) -> String {
    let names: Vec<String> = volume
        .places
        .iter()
        .map(|p| match p.role.as_str() {
            "data_directory" => "the data directory".to_owned(),
            "log_directory" => "the log directory".to_owned(),
            other => other.to_owned(),
        })
        .collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn volume(device: &str) -> Volume {
        Volume {
            places: Vec::new(),
            mount_point: "/srv".to_owned(),
            device: Some(device.to_owned()),
            fs_type: None,
            read_only: None,
            on_errors: None,
            size_bytes: None,
            used_bytes: None,
            available_bytes: None,
            use_percent: None,
            inodes_use_percent: None,
        }
    }

    #[test]
    fn kernel_devices_match_their_volume_or_its_disk() {
        assert!(on_device(&volume("/dev/loop0"), "loop0"));
        assert!(on_device(&volume("/dev/loop0"), "loop0-8"));
        assert!(on_device(&volume("/dev/sdb1"), "sdb"));
        assert!(on_device(&volume("/dev/nvme0n1p2"), "nvme0n1"));
        assert!(on_device(&volume("/dev/dm-0"), "dm-0"));
        assert!(!on_device(&volume("/dev/loop1"), "loop0"));
        assert!(!on_device(&volume("/dev/sdb1"), "sda"));
        assert!(!on_device(&volume("/dev/sdb1"), "sdb12"));
        assert!(!on_device(&volume("/dev/loop10"), "loop1"));
        assert!(on_device(&volume("/dev/loop0p1"), "loop0"));
        assert!(!on_device(&volume("/dev/loop0"), ""));
    }
}
