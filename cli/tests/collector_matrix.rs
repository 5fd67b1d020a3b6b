//! The collector against real PostgreSQL servers in the conditions that follow a crash
//! (fixtures/record/collector-matrix.sh: PostgreSQL 15 and 17; up, down, every slot taken; as
//! root and as an ordinary user; without psql; on a nearly full disk; a server in its own
//! mount and PID namespace collected from the host and from inside; dash and busybox sh), and
//! `pgmortem analyze` on every bundle: each run yields a bundle, and what it could not get is
//! named, in the manifest and at the top of the report.
//!
//! Needs root, dash, busybox and the `pgm` user (`.ci/test-all` installs and creates them);
//! about 45 s.

#![allow(clippy::print_stderr)]

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use common::{pgmortem, stdout_ok};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// One run of the matrix: its bundle unpacked, its manifest and pgmortem's JSON report.
struct Case {
    name: String,
    /// FATAL lines the run added to the server log (refused connection attempts).
    fatals: u32,
    dir: PathBuf,
    manifest: Value,
    report: Value,
}

impl Case {
    fn file(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(path)).ok()
    }

    fn entry(&self, path: &str) -> &Value {
        self.manifest["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["path"] == path)
            .unwrap_or_else(|| panic!("{}: no manifest entry for {path}", self.name))
    }

    fn note(&self, path: &str) -> &str {
        self.entry(path)["note"].as_str().unwrap()
    }

    fn has_source(&self, kind: &str, path: &str) -> bool {
        self.report["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["kind"] == kind && s["path"] == path)
    }

    fn has_kind(&self, kind: &str) -> bool {
        self.report["sources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["kind"] == kind)
    }

    fn caveats(&self) -> Vec<&str> {
        self.report["caveats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["kind"].as_str().unwrap())
            .collect()
    }
}

fn run_matrix(out: &Path) -> BTreeMap<String, Case> {
    let run = Command::new("bash")
        .arg(repo().join("fixtures/record/collector-matrix.sh"))
        .arg(out)
        .args(["15", "17"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let mut cases = BTreeMap::new();
    for line in std::fs::read_to_string(out.join("cases.tsv"))
        .unwrap()
        .lines()
    {
        let fields: Vec<&str> = line.split('\t').collect();
        let (name, status, fatals) = (fields[0], fields[1], fields[2]);
        let log = std::fs::read_to_string(out.join(format!("{name}.stderr"))).unwrap();
        assert_eq!(status, "0", "{name}: the collector failed:\n{log}");
        let bundle = out.join(format!("{name}.tar.gz"));
        let dir = out.join("unpacked").join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let untar = Command::new("tar")
            .arg("-xzf")
            .arg(&bundle)
            .arg("-C")
            .arg(&dir)
            .arg("--strip-components=1")
            .status()
            .unwrap();
        assert!(untar.success(), "{name}: not a tar.gz:\n{log}");
        let manifest: Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        let report: Value = serde_json::from_slice(&stdout_ok(
            pgmortem()
                .args(["analyze", "--format", "json"])
                .arg(&bundle),
        ))
        .unwrap();
        cases.insert(
            name.to_owned(),
            Case {
                name: name.to_owned(),
                fatals: fatals.parse().unwrap(),
                dir,
                manifest,
                report,
            },
        );
    }
    cases
}

#[test]
fn the_collector_in_the_conditions_that_follow_a_crash() {
    if !is_root() {
        eprintln!(
            "skipped: the collector matrix needs root (scratch clusters, runuser, namespaces)"
        );
        return;
    }
    for tool in ["dash", "busybox"] {
        assert!(
            Command::new("sh")
                .args(["-c", &format!("command -v {tool}")])
                .status()
                .unwrap()
                .success(),
            "{tool} is not installed (.ci/test-all installs it)"
        );
    }
    assert!(
        Command::new("id")
            .arg("pgm")
            .output()
            .unwrap()
            .status
            .success(),
        "no 'pgm' user (.ci/test-all creates it: useradd -m pgm)"
    );
    let pgm_uid: u64 = String::from_utf8(
        Command::new("id")
            .args(["-u", "pgm"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .parse()
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let cases = run_matrix(out.path());
    let mut names: Vec<&str> = cases.keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut expected = vec![
        "15-container-host",
        "15-container-inside",
        "15-smalldisk-root",
    ];
    for major in ["15", "17"] {
        for case in [
            "up-root",
            "up-user",
            "nopsql-root",
            "full-root",
            "full-user",
        ] {
            expected.push(Box::leak(format!("{major}-{case}").into_boxed_str()));
        }
        for case in ["down-root", "down-user"] {
            expected.push(Box::leak(format!("{major}-{case}").into_boxed_str()));
        }
    }
    expected.sort_unstable();
    assert_eq!(names, expected);

    for case in cases.values() {
        // Whatever failed is named: a status other than 0 always comes with a note.
        for f in case.manifest["files"].as_array().unwrap() {
            if f["status"] != 0 {
                assert!(
                    f["note"].as_str().is_some_and(|n| !n.is_empty()),
                    "{}: {f}",
                    case.name
                );
            }
        }
        assert!(case.has_kind("meminfo"), "{}", case.name);
        // No kernel log (an ordinary user under kernel.dmesg_restrict=1): the report says so
        // first, quoting each refusal.
        if !case.has_kind("kernel_log") {
            assert!(case.caveats().contains(&"no_kernel_log"), "{}", case.name);
        }
        if !case.has_kind("postgres_log") {
            assert!(case.caveats().contains(&"no_postgres_log"), "{}", case.name);
        }
    }

    for major in ["15", "17"] {
        let c = |s: &str| &cases[&format!("{major}-{s}")];

        // Up, as root, no options: everything found from the running postmaster.
        let up = c("up-root");
        assert!(up.has_source("pg_settings", "postgres/pg_settings.txt"));
        assert!(up.has_source("postgres_log", "postgres/server.log"));
        assert_eq!(up.manifest["settings_from"], "pg_settings");
        let conf = up.file("postgres/postgresql.conf").unwrap();
        assert!(conf.contains("# pgmortem-collect: file "), "{conf}");
        assert!(
            conf.contains("/conf.d/10-memory.conf\nwork_mem = 64MB\n"),
            "{conf}"
        );
        assert!(
            conf.contains("site.conf: no such file (include_if_exists)"),
            "{conf}"
        );
        assert!(conf.contains("postgresql.auto.conf\n"), "{conf}");
        assert!(
            conf.trim_end()
                .lines()
                .rev()
                .nth(1)
                .unwrap()
                .contains("work_mem = '1GB'")
        );
        let pm = up.manifest["postmaster_pid"].as_u64().unwrap();
        let oom = up
            .file(&format!("processes/{pm}/pg-oom-adjust.txt"))
            .unwrap();
        assert_eq!(oom, "unset PG_OOM_ADJUST_FILE\nunset PG_OOM_ADJUST_VALUE\n");
        assert_eq!(up.fatals, 0);
        assert!(up.has_source(
            "pg_oom_adjust",
            &format!("processes/{pm}/pg-oom-adjust.txt")
        ));
        assert!(
            !up.caveats().contains(&"settings_not_from_server"),
            "{:?}",
            up.caveats()
        );
        // Storage, WAL retention, archiving and transaction-id ages, each parsed whole.
        for (kind, path) in [
            ("storage_paths", "storage/paths.txt"),
            ("mountinfo", "storage/mountinfo.txt"),
            ("wal_directory", "storage/pg_wal.txt"),
            ("replication_slots", "postgres/replication-slots.txt"),
            ("archiver", "postgres/archiver.txt"),
            ("database_xid_ages", "postgres/database-xid-ages.txt"),
            ("checksum_failures", "postgres/checksum-failures.txt"),
            ("tablespaces", "postgres/tablespaces.txt"),
        ] {
            assert!(up.has_source(kind, path), "{}: no {kind} {path}", up.name);
            let unread = up.report["sources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s["path"] == path)
                .unwrap()["unrecognized_lines"]
                .clone();
            assert_eq!(unread, 0, "{}: {path}", up.name);
        }
        let paths = up.file("storage/paths.txt").unwrap();
        assert!(paths.starts_with("data_directory\t"), "{paths}");
        assert!(paths.contains("\npg_wal\t"), "{paths}");
        let wal = up.file("storage/pg_wal.txt").unwrap();
        assert!(wal.starts_with("segments "), "{wal}");
        assert!(wal.contains("\narchive_ready 0\n"), "{wal}");

        // Every non-reserved slot taken: as root the collector gets a superuser's reserved
        // slot, and adds nothing to the log.
        let full = c("full-root");
        assert!(full.has_source("pg_settings", "postgres/pg_settings.txt"));
        assert!(full.has_source("postgres_log", "postgres/server.log"));
        assert_eq!(full.fatals, 0, "{}", full.name);
        // As an ordinary role it is refused once, and says so.
        let refused = c("full-user");
        assert!(
            refused.fatals <= 1,
            "{}: {} attempts",
            refused.name,
            refused.fatals
        );
        let why = refused.note("postgres/pg_settings.txt");
        assert!(
            why.contains("remaining connection slots are reserved"),
            "{why}"
        );
        assert_eq!(refused.manifest["settings_from"], "none");
        assert!(
            refused.caveats().contains(&"no_settings"),
            "{:?}",
            refused.caveats()
        );

        // An ordinary user with the server up reads what any role may.
        let user = c("up-user");
        assert!(user.has_source("pg_settings", "postgres/pg_settings.txt"));
        assert_eq!(user.manifest["uid"], pgm_uid);

        // Without psql: the settings come from the server binary, as its owner.
        let nopsql = c("nopsql-root");
        assert_eq!(nopsql.entry("postgres/pg_settings.txt")["status"], 127);
        assert!(nopsql.has_source("pg_settings", "postgres/pg_settings-postgres-C.txt"));
        assert!(nopsql.caveats().contains(&"settings_not_from_server"));

        // Down, as root: postgres -C, and the log of the server that went down.
        let down = c("down-root");
        assert_eq!(down.manifest["settings_from"], "postgres -C");
        let settings = down.file("postgres/pg_settings-postgres-C.txt").unwrap();
        assert!(
            settings.contains("\nwork_mem|1048576|kB|postgres -C||f\n"),
            "{settings}"
        );
        assert!(
            settings.contains("\nmax_connections|8||postgres -C||f\n"),
            "{settings}"
        );
        assert!(down.has_source("pg_settings", "postgres/pg_settings-postgres-C.txt"));
        assert!(down.caveats().contains(&"settings_not_from_server"));
        // The settings name where they came from: work_mem from ALTER SYSTEM.
        assert_eq!(
            down.report["host"]["postgres"]["settings_from"]
                .as_str()
                .map(|s| s.starts_with("postgres -C")),
            Some(true),
            "{}",
            down.report["host"]["postgres"]
        );
        // The WAL settings too, and pg_wal counted without the server.
        assert!(settings.contains("\nmax_wal_size|"), "{settings}");
        assert!(down.has_source("wal_directory", "storage/pg_wal.txt"));
        assert!(down.has_source("postgres_log", "postgres/server.log"));
        let log = down.file("postgres/server.log").unwrap();
        assert!(log.contains("database system is shut down"), "{log}");
        // Down, as an ordinary user: nothing of the data directory, and why.
        let shut_out = c("down-user");
        let why = shut_out.note("postgres/pg_settings-postgres-C.txt");
        assert!(
            why.contains("needs root or the data directory's owner postgres"),
            "{why}"
        );
        let why = shut_out.note("postgres/server.log");
        assert!(why.contains("cannot be read by uid"), "{why}");
        assert!(
            shut_out.caveats().contains(&"no_settings"),
            "{:?}",
            shut_out.caveats()
        );
    }

    // A nearly full output file system: the heavy items are skipped, the bundle still fits.
    let small = &cases["15-smalldisk-root"];
    assert_eq!(small.note("postgres/server.log"), "skipped: low disk space");
    assert!(small.has_kind("meminfo"));

    // A server in its own mount and PID namespace with a 64 MB /dev/shm: from the host
    // (--pid) and from inside (sh -s, the archive on stdout), /dev/shm is the server's.
    for name in ["15-container-host", "15-container-inside"] {
        let case = &cases[name];
        let df = case.file("storage/df.txt").unwrap();
        let shm = df.lines().find(|l| l.ends_with(" /dev/shm")).unwrap();
        assert!(
            shm.split_whitespace().nth(1) == Some("65536"),
            "{name}: {df}"
        );
        assert!(
            case.has_source("pg_settings", "postgres/pg_settings.txt"),
            "{name}"
        );
        assert!(
            case.has_source("postgres_log", "postgres/server.log"),
            "{name}"
        );
    }
    assert_eq!(cases["15-container-inside"].manifest["postmaster_pid"], 1);
}
