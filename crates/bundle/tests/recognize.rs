//! Content recognition over every real sample in fixtures/formats: each system snapshot is
//! recognised as its kind, and no log sample is taken for a snapshot (the snapshot sniffers
//! must not steal files the log parsers own).

use std::path::{Path, PathBuf};

use pgmortem_bundle::{SourceKind, recognize};

fn files(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/formats")
        .join(dir);
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_none_or(|x| {
                !["md", "gz", "bz2", "prefix", "conf"].contains(&x.to_str().unwrap_or(""))
            }) {
                // Compressed samples (pgBadger's) are recognised once decompressed, by the
                // bundle reader; this test reads the bytes as they are. `.prefix` and `.conf`
                // files hold the log_line_prefix and settings a log was written with: no logs.
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn kind_of(path: &Path) -> SourceKind {
    let mut bytes = std::fs::read(path).unwrap();
    if path.extension().is_some_and(|x| x == "gz") {
        // As a bundle reads a compressed file: its text.
        use std::io::Read;
        let mut head = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .take(16 * 1024)
            .read_to_end(&mut head)
            .unwrap();
        bytes = head;
    }
    recognize(&bytes[..bytes.len().min(16 * 1024)])
}

#[test]
fn logs_stay_logs() {
    for (dir, want) in [
        ("kernel", SourceKind::KernelLog),
        ("pglog", SourceKind::PostgresLog),
        ("pgbouncer", SourceKind::PgbouncerLog),
        ("pgbackrest", SourceKind::PgbackrestLog),
    ] {
        for path in files(dir) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let got = kind_of(&path);
            if name.starts_with("edge-") {
                assert!(
                    matches!(
                        got,
                        SourceKind::KernelLog
                            | SourceKind::PostgresLog
                            | SourceKind::PgbouncerLog
                            | SourceKind::PgbackrestLog
                            | SourceKind::Unknown
                    ),
                    "{name}: {got:?}"
                );
            } else {
                assert_eq!(got, want, "{name}");
            }
        }
    }
}

/// Patroni's log files are recognised as Patroni's; the PostgreSQL logs recorded beside them
/// as PostgreSQL's (the stderr file holds initdb's and pg_ctl's lines too: no Patroni log).
#[test]
fn patroni_samples() {
    for path in files("patroni") {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let want = if name.starts_with("patroni-") {
            SourceKind::PatroniLog
        } else {
            SourceKind::PostgresLog
        };
        assert_eq!(kind_of(&path), want, "{name}");
    }
}

#[test]
fn snapshots_are_recognised_by_content() {
    let expect = |path: &Path| -> Option<SourceKind> {
        let dir = path.parent()?.file_name()?.to_str()?;
        let name = path.file_name()?.to_str()?;
        Some(match dir {
            "meminfo" => SourceKind::Meminfo,
            "vmstat" => SourceKind::Vmstat,
            "sysctl" if name.starts_with("sysctl") => SourceKind::Sysctl,
            "thp" if name != "khugepaged-defrag.txt" => SourceKind::ThpSetting,
            "status" => SourceKind::ProcStatus,
            "smaps_rollup" if !name.contains("empty") => SourceKind::SmapsRollup,
            "titles" => SourceKind::ProcessTitles,
            "cgroup-v1" if name.contains("stat") => SourceKind::CgroupStat,
            "cgroup-v1" if name.contains("oom_control") => SourceKind::CgroupEvents,
            "free" => SourceKind::Free,
            "df" => SourceKind::Df,
            "pg_settings" => SourceKind::PgSettings,
            "postgresql_conf" => SourceKind::PgConf,
            "ps" => SourceKind::ProcessList,
            "postmaster_opts" => SourceKind::PostmasterOpts,
            "commands" if name.starts_with("date") => SourceKind::Date,
            "commands" if name == "uptime.txt" => SourceKind::Uptime,
            // Bare numbers and words: only the path or manifest can say what they are.
            _ => return None,
        })
    };
    for path in files("system") {
        if let Some(want) = expect(&path) {
            assert_eq!(kind_of(&path), want, "{}", path.display());
        }
    }
}

#[test]
fn perf_script_captures_are_recognised_by_content() {
    let captures: Vec<_> = files("perf")
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .filter(|p| {
            !p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("edge-bad")
        })
        .collect();
    assert!(!captures.is_empty());
    for path in captures {
        assert_eq!(kind_of(&path), SourceKind::PerfScript, "{}", path.display());
    }
}
