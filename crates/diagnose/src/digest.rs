//! What the diagnosis keeps of a PostgreSQL log read as a stream of records: the records that
//! mean something (crash cycles, errors with a known cause, refused connections, …), counts and
//! first/last sightings of every event kind, a summary of the temporary files, and for each
//! process death the error lines that process logged just before it. Memory stays bounded
//! whatever the log's size: routine records are counted, not kept, and each kind keeps at most
//! [`MAX_PER_KIND`] records (the rest are counted, and the report says so).

use std::collections::{BTreeMap, VecDeque};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use pgmortem_parse::pglog::{PgEvent, PgRecord, PgTime, Severity};

use crate::clock;
use crate::settings::{self, Setting};

/// Records kept per event kind.
pub(crate) const MAX_PER_KIND: u64 = 2_000;
/// Records kept in all.
pub(crate) const MAX_KEPT: usize = 50_000;
/// Memory-context dumps kept (each can hold a thousand contexts).
const MAX_DUMPS: u64 = 50;
/// Error-level records remembered to find what a process logged before it died.
const RECENT_ERRORS: usize = 512;
/// Error lines of the dead process kept per death.
const CONTEXT_PER_DEATH: usize = 8;

/// The first or the last sighting of an event kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Sighting {
    /// Record line.
    pub line: u64,
    /// UTC time, when the record's time could be put on UTC.
    pub at: Option<Timestamp>,
}

/// How often an event kind was seen, and when first and last.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct KindSeen {
    /// Records of this kind.
    pub count: u64,
    /// The first one.
    pub first: Sighting,
    /// The last one.
    pub last: Sighting,
}

/// Temporary files written (`log_temp_files`).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct TempFiles {
    /// Files logged.
    pub count: u64,
    /// Their total size.
    pub total_bytes: u64,
    /// The largest, with its record line and the statement that wrote it.
    pub largest: Option<(u64, u64, Option<String>)>,
    /// First and last.
    pub first: Option<Sighting>,
    /// Last.
    pub last: Option<Sighting>,
}

/// How PostgreSQL times printed with a zone abbreviation were put on UTC.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ZoneUse {
    /// Read in the server's `log_timezone`.
    pub in_zone: u64,
    /// Not one of that zone's abbreviations, or no `log_timezone`: left to the table.
    pub by_table: u64,
}

impl ZoneUse {
    /// Adds another log's counts.
    pub fn add(&mut self, other: ZoneUse) {
        self.in_zone += other.in_zone;
        self.by_table += other.by_table;
    }

    /// The clock note saying how abbreviations were read, when any were printed.
    pub fn note(&self, zone: Option<&Setting>) -> Option<String> {
        match (zone, self.in_zone, self.by_table) {
            (_, 0, 0) => None,
            (Some(s), n, 0) => Some(format!(
                "{n} PostgreSQL log times printed with a zone abbreviation were read in \
                 log_timezone {:?} (from {}), daylight saving time included",
                s.value, s.from
            )),
            (Some(s), n, m) => Some(format!(
                "{n} PostgreSQL log times printed with a zone abbreviation were read in \
                 log_timezone {:?} (from {}); {m} whose abbreviation that zone does not use \
                 were read through the abbreviation table (docs/clock.md)",
                s.value, s.from
            )),
            (None, _, m) => Some(format!(
                "{m} PostgreSQL log times printed with a zone abbreviation were read through \
                 the abbreviation table (docs/clock.md): the bundle has no log_timezone \
                 (pg_settings or postgresql.conf) to read them in"
            )),
        }
    }
}

/// The part of one PostgreSQL log the diagnosis works from.
#[derive(Debug, Default)]
pub(crate) struct PgDigest {
    /// Records with an event worth keeping, in log order, their times put on UTC where the
    /// bundle allows.
    pub records: Vec<PgRecord>,
    /// Every event kind seen (routine ones too), with counts.
    pub kinds: BTreeMap<&'static str, KindSeen>,
    /// Records by severity.
    pub severities: BTreeMap<&'static str, u64>,
    /// Records of a kept kind that were counted but not kept (over [`MAX_PER_KIND`] or
    /// [`MAX_KEPT`]).
    pub not_kept: u64,
    /// Memory-context dumps dropped from kept records past the first [`MAX_DUMPS`].
    pub dumps_dropped: u64,
    /// Temporary files.
    pub temp_files: TempFiles,
    /// Error-level records the dead process logged shortly before each death, by the line of
    /// the `terminated by signal` / `exited with exit code` record (deaths kept in `records`
    /// only).
    pub before_death: BTreeMap<u64, Vec<PgRecord>>,
    /// Records read.
    pub records_read: u64,
    /// How zone abbreviations were read.
    pub zone_use: ZoneUse,
    zone: Option<TimeZone>,
    recent_errors: VecDeque<PgRecord>,
    dumps_kept: u64,
}

impl PgDigest {
    /// A digest reading abbreviated zones in `zone` (the bundle's `log_timezone`).
    pub fn new(zone: Option<TimeZone>) -> Self {
        Self {
            zone,
            ..Self::default()
        }
    }

    /// Takes one record, in log order.
    pub fn push(&mut self, mut record: PgRecord) {
        self.records_read += 1;
        if let Some(time) = record.time.as_mut() {
            self.resolve(time);
        }
        if let Some(severity) = record.severity {
            *self.severities.entry(severity_name(severity)).or_default() += 1;
        }
        let at = record.time.as_ref().and_then(clock::postgres);
        let sighting = Sighting {
            line: record.line,
            at,
        };
        let Some(event) = &record.event else {
            self.remember_error(record);
            return;
        };
        let kind = event.kind();
        let seen = self.kinds.entry(kind).or_insert(KindSeen {
            count: 0,
            first: sighting,
            last: sighting,
        });
        seen.count += 1;
        seen.last = sighting;
        let count = seen.count;
        match event {
            PgEvent::TempFile { bytes, .. } => {
                let t = &mut self.temp_files;
                t.count += 1;
                t.total_bytes = t.total_bytes.saturating_add(*bytes);
                if t.largest.as_ref().is_none_or(|(b, _, _)| bytes > b) {
                    let statement = record.statement.clone().or_else(|| record.query.clone());
                    t.largest = Some((*bytes, record.line, statement));
                }
                t.first.get_or_insert(sighting);
                t.last = Some(sighting);
                return;
            }
            PgEvent::CheckpointComplete { .. } => return,
            _ => {}
        }
        let died = match event {
            PgEvent::TerminatedBySignal { pid, .. } | PgEvent::ExitedWithCode { pid, .. } => {
                Some(*pid)
            }
            _ => None,
        };
        let keep = count <= MAX_PER_KIND && self.records.len() < MAX_KEPT;
        // The errors before a death are kept with the death: only for deaths that are kept.
        if let (Some(pid), true) = (died, keep) {
            let before: Vec<PgRecord> = self
                .recent_errors
                .iter()
                .filter(|r| r.pid == Some(pid))
                .rev()
                .take(CONTEXT_PER_DEATH)
                .cloned()
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            if !before.is_empty() {
                self.before_death.insert(record.line, before);
            }
        }
        if is_error_level(&record) {
            self.remember_error(record.clone());
        }
        if !keep {
            self.not_kept += 1;
            return;
        }
        if record.memory_context_dump.is_some() {
            if self.dumps_kept >= MAX_DUMPS {
                record.memory_context_dump = None;
                self.dumps_dropped += 1;
            } else {
                self.dumps_kept += 1;
            }
        }
        self.records.push(record);
    }

    fn remember_error(&mut self, mut record: PgRecord) {
        if !is_error_level(&record) {
            return;
        }
        record.memory_context_dump = None;
        if self.recent_errors.len() == RECENT_ERRORS {
            self.recent_errors.pop_front();
        }
        self.recent_errors.push_back(record);
    }

    /// Puts a time printed with a zone abbreviation on UTC through `log_timezone`.
    fn resolve(&mut self, time: &mut PgTime) {
        if time.utc.is_some() || time.zone.is_none() {
            return;
        }
        match self
            .zone
            .as_ref()
            .and_then(|tz| settings::resolve_in_zone(time, tz))
        {
            Some(at) => {
                time.utc = Some(at);
                self.zone_use.in_zone += 1;
            }
            None => self.zone_use.by_table += 1,
        }
    }

    /// How many records of `kind` were seen.
    pub fn count(&self, kind: &str) -> u64 {
        self.kinds.get(kind).map_or(0, |k| k.count)
    }
}

fn is_error_level(record: &PgRecord) -> bool {
    matches!(
        record.severity,
        Some(Severity::Error | Severity::Fatal | Severity::Panic)
    )
}

/// The severity as PostgreSQL prints it in English.
pub(crate) fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Debug => "DEBUG",
        Severity::Info => "INFO",
        Severity::Notice => "NOTICE",
        Severity::Warning => "WARNING",
        Severity::Error => "ERROR",
        Severity::Log => "LOG",
        Severity::Fatal => "FATAL",
        Severity::Panic => "PANIC",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgmortem_parse::pglog::{self, PgLogOptions};

    fn digest_of(name: &str) -> PgDigest {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/formats/pglog")
            .join(name);
        let bytes = std::fs::read(path).unwrap();
        let mut digest = PgDigest::new(None);
        for record in pglog::records(&bytes, &PgLogOptions::default()).unwrap() {
            digest.push(*record);
        }
        digest
    }

    #[test]
    fn routine_records_are_counted_not_kept() {
        let d = digest_of("pg15-events.log");
        assert!(d.count("checkpoint_complete") > 0);
        assert!(d.count("temp_file") > 0);
        assert!(
            d.records
                .iter()
                .all(|r| !matches!(r.event, Some(PgEvent::CheckpointComplete { .. })))
        );
        assert_eq!(d.temp_files.count, d.count("temp_file"));
        assert!(d.temp_files.largest.is_some());
        assert_eq!(d.count("too_many_clients"), 1);
        assert!(d.severities.get("FATAL").copied().unwrap_or(0) > 0);
    }

    #[test]
    fn a_death_keeps_the_errors_its_process_logged_before_it() {
        // The startup process fails to size its shared memory in a 1 MB /dev/shm, then exits.
        let d = digest_of("pg15-events.log");
        let exit = d
            .records
            .iter()
            .find(|r| matches!(r.event, Some(PgEvent::ExitedWithCode { pid: 21799, .. })))
            .unwrap();
        let before = &d.before_death[&exit.line];
        assert_eq!(before.len(), 1);
        assert!(matches!(
            before[0].event,
            Some(PgEvent::SharedMemoryResizeFailed { no_space: true, .. })
        ));
    }

    /// What a digest holds stays bounded whatever the log: records per kind and in all, the
    /// errors remembered, the context kept per death.
    #[test]
    fn memory_is_bounded_by_construction() {
        let mut d = PgDigest::new(None);
        let mut line = 0;
        for round in 0..(3 * MAX_PER_KIND) {
            let pid = 1000 + (round % 7) as u32;
            for _ in 0..3 {
                line += 1;
                d.push(PgRecord {
                    line,
                    pid: Some(pid),
                    severity: Some(Severity::Error),
                    message: "out of memory".into(),
                    ..PgRecord::default()
                });
            }
            line += 1;
            d.push(PgRecord {
                line,
                event: Some(PgEvent::TerminatedBySignal {
                    process: "server process".into(),
                    pid,
                    signal: 9,
                    signal_name: "Killed".into(),
                    query: None,
                }),
                severity: Some(Severity::Log),
                ..PgRecord::default()
            });
        }
        assert_eq!(d.count("terminated_by_signal"), 3 * MAX_PER_KIND);
        assert_eq!(d.records.len() as u64, MAX_PER_KIND);
        assert!(d.records.len() <= MAX_KEPT);
        assert_eq!(d.before_death.len() as u64, MAX_PER_KIND);
        assert!(
            d.before_death
                .values()
                .all(|b| b.len() <= CONTEXT_PER_DEATH)
        );
        assert!(d.recent_errors.len() <= RECENT_ERRORS);
        assert_eq!(d.not_kept, 2 * MAX_PER_KIND);
    }

    #[test]
    fn kinds_over_the_cap_are_counted_not_kept() {
        let mut d = PgDigest::new(None);
        for line in 1..=(MAX_PER_KIND + 5) {
            d.push(PgRecord {
                line,
                event: Some(PgEvent::TooManyClients),
                severity: Some(Severity::Fatal),
                ..PgRecord::default()
            });
        }
        assert_eq!(d.count("too_many_clients"), MAX_PER_KIND + 5);
        assert_eq!(d.records.len() as u64, MAX_PER_KIND);
        assert_eq!(d.not_kept, 5);
        assert_eq!(d.kinds["too_many_clients"].last.line, MAX_PER_KIND + 5);
    }
}
