//! Where PostgreSQL's files live and what holds them, as the report states it: the file
//! system of the data directory, pg_wal, each tablespace and the log directory (size, use,
//! read-only or not), pg_wal's segments, the replication slots and the WAL they retain, the
//! archiver, and each database's transaction-id age and checksum failures. Built by `facts`
//! from the collector's `storage/` and `postgres/` files (or a sosreport's `df`).

use serde::Serialize;

use super::Known;

/// What the bundle shows of PostgreSQL's storage. Empty lists and `null`s: the files were not
/// in the bundle.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StorageFacts {
    /// The file systems holding PostgreSQL's places, one per file system.
    pub volumes: Vec<Volume>,
    /// pg_wal's segments, counted from its listing.
    pub pg_wal: Option<WalFacts>,
    /// `pg_replication_slots`; `null` when it was not collected.
    pub slots: Option<Vec<SlotFacts>>,
    /// `pg_stat_archiver`.
    pub archiver: Option<ArchiverFacts>,
    /// Per database: the age of `datfrozenxid` and `datminmxid`, and data checksum failures.
    pub databases: Vec<DatabaseFacts>,
}

impl StorageFacts {
    /// The volume that holds PostgreSQL's place `role` (`data_directory`, `pg_wal`).
    pub fn volume_of(&self, role: &str) -> Option<&Volume> {
        self.volumes
            .iter()
            .find(|v| v.places.iter().any(|p| p.role == role))
    }
}

/// One of PostgreSQL's places.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Place {
    /// `data_directory`, `pg_wal`, `tablespace OID`, `log_directory`.
    pub role: String,
    /// Its path as the postmaster sees it.
    pub path: String,
}

/// A file system holding one or more of PostgreSQL's places.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Volume {
    /// What PostgreSQL keeps there.
    pub places: Vec<Place>,
    /// Where the file system is mounted.
    pub mount_point: String,
    /// The device or source (`/dev/sdb1`, `/dev/loop0`, `tmpfs`), when known.
    pub device: Option<String>,
    /// `ext4`, `xfs`, `tmpfs`, … (from mountinfo).
    pub fs_type: Option<String>,
    /// Whether it is read-only now (mountinfo: `ro`, or ext4's `emergency_ro` after an error),
    /// with the mountinfo line.
    pub read_only: Option<Known<bool>>,
    /// The super-block's `errors=` behaviour (`remount-ro`, `continue`, `panic`), when set.
    pub on_errors: Option<String>,
    /// Size in bytes, with the `df` line.
    pub size_bytes: Option<Known<u64>>,
    /// Used bytes (`df`).
    pub used_bytes: Option<u64>,
    /// Bytes available to PostgreSQL (`df`: what an unprivileged user may still write).
    pub available_bytes: Option<u64>,
    /// Use in percent as `df` printed it.
    pub use_percent: Option<u8>,
    /// Inodes used, in percent (`df -i`), with its line.
    pub inodes_use_percent: Option<Known<u8>>,
}

/// pg_wal as counted from its listing (`storage/pg_wal.txt`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WalFacts {
    /// Segment files, with the listing's line.
    pub segments: Known<u64>,
    /// Their bytes.
    pub bytes: Option<u64>,
    /// Segments waiting for the archiver (`archive_status/*.ready`).
    pub archive_ready: Option<u64>,
    /// The oldest segment's name.
    pub oldest_segment: Option<String>,
    /// The newest segment's name.
    pub newest_segment: Option<String>,
}

/// One replication slot.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SlotFacts {
    /// The slot's name, with its line.
    pub name: Known<String>,
    /// `physical` or `logical`.
    pub slot_type: Option<String>,
    /// Whether a consumer is connected.
    pub active: Option<bool>,
    /// WAL bytes kept for it (`pg_current_wal_lsn() - restart_lsn`).
    pub retained_bytes: Option<i64>,
    /// `reserved`, `extended`, `unreserved`, `lost` (13+).
    pub wal_status: Option<String>,
    /// Since when it is inactive (17+), as printed.
    pub inactive_since: Option<String>,
    /// Why it was invalidated (17+), as printed.
    pub invalidation_reason: Option<String>,
}

/// `pg_stat_archiver`, with its line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArchiverFacts {
    /// Segments archived since the statistics were reset.
    pub archived_count: Option<Known<u64>>,
    /// Failed attempts since the statistics were reset.
    pub failed_count: Option<u64>,
    /// The last segment archived, as printed.
    pub last_archived_wal: Option<String>,
    /// When, as printed.
    pub last_archived_time: Option<String>,
    /// The last segment that failed, as printed.
    pub last_failed_wal: Option<String>,
    /// When, as printed.
    pub last_failed_time: Option<String>,
    /// True when the last failure is later than the last success: archiving is failing now.
    pub failing: Option<bool>,
    /// When the collector asked, as printed.
    pub collected_at: Option<String>,
}

/// One database's age and checksum failures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatabaseFacts {
    /// The database's name (empty: shared objects, in the checksum view).
    pub name: String,
    /// `age(datfrozenxid)`, with its line.
    pub xid_age: Option<Known<u64>>,
    /// `mxid_age(datminmxid)`.
    pub multixact_age: Option<u64>,
    /// Whether it accepts connections (`template0` does not).
    pub allows_connections: Option<bool>,
    /// Data checksum failures (`pg_stat_database`, 12+), with its line; `null` when checksums
    /// are off or the file was not collected.
    pub checksum_failures: Option<Known<u64>>,
    /// When the last one was found, as printed.
    pub checksum_last_failure: Option<String>,
}
