//! `pgmortem parse pglog` end to end on the real PostgreSQL log fixtures.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/formats/pglog")
        .join(name)
}

fn pgmortem() -> Command {
    Command::cargo_bin("pgmortem").unwrap()
}

fn stats(args: &[&str]) -> Value {
    let output = pgmortem()
        .args(["parse", "pglog", "--stats"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn the_three_destinations_of_one_run_give_the_same_events() {
    let mut seen = Vec::new();
    for (file, format) in [
        ("pg15-events.log", "stderr"),
        ("pg15-events.csv", "csv"),
        ("pg15-events.json", "json"),
    ] {
        let s = stats(&[fixture(file).to_str().unwrap()]);
        assert_eq!(s["format"], format, "{file}");
        assert_eq!(s["unrecognized_lines"], 0, "{file}: {s}");
        let events = &s["events"];
        for kind in [
            "out_of_memory",
            "too_many_clients",
            "reserved_connection_slots",
            "idle_in_transaction_timeout",
            "could_not_extend_file",
            "invalid_page",
            "terminated_by_signal",
        ] {
            assert_eq!(events[kind], 1, "{file}: {kind} in {events}");
        }
        assert_eq!(events["statement_canceled"], 3, "{file}");
        assert_eq!(events["shared_memory_resize_failed"], 3, "{file}");
        assert!(events["temp_file"].as_u64().unwrap() >= 5, "{file}");
        seen.push((s["records"].clone(), events.clone()));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    // Only stderr carries the MemoryContextStats dump.
    let s = stats(&[fixture("pg15-events.log").to_str().unwrap()]);
    assert!(s["memory_context_lines"].as_u64().unwrap() > 50);
    assert!(s["continuation_lines"].as_u64().unwrap() > 0);
}

#[test]
fn records_are_json_lines_with_their_event() {
    let output = pgmortem()
        .args(["parse", "pglog"])
        .arg(fixture("pg15-events.json"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let records: Vec<Value> = output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let oom = records
        .iter()
        .find(|r| r["event"]["kind"] == "out_of_memory")
        .unwrap();
    assert_eq!(oom["event"]["request_bytes"], 1000000004u64);
    assert_eq!(oom["event"]["memory_context"], "MessageContext");
    assert_eq!(oom["severity"], "ERROR");
}

#[test]
fn standard_input_is_read_too() {
    let bytes = std::fs::read(fixture("pg15-backend-sigkill.log")).unwrap();
    let from_file = stats(&[fixture("pg15-backend-sigkill.log").to_str().unwrap()]);
    let output = pgmortem()
        .args(["parse", "pglog", "--stats", "-"])
        .write_stdin(bytes)
        .output()
        .unwrap();
    let from_stdin: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(from_file, from_stdin);
}

#[test]
fn a_prefix_that_fits_nothing_is_a_clear_error() {
    pgmortem()
        .args(["parse", "pglog", "--prefix", "%t <%p> "])
        .arg(fixture("pg15-backend-sigkill.log"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("\"%t <%p> \"")
                .and(predicate::str::contains("line 1"))
                .and(predicate::str::contains("starting PostgreSQL 15.18")),
        );
}

#[test]
fn a_missing_file_is_an_error() {
    pgmortem()
        .args(["parse", "pglog", "/nonexistent/pg.log"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read /nonexistent/pg.log"));
}

#[test]
fn wrapped_forms_are_sniffed_and_selectable_by_format() {
    for (file, format) in [
        ("pg15-syslog-rfc5424.syslog", "syslog5424"),
        ("pg15-journal-short.log", "journal"),
        ("pg15-journal-short-iso.log", "journal"),
        ("pg15-journal-short-precise.log", "journal"),
        ("pg15-journal.json", "journal_json"),
        ("pg15-journal-syslog-short.log", "journal"),
        ("pg15-journal-syslog.json", "journal_json"),
        ("enveloped-heroku-pg15.log", "heroku"),
        ("enveloped-heroku-pg15-new.log", "heroku"),
        ("enveloped-cloudsql-pg15.json", "cloudsql"),
        ("enveloped-cloudsql-pg15-array.json", "cloudsql"),
        ("enveloped-cnpg-pg15.json", "cnpg"),
    ] {
        let path = fixture(file);
        let sniffed = stats(&[path.to_str().unwrap()]);
        let given = stats(&[path.to_str().unwrap(), "--format", format]);
        assert_eq!(sniffed, given, "{file}");
        assert_eq!(given["format"], format, "{file}");
        assert_eq!(given["unrecognized_lines"], 0, "{file}: {given}");
        let events = &given["events"];
        for kind in [
            "terminated_by_signal",
            "terminating_other_processes",
            "reinitializing",
            "redo_start",
            "redo_done",
        ] {
            assert_eq!(events[kind], 1, "{file}: {kind} in {events}");
        }
        assert_eq!(events["ready"], 2, "{file}");
    }
    // The journal's four views of one run agree record for record; its one line of another
    // program is counted, not parsed.
    let short = stats(&[fixture("pg15-journal-short.log").to_str().unwrap()]);
    for file in [
        "pg15-journal-short-iso.log",
        "pg15-journal-short-precise.log",
        "pg15-journal.json",
    ] {
        let s = stats(&[fixture(file).to_str().unwrap()]);
        assert_eq!(
            (&s["records"], &s["events"], &s["other_program_lines"]),
            (
                &short["records"],
                &short["events"],
                &short["other_program_lines"]
            ),
            "{file}"
        );
    }
    assert_eq!(short["other_program_lines"], 1);
    // RDS is stderr with its own prefix, picked without being told.
    let rds = stats(&[fixture("pg15-rds-sigkill.log").to_str().unwrap()]);
    assert_eq!(
        (&rds["format"], &rds["prefix"]),
        (&Value::from("stderr"), &Value::from("%t:%r:%u@%d:[%p]:"))
    );
    // A wrapped format that does not fit the file: every line is counted, nothing parsed.
    let wrong = stats(&[
        fixture("pg15-backend-sigkill.log").to_str().unwrap(),
        "--format",
        "heroku",
    ]);
    assert_eq!(wrong["records"], 0);
    assert_eq!(wrong["unrecognized_lines"], wrong["lines"]);
}
