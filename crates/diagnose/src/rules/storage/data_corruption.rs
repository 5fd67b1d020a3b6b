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
use pgmortem_parse::pglog::PgEvent;

use crate::facts::Facts;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::places::record_evidence;
use crate::rules::{Input, RuleMeta, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "data-corruption",
    title: "PostgreSQL met damaged data (checksums, pages, TOAST, transaction ids)",
    severity: Severity::Critical,
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
                format!("database {}", d.name)
            },
            d.checksum_last_failure
                .as_deref()
                .map(|t| format!(" (last at {t})"))
                .unwrap_or_default()
        ));
        evidence.push(k.evidence("checksum failures counted by the server"));
    }
    let mut summary = format!("{}.", parts.join("; "));
    if let Some((_, r)) = records.first() {
        summary.push_str(&format!(
            " The first: `{}`.",
            crate::human::cut(&r.message, 200)
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
    let total: usize = kinds.iter().map(|k| k.2).sum::<usize>()
        + counted.iter().map(|(_, k)| k.value as usize).sum::<usize>();
    vec![
        finding(
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
        .figure("damaged_records", total as f64)
        .impact(total as f64),
    ]
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

    #[test]
    fn a_log_without_damage_is_silent() {
        assert!(
            Scratch::incident("pg15-sigkill-backend")
                .run("data-corruption")
                .silent()
        );
    }
}
