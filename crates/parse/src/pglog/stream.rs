//! The streaming engine behind [`super::parse`]: format and prefix chosen from the first lines,
//! then lines fed one by one to the format's reader, records handed out as they are finished.
//! [`records`] iterates over a buffer; [`PgLogReader`] takes chunks (a file read piece by piece)
//! and keeps only the unfinished last line and the record window.

use std::collections::VecDeque;

use super::assemble::Assembler;
use super::csvlog::CsvReader;
use super::jsonlog::JsonReader;
use super::peeled::PeeledReader;
use super::severity;
use super::unpaste::{learn_paste, maybe_wrapped, rejoined_prefixes, set_wraps, unpasted_head};
use super::{
    Counters, DETECTION_LINES, LogLinePrefix, PgLog, PgLogError, PgLogFormat, PgLogOptions,
    PgRecord, PrefixChoice, cut, detect_prefix, sniff_format,
};
use crate::lines::Lines;
use crate::paste::{Cleaned, Paste, PasteCounts, PasteReport};
use crate::wrap::{self, Content, PeeledKind, Wrapper};

/// A format's reader.
pub(super) enum Engine {
    Stderr(Box<Assembler>),
    Csv(Box<CsvReader>),
    Json(Box<JsonReader>),
    /// Any of the others, inside a wrapper ([`crate::wrap`]): syslog, the journal, container
    /// runtimes, cloud services.
    Peeled(Box<PeeledReader>),
}

impl Engine {
    /// A reader of the same format and prefix, at the start of a log.
    pub(super) fn fresh(&self) -> Engine {
        let mut fresh = match self {
            Engine::Stderr(a) => Engine::Stderr(Box::new(a.fresh())),
            Engine::Csv(c) => Engine::Csv(Box::new(c.fresh())),
            Engine::Json(_) => Engine::Json(Box::new(JsonReader::new())),
            Engine::Peeled(p) => Engine::Peeled(Box::new(p.fresh())),
        };
        fresh.counters_mut().prefix_choice = self.counters().prefix_choice.clone();
        fresh.counters_mut().paste_shape = self.counters().paste_shape;
        fresh
    }

    /// True when both readers will turn any further lines into the same records (what waits in
    /// the record window, the open part, the partial csv row, the languages seen), whatever
    /// their counters say.
    pub(super) fn same_state(&self, other: &Engine) -> bool {
        match (self, other) {
            (Engine::Stderr(a), Engine::Stderr(b)) => a.same_state(b),
            (Engine::Csv(a), Engine::Csv(b)) => a.same_state(b),
            (Engine::Json(a), Engine::Json(b)) => a.same_state(b),
            (Engine::Peeled(a), Engine::Peeled(b)) => a.same_state(b),
            _ => false,
        }
    }

    /// True when `text` starts a record for sure (a chunk of the log may begin there):
    /// stderr, a line fitting the prefix with a primary severity word; csvlog, a line starting
    /// with a `%m` stamp and a comma; jsonlog, any line; a wrapped log, as its wrapper says.
    pub(super) fn starts_record(&self, text: &str) -> bool {
        let shape = self.counters().paste_shape;
        let text = match shape.clean(text, &mut PasteCounts::default()) {
            Cleaned::Line(text) => text,
            Cleaned::Fence | Cleaned::Cut => return false,
        };
        self.starts_record_unpasted(text)
    }

    /// [`Engine::starts_record`] of a line the paste was taken off (a wrapped entry's text).
    pub(super) fn starts_record_unpasted(&self, text: &str) -> bool {
        match self {
            Engine::Stderr(a) => {
                let primary =
                    |rest: &str| matches!(severity::split(rest), Some((severity::Tag::Main(_), _)));
                a.prefix().match_line(text, &primary).is_some()
            }
            Engine::Csv(_) => super::csvlog::looks_like_row(text),
            Engine::Peeled(p) => p.starts_record(text),
            Engine::Json(_) => true,
        }
    }

    /// Reads one line.
    pub(super) fn line(&mut self, number: u64, text: &str) {
        match self {
            Engine::Stderr(a) => a.push(number, text, None),
            Engine::Csv(c) => c.push(number, text),
            Engine::Json(j) => j.push(number, text),
            Engine::Peeled(p) => p.push(number, text),
        }
    }

    pub(super) fn finish(&mut self) {
        match self {
            Engine::Stderr(a) => a.finish(),
            Engine::Csv(c) => c.finish(),
            Engine::Json(_) => {}
            Engine::Peeled(p) => p.finish(),
        }
    }

    /// The next finished record, counted by event kind and language.
    pub(super) fn pop(&mut self) -> Option<Box<PgRecord>> {
        let record = self.pop_uncounted()?;
        self.counters_mut().count(&record);
        Some(record)
    }

    /// The next finished record, not counted yet.
    pub(super) fn pop_uncounted(&mut self) -> Option<Box<PgRecord>> {
        match self {
            Engine::Stderr(a) => a.pop(),
            Engine::Csv(c) => c.pop(),
            Engine::Json(j) => j.pop(),
            Engine::Peeled(p) => p.pop(),
        }
    }

    /// The line of the next finished record of the reader itself (not of a wrapper's side
    /// reader), if any.
    pub(super) fn peek_line(&self) -> Option<u64> {
        match self {
            Engine::Stderr(a) => a.peek_line(),
            Engine::Csv(c) => c.peek_line(),
            Engine::Json(j) => j.peek_line(),
            Engine::Peeled(p) => p.inner().peek_line(),
        }
    }

    /// Records started so far, and the first line of the latest.
    pub(super) fn started(&self) -> (u64, u64) {
        match self {
            Engine::Stderr(a) => a.started(),
            Engine::Csv(c) => c.started(),
            Engine::Json(j) => j.started(),
            Engine::Peeled(p) => p.inner().started(),
        }
    }

    /// The wrapper its lines are taken out of, when the log's format does not name it already
    /// (syslog, the journal's short forms and JSON, RFC 5424, Heroku, Cloud SQL and
    /// CloudNativePG are formats of their own: `None`).
    pub(super) fn wrapper(&self) -> Option<Wrapper> {
        match self {
            Engine::Peeled(p) if legacy_format(p.wrapper()).is_none() => Some(p.wrapper()),
            _ => None,
        }
    }

    pub(super) fn counters(&self) -> &Counters {
        match self {
            Engine::Stderr(a) => a.counters(),
            Engine::Csv(c) => &c.counters,
            Engine::Json(j) => &j.counters,
            Engine::Peeled(p) => p.counters(),
        }
    }

    pub(super) fn counters_mut(&mut self) -> &mut Counters {
        match self {
            Engine::Stderr(a) => a.counters_mut(),
            Engine::Csv(c) => &mut c.counters,
            Engine::Json(j) => &mut j.counters,
            Engine::Peeled(p) => p.counters_mut(),
        }
    }

    pub(super) fn prefix(&self) -> &str {
        match self {
            Engine::Stderr(a) => a.prefix().as_str(),
            Engine::Peeled(p) => p.inner().prefix(),
            Engine::Csv(_) | Engine::Json(_) => "",
        }
    }
}

/// The format a wrapper is reported as when it was one of pgmortem's formats before wrappers
/// were taken off in one place (`--format syslog`, `journal`, …: a contract kept).
pub(super) fn legacy_format(wrapper: Wrapper) -> Option<PgLogFormat> {
    Some(match wrapper {
        Wrapper::Syslog => PgLogFormat::Syslog,
        Wrapper::Syslog5424 => PgLogFormat::Syslog5424,
        Wrapper::JournalShort => PgLogFormat::Journal,
        Wrapper::JournalJson => PgLogFormat::JournalJson,
        Wrapper::Heroku => PgLogFormat::Heroku,
        Wrapper::CloudSql => PgLogFormat::CloudSql,
        Wrapper::Cnpg => PgLogFormat::Cnpg,
        _ => return None,
    })
}

/// The wrapper a format of [`legacy_format`] is.
fn legacy_wrapper(format: PgLogFormat) -> Option<Wrapper> {
    Some(match format {
        PgLogFormat::Syslog => Wrapper::Syslog,
        PgLogFormat::Syslog5424 => Wrapper::Syslog5424,
        PgLogFormat::Journal => Wrapper::JournalShort,
        PgLogFormat::JournalJson => Wrapper::JournalJson,
        PgLogFormat::Heroku => Wrapper::Heroku,
        PgLogFormat::CloudSql => Wrapper::CloudSql,
        PgLogFormat::Cnpg => Wrapper::Cnpg,
        PgLogFormat::Stderr | PgLogFormat::Csv | PgLogFormat::Json => return None,
    })
}

/// The part of `input` format and prefix are chosen from: its first [`DETECTION_LINES`]
/// lines, but no line that the first MiB cuts short. The same whatever the caller read so far
/// (a whole buffer, a reader's pending chunks, a parallel block), so every way in chooses the
/// same way.
fn detection_head(input: &[u8]) -> &[u8] {
    const LIMIT: usize = 1 << 20;
    let end = nth_line_end(input, DETECTION_LINES, LIMIT);
    // Only a line the limit cuts is left out: a short log's last line without a newline stays.
    if input.len() <= LIMIT || input[end - 1] == b'\n' {
        return &input[..end];
    }
    match memchr::memrchr(b'\n', &input[..end]) {
        Some(last) => &input[..=last],
        None => &input[..end],
    }
}

/// Chooses wrapper, format and prefix from the first lines of `head` (see
/// [`detection_head`]) and builds the engine. A wrapper is taken off the first lines before
/// the format and prefix of what it wraps are chosen from them.
pub(super) fn start(
    head: &[u8],
    options: &PgLogOptions,
) -> Result<(PgLogFormat, Engine), PgLogError> {
    let head = detection_head(head);
    // A wrapper's lines (a journal export's fields, a runtime's JSON) are no paste's; other
    // lines have what a paste did undone before anything is chosen from them (a wrapper too).
    let raw_wrapper = chosen_wrapper(head, options);
    let paste = if raw_wrapper.is_some() {
        Paste::default()
    } else {
        learn_paste(head)
    };
    let cleaned = unpasted_head(head, &paste);
    let head: &[u8] = &cleaned;
    let wrapper = raw_wrapper.or_else(|| {
        if paste.is_plain() {
            None
        } else {
            chosen_wrapper(head, options)
        }
    });
    let Some(wrapper) = wrapper else {
        return start_unwrapped(head, options, paste, true);
    };
    let mut peeler = crate::wrap::Peeler::new(wrapper, options.max_record_bytes);
    let mut peeled: Vec<(u64, String)> = Vec::new();
    let mut rows = false;
    for line in Lines::new(head).take(DETECTION_LINES) {
        let text = cut(&line.text, options.max_line_bytes);
        peeler.push(line.number, text, &mut |p| {
            if let PeeledKind::Line {
                text,
                program,
                content,
                ..
            } = p.kind
                && (!wrapper.names_programs() || program.as_deref().is_some_and(wrap::is_postgres))
            {
                match content {
                    Content::Text => peeled.push((line.number, text.into_owned())),
                    Content::CsvRow => rows = true,
                    Content::DefaultStderr => {}
                }
            }
        });
    }
    let legacy = legacy_format(wrapper);
    let inner_format = match (legacy, options.format) {
        // The formats the wrappers of old were read as: stderr inside, csvlog rows for
        // CloudNativePG.
        (Some(PgLogFormat::Cnpg), _) => PgLogFormat::Csv,
        (Some(_), _) => PgLogFormat::Stderr,
        // The wrapper's rows are csvlog rows (Azure's).
        (None, _) if rows => PgLogFormat::Csv,
        (None, Some(format)) if legacy_wrapper(format).is_none() => format,
        (None, _) => {
            let mut bytes = Vec::new();
            for (_, text) in &peeled {
                bytes.extend_from_slice(text.as_bytes());
                bytes.push(b'\n');
            }
            match sniff_format(&bytes) {
                format @ (PgLogFormat::Csv | PgLogFormat::Json) => format,
                _ => PgLogFormat::Stderr,
            }
        }
    };
    let inner = inner_engine(inner_format, &peeled, options, paste, false)?;
    let reader = PeeledReader::new(wrapper, inner, options.max_record_bytes);
    Ok((
        legacy.unwrap_or(inner_format),
        Engine::Peeled(Box::new(reader)),
    ))
}

/// The wrapper `options` give (by `--wrapper`, or a format that is a wrapper's), else the one
/// around the first lines ([`sniff_wrapper`]).
fn chosen_wrapper(head: &[u8], options: &PgLogOptions) -> Option<Wrapper> {
    match (options.wrapper, options.format) {
        (Some(w), _) => Some(w),
        (None, Some(format)) => legacy_wrapper(format),
        (None, None) => sniff_wrapper(head),
    }
}

/// The wrapper around the first lines: a container runtime's log or a journal export by
/// [`wrap::sniff`], else the one a first line names ([`super::sniff_head`]).
pub(super) fn sniff_wrapper(head: &[u8]) -> Option<Wrapper> {
    let voted = wrap::sniff(head).filter(|w| {
        matches!(
            w,
            Wrapper::DockerJson | Wrapper::Cri | Wrapper::Timestamped | Wrapper::JournalExport
        )
    });
    voted.or_else(|| super::sniff_head(head).1)
}

/// [`start`] for a log that is not wrapped (or once the wrapper is off).
fn start_unwrapped(
    head: &[u8],
    options: &PgLogOptions,
    paste: Paste,
    may_wrap: bool,
) -> Result<(PgLogFormat, Engine), PgLogError> {
    let format = options.format.unwrap_or_else(|| sniff_format(head));
    let lines: Vec<(u64, String)> = match format {
        PgLogFormat::Stderr => Lines::new(head)
            .take(DETECTION_LINES)
            .map(|l| (l.number, cut(&l.text, options.max_line_bytes).to_owned()))
            .collect(),
        _ => Vec::new(),
    };
    Ok((
        format,
        inner_engine(format, &lines, options, paste, may_wrap)?,
    ))
}

/// The reader of stderr (its prefix chosen from `lines`, a terminal's wraps of a pasted log
/// found in them when `may_wrap`), csvlog or jsonlog; `paste` is what a paste did to the lines.
fn inner_engine(
    format: PgLogFormat,
    lines: &[(u64, String)],
    options: &PgLogOptions,
    mut paste: Paste,
    may_wrap: bool,
) -> Result<Engine, PgLogError> {
    let engine = match format {
        PgLogFormat::Csv => Engine::Csv(Box::new(CsvReader::new(options.max_record_bytes))),
        PgLogFormat::Json => Engine::Json(Box::new(JsonReader::new())),
        _ => {
            let (prefix, choice) = if may_wrap && maybe_wrapped(&paste, lines) {
                choose_prefix(options, &rejoined_prefixes(lines))?
            } else {
                choose_prefix(options, lines)?
            };
            if may_wrap {
                set_wraps(&mut paste, &prefix, lines);
            }
            let mut assembler = Box::new(Assembler::new(prefix, options.max_record_bytes));
            assembler.set_wrap(paste.wrap_width, paste.hard_wrap, paste.padded);
            assembler.counters_mut().prefix_choice = Some(choice);
            Engine::Stderr(assembler)
        }
    };
    let mut engine = engine;
    engine.counters_mut().paste_shape = paste;
    Ok(engine)
}

/// The prefix given in `options` (checked against the first `lines`), else the one detected
/// from them.
fn choose_prefix(
    options: &PgLogOptions,
    lines: &[(u64, String)],
) -> Result<(LogLinePrefix, PrefixChoice), PgLogError> {
    match &options.prefix {
        Some(text) => {
            let prefix = LogLinePrefix::compile(text)?;
            let choice = check_prefix_fits(&prefix, lines)?;
            Ok((prefix, choice))
        }
        None => Ok(detect_prefix(lines.iter().map(|(_, t)| t.as_str()))),
    }
}

/// A prefix given by the user must fit at least one of the first lines (when there are any
/// besides blank and TAB-continued ones). Returns how many it fits.
fn check_prefix_fits(
    prefix: &LogLinePrefix,
    lines: &[(u64, String)],
) -> Result<PrefixChoice, PgLogError> {
    let tail_ok = |rest: &str| severity::split(rest).is_some();
    let mut first = None;
    let (mut tried, mut fitting) = (0u64, 0u64);
    for (number, text) in lines {
        if text.trim().is_empty() || text.starts_with('\t') {
            continue;
        }
        tried += 1;
        if prefix.match_line(text, &tail_ok).is_some() {
            fitting += 1;
        } else {
            first.get_or_insert((*number, text));
        }
    }
    match first {
        Some((line_number, line)) if fitting == 0 => Err(PgLogError::PrefixMatchesNothing {
            prefix: prefix.as_str().to_owned(),
            lines_tried: tried,
            line_number,
            line: cut(line, 200).to_owned(),
        }),
        _ => Ok(PrefixChoice {
            method: "given",
            lines_tried: tried,
            lines_fitting: fitting,
        }),
    }
}

/// Feeds one physical line: counted, cut when too long, then read by the engine.
pub(super) fn feed(
    engine: &mut Engine,
    number: u64,
    text: &str,
    lossy: bool,
    crlf: bool,
    max_line_bytes: usize,
) {
    let counters = engine.counters_mut();
    counters.stats.lines += 1;
    if lossy {
        counters.stats.invalid_utf8_lines += 1;
    }
    if crlf {
        counters.paste.crlf_lines += 1;
    }
    let shape = counters.paste_shape;
    let text = match shape.clean(text, &mut counters.paste) {
        Cleaned::Line(text) => text,
        // Counted in the paste's counts: not part of the log.
        Cleaned::Fence | Cleaned::Cut => return,
    };
    let cut_text = cut(text, max_line_bytes);
    if cut_text.len() < text.len() {
        counters.stats.oversized_lines += 1;
    }
    engine.line(number, cut_text);
}

/// The summary of what was read so far, without records.
pub(super) fn summary(engine: &Engine, format: PgLogFormat) -> PgLog {
    let c = engine.counters();
    PgLog {
        prefix: engine.prefix().to_owned(),
        format,
        wrapper: engine.wrapper(),
        records: Vec::new(),
        stats: c.stats.clone(),
        continuation_lines: c.continuation_lines,
        orphan_lines: c.orphan_lines,
        memory_context_lines: c.memory_context_lines,
        blank_lines: c.blank_lines,
        other_program_lines: c.other_program_lines,
        header_lines: c.header_lines,
        broken_rows: c.broken_rows,
        unreadable_stamps: c.unreadable_stamps.clone(),
        prefix_choice: c.prefix_choice.clone(),
        pasted: PasteReport::new(c.paste_shape, c.paste),
        events: c.events.to_map(),
        languages: c.languages.to_map(),
    }
}

/// Iterator over the records of a log held in memory; see [`records`].
pub struct PgRecords<'a> {
    lines: LineSource<'a>,
    engine: Engine,
    format: PgLogFormat,
    max_line_bytes: usize,
    finished: bool,
}

/// The records of `input` one by one, in input order. Besides `input`, memory stays bounded
/// (the 16-record window). [`PgRecords::summary`] gives the counts once iteration is done.
///
/// # Errors
/// As [`super::parse`].
pub fn records<'a>(input: &'a [u8], options: &PgLogOptions) -> Result<PgRecords<'a>, PgLogError> {
    let (format, engine) = start(input, options)?;
    Ok(PgRecords {
        lines: LineSource::new(input, format),
        engine,
        format,
        max_line_bytes: options.max_line_bytes,
        finished: false,
    })
}

/// The byte offset after the `n`-th line of `input` (or after `max_bytes`, or the end).
fn nth_line_end(input: &[u8], n: usize, max_bytes: usize) -> usize {
    let limit = input.len().min(max_bytes);
    memchr::memchr_iter(b'\n', &input[..limit])
        .nth(n.saturating_sub(1))
        .map_or(limit, |i| i + 1)
}

impl PgRecords<'_> {
    /// Prefix, format and counts of what was read so far (`records` empty).
    pub fn summary(&self) -> PgLog {
        summary(&self.engine, self.format)
    }
}

impl Iterator for PgRecords<'_> {
    type Item = Box<PgRecord>;

    fn next(&mut self) -> Option<Box<PgRecord>> {
        loop {
            if let Some(record) = self.engine.pop() {
                return Some(record);
            }
            if self.finished {
                return None;
            }
            match self.lines.next() {
                Some(line) => {
                    feed(
                        &mut self.engine,
                        line.number,
                        &line.text,
                        line.lossy,
                        line.crlf,
                        self.max_line_bytes,
                    );
                }
                None => {
                    self.engine.finish();
                    self.finished = true;
                }
            }
        }
    }
}

/// Push-based reader for logs of any size: [`PgLogReader::push`] chunks of bytes as they are
/// read, take records with [`PgLogReader::next_record`], call [`PgLogReader::finish`] at the
/// end. Lines are read as records are asked for, [`FEED_BATCH_BYTES`] at a time, so a record
/// is handed out while it is still in cache. Memory: the first lines until format and prefix
/// are chosen (1000 lines or 1 MiB), then the chunks not read yet (read ahead once they pass
/// [`UNREAD_LIMIT_BYTES`]), the unfinished last line (at most `max_line_bytes`) and the record
/// window.
pub struct PgLogReader {
    options: PgLogOptions,
    /// Bytes pushed: the head while detecting, then lines not read yet from `read` on.
    pending: Vec<u8>,
    /// How much of `pending` was read already.
    read: usize,
    /// How many bytes after `read` are known to hold no newline (a long line pushed in small
    /// chunks is searched once, not again on every push).
    unread_without_newline: usize,
    running: Option<(PgLogFormat, Engine)>,
    /// Newlines in `pending` while detecting.
    head_lines: usize,
    line_number: u64,
    /// Dropping the rest of a line longer than `max_line_bytes`.
    skipping: bool,
    finished: bool,
    ready: VecDeque<Box<PgRecord>>,
}

/// How many bytes of lines [`PgLogReader::next_record`] reads at a time: the records they make
/// stay in cache until they are taken.
const FEED_BATCH_BYTES: usize = 64 * 1024;

/// Bytes pushed but not read beyond which [`PgLogReader::push`] reads them at once (a caller
/// pushing without taking records keeps bounded memory).
const UNREAD_LIMIT_BYTES: usize = 16 << 20;

impl PgLogReader {
    /// A reader with these options.
    pub fn new(options: PgLogOptions) -> Self {
        PgLogReader {
            options,
            pending: Vec::new(),
            read: 0,
            unread_without_newline: 0,
            running: None,
            head_lines: 0,
            line_number: 0,
            skipping: false,
            finished: false,
            ready: VecDeque::new(),
        }
    }

    /// Takes the next chunk of the log.
    ///
    /// # Errors
    /// As [`super::parse`], when format and prefix get chosen during this call.
    pub fn push(&mut self, chunk: &[u8]) -> Result<(), PgLogError> {
        if self.read > 0 && self.read >= self.pending.len() / 2 {
            // What was read is dropped once it is half the buffer (one copy per byte at most).
            self.pending.drain(..self.read);
            self.read = 0;
        }
        self.pending.extend_from_slice(chunk);
        if self.running.is_none() {
            self.head_lines += memchr::memchr_iter(b'\n', chunk).count();
            if self.head_lines < DETECTION_LINES && self.pending.len() < (1 << 20) {
                return Ok(());
            }
            self.running = Some(start(&self.pending, &self.options)?);
        }
        if self.pending.len() - self.read > UNREAD_LIMIT_BYTES {
            self.read_lines(usize::MAX);
            self.drain();
        }
        Ok(())
    }

    /// Ends the input: the last line (without newline) and every waiting record are handed out.
    ///
    /// # Errors
    /// As [`super::parse`], when the whole log was shorter than the detection window.
    pub fn finish(&mut self) -> Result<(), PgLogError> {
        if self.finished {
            return Ok(());
        }
        if self.running.is_none() {
            self.running = Some(start(&self.pending, &self.options)?);
        }
        self.read_lines(usize::MAX);
        if self.read < self.pending.len() && !self.skipping {
            let rest = std::mem::take(&mut self.pending);
            self.feed_lines(&rest[self.read..]);
        }
        self.pending.clear();
        self.read = 0;
        if let Some((_, engine)) = &mut self.running {
            engine.finish();
        }
        self.finished = true;
        self.drain();
        Ok(())
    }

    /// The next finished record (boxed: a record is large, and handing out the box moves a
    /// pointer instead of copying the record). `None` when the lines pushed so far hold no
    /// further finished record.
    pub fn next_record(&mut self) -> Option<Box<PgRecord>> {
        loop {
            if let Some(record) = self.ready.pop_front() {
                return Some(record);
            }
            let (_, engine) = self.running.as_mut()?;
            if let Some(record) = engine.pop() {
                return Some(record);
            }
            if !self.read_lines(FEED_BATCH_BYTES) {
                return None;
            }
        }
    }

    /// Prefix, format and counts so far (`records` empty). Before format and prefix are chosen:
    /// the defaults.
    pub fn summary(&self) -> PgLog {
        match &self.running {
            Some((format, engine)) => summary(engine, *format),
            None => PgLog::default(),
        }
    }

    fn drain(&mut self) {
        if let Some((_, engine)) = &mut self.running {
            while let Some(r) = engine.pop() {
                self.ready.push_back(r);
            }
        }
    }

    /// Reads the complete lines of `pending` from `read` on, about `budget` bytes of them (whole
    /// lines, at least one); a line that grows past `max_line_bytes` without a newline is read
    /// cut and the remainder skipped. False when there was nothing to read.
    fn read_lines(&mut self, budget: usize) -> bool {
        if self.running.is_none() {
            return false;
        }
        // Taken out to feed from it, put back after (its allocation kept).
        let mut pending = std::mem::take(&mut self.pending);
        let mut start = self.read;
        if self.skipping {
            match memchr::memchr(b'\n', &pending[start..]) {
                Some(nl) => {
                    start += nl + 1;
                    self.skipping = false;
                    self.unread_without_newline = 0;
                }
                None => {
                    // The skipped bytes are dropped.
                    pending.clear();
                    self.read = 0;
                    self.unread_without_newline = 0;
                    self.pending = pending;
                    return false;
                }
            }
        }
        let known = (start + self.unread_without_newline).min(pending.len());
        let end = if known > start {
            // The line was searched before: only the bytes pushed since are.
            memchr::memchr(b'\n', &pending[known..]).map_or(start, |i| known + i + 1)
        } else {
            let limit = pending.len().min(start.saturating_add(budget));
            match memchr::memrchr(b'\n', &pending[start..limit]) {
                Some(i) => start + i + 1,
                None => memchr::memchr(b'\n', &pending[limit..]).map_or(start, |i| limit + i + 1),
            }
        };
        self.unread_without_newline = if end == start {
            pending.len() - start
        } else {
            0
        };
        self.feed_lines(&pending[start..end]);
        let mut fed = end > start;
        let max = self.options.max_line_bytes;
        if end == start && pending.len() - end > max.saturating_add(4) {
            // An over-long line: feed what the limit keeps now, drop the rest up to its newline.
            self.feed_lines(&pending[end..end + max + 4]);
            self.skipping = true;
            pending.clear();
            self.read = 0;
            self.unread_without_newline = 0;
            fed = true;
        } else {
            self.read = end;
        }
        self.pending = pending;
        fed
    }

    fn feed_lines(&mut self, bytes: &[u8]) {
        let Some((format, engine)) = &mut self.running else {
            return;
        };
        for line in LineSource::new(bytes, *format) {
            self.line_number += 1;
            feed(
                engine,
                self.line_number,
                &line.text,
                line.lossy,
                line.crlf,
                self.options.max_line_bytes,
            );
        }
    }
}

/// The lines of a buffer: [`ValidLines`] for stderr and syslog (short lines, most of the cost
/// per line), [`Lines`] for csvlog and jsonlog (long lines, measured faster one by one).
pub(super) enum LineSource<'a> {
    Valid(ValidLines<'a>),
    Plain(Lines<'a>),
}

impl<'a> LineSource<'a> {
    pub(super) fn new(input: &'a [u8], format: PgLogFormat) -> Self {
        match format {
            PgLogFormat::Stderr
            | PgLogFormat::Syslog
            | PgLogFormat::Syslog5424
            | PgLogFormat::Journal
            | PgLogFormat::Heroku => LineSource::Valid(ValidLines::new(input)),
            PgLogFormat::Csv
            | PgLogFormat::Json
            | PgLogFormat::JournalJson
            | PgLogFormat::CloudSql
            | PgLogFormat::Cnpg => LineSource::Plain(Lines::new(input)),
        }
    }
}

impl<'a> Iterator for LineSource<'a> {
    type Item = crate::lines::Line<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            LineSource::Valid(lines) => lines.next(),
            LineSource::Plain(lines) => lines.next(),
        }
    }
}

/// How many bytes [`ValidLines`] validates at a time.
const VALID_RUN_BYTES: usize = 64 * 1024;

/// [`Lines`] for a buffer that is mostly valid UTF-8: the buffer is validated in long runs
/// (one pass at memory speed) and lines are cut out of the valid text, instead of validating
/// every line on its own; a line holding invalid bytes is decoded lossily as [`Lines`] does.
/// Same lines, numbers and `lossy` flags as [`Lines`].
pub(super) struct ValidLines<'a> {
    input: &'a [u8],
    pos: usize,
    number: u64,
    /// `input[..valid_end]` from `valid_from` on is known to be valid UTF-8: `valid`.
    valid_from: usize,
    valid: &'a str,
}

impl<'a> ValidLines<'a> {
    pub(super) fn new(input: &'a [u8]) -> Self {
        let mut lines = ValidLines {
            input,
            pos: 0,
            number: 0,
            valid_from: 0,
            valid: "",
        };
        lines.validate_from(0);
        lines
    }

    /// Finds the valid run starting at `from` (at most [`VALID_RUN_BYTES`], so that the lines
    /// are cut out while the run is still in cache).
    fn validate_from(&mut self, from: usize) {
        let rest = &self.input[from..];
        let rest = &rest[..rest.len().min(VALID_RUN_BYTES)];
        self.valid_from = from;
        self.valid = match crate::lines::utf8(rest) {
            Some(valid) => valid,
            // Validated again to find the error: only where the input is not UTF-8.
            None => match std::str::from_utf8(rest) {
                Ok(valid) => valid,
                Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).unwrap_or_default(),
            },
        };
    }
}

impl<'a> Iterator for ValidLines<'a> {
    type Item = crate::lines::Line<'a>;

    fn next(&mut self) -> Option<Self::Item> {
        let start = self.pos;
        if start >= self.input.len() {
            return None;
        }
        let rest = &self.input[start..];
        let (len, advance) = match memchr::memchr(b'\n', rest) {
            Some(i) => (i, i + 1),
            None => (rest.len(), rest.len()),
        };
        let mut end = start + len;
        let crlf = end > start && self.input[end - 1] == b'\r';
        if crlf {
            end -= 1;
        }
        self.pos += advance;
        self.number += 1;
        // Lines start at or after `valid_from`: a run is (re)started only at a line start.
        let valid_end = self.valid_from + self.valid.len();
        let (text, lossy) = if end <= valid_end {
            let text = self
                .valid
                .get(start - self.valid_from..end - self.valid_from)
                .unwrap_or_default();
            (std::borrow::Cow::Borrowed(text), false)
        } else {
            // The run stops inside this line (invalid bytes, or the run's length limit):
            // decode it alone, start a new run after it.
            let bytes = &self.input[start..end];
            let decoded = crate::lines::decode(bytes);
            self.validate_from(self.pos);
            decoded
        };
        Some(crate::lines::Line {
            number: self.number,
            offset: start,
            text,
            lossy,
            crlf,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_lines_are_the_lines() {
        let inputs: [&[u8]; 8] = [
            b"",
            b"a\r\nb\n\nc",
            b"\xff\nok\n\xe2\x82\nmore \xe2\x82\xac\n\r\n",
            b"ok\nbad \xc3\n",
            b"\n\n\xff",
            "déjà\nvu\n".as_bytes(),
            b"x\xe2\x82\xacy\nz",
            b"\xe2\x82\xac",
        ];
        let mut long = Vec::new();
        for i in 0..5000 {
            long.extend(format!("line {i} déjà vu € ").as_bytes());
            if i % 7 == 0 {
                long.push(b'\n');
            }
            if i % 1999 == 0 {
                long.push(0xff);
            }
        }
        let want: Vec<_> = Lines::new(&long).collect();
        let got: Vec<_> = ValidLines::new(&long).collect();
        assert_eq!(got, want, "lines across runs");
        for input in inputs {
            let want: Vec<_> = Lines::new(input).collect();
            let got: Vec<_> = ValidLines::new(input).collect();
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(input));
        }
    }
}
