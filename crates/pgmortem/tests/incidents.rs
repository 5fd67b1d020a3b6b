//! Every real incident under fixtures/incidents/ analysed end to end: the JSON report and the
//! text rendering are snapshots (reviewed with `cargo insta review`), and the facts each
//! incident's README promises are asserted directly.

use std::path::{Path, PathBuf};

use pgmortem::{DiagnoseOptions, Report, render};

fn incidents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/incidents")
}

/// An incident's bundle: the collector's .tar.gz when the incident has one, else its
/// directory of loose files.
fn bundle_of(name: &str) -> PathBuf {
    let dir = incidents_dir().join(name);
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap_or(dir)
}

fn analyze(name: &str) -> Report {
    pgmortem::analyze(&bundle_of(name), &DiagnoseOptions::default())
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn every_incident_report_matches_its_snapshot() {
    let mut dirs: Vec<_> = std::fs::read_dir(incidents_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(!dirs.is_empty());
    for dir in dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let report = analyze(&name);
        insta::with_settings!({ snapshot_suffix => name.clone(), omit_expression => true }, {
            insta::assert_json_snapshot!("report", report);
            insta::assert_snapshot!("text", render::text(&report));
        });
    }
}

fn only_incident(report: &Report) -> &pgmortem::diagnose::Incident {
    assert_eq!(report.incidents.len(), 1, "{:#?}", report.incidents);
    &report.incidents[0]
}

#[test]
fn memcg_oom_of_a_sorting_backend_is_tied_to_its_crash_restart() {
    for name in ["pg15-memcg-oom-sort", "pg15-memcg-oom-sort-paris"] {
        let report = analyze(name);
        let incident = only_incident(&report);
        assert_eq!(incident.kind, "oom_kill", "{name}");
        assert_eq!(incident.matched_by, Some("pid_and_time"), "{name}");
        let kill = incident.kernel_kill.as_ref().unwrap();
        let crash = incident.postgres_crash.as_ref().unwrap();
        assert_eq!(kill.pid, crash.pid, "{name}");
        assert_eq!(kill.comm, "postgres");
        assert_eq!(kill.constraint.as_deref(), Some("memcg"));
        let memcg = kill.memcg.as_ref().unwrap();
        assert_eq!(
            memcg.limit_kb,
            Some(307_200),
            "{name}: the recorder's 300M limit"
        );
        assert!(
            kill.anon_rss_kb.unwrap() > 200_000,
            "{name}: the sort held most of the limit"
        );
        assert_eq!(crash.signal, Some(9));
        assert!(crash.query.as_deref().unwrap().contains("generate_series"));
        // Both clocks put the kill and the crash line within a second of each other.
        assert!(incident.clock_skew_seconds.unwrap().abs() < 1.0, "{name}");
        let outage = incident.outage_seconds.unwrap();
        assert!(outage > 0.0 && outage < 60.0, "{name}: {outage}");
        assert!(
            incident.wal_replayed_bytes.unwrap() > 1 << 20,
            "{name}: pgbench left WAL to replay"
        );
        assert!(incident.redo_seconds.is_some());
        assert_eq!(report.clock.boot_time_source, Some("date_and_uptime"));
        // Every source was understood entirely (the README is prose and listed as unknown).
        for source in report.sources.iter().filter(|s| s.kind != "unknown") {
            assert_eq!(source.unrecognized_lines, 0, "{name}: {}", source.path);
        }
    }
}

#[test]
fn a_kill_from_outside_is_a_crash_restart_without_a_kernel_report() {
    let report = analyze("pg15-sigkill-backend");
    let incident = only_incident(&report);
    assert_eq!(incident.kind, "crash_restart");
    assert!(incident.kernel_kill.is_none());
    assert_eq!(incident.postgres_crash.as_ref().unwrap().signal, Some(9));
    assert!(incident.notes.iter().any(|n| n.contains("SIGKILL")));
    assert!(incident.outage_seconds.is_some());
}

#[test]
fn a_pid_namespace_is_tied_on_time_signal_and_name() {
    let report = analyze("pg15-memcg-oom-pidns");
    let incident = only_incident(&report);
    assert_eq!(incident.kind, "oom_kill");
    assert_eq!(incident.matched_by, Some("time_signal_and_name"));
    assert!(incident.confidence < 0.9);
    let kill = incident.kernel_kill.as_ref().unwrap();
    let crash = incident.postgres_crash.as_ref().unwrap();
    assert_ne!(kill.pid, crash.pid);
    assert!(incident.notes.iter().any(|n| n.contains("PID namespace")));
}
