//! Bundles that are wrong in every way a real one can be: files the manifest lists but the
//! bundle lacks, empty files, a file of another kind under a known name, binary garbage, a
//! manifest that lies about sizes and kinds, a manifest that is not one. Each problem is
//! listed with its reason; nothing panics.

use std::fs;
use std::path::Path;

use pgmortem_bundle::{Bundle, OpenOptions, RecognizedBy, SourceKind, open, snapshot_stats};

fn repo() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn real(rel: &str) -> Vec<u8> {
    fs::read(repo().join("fixtures").join(rel)).unwrap()
}

/// Bytes that look like nothing: a fixed xorshift stream with NULs.
fn garbage(len: usize) -> Vec<u8> {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

const LYING_MANIFEST: &str = r#"{
  "format": "pgmortem.bundle",
  "format_version": 1,
  "files": [
    {"path": "memory/meminfo.txt", "kind": "meminfo", "command": "cat /proc/meminfo", "status": 0, "bytes": 1466},
    {"path": "memory/vmstat.txt", "kind": "vmstat", "command": "cat /proc/vmstat", "status": 0, "bytes": 999999},
    {"path": "memory/free.txt", "kind": "free", "command": "free -k", "status": 0, "bytes": 0},
    {"path": "processes/1234/status", "kind": "proc_status", "command": "cat /proc/1234/status", "status": 0},
    {"path": "postgres/pg_settings.txt", "kind": "pg_settings", "command": "psql -c ...", "status": 0, "bytes": 14495},
    {"path": "kernel/dmesg.txt", "kind": "kernel_log", "command": "dmesg", "status": 1, "bytes": 0, "note": "dmesg: read kernel buffer failed: Operation not permitted"},
    {"path": "postgres/server.log", "kind": "no_such_kind", "command": "tail", "status": 0}
  ]
}"#;

/// A bundle directory with one of each problem.
fn bad_bundle(dir: &Path) {
    let w = |rel: &str, bytes: &[u8]| {
        let p = dir.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    };
    w("manifest.json", LYING_MANIFEST.as_bytes());
    // The manifest says meminfo; the file is a real kernel log.
    w(
        "memory/meminfo.txt",
        &real("incidents/pg15-memcg-oom-sort/dmesg.txt"),
    );
    // A real vmstat, far shorter than the manifest says.
    w(
        "memory/vmstat.txt",
        &real("formats/system/vmstat/vmstat.txt"),
    );
    // Empty.
    w("memory/free.txt", b"");
    // Binary garbage under a /proc status name.
    w("processes/1234/status", &garbage(4096));
    // A kind name the manifest made up, on a real server log.
    w(
        "postgres/server.log",
        &real("incidents/pg15-memcg-oom-sort/postgresql.log"),
    );
    // Not in the manifest: a real meminfo under a name that says nothing.
    w(
        "extra/notes.txt",
        &real("formats/system/meminfo/meminfo.txt"),
    );
}

fn source<'a>(b: &'a Bundle, path: &str) -> &'a pgmortem_bundle::Source {
    b.sources
        .iter()
        .find(|s| s.path == path)
        .unwrap_or_else(|| panic!("no {path}"))
}

fn reason<'a>(b: &'a Bundle, path: &str) -> &'a str {
    &b.skipped
        .iter()
        .find(|s| s.path == path)
        .unwrap_or_else(|| panic!("{path} not listed as skipped: {:?}", b.skipped))
        .reason
}

#[test]
fn every_problem_is_named() {
    let dir = tempfile::tempdir().unwrap();
    bad_bundle(dir.path());
    let b = open(dir.path(), &OpenOptions::default()).unwrap();
    assert!(b.manifest.is_some());

    let meminfo = source(&b, "memory/meminfo.txt");
    assert_eq!(meminfo.kind, SourceKind::KernelLog);
    assert_eq!(meminfo.recognized_by, RecognizedBy::Content);
    let expected = format!(
        "manifest.json says meminfo, but the content reads as kernel_log: read as kernel_log; \
         manifest.json says 1466 bytes, the file has {}: cut or changed since",
        meminfo.bytes.len()
    );
    assert_eq!(meminfo.note.as_deref(), Some(expected.as_str()));

    let vmstat = source(&b, "memory/vmstat.txt");
    assert_eq!(vmstat.kind, SourceKind::Vmstat);
    assert!(
        vmstat
            .note
            .as_deref()
            .unwrap()
            .starts_with("manifest.json says 999999 bytes, the file has "),
        "{:?}",
        vmstat.note
    );

    let free = source(&b, "memory/free.txt");
    assert_eq!(free.kind, SourceKind::Free);
    assert_eq!(free.note.as_deref(), Some("empty file"));

    let status = source(&b, "processes/1234/status");
    assert_eq!(status.kind, SourceKind::Unknown);
    let note = status.note.as_deref().unwrap();
    assert!(note.starts_with("binary data, not text: "), "{note}");
    assert!(note.contains("manifest.json says proc_status"), "{note}");

    // An unknown kind name in the manifest leaves the kind to the path (the collector's
    // layout names postgres/server.log) and content.
    let log = source(&b, "postgres/server.log");
    assert_eq!(
        (log.kind, log.recognized_by),
        (SourceKind::PostgresLog, RecognizedBy::Path)
    );

    let extra = source(&b, "extra/notes.txt");
    assert_eq!(
        (extra.kind, extra.recognized_by, extra.note.as_deref()),
        (SourceKind::Meminfo, RecognizedBy::Content, None)
    );

    assert_eq!(
        reason(&b, "postgres/pg_settings.txt"),
        "not in the bundle: manifest.json lists it with 14495 bytes"
    );
    assert_eq!(
        reason(&b, "kernel/dmesg.txt"),
        "not in the bundle: `dmesg` exited with status 1 (dmesg: read kernel buffer failed: \
         Operation not permitted)"
    );
    assert_eq!(b.skipped.len(), 2, "{:?}", b.skipped);
}

#[test]
fn a_manifest_that_is_not_one_is_said_so_and_ignored() {
    for (text, why) in [
        (
            &b"{\"format\": \"pgmortem.bundle\", \"files\": [ {\"path\": "[..],
            "not JSON: ",
        ),
        (
            &br#"{"format": "something-else", "files": []}"#[..],
            "its format is \"something-else\"",
        ),
        (&garbage(300)[..], "binary data"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("manifest.json"), text).unwrap();
        fs::write(
            dir.path().join("meminfo"),
            real("formats/system/meminfo/meminfo.txt"),
        )
        .unwrap();
        let b = open(dir.path(), &OpenOptions::default()).unwrap();
        assert!(b.manifest.is_none());
        let m = source(&b, "manifest.json");
        let note = m.note.as_deref().unwrap();
        assert!(note.contains(why), "{note}");
        assert_eq!(source(&b, "meminfo").kind, SourceKind::Meminfo);
        assert!(b.skipped.is_empty());
    }
}

#[test]
fn garbage_under_every_known_name_never_panics() {
    let names = [
        "manifest.json",
        "proc/meminfo",
        "proc/vmstat",
        "proc/1/status",
        "proc/1/smaps_rollup",
        "uptime",
        "memory.stat",
        "memory.events",
        "memory.oom_control",
        "memory.max",
        "memory.limit_in_bytes",
        "postgresql.conf",
        "pg_settings.csv",
        "dmesg.txt",
        "postgresql.log",
    ];
    // Garbage, text-like garbage (bytes 0x20..0x7f with newlines), CRLF, one giant line.
    let text_like: Vec<u8> = garbage(20_000)
        .into_iter()
        .map(|b| if b % 17 == 0 { b'\n' } else { 0x20 + b % 0x5f })
        .collect();
    let crlf = b"MemTotal: 1 kB\r\nVmRSS:\t1 kB\r\nname|setting\r\n".repeat(100);
    let giant = vec![b'x'; 3 << 20];
    for content in [garbage(10_000), text_like, crlf, giant, Vec::new()] {
        let dir = tempfile::tempdir().unwrap();
        for name in names {
            let p = dir.path().join(name);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, &content).unwrap();
        }
        let b = open(dir.path(), &OpenOptions::default()).unwrap();
        assert_eq!(b.sources.len(), names.len());
        for s in &b.sources {
            // Every snapshot kind counts what it could not read.
            if let Some(stats) = snapshot_stats(s.kind, &s.bytes)
                && !s.bytes.is_empty()
                && stats.records == 0
            {
                assert!(stats.unrecognized_lines > 0, "{}: {stats:?}", s.path);
            }
        }
    }
}

#[cfg(unix)]
mod special_files {
    //! Bundle paths that are not plain files: a symlink to a device, to a FIFO nobody writes,
    //! to a directory; a pipe written while it is read (process substitution, /dev/stdin).

    use super::*;

    #[test]
    fn a_symlink_to_a_device_is_refused_without_reading_it() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("bundle.tar.gz");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        let e = open(&link, &OpenOptions::default()).unwrap_err();
        assert!(
            e.to_string().contains("neither a file nor a directory"),
            "{e}"
        );
    }

    #[test]
    fn a_fifo_nobody_writes_is_an_empty_file_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        let bundle = open(&link, &OpenOptions::default()).unwrap();
        assert_eq!(bundle.sources.len(), 1);
        assert_eq!(
            bundle.sources[0].note.as_deref(),
            Some(
                "a pipe that gave nothing (no writer had it open, or the writer wrote nothing); \
                 empty file"
            )
        );
    }

    #[test]
    fn a_pipe_written_while_read_is_read_whole() {
        // As `pgmortem analyze <(slow command)`: the path names a pipe whose writer is a
        // process that writes in pieces, pausing; the reader waits for data, never mistakes a
        // pause for the end.
        use std::os::fd::AsRawFd;
        let path = repo().join("fixtures/incidents/pg15-memcg-oom-sort/dmesg.txt");
        let mut child = std::process::Command::new("sh")
            .arg("-c")
            .arg("split -b 1000 --filter='cat; sleep 0.02' \"$0\"")
            .arg(&path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let out = child.stdout.take().unwrap();
        let pipe = format!("/proc/self/fd/{}", out.as_raw_fd());
        let bundle = open(Path::new(&pipe), &OpenOptions::default()).unwrap();
        child.wait().unwrap();
        drop(out);
        assert_eq!(bundle.sources.len(), 1);
        assert_eq!(bundle.sources[0].kind, SourceKind::KernelLog);
        assert_eq!(bundle.sources[0].bytes, fs::read(&path).unwrap());
    }

    #[test]
    fn a_symlink_to_a_bundle_directory_opens_it() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(repo().join("fixtures/incidents/pg15-memcg-oom-sort"), &link)
            .unwrap();
        let bundle = open(&link, &OpenOptions::default()).unwrap();
        assert!(
            bundle
                .sources
                .iter()
                .any(|s| s.kind == SourceKind::KernelLog)
        );
    }
}
