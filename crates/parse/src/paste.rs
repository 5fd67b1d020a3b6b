//! Text pasted into a ticket, a mail or an issue: what the paste did to a log's lines, learned
//! from its first lines and undone line by line before a log reader sees them.
//!
//! Takes the first lines of a file ([`Paste::learn`]); yields a [`Paste`] that turns each
//! physical line back into the line the log had ([`Paste::clean`]), and [`PasteCounts`] that
//! say what was undone ([`PasteCounts::note`], for the source's note: never silently).
//!
//! What is undone, each only when the first lines show it:
//! * mail and forum quoting: `> `, `> > `, `>> `, a bare `>` on an empty line;
//! * the indentation a Markdown code block (or a list item around it) put in front of every
//!   line: the same run of spaces (at least two), or one TAB;
//! * Markdown fences (```` ``` ````, `~~~`) and the lines a person writes where text was cut
//!   (`...`, `[snip]`, `[...]`, `<snip>`, `-- snip --`, grep's `--`): counted, never read as
//!   log lines.
//!
//! CRLF line ends are taken off by the line splitter ([`crate::lines`]) and counted here. A
//! mail client's line wraps (a long line broken at 72–78 columns, its rest on the next line
//! without the log's prefix) cannot be told from the lines alone: the log readers, which know
//! what starts a line, find the width ([`wrap_width`]) and join the rests, counted in
//! [`PasteCounts::wraps_joined`].

use serde::Serialize;

/// What a paste did to the lines of a log, learned from its first lines. The default undoes
/// nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Paste {
    /// Lines are quoted (`> `, `> > `): the quote marks are taken off every line.
    pub quoted: bool,
    /// Spaces (or, with `indent_tab`, one TAB) every line was indented by, taken off.
    pub indent: u8,
    /// The indentation is one TAB.
    pub indent_tab: bool,
    /// Lines were wrapped at this many columns by a mail client (set by the log reader once it
    /// knows which lines start an entry; see [`wrap_width`]), or by a terminal (`hard_wrap`).
    pub wrap_width: Option<u16>,
    /// The wraps are a terminal's ([`hard_wrap_width`]): a line is cut at exactly
    /// `wrap_width` characters, nothing dropped, its rest joined without a space.
    pub hard_wrap: bool,
    /// Lines were padded with spaces to the terminal's width: the readers take trailing spaces
    /// off ([`Paste::unpad`]), and give them back to a line whose rest follows (a line cut at
    /// the width may end in a space of its own).
    pub padded: bool,
}

/// What a paste did to one log and what was undone: for the log's summary and its note.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PasteReport {
    /// What the paste did, as learned from the first lines.
    pub shape: Paste,
    /// What was undone.
    pub counts: PasteCounts,
}

impl PasteReport {
    /// The report of a log read with `shape` that had `counts` undone; `None` when nothing
    /// was.
    pub fn new(shape: Paste, counts: PasteCounts) -> Option<PasteReport> {
        (!counts.is_empty()).then_some(PasteReport { shape, counts })
    }

    /// One sentence saying what was undone ([`PasteCounts::note`]).
    pub fn note(&self) -> Option<String> {
        self.counts.note(&self.shape)
    }
}

/// What [`Paste::clean`] made of one physical line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cleaned<'a> {
    /// A line of the log, with the paste's damage taken off.
    Line(&'a str),
    /// A Markdown fence (```` ``` ````, `~~~`): not part of the log.
    Fence,
    /// A line marking where text was cut (`...`, `[snip]`, grep's `--`): not part of the log.
    Cut,
}

/// Lines [`Paste::learn`] looks at.
pub const LEARN_LINES: usize = 400;

/// What was undone in one log, counted as its lines were read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PasteCounts {
    /// Lines whose quote marks were taken off.
    pub quoted_lines: u64,
    /// Lines whose code-block indentation was taken off.
    pub unindented_lines: u64,
    /// Markdown fence lines, skipped.
    pub fence_lines: u64,
    /// Lines marking cut text (`...`, `[snip]`, `--`), skipped.
    pub cut_marks: u64,
    /// Lines that were the rest of a line a mail client wrapped, joined back.
    pub wraps_joined: u64,
    /// Lines that ended in CRLF.
    pub crlf_lines: u64,
    /// Lines whose padding to a terminal's width was taken off.
    pub unpadded_lines: u64,
    /// Lines whose Markdown emphasis (`**`, `__`) around them was taken off.
    pub emphasis_lines: u64,
}

impl PasteCounts {
    /// True when nothing was undone.
    pub fn is_empty(&self) -> bool {
        *self == PasteCounts::default()
    }

    /// Adds `other`'s counts.
    pub fn add(&mut self, other: &PasteCounts) {
        self.quoted_lines += other.quoted_lines;
        self.unindented_lines += other.unindented_lines;
        self.fence_lines += other.fence_lines;
        self.cut_marks += other.cut_marks;
        self.wraps_joined += other.wraps_joined;
        self.crlf_lines += other.crlf_lines;
        self.unpadded_lines += other.unpadded_lines;
        self.emphasis_lines += other.emphasis_lines;
    }

    /// `self` + (`end` − `at_meeting`), field by field (wrapping): the counts of one pass when
    /// a parallel reader joins a block read twice.
    pub(crate) fn joined(&self, end: &PasteCounts, at_meeting: &PasteCounts) -> PasteCounts {
        let f = |a: u64, b: u64, c: u64| a.wrapping_add(b).wrapping_sub(c);
        PasteCounts {
            quoted_lines: f(self.quoted_lines, end.quoted_lines, at_meeting.quoted_lines),
            unindented_lines: f(
                self.unindented_lines,
                end.unindented_lines,
                at_meeting.unindented_lines,
            ),
            fence_lines: f(self.fence_lines, end.fence_lines, at_meeting.fence_lines),
            cut_marks: f(self.cut_marks, end.cut_marks, at_meeting.cut_marks),
            wraps_joined: f(self.wraps_joined, end.wraps_joined, at_meeting.wraps_joined),
            crlf_lines: f(self.crlf_lines, end.crlf_lines, at_meeting.crlf_lines),
            unpadded_lines: f(
                self.unpadded_lines,
                end.unpadded_lines,
                at_meeting.unpadded_lines,
            ),
            emphasis_lines: f(
                self.emphasis_lines,
                end.emphasis_lines,
                at_meeting.emphasis_lines,
            ),
        }
    }

    /// One sentence saying what was undone (for a source's note), `None` when nothing was.
    /// CRLF alone is said too: the file came through Windows or a browser.
    pub fn note(&self, paste: &Paste) -> Option<String> {
        let lines = |n: u64| {
            if n == 1 {
                "1 line".to_owned()
            } else {
                format!("{n} lines")
            }
        };
        let mut parts = Vec::new();
        if self.quoted_lines > 0 {
            parts.push(format!(
                "{} quoted with `>` (quote marks taken off)",
                lines(self.quoted_lines)
            ));
        }
        if self.unindented_lines > 0 {
            let what = if paste.indent_tab {
                "a TAB".to_owned()
            } else {
                format!("{} spaces", paste.indent)
            };
            parts.push(format!(
                "{} indented by {what}, as a code block (indentation taken off)",
                lines(self.unindented_lines)
            ));
        }
        if self.unpadded_lines > 0 {
            parts.push(format!(
                "{} padded with spaces to the terminal's width (spaces taken off)",
                lines(self.unpadded_lines)
            ));
        }
        if self.wraps_joined > 0 {
            let width = paste
                .wrap_width
                .map_or_else(String::new, |w| format!(" at {w} columns"));
            let by = if paste.hard_wrap {
                "by a terminal"
            } else {
                "by a mail client"
            };
            parts.push(format!(
                "{} wrapped{width} {by} (joined back to the line they continue)",
                lines(self.wraps_joined)
            ));
        }
        if self.emphasis_lines > 0 {
            parts.push(format!(
                "{} marked with Markdown emphasis (`**` taken off)",
                lines(self.emphasis_lines)
            ));
        }
        if self.cut_marks > 0 {
            parts.push(format!(
                "{} marking cut text (`...`, `[snip]`, `--`): lines are missing there",
                lines(self.cut_marks)
            ));
        }
        if self.fence_lines > 0 {
            parts.push(format!(
                "{} of Markdown fences skipped",
                lines(self.fence_lines)
            ));
        }
        if self.crlf_lines > 0 {
            parts.push(format!("{} ended in CRLF", lines(self.crlf_lines)));
        }
        if parts.is_empty() {
            return None;
        }
        let pasted = self.quoted_lines
            + self.unindented_lines
            + self.wraps_joined
            + self.cut_marks
            + self.fence_lines
            + self.unpadded_lines
            + self.emphasis_lines
            > 0;
        let head = if pasted { "pasted text" } else { "line ends" };
        Some(format!("{head}: {}", parts.join("; ")))
    }
}

impl Paste {
    /// Learns what a paste did from the first lines of a log (at most [`LEARN_LINES`]):
    /// quoting when at least a quarter of the lines that are not blank start with `>`
    /// (and at least two do); indentation when six lines in ten that are not blank (after the
    /// quote marks) start with two spaces or more (a code block among sentences that are not
    /// indented; the least indentation of those lines is taken off each line), or every one
    /// with a TAB (at least three lines).
    ///
    /// `indented_by_itself` says which lines the log itself indents (a memory-context dump's
    /// nesting, a kernel stack frame): they never decide, and lose only the paste's
    /// indentation.
    pub fn learn<'a>(
        lines: impl IntoIterator<Item = &'a str>,
        indented_by_itself: &dyn Fn(&str) -> bool,
    ) -> Paste {
        let lines: Vec<&str> = lines.into_iter().take(LEARN_LINES).collect();
        let filled = lines.iter().filter(|l| !l.trim().is_empty()).count();
        let quoted_count = lines
            .iter()
            .filter(|l| l.starts_with('>') && !l.starts_with(">>>"))
            .count();
        let quoted = quoted_count >= 2 && quoted_count * 4 >= filled;
        // Indented: most lines (a code block inside prose that is not) start with two spaces
        // or more; the block's indentation is the least of those.
        let mut min_spaces = usize::MAX;
        let (mut tabbed, mut indented, mut counted) = (0usize, 0usize, 0usize);
        for line in &lines {
            let text = if quoted { unquote(line).0 } else { line };
            if text.trim().is_empty() || marker(text).is_some() || indented_by_itself(text) {
                continue;
            }
            counted += 1;
            let spaces = text.bytes().take_while(|&b| b == b' ').count();
            if spaces >= 2 {
                indented += 1;
                min_spaces = min_spaces.min(spaces);
            }
            if text.starts_with('\t') {
                tabbed += 1;
            }
        }
        let (indent, indent_tab) = if counted == 0 {
            (0, false)
        } else if indented * 10 >= counted * 6 && indented >= 2 {
            (min_spaces.min(16) as u8, false)
        } else if tabbed == counted && counted >= 3 {
            (1, true)
        } else {
            (0, false)
        };
        Paste {
            quoted,
            indent,
            indent_tab,
            ..Paste::default()
        }
    }

    /// `text` without the spaces a terminal padded it with, and how many there were (none
    /// unless [`Paste::padded`]); counted in `counts`.
    pub fn unpad<'a>(&self, text: &'a str, counts: &mut PasteCounts) -> (&'a str, usize) {
        if !self.padded {
            return (text, 0);
        }
        let trimmed = text.trim_end_matches(' ');
        let pad = text.len() - trimmed.len();
        if pad > 0 {
            counts.unpadded_lines += 1;
        }
        (trimmed, pad)
    }

    /// True when this paste changes no line (but for emphasis marks, always taken off).
    pub fn is_plain(&self) -> bool {
        !self.quoted && self.indent == 0 && !self.padded
    }

    /// The line the log had, or what else the line is; counts what it undid in `counts`.
    /// Fences and cut marks are recognised in any log, pasted or not (they are never log
    /// lines): a caller that must keep them (a memory-context dump line is never one) asks
    /// before.
    pub fn clean<'a>(&self, line: &'a str, counts: &mut PasteCounts) -> Cleaned<'a> {
        let mut text = line;
        if self.quoted {
            let (rest, was) = unquote(text);
            if was {
                counts.quoted_lines += 1;
            }
            text = rest;
        }
        if self.indent > 0 {
            let taken = if self.indent_tab {
                usize::from(text.starts_with('\t'))
            } else {
                text.bytes()
                    .take(usize::from(self.indent))
                    .take_while(|&b| b == b' ')
                    .count()
            };
            if taken > 0 && text.len() > taken {
                counts.unindented_lines += 1;
            }
            text = &text[taken..];
        }
        // `**2022-04-05 12:06:05.719 GMT [1] LOG:  …**`: emphasis typed around a line (or in
        // front of it, `**` only: a journal export's `__CURSOR=` is no emphasis).
        if let Some(rest) = text
            .strip_prefix("**")
            .or_else(|| text.strip_prefix("__").filter(|r| r.ends_with("__")))
            && rest.starts_with(|c: char| c.is_alphanumeric() || c == '[')
        {
            counts.emphasis_lines += 1;
            text = rest
                .strip_suffix("**")
                .or_else(|| rest.strip_suffix("__"))
                .unwrap_or(rest);
        }
        match marker(text) {
            Some(Cleaned::Fence) => {
                counts.fence_lines += 1;
                Cleaned::Fence
            }
            Some(_) => {
                counts.cut_marks += 1;
                Cleaned::Cut
            }
            None => Cleaned::Line(text),
        }
    }
}

/// The width a terminal wrapped lines at (copied from a terminal, a web console): lines cut at
/// exactly that many characters, nothing dropped. Two lines at least reach the longest width,
/// and one of them, not ending in a space, is followed by a line that starts no entry
/// (`starts_entry`, as for [`wrap_width`]). Also says whether lines were padded with spaces to
/// that width (two reach it by trailing spaces). Widths under 80 are a mail client's
/// ([`wrap_width`]).
pub fn hard_wrap_width<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    starts_entry: &dyn Fn(&str) -> bool,
) -> Option<(u16, bool)> {
    let lines: Vec<&str> = lines
        .into_iter()
        .take(LEARN_LINES)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let width = |l: &str| l.chars().count();
    let longest = lines.iter().map(|l| width(l)).max()?;
    if longest < 80 || longest > usize::from(u16::MAX) {
        return None;
    }
    let full: Vec<&&str> = lines.iter().filter(|l| width(l) == longest).collect();
    let padded = full.iter().filter(|l| l.ends_with(' ')).count() >= 2;
    let breaks = lines
        .windows(2)
        .filter(|w| width(w[0]) == longest && !w[0].ends_with(' ') && !starts_entry(w[1]))
        .count();
    (full.len() >= 2 && breaks >= 1).then_some((longest as u16, padded))
}

/// `> > text` → (`text`, true); a bare `>` (an empty quoted line) → (``, true).
fn unquote(mut text: &str) -> (&str, bool) {
    let mut was = false;
    while let Some(rest) = text.strip_prefix('>') {
        was = true;
        text = rest.strip_prefix(' ').unwrap_or(rest);
    }
    (text, was)
}

/// A fence or a cut mark (after any spaces; a line starting with a TAB never is one: it
/// continues a PostgreSQL message, `\t--` included).
pub fn marker(text: &str) -> Option<Cleaned<'static>> {
    let t = text.trim_start_matches(' ');
    // Cheap gate on the hot path: a marker is short and starts with one of these (`…` is
    // 0xE2 0x80 0xA6).
    if t.len() > 64
        || !matches!(
            t.as_bytes().first(),
            Some(b'.' | b'[' | b'<' | b'(' | b'-' | b'`' | b'~' | b'*' | b'=' | 0xE2)
        )
    {
        return None;
    }
    let t = t.trim_end();
    if t.starts_with("```") || t.starts_with("~~~") {
        // ```` ``` ````, ```` ```text ````, ```` ```log ````: a fence, maybe naming a language.
        let rest = t.trim_start_matches(['`', '~']);
        return rest
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            .then_some(Cleaned::Fence);
    }
    if t == "--" {
        return Some(Cleaned::Cut);
    }
    cut_mark(t).then_some(Cleaned::Cut)
}

/// `...`, `…`, `[...]`, `[snip]`, `<snip>`, `(snip)`, `-- snip --`, `[ … 120 lines cut … ]`:
/// only dots, brackets, dashes, digits and the words people write for cut text.
fn cut_mark(t: &str) -> bool {
    const WORDS: &[&str] = &[
        "snip",
        "snipped",
        "cut",
        "more",
        "lines",
        "line",
        "omitted",
        "truncated",
        "trimmed",
        "removed",
        "skipped",
        "elided",
        "output",
        "etc",
    ];
    let dots = t.matches("...").count() + t.matches('…').count();
    let mut words = 0;
    for word in t.split(|c: char| !c.is_alphabetic()) {
        if word.is_empty() {
            continue;
        }
        if !WORDS.contains(&word.to_ascii_lowercase().as_str()) {
            return false;
        }
        words += 1;
    }
    let digits = t.chars().any(|c| c.is_ascii_digit());
    let rest_ok = t.chars().all(|c| {
        c.is_alphabetic()
            || c.is_ascii_digit()
            || matches!(
                c,
                '.' | '…' | '[' | ']' | '(' | ')' | '<' | '>' | '-' | ' ' | '=' | '*'
            )
    });
    let key_word = t.split(|c: char| !c.is_alphabetic()).any(|w| {
        matches!(
            w.to_ascii_lowercase().as_str(),
            "snip" | "snipped" | "cut" | "omitted" | "truncated" | "trimmed" | "elided" | "skipped"
        )
    });
    // Digits only with words: `[ … 120 lines cut … ]`, never `[  522.9] ...`.
    rest_ok && (dots > 0 || key_word) && (words > 0 || dots > 0) && (!digits || words > 0)
}

/// The width a mail client wrapped lines at, from the first lines of a log whose line starts
/// the caller can tell (`starts_entry`: the line fits the log's prefix, or is a kind of line
/// the log has without one): no line is longer than 80 columns, and lines that reach within
/// 20 columns of the longest are followed by a line that starts no entry (the rest of the
/// wrapped line) for a third of the lines that start one (a wrapped log has most of its lines
/// longer than the width), or at least once when the text shows it was pasted otherwise
/// (`pasted`: quoted or indented). `None` for a log that was not wrapped: a short log whose
/// program printed a few lines of its own is not one.
pub fn wrap_width<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    starts_entry: &dyn Fn(&str) -> bool,
    pasted: bool,
) -> Option<u16> {
    let lines: Vec<&str> = lines
        .into_iter()
        .take(LEARN_LINES)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let width = |l: &str| l.chars().count();
    let longest = lines.iter().map(|l| width(l)).max()?;
    if !(60..=80).contains(&longest) {
        return None;
    }
    let entries = lines.iter().filter(|l| starts_entry(l)).count();
    let breaks = lines
        .windows(2)
        .filter(|w| width(w[0]) + 20 >= longest && starts_entry(w[0]) && !starts_entry(w[1]))
        .count();
    let enough = if pasted {
        breaks >= 1
    } else {
        breaks >= 2 && breaks * 3 >= entries
    };
    enough.then_some(longest as u16)
}

/// [`wrap_width`] for a log whose every line carries a prefix (a kernel log with times): a
/// line without one is a wrapped rest when the lines before nearly all of them (four in five,
/// two at least) reach within 20 columns of the longest of those lines (at most 100: a mail
/// client wraps at 66 to 80 columns, and may leave a line it could not break longer). The
/// width is that longest line before a rest.
pub fn wrap_width_by_rests<'a>(
    lines: impl IntoIterator<Item = &'a str>,
    starts_entry: &dyn Fn(&str) -> bool,
) -> Option<u16> {
    let lines: Vec<&str> = lines
        .into_iter()
        .take(LEARN_LINES)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let width = |l: &str| l.chars().count();
    let before_rests: Vec<usize> = lines
        .windows(2)
        .filter(|w| !starts_entry(w[1]))
        .map(|w| width(w[0]))
        .collect();
    let rests = lines.iter().filter(|l| !starts_entry(l)).count();
    let longest = before_rests.iter().copied().max()?;
    if !(40..=100).contains(&longest) {
        return None;
    }
    let breaks = before_rests.iter().filter(|&&w| w + 20 >= longest).count();
    (breaks >= 2 && breaks * 5 >= rests * 4).then_some(longest as u16)
}

/// Whether a line `previous_width` columns long, followed by `rest` (a line that starts no
/// entry), was wrapped there by a mail client wrapping at `width` columns: a greedy wrap moves
/// a word to the next line only when it does not fit after the words before, so the line and
/// the rest's first word are longer than the width together (`width` may be a column short:
/// it is the longest line seen).
pub fn is_wrapped(previous_width: usize, rest: &str, width: u16) -> bool {
    let first_word = rest.chars().take_while(|c| *c != ' ').count();
    previous_width <= usize::from(width) + 1
        && previous_width + 1 + first_word >= usize::from(width)
}

/// How the rest of a wrapped line joins the part before it: the client broke the line at a
/// space and dropped it, unless the part before still ends with it (format=flowed) or the
/// line was cut inside a word (`hard_break`: a client cuts a word only when it is longer than
/// the whole line, so the line cut holds no space).
pub fn join_wrapped(before: &mut String, rest: &str, hard_break: bool) {
    if !(before.ends_with(' ') || hard_break) {
        before.push(' ');
    }
    before.push_str(rest);
}

#[cfg(test)]
#[path = "paste_tests.rs"]
mod tests;
