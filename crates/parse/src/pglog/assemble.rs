//! Record assembly for line-oriented logs (stderr, and syslog once its header is removed):
//! prefixed lines start records, secondary lines (DETAIL, HINT, …) and TAB-indented lines join
//! them, the un-prefixed memory-context dump is collected, everything else is counted.
//!
//! Streaming: records wait in a window of the last [`PARENT_WINDOW`] records (a DETAIL may
//! come a few lines after its parent when processes interleave); a record leaving the window
//! is classified and handed out. Memory is bounded by the window, whatever the input size.

use std::cell::Cell;
use std::collections::VecDeque;

use super::memdump::{self, DumpLine};
use super::prefix::{Escape, LogLinePrefix, PrefixFields};
use super::severity::{self, Tag};
use super::time::{self, StampCache};
use super::translate::{self, Languages};
use super::{Counters, MemoryContextDump, PgRecord, PgTime, classify};

/// How far back (in records) a secondary line looks for its parent of the same PID.
/// Lines of concurrent processes interleave on stderr; the parent is nearly always within a few.
const PARENT_WINDOW: usize = 16;

/// The part of a record that TAB-indented lines continue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Part {
    Message,
    Detail,
    Hint,
    Context,
    Statement,
    Query,
    Location,
}

impl Part {
    fn of(tag: Tag) -> Part {
        match tag {
            Tag::Main(_) => Part::Message,
            Tag::Detail => Part::Detail,
            Tag::Hint => Part::Hint,
            Tag::Context => Part::Context,
            Tag::Statement => Part::Statement,
            Tag::Query => Part::Query,
            Tag::Location => Part::Location,
        }
    }

    /// The optional field a secondary part fills; `None` for the main message.
    fn slot(self, record: &mut PgRecord) -> Option<&mut Option<String>> {
        Some(match self {
            Part::Message => return None,
            Part::Detail => &mut record.detail,
            Part::Hint => &mut record.hint,
            Part::Context => &mut record.context,
            Part::Statement => &mut record.statement,
            Part::Query => &mut record.query,
            Part::Location => &mut record.location,
        })
    }

    /// The text a continuation line extends.
    fn text(self, record: &mut PgRecord) -> &mut String {
        let slot = match self {
            Part::Message => return &mut record.message,
            Part::Detail => &mut record.detail,
            Part::Hint => &mut record.hint,
            Part::Context => &mut record.context,
            Part::Statement => &mut record.statement,
            Part::Query => &mut record.query,
            Part::Location => &mut record.location,
        };
        slot.get_or_insert_with(String::new)
    }
}

/// What `pg_ctl` prints when its output goes to the server's log file (`pg_ctl -l log start
/// >>log`): its own lines, not the server's (`src/bin/pg_ctl/pg_ctl.c`).
// pg_ctl: could not start server
// Examine the log output.
pub(super) fn is_pg_ctl_line(text: &str) -> bool {
    text.starts_with("pg_ctl: ")
        || matches!(
            text,
            "Examine the log output." | "server started" | "server stopped" | " done" | "done"
        )
        || text.starts_with("waiting for server to start")
        || text.starts_with("waiting for server to shut down")
        || text.starts_with("waiting for server to promote")
}

/// The server's line after pg_ctl's `waiting for server to start....` when both were written
/// on one line (pg_ctl's output sent to the server's log file): `None` when there is no text
/// after the dots.
fn after_pg_ctl_dots(text: &str) -> Option<&str> {
    let rest = text.strip_prefix("waiting for server to ")?;
    let dots = rest.find('.')?;
    let server = rest[dots..].trim_start_matches('.');
    (!server.is_empty() && !server.starts_with(' ')).then_some(server)
}

/// A record waiting in the window (boxed: a record is large, and moving it through the window
/// and out again would copy it each time).
#[derive(Debug)]
struct Slot {
    record: Box<PgRecord>,
    /// A dump placeholder whose dump moved into the out-of-memory record that followed.
    claimed: bool,
}

/// Builds records line by line.
pub(crate) struct Assembler {
    prefix: LogLinePrefix,
    window: VecDeque<Slot>,
    /// Sequence number of `window[0]`.
    first_seq: u64,
    /// The record (by sequence number) and part that a TAB-indented line continues.
    open: Option<(u64, Part)>,
    /// The memory-context dump being read.
    dump: Option<Box<MemoryContextDump>>,
    /// Unclaimed memory-context dumps in the window.
    dumps_waiting: usize,
    /// Languages seen so far (severity words, `[unknown]`, translated messages).
    langs: Languages,
    /// The last time stamp's conversion.
    stamps: StampCache,
    /// Longest text a record part may grow to by continuation lines.
    max_part_bytes: usize,
    /// The width a mail client wrapped the lines at, when it did: a line that does not fit
    /// the prefix after a line about that long is the rest of that line.
    wrap_width: Option<u16>,
    /// Characters of the last line pushed, and whether it held a space (only looked at when
    /// `wrap_width` is set).
    last_width: usize,
    last_spaced: bool,
    /// A line that is the prefix alone, held for the rest of its line (see [`Assembler::push`]).
    held_head: Option<(u64, String)>,
    /// The wraps are a terminal's: cut at exactly `wrap_width`, nothing dropped.
    hard_wrap: bool,
    /// The last line pushed ended in a space.
    last_trailing_space: bool,
    /// Lines were padded with spaces to the terminal's width ([`crate::paste::Paste::unpad`]).
    padded: bool,
    /// The spaces taken off the last line.
    last_pad: usize,
    counters: Counters,
    /// Finished records, boxed: they are handed out as they are (a record is large).
    out: VecDeque<Box<PgRecord>>,
    /// Records started so far, and the line of the latest.
    started: (u64, u64),
}

/// Context lines room is made for when a memory-context dump starts.
const DUMP_CONTEXTS_RESERVED: usize = 128;

/// How a continuation line joins the text before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Join {
    /// A TAB-indented line: a newline inside the text (`\n` + the line without its TAB).
    Newline,
    /// The next piece of a line syslog split at its length limit: appended as is.
    Direct,
    /// The rest of a line a mail client wrapped; `true` when the line before held no space
    /// (cut inside a word) ([`crate::paste::join_wrapped`]).
    Wrapped(bool),
}

impl Assembler {
    pub(crate) fn new(prefix: LogLinePrefix, max_part_bytes: usize) -> Self {
        Assembler {
            prefix,
            window: VecDeque::new(),
            first_seq: 0,
            open: None,
            dump: None,
            dumps_waiting: 0,
            langs: Languages::default(),
            stamps: StampCache::default(),
            max_part_bytes,
            wrap_width: None,
            last_width: 0,
            last_spaced: false,
            held_head: None,
            hard_wrap: false,
            last_trailing_space: false,
            padded: false,
            last_pad: 0,
            counters: Counters::default(),
            out: VecDeque::new(),
            started: (0, 0),
        }
    }

    /// An assembler with the same prefix and limits, at the start of a log.
    pub(crate) fn fresh(&self) -> Self {
        let mut fresh = Assembler::new(self.prefix.clone(), self.max_part_bytes);
        fresh.wrap_width = self.wrap_width;
        fresh.hard_wrap = self.hard_wrap;
        fresh.padded = self.padded;
        fresh
    }

    /// Lines were wrapped at `width` columns by a mail client: the rest of a wrapped line (a
    /// line that does not fit the prefix after one about that long) joins the text it
    /// continues ([`crate::paste::join_wrapped`]).
    ///
    /// By a terminal (`hard`): a line that does not fit the prefix after a line of the whole
    /// width that does not end in a space is its rest, joined as it is.
    pub(crate) fn set_wrap(&mut self, width: Option<u16>, hard: bool, padded: bool) {
        self.wrap_width = width;
        self.hard_wrap = hard;
        self.padded = padded;
    }

    /// True when both assemblers hold the same records in their windows (same claims), the same
    /// open part, dump and languages: fed the same lines from here, they give the same records.
    pub(crate) fn same_state(&self, other: &Assembler) -> bool {
        self.window.len() == other.window.len()
            && self.held_head == other.held_head
            && (
                self.last_width,
                self.last_spaced,
                self.last_trailing_space,
                self.last_pad,
            ) == (
                other.last_width,
                other.last_spaced,
                other.last_trailing_space,
                other.last_pad,
            )
            && self.langs == other.langs
            && self.dumps_waiting == other.dumps_waiting
            && self.open_in_window() == other.open_in_window()
            && self.out.is_empty()
            && other.out.is_empty()
            && self.dump == other.dump
            && self
                .window
                .iter()
                .zip(&other.window)
                .all(|(a, b)| a.claimed == b.claimed && a.record == b.record)
    }

    /// The open part as (window index, part), when it is still in the window.
    fn open_in_window(&self) -> Option<(usize, Part)> {
        let (seq, part) = self.open?;
        let i = usize::try_from(seq.checked_sub(self.first_seq)?).ok()?;
        (i < self.window.len()).then_some((i, part))
    }

    pub(crate) fn prefix(&self) -> &LogLinePrefix {
        &self.prefix
    }

    pub(crate) fn counters_mut(&mut self) -> &mut Counters {
        &mut self.counters
    }

    pub(crate) fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The next finished record, if any.
    pub(crate) fn pop(&mut self) -> Option<Box<PgRecord>> {
        self.out.pop_front()
    }

    /// True when no record waits in the window and no dump is being read.
    pub(crate) fn is_idle(&self) -> bool {
        self.window.is_empty() && self.dump.is_none()
    }

    /// The line of the next finished record, if any.
    pub(crate) fn peek_line(&self) -> Option<u64> {
        self.out.front().map(|r| r.line)
    }

    /// Records started so far, and the first line of the latest (a record is started by the
    /// line it begins on).
    pub(crate) fn started(&self) -> (u64, u64) {
        self.started
    }

    /// Feeds one line (without its newline). `fallback_pid` is the PID a syslog header gave,
    /// used when the prefix has none.
    ///
    /// When lines were wrapped by a mail client, a line that is the prefix alone (the client
    /// broke it before the severity word) is held and read joined to the next line when the
    /// two fit the prefix together.
    pub(crate) fn push(&mut self, number: u64, text: &str, fallback_pid: Option<u32>) {
        let Some(width) = self.wrap_width.filter(|_| !self.hard_wrap) else {
            self.push_line(number, text, fallback_pid);
            return;
        };
        if let Some((held_number, held)) = self.held_head.take() {
            let mut joined = held.clone();
            crate::paste::join_wrapped(&mut joined, text, false);
            if self.fits(&joined) {
                // The rest is accounted for as a line that continues a record.
                self.counters.paste.wraps_joined += 1;
                self.counters.continuation_lines += 1;
                self.push_line(held_number, &joined, fallback_pid);
                // The next line's width is this piece's.
                self.last_width = text.chars().count();
                self.last_spaced = text.contains(' ');
                return;
            }
            self.push_line(held_number, &held, fallback_pid);
        }
        // The space a prefix ends with is the one the client broke the line at.
        let tail_empty = |rest: &str| rest.is_empty();
        if text.chars().count() + 20 >= usize::from(width)
            && !text.starts_with('\t')
            && (self.prefix.match_line(text, &tail_empty).is_some()
                || self
                    .prefix
                    .match_line(&format!("{text} "), &tail_empty)
                    .is_some())
        {
            self.held_head = Some((number, text.to_owned()));
            return;
        }
        self.push_line(number, text, fallback_pid);
    }

    /// True when `text` fits the prefix and a severity word follows.
    fn fits(&self, text: &str) -> bool {
        let tail_ok = |rest: &str| severity::split(rest).is_some();
        self.prefix.match_line(text, &tail_ok).is_some()
    }

    /// Reads one line (a wrapped line's pieces joined).
    fn push_line(&mut self, number: u64, text: &str, fallback_pid: Option<u32>) {
        // The line's width before its padding is taken off (counted only when wraps are
        // looked for: a pass over every character of every line otherwise).
        let unpadded = text;
        let mut pad = 0;
        let text = if self.padded {
            let shape = crate::paste::Paste {
                padded: true,
                ..crate::paste::Paste::default()
            };
            let (trimmed, taken) = shape.unpad(text, &mut self.counters.paste);
            pad = taken;
            trimmed
        } else {
            text
        };
        let (previous_width, previous_spaced, previous_trailing_space, previous_pad) =
            match self.wrap_width {
                Some(_) => (
                    std::mem::replace(&mut self.last_width, unpadded.chars().count()),
                    std::mem::replace(&mut self.last_spaced, text.contains(' ')),
                    std::mem::replace(&mut self.last_trailing_space, text.ends_with(' ')),
                    std::mem::replace(&mut self.last_pad, pad),
                ),
                None => (0, false, false, 0),
            };
        if text.is_empty() {
            self.end_dump();
            self.counters.blank_lines += 1;
            return;
        }
        // `\tautomatic recovery in progress`, `\tFROM t` (a message or query with newlines).
        if let Some(rest) = text.strip_prefix('\t') {
            self.end_dump();
            if !self.continue_open(number, rest, Join::Newline) {
                self.counters.stats.unrecognized(number, text);
            }
            return;
        }
        // A log without a prefix, pasted: a person cutting the prefixes off by hand leaves a
        // space (` LOG:  …`), and `pg_ctl -w`'s progress dots end up in front of the line the
        // server wrote next (`.FATAL:  …`).
        let text = if self.prefix.as_str().is_empty() && text.starts_with([' ', '.']) {
            let rest = text.trim_start_matches([' ', '.']);
            if severity::split(rest).is_some() {
                rest
            } else {
                text
            }
        } else {
            text
        };
        // The severity word that let the prefix match is kept, not split again.
        let split = Cell::new(None);
        let mut fields = PrefixFields::new(text);
        let matched = self.prefix.match_into(&mut fields, &|rest| {
            let found = severity::split_with_language(rest);
            if found.is_some() {
                split.set(found);
            }
            found.is_some()
        });
        let (Some(_), Some((tag, lang, message))) = (matched, split.get()) else {
            // A terminal's cut: the line reached the whole width (its padding, if any, was its
            // own spaces, given back).
            let wrapped = self.wrap_width.is_some_and(|width| {
                if self.hard_wrap {
                    previous_width >= usize::from(width)
                        && (self.padded || !previous_trailing_space)
                } else {
                    crate::paste::is_wrapped(previous_width, text, width)
                }
            });
            if wrapped
                && self.dump.is_none()
                && memdump::parse_line(text).is_none()
                && !is_pg_ctl_line(text)
            {
                let joined = if self.hard_wrap {
                    let rest = format!("{}{text}", " ".repeat(previous_pad));
                    self.continue_open(number, &rest, Join::Direct)
                } else {
                    self.continue_open(number, text, Join::Wrapped(!previous_spaced))
                };
                if joined {
                    self.counters.paste.wraps_joined += 1;
                    return;
                }
            }
            self.not_prefixed(number, text);
            return;
        };

        self.end_dump();
        if let Some(lang) = lang {
            self.langs.add(lang);
        }
        match tag {
            Tag::Main(severity) => {
                let mut record = self.record_from(number, &fields, fallback_pid);
                record.severity = Some(severity);
                record.message = message.to_owned();
                if let Some(lang) = lang {
                    record.language = Some(translate::language_name(lang));
                }
                if self.dumps_waiting > 0 {
                    self.claim_dump(&mut record);
                }
                self.push_record(record, Some(Part::Message));
            }
            tag => self.attach(number, &fields, fallback_pid, Part::of(tag), message),
        }
    }

    /// Continues the open part with `rest`; false when nothing is open.
    pub(crate) fn continue_open(&mut self, number: u64, rest: &str, join: Join) -> bool {
        let Some((seq, part)) = self.open else {
            return false;
        };
        let Some(slot) = seq
            .checked_sub(self.first_seq)
            .and_then(|i| self.window.get_mut(i as usize))
        else {
            return false;
        };
        let record = &mut slot.record;
        let joined = part.text(record);
        if joined.len() + rest.len() < self.max_part_bytes {
            match join {
                Join::Newline => {
                    joined.push('\n');
                    joined.push_str(rest);
                }
                Join::Direct => joined.push_str(rest),
                Join::Wrapped(hard_break) => crate::paste::join_wrapped(joined, rest, hard_break),
            }
        } else {
            self.counters.stats.oversized_lines += 1;
        }
        record.end_line = number;
        self.counters.continuation_lines += 1;
        true
    }

    /// A line without the prefix: part of a memory-context dump, or unrecognised.
    fn not_prefixed(&mut self, number: u64, text: &str) {
        match memdump::parse_line(text) {
            Some(line) => {
                self.counters.memory_context_lines += 1;
                self.open = None;
                let dump = self.dump.get_or_insert_with(|| {
                    Box::new(MemoryContextDump {
                        line: number,
                        // A dump lists about a hundred contexts: one allocation, not a
                        // doubling series of large ones.
                        contexts: Vec::with_capacity(DUMP_CONTEXTS_RESERVED),
                        ..MemoryContextDump::default()
                    })
                });
                dump.end_line = number;
                match line {
                    DumpLine::Context(c)
                        if dump.contexts.len() < MemoryContextDump::MAX_CONTEXTS =>
                    {
                        dump.contexts.push(c);
                    }
                    DumpLine::Context(_) => dump.omitted_contexts += 1,
                    DumpLine::GrandTotal(t) => {
                        dump.grand_total = Some(t);
                        self.end_dump();
                    }
                }
            }
            None => {
                self.end_dump();
                if let Some(server) = after_pg_ctl_dots(text) {
                    // `waiting for server to start....2026-11-21 17:08:44.100 UTC [500] LOG:  …`:
                    // pg_ctl's dots and the server's first line share the line.
                    self.push_line(number, server, None);
                    return;
                }
                if is_pg_ctl_line(text) {
                    self.counters.other_program_lines += 1;
                    self.open = None;
                    return;
                }
                // A continuation line whose TAB became spaces (an editor, a pasted log,
                // journalctl's eight spaces): it continues the open text.
                if text.starts_with(' ') && !text.trim().is_empty() {
                    let rest = text.strip_prefix("        ").unwrap_or(text);
                    if self.continue_open(number, rest, Join::Newline) {
                        return;
                    }
                }
                self.counters.stats.unrecognized(number, text);
                self.open = None;
            }
        }
    }

    /// Closes the dump being read: it waits in the window as a record of its own until an
    /// out-of-memory error claims it.
    fn end_dump(&mut self) {
        if let Some(dump) = self.dump.take() {
            let mut record = Box::<PgRecord>::default();
            record.line = dump.line;
            record.end_line = dump.end_line;
            record.memory_context_dump = Some(dump);
            self.dumps_waiting += 1;
            self.push_record(record, None);
        }
    }

    /// Moves the latest unclaimed dump of the window into `record` when `record` is
    /// `ERROR:  out of memory` (in any language).
    fn claim_dump(&mut self, record: &mut PgRecord) {
        let is_oom = record.message == "out of memory"
            || translate::to_english(&record.message, self.langs)
                .is_some_and(|(_, en)| en == "out of memory");
        if !is_oom {
            return;
        }
        if let Some(slot) = self.window.iter_mut().rev().find(|s| {
            !s.claimed && s.record.severity.is_none() && s.record.memory_context_dump.is_some()
        }) {
            record.memory_context_dump = slot.record.memory_context_dump.take();
            slot.claimed = true;
            self.dumps_waiting -= 1;
        }
    }

    /// `DETAIL:  Failed process was running: select …` → the latest record of the same PID,
    /// when that record has no DETAIL yet; else an orphan record holding only this part.
    fn attach(
        &mut self,
        number: u64,
        fields: &PrefixFields<'_>,
        fallback_pid: Option<u32>,
        part: Part,
        text: &str,
    ) {
        let pid = fields
            .get(Escape::Pid)
            .and_then(|p| p.parse::<u32>().ok())
            .or(fallback_pid);
        let parent = self
            .window
            .iter_mut()
            .enumerate()
            .rev()
            .find(|(_, s)| {
                let dump = s.record.severity.is_none() && s.record.memory_context_dump.is_some();
                !dump && (pid.is_none() || s.record.pid == pid)
            })
            .filter(|(_, s)| part_is_empty(part, &s.record))
            .map(|(i, _)| i);
        match parent {
            Some(i) => {
                self.counters.continuation_lines += 1;
                let record = &mut self.window[i].record;
                if let Some(slot) = part.slot(record) {
                    *slot = Some(text.to_owned());
                }
                record.end_line = number;
                self.open = Some((self.first_seq + i as u64, part));
            }
            None => {
                self.counters.orphan_lines += 1;
                let mut record = self.record_from(number, fields, fallback_pid);
                if let Some(slot) = part.slot(&mut record) {
                    *slot = Some(text.to_owned());
                }
                self.push_record(record, Some(part));
            }
        }
    }

    /// Appends a record to the window (opening `part` for continuation lines) and hands out
    /// the oldest when the window is full.
    fn push_record(&mut self, record: Box<PgRecord>, part: Option<Part>) {
        self.started = (self.started.0 + 1, record.line);
        self.window.push_back(Slot {
            record,
            claimed: false,
        });
        let seq = self.first_seq + self.window.len() as u64 - 1;
        self.open = part.map(|p| (seq, p));
        while self.window.len() > PARENT_WINDOW {
            self.emit_oldest();
        }
    }

    fn emit_oldest(&mut self) {
        let Some(slot) = self.window.pop_front() else {
            return;
        };
        self.first_seq += 1;
        if slot.claimed {
            return;
        }
        if slot.record.severity.is_none() && slot.record.memory_context_dump.is_some() {
            self.dumps_waiting -= 1;
        }
        let mut record = slot.record;
        classify::classify_record(&mut record, self.langs);
        self.counters.stats.records += 1;
        self.out.push_back(record);
    }

    /// End of input: every waiting record is handed out.
    pub(crate) fn finish(&mut self) {
        if let Some((number, held)) = self.held_head.take() {
            self.push_line(number, &held, None);
        }
        self.end_dump();
        while !self.window.is_empty() {
            self.emit_oldest();
        }
        self.open = None;
    }

    /// A fresh record carrying what the prefix said.
    fn record_from(
        &mut self,
        number: u64,
        fields: &PrefixFields<'_>,
        fallback_pid: Option<u32>,
    ) -> Box<PgRecord> {
        let mut record = Box::<PgRecord>::default();
        if let Some(stamp) = fill_record(
            &mut record,
            number,
            self.prefix.escapes(),
            fields,
            &mut self.stamps,
        ) {
            // A stamp of the right shape that is no time (a month 13): the record is kept
            // without a time, and counted, the first few shown.
            self.counters.unreadable_stamps.add(number, stamp);
        }
        record.pid = record.pid.or(fallback_pid);
        for value in [&mut record.user, &mut record.database] {
            if let Some(v) = value
                && v.starts_with('[')
                && v != "[unknown]"
                && let Some(lang) = translate::unknown_language(v)
            {
                *v = "[unknown]".to_owned();
                self.langs.add(lang);
                record.language = Some(translate::language_name(lang));
            }
        }
        record
    }
}

fn part_is_empty(part: Part, record: &PgRecord) -> bool {
    match part {
        Part::Message => false,
        Part::Detail => record.detail.is_none(),
        Part::Hint => record.hint.is_none(),
        Part::Context => record.context.is_none(),
        Part::Statement => record.statement.is_none(),
        Part::Query => record.query.is_none(),
        Part::Location => record.location.is_none(),
    }
}

/// Writes what the prefix said into an empty record (in place: a record is large). Only the
/// escapes the prefix prints are looked at. Returns the stamp printed when none of the
/// prefix's times could be read.
fn fill_record<'a>(
    record: &mut PgRecord,
    number: u64,
    escapes: &[Escape],
    fields: &PrefixFields<'a>,
    stamps: &mut StampCache,
) -> Option<&'a str> {
    record.line = number;
    record.end_line = number;
    let (mut stamp, mut stamp_seconds, mut epoch, mut host) = (None, None, None, None);
    for &escape in escapes {
        let Some(value) = fields.get(escape) else {
            continue;
        };
        let text = || Some(value.to_owned());
        match escape {
            Escape::Timestamp => stamp = Some(value),
            Escape::TimestampSeconds => stamp_seconds = Some(value),
            Escape::Epoch => epoch = Some(value),
            Escape::Pid => record.pid = value.parse().ok(),
            Escape::SessionLine => record.session_line = value.parse().ok(),
            Escape::SessionId => record.session_id = text(),
            Escape::User => record.user = text(),
            Escape::Database => record.database = text(),
            Escape::Application => record.application = text(),
            Escape::RemoteHostPort => record.client = text(),
            Escape::RemoteHost => host = Some(value),
            Escape::BackendType => record.backend_type = text(),
            Escape::Sqlstate => record.sqlstate = text(),
            Escape::Xid => record.xid = value.parse().ok(),
            Escape::Vxid => record.vxid = text(),
            Escape::CommandTag => record.command_tag = text(),
            Escape::SessionStart => record.session_start = text(),
            Escape::LeaderPid => record.leader_pid = value.parse().ok(),
            Escape::QueryId => record.query_id = value.parse().ok(),
            Escape::LocalAddress => record.local_address = text(),
        }
    }
    // No `%p`: the session id (`%c`, `691f9e2c.6a1c`) holds the pid in hex after its dot.
    if record.pid.is_none()
        && let Some(id) = &record.session_id
    {
        record.pid = id
            .split_once('.')
            .and_then(|(_, pid)| u32::from_str_radix(pid, 16).ok());
    }
    // `%r` when printed, else `%h`.
    if record.client.is_none() {
        record.client = host.map(str::to_owned);
    }
    // `%m`, else `%t`; `%n` gives the instant when the stamp's zone does not.
    let mut time: Option<PgTime> = stamp
        .and_then(|t| stamps.get(t, true))
        .or_else(|| stamp_seconds.and_then(|t| stamps.get(t, false)));
    match (&mut time, epoch.and_then(time::pg_time_from_epoch)) {
        (Some(t), Some(e)) if t.utc.is_none() => t.utc = e.utc,
        (None, Some(e)) => time = Some(e),
        _ => {}
    }
    let unread = time
        .is_none()
        .then(|| stamp.or(stamp_seconds).or(epoch))
        .flatten();
    record.time = time;
    unread
}
