//! The `pgmortem` command end to end, on the real fixtures.

use std::path::Path;

mod common;
use common::{fixture, pgmortem};
use predicates::prelude::*;

fn json_of(output: &[u8]) -> serde_json::Value {
    serde_json::from_slice(output).expect("valid JSON")
}

/// Runs `pgmortem ARGS PATH`, expects success, and parses standard output as JSON.
fn json_run(args: &[&str], path: &Path) -> serde_json::Value {
    let out = pgmortem()
        .args(args)
        .arg(path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    json_of(&out)
}

#[test]
fn analyze_json_keeps_the_report_contract() {
    let report = json_run(
        &["analyze", "--format", "json"],
        &fixture("incidents/pg15-memcg-oom-sort"),
    );
    assert_eq!(report["schema"], "pgmortem.report/v1");
    for source in report["sources"].as_array().unwrap() {
        for key in ["path", "kind", "lines", "unrecognized_lines"] {
            assert!(source.get(key).is_some(), "source lacks {key}: {source}");
        }
    }
    let kinds: Vec<_> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"kernel_log") && kinds.contains(&"postgres_log"),
        "{kinds:?}"
    );
    let incident = &report["incidents"][0];
    for key in [
        "kind",
        "started_at",
        "kernel_kill",
        "postgres_crash",
        "outage_seconds",
        "redo_seconds",
        "wal_replayed_bytes",
        "clock_skew_seconds",
        "confidence",
    ] {
        assert!(incident.get(key).is_some(), "incident lacks {key}");
    }
    assert_eq!(incident["kind"], "oom_kill");
    assert!(incident["started_at"].as_str().unwrap().ends_with('Z'));
    for key in [
        "pid",
        "comm",
        "anon_rss_kb",
        "total_vm_kb",
        "constraint",
        "memcg",
    ] {
        assert!(
            incident["kernel_kill"].get(key).is_some(),
            "kernel_kill lacks {key}"
        );
    }
    for key in ["pid", "process", "signal", "query"] {
        assert!(
            incident["postgres_crash"].get(key).is_some(),
            "postgres_crash lacks {key}"
        );
    }
    let finding = &report["findings"][0];
    for key in ["id", "severity", "title", "evidence"] {
        assert!(finding.get(key).is_some(), "finding lacks {key}");
    }
    let evidence = &finding["evidence"][0];
    assert!(evidence["path"].is_string() && evidence["line"].is_u64());
}

#[test]
fn analyze_text_names_the_victim_the_query_and_the_outage() {
    pgmortem()
        .arg("analyze")
        .arg(fixture("incidents/pg15-memcg-oom-sort"))
        .assert()
        .success()
        .stdout(predicate::str::contains("Incident 1: oom_kill"))
        .stdout(predicate::str::contains("OOM kill of `postgres` pid"))
        .stdout(predicate::str::contains("generate_series"))
        .stdout(predicate::str::contains("outage"));
}

#[test]
fn analyze_accepts_a_single_file() {
    let report = json_run(
        &["analyze", "--format", "json"],
        &fixture("incidents/pg15-sigkill-backend/postgresql.log"),
    );
    assert_eq!(report["sources"][0]["kind"], "postgres_log");
    assert_eq!(report["incidents"][0]["kind"], "crash_restart");
}

#[test]
fn analyze_writes_to_a_file_with_output() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.json");
    pgmortem()
        .args(["analyze", "--format", "json", "-o"])
        .arg(&path)
        .arg(fixture("incidents/pg15-memcg-oom-sort"))
        .assert()
        .success()
        .stdout("");
    let report = json_of(&std::fs::read(&path).unwrap());
    assert_eq!(report["schema"], "pgmortem.report/v1");
}

#[test]
fn a_boot_time_that_agrees_with_the_bundle_is_used() {
    // The bundle's date − uptime is 17:07:48.694; one second off is within the error bars.
    let report = json_run(
        &[
            "analyze",
            "--format",
            "json",
            "--boot-time",
            "2026-11-21T17:07:49Z",
        ],
        &fixture("incidents/pg15-memcg-oom-sort"),
    );
    assert_eq!(report["clock"]["boot_time_source"], "option");
    assert_eq!(report["clock"]["boot_time"], "2026-11-21T17:07:49Z");
    // No clock caveat (the capture's only one says it has no server settings).
    let kinds: Vec<&str> = report["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["no_settings"]);
}

#[test]
fn a_boot_time_that_contradicts_the_bundle_is_reported_and_the_kill_counted_once() {
    // 14 h off: the same OOM kill in dmesg.txt and dmesg-T.txt would land 14 h apart.
    let report = json_run(
        &[
            "analyze",
            "--format",
            "json",
            "--boot-time",
            "2026-11-21T03:07:48Z",
        ],
        &fixture("incidents/pg15-memcg-oom-sort"),
    );
    assert_eq!(report["clock"]["boot_time_source"], "date_and_uptime");
    let caveats = report["caveats"].as_array().unwrap();
    assert_eq!(caveats[0]["kind"], "clock_anchors_disagree");
    assert!(caveats[0]["text"].as_str().unwrap().contains("--boot-time"));
    let incidents = report["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1, "{incidents:#?}");
    assert_eq!(incidents[0]["kind"], "oom_kill");
}

#[test]
fn a_missing_bundle_is_a_clear_error_naming_it() {
    pgmortem()
        .args(["analyze", "/nonexistent/pgmortem-bundle"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/pgmortem-bundle"));
}

#[test]
fn max_log_bytes_reads_the_end_of_each_log_and_says_so_first() {
    let out = pgmortem()
        .args(["analyze", "--max-log-bytes", "1KiB", "--threads", "1"])
        .arg(fixture("incidents/pg15-sigkill-backend"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    // Announced under the headline, said under "Caveats" after the findings, before the
    // incidents and the sources.
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.contains("caveats change the reading")),
        "{text}"
    );
    let first = text
        .find("Caveats (they change the reading)\n  ! `postgresql.log`: only its last")
        .unwrap_or_else(|| {
            panic!("{text}");
        });
    assert!(first < text.find("sources read").unwrap());
    assert!(
        text.contains("of 1.8 KiB were read: the 1024-byte cap on logs"),
        "{text}"
    );
    pgmortem()
        .args(["analyze", "--max-log-bytes", "lots", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--max-log-bytes"));
}

#[test]
fn a_bad_boot_time_is_a_usage_error() {
    pgmortem()
        .args(["analyze", "--boot-time", "yesterday", "."])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--boot-time"));
}

#[test]
fn unreadable_and_empty_files_are_listed_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("incidents/pg15-sigkill-backend/postgresql.log"),
        dir.path().join("postgresql.log"),
    )
    .unwrap();
    std::fs::write(dir.path().join("empty"), "").unwrap();
    std::os::unix::fs::symlink("/etc/hostname", dir.path().join("elsewhere")).unwrap();
    let report = json_run(&["analyze", "--format", "json"], dir.path());
    let sources = report["sources"].as_array().unwrap();
    let by_path = |p: &str| sources.iter().find(|s| s["path"] == p).unwrap().clone();
    assert_eq!(by_path("empty")["kind"], "unknown");
    assert_eq!(by_path("elsewhere")["kind"], "unreadable");
    assert!(
        by_path("elsewhere")["note"]
            .as_str()
            .unwrap()
            .contains("symbolic link")
    );
    assert_eq!(report["incidents"][0]["kind"], "crash_restart");
}

#[test]
fn parse_kernel_prints_one_json_object_per_record() {
    let out = pgmortem()
        .args(["parse", "kernel"])
        .arg(fixture("incidents/pg15-memcg-oom-sort/dmesg.txt"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let records: Vec<serde_json::Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let oom: Vec<_> = records
        .iter()
        .filter(|r| r["kind"] == "oom_report")
        .collect();
    assert_eq!(oom.len(), 1);
    let oom = oom[0];
    for key in [
        "trigger",
        "victim",
        "constraint",
        "memcg",
        "tasks",
        "mem_info",
    ] {
        assert!(oom.get(key).is_some(), "oom_report lacks {key}");
    }
    for key in [
        "pid",
        "comm",
        "anon_rss_kb",
        "file_rss_kb",
        "shmem_rss_kb",
        "total_vm_kb",
        "pgtables_kb",
        "oom_score_adj",
    ] {
        assert!(oom["victim"].get(key).is_some(), "victim lacks {key}");
    }
    assert_eq!(oom["victim"]["comm"], "postgres");
    assert_eq!(oom["constraint"], "memcg");
}

#[test]
fn parse_kernel_stats_counts_lines_records_and_unrecognized() {
    let stats = json_run(
        &["parse", "kernel", "--stats"],
        &fixture("incidents/pg15-memcg-oom-sort/dmesg.txt"),
    );
    let lines = std::fs::read_to_string(fixture("incidents/pg15-memcg-oom-sort/dmesg.txt"))
        .unwrap()
        .lines()
        .count() as u64;
    assert_eq!(stats["lines"], lines);
    assert_eq!(stats["records"], 1);
    assert_eq!(stats["unrecognized_lines"], 0);
}

#[test]
fn parse_kernel_of_a_missing_file_names_it() {
    pgmortem()
        .args(["parse", "kernel", "/nonexistent/dmesg"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read /nonexistent/dmesg"));
}

#[test]
fn parse_kernel_survives_binary_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("garbage");
    let mut bytes: Vec<u8> = (0..=255u8).cycle().take(64 * 1024).collect();
    bytes.extend_from_slice(b"\n[  1.000000] \xff\xfe invoked oom-killer: \0\0\n");
    std::fs::write(&path, bytes).unwrap();
    let out = pgmortem()
        .args(["parse", "kernel", "--stats"])
        .arg(&path)
        .assert()
        .success();
    let stats = json_of(&out.get_output().stdout);
    assert!(stats["lines"].as_u64().unwrap() > 0);
}

#[test]
fn a_closed_pipe_ends_quietly() {
    // `pgmortem … | head -1`: the reader goes away; ripgrep's behaviour, exit 0, no message.
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("pgmortem"))
        .args(["analyze", "--format", "json"])
        .arg(fixture("incidents/pg15-memcg-oom-work-mem"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn an_error_cause_is_said_once() {
    pgmortem()
        .args(["analyze", "no/such/bundle"])
        .assert()
        .code(2)
        .stderr("pgmortem: error: cannot open bundle no/such/bundle: No such file or directory (os error 2)\n");
}

#[test]
fn match_tolerance_must_be_a_finite_number_of_seconds() {
    for bad in ["NaN", "inf", "-5", "x"] {
        pgmortem()
            .args(["analyze", &format!("--match-tolerance={bad}")])
            .arg(fixture("incidents/pg15-memcg-oom-sort"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--match-tolerance"));
    }
    pgmortem()
        .args(["analyze", "--match-tolerance=0"])
        .arg(fixture("incidents/pg15-memcg-oom-sort"))
        .assert()
        .success();
}

#[test]
fn memory_limit_is_a_size_of_at_least_32_mib() {
    for bad in ["1MiB", "31MiB", "-5", "x", "1QiB"] {
        pgmortem()
            .args(["analyze", &format!("--memory-limit={bad}")])
            .arg(fixture("incidents/pg15-memcg-oom-sort"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--memory-limit"));
    }
}

#[test]
fn memory_limit_keeps_the_end_of_a_perf_script_over_half_of_it() {
    // A real perf script, repeated to 17 MB: over half of a 32 MiB budget, it keeps its last
    // 16 MiB, and the report says so first; with the default budget it is read whole.
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("perf")).unwrap();
    let sample = std::fs::read(fixture("formats/perf/local-pg15-pgbench-a-g.txt")).unwrap();
    std::fs::write(dir.path().join("perf/perf-script.txt"), sample.repeat(33)).unwrap();
    let caveat = |limit: &str| {
        let out = pgmortem()
            .args(["analyze", "--format", "json", "--memory-limit", limit])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success());
        let report = json_of(&out.stdout);
        report["caveats"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["kind"] == "log_not_read_whole")
            .map(|c| c["text"].as_str().unwrap().to_owned())
    };
    let text = caveat("32MiB").expect("a caveat at 32 MiB");
    assert!(
        text.starts_with("`perf/perf-script.txt`: only its last 16.0 MiB of 16.3 MiB were read"),
        "{text}"
    );
    assert_eq!(caveat("512MiB"), None);
}

#[test]
fn the_output_never_overwrites_the_input() {
    let scratch = tempfile::tempdir().unwrap();
    let bundle = scratch.path().join("b.tar.gz");
    let original = std::fs::read(
        std::fs::read_dir(fixture("incidents/pg15-memcg-oom-work-mem"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
            .unwrap(),
    )
    .unwrap();
    std::fs::write(&bundle, &original).unwrap();
    for args in [vec!["analyze", "-o"], vec!["redact", "-o"]] {
        pgmortem()
            .args(&args)
            .arg(&bundle)
            .arg(&bundle)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "that is the bundle being analysed",
            ));
    }
    assert_eq!(std::fs::read(&bundle).unwrap(), original);
}

/// Asserts `pgmortem ARGS` fails with exit 2, naming `input` and what pgmortem reads.
fn assert_nothing_to_read(args: &[&std::ffi::OsStr], input: &str, held: &str) {
    let output = pgmortem()
        .args(args)
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(output.stdout.is_empty(), "{args:?}: a report was printed");
    assert!(
        stderr.contains(&format!("nothing pgmortem can read in {input}: {held}")),
        "{args:?}: {stderr}"
    );
    // What it looked for, in one more line.
    assert!(
        stderr.contains("PostgreSQL server logs") && stderr.contains("/proc/meminfo"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
}

#[test]
fn nothing_to_read_is_an_error_not_a_clean_bill_of_health() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name);
    std::fs::write(path("empty.log"), "").unwrap();
    std::fs::create_dir(path("empty-dir")).unwrap();
    std::fs::copy("/etc/passwd", path("passwd")).unwrap();
    // An archive of files that are none of pgmortem's kinds, made as `tar -C dir .` makes one
    // (its `./` entry first).
    let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
        std::fs::File::create(path("unrelated.tar.gz")).unwrap(),
        flate2::Compression::default(),
    ));
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Directory);
    header.set_size(0);
    header.set_mode(0o755);
    tar.append_data(&mut header, "./", std::io::empty())
        .unwrap();
    for (name, text) in [
        ("./notes.txt", "call the vendor on Monday\n"),
        ("./inventory.csv", "host,rack\ndb1,12\n"),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_size(text.len() as u64);
        header.set_mode(0o644);
        tar.append_data(&mut header, name, text.as_bytes()).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
    // A FIFO nobody writes to: read as empty at once, never waited on.
    let fifo = path("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());

    let cases = [
        ("empty.log", "1 empty file"),
        ("empty-dir", "no file in it"),
        ("passwd", "1 file of no kind pgmortem knows (passwd)"),
        (
            "unrelated.tar.gz",
            "2 files of no kind pgmortem knows (inventory.csv, notes.txt)",
        ),
        ("fifo", "a pipe that gave nothing (no writer had it open"),
    ];
    for (name, held) in cases {
        let input = path(name);
        let shown = input.display().to_string();
        for command in ["analyze", "timeline"] {
            assert_nothing_to_read(&[command.as_ref(), input.as_os_str()], &shown, held);
        }
    }
    // /etc/passwd itself, and several inputs none of which holds anything.
    assert_nothing_to_read(
        &["analyze".as_ref(), "/etc/passwd".as_ref()],
        "/etc/passwd",
        "1 file of no kind pgmortem knows (passwd)",
    );
    let (a, b) = (path("empty.log"), path("passwd"));
    assert_nothing_to_read(
        &["analyze".as_ref(), a.as_os_str(), b.as_os_str()],
        &format!("2 inputs ({}, {})", a.display(), b.display()),
        "1 empty file; 1 file of no kind pgmortem knows (passwd)",
    );
    // Standard input that holds nothing of use.
    let output = pgmortem()
        .args(["analyze", "-"])
        .write_stdin("nothing to see here\n")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains("nothing pgmortem can read in standard input: 1 file of no kind"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn one_file_pgmortem_reads_among_unrelated_ones_is_enough() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy("/etc/passwd", dir.path().join("passwd")).unwrap();
    std::fs::copy(
        fixture("incidents/pg15-sigkill-backend/postgresql.log"),
        dir.path().join("postgresql.log"),
    )
    .unwrap();
    let report = json_run(&["analyze", "--format", "json"], dir.path());
    assert_eq!(report["incidents"][0]["kind"], "crash_restart");
}

#[test]
fn check_of_a_fixture_whose_bundle_reads_nothing_fails_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let fixture_dir = dir.path().join("nothing-here");
    std::fs::create_dir(&fixture_dir).unwrap();
    std::fs::copy("/etc/passwd", fixture_dir.join("passwd")).unwrap();
    std::fs::write(fixture_dir.join("expected.json"), "{\"must\": []}\n").unwrap();
    let output = pgmortem().arg("check").arg(dir.path()).output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.starts_with("FAIL nothing-here"), "{stdout}");
    assert!(
        stdout.contains("nothing pgmortem can read in")
            && stdout.contains("(expected.json, passwd)"),
        "{stdout}"
    );
    // The second line of the message stays under the first.
    assert!(
        stdout.contains("\n         pgmortem reads PostgreSQL"),
        "{stdout}"
    );
    assert!(stdout.contains("0 passed, 1 failed"), "{stdout}");
}
