//! The report as Markdown (CommonMark with GitHub's tables), to paste into a ticket or an
//! issue: a title, the summary (caveats first), the incidents as a table and each in a few
//! lines, each finding as a section with its evidence, the rules that could not run, the
//! host, the clock and the sources as a table.
//!
//! A bundle is hostile input: every piece of text that comes from it (a log message, a path,
//! a query, a cgroup name) is escaped for where it lands, so that it reads as the bundle wrote
//! it and never turns into Markdown structure (a heading, a table cell, a link, raw HTML, a
//! mention). Prose escapes the characters Markdown gives a meaning to ([`prose`]); code spans
//! and fenced blocks are fenced with more backticks than the text holds ([`code`],
//! [`fenced`]); table cells escape `|` and keep to one line ([`cell`]). Control characters
//! are shown as their Unicode pictures (`␛`).

use std::fmt::Write as _;

use pgmortem_diagnose::{Incident, IncidentGroup, PoolerProblem, Report, Severity, human_kb};

use crate::describe::{self, ts};
use crate::fold::{self, Detail};

/// The report as Markdown, short (see [`Detail`]).
pub fn markdown(report: &Report) -> String {
    markdown_with(report, &Detail::default())
}

/// The report as Markdown, as detailed as `detail` asks, in the text's order: the headline and
/// one sentence per group of incidents, the findings, the caveats, the incidents, the clients,
/// the host, the clock, the rules not evaluated and the sources.
pub fn markdown_with(report: &Report, detail: &Detail) -> String {
    let groups = fold::groups(report);
    let folded = fold::findings(report, &groups);
    let mut out = String::new();
    let _ = writeln!(out, "# pgmortem report\n");
    let _ = writeln!(
        out,
        "**{}**, by {}.\n",
        prose(&fold::headline(report, &folded, detail)),
        prose(&report.generator)
    );
    if !groups.is_empty() {
        for g in groups.iter() {
            let _ = writeln!(out, "- {}", prose(&fold::sentence(g, report)));
        }
        out.push('\n');
    }
    if !folded.is_empty() {
        let _ = writeln!(out, "## Findings\n");
        for (i, f) in folded.iter().enumerate() {
            write_finding(&mut out, i + 1, f, detail.verbose);
        }
    }
    if !report.caveats.is_empty() {
        let _ = writeln!(out, "> **Caveats** (they change the reading)");
        for c in &report.caveats {
            let _ = writeln!(out, ">\n> - {}", prose(&c.text).replace('\n', "\n>   "));
        }
        out.push('\n');
    }
    if !report.incidents.is_empty() {
        write_incidents(&mut out, report, &groups, detail.verbose);
    }
    write_pooler(&mut out, report);
    let host = describe::host_lines(report);
    if !host.is_empty() {
        let _ = writeln!(out, "## Host\n");
        for l in host {
            let _ = writeln!(out, "- {}", prose(&l));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "## Clock\n");
    let _ = writeln!(out, "- {}", prose(&describe::boot_time(report)));
    for note in &report.clock.notes {
        let _ = writeln!(out, "- {}", prose(note));
    }
    out.push('\n');
    if !report.not_evaluated.is_empty() {
        let _ = writeln!(out, "## Not evaluated\n");
        if detail.verbose {
            let _ = writeln!(out, "The bundle lacks what these rules read.\n");
            for (missing, rules, files) in describe::not_evaluated_groups(report) {
                let rules: Vec<String> = rules.iter().map(|r| code(r)).collect();
                let missing: Vec<String> = missing.split(", ").map(code).collect();
                let _ = writeln!(
                    out,
                    "- without {}: {} (from {})",
                    missing.join(", "),
                    rules.join(", "),
                    prose(&files.join("; "))
                );
            }
        } else {
            let _ = writeln!(
                out,
                "{} (`-v` lists them).",
                prose(&fold::not_evaluated_line(report))
            );
        }
        out.push('\n');
    }
    write_sources(&mut out, report, detail.verbose || detail.sources);
    out
}

/// The incidents table (one row per incident shown, a group's row before its incidents when
/// some are not shown), then each shown incident in a few lines.
fn write_incidents(out: &mut String, report: &Report, groups: &[IncidentGroup], all: bool) {
    let _ = writeln!(out, "## Incidents\n");
    let _ = writeln!(
        out,
        "| # | kind | cause | pid | signal | started (UTC) | outage | redo |"
    );
    let _ = writeln!(out, "|---:|---|---|---:|---|---|---:|---|");
    let mut shown_all = Vec::new();
    for g in groups {
        let shown = fold::shown(g, all);
        if shown.len() < g.count {
            let pids = match (g.pid_min, g.pid_max) {
                (Some(a), Some(b)) => format!("{a}–{b}"),
                _ => "—".to_owned(),
            };
            let outage = g
                .worst_outage_seconds
                .map_or_else(|| "—".to_owned(), |s| format!("worst {s:.3} s"));
            let _ = writeln!(
                out,
                "| {}–{} | {} × {} | {} | {} | {} | {} to {} | {} | |",
                g.first + 1,
                g.last + 1,
                fold::thousands(g.count),
                cell(&code(g.kind)),
                cell(&code(g.cause)),
                cell(&pids),
                g.signal.map_or_else(|| "—".to_owned(), |s| s.to_string()),
                cell(&ts(g.started_at)),
                cell(&ts(g.last_started_at)),
                cell(&outage),
            );
        }
        for i in shown {
            write_incident_row(out, i + 1, &report.incidents[i]);
            shown_all.push(i);
        }
    }
    out.push('\n');
    if shown_all.len() < report.incidents.len() {
        let _ = writeln!(
            out,
            "Of each group, the first and the worst incident are shown (`-v` shows all).\n"
        );
    }
    for i in shown_all {
        write_incident(out, i + 1, &report.incidents[i]);
    }
}

fn write_incident_row(out: &mut String, number: usize, incident: &Incident) {
    let crash = incident.postgres_crash.as_ref();
    let kill = incident.kernel_kill.as_ref();
    let pid = crash
        .map(|c| c.pid)
        .or(kill.map(|k| k.pid))
        .map_or_else(|| "—".to_owned(), |p| p.to_string());
    let signal = match crash.map(|c| (c.signal, c.exit_code)) {
        Some((Some(s), _)) => s.to_string(),
        Some((None, Some(code))) => format!("exit code {code}"),
        _ if kill.is_some() => "9 (kernel)".to_owned(),
        _ => match incident.container_kill.as_ref().and_then(|k| k.signal) {
            Some(s) => format!("{s} (container)"),
            None => "—".to_owned(),
        },
    };
    let outage = match incident.outage_seconds {
        Some(s) => format!("{s:.3} s"),
        None if incident.still_down => crate::describe::still_down(incident),
        None => "—".to_owned(),
    };
    let redo = match (incident.redo_seconds, incident.wal_replayed_bytes) {
        (Some(s), Some(b)) => format!("{s:.3} s, {} of WAL", human_kb(b / 1024)),
        (Some(s), None) => format!("{s:.3} s"),
        (None, Some(b)) => format!("{} of WAL", human_kb(b / 1024)),
        (None, None) => "—".to_owned(),
    };
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | {} | {} |",
        number,
        cell(&code(incident.kind)),
        cell(&code(incident.cause)),
        cell(&pid),
        cell(&signal),
        cell(&ts(incident.started_at)),
        cell(&outage),
        cell(&redo),
    );
}

fn write_incident(out: &mut String, number: usize, incident: &Incident) {
    let _ = writeln!(
        out,
        "### Incident {number}: {} ({}){}\n",
        code(incident.kind),
        code(incident.cause),
        match fold::others_label(incident).trim_start() {
            "" => String::new(),
            label => format!(" {}", prose(label)),
        }
    );
    let mut tie = format!(
        "Started {}, confidence {:.2}",
        ts(incident.started_at),
        incident.confidence
    );
    if let Some(m) = incident.matched_by {
        let _ = write!(tie, ", tied by {m}");
    }
    let _ = writeln!(out, "{}.\n", prose(&tie));
    if let Some(k) = &incident.kernel_kill {
        let mut line = format!("{}; {}", describe::kill_victim(k), describe::kill_limit(k));
        if let Some(t) = &k.trigger_comm {
            let _ = write!(line, "; set off by an allocation of {t}");
            if let Some(p) = k.trigger_pid {
                let _ = write!(line, " pid {p}");
            }
        }
        let _ = writeln!(
            out,
            "- **kernel**: {} at {} ({})",
            prose(&line),
            prose(&ts(k.at)),
            location(&k.path, k.line)
        );
    }
    if let Some(k) = &incident.container_kill {
        let _ = writeln!(
            out,
            "- **container**: {} ({})",
            prose(&describe::container_kill(k)),
            location(&k.path, k.line)
        );
    }
    if let Some(c) = &incident.postgres_crash {
        let _ = writeln!(
            out,
            "- **postgres**: {} at {} ({})",
            prose(&format!(
                "{} (PID {}) {}",
                c.process,
                c.pid,
                describe::how_died(c.signal, c.exit_code)
            )),
            prose(&ts(c.at)),
            location(&c.path, c.line)
        );
    }
    let steps = describe::restart_steps(incident);
    if !steps.is_empty() {
        let _ = writeln!(out, "- **restart**: {}", prose(&steps.join(", ")));
    }
    let figures = describe::figures(incident);
    if !figures.is_empty() {
        let _ = writeln!(out, "- **figures**: {}", prose(&figures.join(", ")));
    }
    for note in &incident.notes {
        let _ = writeln!(out, "- **note**: {}", prose(note));
    }
    if let Some(c) = &incident.clients_saw {
        let _ = writeln!(
            out,
            "- **clients**: {}",
            prose(&describe::clients_saw_head(c))
        );
        write_pooler_problems(out, &c.problems, "  ");
        for note in &c.notes {
            let _ = writeln!(out, "  - note: {}", prose(note));
        }
    }
    out.push('\n');
    if let Some(q) = incident
        .postgres_crash
        .as_ref()
        .and_then(|c| c.query.as_ref())
    {
        let _ = writeln!(out, "The query it was running:\n");
        out.push_str(&fenced(q, "sql"));
        out.push('\n');
    }
    if !incident.preceded_by.is_empty() {
        let _ = writeln!(out, "What the log recorded just before:\n");
        for l in &incident.preceded_by {
            let head = format!("{} {}:", ts(l.at), l.severity.unwrap_or("LOG"));
            if l.message.contains('\n') {
                let _ = writeln!(out, "- {} ({})\n", prose(&head), location(&l.path, l.line));
                out.push_str(&indent_block(&fenced(&l.message, "text"), "  "));
            } else {
                let _ = writeln!(
                    out,
                    "- {} {} ({})",
                    prose(&head),
                    code(&l.message),
                    location(&l.path, l.line)
                );
            }
        }
        out.push('\n');
    }
}

/// The first problems of a pgbouncer view as list items under `indent`.
fn write_pooler_problems(out: &mut String, problems: &[PoolerProblem], indent: &str) {
    for p in problems.iter().take(describe::POOLER_PROBLEMS_SHOWN) {
        let (line, at) = describe::pooler_problem(p);
        let place = at.map_or_else(String::new, |(path, n)| {
            format!(" ({})", location(&path, n))
        });
        let _ = writeln!(out, "{indent}- {}{place}", prose(&line));
    }
    if let Some(rest) = describe::pooler_rest(problems) {
        let _ = writeln!(out, "{indent}- {}", prose(&rest));
    }
}

/// Each pgbouncer log: its line, its lifecycle, its problems.
fn write_pooler(out: &mut String, report: &Report) {
    if report.pooler.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Clients through pgbouncer\n");
    for s in &report.pooler {
        let _ = writeln!(
            out,
            "- {}: {}",
            code(&s.path),
            prose(&describe::pooler_head(s))
        );
        if let Some(l) = describe::pooler_lifecycle(s) {
            let _ = writeln!(out, "  - {}", prose(&l));
        }
        write_pooler_problems(out, &s.problems, "  ");
    }
    out.push('\n');
}

fn write_finding(out: &mut String, number: usize, folded: &fold::Folded<'_>, verbose: bool) {
    let f = folded.finding;
    let severity = match f.severity {
        Severity::Critical => "CRITICAL",
        Severity::Warning => "WARNING",
        Severity::Info => "INFO",
    };
    let _ = writeln!(out, "### {number}. {severity} {}\n", code(f.id));
    let confidence = if f.confidence < 1.0 {
        format!(" (confidence {:.2})", f.confidence)
    } else {
        String::new()
    };
    let _ = writeln!(out, "**{}**{confidence}\n", prose(&f.title));
    if let Some(line) = folded.repeats_line() {
        let _ = writeln!(out, "{}.\n", prose(&capitalised(&line)));
    }
    if !f.summary.is_empty() {
        let _ = writeln!(out, "{}\n", prose(&f.summary));
    }
    if let Some(r) = &f.recommendation {
        let _ = writeln!(out, "**What to do:** {}\n", prose(r));
    }
    if !f.evidence.is_empty() {
        let _ = writeln!(out, "Evidence:\n");
        let shown = if verbose { f.evidence.len() } else { 1 };
        for e in f.evidence.iter().take(shown) {
            let from = e
                .host_place()
                .map(|h| format!(", from {}", code(&h)))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "- {}{from} {}",
                location(&e.path, e.line),
                prose(&e.what)
            );
        }
        if f.evidence.len() > shown {
            let _ = writeln!(
                out,
                "- and {} more (`-v` lists them)",
                f.evidence.len() - shown
            );
        }
        out.push('\n');
    }
}

fn write_sources(out: &mut String, report: &Report, all: bool) {
    use crate::inventory::Line;
    let _ = writeln!(out, "## Sources\n");
    if !all {
        let _ = writeln!(
            out,
            "{} (`--sources` lists them).\n",
            prose(&fold::sources_line(report))
        );
        let troubled: Vec<_> = report
            .sources
            .iter()
            .filter(|s| fold::troubled(s))
            .collect();
        if troubled.is_empty() {
            return;
        }
    }
    let _ = writeln!(
        out,
        "| path | kind | lines | records | unrecognized | note |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|---|");
    for line in crate::inventory::lines(report, false) {
        if let (false, Line::File(s)) = (all, &line) {
            if !fold::troubled(s) {
                continue;
            }
        } else if !all {
            continue;
        }
        let _ = match line {
            Line::File(s) => writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                cell(&code(&s.path)),
                cell(&code(s.kind)),
                s.lines,
                s.records,
                s.unrecognized_lines,
                s.note.as_deref().map(cell_prose).unwrap_or_default()
            ),
            Line::Kind {
                kind,
                files,
                lines,
                records,
                dirs,
            } => writeln!(
                out,
                "| {files} files ({}) | {} | {lines} | {records} | 0 | all read |",
                cell_prose(&dirs),
                cell(&code(kind))
            ),
            Line::Links { count, first } => writeln!(
                out,
                "| {count} symbolic links ({}, …) | | | | | not followed: the files they point \
                 to are read where they lie |",
                cell_prose(&first.join(", "))
            ),
            // The Markdown table lists the files kept for a person like the others.
            Line::KeptHeading => Ok(()),
            Line::Kept { count, dirs } => writeln!(
                out,
                "| {count} files ({}) | `reference` | | | | kept for a person to read: no rule \
                 reads them |",
                cell_prose(&dirs)
            ),
        };
    }
}

/// `text` with its first letter in upper case.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or_else(String::new, |c| c.to_uppercase().chain(chars).collect())
}

/// `path:line` as a code span.
fn location(path: &str, line: u64) -> String {
    code(&format!("{path}:{line}"))
}

/// Shows a control character as its Unicode picture (`␛`, `␀`, `␡`), tabs as spaces, and
/// leaves every other character as it is.
fn visible(c: char) -> char {
    match c as u32 {
        0x09 => ' ',
        n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{FFFD}'),
        0x7f => '\u{2421}',
        0x80..=0x9f => '\u{FFFD}',
        _ => c,
    }
}

/// `text` as Markdown prose that reads as written: each line's leading blanks dropped, its
/// code spans (pgmortem's `` `x` `` and the bundle text it quotes, read as CommonMark reads
/// them: [`crate::spans`]) written again as spans ([`code`]), and in the words between them
/// the characters that make inline structure backslash-escaped (``\ ` * [ ] < | ~ &``, `_` at
/// a word's edge), those that make a block escaped at a line's start (`#`, `>`, `-`, `+`, `=`,
/// `1.`), `@` before a name kept from making a mention; the lines joined with hard breaks
/// (blank lines dropped, so the text stays one paragraph).
pub fn prose(text: &str) -> String {
    prose_in(text, false)
}

/// [`prose`] for a table cell: on one line, and `|` escaped inside code spans too (tables are
/// split before code spans are read).
pub(crate) fn cell_prose(text: &str) -> String {
    prose_in(&text.replace(['\n', '\r'], " "), true)
}

fn prose_in(text: &str, in_cell: bool) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    for (n, line) in lines.iter().enumerate() {
        if n > 0 {
            out.push_str("\\\n");
        }
        for (i, piece) in crate::spans::pieces(line).into_iter().enumerate() {
            match piece {
                crate::spans::Piece::Prose(words) => escape_line(words, i == 0, &mut out),
                crate::spans::Piece::Code(text) if in_cell => out.push_str(&cell(&code(text))),
                crate::spans::Piece::Code(text) => out.push_str(&code(text)),
            }
        }
    }
    out
}

/// `words` escaped into `out`; `line_start` when they begin a line, where a block could start.
fn escape_line(words: &str, line_start: bool, out: &mut String) {
    let chars: Vec<char> = words.chars().map(visible).collect();
    // A line that starts like a block (`# `, `> `, `- `, `+ `, `===`, `1. `) would make one.
    let digits = chars.iter().take_while(|c| c.is_ascii_digit()).count();
    let block_at = match chars.first().filter(|_| line_start) {
        Some('#' | '>' | '-' | '+' | '=') => Some(0),
        Some(c) if c.is_ascii_digit() && matches!(chars.get(digits), Some('.' | ')')) => {
            Some(digits)
        }
        _ => None,
    };
    for (i, &c) in chars.iter().enumerate() {
        let before = i.checked_sub(1).and_then(|j| chars.get(j)).copied();
        let after = chars.get(i + 1).copied();
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        let escape = match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '|' | '~' | '&' => true,
            '_' => !(word(before) && word(after)),
            _ => block_at == Some(i),
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
        // `@name` notifies that user on GitHub; a zero-width space keeps it a plain word.
        if c == '@' && !word(before) && word(after) {
            out.push('\u{200B}');
        }
    }
}

/// `text` as a code span ([`pgmortem_diagnose::quote`]: fenced with one backtick more than its
/// longest run, padded where CommonMark would take a space away or merge the fence, on one
/// line), its control characters shown as their pictures.
pub fn code(text: &str) -> String {
    let shown: String = text
        .chars()
        .map(|c| {
            if matches!(c, '\n' | '\r') {
                c
            } else {
                visible(c)
            }
        })
        .collect();
    pgmortem_diagnose::quote(&shown)
}

/// `text` as a fenced code block with `info` as its language, fenced with more backticks than
/// it holds in a row (at least three), ending with a newline.
pub(crate) fn fenced(text: &str, info: &str) -> String {
    let text: String = text
        .chars()
        .map(|c| if c == '\n' { c } else { visible(c) })
        .collect();
    let fence = "`".repeat((longest_run(&text, '`') + 1).max(3));
    let mut out = format!("{fence}{info}\n");
    for line in text.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
    out
}

/// A table cell of code or of pgmortem's own words: `|` escaped (also inside a code span, as
/// tables are split before code is read) and kept on one line. Prose is not passed through
/// it ([`prose`] already escapes `|`): it is made one line first, as a hard break has no
/// place in a cell.
pub(crate) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// `block` with each line indented by `indent` (a block inside a list item).
fn indent_block(block: &str, indent: &str) -> String {
    block.lines().map(|l| format!("{indent}{l}\n")).collect()
}

fn longest_run(text: &str, c: char) -> usize {
    let mut longest = 0;
    let mut run = 0;
    for x in text.chars() {
        run = if x == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}
