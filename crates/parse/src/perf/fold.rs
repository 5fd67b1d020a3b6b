//! Folding samples into collapsed stacks (`comm;root;…;leaf count`), the input of flame
//! graphs, with the same text `inferno-collapse-perf` (and `stackcollapse-perf.pl`) writes.
//!
//! Frame names are massaged as inferno does: `+0x…` offsets dropped, `[unknown]` replaced by
//! `[dso basename]`, partially demangled Rust symbols fixed, `;` turned into `:`, C/C++
//! argument lists cut, Java `->` inlining split into `_[i]` frames, `java*` processes' `L`
//! prefixes dropped, optional `_[k]` / `_[j]` annotations. Where inferno misreads its input
//! we do not copy it: tracepoint payloads are never frames, and a DSO is the whole last
//! balanced `(…)` group (`/memfd:x (deleted)`), so stacks of such samples differ from
//! inferno's (see docs/perf.md).

use std::borrow::Cow;

use super::frame_names::{
    fix_partially_demangled_rust_symbol, inferno_is_kernel, is_jit, module_fallback, tidy_generic,
};
use super::stacks::{FrameFold, PathFold, StackTable};
use super::types::{Frame, PerfSample};

/// What to fold and how to name frames. Field names follow `inferno-collapse-perf`'s flags.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoldOptions {
    /// `--pid`: root frame `comm-PID` instead of `comm`.
    pub include_pid: bool,
    /// `--tid`: root frame `comm-PID/TID` (implies `include_pid`).
    pub include_tid: bool,
    /// `--addrs`: `[dso <address>]` for frames without a symbol.
    pub include_addrs: bool,
    /// `--kernel`: append `_[k]` to kernel frames.
    pub annotate_kernel: bool,
    /// `--jit`: append `_[j]` to frames from `/tmp/perf-PID.map` or `jitted-*.so`.
    pub annotate_jit: bool,
    /// `--event-filter` / `--event`: fold only samples of this event. Matches the full name
    /// (`cpu-clock:pppH`, `sched:sched_switch`) or the name without modifiers
    /// (`cpu-clock`). `None`: the event of the first sample, like inferno.
    pub event: Option<String>,
    /// `--skip-after`: a frame whose symbol equals one of these ends the stack there (its
    /// callers and the process name are left out).
    pub skip_after: Vec<String>,
}

/// Accumulates collapsed stacks. Feed samples with [`Folder::add`] or whole `perf script`
/// texts with [`Folder::add_input`], read the result with [`Folder::into_sorted`],
/// [`Folder::write_sorted`] or [`Folder::render`].
///
/// Each distinct root name (`comm`, `comm-PID`), frame name and path is stored once (see
/// `stacks.rs`), within [`FOLD_STACK_BYTES`](super::FOLD_STACK_BYTES): samples of stacks new past that are counted in
/// [`Folder::samples_not_kept`], not folded. [`Folder::add_input`] also remembers the fold of
/// each distinct frame line it met (see `pieces.rs`), so a frame line seen before is not
/// parsed again; that memory is bounded by [`FOLD_CACHE_BYTES`].
#[derive(Debug, Default)]
pub struct Folder {
    pub(super) options: FoldOptions,
    pub(super) event: Option<String>,
    pub(super) stacks: StackTable,
    /// Scratch: one frame's names, one name, the folds of a sample's frames.
    names: String,
    segment: String,
    frames: Vec<FrameFold>,
    folded: u64,
    filtered_out: u64,
    empty: u64,
    not_kept: u64,
    pub(super) exited: u64,
    /// Frame lines already folded, by their text (see `pieces.rs`).
    pub(super) frame_lines: super::pieces::FrameLines,
}

/// Bytes of frame-line text [`Folder::add_input`] remembers at most (16 MiB): past that, new
/// frame lines are parsed each time they come.
pub const FOLD_CACHE_BYTES: usize = 16 << 20;

impl Folder {
    /// A folder with `options`.
    pub fn new(mut options: FoldOptions) -> Self {
        options.include_pid |= options.include_tid;
        Self {
            event: options.event.clone(),
            options,
            ..Self::default()
        }
    }

    /// The event being folded: the one asked for, or the first sample's.
    pub fn event(&self) -> Option<&str> {
        self.event.as_deref()
    }

    /// Samples folded into a stack.
    pub fn folded_samples(&self) -> u64 {
        self.folded
    }

    /// Samples of other events, left out.
    pub fn filtered_out_samples(&self) -> u64 {
        self.filtered_out
    }

    /// Samples of the event without any frame left to fold (no call chain, or every frame
    /// skipped): they add no stack, as in inferno.
    pub fn empty_samples(&self) -> u64 {
        self.empty
    }

    /// Samples of a task that had exited when perf read them (perf prints it `:-1    -1`, a
    /// negative pid or tid): not folded, as `inferno-collapse-perf` does not read their event
    /// line, and counted here.
    pub fn exited_task_samples(&self) -> u64 {
        self.exited
    }

    /// Samples of the event whose stack was new once the stacks held [`FOLD_STACK_BYTES`](super::FOLD_STACK_BYTES):
    /// counted, not folded.
    pub fn samples_not_kept(&self) -> u64 {
        self.not_kept
    }

    /// What the fold left out, a sentence each: the samples of stacks past
    /// [`FOLD_STACK_BYTES`](super::FOLD_STACK_BYTES) and those of exited tasks; empty when it
    /// folded every sample of its event.
    pub fn left_out(&self) -> Vec<String> {
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        let mut notes = Vec::new();
        if self.not_kept > 0 {
            notes.push(format!(
                "{} sample{} of stacks met after the first {} MiB of distinct stacks not folded",
                self.not_kept,
                plural(self.not_kept),
                super::FOLD_STACK_BYTES >> 20
            ));
        }
        if self.exited > 0 {
            notes.push(format!(
                "{} sample{} of tasks that had exited (`:-1 -1`) not folded, as \
                 inferno-collapse-perf does",
                self.exited,
                plural(self.exited)
            ));
        }
        notes
    }

    /// Folds one sample (or counts it as filtered out).
    pub fn add(&mut self, sample: &PerfSample<'_>) {
        if of_exited_task(sample.pid, sample.tid) {
            self.exited += 1;
            return;
        }
        if !self.wants_event(&sample.event) {
            return;
        }
        let java = sample.comm.starts_with("java");
        let mut frames = std::mem::take(&mut self.frames);
        frames.clear();
        frames.extend(sample.frames.iter().map(|f| self.fold_frame(f, java)));
        let path = self.stacks.path(&frames);
        self.frames = frames;
        self.count(path, &sample.comm, sample.pid, sample.tid, sample.weight());
    }

    /// True when samples of `event` are folded; counts them as filtered out otherwise. The
    /// first event met is the one folded when none was asked for.
    pub(super) fn wants_event(&mut self, event: &str) -> bool {
        match &self.event {
            Some(wanted) => {
                if !event_matches(event, wanted) {
                    self.filtered_out += 1;
                    return false;
                }
            }
            None => self.event = Some(event.to_owned()),
        }
        true
    }

    /// What one frame folds to: its names (stored in the table), and whether `--skip-after`
    /// stops there.
    pub(super) fn fold_frame(&mut self, frame: &Frame<'_>, java: bool) -> FrameFold {
        self.names.clear();
        push_frame(
            &self.options,
            &mut self.names,
            &mut self.segment,
            frame,
            java,
        );
        FrameFold {
            name: self.stacks.name(&self.names),
            stops: stops_at(&self.options, frame),
        }
    }

    /// Adds `weight` to the stack of `path` under the root named after `comm`, `pid` and
    /// `tid` (or counts an empty sample, or one not kept).
    pub(super) fn count(
        &mut self,
        path: PathFold,
        comm: &str,
        pid: Option<i32>,
        tid: i32,
        weight: u64,
    ) {
        let (path, rootless) = match path {
            PathFold::Empty => {
                self.empty += 1;
                return;
            }
            PathFold::NotKept => {
                self.not_kept += 1;
                return;
            }
            PathFold::Path { id, rootless } => (id, rootless),
        };
        let root = if rootless {
            None
        } else {
            let id = if !self.options.include_pid && !comm.contains(' ') {
                self.stacks.root(comm)
            } else {
                self.segment.clear();
                self.segment.push_str(&comm.replace(' ', "_"));
                if self.options.include_tid {
                    self.segment.push('-');
                    push_pid(&mut self.segment, pid);
                    self.segment.push('/');
                    self.segment.push_str(&tid.to_string());
                } else if self.options.include_pid {
                    self.segment.push('-');
                    push_pid(&mut self.segment, pid);
                }
                self.stacks.root(&self.segment)
            };
            let Some(id) = id else {
                self.not_kept += 1;
                return;
            };
            Some(id)
        };
        self.folded += 1;
        self.stacks.count(root, path, weight, 1);
    }

    /// Hands each stack to `each`, sorted by stack text (byte order) as inferno writes them,
    /// with its summed weight: the text is the two parts put end to end. The texts are put
    /// together once, so writing out a large fold takes no second copy of its stacks.
    pub fn for_each_sorted(&self, each: impl FnMut(&str, &str, u64)) {
        self.stacks.for_each_sorted(each);
    }

    /// The stacks and their summed weights, sorted by stack (byte order), as inferno writes
    /// them.
    pub fn into_sorted(self) -> Vec<(String, u64)> {
        let mut stacks = Vec::with_capacity(self.stacks.len());
        self.for_each_sorted(|root, path, weight| stacks.push((format!("{root}{path}"), weight)));
        stacks
    }

    /// Writes the collapsed-stack text to `out`: one `stack count` line per stack, sorted.
    ///
    /// # Errors
    /// The writer's.
    pub fn write_sorted(&self, out: &mut impl std::io::Write) -> std::io::Result<()> {
        let mut result = Ok(());
        let mut number = itoa::Buffer::new();
        self.for_each_sorted(|root, path, weight| {
            if result.is_ok() {
                result = out
                    .write_all(root.as_bytes())
                    .and_then(|()| out.write_all(path.as_bytes()))
                    .and_then(|()| out.write_all(b" "))
                    .and_then(|()| out.write_all(number.format(weight).as_bytes()))
                    .and_then(|()| out.write_all(b"\n"));
            }
        });
        result
    }

    /// The collapsed-stack text: one `stack count` line per stack, sorted.
    pub fn render(self) -> String {
        let mut out = Vec::new();
        self.write_sorted(&mut out).expect("writing to memory");
        String::from_utf8(out).expect("stacks are text")
    }
}

/// True when `--skip-after` ends the stack at `frame` (its callers and the process name are
/// left out). Frames whose symbol starts with `(` are never named.
pub(super) fn stops_at(options: &FoldOptions, frame: &Frame<'_>) -> bool {
    !options.skip_after.is_empty()
        && !frame.symbol.starts_with('(')
        && options.skip_after.iter().any(|s| {
            let fixed = fix_partially_demangled_rust_symbol(&frame.symbol);
            *s == *fixed
        })
}

/// Appends `;name` for one frame to `out` (several for Java `a->b` inlining), nothing for a
/// symbol starting with `(` (skipped, as inferno does). `segment` is scratch.
pub(super) fn push_frame(
    options: &FoldOptions,
    out: &mut String,
    segment: &mut String,
    frame: &Frame<'_>,
    java: bool,
) {
    let symbol: &str = &frame.symbol;
    if symbol.starts_with('(') {
        return;
    }
    let raw: Cow<'_, str> = if symbol.is_empty() {
        // `7f1e2215d058  (/lib/libc-2.15.so)`: perl and inferno name it " ".
        Cow::Borrowed(" ")
    } else {
        fix_partially_demangled_rust_symbol(symbol)
    };
    let kernel = options.annotate_kernel && inferno_is_kernel(&frame.dso);
    let jit = options.annotate_jit && is_jit(&frame.dso);
    let mut part = |part: &str, inlined: bool| {
        segment.clear();
        module_fallback(
            segment,
            &frame.dso,
            part,
            frame.address,
            options.include_addrs,
        );
        tidy_generic(segment);
        if java && segment.starts_with('L') && segment.contains('/') {
            segment.remove(0);
        }
        if inlined {
            if !segment.contains("_[i]") {
                segment.push_str("_[i]");
            }
        } else if kernel {
            segment.push_str("_[k]");
        } else if jit && !segment.contains("_[j]") {
            segment.push_str("_[j]");
        }
        out.push(';');
        out.push_str(segment);
    };
    // Only Java inlining has `->`; check before splitting (this runs on every frame).
    if raw.contains('-') && raw.contains("->") {
        for (n, piece) in raw.split("->").enumerate() {
            part(piece, n > 0);
        }
    } else {
        part(&raw, false);
    }
}

/// Folds every sample of a `perf script` text with `options` and returns the collapsed
/// stacks text (what `pgmortem collapse-perf` prints).
pub fn collapse(input: &[u8], options: &FoldOptions) -> String {
    let mut folder = Folder::new(options.clone());
    folder.add_input(input, 1);
    folder.render()
}

/// Inputs smaller than this are folded on one thread.
const PARALLEL_MIN_BYTES: usize = 4 << 20;

impl Folder {
    /// Parses and folds a whole `perf script` text, or a piece of one that starts at a sample
    /// (see [`last_sample_start`] to cut a stream into such pieces). With `threads > 1` and a
    /// large input, the input is cut at sample starts and the pieces are folded on that many
    /// threads; the result is the same, and the same as [`Folder::add`] on every sample of
    /// [`super::Samples`].
    pub fn add_input(&mut self, input: &[u8], threads: usize) {
        if threads <= 1 || input.len() < PARALLEL_MIN_BYTES {
            self.add_pieces(input);
            return;
        }
        if self.event.is_none() {
            // The default event is the first sample's: settle it before splitting.
            match super::Samples::new(input).next() {
                Some(first) => self.event = Some(first.event.to_string()),
                None => return,
            }
        }
        let mut cuts = vec![0];
        for part in 1..threads {
            let target = input.len() * part / threads;
            let cut = super::grammar::last_event_line_start(&input[..target])
                .unwrap_or(0)
                .max(*cuts.last().expect("not empty"));
            cuts.push(cut);
        }
        cuts.push(input.len());
        cuts.dedup();
        let mut options = self.options.clone();
        options.event = self.event.clone();
        let parts: Vec<Folder> = std::thread::scope(|scope| {
            let handles: Vec<_> = cuts
                .windows(2)
                .map(|w| {
                    let piece = &input[w[0]..w[1]];
                    let options = options.clone();
                    scope.spawn(move || {
                        let mut folder = Folder::new(options);
                        folder.add_pieces(piece);
                        folder
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("folding thread"))
                .collect()
        });
        for part in parts {
            self.merge(part);
        }
    }

    /// Adds the stacks and counters of `other` (folded with the same options) to this one.
    pub fn merge(&mut self, other: Folder) {
        if self.event.is_none() {
            self.event.clone_from(&other.event);
        }
        let not_kept = self.stacks.merge(other.stacks);
        self.folded += other.folded - not_kept;
        self.filtered_out += other.filtered_out;
        self.empty += other.empty;
        self.not_kept += other.not_kept + not_kept;
        self.exited += other.exited;
    }
}

/// True for a sample of a task that had exited when perf read it: a negative pid or tid.
pub(super) fn of_exited_task(pid: Option<i32>, tid: i32) -> bool {
    tid < 0 || pid.is_some_and(|pid| pid < 0)
}

/// Where the last sample of `input` starts (the start of its last event line), so a stream
/// can be cut into pieces that each hold whole samples: fold `input[..cut]` now and keep
/// `input[cut..]` for the next block. `0` when there is no event line.
pub fn last_sample_start(input: &[u8]) -> usize {
    super::grammar::last_event_line_start(input).unwrap_or(0)
}

/// True when an event name as printed (`cpu-clock:pppH`) is the one asked for: the same
/// text, or the same once modifiers (`:pppH`, `:u`) are dropped from either.
pub fn event_matches(event: &str, wanted: &str) -> bool {
    event == wanted || strip_modifiers(event) == strip_modifiers(wanted)
}

/// `cpu-clock:pppH` → `cpu-clock`; `cycles:u` → `cycles`; `sched:sched_switch` unchanged.
pub fn strip_modifiers(event: &str) -> &str {
    match event.rsplit_once(':') {
        Some((name, modifiers))
            if !modifiers.is_empty()
                && modifiers.len() <= 8
                && modifiers.bytes().all(|b| b"ukhIGHpPSDWebR".contains(&b)) =>
        {
            name
        }
        _ => event,
    }
}

fn push_pid(out: &mut String, pid: Option<i32>) {
    match pid {
        Some(pid) => out.push_str(&pid.to_string()),
        None => out.push('?'),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 50 samples of 50 stacks (`postgres;main;f10` to `postgres;main;f59`), each path 9 bytes.
    fn fifty_stacks(first: usize) -> String {
        (first..first + 50)
            .map(|i| {
                format!(
                    "postgres {i} [000] 1.{i:06}: 1000 cpu-clock: \n\t 5bbbb4 f{i}+0x1 (/x)\n\t 5bbbb0 main+0x1 (/x)\n\n"
                )
            })
            .collect()
    }

    /// A folder with room for the root `postgres`, the name `;main`, and `paths` stacks of a
    /// new name `;fNN` (4 bytes) and a path of two names (9 bytes of text), each with what
    /// its entry costs.
    fn folder_with_room_for(paths: usize) -> Folder {
        use super::super::stacks::{PATH_ENTRY_BYTES, STRING_ENTRY_BYTES};
        let mut folder = Folder::new(FoldOptions::default());
        let room = (8 + STRING_ENTRY_BYTES)
            + (5 + STRING_ENTRY_BYTES)
            + paths * ((4 + STRING_ENTRY_BYTES) + (2 * 4 + 9 + PATH_ENTRY_BYTES));
        folder.stacks = StackTable::with_room(room);
        folder
    }

    #[test]
    fn stacks_past_the_room_are_counted_not_kept() {
        let text = fifty_stacks(10).repeat(2);
        let mut by_piece = folder_with_room_for(10);
        by_piece.add_input(text.as_bytes(), 1);
        let mut by_sample = folder_with_room_for(10);
        for sample in super::super::samples(text.as_bytes()) {
            by_sample.add(&sample);
        }
        for folder in [&by_piece, &by_sample] {
            assert_eq!(folder.folded_samples(), 20);
            assert_eq!(folder.samples_not_kept(), 80);
            assert_eq!(folder.stacks.room(), 0);
        }
        let rendered = by_piece.render();
        assert_eq!(rendered, by_sample.render());
        assert_eq!(rendered.lines().count(), 10);
        assert!(rendered.starts_with("postgres;main;f10 2000\n"));
    }

    #[test]
    fn merged_stacks_past_the_room_are_counted_not_kept() {
        let mut merged = folder_with_room_for(15);
        for first in [10, 50] {
            let mut part = folder_with_room_for(10);
            part.add_input(fifty_stacks(first).as_bytes(), 1);
            merged.merge(part);
        }
        // Each part kept 10 stacks of one sample; 15 of those 20 find room.
        assert_eq!(merged.folded_samples(), 15);
        assert_eq!(merged.samples_not_kept(), 85);
        assert_eq!(merged.render().lines().count(), 15);
    }

    #[test]
    fn modifiers_are_dropped_only_when_they_are_modifiers() {
        assert_eq!(strip_modifiers("cpu-clock:pppH"), "cpu-clock");
        assert_eq!(strip_modifiers("cycles:u"), "cycles");
        assert_eq!(strip_modifiers("sched:sched_switch"), "sched:sched_switch");
        assert_eq!(strip_modifiers("probe:foo"), "probe:foo");
        assert!(event_matches("cpu-clock:pppH", "cpu-clock"));
        assert!(!event_matches("cpu-migrations", "cpu-clock"));
    }
}
