use super::*;
use crate::rules::testing::{Scratch, fixtures};
use pgmortem_parse::pgbouncer::{self, BouncerOptions};

const INCIDENT: &str = "pg15-pgbouncer-server-down";

/// The recorded pgbouncer log's lines.
fn recorded_lines() -> Vec<String> {
    let text = std::fs::read_to_string(
        fixtures()
            .join("incidents")
            .join(INCIDENT)
            .join("pgbouncer.log"),
    )
    .expect("the recorded pgbouncer log");
    text.lines().map(str::to_owned).collect()
}

/// A digest of `text` (pgbouncer's own form), times without a zone at `offset`.
fn digest_of(text: &str, offset: Offset, trouble_limit: usize) -> PoolerDigest {
    let mut digest = PoolerDigest::new(offset, trouble_limit);
    for record in pgbouncer::parse(text.as_bytes(), &BouncerOptions::default()).records {
        digest.push(&record);
    }
    digest
}

#[test]
fn the_incident_shows_what_clients_saw_in_its_window() {
    let report = Scratch::incident(INCIDENT).report();
    assert_eq!(report.incidents.len(), 1);
    let i = &report.incidents[0];
    let saw = i.clients_saw.as_ref().expect("what clients saw");
    let ready = i.recovery.as_ref().and_then(|r| r.ready_at).unwrap();
    assert_eq!(
        saw.from,
        i.started_at.unwrap() - jiff::SignedDuration::from_secs(1)
    );
    assert_eq!(
        saw.to,
        ready + jiff::SignedDuration::from_secs(GRACE_SECONDS)
    );
    assert_eq!(saw.logs, ["pgbouncer.log"]);
    // The waiting clients were handed the server's refusal during the recovery, then told
    // server logins kept failing; the crash took the server connections in use.
    assert_eq!(
        (
            saw.client_errors,
            saw.server_login_failures,
            saw.server_connections_lost
        ),
        (55, 4, 8)
    );
    let sorts: Vec<_> = saw
        .problems
        .iter()
        .map(|p| (p.what, p.cause, p.count))
        .collect();
    assert_eq!(
        sorts,
        [
            ("client_error", "server_refused", 30),
            ("client_error", "server_login_retry", 25),
            ("server_connection_lost", "server_conn_crashed", 8),
            ("server_login_failed", "server_refused", 4),
        ]
    );
    let first = &saw.problems[0].examples[0];
    assert_eq!(first.path, "pgbouncer.log");
    assert_eq!(first.text, "the database system is in recovery mode");
    let lines = recorded_lines();
    assert!(lines[first.line as usize - 1].contains("the database system is in recovery mode"));
    // Nothing of the burst and the stop that came after the window.
    assert!(!saw.problems.iter().any(|p| p.cause == "max_client_conn"));
    assert!(saw.notes.is_empty(), "{:?}", saw.notes);
}

#[test]
fn the_whole_log_is_summed_up() {
    let report = Scratch::incident(INCIDENT).report();
    let s = &report.pooler[0];
    assert_eq!(
        (s.path.as_str(), s.version.as_deref()),
        ("pgbouncer.log", Some("1.18.0"))
    );
    assert_eq!((s.records, s.logins), (752, 231));
    assert_eq!(
        (
            s.client_errors,
            s.server_login_failures,
            s.server_connections_lost
        ),
        (192, 5, 22)
    );
    let count = |cause: &str| {
        s.problems
            .iter()
            .find(|p| p.what == "client_error" && p.cause == cause)
            .map(|p| p.count)
    };
    assert_eq!(count("max_client_conn"), Some(26));
    assert_eq!(count("query_wait_timeout"), Some(32));
    assert_eq!(count("server_login_retry"), Some(96));
    let kinds: Vec<_> = s.lifecycle.iter().map(|l| l.kind).collect();
    assert_eq!(kinds, ["process_up", "signal", "exiting"]);
    let stats = s.stats.as_ref().unwrap();
    assert_eq!((stats.lines, stats.peak_wait_us), (5, Some(2_741_227)));
    assert_eq!(s.trouble_not_kept, 0);
    // pgbouncer 1.18 prints its zone: nothing read at an assumed offset.
    assert_eq!(s.times_without_zone, 0);
}

#[test]
fn a_refusal_logged_twice_counts_once_and_a_login_failure_once() {
    let lines = recorded_lines();
    // `closing because: X` then `pooler error: X` for the same connection.
    let pair = lines
        .windows(2)
        .find(|w| {
            w[0].contains("closing because: query_wait_timeout")
                && w[1].contains("pooler error: query_wait_timeout")
        })
        .expect("a pair in the recording");
    let d = digest_of(&pair.join("\n"), Offset::UTC, 100);
    assert_eq!(d.summary("p").client_errors, 1);
    // The same two lines for two connections are two.
    let other = pair[1].replacen("C-0x", "C-0x1", 1);
    let d = digest_of(&[pair[0].clone(), other].join("\n"), Offset::UTC, 100);
    assert_eq!(d.summary("p").client_errors, 2);
    // `S: login failed` and the server connection's `closing because: login failed`: one.
    let login: Vec<&String> = lines
        .iter()
        .filter(|l| {
            l.contains("S: login failed: FATAL: the database system is shutting down")
                || l.contains("closing because: login failed")
        })
        .collect();
    let d = digest_of(
        &login
            .iter()
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        Offset::UTC,
        100,
    );
    let s = d.summary("p");
    assert_eq!(s.server_login_failures, 1);
    assert_eq!(s.server_connections_lost, 0);
}

#[test]
fn a_shutdown_request_ends_the_window() {
    let report = Scratch::incident(INCIDENT)
        .edit("postgresql.log", |text| {
            text.lines()
                .filter(|l| !l.contains("05:51:14") || !l.contains("ready to accept connections"))
                .map(|l| format!("{l}\n"))
                .collect()
        })
        .report();
    // Without its own ready line, the crash's cycle runs to the ready after the stop and the
    // restart that followed; the window still ends when the stop was asked for.
    let i = &report.incidents[0];
    let ready: Timestamp = "2026-11-28T05:52:05.292Z".parse().unwrap();
    assert_eq!(i.recovery.as_ref().and_then(|r| r.ready_at), Some(ready));
    let saw = i.clients_saw.as_ref().unwrap();
    let shutdown: Timestamp = "2026-11-28T05:51:34.274Z".parse().unwrap();
    assert_eq!(saw.to, shutdown);
    // The burst past max_client_conn came before the stop: now in the window.
    assert!(saw.problems.iter().any(|p| p.cause == "max_client_conn"));
}

#[test]
fn a_log_that_does_not_reach_the_incident_says_so() {
    let report = Scratch::incident(INCIDENT)
        .edit("pgbouncer.log", |text| {
            text.lines().take(40).map(|l| format!("{l}\n")).collect()
        })
        .report();
    let saw = report.incidents[0].clients_saw.as_ref().unwrap();
    assert!(saw.logs.is_empty());
    assert_eq!(saw.client_errors, 0);
    assert!(
        saw.notes[0].starts_with("pgbouncer.log does not cover this window: it runs from"),
        "{:?}",
        saw.notes
    );
    // Without a pgbouncer log, no view at all.
    let report = Scratch::incident(INCIDENT).remove("pgbouncer.log").report();
    assert!(report.incidents[0].clients_saw.is_none());
    assert!(report.pooler.is_empty());
}

#[test]
fn a_small_budget_keeps_the_latest_troubles_and_says_an_early_window_may_be_short() {
    let text = recorded_lines().join("\n");
    let d = digest_of(&text, Offset::UTC, 10);
    assert_eq!(d.trouble.len(), 10);
    assert_eq!(d.trouble_not_kept, 192 + 5 + 22 - 10);
    // The whole log's counts stay exact.
    assert_eq!(d.summary("pgbouncer.log").client_errors, 192);
    let source = PoolerSource {
        path: "pgbouncer.log".into(),
        digest: d,
    };
    let from: Timestamp = "2026-11-28T05:51:08Z".parse().unwrap();
    let to: Timestamp = "2026-11-28T05:51:30Z".parse().unwrap();
    let saw = window(std::slice::from_ref(&source), from, to);
    assert_eq!(saw.client_errors, 0);
    assert!(
        saw.notes[0].contains("earlier troubles were counted but not kept"),
        "{:?}",
        saw.notes
    );
}

#[test]
fn times_without_a_zone_are_read_at_the_host_offset() {
    // pgbouncer 1.9, from pgBadger's sample: no zone printed.
    let line = "2018-09-12 16:09:05.350 3394 WARNING C-0x562376c014e0: pgbench/gilles@127.0.0.1:43866 pooler error: query_wait_timeout";
    let paris = Offset::from_seconds(2 * 3600).unwrap();
    let d = digest_of(line, paris, 10);
    let s = d.summary("p");
    assert_eq!(s.times_without_zone, 1);
    assert_eq!(s.first_at.unwrap().to_string(), "2018-09-12T14:09:05.35Z");
}
