//! The kernel logs a collector falls back to when `dmesg` and the journal are refused:
//! `kernel/kern.log`, `kernel/messages.txt`, `kernel/syslog.txt`, the kernel lines of
//! /var/log/kern.log, /var/log/messages and /var/log/syslog. The files are the real rsyslog
//! captures of fixtures/formats/kernel (`local-syslog-traditional.txt`, classic
//! `Nov 21 17:15:34 dbhost kernel: [  465.363677] …`; `local-syslog-rfc3339.txt`,
//! `2026-11-21T17:15:34.050119+00:00 dbhost kernel: …`), with the clock readings taken right
//! after them (local-capture.md): two memcg OOM kills, `memhog` 18471 and `rs:main Q:Reg` 18510.

use std::path::Path;

use jiff::Timestamp;
use pgmortem::bundle::{self, OpenOptions};
use pgmortem::{DiagnoseOptions, Report};

fn fixture(rel: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A bundle directory holding `files` and the capture's clock readings.
fn bundle_with(files: &[(&str, Vec<u8>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut all = vec![
        ("clock/uptime.txt", b"469.85 558.54\n".to_vec()),
        (
            "clock/date.txt",
            b"2026-11-21T17:15:38.542808673Z\n".to_vec(),
        ),
    ];
    all.extend(files.iter().cloned());
    for (path, bytes) in all {
        let to = dir.path().join(path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    }
    dir
}

fn analyze(dir: &Path) -> Report {
    let bundle = bundle::open(dir, &OpenOptions::default()).unwrap();
    pgmortem::diagnose::diagnose(&bundle, &DiagnoseOptions::default()).unwrap()
}

/// The kernel kills of the report: victim, when, and where.
fn kills(report: &Report) -> Vec<(String, Option<Timestamp>, String, u64)> {
    report
        .incidents
        .iter()
        .filter_map(|i| i.kernel_kill.as_ref())
        .map(|k| (k.comm.clone(), k.at, k.path.clone(), k.line))
        .collect()
}

fn at(text: &str) -> Option<Timestamp> {
    Some(text.parse().unwrap())
}

#[test]
fn kern_log_in_the_classic_form_is_read_and_placed_on_the_clock() {
    let dir = bundle_with(&[(
        "kernel/kern.log",
        fixture("formats/kernel/local-syslog-traditional.txt"),
    )]);
    let report = analyze(dir.path());
    let source = report
        .sources
        .iter()
        .find(|s| s.path == "kernel/kern.log")
        .unwrap();
    assert_eq!((source.kind, source.unrecognized_lines), ("kernel_log", 0));
    // Placed by the monotonic stamp and the bundle's boot anchor (date − uptime): the kernel's
    // own time of the trigger line, not rsyslog's whole-second receive time.
    assert_eq!(
        kills(&report),
        [
            (
                "memhog".to_owned(),
                at("2026-11-21T17:15:34.056485673Z"),
                "kernel/kern.log".to_owned(),
                2
            ),
            (
                "rs:main Q:Reg".to_owned(),
                at("2026-11-21T17:15:34.655507673Z"),
                "kernel/kern.log".to_owned(),
                80
            ),
        ]
    );
    assert!(!report.caveats.iter().any(|c| c.kind == "no_kernel_log"));
}

#[test]
fn messages_and_syslog_in_the_rfc_3339_form_give_the_same_kills() {
    for path in ["kernel/messages.txt", "kernel/syslog.txt"] {
        let dir = bundle_with(&[(path, fixture("formats/kernel/local-syslog-rfc3339.txt"))]);
        let report = analyze(dir.path());
        let found = kills(&report);
        assert_eq!(found.len(), 2, "{path}");
        assert_eq!(found[0].1, at("2026-11-21T17:15:34.056485673Z"), "{path}");
        assert_eq!(found[1].2, path);
    }
}

#[test]
fn the_manifest_kind_is_enough_whatever_the_name() {
    let manifest = r#"{"format":"pgmortem.bundle","format_version":1,"files":[
        {"path":"kernel/kern.log","kind":"kernel_log","command":"grep -a ' kernel: ' /var/log/kern.log","status":0,"bytes":1,"capped":false,"note":""}]}"#;
    let dir = bundle_with(&[
        ("manifest.json", manifest.as_bytes().to_vec()),
        (
            "kernel/kern.log",
            fixture("formats/kernel/local-syslog-traditional.txt"),
        ),
    ]);
    let report = analyze(dir.path());
    assert_eq!(kills(&report).len(), 2);
}

/// The capture's lines as they were logged a boot earlier (hand-made from the real capture:
/// the syslog dates moved back to 20 November 09:02, the monotonic stamps kept), followed by
/// the capture itself: what a kern.log holds across a reboot.
fn kern_log_across_a_reboot() -> Vec<u8> {
    let capture =
        String::from_utf8(fixture("formats/kernel/local-syslog-traditional.txt")).unwrap();
    let earlier = capture.replace("Nov 21 17:15:", "Nov 20 09:02:");
    let reboot = "Nov 21 17:07:48 dbhost kernel: [    0.000000] Linux version 6.18.44-fc-v657\n";
    format!("{earlier}{reboot}{capture}").into_bytes()
}

#[test]
fn kills_of_an_earlier_boot_keep_their_own_time() {
    let dir = bundle_with(&[("kernel/kern.log", kern_log_across_a_reboot())]);
    let report = analyze(dir.path());
    let found = kills(&report);
    assert_eq!(found.len(), 4);
    // The earlier boot's kills: rsyslog's receive time, to the second (the monotonic stamp
    // counts from that boot, not from the one the bundle's anchor is about).
    assert_eq!(found[0].1, at("2026-11-20T09:02:34Z"));
    assert_eq!(found[1].1, at("2026-11-20T09:02:34Z"));
    // The last boot's: placed by the anchor as before.
    assert_eq!(found[2].1, at("2026-11-21T17:15:34.056485673Z"));
    assert_eq!(found[3].1, at("2026-11-21T17:15:34.655507673Z"));
    let note = report
        .clock
        .notes
        .iter()
        .find(|n| n.starts_with("kernel/kern.log spans 2 boots"))
        .expect("a note on the boots");
    assert!(note.contains("its 4 events"), "{note}"); // two OOM kills, a segfault and a trap
}
