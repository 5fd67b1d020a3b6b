//! ## What it finds
//! A file system holding the data directory, pg_wal or a tablespace went read-only: the
//! kernel remounted it after an error (`EXT4-fs (sdb1): Remounting filesystem read-only`, an
//! XFS shutdown, an aborted journal) or mountinfo shows it read-only now (`ro`, or ext4's
//! `emergency_ro` super-block flag under `errors=remount-ro`, while the mount itself still
//! says `rw`), or PostgreSQL's own writes to its data directory, pg_wal or a tablespace
//! failed with `Read-only file system` (EROFS: the file system was read-only when it wrote,
//! whatever made it so). It names the device, the mount point, PostgreSQL's places on it, the
//! kernel's error that started it and PostgreSQL's first failed write.
//!
//! ## Why it matters
//! PostgreSQL cannot write a read-only data directory or pg_wal: every write, every new
//! connection that needs a file, and the checkpointer fail (`Read-only file system`); when WAL
//! cannot be written the server PANICs and cannot start again until the file system is
//! repaired and mounted read-write. The error that made the kernel remount it (a disk failing,
//! file-system corruption) may have damaged data too.
//!
//! ## What to do
//! Read the kernel's first error for the device (cited) and the disk's health before anything
//! else; stop PostgreSQL, copy the data directory if the disk is failing, unmount and repair
//! the file system (`e2fsck -f`, `xfs_repair`), mount it read-write and start the server,
//! then check the data (`pg_amcheck`, `pg_checksums` when checksums are on).
//!
//! ## Thresholds
//! Critical: a volume of PostgreSQL's places read-only in mountinfo, a kernel read-only
//! remount or shutdown on its device, or a `Read-only file system` error of PostgreSQL's on a
//! file of its places (a relative path, or an absolute one under a place the bundle shows).
//! Warning: a read-only remount or shutdown in the kernel log when the bundle does not show
//! which device holds PostgreSQL's files and PostgreSQL logged no such error.
//!
//! ## Evidence it needs
//! The kernel log, the file systems (mountinfo, with `storage/paths.txt`) or the PostgreSQL
//! log.
//!
//! ## Knowledge
//! [kernel-storage] (ext4's `errors=remount-ro`, `emergency_ro`, XFS shutdowns, jbd2
//! journal aborts).

use pgmortem_parse::kernel::{KernelEvent, StorageFailure};
use pgmortem_parse::pglog::{PgEvent, PgRecord};

use crate::facts::{Facts, Volume};
use crate::report::{Evidence, Finding, Severity};
use crate::rules::places::{
    place_name, place_of, postgres_volume_on, record_evidence, roles_text, volume_of, volume_text,
};
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "filesystem-read-only",
    title: "A file system holding PostgreSQL's files went read-only",
    severities: &[
        critical(
            "for a volume of PostgreSQL's places read-only, or remounted read-only or shut down \
             by the kernel, or PostgreSQL's own writes refused as read-only",
        ),
        warning("for a read-only remount when the bundle does not show PostgreSQL's devices"),
    ],
    needs: &[],
    uses: &[Input::KernelLog, Input::Storage, Input::PostgresLog],
};

/// The file of a write PostgreSQL could not make because its file system was read-only.
fn read_only_file(event: &PgEvent) -> Option<&str> {
    match event {
        PgEvent::CouldNotWrite {
            path,
            read_only: true,
            ..
        }
        | PgEvent::CouldNotExtendFile {
            path,
            read_only: true,
            ..
        }
        | PgEvent::CouldNotFsync {
            path,
            read_only: true,
            ..
        }
        | PgEvent::CouldNotOpenFile {
            path,
            read_only: true,
            ..
        } => Some(path),
        _ => None,
    }
}

/// The place of PostgreSQL's a file is in: a path relative to the data directory, or an
/// absolute one under a place the bundle shows; `None` for other absolute paths (a socket
/// directory's lock file, a configuration file: a container's read-only root, not PostgreSQL's
/// data).
fn postgres_place(facts: &Facts<'_>, file: &str) -> Option<&'static str> {
    let placed = !file.starts_with('/')
        || facts
            .host
            .storage
            .volumes
            .iter()
            .flat_map(|v| &v.places)
            .any(|p| p.role != "log_directory" && file.starts_with(&p.path));
    placed
        .then(|| place_of(facts, file))
        .filter(|p| *p != "log_directory")
}

/// PostgreSQL's own `Read-only file system` errors on its places, with the place of each.
fn postgres_errors<'a>(facts: &Facts<'a>) -> Vec<(&'static str, &'a str, &'a PgRecord)> {
    facts
        .log
        .records(|e| read_only_file(e).is_some())
        .into_iter()
        .filter_map(|(path, r)| {
            let file = r.event.as_ref().and_then(read_only_file)?;
            Some((postgres_place(facts, file)?, path, r))
        })
        .collect()
}

/// The sentence and evidence of PostgreSQL's failed writes.
fn postgres_text(errors: &[&(&'static str, &str, &PgRecord)]) -> Option<(String, Evidence)> {
    let (_, path, first) = errors.first()?;
    Some((
        format!(
            " PostgreSQL's writes failed on it {}, the first: {}.",
            crate::human::times(errors.len()),
            crate::human::quote_cut(&first.message, 200)
        ),
        record_evidence(path, first, "PostgreSQL: Read-only file system"),
    ))
}

fn goes_read_only(event: &KernelEvent) -> bool {
    matches!(event, KernelEvent::StorageError(e)
        if matches!(e.failure, StorageFailure::ReadOnly | StorageFailure::Shutdown))
}

fn is_error(event: &KernelEvent) -> bool {
    matches!(event, KernelEvent::StorageError(e)
        if matches!(e.failure, StorageFailure::FilesystemError | StorageFailure::IoError))
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let remounts = facts.kernel.records(goes_read_only);
    let errors = facts.kernel.records(is_error);
    let pg_errors = postgres_errors(facts);
    let on_volume = |v: &Volume| -> Vec<&(&'static str, &str, &PgRecord)> {
        pg_errors
            .iter()
            .filter(|(place, _, _)| volume_of(facts, place).is_some_and(|pv| std::ptr::eq(pv, v)))
            .collect()
    };
    let device_of = |e: &KernelEvent| match e {
        KernelEvent::StorageError(s) => s.device.clone(),
        _ => None,
    };
    let mut out = Vec::new();
    // The volumes of PostgreSQL's places: read-only now, or remounted by the kernel.
    for v in &facts.host.storage.volumes {
        if v.places.iter().all(|p| p.role == "log_directory") {
            continue;
        }
        let now = v.read_only.as_ref().filter(|k| k.value);
        let kernel: Vec<_> = remounts
            .iter()
            .filter(|r| {
                device_of(&r.record.event).is_some_and(|d| {
                    postgres_volume_on(facts, &d).is_some_and(|pv| std::ptr::eq(pv, v))
                })
            })
            .collect();
        let pg_mine = on_volume(v);
        if now.is_none() && kernel.is_empty() && pg_mine.is_empty() {
            continue;
        }
        let first_error = errors.iter().find(|r| {
            device_of(&r.record.event).is_some_and(|d| {
                postgres_volume_on(facts, &d).is_some_and(|pv| std::ptr::eq(pv, v))
            })
        });
        let mut evidence: Vec<Evidence> = Vec::new();
        let mut summary = format!(
            "The file system of {} {}: {}.",
            roles_text(v),
            if now.is_some() {
                "is read-only when the bundle was collected"
            } else if kernel.is_empty() {
                "was read-only when PostgreSQL wrote (mountinfo shows it read-write now)"
            } else {
                "is read-only"
            },
            volume_text(v)
        );
        if let Some(k) = now {
            evidence.push(k.evidence("mountinfo: read-only"));
        }
        if let Some(e) = first_error {
            summary.push_str(&format!(
                " The kernel's first error on it: {}.",
                message(&e.record.event)
            ));
            evidence.push(e.evidence("the kernel's first error on the device"));
        }
        // The remount itself says it best; else the shutdown or the journal's abort.
        let remount = kernel
            .iter()
            .find(|r| {
                matches!(&r.record.event, KernelEvent::StorageError(e)
                    if e.failure == StorageFailure::ReadOnly)
            })
            .or(kernel.first());
        if let Some(r) = remount {
            summary.push_str(&format!(" Then: {}.", message(&r.record.event)));
            evidence.push(r.evidence("the kernel made the file system read-only"));
        }
        if let Some((text, e)) = postgres_text(&pg_mine) {
            summary.push_str(&text);
            evidence.push(e);
        }
        if v.on_errors.as_deref() == Some("remount-ro") {
            summary.push_str(
                " It is mounted errors=remount-ro: the kernel turns it read-only at its first \
                 error.",
            );
        }
        summary.push_str(
            " PostgreSQL cannot write there: writes, checkpoints and WAL fail (Read-only file \
             system) until it is repaired and mounted read-write.",
        );
        out.push(
            finding(
                &META,
                Severity::Critical,
                format!(
                    "{} is read-only ({})",
                    crate::human::quote(&v.mount_point),
                    roles_text(v)
                ),
            )
            .summary(summary)
            .recommend(ADVICE)
            .evidence(evidence)
            .impact(1.0),
        );
    }
    // PostgreSQL's errors on places the bundle does not show the file system of.
    let unplaced: Vec<_> = pg_errors
        .iter()
        .filter(|(place, _, _)| volume_of(facts, place).is_none())
        .collect();
    if let Some((place, _, _)) = unplaced.first()
        && let Some((text, e)) = postgres_text(&unplaced)
    {
        let mut summary = format!(
            "PostgreSQL could not write {}: its file system was read-only.{text}",
            place_name(place)
        );
        let mut evidence = vec![e];
        if let Some(r) = remounts.first() {
            summary.push_str(&format!(
                " The kernel log says {}.",
                message(&r.record.event)
            ));
            evidence.push(r.evidence("the kernel made a file system read-only"));
        }
        summary.push_str(
            " The bundle does not show that file system (no df or mountinfo with PostgreSQL's \
             places): find why it went read-only (the kernel log's I/O and file-system errors, \
             a volume mounted read-only, a container's read-only root) before restarting.",
        );
        out.push(
            finding(
                &META,
                Severity::Critical,
                format!(
                    "{} is on a read-only file system",
                    crate::human::capitalised(place_name(place))
                ),
            )
            .summary(summary)
            .recommend(ADVICE)
            .evidence(evidence)
            .impact(unplaced.len() as f64),
        );
        return out;
    }
    // Remounts on a device the bundle does not place.
    if facts.host.storage.volumes.is_empty()
        && let Some(r) = remounts.first()
    {
        out.push(
            finding(
                &META,
                Severity::Warning,
                format!(
                    "The kernel made a file system read-only: {}",
                    device_of(&r.record.event).unwrap_or_else(|| "a device".to_owned())
                ),
            )
            .summary(format!(
                "The kernel log says {} ({} such line{}). The bundle does not show which \
                 device holds PostgreSQL's files (no df or mountinfo with its places): if it is \
                 this one, PostgreSQL can no longer write there.",
                message(&r.record.event),
                remounts.len(),
                if remounts.len() == 1 { "" } else { "s" }
            ))
            .recommend(ADVICE)
            .evidence([r.evidence("the kernel made a file system read-only")])
            .confidence(0.5),
        );
    }
    out
}

fn message(event: &KernelEvent) -> String {
    match event {
        KernelEvent::StorageError(e) => crate::human::quote_cut(&e.message, 200),
        _ => String::new(),
    }
}

const ADVICE: &str = "Read the kernel's first error for the device and check the disk's \
    health first. Stop PostgreSQL, copy the data directory if the disk is failing, unmount and \
    repair the file system (e2fsck -f, xfs_repair), mount it read-write, start the server, then \
    check the data (pg_amcheck; pg_checksums --check when data checksums are on).";

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::{Scratch, incident_archive};

    fn read_only() -> Scratch {
        Scratch::bundle(&incident_archive("pg15-read-only-fs"))
    }

    #[test]
    fn the_remounted_data_directory_is_critical() {
        // Real capture: ext4 on a loop device, errors=remount-ro, an error triggered under
        // load: `Remounting filesystem read-only`, mountinfo's emergency_ro.
        let f = read_only().run("filesystem-read-only").one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(
            f.title.contains("/var/lib/postgresql/15/main"),
            "{}",
            f.title
        );
        assert!(f.summary.contains("trigger_test_error"), "{}", f.summary);
        assert!(
            f.summary.contains("Remounting filesystem read-only"),
            "{}",
            f.summary
        );
        assert!(f.summary.contains("errors=remount-ro"), "{}", f.summary);
        assert!(f.evidence.iter().any(|e| e.path == "storage/mountinfo.txt"));
    }

    #[test]
    fn mountinfo_alone_is_enough_and_a_rw_mount_is_not() {
        let only_mounts = read_only()
            .remove("kernel/dmesg.txt")
            .remove("kernel/dmesg-T.txt");
        let f = only_mounts.run("filesystem-read-only").one();
        assert_eq!(f.severity, Severity::Critical);
        let writable = read_only()
            .remove("kernel/dmesg.txt")
            .remove("kernel/dmesg-T.txt")
            .remove("postgres/server.log")
            .edit("storage/mountinfo.txt", |t| t.replace(",emergency_ro", ""));
        assert!(writable.run("filesystem-read-only").silent());
    }

    #[test]
    fn a_remount_of_another_device_is_silent() {
        let elsewhere = read_only()
            .remove("postgres/server.log")
            .edit("storage/mountinfo.txt", |t| t.replace(",emergency_ro", ""))
            .edit("storage/mountinfo.txt", |t| {
                t.replace("/dev/loop0", "/dev/loop1")
            })
            .edit("storage/df.txt", |t| t.replace("/dev/loop0", "/dev/loop1"));
        assert!(elsewhere.run("filesystem-read-only").silent());
    }

    /// Real log: the read-only data directory's server log of pg15-read-only-fs.
    const LOG: &str = "formats/pglog-storage/pg15-read-only-fs.log";

    #[test]
    fn the_capture_cites_postgresqls_own_failed_writes() {
        let f = read_only().run("filesystem-read-only").one();
        assert!(
            f.summary.contains(
                "the first: `could not open file \"base/5/2601\": Read-only file system`"
            ),
            "{}",
            f.summary
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path == "postgres/server.log" && e.what.contains("Read-only")),
            "{:?}",
            f.evidence
        );
    }

    #[test]
    fn postgresqls_errors_alone_are_critical() {
        let f = Scratch::new()
            .copy("postgresql.log", LOG)
            .run("filesystem-read-only")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.title, "The data directory is on a read-only file system");
        assert!(f.summary.contains("base/5/2601"), "{}", f.summary);
    }

    #[test]
    fn a_read_only_file_outside_postgresqls_places_is_silent() {
        // The same lines naming a file outside the data directory (a socket directory's lock
        // file on a container's read-only root): not PostgreSQL's data.
        let elsewhere = Scratch::new()
            .copy("postgresql.log", LOG)
            .edit("postgresql.log", |t| {
                t.replace(
                    "\"base/5/2601\"",
                    "\"/var/run/postgresql/.s.PGSQL.5432.lock\"",
                )
            });
        assert!(elsewhere.run("filesystem-read-only").silent());
    }

    #[test]
    fn postgresqls_errors_on_a_volume_now_read_write_still_count() {
        // mountinfo read-write again, no kernel log: PostgreSQL's failed writes say it was not.
        let f = read_only()
            .remove("kernel/dmesg.txt")
            .remove("kernel/dmesg-T.txt")
            .edit("storage/mountinfo.txt", |t| t.replace(",emergency_ro", ""))
            .run("filesystem-read-only")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(
            f.summary.contains("mountinfo shows it read-write now"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn a_healthy_bundle_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("filesystem-read-only")
                .silent()
        );
    }
}
