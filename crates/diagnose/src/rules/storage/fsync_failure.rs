//! ## What it finds
//! PostgreSQL could not fsync a file (`PANIC: could not fsync file "base/5/16384":
//! Input/output error`, or `… No space left on device` on network and thin storage), in any
//! language. Since 10.7/11.2, PostgreSQL PANICs at such a failure (unless `data_sync_retry` is
//! on): the kernel may already have dropped the dirty pages it could not write, so the server
//! restarts and replays WAL instead of trusting them. Tied to the crash-restart that follows,
//! with the storage errors the kernel logged for the same device when there are any.
//!
//! ## Why it matters
//! A failed fsync means the storage did not keep what PostgreSQL wrote. The restart replays
//! WAL to write it again; if the device keeps failing, recovery fails the same way and the
//! server stays down. Data written to a device that loses writes may be damaged.
//!
//! ## What to do
//! Check the storage under the file named (the kernel log's I/O errors, the device's health,
//! a full thin pool or cloud volume) before trusting the server again; keep `data_sync_retry`
//! off; after the device is fixed, check the data (`pg_amcheck`, `pg_checksums --check` when
//! data checksums are on).
//!
//! ## Thresholds
//! Any `could not fsync file` record in the PostgreSQL log: critical when it is a PANIC (or
//! tied to a crash), warning otherwise (an ERROR with `data_sync_retry` on).
//!
//! ## Evidence it needs
//! The PostgreSQL log; reads the kernel log's storage errors and the file systems when present.
//!
//! ## Knowledge
//! [pg-fsync], [kernel-storage].

use pgmortem_parse::kernel::KernelEvent;
use pgmortem_parse::pglog::{PgEvent, Severity as Level};

use crate::facts::Facts;
use crate::human::{quote, quote_cut};
use crate::report::{Finding, Severity};
use crate::rules::places::{
    incident_of, place_name, place_of, record_evidence, volume_of, volume_text,
};
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "fsync-failure",
    title: "PostgreSQL could not fsync a file: the storage lost writes",
    severities: &[
        critical("for a PANIC, or one tied to a crash"),
        warning("for an ERROR (data_sync_retry on)"),
    ],
    needs: &[Input::PostgresLog],
    uses: &[Input::KernelLog, Input::Storage],
};

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let failures = facts
        .log
        .records(|e| matches!(e, PgEvent::CouldNotFsync { .. }));
    let Some((path, first)) = failures.first().copied() else {
        return Vec::new();
    };
    let Some(PgEvent::CouldNotFsync {
        path: file,
        error,
        io_error,
        no_space,
        ..
    }) = &first.event
    else {
        return Vec::new();
    };
    let panicked = failures
        .iter()
        .any(|(_, r)| r.severity == Some(Level::Panic));
    let incident = failures
        .iter()
        .find_map(|(p, r)| incident_of(facts, p, r.line));
    let place = place_of(facts, file);
    let why = if *io_error {
        "the device returned an I/O error"
    } else if *no_space {
        "the storage had no space left to write it (a thin pool, a network or cloud volume)"
    } else {
        "the storage refused it"
    };
    let mut summary = format!(
        "PostgreSQL could not fsync {} ({}) {}: {}: {why}.",
        quote(file),
        place_name(place),
        crate::human::times(failures.len()),
        quote_cut(error, 120),
    );
    let mut evidence = vec![record_evidence(path, first, "could not fsync")];
    if let Some(v) = volume_of(facts, place) {
        summary.push_str(&format!(" Its file system: {}.", volume_text(v)));
    }
    let kernel = facts
        .kernel
        .records(|e| matches!(e, KernelEvent::StorageError(_)));
    if let Some(k) = kernel.first() {
        summary.push_str(&format!(
            " The kernel logged {} storage error{}, the first: {}.",
            kernel.len(),
            if kernel.len() == 1 { "" } else { "s" },
            match &k.record.event {
                KernelEvent::StorageError(s) => quote_cut(&s.message, 160),
                _ => String::new(),
            }
        ));
        evidence.push(k.evidence("the kernel's first storage error"));
    }
    if panicked {
        summary.push_str(
            " PostgreSQL PANICked: the kernel may have dropped the pages it could not write, \
             so the server restarts and replays WAL rather than trust them.",
        );
    }
    let mut f = finding(
        &META,
        if panicked || incident.is_some() {
            Severity::Critical
        } else {
            Severity::Warning
        },
        format!(
            "fsync of {} failed: {}",
            place_name(place),
            quote_cut(error, 60)
        ),
    )
    .summary(summary)
    .recommend(
        "Check the storage under that file before trusting the server again: the kernel log's \
         I/O errors, the device's health, a full thin pool or cloud volume. Keep \
         data_sync_retry off. Once the device is fixed, check the data (pg_amcheck; \
         pg_checksums --check when data checksums are on).",
    )
    .evidence(evidence)
    .figure("failures", failures.len() as f64)
    .impact(failures.len() as f64);
    if let Some(i) = incident {
        f = f.incident(i);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::{Scratch, incident_archive};

    #[test]
    fn the_checkpointers_fsync_panic_is_tied_to_its_crash() {
        // Real capture: the loop device under the data directory failed its writes.
        let f = Scratch::bundle(&incident_archive("pg15-io-errors"))
            .run("fsync-failure")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(f.summary.contains("16384_fsm"), "{}", f.summary);
        assert!(f.summary.contains("I/O error"), "{}", f.summary);
        assert!(f.incident.is_some());
    }

    #[test]
    fn an_error_without_a_panic_or_crash_only_warns() {
        // The capture's line as an ERROR (data_sync_retry on), alone in its log.
        let f = Scratch::new()
            .write(
                "postgresql.log",
                "2026-11-28 16:04:42.120 UTC [24714] ERROR:  could not fsync file \"base/5/16384_fsm\": Input/output error\n",
            )
            .run("fsync-failure")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.incident.is_none());
    }

    #[test]
    fn a_log_without_fsync_failures_is_silent() {
        assert!(
            Scratch::bundle(&incident_archive("pg15-disk-full"))
                .run("fsync-failure")
                .silent()
        );
    }
}
