//! ## What it finds
//! PostgreSQL met damaged data: a checksum that does not match (`page verification failed,
//! calculated checksum N but expected M`; `pg_stat_database.checksum_failures` above 0), an
//! invalid page header (`invalid page in block N of relation …`), a block shorter than a page
//! (`could not read block N … read only N of 8192 bytes`), a TOAST chunk missing (`missing
//! chunk number N for toast value N`), a tuple whose transaction ids are older than its table's
//! horizon (`found xmin N from before relfrozenxid N`), data after the relation's end
//! (`unexpected data beyond EOF`), or an allocation request no sane value asks for (`invalid
//! memory alloc request size N`: a damaged length word, most often). It names the relations
//! and blocks, counts each kind, and ties them to the storage errors the kernel logged.
//!
//! ## Why it matters
//! Queries that touch the damaged pages fail; VACUUM may stop on them, which holds back the
//! transaction horizon until wraparound; backups copy the damage; a standby replays it. The
//! cause (a disk or controller losing writes, a kernel or file-system bug, an fsync lie,
//! memory errors, a PostgreSQL bug) keeps damaging data until it is found.
//!
//! ## What to do
//! Copy the data directory before anything else. Find the cause (the kernel log's I/O and
//! hardware errors, the device's health, memory tests). Measure the damage (`pg_amcheck`,
//! `pg_checksums --check` on a stopped copy), then restore the damaged relations from a
//! backup or a healthy standby, or dump what can be read; `zero_damaged_pages` and
//! `ignore_checksum_failure` only on a copy, to salvage what remains.
//!
//! ## Thresholds
//! Any checksum failure, invalid page, short block, missing TOAST chunk, xid before the
//! horizon or data beyond EOF (critical); `invalid memory alloc request size` alone is a
//! warning with lower confidence (a query can ask for it too).
//!
//! ## Evidence it needs
//! The PostgreSQL log or `pg_stat_database`'s checksum failures; reads the kernel log when
//! present.
//!
//! ## Knowledge
//! [pg-checksums] (data checksums, `pg_checksums`, `pg_amcheck`, `checksum_failures`).

use pgmortem_parse::kernel::KernelEvent;
use pgmortem_parse::pglog::{PgEvent, PgRecord};

use crate::facts::Facts;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::places::record_evidence;
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "data-corruption",
    title: "PostgreSQL met damaged data (checksums, pages, TOAST, transaction ids)",
    severities: &[
        critical(
            "for checksum failures, invalid pages, short blocks, missing TOAST chunks, xids \
             before the horizon or data beyond EOF",
        ),
        warning("for `invalid memory alloc request size` alone"),
    ],
    needs: &[],
    uses: &[Input::PostgresLog, Input::KernelLog],
};

/// What a record says is damaged, and whether it is sure.
fn damage(event: &PgEvent) -> Option<(&'static str, bool)> {
    Some(match event {
        PgEvent::ChecksumFailure { .. } => ("checksum failure", true),
        PgEvent::InvalidPage { .. } => ("invalid page header", true),
        PgEvent::CouldNotReadBlock { error, .. } if error.contains("read only") => {
            ("block shorter than a page", true)
        }
        PgEvent::ToastChunkMissing { .. } => ("missing TOAST chunk", true),
        PgEvent::TupleXidCorruption { .. } => ("transaction id before the table's horizon", true),
        PgEvent::DataBeyondEof { .. } => ("data beyond the relation's end", true),
        PgEvent::InvalidAllocSize { .. } => ("invalid memory alloc request size", false),
        _ => return None,
    })
}

/// Where a record says the damage is: the relation (its file path as printed, or a TOAST
/// table's name) and the block, when it says so.
fn place(event: &PgEvent) -> Option<(String, Option<u64>)> {
    match event {
        PgEvent::InvalidPage { block, relation } | PgEvent::DataBeyondEof { block, relation } => {
            Some((relation.clone(), Some(*block)))
        }
        PgEvent::CouldNotReadBlock { block, path, .. } => Some((path.clone(), Some(*block))),
        PgEvent::ToastChunkMissing { relation, .. } => Some((relation.clone(), None)),
        _ => None,
    }
}

/// `base/16384/16385 block 7 (3 records), pg_toast_2619 (1 record)`: each damaged place the
/// records name, with its count, in first-seen order; five at most.
fn places_text(records: &[(&str, &PgRecord)]) -> Option<String> {
    let mut places: Vec<((String, Option<u64>), usize)> = Vec::new();
    for (_, r) in records {
        let Some(p) = r.event.as_ref().and_then(place) else {
            continue;
        };
        match places.iter_mut().find(|(q, _)| *q == p) {
            Some((_, n)) => *n += 1,
            None => places.push((p, 1)),
        }
    }
    if places.is_empty() {
        return None;
    }
    let shown: Vec<String> = places
        .iter()
        .take(5)
        .map(|((relation, block), n)| {
            format!(
                "{relation}{} ({n} record{})",
                block.map(|b| format!(" block {b}")).unwrap_or_default(),
                if *n == 1 { "" } else { "s" }
            )
        })
        .collect();
    let more = places.len().saturating_sub(5);
    Some(if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    })
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let records = facts.log.records(|e| damage(e).is_some());
    let counted: Vec<_> = facts
        .host
        .storage
        .databases
        .iter()
        .filter_map(|d| Some((d, d.checksum_failures.as_ref().filter(|k| k.value > 0)?)))
        .collect();
    if records.is_empty() && counted.is_empty() {
        return Vec::new();
    }
    // Each kind with its count, in first-seen order.
    let mut kinds: Vec<(&'static str, bool, usize)> = Vec::new();
    for (_, r) in &records {
        let Some((what, sure)) = r.event.as_ref().and_then(damage) else {
            continue;
        };
        match kinds.iter_mut().find(|k| k.0 == what) {
            Some(k) => k.2 += 1,
            None => kinds.push((what, sure, 1)),
        }
    }
    let sure = !counted.is_empty() || kinds.iter().any(|k| k.1);
    let mut parts: Vec<String> = kinds
        .iter()
        .map(|(what, _, n)| format!("{what} ×{n}"))
        .collect();
    let mut evidence: Vec<Evidence> = Vec::new();
    for (what, _, _) in &kinds {
        if let Some((path, r)) = records.iter().find(|(_, r)| {
            r.event
                .as_ref()
                .and_then(damage)
                .is_some_and(|d| d.0 == *what)
        }) {
            evidence.push(record_evidence(path, r, *what));
        }
    }
    for (d, k) in &counted {
        parts.push(format!(
            "pg_stat_database counts {} checksum failure{} in {}{}",
            k.value,
            if k.value == 1 { "" } else { "s" },
            if d.name.is_empty() {
                "shared objects".to_owned()
            } else {
                format!("database {}", crate::human::quote(&d.name))
            },
            d.checksum_last_failure
                .as_deref()
                .map(|t| format!(" (last at {t})"))
                .unwrap_or_default()
        ));
        evidence.push(k.evidence("checksum failures counted by the server"));
    }
    let mut summary = format!("{}.", crate::human::capitalised(&parts.join("; ")));
    if let Some(text) = places_text(&records) {
        summary.push_str(&format!(" Damaged: {text}."));
    }
    if let Some((_, r)) = records.first() {
        summary.push_str(&format!(
            " The first: {}.",
            crate::human::quote_cut(&r.message, 200)
        ));
    }
    let kernel = facts.kernel.records(|e| {
        matches!(
            e,
            KernelEvent::StorageError(_) | KernelEvent::HardwareError(_)
        )
    });
    if let Some(k) = kernel.first() {
        summary.push_str(&format!(
            " The kernel logged {} storage or hardware error{}: a likely cause.",
            kernel.len(),
            if kernel.len() == 1 { "" } else { "s" }
        ));
        evidence.push(k.evidence("the kernel's first storage or hardware error"));
    }
    if !sure {
        summary.push_str(
            " An invalid allocation size alone may also come from a query that asks for a \
             huge value: check the relation it read.",
        );
    }
    // The log's records and the server's counter tell of the same damaged reads: kept apart,
    // never added up.
    let logged: usize = kinds.iter().map(|k| k.2).sum();
    let counted_total: u64 = counted.iter().map(|(_, k)| k.value).sum();
    let mut f = finding(
        &META,
        if sure {
            Severity::Critical
        } else {
            Severity::Warning
        },
        format!(
            "Damaged data: {}",
            if kinds.is_empty() {
                "checksum failures counted by the server".to_owned()
            } else {
                kinds.iter().map(|k| k.0).collect::<Vec<_>>().join(", ")
            }
        ),
    )
    .summary(summary)
    .recommend(
        "Copy the data directory before anything else. Find the cause (the kernel log's \
             I/O and hardware errors, the device's health, a memory test). Measure the damage \
             with pg_amcheck, and pg_checksums --check on a stopped copy; restore the damaged \
             relations from a backup or a healthy standby, or dump what can still be read. \
             Use zero_damaged_pages or ignore_checksum_failure only on a copy, to salvage what \
             remains.",
    )
    .evidence(evidence)
    .confidence(if sure { 1.0 } else { 0.5 })
    .figure("damaged_records", logged as f64)
    .impact(logged.max(counted_total as usize) as f64);
    if !counted.is_empty() {
        f = f.figure("checksum_failures_counted", counted_total as f64);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::Scratch;

    /// Real: a relation's page damaged under data checksums (pglog-storage-faults.sh).
    const CHECKSUM_LOG: &str = "formats/pglog/pg15-storage-faults.log";
    /// Real: a stored value's length word overwritten, checksums off (pglog-alloc-corruption.sh).
    const ALLOC_LOG: &str = "formats/pglog/pg15-invalid-alloc-size.log";

    fn log_of(fixture: &str) -> Scratch {
        Scratch::new().copy("postgresql.log", fixture)
    }

    #[test]
    fn a_checksum_failure_is_critical() {
        let f = log_of(CHECKSUM_LOG).run("data-corruption").one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(f.title.contains("checksum failure"), "{}", f.title);
        assert!(f.summary.contains("invalid page header"), "{}", f.summary);
    }

    #[test]
    fn an_invalid_alloc_size_alone_is_a_warning() {
        let f = log_of(ALLOC_LOG).run("data-corruption").one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.confidence < 1.0);
    }

    /// Real capture: a page of `orders` overwritten under data checksums, three scans
    /// (incident-pg15-storage-data-corruption.sh).
    fn capture() -> Scratch {
        Scratch::incident("pg15-data-corruption")
    }

    #[test]
    fn the_capture_names_the_block_and_keeps_the_servers_count_apart() {
        let f = capture().run("data-corruption").one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(
            f.title,
            "Damaged data: checksum failure, invalid page header"
        );
        assert!(
            f.summary
                .starts_with("Checksum failure ×3; invalid page header ×3; pg_stat_database counts 3 checksum failures in database `shop`"),
            "{}",
            f.summary
        );
        assert!(
            f.summary
                .contains("Damaged: base/16384/16385 block 7 (3 records)."),
            "{}",
            f.summary
        );
        // Six log records, three reads the server counted: not nine.
        assert_eq!(f.figures["damaged_records"], 6.0);
        assert_eq!(f.figures["checksum_failures_counted"], 3.0);
        assert_eq!(f.evidence[0].line, 18);
        assert!(f.evidence[0].path.ends_with("postgres/server.log"));
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path.ends_with("postgres/checksum-failures.txt") && e.line == 6)
        );
    }

    #[test]
    fn the_servers_counter_alone_speaks_from_one_failure() {
        let counted = |n: u32| {
            capture()
                .remove("postgres/server.log")
                .edit("postgres/checksum-failures.txt", move |t| {
                    t.replace("shop|3|", &format!("shop|{n}|"))
                })
        };
        assert!(counted(0).run("data-corruption").silent());
        let f = counted(1).run("data-corruption").one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(
            f.title,
            "Damaged data: checksum failures counted by the server"
        );
        assert!(
            f.summary.contains("1 checksum failure in database `shop`"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn a_log_without_damage_is_silent() {
        assert!(
            Scratch::incident("pg15-sigkill-backend")
                .run("data-corruption")
                .silent()
        );
    }
}
