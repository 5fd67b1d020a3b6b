//! The known collectors' layout tables against real captures of those layouts: every bundle
//! pgmortem's collector made in fixtures/ is recognised as its layout and the table agrees with
//! the manifest on every file the manifest names; every sosreport in fixtures/incidents has
//! each file's kind and how it was recognised in a snapshot; what a collector writes about its
//! own run is never read as a PostgreSQL or kernel log, whatever it holds.

use std::path::{Path, PathBuf};

use pgmortem_bundle::{Layout, OpenOptions, RecognizedBy, SourceKind, open};
use serde::Serialize;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

/// The forms pgmortem reads that fixtures/formats/bundle holds the collector's bundles in (the
/// others there are edge cases and forms it cannot read).
const READABLE: &[&str] = &[".tar", ".tar.gz", ".tar.zst", ".tar.xz", ".tar.bz2", ".zip"];

/// Every bundle the collector made: fixtures/formats/bundle and each incident's archive.
fn collected_bundles() -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in [
        fixtures().join("formats/bundle"),
        fixtures().join("incidents"),
    ] {
        let mut stack = vec![dir];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(d).unwrap() {
                let p = e.unwrap().path();
                let name = p.file_name().unwrap().to_string_lossy().into_owned();
                if p.is_dir() {
                    stack.push(p);
                } else if name.starts_with("pgmortem-")
                    && (name.ends_with(".tar.gz") || name.ends_with(".tar.zst"))
                    || p.parent().is_some_and(|d| d.ends_with("formats/bundle"))
                        && name.starts_with("pg15-")
                        && READABLE.iter().any(|form| {
                            name.strip_suffix(form)
                                .is_some_and(|stem| !stem.contains('.'))
                        })
                {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    assert!(out.len() >= 20, "{out:?}");
    out
}

#[test]
fn the_collectors_table_agrees_with_its_manifests() {
    for path in collected_bundles() {
        let bundle = open(&path, &OpenOptions::default()).unwrap();
        let found = bundle.layout.as_ref().unwrap_or_else(|| panic!("{path:?}"));
        assert_eq!((found.layout, found.root.as_str()), (Layout::Pgmortem, ""));
        let manifest = bundle.manifest.as_ref().unwrap();
        for entry in &manifest.files {
            let Some(declared) = SourceKind::from_name(&entry.kind) else {
                continue;
            };
            if declared == SourceKind::Unknown {
                continue;
            }
            // An older collector's `reference` for a file the table reads (identity/uname.txt):
            // the reader takes the table's kind.
            if declared == SourceKind::Reference
                && found
                    .lookup(&entry.path)
                    .is_some_and(|(_, k)| k != SourceKind::Reference)
            {
                assert_eq!(
                    bundle
                        .sources
                        .iter()
                        .find(|s| s.path == entry.path)
                        .map(|s| s.kind),
                    found.lookup(&entry.path).map(|(_, k)| k),
                    "{}: {}",
                    path.display(),
                    entry.path
                );
                continue;
            }
            let table = found.lookup(&entry.path).map(|(_, k)| k);
            assert_eq!(
                table,
                Some(declared),
                "{}: {} (manifest: {})",
                path.display(),
                entry.path,
                entry.kind
            );
        }
        // Every file of the bundle is named by the table: none is left to its content.
        for s in &bundle.sources {
            assert!(
                found.lookup(&s.path).is_some(),
                "{}: {} is not in the collector's table",
                path.display(),
                s.path
            );
        }
    }
}

/// A sosreport's markers and, where sos keeps its own logs, files that read as a PostgreSQL
/// log and a kernel log (a real server log and a real dmesg).
fn sos_with_logs_in_its_own_files(dir: &Path) {
    let w = |p: &str, bytes: &[u8]| {
        let to = dir.join(p);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::write(to, bytes).unwrap();
    };
    let real = |p: &str| std::fs::read(fixtures().join(p)).unwrap();
    w("version.txt", b"sosreport: 4.0\n");
    w(
        "sos_commands/kernel/dmesg",
        &real("formats/kernel/local-dmesg-raw.txt"),
    );
    w(
        "sos_logs/sos.log",
        &real("formats/pglog/pg15-debian-checkpointer-sigkill.log"),
    );
    w(
        "sos_logs/ui.log",
        &real("formats/kernel/local-dmesg-raw.txt"),
    );
    w(
        "sos_reports/sos.txt",
        &real("formats/pglog/pg15-debian-checkpointer-sigkill.log"),
    );
    w(
        "var/log/postgresql/postgresql-15-main.log",
        &real("formats/pglog/pg15-debian-checkpointer-sigkill.log"),
    );
}

#[test]
fn a_collectors_own_logs_are_never_read_as_postgres_or_kernel_logs() {
    let dir = tempfile::tempdir().unwrap();
    sos_with_logs_in_its_own_files(dir.path());
    let bundle = open(dir.path(), &OpenOptions::default()).unwrap();
    assert_eq!(bundle.layout.as_ref().unwrap().layout, Layout::Sos);
    let kind = |p: &str| {
        let s = bundle.sources.iter().find(|s| s.path == p).unwrap();
        (s.kind, s.recognized_by)
    };
    for own in [
        "sos_logs/sos.log",
        "sos_logs/ui.log",
        "sos_reports/sos.txt",
        "version.txt",
    ] {
        assert_eq!(
            kind(own),
            (SourceKind::CollectorLog, RecognizedBy::Path),
            "{own}"
        );
    }
    assert_eq!(
        kind("var/log/postgresql/postgresql-15-main.log"),
        (SourceKind::PostgresLog, RecognizedBy::Path)
    );
    assert_eq!(
        kind("sos_commands/kernel/dmesg"),
        (SourceKind::KernelLog, RecognizedBy::Path)
    );
    // The same files outside a known layout are recognised by their content.
    let loose = tempfile::tempdir().unwrap();
    std::fs::write(
        loose.path().join("ui.log"),
        std::fs::read(dir.path().join("sos_logs/ui.log")).unwrap(),
    )
    .unwrap();
    let b = open(loose.path(), &OpenOptions::default()).unwrap();
    assert!(b.layout.is_none());
    assert_eq!(b.sources[0].kind, SourceKind::KernelLog);
}

#[test]
fn a_sosreport_journal_holding_postgresql_lines_is_read_by_both_readers() {
    // sos's logs plugin saves `journalctl --no-pager`: on a host where PostgreSQL logs to the
    // journal, the kernel's lines and the server's are in one file (a real journal's).
    let dir = tempfile::tempdir().unwrap();
    sos_with_logs_in_its_own_files(dir.path());
    let journal =
        std::fs::read(fixtures().join("formats/journal/pg15-oom-journal-short-precise.log"))
            .unwrap();
    let to = dir.path().join("sos_commands/logs/journalctl_--no-pager");
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::write(&to, journal).unwrap();
    let bundle = open(dir.path(), &OpenOptions::default()).unwrap();
    let source = |p: &str| bundle.sources.iter().find(|s| s.path == p).unwrap();
    let s = source("sos_commands/logs/journalctl_--no-pager");
    assert_eq!(
        (s.kind, s.recognized_by),
        (SourceKind::SystemLog, RecognizedBy::Content)
    );
    assert!(
        s.note
            .as_deref()
            .is_some_and(|n| n.contains("PostgreSQL's lines too")),
        "{:?}",
        s.note
    );
    // The kernel's own log stays the kernel's.
    let dmesg = source("sos_commands/kernel/dmesg");
    assert_eq!(
        (dmesg.kind, dmesg.recognized_by),
        (SourceKind::KernelLog, RecognizedBy::Path)
    );
}

#[test]
fn a_sosreport_directory_inside_the_bundle_is_read_from_its_root() {
    // What a user gets by extracting the archive into a ticket's directory beside other files.
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("sosreport-db1-2026-11-28-abcdefg");
    sos_with_logs_in_its_own_files(&report);
    std::fs::write(dir.path().join("notes.txt"), "customer notes\n").unwrap();
    let bundle = open(dir.path(), &OpenOptions::default()).unwrap();
    let found = bundle.layout.as_ref().unwrap();
    assert_eq!(found.root, "sosreport-db1-2026-11-28-abcdefg/");
    let s = bundle
        .sources
        .iter()
        .find(|s| s.path.ends_with("sos_logs/sos.log"))
        .unwrap();
    assert_eq!(s.kind, SourceKind::CollectorLog);
    let notes = bundle
        .sources
        .iter()
        .find(|s| s.path == "notes.txt")
        .unwrap();
    assert_eq!(notes.kind, SourceKind::Unknown);
}

/// One file of a sosreport: its kind, how it was recognised and the table's pattern that named
/// it; the files a catch-all names (`proc/**`, `sys/**`) are counted under their pattern.
#[derive(Serialize)]
struct Row<'a> {
    path: &'a str,
    kind: &'static str,
    recognized_by: RecognizedBy,
    #[serde(skip_serializing_if = "Option::is_none")]
    pattern: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
}

#[test]
fn sosreports() {
    insta::glob!(
        "../../../fixtures/incidents",
        "pg15-sos*/*.tar.xz",
        |path| {
            let bundle = open(path, &OpenOptions::default()).unwrap();
            let found = bundle.layout.as_ref().expect("a sosreport");
            assert_eq!((found.layout, found.root.as_str()), (Layout::Sos, ""));
            assert!(bundle.manifest.is_none());
            let mut rows = Vec::new();
            let mut catch_alls: std::collections::BTreeMap<(&str, &str), usize> =
                Default::default();
            for s in &bundle.sources {
                let pattern = found.lookup(&s.path).map(|(p, _)| p);
                // What sos writes of itself is never a log; a file is taken by its content only
                // when sos clean renamed it.
                if s.path.starts_with("sos_logs/") || s.path.starts_with("sos_reports/") {
                    assert_eq!(s.kind, SourceKind::CollectorLog, "{}", s.path);
                }
                if s.recognized_by == RecognizedBy::Content {
                    assert!(
                        s.note.as_deref().is_some_and(|n| n.contains("sos clean")),
                        "{}",
                        s.path
                    );
                }
                match pattern {
                    Some(p)
                        if p.ends_with("/**")
                            && s.recognized_by == RecognizedBy::Path
                            && s.note.is_none() =>
                    {
                        *catch_alls.entry((p, s.kind.as_str())).or_default() += 1;
                    }
                    _ => rows.push(Row {
                        path: &s.path,
                        kind: s.kind.as_str(),
                        recognized_by: s.recognized_by,
                        pattern,
                        note: s.note.as_deref(),
                    }),
                }
            }
            let catch_alls: Vec<String> = catch_alls
                .into_iter()
                .map(|((p, k), n)| format!("{p}: {n} files, {k}"))
                .collect();
            let skipped: Vec<_> = bundle
                .skipped
                .iter()
                .map(|s| (&s.path, &s.reason))
                .collect();
            insta::assert_json_snapshot!((&found.obfuscation, rows, catch_alls, skipped));
        }
    );
}

/// The CloudNativePG report built to the plugin's layout: recognised from its root directory,
/// its pod list read as pod manifests, its pod log as a PostgreSQL log, the rest for a person.
#[test]
fn a_cnpg_cluster_report_zip_is_read_by_its_table() {
    let path = fixtures().join(
        "incidents/pg15-cnpg-report-container-oom/report_cluster_cluster-example_20261124_052930.zip",
    );
    let bundle = open(&path, &OpenOptions::default()).unwrap();
    let found = bundle.layout.as_ref().unwrap();
    // The zip's one top directory is taken off the paths, as for every archive.
    assert_eq!((found.layout, found.root.as_str()), (Layout::Cnpg, ""));
    assert_eq!(found.layout.describe(), "kubectl cnpg report cluster");
    let kinds: Vec<(&str, SourceKind, RecognizedBy)> = bundle
        .sources
        .iter()
        .map(|s| (s.path.as_str(), s.kind, s.recognized_by))
        .collect();
    assert_eq!(
        kinds,
        [
            (
                "logs/cluster-example-1-postgres.jsonl",
                SourceKind::PostgresLog,
                RecognizedBy::Path
            ),
            (
                "manifests/cluster-jobs.yaml",
                SourceKind::Reference,
                RecognizedBy::Path
            ),
            (
                "manifests/cluster-pods.yaml",
                SourceKind::PodManifest,
                RecognizedBy::Path
            ),
            (
                "manifests/cluster-pvcs.yaml",
                SourceKind::Reference,
                RecognizedBy::Path
            ),
            (
                "manifests/cluster.yaml",
                SourceKind::Reference,
                RecognizedBy::Path
            ),
            (
                "manifests/events.yaml",
                SourceKind::Reference,
                RecognizedBy::Path
            ),
        ]
    );
}
