//! `pgmortem analyze` on one real incident bundle (pg15-memcg-oom-work-mem) in every archive
//! form (fixtures/formats/bundle/, made by fixtures/record/bundle-forms.sh with the real
//! tools): each gives the report the collector's .tar.gz gives, file for file; nested in a
//! directory or another archive it gives the same diagnosis; forms that cannot be read are
//! an error (exit 2) naming the format; standard input and several files given together.

use std::path::Path;

mod common;
use common::{fixture, pgmortem, stdout_ok};

const TGZ: &str = "incidents/pg15-memcg-oom-work-mem/pgmortem-dbhost-20261124T053616Z.tar.gz";

fn analyze_json(path: &Path) -> serde_json::Value {
    let out = stdout_ok(pgmortem().args(["analyze", "--format", "json"]).arg(path));
    serde_json::from_slice(&out).expect("valid JSON")
}

/// The parts of a report that do not depend on the archive's form.
fn diagnosis(report: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "incidents": report["incidents"],
        "findings": report["findings"],
        "caveats": report["caveats"],
        "sources": report["sources"],
        "host": report["host"],
    })
}

#[test]
fn every_archive_form_gives_the_report_of_the_tar_gz() {
    let expected = diagnosis(&analyze_json(&fixture(TGZ)));
    let ids: Vec<_> = expected["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"oom-kill-crash-restart"), "{ids:?}");
    assert_eq!(expected["incidents"].as_array().unwrap().len(), 1);
    for form in [
        "formats/bundle/pg15-memcg-oom-work-mem.tar.xz",
        "formats/bundle/pg15-memcg-oom-work-mem.tar.bz2",
        "formats/bundle/pg15-memcg-oom-work-mem.tar",
        "formats/bundle/pg15-memcg-oom-work-mem.zip",
    ] {
        let got = diagnosis(&analyze_json(&fixture(form)));
        assert!(got == expected, "{form}");
    }
}

/// What a diagnosis found, whatever the paths its evidence names: finding ids and severities,
/// and each incident's kind, cause and PIDs.
fn findings(report: &serde_json::Value) -> serde_json::Value {
    let ids: Vec<_> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["id"].clone(), f["severity"].clone()))
        .collect();
    let incidents: Vec<_> = report["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            serde_json::json!([
                i["kind"],
                i["cause"],
                i["kernel_kill"]["pid"],
                i["postgres_crash"]["pid"],
                i["outage_seconds"]
            ])
        })
        .collect();
    serde_json::json!({"findings": ids, "incidents": incidents})
}

#[test]
fn a_bundle_nested_in_a_directory_or_an_archive_gives_the_same_diagnosis() {
    let expected = findings(&analyze_json(&fixture(TGZ)));
    let name = "pgmortem-dbhost-20261124T053616Z.tar.gz/";
    for (input, prefix) in [
        ("incidents/pg15-memcg-oom-work-mem", name),
        ("formats/bundle/incident-attachment.zip", name),
        (
            "formats/bundle/nested-tar-xz.tar.gz",
            "pg15-memcg-oom-work-mem.tar.xz/",
        ),
    ] {
        let report = analyze_json(&fixture(input));
        assert_eq!(findings(&report), expected, "{input}");
        // Evidence names the file inside the archive it came from.
        let evidence = report["findings"][0]["evidence"][0]["path"]
            .as_str()
            .unwrap();
        assert!(evidence.starts_with(prefix), "{input}: {evidence}");
        // The notes beside the bundle are files for a person, not logs.
        for s in report["sources"].as_array().unwrap() {
            let path = s["path"].as_str().unwrap();
            if !path.starts_with(prefix) {
                assert_eq!(s["kind"], "unknown", "{input}: {path}");
            }
        }
    }
}

#[test]
fn a_format_that_cannot_be_read_is_an_error_with_what_to_do() {
    for (file, says) in [
        (
            "pg15-memcg-oom-work-mem.7z",
            "7z archives cannot be read: extract it (7z x FILE) and give the directory",
        ),
        (
            "pg15-memcg-oom-work-mem.tar.lz4",
            "lz4-compressed files cannot be read",
        ),
        (
            "pg15-memcg-oom-work-mem.tar.lz",
            "lzip-compressed files cannot be read",
        ),
        (
            "pg15-memcg-oom-work-mem.tar.Z",
            "Unix compress (.Z) files cannot be read",
        ),
        (
            "edge-encrypted.zip",
            "every file in this zip archive is encrypted",
        ),
        ("edge-corrupt.tar.xz", "corrupt xz data"),
        ("edge-truncated.zip", "not a zip archive that can be read"),
    ] {
        let out = pgmortem()
            .arg("analyze")
            .arg(fixture(&format!("formats/bundle/{file}")))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{file}");
        assert!(out.stdout.is_empty(), "{file}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.starts_with("pgmortem: error: ") && err.contains(says),
            "{err}"
        );
    }
}

#[test]
fn inside_a_directory_it_is_said_first_in_the_report() {
    let dir = tempfile::tempdir().unwrap();
    for file in ["pg15-memcg-oom-work-mem.7z", "pg15-events.log.xz"] {
        std::fs::copy(
            fixture(&format!("formats/bundle/{file}")),
            dir.path().join(file),
        )
        .unwrap();
    }
    let out = stdout_ok(pgmortem().arg("analyze").arg(dir.path()));
    let text = String::from_utf8(out).unwrap();
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.contains("change the reading")),
        "{text}"
    );
    let first = text
        .lines()
        .skip_while(|l| !l.starts_with("Caveats (they change the reading)"))
        .nth(1)
        .unwrap();
    assert_eq!(
        first,
        "  ! `pg15-memcg-oom-work-mem.7z` could not be opened, so nothing it holds is in this \
         report: 7z archives cannot be read: extract it (7z x FILE) and give the directory"
    );
    let report = analyze_json(dir.path());
    assert_eq!(report["caveats"][0]["kind"], "archive_not_opened");
}

#[test]
fn standard_input_is_read_whole_whatever_its_form() {
    let expected = findings(&analyze_json(&fixture(TGZ)));
    for form in [
        TGZ,
        "formats/bundle/pg15-memcg-oom-work-mem.tar.xz",
        "formats/bundle/pg15-memcg-oom-work-mem.zip",
    ] {
        let bytes = std::fs::read(fixture(form)).unwrap();
        let out = stdout_ok(
            pgmortem()
                .args(["analyze", "--format", "json", "-"])
                .write_stdin(bytes),
        );
        let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(findings(&report), expected, "{form}");
    }
    // A log bigger than what is held in memory (a 32 MiB budget holds 256 KiB of one file)
    // is read to its end, not cut.
    let log = std::fs::read(fixture("formats/pglog/pg15-events.log")).unwrap();
    let big: Vec<u8> = log.iter().copied().cycle().take(log.len() * 40).collect();
    let out = stdout_ok(
        pgmortem()
            .args([
                "analyze",
                "--format",
                "json",
                "--memory-limit",
                "32MiB",
                "-",
            ])
            .write_stdin(big.clone()),
    );
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let source = &report["sources"][0];
    assert_eq!(source["path"], "stdin");
    assert_eq!(source["kind"], "postgres_log");
    assert_eq!(source["bytes"], big.len() as u64);
    assert_eq!(
        report["caveats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == "log_not_read_whole")
            .count(),
        0
    );
    // `timeline -` too.
    let timeline = stdout_ok(
        pgmortem()
            .args(["timeline", "-"])
            .write_stdin(std::fs::read(fixture(TGZ)).unwrap()),
    );
    assert!(String::from_utf8_lossy(&timeline).contains("terminated by signal 9"));
}

#[test]
fn several_files_are_one_bundle() {
    let case = fixture("incidents/pg15-memcg-oom-sort");
    let alone = analyze_json(&case.join("postgresql.log"));
    assert_eq!(alone["incidents"][0]["kind"], "crash_restart");
    let out = stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "json"])
            .arg(case.join("dmesg.txt"))
            .arg(case.join("postgresql.log")),
    );
    let both: serde_json::Value = serde_json::from_slice(&out).unwrap();
    assert_eq!(both["incidents"][0]["kind"], "oom_kill");
    assert_eq!(both["incidents"][0]["cause"], "oom_killer");
    // Two files of the same name are kept apart, and said so.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("other")).unwrap();
    let copy = dir.path().join("other/postgresql.log");
    std::fs::copy(case.join("postgresql.log"), &copy).unwrap();
    let out = stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "json"])
            .arg(case.join("postgresql.log"))
            .arg(&copy),
    );
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let logs: Vec<_> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["kind"] == "postgres_log")
        .collect();
    assert_eq!(logs.len(), 2);
    for s in logs {
        let path = s["path"].as_str().unwrap();
        assert!(path.ends_with("/postgresql.log"), "{path}");
        assert!(s["note"].as_str().unwrap().starts_with("given as "), "{s}");
    }
    // A missing one is an error naming it.
    let out = pgmortem()
        .arg("analyze")
        .arg(case.join("dmesg.txt"))
        .arg("no/such/file.log")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/file.log"));
}
