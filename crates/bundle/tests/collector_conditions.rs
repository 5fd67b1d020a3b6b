//! The collector under bad conditions: as an unprivileged user, without psql, with PostgreSQL
//! down, with the kernel log closed to non-root users, and writing to a full disk. Each run
//! must still yield a bundle whose manifest says what failed and why. Every test takes a few
//! seconds; those that need root (runuser, sysctl, mount namespaces) say so and return when
//! not root or without the `pgm` user.

#![allow(clippy::print_stderr)]

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;

use pgmortem_bundle::{Bundle, ManifestFile, OpenOptions, SourceKind, open};

use common::{Scratch, USER, can_run, collect, entry, every_entry_accounted_for, has, uid_of};

/// Runs that change `kernel.dmesg_restrict` and runs that read the kernel log as non-root
/// must not overlap.
static DMESG_SYSCTL: Mutex<()> = Mutex::new(());

/// Sets `kernel.dmesg_restrict` for the life of the value, then puts the old value back.
struct DmesgRestrict {
    old: String,
}

const DMESG_RESTRICT: &str = "/proc/sys/kernel/dmesg_restrict";

impl DmesgRestrict {
    fn set(value: &str) -> DmesgRestrict {
        let old = std::fs::read_to_string(DMESG_RESTRICT).unwrap();
        std::fs::write(DMESG_RESTRICT, value).unwrap();
        DmesgRestrict { old }
    }
}

impl Drop for DmesgRestrict {
    fn drop(&mut self) {
        let _ = std::fs::write(DMESG_RESTRICT, self.old.trim());
    }
}

fn as_user(scratch: &Scratch, args: &[&str]) -> Command {
    let mut c = Command::new("runuser");
    c.args(["-u", USER, "--", "sh"])
        .arg(scratch.script())
        .arg("-o")
        .arg(scratch.path())
        .args(args)
        .current_dir(scratch.path());
    c
}

#[test]
fn as_an_unprivileged_user() {
    if !can_run("the non-root run", true) {
        return;
    }
    let _serial = DMESG_SYSCTL.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = Scratch::new();
    let (bundle, _) = collect(as_user(&scratch, &["-h", "/nonexistent", "-p", "5"]));
    let manifest = bundle.manifest.as_ref().unwrap();
    assert_eq!(manifest.uid, uid_of(USER));
    every_entry_accounted_for(&bundle);
    // What any user may read is there.
    for kind in [
        SourceKind::Uptime,
        SourceKind::Date,
        SourceKind::Meminfo,
        SourceKind::Vmstat,
        SourceKind::Sysctl,
        SourceKind::Free,
    ] {
        assert!(has(&bundle, kind), "no {kind:?}");
    }
    // The bundle belongs to the user who ran it, readable by them only.
    let archive = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap();
    let mode = std::fs::metadata(&archive).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn with_the_kernel_log_closed_to_non_root_users() {
    if !can_run("the dmesg_restrict run", true) {
        return;
    }
    let _serial = DMESG_SYSCTL.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = Scratch::new();
    let (bundle, _) = {
        let _restrict = DmesgRestrict::set("1");
        collect(as_user(&scratch, &["-h", "/nonexistent", "-p", "5"]))
    };
    let dmesg = entry(&bundle, "kernel/dmesg.txt");
    assert_ne!(dmesg.status, Some(0), "{dmesg:?}");
    assert!(dmesg.note.contains("Operation not permitted"), "{dmesg:?}");
    assert!(!bundle.sources.iter().any(|s| s.path == "kernel/dmesg.txt"));
    // The journal is tried instead, and what it gave (or why not) is recorded.
    let journal = entry(&bundle, "kernel/journal-k.txt");
    assert!(journal.command.starts_with("journalctl -k"), "{journal:?}");
    every_entry_accounted_for(&bundle);
    assert!(has(&bundle, SourceKind::Meminfo));
}

#[test]
fn without_psql() {
    if !can_run("the run without psql", false) {
        return;
    }
    // A PATH holding every tool of /usr/bin and /usr/sbin but psql.
    let scratch = Scratch::new();
    let bin = scratch.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    for dir in ["/usr/bin", "/usr/sbin"] {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = e.file_name();
            if name == "psql" || bin.join(&name).exists() {
                continue;
            }
            std::os::unix::fs::symlink(e.path(), bin.join(&name)).unwrap();
        }
    }
    let mut c = Command::new("/bin/sh");
    c.arg(scratch.script())
        .arg("-o")
        .arg(scratch.path())
        .env("PATH", &bin);
    let (bundle, _) = collect(c);
    for path in [
        "postgres/version.txt",
        "postgres/pg_settings.txt",
        "postgres/activity.txt",
    ] {
        let e = entry(&bundle, path);
        assert_eq!(e.status, Some(127), "{e:?}");
        assert_eq!(e.note, "tool missing: psql");
    }
    assert!(
        !bundle
            .sources
            .iter()
            .any(|s| s.path == "postgres/pg_settings.txt")
    );
    // Without psql, the settings come from the server binary when a data directory is found
    // (this machine's Debian cluster), and the manifest says so; else it says why not.
    if let Some(c) = bundle
        .manifest
        .as_ref()
        .unwrap()
        .file("postgres/pg_settings-postgres-C.txt")
    {
        if c.status == Some(0) {
            assert!(c.note.starts_with("the server could not be asked"), "{c:?}");
            assert!(has(&bundle, SourceKind::PgSettings));
        } else {
            assert!(c.note.starts_with("not run: "), "{c:?}");
        }
    }
    assert!(has(&bundle, SourceKind::Meminfo));
    assert!(has(&bundle, SourceKind::KernelLog));
    every_entry_accounted_for(&bundle);
}

#[test]
fn with_postgresql_down() {
    if !can_run("the run against a stopped server", false) {
        return;
    }
    // A socket directory and a data directory with no server behind them.
    let scratch = Scratch::new();
    let sock = scratch.path().join("sock");
    let data = scratch.path().join("data");
    std::fs::create_dir(&sock).unwrap();
    std::fs::create_dir(&data).unwrap();
    let started = std::time::Instant::now();
    let mut c = Command::new("sh");
    c.arg(scratch.script())
        .arg("-o")
        .arg(scratch.path())
        .arg("-h")
        .arg(&sock)
        .args(["-p", "5432", "-D"])
        .arg(&data);
    let (bundle, _) = collect(c);
    assert!(started.elapsed().as_secs() < 30, "{:?}", started.elapsed());
    let settings = entry(&bundle, "postgres/pg_settings.txt");
    assert_eq!(settings.status, Some(2), "{settings:?}");
    assert!(
        settings.note.contains("connection to server")
            && settings.note.contains("No such file or directory"),
        "{settings:?}"
    );
    // An empty data directory of no packaging's layout: no log is taken from another
    // cluster's directory (/var/log/postgresql holds Debian's clusters' logs), and the
    // server binary cannot be found for a data directory without PG_VERSION.
    let log = entry(&bundle, "postgres/server.log");
    assert!(
        log.note
            .starts_with("no readable server log found (none in current_logfiles"),
        "{log:?}"
    );
    assert!(!has(&bundle, SourceKind::PostgresLog));
    let c = entry(&bundle, "postgres/pg_settings-postgres-C.txt");
    assert!(c.note.contains("is not a data directory"), "{c:?}");
    assert!(!has(&bundle, SourceKind::PgSettings));
    assert!(has(&bundle, SourceKind::Meminfo));
    every_entry_accounted_for(&bundle);
}

/// Runs the collector with `-o` a `size` tmpfs in a private mount namespace; the bundle is
/// copied out before the namespace (and the tmpfs) goes away.
fn collect_on_tmpfs(size: &str) -> (Bundle, String, u64) {
    let scratch = Scratch::new();
    let out = scratch.path().join("out");
    let mnt = scratch.path().join("mnt");
    std::fs::create_dir(&out).unwrap();
    std::fs::create_dir(&mnt).unwrap();
    let program = r#"set -e
mount -t tmpfs -o "size=$1" tmpfs "$2"
bundle=$(sh "$3" -o "$2" -h /nonexistent -p 5 2>"$4/stderr" | tail -n 1)
cp "$bundle" "$4/"
echo "$4/${bundle##*/}""#;
    let mut c = Command::new("unshare");
    c.args(["-m", "sh", "-c", program, "sh", size])
        .arg(&mnt)
        .arg(scratch.script())
        .arg(&out);
    let run = c.output().unwrap();
    let stderr = std::fs::read_to_string(out.join("stderr")).unwrap_or_default();
    assert!(
        run.status.success(),
        "{}{stderr}",
        String::from_utf8_lossy(&run.stderr)
    );
    let path = PathBuf::from(String::from_utf8(run.stdout).unwrap().trim());
    let size = std::fs::metadata(&path).unwrap().len();
    let bundle = open(&path, &OpenOptions::default()).unwrap();
    (bundle, stderr, size)
}

#[test]
fn on_a_nearly_full_disk() {
    if !can_run("the small-disk run", false) {
        return;
    }
    let (bundle, stderr, size) = collect_on_tmpfs("200k");
    assert!(size < 200 * 1024);
    assert!(stderr.contains("heavy items (perf, server log) are skipped"));
    let log = entry(&bundle, "postgres/server.log");
    assert_eq!(log.note, "skipped: low disk space");
    // Items are capped to an eighth of what was free: the kernel log keeps its newest part.
    let dmesg = entry(&bundle, "kernel/dmesg.txt");
    assert!(dmesg.bytes.unwrap() <= 200 * 1024 / 8, "{dmesg:?}");
    assert!(has(&bundle, SourceKind::KernelLog));
    assert!(has(&bundle, SourceKind::Meminfo));
    every_entry_accounted_for(&bundle);
}

#[test]
fn on_a_full_disk() {
    if !can_run("the full-disk run", false) {
        return;
    }
    let (bundle, stderr, _) = collect_on_tmpfs("48k");
    let manifest = bundle.manifest.as_ref().unwrap();
    // Free space is checked before every item: those that find no room are skipped, those
    // that fill the disk while writing are removed; each says so.
    let not_kept: Vec<_> = manifest
        .files
        .iter()
        .filter(|f| f.note.starts_with("not kept: ") || f.note.starts_with("skipped: "))
        .collect();
    assert!(!not_kept.is_empty(), "{stderr}");
    for f in &not_kept {
        assert_eq!(f.bytes, Some(0), "{f:?}");
        assert!(!bundle.sources.iter().any(|s| s.path == f.path), "{f:?}");
        assert!(
            f.note.contains("no space left on device")
                || f.note.contains("no room for it")
                || f.note.contains("low disk space"),
            "{f:?}"
        );
    }
    // The clock readings come first and are the last dropped to make room: they make it.
    assert!(has(&bundle, SourceKind::Uptime), "{stderr}");
    assert!(has(&bundle, SourceKind::Date), "{stderr}");
    every_entry_accounted_for(&bundle);
}

#[test]
fn a_dry_run_lists_what_it_would_collect_and_writes_nothing() {
    let scratch = Scratch::new();
    let out = scratch.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let run = Command::new("sh")
        .arg(scratch.script())
        .args(["--dry-run", "-h", "/nonexistent", "-p", "5", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let listing = String::from_utf8(run.stdout).unwrap();
    for path in [
        "kernel/dmesg.txt",
        "memory/meminfo.txt",
        "postgres/pg_settings.txt",
        "postgres/pg_settings-postgres-C.txt",
        "postgres/server.log",
    ] {
        assert!(
            listing.lines().any(|l| l.starts_with(path)),
            "{path} not listed:\n{listing}"
        );
    }
    assert!(String::from_utf8_lossy(&run.stderr).contains("dry run: nothing collected"));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
}

#[test]
fn the_time_cap_skips_what_is_left_and_still_writes_a_bundle() {
    // A fast host collects everything within the cap's one second, so the kernel log's step is
    // made slow: a `dmesg` first on PATH that sleeps longer than the cap. Its step is cut to what
    // is left of the second, and every step after it finds the time up.
    let scratch = Scratch::new();
    let bin = scratch.path().join("slow-bin");
    std::fs::create_dir(&bin).unwrap();
    let dmesg = bin.join("dmesg");
    std::fs::write(&dmesg, "#!/bin/sh\nexec sleep 5\n").unwrap();
    std::fs::set_permissions(&dmesg, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = Command::new("sh");
    c.arg(scratch.script())
        .arg("-o")
        .arg(scratch.path())
        .args(["-h", "/nonexistent", "-p", "5", "--max-time", "1"])
        .env("PATH", path);
    let (bundle, _) = collect(c);
    let skipped: Vec<&ManifestFile> = bundle
        .manifest
        .as_ref()
        .unwrap()
        .files
        .iter()
        .filter(|f| f.note == "skipped: the collector's time cap (--max-time 1 s) was reached")
        .collect();
    assert!(!skipped.is_empty());
    assert!(has(&bundle, SourceKind::Uptime));
    every_entry_accounted_for(&bundle);
}

#[test]
fn read_from_stdin_it_writes_the_archive_to_stdout() {
    // As `kubectl exec -i POD -- sh -s -- -o - < pgmortem-collect.sh > bundle.tar.gz` runs it:
    // no step may read the rest of the script from stdin.
    let scratch = Scratch::new();
    let archive = scratch.path().join("bundle.tar.gz");
    let run = Command::new("sh")
        .args(["-s", "--", "-o", "-", "-h", "/nonexistent", "-p", "5"])
        .env("TMPDIR", scratch.path())
        .stdin(std::fs::File::open(scratch.script()).unwrap())
        .stdout(std::fs::File::create(&archive).unwrap())
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    assert!(stderr.contains("writing the archive to stdout"), "{stderr}");
    let bundle = open(&archive, &OpenOptions::default()).unwrap();
    assert!(has(&bundle, SourceKind::Meminfo));
    // The last step of the script ran: the manifest is whole.
    assert!(
        bundle
            .manifest
            .as_ref()
            .unwrap()
            .file("perf/kptr_restrict.txt")
            .is_some()
    );
    // Nothing is left behind in TMPDIR.
    let left: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "collect.sh" && n != "bundle.tar.gz")
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn without_dmesg_or_the_journal_the_kernel_lines_of_the_syslog_files() {
    if !can_run("the kern.log fallback run", true) {
        return;
    }
    let _serial = DMESG_SYSCTL.lock().unwrap_or_else(|e| e.into_inner());
    let scratch = Scratch::new();
    // A /var/log of our own (a private mount namespace): kern.log written as rsyslog writes
    // it, from this machine's kernel log read as root, and one line of another program that
    // must not be taken. (The file is made here; the kernel lines are real.)
    let var_log = scratch.path().join("var-log");
    std::fs::create_dir(&var_log).unwrap();
    let dmesg = Command::new("dmesg").output().unwrap();
    assert!(dmesg.status.success());
    let mut kern = String::from("Nov 24 11:30:00 dbhost sshd[812]: Accepted publickey for admin\n");
    for line in String::from_utf8_lossy(&dmesg.stdout)
        .lines()
        .rev()
        .take(50)
    {
        kern.push_str(&format!("Nov 24 11:30:01 dbhost kernel: {line}\n"));
    }
    std::fs::write(var_log.join("kern.log"), &kern).unwrap();
    std::fs::set_permissions(
        var_log.join("kern.log"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::write(var_log.join("messages"), "unreadable\n").unwrap();
    std::fs::set_permissions(
        var_log.join("messages"),
        std::fs::Permissions::from_mode(0o600),
    )
    .unwrap();
    let program = r#"mount --bind "$1" /var/log || exit 1
exec runuser -u "$2" -- sh "$3" -o "$4" -h /nonexistent -p 5"#;
    let mut c = Command::new("unshare");
    c.args(["-m", "sh", "-c", program, "sh"])
        .arg(&var_log)
        .arg(USER)
        .arg(scratch.script())
        .arg(scratch.path());
    let (bundle, _) = {
        let _restrict = DmesgRestrict::set("1");
        collect(c)
    };
    assert_ne!(entry(&bundle, "kernel/dmesg.txt").status, Some(0));
    let kern_log = bundle
        .sources
        .iter()
        .find(|s| s.path == "kernel/kern.log")
        .expect("kernel/kern.log");
    assert_eq!(kern_log.kind, SourceKind::KernelLog);
    let text = String::from_utf8_lossy(&kern_log.bytes);
    assert_eq!(text.lines().count(), 50, "{text}");
    assert!(!text.contains("sshd"), "{text}");
    // The first readable file with kernel lines is taken; the others are not tried.
    assert!(
        bundle
            .manifest
            .as_ref()
            .unwrap()
            .file("kernel/messages.txt")
            .is_none()
    );
    every_entry_accounted_for(&bundle);
}
