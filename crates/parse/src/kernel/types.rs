//! The typed records the kernel-log parser yields. Field names here are a contract: the CLI's
//! `parse kernel` JSON and the Python bindings print them as they are.

use std::collections::BTreeMap;

use jiff::civil::DateTime;
use serde::Serialize;

/// Which printed form a kernel-log line had (detected per line, by shape).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LineForm {
    /// `[ 1234.567890] msg` (plain `dmesg`), optionally with a caller id `[T123]`.
    Monotonic,
    /// `dmesg -T`: `[Sun Apr  5 18:24:23 2020] msg`, localised names in either order.
    Ctime,
    /// `dmesg --time-format iso`: `2020-04-05T18:24:23,123456+02:00 msg`.
    Iso,
    /// Raw `/dev/kmsg` record: `6,30574067,3816544225424,-;msg`.
    Kmsg,
    /// `journalctl -k` short forms: `Apr 05 18:24:23 host kernel: msg` (also short-precise, short-full).
    Journal,
    /// `journalctl -o short-iso[-precise]` or RFC 5424 syslog: `2020-04-05T18:24:23+0200 host kernel: msg`.
    JournalIso,
    /// `journalctl -o short-monotonic`: `[ 1234.567890] host kernel: msg`.
    JournalMonotonic,
    /// BSD syslog (kern.log, messages): `Apr  5 18:24:23 host kernel: [1234.5] msg`.
    Syslog,
    /// No recognisable prefix: pasted text, `CONFIG_PRINTK_TIME=n`.
    Bare,
    /// `dmesg --time-format delta`/`reltime` and `dmesg -d -t`: `[  +0.000123] msg`,
    /// `[<    0.286036>] msg`, `[Nov21 17:15] msg`; times relative to the line before (or
    /// minute-precision headers without a year), so no clock is kept.
    Delta,
    /// A line taken out of a wrapper ([`crate::wrap`]: `journalctl -o json` / `-o export`, an
    /// RFC 5424 relay) with no prefix of its own: its time is the wrapper's (the journal's
    /// `_SOURCE_MONOTONIC_TIMESTAMP` and `__REALTIME_TIMESTAMP`).
    Wrapped,
}

/// A wall-clock time as printed on a line: a civil time, with its UTC offset when the line
/// printed one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WallClock {
    /// The civil date and time printed (local time of the host that printed it unless
    /// `utc_offset_seconds` is set).
    pub civil: DateTime,
    /// UTC offset printed on the line (ISO forms), in seconds east of UTC.
    pub utc_offset_seconds: Option<i32>,
    /// True when the line printed no year and the year came from [`super::KernelOptions::year`].
    pub year_inferred: bool,
}

/// When a kernel line was logged, with whatever clock(s) its prefix carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct KernelTime {
    /// Microseconds since boot (monotonic `local_clock`, pauses during suspend).
    pub monotonic_us: Option<u64>,
    /// Wall-clock time, when the form printed one.
    pub wall: Option<WallClock>,
}

/// One physical line with its prefix taken apart. Borrows from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelLine<'a> {
    /// 1-based line number in the input.
    pub number: u64,
    /// The form the prefix had.
    pub form: LineForm,
    /// The time(s) the prefix carried.
    pub time: KernelTime,
    /// printk level (0 emerg … 7 debug) from `<N>`, kmsg or `dmesg -x`, when printed.
    pub level: Option<u8>,
    /// Host name from journal/syslog forms.
    pub host: Option<&'a str>,
    /// The message with the prefix removed (leading indentation of continuation lines kept).
    pub message: &'a str,
    /// Caller id printed with `CONFIG_PRINTK_CALLER` (`T123` for a task, `C1` for a CPU).
    pub caller: Option<&'a str>,
    /// Syslog/journal program tag without its colon (`kernel`, `systemd[1]`); only kernel
    /// lines (tag `kernel` or no tag) feed event assembly.
    pub tag: Option<&'a str>,
    /// Sequence number of a raw `/dev/kmsg` record (gaps mean lost records).
    pub sequence: Option<u64>,
}

/// A kernel event assembled from one or more lines.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelRecord {
    /// 1-based number of the record's first line.
    pub line: u64,
    /// 1-based number of the record's last line.
    pub end_line: u64,
    /// Time of the record's first line (for an OOM report: of the trigger, or of the kill line
    /// when the header was lost).
    pub time: KernelTime,
    /// What happened; serialises its `kind` tag (`oom_report`, `segfault`, …) inline.
    #[serde(flatten)]
    pub event: KernelEvent,
}

/// The kinds of kernel event pgmortem extracts.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum KernelEvent {
    /// An OOM-killer report (header … task table … kill line … reaper), one per kill event.
    OomReport(Box<OomReport>),
    /// `X[PID]: segfault at ADDR ip IP sp SP error N in OBJ[BASE+SIZE]`.
    Segfault(Segfault),
    /// `X: page allocation failure: order:N, mode:0x…(…)`.
    PageAllocationFailure(PageAllocationFailure),
    /// `INFO: task X:PID blocked for more than N seconds.`
    HungTask(HungTask),
    /// A processor trap in a user-space process: `X[PID] general protection ip:… sp:… error:N
    /// in OBJ[…]` (2.6.32), `traps: X[PID] general protection …`, `traps: X[PID] trap invalid
    /// opcode …`, `traps: X[PID] trap divide error …`.
    Trap(Trap),
    /// A crashing process whose core dump the kernel did not write: `Pid N(X) over
    /// core_pipe_limit`, `coredump: N(X): over core_pipe_limit, skipping core dump` (6.10+).
    CoreDumpFailed(CoreDumpFailed),
    /// A storage or file-system error: `EXT4-fs error (device X): …`, `EXT4-fs (X): Remounting
    /// filesystem read-only`, XFS shutdowns and I/O errors, `Aborting journal on device X`,
    /// `Buffer I/O error on dev X`, `I/O error, dev X, sector N`, SCSI failures and resets.
    StorageError(StorageError),
    /// A crash reporter's line (abrt, systemd-coredump) about a process killed by a signal,
    /// from the same syslog or journal.
    CrashReport(CrashReport),
    /// The service manager's line about a unit (systemd): a process of it killed by the OOM
    /// killer, the unit failed, its main process exited, its memory peak.
    UnitEvent(UnitEvent),
    /// A hardware error the kernel reported: a machine check (`mce: [Hardware Error]: CPU N:
    /// Machine Check: …` and its continuation lines, `Machine check events logged`), a thermal
    /// event, an EDAC memory-controller error (`EDAC MC0: 1 CE memory read error on …`), a
    /// memory failure (`Memory failure: 0x…: recovery action for …: Recovered`, a process killed
    /// for touching a poisoned page) or an APEI/GHES record.
    HardwareError(HardwareError),
    /// A user-space OOM killer's kill, from the same syslog or journal: systemd-oomd (`Killed
    /// /system.slice/x.service due to memory pressure for … being N% > N% for > Ns with reclaim
    /// activity`, `Marked … for killing due to …`) or earlyoom (`sending SIGTERM to process N uid
    /// N "postgres": oom_score N, VmRSS N MiB`).
    UserspaceOomKill(UserspaceOomKill),
}

/// The task that asked for memory and set the OOM killer off (not necessarily the victim).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OomTrigger {
    /// Command name as printed before ` invoked oom-killer:` (≤ 15 chars, may hold spaces).
    pub comm: String,
    /// PID from the `CPU: … PID: N Comm: …` or old `Pid: N, comm: …` line.
    pub pid: Option<u32>,
    /// The gfp mask text as printed, e.g. `0xcc0(GFP_KERNEL)`.
    pub gfp_mask: Option<String>,
    /// Allocation order; -1 means a SysRq-triggered OOM.
    pub order: Option<i32>,
    /// `oom_score_adj=` of the trigger.
    pub oom_score_adj: Option<i32>,
    /// Old `oom_adj=` / `oomkilladj=` value (kernels ≤ 3.6).
    pub oom_adj: Option<i32>,
    /// CPU number from the CPU line.
    pub cpu: Option<u32>,
}

/// The process the kernel killed, from the kill line(s).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OomVictim {
    /// PID of the killed process (kernel's view: the init namespace).
    pub pid: u32,
    /// Command name (≤ 15 chars).
    pub comm: String,
    /// `anon-rss:` in kB.
    pub anon_rss_kb: Option<u64>,
    /// `file-rss:` in kB.
    pub file_rss_kb: Option<u64>,
    /// `shmem-rss:` in kB.
    pub shmem_rss_kb: Option<u64>,
    /// `total-vm:` in kB.
    pub total_vm_kb: Option<u64>,
    /// `pgtables:` in kB (5.4+), else from the task table when the victim's row is there.
    pub pgtables_kb: Option<u64>,
    /// `oom_score_adj:` (5.4+), else from the task table.
    pub oom_score_adj: Option<i32>,
    /// `UID:` (5.4+), else from the task table.
    pub uid: Option<u32>,
    /// `score S` from the old `Kill process N (x) score S or sacrifice child` line.
    pub score: Option<u64>,
    /// Message before `Killed process`: `Out of memory`, `Memory cgroup out of memory`, ….
    pub reason: Option<String>,
    /// Line number of the `Killed process` line.
    pub kill_line: u64,
    /// Fields of the kill line whose number does not fit (`anon-rss:99999999999999999999999kB`,
    /// a pid over 2^32), as printed: not read, and said in the report's notes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub out_of_range: Vec<String>,
}

/// A memory cgroup's counter line: `memory: usage 262144kB, limit 262144kB, failcnt 105`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemcgCounter {
    /// Usage in kB.
    pub usage_kb: u64,
    /// Limit in kB; `None` when the kernel printed its "unlimited" sentinel.
    pub limit_kb: Option<u64>,
    /// Times the limit was hit.
    pub failcnt: u64,
}

/// What the report says about the memory cgroup involved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemcgInfo {
    /// The cgroup whose limit was hit (`oom_memcg=`, or `limit of /b`), when printed.
    pub path: Option<String>,
    /// The victim's cgroup (`task_memcg=`, or `Task in /a`), when printed.
    pub task_path: Option<String>,
    /// `memory:` line.
    pub memory: Option<MemcgCounter>,
    /// `memory+swap:` line (v1).
    pub memory_swap: Option<MemcgCounter>,
    /// `kmem:` line (v1).
    pub kmem: Option<MemcgCounter>,
    /// `swap:` line (v2).
    pub swap: Option<MemcgCounter>,
    /// `Memory cgroup stats for /path:` stats, per cgroup path, every key kept as printed
    /// (v1 inline `cache:0KB` values are converted to bytes; v2 values are bytes already).
    pub stats: BTreeMap<String, BTreeMap<String, u64>>,
}

/// The `oom-kill:constraint=…` summary line (5.0+), every field as printed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OomSummary {
    /// `CONSTRAINT_NONE`, `CONSTRAINT_MEMCG`, … (any `CONSTRAINT_\w+`).
    pub constraint: String,
    /// Every `key=value` field of the line, in order of appearance.
    pub fields: Vec<(String, String)>,
}

/// One row of the task table, values normalised by the header that was printed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OomTask {
    /// `[ pid ]`.
    pub pid: u32,
    /// `uid`.
    pub uid: Option<u32>,
    /// `tgid`.
    pub tgid: Option<u32>,
    /// `total_vm` in pages.
    pub total_vm_pages: Option<u64>,
    /// `rss` in pages.
    pub rss_pages: Option<u64>,
    /// `rss_anon` in pages (≈6.8+).
    pub rss_anon_pages: Option<u64>,
    /// `rss_file` in pages (≈6.8+).
    pub rss_file_pages: Option<u64>,
    /// `rss_shmem` in pages (≈6.8+).
    pub rss_shmem_pages: Option<u64>,
    /// Page-table bytes: `pgtables_bytes` as printed, or `nr_ptes` (+ `nr_pmds`) × page size.
    pub pgtables_bytes: Option<u64>,
    /// `swapents` in pages.
    pub swapents: Option<u64>,
    /// `oom_score_adj`.
    pub oom_score_adj: Option<i32>,
    /// `oom_adj` (old tables).
    pub oom_adj: Option<i32>,
    /// `cpu` (old tables).
    pub cpu: Option<u32>,
    /// Command name: the rest of the row (may hold spaces).
    pub name: String,
}

/// `oom_reaper: reaped process N (x), now anon-rss:…kB, file-rss:…kB, shmem-rss:…kB`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OomReaped {
    /// PID reaped.
    pub pid: u32,
    /// Command name.
    pub comm: String,
    /// Remaining anon RSS in kB.
    pub anon_rss_kb: Option<u64>,
    /// Remaining file RSS in kB.
    pub file_rss_kb: Option<u64>,
    /// Remaining shmem RSS in kB.
    pub shmem_rss_kb: Option<u64>,
}

/// One OOM-killer event, assembled from every line the kernel printed for it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OomReport {
    /// The `invoked oom-killer` line and the CPU line; `None` when the header was lost (rate
    /// limiting) and the report starts from its kill line.
    pub trigger: Option<OomTrigger>,
    /// The killed process; `None` means "no victim recorded" — never guessed.
    pub victim: Option<OomVictim>,
    /// `global`, `memcg`, `cpuset`, `memory_policy`, or the raw `CONSTRAINT_*` name lower-cased
    /// without its prefix; from the summary line, else inferred from the report (memcg lines,
    /// kill message). `None` when nothing says.
    pub constraint: Option<String>,
    /// The `oom-kill:` summary line, when printed.
    pub summary: Option<OomSummary>,
    /// Memory cgroup information, when the report has any.
    pub memcg: Option<MemcgInfo>,
    /// The task table, in printed order.
    pub tasks: Vec<OomTask>,
    /// The task-table header's column names as printed (after `[ pid ]`).
    pub task_columns: Vec<String>,
    /// Mem-Info counters (`active_anon`, `free`, …, in pages) plus `free_swap_kb`,
    /// `total_swap_kb`, `pages_ram`, `pages_reserved`, … every key kept.
    pub mem_info: BTreeMap<String, u64>,
    /// `oom_reaper: reaped process …`, when printed.
    pub reaped: Option<OomReaped>,
    /// Further victims killed with `memory.oom.group` (4.19+).
    pub group_kills: Vec<OomVictim>,
    /// True when the report ended before its kill line or mid-table (end of input, or another
    /// report's header).
    pub truncated: bool,
    /// Human-readable notes: "no victim recorded", "header lost (rate limited?)", ….
    pub notes: Vec<String>,
    /// Lines of other kernel messages printed among this report's lines before its kill line
    /// (not part of the report; they are parsed as ordinary kernel lines, not lost).
    pub interleaved_lines: u64,
}

/// A process's death by a signal as a crash reporter logged it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CrashReport {
    /// The reporter: `abrt-hook-ccpp`, `systemd-coredump`.
    pub reporter: String,
    /// PID of the process that died.
    pub pid: u32,
    /// Its command name.
    pub comm: String,
    /// Its user id.
    pub uid: Option<u32>,
    /// The signal that killed it, when printed.
    pub signal: Option<i32>,
    /// Whether a core was (being) written: `Some(false)` when the reporter said it ignored
    /// the crash; `None` when the line does not say.
    pub core_dumped: Option<bool>,
}

/// What a service manager's unit line says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UnitEventKind {
    /// `A process of this unit has been killed by the OOM killer.`: the kernel's OOM killer
    /// killed a process in the unit's cgroup.
    OomKill,
    /// `systemd-oomd killed N process(es) in this unit.`: the userspace killer did.
    OomdKill,
    /// `Failed with result 'R'.` (`oom-kill`, `signal`, `exit-code`, …).
    Failed,
    /// `Main process exited, code=…, status=…`.
    MainProcessExited,
    /// `Consumed … memory peak`.
    MemoryPeak,
}

/// A service manager's line about one unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnitEvent {
    /// The unit (`postgresql.service`, `system-postgresql.slice`).
    pub unit: String,
    /// What happened.
    pub what: UnitEventKind,
    /// What the line adds: the result (`oom-kill`), `code=…, status=…`, the memory peak
    /// (`6.5G`), the number of processes systemd-oomd killed.
    pub detail: Option<String>,
    /// For an OOM kill: the ancestor slices that reported the same kill again on their own
    /// lines (systemd prints it once per unit up the tree), folded into this one.
    pub ancestors: Vec<String>,
}

/// A user-space segfault reported by the kernel.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Segfault {
    /// Command name.
    pub comm: String,
    /// PID.
    pub pid: u32,
    /// Faulting address (hex text as printed).
    pub address: String,
    /// Instruction pointer (hex text).
    pub ip: String,
    /// Stack pointer (hex text).
    pub sp: String,
    /// Error code.
    pub error: u32,
    /// Object the ip fell in (`libc.so.6`, `postgres`), when printed.
    pub object: Option<String>,
}

/// A failed kernel page allocation (`page allocation failure: order:N, mode:…`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PageAllocationFailure {
    /// Command name.
    pub comm: String,
    /// PID from the following CPU line, when printed.
    pub pid: Option<u32>,
    /// Allocation order.
    pub order: u32,
    /// Mode text as printed, e.g. `0x24000c0(GFP_KERNEL)`.
    pub mode: String,
}

/// A task blocked in uninterruptible sleep past `hung_task_timeout_secs`, with what the
/// detector printed after its `INFO: task …` line: the task's state line and its stack.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HungTask {
    /// Command name.
    pub comm: String,
    /// PID.
    pub pid: u32,
    /// Seconds blocked.
    pub seconds: u64,
    /// The task's state letter (`D`), from `task:X state:D stack:… pid:N …` (5.x/6.x) or the
    /// older `X D ffff… 0 N PPID 0x…` line, when printed.
    pub state: Option<String>,
    /// Parent PID, from `ppid:N` (5.x/6.x) or the older state line, when printed.
    pub ppid: Option<u32>,
    /// The reliable frames of its `Call Trace:`, innermost first, as `symbol` or `symbol
    /// [module]` (offsets and `? ` guesses left out), at most [`MAX_HUNG_FRAMES`].
    pub frames: Vec<String>,
    /// Frames past [`MAX_HUNG_FRAMES`]: counted, not kept.
    pub frames_not_kept: u32,
}

/// Frames of a hung task's stack kept.
pub const MAX_HUNG_FRAMES: usize = 48;

/// A processor trap the kernel turned into a signal for a user-space process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Trap {
    /// Command name.
    pub comm: String,
    /// PID.
    pub pid: u32,
    /// The trap as printed: `general protection`, `general protection fault`, `invalid
    /// opcode`, `divide error`, ….
    pub trap: String,
    /// The signal the trap delivers (11 for a general protection fault, 4 for an invalid
    /// opcode, 8 for a divide error, …), when the trap is one whose signal is known.
    pub signal: Option<i32>,
    /// Instruction pointer (hex text as printed).
    pub ip: String,
    /// Stack pointer (hex text).
    pub sp: String,
    /// Error code (hex text as printed after `error:`).
    pub error: String,
    /// Object the ip fell in (`libc.so.6`, `pg_pathman.so`), when printed.
    pub object: Option<String>,
}

/// A core dump the kernel did not write for a crashing process.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CoreDumpFailed {
    /// Command name.
    pub comm: String,
    /// PID (thread-group id in the crashing process's namespace).
    pub pid: u32,
    /// Why, as printed: `over core_pipe_limit`, ….
    pub reason: String,
}

/// Which part of the storage stack reported an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StorageLayer {
    /// ext2/3/4 (`EXT4-fs …`, `EXT3-fs …`).
    Ext4,
    /// XFS (`XFS (dev): …`).
    Xfs,
    /// The jbd2 journal (`Aborting journal on device X`).
    Journal,
    /// The buffer cache (`Buffer I/O error on dev X`).
    Buffer,
    /// The block layer (`I/O error, dev X, sector N`).
    Block,
    /// A SCSI disk (`sd H:C:T:L: …`).
    Scsi,
    /// An NVMe controller or namespace (`nvme nvme0: …`, `nvme0n1: …`).
    Nvme,
}

/// What a storage error line says happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StorageFailure {
    /// A file-system error (corruption found, or an I/O error it met).
    FilesystemError,
    /// The file system was remounted read-only after an error.
    ReadOnly,
    /// The file system shut itself down (XFS) or its journal aborted (jbd2).
    Shutdown,
    /// An I/O request failed at the block, buffer or device layer.
    IoError,
    /// The device was reset or taken offline.
    DeviceReset,
    /// A request timed out (`nvme nvme0: I/O N QID N timeout, aborting`, the block layer's
    /// `timeout error, dev X`).
    Timeout,
    /// The device could not store a write for want of space (the block layer's `critical space
    /// allocation error, dev X`: a thin pool, or a loop device's backing file system, full).
    NoSpace,
}

impl StorageFailure {
    /// The name the JSON gives it (`filesystem_error`, `read_only`, `shutdown`, `io_error`,
    /// `device_reset`, `timeout`, `no_space`).
    pub fn as_str(self) -> &'static str {
        match self {
            StorageFailure::FilesystemError => "filesystem_error",
            StorageFailure::ReadOnly => "read_only",
            StorageFailure::Shutdown => "shutdown",
            StorageFailure::IoError => "io_error",
            StorageFailure::DeviceReset => "device_reset",
            StorageFailure::Timeout => "timeout",
            StorageFailure::NoSpace => "no_space",
        }
    }
}

/// A storage or file-system error the kernel logged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StorageError {
    /// Who reported it.
    pub layer: StorageLayer,
    /// What happened.
    pub failure: StorageFailure,
    /// The device as printed (`sdb`, `dm-0`, `sdb-8`, `5:0:0:1`), when printed.
    pub device: Option<String>,
    /// The process that met the error (`comm postgres` of ext4 errors), when printed.
    pub comm: Option<String>,
    /// The status the block layer or the device printed: `I/O error`, `critical space
    /// allocation error`, `critical medium error`, `timeout, aborting`, `I/O Error (sct 0x2 /
    /// sc 0x81)`, … when the line has one.
    pub status: Option<String>,
    /// The failed request's first sector (block layer), when printed.
    pub sector: Option<u64>,
    /// The failed request's operation as printed (`WRITE`, `READ`, `FLUSH`, NVMe's `Cmd(0x2)`),
    /// when printed.
    pub op: Option<String>,
    /// The message as printed, cut at 200 bytes.
    pub message: String,
}

/// Which part of the machine reported a hardware error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum HardwareSource {
    /// A machine check (`mce: [Hardware Error]: …`, `Machine check events logged`).
    MachineCheck,
    /// A CPU over its temperature threshold (`mce: CPU3: Core temperature above threshold, cpu
    /// clock throttled (total events = N)`).
    Thermal,
    /// A memory controller's error, decoded by EDAC (`EDAC MC0: 1 CE memory read error on …`,
    /// `EDAC sbridge MC1: HANDLING MCE MEMORY ERROR` and its lines).
    Edac,
    /// The kernel's handling of a poisoned page (`Memory failure: 0x…: recovery action for …`,
    /// `MCE: Killing postgres:1234 due to hardware memory corruption fault at …`).
    MemoryFailure,
    /// A firmware-first error record (`{1}[Hardware Error]: Hardware error from APEI Generic
    /// Hardware Error Source: N` and its lines).
    Apei,
}

/// A hardware error the kernel logged (one record per error: the continuation lines of a
/// machine check, an EDAC driver's or an APEI record's are folded into it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HardwareError {
    /// Who reported it.
    pub source: HardwareSource,
    /// `Some(true)` for a corrected error (EDAC `CE`, a machine-check status without its UC
    /// bit, APEI `corrected`), `Some(false)` for an uncorrected one (EDAC `UE`/`Fatal`, the UC
    /// bit, a memory failure, APEI `recoverable`/`fatal`); `None` when the lines do not say
    /// (`Machine check events logged`, a thermal event).
    pub corrected: Option<bool>,
    /// The CPU, when printed.
    pub cpu: Option<u32>,
    /// The machine-check bank, when printed.
    pub bank: Option<u32>,
    /// The bank's MCi_STATUS as printed (hex), when printed.
    pub status: Option<String>,
    /// The memory controller (`MC1` → 1), for EDAC.
    pub memory_controller: Option<u32>,
    /// Errors the line counts: EDAC's count, a thermal event's `total events`.
    pub count: Option<u64>,
    /// Where: EDAC's DIMM label (`CPU_SrcID#0_Ha#0_Chan#2_DIMM#0`), APEI's `DIMM location`.
    pub location: Option<String>,
    /// The page (physical frame number, hex as printed) of a memory failure or an EDAC error.
    pub page: Option<String>,
    /// The physical address as printed (`ADDR` of a machine check, a fault address).
    pub address: Option<String>,
    /// The process killed or signalled for the error, when named.
    pub pid: Option<u32>,
    /// Its command name.
    pub comm: Option<String>,
    /// What the kernel did, as printed: a memory failure's result (`Recovered`, `Ignored`,
    /// `Failed`, `Delayed`, `already hardware poisoned`), `killed` when it killed a process,
    /// `throttled` for a thermal event.
    pub outcome: Option<String>,
    /// The error's first line, cut at 200 bytes.
    pub message: String,
    /// The continuation lines folded in (`TSC … ADDR …`, `PROCESSOR …`, APEI's lines), at most
    /// [`MAX_HARDWARE_DETAILS`], each cut at 200 bytes.
    pub details: Vec<String>,
}

/// Continuation lines a hardware error keeps.
pub const MAX_HARDWARE_DETAILS: usize = 16;

/// Which user-space OOM killer acted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum UserspaceKiller {
    /// systemd-oomd: kills whole cgroups on memory pressure (PSI) or swap use.
    SystemdOomd,
    /// earlyoom: kills the process with the highest `oom_score` when available memory and swap
    /// are low.
    Earlyoom,
}

/// A user-space OOM killer's kill.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UserspaceOomKill {
    /// Who killed.
    pub killer: UserspaceKiller,
    /// The cgroup killed (systemd-oomd), as printed.
    pub cgroup: Option<String>,
    /// The process killed (earlyoom), when printed.
    pub pid: Option<u32>,
    /// Its command name (earlyoom).
    pub comm: Option<String>,
    /// Its user id (earlyoom), when printed.
    pub uid: Option<u32>,
    /// The signal sent: `SIGTERM`, `SIGKILL` (earlyoom), `KILL` (systemd-oomd's `oomd
    /// attempting to kill N with KILL`), when printed.
    pub signal: Option<String>,
    /// Why: `memory pressure` or `swap used` (systemd-oomd), `low memory` (earlyoom).
    pub reason: String,
    /// systemd-oomd: the cgroup whose pressure was over its limit (the slice the unit is
    /// under), when printed.
    pub monitored: Option<String>,
    /// What was measured, as printed: systemd-oomd's pressure (`85.03%`) or swap used, earlyoom's
    /// `mem 10.00%, swap 10.00%` limits line.
    pub measured: Option<String>,
    /// The limit it was over, as printed (`80.00%`), when printed.
    pub limit: Option<String>,
    /// For how long (`2s`, `20s`), when printed.
    pub duration: Option<String>,
    /// earlyoom's `VmRSS` of the victim, in MiB.
    pub rss_mib: Option<u64>,
    /// earlyoom's `oom_score` (or the older `badness`) of the victim.
    pub oom_score: Option<i64>,
    /// systemd-oomd: the pids it signalled for this kill (`oomd attempting to kill N with
    /// KILL`, printed before the kill line), at most [`MAX_KILL_DETAILS`].
    pub pids: Vec<u32>,
    /// systemd-oomd: the `Path:` of each top candidate it listed before the kill (`Considered N
    /// cgroups for killing, top candidates were:`), at most [`MAX_KILL_DETAILS`].
    pub candidates: Vec<String>,
    /// The kill line, cut at 300 bytes.
    pub message: String,
}

/// Pids and candidates a user-space OOM kill keeps.
pub const MAX_KILL_DETAILS: usize = 16;
