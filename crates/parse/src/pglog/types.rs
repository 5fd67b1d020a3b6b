//! The typed records the PostgreSQL log parser yields. Field names are a contract (CLI JSON,
//! Python dicts).

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
    /// Zone as printed (`UTC`, `CEST`, `+03`, …), when printed.
    pub zone: Option<String>,
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
}

/// Classified PostgreSQL events (the crash cycle for now).
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
        request_size: Option<u64>,
        /// Memory context named in the DETAIL (PG ≥ 11).
        memory_context: Option<String>,
    },
}
