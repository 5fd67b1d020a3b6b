//! Every real incident under fixtures/incidents/ analysed end to end: the JSON report, the
//! text and the Markdown renderings are snapshots (reviewed with `cargo insta review`), the
//! diagnosis each incident's `expected.json` states is checked (findings that must and must
//! not be there, the incidents with their kind, cause, pid, signal and outage range), and the
//! facts each README promises are asserted directly.
//!
//! An incident directory holds either the bundle's files themselves or the collector's archive
//! (`*.tar.gz`, `*.tar.zst`) beside its README.md and expected.json.

use std::path::{Path, PathBuf};

use pgmortem::{DiagnoseOptions, Report, render};

fn incidents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/incidents")
}

/// The bundle of an incident directory: its collector archive when it has one, else itself.
fn bundle_of(dir: &Path) -> PathBuf {
    let mut archives: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with(".tar.gz") || name.ends_with(".tar.zst")
        })
        .collect();
    archives.sort();
    match archives.as_slice() {
        [] => dir.to_owned(),
        [one] => one.clone(),
        more => panic!("{}: several archives {more:?}", dir.display()),
    }
}

fn analyze(name: &str) -> Report {
    pgmortem::analyze(
        &bundle_of(&incidents_dir().join(name)),
        &DiagnoseOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn incident_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(incidents_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// What differs between a report and an incident's expected.json, one line per difference.
fn differences(report: &Report, expected: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    let ids: Vec<&str> = report.findings.iter().map(|f| f.id).collect();
    let list = |key: &str| -> Vec<String> {
        expected[key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    };
    for id in list("must") {
        if !ids.contains(&id.as_str()) {
            out.push(format!("finding {id} missing (findings: {ids:?})"));
        }
    }
    for id in list("must_not") {
        if ids.contains(&id.as_str()) {
            out.push(format!("finding {id} present"));
        }
    }
    let wanted = expected["incidents"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if expected["only_listed_incidents"].as_bool().unwrap_or(false)
        && wanted.len() != report.incidents.len()
    {
        out.push(format!(
            "{} incidents, {} expected: {:?}",
            report.incidents.len(),
            wanted.len(),
            report
                .incidents
                .iter()
                .map(|i| (i.kind, i.cause))
                .collect::<Vec<_>>()
        ));
    }
    let mut used = vec![false; report.incidents.len()];
    for w in &wanted {
        let matches = |i: &pgmortem::diagnose::Incident| {
            let field = |k: &str| w.get(k).filter(|v| !v.is_null());
            let eq_str = |k: &str, v: &str| field(k).is_none_or(|e| e.as_str() == Some(v));
            let pid = i
                .postgres_crash
                .as_ref()
                .map(|c| c.pid)
                .or(i.kernel_kill.as_ref().map(|k| k.pid));
            // A kernel OOM kill is a SIGKILL even where PostgreSQL logged no death.
            let signal = i
                .postgres_crash
                .as_ref()
                .and_then(|c| c.signal)
                .or(i.kernel_kill.as_ref().map(|_| 9));
            let in_range = |k: &str, v: Option<f64>| match field(k) {
                None => true,
                Some(serde_json::Value::Array(r)) if r.len() == 2 => v.is_some_and(|v| {
                    r[0].as_f64().is_some_and(|lo| v >= lo)
                        && r[1].as_f64().is_some_and(|hi| v <= hi)
                }),
                Some(e) => e.as_f64() == v,
            };
            eq_str("kind", i.kind)
                && eq_str("cause", i.cause)
                && field("pid").is_none_or(|e| e.as_u64() == pid.map(u64::from))
                && field("signal").is_none_or(|e| e.as_i64() == signal.map(i64::from))
                && in_range("outage_seconds", i.outage_seconds)
        };
        match report
            .incidents
            .iter()
            .enumerate()
            .find(|(n, i)| !used[*n] && matches(i))
        {
            Some((n, _)) => used[n] = true,
            None => out.push(format!(
                "no incident matches {w}: {:?}",
                report
                    .incidents
                    .iter()
                    .map(|i| (i.kind, i.cause, i.outage_seconds))
                    .collect::<Vec<_>>()
            )),
        }
    }
    out
}

#[test]
fn every_incident_gives_the_diagnosis_its_expected_json_states() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for name in incident_names() {
        let path = incidents_dir().join(&name).join("expected.json");
        let expected: serde_json::Value = match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{name}: {e}")),
            Err(_) => {
                failures.push(format!("{name}: no expected.json"));
                continue;
            }
        };
        checked += 1;
        for d in differences(&analyze(&name), &expected) {
            failures.push(format!("{name}: {d}"));
        }
    }
    assert!(checked > 0);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_incident_report_matches_its_snapshot() {
    let names = incident_names();
    assert!(!names.is_empty());
    for name in names {
        let report = analyze(&name);
        insta::with_settings!({ snapshot_suffix => name.clone(), omit_expression => true }, {
            insta::assert_json_snapshot!("report", report);
            insta::assert_snapshot!("text", render::text(&report));
            insta::assert_snapshot!("markdown", render::markdown(&report));
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
