//! `pgmortem redact` end to end on a real collected bundle.

mod common;
use common::{fixture, pgmortem};
use predicates::prelude::*;

#[test]
fn a_collected_bundle_redacted_is_analysed_the_same() {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("shared.tar.gz");
    let bundle = fixture("incidents/pg15-too-many-clients/pgmortem-dbhost-20261124T043438Z.tar.gz");
    pgmortem()
        .arg("redact")
        .arg(&bundle)
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("wrote "))
        .stdout(predicate::str::contains(
            "hostname       1 replaced (1 distinct)",
        ));
    let findings = |path: &std::path::Path| {
        let output = pgmortem()
            .args(["analyze", "--format", "json"])
            .arg(path)
            .output()
            .unwrap();
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let mut ids: Vec<String> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap().to_owned())
            .collect();
        ids.sort();
        (ids, report["host"].clone())
    };
    let (before, host_before) = findings(&bundle);
    let (after, host_after) = findings(&out);
    assert_eq!(before, after);
    assert!(
        after.contains(&"connection-slots-exhausted".to_owned()),
        "{after:?}"
    );
    assert_eq!(host_before["memory"]["ram"]["value"], 25276502016_u64);
    assert_eq!(host_before["memory"], host_after["memory"]);
    assert_eq!(host_before["processes"], host_after["processes"]);
    // The copy lists redaction.json among its sources, a file for a person (never read as a
    // log), with the counts and no original.
    let text = String::from_utf8(
        pgmortem()
            .args(["analyze", "--sources"])
            .arg(&out)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with("redaction.json") && l.contains(" reference ")),
        "{text}"
    );
    assert!(!text.contains("dbhost"), "{text}");
}

#[test]
fn redact_needs_an_output() {
    pgmortem()
        .arg("redact")
        .arg(fixture("incidents/pg15-memcg-oom-sort"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--output"));
}

#[test]
fn a_host_named_vm_is_replaced_only_where_a_name_is_printed_and_said_so() {
    let scratch = tempfile::tempdir().unwrap();
    let out = scratch.path().join("shared.tar.gz");
    pgmortem()
        .arg("redact")
        .arg(fixture("incidents/pg15-memcg-oom-host-vm"))
        .arg("-o")
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "  hostname host-1: replaced only in the fields that print a name (it is a common \
             word of bundles)",
        ))
        .stdout(predicate::str::contains("query_literal"));
}
