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
