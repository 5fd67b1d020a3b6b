//! The collector on a host with several clusters, and the server's logs, against real
//! PostgreSQL 15 clusters (Debian's binaries) owned by the unprivileged `pgm` user: the
//! postmaster `-D` names and only its processes, the other cluster named in the manifest, a
//! cluster that is down (stopped, or its postmaster killed) never given the other's postmaster;
//! the log of a server started with `pg_ctl -l FILE`; with the logging collector on, the
//! postmaster's standard error beside the collector's files and the earlier files back to the
//! run that crashed; a process that exits mid-collection. Skipped without root, `pgm` or the
//! binaries.

#![allow(clippy::print_stderr)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pgmortem_bundle::{Bundle, PostmasterState, ServerLogRole, SourceKind};

use common::{Scratch, USER, can_run, collect, every_entry_accounted_for};

const BIN: &str = "/usr/lib/postgresql/15/bin";

fn can_run_clusters(what: &str) -> bool {
    if !can_run(what, true) {
        return false;
    }
    if !Path::new(BIN).join("postgres").exists() {
        eprintln!("skipped {what}: no PostgreSQL 15 binaries at {BIN}");
        return false;
    }
    true
}

/// A scratch cluster of `USER`'s, its socket in its own directory (so any port will do).
struct Cluster {
    dir: tempfile::TempDir,
}

impl Cluster {
    fn new(port: u16, logging_collector: bool) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let c = Cluster { dir };
        let out = c
            .as_user(&format!("{BIN}/initdb"))
            .arg("-D")
            .arg(c.data())
            .args(["-A", "trust", "-U", "postgres"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let conf = format!(
            "listen_addresses = ''\nport = {port}\nunix_socket_directories = '{}'\n\
             logging_collector = {}\nlc_messages = 'C'\nlog_timezone = 'UTC'\n\
             shared_buffers = 16MB\nmax_connections = 10\n",
            c.dir.path().display(),
            if logging_collector { "on" } else { "off" }
        );
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(c.data().join("postgresql.conf"))
            .unwrap();
        std::io::Write::write_all(&mut file, conf.as_bytes()).unwrap();
        c
    }

    fn as_user(&self, program: &str) -> Command {
        let mut c = Command::new("runuser");
        c.args(["-u", USER, "--", program]).current_dir("/");
        c
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `pg_ctl -l FILE -w start`, FILE in the cluster's directory.
    fn start(&self, stderr_file: &str) {
        let out = self
            .as_user(&format!("{BIN}/pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .arg("-l")
            .arg(self.dir.path().join(stderr_file))
            .args(["-w", "start"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn pg_ctl(&self, args: &[&str]) {
        let out = self
            .as_user(&format!("{BIN}/pg_ctl"))
            .arg("-D")
            .arg(self.data())
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn postmaster_pid(&self) -> u32 {
        let pidfile = std::fs::read_to_string(self.data().join("postmaster.pid")).unwrap();
        pidfile.lines().next().unwrap().parse().unwrap()
    }

    fn file(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if self.data().join("postmaster.pid").exists() {
            let _ = self
                .as_user(&format!("{BIN}/pg_ctl"))
                .arg("-D")
                .arg(self.data())
                .args(["-w", "stop", "-m", "immediate"])
                .output();
        }
    }
}

/// The collector as root under `shell` (`dash` or `busybox sh`), writing into `scratch`.
fn collector(scratch: &Scratch, shell: &str, args: &[&str]) -> Command {
    let mut words = shell.split(' ');
    let mut c = Command::new(words.next().unwrap());
    c.args(words)
        .arg(scratch.script())
        .arg("-o")
        .arg(scratch.path())
        .args(args)
        .current_dir("/");
    c
}

fn path_arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The pids of the processes whose files are in the bundle (`processes/PID/status`).
fn collected_pids(bundle: &Bundle) -> Vec<u32> {
    bundle
        .sources
        .iter()
        .filter(|s| s.kind == SourceKind::ProcStatus)
        .filter_map(|s| s.path.split('/').nth(1)?.parse().ok())
        .collect()
}

/// `PPid:` of a collected process's status file.
fn ppid_in_bundle(bundle: &Bundle, pid: u32) -> u32 {
    let path = format!("processes/{pid}/status");
    let status = bundle.sources.iter().find(|s| s.path == path).unwrap();
    let text = String::from_utf8_lossy(&status.bytes);
    text.lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

fn text(bundle: &Bundle, path: &str) -> String {
    let s = bundle
        .sources
        .iter()
        .find(|s| s.path == path)
        .unwrap_or_else(|| panic!("no {path} in the bundle"));
    String::from_utf8_lossy(&s.bytes).into_owned()
}

fn kind_of(bundle: &Bundle, path: &str) -> Option<SourceKind> {
    bundle
        .sources
        .iter()
        .find(|s| s.path == path)
        .map(|s| s.kind)
}

/// Waits until no process of the cluster whose postmaster was `pm` is left (they exit on
/// their postmaster's death).
fn wait_children_gone(pm: u32) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = Command::new("pgrep")
            .args(["-P", &pm.to_string()])
            .output()
            .unwrap();
        if out.stdout.is_empty() {
            return;
        }
        assert!(Instant::now() < deadline, "children of {pm} still run");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn two_clusters_the_named_one_only_and_a_stopped_one_never_takes_the_other() {
    if !can_run_clusters("the two-cluster runs") {
        return;
    }
    let a = Cluster::new(55431, false);
    let b = Cluster::new(55432, true);
    a.start("logfile");
    b.start("startup.log");
    let (a_pm, b_pm) = (a.postmaster_pid(), b.postmaster_pid());
    let scratch = Scratch::new();

    // -D A: A's postmaster and only the processes below it; B named, never collected.
    let (bundle, stderr) = collect(collector(&scratch, "dash", &["-D", path_arg(&a.data())]));
    let m = bundle.manifest.as_ref().unwrap();
    assert_eq!(m.postmaster_pid, Some(a_pm), "{stderr}");
    assert_eq!(m.postmaster_state, Some(PostmasterState::Running));
    assert_eq!(m.postmaster_found_from, "postmaster.pid");
    assert_eq!(m.port, Some(55431));
    assert!(m.postmaster_started.is_some());
    assert!(m.postmaster_memory_cgroup().is_some());
    let pids = collected_pids(&bundle);
    assert_eq!(pids[0], a_pm, "the postmaster first: {pids:?}");
    assert!(pids.len() >= 5, "{pids:?}");
    for &pid in &pids[1..] {
        assert_eq!(ppid_in_bundle(&bundle, pid), a_pm, "{pid} is not A's");
    }
    assert!(!pids.contains(&b_pm));
    assert_eq!(m.processes.as_ref().unwrap().collected as usize, pids.len());
    let other = m
        .other_postmasters
        .iter()
        .find(|o| o.pid == b_pm)
        .unwrap_or_else(|| panic!("{:?}", m.other_postmasters));
    assert_eq!(Path::new(&other.data_directory), b.data());
    assert_eq!(other.port, Some(55432));
    assert!(other.processes >= 5, "{other:?}");
    assert!(!m.other_postmasters.iter().any(|o| o.pid == a_pm));
    // A runs without the logging collector under `pg_ctl -l logfile`: its standard error is
    // its log.
    let log = m.server_log("postgres/server.log").unwrap();
    assert_eq!(log.role, ServerLogRole::Current);
    assert_eq!(Path::new(&log.source), a.file("logfile"));
    assert!(log.found_from.ends_with("/fd/2"), "{log:?}");
    assert!(text(&bundle, "postgres/server.log").contains("ready to accept connections"));
    assert_eq!(
        kind_of(&bundle, "postgres/server.log"),
        Some(SourceKind::PostgresLog)
    );
    assert!(m.file("postgres/stderr.log").is_none());
    every_entry_accounted_for(&bundle);

    // -D B (busybox sh): the logging collector's file, and beside it the standard error the
    // logger process keeps (the postmaster's own points to the collector's pipe).
    let (bundle, stderr) = collect(collector(
        &scratch,
        "busybox sh",
        &["-D", path_arg(&b.data())],
    ));
    let m = bundle.manifest.as_ref().unwrap();
    assert_eq!(m.postmaster_pid, Some(b_pm), "{stderr}");
    assert_eq!(
        m.server_log("postgres/server.log").unwrap().found_from,
        "current_logfiles"
    );
    let err = m.server_log("postgres/stderr.log").unwrap();
    assert_eq!(err.role, ServerLogRole::Stderr);
    assert_eq!(Path::new(&err.source), b.file("startup.log"));
    assert!(
        text(&bundle, "postgres/stderr.log")
            .contains("redirecting log output to logging collector process")
    );
    assert_eq!(
        kind_of(&bundle, "postgres/stderr.log"),
        Some(SourceKind::PostgresLog)
    );
    assert!(m.other_postmasters.iter().any(|o| o.pid == a_pm));
    assert!(!collected_pids(&bundle).contains(&a_pm));

    // A stopped, B running: A is down, and B's postmaster is not taken for it.
    a.pg_ctl(&["-w", "stop", "-m", "fast"]);
    let (bundle, _) = collect(collector(&scratch, "dash", &["-D", path_arg(&a.data())]));
    let m = bundle.manifest.as_ref().unwrap();
    assert_eq!(m.postmaster_pid, None);
    assert_eq!(m.postmaster_state, Some(PostmasterState::Down));
    assert!(collected_pids(&bundle).is_empty());
    assert!(!bundle.sources.iter().any(|s| s.path.starts_with("cgroup/")));
    assert!(m.other_postmasters.iter().any(|o| o.pid == b_pm));
    assert!(
        m.notes.iter().any(|n| n.contains("no postmaster runs for")),
        "{:?}",
        m.notes
    );
    // Down, its standard error named: the server's last words are in it.
    let stderr_file = a.file("logfile");
    let (bundle, _) = collect(collector(
        &scratch,
        "dash",
        &[
            "-D",
            path_arg(&a.data()),
            "--stderr",
            path_arg(&stderr_file),
        ],
    ));
    let m = bundle.manifest.as_ref().unwrap();
    assert_eq!(
        m.server_log("postgres/stderr.log").unwrap().found_from,
        "--stderr"
    );
    assert!(text(&bundle, "postgres/stderr.log").contains("database system is shut down"));

    // A's postmaster killed: its postmaster.pid stays, naming a pid that is gone; still down.
    a.start("logfile");
    let a_pm = a.postmaster_pid();
    let _ = Command::new("kill")
        .args(["-KILL", &a_pm.to_string()])
        .status();
    wait_children_gone(a_pm);
    assert!(a.data().join("postmaster.pid").exists());
    let (bundle, _) = collect(collector(&scratch, "dash", &["-D", path_arg(&a.data())]));
    let m = bundle.manifest.as_ref().unwrap();
    assert_eq!(m.postmaster_pid, None);
    assert_eq!(m.postmaster_state, Some(PostmasterState::Down));
    assert!(
        m.notes
            .iter()
            .any(|n| n.contains(&format!("postmaster.pid names pid {a_pm}"))),
        "{:?}",
        m.notes
    );
    assert!(collected_pids(&bundle).is_empty());
}

/// Seconds to wait so that a restart's log file (log_filename's default names files to the
/// second) is a new one.
fn next_second() {
    std::thread::sleep(Duration::from_millis(1100));
}

#[test]
fn the_earlier_log_files_back_to_the_run_that_crashed() {
    if !can_run_clusters("the earlier log files run") {
        return;
    }
    let c = Cluster::new(55433, true);
    c.start("startup.log");
    let pm = c.postmaster_pid();
    // A crash: a child killed, every other process terminated, crash recovery, in the same
    // file (the logger outlives the crash restart).
    let walwriter = Command::new("pgrep")
        .args(["-P", &pm.to_string(), "-f", "walwriter"])
        .output()
        .unwrap();
    let walwriter = String::from_utf8(walwriter.stdout).unwrap();
    let _ = Command::new("kill")
        .args(["-KILL", walwriter.trim()])
        .status();
    let deadline = Instant::now() + Duration::from_secs(30);
    let log_dir = c.data().join("log");
    let crashed_file = loop {
        let first = std::fs::read_dir(&log_dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let text = std::fs::read_to_string(first.path()).unwrap_or_default();
        if text.contains("database system is ready to accept connections")
            && text.matches("ready to accept connections").count() >= 2
        {
            break first.path();
        }
        assert!(Instant::now() < deadline, "no crash restart: {text}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let crashed_name = crashed_file
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    next_second();
    c.pg_ctl(&["-l", path_arg(&c.file("startup.log")), "-w", "restart"]);
    let scratch = Scratch::new();

    // One restart since the crash: the file of the run that crashed is collected.
    let (bundle, _) = collect(collector(&scratch, "dash", &["-D", path_arg(&c.data())]));
    let m = bundle.manifest.as_ref().unwrap();
    let earlier = format!("postgres/log/{crashed_name}");
    let log = m
        .server_log(&earlier)
        .unwrap_or_else(|| panic!("{:?}", m.server_logs));
    assert_eq!(log.role, ServerLogRole::Earlier);
    assert_eq!(kind_of(&bundle, &earlier), Some(SourceKind::PostgresLog));
    assert!(text(&bundle, &earlier).contains("was terminated by signal 9"));
    assert!(
        m.log_files_left_out.is_empty(),
        "{:?}",
        m.log_files_left_out
    );
    assert_eq!(m.server_logs[0].path, "postgres/server.log");

    // Two clean restarts since: the run before the current one is the last taken, the crashed
    // one is named as left out.
    next_second();
    c.pg_ctl(&["-l", path_arg(&c.file("startup.log")), "-w", "restart"]);
    let (bundle, _) = collect(collector(
        &scratch,
        "busybox sh",
        &["-D", path_arg(&c.data())],
    ));
    let m = bundle.manifest.as_ref().unwrap();
    assert!(m.server_log(&earlier).is_none(), "{:?}", m.server_logs);
    assert_eq!(
        m.server_logs
            .iter()
            .filter(|l| l.role == ServerLogRole::Earlier)
            .count(),
        1
    );
    assert_eq!(m.log_files_left_out_count, 1);
    let left = &m.log_files_left_out[0];
    assert_eq!(Path::new(&left.source), crashed_file);
    assert!(
        left.why
            .starts_with("before the start of the run before the current one"),
        "{left:?}"
    );
    assert!(left.bytes.is_some_and(|b| b > 0));
    every_entry_accounted_for(&bundle);

    // --log-bytes caps the earlier files together: past it, they are named.
    let (bundle, _) = collect(collector(
        &scratch,
        "dash",
        &["-D", path_arg(&c.data()), "--log-bytes", "100"],
    ));
    let m = bundle.manifest.as_ref().unwrap();
    assert!(
        m.log_files_left_out
            .iter()
            .any(|l| l.why.starts_with("past --log-bytes")),
        "{:?}",
        m.log_files_left_out
    );
}

/// The fake postmaster of the mid-collection test: a shell script named `postgres` whose
/// children are a copy of `sleep` named `postgres` (so their comm is `postgres` too).
const FAKE_POSTMASTER: &str = r#"#!/bin/sh
n=0
while [ $n -lt 20 ]; do "$1/bin/postgres" 600 & n=$((n + 1)); done
wait
"#;

#[test]
fn a_process_that_exits_mid_collection_is_a_note_never_a_shell_error() {
    if !can_run("the mid-collection exit run", false) {
        return;
    }
    let scratch = Scratch::new();
    let fake = scratch.path().join("fake");
    std::fs::create_dir_all(fake.join("bin")).unwrap();
    std::fs::create_dir_all(fake.join("pm")).unwrap();
    std::fs::copy("/bin/sleep", fake.join("bin/postgres")).unwrap();
    std::fs::write(fake.join("pm/postgres"), FAKE_POSTMASTER).unwrap();
    std::fs::set_permissions(
        fake.join("pm/postgres"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let mut gone_seen = false;
    for attempt in 1..=3 {
        let mut pm = Command::new(fake.join("pm/postgres"))
            .arg(&fake)
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let children = loop {
            let out = Command::new("pgrep")
                .args(["-P", &pm.id().to_string()])
                .output()
                .unwrap();
            let pids: Vec<String> = String::from_utf8(out.stdout)
                .unwrap()
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            if pids.len() == 20 {
                break pids;
            }
            assert!(Instant::now() < deadline, "{pids:?}");
            std::thread::sleep(Duration::from_millis(20));
        };
        let out = scratch.path().join(format!("out{attempt}"));
        std::fs::create_dir(&out).unwrap();
        let run = Command::new("dash")
            .arg(scratch.script())
            .arg("-o")
            .arg(&out)
            .args(["--pid", &pm.id().to_string()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // The children are killed once the collector has found them: its titles file is
        // written just after the processes are read from /proc, and before their files are.
        let deadline = Instant::now() + Duration::from_secs(60);
        while !titles_written(&out) {
            assert!(Instant::now() < deadline, "no titles file in {out:?}");
            std::thread::sleep(Duration::from_millis(1));
        }
        for pid in &children {
            let _ = Command::new("kill").args(["-KILL", pid]).status();
        }
        let done = run.wait_with_output().unwrap();
        let _ = pm.kill();
        let _ = pm.wait();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert!(done.status.success(), "{stderr}");
        // Never the shell's own error on the terminal (`collect.sh: 552: cannot open …`).
        for line in stderr.lines() {
            assert!(line.starts_with("pgmortem-collect: "), "{line}");
        }
        let path = PathBuf::from(String::from_utf8(done.stdout).unwrap().trim());
        let bundle =
            pgmortem_bundle::open(&path, &pgmortem_bundle::OpenOptions::default()).unwrap();
        let m = bundle.manifest.as_ref().unwrap();
        let gone = &m.processes.as_ref().unwrap().gone;
        if gone.is_empty() {
            eprintln!("attempt {attempt}: the collector read every child before it was killed");
            continue;
        }
        for pid in gone {
            assert!(children.contains(&pid.to_string()), "{pid}");
            // The kill can fall between two of its files: those read before it keep the
            // batch's note, every one that could not be read says the process is gone.
            let dir = format!("processes/{pid}/");
            let files: Vec<_> = m
                .files
                .iter()
                .filter(|f| f.path.starts_with(&dir))
                .collect();
            let note = format!("gone: process {pid} exited during the collection");
            for f in &files {
                if f.status != Some(0) {
                    assert_eq!(f.note, note, "{}", f.path);
                }
            }
            assert!(files.iter().any(|f| f.note == note), "{files:?}");
        }
        assert!(
            m.notes
                .iter()
                .any(|n| n.contains("exited during the collection")),
            "{:?}",
            m.notes
        );
        every_entry_accounted_for(&bundle);
        gone_seen = true;
        break;
    }
    assert!(gone_seen, "no run saw a child go");
}

/// Whether the collector's work directory below `out` holds its process titles.
fn titles_written(out: &Path) -> bool {
    let Ok(work) = std::fs::read_dir(out) else {
        return false;
    };
    work.flatten().any(|w| {
        std::fs::read_dir(w.path()).is_ok_and(|mut d| {
            d.any(|b| b.is_ok_and(|b| b.path().join("processes/postgres-titles.txt").exists()))
        })
    })
}
