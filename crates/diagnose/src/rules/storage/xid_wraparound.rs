//! ## What it finds
//! Transaction-id (or multixact) wraparound coming or reached: PostgreSQL refused commands
//! (`database is not accepting commands to avoid wraparound data loss in database "X"`, 17+:
//! `… that assign new transaction IDs …`), warned (`database "X" must be vacuumed within N
//! transactions`), or a database's `age(datfrozenxid)` is past a billion: half-way to the
//! 2^31 limit, far past `autovacuum_freeze_max_age`, so autovacuum has not been able to freeze
//! it.
//!
//! ## Why it matters
//! Transaction ids are 32 bits and compared modulo 2^31: before a table's oldest unfrozen id
//! falls more than about two billion transactions behind, PostgreSQL stops assigning new ones,
//! and every write fails until the database is vacuumed (in single-user mode before 14, which
//! can take hours on a large database). What holds the horizon back (a long transaction, an
//! abandoned replication slot or prepared transaction, a table autovacuum cannot finish) keeps
//! doing it.
//!
//! ## What to do
//! Find what holds the horizon: `pg_stat_activity` (oldest `backend_xmin`),
//! `pg_replication_slots` (`xmin`, `catalog_xmin`), `pg_prepared_xacts`; end it. Then VACUUM
//! (FREEZE) the oldest tables of the database named (`SELECT relname, age(relfrozenxid) FROM
//! pg_class ORDER BY 2 DESC`), with `vacuum_cost_delay` 0; from 14 a plain VACUUM works even
//! after the refusal. Watch `age(datfrozenxid)` and alert at 500 million.
//!
//! ## Thresholds
//! Critical: a refusal or a `must be vacuumed within` warning in the log, or an age of 1.6
//! billion or more (`vacuum_failsafe_age`'s default). Warning: an age of a billion or more.
//!
//! ## Evidence it needs
//! The PostgreSQL log or the databases' ages (`postgres/database-xid-ages.txt`); reads
//! `autovacuum_freeze_max_age` when present.
//!
//! ## Knowledge
//! [pg-wraparound] (routine vacuuming: preventing transaction ID wraparound failures).

use pgmortem_parse::pglog::PgEvent;

use crate::facts::Facts;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::places::record_evidence;
use crate::rules::support::settings_evidence;
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "xid-wraparound",
    title: "Transaction-id wraparound: PostgreSQL refuses or will refuse writes",
    severities: &[
        critical(
            "for a refusal or a `must be vacuumed within` warning, or an age of 1.6 billion or \
             more",
        ),
        warning("for an age of a billion or more"),
    ],
    needs: &[],
    uses: &[Input::PostgresLog, Input::DatabaseAges, Input::PgSettings],
};

/// `age(datfrozenxid)` from which the rule warns: half-way to the 2^31 limit.
pub(crate) const WARN_AGE: u64 = 1_000_000_000;

/// `age(datfrozenxid)` from which it is critical: `vacuum_failsafe_age`'s default (14+).
pub(crate) const CRITICAL_AGE: u64 = 1_600_000_000;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let refused = facts
        .log
        .records(|e| matches!(e, PgEvent::WraparoundRefused { .. }));
    let warned = facts
        .log
        .records(|e| matches!(e, PgEvent::WraparoundWarning { .. }));
    let oldest = facts
        .host
        .storage
        .databases
        .iter()
        .filter_map(|d| Some((d, d.xid_age.as_ref()?)))
        .max_by_key(|(_, k)| k.value);
    let old = oldest.filter(|(_, k)| k.value >= WARN_AGE);
    if refused.is_empty() && warned.is_empty() && old.is_none() {
        return Vec::new();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut evidence: Vec<Evidence> = Vec::new();
    let db_of = |e: &PgEvent| match e {
        PgEvent::WraparoundRefused {
            database,
            database_oid,
            multixact,
        }
        | PgEvent::WraparoundWarning {
            database,
            database_oid,
            multixact,
            ..
        } => (
            database
                .clone()
                .or_else(|| database_oid.map(|o| format!("with OID {o}")))
                .unwrap_or_else(|| "?".to_owned()),
            *multixact,
        ),
        _ => ("?".to_owned(), false),
    };
    if let Some((path, r)) = refused.first() {
        let (_, multi) = r.event.as_ref().map(db_of).unwrap_or_default();
        // Each database named, with its count, in first-seen order.
        let mut databases: Vec<(String, usize)> = Vec::new();
        for (_, r) in &refused {
            let (db, _) = r.event.as_ref().map(db_of).unwrap_or_default();
            match databases.iter_mut().find(|(d, _)| *d == db) {
                Some((_, n)) => *n += 1,
                None => databases.push((db, 1)),
            }
        }
        let named = if databases.len() == 1 {
            format!("in database {}", databases[0].0)
        } else {
            format!(
                "in databases {}",
                databases
                    .iter()
                    .map(|(d, n)| format!("{d} ({n})"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        parts.push(format!(
            "PostgreSQL refused commands {} time{} to avoid {} wraparound {named}",
            refused.len(),
            if refused.len() == 1 { "" } else { "s" },
            if multi { "multixact" } else { "transaction-id" }
        ));
        evidence.push(record_evidence(path, r, "commands refused"));
    }
    if let Some((path, r)) = warned.last() {
        let remaining = match r.event {
            Some(PgEvent::WraparoundWarning { remaining, .. }) => remaining,
            _ => 0,
        };
        let (db, multi) = r.event.as_ref().map(db_of).unwrap_or_default();
        parts.push(format!(
            "it warned {} time{} that database {db} must be vacuumed, the last within {remaining} {}",
            warned.len(),
            if warned.len() == 1 { "" } else { "s" },
            if multi { "multixacts" } else { "transactions" }
        ));
        evidence.push(record_evidence(path, r, "the last wraparound warning"));
    }
    if let Some((d, k)) = old {
        parts.push(format!(
            "database {} is {} transactions old (age of datfrozenxid; the limit is about 2.1 \
             billion)",
            crate::human::quote(&d.name),
            k.value
        ));
        evidence.push(k.evidence("the oldest database's age"));
    }
    evidence.extend(settings_evidence(facts, &["autovacuum_freeze_max_age"]));
    let critical = !refused.is_empty()
        || !warned.is_empty()
        || oldest.is_some_and(|(_, k)| k.value >= CRITICAL_AGE);
    let mut f = finding(
        &META,
        if critical {
            Severity::Critical
        } else {
            Severity::Warning
        },
        if refused.is_empty() {
            "Transaction-id wraparound is near".to_owned()
        } else {
            "PostgreSQL refused writes to avoid transaction-id wraparound".to_owned()
        },
    )
    .summary(format!(
        "{}. Until the oldest tables are frozen, writes fail once the limit is reached.",
        crate::human::capitalised(&parts.join("; "))
    ))
    .recommend(
        "Find what holds the transaction horizon back and end it: the oldest backend_xmin in \
         pg_stat_activity, replication slots' xmin and catalog_xmin, pg_prepared_xacts. Then \
         VACUUM (FREEZE) the oldest tables of that database (SELECT relname, age(relfrozenxid) \
         FROM pg_class ORDER BY 2 DESC) with vacuum_cost_delay 0; from PostgreSQL 14 a plain \
         VACUUM works even after the refusal, before it single-user mode is needed. Alert on \
         age(datfrozenxid) at 500 million.",
    )
    .evidence(evidence);
    if let Some((_, k)) = oldest {
        f = f.figure("oldest_xid_age", k.value as f64);
    }
    vec![f.impact(refused.len() as f64 + warned.len() as f64)]
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::{Scratch, incident_archive};

    #[test]
    fn refusals_in_the_log_are_critical() {
        // Real log: pg_resetwal -x near the limit, then writes until the refusal.
        let f = Scratch::new()
            .copy("postgresql.log", "formats/pglog/pg15-wraparound.log")
            .run("xid-wraparound")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(f.summary.contains("must be vacuumed"), "{}", f.summary);
    }

    /// Real capture: an abandoned logical slot holds the horizon, pg_resetwal -x near the stop
    /// limit, INSERTs until the refusal (incident-pg15-storage-xid-wraparound.sh).
    fn refused() -> Scratch {
        Scratch::bundle(&incident_archive("pg15-xid-wraparound"))
    }

    #[test]
    fn the_capture_counts_the_refusals_of_each_database_and_gives_the_oldest_age() {
        let f = refused().run("xid-wraparound").one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(
            f.title,
            "PostgreSQL refused writes to avoid transaction-id wraparound"
        );
        assert!(
            f.summary.contains(
                "refused commands 3 times to avoid transaction-id wraparound in database shop;"
            ),
            "{}",
            f.summary
        );
        assert_eq!(f.figures["oldest_xid_age"], 2_144_483_647.0);
        assert_eq!(f.evidence[0].line, 877);
        assert!(f.evidence[0].path.ends_with("postgres/server.log"));
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path.ends_with("postgres/database-xid-ages.txt") && e.line == 5)
        );
        // The first refusal made another database's: each database is named with its count.
        let two = refused()
            .edit("postgres/server.log", |t| {
                t.replacen(
                    "wraparound data loss in database \"shop\"",
                    "wraparound data loss in database \"template1\"",
                    1,
                )
            })
            .run("xid-wraparound")
            .one();
        assert!(
            two.summary
                .contains("wraparound in databases template1 (1), shop (2);"),
            "{}",
            two.summary
        );
    }

    #[test]
    fn the_captures_ages_alone_are_critical_past_the_failsafe_age() {
        // Without the log, the ages alone (2.14 billion, above 1.6 billion) still speak.
        let f = refused()
            .remove("postgres/server.log")
            .run("xid-wraparound")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.title, "Transaction-id wraparound is near");
    }

    fn aged(age: u64) -> Scratch {
        Scratch::bundle(&incident_archive("pg15-slot-wal-full"))
            .remove("postgres/server.log")
            .edit("postgres/database-xid-ages.txt", move |t| {
                t.replace("postgres|t|17|0", &format!("postgres|t|{age}|0"))
            })
    }

    #[test]
    fn an_old_database_warns_at_a_billion_and_is_critical_at_the_failsafe_age() {
        assert!(aged(999_999_999).run("xid-wraparound").silent());
        let f = aged(1_000_000_000).run("xid-wraparound").one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["oldest_xid_age"], 1e9);
        let f = aged(1_600_000_000).run("xid-wraparound").one();
        assert_eq!(f.severity, Severity::Critical);
    }
}
