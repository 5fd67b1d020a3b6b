//! The Report: what pgmortem concluded from a bundle. Serialised as the JSON contract
//! `pgmortem.report/v1` (docs/report-schema.md): field names here are kept exactly.

use std::collections::BTreeMap;

use jiff::Timestamp;
use serde::Serialize;

mod group;
mod host;
mod pooler;
mod postgres;
mod processes;
mod storage;

pub use group::*;
pub use host::*;
pub use pooler::*;
pub use postgres::*;
pub use processes::*;
pub use storage::*;

/// The schema name and version written in every report.
pub const SCHEMA: &str = "pgmortem.report/v1";

/// Everything pgmortem concluded from one bundle.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// Always [`SCHEMA`].
    pub schema: &'static str,
    /// `pgmortem <version>`.
    pub generator: String,
    /// What a reader must know before trusting the rest: a log not read whole, clock anchors
    /// that disagree, records counted but not kept. Empty when there is nothing to say.
    pub caveats: Vec<Caveat>,
    /// How kernel and PostgreSQL times were put on UTC.
    pub clock: ClockInfo,
    /// The host's name and when the bundle was collected.
    pub collection: Collection,
    /// Every file of the bundle, with its kind and how much of it was understood.
    pub sources: Vec<SourceSummary>,
    /// Crash/kill incidents, oldest first.
    pub incidents: Vec<Incident>,
    /// The incidents grouped: each run of consecutive incidents of the same kind and cause
    /// (a crash loop) as one group, a lone incident as a group of one; in the incidents'
    /// order, covering each incident once.
    pub groups: Vec<IncidentGroup>,
    /// Findings, most severe first (then those about an incident, by incident; then by
    /// impact and confidence).
    pub findings: Vec<Finding>,
    /// Rules that could not be evaluated, with the inputs they lacked.
    pub not_evaluated: Vec<NotEvaluated>,
    /// The host as the bundle shows it: every fact the rules read, with where it was read.
    pub host: HostFacts,
    /// The notable events of every source on one clock, oldest first (events whose time could
    /// not be put on UTC come last, in source order).
    pub timeline: Vec<TimelineEvent>,
    /// Each perf profile of the bundle: its event, samples over time and (not serialised) its
    /// collapsed stacks.
    pub perf: Vec<PerfSummary>,
    /// Each pgbouncer log of the bundle, summed up: what clients met through the pooler over
    /// the whole log. Left out of the JSON when the bundle has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pooler: Vec<PoolerSummary>,
}

/// A `perf script` of the bundle, summarised for a reader: what was sampled, when, how densely,
/// and the stacks a flame graph draws.
#[derive(Debug, Clone, Serialize)]
pub struct PerfSummary {
    /// The file.
    pub path: String,
    /// The event profiled (`cpu-clock:pppH`), the sampling event with the most samples.
    pub event: Option<String>,
    /// Samples of that event.
    pub samples: u64,
    /// CPUs online (`--header`).
    pub cpus: Option<u32>,
    /// Seconds the profile covers.
    pub duration_seconds: Option<f64>,
    /// Share (0–1) of the weight whose leaf frame runs in the kernel.
    pub kernel_share: f64,
    /// UTC time of the first bucket of `density`: perf's clock (seconds since boot) placed
    /// with the boot time; null when the boot time is unknown or the samples carry no time.
    pub started_at: Option<Timestamp>,
    /// Width of a `density` bucket, seconds.
    pub bucket_seconds: f64,
    /// Samples of the event per bucket, from the first sample with a time.
    pub density: Vec<u64>,
    /// The event's collapsed stacks (`comm;root;…;leaf` and the samples' summed period:
    /// nanoseconds for `cpu-clock`), sorted as `pgmortem collapse-perf` prints them: the input of the HTML report's flame graph. Not
    /// serialised (the JSON stays small; `pgmortem collapse-perf FILE` prints them).
    #[serde(skip)]
    pub stacks: Vec<(String, u64)>,
}

/// Where and when the bundle was collected, as far as it says.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Collection {
    /// The host's name (`hostname`, else `uname -a`'s second field).
    pub hostname: Option<String>,
    /// The kernel release (`uname -a`'s third field).
    pub kernel_release: Option<String>,
    /// The operating system (`PRETTY_NAME` of os-release).
    pub os: Option<String>,
    /// What `systemd-detect-virt` said: `kvm`, `docker`, `none`, ….
    pub virtualization: Option<String>,
    /// The bundle's UTC clock reading (the collector's `date`): when the snapshots were taken.
    pub collected_at: Option<Timestamp>,
    /// The file that reading comes from.
    pub collected_at_path: Option<String>,
    /// The collector whose layout the bundle's paths show, with its version when the bundle
    /// says it (`pgmortem-collect.sh 0.9.0`, `sosreport 4.0`); absent for files from anywhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collector: Option<String>,
}

/// Something a reader must know before trusting the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Caveat {
    /// `log_not_read_whole`, `clock_anchors_disagree`, `records_not_kept`, ….
    pub kind: &'static str,
    /// What happened and what it means for the report.
    pub text: String,
}

/// How kernel monotonic time was turned into UTC.
#[derive(Debug, Clone, Serialize)]
pub struct ClockInfo {
    /// The host's boot time in UTC, when it could be established.
    pub boot_time: Option<Timestamp>,
    /// Where the boot time came from: `option`, `date_and_uptime`, `btime`,
    /// `dmesg_ctime_pair`, or `null`.
    pub boot_time_source: Option<&'static str>,
    /// Error bar of the boot time, in seconds.
    pub boot_time_uncertainty_seconds: Option<f64>,
    /// Caveats (suspend, assumed time zones, …).
    pub notes: Vec<String>,
}

/// One file of the bundle.
#[derive(Debug, Clone, Serialize)]
pub struct SourceSummary {
    /// Path relative to the bundle root.
    pub path: String,
    /// Kind recognised from the content (`kernel_log`, `postgres_log`, `uptime`, `date`,
    /// `btime`, `unknown`), or `unreadable`.
    pub kind: &'static str,
    /// Size in bytes.
    pub bytes: u64,
    /// Lines read.
    pub lines: u64,
    /// Records produced.
    pub records: u64,
    /// Lines not understood.
    pub unrecognized_lines: u64,
    /// The first few lines not understood, as `[line, text]`.
    pub unrecognized_examples: Vec<(u64, String)>,
    /// Why the file was not used or only partly used, when that happened.
    pub note: Option<String>,
    /// PostgreSQL logs: the `log_line_prefix` the lines were read with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_line_prefix: Option<String>,
    /// PostgreSQL logs: where that prefix came from: `given`, `pg_settings (<file>)`,
    /// `postgresql.conf (<file>)`, or `detected` (with why the bundle's setting was not used).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_line_prefix_from: Option<String>,
    /// PostgreSQL logs the collector's manifest lists among the server's log files: what the
    /// file is to the server. Absent for every other file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server_log: Option<SourceServerLog>,
}

/// What a collected log file is to the server, as the collector's manifest says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceServerLog {
    /// `current` (the file the server writes now), `earlier` (an earlier file of the same
    /// log), `stderr` (the postmaster's standard error or output, another file than the log:
    /// what it printed before its logging collector ran), `syslog` (its lines in syslog).
    pub role: &'static str,
    /// The file it was copied from on the host (or the command, for a journal); empty when no
    /// manifest says (`found_from` `name_and_time`).
    pub copied_from: String,
    /// How the collector found it (`current_logfiles`, `/proc/PID/fd/2`, `--log`, …), or
    /// `name_and_time`: no manifest names it, and its directory, its file-name family and its
    /// times put it in its log (`current` its newest file, `earlier` the others).
    pub found_from: String,
    /// Whether it is read with the other files of its log as one log, in time order (the
    /// current file, the earlier ones and the standard error are; syslog lines, another copy
    /// of the same records, are read on their own). A line of the standard error or of the
    /// syslog lines that the current or an earlier file holds too is counted once, there.
    pub read_as_one_log: bool,
}

/// A place in a source file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Evidence {
    /// Path relative to the bundle root.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// What this line shows.
    pub what: String,
    /// For a snapshot or a setting: the key read on that line (`MemTotal`, `work_mem`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// For a line the collector copied from another file of the database host (a
    /// `postgresql.conf` with its includes inlined and `postgresql.auto.conf` appended): that
    /// file (`/etc/postgresql/15/main/conf.d/10-mem.conf`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_file: Option<String>,
    /// The line's number in `host_file`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host_line: Option<u64>,
}

impl Evidence {
    /// Line `line` of `path`, saying `what` (no key, not copied from another file).
    pub fn of_line(path: impl Into<String>, line: u64, what: impl Into<String>) -> Self {
        Evidence {
            path: path.into(),
            line,
            what: what.into(),
            key: None,
            host_file: None,
            host_line: None,
        }
    }

    /// Where the line is, for a person: `path:line`, followed by `, from HOST_FILE:LINE` when
    /// the bundle's file copied it from another file of the host.
    pub fn place(&self) -> String {
        let mut place = format!("{}:{}", self.path, self.line);
        if let Some(from) = self.host_place() {
            place.push_str(", from ");
            place.push_str(&from);
        }
        place
    }

    /// `HOST_FILE:LINE` (or `HOST_FILE`), when the line was copied from another file of the
    /// host.
    pub fn host_place(&self) -> Option<String> {
        let file = self.host_file.as_deref()?;
        Some(match self.host_line {
            Some(line) => format!("{file}:{line}"),
            None => file.to_owned(),
        })
    }
}

/// A fatal fault of a process as the kernel or a crash reporter logged it.
#[derive(Debug, Clone, Serialize)]
pub struct ProcessFault {
    /// PID (the kernel's, init namespace).
    pub pid: u32,
    /// Command name.
    pub comm: String,
    /// What happened: `segfault at ADDRESS`, `general protection`, `invalid opcode`, …, or the
    /// signal a crash reporter named (`SIGABRT`).
    pub fault: String,
    /// The signal it delivered (11 for a segfault or a general protection fault), when known.
    pub signal: Option<i32>,
    /// The faulting address of a segfault.
    pub address: Option<String>,
    /// The instruction pointer.
    pub ip: Option<String>,
    /// The object the instruction pointer fell in (`credcheck.so`, `libc.so.6`, `postgres`).
    pub object: Option<String>,
    /// The kernel printed the object `(deleted)`: its file was replaced or removed after the
    /// process mapped it (an upgrade without a restart: the process ran the old build).
    pub object_deleted: bool,
    /// `kernel`, or the crash reporter (`abrt-hook-ccpp`, `systemd-coredump`).
    pub reporter: String,
    /// When (UTC), when the line's time could be placed.
    pub at: Option<Timestamp>,
    /// The log.
    pub path: String,
    /// Its line.
    pub line: u64,
}

/// The kernel's side of an incident: the OOM kill.
#[derive(Debug, Clone, Default, Serialize)]
pub struct KernelKill {
    /// PID in the kernel's (init) namespace. 0 when the report names no victim (cut before
    /// its kill line, or the OOM killer found none): no task has pid 0, and JSON says `null`.
    #[serde(serialize_with = "zero_as_null")]
    pub pid: u32,
    /// Command name (empty when no report names the victim).
    pub comm: String,
    /// The systemd unit in whose cgroup the kill was counted, when systemd's
    /// `A process of this unit has been killed by the OOM killer.` line reported it (for a kill
    /// the kernel's log does not hold, the only thing known of the victim). Left out of the
    /// JSON when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Anonymous RSS at the kill, kB.
    pub anon_rss_kb: Option<u64>,
    /// File RSS at the kill, kB.
    pub file_rss_kb: Option<u64>,
    /// Shared-memory RSS at the kill, kB.
    pub shmem_rss_kb: Option<u64>,
    /// Virtual size at the kill, kB.
    pub total_vm_kb: Option<u64>,
    /// Page tables, kB.
    pub pgtables_kb: Option<u64>,
    /// The victim's oom_score_adj.
    pub oom_score_adj: Option<i32>,
    /// `global`, `memcg`, `cpuset`, `memory_policy`, or null when the report does not say.
    pub constraint: Option<String>,
    /// The memory cgroup whose limit was hit, when the kill was a memcg one.
    pub memcg: Option<MemcgLimit>,
    /// The process whose allocation set the OOM killer off.
    pub trigger_comm: Option<String>,
    /// Its PID.
    pub trigger_pid: Option<u32>,
    /// The allocation's gfp mask as printed (`0xcc0(GFP_KERNEL)`).
    pub trigger_gfp_mask: Option<String>,
    /// The allocation's order (pages as a power of two; -1 for a SysRq-forced OOM).
    pub trigger_order: Option<i32>,
    /// The heaviest rows of the report's task table by RSS, heaviest first (at most
    /// [`OOM_TOP_TASKS`]); empty when the kernel printed no table.
    pub tasks: Vec<OomTaskRss>,
    /// Rows in the task table.
    pub task_count: u64,
    /// RSS summed over every row of the task table, kB (null without a table or an `rss`
    /// column). Threads are not rows: this is what the processes held.
    pub tasks_rss_kb: Option<u64>,
    /// Page size the table's page counts were converted with, kB: the one that makes the
    /// victim's row agree with its kill line, else 4.
    pub page_kb: u64,
    /// When the kernel killed it (UTC), when the kernel clock could be calibrated.
    pub at: Option<Timestamp>,
    /// Where the report is.
    pub path: String,
    /// Its first line.
    pub line: u64,
    /// Whose process the victim was, as far as the bundle tells; left out of the JSON when it
    /// does not tell.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<KillOwner>,
}

/// Whose process an OOM kill's victim was.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KillOwner {
    /// `instance` (the instance's: PostgreSQL's log shows its death, its pid is the
    /// postmaster's or below it, or it ran in the postmaster's memory cgroup or one below);
    /// `other_cluster` (another PostgreSQL cluster's on the host: below its postmaster, or in
    /// its memory cgroup); `other_cgroup` (another job's: its memory cgroup is neither the
    /// postmaster's nor below it); `before_start` (killed before the postmaster started, and
    /// its log shows no such death: a previous server's or another job's).
    pub whose: &'static str,
    /// Why, for a person: `pid 17722 is below postmaster 17444 (/var/lib/postgresql/15/other)`.
    pub why: String,
    /// `other_cluster`: that cluster's postmaster.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postmaster: Option<u32>,
}

impl KillOwner {
    /// The victim was the instance's.
    pub fn is_instance(&self) -> bool {
        self.whose == "instance"
    }
}

impl KernelKill {
    /// The bundle shows the victim was not the instance's (another cluster's, another job's,
    /// or killed before the postmaster started).
    pub fn is_stranger(&self) -> bool {
        self.owner.as_ref().is_some_and(|o| !o.is_instance())
    }
}

/// Rows of an OOM report's task table the report keeps (the heaviest by RSS).
pub const OOM_TOP_TASKS: usize = 10;

/// One row of an OOM report's task table, in kB.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OomTaskRss {
    /// PID (the kernel's namespace).
    pub pid: u32,
    /// Command name.
    pub name: String,
    /// Resident memory, kB.
    pub rss_kb: Option<u64>,
    /// Of which anonymous (kernels that print `rss_anon`), kB.
    pub rss_anon_kb: Option<u64>,
    /// Of which file-backed, kB.
    pub rss_file_kb: Option<u64>,
    /// Of which shared memory, kB.
    pub rss_shmem_kb: Option<u64>,
    /// Virtual size, kB.
    pub total_vm_kb: Option<u64>,
    /// Page tables, kB.
    pub pgtables_kb: Option<u64>,
    /// Swapped out, kB.
    pub swap_kb: Option<u64>,
    /// Its oom_score_adj.
    pub oom_score_adj: Option<i32>,
    /// This row is the process the kernel killed.
    pub victim: bool,
}

/// A memory cgroup's limit and usage at the kill.
#[derive(Debug, Clone, Serialize)]
pub struct MemcgLimit {
    /// The cgroup whose limit was hit.
    pub path: Option<String>,
    /// The victim's own cgroup.
    pub task_path: Option<String>,
    /// Limit in kB (null: unlimited or not printed).
    pub limit_kb: Option<u64>,
    /// Usage in kB.
    pub usage_kb: Option<u64>,
    /// Times the limit was hit.
    pub failcnt: Option<u64>,
}

/// PostgreSQL's side of an incident: the child process that died.
#[derive(Debug, Clone, Serialize)]
pub struct PostgresCrash {
    /// PID as PostgreSQL printed it (its own PID namespace).
    pub pid: u32,
    /// `server process`, `client backend`, `checkpointer process`, ….
    pub process: String,
    /// Signal number, when terminated by a signal.
    pub signal: Option<i32>,
    /// Exit code, when it exited abnormally instead.
    pub exit_code: Option<i32>,
    /// The query it was running, when printed.
    pub query: Option<String>,
    /// When the postmaster logged it (UTC).
    pub at: Option<Timestamp>,
    /// Where.
    pub path: String,
    /// Line of the `terminated by signal` / `exited with exit code` record.
    pub line: u64,
}

/// The crash-restart cycle PostgreSQL went through after the crash.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Recovery {
    /// `terminating any other active server processes`.
    pub terminated_others_at: Option<Timestamp>,
    /// `all server processes terminated; reinitializing`.
    pub reinitialized_at: Option<Timestamp>,
    /// `redo starts at`.
    pub redo_started_at: Option<Timestamp>,
    /// The LSN redo started at.
    pub redo_start_lsn: Option<String>,
    /// `redo done at`.
    pub redo_done_at: Option<Timestamp>,
    /// The LSN redo ended at.
    pub redo_end_lsn: Option<String>,
    /// `database system is ready to accept connections`.
    pub ready_at: Option<Timestamp>,
    /// Line of the ready record.
    pub ready_line: Option<u64>,
}

/// One incident: a kill or crash and what followed.
#[derive(Debug, Clone, Serialize)]
pub struct Incident {
    /// `oom_kill` (the kernel killed a PostgreSQL process and PostgreSQL crash-restarted),
    /// `crash_restart` (a PostgreSQL process died with no kernel OOM kill to explain it),
    /// `postmaster_killed` (the kernel OOM killer killed the postmaster itself),
    /// `unclean_restart` (the server started with crash recovery, no crash of a child logged
    /// before: the postmaster or the host died), `recovery_failed` (the startup process died
    /// during crash or archive recovery and the postmaster shut down instead of serving),
    /// `startup_failed` (the server did not start: the postmaster refused to start, or the
    /// startup process died before any recovery), or `kernel_oom` (an OOM kill with no
    /// PostgreSQL crash tied to it).
    pub kind: &'static str,
    /// Why: `oom_killer`, `container_oom_killed` (the container runtime recorded the
    /// container `OOMKilled` and no kernel log shows the kill), `userspace_oom_killer`
    /// (systemd-oomd or earlyoom killed it), `disk_full` (the process that died, or the PANIC
    /// before it, met `No space left on device` on a data, WAL or log volume),
    /// `filesystem_read_only` (`Read-only file system`), `storage_error` (`Input/output
    /// error`, or a SIGBUS right after the kernel's storage errors), `corruption` (damaged or
    /// missing data or WAL: checksum failures, invalid pages, a checkpoint record recovery
    /// cannot find), `hardware_error` (a machine check, an uncorrected memory error or a
    /// poisoned page the kernel reported for the process or just before it died),
    /// `startup_failed` (a start refused for a reason none of those names: shared memory,
    /// huge pages, the lock file, a port in use, a setting), `signal_from_outside`,
    /// `segfault` (SIGSEGV, SIGBUS, SIGILL, SIGFPE), `abort_or_panic` (SIGABRT or a PANIC),
    /// `abnormal_exit` (an exit code), `postmaster_killed`, or `unknown`.
    pub cause: &'static str,
    /// The line the cause was read from, when it is not the death itself: the PostgreSQL
    /// error or PANIC that names it (`No space left on device`, `invalid page in block …`),
    /// or the kernel's (a machine check, a user-space OOM killer's kill, the storage error
    /// before a SIGBUS). Left out of the JSON when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause_line: Option<CauseLine>,
    /// When it began (UTC): the kernel kill, else the PostgreSQL crash line.
    pub started_at: Option<Timestamp>,
    /// The kernel's OOM kill, when there was one.
    pub kernel_kill: Option<KernelKill>,
    /// The fatal fault the kernel (or a crash reporter) logged for the process that died: a
    /// segfault, a general protection fault or another trap, a crash reporter's line; tied by
    /// PID to PostgreSQL's crash line, or alone when the bundle has no PostgreSQL log. Left out
    /// of the JSON when there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_fault: Option<ProcessFault>,
    /// The PostgreSQL process that died, when PostgreSQL logged it.
    pub postgres_crash: Option<PostgresCrash>,
    /// The restart cycle that followed.
    pub recovery: Option<Recovery>,
    /// Seconds from the crash line to `ready to accept connections` (null: not seen).
    pub outage_seconds: Option<f64>,
    /// True when no log shows the server ready to accept connections after the incident:
    /// it was still down when the log ends (and when the bundle was collected, if the
    /// collector came later). `outage_seconds` is then null.
    pub still_down: bool,
    /// When `still_down`: seconds from `started_at` to the bundle's collection (its clock
    /// reading), the outage so far; null when either time is unknown.
    pub down_for_seconds: Option<f64>,
    /// Seconds of WAL redo (PostgreSQL's own `elapsed:` when printed, else redo start → done).
    pub redo_seconds: Option<f64>,
    /// WAL replayed: redo end LSN − redo start LSN, bytes.
    pub wal_replayed_bytes: Option<u64>,
    /// PostgreSQL crash time − kernel kill time, seconds (how far apart the two clocks put one
    /// event; includes the postmaster's reaction time).
    pub clock_skew_seconds: Option<f64>,
    /// What the log recorded just before: error lines of the process that died, and events
    /// that explain deaths (out of memory, /dev/shm full, fork failures, PANIC) in the minute
    /// before, oldest first.
    pub preceded_by: Vec<LogLine>,
    /// Sessions the log shows were cut by the restart (`terminating connection because of
    /// crash of another server process`, logged by PostgreSQL 10–13), when it shows them.
    pub sessions_lost: Option<u64>,
    /// Connections refused while the server recovered (`the database system is in recovery
    /// mode`, `… is starting up`, `… not yet accepting connections`).
    pub connections_refused: u64,
    /// How sure the tie between kernel kill and PostgreSQL crash is, 0–1 (1 for a lone event).
    pub confidence: f64,
    /// How the two sides were tied: `pid_and_time`, `pid_only`,
    /// `time_signal_and_name` (PID namespace), or null.
    pub matched_by: Option<&'static str>,
    /// Caveats and explanations.
    pub notes: Vec<String>,
    /// The container runtime's record of the kill, when the bundle holds Kubernetes' view of
    /// the pod (`kubectl describe pod`, a pod manifest): the container the kernel's
    /// memory-cgroup OOM killer ended (`OOMKilled`, exit code 137); left out of the JSON
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container_kill: Option<ContainerKill>,
    /// What clients saw through pgbouncer in the incident's window (errors they were sent,
    /// server logins that failed, server connections lost), when the bundle has a pgbouncer
    /// log; left out of the JSON otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clients_saw: Option<ClientsSaw>,
    /// What Patroni did to the server from a minute before the incident to a minute after
    /// PostgreSQL was ready again (found it not running, started it again, demoted or promoted
    /// it, lost its DCS), when the bundle has a Patroni log; left out of the JSON otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub patroni: Vec<LogLine>,
}

impl Incident {
    /// The pid of the process that died: PostgreSQL's crash line, else the kernel's victim;
    /// `None` when neither names one.
    pub fn pid(&self) -> Option<u32> {
        self.postgres_crash
            .as_ref()
            .map(|c| c.pid)
            .or(self.kernel_kill.as_ref().map(|k| k.pid))
            .filter(|&p| p != 0)
    }

    /// True for an OOM kill of a process the bundle shows was not this instance's (another
    /// cluster's, another job's, one killed before the postmaster started: its
    /// `kernel_kill.owner` is not `instance`) and that no crash of this server is tied to. It is
    /// listed among the incidents for what it tells of the host, and the renderings' counts of
    /// this server's incidents leave it out.
    pub fn is_other_instances(&self) -> bool {
        self.postgres_crash.is_none()
            && self
                .kernel_kill
                .as_ref()
                .is_some_and(KernelKill::is_stranger)
    }

    /// An incident of `kind` and `cause` begun at `started_at`, nothing else known yet: the
    /// builders fill in what they know.
    pub fn new(kind: &'static str, cause: &'static str, started_at: Option<Timestamp>) -> Self {
        Self {
            kind,
            cause,
            cause_line: None,
            started_at,
            kernel_kill: None,
            kernel_fault: None,
            postgres_crash: None,
            recovery: None,
            outage_seconds: None,
            still_down: false,
            down_for_seconds: None,
            redo_seconds: None,
            wal_replayed_bytes: None,
            clock_skew_seconds: None,
            preceded_by: Vec::new(),
            sessions_lost: None,
            connections_refused: 0,
            confidence: 1.0,
            matched_by: None,
            notes: Vec::new(),
            container_kill: None,
            clients_saw: None,
            patroni: Vec::new(),
        }
    }

    /// True when the PostgreSQL process that died logged a PANIC just before: it aborted
    /// (SIGABRT) after a PANIC, or the PANIC it logged is its own (whatever the cause read
    /// from it: a full disk, an I/O error, a missing checkpoint).
    pub fn died_of_panic(&self) -> bool {
        let Some(crash) = &self.postgres_crash else {
            return false;
        };
        let mut panics = self
            .preceded_by
            .iter()
            .filter(|l| l.severity == Some("PANIC"));
        match crash.signal {
            Some(6) => panics.next().is_some(),
            _ => panics.any(|l| l.pid.is_none() || l.pid == Some(crash.pid)),
        }
    }
}

/// A container's run ended by the kernel's OOM killer at the container's memory limit, as
/// Kubernetes recorded it (`lastState.terminated` or `state.terminated` of the container's
/// status, `Last State: Terminated` in `kubectl describe pod`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContainerKill {
    /// The pod, when shown.
    pub pod: Option<String>,
    /// Its namespace, when shown.
    pub namespace: Option<String>,
    /// The container (`postgres`, `database`), when shown.
    pub container: Option<String>,
    /// The runtime's reason: `OOMKilled`.
    pub reason: String,
    /// The exit code (137 = 128 + SIGKILL).
    pub exit_code: Option<i32>,
    /// The signal that ended it (given, or from an exit code above 128).
    pub signal: Option<i32>,
    /// When the killed run had started (UTC).
    pub started_at: Option<Timestamp>,
    /// When it ended (UTC, whole seconds): where the incident is placed.
    pub finished_at: Option<Timestamp>,
    /// When the container's current run started, when it runs again.
    pub restarted_at: Option<Timestamp>,
    /// The container's restart count when the bundle was made.
    pub restart_count: Option<u64>,
    /// Its memory limit in bytes (`resources.limits.memory`), when shown.
    pub memory_limit_bytes: Option<u64>,
    /// The file.
    pub path: String,
    /// The line of the termination.
    pub line: u64,
}

/// The line an incident's cause was read from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CauseLine {
    /// `postgres` (the server log) or `kernel` (the kernel log, or a user-space OOM killer's
    /// line in the same syslog or journal).
    pub origin: &'static str,
    /// When (UTC), when known.
    pub at: Option<Timestamp>,
    /// The file.
    pub path: String,
    /// Its line.
    pub line: u64,
    /// The message, cut at 300 bytes.
    pub text: String,
}

/// A server log line cited by an incident.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogLine {
    /// When (UTC).
    pub at: Option<Timestamp>,
    /// The log.
    pub path: String,
    /// The record's first line.
    pub line: u64,
    /// The process that logged it.
    pub pid: Option<u32>,
    /// `ERROR`, `FATAL`, `PANIC`, `LOG`, ….
    pub severity: Option<&'static str>,
    /// The event kind, when classified (`out_of_memory`, `shared_memory_resize_failed`, …).
    pub kind: Option<&'static str>,
    /// The message.
    pub message: String,
    /// The wrapper's time of the record (a container runtime's, the journal's, a relay's, a
    /// cloud service's), when the log was wrapped and it is not `at`: both are kept. Absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapper_at: Option<Timestamp>,
}

/// Severity of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Something to know.
    Info,
    /// Something to fix before it hurts.
    Warning,
    /// The database went down.
    Critical,
}

impl Severity {
    /// Its name as the JSON report writes it: `critical`, `warning`, `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A conclusion with the lines it stands on.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// Stable identifier of the rule that produced it.
    pub id: &'static str,
    /// How bad.
    pub severity: Severity,
    /// One line for a person.
    pub title: String,
    /// What happened, with the numbers.
    pub summary: String,
    /// What to change.
    pub recommendation: Option<String>,
    /// The lines it stands on.
    pub evidence: Vec<Evidence>,
    /// Index into `incidents` of the incident it is about.
    pub incident: Option<usize>,
    /// Index into `groups` of the group of that incident (null when `incident` is). In a
    /// crash loop a rule speaks once per incident: the findings with the same `id` and
    /// `group` are those repeats, one finding to a person.
    pub group: Option<usize>,
    /// How sure the finding is, 0–1: its evidence's strength (an incident's tie confidence, a
    /// figure estimated rather than read, …).
    pub confidence: f64,
    /// The numbers it rests on and the ones it recommends, by name (`commit_limit_bytes`,
    /// `recommended_overcommit_ratio`, …).
    pub figures: BTreeMap<&'static str, f64>,
    /// Sort weight among findings of one severity (not serialised).
    #[serde(skip)]
    pub impact: f64,
}

/// One event on the unified timeline.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineEvent {
    /// UTC time, when known.
    pub at: Option<Timestamp>,
    /// Error bar of `at`, seconds.
    pub uncertainty_seconds: Option<f64>,
    /// `kernel`, `postgres`, `container`, `patroni` or `pgbackrest`.
    pub origin: &'static str,
    /// The event kind (`oom_report`, `terminated_by_signal`, `ready`, …).
    pub kind: String,
    /// One line for a person.
    pub summary: String,
    /// Source path.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// The wrapper's time of the record (a container runtime's, the journal's, a relay's, a
    /// cloud service's), when the log was wrapped and it is not `at`: both are kept. Absent
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapper_at: Option<Timestamp>,
    /// What a `storage_error` says happened, as the kernel record's `failure` names it
    /// (`filesystem_error`, `read_only`, `shutdown`, `io_error`, `device_reset`, `timeout`,
    /// `no_space`): the file system's own failures apart from the devices'. Absent for every
    /// other kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<&'static str>,
}

/// A pid of 0 (none recorded) as JSON `null`, never as a pid.
fn zero_as_null<S: serde::Serializer>(pid: &u32, serializer: S) -> Result<S::Ok, S::Error> {
    match pid {
        0 => serializer.serialize_none(),
        pid => serializer.serialize_u32(*pid),
    }
}

#[cfg(test)]
mod tests {
    use super::Evidence;

    #[test]
    fn a_place_names_the_host_file_a_line_was_copied_from() {
        let mut e = Evidence {
            path: "postgres/postgresql.conf".into(),
            line: 7,
            what: "work_mem = 64 MiB".into(),
            key: Some("work_mem".into()),
            host_file: None,
            host_line: None,
        };
        assert_eq!(e.place(), "postgres/postgresql.conf:7");
        assert_eq!(e.host_place(), None);
        e.host_file = Some("/etc/postgresql/15/main/conf.d/10-mem.conf".into());
        assert_eq!(
            e.host_place().as_deref(),
            Some("/etc/postgresql/15/main/conf.d/10-mem.conf")
        );
        e.host_line = Some(1);
        assert_eq!(
            e.place(),
            "postgres/postgresql.conf:7, from /etc/postgresql/15/main/conf.d/10-mem.conf:1"
        );
        // Serialised only when known.
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["host_line"], 1);
        e.host_file = None;
        e.host_line = None;
        let json = serde_json::to_value(&e).unwrap();
        assert!(json.get("host_file").is_none() && json.get("host_line").is_none());
    }
}

/// A value read from the bundle, with where it was read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Known<T> {
    /// The value.
    pub value: T,
    /// The file it came from, relative to the bundle root.
    pub path: String,
    /// The 1-based line it is on.
    pub line: u64,
    /// The key it was read under (`MemTotal`, `vm.overcommit_memory`, `shared_buffers`).
    pub key: String,
}

impl<T> Known<T> {
    /// A value read at `path:line` under `key`.
    pub fn new(value: T, path: &str, line: u64, key: &str) -> Self {
        Self {
            value,
            path: path.to_owned(),
            line,
            key: key.to_owned(),
        }
    }

    /// The place it was read, as a finding's evidence saying `what`.
    pub fn evidence(&self, what: impl Into<String>) -> Evidence {
        Evidence {
            path: self.path.clone(),
            line: self.line,
            what: what.into(),
            key: Some(self.key.clone()),
            host_file: None,
            host_line: None,
        }
    }
}

impl<T: Copy> Known<T> {
    /// The value.
    pub fn get(&self) -> T {
        self.value
    }
}

/// A rule that could not be evaluated, and for want of what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotEvaluated {
    /// The rule's id.
    pub rule: &'static str,
    /// The inputs it lacked (`meminfo`, `pg_settings`, …).
    pub missing: Vec<&'static str>,
    /// The files that would give them.
    pub files: Vec<&'static str>,
}
