//! Classification of the messages with which PostgreSQL reports that its storage failed it or
//! that it cannot go on: fsync and open errors, WAL archiving, missing checkpoints and WAL,
//! shared memory at start. Takes a main-line message in English (translations are turned back
//! into English by [`super::translate`] first) and yields a [`PgEvent`]; the DETAIL and HINT of
//! the record complete some of them.
//!
//! strerror texts are keyed by meaning (`is_io_error`, `is_read_only`, ENOSPC in
//! [`super::classify::is_no_space`]): glibc's translations are turned into the English text
//! before these tests.

use super::classify::{first_word, is_no_space, leading_number, quoted_then_error};
use super::{Lsn, PgEvent};

/// EIO as glibc prints it.
pub(super) fn is_io_error(error: &str) -> bool {
    error.contains("Input/output error")
}

/// EROFS as glibc prints it.
pub(super) fn is_read_only(error: &str) -> bool {
    error.contains("Read-only file system")
}

/// Messages of this module that are not `could not …` ones.
pub(super) fn classify(message: &str) -> Option<PgEvent> {
    let first = *message.as_bytes().first()?;
    match first {
        b'a' | b'"' => archiving(message),
        b'i' => invalid_checkpoint(message),
        b'r' => {
            // requested WAL segment 000000010000000000000003 has already been removed
            let segment = message
                .strip_prefix("requested WAL segment ")?
                .strip_suffix(" has already been removed")?;
            Some(PgEvent::WalSegmentRemoved {
                segment: segment.to_owned(),
            })
        }
        _ => None,
    }
}

/// The archiver's messages.
fn archiving(message: &str) -> Option<PgEvent> {
    // archive command failed with exit code 1
    if let Some(rest) = message.strip_prefix("archive command ") {
        let mut exit_code = None;
        let mut signal = None;
        if let Some(code) = rest.strip_prefix("failed with exit code ") {
            exit_code = Some(code.trim().parse().ok()?);
        } else if let Some(sig) = rest.strip_prefix("was terminated by signal ") {
            // archive command was terminated by signal 9: Killed
            signal = Some(i32::try_from(leading_number(sig)?).ok()?);
        } else if !rest.starts_with("was terminated by exception ")
            && !rest.starts_with("exited with unrecognized status ")
        {
            return None;
        }
        return Some(PgEvent::ArchiveCommandFailed {
            exit_code,
            signal,
            command: None,
        });
    }
    // archiving write-ahead log file "000000010000000000000001" failed too many times, will try again later
    if let Some(rest) = message.strip_prefix("archiving write-ahead log file \"") {
        let (segment, _) = rest.split_once("\" failed too many times")?;
        return Some(PgEvent::ArchiveFailedTooManyTimes {
            segment: segment.to_owned(),
        });
    }
    match message.trim_end() {
        "archive_mode enabled, yet archive_command is not set"
        | "archive_mode enabled, yet archiving is not configured"
        | "\"archive_mode\" enabled, yet archiving is not configured" => {
            Some(PgEvent::ArchiveNotConfigured)
        }
        _ => None,
    }
}

/// `invalid primary checkpoint record`, `invalid secondary checkpoint record` (10),
/// `invalid checkpoint record`.
fn invalid_checkpoint(message: &str) -> Option<PgEvent> {
    let which = message
        .trim_end()
        .strip_prefix("invalid ")?
        .strip_suffix("checkpoint record")?;
    let which = match which {
        "" => None,
        "primary " => Some("primary"),
        "secondary " => Some("secondary"),
        _ => return None,
    };
    Some(PgEvent::InvalidCheckpointRecord {
        which: which.map(str::to_owned),
    })
}

/// The `could not …` messages of this module, `rest` after `could not `.
pub(super) fn could_not(rest: &str) -> Option<PgEvent> {
    match *rest.as_bytes().first()? {
        b'f' => could_not_f(rest),
        b'o' | b'c' => could_not_open_or_create(rest),
        b'l' => {
            // could not locate a valid checkpoint record
            // could not locate a valid checkpoint record at 0/2000028  (PG ≥ 17)
            // could not locate required checkpoint record[ at X/Y]  (with a backup_label)
            let rest = rest.strip_prefix("locate ")?;
            let (required, rest) = if let Some(r) = rest.strip_prefix("a valid checkpoint record") {
                (false, r)
            } else {
                (true, rest.strip_prefix("required checkpoint record")?)
            };
            let lsn = match rest.trim_end() {
                "" => None,
                at => Some(Lsn::parse(at.strip_prefix(" at ")?)?),
            };
            Some(PgEvent::NoValidCheckpoint { lsn, required })
        }
        _ => None,
    }
}

/// `could not fsync …`, `could not fdatasync …`, `could not find redo location …`.
fn could_not_f(rest: &str) -> Option<PgEvent> {
    // could not find redo location referenced by checkpoint record
    // could not find redo location 0/2000028 referenced by checkpoint record at 0/2000060
    if let Some(rest) = rest.strip_prefix("find redo location ") {
        let (redo, checkpoint) = rest.split_once("referenced by checkpoint record")?;
        let redo = match redo.trim() {
            "" => None,
            lsn => Some(Lsn::parse(lsn)?),
        };
        let checkpoint = match checkpoint.trim() {
            "" => None,
            at => Some(Lsn::parse(at.strip_prefix("at ")?)?),
        };
        return Some(PgEvent::RedoLocationMissing { redo, checkpoint });
    }
    // could not fsync file "base/5/16384_fsm": Input/output error
    // could not fdatasync file "000000010000000000000001": Input/output error
    // could not fsync write-through file "…": …
    // could not fsync log file 000000010000000000000001: Input/output error  (PG 10–11)
    let rest = rest
        .strip_prefix("fsync ")
        .or_else(|| rest.strip_prefix("fdatasync "))?;
    let rest = rest.strip_prefix("write-through ").unwrap_or(rest);
    let (path, error) = if let Some(rest) = rest.strip_prefix("file ") {
        quoted_then_error(rest)?
    } else {
        let (segment, error) = rest.strip_prefix("log file ")?.split_once(": ")?;
        (segment.to_owned(), error)
    };
    Some(PgEvent::CouldNotFsync {
        path,
        io_error: is_io_error(error),
        no_space: is_no_space(error),
        read_only: is_read_only(error),
        error: error.to_owned(),
    })
}

/// `could not open file "X": E`, `… for reading: E`, `… (target block N): E`, `could not create
/// file "X": E`, `could not create shared memory segment: E`.
fn could_not_open_or_create(rest: &str) -> Option<PgEvent> {
    // could not create shared memory segment: No space left on device
    if let Some(error) = rest.strip_prefix("create shared memory segment: ") {
        return Some(PgEvent::SharedMemoryCreateFailed {
            error: error.to_owned(),
            request_bytes: None,
        });
    }
    // could not open file "base/5/2601": Read-only file system
    let (create, rest) = match rest.strip_prefix("open file \"") {
        Some(r) => (false, r),
        None => (true, rest.strip_prefix("create file \"")?),
    };
    let (path, after) = rest.split_once('"')?;
    let error = if let Some(error) = after.strip_prefix(": ") {
        error
    } else {
        // `" for reading: E`, `" (target block 7): previous segment is only 3 blocks`
        after
            .split_once("): ")
            .or_else(|| after.split_once(": "))?
            .1
    };
    Some(PgEvent::CouldNotOpenFile {
        path: path.to_owned(),
        create,
        read_only: is_read_only(error),
        io_error: is_io_error(error),
        no_space: is_no_space(error),
        error: error.to_owned(),
    })
}

/// `000000010000000000000003 at offset 0, length 8192: E` or the same with the segment quoted
/// (PG ≥ 17) → (segment, E).
pub(super) fn segment_then_error(rest: &str) -> Option<(&str, &str)> {
    let segment = first_word(rest);
    let error = rest[segment.len()..].split_once(": ")?.1;
    let segment = segment
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(segment);
    Some((segment, error))
}

/// Fills what a HINT adds to `event` (in English).
pub(super) fn complete_from_hint(event: Option<&mut PgEvent>, hint: &str) {
    // HINT:  This error usually means that PostgreSQL's request for a shared memory segment
    // exceeded available memory, swap space, or huge pages. To reduce the request size
    // (currently 150994944 bytes), reduce PostgreSQL's shared memory usage, …
    if let Some(PgEvent::SharedMemoryMapFailed { request_bytes, .. }) = event
        && let Some((_, rest)) = hint.split_once("(currently ")
    {
        *request_bytes = leading_number(rest);
    }
}

/// Fills what a DETAIL adds to `event` (in English).
pub(super) fn complete_from_detail(event: Option<&mut PgEvent>, detail: &str) {
    match event {
        // DETAIL:  The failed archive command was: cp pg_wal/000000010000000000000001 /archive/…
        Some(PgEvent::ArchiveCommandFailed { command, .. }) => {
            if let Some(c) = detail.strip_prefix("The failed archive command was: ") {
                *command = Some(c.to_owned());
            }
        }
        // DETAIL:  Failed system call was shmget(key=5432001, size=56, 03600).
        Some(PgEvent::SharedMemoryCreateFailed { request_bytes, .. }) => {
            if let Some((_, rest)) = detail.split_once("shmget(")
                && let Some((_, size)) = rest.split_once("size=")
            {
                *request_bytes = leading_number(size);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "classify_storage_tests.rs"]
mod tests;
