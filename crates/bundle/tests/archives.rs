//! Archives built in memory with the tar crate, hostile ones included, opened as bundles.

use std::io::{self, Read, Write};

use pgmortem_bundle::{OpenOptions, RecognizedBy, SourceKind, open};

const MEMINFO: &[u8] = b"MemTotal:       24684092 kB\nMemFree:        18423292 kB\nBuffers:           31556 kB\nCached:          5541740 kB\n";

fn header(path: &[u8], size: u64, kind: tar::EntryType) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    // Written into the name field directly: set_path refuses `..` and absolute paths, which
    // is exactly what a hostile archive holds.
    let name = &mut h.as_old_mut().name;
    name[..path.len()].copy_from_slice(path);
    h.set_size(size);
    h.set_mode(0o600);
    h.set_entry_type(kind);
    h.set_cksum();
    h
}

struct TarBuilder(tar::Builder<Vec<u8>>);

impl TarBuilder {
    fn new() -> Self {
        Self(tar::Builder::new(Vec::new()))
    }
    fn file(mut self, path: &str, data: &[u8]) -> Self {
        let h = header(path.as_bytes(), data.len() as u64, tar::EntryType::Regular);
        self.0.append(&h, data).unwrap();
        self
    }
    fn special(mut self, path: &str, kind: tar::EntryType, link: Option<&str>) -> Self {
        let mut h = header(path.as_bytes(), 0, kind);
        if let Some(l) = link {
            h.set_link_name(l).unwrap();
            h.set_cksum();
        }
        self.0.append(&h, &[][..]).unwrap();
        self
    }
    fn tar(self) -> Vec<u8> {
        self.0.into_inner().unwrap()
    }
    fn gz(self) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(&self.tar()).unwrap();
        e.finish().unwrap()
    }
    fn zst(self) -> Vec<u8> {
        zstd::encode_all(&self.tar()[..], 3).unwrap()
    }
}

fn open_bytes(name: &str, bytes: &[u8], options: &OpenOptions) -> pgmortem_bundle::Bundle {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).unwrap();
    open(&path, options).unwrap()
}

fn kinds(b: &pgmortem_bundle::Bundle) -> Vec<(&str, SourceKind)> {
    b.sources
        .iter()
        .map(|s| (s.path.as_str(), s.kind))
        .collect()
}

fn skipped(b: &pgmortem_bundle::Bundle) -> Vec<(&str, &str)> {
    b.skipped
        .iter()
        .map(|s| (s.path.as_str(), s.reason.as_str()))
        .collect()
}

fn collected() -> TarBuilder {
    let manifest = br#"{"format":"pgmortem.bundle","format_version":1,"files":[
        {"path":"memory/meminfo.txt","kind":"meminfo","command":"cat /proc/meminfo","status":0},
        {"path":"notes/odd-name","kind":"uptime","status":0}]}"#;
    TarBuilder::new()
        .file("pgmortem-db1-20261121T170844Z/manifest.json", manifest)
        .file("pgmortem-db1-20261121T170844Z/memory/meminfo.txt", MEMINFO)
        .file(
            "pgmortem-db1-20261121T170844Z/notes/odd-name",
            b"5196.43 9876.54\n",
        )
        .file("pgmortem-db1-20261121T170844Z/cgroup/memory.max", b"max\n")
        .file("pgmortem-db1-20261121T170844Z/other.txt", b"hello\n")
}

#[test]
fn tar_gz_and_tar_zst_read_the_same_with_kinds_from_manifest_path_and_content() {
    for (name, bytes) in [
        ("b.tar.gz", collected().gz()),
        ("b.tar.zst", collected().zst()),
        ("b.tar", collected().tar()),
    ] {
        let b = open_bytes(name, &bytes, &OpenOptions::default());
        assert_eq!(
            kinds(&b),
            [
                ("cgroup/memory.max", SourceKind::CgroupValue),
                ("manifest.json", SourceKind::Manifest),
                ("memory/meminfo.txt", SourceKind::Meminfo),
                ("notes/odd-name", SourceKind::Uptime),
                ("other.txt", SourceKind::Unknown),
            ],
            "{name}"
        );
        let by: Vec<_> = b.sources.iter().map(|s| s.recognized_by).collect();
        assert_eq!(
            by,
            [
                RecognizedBy::Path,
                RecognizedBy::Path,
                RecognizedBy::Manifest,
                RecognizedBy::Manifest,
                RecognizedBy::Content
            ]
        );
        assert!(b.skipped.is_empty(), "{name}: {:?}", b.skipped);
        assert_eq!(b.manifest.as_ref().unwrap().files.len(), 2);
    }
}

#[test]
fn hostile_entries_are_listed_not_followed() {
    let bytes = TarBuilder::new()
        .file("ok/meminfo", MEMINFO)
        .file("../../etc/cron.d/evil", b"* * * * * root sh\n")
        .file("/etc/passwd", b"root:x:0:0\n")
        .special("ok/link", tar::EntryType::Symlink, Some("/etc/shadow"))
        .special("ok/hard", tar::EntryType::Link, Some("/etc/shadow"))
        .special("ok/dev", tar::EntryType::Char, None)
        .special("ok/fifo", tar::EntryType::Fifo, None)
        .file("ok/meminfo", b"second copy\n")
        .gz();
    let b = open_bytes("evil.tgz", &bytes, &OpenOptions::default());
    assert_eq!(kinds(&b), [("ok/meminfo", SourceKind::Meminfo)]);
    assert_eq!(b.sources[0].bytes, MEMINFO);
    let got = skipped(&b);
    let reason = |p: &str| got.iter().find(|(q, _)| *q == p).map(|(_, r)| *r).unwrap();
    assert!(reason("../../etc/cron.d/evil").contains("'..'"));
    assert!(reason("/etc/passwd").contains("absolute path"));
    assert!(reason("ok/link").contains("symbolic link to \"/etc/shadow\", not followed"));
    assert!(reason("ok/hard").contains("hard link"));
    assert!(reason("ok/dev").contains("device file"));
    assert!(reason("ok/fifo").contains("fifo"));
    assert!(
        got.iter()
            .any(|(p, r)| *p == "ok/meminfo" && r.contains("duplicate"))
    );
    // Nothing was written anywhere: the entries only ever existed in memory.
    assert!(!std::path::Path::new("/etc/cron.d/evil").exists());
}

#[test]
fn decompression_bomb_stops_at_the_decompression_limit() {
    let zeros = vec![0u8; 8 << 20];
    let bytes = TarBuilder::new()
        .file("a.txt", b"first\n")
        .file("bomb", &zeros)
        .file("after", b"never reached\n")
        .gz();
    assert!(
        bytes.len() < zeros.len() / 64,
        "compressed {} bytes",
        bytes.len()
    );
    let options = OpenOptions {
        max_decompressed_bytes: 1 << 20,
        ..OpenOptions::default()
    };
    let b = open_bytes("bomb.tar.gz", &bytes, &options);
    assert_eq!(kinds(&b), [("a.txt", SourceKind::Unknown)]);
    let got = skipped(&b);
    assert!(
        got.iter().any(|(_, r)| r.contains("decompression limit")),
        "{got:?}"
    );
}

#[test]
fn total_limit_skips_what_does_not_fit_in_memory_and_reads_on() {
    let bytes = TarBuilder::new()
        .file("a.txt", b"first\n")
        .file("big", &vec![b'x'; 4096])
        .file("after", b"5196.43 9876.54\n")
        .zst();
    let options = OpenOptions {
        max_total_bytes: 1000,
        ..OpenOptions::default()
    };
    let b = open_bytes("t.tar.zst", &bytes, &options);
    assert_eq!(
        kinds(&b),
        [
            ("a.txt", SourceKind::Unknown),
            ("after", SourceKind::Uptime)
        ]
    );
    assert_eq!(skipped(&b)[0].0, "big");
    assert!(skipped(&b)[0].1.contains("1000-byte total limit"));
}

#[test]
fn per_file_limit_keeps_the_end_of_one_file_and_reads_on() {
    let log: Vec<u8> = (0..1000)
        .flat_map(|i| format!("line {i:04}\n").into_bytes())
        .collect();
    let bytes = TarBuilder::new()
        .file("big", &log)
        .file("small", b"5196.43 9876.54\n")
        .zst();
    let options = OpenOptions {
        max_file_bytes: 1000,
        ..OpenOptions::default()
    };
    let b = open_bytes("b.tar.zst", &bytes, &options);
    assert_eq!(
        kinds(&b),
        [("big", SourceKind::Unknown), ("small", SourceKind::Uptime)]
    );
    assert!(b.skipped.is_empty());
    let big = &b.sources[0];
    assert!(big.bytes.len() <= 1000 && log.ends_with(&big.bytes));
    assert!(big.bytes.starts_with(b"line "));
    let note = big.note.as_deref().unwrap();
    assert!(note.contains("of 9.8 KiB were read"), "{note}");
}

#[test]
fn truncated_archive_keeps_what_came_before_and_says_so() {
    let body = vec![b'y'; 100_000];
    let tar = TarBuilder::new()
        .file("first", b"5196.43 9876.54\n")
        .file("second", &body)
        .tar();
    let cut = &tar[..tar.len() / 2];
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(cut).unwrap();
    let gz = e.finish().unwrap();
    let b = open_bytes("cut.tar.gz", &gz, &OpenOptions::default());
    assert_eq!(kinds(&b), [("first", SourceKind::Uptime)]);
    let got = skipped(&b);
    assert!(
        got.iter()
            .any(|(p, r)| *p == "second" && r.contains("truncated")),
        "{got:?}"
    );
    assert!(got.iter().any(|(p, _)| *p == "cut.tar.gz"), "{got:?}");

    // A gzip stream cut in the middle: the decoder's error, not a panic.
    let whole = collected().gz();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut2.tar.gz");
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    match open(&path, &OpenOptions::default()) {
        Ok(b) => assert!(
            b.skipped.iter().any(|s| s.path == "cut2.tar.gz"),
            "{:?}",
            b.skipped
        ),
        Err(e) => assert!(e.to_string().contains("cut2.tar.gz"), "{e}"),
    }
}

#[test]
fn entry_count_limit() {
    let mut t = TarBuilder::new();
    for i in 0..20 {
        t = t.file(&format!("f{i:02}"), b"x\n");
    }
    let options = OpenOptions {
        max_entries: 5,
        ..OpenOptions::default()
    };
    let b = open_bytes("many.tar", &t.tar(), &options);
    assert_eq!(b.sources.len(), 5);
    assert!(b.skipped[0].reason.contains("more than 5 entries"));
}

#[test]
fn single_compressed_file_is_read_under_its_inner_name() {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(MEMINFO).unwrap();
    let b = open_bytes("meminfo.gz", &e.finish().unwrap(), &OpenOptions::default());
    assert_eq!(kinds(&b), [("meminfo", SourceKind::Meminfo)]);
}

#[test]
fn garbage_with_a_gzip_magic_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.tar.gz");
    std::fs::write(&path, [0x1f, 0x8b, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]).unwrap();
    let err = open(&path, &OpenOptions::default()).unwrap_err();
    assert!(err.to_string().contains("x.tar.gz"), "{err}");
}

#[test]
fn pax_size_record_is_the_size() {
    // Files over 8 GiB carry their size in a PAX `size` record, the ustar field left 0 (what
    // GNU tar and Python write): the record is the size.
    let log: Vec<u8> = (0..30)
        .flat_map(|i| format!("line {i:04}\n").into_bytes())
        .collect();
    assert_eq!(log.len(), 300);
    let mut b = tar::Builder::new(Vec::new());
    let record = b"12 size=300\n";
    let pax = header(
        b"PaxHeaders/big.log",
        record.len() as u64,
        tar::EntryType::XHeader,
    );
    b.append(&pax, &record[..]).unwrap();
    let h = header(b"big.log", 0, tar::EntryType::Regular);
    b.append(&h, &[][..]).unwrap();
    let out = b.get_mut();
    out.extend_from_slice(&log);
    out.resize(out.len() + 512 - log.len() % 512, 0);
    let b = TarBuilder(b).file("after", b"5196.43 9876.54\n");
    let bundle = open_bytes("pax.tar", &b.tar(), &OpenOptions::default());
    assert!(bundle.skipped.is_empty(), "{:?}", bundle.skipped);
    assert_eq!(bundle.sources[0].path, "after");
    assert_eq!(bundle.sources[1].path, "big.log");
    assert_eq!(bundle.sources[1].bytes, log);
}

/// A real PostgreSQL 15 log (fixtures/formats/pglog), for the rotated-log tests.
fn real_pg_log() -> Vec<u8> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/formats/pglog/pg15-backend-sigkill.log");
    std::fs::read(path).unwrap()
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

#[test]
fn rotated_compressed_logs_inside_an_archive_are_decompressed_under_their_own_name() {
    let log = real_pg_log();
    let tar = TarBuilder::new()
        .file("b/pg/postgresql-2026-11-20.log.gz", &gzip(&log))
        .file(
            "b/pg/postgresql-2026-11-19.log.zst",
            &zstd::encode_all(&log[..], 3).unwrap(),
        )
        .file("b/memory/meminfo.txt", MEMINFO)
        .gz();
    let b = open_bytes("b.tar.gz", &tar, &OpenOptions::default());
    assert_eq!(
        kinds(&b),
        [
            ("memory/meminfo.txt", SourceKind::Meminfo),
            ("pg/postgresql-2026-11-19.log", SourceKind::PostgresLog),
            ("pg/postgresql-2026-11-20.log", SourceKind::PostgresLog),
        ]
    );
    for s in &b.sources[1..] {
        assert_eq!(s.bytes, log);
        let note = s.note.as_deref().unwrap_or_default();
        assert!(note.starts_with("decompressed from "), "{note}");
    }
}

#[test]
fn rotated_compressed_logs_in_a_directory_are_decompressed_and_a_cut_one_keeps_its_start() {
    let log = real_pg_log();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("postgresql.log.1.gz"), gzip(&log)).unwrap();
    let big: Vec<u8> = log.iter().copied().cycle().take(log.len() * 200).collect();
    let whole = gzip(&big);
    std::fs::write(
        dir.path().join("postgresql.log.2.gz"),
        &whole[..whole.len() / 2],
    )
    .unwrap();
    let b = open(dir.path(), &OpenOptions::default()).unwrap();
    assert_eq!(
        kinds(&b),
        [
            ("postgresql.log.1", SourceKind::PostgresLog),
            ("postgresql.log.2", SourceKind::PostgresLog),
        ]
    );
    assert_eq!(b.sources[0].bytes, log);
    let cut = &b.sources[1];
    assert!(!cut.bytes.is_empty() && big.starts_with(&cut.bytes));
    let note = cut.note.as_deref().unwrap();
    assert!(note.contains("stopped after"), "{note}");
}

#[test]
fn an_oversized_long_name_header_is_dropped_not_held() {
    // A GNU long name of 64 MiB (1 GiB in the hostile sample that took 4.7 GB of memory; a
    // few kilobytes of zstd either way) before an ordinary entry: the header is skipped as it
    // streams by, the entry after it is read under its own header's name.
    let size: u64 = 64 << 20;
    let mut b = tar::Builder::new(Vec::new());
    let h = header(b"././@LongLink", size, tar::EntryType::GNULongName);
    b.append(&h, io::repeat(b'a').take(size)).unwrap();
    let b = TarBuilder(b).file("memory/meminfo.txt", b"MemTotal: 1024 kB\n");
    let bundle = open_bytes("long.tar.zst", &b.zst(), &OpenOptions::default());
    assert_eq!(
        skipped(&bundle),
        [(
            "././@LongLink",
            "GNU long name of 67108864 bytes, over the 65536 bytes kept: not read (the next \
             entry keeps the name in its own header)"
        )]
    );
    assert_eq!(
        kinds(&bundle),
        [("memory/meminfo.txt", SourceKind::Meminfo)]
    );
}

#[test]
fn a_damaged_gzip_file_keeps_its_data_and_says_what_is_wrong() {
    let log = real_pg_log();
    let good = gzip(&log);
    let n = good.len();
    // CRC field zeroed; length field wrong; trailer missing.
    let mut bad_crc = good.clone();
    bad_crc[n - 8..n - 4].copy_from_slice(&[0; 4]);
    let mut bad_len = good.clone();
    bad_len[n - 4..].copy_from_slice(&[1, 0, 0, 0]);
    let no_trailer = good[..n - 8].to_vec();
    for (bytes, why) in [
        (bad_crc, "does not have a matching checksum"),
        (bad_len, "does not have a matching checksum"),
        (no_trailer, "unexpected end of file"),
    ] {
        let bundle = open_bytes("server.log.gz", &bytes, &OpenOptions::default());
        let source = &bundle.sources[0];
        assert_eq!(source.path, "server.log");
        assert_eq!(source.bytes, log);
        let note = source.note.as_deref().unwrap();
        assert!(
            note.starts_with(&format!(
                "decompressed from gzip (stopped after {} bytes: ",
                log.len()
            )) && note.contains(why),
            "{note}"
        );
    }
}

#[test]
fn concatenated_gzip_members_and_trailing_data_are_noted() {
    let log = real_pg_log();
    let (a, b) = log.split_at(log.len() / 2);
    let mut two = gzip(a);
    two.extend(gzip(b));
    let bundle = open_bytes("server.log.gz", &two, &OpenOptions::default());
    assert_eq!(bundle.sources[0].bytes, log);
    assert_eq!(
        skipped(&bundle),
        [(
            "server.log.gz",
            "the archive itself: 2 concatenated gzip members, read one after the other"
        )]
    );
    // A tar.gz padded with zeros after its gzip stream (a tape block, dd).
    let mut padded = collected().gz();
    padded.extend([0; 1024]);
    let bundle = open_bytes("bundle.tar.gz", &padded, &OpenOptions::default());
    assert!(!bundle.sources.is_empty());
    assert_eq!(
        skipped(&bundle),
        [(
            "bundle.tar.gz",
            "the archive itself: data after the last gzip member, not gzip, was not read"
        )]
    );
    // Data after the tar archive's end, inside the compressed stream.
    let mut tar = collected().tar();
    tar.extend(b"appended by hand\n");
    let bundle = open_bytes("bundle.tar.gz", &gzip(&tar), &OpenOptions::default());
    assert!(!bundle.sources.is_empty());
    assert_eq!(
        skipped(&bundle),
        [(
            "(after the end of the tar archive)",
            "17 bytes of data after the archive's end, not read"
        )]
    );
}

/// A zip archive of `(name, data)` files, deflated (zip64 headers when `zip64`).
fn zip_of(files: &[(&str, &[u8])], zip64: bool) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(zip64);
    for (name, data) in files {
        w.start_file(*name, options).unwrap();
        w.write_all(data).unwrap();
    }
    w.finish().unwrap().into_inner()
}

#[test]
fn a_zip_is_read_like_a_tar_zip64_included() {
    for zip64 in [false, true] {
        let bytes = zip_of(
            &[
                ("report/memory/meminfo.txt", MEMINFO),
                ("report/notes/odd-name", b"5196.43 9876.54\n"),
            ],
            zip64,
        );
        let bundle = open_bytes("cnpg-report.zip", &bytes, &OpenOptions::default());
        assert_eq!(
            kinds(&bundle),
            [
                ("memory/meminfo.txt", SourceKind::Meminfo),
                ("notes/odd-name", SourceKind::Uptime)
            ],
            "zip64 {zip64}"
        );
        assert_eq!(bundle.sources[0].bytes, MEMINFO);
    }
}

#[test]
fn a_hostile_zip_has_its_names_checked_and_its_links_listed() {
    let mut w = zip::ZipWriter::new(io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for name in ["../../etc/cron.d/x", "/etc/passwd", "ok/meminfo"] {
        w.start_file(name, options).unwrap();
        w.write_all(MEMINFO).unwrap();
    }
    w.add_symlink("ok/link", "/etc/shadow", options).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    let bundle = open_bytes("x.zip", &bytes, &OpenOptions::default());
    assert_eq!(kinds(&bundle), [("ok/meminfo", SourceKind::Meminfo)]);
    assert_eq!(
        skipped(&bundle),
        [
            (
                "../../etc/cron.d/x",
                "path climbs out of the bundle ('..'), not read"
            ),
            ("/etc/passwd", "absolute path in the archive, not read"),
            ("ok/link", "symbolic link, not followed"),
        ]
    );
}

#[test]
fn a_zip_bomb_stops_at_the_decompression_limit() {
    let zeros = vec![0u8; 8 << 20];
    let bytes = zip_of(&[("a/meminfo", MEMINFO), ("a/zeros.log", &zeros)], false);
    assert!(bytes.len() < 64 << 10, "{}", bytes.len());
    let options = OpenOptions {
        max_decompressed_bytes: 1 << 20,
        ..OpenOptions::default()
    };
    let bundle = open_bytes("bomb.zip", &bytes, &options);
    assert_eq!(kinds(&bundle), [("meminfo", SourceKind::Meminfo)]);
    let (path, reason) = skipped(&bundle)[0];
    assert_eq!(path, "zeros.log");
    assert!(reason.contains("decompression limit"), "{reason}");
}

#[test]
fn one_budget_for_archives_nested_in_archives() {
    // A zip holding two .tar.gz of 3 MiB of zeros each: the 5 MiB budget is shared.
    let zeros = vec![b'0'; 3 << 20];
    let inner = TarBuilder::new().file("zeros.log", &zeros).gz();
    let bytes = zip_of(&[("one.tar.gz", &inner), ("two.tar.gz", &inner)], false);
    let options = OpenOptions {
        max_decompressed_bytes: 5 << 20,
        ..OpenOptions::default()
    };
    let bundle = open_bytes("both.zip", &bytes, &options);
    let read: Vec<_> = bundle.sources.iter().map(|s| s.path.as_str()).collect();
    assert_eq!(read, ["one.tar.gz/zeros.log"]);
    assert!(
        bundle
            .skipped
            .iter()
            .any(|s| s.path.starts_with("two.tar.gz") && s.reason.contains("decompression limit")),
        "{:?}",
        bundle.skipped
    );
}

#[test]
fn archives_nested_deeper_than_the_limit_are_listed_not_opened() {
    // level 0 (the bundle) holds level 1, … holds level 6, which holds the log.
    let mut archive = TarBuilder::new().file("deepest.log", b"x\n").gz();
    for level in (1..=6).rev() {
        archive = TarBuilder::new()
            .file(&format!("level{level}.tar.gz"), &archive)
            .gz();
    }
    let bundle = open_bytes("level0.tar.gz", &archive, &OpenOptions::default());
    assert!(bundle.sources.is_empty());
    let (path, reason) = skipped(&bundle)[0];
    assert_eq!(
        path,
        "level1.tar.gz/level2.tar.gz/level3.tar.gz/level4.tar.gz"
    );
    assert!(
        reason.starts_with("an archive inside 4 others: not opened"),
        "{reason}"
    );
    assert_eq!(
        bundle.skipped[0].archive,
        Some(pgmortem_bundle::ArchiveTrouble::NotOpened)
    );
    let shallow = OpenOptions {
        max_nesting: 8,
        ..OpenOptions::default()
    };
    let bundle = open_bytes("level0.tar.gz", &archive, &shallow);
    assert_eq!(
        bundle.sources[0].path,
        "level1.tar.gz/level2.tar.gz/level3.tar.gz/level4.tar.gz/level5.tar.gz/level6.tar.gz/deepest.log"
    );
}

#[test]
fn a_zip_with_one_encrypted_file_reads_the_others() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/formats/bundle/edge-one-encrypted.zip");
    let bundle = open(&path, &OpenOptions::default()).unwrap();
    assert_eq!(kinds(&bundle), [("expected.json", SourceKind::Unknown)]);
    let (path, reason) = skipped(&bundle)[0];
    assert_eq!(path, "README.md");
    assert!(reason.starts_with("encrypted: not read"), "{reason}");
}

#[test]
fn the_dot_directory_of_tar_c_dir_dot_is_not_a_skipped_file() {
    // `tar -C dir -czf x.tar.gz .` writes `./` first, then `./file`.
    let bytes = TarBuilder::new()
        .special("./", tar::EntryType::Directory, None)
        .special("./memory/", tar::EntryType::Directory, None)
        .file("./memory/uptime", b"5196.43 9876.54\n")
        .file("./notes.txt", b"call the vendor\n")
        .gz();
    let b = open_bytes("bundle.tar.gz", &bytes, &OpenOptions::default());
    assert_eq!(
        kinds(&b),
        vec![
            ("memory/uptime", SourceKind::Uptime),
            ("notes.txt", SourceKind::Unknown)
        ]
    );
    assert_eq!(skipped(&b), Vec::<(&str, &str)>::new());
}
