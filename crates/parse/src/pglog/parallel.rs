//! Parsing a log over several cores with the same result as one pass.
//!
//! A block of lines is cut into chunks at lines that start a record (a stderr line fitting the
//! prefix with a primary severity word, a csv line starting with its stamp), each chunk is read
//! by a fresh reader on its own thread, then the chunks are joined in order. A chunk's reader
//! did not see what came before it: a DETAIL or TAB line of a record of the previous chunk, a
//! memory-context dump claimed across the cut, the languages seen so far. So the join goes on
//! with the reader of the previous chunk (the state one pass would have) over the new chunk's
//! first lines, side by side with a fresh reader, until both hold the same state (same records
//! waiting in the window, same open part, same languages). From there the chunk's own records
//! are the ones one pass gives: the records the state reader gave until then replace those the
//! chunk reader gave, and the counts are added up. A chunk where the two never meet is read on
//! by the state reader to its end (slower, still exact).
//!
//! Cost: the chunk reads run in parallel; the join is a few dozen lines per chunk.

use std::collections::BTreeMap;
use std::sync::mpsc;

use rayon::prelude::*;

use super::stream::{self, Engine};
use super::{Counters, NameCounts, PgLog, PgLogError, PgLogFormat, PgLogOptions, PgRecord};
use crate::ParseStats;
use crate::lines::Lines;

/// What each record goes through on the thread that read it (a JSON line, an event kind…); it
/// may borrow what the caller holds.
type MapRecord<'a, T> = dyn Fn(Box<PgRecord>) -> T + Sync + 'a;

/// Chunks per thread in a block of [`ParallelParser::for_blocks`].
const CHUNKS_PER_THREAD: usize = 8;

/// How far (in bytes) past a chunk's target size a cut looks for a line that starts a record
/// before it settles for any line boundary.
const BOUNDARY_SEARCH_BYTES: usize = 256 * 1024;

/// Parses `input` (a whole log in memory) on `threads` threads (1: on the calling thread);
/// the same [`PgLog`] as [`super::parse`], records in file order.
///
/// Memory: the records, like [`super::parse`].
///
/// # Errors
/// As [`super::parse`].
pub fn parse_parallel(
    input: &[u8],
    options: &PgLogOptions,
    threads: usize,
) -> Result<PgLog, PgLogError> {
    let chunk_bytes = (input.len() / threads.max(1) / 8).clamp(64 * 1024, 8 << 20);
    let mut parser = ParallelParser::new(options.clone(), threads, chunk_bytes);
    let mut records = Vec::new();
    parser.feed(input, &|r| *r, &mut |r| records.push(r))?;
    let mut log = parser.finish(&|r| *r, &mut |r| records.push(r))?;
    log.records = records;
    Ok(log)
}

/// The parallel engine, fed a block of lines at a time: for logs of any size (read a file in
/// large blocks cut after a newline) or a log in memory ([`parse_parallel`]).
///
/// Each record goes through `map` on the thread that read it (turn it into what the caller
/// keeps: a JSON line, an event kind…), then to `sink` on the calling thread, in file order.
pub struct ParallelParser {
    options: PgLogOptions,
    chunk_bytes: usize,
    /// `None` when no thread could be started (or one was asked for): chunks read in turn.
    pool: Option<rayon::ThreadPool>,
    /// Format and the reader holding the state after the lines fed so far.
    running: Option<(PgLogFormat, Engine)>,
    /// Lines fed so far.
    lines_before: u64,
    /// The first blocks, held until there are enough lines to choose format and prefix the
    /// way one pass does (the first 1000 lines, or 1 MiB).
    pending: Vec<u8>,
    /// Lines in `pending`.
    pending_lines: usize,
}

/// What one chunk gave: the records its fresh reader finished (mapped), and that reader.
struct ChunkResult<T> {
    mapped: Vec<T>,
    engine: Engine,
}

impl ParallelParser {
    /// A parser on `threads` threads cutting blocks into chunks of about `chunk_bytes`.
    pub fn new(options: PgLogOptions, threads: usize, chunk_bytes: usize) -> Self {
        let pool = (threads > 1)
            .then(|| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .ok()
            })
            .flatten();
        ParallelParser {
            options,
            chunk_bytes: chunk_bytes.max(1),
            pool,
            running: None,
            lines_before: 0,
            pending: Vec::new(),
            pending_lines: 0,
        }
    }

    /// A parser on `threads` threads for blocks of about `block_bytes`: each block cut into
    /// eight chunks per thread, enough that a slow chunk does not leave a core idle.
    pub fn for_blocks(options: PgLogOptions, threads: usize, block_bytes: usize) -> Self {
        let threads = threads.max(1);
        Self::new(
            options,
            threads,
            block_bytes / (threads * CHUNKS_PER_THREAD),
        )
    }

    /// Reads `block`: whole lines (ending after a `\n`; only the last block of a log may end
    /// inside a line, which then counts as a line). Format and prefix are chosen from the
    /// log's first 1000 lines (or 1 MiB), as [`super::records`] does: blocks are held until
    /// there are that many.
    ///
    /// # Errors
    /// As [`super::parse`], when format and prefix get chosen.
    pub fn feed<T: Send>(
        &mut self,
        block: &[u8],
        map: &MapRecord<'_, T>,
        sink: &mut dyn FnMut(T),
    ) -> Result<(), PgLogError> {
        if block.is_empty() {
            return Ok(());
        }
        if self.running.is_some() {
            return self.feed_started(block, map, sink);
        }
        self.pending.extend_from_slice(block);
        self.pending_lines += memchr::memchr_iter(b'\n', block).count();
        if self.pending_lines < super::DETECTION_LINES && self.pending.len() <= 1 << 20 {
            return Ok(());
        }
        self.start_pending(map, sink)
    }

    /// Chooses format and prefix from the held blocks and reads them.
    fn start_pending<T: Send>(
        &mut self,
        map: &MapRecord<'_, T>,
        sink: &mut dyn FnMut(T),
    ) -> Result<(), PgLogError> {
        let pending = std::mem::take(&mut self.pending);
        self.running = Some(stream::start(&pending, &self.options)?);
        self.feed_started(&pending, map, sink)
    }

    /// [`ParallelParser::feed`] once format and prefix are chosen.
    fn feed_started<T: Send>(
        &mut self,
        block: &[u8],
        map: &MapRecord<'_, T>,
        sink: &mut dyn FnMut(T),
    ) -> Result<(), PgLogError> {
        if block.is_empty() {
            return Ok(());
        }
        let Some((format, state)) = self.running.take() else {
            return Ok(());
        };
        let template = state.fresh();
        let chunks = split_chunks(block, self.chunk_bytes, &template);
        // Each chunk's first line number: its lines counted in parallel too (a pass over the
        // block on one core would be a serial part of every block).
        let counts: Vec<u64> = match &self.pool {
            Some(pool) => pool.install(|| chunks.par_iter().map(|c| line_count(c)).collect()),
            None => chunks.iter().map(|c| line_count(c)).collect(),
        };
        let mut starts = Vec::with_capacity(chunks.len());
        let mut number = self.lines_before;
        for count in counts {
            starts.push(number);
            number += count;
        }
        let max_line = self.options.max_line_bytes;
        let first_block = self.lines_before == 0;
        let mut state = Some(state);
        // Joins chunk `i` to the state before it and hands its records on, in file order.
        let mut join_next = |i: usize, result: ChunkResult<T>| {
            let (chunk, start) = (chunks[i], starts[i]);
            let next = match state.take() {
                Some(s) if !first_block || start > 0 => {
                    join(s, &template, chunk, start, max_line, result, map, sink)
                }
                // The log's very first chunk: its fresh reader is the one pass.
                _ => {
                    result.mapped.into_iter().for_each(&mut *sink);
                    result.engine
                }
            };
            state = Some(next);
        };
        match &self.pool {
            Some(pool) => {
                // Chunks are read on the pool while this thread joins those already read and
                // hands their records on (writing them out): the serial part overlaps the
                // parallel one instead of following it.
                let (done, results) = mpsc::channel::<(usize, ChunkResult<T>)>();
                let template = &template;
                pool.in_place_scope(|scope| {
                    for (i, (chunk, start)) in chunks.iter().zip(&starts).enumerate() {
                        let done = done.clone();
                        scope.spawn(move |_| {
                            let result = read_chunk(format, template, chunk, *start, max_line, map);
                            // The receiver lives until every chunk is joined.
                            let _ = done.send((i, result));
                        });
                    }
                    drop(done);
                    let mut early: BTreeMap<usize, ChunkResult<T>> = BTreeMap::new();
                    let mut next = 0;
                    for (i, result) in results {
                        early.insert(i, result);
                        while let Some(result) = early.remove(&next) {
                            join_next(next, result);
                            next += 1;
                        }
                    }
                });
            }
            None => {
                for (i, (chunk, start)) in chunks.iter().zip(&starts).enumerate() {
                    join_next(
                        i,
                        read_chunk(format, &template, chunk, *start, max_line, map),
                    );
                }
            }
        }
        self.lines_before = number;
        if let Some(state) = state {
            self.running = Some((format, state));
        }
        Ok(())
    }

    /// The counts of the lines joined so far (`records` empty; prefix and format once they
    /// are chosen): what [`ParallelParser::finish`] will return, short of the lines still to
    /// come and of the records still waiting for their continuation lines.
    pub fn summary(&self) -> PgLog {
        match &self.running {
            Some((format, engine)) => stream::summary(engine, *format),
            None => PgLog::default(),
        }
    }

    /// Ends the log: the records still waiting are handed out; the summary (prefix, format,
    /// counts; `records` empty) is returned.
    ///
    /// # Errors
    /// As [`super::parse`], when nothing was fed (format and prefix chosen on an empty log).
    pub fn finish<T: Send>(
        &mut self,
        map: &MapRecord<'_, T>,
        sink: &mut dyn FnMut(T),
    ) -> Result<PgLog, PgLogError> {
        if self.running.is_none() {
            self.start_pending(map, sink)?;
        }
        let Some((format, engine)) = &mut self.running else {
            return Ok(PgLog::default());
        };
        engine.finish();
        while let Some(r) = engine.pop() {
            sink(map(r));
        }
        Ok(stream::summary(engine, *format))
    }
}

/// Lines in `chunk` as [`Lines`] counts them (a last line without `\n` counts).
fn line_count(chunk: &[u8]) -> u64 {
    let newlines = memchr::memchr_iter(b'\n', chunk).count() as u64;
    newlines + u64::from(chunk.last().is_some_and(|&b| b != b'\n'))
}

/// Cuts `block` into chunks of about `target` bytes, each (but the first) starting at a line
/// that starts a record when one comes within [`BOUNDARY_SEARCH_BYTES`], else at a line start.
fn split_chunks<'a>(block: &'a [u8], target: usize, engine: &Engine) -> Vec<&'a [u8]> {
    let mut chunks = Vec::new();
    let mut start = 0;
    while block.len() - start > target {
        let Some(cut) = next_cut(block, start + target, engine) else {
            break;
        };
        chunks.push(&block[start..cut]);
        start = cut;
    }
    chunks.push(&block[start..]);
    chunks
}

/// The first line start at or after `from` (not at the block's end) that starts a record,
/// or the first line start when none does soon enough.
fn next_cut(block: &[u8], from: usize, engine: &Engine) -> Option<usize> {
    let first = from + memchr::memchr(b'\n', &block[from..])? + 1;
    let limit = (first + BOUNDARY_SEARCH_BYTES).min(block.len());
    let mut at = first;
    while at < limit {
        let end = memchr::memchr(b'\n', &block[at..]).map_or(block.len(), |i| at + i);
        let mut bytes = &block[at..end];
        if let [head @ .., b'\r'] = bytes {
            bytes = head;
        }
        if let Ok(text) = std::str::from_utf8(bytes)
            && !text.is_empty()
            && engine.starts_record(text)
        {
            return Some(at);
        }
        at = end + 1;
    }
    (first < block.len()).then_some(first)
}

/// Reads one chunk with a fresh reader; its first line is line `start + 1` of the log.
fn read_chunk<T>(
    format: PgLogFormat,
    template: &Engine,
    chunk: &[u8],
    start: u64,
    max_line: usize,
    map: &MapRecord<'_, T>,
) -> ChunkResult<T> {
    let mut engine = template.fresh();
    let mut mapped = Vec::new();
    for line in stream::LineSource::new(chunk, format) {
        stream::feed(
            &mut engine,
            start + line.number,
            &line.text,
            line.lossy,
            line.crlf,
            max_line,
        );
        while let Some(r) = engine.pop() {
            mapped.push(map(r));
        }
    }
    ChunkResult { mapped, engine }
}

/// Joins a chunk to the state before it (see the module doc); returns the state after it.
#[allow(clippy::too_many_arguments)]
fn join<T>(
    mut state: Engine,
    template: &Engine,
    chunk: &[u8],
    start: u64,
    max_line: usize,
    result: ChunkResult<T>,
    map: &MapRecord<'_, T>,
    sink: &mut dyn FnMut(T),
) -> Engine {
    let mut fresh = template.fresh();
    let mut superseded = 0usize;
    for line in Lines::new(chunk) {
        let number = start + line.number;
        stream::feed(
            &mut state, number, &line.text, line.lossy, line.crlf, max_line,
        );
        while let Some(r) = state.pop() {
            sink(map(r));
        }
        stream::feed(
            &mut fresh, number, &line.text, line.lossy, line.crlf, max_line,
        );
        while fresh.pop().is_some() {
            superseded += 1;
        }
        if state.same_state(&fresh) && examples_suffice(state.counters(), fresh.counters()) {
            let counters = add_counts(state.counters(), result.engine.counters(), fresh.counters());
            let mut next = result.engine;
            *next.counters_mut() = counters;
            result.mapped.into_iter().skip(superseded).for_each(sink);
            return next;
        }
    }
    state
}

/// The chunk reader's examples after the meeting point are the next unrecognised lines; there
/// are enough of them unless the state has room for more than the chunk reader had.
fn examples_suffice(state: &Counters, fresh: &Counters) -> bool {
    let suffice = |had: usize, fresh: usize| had >= ParseStats::MAX_EXAMPLES || fresh <= had;
    suffice(
        state.stats.unrecognized_examples.len(),
        fresh.stats.unrecognized_examples.len(),
    ) && suffice(
        state.unreadable_stamps.examples.len(),
        fresh.unreadable_stamps.examples.len(),
    )
}

/// `state` + (`chunk_end` − `at_meeting`): the counts of one pass through the chunk's end.
fn add_counts(state: &Counters, chunk_end: &Counters, at_meeting: &Counters) -> Counters {
    let sum = |a: u64, b: u64, c: u64| a.wrapping_add(b).wrapping_sub(c);
    let (s, e, m) = (&state.stats, &chunk_end.stats, &at_meeting.stats);
    let examples = crate::stats::joined_examples(
        &s.unrecognized_examples,
        &e.unrecognized_examples,
        &m.unrecognized_examples,
    );
    Counters {
        stats: ParseStats {
            lines: sum(s.lines, e.lines, m.lines),
            records: sum(s.records, e.records, m.records),
            unrecognized_lines: sum(
                s.unrecognized_lines,
                e.unrecognized_lines,
                m.unrecognized_lines,
            ),
            invalid_utf8_lines: sum(
                s.invalid_utf8_lines,
                e.invalid_utf8_lines,
                m.invalid_utf8_lines,
            ),
            oversized_lines: sum(s.oversized_lines, e.oversized_lines, m.oversized_lines),
            unrecognized_examples: examples,
        },
        continuation_lines: sum(
            state.continuation_lines,
            chunk_end.continuation_lines,
            at_meeting.continuation_lines,
        ),
        orphan_lines: sum(
            state.orphan_lines,
            chunk_end.orphan_lines,
            at_meeting.orphan_lines,
        ),
        memory_context_lines: sum(
            state.memory_context_lines,
            chunk_end.memory_context_lines,
            at_meeting.memory_context_lines,
        ),
        blank_lines: sum(
            state.blank_lines,
            chunk_end.blank_lines,
            at_meeting.blank_lines,
        ),
        other_program_lines: sum(
            state.other_program_lines,
            chunk_end.other_program_lines,
            at_meeting.other_program_lines,
        ),
        header_lines: sum(
            state.header_lines,
            chunk_end.header_lines,
            at_meeting.header_lines,
        ),
        broken_rows: sum(
            state.broken_rows,
            chunk_end.broken_rows,
            at_meeting.broken_rows,
        ),
        unreadable_stamps: crate::CountedLines::joined(
            &state.unreadable_stamps,
            &chunk_end.unreadable_stamps,
            &at_meeting.unreadable_stamps,
        ),
        prefix_choice: state.prefix_choice.clone(),
        paste_shape: state.paste_shape,
        paste: state.paste.joined(&chunk_end.paste, &at_meeting.paste),
        events: add_by_key(&state.events, &chunk_end.events, &at_meeting.events),
        languages: add_by_key(
            &state.languages,
            &chunk_end.languages,
            &at_meeting.languages,
        ),
    }
}

/// `state` + (`chunk_end` − `at_meeting`), name by name.
fn add_by_key(state: &NameCounts, chunk_end: &NameCounts, at_meeting: &NameCounts) -> NameCounts {
    let mut out = state.clone();
    for (name, n) in chunk_end.iter() {
        out.add(name, n);
    }
    for (name, n) in at_meeting.iter() {
        out.add(name, n.wrapping_neg());
    }
    out
}

#[cfg(test)]
#[path = "parallel_tests.rs"]
mod tests;
