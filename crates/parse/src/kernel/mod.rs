//! Kernel logs: every line form a bundle may hold (dmesg raw / `-T` / `-x` / `-r` / iso, raw
//! `/dev/kmsg`, journalctl short forms, syslog kern.log, pasted text), detected per line by
//! shape, and the events pgmortem needs assembled from them: OOM-killer reports from kernels 2.6
//! to 6.x, segfaults and traps, page allocation failures, hung tasks (with their stacks), storage
//! errors, hardware errors (machine checks, EDAC, memory failures) and, from the same syslog or
//! journal, crash reporters', systemd's and the user-space OOM killers' lines.
//!
//! Two layers:
//! * [`parse_line`] takes one line's prefix apart into a [`KernelLine`] (form, clocks, level,
//!   host, message). Stateless, allocation-free.
//! * [`parse`] / [`KernelParser`] run every line through it and assemble [`KernelRecord`]s.
//!
//! # What counts as unrecognised
//! Every line is accounted for in [`KernelLog::stats`]:
//! * a line whose prefix has a known form (anything but [`LineForm::Bare`]) is recognised,
//!   whatever its message says — ordinary kernel noise is fine;
//! * a line without a prefix ([`LineForm::Bare`]) is recognised when it is blank, a grep `--`
//!   separator or journal marker (`-- Boot … --`), an indented continuation line, a raw kmsg
//!   dictionary line (` SUBSYSTEM=…`), or part of an event;
//! * any other bare line is recognised in an input where no line had a prefix (pasted text,
//!   `CONFIG_PRINTK_TIME=n`), but **unrecognised** in an input where other lines had one (its
//!   form could not be read), and always unrecognised when it holds control characters or
//!   undecodable bytes (binary garbage).
//!
//! Lines of other programs in a syslog file (`host postgres[12]: …`) are recognised and counted
//! in [`KernelLog::non_kernel_lines`]; they never feed event assembly.

mod block_lines;
pub(crate) mod calendar;
mod events;
mod hardware;
mod oom;
mod prefix;
mod services;
mod storage;
mod types;
mod unpaste;
mod userspace_oom;

use std::collections::{BTreeMap, VecDeque};

use serde::Serialize;

pub use block_lines::BlockLines;
pub use prefix::parse_line;
pub use types::*;

use crate::lines::{Line, Lines};
use crate::paste::{Cleaned, Paste, PasteCounts, PasteReport};
use crate::wrap::{self, Peeled, PeeledKind, Peeler, Stamp};
use crate::{CountedLines, ParseStats};
use hardware::HardwareLine;
use oom::{Message, OomAssembler};
use prefix::Ambiguity;
use unpaste::{Head, Held, PASTE_HEAD_BYTES, PASTE_HEAD_LINES};
use userspace_oom::{KillerLine, KillerLines};

/// Context the kernel parser cannot find in the input itself.
#[derive(Debug, Clone)]
pub struct KernelOptions {
    /// Year to give stamps that print none (journalctl short, BSD syslog). `None` leaves such
    /// wall times without a year-resolved civil time: they are then kept as monotonic-less
    /// lines with `wall: None`. [`KernelOptions::collected_on`] takes its place when set.
    pub year: Option<i16>,
    /// The day the log was collected: stamps without a year take its year, or the year before
    /// when their day would come more than a day after it (a December line of a log collected
    /// in January). `None`: [`KernelOptions::year`] for every stamp.
    pub collected_on: Option<jiff::civil::Date>,
    /// Lines longer than this many bytes are cut (and counted in `oversized_lines`).
    /// Default 64 KiB.
    pub max_line_bytes: usize,
    /// What the parse keeps of a log: its last OOM reports and events, within counts and
    /// bytes, so that memory stays bounded whatever the log holds.
    pub limits: KernelLimits,
}

impl Default for KernelOptions {
    fn default() -> Self {
        Self {
            year: None,
            collected_on: None,
            max_line_bytes: 64 * 1024,
            limits: KernelLimits::default(),
        }
    }
}

/// What a kernel log's parse keeps: the last records of the log (the outage being looked into
/// is near its end); earlier ones are counted ([`KernelLog::oom_reports_not_kept`],
/// [`KernelLog::oom_details_dropped`], [`KernelLog::events_not_kept`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelLimits {
    /// OOM reports kept. Default [`MAX_REPORTS`].
    pub oom_reports: usize,
    /// Of those, the last ones that keep their task table, Mem-Info and cgroup stats. Default
    /// [`DETAILED_REPORTS`].
    pub detailed_reports: usize,
    /// Bytes those details may take in all ([`report_detail_bytes`]); past it, the oldest
    /// reports' details are dropped first. Default [`DETAIL_BYTES`].
    pub detail_bytes: usize,
    /// Records other than OOM reports kept (segfaults, hung tasks, storage and hardware
    /// errors, …). Default [`MAX_EVENTS`].
    pub events: usize,
}

impl Default for KernelLimits {
    fn default() -> Self {
        Self {
            oom_reports: MAX_REPORTS,
            detailed_reports: DETAILED_REPORTS,
            detail_bytes: DETAIL_BYTES,
            events: MAX_EVENTS,
        }
    }
}

impl KernelOptions {
    /// The year of a stamp printed without one, on `month`/`day` (see
    /// [`KernelOptions::collected_on`]).
    pub(crate) fn year_of(&self, month: i8, day: i8) -> Option<i16> {
        calendar::year_of(self.year, self.collected_on, month, day)
    }
}

/// Everything parsed out of one kernel log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KernelLog {
    /// Events in input order (by first line).
    pub records: Vec<KernelRecord>,
    /// What was understood and what was not.
    pub stats: ParseStats,
    /// How many lines had each form.
    pub line_forms: BTreeMap<LineForm, u64>,
    /// Syslog/journal lines of programs other than the kernel (recognised, not assembled).
    pub non_kernel_lines: u64,
    /// Records missing from a raw `/dev/kmsg` dump, from gaps in its sequence numbers.
    pub lost_kmsg_records: u64,
    /// Lines where the monotonic clock went back (by more than a second): each starts a later
    /// boot. A dmesg copy of the ring buffer holds one boot; a kern.log, messages file or a
    /// journal spanning reboots holds several, and the monotonic times of different boots
    /// count from different starts (only the last boot's can be put on the clock of a bundle
    /// collected in it). Empty for one boot.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub boot_starts: Vec<u64>,
    /// OOM reports before the last [`KernelLimits::oom_reports`] of the log: counted, not
    /// kept (memory stays bounded whatever the log holds).
    #[serde(skip_serializing_if = "is_zero")]
    pub oom_reports_not_kept: u64,
    /// OOM reports kept without their task table, Mem-Info and cgroup stats: all but the last
    /// [`KernelLimits::detailed_reports`] of the log, fewer when their details would take more
    /// than [`KernelLimits::detail_bytes`] (each such report has a note saying so).
    #[serde(skip_serializing_if = "is_zero")]
    pub oom_details_dropped: u64,
    /// Records other than OOM reports before the last [`KernelLimits::events`] of the log:
    /// counted, not kept.
    #[serde(skip_serializing_if = "is_zero")]
    pub events_not_kept: u64,
    /// What pasting the log into a ticket or a mail did to its lines (quote marks, code-block
    /// indentation, mail line wraps, cut marks, CRLF) and what was undone; `None` when
    /// nothing was ([`crate::paste`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pasted: Option<PasteReport>,
}

/// Records other than OOM reports a log keeps (segfaults, hung tasks, storage and hardware
/// errors, …): its last ones.
pub const MAX_EVENTS: usize = 20_000;

pub use oom::{DETAIL_BYTES, DETAILED_REPORTS, MAX_REPORTS, MAX_ROWS, report_detail_bytes};

/// Bytes of a kernel log to read at a time when it is streamed into
/// [`KernelParser::push_block`] (`pgmortem parse kernel`, `analyze` of a log not in memory).
pub const STREAM_BLOCK_BYTES: usize = 4 << 20;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl KernelLog {
    /// Which boot of the log line `line` belongs to, counted from 0 at the first line: the
    /// number of [`KernelLog::boot_starts`] at or before it.
    pub fn boot_of(&self, line: u64) -> usize {
        self.boot_starts.partition_point(|&start| start <= line)
    }

    /// Whether line `line` was logged in an earlier boot than the log's last line.
    pub fn before_last_boot(&self, line: u64) -> bool {
        self.boot_of(line) < self.boot_starts.len()
    }
}

/// How far (µs) the monotonic clock may step back between lines of one boot: printk stamps of
/// different CPUs interleave a little out of order. More than this is a new boot.
const BOOT_RESET_SLACK_US: u64 = 1_000_000;

/// Parses a whole kernel log held in memory.
///
/// Never fails and never panics: bad bytes are decoded lossily and counted, long lines are cut
/// at [`KernelOptions::max_line_bytes`] and counted. Linear in the input; memory is the records
/// plus one OOM report being assembled.
pub fn parse(input: &[u8], options: &KernelOptions) -> KernelLog {
    let mut parser = KernelParser::new(options.clone());
    parser.push_block(input);
    parser.finish()
}

/// Streaming form of [`parse`]: push blocks of lines, or lines (from [`BlockLines`] or
/// [`Lines`], in input order), as they come, then
/// [`finish`](KernelParser::finish). Holds only the records found so far.
#[derive(Debug)]
pub struct KernelParser {
    options: KernelOptions,
    oom: OomAssembler,
    /// Events other than OOM reports: the last [`KernelLimits::events`].
    records: VecDeque<KernelRecord>,
    stats: ParseStats,
    line_forms: [u64; FORMS.len()],
    non_kernel_lines: u64,
    lost_kmsg_records: u64,
    last_sequence: Option<u64>,
    last_form: Option<LineForm>,
    bsd_hint: Option<LineForm>,
    /// Host of the last journalctl short-monotonic line: lines of other programs on that host
    /// look like dmesg lines otherwise.
    journal_monotonic_host: Option<String>,
    /// Index in `records` of a page allocation failure still waiting for its CPU line, and how
    /// many more lines it waits.
    pending_allocation: Option<(usize, u8)>,
    /// A hung task whose report's lines (state line, stack) are still being read.
    pending_hung: Option<PendingHung>,
    /// What the user-space OOM killers' lines before their next kill said.
    killer_lines: KillerLines,
    prefixed_lines: u64,
    garbage: CountedLines,
    unprefixed: CountedLines,
    /// The monotonic time of the last line that had one.
    last_monotonic_us: Option<u64>,
    boot_starts: Vec<u64>,
    /// Events past [`KernelLimits::events`].
    events_not_kept: u64,
    /// Records handed over by [`KernelParser::take_settled`].
    taken: u64,
    /// Lines read by [`KernelParser::push_block`] so far.
    lines_before: u64,
    /// The wrapper taken off every line (sniffed from the first block), `None` inside when
    /// the log is not wrapped; `None` before the first block.
    peeler: Option<Option<Peeler>>,
    /// The first lines, until what a paste did is learned (`None` once it is).
    head: Option<Head>,
    paste: Paste,
    paste_counts: PasteCounts,
    /// The last line, held while lines were wrapped by a mail client.
    held: Option<Held>,
}

/// Lines printed after a page allocation failure within which its CPU line is looked for.
const ALLOCATION_CPU_WINDOW: u8 = 4;

/// A hung task's record still reading its report's lines.
#[derive(Debug, Clone, Copy)]
struct PendingHung {
    /// Index of its record in `records`.
    index: usize,
    /// Lines it may still take.
    left: u16,
    /// Whether its `Call Trace:` began.
    in_trace: bool,
}

/// Lines after `INFO: task … blocked` a hung task's report may take (state line, stack words,
/// frames, registers).
const HUNG_REPORT_LINES: u16 = 160;

/// Lines after a hardware error's last line within which its continuation lines are looked
/// for.
const HARDWARE_WINDOW: u64 = 24;

/// Every line form, indexed by `form as usize` (for the per-form counters).
const FORMS: [LineForm; 11] = [
    LineForm::Monotonic,
    LineForm::Ctime,
    LineForm::Iso,
    LineForm::Kmsg,
    LineForm::Journal,
    LineForm::JournalIso,
    LineForm::JournalMonotonic,
    LineForm::Syslog,
    LineForm::Bare,
    LineForm::Delta,
    LineForm::Wrapped,
];

/// Which event lines a message may be: bits of [`event_hints`].
const MAY_TRIGGER: u8 = 1;
const MAY_KILL: u8 = 2;
const MAY_SEGFAULT: u8 = 4;
const MAY_ALLOCATION: u8 = 8;
const MAY_TRAP: u8 = 16;
const MAY_BLOCK_ERROR: u8 = 32;

/// How far into a message the key words of event lines can be: after a comm (≤ 15 bytes), a
/// `[pid]`, or a kill reason such as `Out of memory (oom_kill_allocating_task): `.
const HINT_WINDOW: usize = 96;

/// One cheap pass over the start of a message: at each space, the next word says which event
/// line it may be (` invoked oom-killer: `, ` process `, `]: segfault at `,
/// `: page allocation failure`). Replaces one substring search per event kind on the hot path.
fn event_hints(bytes: &[u8]) -> u8 {
    let window = &bytes[..bytes.len().min(HINT_WINDOW)];
    let mut hints = 0;
    for space in memchr::memchr_iter(b' ', window) {
        let rest = &bytes[space + 1..];
        hints |= match rest.first() {
            Some(b'i') if rest.starts_with(b"invoked oom-killer") => MAY_TRIGGER,
            Some(b'p') if rest.starts_with(b"process ") => MAY_KILL,
            Some(b'p') if rest.starts_with(b"page allocation failure") => MAY_ALLOCATION,
            Some(b's') if rest.starts_with(b"segfault at ") => MAY_SEGFAULT,
            Some(b'g') if rest.starts_with(b"general protection ") => MAY_TRAP,
            Some(b't') if rest.starts_with(b"trap ") => MAY_TRAP,
            Some(b'e') if rest.starts_with(b"error, dev ") => MAY_BLOCK_ERROR,
            _ => 0,
        };
    }
    hints
}

impl KernelParser {
    /// A parser with the given options.
    pub fn new(options: KernelOptions) -> Self {
        KernelParser {
            oom: OomAssembler::new(options.limits),
            options,
            records: VecDeque::new(),
            stats: ParseStats::default(),
            line_forms: [0; FORMS.len()],
            non_kernel_lines: 0,
            lost_kmsg_records: 0,
            last_sequence: None,
            last_form: None,
            bsd_hint: None,
            journal_monotonic_host: None,
            pending_allocation: None,
            pending_hung: None,
            killer_lines: KillerLines::default(),
            prefixed_lines: 0,
            garbage: CountedLines::default(),
            unprefixed: CountedLines::default(),
            last_monotonic_us: None,
            boot_starts: Vec::new(),
            events_not_kept: 0,
            taken: 0,
            lines_before: 0,
            peeler: None,
            head: Some(Head::default()),
            paste: Paste::default(),
            paste_counts: PasteCounts::default(),
            held: None,
        }
    }

    /// Reads a block of whole lines (the whole log, or one block of a stream as
    /// [`crate::lines::LineBlocks`] hands them out), numbered on from the blocks before. A
    /// caller uses this or [`KernelParser::push_line`], not both.
    pub fn push_block(&mut self, block: &[u8]) {
        if self.peeler.is_none() {
            let head = &block[..block.len().min(64 * 1024)];
            self.peeler = Some(
                wrap::sniff(head)
                    .filter(|w| w.names_programs())
                    .map(|w| Peeler::new(w, self.options.max_line_bytes)),
            );
        }
        let mut last = 0;
        for mut line in BlockLines::new(block) {
            last = line.number;
            line.number += self.lines_before;
            self.push_line(&line);
        }
        self.lines_before += last;
    }

    /// Reads one physical line. The first lines are held until what a paste did to the text
    /// is learned from them ([`crate::paste`]); a line is held one step more when lines were
    /// wrapped by a mail client (the next may be its rest). A log whose wrapper
    /// [`KernelParser::push_block`] recognised (a journal export, an RFC 5424 relay) has it
    /// taken off next: the kernel's entries are read with the wrapper's times, other programs'
    /// counted in `non_kernel_lines`.
    pub fn push_line(&mut self, line: &Line<'_>) {
        if let Some(head) = &mut self.head {
            head.bytes += line.text.len();
            head.lines.push(Line {
                number: line.number,
                offset: line.offset,
                text: std::borrow::Cow::Owned(line.text.clone().into_owned()),
                lossy: line.lossy,
                crlf: line.crlf,
            });
            if head.lines.len() >= PASTE_HEAD_LINES || head.bytes >= PASTE_HEAD_BYTES {
                self.learn_paste();
            }
            return;
        }
        self.unpaste(line);
    }

    /// Reads one line of the log (what a paste did taken off, wrapped rests joined).
    fn process(&mut self, number: u64, text: &str) {
        let mut text: &str = text;
        if text.len() > self.options.max_line_bytes {
            self.stats.oversized_lines += 1;
            let mut end = self.options.max_line_bytes;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text = &text[..end];
        }
        match self.peeler.as_mut().and_then(Option::take) {
            Some(mut peeler) => {
                peeler.push(number, text, &mut |p| self.read_peeled(p, text));
                self.peeler = Some(Some(peeler));
            }
            None => match json_string_line(text) {
                Some(inner) => self.read_line(number, &inner, None),
                None => self.read_line(number, text, None),
            },
        }
    }

    /// One entry a wrapper held.
    fn read_peeled(&mut self, peeled: Peeled<'_>, raw: &str) {
        match peeled.kind {
            PeeledKind::Line { text, program, .. } => {
                if let Some(program) = program.as_deref().filter(|p| *p != "kernel") {
                    if services::reads(program) {
                        let time = KernelTime {
                            monotonic_us: peeled.stamp.monotonic_us,
                            wall: peeled.stamp.utc().map(|utc| WallClock {
                                civil: utc.to_zoned(jiff::tz::TimeZone::UTC).datetime(),
                                utc_offset_seconds: Some(0),
                                year_inferred: false,
                            }),
                        };
                        self.service_line(peeled.line, time, program, &text);
                    }
                    self.non_kernel_lines += 1;
                    self.prefixed_lines += 1;
                    return;
                }
                self.read_line(peeled.line, &text, Some(&peeled.stamp));
            }
            PeeledKind::Pending | PeeledKind::Blank | PeeledKind::Header => {}
            PeeledKind::Empty => self.non_kernel_lines += 1,
            PeeledKind::Unrecognized => self.garbage.add(peeled.line, raw),
            PeeledKind::Broken { head, lines, .. } => {
                self.garbage.add(peeled.line, &head);
                self.garbage.count += lines.saturating_sub(1);
            }
        }
    }

    /// Reads one line's text (out of its wrapper, with the wrapper's `stamp`, when it had one).
    fn read_line(&mut self, number: u64, text: &str, stamp: Option<&Stamp>) {
        let (mut kline, ambiguity) = prefix::parse_line_shape(text, number, &self.options);
        if let Some(stamp) = stamp {
            if kline.form == LineForm::Bare {
                kline.form = LineForm::Wrapped;
            }
            kline.time.monotonic_us = kline.time.monotonic_us.or(stamp.monotonic_us);
            if kline.time.wall.is_none() {
                kline.time.wall = stamp.utc().map(|utc| WallClock {
                    civil: utc.to_zoned(jiff::tz::TimeZone::UTC).datetime(),
                    utc_offset_seconds: Some(0),
                    year_inferred: false,
                });
            }
        }
        match (ambiguity, kline.form) {
            (Ambiguity::BsdStamp, _) => kline.form = self.bsd_hint.unwrap_or(kline.form),
            (Ambiguity::None, LineForm::Journal | LineForm::Syslog) => {
                self.bsd_hint = Some(kline.form)
            }
            _ => {}
        }
        match (kline.form, &self.journal_monotonic_host) {
            (LineForm::JournalMonotonic, known) if known.as_deref() != kline.host => {
                self.journal_monotonic_host = kline.host.map(str::to_owned);
            }
            (LineForm::Monotonic, Some(host)) if kline.caller.is_none() => {
                if let Some((host, tag, message)) =
                    prefix::journal_monotonic_other(kline.message, host)
                {
                    kline.form = LineForm::JournalMonotonic;
                    kline.host = Some(host);
                    kline.tag = Some(tag);
                    kline.message = message;
                }
            }
            _ => {}
        }
        self.line_forms[kline.form as usize] += 1;
        if let Some(us) = kline.time.monotonic_us {
            if self
                .last_monotonic_us
                .is_some_and(|last| us.saturating_add(BOOT_RESET_SLACK_US) < last)
            {
                self.boot_starts.push(number);
            }
            self.last_monotonic_us = Some(us);
        }

        if kline.form == LineForm::Bare {
            if self.last_form == Some(LineForm::Kmsg) && text.starts_with(' ') && text.contains('=')
            {
                // ` SUBSYSTEM=pci` / ` DEVICE=+pci:0000:00:01.0`: a kmsg record's dictionary.
                return;
            }
            if separator(kline.message) {
                return;
            }
        } else {
            self.prefixed_lines += 1;
        }
        self.last_form = Some(kline.form);
        if let Some(sequence) = kline.sequence {
            if let Some(last) = self.last_sequence
                && sequence > last + 1
            {
                self.lost_kmsg_records += sequence - last - 1;
            }
            self.last_sequence = Some(sequence);
        }
        if let Some(tag) = kline.tag.filter(|t| *t != "kernel") {
            if services::reads(tag) {
                self.service_line(number, kline.time, tag, kline.message);
            }
            self.non_kernel_lines += 1;
            return;
        }
        if kline.tag.is_none()
            && let Some((tag, message)) = services::tagged(kline.message)
        {
            // A pasted line that kept its program's tag (`abrt-hook-ccpp: Process …`).
            if services::reads(tag) {
                self.service_line(number, kline.time, tag, message);
            }
            self.non_kernel_lines += 1;
            return;
        }

        let consumed = self.feed_line(&kline);

        if kline.form == LineForm::Bare && !consumed {
            let message = kline.message;
            if message.starts_with([' ', '\t']) {
                return; // continuation of the line before
            }
            if message
                .chars()
                .any(|c| (c.is_control() && c != '\t') || c == '\u{fffd}')
            {
                self.garbage.add(number, message);
            } else {
                self.unprefixed.add(number, message);
            }
        }
    }

    /// Feeds the message(s) of one line to the assemblers; true when any was consumed.
    fn feed_line(&mut self, kline: &KernelLine<'_>) -> bool {
        let message = kline.message;
        let escaped_newline: Option<&str> = if kline.form == LineForm::Kmsg {
            memchr::memchr(b'\\', message.as_bytes()).and(Some("\\x0a"))
        } else {
            memchr::memchr(b'#', message.as_bytes()).and(Some("#012"))
        };
        let mut consumed = false;
        match escaped_newline.filter(|e| message.contains(e)) {
            Some(escape) => {
                for part in message.split(escape) {
                    let msg = Message {
                        line: kline.number,
                        time: kline.time,
                        text: part,
                    };
                    consumed |= self.feed_message(&msg);
                }
            }
            None => {
                let msg = Message {
                    line: kline.number,
                    time: kline.time,
                    text: message,
                };
                consumed = self.feed_message(&msg);
            }
        }
        consumed
    }

    /// One kernel message to the OOM assembler, then to the other event readers.
    fn feed_message(&mut self, msg: &Message<'_>) -> bool {
        if self.pending_hung.is_some() && self.continue_hung(msg) {
            return true;
        }
        let bytes = msg.text.as_bytes();
        let hints = event_hints(bytes);
        // Cheap gate: only lines that may belong to an OOM report go to the assembler when no
        // report is open.
        let oom_candidate = self.oom.is_open()
            || hints & (MAY_TRIGGER | MAY_KILL) != 0
            || bytes.starts_with(b"oom_reaper: ")
            || bytes.starts_with(b"oom-killer: ");
        if oom_candidate && self.oom.feed(msg) {
            return true;
        }
        if let Some((index, left)) = self.pending_allocation.take() {
            if let Some((_, pid)) = oom::cpu_line(msg.text) {
                if let KernelEvent::PageAllocationFailure(p) = &mut self.records[index].event {
                    p.pid = Some(pid);
                }
                return true;
            }
            if left > 0 {
                self.pending_allocation = Some((index, left - 1));
            }
        }
        let event = if hints & MAY_SEGFAULT != 0 {
            events::segfault(msg.text).map(KernelEvent::Segfault)
        } else if hints & MAY_ALLOCATION != 0 {
            let event = events::page_allocation_failure(msg.text);
            if event.is_some() {
                self.pending_allocation = Some((self.records.len(), ALLOCATION_CPU_WINDOW));
            }
            event.map(KernelEvent::PageAllocationFailure)
        } else if bytes.starts_with(b"INFO: task ") {
            let event = events::hung_task(msg.text);
            if event.is_some() {
                self.pending_hung = Some(PendingHung {
                    index: self.records.len(),
                    left: HUNG_REPORT_LINES,
                    in_trace: false,
                });
            }
            event.map(KernelEvent::HungTask)
        } else if hints & MAY_TRAP != 0 {
            events::trap(msg.text).map(KernelEvent::Trap)
        } else if bytes.starts_with(b"Pid ") || bytes.starts_with(b"coredump: ") {
            events::core_dump_failed(msg.text).map(KernelEvent::CoreDumpFailed)
        } else if hints & MAY_BLOCK_ERROR != 0 || storage_prefix(bytes) {
            storage::storage_error(msg.text).map(KernelEvent::StorageError)
        } else if hardware::may_be(bytes.trim_ascii_start()) {
            match hardware::hardware_line(msg.text) {
                Some(line) => return self.hardware_line(msg, line),
                None => None,
            }
        } else {
            None
        };
        match event {
            Some(event) => {
                self.push_event(KernelRecord {
                    line: msg.line,
                    end_line: msg.line,
                    time: msg.time,
                    event,
                });
                true
            }
            None => false,
        }
    }

    /// The next line of a hung task's report (its state line, stack words, `Call Trace:` and
    /// frames, registers); true when it was one.
    fn continue_hung(&mut self, msg: &Message<'_>) -> bool {
        let Some(mut pending) = self.pending_hung.take() else {
            return false;
        };
        let Some(record) = self.records.get_mut(pending.index) else {
            return false;
        };
        let KernelEvent::HungTask(task) = &mut record.event else {
            return false;
        };
        match events::hung_task_line(task, msg.text, &mut pending.in_trace) {
            events::HungLine::Other => false,
            events::HungLine::End => {
                record.end_line = msg.line;
                true
            }
            events::HungLine::Part => {
                record.end_line = msg.line;
                if pending.left > 0 {
                    pending.left -= 1;
                    self.pending_hung = Some(pending);
                }
                true
            }
        }
    }

    /// A hardware error's line ([`hardware`]): a new record, or a continuation folded into the
    /// hardware error before it (the last record, of the same source, its last line at most
    /// [`HARDWARE_WINDOW`] lines before). A continuation with no such error is left as an
    /// ordinary line (false).
    fn hardware_line(&mut self, msg: &Message<'_>, line: HardwareLine<'_>) -> bool {
        let last = self.records.back_mut().filter(|r| {
            matches!(r.event, KernelEvent::HardwareError(_))
                && msg.line.saturating_sub(r.end_line) <= HARDWARE_WINDOW
        });
        match line {
            HardwareLine::Continues(continuation) => {
                let Some(record) = last else {
                    return false;
                };
                let KernelEvent::HardwareError(error) = &mut record.event else {
                    return false;
                };
                let same_controller = continuation.memory_controller.is_none()
                    || continuation.memory_controller == error.memory_controller;
                if error.source != continuation.source || !same_controller {
                    return false;
                }
                hardware::fold(error, &continuation);
                record.end_line = msg.line;
                true
            }
            HardwareLine::Opens(error) => {
                // EDAC's decoded line (`EDAC MC1: 1 CE memory scrubbing error on …`) after its
                // driver's report of the same error (`EDAC sbridge MC1: HANDLING MCE MEMORY
                // ERROR` and the machine check's lines): one error.
                if let Some(record) = last
                    && let KernelEvent::HardwareError(driver) = &mut record.event
                    && driver.source == HardwareSource::Edac
                    && error.source == HardwareSource::Edac
                    && driver.count.is_none()
                    && driver.location.is_none()
                    && driver.memory_controller == error.memory_controller
                    && driver.message.ends_with("HANDLING MCE MEMORY ERROR")
                {
                    driver.count = error.count;
                    driver.corrected = error.corrected.or(driver.corrected);
                    driver.location = error.location;
                    driver.page = error.page;
                    if driver.details.len() < MAX_HARDWARE_DETAILS {
                        driver.details.push(error.message);
                    }
                    record.end_line = msg.line;
                    return true;
                }
                self.push_event(KernelRecord {
                    line: msg.line,
                    end_line: msg.line,
                    time: msg.time,
                    event: KernelEvent::HardwareError(*error),
                });
                true
            }
        }
    }

    /// A line of a crash reporter, of the service manager ([`services`]) or of a user-space OOM
    /// killer ([`userspace_oom`]); true when it made a record (or was folded into one, or held
    /// for the next).
    fn service_line(&mut self, number: u64, time: KernelTime, tag: &str, message: &str) -> bool {
        let program = services::program(tag);
        if userspace_oom::reads(program) {
            let event = match self.killer_lines.feed(program, message) {
                Some(KillerLine::Kill(kill)) => KernelEvent::UserspaceOomKill(*kill),
                Some(KillerLine::Held) => return true,
                None => return false,
            };
            self.push_event(KernelRecord {
                line: number,
                end_line: number,
                time,
                event,
            });
            return true;
        }
        let event = if let Some(report) = services::crash_report(tag, message) {
            KernelEvent::CrashReport(report)
        } else if let Some(unit) = services::unit_event(tag, message) {
            if unit.what == UnitEventKind::OomKill && self.fold_unit_kill(&unit, &time) {
                return true;
            }
            KernelEvent::UnitEvent(unit)
        } else {
            return false;
        };
        self.push_event(KernelRecord {
            line: number,
            end_line: number,
            time,
            event,
        });
        true
    }

    /// systemd prints one OOM kill once for the unit whose cgroup held the process and again
    /// for each slice above it, in no fixed order, within the same moment: a line whose unit is
    /// a slice above (or below) one of the last few kills' units, at the same second, is folded
    /// into that kill (the unit lowest in the tree is kept, the others listed as ancestors).
    fn fold_unit_kill(&mut self, unit: &UnitEvent, time: &KernelTime) -> bool {
        let same_moment = |t: &KernelTime| match (t.wall, time.wall) {
            (Some(a), Some(b)) => {
                let second =
                    |c: jiff::civil::DateTime| (c.date(), c.hour(), c.minute(), c.second());
                second(a.civil) == second(b.civil)
            }
            (None, None) => t
                .monotonic_us
                .zip(time.monotonic_us)
                .is_none_or(|(a, b)| a.abs_diff(b) < 1_000_000),
            _ => false,
        };
        for record in self.records.iter_mut().rev().take(16) {
            let KernelEvent::UnitEvent(kill) = &mut record.event else {
                continue;
            };
            if kill.what != UnitEventKind::OomKill || !same_moment(&record.time) {
                continue;
            }
            let above = |slice: &str, child: &str| services::slice_contains(slice, child);
            let under_kill = std::iter::once(kill.unit.as_str())
                .chain(kill.ancestors.iter().map(String::as_str))
                .any(|u| above(&unit.unit, u));
            if under_kill {
                kill.ancestors.push(unit.unit.clone());
                return true;
            }
            if above(&kill.unit, &unit.unit) {
                let slice = std::mem::replace(&mut kill.unit, unit.unit.clone());
                kill.ancestors.push(slice);
                return true;
            }
        }
        false
    }

    /// Keeps an event record within [`KernelLimits::events`].
    fn push_event(&mut self, record: KernelRecord) {
        if self.records.len() >= self.options.limits.events.max(1) {
            self.records.pop_front();
            self.events_not_kept += 1;
            self.pending_allocation = self
                .pending_allocation
                .and_then(|(index, left)| Some((index.checked_sub(1)?, left)));
            self.pending_hung = self.pending_hung.and_then(|p| {
                Some(PendingHung {
                    index: p.index.checked_sub(1)?,
                    ..p
                })
            });
        }
        self.records.push_back(record);
    }

    /// Hands over, in line order, the records that no later line can change: those before the
    /// report being assembled, before a page allocation failure still waiting for its CPU
    /// line, before a hung task still reading its stack, before the last record when it is a
    /// hardware error (its continuation lines may follow), and before the last reports a late
    /// `oom_reaper` line may complete. For a caller
    /// that writes records as it reads (`pgmortem parse kernel`): memory stays that of the few
    /// records still open, and [`KernelParser::finish`] then returns only the rest (its
    /// `stats.records` counts every record).
    pub fn take_settled(&mut self) -> Vec<KernelRecord> {
        let line_of = |index: Option<usize>| {
            index
                .and_then(|index| self.records.get(index))
                .map_or(u64::MAX, |r| r.line)
        };
        let hardware = self
            .records
            .back()
            .filter(|r| matches!(r.event, KernelEvent::HardwareError(_)))
            .map_or(u64::MAX, |r| r.line);
        let pending = line_of(self.pending_allocation.map(|(index, _)| index))
            .min(line_of(self.pending_hung.map(|p| p.index)))
            .min(hardware);
        let before = self.oom.unsettled_from().min(pending);
        let events = self.records.iter().take_while(|r| r.line < before).count();
        let mut settled: Vec<KernelRecord> = self.records.drain(..events).collect();
        if let Some((index, _)) = &mut self.pending_allocation {
            *index -= events;
        }
        if let Some(p) = &mut self.pending_hung {
            p.index -= events;
        }
        settled.extend(self.oom.take_before(before));
        settled.sort_by_key(|r| r.line);
        self.taken += settled.len() as u64;
        settled
    }

    /// Ends the input: closes any open report (as truncated) and returns the log.
    pub fn finish(mut self) -> KernelLog {
        self.learn_paste();
        self.release_held();
        let mut records = Vec::from(self.records);
        let (reports, oom_reports_not_kept, oom_details_dropped) = self.oom.finish();
        records.extend(reports);
        records.sort_by_key(|r| r.line);
        let mut stats = self.stats;
        stats.records = self.taken + records.len() as u64;
        let mut examples = self.garbage.examples;
        let mut count = self.garbage.count;
        if self.prefixed_lines > 0 {
            count += self.unprefixed.count;
            examples.extend(self.unprefixed.examples);
        }
        examples.sort_by_key(|(n, _)| *n);
        for (number, text) in examples.iter().take(ParseStats::MAX_EXAMPLES) {
            stats.unrecognized(*number, text);
        }
        stats.unrecognized_lines = count;
        KernelLog {
            records,
            pasted: PasteReport::new(self.paste, self.paste_counts),
            stats,
            line_forms: FORMS
                .iter()
                .zip(self.line_forms)
                .filter(|(_, n)| *n > 0)
                .map(|(form, n)| (*form, n))
                .collect(),
            non_kernel_lines: self.non_kernel_lines,
            lost_kmsg_records: self.lost_kmsg_records,
            boot_starts: self.boot_starts,
            oom_reports_not_kept,
            oom_details_dropped,
            events_not_kept: self.events_not_kept,
        }
    }
}

/// A kernel line printed as an element of a JSON array of strings, one a line, as Ansible
/// prints a command's `stdout_lines` (`    "[9319106.907176] repmgrd[16089]: segfault at …", `):
/// the string's text, unescaped, when it starts with a kernel line's prefix (`[`, `<`, a digit
/// or a month name: any other JSON string is left to be read, or counted, as it is).
fn json_string_line(text: &str) -> Option<std::borrow::Cow<'_, str>> {
    let t = text.trim();
    let t = t.strip_suffix(',').unwrap_or(t).trim_end();
    let inner = t.strip_prefix('"')?.strip_suffix('"')?;
    if inner.len() < 2 || inner.ends_with('\\') && !inner.ends_with("\\\\") {
        return None;
    }
    let first = inner.as_bytes()[0];
    if !(first == b'[' || first == b'<' || first.is_ascii_digit() || first.is_ascii_uppercase()) {
        return None;
    }
    let unescaped = if inner.contains('\\') {
        let mut out = String::with_capacity(inner.len());
        let mut chars = inner.chars();
        while let Some(c) = chars.next() {
            match (c, chars.clone().next()) {
                ('\\', Some(n @ ('"' | '\\' | '/'))) => {
                    out.push(n);
                    chars.next();
                }
                ('\\', Some('t')) => {
                    out.push('\t');
                    chars.next();
                }
                _ => out.push(c),
            }
        }
        std::borrow::Cow::Owned(out)
    } else {
        std::borrow::Cow::Borrowed(inner)
    };
    // Only a string that is a kernel line: its prefix has a form of its own.
    let probe = prefix::parse_line(&unescaped, 0, &KernelOptions::default());
    (probe.form != LineForm::Bare).then_some(unescaped)
}

/// Whether a message starts as the storage errors [`storage::storage_error`] reads do (those of
/// the block layer are found by [`event_hints`] instead).
fn storage_prefix(bytes: &[u8]) -> bool {
    match bytes.first() {
        Some(b'E') => bytes.starts_with(b"EXT4-fs ") || bytes.starts_with(b"EXT3-fs "),
        Some(b'X') => bytes.starts_with(b"XFS ("),
        Some(b'A') => bytes.starts_with(b"Aborting journal on device "),
        Some(b'B') => bytes.starts_with(b"Buffer I/O error on dev"),
        Some(b's') => bytes.starts_with(b"sd "),
        Some(b'n') => bytes.starts_with(b"nvme"),
        _ => bytes.starts_with(b"EXT2-fs "),
    }
}

/// Lines that only separate: blank, grep's `--`, journalctl's `-- Boot 3f2a… --`,
/// `-- Logs begin at …`, `-- No entries --`.
fn separator(message: &str) -> bool {
    let t = message.trim();
    t.is_empty()
        || t == "--"
        || (t.starts_with("-- ")
            && (t.ends_with(" --")
                || t.starts_with("-- Logs begin")
                || t.starts_with("-- Journal begins")))
}

/// How sure it is that `head` (the first few KiB of a file) is a kernel log; `None` when it is
/// not one. Used by the bundle reader to recognise files by content.
///
/// Reads up to 200 lines, with what a paste did undone ([`crate::paste`]): the share of lines
/// with a kernel prefix (dmesg, kmsg, or a journal/syslog line tagged `kernel`) decides. A
/// report pasted without times (`CONFIG_PRINTK_TIME=n`, a ticket) is one when three lines in
/// ten (three at least) have the shape of an OOM report's lines (stack frames, Mem-Info,
/// zones, task rows, …) and one of them opens or ends a report (trigger, selection, kill
/// line); bare lines naming
/// OOM-killer or stack-dump messages count as weaker evidence. A journal or syslog excerpt with
/// no kernel line is one when most of its lines are systemd's about a unit's OOM kill, failure
/// or memory peak, a crash reporter's ([`services`]) or a user-space OOM killer's (any line of
/// systemd-oomd or earlyoom: their whole output is about memory, [`userspace_oom`]).
pub fn sniff(head: &[u8]) -> Option<f32> {
    if let Some((kernel, total)) = wrapped_lines(head) {
        if total == 0 || kernel == 0 {
            return None;
        }
        let share = kernel as f32 / total as f32;
        return Some(if share >= 0.5 {
            0.5 + share / 2.0
        } else {
            0.2 + share
        });
    }
    let options = KernelOptions::default();
    let lines: Vec<Line<'_>> = Lines::new(head).take(200).collect();
    let paste = Paste::learn(lines.iter().map(|l| &*l.text), &oom::indented_by_kernel);
    let mut counts = PasteCounts::default();
    let mut total = 0u32;
    let mut kernel = 0u32;
    let mut hints = 0u32;
    // Lines of the service manager and crash reporters this reader makes records of.
    let mut services = 0u32;
    let (mut shaped, mut opening) = (0u32, 0u32);
    for line in &lines {
        let Cleaned::Line(text) = paste.clean(&line.text, &mut counts) else {
            continue;
        };
        let kline = parse_line(text, line.number, &options);
        if separator(kline.message) {
            continue;
        }
        total += 1;
        let tagged_kernel = kline.tag == Some("kernel");
        match kline.form {
            LineForm::Monotonic | LineForm::Ctime | LineForm::Iso | LineForm::Kmsg => kernel += 1,
            LineForm::JournalMonotonic
            | LineForm::Journal
            | LineForm::JournalIso
            | LineForm::Syslog
                if tagged_kernel =>
            {
                kernel += 1;
            }
            LineForm::JournalMonotonic
            | LineForm::Journal
            | LineForm::JournalIso
            | LineForm::Syslog
                if kline.tag.is_some_and(|tag| {
                    services::reads(tag)
                        && (services::unit_event(tag, kline.message).is_some()
                            || services::crash_report(tag, kline.message).is_some()
                            || userspace_oom::reads(services::program(tag)))
                }) =>
            {
                services += 1;
            }
            _ => {
                match oom::report_shape(kline.message) {
                    Some(oom::Shape::Opens) => {
                        opening += 1;
                        shaped += 1;
                    }
                    Some(oom::Shape::Inside) => shaped += 1,
                    None => {}
                }
                let b = kline.message.as_bytes();
                let hint = [
                    &b" invoked oom-killer"[..],
                    b"Killed process ",
                    b"Call Trace:",
                    b"Mem-Info:",
                    b"Mem-info:",
                    b"]: segfault at ",
                    b"oom-kill:constraint=",
                ]
                .iter()
                .any(|n| memchr::memmem::find(b, n).is_some());
                if hint {
                    hints += 1;
                }
            }
        }
    }
    if total == 0 {
        return None;
    }
    let share = kernel as f32 / total as f32;
    let report = (kernel + shaped) as f32 / total as f32;
    if kernel == 0 && services > 0 && services * 2 >= total {
        // A journal or syslog excerpt of systemd's lines about an OOM kill (or a crash
        // reporter's) with no kernel line: the kernel log's reader makes their records.
        return Some(0.5);
    }
    if share >= 0.5 {
        Some(0.5 + share / 2.0)
    } else if opening > 0 && shaped >= 3 && report >= 0.3 {
        Some((0.4 + report / 2.0).min(0.9))
    } else if kernel + hints > 0 && (kernel + hints) as f32 / total as f32 >= 0.05 {
        Some(0.2 + share)
    } else {
        None
    }
}

/// Whether `head` is a system log holding both the kernel's lines and PostgreSQL's (a journal
/// export or short form, a `/var/log/messages` or `syslog` file): at least one line tagged
/// `kernel` and one tagged `postgres…` (or `postmaster`), read through the wrapper when there
/// is one. Such a file is read by both readers.
pub fn sniff_system_log(head: &[u8]) -> bool {
    let postgres = |tag: &str| tag.starts_with("postgres") || tag.starts_with("postmaster");
    let (mut kernel, mut pg) = (0u32, 0u32);
    if let Some(wrapper) = wrap::sniff(head).filter(|w| w.names_programs()) {
        let mut peeler = Peeler::new(wrapper, 64 * 1024);
        for line in Lines::new(head) {
            peeler.push(line.number, &line.text, &mut |p| {
                if let PeeledKind::Line { program, .. } = p.kind {
                    kernel += u32::from(program.as_deref() == Some("kernel"));
                    pg += u32::from(program.as_deref().is_some_and(postgres));
                }
            });
        }
    } else {
        let options = KernelOptions::default();
        for line in Lines::new(head).take(2000) {
            let kline = parse_line(&line.text, line.number, &options);
            if kline.form == LineForm::Bare {
                continue;
            }
            kernel += u32::from(kline.tag == Some("kernel"));
            pg += u32::from(kline.tag.is_some_and(postgres));
        }
    }
    kernel > 0 && pg > 0
}

/// In a wrapped log whose entries name their program (a journal export, an RFC 5424 relay):
/// how many of the lines of `head` are the kernel's, of how many. `None` when not wrapped so.
pub(crate) fn wrapped_lines(head: &[u8]) -> Option<(u32, u32)> {
    let wrapper = wrap::sniff(head).filter(|w| w.names_programs())?;
    let mut peeler = Peeler::new(wrapper, 64 * 1024);
    let (mut kernel, mut total) = (0u32, 0u32);
    for line in Lines::new(head).take(2000) {
        peeler.push(line.number, &line.text, &mut |p| {
            if let PeeledKind::Line { program, .. } = p.kind {
                total += 1;
                kernel += u32::from(program.as_deref() == Some("kernel"));
            }
        });
    }
    Some((kernel, total))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_table_matches_discriminants() {
        for (i, form) in FORMS.iter().enumerate() {
            assert_eq!(*form as usize, i);
        }
    }

    #[test]
    fn event_hints_find_key_words() {
        assert_eq!(
            event_hints(b"rs:main Q:Reg invoked oom-killer: gfp_mask=0x0"),
            MAY_TRIGGER
        );
        assert_eq!(
            event_hints(b"Out of memory (oom_kill_allocating_task): Killed process 1 (x)"),
            MAY_KILL
        );
        assert_eq!(event_hints(b"x[1]: segfault at 0 ip 0"), MAY_SEGFAULT);
        assert_eq!(
            event_hints(b"kworker/0:1: page allocation failure: order:0"),
            MAY_ALLOCATION
        );
        assert_eq!(event_hints(b"usb 1-1: new device"), 0);
    }

    #[test]
    fn kernel_lines_inside_json_strings_are_peeled() {
        // Ansible's `stdout_lines`, one string a line, a comma and a space after each.
        let line = r#"        "[9319106.907176] repmgrd[16089]: segfault at 0 ip 1 sp 2 error 6 in libpq.so.5.10[7f1f+45000]", "#;
        assert_eq!(
            json_string_line(line).as_deref(),
            Some(
                "[9319106.907176] repmgrd[16089]: segfault at 0 ip 1 sp 2 error 6 in libpq.so.5.10[7f1f+45000]"
            )
        );
        let escaped = r#""Jun  9 17:32:03 ec2 kernel: [589818.846658] a \"quoted\" word""#;
        assert_eq!(
            json_string_line(escaped).as_deref(),
            Some(r#"Jun  9 17:32:03 ec2 kernel: [589818.846658] a "quoted" word"#)
        );
        // JSON strings that are not kernel lines, and lines that are not JSON strings.
        assert!(json_string_line(r#"    "kernel_log_entries.stdout_lines": ["#).is_none());
        assert!(json_string_line(r#"    "msg": "All items completed""#).is_none());
        assert!(json_string_line(r#""Some text, not a kernel line", "#).is_none());
        assert!(json_string_line("[ 12.5] plain dmesg line").is_none());
        let log = parse(
            b"ok: [localhost] => {\n    \"x.stdout_lines\": [\n        \"[9319309.118546] traps: repmgrd[17707] general protection ip:7f5c sp:7ffd error:0 in libc-2.23.so[7f5c+1c0000]\", \n",
            &KernelOptions::default(),
        );
        let KernelEvent::Trap(t) = &log.records[0].event else {
            panic!("{:?}", log.records)
        };
        assert_eq!((t.comm.as_str(), t.pid), ("repmgrd", 17707));
        assert_eq!(log.records[0].time.monotonic_us, Some(9_319_309_118_546));
        // The Ansible lines around it are counted, not taken as understood.
        assert_eq!(log.stats.unrecognized_lines, 2);
    }

    #[test]
    fn a_journal_of_systemd_oom_lines_is_a_kernel_log() {
        let oom = b"Aug 26 10:49:58 host systemd[1]: postgresql.service: A process of this unit has been killed by the OOM killer.\n\
Aug 26 10:49:58 host systemd[1]: postgresql.service: Failed with result 'oom-kill'.\n";
        assert!(sniff(oom).is_some());
        let log = parse(oom, &KernelOptions::default());
        assert_eq!(log.records.len(), 2);
        assert_eq!((log.stats.unrecognized_lines, log.non_kernel_lines), (0, 2));
        // systemd's ordinary lines are not evidence of anything the reader reads.
        let routine = b"Aug 26 10:49:58 host systemd[1]: Started Session 3 of user root.\n\
Aug 26 10:49:59 host systemd[1]: session-3.scope: Deactivated successfully.\n";
        assert!(sniff(routine).is_none());
    }

    #[test]
    fn systemd_reports_one_kill_again_for_each_slice_above_its_unit() {
        // fixtures/wild/openprescribing-systemd-oom-kill-slices: five lines, two kills.
        let text = b"2026-02-08T00:40:07.136582+00:00 h systemd[1]: user-1021.slice: A process of this unit has been killed by the OOM killer.\n\
2026-02-08T00:40:07.136757+00:00 h systemd[1]: system-postgresql.slice: A process of this unit has been killed by the OOM killer.\n\
2026-02-08T00:40:07.136808+00:00 h systemd[1]: user@1021.service: A process of this unit has been killed by the OOM killer.\n\
2026-02-08T00:40:07.136852+00:00 h systemd[1]: user.slice: A process of this unit has been killed by the OOM killer.\n\
2026-02-08T00:40:07.136897+00:00 h systemd[1]: system.slice: A process of this unit has been killed by the OOM killer.\n";
        let log = parse(text, &KernelOptions::default());
        let units: Vec<(&str, Vec<&str>)> = log
            .records
            .iter()
            .filter_map(|r| match &r.event {
                KernelEvent::UnitEvent(u) => Some((
                    u.unit.as_str(),
                    u.ancestors.iter().map(String::as_str).collect(),
                )),
                _ => None,
            })
            .collect();
        assert_eq!(
            units,
            [
                ("user@1021.service", vec!["user-1021.slice", "user.slice"]),
                ("system-postgresql.slice", vec!["system.slice"]),
            ]
        );
        // A second later, the same units are another kill.
        let later = String::from_utf8_lossy(text).replace(":07.", ":09.");
        let both = format!("{}{later}", String::from_utf8_lossy(text));
        assert_eq!(
            parse(both.as_bytes(), &KernelOptions::default())
                .records
                .len(),
            4
        );
    }
}
