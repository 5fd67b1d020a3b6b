//! The typed records the PostgreSQL log parser yields. Field names are a contract (CLI JSON,
//! Python dicts).

use std::borrow::Cow;

use jiff::{Timestamp, civil::DateTime};
use serde::{Serialize, Serializer};

/// A WAL position, printed by PostgreSQL as `X/Y` (hex halves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lsn(pub u64);

impl Lsn {
    /// Parses `16/B374D848`; `None` when the text is not an LSN.
    pub fn parse(text: &str) -> Option<Lsn> {
        let (hi, lo) = text.split_once('/')?;
        if hi.is_empty() || lo.is_empty() || hi.len() > 8 || lo.len() > 8 {
            return None;
        }
        let hi = u32::from_str_radix(hi, 16).ok()?;
        let lo = u32::from_str_radix(lo, 16).ok()?;
        Some(Lsn((u64::from(hi) << 32) | u64::from(lo)))
    }
}

impl std::fmt::Display for Lsn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:X}/{:X}", self.0 >> 32, self.0 & 0xffff_ffff)
    }
}

impl Serialize for Lsn {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A log line's time as printed by `%m`/`%t`/`%n`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PgTime {
    /// Civil time as printed.
    pub civil: DateTime,
    /// Zone as printed (`UTC`, `CEST`, `+03`, …), when printed. Common abbreviations are
    /// shared static text, others owned.
    pub zone: Option<Cow<'static, str>>,
    /// The UTC instant, when the zone could be resolved without a time-zone database (UTC, GMT,
    /// numeric offsets, `%n` epoch) — else the caller resolves `civil` + `zone`.
    pub utc: Option<Timestamp>,
}

/// Severity normalised to English.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
#[allow(missing_docs)]
pub enum Severity {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Log,
    Fatal,
    Panic,
}

/// One log record: a prefixed line plus the lines that continue it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PgRecord {
    /// 1-based number of the record's first line.
    pub line: u64,
    /// 1-based number of the record's last line (continuations included).
    pub end_line: u64,
    /// Time from the prefix.
    pub time: Option<PgTime>,
    /// Process id from `%p`.
    pub pid: Option<u32>,
    /// `%c` session id.
    pub session_id: Option<String>,
    /// `%l` session line number.
    pub session_line: Option<u64>,
    /// `%u` user.
    pub user: Option<String>,
    /// `%d` database.
    pub database: Option<String>,
    /// `%a` application name.
    pub application: Option<String>,
    /// `%r`/`%h` client.
    pub client: Option<String>,
    /// `%b` backend type.
    pub backend_type: Option<String>,
    /// `%e` SQLSTATE.
    pub sqlstate: Option<String>,
    /// `%i` command tag (`SELECT`, `idle`, `authentication`, …).
    pub command_tag: Option<String>,
    /// `%s` session start time, as printed.
    pub session_start: Option<String>,
    /// `%x` transaction id (0 when none was assigned).
    pub xid: Option<u64>,
    /// `%v` virtual transaction id (`3/12`).
    pub vxid: Option<String>,
    /// `%P` parallel group leader PID.
    pub leader_pid: Option<u32>,
    /// `%Q` query id.
    pub query_id: Option<i64>,
    /// `%L` local address.
    pub local_address: Option<String>,
    /// Severity of the main line.
    pub severity: Option<Severity>,
    /// Main message text.
    pub message: String,
    /// `DETAIL:` text.
    pub detail: Option<String>,
    /// `HINT:` text.
    pub hint: Option<String>,
    /// `CONTEXT:` text.
    pub context: Option<String>,
    /// `STATEMENT:` text.
    pub statement: Option<String>,
    /// `QUERY:` text (the internal query a PL function ran).
    pub query: Option<String>,
    /// `LOCATION:` text (source file and line, `log_error_verbosity = verbose`).
    pub location: Option<String>,
    /// The event this record is, when classified.
    pub event: Option<PgEvent>,
    /// The language of the server's messages when it is not English (`fr`, `de`, `ja`, `ru`,
    /// `zh_CN`, `es`), as told by a translated severity word, `[unknown]` or message.
    pub language: Option<&'static str>,
    /// The `MemoryContextStats` dump the process wrote to stderr just before this record
    /// (`ERROR: out of memory` in stderr logs), parsed; or the dump alone (`severity: null`)
    /// when no out-of-memory error followed it.
    pub memory_context_dump: Option<Box<MemoryContextDump>>,
    /// The time the line's wrapper gave it (a container runtime's `time`, the journal's
    /// `__REALTIME_TIMESTAMP`), on UTC, when the log was read out of a wrapper
    /// ([`crate::wrap`]). `time` is PostgreSQL's own when the line printed one, else this; both
    /// are kept, so a wrapper's clock that disagrees with the server's shows. Not serialised
    /// when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapper_time: Option<PgTime>,
}

/// The un-prefixed memory-context report a backend writes to stderr before `ERROR:  out of
/// memory` (`TopMemoryContext: 65624 total in 3 blocks; …` … `Grand total: …`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemoryContextDump {
    /// 1-based number of the dump's first line.
    pub line: u64,
    /// 1-based number of the dump's last line.
    pub end_line: u64,
    /// Context lines in the order printed (at most [`MemoryContextDump::MAX_CONTEXTS`]).
    pub contexts: Vec<MemoryContextStat>,
    /// Context lines beyond [`MemoryContextDump::MAX_CONTEXTS`], counted only.
    pub omitted_contexts: u64,
    /// The `Grand total:` line, when the dump got that far.
    pub grand_total: Option<MemoryTotals>,
}

impl MemoryContextDump {
    /// How many context lines are kept per dump.
    pub const MAX_CONTEXTS: usize = 1000;
}

/// One line of a memory-context dump:
/// `      ExprContext: 1000008256 total in 2 blocks; 7928 free (0 chunks); 1000000328 used`,
/// `    index info: 2048 total in 2 blocks; 824 free (0 chunks); 1224 used: pg_index_indexrelid_index`,
/// `    12 more child contexts containing 45056 total in 7 blocks; 12345 free (67 chunks); 32711 used`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemoryContextStat {
    /// Nesting depth (indent / 2; `TopMemoryContext` is 0).
    pub depth: u32,
    /// Context name (`ExprContext`); for a `N more child contexts` line, `None`.
    pub name: Option<String>,
    /// What the context is for, printed after `used: ` (PG ≥ 11): an index or query name.
    pub identifier: Option<String>,
    /// For `N more child contexts containing …`: N.
    pub more_children: Option<u64>,
    /// The figures of the line.
    #[serde(flatten)]
    pub totals: MemoryTotals,
}

/// `T total in B blocks; F free (C chunks); U used`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryTotals {
    /// Bytes allocated from the system.
    pub total_bytes: u64,
    /// Blocks.
    pub blocks: u64,
    /// Free bytes inside the blocks.
    pub free_bytes: u64,
    /// Free chunks.
    pub free_chunks: u64,
    /// Bytes in use.
    pub used_bytes: u64,
}

/// Classified PostgreSQL events; `kind` is the snake_case variant name. The catalog, with the
/// exact messages of each version, is docs/pglog-events.md.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PgEvent {
    /// `<process> (PID n) was terminated by signal s: <name>`.
    TerminatedBySignal {
        /// `server process`, `client backend`, `checkpointer process`, `background worker "…"`.
        process: String,
        /// PID of the dead child.
        pid: u32,
        /// Signal number (key on this, not the localised name).
        signal: i32,
        /// Signal description as printed (libc `strsignal`, localised).
        signal_name: String,
        /// `DETAIL: Failed process was running: <query>`, when printed.
        query: Option<String>,
    },
    /// `<process> (PID n) exited with exit code n`.
    ExitedWithCode {
        /// Process kind as printed.
        process: String,
        /// PID of the child.
        pid: u32,
        /// Exit code.
        code: i32,
        /// `DETAIL: Failed process was running: <query>`, when printed.
        query: Option<String>,
    },
    /// `terminating any other active server processes`.
    TerminatingOtherProcesses,
    /// `all server processes terminated; reinitializing`.
    Reinitializing,
    /// `database system was interrupted; last known up at <time>`.
    Interrupted {
        /// The time text as printed.
        last_known_up: String,
    },
    /// `database system was not properly shut down; automatic recovery in progress`.
    AutomaticRecovery,
    /// `redo starts at X/Y`.
    RedoStart {
        /// LSN where redo starts.
        lsn: Lsn,
    },
    /// `redo done at X/Y [system usage: … elapsed: S s]`.
    RedoDone {
        /// LSN where redo ended.
        lsn: Lsn,
        /// `elapsed:` seconds (PG ≥ 14).
        elapsed_seconds: Option<f64>,
    },
    /// `database system is ready to accept connections`.
    Ready,
    /// `<process> (PID n) exited with unrecognized status n`.
    ExitedWithUnrecognizedStatus {
        /// Process kind as printed.
        process: String,
        /// PID of the child.
        pid: u32,
        /// Raw wait status.
        status: i32,
    },
    /// `database system was interrupted while in recovery at <time>` (also `… at log time …`).
    InterruptedWhileInRecovery {
        /// The time text as printed.
        at: String,
    },
    /// `last completed transaction was at log time <time>` (after `redo done`, PG 10–11 seen).
    LastCompletedTransaction {
        /// The time text as printed (`2026-11-21 17:18:47.201369+00`).
        at: String,
    },
    /// `redo is not required`: the crash left no WAL to replay.
    RedoNotRequired,
    /// `invalid record length at X/Y: …`: the normal end of WAL during crash recovery.
    InvalidRecordLength {
        /// LSN of the invalid record.
        lsn: Lsn,
    },
    /// `checkpoint starting: <flags>` (`end-of-recovery immediate wait`, `time`, `shutdown …`).
    CheckpointStarting {
        /// Flags as printed, in order.
        flags: Vec<String>,
    },
    /// `database system was shut down at <time>`: a clean start.
    ShutDownAt {
        /// The time text as printed.
        at: String,
    },
    /// `received <mode> shutdown request`.
    ShutdownRequested {
        /// `smart`, `fast` or `immediate`.
        mode: String,
    },
    /// `database system is shut down`.
    ShutDown,
    /// `the database system is in recovery mode` (a connection refused during crash recovery).
    InRecoveryMode,
    /// `the database system is starting up` (a connection refused before recovery began).
    StartingUp,
    /// `the database system is not yet accepting connections` (PG ≥ 14, a connection refused
    /// before a consistent recovery state; DETAIL `Consistent recovery state has not been yet
    /// reached.`).
    NotYetAcceptingConnections,
    /// `terminating connection because of crash of another server process` (server log on PG
    /// 10–13 only).
    TerminatingConnectionCrash,
    /// `terminating connection due to unexpected postmaster exit`: a backend found its
    /// postmaster gone (killed, or crashed) and exits.
    UnexpectedPostmasterExit,
    /// `shutting down because restart_after_crash is off` / `… due to startup process failure`.
    ShuttingDownAfterCrash {
        /// The reason as printed.
        reason: String,
    },
    /// `starting PostgreSQL <version> on …` (PG ≥ 12).
    Starting {
        /// The version as printed (`15.14 (Debian 15.14-0+deb12u1)`).
        version: String,
    },
    /// `out of memory` with its `DETAIL: Failed on request of size N [in memory context "X"].`
    OutOfMemory {
        /// Bytes requested, from the DETAIL.
        request_bytes: Option<u64>,
        /// Memory context named in the DETAIL (PG ≥ 11).
        memory_context: Option<String>,
    },
    /// `<process> (PID n) was terminated by exception 0xC0000005` (Windows).
    TerminatedByException {
        /// Process kind as printed.
        process: String,
        /// PID of the dead child.
        pid: u32,
        /// The NTSTATUS code as printed (`0xC0000005`).
        code: String,
    },
    /// `aborting any active transactions` (fast shutdown).
    AbortingActiveTransactions,
    /// `shutting down` (the checkpointer's last checkpoint begins).
    ShuttingDown,
    /// `the database system is shutting down` (a connection refused during shutdown).
    RefusedShuttingDown,
    /// `database system is ready to accept read[-| ]only connections` (a standby).
    ReadyReadOnly,
    /// `checkpoint complete: wrote N buffers (P%); …; distance=D kB, estimate=E kB`.
    CheckpointComplete {
        /// Buffers written.
        buffers: u64,
        /// Their share of shared_buffers, percent.
        buffers_percent: Option<f64>,
        /// WAL files added, removed, recycled.
        wal_added: Option<u64>,
        /// WAL files removed.
        wal_removed: Option<u64>,
        /// WAL files recycled.
        wal_recycled: Option<u64>,
        /// `write=` seconds.
        write_seconds: Option<f64>,
        /// `sync=` seconds.
        sync_seconds: Option<f64>,
        /// `total=` seconds.
        total_seconds: Option<f64>,
        /// `distance=` kB of WAL since the previous checkpoint.
        distance_kb: Option<u64>,
        /// `estimate=` kB.
        estimate_kb: Option<u64>,
    },
    /// `checkpoints are occurring too frequently (N seconds apart)`.
    CheckpointsTooFrequent {
        /// Seconds between the two checkpoints.
        seconds: u64,
    },
    /// `could not resize shared memory segment "/PostgreSQL.N" to N bytes: <error>` (a full
    /// /dev/shm).
    SharedMemoryResizeFailed {
        /// The segment name.
        segment: String,
        /// Size asked for.
        bytes: u64,
        /// strerror text as printed.
        error: String,
        /// True when the error is ENOSPC (`No space left on device`, in any language).
        no_space: bool,
    },
    /// `could not map anonymous shared memory: <error>` (at start).
    SharedMemoryMapFailed {
        /// strerror text as printed.
        error: String,
        /// The size asked for, from the HINT `… (currently N bytes) …`, when printed.
        request_bytes: Option<u64>,
    },
    /// `could not fork new process for connection: <error>`, `could not fork autovacuum worker
    /// process: …`, `could not fork worker process: …`, `could not fork "<type>" process: …`.
    ForkFailed {
        /// What could not be started, as printed (`new process for connection`,
        /// `autovacuum worker process`, `"autovacuum worker" process`).
        process: String,
        /// strerror text as printed.
        error: String,
    },
    /// `could not write to file "<path>": <error>`, `could not write block N in file "<path>": …`.
    CouldNotWrite {
        /// The file.
        path: String,
        /// strerror text as printed.
        error: String,
        /// True when the error is ENOSPC, in any language.
        no_space: bool,
        /// True when the error is EROFS (`Read-only file system`), in any language.
        read_only: bool,
        /// True when the error is EIO (`Input/output error`), in any language.
        io_error: bool,
    },
    /// `could not extend file "<path>": <error>` (or `: wrote only N of M bytes at block B`).
    CouldNotExtendFile {
        /// The file.
        path: String,
        /// Error text as printed.
        error: String,
        /// True when the error is ENOSPC, in any language.
        no_space: bool,
        /// True when the error is EROFS (`Read-only file system`), in any language.
        read_only: bool,
        /// True when the error is EIO (`Input/output error`), in any language.
        io_error: bool,
    },
    /// `could not read block N in file "<path>": <error>`.
    CouldNotReadBlock {
        /// Block number.
        block: u64,
        /// The file.
        path: String,
        /// Error text as printed.
        error: String,
        /// True when the error is EIO (`Input/output error`), in any language; false for a
        /// short read (`read only N of M bytes`).
        io_error: bool,
    },
    /// `could not read from WAL segment <segment>, offset N: <error>` (≥ 13; `… from log
    /// segment …` before), also `…: read N of M`: the startup process or a walsender could not
    /// read WAL (logged at LOG by the startup process, which then looks elsewhere or stops).
    CouldNotReadWal {
        /// The segment's file name.
        segment: String,
        /// The offset, when printed.
        offset: Option<u64>,
        /// Error text as printed.
        error: String,
        /// True when the error is EIO (`Input/output error`), in any language.
        io_error: bool,
    },
    /// `invalid page in block N of relation <path>`.
    InvalidPage {
        /// Block number.
        block: u64,
        /// The relation's file path as printed.
        relation: String,
    },
    /// `page verification failed, calculated checksum N but expected M`.
    ChecksumFailure {
        /// Checksum computed over the page.
        calculated: u64,
        /// Checksum stored in the page.
        expected: u64,
    },
    /// A PANIC record no other kind describes.
    Panic,
    /// `sorry, too many clients already` (max_connections reached).
    TooManyClients,
    /// `remaining connection slots are reserved for …` (only reserved slots are left).
    ReservedConnectionSlots {
        /// Who they are reserved for, as printed (`non-replication superuser connections`,
        /// `roles with the SUPERUSER attribute`, …).
        reserved_for: String,
    },
    /// `too many connections for role "x"` / `… for database "x"`.
    TooManyConnections {
        /// `role` or `database`.
        scope: String,
        /// Its name.
        name: String,
    },
    /// `temporary file: path "…", size N` (log_temp_files).
    TempFile {
        /// The file.
        path: String,
        /// Its size in bytes.
        bytes: u64,
    },
    /// `canceling statement due to <reason>`.
    StatementCanceled {
        /// `statement timeout`, `lock timeout`, `user request`, `conflict with recovery`.
        reason: String,
    },
    /// `canceling autovacuum task`.
    AutovacuumCanceled,
    /// `terminating connection due to idle-in-transaction timeout`.
    IdleInTransactionTimeout,
    /// `terminating connection due to idle-session timeout` (PG ≥ 14).
    IdleSessionTimeout,
    /// `terminating connection due to administrator command` (pg_terminate_backend, shutdown).
    TerminatedByAdministrator,
    /// `using stale statistics instead of current ones because stats collector is not
    /// responding` (PG 10–14).
    StaleStatistics,
    /// `could not fsync file "<path>": <error>` (PANIC unless data_sync_retry is on), also
    /// `could not fdatasync file …`, `could not fsync write-through file …`, and the WAL's
    /// `could not fsync log file <segment>: …`.
    CouldNotFsync {
        /// The file (a WAL segment's name for the `log file` form).
        path: String,
        /// strerror text as printed.
        error: String,
        /// True when the error is EIO (`Input/output error`), in any language.
        io_error: bool,
        /// True when the error is ENOSPC, in any language.
        no_space: bool,
        /// True when the error is EROFS, in any language.
        read_only: bool,
    },
    /// `could not open file "<path>": <error>` (also `… for reading: …`, `… (target block N):
    /// …`) and `could not create file "<path>": <error>`.
    CouldNotOpenFile {
        /// The file.
        path: String,
        /// Error text as printed.
        error: String,
        /// True for `could not create file`.
        create: bool,
        /// True when the error is EROFS (`Read-only file system`), in any language.
        read_only: bool,
        /// True when the error is EIO, in any language.
        io_error: bool,
        /// True when the error is ENOSPC, in any language.
        no_space: bool,
    },
    /// `archive command failed with exit code N` / `… was terminated by signal N: <name>` /
    /// `… was terminated by exception 0xX` / `… exited with unrecognized status N`, with the
    /// DETAIL `The failed archive command was: <command>`.
    ArchiveCommandFailed {
        /// The exit code, for `failed with exit code N`.
        exit_code: Option<i32>,
        /// The signal number, for `was terminated by signal N`.
        signal: Option<i32>,
        /// The command as run (`%p` and `%f` replaced), from the DETAIL.
        command: Option<String>,
    },
    /// WARNING `archiving write-ahead log file "<segment>" failed too many times, will try again
    /// later` (after three failed attempts in a row).
    ArchiveFailedTooManyTimes {
        /// The WAL segment's file name.
        segment: String,
    },
    /// `archive_mode enabled, yet archive_command is not set` (≤ 14) / `[“]archive_mode[”]
    /// enabled, yet archiving is not configured` (≥ 15): segments wait as `.ready` forever.
    ArchiveNotConfigured,
    /// `could not locate a valid checkpoint record` (≤ 16) / `… at X/Y` (≥ 17), or with a
    /// backup_label `could not locate required checkpoint record[ at X/Y]`: recovery cannot
    /// start.
    NoValidCheckpoint {
        /// The checkpoint's LSN (≥ 17).
        lsn: Option<Lsn>,
        /// True for the `required` form (the checkpoint named by backup_label).
        required: bool,
    },
    /// `invalid primary checkpoint record` (≤ 16), `invalid secondary checkpoint record` (10),
    /// `invalid checkpoint record`: the record pg_control points to is unreadable.
    InvalidCheckpointRecord {
        /// `primary` or `secondary` when the message says so.
        which: Option<String>,
    },
    /// `could not find redo location referenced by checkpoint record` / `could not find redo
    /// location X/Y referenced by checkpoint record at X/Y` (newer minor releases and ≥ 17).
    RedoLocationMissing {
        /// The redo LSN, when printed.
        redo: Option<Lsn>,
        /// The checkpoint record's LSN, when printed.
        checkpoint: Option<Lsn>,
    },
    /// `requested WAL segment <segment> has already been removed` (a standby or a base backup
    /// asked a walsender for WAL that is gone).
    WalSegmentRemoved {
        /// The segment's file name.
        segment: String,
    },
    /// `could not create shared memory segment: <error>` (System V `shmget` at start), with the
    /// DETAIL `Failed system call was shmget(key=K, size=N, 0600).`
    SharedMemoryCreateFailed {
        /// strerror text as printed.
        error: String,
        /// `size=` of the DETAIL: the bytes asked for.
        request_bytes: Option<u64>,
    },
    /// `database is not accepting commands [that assign new transaction IDs ]to avoid
    /// wraparound data loss in database "<name>"` (or `… with OID N`), and the MultiXactId
    /// forms: the XID (or MultiXactId) stop limit is reached, writes fail.
    WraparoundRefused {
        /// The database to vacuum, by name.
        database: Option<String>,
        /// The database to vacuum, by OID (when its name was not known).
        database_oid: Option<u32>,
        /// True for the MultiXactId limit.
        multixact: bool,
    },
    /// WARNING `database "<name>" must be vacuumed within N transactions` (or `… with OID N …`),
    /// and `… must be vacuumed before N more MultiXactIds are used` / `… multixact members …`.
    WraparoundWarning {
        /// The database to vacuum, by name.
        database: Option<String>,
        /// The database to vacuum, by OID.
        database_oid: Option<u32>,
        /// Transactions (or MultiXactIds, or members) left before the stop limit.
        remaining: u64,
        /// True for MultiXactIds or multixact members.
        multixact: bool,
    },
    /// `invalidating slot "<slot>" because its restart_lsn X/Y exceeds max_slot_wal_keep_size`
    /// (13–15), `invalidating obsolete replication slot "<slot>"` (≥ 16) with the DETAIL `The
    /// slot's restart_lsn X/Y exceeds the limit by N bytes.` (or another reason).
    SlotInvalidated {
        /// The slot's name.
        slot: String,
        /// Its restart_lsn, when printed.
        restart_lsn: Option<Lsn>,
        /// Bytes over max_slot_wal_keep_size (≥ 16's DETAIL).
        excess_bytes: Option<u64>,
        /// True when the reason is max_slot_wal_keep_size (false for the other reasons ≥ 16
        /// gives, or when the DETAIL is missing).
        wal_limit: bool,
    },
    /// `terminating process N to release replication slot "<slot>"` (the slot is being
    /// invalidated while a walsender holds it).
    SlotHolderTerminated {
        /// The walsender's PID.
        pid: u32,
        /// The slot's name.
        slot: String,
    },
    /// `missing chunk number N for toast value V in <toast table>`: a TOAST chunk is gone.
    ToastChunkMissing {
        /// The chunk number.
        chunk: u64,
        /// The TOAST value's OID.
        value: u64,
        /// The TOAST table as printed (`pg_toast_16384`).
        relation: String,
    },
    /// A tuple's transaction ID before the table's freeze horizon (heap corruption, or the
    /// bugs that left it): `found xmin N from before relfrozenxid M`, `found xmax …`, `found
    /// update xid …`, `found multixact N from before relminmxid M`, `uncommitted xmin N from
    /// before xid cutoff M needs to be frozen`, `multixact N from before cutoff M found to be
    /// still running`, `cannot freeze committed xmax N`.
    TupleXidCorruption {
        /// What the ID is: `xmin`, `xmax`, `update xid`, `multixact`.
        field: String,
        /// The ID found.
        xid: u64,
        /// The horizon it is older than: `relfrozenxid`, `relminmxid`, `xid cutoff`, `cutoff`,
        /// `multi freeze cutoff`; none for `cannot freeze committed …`.
        cutoff_name: Option<String>,
        /// The horizon's value.
        cutoff: Option<u64>,
    },
    /// `invalid memory alloc request size N` (a length read from a damaged datum, more often
    /// than a real request over 1 GB).
    InvalidAllocSize {
        /// The size asked for.
        bytes: u64,
    },
    /// `unexpected data beyond EOF in block N of relation <path>` (≤ 17; quoted ≥ 18).
    DataBeyondEof {
        /// Block number.
        block: u64,
        /// The relation's file path, without quotes.
        relation: String,
    },
    /// `lock file "<path>" already exists` (+ HINT `Is another postmaster (PID N) running in
    /// data directory "…"?` / `… using socket file "…"?`): the server does not start.
    LockFileExists {
        /// The lock file (`postmaster.pid`, or a socket's `.s.PGSQL.5432.lock`).
        path: String,
        /// The PID the HINT names.
        pid: Option<u32>,
    },
    /// `could not bind <family> address "<address>": <error>` (at start).
    CouldNotBind {
        /// `IPv4`, `IPv6` or `Unix`.
        family: String,
        /// The address.
        address: String,
        /// strerror text as printed.
        error: String,
        /// True when the error is EADDRINUSE (`Address already in use`), in any language.
        in_use: bool,
    },
    /// `could not create listen socket for "<address>"` / `could not create any TCP/IP
    /// sockets` / `could not create any Unix-domain sockets` (the latter two FATAL: no start).
    ListenSocketFailed {
        /// The address, for the first form.
        address: Option<String>,
    },
    /// `data directory "<path>" has invalid permissions` (≥ 11) / `… has group or world
    /// access` (10): the server does not start.
    DataDirectoryPermissions {
        /// The data directory.
        path: String,
    },
    /// `database files are incompatible with server`, with the DETAIL `The data directory was
    /// initialized by PostgreSQL version X, which is not compatible with this version Y.` (or
    /// another incompatibility, then no versions).
    IncompatibleDataFiles {
        /// The data directory's version, from the DETAIL.
        data_version: Option<String>,
        /// The server's version, from the DETAIL.
        server_version: Option<String>,
    },
}

impl PgEvent {
    /// The event's `kind` as serialized (`terminated_by_signal`, `out_of_memory`, …).
    pub fn kind(&self) -> &'static str {
        match self {
            PgEvent::TerminatedBySignal { .. } => "terminated_by_signal",
            PgEvent::ExitedWithCode { .. } => "exited_with_code",
            PgEvent::TerminatingOtherProcesses => "terminating_other_processes",
            PgEvent::Reinitializing => "reinitializing",
            PgEvent::Interrupted { .. } => "interrupted",
            PgEvent::AutomaticRecovery => "automatic_recovery",
            PgEvent::RedoStart { .. } => "redo_start",
            PgEvent::RedoDone { .. } => "redo_done",
            PgEvent::Ready => "ready",
            PgEvent::ExitedWithUnrecognizedStatus { .. } => "exited_with_unrecognized_status",
            PgEvent::InterruptedWhileInRecovery { .. } => "interrupted_while_in_recovery",
            PgEvent::LastCompletedTransaction { .. } => "last_completed_transaction",
            PgEvent::RedoNotRequired => "redo_not_required",
            PgEvent::InvalidRecordLength { .. } => "invalid_record_length",
            PgEvent::CheckpointStarting { .. } => "checkpoint_starting",
            PgEvent::ShutDownAt { .. } => "shut_down_at",
            PgEvent::ShutdownRequested { .. } => "shutdown_requested",
            PgEvent::ShutDown => "shut_down",
            PgEvent::InRecoveryMode => "in_recovery_mode",
            PgEvent::StartingUp => "starting_up",
            PgEvent::NotYetAcceptingConnections => "not_yet_accepting_connections",
            PgEvent::TerminatingConnectionCrash => "terminating_connection_crash",
            PgEvent::UnexpectedPostmasterExit => "unexpected_postmaster_exit",
            PgEvent::ShuttingDownAfterCrash { .. } => "shutting_down_after_crash",
            PgEvent::Starting { .. } => "starting",
            PgEvent::OutOfMemory { .. } => "out_of_memory",
            PgEvent::TerminatedByException { .. } => "terminated_by_exception",
            PgEvent::AbortingActiveTransactions => "aborting_active_transactions",
            PgEvent::ShuttingDown => "shutting_down",
            PgEvent::RefusedShuttingDown => "refused_shutting_down",
            PgEvent::ReadyReadOnly => "ready_read_only",
            PgEvent::CheckpointComplete { .. } => "checkpoint_complete",
            PgEvent::CheckpointsTooFrequent { .. } => "checkpoints_too_frequent",
            PgEvent::SharedMemoryResizeFailed { .. } => "shared_memory_resize_failed",
            PgEvent::SharedMemoryMapFailed { .. } => "shared_memory_map_failed",
            PgEvent::ForkFailed { .. } => "fork_failed",
            PgEvent::CouldNotWrite { .. } => "could_not_write",
            PgEvent::CouldNotExtendFile { .. } => "could_not_extend_file",
            PgEvent::CouldNotReadBlock { .. } => "could_not_read_block",
            PgEvent::CouldNotReadWal { .. } => "could_not_read_wal",
            PgEvent::InvalidPage { .. } => "invalid_page",
            PgEvent::ChecksumFailure { .. } => "checksum_failure",
            PgEvent::Panic => "panic",
            PgEvent::TooManyClients => "too_many_clients",
            PgEvent::ReservedConnectionSlots { .. } => "reserved_connection_slots",
            PgEvent::TooManyConnections { .. } => "too_many_connections",
            PgEvent::TempFile { .. } => "temp_file",
            PgEvent::StatementCanceled { .. } => "statement_canceled",
            PgEvent::AutovacuumCanceled => "autovacuum_canceled",
            PgEvent::IdleInTransactionTimeout => "idle_in_transaction_timeout",
            PgEvent::IdleSessionTimeout => "idle_session_timeout",
            PgEvent::TerminatedByAdministrator => "terminated_by_administrator",
            PgEvent::StaleStatistics => "stale_statistics",
            PgEvent::CouldNotFsync { .. } => "could_not_fsync",
            PgEvent::CouldNotOpenFile { .. } => "could_not_open_file",
            PgEvent::ArchiveCommandFailed { .. } => "archive_command_failed",
            PgEvent::ArchiveFailedTooManyTimes { .. } => "archive_failed_too_many_times",
            PgEvent::ArchiveNotConfigured => "archive_not_configured",
            PgEvent::NoValidCheckpoint { .. } => "no_valid_checkpoint",
            PgEvent::InvalidCheckpointRecord { .. } => "invalid_checkpoint_record",
            PgEvent::RedoLocationMissing { .. } => "redo_location_missing",
            PgEvent::WalSegmentRemoved { .. } => "wal_segment_removed",
            PgEvent::SharedMemoryCreateFailed { .. } => "shared_memory_create_failed",
            PgEvent::WraparoundRefused { .. } => "wraparound_refused",
            PgEvent::WraparoundWarning { .. } => "wraparound_warning",
            PgEvent::SlotInvalidated { .. } => "slot_invalidated",
            PgEvent::SlotHolderTerminated { .. } => "slot_holder_terminated",
            PgEvent::ToastChunkMissing { .. } => "toast_chunk_missing",
            PgEvent::TupleXidCorruption { .. } => "tuple_xid_corruption",
            PgEvent::InvalidAllocSize { .. } => "invalid_alloc_size",
            PgEvent::DataBeyondEof { .. } => "data_beyond_eof",
            PgEvent::LockFileExists { .. } => "lock_file_exists",
            PgEvent::CouldNotBind { .. } => "could_not_bind",
            PgEvent::ListenSocketFailed { .. } => "listen_socket_failed",
            PgEvent::DataDirectoryPermissions { .. } => "data_directory_permissions",
            PgEvent::IncompatibleDataFiles { .. } => "incompatible_data_files",
        }
    }
}
