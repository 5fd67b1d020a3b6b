//! Snapshots of the system snapshot parsers on every sample in fixtures/formats/system: adding
//! a file to one of its directories adds a test. Real captures (not `edge-*`) must be read
//! completely: no unrecognised line, nothing truncated, nothing the parser calls missing
//! beyond what that kind of process lacks.

use std::path::Path;

use pgmortem_parse::system;

fn read(path: &Path) -> (Vec<u8>, String, bool) {
    let bytes = std::fs::read(path).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let real = !name.starts_with("edge-");
    (bytes, name, real)
}

const DIR: &str = "../../../fixtures/formats/system";

#[test]
fn meminfo() {
    insta::glob!(DIR, "meminfo/*.txt", |path| {
        let (bytes, name, real) = read(path);
        let m = system::parse_meminfo(&bytes);
        assert!(system::sniff_meminfo(&bytes).is_some(), "{name}");
        if real {
            assert_eq!(m.stats.unrecognized_lines, 0, "{name}");
            assert!(
                !m.truncated && m.missing.is_empty(),
                "{name}: {:?}",
                m.missing
            );
        } else {
            assert!(m.truncated, "{name}");
        }
        insta::assert_json_snapshot!(m);
    });
}

#[test]
fn vmstat() {
    insta::glob!(DIR, "vmstat/*.txt", |path| {
        let (bytes, name, _) = read(path);
        let v = system::parse_flat_keyed(&bytes);
        assert!(system::sniff_vmstat(&bytes).is_some(), "{name}");
        assert!(system::sniff_meminfo(&bytes).is_none(), "{name}");
        assert_eq!(v.stats.unrecognized_lines, 0, "{name}");
        insta::assert_json_snapshot!(v);
    });
}

#[test]
fn sysctl() {
    insta::glob!(DIR, "sysctl/*.txt", |path| {
        let (bytes, name, _) = read(path);
        if let Some(file) = name.strip_prefix("proc-sys-vm-") {
            let file = file.trim_end_matches(".txt");
            let s = system::parse_proc_sys_file(&format!("vm/{file}"), &bytes);
            assert!(s.integer().is_some(), "{name}");
            insta::assert_json_snapshot!(s);
        } else {
            let set = system::parse_sysctl(&bytes);
            assert!(system::sniff_sysctl(&bytes).is_some(), "{name}");
            assert_eq!(set.stats.unrecognized_lines, 0, "{name}");
            insta::assert_json_snapshot!(set);
        }
    });
}

#[test]
fn thp() {
    insta::glob!(DIR, "thp/*.txt", |path| {
        let (bytes, name, _) = read(path);
        let c = system::parse_choice(&bytes);
        if name != "khugepaged-defrag.txt" {
            assert!(c.selected.is_some(), "{name}");
            assert!(system::sniff_choice(&bytes).is_some(), "{name}");
        }
        insta::assert_json_snapshot!(c);
    });
}

#[test]
fn status() {
    insta::glob!(DIR, "status/*.txt", |path| {
        let (bytes, name, real) = read(path);
        let s = system::parse_status(&bytes);
        assert!(system::sniff_status(&bytes).is_some(), "{name}");
        assert_eq!(s.stats.unrecognized_lines, 0, "{name}");
        if real && !s.kernel_thread {
            assert!(s.missing.is_empty(), "{name}: {:?}", s.missing);
        }
        assert_eq!(
            s.kernel_thread,
            name.contains("kthread") || name.contains("kernel-thread")
        );
        insta::assert_json_snapshot!(s);
    });
}

#[test]
fn smaps_rollup() {
    insta::glob!(DIR, "smaps_rollup/*.txt", |path| {
        let (bytes, name, real) = read(path);
        let r = system::parse_smaps_rollup(&bytes);
        assert_eq!(r.stats.unrecognized_lines, 0, "{name}");
        if !r.empty {
            assert!(system::sniff_smaps_rollup(&bytes).is_some(), "{name}");
            assert_eq!(r.missing.is_empty(), real, "{name}: {:?}", r.missing);
        }
        insta::assert_json_snapshot!(r);
    });
}

#[test]
fn titles() {
    insta::glob!(DIR, "titles/*.txt", |path| {
        let (bytes, name, _) = read(path);
        let (titles, stats) = system::parse_titles(&bytes);
        assert_eq!(stats.unrecognized_lines, 0, "{name}");
        assert!(
            titles
                .iter()
                .all(|t| !matches!(t.role, system::PgRole::BackgroundWorker { .. })),
            "{name}: every title of a plain cluster is a known role"
        );
        insta::assert_json_snapshot!(titles);
    });
}

#[test]
fn cgroup_v1() {
    let mut memory = system::CgroupMemory::default();
    insta::glob!(DIR, "cgroup-v1/*.txt", |path| {
        let (bytes, name, _) = read(path);
        assert!(memory.add_file(&name, &bytes), "{name}");
        if name.contains("stat") || name.contains("oom_control") {
            let f = system::parse_flat_keyed(&bytes);
            assert_eq!(f.stats.unrecognized_lines, 0, "{name}");
            insta::assert_json_snapshot!(f);
        } else {
            insta::assert_json_snapshot!(system::parse_cgroup_value(&bytes).unwrap());
        }
    });
    assert!(memory.errors.is_empty(), "{:?}", memory.errors);
    assert_eq!(memory.limit_bytes, Some(512 << 20));
    insta::assert_json_snapshot!("cgroup_v1_memory", memory);
}

#[test]
fn free() {
    insta::glob!(DIR, "free/*.txt", |path| {
        let (bytes, name, _) = read(path);
        let unit_bytes = match name.as_str() {
            "free-b.txt" => 1,
            "free-mt.txt" => 1 << 20,
            _ => 1024,
        };
        let f = system::parse_free(&bytes, &system::FreeOptions { unit_bytes });
        assert!(system::sniff_free(&bytes).is_some(), "{name}");
        assert_eq!(f.stats.unrecognized_lines, 0, "{name}");
        let mem = f.rows.iter().find(|r| r.label == "Mem").unwrap();
        // Every form of the same machine agrees on the RAM size within free's rounding.
        let total = mem.get("total").unwrap() as f64;
        assert!(
            (total / 25_276_510_208.0 - 1.0).abs() < 0.05,
            "{name}: {total}"
        );
        insta::assert_json_snapshot!(f);
    });
}

#[test]
fn df() {
    insta::glob!(DIR, "df/*.txt", |path| {
        let (bytes, name, _) = read(path);
        let df = system::parse_df(&bytes);
        assert!(system::sniff_df(&bytes).is_some(), "{name}");
        assert_eq!(df.stats.unrecognized_lines, 0, "{name}");
        assert!(df.mounted_on("/dev/shm").is_some(), "{name}");
        insta::assert_json_snapshot!(df);
    });
}

#[test]
fn pg_settings() {
    insta::glob!(DIR, "pg_settings/*", |path| {
        let (bytes, name, real) = read(path);
        let s = system::parse_pg_settings(&bytes);
        assert!(system::sniff_pg_settings(&bytes).is_some(), "{name}");
        assert_eq!(s.truncated, name.contains("truncated"), "{name}");
        if real {
            let shared = s.get("shared_buffers").unwrap();
            assert_eq!(shared.bytes, Some(32 << 20), "{name}");
            assert_eq!(s.stats.unrecognized_lines, 0, "{name}");
            assert!(!s.truncated, "{name}");
            if name == "postgres-C.txt" {
                // The collector's `postgres -C` answer: 44 settings, each saying so.
                assert_eq!((s.settings.len(), s.footer_rows), (44, Some(44)), "{name}");
                assert!(
                    s.settings
                        .iter()
                        .all(|x| x.source.as_deref() == Some("postgres -C"))
                );
            } else {
                assert_eq!(s.settings.len(), 354, "{name}");
                if s.form != system::SettingsForm::Csv {
                    assert!(s.footer_rows.is_none_or(|n| n == 354), "{name}");
                }
            }
        }
        insta::assert_json_snapshot!(s);
    });
}

#[test]
fn pg_settings_forms_agree() {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/system/pg_settings");
    let forms: Vec<_> = ["aligned.txt", "unaligned.txt", "settings.csv"]
        .iter()
        .map(|f| system::parse_pg_settings(&std::fs::read(dir.join(f)).unwrap()))
        .collect();
    let strip = |s: &system::PgSettings| -> Vec<_> {
        s.settings
            .iter()
            .map(|r| {
                // The aligned form pads cells: a value's own edge spaces cannot survive it
                // (log_line_prefix '%m [%p] ').
                let setting = r.setting.trim().to_owned();
                (r.name.clone(), setting, r.unit.clone(), r.source.clone())
            })
            .collect()
    };
    assert_eq!(strip(&forms[0]), strip(&forms[1]));
    assert_eq!(strip(&forms[1]), strip(&forms[2]));
}

#[test]
fn postgresql_conf() {
    insta::glob!(DIR, "postgresql_conf/*", |path| {
        let (bytes, name, _) = read(path);
        let conf = system::parse_pg_conf(&bytes);
        assert!(system::sniff_pg_conf(&bytes).is_some(), "{name}");
        assert_eq!(conf.stats.unrecognized_lines, 0, "{name}");
        if name.starts_with("collector-") {
            // The collector's copy: the include_dir followed, the missing include named, and
            // ALTER SYSTEM's work_mem (postgresql.auto.conf) the value that wins.
            assert_eq!(conf.includes.len(), 2, "{name}");
            assert_eq!(conf.not_read.len(), 1, "{name}");
            let work_mem = conf.get("work_mem").unwrap();
            assert_eq!(work_mem.value, "1GB");
            assert_eq!(
                work_mem.host_file.as_deref(),
                Some("/var/lib/postgresql/15/main/postgresql.auto.conf")
            );
        } else {
            assert_eq!(conf.includes.len(), 1, "{name}");
        }
        insta::assert_json_snapshot!(conf);
    });
}

#[test]
fn pg_oom_adjust() {
    insta::glob!(DIR, "oom_adjust/*.txt", |path| {
        let (bytes, name, _) = read(path);
        let adjust = system::parse_pg_oom_adjust(&bytes);
        assert!(system::sniff_pg_oom_adjust(&bytes).is_some(), "{name}");
        assert_eq!(adjust.stats.unrecognized_lines, 0, "{name}");
        assert_eq!(adjust.variables.len(), 2, "{name}");
        insta::assert_json_snapshot!(adjust);
    });
}

#[test]
fn cpu_flags() {
    insta::glob!(DIR, "cpu/flags*.txt", |path| {
        let (bytes, name, _) = read(path);
        let flags = system::parse_cpu_flags(&bytes);
        assert!(system::sniff_cpu_flags(&bytes).is_some(), "{name}");
        assert_eq!(flags.stats.unrecognized_lines, 0, "{name}");
        assert_eq!((flags.line, flags.stats.records), (1, 1), "{name}");
        // The recording VM's CPU has an invariant TSC.
        assert!(
            flags.has("constant_tsc") && flags.has("nonstop_tsc"),
            "{name}"
        );
        insta::assert_json_snapshot!(flags);
    });
}

#[test]
fn limits() {
    insta::glob!(DIR, "limits/*.txt", |path| {
        let (bytes, name, _) = read(path);
        let limits = system::parse_limits(&bytes);
        assert!(system::sniff_limits(&bytes).is_some(), "{name}");
        assert_eq!(limits.stats.unrecognized_lines, 0, "{name}");
        // Every row of the kernel's table (fs/proc/base.c lnames[]: 16 limits).
        assert_eq!(limits.limits.len(), 16, "{name}");
        let nproc = limits.get("Max processes").unwrap();
        assert_eq!(
            (nproc.soft, nproc.hard),
            (Some(96365), Some(96365)),
            "{name}"
        );
        let address = limits.get("Max address space").unwrap();
        assert_eq!((address.soft, address.hard), (None, None), "{name}");
        insta::assert_json_snapshot!(limits);
    });
}

#[test]
fn ps_listings() {
    insta::glob!(DIR, "ps/*.txt", |path| {
        let (bytes, name, _) = read(path);
        let ps = system::parse_ps(&bytes);
        assert!(system::sniff_ps(&bytes).is_some(), "{name}");
        assert_eq!(ps.stats.unrecognized_lines, 0, "{name}: {:?}", ps.stats);
        assert!(ps.rows.len() >= 5, "{name}");
        // Every listing shows the postmaster's processes with a pid.
        assert!(
            ps.processes().any(|r| r
                .command
                .as_deref()
                .is_some_and(|c| c.starts_with("postgres: "))
                || r.comm.as_deref() == Some("postgres")),
            "{name}"
        );
        insta::assert_json_snapshot!(ps);
    });
}

#[test]
fn postmaster_opts() {
    insta::glob!(DIR, "postmaster_opts/*.txt", |path| {
        let (bytes, name, _) = read(path);
        let cmd = system::parse_postmaster_opts(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(cmd.data_directory.is_some(), "{name}");
        insta::assert_json_snapshot!(cmd);
    });
}

#[test]
fn command_outputs() {
    let file = |name: &str| {
        let dir =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/system/commands");
        std::fs::read(dir.join(name)).unwrap()
    };
    // `date` (the host's zone is UTC) and `date --utc`, run one after the other (sos ran them
    // across a second's turn).
    let date = system::parse_date(&file("date.txt")).unwrap();
    let utc = system::parse_date(&file("date-utc.txt")).unwrap();
    let gap = utc.at.as_second() - date.at.as_second();
    assert!((0..=1).contains(&gap), "{gap}");
    assert!(date.whole_seconds);
    let uptime = system::parse_uptime_command(&file("uptime.txt")).unwrap();
    assert!(uptime.seconds > 0 && uptime.load_average.is_some());
    assert_eq!(system::parse_hostname(&file("hostname.txt")).unwrap(), "vm");
    assert_eq!(
        system::parse_pg_version_file(&file("pg-version.txt"))
            .unwrap()
            .major,
        15
    );
    let uname = system::parse_uname(&file("uname.txt")).unwrap();
    assert_eq!(uname.hostname, "vm");
    insta::assert_json_snapshot!((date, uptime, uname));
}
