//! The layout of a sosreport (sos 3.x and 4.x; RHEL, Fedora, Debian, Ubuntu and SUSE plugin
//! paths), as its plugins write it: `sos_commands/PLUGIN/COMMAND` for command outputs, copied
//! files at their host path, sos's own logs and reports in `sos_logs/` and `sos_reports/`.
//! Paths are relative to the report's root (`sosreport-HOST-DATE-ID/`, sos 3.5 and older
//! `sosreport-HOST-YYYYMMDDHHMMSS/`). Checked against real captures of sos 4.0 (Debian's),
//! 4.12.0, 3.9.1 and 3.5 (run from their sources) in fixtures/incidents/pg15-sos*/
//! (crates/bundle/tests/layouts.rs); the plugins' paths are those of the sos sources
//! (sosreport/sos `sos/report/plugins/`, `sos/plugins/` in 3.x): kernel.py, logs.py,
//! postgresql.py, memory.py, process.py, cgroups.py, date.py, host.py (general.py up to sos
//! 3.5), filesys.py, system.py, systemd.py.

use crate::kind::SourceKind::{self, *};

/// Path patterns (see `pattern.rs`) and the kind of the files they name, sorted by pattern.
/// The most specific pattern that matches wins; a catch-all (`proc/**`) keeps what sos copied
/// but pgmortem does not read from being taken by content for something it is not
/// (`sys/kernel/mm/ksm/advisor_mode` for a THP setting, `proc/zoneinfo` for vmstat).
pub(crate) const SOS: &[(&str, SourceKind)] = &[
    ("boot/**", Reference),
    ("dev/**", Reference),
    ("environment", Reference),
    ("etc/**", Reference),
    ("etc/hostname", Hostname),
    ("etc/os-release", OsRelease),
    // Debian and Ubuntu: /etc/postgresql/MAJOR/CLUSTER/*.conf (pg_hba.conf, pg_ident.conf,
    // pg_ctl.conf, start.conf beside postgresql.conf).
    ("etc/postgresql/*/*/*.conf", Reference),
    ("etc/postgresql/*/*/postgresql.auto.conf", PgConf),
    ("etc/postgresql/*/*/postgresql.conf", PgConf),
    ("lib/**", Reference),
    ("proc/**", Reference),
    ("proc/*/cgroup", ProcCgroup),
    // sos 4.3 and later (the process plugin): these files of every process on the host; the
    // diagnosis keeps those of the postmaster the `ps` listings show and of its children.
    ("proc/*/limits", ProcLimits),
    ("proc/*/oom_score_adj", OomScoreAdj),
    ("proc/*/status", ProcStatus),
    ("proc/cpuinfo", CpuFlags),
    ("proc/meminfo", Meminfo),
    ("proc/stat", Btime),
    // One file per setting (the system plugin copies /proc/sys): the file's path is the key.
    ("proc/sys/**", SysctlValue),
    ("proc/vmstat", Vmstat),
    ("run/**", Reference),
    ("sos_commands/**", Reference),
    ("sos_commands/date/date", Date),
    ("sos_commands/date/date_--utc", Date),
    ("sos_commands/filesys/df_-al", Df),
    ("sos_commands/filesys/df_-al_-x_autofs", Df),
    ("sos_commands/filesys/df_-ali", Df),
    ("sos_commands/filesys/df_-ali_-x_autofs", Df),
    // sos 3.0-3.2: the general plugin ran date, hostname and uptime.
    ("sos_commands/general/date", Date),
    ("sos_commands/general/hostname", Hostname),
    ("sos_commands/general/uptime", Uptime),
    ("sos_commands/host/hostname", Hostname),
    ("sos_commands/host/uptime", Uptime),
    ("sos_commands/kernel/dmesg", KernelLog),
    ("sos_commands/kernel/dmesg_-T", KernelLog),
    ("sos_commands/kernel/sysctl_-a", Sysctl),
    ("sos_commands/kernel/uname_-a", Uname),
    // The journal: every unit's lines, the kernel's among them (`kernel:` lines).
    ("sos_commands/logs/journalctl_*", KernelLog),
    // sos 3.0-3.5 also saved the journal as `journalctl -o verbose` (one field a line), beside
    // its short form, which is the one read.
    ("sos_commands/logs/journalctl_*verbose", Reference),
    ("sos_commands/logs/journalctl_--disk-usage", Reference),
    ("sos_commands/logs/journalctl_--list-boots", Reference),
    ("sos_commands/logs/journalctl_-o_export", Reference),
    // `free` in KiB; `free -m` and the others print units the content does not name.
    ("sos_commands/memory/free", Free),
    // sos 4.12 and later: the journal of the plugin's service (`journalctl --no-pager --unit
    // postgresql`), where a server without a logging collector writes its log.
    ("sos_commands/postgresql/journalctl_*", PostgresLog),
    // ps auxwww, ps auxwwwm, ps alxwww, ps -elfL, ps axo … (not pstree).
    ("sos_commands/process/ps_*", ProcessList),
    ("sos_commands/systemd/systemd-detect-virt", Virtualization),
    // What sos writes about its own run: never a PostgreSQL or kernel log.
    ("sos_logs/**", CollectorLog),
    ("sos_reports/**", CollectorLog),
    ("sys/**", Reference),
    (
        "sys/devices/system/clocksource/clocksource0/current_clocksource",
        Clocksource,
    ),
    // The whole cgroup tree (v1 under sys/fs/cgroup/CONTROLLER/, v2 under sys/fs/cgroup/): the
    // postmaster's own cgroup is found from its processes, never taken as the tree's root.
    ("sys/fs/cgroup/**/memory.current", CgroupValue),
    ("sys/fs/cgroup/**/memory.events", CgroupEvents),
    ("sys/fs/cgroup/**/memory.failcnt", CgroupValue),
    ("sys/fs/cgroup/**/memory.high", CgroupValue),
    ("sys/fs/cgroup/**/memory.limit_in_bytes", CgroupValue),
    ("sys/fs/cgroup/**/memory.max", CgroupValue),
    ("sys/fs/cgroup/**/memory.max_usage_in_bytes", CgroupValue),
    ("sys/fs/cgroup/**/memory.memsw.limit_in_bytes", CgroupValue),
    ("sys/fs/cgroup/**/memory.memsw.usage_in_bytes", CgroupValue),
    ("sys/fs/cgroup/**/memory.oom_control", CgroupEvents),
    ("sys/fs/cgroup/**/memory.peak", CgroupValue),
    ("sys/fs/cgroup/**/memory.stat", CgroupStat),
    ("sys/fs/cgroup/**/memory.swap.current", CgroupValue),
    ("sys/fs/cgroup/**/memory.swap.max", CgroupValue),
    ("sys/fs/cgroup/**/memory.usage_in_bytes", CgroupValue),
    // THP: the settings of that directory only (khugepaged/ and the rest are for people).
    ("sys/kernel/mm/transparent_hugepage/defrag", ThpSetting),
    ("sys/kernel/mm/transparent_hugepage/enabled", ThpSetting),
    (
        "sys/kernel/mm/transparent_hugepage/shmem_enabled",
        ThpSetting,
    ),
    ("usr/**", Reference),
    ("usr/lib/os-release", OsRelease),
    // RHEL, Fedora, SUSE: the server's home /var/lib/pgsql (PGDG: /var/lib/pgsql/MAJOR/data),
    // whose *.log and *.conf files the plugin copies; the log directory is log/ (10+) or
    // pg_log/.
    ("var/lib/pgsql/**/PG_VERSION", PgVersionFile),
    ("var/lib/pgsql/**/log/*", PostgresLog),
    ("var/lib/pgsql/**/pg_log/*", PostgresLog),
    ("var/lib/pgsql/**/postgresql.auto.conf", PgConf),
    ("var/lib/pgsql/**/postgresql.conf", PgConf),
    ("var/lib/pgsql/**/postmaster.opts", PostmasterOpts),
    // Debian and Ubuntu: /var/lib/postgresql/MAJOR/CLUSTER (a log directory there when the
    // logging collector writes into the data directory). sos 4.12 and later copy every *.log
    // and *.conf below /var/lib/postgresql, and PG_VERSION and postmaster.opts of
    // /var/lib/postgresql/data (the data directory of the postgres container image before 18;
    // 18's is /var/lib/postgresql/18/docker).
    ("var/lib/postgresql/*/*/*.conf", Reference),
    ("var/lib/postgresql/*/*/PG_VERSION", PgVersionFile),
    ("var/lib/postgresql/*/*/log/*", PostgresLog),
    ("var/lib/postgresql/*/*/pg_log/*", PostgresLog),
    ("var/lib/postgresql/*/*/postgresql.auto.conf", PgConf),
    ("var/lib/postgresql/*/*/postgresql.conf", PgConf),
    ("var/lib/postgresql/*/*/postmaster.opts", PostmasterOpts),
    ("var/lib/postgresql/data/*.conf", Reference),
    ("var/lib/postgresql/data/PG_VERSION", PgVersionFile),
    ("var/lib/postgresql/data/log/*", PostgresLog),
    ("var/lib/postgresql/data/pg_log/*", PostgresLog),
    ("var/lib/postgresql/data/postgresql.auto.conf", PgConf),
    ("var/lib/postgresql/data/postgresql.conf", PgConf),
    ("var/lib/postgresql/data/postmaster.opts", PostmasterOpts),
    ("var/log/dmesg*", KernelLog),
    ("var/log/kern.log*", KernelLog),
    ("var/log/messages*", KernelLog),
    // Debian and Ubuntu: the server's stderr, as pg_ctlcluster writes it.
    ("var/log/postgresql/*", PostgresLog),
    ("var/log/syslog*", KernelLog),
    // Software collections (RHEL 7): /var/opt/rh/rh-postgresqlNN/lib/pgsql.
    ("var/opt/rh/*/lib/pgsql/**/PG_VERSION", PgVersionFile),
    ("var/opt/rh/*/lib/pgsql/**/log/*", PostgresLog),
    ("var/opt/rh/*/lib/pgsql/**/pg_log/*", PostgresLog),
    ("var/opt/rh/*/lib/pgsql/**/postgresql.auto.conf", PgConf),
    ("var/opt/rh/*/lib/pgsql/**/postgresql.conf", PgConf),
    ("var/opt/rh/*/lib/pgsql/**/postmaster.opts", PostmasterOpts),
    ("version.txt", CollectorLog),
];

/// Paths whose presence says a bundle is a sosreport (a directory ends with `/`).
pub(crate) const MARKERS: &[&str] = &["sos_commands/", "sos_logs/", "sos_reports/", "version.txt"];
