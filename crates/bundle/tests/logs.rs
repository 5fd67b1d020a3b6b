//! Logs are read whole, as streams: small ones from memory, bigger ones from their own file (a
//! directory) or from a temporary copy (an archive, a compressed file); a cap on logs is an
//! option, and a log cut by it says so. Sizes here are made small with the options.

use std::io::{Read, Write};
use std::path::Path;

use pgmortem_bundle::{Bundle, OpenOptions, Source, SourceKind, open};

/// A real PostgreSQL 15 log (fixtures/formats/pglog), repeated `times`.
fn pg_log(times: usize) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/formats/pglog/pg15-backend-sigkill.log");
    std::fs::read(path).unwrap().repeat(times)
}

const MEMINFO: &[u8] = b"MemTotal:       24684092 kB\nMemFree:        18423292 kB\n";

fn read_all(source: &Source) -> Vec<u8> {
    let mut bytes = Vec::new();
    source.reader().unwrap().read_to_end(&mut bytes).unwrap();
    assert_eq!(bytes.len() as u64, source.size(), "{}", source.path);
    bytes
}

fn source<'a>(bundle: &'a Bundle, path: &str) -> &'a Source {
    bundle
        .sources
        .iter()
        .find(|s| s.path == path)
        .unwrap_or_else(|| panic!("{path} not in {:?}", bundle.sources))
}

/// Small files in memory: 1 KiB.
fn small_memory() -> OpenOptions {
    OpenOptions {
        memory_file_bytes: 1024,
        ..OpenOptions::default()
    }
}

fn tar_gz(files: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (path, data) in files {
        let mut h = tar::Header::new_gnu();
        h.set_path(path).unwrap();
        h.set_size(data.len() as u64);
        h.set_mode(0o600);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&b.into_inner().unwrap()).unwrap();
    e.finish().unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn a_big_log_in_a_directory_stays_in_its_file_and_reads_whole() {
    let log = pg_log(20);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("postgresql.log"), &log).unwrap();
    std::fs::write(dir.path().join("meminfo"), MEMINFO).unwrap();
    let bundle = open(dir.path(), &small_memory()).unwrap();
    let s = source(&bundle, "postgresql.log");
    assert_eq!(s.kind, SourceKind::PostgresLog);
    assert!(!s.in_memory() && s.bytes.is_empty());
    assert_eq!(s.size(), log.len() as u64);
    assert_eq!(read_all(s), log);
    assert!(s.note.is_none(), "{:?}", s.note);
    // Every other kind is held in memory as before.
    let m = source(&bundle, "meminfo");
    assert!(m.in_memory());
    assert_eq!(m.bytes, MEMINFO);
}

#[test]
fn a_big_log_in_an_archive_is_spooled_once_and_reads_whole() {
    let log = pg_log(20);
    let archive = tar_gz(&[
        ("b/postgres/server.log", &log),
        ("b/memory/meminfo.txt", MEMINFO),
        ("b/postgres/postgresql.log.1.gz", &gzip(&log)),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.tar.gz");
    std::fs::write(&path, archive).unwrap();
    let bundle = open(&path, &small_memory()).unwrap();
    assert!(bundle.skipped.is_empty(), "{:?}", bundle.skipped);
    for name in ["postgres/server.log", "postgres/postgresql.log.1"] {
        let s = source(&bundle, name);
        assert_eq!(s.kind, SourceKind::PostgresLog, "{name}");
        assert!(!s.in_memory(), "{name}");
        assert_eq!(read_all(s), log, "{name}");
        // Read twice: the temporary copy stays while the bundle is open.
        assert_eq!(read_all(s), log, "{name}");
    }
    assert_eq!(source(&bundle, "memory/meminfo.txt").bytes, MEMINFO);
    // A clone reads the same copy.
    let copy = source(&bundle, "postgres/server.log").clone();
    drop(bundle);
    assert_eq!(read_all(&copy), log);
}

#[test]
fn a_small_log_is_held_in_memory_and_read_the_same_way() {
    let log = pg_log(1);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("postgresql.log"), &log).unwrap();
    let bundle = open(dir.path(), &OpenOptions::default()).unwrap();
    let s = &bundle.sources[0];
    assert!(s.in_memory());
    assert_eq!(s.bytes, log);
    assert_eq!(read_all(s), log);
}

#[test]
fn no_log_is_cut_unless_a_cap_is_asked_for() {
    // Bigger than the per-file limit of the kinds held in memory: logs do not have one.
    let log = pg_log(20);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("postgresql.log"), &log).unwrap();
    let options = OpenOptions {
        max_file_bytes: 1000,
        ..small_memory()
    };
    let bundle = open(dir.path(), &options).unwrap();
    assert_eq!(read_all(&bundle.sources[0]), log);
    assert!(bundle.sources[0].note.is_none());
}

#[test]
fn a_cap_on_logs_keeps_their_end_from_a_line_start_and_says_so() {
    let log = pg_log(20);
    let cap = 5000u64;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("postgresql.log"), &log).unwrap();
    std::fs::write(dir.path().join("small.log"), pg_log(1)).unwrap();
    let archive = dir.path().join("b.tar.gz");
    std::fs::write(
        &archive,
        tar_gz(&[("postgresql.log", &log), ("small.log", &pg_log(1))]),
    )
    .unwrap();
    for memory_file_bytes in [1024, 1 << 20] {
        for path in [dir.path(), archive.as_path()] {
            let options = OpenOptions {
                max_log_bytes: Some(cap),
                memory_file_bytes,
                ..OpenOptions::default()
            };
            let bundle = open(path, &options).unwrap();
            let s = source(&bundle, "postgresql.log");
            let kept = read_all(s);
            assert!(kept.len() as u64 <= cap && log.ends_with(&kept));
            assert!(kept.starts_with(b"2026-11-21 "), "starts at a line");
            let note = s.note.as_deref().unwrap();
            assert!(
                note.starts_with(&format!(
                    "only its last {:.1} KiB of {:.1} KiB were read: the 5000-byte cap on logs",
                    kept.len() as f64 / 1024.0,
                    log.len() as f64 / 1024.0
                )),
                "{note}"
            );
            // A log under the cap is whole and says nothing.
            let small = source(&bundle, "small.log");
            assert_eq!(read_all(small), pg_log(1));
            assert!(small.note.is_none());
        }
    }
}

#[test]
fn temporary_files_have_a_limit_and_what_is_past_it_is_listed() {
    let log = pg_log(20);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.tar.gz");
    std::fs::write(
        &path,
        tar_gz(&[("b/a.log", &log), ("b/b.log", &log), ("b/meminfo", MEMINFO)]),
    )
    .unwrap();
    let options = OpenOptions {
        max_spool_bytes: log.len() as u64 + 10,
        ..small_memory()
    };
    let bundle = open(&path, &options).unwrap();
    assert_eq!(read_all(source(&bundle, "a.log")), log);
    assert_eq!(source(&bundle, "meminfo").bytes, MEMINFO);
    assert_eq!(bundle.skipped.len(), 1, "{:?}", bundle.skipped);
    assert_eq!(bundle.skipped[0].path, "b.log");
    assert!(
        bundle.skipped[0]
            .reason
            .contains("temporary files over their"),
        "{:?}",
        bundle.skipped
    );
}

#[test]
fn a_snapshot_too_big_for_memory_is_read_back_from_its_temporary_copy() {
    let mut meminfo = MEMINFO.to_vec();
    for i in 0..200 {
        meminfo.extend(format!("Field{i}:       {i} kB\n").bytes());
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.tar.gz");
    std::fs::write(&path, tar_gz(&[("memory/meminfo.txt", &meminfo)])).unwrap();
    let bundle = open(&path, &small_memory()).unwrap();
    let s = &bundle.sources[0];
    assert_eq!(s.kind, SourceKind::Meminfo);
    assert!(s.in_memory());
    assert_eq!(s.bytes, meminfo);
}

#[test]
fn a_log_kept_from_inside_a_long_statement_is_recognised_from_its_end() {
    // `tail -c` of a log cut inside a long multi-line statement: its first 16 KiB are the
    // statement's continuation lines (made here), the rest a real PostgreSQL 15 log.
    let mut log: Vec<u8> = (0..2000)
        .flat_map(|i| format!("           AND t.col_{i} = {i}\n").into_bytes())
        .collect();
    assert!(log.len() > 16 * 1024);
    log.extend(pg_log(8));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cut-tail.txt"), &log).unwrap();
    let bundle = open(dir.path(), &OpenOptions::default()).unwrap();
    let s = source(&bundle, "cut-tail.txt");
    assert_eq!(s.kind, SourceKind::PostgresLog);
    let note = s.note.as_deref().unwrap_or_default();
    assert!(
        note.contains("read as no kind (the inside of a long record?); recognised from its end"),
        "{note}"
    );
    // Without a log line at its end it stays unknown.
    std::fs::write(dir.path().join("cut-tail.txt"), &log[..20_000]).unwrap();
    let bundle = open(dir.path(), &OpenOptions::default()).unwrap();
    assert_eq!(source(&bundle, "cut-tail.txt").kind, SourceKind::Unknown);
}

#[test]
fn each_server_log_file_says_what_it_is_to_the_server_as_the_manifest_lists_it() {
    // Real capture (fixtures/incidents/pg15-crash-in-earlier-log): the current file, the one
    // before it, and the postmaster's standard error (the `pg_ctl -l` file).
    use pgmortem_bundle::ServerLogRole;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/incidents/pg15-crash-in-earlier-log");
    let archive = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap();
    let bundle = open(&archive, &OpenOptions::default()).unwrap();
    let role = |path: &str| {
        let s = source(&bundle, path);
        assert_eq!(s.kind, SourceKind::PostgresLog, "{path}");
        s.server_log.as_ref().map(|l| (l.role, l.root.as_str()))
    };
    assert_eq!(
        role("postgres/server.log"),
        Some((ServerLogRole::Current, ""))
    );
    assert_eq!(
        role("postgres/log/postgresql-2026-12-07_110346.log"),
        Some((ServerLogRole::Earlier, ""))
    );
    assert_eq!(
        role("postgres/stderr.log"),
        Some((ServerLogRole::Stderr, ""))
    );
    assert!(
        bundle
            .sources
            .iter()
            .filter(|s| s.kind != SourceKind::PostgresLog)
            .all(|s| s.server_log.is_none())
    );
}
