//! `perf script` text: samples with their call chains, folding to collapsed stacks, and a
//! profile summary (where the time went).
//!
//! Any layout perf prints is read, detected line by line from its shape: the default fields
//! with and without call chains (`-g`), custom `-F` field sets, the `--header` block,
//! tracepoints with their payload (with and without call chains), several events in one file,
//! perf 3.x output without time or CPU, `-F +srcline` lines, DSOs holding spaces and
//! parentheses, process names holding spaces. The grammar is in docs/perf.md.
//!
//! * [`Samples`]: the streaming reader, an iterator of [`PerfSample`]s borrowing from the
//!   input, with [`crate::ParseStats`] and the [`PerfHeader`].
//! * [`Folder`] / [`collapse`]: collapsed stacks, byte-identical to `inferno-collapse-perf`
//!   on well-formed input.
//! * [`Profile`]: per-event totals, per process, top functions, kernel share, a timeline and
//!   the share of samples whose stack holds given symbols.

mod fold;
mod frame_names;
mod grammar;
mod pieces;
mod profile;
mod reader;
mod stacks;
mod types;

pub use fold::{
    FOLD_CACHE_BYTES, FoldOptions, Folder, collapse, event_matches, last_sample_start,
    strip_modifiers,
};
pub use profile::*;
pub use reader::{MAX_FRAMES, MAX_LINE_BYTES, Samples, SamplesState};
pub use stacks::FOLD_STACK_BYTES;
pub use types::{Frame, PerfHeader, PerfLineCounts, PerfSample};

/// Reads the samples of a `perf script` text. Same as [`Samples::new`].
pub fn samples(input: &[u8]) -> Samples<'_> {
    Samples::new(input)
}

/// How sure we are that `head` (the first bytes of a file) is `perf script` output: the share
/// of its first 200 non-blank, non-comment lines that are event or frame lines, or `None`
/// when there is no such line, fewer than half are, or nothing but event-shaped lines is
/// there. Event-shaped lines alone (`comm pid …: text`) also describe process listings and
/// log lines, so a file counts only with a `# ========` header, a call-chain frame line, or
/// a sample line that ends in a frame's `(dso)`.
pub fn sniff(head: &[u8]) -> Option<f32> {
    let mut total = 0u32;
    let mut events = 0u32;
    let mut known = 0u32;
    let mut frames = 0u32;
    let mut header = false;
    for line in crate::lines::Lines::new(head).take(400) {
        let text = line.text.trim_end();
        if text.starts_with("# ========") {
            header = true;
            continue;
        }
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        total += 1;
        if grammar::frame(text).is_some() {
            known += 1;
            frames += 1;
        } else if grammar::event_line(text).is_some() {
            known += 1;
            events += 1;
            if text.ends_with(')') && text.contains(" (") {
                frames += 1;
            }
        }
        if total >= 200 {
            break;
        }
    }
    if total == 0 || events == 0 || known * 2 < total || !(header || frames > 0) {
        return None;
    }
    let share = known as f32 / total as f32;
    Some(if header { share.max(0.9) } else { share })
}
