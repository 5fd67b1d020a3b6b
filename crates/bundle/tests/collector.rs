//! The collector script against a real scratch PostgreSQL 15 (through
//! fixtures/record/collect-pg15.sh), then the bundle it wrote opened and every snapshot in it
//! parsed. Skipped, with a message saying why, when not root or without the Debian PostgreSQL
//! 15 binaries; the busybox and shellcheck checks are skipped without those tools.

#![allow(clippy::print_stderr)]

use std::path::{Path, PathBuf};
use std::process::Command;

use pgmortem_bundle::{COLLECTOR_SCRIPT, OpenOptions, SourceKind, open, snapshot_stats};
use pgmortem_parse::system;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// An output directory on a file system of its own: a 4 GiB tmpfs (a limit, not a reservation)
/// mounted on a new temporary directory, unmounted when dropped. The collector keeps
/// max(1 GiB, 5 %) of its output file system free, so on a machine whose disk is nearly full it
/// skips the server log; its own tmpfs keeps this test about the collector, not about the
/// machine's disk. Falls back to the plain directory when the mount is refused (then the
/// low-disk assertion below says why a run failed).
struct OwnFileSystem {
    dir: tempfile::TempDir,
    mounted: bool,
}

impl OwnFileSystem {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=4g", "pgmortem-test"])
            .arg(dir.path())
            .output()
            .is_ok_and(|o| o.status.success());
        if !mounted {
            eprintln!(
                "note: no tmpfs of its own for the collector's output, using {:?}",
                dir.path()
            );
        }
        Self { dir, mounted }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for OwnFileSystem {
    fn drop(&mut self) {
        if self.mounted {
            let _ = Command::new("umount").arg(self.dir.path()).output();
        }
    }
}

#[test]
fn the_shipped_script_is_the_file_and_shellcheck_clean() {
    let on_disk = std::fs::read_to_string(repo().join("crates/bundle/collect/pgmortem-collect.sh"));
    assert_eq!(on_disk.unwrap(), COLLECTOR_SCRIPT);
    assert!(COLLECTOR_SCRIPT.starts_with("#!/bin/sh\n"));
    if !have("shellcheck") {
        eprintln!("skipped shellcheck: not installed (apt-get install shellcheck)");
        return;
    }
    let out = Command::new("shellcheck")
        .args(["-s", "sh", "-S", "info"])
        .arg(repo().join("crates/bundle/collect/pgmortem-collect.sh"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn collects_a_real_postgresql_15_and_the_bundle_parses() {
    if !is_root() {
        eprintln!("skipped: needs root (scratch cluster owner, memory cgroup)");
        return;
    }
    if !Path::new("/usr/lib/postgresql/15/bin/postgres").exists() {
        eprintln!("skipped: PostgreSQL 15 binaries not at /usr/lib/postgresql/15/bin");
        return;
    }
    let out_dir = OwnFileSystem::new();
    // A port of our own: other test runs on the machine may run the same script.
    let port = 55000 + (std::process::id() % 4000);
    let run = Command::new("bash")
        .arg(repo().join("fixtures/record/collect-pg15.sh"))
        .env("OUT", out_dir.path())
        .env("PORT", port.to_string())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let stdout = String::from_utf8(run.stdout).unwrap();
    let bundle_path = PathBuf::from(stdout.lines().last().unwrap());
    assert!(
        bundle_path.starts_with(out_dir.path()),
        "{bundle_path:?}: the path is printed last"
    );
    let name = bundle_path.file_name().unwrap().to_string_lossy();
    assert!(
        name.starts_with("pgmortem-") && name.ends_with(".tar.gz"),
        "{name}"
    );

    let bundle = open(&bundle_path, &OpenOptions::default()).unwrap();
    let manifest = bundle.manifest.as_ref().expect("manifest.json");
    assert_eq!(manifest.format_version, 1);
    assert_eq!(manifest.uid, Some(0));
    assert!(manifest.arguments.contains("--log-bytes 1048576"));
    // Every manifest entry either produced its file or says why not.
    for f in &manifest.files {
        let present = bundle.sources.iter().any(|s| s.path == f.path);
        assert!(
            present || f.status != Some(0) || f.bytes == Some(0),
            "{f:?}"
        );
    }
    // Only what the collector could not collect is listed, with what it recorded.
    for s in &bundle.skipped {
        assert!(s.reason.starts_with("not in the bundle: "), "{s:?}");
    }

    // The collector skips large files when the output file system is nearly full (it never
    // fills a disk): on such a machine this test cannot pass, and says why.
    let low_disk: Vec<&str> = manifest
        .files
        .iter()
        .filter(|f| f.note.contains("low disk"))
        .map(|f| f.path.as_str())
        .collect();
    assert!(
        low_disk.is_empty(),
        "the collector skipped {low_disk:?} for low disk space on the machine running this \
         test (it keeps max(1 GiB, 5 %) of the output file system free): free some space and run it again"
    );
    let count = |k: SourceKind| bundle.sources.iter().filter(|s| s.kind == k).count();
    for kind in [
        SourceKind::Uptime,
        SourceKind::Date,
        SourceKind::Btime,
        SourceKind::KernelLog,
        SourceKind::Meminfo,
        SourceKind::Vmstat,
        SourceKind::Sysctl,
        SourceKind::Free,
        SourceKind::Df,
        SourceKind::PgSettings,
        SourceKind::PgConf,
        SourceKind::PostgresLog,
        SourceKind::ProcessTitles,
        SourceKind::CgroupStat,
        SourceKind::CgroupEvents,
        SourceKind::StoragePaths,
        SourceKind::Mountinfo,
        SourceKind::WalDirectory,
        SourceKind::ReplicationSlots,
        SourceKind::Archiver,
        SourceKind::DatabaseXidAges,
        SourceKind::ChecksumFailures,
        SourceKind::Tablespaces,
    ] {
        assert!(count(kind) >= 1, "no {kind:?} in {:?}", paths(&bundle));
    }
    // postmaster, checkpointer, background writer, walwriter, two launchers, two clients
    assert!(count(SourceKind::ProcStatus) >= 8);
    assert!(count(SourceKind::SmapsRollup) >= 8);
    assert!(count(SourceKind::ThpSetting) >= 2);
    assert!(count(SourceKind::CgroupValue) >= 4);

    // Real output of real tools: every snapshot understood completely.
    for s in &bundle.sources {
        if let Some(stats) = snapshot_stats(s.kind, &s.bytes) {
            assert_eq!(
                stats.unrecognized_lines, 0,
                "{}: {:?}",
                s.path, stats.unrecognized_examples
            );
        }
    }

    // Never collected: the password in the logged DDL, pg_hba rules, environ, auto.conf.
    for s in &bundle.sources {
        // Through the reader: a log too big for memory is not in `bytes`.
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut s.reader().unwrap(), &mut bytes).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("hunter2-do-not-collect"), "{}", s.path);
        assert!(
            !s.path.contains("environ") && !s.path.contains("auto.conf"),
            "{}",
            s.path
        );
        assert!(!text.contains("host    all             all"), "{}", s.path);
    }
    let log = source(&bundle, "postgres/server.log");
    assert!(String::from_utf8_lossy(log).contains("PASSWORD '<redacted>'"));

    // The facts the diagnosis needs come out of it.
    let meminfo = system::parse_meminfo(source(&bundle, "memory/meminfo.txt"));
    let sysctls = system::parse_sysctl(source(&bundle, "memory/sysctl-vm.txt"));
    let commit = system::facts::commit_limit(&meminfo, &sysctls, 4096).unwrap();
    assert_eq!(commit.matches, Some(true), "{commit:?}");
    let mut cgroup = system::CgroupMemory::default();
    for s in bundle
        .sources
        .iter()
        .filter(|s| s.path.starts_with("cgroup/"))
    {
        cgroup.add_file(&s.path, &s.bytes);
    }
    let limit = system::facts::effective_memory_limit(Some(&meminfo), Some(&cgroup)).unwrap();
    assert_eq!((limit.source, limit.bytes), ("cgroup", 1 << 30));
    let (titles, _) = system::parse_titles(source(&bundle, "processes/postgres-titles.txt"));
    assert!(titles.iter().any(|t| t.role == system::PgRole::Postmaster));
    let settings = system::parse_pg_settings(source(&bundle, "postgres/pg_settings.txt"));
    assert_eq!(
        settings.get("shared_buffers").unwrap().bytes,
        Some(32 << 20)
    );
    assert_eq!(settings.footer_rows, Some(settings.settings.len() as u64));

    // Where the files are and what holds them: the data directory's mount, pg_wal's segments,
    // the server's own view of slots, archiving and transaction-id ages.
    let places = system::parse_storage_paths(source(&bundle, "storage/paths.txt"));
    let data = places.get("data_directory").expect("data_directory");
    assert!(data.path.ends_with("/data"), "{data:?}");
    assert!(places.get("pg_wal").is_some() && places.get("log_directory").is_some());
    let mounts = system::parse_mountinfo(source(&bundle, "storage/mountinfo.txt"));
    let mount = mounts
        .mount_of(&data.path)
        .expect("the data directory's mount");
    assert!(!mount.read_only(), "{mount:?}");
    let df = system::parse_df(source(&bundle, "storage/df.txt"));
    // /dev/shm, then the data directory, pg_wal and the log directory, in that order.
    assert_eq!(df.rows.len(), 4, "{df:?}");
    assert_eq!(df.rows[0].mounted_on, "/dev/shm");
    assert_eq!(df.rows[1].mounted_on, mount.mount_point);
    let wal = system::parse_wal_directory(source(&bundle, "storage/pg_wal.txt"));
    assert!(wal.segments.unwrap() >= 1, "{wal:?}");
    assert_eq!(
        wal.segment_bytes,
        wal.segments.map(|n| n * (16 << 20)),
        "{wal:?}"
    );
    assert_eq!(wal.archive_ready, Some(0));
    let slots = system::parse_replication_slots(source(&bundle, "postgres/replication-slots.txt"));
    assert!(slots.slots.is_empty());
    let archiver = system::parse_archiver(source(&bundle, "postgres/archiver.txt"));
    assert_eq!(archiver.failed_count, Some(0));
    assert!(archiver.collected_at.is_some());
    let ages = system::parse_database_xid_ages(source(&bundle, "postgres/database-xid-ages.txt"));
    let names: Vec<&str> = ages.databases.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["postgres", "template0", "template1"]);
    assert!(ages.oldest_xid().unwrap().datfrozenxid_age.unwrap() < 1_000_000);
    // Each postgres process's files come from one pass, whose time the note gives.
    let status = manifest
        .files
        .iter()
        .find(|f| f.path.ends_with("/status") && f.kind == "proc_status")
        .unwrap();
    assert!(
        status.note.starts_with("one pass over the files of "),
        "{status:?}"
    );
}

#[test]
fn runs_under_busybox_sh_without_postgresql() {
    if !have("busybox") {
        eprintln!("skipped: busybox not installed");
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    // Port 1: nothing listens, every psql step fails fast and is recorded, never fatal.
    let run = Command::new("busybox")
        .arg("sh")
        .arg(repo().join("crates/bundle/collect/pgmortem-collect.sh"))
        .args(["-o"])
        .arg(out_dir.path())
        .args(["-h", "127.0.0.1", "-p", "1", "--log-bytes", "1000"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8(run.stdout).unwrap();
    let bundle_path = PathBuf::from(stdout.lines().last().unwrap());
    let bundle = open(&bundle_path, &OpenOptions::default()).unwrap();
    let manifest = bundle.manifest.as_ref().expect("manifest.json");
    let settings = manifest
        .files
        .iter()
        .find(|f| f.path == "postgres/pg_settings.txt")
        .unwrap();
    assert_ne!(settings.status, Some(0));
    assert!(bundle.sources.iter().any(|s| s.kind == SourceKind::Meminfo));
    assert!(bundle.sources.iter().any(|s| s.kind == SourceKind::Uptime));
}

#[test]
fn bad_arguments_are_usage_errors() {
    let run = Command::new("sh")
        .arg(repo().join("crates/bundle/collect/pgmortem-collect.sh"))
        .args(["--perf", "soon"])
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("--perf needs seconds"));
    assert!(run.stdout.is_empty());
}

fn source<'a>(bundle: &'a pgmortem_bundle::Bundle, path: &str) -> &'a [u8] {
    &bundle
        .sources
        .iter()
        .find(|s| s.path == path)
        .unwrap_or_else(|| panic!("no {path} in {:?}", paths(bundle)))
        .bytes
}

fn paths(bundle: &pgmortem_bundle::Bundle) -> Vec<&str> {
    bundle.sources.iter().map(|s| s.path.as_str()).collect()
}
