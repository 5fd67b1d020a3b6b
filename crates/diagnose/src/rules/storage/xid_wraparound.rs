//! ## What it finds
//! Transaction-id (or multixact) wraparound coming or reached: PostgreSQL refused commands
//! (`database is not accepting commands to avoid wraparound data loss in database "X"`, 14+:
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
use crate::rules::{Input, RuleMeta, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "xid-wraparound",
    title: "Transaction-id wraparound: PostgreSQL refuses or will refuse writes",
    severity: Severity::Critical,
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
        let (db, multi) = r.event.as_ref().map(db_of).unwrap_or_default();
        parts.push(format!(
            "PostgreSQL refused commands {} time{} to avoid {} wraparound in database {db}",
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
            d.name, k.value
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
