//! Folding a `perf script` text piece by piece, each distinct frame line parsed once.
//!
//! A piece is the lines up to an empty line: with `perf record -g`, one sample (its event line
//! and its call chain). A profile names the same frames over and over: a frame line (an
//! address, a symbol and its offset, a DSO) recurs in many call chains, so its fold (its name
//! in the stack table, and whether `--skip-after` stops there) is remembered by its text, per
//! process kind (`java*` names fold differently). A call chain of frame lines seen before is
//! folded without parsing any of them, and mostly without hashing them: each line remembers
//! the line that followed it last, the first one compared (in a real capture, four lines of
//! five are the one that followed last time).
//!
//! The lines under an event line without a frame of its own are read by [`super::Samples`]
//! the same way whatever the event, and an indented line that reads as a frame is a frame
//! wherever it is in a call chain: what this path folds is exactly what [`Folder::add`] folds
//! on every sample of [`super::Samples`]. A piece it cannot fold that way (one starting with a
//! comment or header line, a flat sample, an event line that is not UTF-8 or over 1 MiB, a
//! call-chain line that is not an indented frame, more than [`MAX_FRAMES`] frames) is read by
//! [`super::Samples`], sample by sample.

use std::borrow::Cow;

use hashbrown::HashTable;
use memchr::memmem;

use super::fold::{FOLD_CACHE_BYTES, Folder};
use super::grammar;
use super::reader::{MAX_FRAMES, MAX_LINE_BYTES, Samples};
use super::stacks::{FrameFold, PathFold, spread};
use super::types::Frame;

/// Frame lines already folded, by their text without the indentation and trailing spaces:
/// a frame line (an address, a symbol with its offset, a DSO) recurs in many call chains that
/// differ elsewhere. At most [`FOLD_CACHE_BYTES`]; past that, new lines are parsed each time.
#[derive(Debug, Default)]
pub(super) struct FrameLines {
    /// Indexed by process kind (0: other, 1: `java*`).
    kinds: [LineCache; 2],
    /// The frames of the chain being folded, leaf first.
    chain: Vec<FrameFold>,
    /// Bytes held: line texts, plus an entry each.
    bytes: usize,
}

/// The frame lines of one process kind, numbered in order of arrival.
///
/// A call chain is mostly the same lines in the same order as the last time its leaf was
/// sampled: each line remembers the line that followed it last, and the next line of a chain
/// is compared with that one first, without hashing it. The texts are kept end to end in the
/// order they came, so a chain met again is read from memory in order too.
#[derive(Debug, Default)]
struct LineCache {
    /// The texts, end to end in chunks of [`TEXT_CHUNK_BYTES`] (a chunk never moves, so the
    /// cache grows without copying its texts); a text never straddles two chunks.
    chunks: Vec<Vec<u8>>,
    /// Per line id.
    lines: Vec<CachedLine>,
    /// The ids, by the hash of their text.
    table: HashTable<u32>,
    hasher: ahash::RandomState,
}

/// Bytes of the chunks a [`LineCache`] keeps its texts in (a longer text has a chunk of its
/// own).
const TEXT_CHUNK_BYTES: usize = 1 << 20;

/// One frame line of a [`LineCache`].
#[derive(Debug, Clone, Copy)]
struct CachedLine {
    chunk: u32,
    start: u32,
    len: u32,
    /// 32 bits of the text's hash: most lines are told apart without reading their text.
    hash: u32,
    fold: FrameFold,
    /// The line that followed this one in the last chain it was in ([`NO_LINE`]: none yet).
    next: u32,
}

/// No line.
const NO_LINE: u32 = u32::MAX;

/// What a line of [`FrameLines`] costs beyond its text: its entry, and its slot in the table
/// (an id and a control byte, at the table's lowest load after it grows).
const FRAME_ENTRY_BYTES: usize = size_of::<CachedLine>() + 2 * (size_of::<u32>() + 1);

impl LineCache {
    fn text(&self, id: u32) -> &[u8] {
        let line = &self.lines[id as usize];
        let start = line.start as usize;
        &self.chunks[line.chunk as usize][start..start + line.len as usize]
    }

    /// The id of `line`: the line that followed `previous` last time when it is the same
    /// text, else looked up by its hash.
    fn find(&self, previous: u32, line: &[u8]) -> Result<u32, u32> {
        if let Some(entry) = self.lines.get(previous as usize)
            && entry.next != NO_LINE
            && self.text(entry.next) == line
        {
            return Ok(entry.next);
        }
        let hash = self.hasher.hash_one(line) as u32;
        self.table
            .find(spread(hash), |&id| {
                self.lines[id as usize].hash == hash && self.text(id) == line
            })
            .copied()
            .ok_or(hash)
    }

    /// Remembers that `id` followed `previous` (`NO_LINE`: `id` is a chain's first line).
    fn followed(&mut self, previous: u32, id: u32) {
        if let Some(entry) = self.lines.get_mut(previous as usize) {
            entry.next = id;
        }
    }

    /// Adds `line` (of hash `hash`, not in the cache); its id.
    fn insert(&mut self, line: &[u8], hash: u32, fold: FrameFold) -> u32 {
        let fits = self
            .chunks
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= line.len());
        if !fits {
            self.chunks
                .push(Vec::with_capacity(line.len().max(TEXT_CHUNK_BYTES)));
        }
        let index = self.chunks.len() - 1;
        let chunk = &mut self.chunks[index];
        // Ids, chunks, offsets and lengths fit in u32: the cache holds at most
        // FOLD_CACHE_BYTES.
        let id = u32::try_from(self.lines.len()).expect("fewer than 2^32 lines");
        self.lines.push(CachedLine {
            chunk: u32::try_from(index).expect("fewer than 2^32 chunks"),
            start: u32::try_from(chunk.len()).expect("a chunk under 4 GiB"),
            len: u32::try_from(line.len()).expect("a line under 4 GiB"),
            hash,
            fold,
            next: NO_LINE,
        });
        chunk.extend_from_slice(line);
        let lines = &self.lines;
        self.table
            .insert_unique(spread(hash), id, |&id| spread(lines[id as usize].hash));
        id
    }
}

impl FrameLines {
    /// The fold of a frame line already met, and its id, looked up after the line `previous`
    /// of the same chain; the line's hash when it was not met.
    fn get(&self, java: bool, previous: u32, line: &[u8]) -> Result<(u32, FrameFold), u32> {
        let cache = &self.kinds[usize::from(java)];
        cache
            .find(previous, line)
            .map(|id| (id, cache.lines[id as usize].fold))
    }

    /// Remembers the fold of a new line (of hash `hash`) when there is room; its id, or
    /// [`NO_LINE`].
    fn insert(&mut self, java: bool, line: &[u8], hash: u32, fold: FrameFold) -> u32 {
        let cost = line.len() + FRAME_ENTRY_BYTES;
        if self.bytes + cost > FOLD_CACHE_BYTES {
            return NO_LINE;
        }
        self.bytes += cost;
        self.kinds[usize::from(java)].insert(line, hash, fold)
    }

    /// Whether `line` was met before (in any chain).
    fn contains(&self, java: bool, line: &[u8]) -> bool {
        self.kinds[usize::from(java)].find(NO_LINE, line).is_ok()
    }
}

impl Folder {
    /// Folds every sample of `input` (a whole `perf script` text, or a piece of one starting
    /// at a sample), piece by piece.
    pub(super) fn add_pieces(&mut self, input: &[u8]) {
        let empty_line = memmem::Finder::new(b"\n\n");
        // Each piece starts after an empty line (or at the start): no sample is open there and
        // no header block (a line without `#` ends one), so the reader needs no state from
        // the pieces before.
        let mut pos = 0;
        while pos < input.len() {
            if input[pos] == b'\n' {
                pos += 1;
                continue;
            }
            let (lines_end, next) = match empty_line.find(&input[pos..]) {
                Some(at) => (pos + at + 1, pos + at + 2),
                None => (input.len(), input.len()),
            };
            if !self.add_piece(&input[pos..lines_end]) {
                for sample in Samples::new(&input[pos..next]) {
                    self.add(&sample);
                }
            }
            pos = next;
        }
    }

    /// Folds the sample of `lines` (a piece without its empty line) through the frame-line
    /// cache; false when the reader must read the piece instead.
    fn add_piece(&mut self, lines: &[u8]) -> bool {
        if lines.first() == Some(&b'#') {
            // A comment or header line, never read as an event line.
            return false;
        }
        let first_end = memchr::memchr(b'\n', lines).unwrap_or(lines.len());
        let mut first = &lines[..first_end];
        if let [head @ .., b'\r'] = first {
            first = head;
        }
        if first.len() > MAX_LINE_BYTES {
            return false;
        }
        let Ok(first) = simdutf8::basic::from_utf8(first) else {
            return false;
        };
        let Some(event) = grammar::event_line(first.trim_end()) else {
            return false;
        };
        if event.frame.is_some() {
            // A flat sample: the next line is read as an event line first.
            return false;
        }
        let chain = &lines[(first_end + 1).min(lines.len())..];
        let java = event.comm.starts_with("java");
        if super::fold::of_exited_task(event.pid, event.tid) {
            if !self.chain_is_plain(chain, java) {
                return false;
            }
            self.exited += 1;
            return true;
        }
        if self
            .event
            .as_deref()
            .is_some_and(|wanted| !super::event_matches(event.event, wanted))
        {
            // Another event: the sample is only counted, once the chain is known to hold no
            // other sample; its frames are not named.
            if !self.chain_is_plain(chain, java) {
                return false;
            }
            let wanted = self.wants_event(event.event);
            debug_assert!(!wanted, "an event not wanted is counted as filtered out");
            return true;
        }
        let Some(path) = self.fold_chain_lines(chain, java) else {
            return false;
        };
        if self.wants_event(event.event) {
            let weight = event.period.unwrap_or(1);
            self.count(path, event.comm, event.pid, event.tid, weight);
        }
        true
    }

    /// Folds a plain call chain (every line indented and a frame, at most [`MAX_FRAMES`])
    /// line by line, each distinct frame line parsed once. `None` when the chain is not
    /// plain: the reader reads it.
    fn fold_chain_lines(&mut self, chain: &[u8], java: bool) -> Option<PathFold> {
        let mut frames = std::mem::take(&mut self.frame_lines.chain);
        frames.clear();
        let mut plain = true;
        let mut previous = NO_LINE;
        for line in chain_lines(chain) {
            match self.frame_line(line, java, previous) {
                Some((id, frame)) if frames.len() < MAX_FRAMES => {
                    frames.push(frame);
                    previous = id;
                }
                _ => {
                    plain = false;
                    break;
                }
            }
        }
        let path = plain.then(|| self.stacks.path(&frames));
        self.frame_lines.chain = frames;
        path
    }

    /// True when every line of `chain` is an indented frame line, at most [`MAX_FRAMES`]:
    /// what [`Folder::fold_chain_lines`] folds, checked without naming the frames.
    fn chain_is_plain(&self, chain: &[u8], java: bool) -> bool {
        let mut frames = 0;
        for line in chain_lines(chain) {
            let plain = frame_key(line).is_some_and(|key| {
                self.frame_lines.contains(java, key) || raw_frame(key).is_some()
            });
            frames += 1;
            if !plain || frames > MAX_FRAMES {
                return false;
            }
        }
        true
    }

    /// The fold of one line of a call chain, the line `previous` before it, and the line's id
    /// in the cache ([`NO_LINE`] when it found no room); `None` when it is not an indented
    /// frame line.
    fn frame_line(&mut self, line: &[u8], java: bool, previous: u32) -> Option<(u32, FrameFold)> {
        let key = frame_key(line)?;
        let hash = match self.frame_lines.get(java, previous, key) {
            Ok((id, fold)) => {
                self.frame_lines.kinds[usize::from(java)].followed(previous, id);
                return Some((id, fold));
            }
            Err(hash) => hash,
        };
        let raw = raw_frame(key)?;
        let frame = Frame {
            address: raw.address,
            symbol: Cow::Borrowed(raw.symbol),
            offset: raw.offset,
            dso: Cow::Borrowed(raw.dso),
            inlined: raw.inlined,
            srcline: None,
        };
        let fold = self.fold_frame(&frame, java);
        let id = self.frame_lines.insert(java, key, hash, fold);
        if id != NO_LINE {
            self.frame_lines.kinds[usize::from(java)].followed(previous, id);
        }
        Some((id, fold))
    }
}

/// The lines of a call chain (a last line without a newline included).
fn chain_lines(chain: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = chain;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        // memchr, not a byte loop: this runs on every line of the profile.
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        Some(line)
    })
}

/// A chain line's text without its indentation and trailing spaces, the key of the frame-line
/// cache; `None` when the line is not indented (or over [`MAX_LINE_BYTES`]), so the reader
/// would not read it as a frame first.
fn frame_key(line: &[u8]) -> Option<&[u8]> {
    if !matches!(line.first(), Some(b' ' | b'\t')) || line.len() > MAX_LINE_BYTES {
        return None;
    }
    let start = line.iter().position(|&b| b != b' ' && b != b'\t')?;
    Some(line[start..].trim_ascii_end())
}

/// What the reader does with an indented line inside a call chain: a frame when it reads as
/// one.
fn raw_frame(key: &[u8]) -> Option<grammar::RawFrame<'_>> {
    let text = simdutf8::basic::from_utf8(key).ok()?;
    grammar::frame(text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::FoldOptions;

    #[test]
    fn the_cache_holds_a_bounded_number_of_bytes() {
        let mut cache = FrameLines::default();
        let fold = FrameFold {
            name: crate::perf::stacks::Named::Nothing,
            stops: false,
        };
        let line = vec![b'x'; 4096 - FRAME_ENTRY_BYTES];
        let mut refused = 0;
        for n in 0..FOLD_CACHE_BYTES / 4096 + 10 {
            let mut text = line.clone();
            text[..8].copy_from_slice(&(n as u64).to_le_bytes());
            let hash = cache.get(false, NO_LINE, &text).expect_err("a new line");
            if cache.insert(false, &text, hash, fold) == NO_LINE {
                refused += 1;
            }
        }
        assert_eq!(cache.bytes, FOLD_CACHE_BYTES);
        assert_eq!(cache.kinds[0].lines.len(), FOLD_CACHE_BYTES / 4096);
        assert_eq!(refused, 10);
        // The texts are in chunks that never moved: the first one is still found.
        let mut first = line.clone();
        first[..8].copy_from_slice(&0u64.to_le_bytes());
        assert_eq!(cache.get(false, NO_LINE, &first).map(|(id, _)| id), Ok(0));
    }

    #[test]
    fn a_frame_line_is_parsed_once_and_reused_in_other_chains() {
        let text = b"postgres  101 [000]  1.000001:     250000 cpu-clock:pppH: \n\
            \t  5bbbb4 ExecScan+0x14 (/usr/bin/postgres)\n\
            \t  5bbbb0 main+0x10 (/usr/bin/postgres)\n\n\
            postgres  102 [001]  1.000002:     250000 cpu-clock:pppH: \n\
            \t  5bbbb8 ExecScan+0x18 (/usr/bin/postgres)\n\
            \t    5bbbb0 main+0x10 (/usr/bin/postgres)  \n\n";
        let mut folder = Folder::new(FoldOptions::default());
        folder.add_pieces(text);
        // `main+0x10` once (indentation and trailing spaces aside), `ExecScan` at two offsets.
        assert_eq!(folder.frame_lines.kinds[0].lines.len(), 3);
        assert_eq!(folder.render(), "postgres;main;ExecScan 500000\n");
    }

    #[test]
    fn a_line_that_follows_another_than_last_time_is_found_by_its_text() {
        // `leaf` is followed by `a` (the prediction is made), then by `b` (a miss, found by
        // its hash; the prediction moves to `b`), then by `a` again, and `main` follows both.
        let sample = |caller: &str| {
            format!(
                "postgres  101 [000]  1.000001:     1 cpu-clock:pppH: \n\
                 \t  10 leaf+0x1 (/usr/bin/postgres)\n\
                 \t  20 {caller}+0x2 (/usr/bin/postgres)\n\
                 \t  30 main+0x3 (/usr/bin/postgres)\n\n"
            )
        };
        let text = [
            sample("a"),
            sample("b"),
            sample("a"),
            sample("a"),
            sample("b"),
        ]
        .concat();
        let mut folder = Folder::new(FoldOptions::default());
        folder.add_pieces(text.as_bytes());
        let cache = &folder.frame_lines.kinds[0];
        assert_eq!(cache.lines.len(), 4);
        let id = |line: &str| cache.find(NO_LINE, line.as_bytes()).expect("cached");
        // The last chain went leaf → b → main.
        assert_eq!(
            cache.lines[id("10 leaf+0x1 (/usr/bin/postgres)") as usize].next,
            id("20 b+0x2 (/usr/bin/postgres)")
        );
        assert_eq!(
            folder.render(),
            "postgres;main;a;leaf 3\npostgres;main;b;leaf 2\n"
        );
    }
}
