//! `pgmortem analyze` on bundles as the collector writes them (the committed .tar.gz) and as
//! they arrive broken: every file listed with its kind and how much of it was understood,
//! every file that could not be used listed with why.

use std::path::{Path, PathBuf};

use assert_cmd::Command;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures")
        .join(rel)
}

fn analyze_json(path: &Path) -> serde_json::Value {
    let out = Command::cargo_bin("pgmortem")
        .unwrap()
        .args(["analyze", "--format", "json"])
        .arg(path)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice(&out).expect("valid JSON")
}

fn sources(report: &serde_json::Value) -> &Vec<serde_json::Value> {
    report["sources"].as_array().unwrap()
}

fn by_path<'a>(report: &'a serde_json::Value, path: &str) -> &'a serde_json::Value {
    sources(report)
        .iter()
        .find(|s| s["path"] == path)
        .unwrap_or_else(|| panic!("{path} not in the report"))
}

#[test]
fn the_collected_archive_lists_every_file_with_its_kind_and_counts() {
    let archive = fixture("formats/bundle/pg15-collected.tar.gz");
    let report = analyze_json(&archive);
    assert_eq!(report["schema"], "pgmortem.report/v1");

    // Every file of the archive is in the report.
    let listing = std::process::Command::new("tar")
        .arg("tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let members: Vec<String> = String::from_utf8(listing.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.ends_with('/'))
        .map(|l| l.split_once('/').unwrap().1.to_owned())
        .collect();
    assert!(members.len() > 80, "{}", members.len());
    for m in &members {
        let s = by_path(&report, m);
        assert_ne!(s["kind"], "unreadable", "{s}");
    }

    // Snapshots are understood completely; logs are parsed.
    for (path, kind) in [
        ("memory/meminfo.txt", "meminfo"),
        ("memory/vmstat.txt", "vmstat"),
        ("memory/sysctl-vm.txt", "sysctl"),
        ("postgres/pg_settings.txt", "pg_settings"),
        ("postgres/server.log", "postgres_log"),
        ("processes/postgres-titles.txt", "process_titles"),
        ("cgroup/16859/memory.stat", "cgroup_stat"),
        ("clock/uptime.txt", "uptime"),
    ] {
        let s = by_path(&report, path);
        assert_eq!(s["kind"], kind, "{s}");
        assert!(s["records"].as_u64().unwrap() > 0, "{s}");
        assert_eq!(s["unrecognized_lines"], 0, "{s}");
    }
    // The collector's files for people are listed as such, not as unknown, not dropped.
    let ps = by_path(&report, "processes/ps.txt");
    assert_eq!(ps["kind"], "reference");
    assert_eq!(ps["unrecognized_lines"], 0, "{ps}");
    assert!(
        ps["note"]
            .as_str()
            .unwrap()
            .contains("for a person to read"),
        "{ps}"
    );
    assert_eq!(by_path(&report, "identity/id.txt")["kind"], "reference");
    // The identity readings the report names have their kind.
    let uname = by_path(&report, "identity/uname.txt");
    assert_eq!(
        (uname["kind"].as_str(), uname["records"].as_u64()),
        (Some("uname"), Some(1))
    );
    // What the collector could not collect is listed with what it recorded.
    let audit = by_path(&report, "audit/status.txt");
    assert_eq!(audit["kind"], "unreadable");
    assert_eq!(
        audit["note"],
        "not in the bundle: `auditctl -s` exited with status 127 (tool missing: auditctl)"
    );
    // The clock comes from the bundle's own readings.
    assert_eq!(report["clock"]["boot_time_source"], "date_and_uptime");
}

#[test]
fn the_text_report_of_the_archive_names_each_file() {
    let out = Command::cargo_bin("pgmortem")
        .unwrap()
        .args(["analyze", "--sources"])
        .arg(fixture("formats/bundle/pg15-collected.tar.gz"))
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    for needle in [
        "memory/meminfo.txt",
        "meminfo",
        "postgres/server.log",
        "postgres_log",
        "audit/status.txt",
        "tool missing: auditctl",
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }
}

#[test]
fn a_broken_bundle_says_what_it_could_not_use_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("manifest.json"),
        r#"{"format": "pgmortem.bundle", "files": [
            {"path": "meminfo", "kind": "meminfo", "status": 0, "bytes": 10},
            {"path": "kernel/dmesg.txt", "kind": "kernel_log", "command": "dmesg", "status": 1,
             "note": "dmesg: read kernel buffer failed: Operation not permitted"}]}"#,
    )
    .unwrap();
    std::fs::copy(
        fixture("incidents/pg15-memcg-oom-sort/postgresql.log"),
        d.join("meminfo"),
    )
    .unwrap();
    std::fs::write(d.join("uptime"), b"").unwrap();
    std::fs::write(
        d.join("core"),
        b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0",
    )
    .unwrap();
    let report = analyze_json(d);
    let meminfo = by_path(&report, "meminfo");
    assert_eq!(meminfo["kind"], "postgres_log");
    assert!(
        meminfo["note"]
            .as_str()
            .unwrap()
            .starts_with("manifest.json says meminfo, but the content reads as postgres_log"),
        "{meminfo}"
    );
    assert_eq!(by_path(&report, "uptime")["note"], "empty file");
    let core = by_path(&report, "core");
    assert_eq!(core["kind"], "unknown");
    assert!(
        core["note"]
            .as_str()
            .unwrap()
            .starts_with("binary data, not text"),
        "{core}"
    );
    let dmesg = by_path(&report, "kernel/dmesg.txt");
    assert_eq!(dmesg["kind"], "unreadable");
    assert!(
        dmesg["note"]
            .as_str()
            .unwrap()
            .contains("Operation not permitted"),
        "{dmesg}"
    );
}

/// The sosreport Debian's `sos report` wrote after a backend's memcg OOM kill
/// (fixtures/incidents/pg15-sos-memcg-oom-work-mem), and the same after `sos clean`.
const SOSREPORT: &str =
    "incidents/pg15-sos-memcg-oom-work-mem/sosreport-vm-2026-11-28-xvldjad.tar.xz";
const CLEANED: &str = "incidents/pg15-sos-clean-memcg-oom-work-mem/sosreport-host0-2026-11-28-xvldjad-obfuscated.tar.xz";

#[test]
fn a_sosreport_is_read_as_its_layout_says() {
    let report = analyze_json(&fixture(SOSREPORT));
    let c = &report["collection"];
    assert_eq!(c["hostname"], "vm");
    assert_eq!(c["collector"], "sosreport 4.0");
    assert_eq!(c["collected_at_path"], "sos_commands/date/date");
    // The postmaster and its children from the ps listings, its own cgroup's limit and kill.
    let p = &report["host"]["processes"];
    assert_eq!(p["postmaster"], 4840);
    assert_eq!(p["processes"].as_array().unwrap().len(), 6);
    assert_eq!(
        p["command"]["value"]["data_directory"],
        "/var/lib/postgresql/15/main"
    );
    let cg = &report["host"]["cgroup"];
    assert_eq!(cg["limit"]["value"], 400 << 20);
    assert_eq!(cg["oom_kills"]["value"], 1);
    assert_eq!(
        cg["dir"],
        "sys/fs/cgroup/memory/pgmortem-record/pgmortem-rec-pg15-sos-memcg-oom-work-mem"
    );
    for (path, kind) in [
        ("sos_logs/ui.log", "collector_log"),
        ("sos_commands/kernel/dmesg", "kernel_log"),
        ("var/log/postgresql/postgresql-15-main.log", "postgres_log"),
        ("proc/zoneinfo", "reference"),
        ("sys/kernel/mm/ksm/advisor_mode", "reference"),
        ("proc/sys/vm/overcommit_memory", "sysctl_value"),
        (
            "var/lib/postgresql/15/main/postmaster.opts",
            "postmaster_opts",
        ),
    ] {
        assert_eq!(by_path(&report, path)["kind"], kind, "{path}");
    }
    let ids: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    for id in [
        "oom-kill-crash-restart",
        "work-mem-exceeds-memory",
        "cgroup-memory-limit",
    ] {
        assert!(ids.contains(&id), "{id} missing: {ids:?}");
    }
    assert!(
        !report["caveats"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["kind"] == "obfuscated")
    );
}

#[test]
fn a_cleaned_sosreport_says_what_was_obfuscated_and_keeps_its_diagnosis() {
    let report = analyze_json(&fixture(CLEANED));
    let caveat = report["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "obfuscated")
        .expect("the obfuscated caveat");
    let text = caveat["text"].as_str().unwrap();
    assert!(
        text.contains("host0") && text.contains("proc/host0stat"),
        "{text}"
    );
    assert_eq!(report["collection"]["hostname"], "host0");
    assert_eq!(by_path(&report, "proc/host0stat")["kind"], "vmstat");
    let ids: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&"cgroup-memory-limit") && ids.contains(&"overcommit-heuristic"),
        "{ids:?}"
    );
    // The kill line's `total-vm:` reads `total-host0:`: the victim is still read.
    let kill = &report["incidents"][0]["kernel_kill"];
    assert_eq!(kill["pid"], 5115);
    assert_eq!(kill["total_vm_kb"], serde_json::Value::Null);
}

/// One report of the same incident (a backend OOM-killed in its 400M memory cgroup) written
/// by another sos than Debian's 4.0, run from its sources: sos 3.9.1
/// (fixtures/incidents/pg15-sos3-*), 3.5 (pg15-sos35-*) and 4.12.0 (pg15-sos412-*), each with
/// its own names for the clock, the host and the processes.
struct OtherSos {
    archive: &'static str,
    collector: &'static str,
    collected_at: &'static str,
    clock: &'static str,
    host: &'static str,
    ps_sched: &'static str,
    journal: &'static [(&'static str, &'static str)],
    /// The Debian cluster's postmaster.opts (sos 4.12 copies only /var/lib/postgresql/data's).
    opts: bool,
    /// proc/PID/ files of every process (sos 4.3 and later).
    per_process: bool,
    postmaster: u64,
    victim: u64,
    incident: &'static str,
}

const OTHER_SOS: &[OtherSos] = &[
    OtherSos {
        archive: "incidents/pg15-sos3-memcg-oom-work-mem/sosreport-vm-2026-11-28-tbrafhb.tar.xz",
        collector: "sosreport 3.9",
        collected_at: "2026-11-28T15:06:51Z",
        clock: "sos_commands/date/date",
        host: "sos_commands/host",
        ps_sched: "sos_commands/process/ps_axo_flags_state_uid_pid_ppid_pgid_sid_cls_pri_addr_sz_wchan_20_lstart_tty_time_cmd",
        journal: &[
            ("sos_commands/logs/journalctl_--no-pager", "kernel_log"),
            (
                "sos_commands/logs/journalctl_--no-pager_--catalog_--boot",
                "kernel_log",
            ),
        ],
        opts: true,
        per_process: false,
        postmaster: 30613,
        victim: 30849,
        incident: "pg15-sos3-memcg-oom-work-mem",
    },
    OtherSos {
        archive: "incidents/pg15-sos35-memcg-oom-work-mem/sosreport-vm-20261128150737.tar.xz",
        collector: "sosreport 3.5",
        collected_at: "2026-11-28T15:07:38Z",
        clock: "sos_commands/general/date",
        host: "sos_commands/general",
        ps_sched: "sos_commands/process/ps_axo_flags_state_uid_pid_ppid_pgid_sid_cls_pri_addr_sz_wchan_stime_tty_time_cmd",
        journal: &[
            (
                "sos_commands/logs/journalctl_--no-pager_--boot",
                "kernel_log",
            ),
            (
                "sos_commands/logs/journalctl_--no-pager_--all_--boot_--output_verbose",
                "reference",
            ),
        ],
        opts: true,
        per_process: false,
        postmaster: 32113,
        victim: 32314,
        incident: "pg15-sos35-memcg-oom-work-mem",
    },
    OtherSos {
        archive: "incidents/pg15-sos412-memcg-oom-work-mem/sosreport-vm-2026-11-28-hliuntt.tar.xz",
        collector: "sosreport 4.12.0",
        collected_at: "2026-11-28T16:29:01Z",
        clock: "sos_commands/date/date",
        host: "sos_commands/host",
        ps_sched: "sos_commands/process/ps_axo_flags_state_uid_pid_ppid_pgid_sid_cls_pri_psr_addr_sz_wchan_20_lstart_tty_time_cmd",
        journal: &[("sos_commands/logs/journalctl_--disk-usage", "reference")],
        opts: false,
        per_process: true,
        postmaster: 18680,
        victim: 20335,
        incident: "pg15-sos412-memcg-oom-work-mem",
    },
];

#[test]
fn another_sos_report_is_read_by_its_own_paths_and_its_oom_kill_found() {
    for sos in OTHER_SOS {
        let report = analyze_json(&fixture(sos.archive));
        let c = &report["collection"];
        assert_eq!(c["collector"], sos.collector, "{}", sos.archive);
        assert_eq!(c["hostname"], "vm");
        assert_eq!(c["collected_at_path"], sos.clock);
        assert_eq!(c["collected_at"], sos.collected_at);
        let hostname = format!("{}/hostname", sos.host);
        let uptime = format!("{}/uptime", sos.host);
        let mut kinds = vec![
            (sos.clock, "date"),
            (hostname.as_str(), "hostname"),
            (uptime.as_str(), "uptime"),
            ("sos_commands/kernel/dmesg", "kernel_log"),
            ("sos_commands/kernel/uname_-a", "uname"),
            ("sos_commands/kernel/sysctl_-a", "sysctl"),
            ("var/log/postgresql/postgresql-15-main.log", "postgres_log"),
            ("etc/postgresql/15/main/postgresql.conf", "pg_conf"),
            ("etc/postgresql/15/main/pg_hba.conf", "reference"),
            ("proc/meminfo", "meminfo"),
            ("proc/stat", "btime"),
            (
                "sos_commands/process/ps_axo_pid_ppid_user_group_lwp_nlwp_start_time_comm_cgroup",
                "process_list",
            ),
            (sos.ps_sched, "process_list"),
            ("sos_logs/sos.log", "collector_log"),
            ("sos_reports/sos.txt", "collector_log"),
            ("version.txt", "collector_log"),
        ];
        kinds.extend(sos.journal.iter().copied());
        if sos.opts {
            kinds.push((
                "var/lib/postgresql/15/main/postmaster.opts",
                "postmaster_opts",
            ));
        }
        let pm_files = [
            (format!("proc/{}/status", sos.postmaster), "proc_status"),
            (
                format!("proc/{}/oom_score_adj", sos.postmaster),
                "oom_score_adj",
            ),
            (format!("proc/{}/limits", sos.postmaster), "proc_limits"),
        ];
        if sos.per_process {
            kinds.extend(pm_files.iter().map(|(p, k)| (p.as_str(), *k)));
        }
        for (path, kind) in kinds {
            let s = by_path(&report, path);
            assert_eq!(s["kind"], kind, "{}: {path}", sos.archive);
            if kind != "reference" && kind != "collector_log" {
                assert_eq!(s["unrecognized_lines"], 0, "{}: {s}", sos.archive);
            }
        }
        // The top directory's links to command outputs are not followed: each output is read
        // once, at its own path.
        let ps = by_path(&report, "ps");
        assert_eq!(ps["kind"], "unreadable");
        assert!(
            ps["note"].as_str().unwrap().contains("not followed"),
            "{ps}"
        );
        // The postmaster and its children from the ps listings, its own memory cgroup.
        let p = &report["host"]["processes"];
        assert_eq!(p["postmaster"], sos.postmaster, "{}", sos.archive);
        assert_eq!(p["processes"].as_array().unwrap().len(), 6);
        let cgroup = format!("/pgmortem-record/pgmortem-rec-{}", sos.incident);
        assert_eq!(p["memory_cgroup"]["value"], cgroup.as_str());
        let cg = &report["host"]["cgroup"];
        assert_eq!(cg["dir"], format!("sys/fs/cgroup/memory{cgroup}"));
        assert_eq!(cg["limit"]["value"], 400 << 20);
        assert_eq!(cg["oom_kills"]["value"], 1);
        // The incident: the kernel's kill of the sorting backend tied to its crash-restart.
        let incidents = report["incidents"].as_array().unwrap();
        assert_eq!(incidents.len(), 1, "{}", sos.archive);
        assert_eq!(incidents[0]["kind"], "oom_kill");
        assert_eq!(incidents[0]["cause"], "oom_killer");
        assert_eq!(incidents[0]["kernel_kill"]["pid"], sos.victim);
        let ids: Vec<&str> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["id"].as_str().unwrap())
            .collect();
        for id in [
            "oom-kill-crash-restart",
            "work-mem-exceeds-memory",
            "cgroup-memory-limit",
        ] {
            assert!(ids.contains(&id), "{}: {id} missing: {ids:?}", sos.archive);
        }
        // With every process's proc/PID/ files, the postmaster's oom_score_adj (0 on the
        // recording VM) is read and found unprotected; without them the rule cannot run.
        let pm = p["processes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["pid"] == sos.postmaster)
            .unwrap();
        assert_eq!(pm["role"], "postmaster");
        if sos.per_process {
            assert_eq!(pm["oom_score_adj"]["value"], 0, "{pm}");
            assert_eq!(pm["status_path"], pm_files[0].0.as_str());
            assert!(ids.contains(&"postmaster-oom-unprotected"), "{ids:?}");
        } else {
            assert!(pm["oom_score_adj"].is_null(), "{pm}");
            assert!(!ids.contains(&"postmaster-oom-unprotected"), "{ids:?}");
        }
    }
}

#[test]
fn a_cnpg_report_zip_is_read_by_its_layout_and_its_oomkilled_container_is_the_incident() {
    let report = analyze_json(&fixture(
        "incidents/pg15-cnpg-report-container-oom/report_cluster_cluster-example_20261124_052930.zip",
    ));
    assert_eq!(
        report["collection"]["collector"],
        "kubectl cnpg report cluster"
    );
    let log = by_path(&report, "logs/cluster-example-1-postgres.jsonl");
    assert_eq!(
        (
            log["kind"].as_str(),
            log["records"].as_u64(),
            log["unrecognized_lines"].as_u64()
        ),
        (Some("postgres_log"), Some(17), Some(0))
    );
    let pods = by_path(&report, "manifests/cluster-pods.yaml");
    assert_eq!(
        (pods["kind"].as_str(), pods["records"].as_u64()),
        (Some("pod_manifest"), Some(2))
    );
    assert_eq!(
        by_path(&report, "manifests/events.yaml")["kind"],
        "reference"
    );
    let incidents = report["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1);
    let incident = &incidents[0];
    assert_eq!(incident["kind"], "postmaster_killed");
    assert_eq!(incident["cause"], "container_oom_killed");
    assert_eq!(incident["container_kill"]["reason"], "OOMKilled");
    assert_eq!(incident["container_kill"]["exit_code"], 137);
    assert_eq!(
        incident["container_kill"]["finished_at"],
        "2026-11-24T05:29:10Z"
    );
    assert_eq!(incident["container_kill"]["memory_limit_bytes"], 1u64 << 30);
    let kills: Vec<&serde_json::Value> = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["origin"] == "container")
        .collect();
    assert_eq!(kills.len(), 1, "{kills:?}");
    assert_eq!(
        (&kills[0]["kind"], &kills[0]["at"]),
        (
            &serde_json::Value::from("container_oom_killed"),
            &serde_json::Value::from("2026-11-24T05:29:10Z")
        )
    );
    // The logs are the pods'; no node's kernel log: what Kubernetes recorded is said.
    let no_kernel = report["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["kind"] == "no_kernel_log")
        .unwrap();
    assert!(
        no_kernel["text"]
            .as_str()
            .unwrap()
            .contains("Kubernetes recorded 1 OOM kill of PostgreSQL's container"),
        "{no_kernel}"
    );
}

#[test]
fn a_pgo_support_export_is_read_by_its_layout_with_patroni_and_pgbackrest_logs() {
    let report = analyze_json(&fixture(
        "incidents/pg15-pgo-support-export-built-sigkill-failover/crunchy_k8s_support_export_2026-11-28-150640+0000.tar.gz",
    ));
    assert_eq!(
        report["collection"]["collector"],
        "kubectl pgo support export"
    );
    let pod = "pods/hippo-instance1-abcd-0";
    for (path, kind, unrecognized) in [
        ("cli.log", "collector_log", 0),
        ("pgo-cli-version", "reference", 0),
        (&format!("{pod}.yaml") as &str, "pod_manifest", 0),
        (
            &format!("{pod}/pgdata/pg15/log/postgresql-Sat.log"),
            "postgres_log",
            0,
        ),
        (
            &format!("{pod}/pgdata/patroni/log/patroni.log"),
            "patroni_log",
            0,
        ),
        (
            &format!("{pod}/pgdata/pgbackrest/log/db-archive-push-async.log"),
            "pgbackrest_log",
            0,
        ),
        // PostgreSQL's stderr before its logging collector, with initdb's and pg_ctl's lines.
        (
            &format!("{pod}/containers/database.log"),
            "postgres_log",
            31,
        ),
    ] {
        let source = by_path(&report, path);
        assert_eq!(
            (
                source["kind"].as_str(),
                source["unrecognized_lines"].as_u64()
            ),
            (Some(kind), Some(unrecognized)),
            "{path}"
        );
    }
    // The plugin's own log is never read as PostgreSQL's, though its stamps look alike.
    assert_eq!(by_path(&report, "cli.log")["records"], 0);

    let incidents = report["incidents"].as_array().unwrap();
    let kinds: Vec<_> = incidents
        .iter()
        .map(|i| i["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["crash_restart", "unclean_restart"]);
    assert_eq!(incidents[0]["postgres_crash"]["pid"], 24758);
    // What Patroni did around the postmaster's death: found it gone, started it again as the
    // lock holder, promoted it; then demoted it when the DCS stopped answering.
    let patroni: Vec<_> = incidents[1]["patroni"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["kind"].as_str().unwrap())
        .collect();
    for kind in [
        "postgres_not_running",
        "restart_after_failure",
        "promoted",
        "demoted",
    ] {
        assert!(patroni.contains(&kind), "{kind}: {patroni:?}");
    }
    let not_running = incidents[1]["patroni"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["kind"] == "postgres_not_running")
        .unwrap();
    assert_eq!(not_running["at"], "2026-11-28T15:04:33.696Z");
    assert_eq!(
        not_running["path"],
        format!("{pod}/pgdata/patroni/log/patroni.log")
    );
    // Each message Patroni repeats while the DCS is down is there once per log.
    let dcs = incidents[1]["patroni"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["message"] == "Patroni: `Error communicating with DCS`")
        .count();
    assert!((1..=2).contains(&dcs), "{dcs}");

    // pgBackRest's failed pushes and check's [082] are on the timeline.
    let timeline = report["timeline"].as_array().unwrap();
    let pgbackrest: Vec<_> = timeline
        .iter()
        .filter(|e| e["origin"] == "pgbackrest")
        .collect();
    assert_eq!(
        pgbackrest
            .iter()
            .filter(|e| e["kind"] == "wal_push_failed")
            .count(),
        9
    );
    let check = pgbackrest.iter().find(|e| e["kind"] == "error").unwrap();
    assert_eq!(check["at"], "2026-11-28T14:58:56.668Z");
    assert!(check["summary"].as_str().unwrap().starts_with(
        "pgBackRest check: [082] `WAL segment 000000010000000000000006 was not archived"
    ));
}

#[test]
fn a_pasted_kubectl_describe_is_its_own_kind_and_its_oom_kill_an_incident() {
    let report = analyze_json(&fixture(
        "wild/cnpg-oomkilled-dev-shm-describe/kubectl-describe-pod.txt",
    ));
    let describe = &report["sources"][0];
    assert_eq!(
        (
            describe["kind"].as_str(),
            describe["records"].as_u64(),
            describe["unrecognized_lines"].as_u64()
        ),
        (Some("pod_describe"), Some(1), Some(0))
    );
    let incidents = report["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1);
    assert_eq!(incidents[0]["kind"], "kernel_oom");
    assert_eq!(incidents[0]["cause"], "container_oom_killed");
    assert_eq!(incidents[0]["container_kill"]["signal"], 9);
    assert_eq!(
        incidents[0]["container_kill"]["started_at"],
        "2025-05-16T11:12:59Z"
    );
    assert_eq!(
        incidents[0]["container_kill"]["finished_at"],
        serde_json::Value::Null
    );
    assert_eq!(
        incidents[0]["container_kill"]["restarted_at"],
        "2025-05-16T11:30:42Z"
    );
}
