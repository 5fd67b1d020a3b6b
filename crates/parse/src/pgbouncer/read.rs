//! The reader: bytes pushed in, lines split (cut and counted when too long), the form chosen
//! from the first lines, each line read in that form (its envelope taken off by the wrapper
//! layer's [`Peeler`] when it has one), records handed out once no later line can continue
//! them.

use std::collections::VecDeque;

use crate::kernel::calendar;
use crate::lines::decode;

use crate::pglog::time::StampCache;
use crate::pglog::{NameCounts, PgTime, wrapper_pg_time};
use crate::wrap::{Part, Peeled, PeeledKind, Peeler, Stamp, Wrapper, Written};

use super::types::{BouncerEvent, BouncerLevel, BouncerRecord, Side};
use super::{BouncerForm, BouncerLog, BouncerOptions, events, grammar, sniff_line};

/// Lines read to choose the form when the options give none: the first one whose shape
/// says, among the first [`DETECTION_LINES`] (or [`DETECTION_BYTES`]); the file's own form
/// when none does.
const DETECTION_LINES: usize = 1000;
/// See [`DETECTION_LINES`].
const DETECTION_BYTES: usize = 1 << 20;

/// Push-based reader of a pgbouncer log of any size: [`BouncerReader::push`] chunks of bytes
/// as they are read, take records with [`BouncerReader::next_record`], call
/// [`BouncerReader::finish`] at the end. Memory: the unfinished last line (at most
/// `max_line_bytes`), the first lines until the form is chosen, the record that may still be
/// continued, and the records not taken yet.
pub struct BouncerReader {
    options: BouncerOptions,
    /// The form, once chosen.
    form: Option<BouncerForm>,
    /// Lines read before the form was chosen (number, text, lossy).
    head: Vec<(u64, String, bool)>,
    head_bytes: usize,
    /// Bytes of the line not finished yet.
    partial: Vec<u8>,
    /// Dropping the rest of a line longer than `max_line_bytes`.
    skipping: bool,
    line_number: u64,
    peeler: Option<Peeler>,
    stamps: StampCache,
    /// The last record: a TAB line may still continue it.
    open: Option<Box<BouncerRecord>>,
    ready: VecDeque<Box<BouncerRecord>>,
    /// Counts but those by name.
    log: BouncerLog,
    tallies: Tallies,
}

impl BouncerReader {
    /// A reader with these options.
    pub fn new(options: BouncerOptions) -> Self {
        let form = options.form;
        let mut reader = BouncerReader {
            options,
            form: None,
            head: Vec::new(),
            head_bytes: 0,
            partial: Vec::new(),
            skipping: false,
            line_number: 0,
            peeler: None,
            stamps: StampCache::default(),
            open: None,
            ready: VecDeque::new(),
            log: BouncerLog::default(),
            tallies: Tallies::default(),
        };
        if let Some(form) = form {
            reader.choose(form);
        }
        reader
    }

    /// Takes the next chunk of the log.
    pub fn push(&mut self, chunk: &[u8]) {
        let mut rest = chunk;
        while !rest.is_empty() {
            if self.skipping {
                match memchr::memchr(b'\n', rest) {
                    Some(nl) => {
                        self.skipping = false;
                        rest = &rest[nl + 1..];
                    }
                    None => return,
                }
                continue;
            }
            match memchr::memchr(b'\n', rest) {
                Some(nl) => {
                    if self.partial.is_empty() {
                        self.line(&rest[..nl]);
                    } else {
                        self.partial.extend_from_slice(&rest[..nl]);
                        let line = std::mem::take(&mut self.partial);
                        self.line(&line);
                        self.partial = line;
                        self.partial.clear();
                    }
                    rest = &rest[nl + 1..];
                }
                None => {
                    self.partial.extend_from_slice(rest);
                    if self.partial.len() > self.options.max_line_bytes {
                        // A line that will not end within the limit: read its start, skip
                        // the rest.
                        let line = std::mem::take(&mut self.partial);
                        self.line(&line);
                        self.skipping = true;
                    }
                    return;
                }
            }
        }
    }

    /// Ends the input: the last line (without a newline) and every waiting record are handed
    /// out.
    pub fn finish(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.line(&line);
        }
        self.skipping = false;
        if self.form.is_none() {
            self.choose(BouncerForm::File);
        }
        if let Some(mut peeler) = self.peeler.take() {
            peeler.finish(&mut |p| self.peeled(p, ""));
            self.peeler = Some(peeler);
        }
        self.close_open();
    }

    /// The next finished record (boxed: a record is large, and handing out the box moves a
    /// pointer instead of copying the record).
    pub fn next_record(&mut self) -> Option<Box<BouncerRecord>> {
        self.ready.pop_front()
    }

    /// The form and counts so far (`records` empty).
    pub fn summary(&self) -> BouncerLog {
        let mut log = self.log.clone();
        log.form = self.form.unwrap_or_default();
        log.events = self.tallies.events.to_map();
        log.client_closings = self.tallies.client_closings.to_map();
        log.server_closings = self.tallies.server_closings.to_map();
        log.pooler_errors = self.tallies.pooler_errors.to_map();
        log
    }

    /// One physical line (without its newline).
    fn line(&mut self, bytes: &[u8]) {
        self.line_number += 1;
        self.log.stats.lines += 1;
        let mut bytes = bytes;
        if let [head @ .., b'\r'] = bytes {
            bytes = head;
        }
        if bytes.len() > self.options.max_line_bytes {
            self.log.stats.oversized_lines += 1;
            bytes = &bytes[..self.options.max_line_bytes];
        }
        let (text, lossy) = decode(bytes);
        if lossy {
            self.log.stats.invalid_utf8_lines += 1;
        }
        let number = self.line_number;
        if self.form.is_some() {
            self.read(number, &text);
            return;
        }
        // Choosing the form: keep the line until a line says which.
        let decided = sniff_line(&text);
        self.head_bytes += text.len();
        self.head.push((number, text.into_owned(), lossy));
        let form = match decided {
            Some(form) => form,
            None if self.head.len() >= DETECTION_LINES || self.head_bytes >= DETECTION_BYTES => {
                BouncerForm::File
            }
            None => return,
        };
        self.choose(form);
    }

    /// Settles the form and reads the lines kept meanwhile.
    fn choose(&mut self, form: BouncerForm) {
        self.form = Some(form);
        let wrapper = match form {
            BouncerForm::File => None,
            BouncerForm::Syslog => Some(Wrapper::Syslog),
            BouncerForm::Syslog5424 => Some(Wrapper::Syslog5424),
            BouncerForm::Journal => Some(Wrapper::JournalShort),
            BouncerForm::JournalJson => Some(Wrapper::JournalJson),
        };
        self.peeler = wrapper.map(|w| Peeler::new(w, self.options.max_line_bytes.max(1 << 20)));
        for (number, text, _) in std::mem::take(&mut self.head) {
            self.read(number, &text);
        }
        self.head_bytes = 0;
    }

    /// Reads line `number` in the chosen form.
    fn read(&mut self, number: u64, text: &str) {
        let Some(mut peeler) = self.peeler.take() else {
            self.plain(number, text);
            return;
        };
        peeler.push(number, text, &mut |p| self.peeled(p, text));
        self.peeler = Some(peeler);
    }

    /// What the wrapper held on physical line `raw`: pgbouncer's lines read, other programs'
    /// and the wrapper's own lines counted.
    fn peeled(&mut self, p: Peeled<'_>, raw: &str) {
        match p.kind {
            PeeledKind::Line {
                text,
                program,
                pid,
                part,
                ..
            } => {
                if !program
                    .as_deref()
                    .is_some_and(|n| n.starts_with("pgbouncer"))
                {
                    // One entry of another program, counted once.
                    if part != Part::NextLine {
                        self.log.other_program_lines += 1;
                    }
                    return;
                }
                if part == Part::NextLine {
                    // The further lines of one entry's message.
                    self.log.continuation_lines += 1;
                }
                self.enveloped(p.line, &text, pid, &p.stamp, p.priority);
            }
            PeeledKind::Empty => self.log.other_program_lines += 1,
            PeeledKind::Pending => self.log.continuation_lines += 1,
            PeeledKind::Blank => self.log.blank_lines += 1,
            // pgbouncer's forms have no header row.
            PeeledKind::Header => self.log.stats.unrecognized(p.line, raw),
            PeeledKind::Unrecognized => self.log.stats.unrecognized(p.line, raw),
            PeeledKind::Broken {
                head,
                lines,
                pending,
            } => self.broken(p.line, &head, lines, pending),
        }
    }

    /// A JSON entry of `lines` lines given up: all unrecognised, and the `counted` of them
    /// counted as continuation lines while it was gathered no longer are.
    fn broken(&mut self, first_line: u64, head: &str, lines: u64, counted: u64) {
        let log = &mut self.log;
        log.stats.unrecognized(first_line, head);
        log.stats.unrecognized_lines += lines.saturating_sub(1);
        log.continuation_lines = log.continuation_lines.saturating_sub(counted);
    }

    // 2026-11-28 05:30:10.375 UTC [31113] WARNING C-0x55e5be25d0b0: reportdb/postgres@127.0.0.1:40092 pooler error: …
    /// A line of pgbouncer's own log file.
    fn plain(&mut self, number: u64, text: &str) {
        if text.trim().is_empty() {
            self.log.blank_lines += 1;
            return;
        }
        if let Some(rest) = text.strip_prefix('\t') {
            if !self.continue_open(number, rest) {
                self.log.stats.unrecognized(number, text);
            }
            return;
        }
        let Ok((message, head)) = grammar::head(text) else {
            self.log.stats.unrecognized(number, text);
            return;
        };
        let time = self.stamp_time(number, head.stamp, head.millis);
        self.start(number, time, Some(head.pid), Some(head.level), message);
    }

    /// One line of a syslog or journal entry of entry line `line`: pgbouncer's message alone
    /// (what it sends to syslog and, under systemd, to the journal), or a whole line of its
    /// stderr.
    fn enveloped(
        &mut self,
        line: u64,
        piece: &str,
        pid: Option<u32>,
        stamp: &Stamp<'_>,
        priority: Option<u8>,
    ) {
        if let Some(rest) = piece.strip_prefix('\t') {
            if !self.continue_open(line, rest) {
                self.log.stats.unrecognized(line, piece);
            }
            return;
        }
        if piece.trim().is_empty() {
            return;
        }
        if let Ok((message, head)) = grammar::head(piece) {
            let time = self.stamp_time(line, head.stamp, head.millis);
            self.start(line, time, Some(head.pid), Some(head.level), message);
            return;
        }
        let time = match &stamp.written {
            Some(Written::Bsd(text)) => self.bsd_time(text),
            _ => stamp.time().map(wrapper_pg_time),
        };
        let level = priority.and_then(BouncerLevel::from_priority);
        self.start(line, time, pid, level, piece);
    }

    /// The time of a BSD stamp (`Nov 28 05:27:47`, `Nov 28 05:27:47.836709`) in the year the
    /// options give; `None` without one.
    fn bsd_time(&self, text: &str) -> Option<PgTime> {
        let mut parts = text.split_ascii_whitespace();
        let month = calendar::month(parts.next()?)?;
        let day: i8 = parts.next()?.parse().ok()?;
        let clock = calendar::clock(parts.next()?)?;
        let year = calendar::year_of(self.options.year, self.options.collected_on, month, day)?;
        Some(PgTime {
            civil: calendar::civil(year, month, day, clock)?,
            zone: None,
            utc: None,
        })
    }

    /// The time of pgbouncer's stamp; a stamp of the right shape that is no time (a month 13)
    /// is counted and gives none.
    fn stamp_time(&mut self, number: u64, stamp: &str, millis: bool) -> Option<PgTime> {
        let time = self.stamps.get(stamp, millis);
        if time.is_none() {
            self.log.unreadable_stamps.add(number, stamp);
        }
        time
    }

    /// Starts a record; the one before is finished.
    fn start(
        &mut self,
        number: u64,
        time: Option<PgTime>,
        pid: Option<u32>,
        level: Option<BouncerLevel>,
        message: &str,
    ) {
        self.close_open();
        let (connection, message) = match grammar::connection(message) {
            Ok((rest, connection)) => (Some(connection), rest.to_owned()),
            Err(_) => (None, message.to_owned()),
        };
        self.open = Some(Box::new(BouncerRecord {
            line: number,
            end_line: number,
            time,
            pid,
            level,
            connection,
            message,
            event: None,
        }));
    }

    /// Appends a TAB-continued line to the open record's message.
    fn continue_open(&mut self, number: u64, text: &str) -> bool {
        let Some(open) = self.open.as_mut() else {
            return false;
        };
        if open.message.len() + text.len() > self.options.max_line_bytes {
            self.log.stats.oversized_lines += 1;
        } else {
            open.message.push('\n');
            open.message.push_str(text);
        }
        open.end_line = number;
        self.log.continuation_lines += 1;
        true
    }

    /// Finishes the open record: its event read from the whole message, counted, handed out.
    fn close_open(&mut self) {
        let Some(mut record) = self.open.take() else {
            return;
        };
        record.event = events::classify(&record.message, record.level);
        self.log.stats.records += 1;
        self.tallies.count(&record);
        self.ready.push_back(record);
    }
}

/// The counts by name a reader keeps while it reads (cheap on the hot path: a handful of
/// names, found by address), made maps by [`BouncerReader::summary`].
#[derive(Debug, Default)]
struct Tallies {
    events: NameCounts,
    client_closings: NameCounts,
    server_closings: NameCounts,
    pooler_errors: NameCounts,
}

impl Tallies {
    /// Counts a record handed out.
    fn count(&mut self, record: &BouncerRecord) {
        let Some(event) = &record.event else {
            return;
        };
        self.events.add(event.kind(), 1);
        match event {
            BouncerEvent::Closing { cause, .. } => {
                let side = record.connection.as_ref().map(|c| c.side);
                let counts = if side == Some(Side::Server) {
                    &mut self.server_closings
                } else {
                    &mut self.client_closings
                };
                counts.add(cause.as_str(), 1);
            }
            BouncerEvent::PoolerError { cause, .. } => {
                self.pooler_errors.add(cause.as_str(), 1);
            }
            _ => {}
        }
    }
}
