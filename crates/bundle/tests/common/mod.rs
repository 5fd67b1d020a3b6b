//! What the collector's tests share: running the script and opening the bundle it wrote, as
//! root or as the unprivileged `pgm` user, and reading its manifest.

#![allow(dead_code, clippy::print_stderr)]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use pgmortem_bundle::{Bundle, COLLECTOR_SCRIPT, ManifestFile, OpenOptions, SourceKind, open};

/// The unprivileged account the non-root runs use (`useradd -m pgm`).
pub const USER: &str = "pgm";

/// Whether the tests run as root.
pub fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.trim_ascii() == b"0")
}

/// The uid of `user`, when it exists.
pub fn uid_of(user: &str) -> Option<u32> {
    let out = Command::new("id").args(["-u", user]).output().ok()?;
    out.status.success().then_some(())?;
    std::str::from_utf8(&out.stdout).ok()?.trim().parse().ok()
}

/// Whether a test that needs root (and `USER` when `needs_user`) can run; says why not.
pub fn can_run(what: &str, needs_user: bool) -> bool {
    if !is_root() {
        eprintln!("skipped {what}: needs root");
        return false;
    }
    if needs_user && uid_of(USER).is_none() {
        eprintln!("skipped {what}: no '{USER}' user (useradd -m {USER})");
        return false;
    }
    true
}

/// A scratch directory everyone can write, holding a copy of the collector everyone can read.
pub struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    pub fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        std::fs::write(dir.path().join("collect.sh"), COLLECTOR_SCRIPT).unwrap();
        std::fs::set_permissions(
            dir.path().join("collect.sh"),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
        Scratch { dir }
    }

    pub fn script(&self) -> PathBuf {
        self.dir.path().join("collect.sh")
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Runs `command`, which must print the bundle path last; opens that bundle.
pub fn collect(mut command: Command) -> (Bundle, String) {
    let run = command.output().unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    assert!(run.status.success(), "{stderr}");
    let stdout = String::from_utf8(run.stdout).unwrap();
    let bundle_path = PathBuf::from(stdout.lines().last().expect("bundle path on stdout"));
    let bundle = open(&bundle_path, &OpenOptions::default()).unwrap();
    // Only what the collector could not collect is listed, with what it recorded.
    for s in &bundle.skipped {
        assert!(s.reason.starts_with("not in the bundle: "), "{s:?}");
    }
    (bundle, stderr)
}

pub fn entry<'a>(bundle: &'a Bundle, path: &str) -> &'a ManifestFile {
    let manifest = bundle.manifest.as_ref().expect("manifest.json");
    manifest
        .file(path)
        .unwrap_or_else(|| panic!("no manifest entry for {path}"))
}

pub fn has(bundle: &Bundle, kind: SourceKind) -> bool {
    bundle.sources.iter().any(|s| s.kind == kind)
}

/// Every manifest entry either produced its file or says why not.
pub fn every_entry_accounted_for(bundle: &Bundle) {
    for f in &bundle.manifest.as_ref().unwrap().files {
        let present = bundle.sources.iter().any(|s| s.path == f.path);
        assert!(
            present || f.status != Some(0) || f.bytes == Some(0),
            "{f:?}"
        );
        if present {
            let source = bundle.sources.iter().find(|s| s.path == f.path).unwrap();
            assert_eq!(Some(source.size()), f.bytes, "{}", f.path);
        }
    }
}
