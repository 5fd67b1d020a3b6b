//! Folding a `perf script` text piece by piece, each call chain parsed once.
//!
//! A piece is the lines up to an empty line: with `perf record -g`, one sample (its event line
//! and its call chain). Profiles repeat the same call chains over and over, so a call chain is
//! folded once per distinct text (and process kind: `java*` names fold differently); a later
//! sample with the same call-chain text only has its event line read. The text of a call chain
//! decides its path whatever the event line above it, as long as that line is an event line
//! without a frame of its own: [`super::Samples`] reads the lines under an event line the same
//! way whatever the event.
//!
//! What this path folds is exactly what [`Folder::add`] folds on every sample of
//! [`super::Samples`]: a piece it cannot prove the same (one starting with a comment or header
//! line, a flat sample, a call chain that holds another sample, an event line that is not
//! UTF-8) is read by [`super::Samples`], sample by sample.

use std::collections::HashMap;

use memchr::memmem;

use super::fold::{FOLD_CACHE_BYTES, Folder, PathFold};
use super::grammar;
use super::reader::{MAX_LINE_BYTES, Samples};

/// Call chains longer than this are not remembered (nor read twice to learn them).
const MAX_CACHED_CHAIN_BYTES: usize = 64 << 10;

/// The call chains folded so far, by their text.
#[derive(Debug, Default)]
pub(super) struct ChainCache {
    /// Indexed by process kind (0: other, 1: `java*`), then by call-chain text.
    chains: [HashMap<Box<[u8]>, Chain, ahash::RandomState>; 2],
    /// Bytes of call-chain text held, at most [`FOLD_CACHE_BYTES`].
    bytes: usize,
}

/// What a call-chain text folds to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chain {
    /// This path, whatever the event line above it.
    Folds(PathFold),
    /// Not one sample (an event line inside, or a line of spaces before more frames): read
    /// by the reader each time.
    Irregular,
}

impl ChainCache {
    fn get(&self, java: bool, text: &[u8]) -> Option<Chain> {
        self.chains[usize::from(java)].get(text).copied()
    }

    fn insert(&mut self, java: bool, text: &[u8], chain: Chain) {
        if text.len() > MAX_CACHED_CHAIN_BYTES || self.bytes + text.len() > FOLD_CACHE_BYTES {
            return;
        }
        self.bytes += text.len();
        self.chains[usize::from(java)].insert(text.into(), chain);
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

    /// Folds the sample of `lines` (a piece without its empty line) through the call-chain
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
        let path = match self.chains.get(java, chain) {
            Some(Chain::Folds(path)) => path,
            Some(Chain::Irregular) => return false,
            None => {
                let learned = self.learn_chain(lines, chain.len(), java);
                self.chains.insert(java, chain, learned);
                match learned {
                    Chain::Folds(path) => path,
                    Chain::Irregular => return false,
                }
            }
        };
        if self.wants_event(event.event) {
            let weight = event.period.unwrap_or(1);
            self.count(path, event.comm, event.pid, event.tid, weight);
        }
        true
    }

    /// Reads `lines` (an event line without a frame, then a call chain of `chain_len` bytes)
    /// with the reader and folds its call chain, when it is one sample and nothing else.
    /// (Comment and header lines inside change nothing: the empty line after the piece ends
    /// any header block they open.)
    fn learn_chain(&mut self, lines: &[u8], chain_len: usize, java: bool) -> Chain {
        if chain_len > MAX_CACHED_CHAIN_BYTES {
            return Chain::Irregular;
        }
        let mut samples = Samples::new(lines);
        let (Some(sample), None) = (samples.next(), samples.next()) else {
            return Chain::Irregular;
        };
        Chain::Folds(self.fold_frames(&sample.frames, java))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::FoldOptions;

    #[test]
    fn the_cache_holds_a_bounded_number_of_bytes() {
        let mut cache = ChainCache::default();
        let chain = vec![b'\t'; MAX_CACHED_CHAIN_BYTES];
        let path = Chain::Folds(PathFold::Empty);
        for n in 0..FOLD_CACHE_BYTES / MAX_CACHED_CHAIN_BYTES + 10 {
            let mut text = chain.clone();
            text[..8].copy_from_slice(&(n as u64).to_le_bytes());
            cache.insert(false, &text, path);
        }
        assert!(cache.bytes <= FOLD_CACHE_BYTES);
        assert_eq!(
            cache.chains[0].len(),
            FOLD_CACHE_BYTES / MAX_CACHED_CHAIN_BYTES
        );
        cache.insert(true, &vec![b'\t'; MAX_CACHED_CHAIN_BYTES + 1], path);
        assert!(cache.chains[1].is_empty());
    }

    #[test]
    fn a_chain_is_learned_once_and_reused_under_other_event_lines() {
        let text = b"postgres  101 [000]  1.000001:     250000 cpu-clock:pppH: \n\
            \t  5bbbb4 ExecScan+0x14 (/usr/bin/postgres)\n\
            \t  5bbbb0 main+0x10 (/usr/bin/postgres)\n\n\
            postgres  102 [001]  1.000002:     250000 cpu-clock:pppH: \n\
            \t  5bbbb4 ExecScan+0x14 (/usr/bin/postgres)\n\
            \t  5bbbb0 main+0x10 (/usr/bin/postgres)\n\n";
        let mut folder = Folder::new(FoldOptions::default());
        folder.add_pieces(text);
        assert_eq!(folder.chains.chains[0].len(), 1);
        assert_eq!(folder.render(), "postgres;main;ExecScan 500000\n");
    }
}
