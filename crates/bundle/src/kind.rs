//! Recognising a file's kind: from the collector's manifest, else from its path, else from its
//! first bytes.

use pgmortem_parse::{kernel, kube, patroni, perf, pgbackrest, pgbouncer, pglog, system};
use serde::Serialize;

/// What a bundle file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SourceKind {
    /// A kernel log in any of its printed forms (dmesg, journalctl -k, kern.log, …).
    KernelLog,
    /// A PostgreSQL server log (stderr format).
    PostgresLog,
    /// A system log holding both the kernel's lines and PostgreSQL's (a journal export or
    /// short form, `/var/log/messages`, `syslog`): read by both the kernel and the PostgreSQL
    /// readers, each counting the other's lines as another program's.
    SystemLog,
    /// A pgbouncer log (its own log file, or its lines through syslog or the journal).
    PgbouncerLog,
    /// A Patroni log (its `log.dir` file, or its lines on a container's standard streams).
    PatroniLog,
    /// A pgBackRest log file (`STANZA-COMMAND.log` of its `log-path`).
    PgbackrestLog,
    /// `perf script` text output.
    PerfScript,
    /// `/proc/uptime`.
    Uptime,
    /// A UTC wall-clock reading (`date -u +%Y-%m-%dT%H:%M:%S.%NZ`).
    Date,
    /// `/proc/stat` or its `btime` line: the boot time in epoch seconds.
    Btime,
    /// `/proc/meminfo`.
    Meminfo,
    /// `/proc/vmstat`.
    Vmstat,
    /// `sysctl` output or `grep -r . /proc/sys/vm` output.
    Sysctl,
    /// A bracketed choice file of /sys/kernel/mm/transparent_hugepage.
    ThpSetting,
    /// `/proc/PID/status`.
    ProcStatus,
    /// `/proc/PID/smaps_rollup`.
    SmapsRollup,
    /// PostgreSQL process titles (`ps -o pid,args` of postgres processes, or one cmdline).
    ProcessTitles,
    /// A single-value memory cgroup file (`memory.max`, `memory.limit_in_bytes`, …).
    CgroupValue,
    /// A cgroup `memory.stat`.
    CgroupStat,
    /// A cgroup `memory.events` (v2) or `memory.oom_control` (v1).
    CgroupEvents,
    /// `free` output.
    Free,
    /// `df` output.
    Df,
    /// A `pg_settings` dump.
    PgSettings,
    /// A `postgresql.conf`.
    PgConf,
    /// `/proc/PID/oom_score_adj`.
    OomScoreAdj,
    /// `/proc/PID/limits`.
    ProcLimits,
    /// `/sys/devices/system/cpu/vulnerabilities/*` (`grep -r .` of the directory).
    CpuVulnerabilities,
    /// The CPU's feature flags (`grep -m 1 '^flags' /proc/cpuinfo`).
    CpuFlags,
    /// The current clock source (`/sys/devices/system/clocksource/clocksource0/current_clocksource`).
    Clocksource,
    /// How many segment files `pg_subtrans` holds (`ls pg_subtrans | wc -l`).
    SubtransFiles,
    /// `SELECT version(), …` as psql `-At` prints it.
    PgVersion,
    /// A `pg_stat_activity` summary by state and wait event (psql `-A`, with header).
    PgActivity,
    /// `auditctl -s`.
    AuditStatus,
    /// `auditctl -l`.
    AuditRules,
    /// The postmaster's `PG_OOM_ADJUST_FILE` and `PG_OOM_ADJUST_VALUE` (`NAME=VALUE` or `unset
    /// NAME`, `processes/PID/pg-oom-adjust.txt`).
    PgOomAdjust,
    /// The postmaster's systemd unit (`systemctl show -p Id -p OOMScoreAdjust UNIT`,
    /// `processes/PID/systemd-unit.txt`).
    SystemdUnit,
    /// A `ps` listing with its header (`ps auxwww`, `ps alxwww`, `ps -elfL`, `ps axo …`): the
    /// postmaster and its children, their RSS, start and memory cgroup.
    ProcessList,
    /// `postmaster.opts`: the postmaster's command line (program, data directory, port,
    /// configuration file).
    PostmasterOpts,
    /// A data directory's `PG_VERSION`: the major version.
    PgVersionFile,
    /// One `/proc/sys` file (`proc/sys/vm/overcommit_memory`): one setting, its path the key.
    SysctlValue,
    /// The `hostname` command's output (or `/etc/hostname`).
    Hostname,
    /// `uname -a`.
    Uname,
    /// `/etc/os-release`.
    OsRelease,
    /// `systemd-detect-virt`'s answer.
    Virtualization,
    /// `/proc/PID/cgroup`: the process's cgroup in each hierarchy.
    ProcCgroup,
    /// `kubectl describe pod` output: each container's state, last termination (`OOMKilled`,
    /// exit code 137), restart count and memory limit.
    PodDescribe,
    /// Pod manifests, YAML or JSON (`kubectl get pod -o yaml|json`, an operator report's pod
    /// list): the same, from `status.containerStatuses` and `spec.containers[].resources`.
    PodManifest,
    /// The collector's list of PostgreSQL's places (`storage/paths.txt`: `ROLE<TAB>PATH` for the
    /// data directory, pg_wal, each tablespace, the log directory).
    StoragePaths,
    /// `/proc/PID/mountinfo` lines: each mount's point, options, file system type, source and
    /// super-block options.
    Mountinfo,
    /// pg_wal's segments counted from its listing, with the archiver's `.ready` and `.done`
    /// markers (`storage/pg_wal.txt`: `KEY VALUE` lines).
    WalDirectory,
    /// `pg_replication_slots` with the WAL each slot retains (psql `-A`, with header).
    ReplicationSlots,
    /// `pg_stat_archiver` (psql `-A`, with header).
    Archiver,
    /// The age of `datfrozenxid` and `datminmxid` per database (psql `-A`, with header).
    DatabaseXidAges,
    /// Data checksum failures per database from `pg_stat_database` (12+; psql `-A`, with
    /// header).
    ChecksumFailures,
    /// `pg_tablespace` with each location (psql `-A`, with header): collected, not read by any
    /// rule yet.
    Tablespaces,
    /// The journal of the server's systemd unit (`journalctl -u UNIT -o short-precise`, the last
    /// lines): systemd's own lines on the unit's main process. Collected, not read yet.
    UnitJournal,
    /// What a collector wrote about its own run (sos's `sos_logs/`, `sos_reports/`,
    /// `version.txt`): listed, never read as a PostgreSQL or kernel log.
    CollectorLog,
    /// The collector's `manifest.json`.
    Manifest,
    /// A file the collector keeps for a person to read (`uname -a`, os-release, `id`, the `ps`
    /// listing, buddyinfo, a process's cgroup, the perf build ids, …): listed with the bundle's
    /// sources, read by no rule.
    Reference,
    /// Nothing pgmortem reads (yet); listed in the report, not dropped.
    Unknown,
}

/// What pgmortem looks for in a bundle, in a sentence: what an input that holds none of it is
/// told ("nothing pgmortem can read in …").
pub const WHAT_IS_READ: &str = "PostgreSQL server logs (stderr, csvlog, jsonlog, syslog), kernel \
    logs (dmesg, journalctl -k, kern.log) and system journals, pgbouncer, Patroni and pgBackRest \
    logs, perf script output, and snapshots of the host and the server (/proc/meminfo, sysctls, \
    cgroup memory files, pg_settings, postgresql.conf, df, ps); loose, in a directory or in an \
    archive, collectors' bundles (pgmortem's, sosreport, CloudNativePG, Crunchy) included";

/// Every kind, for listing and name lookups.
const ALL: &[SourceKind] = &[
    SourceKind::KernelLog,
    SourceKind::PostgresLog,
    SourceKind::SystemLog,
    SourceKind::PgbouncerLog,
    SourceKind::PatroniLog,
    SourceKind::PgbackrestLog,
    SourceKind::PerfScript,
    SourceKind::Uptime,
    SourceKind::Date,
    SourceKind::Btime,
    SourceKind::Meminfo,
    SourceKind::Vmstat,
    SourceKind::Sysctl,
    SourceKind::ThpSetting,
    SourceKind::ProcStatus,
    SourceKind::SmapsRollup,
    SourceKind::ProcessTitles,
    SourceKind::CgroupValue,
    SourceKind::CgroupStat,
    SourceKind::CgroupEvents,
    SourceKind::Free,
    SourceKind::Df,
    SourceKind::PgSettings,
    SourceKind::PgConf,
    SourceKind::OomScoreAdj,
    SourceKind::ProcLimits,
    SourceKind::CpuVulnerabilities,
    SourceKind::CpuFlags,
    SourceKind::Clocksource,
    SourceKind::SubtransFiles,
    SourceKind::PgVersion,
    SourceKind::PgActivity,
    SourceKind::AuditStatus,
    SourceKind::AuditRules,
    SourceKind::PgOomAdjust,
    SourceKind::SystemdUnit,
    SourceKind::ProcessList,
    SourceKind::PostmasterOpts,
    SourceKind::PgVersionFile,
    SourceKind::SysctlValue,
    SourceKind::Hostname,
    SourceKind::Uname,
    SourceKind::OsRelease,
    SourceKind::Virtualization,
    SourceKind::ProcCgroup,
    SourceKind::PodDescribe,
    SourceKind::PodManifest,
    SourceKind::StoragePaths,
    SourceKind::Mountinfo,
    SourceKind::WalDirectory,
    SourceKind::ReplicationSlots,
    SourceKind::Archiver,
    SourceKind::DatabaseXidAges,
    SourceKind::ChecksumFailures,
    SourceKind::Tablespaces,
    SourceKind::UnitJournal,
    SourceKind::CollectorLog,
    SourceKind::Manifest,
    SourceKind::Reference,
    SourceKind::Unknown,
];

impl SourceKind {
    /// The snake_case name used in reports and in the collector's manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::KernelLog => "kernel_log",
            SourceKind::PostgresLog => "postgres_log",
            SourceKind::SystemLog => "system_log",
            SourceKind::PgbouncerLog => "pgbouncer_log",
            SourceKind::PatroniLog => "patroni_log",
            SourceKind::PgbackrestLog => "pgbackrest_log",
            SourceKind::PerfScript => "perf_script",
            SourceKind::Uptime => "uptime",
            SourceKind::Date => "date",
            SourceKind::Btime => "btime",
            SourceKind::Meminfo => "meminfo",
            SourceKind::Vmstat => "vmstat",
            SourceKind::Sysctl => "sysctl",
            SourceKind::ThpSetting => "thp_setting",
            SourceKind::ProcStatus => "proc_status",
            SourceKind::SmapsRollup => "smaps_rollup",
            SourceKind::ProcessTitles => "process_titles",
            SourceKind::CgroupValue => "cgroup_value",
            SourceKind::CgroupStat => "cgroup_stat",
            SourceKind::CgroupEvents => "cgroup_events",
            SourceKind::Free => "free",
            SourceKind::Df => "df",
            SourceKind::PgSettings => "pg_settings",
            SourceKind::PgConf => "pg_conf",
            SourceKind::OomScoreAdj => "oom_score_adj",
            SourceKind::ProcLimits => "proc_limits",
            SourceKind::CpuVulnerabilities => "cpu_vulnerabilities",
            SourceKind::CpuFlags => "cpu_flags",
            SourceKind::Clocksource => "clocksource",
            SourceKind::SubtransFiles => "subtrans_files",
            SourceKind::PgVersion => "pg_version",
            SourceKind::PgActivity => "pg_activity",
            SourceKind::AuditStatus => "audit_status",
            SourceKind::AuditRules => "audit_rules",
            SourceKind::PgOomAdjust => "pg_oom_adjust",
            SourceKind::SystemdUnit => "systemd_unit",
            SourceKind::ProcessList => "process_list",
            SourceKind::PostmasterOpts => "postmaster_opts",
            SourceKind::PgVersionFile => "pg_version_file",
            SourceKind::SysctlValue => "sysctl_value",
            SourceKind::Hostname => "hostname",
            SourceKind::Uname => "uname",
            SourceKind::OsRelease => "os_release",
            SourceKind::Virtualization => "virtualization",
            SourceKind::ProcCgroup => "proc_cgroup",
            SourceKind::PodDescribe => "pod_describe",
            SourceKind::PodManifest => "pod_manifest",
            SourceKind::StoragePaths => "storage_paths",
            SourceKind::Mountinfo => "mountinfo",
            SourceKind::WalDirectory => "wal_directory",
            SourceKind::ReplicationSlots => "replication_slots",
            SourceKind::Archiver => "archiver",
            SourceKind::DatabaseXidAges => "database_xid_ages",
            SourceKind::ChecksumFailures => "checksum_failures",
            SourceKind::Tablespaces => "tablespaces",
            SourceKind::UnitJournal => "unit_journal",
            SourceKind::CollectorLog => "collector_log",
            SourceKind::Manifest => "manifest",
            SourceKind::Reference => "reference",
            SourceKind::Unknown => "unknown",
        }
    }

    /// Whether the collector gathers this kind for diagnoses to come, while pgmortem does not
    /// read it yet: listed as collected and not read, never as unknown.
    pub fn collected_not_read(self) -> bool {
        matches!(self, SourceKind::UnitJournal)
    }

    /// Whether pgmortem reads anything of this kind: every kind but [`SourceKind::Unknown`],
    /// what a collector writes about itself ([`SourceKind::CollectorLog`],
    /// [`SourceKind::Manifest`]), files kept for a person ([`SourceKind::Reference`]) and kinds
    /// collected but not read yet ([`SourceKind::collected_not_read`]). A bundle with no file of
    /// such a kind has nothing to diagnose.
    pub fn is_read(self) -> bool {
        !matches!(
            self,
            SourceKind::Unknown
                | SourceKind::CollectorLog
                | SourceKind::Manifest
                | SourceKind::Reference
        ) && !self.collected_not_read()
    }

    /// The kind named `name` (as [`SourceKind::as_str`] prints it).
    pub fn from_name(name: &str) -> Option<SourceKind> {
        ALL.iter().copied().find(|k| k.as_str() == name)
    }
}

/// Recognises a file's kind from its first bytes (a few KiB are enough). The small exact forms
/// are tried first, then the most confident sniffer wins; ties go to the earlier in the list.
pub fn recognize(head: &[u8]) -> SourceKind {
    if system::parse_uptime(head).is_ok() || system::parse_uptime_command(head).is_ok() {
        return SourceKind::Uptime;
    }
    if system::parse_date(head).is_ok() {
        return SourceKind::Date;
    }
    if system::parse_btime(head).is_ok() {
        return SourceKind::Btime;
    }
    if head.starts_with(b"{") && head.windows(16).any(|w| w == b"\"pgmortem.bundle") {
        return SourceKind::Manifest;
    }
    if kernel::sniff_system_log(head) {
        return SourceKind::SystemLog;
    }
    let candidates = [
        (SourceKind::KernelLog, kernel::sniff(head)),
        (SourceKind::PostgresLog, pglog::sniff(head)),
        (SourceKind::PgbouncerLog, pgbouncer::sniff(head)),
        (SourceKind::PatroniLog, patroni::sniff(head)),
        (SourceKind::PgbackrestLog, pgbackrest::sniff(head)),
        (SourceKind::PerfScript, perf::sniff(head)),
        (SourceKind::Meminfo, system::sniff_meminfo(head)),
        (SourceKind::Vmstat, system::sniff_vmstat(head)),
        (SourceKind::ProcStatus, system::sniff_status(head)),
        (SourceKind::SmapsRollup, system::sniff_smaps_rollup(head)),
        (SourceKind::CgroupEvents, system::sniff_cgroup_events(head)),
        (SourceKind::CgroupStat, system::sniff_cgroup_stat(head)),
        (SourceKind::Sysctl, system::sniff_sysctl(head)),
        (SourceKind::ThpSetting, system::sniff_choice(head)),
        (SourceKind::Free, system::sniff_free(head)),
        (SourceKind::Df, system::sniff_df(head)),
        (SourceKind::PgSettings, system::sniff_pg_settings(head)),
        (SourceKind::PgConf, system::sniff_pg_conf(head)),
        (SourceKind::ProcessTitles, sniff_titles(head)),
        (SourceKind::CpuVulnerabilities, sniff_vulnerabilities(head)),
        (SourceKind::CpuFlags, system::sniff_cpu_flags(head)),
        (SourceKind::ProcLimits, system::sniff_limits(head)),
        (SourceKind::PgVersion, sniff_version(head)),
        (SourceKind::PgOomAdjust, system::sniff_pg_oom_adjust(head)),
        (SourceKind::SystemdUnit, system::sniff_systemctl_show(head)),
        (SourceKind::ProcessList, system::sniff_ps(head)),
        (SourceKind::PostmasterOpts, sniff_postmaster_opts(head)),
        (SourceKind::Mountinfo, system::sniff_mountinfo(head)),
        (SourceKind::PodDescribe, kube::sniff_describe(head)),
        (SourceKind::PodManifest, kube::sniff_manifest(head)),
    ];
    candidates
        .into_iter()
        .filter_map(|(kind, confidence)| confidence.map(|c| (kind, c)))
        .fold(None::<(SourceKind, f32)>, |best, (kind, c)| match best {
            Some((_, b)) if b >= c => best,
            _ => Some((kind, c)),
        })
        .map_or(SourceKind::Unknown, |(kind, _)| kind)
}

/// Titles: every non-blank line is a PostgreSQL process title, at least one `postgres: ` one.
pub(crate) fn sniff_titles(head: &[u8]) -> Option<f32> {
    let (titles, stats) = system::parse_titles(head);
    let any_child = titles.iter().any(|t| t.title.starts_with("postgres: "));
    (any_child && stats.unrecognized_lines == 0).then_some(0.7)
}

/// CPU vulnerability listings: every line a `…/cpu/vulnerabilities/NAME:status` line.
fn sniff_vulnerabilities(head: &[u8]) -> Option<f32> {
    let v = system::parse_vulnerabilities(head);
    let all_paths = pgmortem_parse::lines::Lines::new(head)
        .filter(|l| !l.text.trim().is_empty())
        .all(|l| l.text.contains("/cpu/vulnerabilities/"));
    (v.stats.records > 0 && v.stats.unrecognized_lines == 0 && all_paths).then_some(0.95)
}

/// `postmaster.opts`: a postgres program followed by quoted arguments, one `-D` among them.
fn sniff_postmaster_opts(head: &[u8]) -> Option<f32> {
    let cmd = system::parse_postmaster_opts(head).ok()?;
    (cmd.data_directory.is_some() && head.windows(2).any(|w| w == b" \"")).then_some(0.9)
}

/// `SELECT version()` output: `PostgreSQL 15.18 … on …`.
fn sniff_version(head: &[u8]) -> Option<f32> {
    let first = head.split(|&b| b == b'\n').next()?;
    (first.starts_with(b"PostgreSQL ") && system::parse_version_text(head).is_ok()).then_some(0.9)
}

/// The kind a file's path implies, for the names the collector and common tools use
/// (`proc/meminfo`, `proc/1234/status`, `memory.max`, `pg_settings.csv`, `postmaster.opts`, …):
/// what a bundle of no known collector's layout (files from anywhere) is read by, before its
/// content. `None` when the path says nothing; content sniffing decides then. A bundle whose
/// layout is known is read by that layout's table first ([`crate::Layout`]).
pub fn kind_from_path(path: &str) -> Option<SourceKind> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name
        .strip_suffix(".txt")
        .or_else(|| name.strip_suffix(".out"))
        .unwrap_or(name);
    if is_pgbouncer_log_name(name) {
        return Some(SourceKind::PgbouncerLog);
    }
    // The readings of the host's identity that the report names, wherever they are.
    match stem {
        "uname" => return Some(SourceKind::Uname),
        "os-release" => return Some(SourceKind::OsRelease),
        "hostname" => return Some(SourceKind::Hostname),
        "virt" if path.contains("identity") => return Some(SourceKind::Virtualization),
        "cgroup" if pid_dir(path) => return Some(SourceKind::ProcCgroup),
        _ => {}
    }
    if is_reference(path) {
        return Some(SourceKind::Reference);
    }
    if path.starts_with("proc/sys/") || path.contains("/proc/sys/") {
        return Some(SourceKind::SysctlValue);
    }
    let kind = match stem {
        "manifest.json" => SourceKind::Manifest,
        "kern.log" => SourceKind::KernelLog,
        "messages" | "syslog" if path.starts_with("kernel/") => SourceKind::KernelLog,
        "meminfo" => SourceKind::Meminfo,
        "vmstat" if path.contains("proc") => SourceKind::Vmstat,
        "status" if path.contains("audit") => SourceKind::AuditStatus,
        "status" if path.contains("proc") || path.contains("pid") => SourceKind::ProcStatus,
        "smaps_rollup" => SourceKind::SmapsRollup,
        "uptime" => SourceKind::Uptime,
        "memory.stat" => SourceKind::CgroupStat,
        "memory.events" | "memory.oom_control" => SourceKind::CgroupEvents,
        "memory.max"
        | "memory.high"
        | "memory.current"
        | "memory.peak"
        | "memory.swap.max"
        | "memory.swap.current"
        | "memory.limit_in_bytes"
        | "memory.usage_in_bytes"
        | "memory.max_usage_in_bytes"
        | "memory.failcnt"
        | "memory.memsw.limit_in_bytes"
        | "memory.memsw.usage_in_bytes" => SourceKind::CgroupValue,
        "postgresql.conf" | "postgresql.auto.conf" => SourceKind::PgConf,
        "postmaster.opts" => SourceKind::PostmasterOpts,
        "PG_VERSION" => SourceKind::PgVersionFile,
        "pg_settings" | "pg_settings.csv" | "pg_settings-postgres-C" => SourceKind::PgSettings,
        "oom_score_adj" => SourceKind::OomScoreAdj,
        "limits" if path.contains("proc") || path.contains("pid") => SourceKind::ProcLimits,
        "flags" if path.contains("cpu") => SourceKind::CpuFlags,
        "vulnerabilities" => SourceKind::CpuVulnerabilities,
        "clocksource" | "current_clocksource" => SourceKind::Clocksource,
        "pg_subtrans-files" => SourceKind::SubtransFiles,
        "version" if path.contains("postgres") => SourceKind::PgVersion,
        "activity-summary" => SourceKind::PgActivity,
        "rules" if path.contains("audit") => SourceKind::AuditRules,
        "pg-oom-adjust" => SourceKind::PgOomAdjust,
        "systemd-unit" => SourceKind::SystemdUnit,
        "mountinfo" => SourceKind::Mountinfo,
        "replication-slots" => SourceKind::ReplicationSlots,
        "database-xid-ages" => SourceKind::DatabaseXidAges,
        _ => return None,
    };
    Some(kind)
}

/// `pgbouncer.log`, `pgbouncer-main.log`, and their rotations (`pgbouncer.log.1`): the names
/// pgbouncer's `logfile` is given (Debian's `/var/log/postgresql/pgbouncer.log`).
fn is_pgbouncer_log_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("pgbouncer") else {
        return false;
    };
    match rest.rfind(".log") {
        Some(at) => {
            let after = &rest[at + 4..];
            after.is_empty()
                || after
                    .strip_prefix('.')
                    .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        }
        None => false,
    }
}

/// The collector's files kept for a person to read: no rule reads them (see
/// [`SourceKind::Reference`]).
const REFERENCE_FILES: &[&str] = &[
    "memory/buddyinfo.txt",
    "memory/hugepages.txt",
    "perf/buildids.txt",
    "perf/kptr_restrict.txt",
    "perf/perf-record.txt",
    "perf/perf-record-cpu-clock.txt",
    "perf/perf_event_paranoid.txt",
    "postgres/activity.txt",
    "postgres/database-ages.txt",
    "postgres/hba-summary.txt",
    "postgres/subtrans-sql.txt",
    "processes/ps.txt",
    // `pgmortem redact`'s account of a redacted copy (its counts and the files not copied,
    // whose reasons may quote a log line: never to be read as a log).
    "redaction.json",
];

/// Whether `path` (relative to the bundle root) is one of the collector's files for people,
/// or the redaction's account.
fn is_reference(path: &str) -> bool {
    path.starts_with("identity/") || REFERENCE_FILES.contains(&path)
}

/// Whether the file sits in a pid's directory (`processes/7725/cgroup`, `proc/7725/cgroup`).
fn pid_dir(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    parts.next();
    parts
        .next()
        .is_some_and(|pid| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_collectors_files_for_people_are_references() {
        for path in [
            "identity/id.txt",
            "processes/ps.txt",
            "memory/buddyinfo.txt",
            "redaction.json",
        ] {
            assert_eq!(kind_from_path(path), Some(SourceKind::Reference), "{path}");
        }
        // The identity readings the report names, and a process's cgroup, have kinds.
        assert_eq!(
            kind_from_path("identity/uname.txt"),
            Some(SourceKind::Uname)
        );
        assert_eq!(kind_from_path("uname.txt"), Some(SourceKind::Uname));
        assert_eq!(
            kind_from_path("identity/os-release.txt"),
            Some(SourceKind::OsRelease)
        );
        assert_eq!(
            kind_from_path("identity/virt.txt"),
            Some(SourceKind::Virtualization)
        );
        assert_eq!(
            kind_from_path("processes/7725/cgroup"),
            Some(SourceKind::ProcCgroup)
        );
        assert_eq!(
            kind_from_path("proc/7725/cgroup"),
            Some(SourceKind::ProcCgroup)
        );
        assert_eq!(kind_from_path("sys/fs/cgroup"), None);
        assert_eq!(
            kind_from_path("host/proc/sys/vm/swappiness"),
            Some(SourceKind::SysctlValue)
        );
        assert_eq!(
            kind_from_path("data/postmaster.opts"),
            Some(SourceKind::PostmasterOpts)
        );
        assert_eq!(
            kind_from_path("data/PG_VERSION"),
            Some(SourceKind::PgVersionFile)
        );
        assert_eq!(
            kind_from_path("processes/7725/status"),
            Some(SourceKind::ProcStatus)
        );
        assert_eq!(kind_from_path("elsewhere/ps.txt"), None);
    }

    #[test]
    fn names_round_trip() {
        for kind in ALL {
            assert_eq!(SourceKind::from_name(kind.as_str()), Some(*kind));
        }
        assert_eq!(SourceKind::from_name("nope"), None);
    }

    #[test]
    fn paths_that_name_their_kind() {
        assert_eq!(
            kind_from_path("proc/meminfo.txt"),
            Some(SourceKind::Meminfo)
        );
        assert_eq!(kind_from_path("postgres/1234/status"), None);
        assert_eq!(
            kind_from_path("proc/1234/status"),
            Some(SourceKind::ProcStatus)
        );
        assert_eq!(
            kind_from_path("cgroup/memory.max"),
            Some(SourceKind::CgroupValue)
        );
        assert_eq!(
            kind_from_path("cgroup/1234/memory.high"),
            Some(SourceKind::CgroupValue)
        );
        assert_eq!(kind_from_path("notes.txt"), None);
        assert_eq!(
            kind_from_path("processes/1234/oom_score_adj"),
            Some(SourceKind::OomScoreAdj)
        );
        assert_eq!(
            kind_from_path("audit/status.txt"),
            Some(SourceKind::AuditStatus)
        );
        assert_eq!(
            kind_from_path("postgres/version.txt"),
            Some(SourceKind::PgVersion)
        );
        assert_eq!(
            kind_from_path("storage/pg_subtrans-files.txt"),
            Some(SourceKind::SubtransFiles)
        );
        assert_eq!(
            kind_from_path("processes/1234/limits"),
            Some(SourceKind::ProcLimits)
        );
        assert_eq!(kind_from_path("cpu/flags.txt"), Some(SourceKind::CpuFlags));
        for path in [
            "kernel/kern.log",
            "kernel/messages.txt",
            "kernel/syslog.txt",
        ] {
            assert_eq!(kind_from_path(path), Some(SourceKind::KernelLog), "{path}");
        }
        // A system log elsewhere may be anything's.
        assert_eq!(kind_from_path("var/log/syslog"), None);
        assert_eq!(
            kind_from_path("postgres/pg_settings-postgres-C.txt"),
            Some(SourceKind::PgSettings)
        );
        assert_eq!(kind_from_path("flags.txt"), None);
        for path in [
            "var/log/postgresql/pgbouncer.log",
            "pgbouncer-main.log",
            "logs/pgbouncer.log.1",
        ] {
            assert_eq!(
                kind_from_path(path),
                Some(SourceKind::PgbouncerLog),
                "{path}"
            );
        }
        for path in [
            "pgbouncer.ini",
            "pgbouncer.log.gz.txt",
            "pgbouncer.logx",
            "mypgbouncer.log",
        ] {
            assert_ne!(
                kind_from_path(path),
                Some(SourceKind::PgbouncerLog),
                "{path}"
            );
        }
        assert_eq!(
            kind_from_path("processes/1234/pg-oom-adjust.txt"),
            Some(SourceKind::PgOomAdjust)
        );
        assert_eq!(
            kind_from_path("processes/1234/systemd-unit.txt"),
            Some(SourceKind::SystemdUnit)
        );
    }

    #[test]
    fn content_recognises_the_snapshot_forms() {
        assert_eq!(
            recognize(b"always [madvise] never\n"),
            SourceKind::ThpSetting
        );
        assert_eq!(
            recognize(b"MemTotal: 1 kB\nMemFree: 1 kB\nBuffers: 1 kB\nCached: 1 kB\n"),
            SourceKind::Meminfo
        );
        assert_eq!(
            recognize(b"oom_kill_disable 0\nunder_oom 0\noom_kill 3\n"),
            SourceKind::CgroupEvents
        );
        assert_eq!(
            recognize(b"postgres: 15/main: checkpointer\npostgres: 15/main: walwriter\n"),
            SourceKind::ProcessTitles
        );
        assert_eq!(
            recognize(b"/sys/devices/system/cpu/vulnerabilities/mds:Not affected\n"),
            SourceKind::CpuVulnerabilities
        );
        assert_eq!(
            recognize(b"PostgreSQL 13.23 on x86_64-pc-linux-gnu, compiled by gcc, 64-bit|x|f|y\n"),
            SourceKind::PgVersion
        );
        assert_eq!(
            recognize(b"flags\t\t: fpu vme de pse tsc msr pae constant_tsc nonstop_tsc\n"),
            SourceKind::CpuFlags
        );
        assert_eq!(
            recognize(
                b"Limit                     Soft Limit           Hard Limit           Units     \n\
                  Max cpu time              unlimited            unlimited            seconds   \n"
            ),
            SourceKind::ProcLimits
        );
        assert_eq!(
            recognize(b"PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj\nunset PG_OOM_ADJUST_VALUE\n"),
            SourceKind::PgOomAdjust
        );
        assert_eq!(
            recognize(b"OOMScoreAdjust=-900\nId=postgresql@15-main.service\n"),
            SourceKind::SystemdUnit
        );
        assert_eq!(
            recognize(b"2026-11-28 05:27:47.837 UTC [22124] LOG listening on 127.0.0.1:55482\n"),
            SourceKind::PgbouncerLog
        );
        assert_eq!(recognize(b"hello world\n"), SourceKind::Unknown);
    }
}
