//! A PostgreSQL log inside a wrapper [`crate::wrap`] takes off (a syslog or journal file, a
//! container runtime's log, a cloud service's JSON): each physical line goes through the
//! [`Peeler`], the lines it gives go to the reader of the log's own format (stderr, csvlog,
//! jsonlog), and each record keeps the wrapper's time beside its own
//! ([`PgRecord::wrapper_time`]), taking it as its time when the `log_line_prefix` prints none.
//!
//! * A line of another program (a journal or syslog line not tagged `postgres…`, another
//!   Heroku dyno, another Cloud Logging log, another CloudNativePG logger), an entry without a
//!   line (a journal entry without `MESSAGE`, journalctl's `-- Boot … --`) is counted in
//!   `other_program_lines`.
//! * A further piece of a line (syslog's `[N-2]`) or a further line of an entry (a JSON
//!   payload's newline) that neither starts with a TAB nor fits the prefix continues the text
//!   open before it (the piece directly, the line after a newline).
//! * The further physical lines of an entry (a partial line's pieces, an export entry's
//!   fields, the lines of a JSON entry over several) are counted in `continuation_lines`; the
//!   `[`, `]` of a JSON array too. A JSON entry given up counts all its lines as unrecognised.
//! * A wrapper's csvlog rows (CloudNativePG's `record`) go to the csvlog reader; the server's
//!   stderr lines it relays beside them (before the logging collector) to a stderr reader with
//!   PostgreSQL's default prefix, their records merged in line order.
//! * What is not the wrapper's shape is counted in `stats.unrecognized_lines`.

use std::borrow::Cow;
use std::collections::VecDeque;

use super::assemble::{Assembler, Join};
use super::prefix::LogLinePrefix;
use super::stream::Engine;
use super::{Counters, PgRecord, PgTime, severity};
use crate::wrap::{self, Content, Part, Peeled, PeeledKind, Peeler, Stamp, Wrapper, WrapperTime};

/// At most this many wrapper times wait for their record.
const MAX_TIMES: usize = 4096;

/// The prefix of the server's stderr lines a wrapper relays beside its csvlog rows: PostgreSQL's
/// default.
const DEFAULT_STDERR_PREFIX: &str = "%m [%p] ";

/// Reads a wrapped PostgreSQL log.
pub(crate) struct PeeledReader {
    peeler: Peeler,
    inner: Engine,
    /// The server's stderr lines relayed beside csvlog rows (CloudNativePG).
    side: Option<Box<Assembler>>,
    /// The wrapper's time of each record started and not yet handed out, by its first line.
    times: VecDeque<(u64, PgTime)>,
    /// The inner lines print no time: records take the wrapper's.
    fill_time: bool,
    max_entry_bytes: usize,
}

impl PeeledReader {
    /// Lines peeled off `wrapper` to `inner`.
    pub(crate) fn new(wrapper: Wrapper, inner: Engine, max_entry_bytes: usize) -> Self {
        let fill_time = match &inner {
            Engine::Stderr(a) => !super::has_time(a.prefix().as_str()),
            _ => false,
        };
        let side = wrapper.relays_default_stderr().then(|| {
            let prefix = LogLinePrefix::compile(DEFAULT_STDERR_PREFIX)
                .unwrap_or_else(|_| LogLinePrefix::empty());
            Box::new(Assembler::new(prefix, max_entry_bytes))
        });
        PeeledReader {
            peeler: Peeler::new(wrapper, max_entry_bytes),
            inner,
            side,
            times: VecDeque::new(),
            fill_time,
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
        self.peeler.same_state(&other.peeler)
            && self.times == other.times
            && self.inner.same_state(&other.inner)
            && match (&self.side, &other.side) {
                (Some(a), Some(b)) => a.same_state(b),
                (None, None) => true,
                _ => false,
            }
    }

    /// True when `text` starts a record for sure. A wrapper whose entries may span lines:
    /// never; one that names programs (a syslog, journal or cloud line): any line (the join
    /// settles what crosses a cut, as for syslog itself); a container's: a whole entry whose
    /// line starts one for the inner reader.
    pub(crate) fn starts_record(&self, text: &str) -> bool {
        let wrapper = self.wrapper();
        if wrapper.spans_lines() {
            return false;
        }
        if wrapper.names_programs() {
            return true;
        }
        let mut peeler = Peeler::new(wrapper, self.max_entry_bytes);
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
        let names_programs = self.peeler.wrapper().names_programs();
        let mut target = Target {
            inner: &mut self.inner,
            side: self.side.as_deref_mut(),
            times: &mut self.times,
        };
        self.peeler.push(number, text, &mut |p| {
            target.take(names_programs, p, text);
        });
    }

    /// End of input.
    pub(crate) fn finish(&mut self) {
        let names_programs = self.peeler.wrapper().names_programs();
        let mut target = Target {
            inner: &mut self.inner,
            side: self.side.as_deref_mut(),
            times: &mut self.times,
        };
        self.peeler
            .finish(&mut |p| target.take(names_programs, p, ""));
        self.inner.finish();
        if let Some(side) = &mut self.side {
            side.finish();
            merge_counters(side, self.inner.counters_mut());
        }
    }

    /// The next finished record (of the inner reader's and the side reader's, the one of the
    /// earlier line), with the wrapper's time.
    pub(crate) fn pop(&mut self) -> Option<Box<PgRecord>> {
        let from_side = match &self.side {
            Some(side) => match (self.inner.peek_line(), side.peek_line()) {
                (Some(main), Some(s)) => s < main,
                (None, Some(_)) => true,
                _ => false,
            },
            None => false,
        };
        let mut record = match (&mut self.side, from_side) {
            (Some(side), true) => side.pop()?,
            _ => self.inner.pop_uncounted()?,
        };
        while self
            .times
            .front()
            .is_some_and(|(line, _)| *line < record.line)
        {
            self.times.pop_front();
        }
        if self
            .times
            .front()
            .is_some_and(|(line, _)| *line == record.line)
            && let Some((_, time)) = self.times.pop_front()
        {
            if self.fill_time && record.time.is_none() {
                record.time = Some(time.clone());
            }
            record.wrapper_time = Some(time);
        }
        Some(record)
    }
}

/// Where the peeled lines of one physical line go.
struct Target<'r> {
    inner: &'r mut Engine,
    side: Option<&'r mut Assembler>,
    times: &'r mut VecDeque<(u64, PgTime)>,
}

impl Target<'_> {
    /// One peeled entry to the inner reader or its counters.
    fn take(&mut self, names_programs: bool, p: Peeled<'_>, raw: &str) {
        match p.kind {
            PeeledKind::Line {
                text,
                program,
                pid,
                part,
                content,
            } => {
                let ours = !names_programs || program.as_deref().is_some_and(wrap::is_postgres);
                if !ours {
                    self.inner.counters_mut().other_program_lines += 1;
                    return;
                }
                match (content, self.side.as_deref_mut()) {
                    (Content::DefaultStderr, Some(side)) => {
                        let before = side.started();
                        let text = match part {
                            Part::First => text,
                            _ if text.starts_with('\t') => text,
                            _ => Cow::Owned(format!("\t{text}")),
                        };
                        side.push(p.line, &text, pid);
                        if side.started() != before {
                            remember(self.times, side.started().1, &p.stamp);
                        }
                        merge_counters(side, self.inner.counters_mut());
                    }
                    (Content::CsvRow, Some(side)) if !side.is_idle() => {
                        // The collector took over: the stderr lines before are all there are.
                        side.finish();
                        merge_counters(side, self.inner.counters_mut());
                        self.feed(p.line, &text, pid, part, raw, &p.stamp);
                    }
                    _ => self.feed(p.line, &text, pid, part, raw, &p.stamp),
                }
            }
            PeeledKind::Pending => self.inner.counters_mut().continuation_lines += 1,
            PeeledKind::Blank => self.inner.counters_mut().blank_lines += 1,
            PeeledKind::Header => self.inner.counters_mut().header_lines += 1,
            PeeledKind::Empty => self.inner.counters_mut().other_program_lines += 1,
            PeeledKind::Unrecognized => self.inner.counters_mut().stats.unrecognized(p.line, raw),
            PeeledKind::Broken {
                head,
                lines,
                pending,
            } => {
                let c = self.inner.counters_mut();
                c.stats.unrecognized(p.line, &head);
                c.stats.unrecognized_lines += lines.saturating_sub(1);
                c.continuation_lines = c.continuation_lines.saturating_sub(pending);
            }
        }
    }

    /// A line of the log's own format to the inner reader. A piece after the first or a
    /// further line of an entry that neither starts with a TAB nor fits the prefix continues
    /// the open text.
    fn feed(
        &mut self,
        number: u64,
        text: &str,
        pid: Option<u32>,
        part: Part,
        raw: &str,
        stamp: &Stamp<'_>,
    ) {
        // Only a line with the wrapper's time can give a record one (a BSD syslog stamp has none).
        let before = stamp.written.is_some().then(|| self.inner.started());
        match &mut *self.inner {
            Engine::Stderr(a) => {
                let join = match part {
                    Part::First => None,
                    Part::Piece => Some(Join::Direct),
                    Part::NextLine => Some(Join::Newline),
                };
                match join {
                    Some(join) if !text.starts_with('\t') && !fits(a, text) => {
                        if !a.continue_open(number, text, join) {
                            a.counters_mut().stats.unrecognized(number, raw);
                        }
                    }
                    _ => a.push(number, text, pid),
                }
            }
            inner => inner.line(number, text),
        }
        if let Some(before) = before {
            let after = self.inner.started();
            if after != before {
                remember(self.times, after.1, stamp);
            }
        }
    }
}

/// Whether `text` fits the prefix, then a severity word.
fn fits(a: &Assembler, text: &str) -> bool {
    let tail_ok = |rest: &str| severity::split(rest).is_some();
    a.prefix().match_line(text, &tail_ok).is_some()
}

/// Keeps the wrapper's time of the record started on `line`.
fn remember(times: &mut VecDeque<(u64, PgTime)>, line: u64, stamp: &Stamp<'_>) {
    let Some(time) = stamp.time() else {
        return;
    };
    if times.len() >= MAX_TIMES {
        times.pop_front();
    }
    times.push_back((line, wrapper_pg_time(time)));
}

/// A wrapper's time as a record holds it: the civil time at the offset it was written at.
pub(crate) fn wrapper_pg_time(time: WrapperTime) -> PgTime {
    let zone = match time.offset {
        None => Cow::Borrowed("UTC"),
        Some(o) if o.seconds == 0 && o.colon => Cow::Borrowed("+00:00"),
        Some(o) if o.seconds == 0 => Cow::Borrowed("+0000"),
        Some(o) => Cow::Owned(o.text()),
    };
    PgTime {
        civil: time.civil,
        zone: Some(zone),
        utc: Some(time.utc),
    }
}

/// What the side reader counted, moved into the main reader's counters (which are the log's).
fn merge_counters(side: &mut Assembler, c: &mut Counters) {
    let side = std::mem::take(side.counters_mut());
    c.stats.records += side.stats.records;
    c.stats.oversized_lines += side.stats.oversized_lines;
    for (line, text) in &side.stats.unrecognized_examples {
        c.stats.unrecognized(*line, text);
    }
    c.stats.unrecognized_lines += side
        .stats
        .unrecognized_lines
        .saturating_sub(side.stats.unrecognized_examples.len() as u64);
    c.continuation_lines += side.continuation_lines;
    c.orphan_lines += side.orphan_lines;
    c.memory_context_lines += side.memory_context_lines;
    c.other_program_lines += side.other_program_lines;
    c.blank_lines += side.blank_lines;
    c.unreadable_stamps.count += side.unreadable_stamps.count;
    let room = crate::ParseStats::MAX_EXAMPLES.saturating_sub(c.unreadable_stamps.examples.len());
    c.unreadable_stamps
        .examples
        .extend(side.unreadable_stamps.examples.into_iter().take(room));
}
