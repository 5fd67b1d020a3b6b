//! System snapshots a bundle carries: the clock readings that put kernel times on the wall
//! clock (`/proc/uptime`, a UTC `date`, `/proc/stat`'s `btime`), and the memory picture of the
//! host and its PostgreSQL processes (`/proc/meminfo`, `/proc/vmstat`, sysctls, THP settings,
//! `/proc/PID/status`, `smaps_rollup`, process titles, memory cgroup files, `free`, `df`,
//! `pg_settings` dumps, `postgresql.conf`), and the small host readings beside them
//! (`oom_score_adj`, resource limits, CPU vulnerabilities and flags, the clock source, `SELECT
//! version()`, psql tables, audit rules), how the server was started (the postmaster's
//! `PG_OOM_ADJUST_*` environment, its systemd unit, `postmaster.opts`), and what a sosreport
//! adds: `ps` listings with their memory cgroup column, the `date` and `uptime` commands' text,
//! `hostname`, `PG_VERSION`; and where PostgreSQL's files live (the collector's list of its
//! places, mountinfo lines, pg_wal's segment counts) with what the server says of WAL retention,
//! archiving and transaction-id ages (replication slots, `pg_stat_archiver`, `datfrozenxid`).
//!
//! Every parser takes bytes and keeps every key it finds, known or not, in file order; sizes
//! are normalised to bytes next to the value as printed; a cut file parses as far as it goes
//! and says so (`truncated`, `missing`). Each form has a `sniff_*` hook so the bundle reader
//! can recognise it by content. [`facts`] derives what a diagnosis needs from them.

mod cgroup;
mod clock;
pub mod facts;
mod fields;
mod host;
mod meminfo;
mod pgconf;
mod pgstat;
mod postmaster;
mod process;
mod ps;
mod service;
mod settings;
mod storage;
mod sysctl;
mod title;
mod tools;

pub use cgroup::{
    CgroupMemory, CgroupValue, CgroupVersion, parse_cgroup_value, sniff_cgroup_events,
    sniff_cgroup_stat,
};
pub use clock::{
    Btime, DateReading, SnapshotError, Uptime, UptimeCommand, parse_btime, parse_date,
    parse_uptime, parse_uptime_command,
};
pub use fields::{Field, Fields};
pub use host::{
    AuditRules, CpuFlags, PgVersion, PipeTable, Uname, Vulnerabilities, Vulnerability,
    parse_audit_rules, parse_clocksource, parse_count, parse_cpu_flags, parse_hostname,
    parse_oom_score_adj, parse_os_release_name, parse_pg_version_file, parse_pipe_table,
    parse_uname, parse_version_text, parse_virt, parse_vulnerabilities, sniff_cpu_flags,
};
pub use meminfo::{
    FlatKeyed, MEMINFO_KEYS, Meminfo, parse_flat_keyed, parse_meminfo, sniff_meminfo, sniff_vmstat,
};
pub use pgconf::{ConfEntry, ConfInclude, PgConf, parse_pg_conf, sniff_pg_conf};
pub use pgstat::{
    Archiver, ChecksumFailures, DatabaseChecksums, DatabaseXidAge, DatabaseXidAges,
    ReplicationSlot, ReplicationSlots, parse_archiver, parse_checksum_failures,
    parse_database_xid_ages, parse_replication_slots,
};
pub use postmaster::{PostmasterCommand, parse_postmaster_command, parse_postmaster_opts};
pub use process::{
    ProcLimits, ProcStatus, ResourceLimit, SMAPS_ROLLUP_KEYS, STATUS_MEMORY_KEYS, SmapsRollup,
    parse_limits, parse_smaps_rollup, parse_status, sniff_limits, sniff_smaps_rollup, sniff_status,
};
pub use ps::{PsListing, PsRow, memory_cgroup_path, parse_ps, sniff_ps};
pub use service::{
    EnvVariable, PG_OOM_ADJUST_FILE, PG_OOM_ADJUST_VALUE, PgOomAdjust, SystemdUnit, UnitProperty,
    parse_pg_oom_adjust, parse_systemctl_show, sniff_pg_oom_adjust, sniff_systemctl_show,
};
pub use settings::{
    DEFAULT_COLUMNS, POSTGRES_C_SOURCE, PgSetting, PgSettings, SettingsForm, parse_pg_settings,
    sniff_pg_settings,
};
pub use storage::{
    Mount, Mountinfo, StoragePath, StoragePaths, WalDirectory, mount_holds, parse_mountinfo,
    parse_storage_paths, parse_wal_directory, sniff_mountinfo,
};
pub use sysctl::{
    Choice, Sysctl, SysctlSet, parse_choice, parse_proc_sys_file, parse_sysctl, sniff_choice,
    sniff_sysctl,
};
pub use title::{PgRole, PgTitle, parse_title, parse_titles};
pub use tools::{
    Df, DfRow, Free, FreeOptions, FreeRow, parse_df, parse_free, sniff_df, sniff_free,
};
