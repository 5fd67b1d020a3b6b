//! Every byte of every PostgreSQL log is read: a log bigger than what once was kept (its last
//! 20 MiB) gives the events of its first part, a cap is asked for and then said at the top of
//! the report, and the report is the same from a directory or an archive, on one thread or
//! several. The logs are real captures (fixtures/formats/pglog) put end to end.

use std::path::{Path, PathBuf};

use pgmortem::bundle::{self, OpenOptions};
use pgmortem::{DiagnoseOptions, Report, render};

fn fixture(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A backend killed by signal 9 (and the crash-restart cycle after it) at the start, then a
/// log with no crash repeated until the whole is over `bytes`.
fn crash_then_quiet(bytes: usize) -> Vec<u8> {
    let mut log = fixture("formats/pglog/pg15-backend-sigkill.log");
    let quiet = fixture("formats/pglog/pg13-stale-statistics.log");
    while log.len() < bytes {
        log.extend_from_slice(&quiet);
    }
    log
}

/// A bundle directory: the log as `postgres/server.log`, a real boot `dmesg` put end to end
/// past 1 MiB as `kernel/dmesg.txt`, and the clock readings of the incident the log's crash
/// comes from.
fn bundle_dir(log: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("postgres")).unwrap();
    std::fs::write(dir.path().join("postgres/server.log"), log).unwrap();
    std::fs::create_dir(dir.path().join("kernel")).unwrap();
    let dmesg = fixture("formats/kernel/local-boot-dmesg.txt");
    let dmesg = dmesg.repeat((1 << 20) / dmesg.len() + 1);
    std::fs::write(dir.path().join("kernel/dmesg.txt"), dmesg).unwrap();
    for name in ["uptime.txt", "date.txt", "btime.txt"] {
        let bytes = fixture(&format!("incidents/pg15-sigkill-backend/{name}"));
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    dir
}

/// The same files as a `.tar.zst`, under one top directory as the collector makes it.
fn archive_of(dir: &Path) -> (tempfile::TempDir, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let path = out.path().join("bundle.tar.zst");
    let file = std::fs::File::create(&path).unwrap();
    let mut tar = tar::Builder::new(zstd::Encoder::new(file, 1).unwrap().auto_finish());
    tar.append_dir_all("pgmortem-db-20261121T171600Z", dir)
        .unwrap();
    tar.into_inner().unwrap();
    (out, path)
}

fn crashes(report: &Report) -> usize {
    report
        .incidents
        .iter()
        .filter(|i| i.postgres_crash.is_some())
        .count()
}

#[test]
fn a_log_bigger_than_20_mib_is_read_whole_and_its_first_events_are_found() {
    let log = crash_then_quiet(21 << 20);
    let dir = bundle_dir(&log);
    let report = pgmortem::analyze(dir.path(), &DiagnoseOptions::default()).unwrap();
    // The crash is in the first 3 KiB: only a whole read finds it.
    assert_eq!(crashes(&report), 1, "{:#?}", report.incidents);
    let source = report
        .sources
        .iter()
        .find(|s| s.path == "postgres/server.log")
        .unwrap();
    assert_eq!(source.bytes, log.len() as u64);
    assert_eq!(source.unrecognized_lines, 0);
    assert!(source.note.is_none(), "{:?}", source.note);
    assert!(
        report
            .caveats
            .iter()
            .all(|c| c.kind != "log_not_read_whole"),
        "{:?}",
        report.caveats
    );
}

#[test]
fn a_cap_asked_for_is_said_at_the_top_of_the_report() {
    let log = crash_then_quiet(3 << 20);
    let dir = bundle_dir(&log);
    let options = DiagnoseOptions {
        max_log_bytes: Some(1 << 20),
        ..DiagnoseOptions::default()
    };
    let report = pgmortem::analyze(dir.path(), &options).unwrap();
    // The crash was in the part not read.
    assert_eq!(crashes(&report), 0);
    // Both logs are over the cap: each is named, with how much of it was read.
    let caveats: Vec<&str> = report
        .caveats
        .iter()
        .filter(|c| c.kind == "log_not_read_whole")
        .map(|c| c.text.as_str())
        .collect();
    assert_eq!(caveats.len(), 2, "{:?}", report.caveats);
    assert!(caveats[0].starts_with("`kernel/dmesg.txt`: only its last"));
    for part in [
        "`postgres/server.log`: only its last 1024.0 KiB of 3.0 MiB were read",
        "1048576-byte cap on logs",
        "events before that part are not in this report",
    ] {
        assert!(caveats[1].contains(part), "{part:?} in {}", caveats[1]);
    }
    // In the text, announced under the headline, then under "Caveats".
    let text = render::text(&report);
    assert!(
        text.lines()
            .nth(1)
            .is_some_and(|l| l.contains("3 caveats change the reading")),
        "{text}"
    );
    let read_first =
        text.find("\nCaveats (they change the reading)\n  ! `kernel/dmesg.txt`: only its last");
    assert!(read_first.is_some(), "{text}");
    let server = text.find("\n  ! `postgres/server.log`: only its last");
    assert!(
        server.is_some() && server < text.find("sources read"),
        "{text}"
    );
    let source = report
        .sources
        .iter()
        .find(|s| s.path == "postgres/server.log")
        .unwrap();
    assert!(source.bytes <= 1 << 20);
}

/// A report as JSON, for comparing two of them.
fn json(report: &Report) -> serde_json::Value {
    serde_json::to_value(report).unwrap()
}

/// Opened with logs over 1 MiB left on disk (its file, or a temporary copy), as a big log is.
fn analyze_streamed(path: &Path, threads: usize) -> Report {
    let open = OpenOptions {
        memory_file_bytes: 1 << 20,
        ..OpenOptions::default()
    };
    let bundle = bundle::open(path, &open).unwrap();
    for log in ["postgres/server.log", "kernel/dmesg.txt"] {
        assert!(
            bundle
                .sources
                .iter()
                .any(|s| s.path == log && !s.in_memory()),
            "{log} is read from disk"
        );
    }
    let options = DiagnoseOptions {
        threads: Some(threads),
        parallel_min_bytes: 0,
        ..DiagnoseOptions::default()
    };
    pgmortem::diagnose::diagnose(&bundle, &options).unwrap()
}

#[test]
fn directory_and_archive_one_thread_or_several_give_the_same_report() {
    // Crashes all along: every part of the log counts.
    let mut log = Vec::new();
    let parts = [
        "formats/pglog/pg15-events.log",
        "formats/pglog/pg15-backend-sigkill.log",
        "formats/pglog/pg13-parallel-worker-sigkill.log",
        "formats/pglog/pg18-backend-sigkill.log",
    ];
    while log.len() < 3 << 20 {
        for p in parts {
            log.extend(fixture(p));
        }
    }
    let dir = bundle_dir(&log);
    let (_keep, archive) = archive_of(dir.path());
    let want = analyze_streamed(dir.path(), 1);
    assert!(crashes(&want) > 10);
    for (path, threads) in [
        (dir.path(), 2),
        (dir.path(), 3),
        (&archive, 1),
        (&archive, 2),
    ] {
        let got = analyze_streamed(path, threads);
        assert_eq!(
            json(&got),
            json(&want),
            "{} on {threads} threads",
            path.display()
        );
    }
    // And the same as logs held in memory, read in one pass.
    let in_memory = pgmortem::analyze(dir.path(), &DiagnoseOptions::default()).unwrap();
    assert_eq!(json(&in_memory), json(&want));
    let kernel = want
        .sources
        .iter()
        .find(|s| s.path == "kernel/dmesg.txt")
        .unwrap();
    assert!(kernel.kind == "kernel_log" && kernel.lines > 10_000);
    assert_eq!(kernel.unrecognized_lines, 0);
}

#[test]
fn a_log_that_cannot_be_read_any_more_is_said_first_not_fatal() {
    let log = crash_then_quiet(2 << 20);
    let dir = bundle_dir(&log);
    let open = OpenOptions {
        memory_file_bytes: 1 << 20,
        ..OpenOptions::default()
    };
    let bundle = bundle::open(dir.path(), &open).unwrap();
    // Removed after the bundle was opened: it was to be read from its file.
    std::fs::remove_file(dir.path().join("postgres/server.log")).unwrap();
    let report = pgmortem::diagnose::diagnose(&bundle, &DiagnoseOptions::default()).unwrap();
    let caveat = report
        .caveats
        .iter()
        .find(|c| c.kind == "log_not_read_whole")
        .unwrap_or_else(|| panic!("{:?}", report.caveats));
    assert!(
        caveat
            .text
            .starts_with("`postgres/server.log`: reading stopped after 0 of"),
        "{}",
        caveat.text
    );
    assert!(
        caveat
            .text
            .ends_with("events after that point are not in this report")
    );
    let source = report
        .sources
        .iter()
        .find(|s| s.path == "postgres/server.log")
        .unwrap();
    assert_eq!(source.bytes, 0);
}

#[test]
fn a_nul_run_before_an_oom_report_does_not_hide_the_kill() {
    // A kernel log written up to a crash: the real capture with a block of NUL bytes right
    // before its OOM report (no line end after them, as an unwritten block leaves it).
    let src =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/incidents/pg15-memcg-oom-sort");
    let scratch = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_owned();
        let mut bytes = std::fs::read(&path).unwrap();
        if name == "dmesg.txt" {
            let at = String::from_utf8_lossy(&bytes)
                .find("postgres invoked oom-killer")
                .unwrap();
            let line_start = bytes[..at]
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |p| p + 1);
            bytes.splice(line_start..line_start, std::iter::repeat_n(0u8, 4096));
        }
        std::fs::write(scratch.path().join(name), bytes).unwrap();
    }
    let original = pgmortem::analyze(&src, &DiagnoseOptions::default()).unwrap();
    let report = pgmortem::analyze(scratch.path(), &DiagnoseOptions::default()).unwrap();
    assert_eq!(report.incidents.len(), 1);
    assert_eq!(report.incidents[0].kind, "oom_kill");
    assert_eq!(
        report.incidents[0].kernel_kill.as_ref().map(|k| k.pid),
        original.incidents[0].kernel_kill.as_ref().map(|k| k.pid)
    );
    let dmesg = report
        .sources
        .iter()
        .find(|s| s.path == "dmesg.txt")
        .unwrap();
    assert_eq!(dmesg.kind, "kernel_log");
    assert!(
        dmesg
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("4096 NUL bytes taken out"),
        "{:?}",
        dmesg.note
    );
}
