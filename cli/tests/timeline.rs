//! `pgmortem timeline` end to end on a real incident: the merged timeline, filtered by kind and
//! time window, as text and as JSON lines.

mod common;
use common::{fixture, pgmortem, stdout_ok};
use predicates::prelude::*;

const WORK_MEM: &str = "incidents/pg15-memcg-oom-work-mem/pgmortem-dbhost-20261124T053616Z.tar.gz";

/// The events `pgmortem timeline --format json ARGS` prints, one JSON object a line.
fn events(args: &[&str]) -> Vec<serde_json::Value> {
    let out = stdout_ok(
        pgmortem()
            .args(["timeline", "--format", "json"])
            .args(args)
            .arg(fixture(WORK_MEM)),
    );
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect()
}

fn kinds(events: &[serde_json::Value]) -> Vec<&str> {
    events.iter().map(|e| e["kind"].as_str().unwrap()).collect()
}

#[test]
fn the_timeline_is_the_reports_every_event_oldest_first() {
    let report: serde_json::Value = serde_json::from_slice(&stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "json"])
            .arg(fixture(WORK_MEM)),
    ))
    .unwrap();
    let all = events(&[]);
    assert_eq!(&all, report["timeline"].as_array().unwrap());
    assert_eq!(all.len(), 14);
    let times: Vec<jiff::Timestamp> = all
        .iter()
        .map(|e| e["at"].as_str().unwrap().parse().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    for key in ["uncertainty_seconds", "origin", "summary", "path", "line"] {
        assert!(all.iter().all(|e| !e[key].is_null()), "{key}");
    }
}

#[test]
fn kind_keeps_only_the_kinds_asked() {
    let kill_and_ready = events(&["--kind", "oom_report", "--kind", "ready"]);
    assert_eq!(kinds(&kill_and_ready), ["ready", "oom_report", "ready"]);
    // The kill once, though both kernel logs print it: the raw dmesg's copy, placed from boot
    // to within 0.01 s, not dmesg -T's to the second.
    assert_eq!(kill_and_ready[1]["path"], "kernel/dmesg.txt");
    assert_eq!(kill_and_ready[1]["uncertainty_seconds"], 0.01);
}

#[test]
fn since_and_until_keep_a_window_given_in_rfc3339_or_as_utc() {
    // From the kill to the end of redo.
    let window = events(&[
        "--since",
        "2026-11-24 05:29:29.9",
        "--until",
        "2026-11-24T07:29:30.256+02:00",
    ]);
    assert_eq!(window.first().unwrap()["kind"], "oom_report");
    assert_eq!(window.first().unwrap()["path"], "kernel/dmesg.txt");
    assert_eq!(window.last().unwrap()["kind"], "redo_done");
    assert_eq!(window.len(), 9, "{:?}", kinds(&window));
    let same = events(&[
        "--since",
        "2026-11-24T05:29:29.9Z",
        "--until",
        "2026-11-24 05:29:30.256",
    ]);
    assert_eq!(window, same);
    // Both filters at once: the crash line and what came after it, only readiness.
    let ready_after = events(&["--since", "2026-11-24 05:29:29", "--kind", "ready"]);
    assert_eq!(ready_after.len(), 1);
    assert_eq!(ready_after[0]["line"], 16);
}

#[test]
fn text_lines_give_utc_the_error_bar_and_file_line() {
    let out = String::from_utf8(stdout_ok(
        pgmortem()
            .args([
                "timeline",
                "--kind",
                "oom_report",
                "--kind",
                "terminated_by_signal",
            ])
            .arg(fixture(WORK_MEM)),
    ))
    .unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines[0].starts_with("2026-11-24T05:29:29.924706954Z  ±0.01 s   kernel    oom_report  "),
        "{out}"
    );
    assert!(lines[0].ends_with("   (kernel/dmesg.txt:2)"), "{out}");
    assert!(
        lines[1].contains(
            "terminated_by_signal  server process (PID 32691) was terminated by signal 9"
        ),
        "{out}"
    );
}

#[test]
fn a_bad_time_is_a_usage_error_that_says_what_is_expected() {
    for (flag, value) in [("--since", "yesterday"), ("--until", "2026-11-31 00:00:00")] {
        pgmortem()
            .args(["timeline", flag, value])
            .arg(fixture(WORK_MEM))
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicate::str::contains(flag))
            .stderr(predicate::str::contains("RFC 3339"))
            .stderr(predicate::str::contains("2026-11-24 05:29:10"));
    }
}

#[test]
fn a_window_that_ends_before_it_starts_is_an_error() {
    pgmortem()
        .args(["timeline", "--since", "2026-11-24 06:00:00", "--until"])
        .arg("2026-11-24 05:00:00")
        .arg(fixture(WORK_MEM))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is after --until"));
}

#[test]
fn a_kind_the_bundle_lacks_is_said_on_stderr_unless_quiet() {
    pgmortem()
        .args(["timeline", "--kind", "segfault"])
        .arg(fixture(WORK_MEM))
        .assert()
        .success()
        .stdout("")
        .stderr(predicate::str::contains("no event of kind \"segfault\""))
        .stderr(predicate::str::contains("oom_report"));
    pgmortem()
        .args(["timeline", "--quiet", "--kind", "segfault"])
        .arg(fixture(WORK_MEM))
        .assert()
        .success()
        .stdout("")
        .stderr("");
}

#[test]
fn a_missing_bundle_is_a_clear_error_naming_it() {
    pgmortem()
        .args(["timeline", "/nonexistent/bundle.tar.gz"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/bundle.tar.gz"));
}
