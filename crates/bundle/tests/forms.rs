//! One real bundle (fixtures/incidents/pg15-memcg-oom-work-mem) in every archive form pgmortem
//! reads (fixtures/formats/bundle/, made by fixtures/record/bundle-forms.sh with the real tools),
//! and real logs compressed on their own: each form gives the same files, kinds and bytes as
//! the collector's .tar.gz.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use pgmortem_bundle::{Bundle, OpenOptions, SourceKind, open};

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(rel)
}

const TGZ: &str = "incidents/pg15-memcg-oom-work-mem/pgmortem-dbhost-20261124T053616Z.tar.gz";

/// A source as its path, kind and the bytes its reader gives.
type Read = (String, SourceKind, Vec<u8>);

/// Every source read, and the skipped entries as (path, reason).
fn contents(bundle: &Bundle) -> (Vec<Read>, Vec<(String, String)>) {
    let sources = bundle
        .sources
        .iter()
        .map(|s| {
            let mut bytes = Vec::new();
            s.reader().unwrap().read_to_end(&mut bytes).unwrap();
            (s.path.clone(), s.kind, bytes)
        })
        .collect();
    let skipped = bundle
        .skipped
        .iter()
        .map(|s| (s.path.clone(), s.reason.clone()))
        .collect();
    (sources, skipped)
}

fn opened(rel: &str, options: &OpenOptions) -> Bundle {
    open(&fixture(rel), options).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn every_tar_compression_gives_the_bundle_the_tar_gz_gives() {
    // Small files in memory, and every file spooled to a temporary file.
    for options in [
        OpenOptions::default(),
        // (A manifest must be held in memory to be read: none is, here.)
        OpenOptions {
            memory_file_bytes: 0,
            ..OpenOptions::default()
        },
    ] {
        let tgz = opened(TGZ, &options);
        let expected = contents(&tgz);
        assert!(expected.0.len() > 80, "{}", expected.0.len());
        assert!(
            expected
                .0
                .iter()
                .any(|(p, k, _)| p == "postgres/server.log" && *k == SourceKind::PostgresLog)
        );
        for form in [
            "formats/bundle/pg15-memcg-oom-work-mem.tar.xz",
            "formats/bundle/pg15-memcg-oom-work-mem.tar.bz2",
        ] {
            let bundle = opened(form, &options);
            assert_eq!(bundle.manifest.is_some(), tgz.manifest.is_some(), "{form}");
            let got = contents(&bundle);
            assert_eq!(got.1, expected.1, "{form}");
            for (a, b) in got.0.iter().zip(&expected.0) {
                assert!(a == b, "{form}: {} {:?} / {} {:?}", a.0, a.1, b.0, b.1);
            }
            assert_eq!(got.0.len(), expected.0.len(), "{form}");
        }
    }
}

#[test]
fn a_log_compressed_on_its_own_is_read_under_its_name() {
    for (rel, plain, name, kind) in [
        (
            "formats/bundle/pg15-events.log.xz",
            "formats/pglog/pg15-events.log",
            "pg15-events.log",
            SourceKind::PostgresLog,
        ),
        (
            "formats/bundle/local-dmesg-T.txt.bz2",
            "formats/kernel/local-dmesg-T.txt",
            "local-dmesg-T.txt",
            SourceKind::KernelLog,
        ),
    ] {
        let bundle = opened(rel, &OpenOptions::default());
        let (sources, skipped) = contents(&bundle);
        assert_eq!(skipped, []);
        assert_eq!(sources.len(), 1, "{rel}");
        let (path, got_kind, bytes) = &sources[0];
        assert_eq!((path.as_str(), *got_kind), (name, kind));
        assert!(*bytes == std::fs::read(fixture(plain)).unwrap(), "{rel}");
    }
}

#[test]
fn a_compressed_log_inside_a_directory_is_decompressed() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("formats/bundle/pg15-events.log.xz"),
        dir.path().join("postgresql-15-main.log.1.xz"),
    )
    .unwrap();
    std::fs::copy(
        fixture("formats/bundle/local-dmesg-T.txt.bz2"),
        dir.path().join("kern.log.2.bz2"),
    )
    .unwrap();
    let bundle = open(dir.path(), &OpenOptions::default()).unwrap();
    let kinds: Vec<_> = bundle
        .sources
        .iter()
        .map(|s| (s.path.as_str(), s.kind, s.note.as_deref()))
        .collect();
    assert_eq!(
        kinds,
        [
            (
                "kern.log.2",
                SourceKind::KernelLog,
                Some("decompressed from bzip2")
            ),
            (
                "postgresql-15-main.log.1",
                SourceKind::PostgresLog,
                Some("decompressed from xz")
            ),
        ]
    );
}

/// The tar.gz's sources as (path, kind, bytes), each path under `prefix`.
fn tgz_under(prefix: &str) -> Vec<Read> {
    contents(&opened(TGZ, &OpenOptions::default()))
        .0
        .into_iter()
        .map(|(p, k, b)| (format!("{prefix}{p}"), k, b))
        .collect()
}

/// The tar.gz's skipped entries (what its manifest lists but the collector could not get),
/// each path under `prefix`.
fn tgz_skipped_under(prefix: &str) -> Vec<(String, String)> {
    contents(&opened(TGZ, &OpenOptions::default()))
        .1
        .into_iter()
        .map(|(p, r)| (format!("{prefix}{p}"), r))
        .collect()
}

#[test]
fn a_plain_tar_and_a_zip_give_the_bundle_the_tar_gz_gives() {
    for options in [
        OpenOptions::default(),
        OpenOptions {
            memory_file_bytes: 0,
            ..OpenOptions::default()
        },
    ] {
        let tgz = opened(TGZ, &options);
        let expected = contents(&tgz);
        for form in [
            "formats/bundle/pg15-memcg-oom-work-mem.tar",
            "formats/bundle/pg15-memcg-oom-work-mem.zip",
        ] {
            let bundle = opened(form, &options);
            assert_eq!(bundle.manifest.is_some(), tgz.manifest.is_some(), "{form}");
            assert!(contents(&bundle) == expected, "{form}");
        }
    }
}

#[test]
fn an_archive_inside_an_archive_keeps_its_path_and_its_own_root() {
    let bundle = opened(
        "formats/bundle/nested-tar-xz.tar.gz",
        &OpenOptions::default(),
    );
    assert!(bundle.manifest.is_some());
    let (sources, skipped) = contents(&bundle);
    assert_eq!(
        skipped,
        tgz_skipped_under("pg15-memcg-oom-work-mem.tar.xz/")
    );
    assert!(sources == tgz_under("pg15-memcg-oom-work-mem.tar.xz/"));
}

#[test]
fn a_zip_holding_the_bundle_beside_its_notes_reads_the_notes_as_unknown() {
    let name = "pgmortem-dbhost-20261124T053616Z.tar.gz/";
    let bundle = opened(
        "formats/bundle/incident-attachment.zip",
        &OpenOptions::default(),
    );
    assert!(bundle.manifest.is_some());
    let (sources, skipped) = contents(&bundle);
    assert_eq!(skipped, tgz_skipped_under(name));
    let notes: Vec<_> = sources
        .iter()
        .filter(|(p, ..)| !p.starts_with(name))
        .map(|(p, k, _)| (p.as_str(), *k))
        .collect();
    assert_eq!(
        notes,
        [
            ("README.md", SourceKind::Unknown),
            ("expected.json", SourceKind::Unknown)
        ]
    );
    let inner: Vec<Read> = sources
        .into_iter()
        .filter(|(p, ..)| p.starts_with(name))
        .collect();
    assert!(inner == tgz_under(name));
}

#[test]
fn the_incident_directory_reads_its_archive_as_the_archive_alone_is_read() {
    let name = "pgmortem-dbhost-20261124T053616Z.tar.gz/";
    let bundle = opened("incidents/pg15-memcg-oom-work-mem", &OpenOptions::default());
    let (sources, skipped) = contents(&bundle);
    assert_eq!(skipped, tgz_skipped_under(name));
    let inner: Vec<Read> = sources
        .into_iter()
        .filter(|(p, ..)| p.starts_with(name))
        .collect();
    assert!(inner == tgz_under(name));
    // Kinds came from the collector's manifest, relative to the archive's own root.
    let server_log = bundle
        .sources
        .iter()
        .find(|s| s.path == format!("{name}postgres/server.log"))
        .unwrap();
    assert_eq!(
        server_log.recognized_by,
        pgmortem_bundle::RecognizedBy::Manifest
    );
}

#[test]
fn formats_that_cannot_be_read_are_an_error_naming_them_and_what_to_do() {
    for (rel, says) in [
        (
            "pg15-memcg-oom-work-mem.7z",
            "7z archives cannot be read: extract it",
        ),
        (
            "pg15-memcg-oom-work-mem.tar.lz4",
            "lz4-compressed files cannot be read: decompress it (lz4 -d FILE)",
        ),
        (
            "pg15-memcg-oom-work-mem.tar.lz",
            "lzip-compressed files cannot be read: decompress it (lzip -d FILE)",
        ),
        (
            "pg15-memcg-oom-work-mem.tar.Z",
            "Unix compress (.Z) files cannot be read",
        ),
        (
            "edge-encrypted.zip",
            "every file in this zip archive is encrypted: decrypt it",
        ),
        ("edge-truncated.zip", "not a zip archive that can be read"),
        ("edge-corrupt.tar.xz", "corrupt xz data"),
    ] {
        let path = fixture(&format!("formats/bundle/{rel}"));
        let err = open(&path, &OpenOptions::default())
            .unwrap_err()
            .to_string();
        assert!(err.contains(rel) && err.contains(says), "{err}");
    }
}

#[test]
fn inside_a_directory_they_are_listed_as_not_opened() {
    let dir = tempfile::tempdir().unwrap();
    for rel in [
        "pg15-memcg-oom-work-mem.7z",
        "edge-encrypted.zip",
        "pg15-events.log.xz",
    ] {
        std::fs::copy(
            fixture(&format!("formats/bundle/{rel}")),
            dir.path().join(rel),
        )
        .unwrap();
    }
    let bundle = open(dir.path(), &OpenOptions::default()).unwrap();
    let skipped: Vec<_> = bundle
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.archive, &s.reason[..20]))
        .collect();
    let not_opened = Some(pgmortem_bundle::ArchiveTrouble::NotOpened);
    assert_eq!(
        skipped,
        [
            ("edge-encrypted.zip", not_opened, "every file in this z"),
            (
                "pg15-memcg-oom-work-mem.7z",
                not_opened,
                "7z archives cannot b"
            ),
        ]
    );
    assert_eq!(bundle.sources.len(), 1);
    assert_eq!(bundle.sources[0].kind, SourceKind::PostgresLog);
}

#[test]
fn a_truncated_archive_keeps_what_came_before_the_cut_and_says_so() {
    let bundle = opened(
        "formats/bundle/edge-truncated.tar.xz",
        &OpenOptions::default(),
    );
    assert!(!bundle.sources.is_empty());
    let last = bundle
        .skipped
        .iter()
        .find(|s| s.path == "edge-truncated.tar.xz")
        .expect("the archive itself is listed");
    assert_eq!(
        last.archive,
        Some(pgmortem_bundle::ArchiveTrouble::NotReadWhole)
    );
    // Every file read is byte for byte the one in the whole archive.
    let whole = tgz_under("");
    for (path, _, bytes) in contents(&bundle).0 {
        assert!(
            whole.iter().any(|(p, _, b)| *p == path && *b == bytes),
            "{path}"
        );
    }
}

#[test]
fn several_inputs_are_one_bundle_with_same_names_told_apart() {
    let log = fixture("formats/pglog/pg15-events.log");
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("pg15-events.log");
    std::fs::write(&other, std::fs::read(&log).unwrap()).unwrap();
    let paths = [
        fixture("formats/bundle/local-dmesg-T.txt.bz2"),
        log.clone(),
        other.clone(),
        fixture("formats/bundle/pg15-memcg-oom-work-mem.zip"),
    ];
    let bundle = pgmortem_bundle::open_paths(&paths, &OpenOptions::default()).unwrap();
    let logs: Vec<_> = bundle
        .sources
        .iter()
        .filter(|s| s.kind == SourceKind::PostgresLog && !s.path.contains(".zip/"))
        .map(|s| (s.path.clone(), s.note.clone().unwrap_or_default()))
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    for (path, note) in &logs {
        assert!(path.ends_with("/pg15-events.log"), "{path}");
        assert!(note.starts_with("given as "), "{note}");
    }
    assert!(
        bundle
            .sources
            .iter()
            .any(|s| s.path == "local-dmesg-T.txt" && s.kind == SourceKind::KernelLog)
    );
    assert!(bundle.manifest.is_some());
    let zipped = tgz_under("pg15-memcg-oom-work-mem.zip/");
    let (sources, _) = contents(&bundle);
    for z in &zipped {
        assert!(sources.contains(z), "{}", z.0);
    }
    // One path is `open`.
    let one =
        pgmortem_bundle::open_paths(std::slice::from_ref(&log), &OpenOptions::default()).unwrap();
    assert_eq!(
        contents(&one),
        contents(&open(&log, &OpenOptions::default()).unwrap())
    );
}
