//! The sources inventory as the text and Markdown reports show it: every file that went wrong
//! in some way (a note, lines not understood) on its own line, and what needs no attention
//! folded (ruff's and ripgrep's answer-first shape): more than [`FOLD_OVER`] files of one kind
//! all read whole (a sosreport's hundreds of `/proc/sys` files), the files kept for a person to
//! read, a score of symbolic links. JSON and the HTML page list every file.

use std::collections::{BTreeMap, BTreeSet};

use pgmortem_diagnose::{Report, SourceSummary};

/// Files of one kind past which they fold into one line.
pub(crate) const FOLD_OVER: usize = 30;
/// Symbolic links past which they fold into one line.
const LINKS_OVER: usize = 5;

/// One line of the inventory.
pub(crate) enum Line<'a> {
    /// A file on its own line.
    File(&'a SourceSummary),
    /// Files of one kind, all read whole.
    Kind {
        kind: &'a str,
        files: usize,
        lines: u64,
        records: u64,
        /// Where they lie (`proc/ 1312`).
        dirs: String,
    },
    /// Symbolic links, not followed, and the first few.
    Links { count: usize, first: Vec<&'a str> },
    /// The heading of the files kept for a person to read, listed one by one after it.
    KeptHeading,
    /// The files kept for a person to read, folded.
    Kept { count: usize, dirs: String },
}

/// Files kept for a person: no rule reads them.
fn for_people(kind: &str) -> bool {
    kind == "reference" || kind == "collector_log"
}

/// A file that needs no attention: no note, every line understood.
fn clean(s: &SourceSummary) -> bool {
    s.note.is_none() && s.unrecognized_lines == 0
}

fn is_link(s: &SourceSummary) -> bool {
    s.kind == "unreadable"
        && s.note
            .as_deref()
            .is_some_and(|n| n.starts_with("symbolic link"))
}

/// The inventory's lines, in the report's order of sources; the files for people last under
/// their heading when `people_last` (else in their place), folded to one line when there are
/// more than [`FOLD_OVER`] of them.
pub(crate) fn lines(report: &Report, people_last: bool) -> Vec<Line<'_>> {
    let people = report.sources.iter().filter(|s| for_people(s.kind)).count();
    let in_place = !people_last && people <= FOLD_OVER;
    let (read, kept): (Vec<_>, Vec<_>) = report
        .sources
        .iter()
        .partition(|s| in_place || !for_people(s.kind));
    let mut per_kind: BTreeMap<&str, usize> = BTreeMap::new();
    for s in read.iter().filter(|s| clean(s) && !for_people(s.kind)) {
        *per_kind.entry(s.kind).or_default() += 1;
    }
    let folded =
        |s: &SourceSummary| clean(s) && per_kind.get(s.kind).is_some_and(|&n| n > FOLD_OVER);
    let links: Vec<&str> = read
        .iter()
        .filter(|s| is_link(s))
        .map(|s| s.path.as_str())
        .collect();
    let mut out = Vec::new();
    let mut done = BTreeSet::new();
    for s in &read {
        if links.len() > LINKS_OVER && is_link(s) {
            if done.insert("\0links") {
                out.push(Line::Links {
                    count: links.len(),
                    first: links.iter().take(3).copied().collect(),
                });
            }
        } else if !folded(s) {
            out.push(Line::File(s));
        } else if done.insert(s.kind) {
            let all: Vec<_> = read
                .iter()
                .filter(|r| r.kind == s.kind && folded(r))
                .collect();
            out.push(Line::Kind {
                kind: s.kind,
                files: all.len(),
                lines: all.iter().map(|r| r.lines).sum(),
                records: all.iter().map(|r| r.records).sum(),
                dirs: dirs(all.iter().map(|r| r.path.as_str())),
            });
        }
    }
    if kept.len() > FOLD_OVER {
        out.push(Line::Kept {
            count: kept.len(),
            dirs: dirs(kept.iter().map(|s| s.path.as_str())),
        });
    } else if !kept.is_empty() {
        out.push(Line::KeptHeading);
        out.extend(kept.into_iter().map(Line::File));
    }
    out
}

/// Where files lie, by their first directory: `sys/ 1650, proc/ 120, sos_commands/ 70`, the
/// fullest first, at most five.
fn dirs<'a>(paths: impl Iterator<Item = &'a str>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for p in paths {
        let top = match p.split_once('/') {
            Some((d, _)) => &p[..d.len() + 1],
            None => p,
        };
        *counts.entry(top).or_default() += 1;
    }
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let mut parts: Vec<String> = counts
        .iter()
        .take(5)
        .map(|(d, n)| format!("{d} {n}"))
        .collect();
    if counts.len() > 5 {
        parts.push("…".to_owned());
    }
    parts.join(", ")
}
