//! Folding a `perf script` text piece by piece, each distinct frame line parsed once.
//!
//! A piece is the lines up to an empty line: with `perf record -g`, one sample (its event line
//! and its call chain). A profile names the same frames over and over: a frame line (an
//! address, a symbol and its offset, a DSO) recurs in many call chains, so its fold (its name
//! in the stack table, and whether `--skip-after` stops there) is remembered by its text, per
//! process kind (`java*` names fold differently). A call chain of frame lines seen before is
//! folded without parsing any of them.
//!
//! The lines under an event line without a frame of its own are read by [`super::Samples`]
//! the same way whatever the event, and an indented line that reads as a frame is a frame
//! wherever it is in a call chain: what this path folds is exactly what [`Folder::add`] folds
//! on every sample of [`super::Samples`]. A piece it cannot fold that way (one starting with a
//! comment or header line, a flat sample, an event line that is not UTF-8 or over 1 MiB, a
//! call-chain line that is not an indented frame, more than [`MAX_FRAMES`] frames) is read by
//! [`super::Samples`], sample by sample.

use std::borrow::Cow;
use std::collections::HashMap;

use memchr::memmem;

use super::fold::{FOLD_CACHE_BYTES, Folder};
use super::grammar;
use super::reader::{MAX_FRAMES, MAX_LINE_BYTES, Samples};
use super::stacks::{FrameFold, PathFold};
use super::types::Frame;

/// Frame lines already folded, by their text without the indentation and trailing spaces:
/// a frame line (an address, a symbol with its offset, a DSO) recurs in many call chains that
/// differ elsewhere. At most [`FOLD_CACHE_BYTES`]; past that, new lines are parsed each time.
#[derive(Debug, Default)]
pub(super) struct FrameLines {
    /// Indexed by process kind (0: other, 1: `java*`), then by line text.
    folds: [HashMap<Box<[u8]>, FrameFold, ahash::RandomState>; 2],
    /// The frames of the chain being folded, leaf first.
    chain: Vec<FrameFold>,
    /// Bytes held: line texts, plus a map entry each.
    bytes: usize,
}

/// What a map entry of [`FrameLines`] costs beyond its text.
const FRAME_ENTRY_BYTES: usize = 32;

impl FrameLines {
    fn get(&self, java: bool, line: &[u8]) -> Option<FrameFold> {
        self.folds[usize::from(java)].get(line).copied()
    }

    fn insert(&mut self, java: bool, line: &[u8], fold: FrameFold) {
        let cost = line.len() + FRAME_ENTRY_BYTES;
        if self.bytes + cost <= FOLD_CACHE_BYTES {
            self.bytes += cost;
            self.folds[usize::from(java)].insert(line.into(), fold);
        }
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
        for line in chain_lines(chain) {
            match self.frame_line(line, java) {
                Some(frame) if frames.len() < MAX_FRAMES => frames.push(frame),
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
                self.frame_lines.get(java, key).is_some() || raw_frame(key).is_some()
            });
            frames += 1;
            if !plain || frames > MAX_FRAMES {
                return false;
            }
        }
        true
    }

    /// The fold of one line of a call chain, `None` when it is not an indented frame line.
    fn frame_line(&mut self, line: &[u8], java: bool) -> Option<FrameFold> {
        let key = frame_key(line)?;
        if let Some(fold) = self.frame_lines.get(java, key) {
            return Some(fold);
        }
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
        self.frame_lines.insert(java, key, fold);
        Some(fold)
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
        for n in 0..FOLD_CACHE_BYTES / 4096 + 10 {
            let mut text = line.clone();
            text[..8].copy_from_slice(&(n as u64).to_le_bytes());
            cache.insert(false, &text, fold);
        }
        assert_eq!(cache.bytes, FOLD_CACHE_BYTES);
        assert_eq!(cache.folds[0].len(), FOLD_CACHE_BYTES / 4096);
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
        assert_eq!(folder.frame_lines.folds[0].len(), 3);
        assert_eq!(folder.render(), "postgres;main;ExecScan 500000\n");
    }
}
