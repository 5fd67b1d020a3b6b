//! What a paste did to a kernel log ([`crate::paste`]), undone as [`KernelParser`] reads: the
//! first lines held until it is learned from them (quoting, code-block indentation, cut marks;
//! the kernel's own indentation of frames and Mem-Info never counts), and, when most lines
//! carry a prefix, the lines a mail client or a terminal wrapped joined back (a line is held
//! one step for its rest).

use crate::lines::Line;
use crate::paste::{self, Cleaned, Paste, PasteCounts};

use super::{KernelOptions, KernelParser, LineForm, oom, parse_line, separator};

/// Lines, and bytes, held at the start of a log to learn what a paste did.
pub(super) const PASTE_HEAD_LINES: usize = 200;
pub(super) const PASTE_HEAD_BYTES: usize = 256 * 1024;

/// The first lines of a log, held until what a paste did is learned from them.
#[derive(Debug, Default)]
pub(super) struct Head {
    pub(super) lines: Vec<Line<'static>>,
    pub(super) bytes: usize,
}

/// A line held back one step, its wrapped rests joined to it.
#[derive(Debug)]
pub(super) struct Held {
    number: u64,
    text: String,
    /// The last physical piece, its width and the padding taken off it.
    last: String,
    width: usize,
    pad: usize,
}

/// How a kernel log's lines were wrapped, if they were, when most of its lines carry a prefix
/// (a time, a syslog header): by a terminal at its width ([`paste::hard_wrap_width`], maybe
/// padded to it), else by a mail client ([`paste::wrap_width`]). A line starts an entry when it
/// has a prefix, is indented (a journal's continuation) or separates. A log of bare lines
/// cannot show where a line was broken.
fn set_wraps(paste: &mut Paste, lines: &[Line<'_>]) {
    let options = KernelOptions::default();
    let mut counts = PasteCounts::default();
    let cleaned: Vec<&str> = lines
        .iter()
        .filter_map(|l| match paste.clean(&l.text, &mut counts) {
            Cleaned::Line(text) => Some(text),
            _ => None,
        })
        .collect();
    let prefixed = cleaned
        .iter()
        .filter(|l| parse_line(l, 0, &options).form != LineForm::Bare)
        .count();
    let starts = |l: &str| parse_line(l, 0, &options).form != LineForm::Bare || !wrap_rest(l);
    if prefixed * 2 < cleaned.len() {
        // A console transcript where the kernel's lines are few among other programs' output:
        // only lines padded with spaces to the terminal's width show where it broke them.
        if let Some((width, true)) = paste::hard_wrap_width(cleaned.iter().copied(), &starts) {
            paste.wrap_width = Some(width);
            paste.hard_wrap = true;
            paste.padded = true;
        }
        return;
    }
    if let Some((width, padded)) = paste::hard_wrap_width(cleaned.iter().copied(), &starts) {
        paste.wrap_width = Some(width);
        paste.hard_wrap = true;
        paste.padded = padded;
        return;
    }
    // The kernel never prints a line without its prefix into such a log: a bare line is a
    // wrapped rest when long lines come before nearly all of them.
    paste.wrap_width = paste::wrap_width(cleaned.iter().copied(), &starts, !paste.is_plain())
        .or_else(|| paste::wrap_width_by_rests(cleaned.iter().copied(), &starts));
}

/// Whether a line has a kernel line's prefix.
fn prefixed(text: &str) -> bool {
    parse_line(text, 0, &KernelOptions::default()).form != LineForm::Bare
}

/// A line that may be the rest of a wrapped one: no prefix, not indented, no separator.
fn wrap_rest(text: &str) -> bool {
    !text.starts_with([' ', '\t'])
        && !separator(text)
        && parse_line(text, 0, &KernelOptions::default()).form == LineForm::Bare
}

impl KernelParser {
    /// Learns what a paste did from the lines held, then reads them.
    pub(super) fn learn_paste(&mut self) {
        let Some(head) = self.head.take() else {
            return;
        };
        // A wrapper's lines (a journal export's fields) are no paste's.
        if !matches!(self.peeler, Some(Some(_))) {
            let mut paste = Paste::learn(
                head.lines.iter().map(|l| &*l.text),
                &oom::indented_by_kernel,
            );
            set_wraps(&mut paste, &head.lines);
            self.paste = paste;
        }
        for line in &head.lines {
            self.unpaste(line);
        }
    }

    /// Counts one physical line and takes off what the paste did.
    pub(super) fn unpaste(&mut self, line: &Line<'_>) {
        self.stats.lines += 1;
        if line.lossy {
            self.stats.invalid_utf8_lines += 1;
        }
        if line.crlf {
            self.paste_counts.crlf_lines += 1;
        }
        let text = match self.paste.clean(&line.text, &mut self.paste_counts) {
            Cleaned::Line(text) => text,
            Cleaned::Fence | Cleaned::Cut => return,
        };
        let full_width = text.chars().count();
        let (text, pad) = self.paste.unpad(text, &mut self.paste_counts);
        let Some(width) = self.paste.wrap_width else {
            self.process(line.number, text);
            return;
        };
        if let Some(held) = &mut self.held {
            let wrapped = if self.paste.hard_wrap {
                // Padded to the width, every line fills it: only a kernel line (one with its
                // prefix) is taken to continue on the bare line after it; another program's
                // output beside it is not the kernel's to join.
                held.width >= usize::from(width)
                    && (!self.paste.padded || prefixed(&held.text))
                    // A rest padded to the width ended before it: nothing more follows.
                    && !(self.paste.padded && held.pad > 0 && held.text.len() != held.last.len())
                    && (self.paste.padded || !held.last.ends_with(' '))
            } else {
                paste::is_wrapped(held.width, text, width)
            };
            if wrapped && wrap_rest(text) {
                if self.paste.hard_wrap {
                    // A line cut at the width: its trailing spaces were its own.
                    held.text.push_str(&" ".repeat(held.pad));
                    held.text.push_str(text);
                } else {
                    let hard_break = !held.last.contains(' ');
                    paste::join_wrapped(&mut held.text, text, hard_break);
                }
                held.width = full_width;
                held.pad = pad;
                held.last = text.to_owned();
                self.paste_counts.wraps_joined += 1;
                return;
            }
            self.release_held();
        }
        self.held = Some(Held {
            number: line.number,
            text: text.to_owned(),
            last: text.to_owned(),
            width: full_width,
            pad,
        });
    }

    /// Reads the line held back for its wrapped rest.
    pub(super) fn release_held(&mut self) {
        if let Some(held) = self.held.take() {
            self.process(held.number, &held.text);
        }
    }
}
