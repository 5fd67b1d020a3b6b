//! The texts a [`PgRecord`] holds, for a consumer that keeps many records and must bound what
//! each one costs: a record can carry a statement of megabytes (`STATEMENT:` of a bulk
//! `INSERT`), and a hostile log can put a megabyte in any field.

use super::types::{PgEvent, PgRecord};

/// What [`PgRecord::cut_texts`] did to a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextsCut {
    /// Texts that were longer than the limit and were cut.
    pub cut: usize,
    /// Bytes the record holds after the cut, an estimate: the record itself, the capacity of
    /// every text, the boxed event and memory-context dump.
    pub heap_bytes: usize,
}

/// What ends a cut text.
const ELLIPSIS: char = '…';

impl PgRecord {
    /// Calls `f` on every text the record holds: the prefix's fields, the message, `DETAIL`,
    /// `HINT`, `CONTEXT`, `STATEMENT`, `QUERY`, `LOCATION`, the event's texts and the context
    /// names of its memory-context dump.
    pub fn for_each_text_mut(&mut self, f: &mut dyn FnMut(&mut String)) {
        let PgRecord {
            line: _,
            end_line: _,
            time: _,
            pid: _,
            session_id,
            session_line: _,
            user,
            database,
            application,
            client,
            backend_type,
            sqlstate,
            command_tag,
            session_start,
            xid: _,
            vxid,
            leader_pid: _,
            query_id: _,
            local_address,
            severity: _,
            message,
            detail,
            hint,
            context,
            statement,
            query,
            location,
            event,
            language: _,
            memory_context_dump,
            wrapper_time: _,
        } = self;
        f(message);
        let optional = [
            session_id,
            user,
            database,
            application,
            client,
            backend_type,
            sqlstate,
            command_tag,
            session_start,
            vxid,
            local_address,
            detail,
            hint,
            context,
            statement,
            query,
            location,
        ];
        for text in optional.into_iter().flatten() {
            f(text);
        }
        if let Some(event) = event {
            event.for_each_text_mut(f);
        }
        if let Some(dump) = memory_context_dump {
            for stat in &mut dump.contexts {
                for text in [&mut stat.name, &mut stat.identifier].into_iter().flatten() {
                    f(text);
                }
            }
        }
    }

    /// Cuts every text of the record ([`PgRecord::for_each_text_mut`]) longer than
    /// `max_bytes` to its first characters, ending in `…`, within `max_bytes`; returns how many
    /// were cut and what the record holds then.
    pub fn cut_texts(&mut self, max_bytes: usize) -> TextsCut {
        let mut cut = 0;
        let mut heap_bytes = size_of::<PgRecord>();
        self.for_each_text_mut(&mut |text| {
            if text.len() > max_bytes {
                let keep = max_bytes.saturating_sub(ELLIPSIS.len_utf8());
                let end = super::cut(text, keep).len();
                text.truncate(end);
                if max_bytes >= ELLIPSIS.len_utf8() {
                    text.push(ELLIPSIS);
                }
                text.shrink_to_fit();
                cut += 1;
            }
            heap_bytes += text.capacity();
        });
        if self.event.is_some() {
            heap_bytes += size_of::<PgEvent>();
        }
        if let Some(dump) = &self.memory_context_dump {
            heap_bytes += size_of_val(dump.as_ref()) + size_of_val(dump.contexts.as_slice());
        }
        TextsCut { cut, heap_bytes }
    }
}

impl PgEvent {
    /// Calls `f` on every text the event holds (process names, queries, paths, errors).
    pub fn for_each_text_mut(&mut self, f: &mut dyn FnMut(&mut String)) {
        match self {
            PgEvent::TerminatedBySignal {
                process,
                signal_name,
                query,
                ..
            } => {
                f(process);
                f(signal_name);
                if let Some(query) = query {
                    f(query);
                }
            }
            PgEvent::ExitedWithCode { process, query, .. } => {
                f(process);
                if let Some(query) = query {
                    f(query);
                }
            }
            PgEvent::ExitedWithUnrecognizedStatus { process, .. } => f(process),
            PgEvent::Interrupted { last_known_up: at }
            | PgEvent::InterruptedWhileInRecovery { at }
            | PgEvent::LastCompletedTransaction { at }
            | PgEvent::ShutDownAt { at } => f(at),
            PgEvent::CheckpointStarting { flags } => flags.iter_mut().for_each(f),
            PgEvent::ShutdownRequested { mode: text }
            | PgEvent::ShuttingDownAfterCrash { reason: text }
            | PgEvent::Starting { version: text }
            | PgEvent::SharedMemoryMapFailed { error: text, .. }
            | PgEvent::SharedMemoryCreateFailed { error: text, .. }
            | PgEvent::ArchiveFailedTooManyTimes { segment: text }
            | PgEvent::WalSegmentRemoved { segment: text }
            | PgEvent::InvalidPage { relation: text, .. }
            | PgEvent::ReservedConnectionSlots { reserved_for: text }
            | PgEvent::TempFile { path: text, .. }
            | PgEvent::StatementCanceled { reason: text } => f(text),
            PgEvent::OutOfMemory { memory_context, .. } => {
                if let Some(context) = memory_context {
                    f(context);
                }
            }
            PgEvent::TerminatedByException { process, code, .. } => {
                f(process);
                f(code);
            }
            PgEvent::SharedMemoryResizeFailed { segment, error, .. } => {
                f(segment);
                f(error);
            }
            PgEvent::ForkFailed {
                process: first,
                error: second,
            }
            | PgEvent::CouldNotWrite {
                path: first,
                error: second,
                ..
            }
            | PgEvent::CouldNotExtendFile {
                path: first,
                error: second,
                ..
            }
            | PgEvent::CouldNotReadBlock {
                path: first,
                error: second,
                ..
            }
            | PgEvent::CouldNotReadWal {
                segment: first,
                error: second,
                ..
            }
            | PgEvent::CouldNotFsync {
                path: first,
                error: second,
                ..
            }
            | PgEvent::CouldNotOpenFile {
                path: first,
                error: second,
                ..
            }
            | PgEvent::TooManyConnections {
                scope: first,
                name: second,
            } => {
                f(first);
                f(second);
            }
            PgEvent::TerminatingOtherProcesses
            | PgEvent::Reinitializing
            | PgEvent::AutomaticRecovery
            | PgEvent::RedoStart { .. }
            | PgEvent::RedoDone { .. }
            | PgEvent::Ready
            | PgEvent::RedoNotRequired
            | PgEvent::InvalidRecordLength { .. }
            | PgEvent::ShutDown
            | PgEvent::InRecoveryMode
            | PgEvent::StartingUp
            | PgEvent::NotYetAcceptingConnections
            | PgEvent::TerminatingConnectionCrash
            | PgEvent::UnexpectedPostmasterExit
            | PgEvent::AbortingActiveTransactions
            | PgEvent::ShuttingDown
            | PgEvent::RefusedShuttingDown
            | PgEvent::ReadyReadOnly
            | PgEvent::CheckpointComplete { .. }
            | PgEvent::CheckpointsTooFrequent { .. }
            | PgEvent::ChecksumFailure { .. }
            | PgEvent::Panic
            | PgEvent::TooManyClients
            | PgEvent::AutovacuumCanceled
            | PgEvent::IdleInTransactionTimeout
            | PgEvent::IdleSessionTimeout
            | PgEvent::TerminatedByAdministrator
            | PgEvent::StaleStatistics
            | PgEvent::ArchiveNotConfigured
            | PgEvent::NoValidCheckpoint { .. }
            | PgEvent::RedoLocationMissing { .. } => {}
            PgEvent::ArchiveCommandFailed { command, .. } => {
                if let Some(command) = command {
                    f(command);
                }
            }
            PgEvent::InvalidCheckpointRecord { which: text }
            | PgEvent::ListenSocketFailed { address: text }
            | PgEvent::WraparoundRefused { database: text, .. }
            | PgEvent::WraparoundWarning { database: text, .. } => {
                if let Some(text) = text {
                    f(text);
                }
            }
            PgEvent::IncompatibleDataFiles {
                data_version,
                server_version,
            } => {
                for text in [data_version, server_version].into_iter().flatten() {
                    f(text);
                }
            }
            PgEvent::CouldNotBind {
                family,
                address,
                error,
                ..
            } => {
                f(family);
                f(address);
                f(error);
            }
            PgEvent::SlotInvalidated { slot: text, .. }
            | PgEvent::SlotHolderTerminated { slot: text, .. }
            | PgEvent::ToastChunkMissing { relation: text, .. }
            | PgEvent::DataBeyondEof { relation: text, .. }
            | PgEvent::LockFileExists { path: text, .. }
            | PgEvent::DataDirectoryPermissions { path: text } => f(text),
            PgEvent::TupleXidCorruption {
                field, cutoff_name, ..
            } => {
                f(field);
                if let Some(name) = cutoff_name {
                    f(name);
                }
            }
            PgEvent::InvalidAllocSize { .. } => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> PgRecord {
        PgRecord {
            message: "server process (PID 42) was terminated by signal 9: Killed".to_owned(),
            detail: Some(format!("Failed process was running: {}", "é".repeat(5000))),
            statement: Some("SELECT 1".to_owned()),
            user: Some("x".repeat(300)),
            event: Some(PgEvent::TerminatedBySignal {
                process: "server process".to_owned(),
                pid: 42,
                signal: 9,
                signal_name: "Killed".to_owned(),
                query: Some("é".repeat(5000)),
            }),
            ..PgRecord::default()
        }
    }

    #[test]
    fn long_texts_are_cut_at_a_character_boundary_and_marked() {
        let mut r = record();
        let before = r.clone();
        let cut = r.cut_texts(256);
        assert_eq!(cut.cut, 3, "detail, user and the event's query");
        let detail = r.detail.as_deref().unwrap();
        assert!(
            detail.len() <= 256 && detail.ends_with('…'),
            "{}",
            detail.len()
        );
        assert!(detail.starts_with("Failed process was running: éé"));
        assert_eq!(r.user.as_deref().unwrap().len(), 256);
        let Some(PgEvent::TerminatedBySignal { query, .. }) = &r.event else {
            panic!("event kept");
        };
        assert!(query.as_deref().unwrap().len() <= 256);
        assert_eq!(r.message, before.message);
        assert_eq!(r.statement, before.statement);
        assert!(cut.heap_bytes >= size_of::<PgRecord>() + 3 * 250 + r.message.len());
        assert!(cut.heap_bytes < size_of::<PgRecord>() + size_of::<PgEvent>() + 2048);
    }

    #[test]
    fn short_texts_are_left_whole_and_counted() {
        let mut r = record();
        let before = r.clone();
        let cut = r.cut_texts(1 << 20);
        assert_eq!(cut.cut, 0);
        assert_eq!(r, before);
        assert!(cut.heap_bytes >= 10_000 + 10_000 + 300);
    }

    #[test]
    fn a_limit_under_the_ellipsis_leaves_empty_texts() {
        let mut r = record();
        r.cut_texts(2);
        assert_eq!(r.message, "");
        assert_eq!(r.statement.as_deref(), Some(""));
    }
}
