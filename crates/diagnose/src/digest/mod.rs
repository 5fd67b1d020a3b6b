//! What the diagnosis keeps of a PostgreSQL log read as a stream of records: the records that
//! mean something (crash cycles, errors with a known cause, refused connections, …), counts and
//! first/last sightings of every event kind, a summary of the temporary files, and for each
//! process death the error lines that process logged just before it. Memory stays bounded
//! whatever the log's size: routine records are counted, not kept, and each kind keeps at most
//! [`MAX_PER_KIND`] records (the rest are counted, and the report says so): its first ones, or
//! for the kinds of a crash cycle ([`keeps_latest`]) its first [`HEAD_PER_KIND`] and its latest
//! [`MAX_PER_KIND`] − [`HEAD_PER_KIND`], so that the last crashes of a long crash loop, the ones
//! a support engineer asks about, are still tied to the kernel's kills.
//!
//! A record is taken in two steps, so that a log read on several threads costs the digest
//! little: [`Sieve::prepare`], on the thread that parsed the record, puts its time on UTC and,
//! when the digest will only count it (a record with no event, a routine kind, a kind whose
//! records are no longer kept), drops the record there and hands on a few fields; then
//! [`PgDigest::take`], in log order, counts or keeps it. [`PgDigest::push`] does both.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use jiff::Timestamp;
use jiff::tz::TimeZone;
use pgmortem_parse::pglog::{PgEvent, PgRecord, PgTime, Severity, TextsCut};

use crate::clock;
use crate::settings::{self, Setting};

/// Records kept per event kind, within the full budget ([`DigestLimits::per_kind`]).
pub(crate) const MAX_PER_KIND: u64 = 2_000;
/// Of those, for the kinds that keep their latest records too, the first ones kept.
pub(crate) const HEAD_PER_KIND: u64 = 1_000;
/// Records kept in all.
pub(crate) const MAX_KEPT: usize = 50_000;
/// Bytes the records kept may hold in all (records, latest records, errors before deaths):
/// 50 000 ordinary records take about 40 MiB.
pub(crate) const MAX_KEPT_BYTES: usize = 96 << 20;
/// Texts of a record longer than this are cut when it is kept: a finding quotes 400 bytes of
/// a query at most ([`crate::human::QUOTED_QUERY_BYTES`]); the report's incidents
/// give the kept text, cut ending in `…`.
pub(crate) const KEPT_TEXT_BYTES: usize = 2048;
/// Memory-context dumps kept (each can hold a thousand contexts).
const MAX_DUMPS: u64 = 50;
/// Error-level records remembered to find what a process logged before it died.
const RECENT_ERRORS: usize = 512;
/// Error lines of the dead process kept per death.
const CONTEXT_PER_DEATH: usize = 8;

/// What one digest keeps: counts per kind and in all, and bytes. A log of any size keeps at
/// most this; the rest is counted ([`PgDigest::not_kept`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DigestLimits {
    /// Records kept per kind.
    pub per_kind: u64,
    /// Of those, for the kinds that keep their latest records too, the first ones.
    pub head_per_kind: u64,
    /// Records kept in all.
    pub kept: usize,
    /// Bytes the records kept may hold with the errors kept with each death: three quarters
    /// for the first records, a quarter for the latest ones of the kinds of a crash cycle (so
    /// that a log full of errors still keeps its last crashes). The errors remembered to find
    /// those kept with a death take an eighth more.
    pub bytes: usize,
    /// Texts longer than this are cut when a record is kept ([`PgRecord::cut_texts`]).
    pub text_bytes: usize,
}

impl Default for DigestLimits {
    fn default() -> Self {
        Self {
            per_kind: MAX_PER_KIND,
            head_per_kind: HEAD_PER_KIND,
            kept: MAX_KEPT,
            bytes: MAX_KEPT_BYTES,
            text_bytes: KEPT_TEXT_BYTES,
        }
    }
}

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

/// How far a wrapped log's records' own times are from their wrapper's.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct WrapperSkew {
    /// Records with both times on UTC.
    pub compared: u64,
    /// Of those, records more than [`clock::WRAPPER_SKEW_SECONDS`] apart.
    pub beyond: u64,
    /// The largest gap (own − wrapper, seconds) and its record's line.
    pub largest: Option<(u64, f64)>,
}

impl WrapperSkew {
    fn add(&mut self, line: u64, skew: Option<f64>) {
        let Some(skew) = skew else { return };
        self.compared += 1;
        if skew.abs() > clock::WRAPPER_SKEW_SECONDS {
            self.beyond += 1;
        }
        if self.largest.is_none_or(|(_, s)| skew.abs() > s.abs()) {
            self.largest = Some((line, skew));
        }
    }
}

/// A record's own time minus its wrapper's, in seconds, when both are on UTC.
fn wrapper_skew(record: &PgRecord) -> Option<f64> {
    let own = record.time.as_ref().and_then(clock::postgres)?;
    let wrapper = record.wrapper_time.as_ref()?.utc?;
    Some(own.duration_since(wrapper).as_secs_f64())
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
    /// Records of a kept kind that were counted but not kept (over
    /// [`DigestLimits::per_kind`], [`DigestLimits::kept`] or [`DigestLimits::bytes`]).
    pub not_kept: u64,
    /// The records kept reached [`DigestLimits::bytes`]: later ones were only counted.
    pub bytes_reached: bool,
    /// Deaths kept without the errors their process logged before them, for want of room.
    pub context_not_kept: u64,
    /// Texts of kept records cut to [`DigestLimits::text_bytes`].
    pub texts_cut: u64,
    /// What this digest keeps.
    pub limits: DigestLimits,
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
    /// How far the records' own times and their wrapper's times (a container runtime's, the
    /// journal's, a relay's, a cloud service's) are apart.
    pub wrapper_skew: WrapperSkew,
    sieve: Arc<Sieve>,
    /// The last error-level records, with what each holds (bytes).
    recent_errors: VecDeque<(PgRecord, usize)>,
    /// Bytes held by `recent_errors`.
    recent_bytes: usize,
    /// Bytes held by `records` and the errors kept with their deaths.
    first_bytes: usize,
    /// Bytes held by `tails` and the errors kept with their deaths.
    tail_bytes: usize,
    /// Bytes of each entry of `before_death`, and whether its death is in `tails`.
    before_death_bytes: BTreeMap<u64, (usize, bool)>,
    dumps_kept: u64,
    /// The latest records of each kind that keeps them, past its first
    /// [`DigestLimits::head_per_kind`], with their bytes: merged into `records` by
    /// [`PgDigest::finish`].
    tails: BTreeMap<&'static str, VecDeque<(PgRecord, usize)>>,
}

/// Kinds [`Sieve`] can mark as no longer kept: more than the event kinds there are.
const MAX_SATURATED: usize = 256;

/// What the digest needs of a record, decided on the thread that parsed it ([`Sieve::prepare`])
/// from the bundle's `log_timezone` and what the digest has told it so far: which kinds it no
/// longer keeps, whether it keeps anything more, the largest temporary file it has seen.
/// Those only ever grow, and a record is prepared before any later record is taken, so a
/// record the sieve counts is one the digest would not have kept.
#[derive(Debug)]
pub(crate) struct Sieve {
    zone: Option<TimeZone>,
    /// Texts of a record the digest may keep are cut to this ([`DigestLimits::text_bytes`]).
    text_bytes: usize,
    /// Addresses of the kinds (`PgEvent::kind`) no longer kept; the first `saturated_len`.
    saturated: [AtomicUsize; MAX_SATURATED],
    saturated_len: AtomicUsize,
    /// No record is kept any more ([`DigestLimits::kept`], [`DigestLimits::bytes`]).
    full: AtomicBool,
    /// The largest temporary file seen, plus one (0: none yet).
    largest_temp: AtomicU64,
}

/// A record as [`PgDigest::take`] takes it.
#[derive(Debug)]
pub(crate) enum Taken {
    /// The record, its time on UTC, its texts cut.
    Whole(Box<PgRecord>, Prepared),
    /// Only counted.
    Counted(Counted),
}

/// What preparing a record the digest may keep found.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prepared {
    /// How its zone was read.
    zone_use: ZoneUse,
    /// Its own time minus its wrapper's, in seconds, when both are on UTC.
    skew: Option<f64>,
    /// Bytes it holds, its texts cut.
    bytes: usize,
    /// Texts cut.
    texts_cut: usize,
}

/// What is left of a record that is only counted.
#[derive(Debug)]
pub(crate) struct Counted {
    line: u64,
    skew: Option<f64>,
    severity: Option<Severity>,
    at: Option<Timestamp>,
    zone_use: ZoneUse,
    event: Option<(&'static str, CountedEvent)>,
}

#[derive(Debug)]
enum CountedEvent {
    /// A checkpoint completed: counted only.
    Routine,
    /// A temporary file no larger than one seen before.
    TempFile(u64),
    /// A kind no longer kept.
    NotKept,
}

impl Sieve {
    fn new(zone: Option<TimeZone>, text_bytes: usize) -> Self {
        Sieve {
            zone,
            text_bytes,
            saturated: std::array::from_fn(|_| AtomicUsize::new(0)),
            saturated_len: AtomicUsize::new(0),
            full: AtomicBool::new(false),
            largest_temp: AtomicU64::new(0),
        }
    }

    /// Puts the record's time on UTC and keeps of it what the digest needs. Any thread, any
    /// order, as long as no record after it was taken yet.
    pub fn prepare(&self, mut record: Box<PgRecord>) -> Taken {
        let mut zone_use = ZoneUse::default();
        if let Some(time) = record.time.as_mut() {
            self.resolve(time, &mut zone_use);
        }
        let skew = wrapper_skew(&record);
        let whole = |mut record: Box<PgRecord>| {
            let cut = held_by(&mut record, self.text_bytes);
            let prepared = Prepared {
                zone_use,
                skew,
                bytes: cut.heap_bytes,
                texts_cut: cut.cut,
            };
            Taken::Whole(record, prepared)
        };
        let event = match &record.event {
            None if is_error_level(&record) => return whole(record),
            None => None,
            Some(event) => {
                let kind = event.kind();
                let counted = match event {
                    PgEvent::CheckpointComplete { .. } => CountedEvent::Routine,
                    PgEvent::TempFile { bytes, .. }
                        if *bytes < self.largest_temp.load(Ordering::Relaxed) =>
                    {
                        CountedEvent::TempFile(*bytes)
                    }
                    PgEvent::TempFile { .. } => return whole(record),
                    // The kinds of a crash cycle keep their latest records, full or not.
                    _ if !is_error_level(&record)
                        && !keeps_latest(event)
                        && self.not_kept(kind) =>
                    {
                        CountedEvent::NotKept
                    }
                    _ => return whole(record),
                };
                Some((kind, counted))
            }
        };
        Taken::Counted(Counted {
            line: record.line,
            skew,
            severity: record.severity,
            at: record.time.as_ref().and_then(clock::postgres),
            zone_use,
            event,
        })
    }

    /// True when records of `kind` are no longer kept.
    fn not_kept(&self, kind: &'static str) -> bool {
        if self.full.load(Ordering::Relaxed) {
            return true;
        }
        let n = self
            .saturated_len
            .load(Ordering::Acquire)
            .min(MAX_SATURATED);
        let address = kind.as_ptr() as usize;
        self.saturated[..n]
            .iter()
            .any(|a| a.load(Ordering::Relaxed) == address)
    }

    /// Records of `kind` are no longer kept (called by the digest only, in log order).
    fn saturate(&self, kind: &'static str) {
        let n = self.saturated_len.load(Ordering::Relaxed);
        if n < MAX_SATURATED {
            self.saturated[n].store(kind.as_ptr() as usize, Ordering::Relaxed);
            self.saturated_len.store(n + 1, Ordering::Release);
        }
    }

    /// Puts a time printed with a zone abbreviation on UTC through `log_timezone`.
    fn resolve(&self, time: &mut PgTime, zone_use: &mut ZoneUse) {
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
                zone_use.in_zone += 1;
            }
            None => zone_use.by_table += 1,
        }
    }
}

impl Default for Sieve {
    fn default() -> Self {
        Sieve::new(None, KEPT_TEXT_BYTES)
    }
}

impl PgDigest {
    /// A digest reading abbreviated zones in `zone` (the bundle's `log_timezone`), keeping
    /// what the full budget allows.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn new(zone: Option<TimeZone>) -> Self {
        Self::within(zone, DigestLimits::default())
    }

    /// A digest reading abbreviated zones in `zone`, keeping what `limits` allow.
    pub fn within(zone: Option<TimeZone>, limits: DigestLimits) -> Self {
        Self {
            sieve: Arc::new(Sieve::new(zone, limits.text_bytes)),
            limits,
            ..Self::default()
        }
    }

    /// Bytes the records kept hold (records, latest records, errors before deaths, recent
    /// errors), as estimated when each was kept.
    pub fn held_bytes(&self) -> usize {
        self.first_bytes + self.tail_bytes + self.recent_bytes
    }

    /// The sieve records go through before [`PgDigest::take`], to share with the threads
    /// that parse.
    pub fn sieve(&self) -> Arc<Sieve> {
        Arc::clone(&self.sieve)
    }

    /// Takes one record, in log order.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn push(&mut self, record: PgRecord) {
        self.push_boxed(Box::new(record));
    }

    /// Takes one record, in log order.
    pub fn push_boxed(&mut self, record: Box<PgRecord>) {
        let taken = self.sieve.prepare(record);
        self.take(taken);
    }

    /// Takes one record prepared by [`PgDigest::sieve`], in log order: what
    /// [`PgDigest::push`] does with the record.
    pub fn take(&mut self, taken: Taken) {
        let counted = match taken {
            Taken::Whole(record, prepared) => {
                self.zone_use.add(prepared.zone_use);
                self.wrapper_skew.add(record.line, prepared.skew);
                self.texts_cut += prepared.texts_cut as u64;
                return self.take_whole(*record, prepared.bytes);
            }
            Taken::Counted(c) => c,
        };
        self.records_read += 1;
        self.zone_use.add(counted.zone_use);
        self.wrapper_skew.add(counted.line, counted.skew);
        if let Some(severity) = counted.severity {
            *self.severities.entry(severity_name(severity)).or_default() += 1;
        }
        let Some((kind, event)) = counted.event else {
            return;
        };
        let sighting = Sighting {
            line: counted.line,
            at: counted.at,
        };
        self.seen(kind, sighting, false);
        match event {
            CountedEvent::Routine => {}
            CountedEvent::TempFile(bytes) => {
                let t = &mut self.temp_files;
                t.count += 1;
                t.total_bytes = t.total_bytes.saturating_add(bytes);
                t.first.get_or_insert(sighting);
                t.last = Some(sighting);
            }
            CountedEvent::NotKept => self.not_kept += 1,
        }
    }

    /// Counts a record of `kind`; returns how many there were. A kind that keeps only its
    /// first records (`latest`: false) is no longer kept past [`DigestLimits::per_kind`].
    fn seen(&mut self, kind: &'static str, sighting: Sighting, latest: bool) -> u64 {
        let seen = self.kinds.entry(kind).or_insert(KindSeen {
            count: 0,
            first: sighting,
            last: sighting,
        });
        seen.count += 1;
        seen.last = sighting;
        if seen.count == self.limits.per_kind + 1 && !latest {
            self.sieve.saturate(kind);
        }
        seen.count
    }

    /// Takes one record, its time already put on UTC, its texts cut; it holds `bytes`.
    fn take_whole(&mut self, mut record: PgRecord, bytes: usize) {
        self.records_read += 1;
        if let Some(severity) = record.severity {
            *self.severities.entry(severity_name(severity)).or_default() += 1;
        }
        let at = record.time.as_ref().and_then(clock::postgres);
        let sighting = Sighting {
            line: record.line,
            at,
        };
        let Some(event) = &record.event else {
            self.remember_error(record, bytes);
            return;
        };
        let kind = event.kind();
        let latest = keeps_latest(event);
        let count = self.seen(kind, sighting, latest);
        match event {
            PgEvent::TempFile { bytes, .. } => {
                let t = &mut self.temp_files;
                t.count += 1;
                t.total_bytes = t.total_bytes.saturating_add(*bytes);
                if t.largest.as_ref().is_none_or(|(b, _, _)| bytes > b) {
                    let statement = record.statement.clone().or_else(|| record.query.clone());
                    t.largest = Some((*bytes, record.line, statement));
                    self.sieve
                        .largest_temp
                        .fetch_max(bytes.saturating_add(1), Ordering::Relaxed);
                }
                t.first.get_or_insert(sighting);
                t.last = Some(sighting);
                return;
            }
            PgEvent::CheckpointComplete { .. } => return,
            _ => {}
        }
        // A death, or the postmaster's `database system is shut down`: the errors its process
        // logged just before say why (a start that failed logs its FATAL, then shuts down).
        let died = match event {
            PgEvent::TerminatedBySignal { pid, .. } | PgEvent::ExitedWithCode { pid, .. } => {
                Some(*pid)
            }
            PgEvent::ShutDown => record.pid,
            _ => None,
        };
        let limits = self.limits;
        let head = if latest {
            limits.head_per_kind
        } else {
            limits.per_kind
        };
        let room = self.first_bytes.saturating_add(bytes) <= first_room(&limits);
        let keep_first = count <= head && self.records.len() < limits.kept && room;
        if count <= head && !room && !latest {
            self.full();
        }
        let keep = keep_first || latest;
        // The errors before a death are kept with the death: only for deaths that are kept.
        if let (Some(pid), true) = (died, keep) {
            self.keep_errors_before(record.line, pid, !keep_first);
        }
        if is_error_level(&record) {
            self.remember_error(record.clone(), bytes);
        }
        if !keep {
            self.not_kept += 1;
            return;
        }
        let mut bytes = bytes;
        if record.memory_context_dump.is_some() {
            if self.dumps_kept >= MAX_DUMPS {
                record.memory_context_dump = None;
                bytes = held_by(&mut record, limits.text_bytes).heap_bytes;
                self.dumps_dropped += 1;
            } else {
                self.dumps_kept += 1;
            }
        }
        if !keep_first {
            self.keep_latest(kind, record, bytes);
            return;
        }
        self.first_bytes += bytes;
        self.records.push(record);
        if self.records.len() >= limits.kept {
            self.sieve.full.store(true, Ordering::Relaxed);
        }
    }

    /// Forgets the kept records `repeated` says another file holds too (the postmaster's
    /// standard error repeating the log's lines): they leave `records`, with the errors kept
    /// with a death among them, their kinds' and severities' counts and the records read, so
    /// that each is counted once. Records only counted, never kept, are not looked at. Returns
    /// how many were forgotten.
    pub fn forget(&mut self, mut repeated: impl FnMut(&PgRecord) -> bool) -> u64 {
        let (gone, kept): (Vec<PgRecord>, Vec<PgRecord>) = std::mem::take(&mut self.records)
            .into_iter()
            .partition(|r| repeated(r));
        self.records = kept;
        for record in &gone {
            self.records_read = self.records_read.saturating_sub(1);
            if let Some(severity) = record.severity {
                let name = severity_name(severity);
                if let Some(n) = self.severities.get_mut(name) {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.severities.remove(name);
                    }
                }
            }
            if let Some(kind) = record.event.as_ref().map(PgEvent::kind)
                && let Some(seen) = self.kinds.get_mut(kind)
            {
                seen.count = seen.count.saturating_sub(1);
                if seen.count == 0 {
                    self.kinds.remove(kind);
                }
            }
            self.before_death.remove(&record.line);
        }
        gone.len() as u64
    }

    /// Keeps `record` (`bytes`) among the latest of its `kind`, and drops the oldest of them
    /// past [`DigestLimits::per_kind`] − [`DigestLimits::head_per_kind`] or while the latest
    /// records of every kind take more than their quarter of [`DigestLimits::bytes`].
    fn keep_latest(&mut self, kind: &'static str, record: PgRecord, bytes: usize) {
        let limits = self.limits;
        let tail = self.tails.entry(kind).or_default();
        tail.push_back((record, bytes));
        self.tail_bytes += bytes;
        let mut dropped = Vec::new();
        loop {
            let over_count = tail.len() as u64 > limits.per_kind - limits.head_per_kind;
            let over_bytes = self.tail_bytes > latest_room(&limits);
            let Some((old, old_bytes)) = (over_count || over_bytes)
                .then(|| tail.pop_front())
                .flatten()
            else {
                break;
            };
            self.bytes_reached |= !over_count;
            self.tail_bytes -= old_bytes;
            dropped.push(old.line);
            self.not_kept += 1;
        }
        for line in dropped {
            self.forget_errors_before(line);
        }
    }

    /// No first record is kept any more: the records kept reached their bytes.
    fn full(&mut self) {
        self.bytes_reached = true;
        self.sieve.full.store(true, Ordering::Relaxed);
    }

    /// Keeps with the death at `line` (among the latest records: `latest`) the last errors
    /// its process `pid` logged, when there is room for them.
    fn keep_errors_before(&mut self, line: u64, pid: u32, latest: bool) {
        let mut before: Vec<&(PgRecord, usize)> = self
            .recent_errors
            .iter()
            .rev()
            .filter(|(r, _)| r.pid == Some(pid))
            .take(CONTEXT_PER_DEATH)
            .collect();
        if before.is_empty() {
            return;
        }
        before.reverse();
        let bytes: usize = before.iter().map(|(_, b)| b).sum();
        let (held, room) = if latest {
            (self.tail_bytes, latest_room(&self.limits))
        } else {
            (self.first_bytes, first_room(&self.limits))
        };
        if held.saturating_add(bytes) > room {
            self.context_not_kept += 1;
            return;
        }
        let before = before.into_iter().map(|(r, _)| r.clone()).collect();
        if latest {
            self.tail_bytes += bytes;
        } else {
            self.first_bytes += bytes;
        }
        self.before_death.insert(line, before);
        self.before_death_bytes.insert(line, (bytes, latest));
    }

    /// Drops the errors kept with the death at `line`, no longer kept.
    fn forget_errors_before(&mut self, line: u64) {
        self.before_death.remove(&line);
        match self.before_death_bytes.remove(&line) {
            Some((bytes, true)) => self.tail_bytes -= bytes,
            Some((bytes, false)) => self.first_bytes -= bytes,
            None => {}
        }
    }

    /// Remembers an error-level record (`bytes` with its texts cut), within
    /// [`RECENT_ERRORS`] records and an eighth of [`DigestLimits::bytes`].
    fn remember_error(&mut self, mut record: PgRecord, bytes: usize) {
        if !is_error_level(&record) {
            return;
        }
        let mut bytes = bytes;
        if record.memory_context_dump.take().is_some() {
            bytes = held_by(&mut record, self.limits.text_bytes).heap_bytes;
        }
        self.recent_bytes += bytes;
        self.recent_errors.push_back((record, bytes));
        while self.recent_errors.len() > RECENT_ERRORS
            || (self.recent_bytes > self.limits.bytes / 8 && self.recent_errors.len() > 1)
        {
            if let Some((_, old)) = self.recent_errors.pop_front() {
                self.recent_bytes -= old;
            }
        }
    }

    /// Puts the latest records kept of each kind among the others, in log order, and frees
    /// the errors remembered while reading. Call once every record was taken.
    pub fn finish(&mut self) {
        // The errors remembered to find those before a death are no longer needed.
        self.recent_errors = VecDeque::new();
        self.recent_bytes = 0;
        if self.tails.is_empty() {
            return;
        }
        let tails = std::mem::take(&mut self.tails);
        self.records
            .extend(tails.into_values().flatten().map(|(record, _)| record));
        self.records.sort_by_key(|r| r.line);
    }

    /// How many records of `kind` were seen.
    pub fn count(&self, kind: &str) -> u64 {
        self.kinds.get(kind).map_or(0, |k| k.count)
    }
}

/// Bytes of [`DigestLimits::bytes`] the first records may take; the rest is for the latest.
fn first_room(limits: &DigestLimits) -> usize {
    limits.bytes / 4 * 3
}

/// Bytes of [`DigestLimits::bytes`] the latest records of the crash cycle may take.
fn latest_room(limits: &DigestLimits) -> usize {
    limits.bytes - first_room(limits)
}

/// Cuts the texts of `record` to `text_bytes`; what it then holds, boxed, is
/// [`Prepared::bytes`].
fn held_by(record: &mut PgRecord, text_bytes: usize) -> TextsCut {
    let mut cut = record.cut_texts(text_bytes);
    cut.heap_bytes += size_of::<Box<PgRecord>>();
    cut
}

/// The events of a crash cycle after the death: the postmaster's reaction, recovery, and the
/// server ready again.
pub(crate) fn is_cycle(event: &PgEvent) -> bool {
    matches!(
        event,
        PgEvent::TerminatingOtherProcesses
            | PgEvent::Reinitializing
            | PgEvent::Interrupted { .. }
            | PgEvent::AutomaticRecovery
            | PgEvent::RedoStart { .. }
            | PgEvent::RedoDone { .. }
            | PgEvent::Ready
            | PgEvent::ShuttingDownAfterCrash { .. }
    )
}

/// True for the kinds of a crash cycle, which keep their latest records as well as their
/// first: a process's death, the postmaster's reaction, recovery, the server ready again, and
/// a start and its end (a supervisor starting a server that fails to start, in a loop).
fn keeps_latest(event: &PgEvent) -> bool {
    is_cycle(event)
        || matches!(
            event,
            PgEvent::TerminatedBySignal { .. }
                | PgEvent::ExitedWithCode { .. }
                | PgEvent::InRecoveryMode
                | PgEvent::UnexpectedPostmasterExit
                | PgEvent::Panic
                | PgEvent::Starting { .. }
                | PgEvent::ShutDown
        )
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
mod tests;
