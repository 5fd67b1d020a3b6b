//! ## What it finds
//! Connections PostgreSQL refused for want of a slot: `FATAL: sorry, too many clients already`
//! (every one of `max_connections` taken), `FATAL: remaining connection slots are reserved for
//! …` (only the slots kept for superusers, `superuser_reserved_connections`, or for roles with
//! `pg_use_reserved_connections`, `reserved_connections` from PostgreSQL 16, were left), and
//! `FATAL: too many connections for role "…"` / `… for database "…"` (a `CONNECTION LIMIT` set
//! on the role or database).
//!
//! ## Why it matters
//! Each refusal is an application that could not connect: an error page, a retry storm, a job
//! that did not run. Connections are held by clients that open more than they use (a
//! connection pool per application server, per thread) or that leak them; raising
//! `max_connections` moves the wall and costs memory: every backend holds its own private
//! memory and page tables (more as it touches more of shared_buffers), and each running query
//! may use `work_mem` per sort or hash node.
//!
//! ## What to do
//! Put a connection pooler in front (PgBouncer in transaction mode, or the application's pool
//! sized to what the server can run at once: a few connections per CPU core), and find the
//! clients holding idle connections (`pg_stat_activity` by `application_name` and `state`).
//! Raise `max_connections` only with the memory it takes: the finding computes what one
//! backend of this host really costs (Pss_Anon + VmPTE, the mean over the backends the bundle
//! has) times the slots. For a role or database limit, raise or remove it (`ALTER ROLE name
//! CONNECTION LIMIT n`) or find why that client needs more.
//!
//! ## Thresholds
//! One refused connection is a warning ([`MIN_REFUSALS`]): a client saw an error.
//!
//! ## Evidence it needs
//! The PostgreSQL log. Reads when present: the settings (max_connections,
//! superuser_reserved_connections, reserved_connections, each with the line it came from) and
//! the backends' status and smaps_rollup files.
//!
//! ## Knowledge
//! [pg-config] (max_connections, superuser_reserved_connections, reserved_connections);
//! [ru-memory-overhead]: RSS misleads, Pss_Anon + VmPTE is a connection's real cost;
//! [fr-memoire]: 500 connections reading shared_buffers cost 2 MB of page tables each, a
//! gigabyte taken from the page cache ("tout le monde ne s'embête pas avec un pooler").

use pgmortem_parse::pglog::PgEvent;

use crate::facts::{Facts, LogKind};
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::support::{counted, settings_evidence};
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "connection-slots-exhausted",
    title: "Connections were refused: no connection slot was free",
    severities: &[warning("")],
    needs: &[Input::PostgresLog],
    uses: &[Input::PgSettings, Input::Processes],
};

/// Refused connections from which the rule reports.
pub(crate) const MIN_REFUSALS: u64 = 1;
/// Refusal records cited as evidence.
const EVIDENCE_RECORDS: usize = 5;

/// The kinds of refusal, and how PostgreSQL words each.
const KINDS: &[(&str, &str)] = &[
    ("too_many_clients", "`sorry, too many clients already`"),
    (
        "reserved_connection_slots",
        "`remaining connection slots are reserved`",
    ),
    (
        "too_many_connections",
        "`too many connections for role/database`",
    ),
];

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let seen: Vec<(&str, &str, LogKind)> = KINDS
        .iter()
        .filter_map(|(kind, words)| Some((*kind, *words, facts.log.kind(kind)?)))
        .collect();
    let refusals: u64 = seen.iter().map(|(_, _, k)| k.count).sum();
    if refusals < MIN_REFUSALS {
        return Vec::new();
    }
    let slots_full = seen.iter().any(|(k, _, _)| *k != "too_many_connections");
    let pg = &facts.host.postgres;
    let max_connections = pg.setting("max_connections");
    let reserved: Vec<_> = ["superuser_reserved_connections", "reserved_connections"]
        .iter()
        .filter_map(|n| pg.setting(n))
        .collect();

    let what = seen
        .iter()
        .map(|(_, words, k)| format!("{words} {}", k.describe()))
        .collect::<Vec<_>>()
        .join("; ");
    let mut limits: Vec<String> = facts
        .log
        .records(|e| matches!(e, PgEvent::TooManyConnections { .. }))
        .into_iter()
        .filter_map(|(_, r)| match &r.event {
            Some(PgEvent::TooManyConnections { scope, name }) => Some(format!("{scope} {name}")),
            _ => None,
        })
        .collect();
    limits.sort();
    limits.dedup();

    let settings_text = match max_connections {
        Some(m) => {
            let open = m
                .number
                .map(|n| n - reserved.iter().filter_map(|r| r.number).sum::<f64>());
            format!(
                " {}{}{}.",
                m.describe(),
                reserved
                    .iter()
                    .map(|r| format!(", {}", r.describe()))
                    .collect::<String>(),
                open.map(|o| format!(": {o:.0} slots for ordinary roles"))
                    .unwrap_or_default()
            )
        }
        None => String::new(),
    };

    // What one backend of this host costs: Pss_Anon + VmPTE, the mean over its backends.
    let costs: Vec<u64> = facts
        .host
        .processes
        .backends()
        .filter_map(|p| p.real_bytes())
        .collect();
    let per_backend = (!costs.is_empty()).then(|| costs.iter().sum::<u64>() / costs.len() as u64);
    let slots = max_connections
        .and_then(|m| m.number)
        .map(|n| n.max(0.0) as u64);

    let mut advice = Vec::new();
    if slots_full {
        advice.push(
            "Put a connection pooler in front (PgBouncer in transaction mode, or application \
             pools sized to a few connections per CPU core) and find the clients that hold \
             idle connections (pg_stat_activity by application_name and state)."
                .to_owned(),
        );
        match (per_backend, slots) {
            (Some(b), Some(n)) => advice.push(format!(
                "Raise max_connections only with the memory for it: one backend here costs {} \
                 (Pss_Anon + VmPTE, the mean of {}), so {n} connections cost {} and each 100 \
                 more {}, before work_mem for their sorts and hashes.",
                cost(b),
                counted(costs.len() as u64, "backend"),
                human_bytes(b.saturating_mul(n)),
                human_bytes(b.saturating_mul(100))
            )),
            _ => advice.push(
                "Raise max_connections only with the memory for it: each backend holds private \
                 memory and page tables (Pss_Anon + VmPTE), and work_mem per sort or hash."
                    .to_owned(),
            ),
        }
    }
    if !limits.is_empty() {
        advice.push(format!(
            "The CONNECTION LIMIT of {} was reached: raise it (ALTER ROLE … CONNECTION LIMIT n, \
             ALTER DATABASE … CONNECTION LIMIT n) or find why that client needs more.",
            limits.join(", ")
        ));
    }

    let mut evidence = facts.log.evidence(
        |e| {
            matches!(
                e,
                PgEvent::TooManyClients
                    | PgEvent::ReservedConnectionSlots { .. }
                    | PgEvent::TooManyConnections { .. }
            )
        },
        EVIDENCE_RECORDS,
        |r| format!("FATAL: {}", r.message),
    );
    evidence.extend(settings_evidence(
        facts,
        &[
            "max_connections",
            "superuser_reserved_connections",
            "reserved_connections",
        ],
    ));
    let first = seen.iter().filter_map(|(_, _, k)| k.first.2).min();
    let last = seen.iter().filter_map(|(_, _, k)| k.last.2).max();

    let mut f = finding(
        &META,
        Severity::Warning,
        format!(
            "PostgreSQL refused {}{}",
            counted(refusals, "connection"),
            if slots_full {
                ": every connection slot was taken"
            } else {
                ": a role or database connection limit was reached"
            }
        ),
    )
    .summary(format!(
        "The log shows {what}.{settings_text}{}",
        if limits.is_empty() {
            String::new()
        } else {
            format!(" Limits reached: {}.", limits.join(", "))
        }
    ))
    .recommend(advice.join(" "))
    .evidence(evidence)
    .figure("refused_connections", refusals as f64);
    for (kind, _, k) in &seen {
        f = f.figure(
            match *kind {
                "too_many_clients" => "too_many_clients",
                "reserved_connection_slots" => "reserved_slots_refusals",
                _ => "role_or_database_limit_refusals",
            },
            k.count as f64,
        );
    }
    if let (Some(a), Some(b)) = (first, last) {
        f = f.figure("window_seconds", crate::clock::seconds_between(a, b));
    }
    if let Some(n) = slots {
        f = f.figure("max_connections", n as f64);
    }
    if let Some(b) = per_backend {
        f = f.figure("backend_real_bytes", b as f64);
    }
    vec![f]
}

/// A backend's cost for a person, with a decimal below 10 MiB (`1.4 MiB`).
fn cost(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if (MIB..10 * MIB).contains(&bytes) {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    } else {
        human_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::{Outcome, Scratch};

    const LOG: &str = "postgres/server.log";
    const EVENTS: &str = "formats/pglog/pg15-events.log";

    #[test]
    fn both_refusals_of_the_recorded_log_with_the_settings_and_the_backend_cost() {
        // The collected bundle (max_connections 20 in its postgresql.conf, two backends) with
        // the events log as its server log.
        let f = Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .copy(LOG, EVENTS)
            .run("connection-slots-exhausted")
            .one();
        assert_eq!(f.figures["refused_connections"], 2.0);
        assert_eq!(f.figures["too_many_clients"], 1.0);
        assert_eq!(f.figures["reserved_slots_refusals"], 1.0);
        assert!((f.figures["window_seconds"] - 1.031).abs() < 1e-6);
        assert!(
            f.summary.contains(
                "max_connections = 20 (postgres/pg_settings.txt:196), \
                 superuser_reserved_connections = 3"
            ),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("17 slots for ordinary roles"),
            "{}",
            f.summary
        );
        // (1313 + 140 + 1333 + 144) kB / 2 = 1465 kB per backend; × 20 = 29,300 kB.
        assert_eq!(f.figures["backend_real_bytes"], (1465 * 1024) as f64);
        let advice = f.recommendation.unwrap();
        assert!(advice.contains("costs 1.4 MiB"), "{advice}");
        assert!(advice.contains("20 connections cost 29 MiB"), "{advice}");
        assert!(advice.contains("PgBouncer"), "{advice}");
        assert_eq!((f.evidence[0].path.as_str(), f.evidence[0].line), (LOG, 44));
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("max_connections"))
        );
    }

    #[test]
    fn the_csv_and_json_logs_of_the_same_run_agree() {
        for (file, log) in [
            ("postgresql.csv", "pg15-events.csv"),
            ("postgresql.json", "pg15-events.json"),
        ] {
            let f = Scratch::new()
                .copy(file, &format!("formats/pglog/{log}"))
                .run("connection-slots-exhausted")
                .one();
            assert_eq!(f.figures["refused_connections"], 2.0, "{log}");
        }
    }

    #[test]
    fn one_refusal_fires_and_none_is_silent() {
        // The recorded log with its reserved-slots line edited into a routine one: one refusal.
        let one = Scratch::new()
            .copy("postgresql.log", EVENTS)
            .set_line(
                "postgresql.log",
                "2026-11-21 17:58:14.473 UTC [22299] FATAL:",
                "2026-11-21 17:58:14.473 UTC [22299] LOG:  checkpoint starting: time",
            )
            .run("connection-slots-exhausted")
            .one();
        assert_eq!(one.figures["refused_connections"], 1.0);
        assert!(one.title.contains("refused 1 connection:"), "{}", one.title);
        assert!(
            Scratch::new()
                .copy("postgresql.log", "formats/pglog/pg15-backend-sigkill.log")
                .run("connection-slots-exhausted")
                .silent()
        );
    }

    #[test]
    fn a_role_limit_names_the_role_and_not_a_pooler() {
        // The recorded `too many clients` line edited into the role-limit message.
        let f = Scratch::new()
            .copy("postgresql.log", EVENTS)
            .set_line(
                "postgresql.log",
                "2026-11-21 17:58:14.473 UTC [22299] FATAL:",
                "2026-11-21 17:58:14.473 UTC [22299] FATAL:  too many connections for role \"app\"",
            )
            .set_line(
                "postgresql.log",
                "2026-11-21 17:58:15.504 UTC [22333] FATAL:",
                "2026-11-21 17:58:15.504 UTC [22333] FATAL:  too many connections for role \"app\"",
            )
            .run("connection-slots-exhausted")
            .one();
        assert_eq!(f.figures["role_or_database_limit_refusals"], 2.0);
        assert!(
            f.title.contains("connection limit was reached"),
            "{}",
            f.title
        );
        let advice = f.recommendation.unwrap();
        assert!(advice.contains("CONNECTION LIMIT of role app"), "{advice}");
        assert!(!advice.contains("PgBouncer"), "{advice}");
    }

    #[test]
    fn the_recorded_capture_at_max_connections_10() {
        // Seven `app` sessions held the ordinary slots, then three superusers the reserved ones.
        let f = Scratch::incident("pg15-too-many-clients")
            .run("connection-slots-exhausted")
            .one();
        assert_eq!(f.figures["refused_connections"], 75.0);
        assert_eq!(f.figures["too_many_clients"], 31.0);
        assert_eq!(f.figures["reserved_slots_refusals"], 44.0);
        assert_eq!(f.figures["max_connections"], 10.0);
        assert!(
            f.summary.contains("7 slots for ordinary roles"),
            "{}",
            f.summary
        );
        // Collected idle: no client backend to price a connection with.
        assert!(!f.figures.contains_key("backend_real_bytes"));
        // Fork failures are not slot exhaustion.
        assert!(
            Scratch::incident("pg15-fork-failure")
                .run("connection-slots-exhausted")
                .silent()
        );
    }

    #[test]
    fn without_a_log_it_is_not_evaluated() {
        assert!(matches!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .remove(LOG)
                .run("connection-slots-exhausted"),
            Outcome::NotEvaluated(_)
        ));
    }
}
