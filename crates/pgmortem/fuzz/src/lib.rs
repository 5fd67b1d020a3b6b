//! Turning a fuzz input into a bundle on disk: a tar (plain, gzip or zstd), a directory, or
//! the input itself as a file of any name, so the targets reach every path of the opener.

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
