//! The streaming reader: lines in, [`PerfSample`]s out, every line accounted for.

use std::borrow::Cow;

use super::grammar::{self, RawEvent, RawFrame};
use super::types::{Frame, PerfHeader, PerfLineCounts, PerfSample};
use crate::ParseStats;
use crate::lines::{Line, Lines};

/// Frames kept per sample; frame lines beyond are dropped and counted (perf's own default
/// limit, `kernel.perf_event_max_stack`, is 127).
pub const MAX_FRAMES: usize = 8192;

/// Lines longer than this are cut before parsing and counted in `oversized_lines`.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Iterator over the samples of a `perf script` text, in input order.
///
/// Cheap: one pass, no copy of valid UTF-8 input (records borrow from it), one `Vec` of
/// frames per sample. Header lines, comments and blank lines are consumed on the way;
/// [`Samples::stats`], [`Samples::counts`] and [`Samples::header`] describe what has been read
/// so far (complete once the iterator returned `None`).
///
/// A sample ends at a blank line, at the next event line, or at the end of the input (a
/// truncated last stack is still a sample). Lines that fit nowhere are counted in
/// `stats.unrecognized_lines`: a frame line without an event line above it, garbage between
/// samples, an event line with missing fields.
#[derive(Debug)]
pub struct Samples<'a> {
    lines: LineSource<'a>,
    stats: ParseStats,
    counts: PerfLineCounts,
    header: PerfHeader,
    in_header: bool,
    open: Option<Open<'a>>,
}

#[derive(Debug)]
struct Open<'a> {
    sample: PerfSample<'a>,
    /// The frame came on the event line (no call chain): the next line is tried as an event
    /// line first.
    flat: bool,
    /// The last line was a frame, so a following indented non-frame line is its srcline.
    after_frame: bool,
}

/// What a [`Samples`] reader carries from one block of an input to the next: the header,
/// the counts, and the line numbers reached. See [`Samples::resume`].
#[derive(Debug, Default)]
pub struct SamplesState {
    stats: ParseStats,
    counts: PerfLineCounts,
    header: PerfHeader,
    in_header: bool,
}

impl<'a> Samples<'a> {
    /// Reads `input`, the bytes of a `perf script` output.
    pub fn new(input: &'a [u8]) -> Self {
        Self::resume(input, SamplesState::default())
    }

    /// Reads `input`, the next block of an input whose earlier blocks left `state`: line
    /// numbers, counts and the header go on from there. For input read in blocks, each cut
    /// where a sample starts ([`super::last_sample_start`]), so that no sample spans two: the
    /// samples and counts are those of the whole input read at once.
    pub fn resume(input: &'a [u8], state: SamplesState) -> Self {
        Self {
            lines: LineSource::new(input, state.stats.lines),
            stats: state.stats,
            counts: state.counts,
            header: state.header,
            in_header: state.in_header,
            open: None,
        }
    }

    /// Reads what is left of the block (samples not taken yet are counted, not returned) and
    /// returns the state the next block resumes from.
    pub fn into_state(mut self) -> SamplesState {
        while self.next().is_some() {}
        SamplesState {
            stats: self.stats,
            counts: self.counts,
            header: self.header,
            in_header: self.in_header,
        }
    }

    /// Line statistics so far; `records` counts the samples returned.
    pub fn stats(&self) -> &ParseStats {
        &self.stats
    }

    /// Perf-specific line counts so far.
    pub fn counts(&self) -> &PerfLineCounts {
        &self.counts
    }

    /// The header block, once read (it precedes the samples).
    pub fn header(&self) -> &PerfHeader {
        &self.header
    }

    /// Consumes the reader and returns its header, statistics and counts.
    pub fn finish(self) -> (PerfHeader, ParseStats, PerfLineCounts) {
        let state = self.into_state();
        (state.header, state.stats, state.counts)
    }

    fn emit(&mut self, open: Open<'a>) -> PerfSample<'a> {
        self.stats.records += 1;
        open.sample
    }

    /// Handles one line; returns a sample when the line closed one.
    fn line(&mut self, line: Line<'a>) -> Option<PerfSample<'a>> {
        self.stats.lines += 1;
        if line.lossy {
            self.stats.invalid_utf8_lines += 1;
        }
        let number = line.number;
        let mut text = line.text;
        if text.len() > MAX_LINE_BYTES {
            self.stats.oversized_lines += 1;
            let mut end = MAX_LINE_BYTES;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text = match text {
                Cow::Borrowed(s) => Cow::Borrowed(&s[..end]),
                Cow::Owned(mut s) => {
                    s.truncate(end);
                    Cow::Owned(s)
                }
            };
        }
        let trimmed = text.trim_end();

        if self.in_header && !trimmed.starts_with('#') {
            // Every header line starts with `#`: a block never closed ends here.
            self.in_header = false;
        }
        if self.in_header {
            self.counts.header_lines += 1;
            if trimmed.starts_with("# ========") {
                self.in_header = false;
            } else {
                match grammar::header_entry(trimmed) {
                    Some((k, v)) => self.header.entries.push((k.to_owned(), v.to_owned())),
                    None => {
                        let note = trimmed.trim_start_matches('#').trim();
                        if !note.is_empty() {
                            self.header.notes.push(note.to_owned());
                        }
                    }
                }
            }
            return None;
        }
        if trimmed.starts_with('#') {
            if trimmed.starts_with("# ========") {
                self.in_header = true;
                self.counts.header_lines += 1;
            } else {
                self.counts.comment_lines += 1;
            }
            return None;
        }
        if trimmed.is_empty() {
            self.counts.blank_lines += 1;
            return self.open.take().map(|o| self.emit(o));
        }

        let indented = trimmed.starts_with([' ', '\t']);
        if let Some(flat) = self.open.as_ref().map(|o| o.flat) {
            // Inside a sample: a frame of its call chain, the next event line (no blank line
            // in between without -g), or a srcline under the last frame.
            let frame_first = indented && !flat;
            if frame_first {
                if let Some(raw) = grammar::frame(trimmed) {
                    self.push_frame(number, &text, trimmed, raw);
                    return None;
                }
            }
            if let Some(event) = grammar::event_line(trimmed) {
                let next = self.start(number, &text, event);
                return self.open.replace(next).map(|o| self.emit(o));
            }
            if !frame_first {
                if let Some(raw) = grammar::frame(trimmed) {
                    self.push_frame(number, &text, trimmed, raw);
                    return None;
                }
            }
            let open = self.open.as_mut().expect("checked above");
            // perf prints a srcline two spaces in: `  file.c:123`, `  [kernel.kallsyms][ffff…]`.
            if trimmed.starts_with(' ') && open.after_frame {
                if let Some(last) = open.sample.frames.last_mut() {
                    last.srcline = Some(sub(&text, trimmed.trim_start()));
                    open.after_frame = false;
                    self.counts.srcline_lines += 1;
                    return None;
                }
            }
            self.stats.unrecognized(number, trimmed);
            return None;
        }

        match grammar::event_line(trimmed) {
            Some(event) => {
                self.open = Some(self.start(number, &text, event));
            }
            None => self.stats.unrecognized(number, trimmed),
        }
        None
    }

    fn start(&mut self, number: u64, text: &Cow<'a, str>, event: RawEvent<'_>) -> Open<'a> {
        let flat = event.frame.is_some();
        // Room for a typical call chain up front: growing by doubling costs more.
        let mut frames = Vec::with_capacity(if flat { 1 } else { 32 });
        if let Some(raw) = &event.frame {
            self.counts.frame_lines += 1;
            frames.push(frame(text, raw));
        }
        Open {
            sample: PerfSample {
                line: number,
                comm: sub(text, event.comm),
                pid: event.pid,
                tid: event.tid,
                cpu: event.cpu,
                time: event.time,
                event: sub(text, event.event),
                period: event.period,
                trace: event.trace.map(|t| sub(text, t)),
                frames,
            },
            flat,
            after_frame: flat,
        }
    }

    // `text` stays a Cow: whether it borrows the input decides whether the frame can.
    #[allow(clippy::ptr_arg)]
    fn push_frame(&mut self, number: u64, text: &Cow<'a, str>, trimmed: &str, raw: RawFrame<'_>) {
        self.counts.frame_lines += 1;
        let open = self.open.as_mut().expect("called inside a sample");
        if open.sample.frames.len() >= MAX_FRAMES {
            self.counts.frames_over_limit += 1;
            open.after_frame = false;
            self.stats.unrecognized(number, trimmed);
            return;
        }
        open.sample.frames.push(frame(text, &raw));
        open.after_frame = true;
    }
}

impl<'a> Iterator for Samples<'a> {
    type Item = PerfSample<'a>;

    fn next(&mut self) -> Option<PerfSample<'a>> {
        loop {
            match self.lines.next() {
                Some(line) => {
                    if let Some(sample) = self.line(line) {
                        return Some(sample);
                    }
                }
                None => return self.open.take().map(|o| self.emit(o)),
            }
        }
    }
}

/// Lines of the input. Valid UTF-8 input (the usual case) is checked once as a whole and
/// then split without checking each line again; otherwise [`Lines`] decodes line by line.
#[derive(Debug)]
enum LineSource<'a> {
    Valid {
        text: &'a str,
        pos: usize,
        number: u64,
    },
    /// Lines, and the number of the line before the first.
    Checked(Lines<'a>, u64),
}

impl<'a> LineSource<'a> {
    /// The lines of `input`, numbered on from `before`.
    fn new(input: &'a [u8], before: u64) -> Self {
        match std::str::from_utf8(input) {
            Ok(text) => LineSource::Valid {
                text,
                pos: 0,
                number: before,
            },
            Err(_) => LineSource::Checked(Lines::new(input), before),
        }
    }

    fn next(&mut self) -> Option<Line<'a>> {
        match self {
            LineSource::Checked(lines, before) => lines.next().map(|mut line| {
                line.number += *before;
                line
            }),
            LineSource::Valid { text, pos, number } => {
                if *pos >= text.len() {
                    return None;
                }
                let start = *pos;
                let rest = &text.as_bytes()[start..];
                let (len, advance) = match memchr::memchr(b'\n', rest) {
                    Some(i) => (i, i + 1),
                    None => (rest.len(), rest.len()),
                };
                let mut line = &text[start..start + len];
                let crlf = line.ends_with('\r');
                if crlf {
                    line = &line[..line.len() - 1];
                }
                *pos += advance;
                *number += 1;
                Some(Line {
                    number: *number,
                    offset: start,
                    text: Cow::Borrowed(line),
                    lossy: false,
                    crlf,
                })
            }
        }
    }
}

fn frame<'a>(text: &Cow<'a, str>, raw: &RawFrame<'_>) -> Frame<'a> {
    Frame {
        address: raw.address,
        symbol: sub(text, raw.symbol),
        offset: raw.offset,
        dso: sub(text, raw.dso),
        inlined: raw.inlined,
        srcline: None,
    }
}

/// `piece` is a slice of `text`: borrow it from the input when `text` is borrowed, copy it
/// when the line had to be decoded lossily.
fn sub<'a>(text: &Cow<'a, str>, piece: &str) -> Cow<'a, str> {
    match text {
        Cow::Borrowed(whole) => {
            let start = (piece.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
            match whole.get(start..start.wrapping_add(piece.len())) {
                Some(borrowed) => Cow::Borrowed(borrowed),
                None => Cow::Owned(piece.to_owned()),
            }
        }
        Cow::Owned(_) => Cow::Owned(piece.to_owned()),
    }
}
