//! Line and record counts of the snapshot kinds, for the report's list of sources.

use pgmortem_parse::ParseStats;
use pgmortem_parse::system;

use crate::kind::SourceKind;
use crate::manifest::Manifest;

/// Parses a snapshot source just to say how much of it was understood: lines, records (fields,
/// rows, settings), unrecognised lines. `None` for kinds that are not snapshots (logs have
/// their own parsers) and for [`SourceKind::Unknown`].
pub fn snapshot_stats(kind: SourceKind, bytes: &[u8]) -> Option<ParseStats> {
    let whole = |records: u64, ok: bool| {
        let lines = pgmortem_parse::lines::Lines::new(bytes).count() as u64;
        let mut stats = ParseStats {
            lines,
            records,
            ..ParseStats::default()
        };
        if !ok {
            let first = pgmortem_parse::lines::Lines::new(bytes)
                .next()
                .map(|l| l.text.into_owned())
                .unwrap_or_default();
            stats.unrecognized(1, &first);
            stats.unrecognized_lines = lines.max(1);
        }
        stats
    };
    Some(match kind {
        SourceKind::Meminfo => system::parse_meminfo(bytes).stats,
        SourceKind::Vmstat | SourceKind::CgroupStat | SourceKind::CgroupEvents => {
            system::parse_flat_keyed(bytes).stats
        }
        SourceKind::Sysctl => system::parse_sysctl(bytes).stats,
        SourceKind::ThpSetting => {
            let c = system::parse_choice(bytes);
            whole(1, c.selected.is_some() || !c.raw.is_empty())
        }
        SourceKind::ProcStatus => system::parse_status(bytes).stats,
        SourceKind::SmapsRollup => system::parse_smaps_rollup(bytes).stats,
        SourceKind::ProcessTitles => system::parse_titles(bytes).1,
        SourceKind::CgroupValue => whole(1, system::parse_cgroup_value(bytes).is_ok()),
        SourceKind::Free => system::parse_free(bytes, &system::FreeOptions::default()).stats,
        SourceKind::Df => system::parse_df(bytes).stats,
        SourceKind::PgSettings => system::parse_pg_settings(bytes).stats,
        SourceKind::PgConf => system::parse_pg_conf(bytes).stats,
        SourceKind::OomScoreAdj => whole(1, system::parse_oom_score_adj(bytes).is_ok()),
        SourceKind::ProcLimits => system::parse_limits(bytes).stats,
        SourceKind::CpuFlags => system::parse_cpu_flags(bytes).stats,
        SourceKind::Clocksource => whole(1, system::parse_clocksource(bytes).is_ok()),
        SourceKind::SubtransFiles => whole(1, system::parse_count(bytes).is_ok()),
        SourceKind::PgVersion => whole(1, system::parse_version_text(bytes).is_ok()),
        SourceKind::CpuVulnerabilities => system::parse_vulnerabilities(bytes).stats,
        SourceKind::PgActivity => system::parse_pipe_table(bytes).stats,
        SourceKind::AuditStatus => system::parse_flat_keyed(bytes).stats,
        SourceKind::AuditRules => system::parse_audit_rules(bytes).stats,
        SourceKind::PgOomAdjust => system::parse_pg_oom_adjust(bytes).stats,
        SourceKind::SystemdUnit => system::parse_systemctl_show(bytes).stats,
        SourceKind::ProcessList => {
            // `ps m` thread lines are understood, not counted as records.
            system::parse_ps(bytes).stats
        }
        SourceKind::PostmasterOpts => whole(1, system::parse_postmaster_opts(bytes).is_ok()),
        SourceKind::PgVersionFile => whole(1, system::parse_pg_version_file(bytes).is_ok()),
        SourceKind::SysctlValue => whole(1, true),
        SourceKind::Hostname => whole(1, system::parse_hostname(bytes).is_ok()),
        SourceKind::Uname => whole(1, system::parse_uname(bytes).is_some()),
        SourceKind::OsRelease => whole(1, system::parse_os_release_name(bytes).is_some()),
        SourceKind::Virtualization => whole(1, system::parse_virt(bytes).is_ok()),
        SourceKind::ProcCgroup => whole(
            1,
            system::memory_cgroup_path(&String::from_utf8_lossy(bytes)).is_some(),
        ),
        SourceKind::StoragePaths => system::parse_storage_paths(bytes).stats,
        SourceKind::Mountinfo => system::parse_mountinfo(bytes).stats,
        SourceKind::WalDirectory => system::parse_wal_directory(bytes).stats,
        SourceKind::ReplicationSlots => system::parse_replication_slots(bytes).stats,
        SourceKind::Archiver => system::parse_archiver(bytes).stats,
        SourceKind::DatabaseXidAges => system::parse_database_xid_ages(bytes).stats,
        SourceKind::ChecksumFailures => system::parse_checksum_failures(bytes).stats,
        SourceKind::Tablespaces => system::parse_pipe_table(bytes).stats,
        SourceKind::PodDescribe => pgmortem_parse::kube::parse_describe(bytes).stats,
        SourceKind::PodManifest => pgmortem_parse::kube::parse_manifests(bytes).stats,
        SourceKind::Manifest => match Manifest::parse(bytes) {
            Some(m) => whole(m.files.len() as u64, true),
            None => whole(0, false),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_for_snapshot_kinds_only() {
        let s = snapshot_stats(SourceKind::Meminfo, b"MemTotal: 1 kB\nbad line\n").unwrap();
        assert_eq!((s.lines, s.records, s.unrecognized_lines), (2, 1, 1));
        let s = snapshot_stats(SourceKind::CgroupValue, b"max\n").unwrap();
        assert_eq!((s.records, s.unrecognized_lines), (1, 0));
        let s = snapshot_stats(SourceKind::CgroupValue, b"oops\n").unwrap();
        assert_eq!(s.unrecognized_lines, 1);
        assert!(snapshot_stats(SourceKind::KernelLog, b"x").is_none());
    }
}
