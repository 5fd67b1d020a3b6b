//! What a paste did to a PostgreSQL log, undone before its format and prefix are chosen
//! ([`crate::paste`]): the first lines cleaned of quoting, indentation and cut marks; lines a
//! mail client broke after their prefix rejoined for the prefix to be learned from; and, once
//! the prefix is known, whether and how the lines were wrapped (by a terminal, by a mail
//! client). The assembler joins the wrapped rests as it reads
//! ([`super::assemble::Assembler::set_wrap`]).

use crate::lines::Lines;
use crate::paste::{self, Cleaned, Paste, PasteCounts};

use super::LogLinePrefix;
use super::severity;

/// What a paste did to the lines of `head` ([`Paste::learn`]); nothing for JSON (jsonlog, a
/// cloud's export), which its writer indents, never a paste.
pub(super) fn learn_paste(head: &[u8]) -> Paste {
    let texts: Vec<_> = Lines::new(head)
        .take(paste::LEARN_LINES)
        .map(|l| l.text)
        .collect();
    let json = texts
        .iter()
        .find(|t| !t.trim().is_empty())
        .is_some_and(|t| t.trim_start().starts_with(['{', '[']));
    if json {
        return Paste::default();
    }
    Paste::learn(texts.iter().map(|t| &**t), &|line| {
        super::memdump::parse_line(line).is_some()
    })
}

/// `head` with what the paste did undone line by line (fences and cut marks left as blank
/// lines, so that line numbers stay); `head` itself when the paste changes no line.
pub(super) fn unpasted_head<'a>(head: &'a [u8], paste: &Paste) -> std::borrow::Cow<'a, [u8]> {
    let marked = || Lines::new(head).any(|l| paste::marker(&l.text).is_some());
    if paste.is_plain() && !marked() {
        return std::borrow::Cow::Borrowed(head);
    }
    let mut out = Vec::with_capacity(head.len());
    let mut counts = PasteCounts::default();
    for line in Lines::new(head) {
        if let Cleaned::Line(text) = paste.clean(&line.text, &mut counts) {
            out.extend_from_slice(text.as_bytes());
        }
        out.push(b'\n');
    }
    std::borrow::Cow::Owned(out)
}

/// Whether the first lines may have been wrapped by a mail client: the text was pasted
/// (quoted, indented), or no line is longer than 80 columns and some reach 60.
pub(super) fn maybe_wrapped(paste: &Paste, lines: &[(u64, String)]) -> bool {
    let longest = lines
        .iter()
        .map(|(_, t)| t.chars().count())
        .max()
        .unwrap_or(0);
    !paste.is_plain() || (60..=80).contains(&longest)
}

/// The lines a prefix is chosen from, with a line that has no severity word joined to the
/// next when that one starts with its severity word: a mail client broke the line after its
/// prefix (`… [app=report]` / `LOG:  connection received: …`), and the prefix is learned
/// from the whole line. A line without a digit is not taken for a broken-off prefix (a prefix
/// carries its time or PID): a psql prompt (`tenants=# select * from sessions;`) before the
/// server's bare `ERROR:  …` is psql's own line, not the prefix of the next.
pub(super) fn rejoined_prefixes(lines: &[(u64, String)]) -> Vec<(u64, String)> {
    let mut out: Vec<(u64, String)> = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let (number, text) = &lines[i];
        if let Some((_, next)) = lines.get(i + 1)
            && !text.trim().is_empty()
            && !text.starts_with('\t')
            && text.bytes().any(|b| b.is_ascii_digit())
            && super::prefix_infer::prefix_instance(text).is_none()
            && super::prefix_infer::prefix_instance(next) == Some("")
        {
            let mut joined = text.clone();
            paste::join_wrapped(&mut joined, next, false);
            out.push((*number, joined));
            i += 2;
            continue;
        }
        out.push((*number, text.clone()));
        i += 1;
    }
    out
}

/// How a stderr log's lines were wrapped, if they were: by a terminal at its width
/// ([`paste::hard_wrap_width`], maybe padded to it), else by a mail client
/// ([`paste::wrap_width`]). A line starts an entry when it fits the prefix with a severity
/// word, is the prefix alone, continues one with a TAB, is part of a memory-context dump, or
/// is one of pg_ctl's.
pub(super) fn set_wraps(paste: &mut Paste, prefix: &LogLinePrefix, lines: &[(u64, String)]) {
    let tail_ok = |rest: &str| severity::split(rest).is_some();
    let tail_empty = |rest: &str| rest.is_empty();
    let starts = |line: &str| {
        line.starts_with('\t')
            || prefix.match_line(line, &tail_ok).is_some()
            || prefix.match_line(line, &tail_empty).is_some()
            || prefix
                .match_line(&format!("{line} "), &tail_empty)
                .is_some()
            || super::memdump::parse_line(line).is_some()
            || super::assemble::is_pg_ctl_line(line)
    };
    let texts = || lines.iter().map(|(_, t)| t.as_str());
    if let Some((width, padded)) = paste::hard_wrap_width(texts(), &starts) {
        paste.wrap_width = Some(width);
        paste.hard_wrap = true;
        paste.padded = padded;
        return;
    }
    paste.wrap_width = paste::wrap_width(texts(), &starts, !paste.is_plain());
}
