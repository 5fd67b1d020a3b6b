//! The stacks a [`super::Folder`] has folded, each text stored once: root names (`comm`,
//! `comm-PID`), frame names (`;name`), and paths as the ids of their names from the outermost
//! frame to the leaf. A sample's stack is a (root, path) pair; its text is the root's then the
//! names', end to end, put together only when the stacks are written out. All of it holds
//! [`FOLD_STACK_BYTES`] at most.

use std::collections::HashMap;

use hashbrown::HashTable;

/// Bytes of distinct stacks a folder holds at most (256 MiB): the texts of its root names,
/// frame names and paths, plus what each costs beyond ([`STRING_ENTRY_BYTES`],
/// [`PATH_ENTRY_BYTES`]). Samples of stacks new past that are
/// counted ([`super::Folder::samples_not_kept`]), not folded.
pub const FOLD_STACK_BYTES: usize = 256 << 20;

/// What one path costs beyond its name ids (4 bytes each) and its text: its slot in the map
/// of paths and in the map of tallies (24 bytes and a control byte each, at the maps' lowest
/// load after they grow), its boxed ids' rounding, and what writing it out takes (its id's
/// slice and text end, its entry in the sorted list).
pub(super) const PATH_ENTRY_BYTES: usize = 2 * 2 * (24 + 1) + 8 + 16 + 8 + 40;

/// The root id of a stack without its process name (cut by `--skip-after`).
const ROOTLESS: u32 = u32::MAX;

/// What one frame folds to: its name (`;name`, several for Java `a->b` inlining), and
/// whether `--skip-after` ends the stack there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FrameFold {
    pub name: Named,
    pub stops: bool,
}

/// A frame's name in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Named {
    /// The frame has no name (a symbol starting with `(`, skipped as inferno does).
    Nothing,
    /// The name with this id.
    Id(u32),
    /// A new name with no room left for it.
    NotKept,
}

/// What the frames of one sample fold to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PathFold {
    /// No frame left to fold: the sample adds no stack.
    Empty,
    /// The path with this id; `rootless` when `--skip-after` cut the process name off.
    Path { id: u32, rootless: bool },
    /// A name or path with no room left for it.
    NotKept,
}

/// What a stack has summed.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    weight: u64,
    samples: u64,
}

/// Strings stored once each, numbered in order of arrival: their texts end to end in chunks
/// of [`CHUNK_BYTES`], found by a table of ids hashed by text. A string costs its text and
/// [`STRING_ENTRY_BYTES`], where a map of boxed strings cost some 70 bytes more and one
/// allocation each.
#[derive(Debug, Default)]
struct Interner {
    /// The texts, end to end; a string never straddles two chunks.
    chunks: Vec<String>,
    /// Where each string is, by id.
    spans: Vec<Span>,
    /// The ids, by the hash of their text, each with 32 bits of that hash (so that the
    /// table grows and a lookup tells most strings apart without reading their text).
    table: HashTable<(u32, u32)>,
    hasher: ahash::RandomState,
}

/// Where a string of an [`Interner`] is: its chunk, and its bytes in it.
#[derive(Debug, Clone, Copy)]
struct Span {
    chunk: u32,
    start: u32,
    len: u32,
}

/// Bytes of the chunks an [`Interner`] writes its strings into (a longer string has a chunk
/// of its own).
const CHUNK_BYTES: usize = 1 << 20;

/// What one string of an [`Interner`] costs beyond its text: its span, and its slot in the
/// table (the id, its hash's 32 bits and a control byte, at the table's lowest load after it
/// grows).
pub(super) const STRING_ENTRY_BYTES: usize = size_of::<Span>() + 2 * (size_of::<(u32, u32)>() + 1);

impl Interner {
    /// The string with id `id`.
    fn get(&self, id: u32) -> &str {
        text_of(&self.chunks, self.spans[id as usize])
    }

    /// The length of the string with id `id`.
    fn len_of(&self, id: u32) -> usize {
        self.spans[id as usize].len as usize
    }

    /// The id of `text`, stored now if new and it fits in `room` (which it then takes from);
    /// `None` when it does not.
    fn id(&mut self, text: &str, room: &mut usize) -> Option<u32> {
        let Interner {
            chunks,
            spans,
            table,
            hasher,
        } = self;
        let short = hasher.hash_one(text) as u32;
        let found = table.find(spread(short), |&(id, h)| {
            h == short && text_of(chunks, spans[id as usize]) == text
        });
        if let Some(&(id, _)) = found {
            return Some(id);
        }
        let cost = text.len() + STRING_ENTRY_BYTES;
        if cost > *room {
            return None;
        }
        *room -= cost;
        let fits = chunks
            .last()
            .is_some_and(|c| c.capacity() - c.len() >= text.len());
        if !fits {
            chunks.push(String::with_capacity(text.len().max(CHUNK_BYTES)));
        }
        let index = chunks.len() - 1;
        let chunk = &mut chunks[index];
        // Ids, chunks, offsets and lengths fit in u32: the room holds far fewer strings, and
        // far shorter.
        let span = Span {
            chunk: u32::try_from(index).expect("fewer than 2^32 chunks"),
            start: u32::try_from(chunk.len()).expect("a chunk under 4 GiB"),
            len: u32::try_from(text.len()).expect("a name under 4 GiB"),
        };
        chunk.push_str(text);
        let id = u32::try_from(spans.len()).expect("fewer than 2^32 strings");
        spans.push(span);
        table.insert_unique(spread(short), (id, short), |&(_, h)| spread(h));
        Some(id)
    }
}

/// The table's 64-bit hash of a string from the 32 bits kept of its hash: every bit of it
/// depends on them (the table takes its bucket from the low bits, its tag from the high ones).
pub(super) fn spread(short: u32) -> u64 {
    u64::from(short).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The text of `span` in `chunks`.
fn text_of(chunks: &[String], span: Span) -> &str {
    let start = span.start as usize;
    &chunks[span.chunk as usize][start..start + span.len as usize]
}

/// The stacks of a folder.
#[derive(Debug)]
pub(super) struct StackTable {
    roots: Interner,
    names: Interner,
    /// Paths by the ids of their names, outermost frame first.
    paths: HashMap<Box<[u32]>, u32, ahash::RandomState>,
    /// Per stack (root id in the high half, `ROOTLESS` for a stack cut by `--skip-after`;
    /// path id in the low half): the summed weight and the samples.
    tallies: HashMap<u64, Tally, ahash::RandomState>,
    /// Bytes the table may still take.
    room: usize,
    /// Scratch: a path's name ids.
    path: Vec<u32>,
}

impl Default for StackTable {
    fn default() -> Self {
        Self::with_room(FOLD_STACK_BYTES)
    }
}

impl StackTable {
    /// A table of `room` bytes at most.
    pub fn with_room(room: usize) -> Self {
        StackTable {
            roots: Interner::default(),
            names: Interner::default(),
            paths: HashMap::default(),
            tallies: HashMap::default(),
            room,
            path: Vec::new(),
        }
    }

    /// The id of root name `text`; `None` when it is new and there is no room for it.
    pub fn root(&mut self, text: &str) -> Option<u32> {
        self.roots.id(text, &mut self.room)
    }

    /// The frame name `text` (`;name`, or empty for a frame without one).
    pub fn name(&mut self, text: &str) -> Named {
        if text.is_empty() {
            return Named::Nothing;
        }
        match self.names.id(text, &mut self.room) {
            Some(id) => Named::Id(id),
            None => Named::NotKept,
        }
    }

    /// The path of a sample's frames (leaf first): up to the first (leaf-most) frame that
    /// stops, its names from the outermost frame down.
    pub fn path(&mut self, frames: &[FrameFold]) -> PathFold {
        let (take, rootless) = match frames.iter().position(|f| f.stops) {
            Some(i) => (i + 1, true),
            None => (frames.len(), false),
        };
        self.path.clear();
        let mut text_len = 0usize;
        for frame in frames[..take].iter().rev() {
            match frame.name {
                Named::Nothing => {}
                Named::Id(id) => {
                    self.path.push(id);
                    text_len += self.names.len_of(id);
                }
                Named::NotKept => return PathFold::NotKept,
            }
        }
        if self.path.is_empty() {
            return PathFold::Empty;
        }
        match self.path_id(text_len) {
            Some(id) => PathFold::Path { id, rootless },
            None => PathFold::NotKept,
        }
    }

    /// The id of the path in `self.path`, `text_len` bytes once written.
    fn path_id(&mut self, text_len: usize) -> Option<u32> {
        if let Some(&id) = self.paths.get(self.path.as_slice()) {
            return Some(id);
        }
        // The path's text is written out at the end: its bytes are counted now.
        let cost = self.path.len() * 4 + text_len + PATH_ENTRY_BYTES;
        if cost > self.room {
            return None;
        }
        self.room -= cost;
        let id = u32::try_from(self.paths.len()).expect("fewer than 2^32 paths");
        self.paths.insert(self.path.as_slice().into(), id);
        Some(id)
    }

    /// Adds a sample of `weight` to the stack of `root` (`None`: cut by `--skip-after`) and
    /// `path`.
    pub fn count(&mut self, root: Option<u32>, path: u32, weight: u64, samples: u64) {
        let root = root.unwrap_or(ROOTLESS);
        let tally = self
            .tallies
            .entry(u64::from(root) << 32 | u64::from(path))
            .or_default();
        tally.weight += weight;
        tally.samples += samples;
    }

    /// Adds the stacks of `other`; returns the samples of those that found no room.
    pub fn merge(&mut self, other: StackTable) -> u64 {
        let mut paths: Vec<(&[u32], u32)> = other
            .paths
            .iter()
            .map(|(ids, &id)| (&ids[..], id))
            .collect();
        paths.sort_unstable_by_key(|&(_, id)| id);
        // Other's names, in this table, as its paths need them (`Some(None)`: no room).
        let mut name_ids: Vec<Option<Option<u32>>> = vec![None; other.names.spans.len()];
        let path_ids: Vec<Option<u32>> = paths
            .iter()
            .map(|&(ids, _)| {
                let mut path = std::mem::take(&mut self.path);
                path.clear();
                let mut text_len = 0;
                let mut fits = true;
                for &other_id in ids {
                    let slot = &mut name_ids[other_id as usize];
                    let id = *slot.get_or_insert_with(|| {
                        self.names.id(other.names.get(other_id), &mut self.room)
                    });
                    match id {
                        Some(id) => {
                            text_len += self.names.len_of(id);
                            path.push(id);
                        }
                        None => fits = false,
                    }
                }
                self.path = path;
                if fits { self.path_id(text_len) } else { None }
            })
            .collect();
        let mut tallies: Vec<(u64, Tally)> = other.tallies.into_iter().collect();
        // In key order, so which stacks find room does not depend on the map's order.
        tallies.sort_unstable_by_key(|&(key, _)| key);
        let mut not_kept = 0;
        for (key, tally) in tallies {
            let (root, path) = ((key >> 32) as u32, key as u32);
            let root = if root == ROOTLESS {
                Some(None)
            } else {
                self.roots
                    .id(other.roots.get(root), &mut self.room)
                    .map(Some)
            };
            match (root, path_ids[path as usize]) {
                (Some(root), Some(path)) => self.count(root, path, tally.weight, tally.samples),
                _ => not_kept += tally.samples,
            }
        }
        not_kept
    }

    /// Hands each stack to `each`, sorted by text (byte order) as inferno writes them, with
    /// its summed weight: the text is the two parts end to end.
    pub fn for_each_sorted(&self, mut each: impl FnMut(&str, &str, u64)) {
        // Each path's text, written once into one buffer.
        let mut by_id: Vec<&[u32]> = vec![&[]; self.paths.len()];
        for (ids, &id) in &self.paths {
            by_id[id as usize] = ids;
        }
        let mut text = String::new();
        let mut ends = Vec::with_capacity(by_id.len());
        for ids in by_id {
            for &id in ids {
                text.push_str(self.names.get(id));
            }
            ends.push(text.len());
        }
        let path_text = |id: u32| {
            let id = id as usize;
            let start = if id == 0 { 0 } else { ends[id - 1] };
            &text[start..ends[id]]
        };
        let mut stacks: Vec<(&str, &str, u64)> = self
            .tallies
            .iter()
            .map(|(&key, tally)| {
                let (root, path) = ((key >> 32) as u32, key as u32);
                let path = path_text(path);
                if root == ROOTLESS {
                    ("", &path[1..], tally.weight)
                } else {
                    (self.roots.get(root), path, tally.weight)
                }
            })
            .collect();
        stacks.sort_unstable_by(|a, b| {
            if a.0 == b.0 {
                a.1.cmp(b.1)
            } else {
                stack_bytes(a.0, a.1).cmp(stack_bytes(b.0, b.1))
            }
        });
        // Different (root, path) pairs can spell the same stack (a `;` in a process name, a
        // Java inlined frame named as two): they are next to each other now, summed as one.
        let mut stacks = stacks.into_iter().peekable();
        while let Some((root, path, mut weight)) = stacks.next() {
            while let Some(next) = stacks.peek() {
                let same = next.0.len() + next.1.len() == root.len() + path.len()
                    && stack_bytes(next.0, next.1).eq(stack_bytes(root, path));
                if !same {
                    break;
                }
                weight += next.2;
                stacks.next();
            }
            each(root, path, weight);
        }
    }

    /// Distinct stacks.
    pub fn len(&self) -> usize {
        self.tallies.len()
    }

    #[cfg(test)]
    pub fn room(&self) -> usize {
        self.room
    }
}

/// The bytes of a stack's text, its root then its path.
fn stack_bytes<'s>(root: &'s str, path: &'s str) -> impl Iterator<Item = u8> + 's {
    root.bytes().chain(path.bytes())
}
