//! `pgmortem parse pgbouncer` end to end on the pgbouncer log fixtures, and `analyze` of the
//! incident recorded through pgbouncer: what clients saw.

use std::path::PathBuf;

mod common;
use common::{pgmortem, stdout_ok};
use predicates::prelude::*;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    common::fixture(&format!("formats/pgbouncer/{name}"))
}

fn stats(args: &[&str]) -> Value {
    let stdout = stdout_ok(
        pgmortem()
            .args(["parse", "pgbouncer", "--stats"])
            .args(args),
    );
    serde_json::from_slice(&stdout).unwrap()
}

fn records(args: &[&str]) -> Vec<Value> {
    let stdout = stdout_ok(pgmortem().args(["parse", "pgbouncer"]).args(args));
    stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect()
}

#[test]
fn the_log_file_syslog_and_journal_of_one_run_count_the_same() {
    let mut seen = Vec::new();
    for (file, form, year) in [
        ("pgbouncer-1.18-outage.log", "file", None),
        (
            "pgbouncer-1.18-syslog-traditional.syslog",
            "syslog",
            Some("2026"),
        ),
        ("pgbouncer-1.18-syslog-rfc5424.syslog", "syslog5424", None),
        (
            "pgbouncer-1.18-journal-short-precise.log",
            "journal",
            Some("2026"),
        ),
        ("pgbouncer-1.18-journal.json", "journal_json", None),
    ] {
        let path = fixture(file);
        let mut args = vec![path.to_str().unwrap()];
        if let Some(y) = year {
            args.extend(["--year", y]);
        }
        let s = stats(&args);
        assert_eq!(s["form"], form, "{file}");
        assert_eq!(s["unrecognized_lines"], 0, "{file}: {s}");
        assert_eq!(s["events"]["pooler_error"], 192, "{file}");
        assert_eq!(s["client_closings"]["max_client_conn"], 26, "{file}");
        assert_eq!(s["pooler_errors"]["query_wait_timeout"], 32, "{file}");
        seen.push((s["records"].clone(), s["events"].clone()));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
}

#[test]
fn records_are_json_lines_with_their_connection_and_event() {
    let records = records(&[fixture("pgbouncer-1.18-outage.log").to_str().unwrap()]);
    assert_eq!(records.len(), 752);
    let refused = records
        .iter()
        .find(|r| r["event"]["cause"] == "max_client_conn" && r["event"]["kind"] == "pooler_error")
        .unwrap();
    assert_eq!(refused["level"], "WARNING");
    assert_eq!(refused["connection"]["side"], "client");
    assert_eq!(refused["connection"]["database"], Value::Null);
    assert_eq!(refused["time"]["zone"], "UTC");
    let login = records
        .iter()
        .find(|r| r["event"]["kind"] == "server_login_failed")
        .unwrap();
    assert_eq!(login["event"]["severity"], "FATAL");
    assert_eq!(login["event"]["cause"], "server_refused");
}

#[test]
fn a_compressed_log_and_standard_input_are_read_whole() {
    // pgBadger's sample of pgbouncer 1.9, gzip as it ships.
    let s = stats(&[fixture("pgbadger-pgbouncer-1.9.log.gz").to_str().unwrap()]);
    assert_eq!(
        (s["lines"].as_u64(), s["records"].as_u64()),
        (Some(127_910), Some(127_910))
    );
    assert_eq!(s["events"]["login_attempt"], 63_943);
    let bytes = std::fs::read(fixture("pgbouncer-1.18-outage.log")).unwrap();
    let stdout = stdout_ok(
        pgmortem()
            .args(["parse", "pgbouncer", "--stats", "-"])
            .write_stdin(bytes),
    );
    let s: Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(s["records"], 752);
}

#[test]
fn damage_is_counted_and_a_forced_form_reads_nothing_else() {
    let s = stats(&[fixture("edge-damaged.log").to_str().unwrap()]);
    assert_eq!(s["unrecognized_lines"], 2);
    assert_eq!(s["invalid_utf8_lines"], 1);
    assert_eq!(s["unreadable_stamps"]["count"], 1);
    // The log file read as RFC 5424 syslog: every line unrecognised, said, not an error.
    let s = stats(&[
        fixture("pgbouncer-1.18-outage.log").to_str().unwrap(),
        "--form",
        "syslog5424",
    ]);
    assert_eq!(s["records"], 0);
    assert_eq!(s["unrecognized_lines"], 752);
    assert_eq!(s["unrecognized_examples"].as_array().unwrap().len(), 5);
}

#[test]
fn a_missing_file_and_a_bad_form_are_errors() {
    pgmortem()
        .args(["parse", "pgbouncer", "/nonexistent/pgbouncer.log"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot read /nonexistent/pgbouncer.log",
        ));
    pgmortem()
        .args(["parse", "pgbouncer", "--form", "nope", "x"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("invalid value 'nope'"));
}

#[test]
fn analyze_says_what_clients_saw_during_the_incident() {
    let incident = common::fixture("incidents/pg15-pgbouncer-server-down");
    let stdout = stdout_ok(pgmortem().arg("analyze").arg(&incident));
    let text = String::from_utf8(stdout).unwrap();
    assert!(
        text.contains(
            "  clients   55 client errors, 4 server logins refused, 8 server connections lost \
             through pgbouncer from 2026-11-28T05:51:08.244Z to 2026-11-28T05:51:29.925Z"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "30 client errors (server_refused): `the database system is in recovery mode`   \
             (pgbouncer.log:84)"
        ),
        "{text}"
    );
    assert!(text.contains("\nClients through pgbouncer\n"), "{text}");
    let stdout = stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "json"])
            .arg(&incident),
    );
    let report: Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(report["incidents"][0]["clients_saw"]["client_errors"], 55);
    assert_eq!(report["pooler"][0]["client_errors"], 192);
    let kinds: Vec<&str> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["path"] == "pgbouncer.log")
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["pgbouncer_log"]);
}
