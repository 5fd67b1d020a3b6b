//! Turning a fuzz input into a bundle on disk: a tar (plain, gzip or zstd), a directory, or
//! the input itself as a file of any name, so the targets reach every path of the opener; and
//! into the other archive forms (xz, bzip2, zip, archives nested in archives) for the
//! `archives` target.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Files a bundle usually holds: the fuzz input's parts go to these paths in turn, so every
/// parser and rule is reached.
pub const PATHS: &[&str] = &[
    "kernel/dmesg.txt",
    "postgres/server.log",
    "memory/meminfo.txt",
    "postgres/pg_settings.txt",
    "clock/uptime.txt",
    "clock/date.txt",
    "memory/sysctl-vm.txt",
    "cgroup/1/memory.max",
    "processes/1/status",
    "storage/df.txt",
    "perf/perf-script.txt",
    "postgres/postgresql.conf",
    "manifest.json",
    "processes/1/pg-oom-adjust.txt",
    "kernel/dmesg-T.txt",
];

/// The input cut into parts at each `\n--\n` (at most [`PATHS`] of them).
pub fn parts(data: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    while out.len() + 1 < PATHS.len() {
        match rest.windows(4).position(|w| w == b"\n--\n") {
            Some(i) => {
                out.push(&rest[..i + 1]);
                rest = &rest[i + 4..];
            }
            None => break,
        }
    }
    out.push(rest);
    out
}

/// A tar holding each part at its path.
pub fn tar_of(parts: &[&[u8]]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (part, path) in parts.iter().zip(PATHS) {
        let mut h = tar::Header::new_gnu();
        h.set_size(part.len() as u64);
        h.set_mode(0o644);
        let _ = b.append_data(&mut h, format!("pgmortem-fuzz/{path}"), *part);
    }
    b.into_inner().unwrap_or_default()
}

/// Writes the bundle the first byte asks for under `dir`, and returns its path:
/// 0 the rest as a tar file as it is; 1 as a .tar.gz file as it is (the gzip decoder on raw
/// bytes); 2 the parts tarred; 3 tarred and gzipped; 4 tarred and zstd-compressed; 5 a
/// directory of the parts; 6 the rest as one loose file.
pub fn write_bundle(data: &[u8], dir: &Path) -> Option<PathBuf> {
    let (&choice, rest) = data.split_first()?;
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).ok().map(|()| path)
    };
    match choice % 7 {
        0 => write("raw.tar", rest),
        1 => write("raw.tar.gz", rest),
        2 => write("bundle.tar", &tar_of(&parts(rest))),
        3 => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            enc.write_all(&tar_of(&parts(rest))).ok()?;
            write("bundle.tar.gz", &enc.finish().ok()?)
        }
        4 => write(
            "bundle.tar.zst",
            &zstd::encode_all(&tar_of(&parts(rest))[..], 1).ok()?,
        ),
        5 => {
            let root = dir.join("bundle");
            for (part, path) in parts(rest).iter().zip(PATHS) {
                let file = root.join(path);
                std::fs::create_dir_all(file.parent()?).ok()?;
                std::fs::write(file, part).ok()?;
            }
            Some(root)
        }
        _ => write("server.log", rest),
    }
}

/// A scratch directory in memory when the machine has one.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .expect("a scratch directory")
}

/// `bytes` compressed with xz (preset 0: fast).
pub fn xz(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut enc = liblzma::write::XzEncoder::new(Vec::new(), 0);
    enc.write_all(bytes).ok()?;
    enc.finish().ok()
}

/// `bytes` compressed with bzip2.
pub fn bzip2(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    enc.write_all(bytes).ok()?;
    enc.finish().ok()
}

/// `bytes` compressed with gzip.
pub fn gzip(bytes: &[u8]) -> Option<Vec<u8>> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).ok()?;
    enc.finish().ok()
}

/// A zip archive holding each `(name, bytes)`, deflated.
pub fn zip_of(files: &[(&str, &[u8])]) -> Option<Vec<u8>> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in files {
        w.start_file(*name, options).ok()?;
        w.write_all(bytes).ok()?;
    }
    Some(w.finish().ok()?.into_inner())
}

/// A zip archive holding each part at its path (under one top directory, as `zip -r`).
pub fn zip_parts(parts: &[&[u8]]) -> Option<Vec<u8>> {
    let names: Vec<String> = PATHS.iter().map(|p| format!("pgmortem-fuzz/{p}")).collect();
    let files: Vec<(&str, &[u8])> = names
        .iter()
        .map(String::as_str)
        .zip(parts.iter().copied())
        .collect();
    zip_of(&files)
}

/// Writes what the first byte asks for under `dir`, for the `archives` target, and returns
/// the paths to open together (one, but for 9):
/// 0 the rest as a `.xz` file as it is (the xz decoder on raw bytes); 1 as a `.tar.bz2` as it
/// is; 2 as a `.zip` as it is (the zip reader on raw bytes); 3 the parts zipped; 4 tarred and
/// xz-compressed; 5 tarred and bzip2-compressed; 6 a zip holding the parts' `.tar.gz` beside a
/// note; 7 a directory holding a `.tar.gz` holding the parts' `.tar.xz`; 8 a `.tar.gz` whose
/// one member is the rest as a zip as it is; 9 the parts as loose files given together, and
/// the rest as a `.bz2` among them.
pub fn write_archives(data: &[u8], dir: &Path) -> Option<Vec<PathBuf>> {
    let (&choice, rest) = data.split_first()?;
    let write = |name: &str, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).ok().map(|()| vec![path])
    };
    let tar_one = |name: &str, bytes: &[u8]| {
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        b.append_data(&mut h, name, bytes).ok()?;
        b.into_inner().ok()
    };
    match choice % 10 {
        0 => write("raw.log.xz", rest),
        1 => write("raw.tar.bz2", rest),
        2 => write("raw.zip", rest),
        3 => write("bundle.zip", &zip_parts(&parts(rest))?),
        4 => write("bundle.tar.xz", &xz(&tar_of(&parts(rest)))?),
        5 => write("bundle.tar.bz2", &bzip2(&tar_of(&parts(rest)))?),
        6 => {
            let inner = gzip(&tar_of(&parts(rest)))?;
            let outer = zip_of(&[("README.md", b"notes\n"), ("bundle.tar.gz", &inner)])?;
            write("attachment.zip", &outer)
        }
        7 => {
            let inner = xz(&tar_of(&parts(rest)))?;
            let outer = gzip(&tar_one("bundle.tar.xz", &inner)?)?;
            let root = dir.join("incident");
            std::fs::create_dir_all(&root).ok()?;
            std::fs::write(root.join("outer.tar.gz"), outer).ok()?;
            std::fs::write(root.join("README.md"), b"notes\n").ok()?;
            Some(vec![root])
        }
        8 => write("nested.tar.gz", &gzip(&tar_one("inner.zip", rest)?)?),
        _ => {
            let mut paths = Vec::new();
            for (i, part) in parts(rest).iter().enumerate() {
                let name = PATHS[i].rsplit('/').next()?;
                let sub = dir.join(format!("part{i}"));
                std::fs::create_dir_all(&sub).ok()?;
                let path = sub.join(name);
                std::fs::write(&path, part).ok()?;
                paths.push(path);
            }
            let raw = dir.join("raw.log.bz2");
            std::fs::write(&raw, rest).ok()?;
            paths.push(raw);
            Some(paths)
        }
    }
}
