//! What the server says about WAL retention, archiving and transaction-id age, as the
//! collector's psql session prints it (unaligned, `|` between cells, a header line and an `(N
//! rows)` footer): `pg_replication_slots` with the WAL each slot retains, `pg_stat_archiver`,
//! the age of `datfrozenxid` and `datminmxid` per database, and data checksum failures per
//! database. Built on
//! [`parse_pipe_table`]; columns are found by their header names, so a server that prints more
//! or fewer of them (PostgreSQL 10 has no `wal_status`) still parses, the missing ones `None`.

use serde::Serialize;

use super::host::{PipeTable, parse_pipe_table};
use crate::ParseStats;

/// A cell of `row` under header `name`, `None` when the column is absent or the cell empty.
fn cell<'a>(table: &PipeTable, row: &'a [String], name: &str) -> Option<&'a str> {
    let v = row.get(table.column(name)?)?.as_str();
    (!v.is_empty()).then_some(v)
}

fn number<T: std::str::FromStr>(table: &PipeTable, row: &[String], name: &str) -> Option<T> {
    cell(table, row, name)?.parse().ok()
}

fn flag(table: &PipeTable, row: &[String], name: &str) -> Option<bool> {
    match cell(table, row, name)? {
        "t" => Some(true),
        "f" => Some(false),
        _ => None,
    }
}

fn text(table: &PipeTable, row: &[String], name: &str) -> Option<String> {
    cell(table, row, name).map(str::to_owned)
}

/// Counts a table whose header lacks `required` as wholly unrecognised: another query's output.
fn require(table: &mut PipeTable, required: &[&str]) -> bool {
    let ok = required.iter().all(|c| table.column(c).is_some());
    if !ok && !table.columns.is_empty() {
        let header = table.columns.join("|");
        table.stats.unrecognized(1, &header);
        for (line, row) in &table.rows {
            table.stats.unrecognized(*line, &row.join("|"));
        }
        table.stats.records = 0;
    }
    ok
}

/// One replication slot (`postgres/replication-slots.txt`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReplicationSlot {
    /// `slot_name`.
    pub name: String,
    /// `physical` or `logical`.
    pub slot_type: Option<String>,
    /// The database of a logical slot.
    pub database: Option<String>,
    /// A temporary slot (gone with its session).
    pub temporary: Option<bool>,
    /// Whether a client is streaming from it now.
    pub active: Option<bool>,
    /// The walsender's pid when active.
    pub active_pid: Option<u32>,
    /// The oldest WAL position the slot needs (`restart_lsn`), as printed.
    pub restart_lsn: Option<String>,
    /// Bytes of WAL between the server's current position and `restart_lsn`: what the slot
    /// keeps in pg_wal.
    pub retained_bytes: Option<i64>,
    /// `wal_status` (13+): `reserved`, `extended`, `unreserved`, `lost`.
    pub wal_status: Option<String>,
    /// `safe_wal_size` (13+): bytes that can still be written before the slot is in danger of
    /// losing its WAL (negative past `max_slot_wal_keep_size`).
    pub safe_wal_size: Option<i64>,
    /// Age of the slot's `xmin` (transactions), holding back vacuum.
    pub xmin_age: Option<u64>,
    /// Age of its `catalog_xmin`.
    pub catalog_xmin_age: Option<u64>,
    /// `inactive_since` (17+), as printed.
    pub inactive_since: Option<String>,
    /// `invalidation_reason` (17+): `wal_removed`, `rows_removed`, …
    pub invalidation_reason: Option<String>,
    /// 1-based line.
    pub line: u64,
}

/// `postgres/replication-slots.txt`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ReplicationSlots {
    /// Every slot, in file order.
    pub slots: Vec<ReplicationSlot>,
    /// Line accounting.
    pub stats: ParseStats,
}

// slot_name|slot_type|database|temporary|active|active_pid|restart_lsn|confirmed_flush_lsn|retained_bytes|wal_status|safe_wal_size|xmin_age|catalog_xmin_age|inactive_since|invalidation_reason
// standby_gone|physical||f|f||0/3000060||2852126624|extended|-1830019520||||
// (1 row)
/// Parses the collector's `pg_replication_slots` query output.
pub fn parse_replication_slots(input: &[u8]) -> ReplicationSlots {
    let mut t = parse_pipe_table(input);
    let mut slots = Vec::new();
    if require(&mut t, &["slot_name"]) {
        for (line, row) in &t.rows {
            slots.push(ReplicationSlot {
                name: text(&t, row, "slot_name").unwrap_or_default(),
                slot_type: text(&t, row, "slot_type"),
                database: text(&t, row, "database"),
                temporary: flag(&t, row, "temporary"),
                active: flag(&t, row, "active"),
                active_pid: number(&t, row, "active_pid"),
                restart_lsn: text(&t, row, "restart_lsn"),
                retained_bytes: number(&t, row, "retained_bytes"),
                wal_status: text(&t, row, "wal_status"),
                safe_wal_size: number(&t, row, "safe_wal_size"),
                xmin_age: number(&t, row, "xmin_age"),
                catalog_xmin_age: number(&t, row, "catalog_xmin_age"),
                inactive_since: text(&t, row, "inactive_since"),
                invalidation_reason: text(&t, row, "invalidation_reason"),
                line: *line,
            });
        }
    }
    ReplicationSlots {
        slots,
        stats: t.stats,
    }
}

/// `pg_stat_archiver` (`postgres/archiver.txt`): one row.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Archiver {
    /// Segments archived since the statistics were reset.
    pub archived_count: Option<u64>,
    /// The last segment archived.
    pub last_archived_wal: Option<String>,
    /// When, as printed (`2026-11-28 15:02:11.52+00`).
    pub last_archived_time: Option<String>,
    /// Failed attempts since the reset.
    pub failed_count: Option<u64>,
    /// The segment of the last failure.
    pub last_failed_wal: Option<String>,
    /// When, as printed.
    pub last_failed_time: Option<String>,
    /// When the statistics were reset.
    pub stats_reset: Option<String>,
    /// The server's `now()` at collection, as printed: what the times above compare with.
    pub collected_at: Option<String>,
    /// 1-based line of the row; 0 when there is none.
    pub line: u64,
    /// Line accounting.
    pub stats: ParseStats,
}

impl Archiver {
    /// Whether the last attempt failed: a failure later than the last success (times as
    /// PostgreSQL prints them in one zone sort as text).
    pub fn failing(&self) -> Option<bool> {
        let failed = self.last_failed_time.as_deref()?;
        Some(
            self.last_archived_time
                .as_deref()
                .is_none_or(|ok| failed > ok),
        )
    }
}

// archived_count|last_archived_wal|last_archived_time|failed_count|last_failed_wal|last_failed_time|stats_reset|collected_at
// 0|||0|||2026-11-28 14:57:19.564563+00|2026-11-28 14:57:28.4555+00
// (1 row)
/// Parses the collector's `pg_stat_archiver` query output.
pub fn parse_archiver(input: &[u8]) -> Archiver {
    let mut t = parse_pipe_table(input);
    let mut out = Archiver::default();
    if require(&mut t, &["archived_count", "failed_count"])
        && let Some((line, row)) = t.rows.first()
    {
        out = Archiver {
            archived_count: number(&t, row, "archived_count"),
            last_archived_wal: text(&t, row, "last_archived_wal"),
            last_archived_time: text(&t, row, "last_archived_time"),
            failed_count: number(&t, row, "failed_count"),
            last_failed_wal: text(&t, row, "last_failed_wal"),
            last_failed_time: text(&t, row, "last_failed_time"),
            stats_reset: text(&t, row, "stats_reset"),
            collected_at: text(&t, row, "collected_at"),
            line: *line,
            stats: ParseStats::default(),
        };
    }
    out.stats = t.stats;
    out
}

/// One database's transaction-id ages (`postgres/database-xid-ages.txt`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DatabaseXidAge {
    /// `datname`.
    pub name: String,
    /// Whether it accepts connections (`template0` does not: only a freeze by hand reaches it).
    pub allows_connections: Option<bool>,
    /// `age(datfrozenxid)`: transactions since the oldest unfrozen one (wraparound at 2^31).
    pub datfrozenxid_age: Option<u64>,
    /// `mxid_age(datminmxid)`: the same for multixact ids.
    pub datminmxid_age: Option<u64>,
    /// 1-based line.
    pub line: u64,
}

/// `postgres/database-xid-ages.txt`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DatabaseXidAges {
    /// Every database, in file order.
    pub databases: Vec<DatabaseXidAge>,
    /// Line accounting.
    pub stats: ParseStats,
}

impl DatabaseXidAges {
    /// The database with the oldest `datfrozenxid`.
    pub fn oldest_xid(&self) -> Option<&DatabaseXidAge> {
        self.databases
            .iter()
            .filter(|d| d.datfrozenxid_age.is_some())
            .max_by_key(|d| d.datfrozenxid_age)
    }
}

// datname|datallowconn|datfrozenxid_age|datminmxid_age
// postgres|t|20|0
// (3 rows)
/// Parses the collector's `pg_database` ages query output.
pub fn parse_database_xid_ages(input: &[u8]) -> DatabaseXidAges {
    let mut t = parse_pipe_table(input);
    let mut databases = Vec::new();
    if require(&mut t, &["datname", "datfrozenxid_age"]) {
        for (line, row) in &t.rows {
            databases.push(DatabaseXidAge {
                name: text(&t, row, "datname").unwrap_or_default(),
                allows_connections: flag(&t, row, "datallowconn"),
                datfrozenxid_age: number(&t, row, "datfrozenxid_age"),
                datminmxid_age: number(&t, row, "datminmxid_age"),
                line: *line,
            });
        }
    }
    DatabaseXidAges {
        databases,
        stats: t.stats,
    }
}

/// Data checksum failures of one database (`pg_stat_database`, PostgreSQL 12+).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DatabaseChecksums {
    /// The database; empty for the row of shared objects (`datname` is null there).
    pub name: String,
    /// Checksum failures found in its pages; `None` when checksums are off (the column is
    /// null) or the column is absent.
    pub failures: Option<u64>,
    /// When the last one was found, as printed.
    pub last_failure: Option<String>,
    /// 1-based line.
    pub line: u64,
}

/// The collector's `pg_stat_database` checksum query, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ChecksumFailures {
    /// One row per database.
    pub databases: Vec<DatabaseChecksums>,
    /// Line accounting.
    pub stats: ParseStats,
}

// datname|checksum_failures|checksum_last_failure
// ||
// postgres|3|2026-11-28 15:10:02.1+00
// (4 rows)
/// Parses the collector's checksum-failures query output (`datname|checksum_failures|
/// checksum_last_failure`).
pub fn parse_checksum_failures(input: &[u8]) -> ChecksumFailures {
    let mut t = parse_pipe_table(input);
    let mut databases = Vec::new();
    if require(&mut t, &["datname", "checksum_failures"]) {
        for (line, row) in &t.rows {
            databases.push(DatabaseChecksums {
                name: text(&t, row, "datname").unwrap_or_default(),
                failures: number(&t, row, "checksum_failures"),
                last_failure: text(&t, row, "checksum_last_failure"),
                line: *line,
            });
        }
    }
    ChecksumFailures {
        databases,
        stats: t.stats,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_with_and_without_the_newer_columns() {
        let s = parse_replication_slots(
            b"slot_name|slot_type|database|temporary|active|active_pid|restart_lsn|confirmed_flush_lsn|retained_bytes|wal_status|safe_wal_size|xmin_age|catalog_xmin_age|inactive_since|invalidation_reason\n\
              standby_gone|physical||f|f||0/3000060||2852126624|extended|-1830019520||||\n\
              (1 row)\n",
        );
        assert_eq!(s.stats.unrecognized_lines, 0);
        let slot = &s.slots[0];
        assert_eq!(slot.name, "standby_gone");
        assert_eq!(slot.active, Some(false));
        assert_eq!(slot.retained_bytes, Some(2_852_126_624));
        assert_eq!(slot.safe_wal_size, Some(-1_830_019_520));
        assert_eq!(slot.wal_status.as_deref(), Some("extended"));
        assert_eq!(slot.line, 2);
        // PostgreSQL 10's columns (no wal_status): parsed, the rest None.
        let old = parse_replication_slots(
            b"slot_name|slot_type|active|restart_lsn|retained_bytes\nsub1|logical|t|0/16B3748|0\n(1 row)\n",
        );
        assert_eq!(old.slots[0].wal_status, None);
        assert_eq!(old.slots[0].active, Some(true));
        assert_eq!(old.slots[0].retained_bytes, Some(0));
        // An empty list.
        let none = parse_replication_slots(b"slot_name|slot_type\n(0 rows)\n");
        assert!(none.slots.is_empty());
        assert_eq!(none.stats.unrecognized_lines, 0);
    }

    #[test]
    fn checksum_failures_with_checksums_on_and_off() {
        let off = parse_checksum_failures(
            b"datname|checksum_failures|checksum_last_failure\n||\ntemplate1||\npostgres||\n(3 rows)\n",
        );
        assert_eq!(off.stats.unrecognized_lines, 0);
        assert_eq!(off.databases.len(), 3);
        assert_eq!(off.databases[0].name, "");
        assert!(off.databases.iter().all(|d| d.failures.is_none()));
        let on = parse_checksum_failures(
            b"datname|checksum_failures|checksum_last_failure\n|0|\npostgres|3|2026-11-28 15:10:02.1+00\n(2 rows)\n",
        );
        assert_eq!(on.databases[1].failures, Some(3));
        assert_eq!(on.databases[1].line, 3);
        assert_eq!(
            on.databases[1].last_failure.as_deref(),
            Some("2026-11-28 15:10:02.1+00")
        );
        // Another table is not this one.
        let other = parse_checksum_failures(b"datname|age\npostgres|20\n(1 row)\n");
        assert!(other.databases.is_empty());
        assert_eq!(other.stats.unrecognized_lines, 2);
    }

    #[test]
    fn another_table_is_not_slots() {
        let s = parse_replication_slots(b"datname|age\npostgres|20\n(1 row)\n");
        assert!(s.slots.is_empty());
        assert_eq!(s.stats.unrecognized_lines, 2);
        assert_eq!(s.stats.records, 0);
    }

    #[test]
    fn archiver_failing_or_not() {
        let idle = parse_archiver(
            b"archived_count|last_archived_wal|last_archived_time|failed_count|last_failed_wal|last_failed_time|stats_reset|collected_at\n\
              0|||0|||2026-11-28 14:57:19.564563+00|2026-11-28 14:57:28.4555+00\n(1 row)\n",
        );
        assert_eq!(idle.stats.unrecognized_lines, 0);
        assert_eq!((idle.archived_count, idle.failed_count), (Some(0), Some(0)));
        assert_eq!(idle.failing(), None);
        let failing = parse_archiver(
            b"archived_count|last_archived_wal|last_archived_time|failed_count|last_failed_wal|last_failed_time|stats_reset|collected_at\n\
              3|000000010000000000000003|2026-11-28 15:00:01.1+00|12|000000010000000000000004|2026-11-28 15:02:11.52+00||2026-11-28 15:02:12+00\n(1 row)\n",
        );
        assert_eq!(failing.failing(), Some(true));
        assert_eq!(
            failing.last_failed_wal.as_deref(),
            Some("000000010000000000000004")
        );
        assert_eq!(failing.line, 2);
        assert!(parse_archiver(b"").archived_count.is_none());
    }

    #[test]
    fn database_ages() {
        let a = parse_database_xid_ages(
            b"datname|datallowconn|datfrozenxid_age|datminmxid_age\npostgres|t|20|0\ntemplate0|f|1500000000|3\ntemplate1|t|20|0\n(3 rows)\n",
        );
        assert_eq!(a.stats.unrecognized_lines, 0);
        let oldest = a.oldest_xid().unwrap();
        assert_eq!(oldest.name, "template0");
        assert_eq!(oldest.allows_connections, Some(false));
        assert_eq!(oldest.datminmxid_age, Some(3));
        // A name holding `|` cannot be told apart: that row is counted, the others kept.
        let odd = parse_database_xid_ages(
            b"datname|datallowconn|datfrozenxid_age|datminmxid_age\na|b|t|20|0\nok|t|5|0\n",
        );
        assert_eq!((odd.databases.len(), odd.stats.unrecognized_lines), (1, 1));
    }
}
