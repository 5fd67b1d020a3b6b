//! `pgmortem analyze --format html` on real incidents: one self-contained page with the
//! incident, every finding, the OOM report explained, and the flame graph of a perf capture.

mod common;

use common::{fixture, pgmortem, stdout_ok};

fn bundle(name: &str) -> std::path::PathBuf {
    let dir = fixture(&format!("incidents/{name}"));
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap()
}

fn finding_ids(name: &str) -> Vec<String> {
    let json = stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "json"])
            .arg(bundle(name)),
    );
    let report: serde_json::Value = serde_json::from_slice(&json).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn html_of_an_oom_kill_is_one_page_with_the_incident_and_every_finding() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.html");
    stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "html", "-o"])
            .arg(&out)
            .arg(bundle("pg15-memcg-oom-work-mem")),
    );
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    assert!(page.len() < 2 << 20);
    assert!(page.contains("<h1>pgmortem report: dbhost</h1>"));
    assert!(page.contains("PostgreSQL server process PID 32691"));
    assert!(page.contains("id=\"span-1\""));
    assert!(page.contains("The kernel's OOM report, explained"));
    for id in finding_ids("pg15-memcg-oom-work-mem") {
        assert!(page.contains(&format!("data-rule=\"{id}\"")), "{id}");
    }
    for fetch in [
        "<link",
        "<script src",
        "src=\"http",
        "href=\"http",
        "url(",
        "@import",
    ] {
        assert!(!page.contains(fetch), "{fetch}");
    }
}

#[test]
fn html_goes_to_standard_output_without_output() {
    let page = stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "html"])
            .arg(bundle("pg15-memcg-oom-work-mem")),
    );
    assert!(page.starts_with(b"<!DOCTYPE html>"));
}

#[test]
fn html_of_a_perf_capture_embeds_the_flame_graph() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.html");
    stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "html", "--output"])
            .arg(&out)
            .arg(bundle("pg15-thp-compaction-perf")),
    );
    let page = std::fs::read_to_string(&out).unwrap();
    assert!(page.contains(">perf samples</text>"));
    assert!(page.contains("<iframe class=\"flame\""));
    assert!(page.contains("compaction"));
    for id in finding_ids("pg15-thp-compaction-perf") {
        assert!(page.contains(&format!("data-rule=\"{id}\"")), "{id}");
    }
}

#[test]
fn html_draws_the_kernels_storage_and_file_system_events_with_their_own_marks() {
    // pg15-io-errors: a loop device whose backing tmpfs filled (the block layer's `critical
    // space allocation error`), ext4's failures after it, and its journal aborted.
    let page = String::from_utf8(stdout_ok(
        pgmortem()
            .args(["analyze", "--quiet", "--format", "html"])
            .arg(bundle("pg15-io-errors")),
    ))
    .unwrap();
    let storage = page.matches("<path class=\"mk fam-storage\"").count();
    let filesystem = page.matches("<rect class=\"mk fam-fs\"").count();
    assert!(storage >= 10 && filesystem >= 2, "{storage} {filesystem}");
    // Each mark's hover text: its time, kind, summary and line, escaped.
    assert!(page.contains(
        "<title>2026-11-28 16:04:42.076 UTC  storage_error\nWRITE failed on loop0 at sector 475568: \
         critical space allocation error (the device&#39;s backing store is full)\n\
         kernel/dmesg.txt:4</title>"
    ));
    assert!(page.contains("<text class=\"marklabel\" x=\"970.26\" y=\"59.0\">I/O</text>"));
    // The legend names the families drawn, and only those.
    assert!(page.contains("</svg> storage I/O error"));
    assert!(page.contains("</svg> file-system error, shutdown or read-only remount"));
    assert!(!page.contains("</svg> hardware error"));
    assert!(!page.contains("</svg> user-space OOM killer"));
    // An OOM kill's page has none of them.
    let page = String::from_utf8(stdout_ok(
        pgmortem()
            .args(["analyze", "--quiet", "--format", "html"])
            .arg(bundle("pg15-memcg-oom-work-mem")),
    ))
    .unwrap();
    assert!(!page.contains("mk fam-") && !page.contains("Kernel lane:"));
}
