//! ## What it finds
//! The kernel logged I/O errors or file-system errors: the block layer (`I/O error, dev sdb,
//! sector N`), the buffer cache (`Buffer I/O error on dev sdb1, logical block N`), SCSI
//! failures and resets, ext4 and XFS errors, an aborted journal. Grouped by device, with the
//! first and last line and the count; a device that holds the data directory, pg_wal or a
//! tablespace (from `df` and mountinfo) is named with PostgreSQL's places on it, and tied to
//! the crash that followed when PostgreSQL's own lines before it name an I/O error.
//!
//! ## Why it matters
//! PostgreSQL trusts the storage to keep what it wrote. When a write fails below it, the
//! server PANICs at its next fsync (it cannot know what reached the disk) and crash recovery
//! replays WAL, which fails again while the device fails; a read error fails the query that
//! needs the page. The data on a failing device may be damaged already.
//!
//! ## What to do
//! Check the device first (SMART, the array's or the cloud volume's status, the kernel's first
//! error cited here); copy the data directory off a failing device before anything else;
//! replace the device or fail over to a standby, then check the data (`pg_amcheck`,
//! `pg_checksums --check` when data checksums are on).
//!
//! ## Thresholds
//! Critical: I/O or file-system errors on a device holding PostgreSQL's data directory, pg_wal
//! or a tablespace. Warning: such errors on a device the bundle does not tie to PostgreSQL's
//! files (no df or mountinfo with its places, or another device).
//!
//! ## Evidence it needs
//! The kernel log; reads the file systems (df, mountinfo, `storage/paths.txt`) and the
//! incidents when present.
//!
//! ## Knowledge
//! [kernel-storage] (block-layer, buffer and file-system error lines); [pg-fsync] (PostgreSQL
//! PANICs on an fsync failure since 11.2, 10.7: the kernel may have dropped the dirty pages).

use pgmortem_parse::kernel::{KernelEvent, StorageFailure};

use crate::facts::{Facts, KernelEventAt};
use crate::report::{Finding, Severity};
use crate::rules::places::{postgres_volume_on, roles_text, volume_text};
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "storage-io-error",
    title: "The kernel logged I/O or file-system errors",
    severities: &[
        critical("on a device holding PostgreSQL's files"),
        warning("on another device, or one the bundle does not place"),
    ],
    needs: &[Input::KernelLog],
    uses: &[Input::Storage, Input::PostgresLog],
};

fn is_io_error(event: &KernelEvent) -> bool {
    matches!(event, KernelEvent::StorageError(e)
    if matches!(
        e.failure,
        StorageFailure::IoError | StorageFailure::FilesystemError | StorageFailure::DeviceReset
    ))
}

fn device(event: &KernelEvent) -> String {
    match event {
        KernelEvent::StorageError(e) => e.device.clone().unwrap_or_default(),
        _ => String::new(),
    }
}

/// The kernel's name of a device without a journal's `-N` suffix and without `/dev/`.
fn disk_key(name: &str) -> String {
    name.trim_start_matches("/dev/").to_owned()
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let errors = facts.kernel.records(is_io_error);
    // By device, in order of first error; a device's own journal (`loop0-8`) and partitions go
    // with the volume PostgreSQL's places are on.
    let mut groups: Vec<(String, Vec<KernelEventAt<'_>>)> = Vec::new();
    for e in errors {
        let name = device(&e.record.event);
        let key = postgres_volume_on(facts, &name)
            .map_or_else(|| disk_key(&name), |v| v.mount_point.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, list)) => list.push(e),
            None => groups.push((key, vec![e])),
        }
    }
    let mut out = Vec::new();
    for (_, list) in groups {
        let first = list[0];
        let last = list[list.len() - 1];
        let name = device(&first.record.event);
        let volume = postgres_volume_on(facts, &name);
        let (severity, whose) = match volume {
            Some(v) => (
                Severity::Critical,
                format!(" It holds {}: {}.", roles_text(v), volume_text(v)),
            ),
            None if facts.host.storage.volumes.is_empty() => (
                Severity::Warning,
                " The bundle does not show which device holds PostgreSQL's files (no df or \
                 mountinfo with its places)."
                    .to_owned(),
            ),
            None => (
                Severity::Warning,
                " It holds none of PostgreSQL's places that the bundle shows.".to_owned(),
            ),
        };
        let shown = if name.is_empty() {
            "a device".to_owned()
        } else {
            name.clone()
        };
        let count = list.len();
        let mut summary = format!(
            "The kernel logged {count} I/O or file-system error{} on {shown}{}: first {}{}.{whose}",
            if count == 1 { "" } else { "s" },
            match (first.at, last.at) {
                (Some(a), Some(b)) if count > 1 => format!(" between {a} and {b}"),
                (Some(a), _) => format!(" at {a}"),
                _ => String::new(),
            },
            message(&first.record.event),
            if count > 1 {
                format!(", last {}", message(&last.record.event))
            } else {
                String::new()
            },
        );
        let mut evidence = vec![first.evidence("the first error on the device")];
        if count > 1 {
            evidence.push(last.evidence("the last error on the device"));
        }
        let mut f = finding(
            &META,
            severity,
            format!(
                "{count} I/O error{} on {shown}{}",
                if count == 1 { "" } else { "s" },
                volume.map_or_else(String::new, |v| format!(" ({})", roles_text(v)))
            ),
        );
        if let Some(v) = volume
            && let Some(k) = &v.size_bytes
        {
            evidence.push(k.evidence("df: the volume holding PostgreSQL's files"));
        }
        // The crash whose lines before the death name an I/O error.
        if volume.is_some()
            && let Some((index, line)) = facts.incidents.iter().enumerate().find_map(|(i, inc)| {
                inc.preceded_by
                    .iter()
                    .find(|l| {
                        l.message.contains("Input/output error") || l.message.contains("I/O error")
                    })
                    .map(|l| (i, l))
            })
        {
            summary.push_str(&format!(
                " PostgreSQL met it: {}.",
                crate::human::quote_cut(&line.message, 200)
            ));
            evidence.push(crate::report::Evidence {
                path: line.path.clone(),
                line: line.line,
                what: "PostgreSQL's error from the same device".to_owned(),
                key: None,
                host_file: None,
                host_line: None,
            });
            f = f.incident(index);
        }
        out.push(
            f.summary(summary)
                .recommend(ADVICE)
                .evidence(evidence)
                .figure("errors", count as f64)
                .confidence(if volume.is_some() { 1.0 } else { 0.6 })
                .impact(count as f64),
        );
    }
    out
}

fn message(event: &KernelEvent) -> String {
    match event {
        KernelEvent::StorageError(e) => crate::human::quote_cut(&e.message, 160),
        _ => String::new(),
    }
}

const ADVICE: &str = "Check the device first: its health (SMART, the array's or the cloud \
    volume's status) and the kernel's first error. Copy the data directory off a failing device \
    before anything else, replace the device or fail over to a standby, then check the data \
    (pg_amcheck; pg_checksums --check when data checksums are on).";

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::{Scratch, incident_archive};

    fn io_errors() -> Scratch {
        Scratch::bundle(&incident_archive("pg15-io-errors"))
    }

    #[test]
    fn errors_on_the_data_directorys_device_are_critical_and_tied() {
        // Real capture: the loop device under the data directory failed its writes; the
        // checkpointer's fsync PANICked.
        let f = io_errors().run("storage-io-error").one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(f.title.contains("loop0"), "{}", f.title);
        assert!(f.title.contains("the data directory"), "{}", f.title);
        assert!(f.summary.contains("Input/output error"), "{}", f.summary);
        assert!(f.incident.is_some());
    }

    #[test]
    fn errors_on_another_device_only_warn() {
        let elsewhere = io_errors()
            .edit("storage/mountinfo.txt", |t| {
                t.replace("/dev/loop0", "/dev/loop1")
            })
            .edit("storage/df.txt", |t| t.replace("/dev/loop0", "/dev/loop1"));
        let f = elsewhere.run("storage-io-error").one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.incident.is_none());
    }

    #[test]
    fn a_kernel_log_without_errors_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("storage-io-error")
                .silent()
        );
    }
}
