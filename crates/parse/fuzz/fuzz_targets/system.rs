//! Fuzzes every /proc, /sys, tool-output and PostgreSQL-settings parser with arbitrary bytes:
//! none may panic, and every sniff confidence stays within 0–1. Seed it with the samples:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run system corpus/system ../../../fixtures/formats/system`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem_parse::system::{self, FreeOptions};

fuzz_target!(|data: &[u8]| {
    let _ = system::parse_cgroup_value(data);
    let _ = system::parse_oom_score_adj(data);
    let _ = system::parse_count(data);
    let _ = system::parse_clocksource(data);
    let _ = system::parse_virt(data);
    let _ = system::parse_uname(data);
    let _ = system::parse_os_release_name(data);
    let _ = system::parse_cpu_flags(data);
    let _ = system::parse_vulnerabilities(data);
    let _ = system::parse_version_text(data);
    let _ = system::parse_pipe_table(data);
    let _ = system::parse_audit_rules(data);
    let _ = system::parse_meminfo(data);
    let _ = system::parse_flat_keyed(data);
    let _ = system::parse_status(data);
    let _ = system::parse_smaps_rollup(data);
    let _ = system::parse_limits(data);
    let _ = system::parse_pg_oom_adjust(data);
    let _ = system::parse_systemctl_show(data);
    let settings = system::parse_pg_settings(data);
    let _ = settings.get("work_mem");
    let conf = system::parse_pg_conf(data);
    let _ = conf.get("shared_buffers");
    let _ = system::parse_sysctl(data);
    let _ = system::parse_proc_sys_file("vm/overcommit_memory", data);
    let _ = system::parse_choice(data);
    let (titles, stats) = system::parse_titles(data);
    assert!(titles.len() as u64 <= stats.lines);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = system::parse_title(text);
    }
    let unit_bytes = data.first().map_or(1024, |b| u64::from(*b).max(1));
    let _ = system::parse_free(data, &FreeOptions { unit_bytes });
    let _ = system::parse_df(data);
    let mounts = system::parse_mountinfo(data);
    let _ = mounts.mount_of("/var/lib/postgresql/15/main");
    let _ = system::parse_storage_paths(data);
    let _ = system::parse_wal_directory(data);
    let _ = system::parse_replication_slots(data);
    let _ = system::parse_archiver(data).failing();
    let _ = system::parse_database_xid_ages(data).oldest_xid();
    let _ = system::parse_checksum_failures(data);
    let _ = system::parse_uptime(data);
    let _ = system::parse_date(data);
    let _ = system::parse_btime(data);
    for sniff in [
        system::sniff_cgroup_events,
        system::sniff_cgroup_stat,
        system::sniff_cpu_flags,
        system::sniff_meminfo,
        system::sniff_vmstat,
        system::sniff_pg_conf,
        system::sniff_status,
        system::sniff_smaps_rollup,
        system::sniff_limits,
        system::sniff_pg_oom_adjust,
        system::sniff_systemctl_show,
        system::sniff_pg_settings,
        system::sniff_sysctl,
        system::sniff_choice,
        system::sniff_free,
        system::sniff_df,
        system::sniff_mountinfo,
    ] {
        if let Some(confidence) = sniff(data) {
            assert!((0.0..=1.0).contains(&confidence), "{confidence}");
        }
    }
});
