//! Message classification: the English text of a record's main line → a [`PgEvent`] with its
//! fields, then the record's DETAIL filling in what the main line does not say (the query a
//! crashed backend was running, the size an out-of-memory request asked for).
//!
//! Matching is by the message's structure (`(PID n)`, the signal number, `X/Y` LSNs). A
//! translated message is first turned back into this English form by [`super::translate`].

use std::sync::LazyLock;

use memchr::memmem::FinderRev;

use super::classify_storage as storage;
use super::translate::{self, Languages};
use super::{Lsn, PgEvent, PgRecord, Severity};

/// Classifies a finished record: its message (translated to English first when it is not
/// English), then the DETAIL. Sets `record.language` when a translation was used. Records
/// without a severity (orphans, memory-context dumps) are left alone.
pub(crate) fn classify_record(record: &mut PgRecord, langs: Languages) {
    // Statement logging, in English, is the bulk of a busy server's log: no event, and no
    // translation to look for.
    if record.severity.is_none() || is_statement_log(&record.message) {
        return;
    }
    record.event = classify(&record.message);
    if record.event.is_none()
        && let Some((lang, english)) = translate::to_english(&record.message, langs)
    {
        record.event = classify(&english);
        record.language = Some(translate::language_name(lang));
    }
    // zh_CN keeps `redo done at %X/%X system usage: %s` in English but translates the usage.
    if let Some(PgEvent::RedoDone {
        elapsed_seconds: elapsed @ None,
        ..
    }) = &mut record.event
        && let Some((_, usage)) = record.message.split_once("system usage: ")
        && let Some((lang, english)) = translate::to_english(usage, langs)
    {
        *elapsed = elapsed_seconds(&english);
        record.language = Some(translate::language_name(lang));
    }
    let needs_detail = matches!(
        record.event,
        Some(
            PgEvent::TerminatedBySignal { .. }
                | PgEvent::ExitedWithCode { .. }
                | PgEvent::OutOfMemory { .. }
                | PgEvent::ArchiveCommandFailed { .. }
                | PgEvent::SharedMemoryCreateFailed { .. }
                | PgEvent::SlotInvalidated { .. }
                | PgEvent::IncompatibleDataFiles { .. }
        )
    );
    let needs_hint = matches!(
        record.event,
        Some(PgEvent::SharedMemoryMapFailed { .. } | PgEvent::LockFileExists { .. })
    );
    let detail = record
        .detail
        .as_deref()
        .filter(|_| needs_detail)
        .map(|d| in_english(d, langs));
    let hint = record
        .hint
        .as_deref()
        .filter(|_| needs_hint)
        .map(|h| in_english(h, langs));
    complete(record, detail.as_deref(), hint.as_deref());
}

/// `text` in English: as it is when it already is (the English texts [`complete`] reads start
/// with `Fail`, `The `, `This ` or `Is `), else through the catalogs, else as it is.
fn in_english(text: &str, langs: Languages) -> String {
    if ["Fail", "The ", "This ", "Is "]
        .iter()
        .any(|english| text.starts_with(english))
    {
        return text.to_owned();
    }
    translate::to_english(text, langs).map_or_else(|| text.to_owned(), |(_, english)| english)
}

/// A line of statement logging (`log_statement`, `log_duration`,
/// `log_min_duration_statement`): `statement: …`, `execute S_1: …`, `duration: 0.1 ms`,
/// `duration: 0.1 ms  statement: …`. It carries the client's SQL, which is never read as an
/// event: a statement that holds `server process (PID 5) was terminated by signal 9` is not a
/// crash.
fn is_statement_log(message: &str) -> bool {
    match message.as_bytes().first() {
        Some(b'd') => message
            .strip_prefix("duration: ")
            .is_some_and(|rest| rest.as_bytes().first().is_some_and(u8::is_ascii_digit)),
        Some(b's') => message.starts_with("statement: "),
        Some(b'e') => message.starts_with("execute "),
        _ => false,
    }
}

/// Classifies a main-line message. `None` for messages no kind describes.
pub(crate) fn classify(message: &str) -> Option<PgEvent> {
    if is_statement_log(message) {
        return None;
    }
    if let found @ Some(_) = fixed_phrase(message) {
        return found;
    }
    if let found @ Some(_) = with_argument(message) {
        return found;
    }
    if let found @ Some(_) = resources(message) {
        return found;
    }
    if let found @ Some(_) = storage::classify(message) {
        return found;
    }
    // `<process> (PID n) …`: no parenthesis, no child exit.
    memchr::memchr(b'(', message.as_bytes())?;
    child_exit(message)
}

/// Completes `record.event` from the record's DETAIL and HINT (already in English), and marks
/// an otherwise unclassified PANIC.
pub(crate) fn complete(record: &mut PgRecord, detail: Option<&str>, hint: Option<&str>) {
    if record.event.is_none() && record.severity == Some(Severity::Panic) {
        record.event = Some(PgEvent::Panic);
    }
    if let Some(hint) = hint {
        storage::complete_from_hint(record.event.as_mut(), hint);
    }
    let Some(detail) = detail else {
        return;
    };
    match &mut record.event {
        Some(PgEvent::TerminatedBySignal { query, .. } | PgEvent::ExitedWithCode { query, .. }) => {
            // DETAIL:  Failed process was running: select pg_sleep(600)
            if let Some(q) = detail.strip_prefix("Failed process was running: ") {
                *query = Some(q.to_owned());
            }
        }
        Some(PgEvent::OutOfMemory {
            request_bytes,
            memory_context,
        }) => {
            // DETAIL:  Failed on request of size 1000000004 in memory context "MessageContext".
            // DETAIL:  Failed on request of size 8192.  (PG 10)
            if let Some(rest) = detail.strip_prefix("Failed on request of size ") {
                let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
                *request_bytes = rest[..digits].parse().ok();
                *memory_context = rest[digits..]
                    .strip_prefix(" in memory context \"")
                    .and_then(|r| r.rsplit_once('"'))
                    .map(|(name, _)| name.to_owned());
            }
        }
        event => storage::complete_from_detail(event.as_mut(), detail),
    }
}

/// `server process (PID 24797) was terminated by signal 9: Killed`
/// `client backend (PID 24797) was terminated by signal 9: Killed` (PG 18)
/// `worker process: parallel worker for PID 30491 (PID 31458) was terminated by signal 9: Killed` (PG 10)
/// `background worker "logical replication launcher" (PID 31) exited with exit code 1`
/// `server process (PID 77) exited with unrecognized status 1234`
/// `server process (PID 77) was terminated by exception 0xC0000005`
fn child_exit(message: &str) -> Option<PgEvent> {
    let ((process, pid), tail) = split_pid_marker(message)?;
    if let Some(rest) = tail.strip_prefix("was terminated by signal ") {
        let (signal, name) = rest
            .split_once(':')
            .map_or((rest, ""), |(s, n)| (s, n.trim_start()));
        return Some(PgEvent::TerminatedBySignal {
            process,
            pid,
            signal: signal.trim().parse().ok()?,
            signal_name: name.to_owned(),
            query: None,
        });
    }
    if let Some(code) = tail.strip_prefix("exited with exit code ") {
        return Some(PgEvent::ExitedWithCode {
            process,
            pid,
            code: code.trim().parse().ok()?,
            query: None,
        });
    }
    if let Some(status) = tail.strip_prefix("exited with unrecognized status ") {
        return Some(PgEvent::ExitedWithUnrecognizedStatus {
            process,
            pid,
            status: status.trim().parse().ok()?,
        });
    }
    if let Some(code) = tail.strip_prefix("was terminated by exception ") {
        return Some(PgEvent::TerminatedByException {
            process,
            pid,
            code: code.trim().to_owned(),
        });
    }
    None
}

/// Splits `<process> (PID n) <tail>` at its last `(PID n)`, so a process name that itself
/// holds `PID` (PG 10's `parallel worker for PID 30491`) stays whole. The space after `)` is
/// optional (some translations write `(PID 5)は…`).
pub(crate) fn split_pid_marker(message: &str) -> Option<((String, u32), &str)> {
    static PID_MARKER: LazyLock<FinderRev<'static>> = LazyLock::new(|| FinderRev::new(b" (PID "));
    let open = PID_MARKER.rfind(message.as_bytes())?;
    let after = &message[open + " (PID ".len()..];
    let close = after.find(')')?;
    let pid = after[..close].parse().ok()?;
    let process = &message[..open];
    if process.is_empty() {
        return None;
    }
    let tail = &after[close + 1..];
    Some((
        (process.to_owned(), pid),
        tail.strip_prefix(' ').unwrap_or(tail),
    ))
}

/// Messages that are the whole text, no arguments.
fn fixed_phrase(message: &str) -> Option<PgEvent> {
    let message = message.trim_end();
    Some(match message {
        "terminating any other active server processes" => PgEvent::TerminatingOtherProcesses,
        "all server processes terminated; reinitializing" => PgEvent::Reinitializing,
        "database system was not properly shut down; automatic recovery in progress" => {
            PgEvent::AutomaticRecovery
        }
        "database system is ready to accept connections" => PgEvent::Ready,
        "database system is ready to accept read only connections"
        | "database system is ready to accept read-only connections" => PgEvent::ReadyReadOnly,
        "redo is not required" => PgEvent::RedoNotRequired,
        "database system is shut down" => PgEvent::ShutDown,
        "aborting any active transactions" => PgEvent::AbortingActiveTransactions,
        "shutting down" => PgEvent::ShuttingDown,
        "the database system is in recovery mode" => PgEvent::InRecoveryMode,
        "the database system is starting up" => PgEvent::StartingUp,
        "the database system is shutting down" => PgEvent::RefusedShuttingDown,
        "the database system is not yet accepting connections" => {
            PgEvent::NotYetAcceptingConnections
        }
        "terminating connection because of crash of another server process" => {
            PgEvent::TerminatingConnectionCrash
        }
        "terminating connection due to unexpected postmaster exit" => {
            PgEvent::UnexpectedPostmasterExit
        }
        "out of memory" => PgEvent::OutOfMemory {
            request_bytes: None,
            memory_context: None,
        },
        "sorry, too many clients already" => PgEvent::TooManyClients,
        "canceling autovacuum task" => PgEvent::AutovacuumCanceled,
        "terminating connection due to idle-in-transaction timeout" => {
            PgEvent::IdleInTransactionTimeout
        }
        "terminating connection due to idle-session timeout" => PgEvent::IdleSessionTimeout,
        "terminating connection due to administrator command" => PgEvent::TerminatedByAdministrator,
        "using stale statistics instead of current ones because stats collector is not responding" => {
            PgEvent::StaleStatistics
        }
        "shutting down because restart_after_crash is off"
        | "shutting down because \"restart_after_crash\" is off"
        | "shutting down due to startup process failure"
        | "aborting startup due to startup process failure" => PgEvent::ShuttingDownAfterCrash {
            reason: message.to_owned(),
        },
        _ => return None,
    })
}

/// Messages with arguments after a fixed start: recovery, checkpoints, start and stop, load.
fn with_argument(message: &str) -> Option<PgEvent> {
    // The first byte gates each test: most messages start with none of these words.
    let first = *message.as_bytes().first()?;
    // redo starts at 0/1500780
    if first == b'r'
        && let Some(rest) = message.strip_prefix("redo starts at ")
    {
        return Some(PgEvent::RedoStart {
            lsn: Lsn::parse(first_word(rest))?,
        });
    }
    // redo done at 0/2C31F28 system usage: CPU: user: 0.05 s, system: 0.03 s, elapsed: 0.12 s
    if first == b'r'
        && let Some(rest) = message.strip_prefix("redo done at ")
    {
        let lsn = Lsn::parse(first_word(rest))?;
        return Some(PgEvent::RedoDone {
            lsn,
            elapsed_seconds: elapsed_seconds(rest),
        });
    }
    // database system was interrupted; last known up at 2026-11-21 17:08:44 UTC
    if first == b'd'
        && let Some(at) = message.strip_prefix("database system was interrupted; last known up at ")
    {
        return Some(PgEvent::Interrupted {
            last_known_up: at.to_owned(),
        });
    }
    // database system was interrupted while in recovery at [log time ]2026-11-21 17:08:44 UTC
    if first == b'd'
        && let Some(at) =
            message.strip_prefix("database system was interrupted while in recovery at ")
    {
        let at = at.strip_prefix("log time ").unwrap_or(at);
        return Some(PgEvent::InterruptedWhileInRecovery { at: at.to_owned() });
    }
    // last completed transaction was at log time 2026-11-21 17:18:47.201369+00
    if first == b'l'
        && let Some(at) = message.strip_prefix("last completed transaction was at log time ")
    {
        return Some(PgEvent::LastCompletedTransaction { at: at.to_owned() });
    }
    // invalid record length at 0/2C31F60: wanted 24, got 0
    // invalid record length at 0/2C31F60: expected at least 24, got 0  (PG ≥ 16)
    if first == b'i'
        && let Some(rest) = message.strip_prefix("invalid record length at ")
    {
        let lsn = rest.split(':').next().and_then(Lsn::parse)?;
        return Some(PgEvent::InvalidRecordLength { lsn });
    }
    // checkpoint starting: end-of-recovery immediate wait
    if first == b'c'
        && let Some(flags) = message.strip_prefix("checkpoint starting:")
    {
        return Some(PgEvent::CheckpointStarting {
            flags: flags.split_whitespace().map(str::to_owned).collect(),
        });
    }
    if first == b'c'
        && let Some(rest) = message.strip_prefix("checkpoint complete: ")
    {
        return checkpoint_complete(rest);
    }
    // checkpoints are occurring too frequently (1 second apart)
    if first == b'c'
        && let Some(rest) = message.strip_prefix("checkpoints are occurring too frequently (")
    {
        return Some(PgEvent::CheckpointsTooFrequent {
            seconds: leading_number(rest)?,
        });
    }
    // database system was shut down at 2026-11-21 17:05:02 UTC
    if first == b'd'
        && let Some(at) = message.strip_prefix("database system was shut down at ")
    {
        return Some(PgEvent::ShutDownAt { at: at.to_owned() });
    }
    // received fast shutdown request
    if first == b'r'
        && let Some(mode) = message
            .strip_prefix("received ")
            .and_then(|r| r.strip_suffix(" shutdown request"))
    {
        return Some(PgEvent::ShutdownRequested {
            mode: mode.to_owned(),
        });
    }
    // starting PostgreSQL 15.14 (Debian 15.14-0+deb12u1) on x86_64-pc-linux-gnu, compiled by …
    if first == b's'
        && let Some(rest) = message.strip_prefix("starting PostgreSQL ")
    {
        let version = rest.split_once(" on ").map_or(rest, |(v, _)| v);
        return Some(PgEvent::Starting {
            version: version.to_owned(),
        });
    }
    // temporary file: path "base/pgsql_tmp/pgsql_tmp19799.0", size 4694016
    if let Some(rest) = message.strip_prefix("temporary file: path \"") {
        let (path, size) = rest.rsplit_once("\", size ")?;
        return Some(PgEvent::TempFile {
            path: path.to_owned(),
            bytes: size.trim().parse().ok()?,
        });
    }
    // canceling statement due to statement timeout
    if first == b'c'
        && let Some(reason) = message.strip_prefix("canceling statement due to ")
    {
        // `… lock timeout at character 43` when the statement position is known.
        let reason = reason.split(" at character ").next().unwrap_or(reason);
        return Some(PgEvent::StatementCanceled {
            reason: reason.trim_end().to_owned(),
        });
    }
    // remaining connection slots are reserved for non-replication superuser connections
    // remaining connection slots are reserved for roles with the SUPERUSER attribute (PG ≥ 16)
    if first == b'r'
        && let Some(who) = message.strip_prefix("remaining connection slots are reserved for ")
    {
        return Some(PgEvent::ReservedConnectionSlots {
            reserved_for: who.to_owned(),
        });
    }
    // too many connections for role "app"
    if first == b't'
        && let Some(rest) = message.strip_prefix("too many connections for ")
    {
        let (scope, name) = rest.split_once(' ')?;
        return Some(PgEvent::TooManyConnections {
            scope: scope.to_owned(),
            name: unquote(name).to_owned(),
        });
    }
    None
}

/// Memory, disk and integrity: `could not …`, `invalid page …`, `page verification failed …`.
fn resources(message: &str) -> Option<PgEvent> {
    let first = *message.as_bytes().first()?;
    if !matches!(first, b'c' | b'i' | b'p') {
        return None;
    }
    if let Some(rest) = message.strip_prefix("could not ") {
        return could_not(rest);
    }
    // invalid page in block 0 of relation base/5/16413
    // invalid page in block 0 of relation "base/5/16392"  (PG ≥ 18)
    if let Some(rest) = message.strip_prefix("invalid page in block ") {
        let (block, relation) = rest.split_once(" of relation ")?;
        return Some(PgEvent::InvalidPage {
            block: block.parse().ok()?,
            relation: unquote(relation).to_owned(),
        });
    }
    // page verification failed, calculated checksum 20919 but expected 15254
    if let Some(rest) = message.strip_prefix("page verification failed, calculated checksum ") {
        let (calculated, expected) = rest.split_once(" but expected ")?;
        return Some(PgEvent::ChecksumFailure {
            calculated: calculated.parse().ok()?,
            expected: expected.trim().parse().ok()?,
        });
    }
    None
}

/// The `could not …` family, `rest` after `could not `.
fn could_not(rest: &str) -> Option<PgEvent> {
    // could not resize shared memory segment "/PostgreSQL.4104579426" to 1048576 bytes: No space left on device
    if let Some(rest) = rest.strip_prefix("resize shared memory segment \"") {
        let (segment, rest) = rest.split_once("\" to ")?;
        let (bytes, error) = rest.split_once(" bytes: ")?;
        return Some(PgEvent::SharedMemoryResizeFailed {
            segment: segment.to_owned(),
            bytes: bytes.parse().ok()?,
            no_space: is_no_space(error),
            error: error.to_owned(),
        });
    }
    // could not map anonymous shared memory: Cannot allocate memory
    if let Some(error) = rest.strip_prefix("map anonymous shared memory: ") {
        return Some(PgEvent::SharedMemoryMapFailed {
            error: error.to_owned(),
            request_bytes: None,
        });
    }
    // could not fork new process for connection: Cannot allocate memory
    // could not fork autovacuum worker process: Cannot allocate memory (≤ 16)
    // could not fork "autovacuum worker" process: Cannot allocate memory (≥ 17)
    if let Some(rest) = rest.strip_prefix("fork ") {
        let (process, error) = rest.split_once(": ")?;
        return Some(PgEvent::ForkFailed {
            process: process.to_owned(),
            error: error.to_owned(),
        });
    }
    // could not write to file "pg_tblspc/…/pgsql_tmp/pgsql_tmp20608.0": No space left on device
    // could not write block 1234 in file "base/5/16384": No space left on device
    if let Some(rest) = rest.strip_prefix("write ") {
        // could not write to log file 000000010000000000000003 at offset 0, length 8192: …
        // could not write to log file "000000010000000000000003" at offset …  (PG ≥ 17)
        if let Some(rest) = rest.strip_prefix("to log file ") {
            let (segment, error) = storage::segment_then_error(rest)?;
            return Some(PgEvent::CouldNotWrite {
                path: segment.to_owned(),
                no_space: is_no_space(error),
                read_only: storage::is_read_only(error),
                io_error: storage::is_io_error(error),
                error: error.to_owned(),
            });
        }
        // could not write lock file "postmaster.pid": No space left on device
        let rest = rest
            .strip_prefix("to file ")
            .or_else(|| rest.strip_prefix("lock file "))
            .or_else(|| rest.split_once(" in file ").map(|(_, r)| r))?;
        let (path, error) = quoted_then_error(rest)?;
        return Some(PgEvent::CouldNotWrite {
            path,
            no_space: is_no_space(error),
            read_only: storage::is_read_only(error),
            io_error: storage::is_io_error(error),
            error: error.to_owned(),
        });
    }
    // could not extend file "pg_tblspc/16407/PG_15_202209061/5/16408": No space left on device
    // could not extend file "base/5/16384": wrote only 4096 of 8192 bytes at block 12
    if let Some(rest) = rest.strip_prefix("extend file ") {
        let (path, error) = quoted_then_error(rest)?;
        return Some(PgEvent::CouldNotExtendFile {
            path,
            no_space: is_no_space(error) || error.starts_with("wrote only "),
            read_only: storage::is_read_only(error),
            io_error: storage::is_io_error(error),
            error: error.to_owned(),
        });
    }
    // could not read block 15 in file "base/5/16384": read only 0 of 8192 bytes
    // could not read blocks 15..15 in file "base/5/16384": read only 0 of 8192 bytes  (PG ≥ 17)
    if let Some(rest) = rest
        .strip_prefix("read block ")
        .or_else(|| rest.strip_prefix("read blocks "))
    {
        let (blocks, rest) = rest.split_once(" in file ")?;
        let first = blocks.split_once("..").map_or(blocks, |(first, _)| first);
        let (path, error) = quoted_then_error(rest)?;
        return Some(PgEvent::CouldNotReadBlock {
            block: first.parse().ok()?,
            path,
            io_error: storage::is_io_error(error),
            error: error.to_owned(),
        });
    }
    // could not read from WAL segment 000000010000000000000001, offset 0: Input/output error
    // could not read from log segment 000000010000000000000001, offset 0: …  (≤ 12)
    // could not read from WAL segment 000000010000000000000001, offset 0: read 0 of 8192
    if let Some(rest) = rest
        .strip_prefix("read from WAL segment ")
        .or_else(|| rest.strip_prefix("read from log segment "))
    {
        let (segment, rest) = rest.split_once(", offset ")?;
        let (offset, error) = rest.split_once(": ")?;
        return Some(PgEvent::CouldNotReadWal {
            segment: segment.to_owned(),
            offset: offset.trim().parse().ok(),
            io_error: storage::is_io_error(error),
            error: error.to_owned(),
        });
    }
    storage::could_not(rest)
}

/// `"path": error` → (path, error).
pub(super) fn quoted_then_error(rest: &str) -> Option<(String, &str)> {
    let rest = rest.strip_prefix('"')?;
    let (path, error) = rest.rsplit_once("\": ")?;
    Some((path.to_owned(), error))
}

/// ENOSPC as glibc prints it (translations are turned into this text before classification).
pub(super) fn is_no_space(error: &str) -> bool {
    error.contains("No space left on device")
}

/// `checkpoint complete: wrote 9676 buffers (59.1%); 0 WAL file(s) added, 0 removed, 4 recycled;
/// write=0.062 s, sync=0.014 s, total=0.086 s; sync files=49, longest=0.003 s, average=0.001 s;
/// distance=64163 kB, estimate=64163 kB[; lsn=…, redo lsn=…]` — `rest` after `checkpoint complete: `.
/// One pass over the `;`/`,`-separated items, read by name: PG 18's `wrote N SLRU buffers` and
/// 16+'s `lsn=` items are skipped.
fn checkpoint_complete(rest: &str) -> Option<PgEvent> {
    let mut buffers = None;
    let mut event = PgEvent::CheckpointComplete {
        buffers: 0,
        buffers_percent: None,
        wal_added: None,
        wal_removed: None,
        wal_recycled: None,
        write_seconds: None,
        sync_seconds: None,
        total_seconds: None,
        distance_kb: None,
        estimate_kb: None,
    };
    let PgEvent::CheckpointComplete {
        buffers_percent,
        wal_added,
        wal_removed,
        wal_recycled,
        write_seconds,
        sync_seconds,
        total_seconds,
        distance_kb,
        estimate_kb,
        ..
    } = &mut event
    else {
        return None;
    };
    // Split by bytes (`;` and `,` are ASCII): a `char` pattern search costs more per item.
    let bytes = rest.as_bytes();
    let mut start = 0;
    while start <= bytes.len() {
        let end = memchr::memchr2(b';', b',', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        let item = rest[start..end].trim_start();
        start = end + 1;
        if let Some(eq) = memchr::memchr(b'=', item.as_bytes()) {
            let (key, value) = (&item[..eq], &item[eq + 1..]);
            let seconds = || value.strip_suffix(" s").unwrap_or(value).parse().ok();
            let kb = || leading_number(value);
            match key {
                "write" => *write_seconds = seconds(),
                "sync" => *sync_seconds = seconds(),
                "total" => *total_seconds = seconds(),
                "distance" => *distance_kb = kb(),
                "estimate" => *estimate_kb = kb(),
                _ => {}
            }
        } else if let Some(w) = item.strip_prefix("wrote ") {
            // `wrote 9676 buffers (59.1%)`, not PG 18's `wrote 0 SLRU buffers`.
            let digits = w.bytes().take_while(u8::is_ascii_digit).count();
            if buffers.is_none() && w[digits..].starts_with(" buffers") {
                buffers = w[..digits].parse().ok();
                *buffers_percent = w
                    .split_once('(')
                    .and_then(|(_, p)| p.split('%').next()?.parse().ok());
            }
        } else if let Some(n) = item.strip_suffix(" WAL file(s) added") {
            *wal_added = n.parse().ok();
        } else if let Some(n) = item.strip_suffix(" removed") {
            *wal_removed = n.parse().ok();
        } else if let Some(n) = item.strip_suffix(" recycled") {
            *wal_recycled = n.parse().ok();
        }
    }
    if let PgEvent::CheckpointComplete { buffers: b, .. } = &mut event {
        *b = buffers?;
    }
    Some(event)
}

pub(super) fn first_word(s: &str) -> &str {
    s.split([' ', ',', ';']).next().unwrap_or("")
}

pub(super) fn leading_number(s: &str) -> Option<u64> {
    let end = s.bytes().take_while(u8::is_ascii_digit).count();
    s[..end].parse().ok()
}

pub(super) fn unquote(s: &str) -> &str {
    s.strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(s)
}

/// `… elapsed: 0.12 s` → 0.12.
fn elapsed_seconds(s: &str) -> Option<f64> {
    let (_, rest) = s.rsplit_once("elapsed: ")?;
    rest.split(' ').next()?.parse().ok()
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
