//! The layout of pgmortem's own collector (`pgmortem-collect.sh`, docs/bundle-format.md):
//! what each path holds when `manifest.json` does not say (an older or hand-made bundle, or a
//! manifest entry of kind `unknown`). Checked against the collected bundles in
//! fixtures/formats/bundle and fixtures/incidents (crates/bundle/tests/layouts.rs).

use crate::kind::SourceKind::{self, *};

/// Path patterns (see `pattern.rs`) and the kind of the files they name, sorted by pattern.
pub(crate) const PGMORTEM: &[(&str, SourceKind)] = &[
    ("audit/rules.txt", AuditRules),
    ("audit/status.txt", AuditStatus),
    ("cgroup/*/memory.current", CgroupValue),
    ("cgroup/*/memory.events", CgroupEvents),
    ("cgroup/*/memory.failcnt", CgroupValue),
    ("cgroup/*/memory.high", CgroupValue),
    ("cgroup/*/memory.limit_in_bytes", CgroupValue),
    ("cgroup/*/memory.max", CgroupValue),
    ("cgroup/*/memory.max_usage_in_bytes", CgroupValue),
    ("cgroup/*/memory.memsw.limit_in_bytes", CgroupValue),
    ("cgroup/*/memory.memsw.usage_in_bytes", CgroupValue),
    ("cgroup/*/memory.oom_control", CgroupEvents),
    ("cgroup/*/memory.peak", CgroupValue),
    ("cgroup/*/memory.stat", CgroupStat),
    ("cgroup/*/memory.swap.current", CgroupValue),
    ("cgroup/*/memory.swap.max", CgroupValue),
    ("cgroup/*/memory.usage_in_bytes", CgroupValue),
    ("clock/btime.txt", Btime),
    ("clock/date.txt", Date),
    ("clock/uptime.txt", Uptime),
    ("cpu/clocksource.txt", Clocksource),
    ("cpu/flags.txt", CpuFlags),
    ("cpu/vulnerabilities.txt", CpuVulnerabilities),
    ("identity/**", Reference),
    ("identity/os-release.txt", OsRelease),
    ("identity/uname.txt", Uname),
    ("identity/virt.txt", Virtualization),
    // dmesg.txt, dmesg-T.txt, journal-k.txt, and the syslog file's kernel lines (kern.log, …).
    ("kernel/*", KernelLog),
    ("manifest.json", Manifest),
    ("memory/buddyinfo.txt", Reference),
    ("memory/free.txt", Free),
    ("memory/hugepages.txt", Reference),
    ("memory/meminfo.txt", Meminfo),
    ("memory/sysctl-vm.txt", Sysctl),
    ("memory/thp-*.txt", ThpSetting),
    ("memory/vmstat.txt", Vmstat),
    ("perf/**", Reference),
    ("perf/perf-script.txt", PerfScript),
    ("postgres/activity-summary.txt", PgActivity),
    ("postgres/activity.txt", Reference),
    ("postgres/archiver.txt", Archiver),
    ("postgres/checksum-failures.txt", ChecksumFailures),
    ("postgres/database-ages.txt", Reference),
    ("postgres/database-xid-ages.txt", DatabaseXidAges),
    ("postgres/hba-summary.txt", Reference),
    // The server log's earlier files (log_directory's, or a single file's rotated siblings).
    ("postgres/log/*", PostgresLog),
    ("postgres/pg_settings-postgres-C.txt", PgSettings),
    ("postgres/pg_settings.txt", PgSettings),
    ("postgres/postgresql.conf", PgConf),
    ("postgres/replication-slots.txt", ReplicationSlots),
    ("postgres/server.log", PostgresLog),
    // The postmaster's standard error and output when they are other files than the log
    // (`pg_ctl -l FILE` with the logging collector on: a start that failed is only there).
    ("postgres/stderr.log", PostgresLog),
    ("postgres/stdout.log", PostgresLog),
    ("postgres/subtrans-sql.txt", Reference),
    // The server's lines in the syslog file its syslog_facility goes to, or in the journal.
    ("postgres/syslog.txt", PostgresLog),
    ("postgres/tablespaces.txt", Tablespaces),
    ("postgres/version.txt", PgVersion),
    ("processes/*/cgroup", ProcCgroup),
    ("processes/*/limits", ProcLimits),
    ("processes/*/oom_score_adj", OomScoreAdj),
    ("processes/*/pg-oom-adjust.txt", PgOomAdjust),
    ("processes/*/smaps_rollup", SmapsRollup),
    ("processes/*/status", ProcStatus),
    ("processes/*/systemd-unit.txt", SystemdUnit),
    ("processes/postgres-titles.txt", ProcessTitles),
    // `ps -eo pid,ppid,user,comm,…`: every process's name, for a person to read (the
    // postgres processes' own files are in processes/PID/).
    ("processes/ps.txt", Reference),
    ("storage/df*.txt", Df),
    ("storage/mountinfo.txt", Mountinfo),
    ("storage/paths.txt", StoragePaths),
    ("storage/pg_subtrans-files.txt", SubtransFiles),
    ("storage/pg_wal.txt", WalDirectory),
    ("systemd/unit-journal.txt", UnitJournal),
    ("systemd/unit.txt", SystemdUnit),
];

/// Paths whose presence says a bundle is the collector's.
pub(crate) const MARKERS: &[&str] = &[
    "manifest.json",
    "clock/date.txt",
    "identity/uname.txt",
    "kernel/dmesg.txt",
    "memory/meminfo.txt",
    "postgres/server.log",
];
