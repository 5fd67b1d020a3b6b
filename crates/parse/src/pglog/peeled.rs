//! A PostgreSQL log inside a wrapper [`crate::wrap`] takes off (a container runtime's log, a
//! journal export): each physical line goes through the [`Peeler`], the lines it gives go to
//! the reader of the log's own format (stderr, csvlog, jsonlog, CloudNativePG, chosen from
//! the peeled first lines), and each record keeps the wrapper's time beside its own
//! ([`PgRecord::wrapper_time`]), taking it as its time when its line printed none.
//!
//! Lines the wrapper names another program for (journal entries of the kernel, cron, …) are
//! counted in `other_program_lines`, as are entries without a line; the further physical
//! lines of an entry (a partial line's pieces, an export entry's fields) in
//! `continuation_lines`; what is not the wrapper's shape in `stats.unrecognized_lines`.

use std::collections::BTreeMap;

use super::stream::Engine;
use super::{Counters, PgRecord, PgTime};
use crate::wrap::{Peeled, PeeledKind, Peeler, Wrapper};

/// At most this many wrapper times wait for their record.
const MAX_TIMES: usize = 4096;

/// Reads a wrapped PostgreSQL log.
pub(crate) struct PeeledReader {
    peeler: Peeler,
    inner: Engine,
    /// Wrapper times by physical line, until the record of that line is handed out.
    times: BTreeMap<u64, PgTime>,
    max_entry_bytes: usize,
}

impl PeeledReader {
    /// Lines peeled off `wrapper` to `inner`.
    pub(crate) fn new(wrapper: Wrapper, inner: Engine, max_entry_bytes: usize) -> Self {
        PeeledReader {
            peeler: Peeler::new(wrapper, max_entry_bytes),
            inner,
            times: BTreeMap::new(),
            max_entry_bytes,
        }
    }

    /// The wrapper taken off.
    pub(crate) fn wrapper(&self) -> Wrapper {
        self.peeler.wrapper()
    }

    /// The reader the peeled lines go to.
    pub(crate) fn inner(&self) -> &Engine {
        &self.inner
    }

    /// A reader of the same wrapper and inner format, at the start of a log.
    pub(crate) fn fresh(&self) -> Self {
        PeeledReader::new(self.wrapper(), self.inner.fresh(), self.max_entry_bytes)
    }

    /// True when both read further lines the same way.
    pub(crate) fn same_state(&self, other: &PeeledReader) -> bool {
        self.peeler.is_idle()
            && other.peeler.is_idle()
            && self.times.is_empty()
            && other.times.is_empty()
            && self.inner.same_state(&other.inner)
    }

    /// True when `text` starts a record for sure: a whole entry whose line starts one for the
    /// inner reader (a journal export's entries span lines: never).
    pub(crate) fn starts_record(&self, text: &str) -> bool {
        if self.wrapper() == Wrapper::JournalExport {
            return false;
        }
        let mut peeler = Peeler::new(self.wrapper(), self.max_entry_bytes);
        let mut starts = None;
        peeler.push(0, text, &mut |p| {
            let whole = match p.kind {
                PeeledKind::Line { text, .. } => {
                    starts.is_none() && self.inner.starts_record_unpasted(&text)
                }
                _ => false,
            };
            starts = Some(starts.unwrap_or(true) && whole);
        });
        starts == Some(true) && peeler.is_idle()
    }

    pub(crate) fn counters(&self) -> &Counters {
        self.inner.counters()
    }

    pub(crate) fn counters_mut(&mut self) -> &mut Counters {
        self.inner.counters_mut()
    }

    /// Feeds one physical line.
    pub(crate) fn push(&mut self, number: u64, text: &str) {
        let (inner, times) = (&mut self.inner, &mut self.times);
        let names_programs = self.peeler.wrapper().names_programs();
        self.peeler.push(number, text, &mut |p| {
            take(inner, times, names_programs, p, text);
        });
    }

    /// End of input.
    pub(crate) fn finish(&mut self) {
        let (inner, times) = (&mut self.inner, &mut self.times);
        let names_programs = self.peeler.wrapper().names_programs();
        self.peeler
            .finish(&mut |p| take(inner, times, names_programs, p, ""));
        self.inner.finish();
    }

    /// The next finished record, with the wrapper's time.
    pub(crate) fn pop(&mut self) -> Option<Box<PgRecord>> {
        let mut record = self.inner.pop_uncounted()?;
        if let Some(time) = self.times.get(&record.line) {
            if record.time.is_none() {
                record.time = Some(time.clone());
            }
            record.wrapper_time = Some(time.clone());
        }
        if !self.times.is_empty() {
            self.times = self.times.split_off(&record.line);
        }
        Some(record)
    }
}

/// One peeled entry to the inner reader or its counters.
fn take(
    inner: &mut Engine,
    times: &mut BTreeMap<u64, PgTime>,
    names_programs: bool,
    p: Peeled<'_>,
    raw: &str,
) {
    match p.kind {
        PeeledKind::Line { text, program, .. } => {
            let ours = !names_programs
                || program
                    .as_deref()
                    .is_some_and(|p| p.starts_with("postgres") || p.starts_with("postmaster"));
            if !ours {
                inner.counters_mut().other_program_lines += 1;
                return;
            }
            if let Some(utc) = p.stamp.utc {
                if times.len() >= MAX_TIMES {
                    times.pop_first();
                }
                times.entry(p.line).or_insert_with(|| PgTime {
                    civil: utc.to_zoned(jiff::tz::TimeZone::UTC).datetime(),
                    zone: Some(std::borrow::Cow::Borrowed("UTC")),
                    utc: Some(utc),
                });
            }
            inner.line(p.line, &text);
        }
        PeeledKind::Pending => inner.counters_mut().continuation_lines += 1,
        PeeledKind::Blank => inner.counters_mut().blank_lines += 1,
        PeeledKind::Empty => inner.counters_mut().other_program_lines += 1,
        PeeledKind::Unrecognized => inner.counters_mut().stats.unrecognized(p.line, raw),
    }
}
