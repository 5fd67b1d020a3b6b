//! PostgreSQL's storage from the collector's files: its places (`storage/paths.txt`, else the
//! `data_directory` setting), the file system holding each (`storage/mountinfo.txt`, else the
//! longest `df` mount point above it), how full each is (`storage/df.txt`, `storage/df-i.txt`,
//! a sosreport's `df`), pg_wal's listing, the slots, the archiver, and each database's age and
//! checksum failures.

use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::system::{self, Df, Mountinfo};

use super::{Known, all_of, first_of};
use crate::report::{
    ArchiverFacts, DatabaseFacts, PgFacts, Place, SlotFacts, StorageFacts, Volume, WalFacts,
};

/// Everything the bundle shows of PostgreSQL's storage; `pg` gives the data directory when the
/// collector's list of places is absent.
pub(super) fn build(bundle: &Bundle, pg: &PgFacts) -> StorageFacts {
    StorageFacts {
        volumes: volumes(bundle, pg),
        pg_wal: pg_wal(bundle),
        slots: slots(bundle),
        archiver: archiver(bundle),
        databases: databases(bundle),
    }
}

/// PostgreSQL's places: the collector's list, else the `data_directory` setting (and pg_wal
/// under it).
fn places(bundle: &Bundle, pg: &PgFacts) -> Vec<Place> {
    let listed: Vec<Place> = first_of(bundle, SourceKind::StoragePaths)
        .map(|s| system::parse_storage_paths(&s.bytes).paths)
        .unwrap_or_default()
        .into_iter()
        .map(|p| Place {
            role: p.role,
            path: p.path,
        })
        .collect();
    if !listed.is_empty() {
        return listed;
    }
    let Some(data) = pg
        .setting("data_directory")
        .map(|s| s.value.clone())
        .filter(|d| d.starts_with('/'))
    else {
        return Vec::new();
    };
    vec![
        Place {
            role: "data_directory".to_owned(),
            path: data.clone(),
        },
        Place {
            role: "pg_wal".to_owned(),
            path: format!("{}/pg_wal", data.trim_end_matches('/')),
        },
    ]
}

/// The first `df` of `counts` (`bytes` or `inodes`), with its file's path.
fn df_of(bundle: &Bundle, counts: &str) -> Option<(String, Df)> {
    all_of(bundle, SourceKind::Df).find_map(|s| {
        let df = system::parse_df(&s.bytes);
        (df.counts == counts && !df.rows.is_empty()).then(|| (s.path.clone(), df))
    })
}

fn volumes(bundle: &Bundle, pg: &PgFacts) -> Vec<Volume> {
    let places = places(bundle, pg);
    if places.is_empty() {
        return Vec::new();
    }
    let mounts: Option<(String, Mountinfo)> = first_of(bundle, SourceKind::Mountinfo)
        .map(|s| (s.path.clone(), system::parse_mountinfo(&s.bytes)));
    let bytes = df_of(bundle, "bytes");
    let inodes = df_of(bundle, "inodes");
    let mut out: Vec<Volume> = Vec::new();
    for place in places {
        let mount = mounts.as_ref().and_then(|(_, m)| m.mount_of(&place.path));
        let mount_point = match mount {
            Some(m) => m.mount_point.clone(),
            None => {
                // No mountinfo: the longest df mount point above the place.
                let Some(row) = bytes.as_ref().and_then(|(_, df)| {
                    df.rows
                        .iter()
                        .filter(|r| system::mount_holds(&r.mounted_on, &place.path))
                        .max_by_key(|r| r.mounted_on.len())
                }) else {
                    continue;
                };
                row.mounted_on.clone()
            }
        };
        if let Some(v) = out.iter_mut().find(|v| v.mount_point == mount_point) {
            v.places.push(place);
            continue;
        }
        let row = bytes
            .as_ref()
            .and_then(|(path, df)| Some((path, df.mounted_on(&mount_point)?)));
        let inode_row = inodes
            .as_ref()
            .and_then(|(path, df)| Some((path, df.mounted_on(&mount_point)?)));
        out.push(Volume {
            places: vec![place],
            device: mount
                .map(|m| m.source.clone())
                .or_else(|| row.map(|(_, r)| r.filesystem.clone())),
            fs_type: mount.map(|m| m.fs_type.clone()),
            read_only: mount
                .zip(mounts.as_ref())
                .map(|(m, (path, _))| Known::new(m.read_only(), path, m.line, &m.mount_point)),
            on_errors: mount.and_then(|m| m.super_option("errors").map(str::to_owned)),
            size_bytes: row
                .and_then(|(path, r)| Some(Known::new(r.size?, path, r.line, &mount_point))),
            used_bytes: row.and_then(|(_, r)| r.used),
            available_bytes: row.and_then(|(_, r)| r.available),
            use_percent: row.and_then(|(_, r)| r.use_percent),
            inodes_use_percent: inode_row
                .and_then(|(path, r)| Some(Known::new(r.use_percent?, path, r.line, &mount_point))),
            mount_point,
        });
    }
    out
}

fn pg_wal(bundle: &Bundle) -> Option<WalFacts> {
    let source = first_of(bundle, SourceKind::WalDirectory)?;
    let wal = system::parse_wal_directory(&source.bytes);
    let line = wal
        .entries
        .iter()
        .position(|(k, _)| k == "segments")
        .map_or(1, |i| i as u64 + 1);
    Some(WalFacts {
        segments: Known::new(wal.segments?, &source.path, line, "segments"),
        bytes: wal.segment_bytes,
        archive_ready: wal.archive_ready,
        oldest_segment: wal.oldest_segment,
        newest_segment: wal.newest_segment,
    })
}

fn slots(bundle: &Bundle) -> Option<Vec<SlotFacts>> {
    let source = first_of(bundle, SourceKind::ReplicationSlots)?;
    let listed = system::parse_replication_slots(&source.bytes);
    if listed.stats.records == 0 && listed.stats.unrecognized_lines > 0 {
        return None;
    }
    listed
        .slots
        .into_iter()
        .map(|s| SlotFacts {
            name: Known::new(s.name, &source.path, s.line, "slot_name"),
            slot_type: s.slot_type,
            active: s.active,
            retained_bytes: s.retained_bytes,
            wal_status: s.wal_status,
            inactive_since: s.inactive_since,
            invalidation_reason: s.invalidation_reason,
        })
        .collect::<Vec<_>>()
        .into()
}

fn archiver(bundle: &Bundle) -> Option<ArchiverFacts> {
    let source = first_of(bundle, SourceKind::Archiver)?;
    let a = system::parse_archiver(&source.bytes);
    if a.line == 0 {
        return None;
    }
    Some(ArchiverFacts {
        archived_count: a
            .archived_count
            .map(|n| Known::new(n, &source.path, a.line, "archived_count")),
        failed_count: a.failed_count,
        failing: a.failing(),
        last_archived_wal: a.last_archived_wal,
        last_archived_time: a.last_archived_time,
        last_failed_wal: a.last_failed_wal,
        last_failed_time: a.last_failed_time,
        collected_at: a.collected_at,
    })
}

fn databases(bundle: &Bundle) -> Vec<DatabaseFacts> {
    let mut out: Vec<DatabaseFacts> = Vec::new();
    if let Some(source) = first_of(bundle, SourceKind::DatabaseXidAges) {
        for d in system::parse_database_xid_ages(&source.bytes).databases {
            out.push(DatabaseFacts {
                xid_age: d
                    .datfrozenxid_age
                    .map(|n| Known::new(n, &source.path, d.line, "datfrozenxid_age")),
                multixact_age: d.datminmxid_age,
                allows_connections: d.allows_connections,
                checksum_failures: None,
                checksum_last_failure: None,
                name: d.name,
            });
        }
    }
    if let Some(source) = first_of(bundle, SourceKind::ChecksumFailures) {
        for d in system::parse_checksum_failures(&source.bytes).databases {
            let failures = d
                .failures
                .map(|n| Known::new(n, &source.path, d.line, "checksum_failures"));
            match out.iter_mut().find(|o| o.name == d.name) {
                Some(o) => {
                    o.checksum_failures = failures;
                    o.checksum_last_failure = d.last_failure;
                }
                None => out.push(DatabaseFacts {
                    name: d.name,
                    xid_age: None,
                    multixact_age: None,
                    allows_connections: None,
                    checksum_failures: failures,
                    checksum_last_failure: d.last_failure,
                }),
            }
        }
    }
    out
}
