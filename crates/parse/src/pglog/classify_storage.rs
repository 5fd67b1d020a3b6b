//! Classification of the messages with which PostgreSQL reports that its storage failed it or
//! that it cannot go on: fsync and open errors, WAL archiving, missing checkpoints and WAL,
//! shared memory, locks, sockets and permissions at start, transaction ID wraparound,
//! replication slots invalidated, and the signs of corrupted data. Takes a main-line message in English (translations are turned back
//! into English by [`super::translate`] first) and yields a [`PgEvent`]; the DETAIL and HINT of
//! the record complete some of them.
//!
//! strerror texts are keyed by meaning (`is_io_error`, `is_read_only`, ENOSPC in
//! [`super::classify::is_no_space`]): glibc's translations are turned into the English text
//! before these tests.

use super::classify::{first_word, is_no_space, leading_number, quoted_then_error, unquote};
use super::{Lsn, PgEvent};

/// EIO as glibc prints it (`Input/output error`) or musl, the C library of Alpine-based
/// container images (`I/O error`); glibc's `Remote I/O error` is EREMOTEIO, not EIO.
pub(super) fn is_io_error(error: &str) -> bool {
    error.contains("Input/output error")
        || error
            .match_indices("I/O error")
            .any(|(at, _)| !error[..at].ends_with("Remote "))
}

/// EROFS as glibc prints it.
pub(super) fn is_read_only(error: &str) -> bool {
    error.contains("Read-only file system")
}

/// What a failed file operation's strerror says of the storage, when it says something: the
/// three errors that are the storage's, not the server's (a missing file, a permission are
/// not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileErrno {
    /// ENOSPC: `No space left on device`.
    NoSpace,
    /// EROFS: `Read-only file system`.
    ReadOnly,
    /// EIO: `Input/output error`.
    IoError,
}

impl PgEvent {
    /// The storage's error a write, an extend, an open or an fsync of a file met (`could not
    /// write to file …: No space left on device`), read from the event's flags; `None` for
    /// another error or another event. ENOSPC first: a full disk is the likelier cause of a
    /// line that says two things.
    pub fn file_errno(&self) -> Option<FileErrno> {
        let (no_space, read_only, io_error) = match self {
            PgEvent::CouldNotWrite {
                no_space,
                read_only,
                io_error,
                ..
            }
            | PgEvent::CouldNotExtendFile {
                no_space,
                read_only,
                io_error,
                ..
            }
            | PgEvent::CouldNotOpenFile {
                no_space,
                read_only,
                io_error,
                ..
            }
            | PgEvent::CouldNotFsync {
                no_space,
                read_only,
                io_error,
                ..
            } => (*no_space, *read_only, *io_error),
            _ => return None,
        };
        if no_space {
            Some(FileErrno::NoSpace)
        } else if read_only {
            Some(FileErrno::ReadOnly)
        } else if io_error {
            Some(FileErrno::IoError)
        } else {
            None
        }
    }
}

/// Messages of this module that are not `could not …` ones.
pub(super) fn classify(message: &str) -> Option<PgEvent> {
    let first = *message.as_bytes().first()?;
    match first {
        b'a' | b'"' => archiving(message),
        b'i' => invalid_checkpoint(message)
            .or_else(|| slot_invalidated(message))
            .or_else(|| {
                // invalid memory alloc request size 18446744073709551613
                let size = message.strip_prefix("invalid memory alloc request size ")?;
                Some(PgEvent::InvalidAllocSize {
                    bytes: size.trim().parse().ok()?,
                })
            }),
        b'd' => database(message),
        b'f' | b'u' | b'm' | b'c' => tuple_xid(message).or_else(|| corrupted_relation(message)),
        b't' => {
            // terminating process 1234 to release replication slot "standby"
            let rest = message.strip_prefix("terminating process ")?;
            let (pid, slot) = rest.split_once(" to release replication slot ")?;
            Some(PgEvent::SlotHolderTerminated {
                pid: pid.parse().ok()?,
                slot: unquote(slot.trim_end()).to_owned(),
            })
        }
        b'l' => {
            // lock file "postmaster.pid" already exists
            let path = message
                .strip_prefix("lock file \"")?
                .strip_suffix("\" already exists")?;
            Some(PgEvent::LockFileExists {
                path: path.to_owned(),
                pid: None,
            })
        }
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
        b'o' | b'c' => could_not_open_or_create(rest).or_else(|| listen_socket(rest)),
        b'b' => {
            // could not bind IPv4 address "127.0.0.1": Address already in use
            let rest = rest.strip_prefix("bind ")?;
            let (family, rest) = rest.split_once(" address \"")?;
            let (address, error) = rest.split_once("\": ")?;
            Some(PgEvent::CouldNotBind {
                family: family.to_owned(),
                address: address.to_owned(),
                in_use: error.contains("Address already in use"),
                error: error.to_owned(),
            })
        }
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
    // could not create lock file "postmaster.pid": No space left on device
    let (create, rest) = match rest.strip_prefix("open file \"") {
        Some(r) => (false, r),
        None => (
            true,
            rest.strip_prefix("create file \"")
                .or_else(|| rest.strip_prefix("create lock file \""))?,
        ),
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

/// `could not create listen socket for "X"`, `could not create any TCP/IP sockets`, `… any
/// Unix-domain sockets`, `rest` after `could not `.
fn listen_socket(rest: &str) -> Option<PgEvent> {
    let rest = rest.strip_prefix("create ")?;
    if let Some(address) = rest.strip_prefix("listen socket for ") {
        return Some(PgEvent::ListenSocketFailed {
            address: Some(unquote(address.trim_end()).to_owned()),
        });
    }
    matches!(
        rest.trim_end(),
        "any TCP/IP sockets" | "any Unix-domain sockets"
    )
    .then_some(PgEvent::ListenSocketFailed { address: None })
}

/// Messages that start with `database` or `data directory`: wraparound, a data directory the
/// server will not use.
fn database(message: &str) -> Option<PgEvent> {
    // data directory "/var/lib/postgresql/15/main" has invalid permissions
    // data directory "…" has group or world access  (PG 10)
    if let Some(rest) = message.strip_prefix("data directory \"") {
        let (path, what) = rest.rsplit_once("\" has ")?;
        return matches!(
            what.trim_end(),
            "invalid permissions" | "group or world access"
        )
        .then(|| PgEvent::DataDirectoryPermissions {
            path: path.to_owned(),
        });
    }
    let rest = message.strip_prefix("database ")?;
    if rest.trim_end() == "files are incompatible with server" {
        return Some(PgEvent::IncompatibleDataFiles {
            data_version: None,
            server_version: None,
        });
    }
    // database is not accepting commands to avoid wraparound data loss in database "app"
    // database is not accepting commands that assign new transaction IDs to avoid wraparound
    // data loss in database "app"  (PG ≥ 17)
    if let Some(rest) = rest.strip_prefix("is not accepting commands ") {
        let (how, whose) = rest.split_once("to avoid wraparound data loss in database ")?;
        let (database, database_oid) = database_named(whose.trim_end())?;
        return Some(PgEvent::WraparoundRefused {
            database,
            database_oid,
            multixact: how.contains("MultiXactIds"),
        });
    }
    // database "app" must be vacuumed within 39999985 transactions
    // database with OID 5 must be vacuumed before 3 more MultiXactIds are used
    // database with OID 5 must be vacuumed before 1000 more multixact members are used
    let (whose, rest) = rest.split_once(" must be vacuumed ")?;
    let (database, database_oid) = database_named(whose)?;
    let (remaining, multixact) = if let Some(n) = rest.strip_prefix("within ") {
        (n, false)
    } else {
        (rest.strip_prefix("before ")?, true)
    };
    let digits = remaining.bytes().take_while(u8::is_ascii_digit).count();
    let unit = remaining[digits..].trim();
    let known = if multixact {
        unit.starts_with("more MultiXactId") || unit.starts_with("more multixact member")
    } else {
        unit == "transactions"
    };
    known.then_some(())?;
    Some(PgEvent::WraparoundWarning {
        database,
        database_oid,
        remaining: remaining[..digits].parse().ok()?,
        multixact,
    })
}

/// `"app"` → name, `with OID 5` → OID.
fn database_named(text: &str) -> Option<(Option<String>, Option<u32>)> {
    if let Some(oid) = text.strip_prefix("with OID ") {
        return Some((None, Some(oid.parse().ok()?)));
    }
    let name = text.strip_prefix('"')?.strip_suffix('"')?;
    Some((Some(name.to_owned()), None))
}

/// `invalidating slot "s" because its restart_lsn X/Y exceeds max_slot_wal_keep_size` (13–15),
/// `invalidating obsolete replication slot "s"` (≥ 16).
fn slot_invalidated(message: &str) -> Option<PgEvent> {
    if let Some(rest) = message.strip_prefix("invalidating slot \"") {
        let (slot, rest) = rest.split_once("\" because its restart_lsn ")?;
        let (lsn, _) = rest.split_once(" exceeds max_slot_wal_keep_size")?;
        return Some(PgEvent::SlotInvalidated {
            slot: slot.to_owned(),
            restart_lsn: Some(Lsn::parse(lsn)?),
            excess_bytes: None,
            wal_limit: true,
        });
    }
    let slot = message.strip_prefix("invalidating obsolete replication slot ")?;
    Some(PgEvent::SlotInvalidated {
        slot: unquote(slot.trim_end()).to_owned(),
        restart_lsn: None,
        excess_bytes: None,
        wal_limit: false,
    })
}

/// The freeze checks of heapam.c: `found xmin N from before relfrozenxid M`, `uncommitted xmin
/// N from before xid cutoff M needs to be frozen`, `multixact N from before cutoff M found to
/// be still running`, `cannot freeze committed xmax N`.
fn tuple_xid(message: &str) -> Option<PgEvent> {
    if let Some(rest) = message.strip_prefix("cannot freeze committed ") {
        let (field, xid) = rest.trim_end().rsplit_once(' ')?;
        return Some(PgEvent::TupleXidCorruption {
            field: field.to_owned(),
            xid: xid.parse().ok()?,
            cutoff_name: None,
            cutoff: None,
        });
    }
    let rest = message
        .strip_prefix("found ")
        .or_else(|| message.strip_prefix("uncommitted "))
        .or_else(|| message.starts_with("multixact ").then_some(message))?;
    let (found, horizon) = rest.split_once(" from before ")?;
    let (field, xid) = found.rsplit_once(' ')?;
    if !matches!(field, "xmin" | "xmax" | "update xid" | "multixact") {
        return None;
    }
    // `xid cutoff 123 needs to be frozen`: the name is the words before the first number.
    let number_at = horizon.find(|c: char| c.is_ascii_digit())?;
    let cutoff_name = horizon[..number_at].trim_end();
    if cutoff_name.is_empty() {
        return None;
    }
    Some(PgEvent::TupleXidCorruption {
        field: field.to_owned(),
        xid: xid.parse().ok()?,
        cutoff_name: Some(cutoff_name.to_owned()),
        cutoff: Some(leading_number(&horizon[number_at..])?),
    })
}

/// `missing chunk number N for toast value V in T`, `unexpected data beyond EOF in block N of
/// relation R`.
fn corrupted_relation(message: &str) -> Option<PgEvent> {
    // missing chunk number 0 for toast value 16391 in pg_toast_16384
    if let Some(rest) = message.strip_prefix("missing chunk number ") {
        let (chunk, rest) = rest.split_once(" for toast value ")?;
        let (value, relation) = rest.split_once(" in ")?;
        return Some(PgEvent::ToastChunkMissing {
            chunk: chunk.parse().ok()?,
            value: value.parse().ok()?,
            relation: relation.trim_end().to_owned(),
        });
    }
    // unexpected data beyond EOF in block 12 of relation base/5/16384
    let rest = message.strip_prefix("unexpected data beyond EOF in block ")?;
    let (block, relation) = rest.split_once(" of relation ")?;
    Some(PgEvent::DataBeyondEof {
        block: block.parse().ok()?,
        relation: unquote(relation.trim_end()).to_owned(),
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
    match event {
        Some(PgEvent::SharedMemoryMapFailed { request_bytes, .. }) => {
            if let Some((_, rest)) = hint.split_once("(currently ") {
                *request_bytes = leading_number(rest);
            }
        }
        // HINT:  Is another postmaster (PID 4242) running in data directory "/var/lib/…"?
        Some(PgEvent::LockFileExists { pid, .. }) => {
            if let Some(rest) = hint.strip_prefix("Is another postmaster (PID ") {
                *pid = leading_number(rest).and_then(|p| u32::try_from(p).ok());
            }
        }
        _ => {}
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
        // DETAIL:  The slot's restart_lsn 0/5000000 exceeds the limit by 16777216 bytes.  (≥ 16)
        Some(PgEvent::SlotInvalidated {
            restart_lsn,
            excess_bytes,
            wal_limit,
            ..
        }) => {
            if let Some(rest) = detail.strip_prefix("The slot's restart_lsn ")
                && let Some((lsn, by)) = rest.split_once(" exceeds the limit by ")
            {
                *restart_lsn = Lsn::parse(lsn);
                *excess_bytes = leading_number(by);
                *wal_limit = true;
            }
        }
        // DETAIL:  The data directory was initialized by PostgreSQL version 13, which is not
        // compatible with this version 15.18 (Debian 15.18-0+deb12u1).
        Some(PgEvent::IncompatibleDataFiles {
            data_version,
            server_version,
        }) => {
            if let Some(rest) =
                detail.strip_prefix("The data directory was initialized by PostgreSQL version ")
                && let Some((data, server)) =
                    rest.split_once(", which is not compatible with this version ")
            {
                *data_version = Some(data.to_owned());
                *server_version = Some(server.trim_end().trim_end_matches('.').to_owned());
            }
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "classify_storage_tests.rs"]
mod tests;
