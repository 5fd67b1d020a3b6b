//! `pgmortem check` on the real incident fixtures: a fixture that gets its diagnosis passes,
//! one whose expected.json no longer matches fails with what differed (text, JUnit XML,
//! GitHub annotations), `--update` writes an expected.json that then passes.

use std::path::Path;

mod common;
use common::{fixture, pgmortem};
use predicates::prelude::*;

const INCIDENT: &str = "incidents/pg15-memcg-oom-work-mem";

/// A copy of the fixture INCIDENT in a scratch directory (its bundle linked, not copied),
/// with `expected` as its expected.json when given.
fn scratch_fixture(expected: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let fixture_dir = dir.path().join("work-mem");
    std::fs::create_dir(&fixture_dir).unwrap();
    for entry in std::fs::read_dir(fixture(INCIDENT)).unwrap() {
        let path = entry.unwrap().path();
        if path.to_string_lossy().ends_with(".tar.gz") {
            std::os::unix::fs::symlink(&path, fixture_dir.join(path.file_name().unwrap())).unwrap();
        }
    }
    if let Some(text) = expected {
        std::fs::write(fixture_dir.join("expected.json"), text).unwrap();
    }
    dir
}

fn fixture_dir(scratch: &tempfile::TempDir) -> std::path::PathBuf {
    scratch.path().join("work-mem")
}

#[test]
fn a_fixture_that_gets_its_diagnosis_passes() {
    pgmortem()
        .args(["check"])
        .arg(fixture(INCIDENT))
        .assert()
        .success()
        .stdout(
            predicate::str::is_match(r"(?m)^PASS pg15-memcg-oom-work-mem +\d+\.\d\d s$").unwrap(),
        )
        .stdout(predicate::str::contains("1 fixture(s): 1 passed, 0 failed"));
}

#[test]
fn a_changed_diagnosis_fails_with_what_differed() {
    let scratch = scratch_fixture(Some(
        r#"{"must": ["crash-restart"], "must_not": ["oom-kill-crash-restart"],
            "incidents": [{"kind": "oom_kill", "cause": "oom_killer", "outage_seconds": [100, 200]}],
            "only_listed_incidents": true}"#,
    ));
    let junit = scratch.path().join("junit.xml");
    let out = pgmortem()
        .args(["check", "--junit"])
        .arg(&junit)
        .arg(fixture_dir(&scratch))
        .env_remove("GITHUB_ACTIONS")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(text.contains("FAIL work-mem"), "{text}");
    assert!(
        text.contains("finding crash-restart missing (the report has: oom-kill-crash-restart"),
        "{text}"
    );
    assert!(
        text.contains("finding oom-kill-crash-restart present: "),
        "{text}"
    );
    assert!(
        text.contains("no incident is oom_kill, cause oom_killer, outage 100–200 s (the report has: oom_kill (oom_killer) pid "),
        "{text}"
    );
    assert!(text.contains("1 fixture(s): 0 passed, 1 failed"), "{text}");
    assert!(!text.contains("::error"), "{text}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"<testsuite name="pgmortem check" tests="1" failures="1""#),
        "{xml}"
    );
    assert!(
        xml.contains(r#"<testcase classname="pgmortem.check" name="work-mem""#),
        "{xml}"
    );
    assert!(
        xml.contains("<failure message=\"finding crash-restart missing"),
        "{xml}"
    );
}

#[test]
fn github_actions_get_one_annotation_per_difference() {
    let scratch = scratch_fixture(Some(r#"{"must": ["crash-restart", "panic-restart"]}"#));
    let out = pgmortem()
        .args(["check"])
        .arg(fixture_dir(&scratch))
        .env("GITHUB_ACTIONS", "true")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let annotations: Vec<&str> = text.lines().filter(|l| l.starts_with("::error ")).collect();
    assert_eq!(annotations.len(), 2, "{text}");
    assert!(
        annotations[0].contains(
            "expected.json,title=pgmortem check%3A work-mem::finding crash-restart missing"
        ),
        "{text}"
    );
}

#[test]
fn a_misspelt_expectation_is_a_failure_not_a_pass() {
    for (expected, says) in [
        (
            r#"{"must": ["oom-kill-crash-restrat"]}"#,
            "unknown finding id(s) oom-kill-crash-restrat",
        ),
        (r#"{"must_nt": []}"#, "unknown field `must_nt`"),
        (r#"{"must": "#, "EOF while parsing"),
    ] {
        let scratch = scratch_fixture(Some(expected));
        pgmortem()
            .args(["check"])
            .arg(fixture_dir(&scratch))
            .assert()
            .code(1)
            .stdout(predicate::str::contains("FAIL work-mem"))
            .stdout(predicate::str::contains(says));
    }
}

#[test]
fn update_writes_an_expectation_that_then_passes() {
    let scratch = scratch_fixture(None);
    pgmortem()
        .args(["check"])
        .arg(fixture_dir(&scratch))
        .assert()
        .code(1)
        .stdout(predicate::str::contains(
            "no expected.json (`pgmortem check --update",
        ));
    pgmortem()
        .args(["check", "--update"])
        .arg(fixture_dir(&scratch))
        .assert()
        .success()
        .stdout(predicate::str::contains("expected.json: "));
    let written: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture_dir(&scratch).join("expected.json")).unwrap(),
    )
    .unwrap();
    let must: Vec<&str> = written["must"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(must.contains(&"oom-kill-crash-restart"), "{written}");
    assert!(must.contains(&"work-mem-exceeds-memory"), "{written}");
    let must_not = written["must_not"].as_array().unwrap();
    assert!(must_not.iter().any(|v| v == "crash-restart"), "{written}");
    assert_eq!(written["incidents"][0]["kind"], "oom_kill");
    assert_eq!(written["incidents"][0]["signal"], 9);
    assert!(
        written["incidents"][0]["outage_seconds"].is_array(),
        "{written}"
    );
    assert_eq!(written["only_listed_incidents"], true);
    pgmortem()
        .args(["check"])
        .arg(fixture_dir(&scratch))
        .assert()
        .success();
}

#[test]
fn sources_state_how_each_file_must_be_read() {
    let scratch = scratch_fixture(Some(
        r#"{"sources": {
            "kernel/dmesg.txt": {"kind": "kernel_log", "max_unrecognized_lines": 0},
            "memory/meminfo.txt": {"kind": "postgres_log"},
            "postgres/server.log": {"min_records": 1000000},
            "no/such/file.log": {"kind": "postgres_log"},
            "logs/server.log": {"kind": "postgres_log"}}}"#,
    ));
    let out = pgmortem()
        .args(["check"])
        .arg(fixture_dir(&scratch))
        .env_remove("GITHUB_ACTIONS")
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    assert!(!text.contains("kernel/dmesg.txt"), "{text}");
    assert!(
        text.contains("source memory/meminfo.txt read as meminfo, expected postgres_log"),
        "{text}"
    );
    assert!(
        predicate::str::is_match(
            r"source postgres/server\.log: \d+ record\(s\), at least 1000000 expected"
        )
        .unwrap()
        .eval(&text),
        "{text}"
    );
    assert!(
        predicate::str::is_match(
            r"no source no/such/file\.log \(\d+ source\(s\) in the report, none named file\.log\)"
        )
        .unwrap()
        .eval(&text),
        "{text}"
    );
    assert!(
        text.contains("no source logs/server.log (the report has postgres/server.log)"),
        "{text}"
    );
    // `--update` rewrites the diagnosis but keeps what a person stated about the sources.
    pgmortem()
        .args(["check", "--update"])
        .arg(fixture_dir(&scratch))
        .assert()
        .success();
    let written: serde_json::Value = serde_json::from_slice(
        &std::fs::read(fixture_dir(&scratch).join("expected.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        written["sources"]["kernel/dmesg.txt"]["kind"], "kernel_log",
        "{written}"
    );
    assert!(written["must"].as_array().is_some_and(|m| !m.is_empty()));
}

#[test]
fn a_path_that_is_no_directory_is_a_usage_error() {
    pgmortem()
        .args(["check", "no/such/fixture"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no/such/fixture: not a directory"));
    pgmortem().args(["check"]).assert().code(2);
    // Keep the fixture path helper honest.
    assert!(Path::new(&fixture(INCIDENT)).is_dir());
}
