//! Every real incident under fixtures/incidents/ analysed end to end: the JSON report, the
//! text and the Markdown renderings are snapshots (reviewed with `cargo insta review`), the
//! diagnosis each incident's `expected.json` states is checked (findings that must and must
//! not be there, the incidents with their kind, cause, pid, signal and outage range), and the
//! facts each README promises are asserted directly.
//!
//! An incident directory holds either the bundle's files themselves or the collector's archive
//! (`*.tar.gz`, `*.tar.zst`, a sosreport's `*.tar.xz`) beside its README.md and expected.json.

use std::path::{Path, PathBuf};

use pgmortem::{DiagnoseOptions, Report, check, render};

fn incidents_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/incidents")
}

fn analyze(name: &str) -> Report {
    let fixture = check::Fixture::at(&incidents_dir().join(name)).unwrap();
    pgmortem::analyze(&fixture.bundle, &DiagnoseOptions::default())
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

#[test]
fn every_incident_gives_the_diagnosis_its_expected_json_states() {
    let fixtures = check::fixtures_in(&incidents_dir()).unwrap();
    // Every incident directory is a fixture with its expected.json.
    assert_eq!(
        fixtures.iter().map(|f| f.name.clone()).collect::<Vec<_>>(),
        incident_names()
    );
    let mut failures = Vec::new();
    for fixture in &fixtures {
        let outcome = check::check(fixture, &DiagnoseOptions::default());
        for d in outcome.failures() {
            failures.push(format!("{}: {d}", fixture.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_incident_report_matches_its_snapshot() {
    let names = incident_names();
    assert!(!names.is_empty());
    let mut too_long = Vec::new();
    for name in names {
        let report = analyze(&name);
        let text = render::text(&report);
        // The verdict first: the whole default report in 150 lines, its first finding in the
        // first 40.
        let lines = text.lines().count();
        let first_finding = text.lines().position(|l| {
            ["  CRITICAL", "  WARNING", "  INFO"]
                .iter()
                .any(|s| l.starts_with(s))
        });
        if lines > 150 || first_finding.is_some_and(|i| i >= 40) {
            too_long.push(format!(
                "{name}: {lines} lines, first finding at {first_finding:?}"
            ));
        }
        insta::with_settings!({ snapshot_suffix => name.clone(), omit_expression => true }, {
            insta::assert_json_snapshot!("report", report);
            insta::assert_snapshot!("text", text);
            insta::assert_snapshot!("markdown", render::markdown(&report));
        });
    }
    assert!(too_long.is_empty(), "{}", too_long.join("\n"));
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

#[test]
fn a_cnpg_report_ties_the_oomkilled_container_to_the_restart_its_log_shows() {
    let report = analyze("pg15-cnpg-report-container-oom");
    let incident = only_incident(&report);
    assert_eq!(
        (incident.kind, incident.cause, incident.matched_by),
        (
            "postmaster_killed",
            "container_oom_killed",
            Some("container_time")
        )
    );
    let kill = incident.container_kill.as_ref().unwrap();
    assert_eq!(
        (kill.pod.as_deref(), kill.container.as_deref()),
        (Some("cluster-example-1"), Some("postgres"))
    );
    assert_eq!(
        (kill.reason.as_str(), kill.exit_code, kill.signal),
        ("OOMKilled", Some(137), Some(9))
    );
    assert_eq!(
        kill.finished_at,
        Some("2026-11-24T05:29:10Z".parse().unwrap())
    );
    assert_eq!(
        kill.restarted_at,
        Some("2026-11-24T05:29:16Z".parse().unwrap())
    );
    assert_eq!(
        (kill.restart_count, kill.memory_limit_bytes),
        (Some(1), Some(1 << 30))
    );
    assert_eq!(incident.started_at, kill.finished_at);
    // From the container's end to `ready to accept connections` at 05:29:16.578.
    assert_eq!(incident.outage_seconds, Some(6.578));
    assert!(incident.confidence <= 0.7);
    // Its limit is the limit the memory rules compare with.
    let cgroup = report.host.cgroup.as_ref().unwrap();
    assert_eq!(cgroup.limit.as_ref().unwrap().value, 1 << 30);
    assert_eq!(
        cgroup.limit.as_ref().unwrap().key,
        "resources.limits.memory"
    );
    assert_eq!(cgroup.oom_kills.as_ref().unwrap().value, 1);
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.id == "cgroup-memory-limit")
    );
}

#[test]
fn a_real_crash_loop_is_one_group_told_in_a_sentence_with_its_first_and_its_worst() {
    let report = analyze("pg15-sigkill-crash-loop");
    let n = report.incidents.len();
    assert!(n >= 20, "{n} incidents");
    assert_eq!(report.groups.len(), 1, "{:?}", report.groups);
    let g = &report.groups[0];
    assert_eq!(
        (g.kind, g.cause, g.count, g.first, g.last),
        ("crash_restart", "signal_from_outside", n, 0, n - 1)
    );
    assert_eq!(
        (g.signal, g.process.as_deref()),
        (Some(9), Some("server process"))
    );
    let worst = report.incidents[g.worst].outage_seconds.unwrap();
    assert!(
        report
            .incidents
            .iter()
            .all(|i| i.outage_seconds.unwrap() <= worst)
    );
    assert_eq!(g.worst_outage_seconds, Some(worst));
    // Every crash-restart finding is about one incident of the group; the text tells it once.
    let repeats: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.id == "crash-restart")
        .collect();
    assert_eq!(repeats.len(), n);
    assert!(repeats.iter().all(|f| f.group == Some(0)));
    let text = render::text(&report);
    let second = text.lines().nth(1).unwrap();
    assert!(
        second.starts_with(&format!("  {n} crash-restarts of server processes by SIGKILL (cause signal_from_outside) between ")),
        "{second}"
    );
    assert!(
        second.contains(&format!(
            "the worst outage {worst:.3} s (incident {})",
            g.worst + 1
        )),
        "{second}"
    );
    assert_eq!(text.matches("[crash-restart]").count(), 1, "{text}");
    assert!(text.contains(&format!(
        "(once for each of incidents 1–{n}: {n} findings alike, the first shown)"
    )));
    let shown = text.lines().filter(|l| l.starts_with("Incident ")).count();
    assert_eq!(shown, if g.worst == 0 { 1 } else { 2 }, "{text}");
    assert!(
        text.contains(&format!("\nIncident {} (the worst): ", g.worst + 1)),
        "{text}"
    );
}
