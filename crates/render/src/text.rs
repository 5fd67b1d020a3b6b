//! The report as text for a person: what to read first, each incident, the findings most
//! severe first with their evidence, the rules that could not run, the host, the clock and the
//! sources.
//!
//! Without colour the text is plain; with colour ([`TextOptions::color`]) headings are bold and
//! severities coloured (critical red and bold, warning yellow, info cyan) with ANSI SGR codes,
//! and the control characters a bundle's lines may hold (an escape sequence in a log message,
//! a carriage return) are shown as their Unicode pictures (`␛`, `␍`) rather than sent to the
//! terminal, with colour or without.

use std::fmt::Write as _;

use anstyle::{AnsiColor, Style};
use pgmortem_diagnose::{Incident, Report, Severity};

use crate::describe::{self, ts};
use crate::fold::{self, Detail};

/// Indent of the text under a label (`  kernel    `).
const INDENT: &str = "            ";
/// Indent of a finding's body.
const BODY: &str = "           ";

/// How to render the text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TextOptions {
    /// Colour headings and severities with ANSI escape codes, for a terminal. Default: off,
    /// and the text is then exactly [`text`]'s.
    pub color: bool,
    /// How much to show beyond the short report.
    pub detail: Detail,
}

/// The report as plain text for a person, short (see [`Detail`]).
pub fn text(report: &Report) -> String {
    text_with(report, &TextOptions::default())
}

/// The report as text for a person, coloured and as detailed as `options` asks: the headline,
/// one sentence per group of incidents, the findings most severe first, the caveats, then the
/// incidents, the clients, the host and the clock, the rules not evaluated and the sources.
pub fn text_with(report: &Report, options: &TextOptions) -> String {
    let paint = Painter {
        color: options.color,
    };
    let detail = &options.detail;
    let groups = fold::groups(report);
    let folded = fold::findings(report, &groups);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        paint.style(
            Look::Heading,
            &format!("pgmortem: {}", fold::headline(report, &folded, detail))
        )
    );
    if !report.caveats.is_empty() {
        let _ = writeln!(
            out,
            "  {} {} the reading: see Caveats, after the findings",
            paint.style(Look::Warning, "!"),
            match report.caveats.len() {
                1 => "1 caveat changes".to_owned(),
                n => format!("{n} caveats change"),
            }
        );
    }
    for g in groups.iter() {
        let _ = writeln!(out, "  {}", indented(&fold::sentence(g, report), "    "));
    }
    if !folded.is_empty() {
        let _ = writeln!(out, "\n{}", paint.style(Look::Heading, "Findings"));
        for f in &folded {
            write_finding(&mut out, &paint, f, detail.verbose);
        }
    }
    if !report.caveats.is_empty() {
        let _ = writeln!(
            out,
            "\n{}",
            paint.style(Look::Heading, "Caveats (they change the reading)")
        );
        for c in &report.caveats {
            let _ = writeln!(
                out,
                "  {} {}",
                paint.style(Look::Warning, "!"),
                indented(&c.text, "    ")
            );
        }
    }
    for g in groups.iter() {
        let shown = fold::shown(g, detail.verbose);
        out.push('\n');
        if g.count > shown.len() {
            let _ = writeln!(
                out,
                "{}",
                paint.style(
                    Look::Heading,
                    &format!(
                        "Incidents {}–{}, {} {}: {} in full (-v shows all)",
                        g.first + 1,
                        g.last + 1,
                        fold::thousands(g.count),
                        fold::kind_words(g.kind).1,
                        if shown.len() == 1 {
                            "the first (also the worst)"
                        } else {
                            "the first and the worst"
                        }
                    )
                )
            );
        }
        for (k, &i) in shown.iter().enumerate() {
            if k > 0 {
                out.push('\n');
            }
            let label = if g.count > 2 && i == g.worst && !detail.verbose {
                " (the worst)"
            } else {
                ""
            };
            write_incident(&mut out, &paint, i + 1, label, &report.incidents[i]);
        }
    }
    write_pooler(&mut out, &paint, report);
    let host = describe::host_lines(report);
    if !host.is_empty() {
        let _ = writeln!(out, "\n{}", paint.style(Look::Heading, "Host"));
        for l in host {
            let _ = writeln!(out, "  {l}");
        }
    }
    let _ = writeln!(out, "\n{}", paint.style(Look::Heading, "Clock"));
    let _ = writeln!(out, "  {}", describe::boot_time(report));
    for note in &report.clock.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    write_not_evaluated(&mut out, &paint, report, detail.verbose);
    if detail.verbose || detail.sources {
        write_sources(&mut out, &paint, report);
    } else {
        write_sources_line(&mut out, &paint, report);
    }
    paint.finish(out)
}

/// The rules that could not run: one line, or each set of missing inputs with its rules.
fn write_not_evaluated(out: &mut String, paint: &Painter, report: &Report, verbose: bool) {
    if report.not_evaluated.is_empty() {
        return;
    }
    if !verbose {
        let _ = writeln!(
            out,
            "\n{} (-v lists them)",
            paint.style(Look::Heading, &fold::not_evaluated_line(report))
        );
        return;
    }
    let _ = writeln!(
        out,
        "\n{}",
        paint.style(
            Look::Heading,
            "Not evaluated (the bundle lacks what they read)"
        )
    );
    for (missing, rules, files) in describe::not_evaluated_groups(report) {
        let _ = writeln!(out, "  without {missing}: {}", rules.join(", "));
        let _ = writeln!(out, "    (from {})", files.join("; "));
    }
}

/// The sources in one line, then each source with a problem on its own.
fn write_sources_line(out: &mut String, paint: &Painter, report: &Report) {
    let _ = writeln!(
        out,
        "\n{} (--sources lists them)",
        paint.style(Look::Heading, &fold::sources_line(report))
    );
    for s in report.sources.iter().filter(|s| fold::troubled(s)) {
        let mut what = format!("{}, {} lines", s.kind, s.lines);
        if s.unrecognized_lines > 0 {
            let _ = write!(what, ", {} unrecognised", s.unrecognized_lines);
        }
        if let Some(n) = &s.note {
            let _ = write!(what, ": {}", indented(n, INDENT));
        }
        let _ = writeln!(out, "  {} ({what})", s.path);
    }
}

/// What a piece of text is, for its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Heading,
    Critical,
    Warning,
    Info,
}

impl Look {
    const ALL: [Look; 4] = [Look::Heading, Look::Critical, Look::Warning, Look::Info];

    fn style(self) -> Style {
        match self {
            Look::Heading => Style::new().bold(),
            Look::Critical => Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
            Look::Warning => Style::new().fg_color(Some(AnsiColor::Yellow.into())),
            Look::Info => Style::new().fg_color(Some(AnsiColor::Cyan.into())),
        }
    }

    /// The private-use character that stands for the start of this look while the text is
    /// built (see [`Painter::finish`]).
    fn mark(self) -> char {
        match self {
            Look::Heading => '\u{F8F0}',
            Look::Critical => '\u{F8F1}',
            Look::Warning => '\u{F8F2}',
            Look::Info => '\u{F8F3}',
        }
    }
}

/// The private-use character that stands for the end of a look.
const END_MARK: char = '\u{F8FE}';

/// Paints pieces of the text, or leaves them as they are when colour is off.
///
/// With colour on, a painted piece is first wrapped in private-use marks; [`Painter::finish`]
/// then shows every control character of the text as its picture (so no escape sequence of
/// the bundle reaches the terminal) and turns the marks into ANSI codes. A bundle holding
/// those private-use characters can only change colours, and the text ends with a reset.
struct Painter {
    color: bool,
}

impl Painter {
    fn style(&self, look: Look, text: &str) -> String {
        if self.color {
            format!("{}{text}{END_MARK}", look.mark())
        } else {
            text.to_owned()
        }
    }

    fn finish(&self, text: String) -> String {
        if !self.color {
            // Plain text may still reach a terminal (a pager, a redirect read with cat): the
            // bundle's control characters are shown, never sent.
            return visible(&text).into_owned();
        }
        let mut out = String::with_capacity(text.len() + text.len() / 8);
        for c in text.chars() {
            if let Some(look) = Look::ALL.into_iter().find(|l| l.mark() == c) {
                let _ = write!(out, "{}", look.style().render());
            } else if c == END_MARK {
                let _ = write!(out, "{}", anstyle::Reset.render());
            } else if c != '\n' && c != '\t' && c.is_control() {
                out.push(control_picture(c));
            } else {
                out.push(c);
            }
        }
        let _ = write!(out, "{}", anstyle::Reset.render());
        out
    }
}

/// `text` with its control characters other than line feed and tab shown as their pictures
/// (`␛`, `␍`): text from a bundle, safe to print on a terminal.
pub fn visible(text: &str) -> std::borrow::Cow<'_, str> {
    if !text
        .chars()
        .any(|c| c != '\n' && c != '\t' && c.is_control())
    {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| {
            if c != '\n' && c != '\t' && c.is_control() {
                control_picture(c)
            } else {
                c
            }
        })
        .collect::<String>()
        .into()
}

/// The Unicode picture of a control character (`␛` for ESC, `␡` for DEL), or `�` for the
/// C1 controls that have none.
fn control_picture(c: char) -> char {
    match c as u32 {
        n @ 0..=0x1f => char::from_u32(0x2400 + n).unwrap_or('\u{FFFD}'),
        0x7f => '\u{2421}',
        _ => '\u{FFFD}',
    }
}

/// `text` with every line after the first indented by `indent`.
fn indented(text: &str, indent: &str) -> String {
    let mut lines = text.lines();
    let mut out = lines.next().unwrap_or_default().to_owned();
    for line in lines {
        out.push('\n');
        out.push_str(indent);
        out.push_str(line.trim_end());
    }
    out
}

fn write_incident(
    out: &mut String,
    paint: &Painter,
    number: usize,
    label: &str,
    incident: &Incident,
) {
    let head = format!(
        "Incident {number}{label}{}: {} (cause {}) at {} (confidence {:.2}{})",
        fold::others_label(incident),
        incident.kind,
        incident.cause,
        ts(incident.started_at),
        incident.confidence,
        incident
            .matched_by
            .map(|m| format!(", tied by {m}"))
            .unwrap_or_default()
    );
    let _ = writeln!(out, "{}", paint.style(Look::Heading, &head));
    if let Some(k) = &incident.kernel_kill {
        let _ = writeln!(out, "  kernel    {}", describe::kill_victim(k));
        let _ = writeln!(out, "{INDENT}{}", describe::kill_limit(k));
        if let Some(t) = &k.trigger_comm {
            let _ = writeln!(
                out,
                "{INDENT}set off by an allocation of {t}{}",
                k.trigger_pid
                    .map(|p| format!(" pid {p}"))
                    .unwrap_or_default()
            );
        }
        let _ = writeln!(out, "{INDENT}at {}   ({}:{})", ts(k.at), k.path, k.line);
    }
    if let Some(k) = &incident.container_kill {
        let _ = writeln!(out, "  container {}", describe::container_kill(k));
        let _ = writeln!(out, "{INDENT}({}:{})", k.path, k.line);
    }
    if !incident.preceded_by.is_empty() {
        let _ = writeln!(out, "  before    (what the log recorded just before)");
        for l in &incident.preceded_by {
            let _ = writeln!(
                out,
                "{INDENT}{} {}: {}   ({}:{})",
                ts(l.at),
                l.severity.unwrap_or("LOG"),
                indented(&l.message, INDENT),
                l.path,
                l.line
            );
        }
    }
    if let Some(c) = &incident.postgres_crash {
        let how = describe::how_died(c.signal, c.exit_code);
        let _ = writeln!(out, "  postgres  {} (PID {}) {how}", c.process, c.pid);
        if let Some(q) = &c.query {
            let _ = writeln!(
                out,
                "{INDENT}query: {}",
                indented(q, &format!("{INDENT}       "))
            );
        }
        let _ = writeln!(out, "{INDENT}at {}   ({}:{})", ts(c.at), c.path, c.line);
    }
    let steps = describe::restart_steps(incident);
    if !steps.is_empty() {
        let _ = writeln!(out, "  restart   {}", steps.join(", "));
    }
    let figures = describe::figures(incident);
    if !figures.is_empty() {
        let _ = writeln!(out, "  figures   {}", figures.join(", "));
    }
    for note in &incident.notes {
        let _ = writeln!(out, "  note      {note}");
    }
    if let Some(c) = &incident.clients_saw {
        let _ = writeln!(out, "  clients   {}", describe::clients_saw_head(c));
        write_pooler_problems(out, &c.problems);
        for note in &c.notes {
            let _ = writeln!(out, "{INDENT}note: {note}");
        }
    }
}

/// The first problems of a pgbouncer view, one line each with the line of its first example.
fn write_pooler_problems(out: &mut String, problems: &[pgmortem_diagnose::PoolerProblem]) {
    for p in problems.iter().take(describe::POOLER_PROBLEMS_SHOWN) {
        let (line, at) = describe::pooler_problem(p);
        let place = at.map_or_else(String::new, |(path, n)| format!("   ({path}:{n})"));
        let _ = writeln!(out, "{INDENT}{}{place}", indented(&line, INDENT));
    }
    if let Some(rest) = describe::pooler_rest(problems) {
        let _ = writeln!(out, "{INDENT}{rest}");
    }
}

/// Each pgbouncer log: its line, its lifecycle, its problems.
fn write_pooler(out: &mut String, paint: &Painter, report: &Report) {
    if report.pooler.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n{}",
        paint.style(Look::Heading, "Clients through pgbouncer")
    );
    for s in &report.pooler {
        let _ = writeln!(out, "  {}: {}", s.path, describe::pooler_head(s));
        if let Some(l) = describe::pooler_lifecycle(s) {
            let _ = writeln!(out, "{INDENT}{l}");
        }
        write_pooler_problems(out, &s.problems);
    }
}

fn write_finding(out: &mut String, paint: &Painter, folded: &fold::Folded<'_>, verbose: bool) {
    let f = folded.finding;
    let (look, label, pad) = match f.severity {
        Severity::Critical => (Look::Critical, "CRITICAL", ""),
        Severity::Warning => (Look::Warning, "WARNING", " "),
        Severity::Info => (Look::Info, "INFO", "    "),
    };
    let confidence = if f.confidence < 1.0 {
        format!(" (confidence {:.2})", f.confidence)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "  {}{pad} [{}] {}{confidence}",
        paint.style(look, label),
        f.id,
        f.title
    );
    if let Some(line) = folded.repeats_line() {
        let _ = writeln!(out, "{BODY}({line})");
    }
    if !f.summary.is_empty() {
        let summary = if verbose {
            indented(&f.summary, BODY)
        } else {
            f.summary
                .lines()
                .next()
                .unwrap_or_default()
                .trim_end()
                .to_owned()
        };
        let _ = writeln!(out, "{BODY}{summary}");
    }
    if let Some(r) = &f.recommendation {
        let _ = writeln!(out, "{BODY}What to do: {}", indented(r, BODY));
    }
    if verbose {
        if !f.evidence.is_empty() {
            let _ = writeln!(out, "{BODY}Evidence:");
            for e in &f.evidence {
                let _ = writeln!(out, "{BODY}  {} ({})", e.place(), indented(&e.what, BODY));
            }
        }
    } else if let Some(e) = f.evidence.first() {
        let more = match f.evidence.len() - 1 {
            0 => String::new(),
            n => format!(", and {n} more: -v"),
        };
        let _ = writeln!(
            out,
            "{BODY}Evidence: {} ({}){more}",
            e.place(),
            indented(&e.what, BODY)
        );
    }
}

fn write_sources(out: &mut String, paint: &Painter, report: &Report) {
    use crate::inventory::Line;
    let _ = writeln!(out, "\n{}", paint.style(Look::Heading, "Sources"));
    let lines = crate::inventory::lines(report, true);
    let width = lines
        .iter()
        .filter_map(|l| match l {
            Line::File(s) => Some(s.path.chars().count()),
            _ => None,
        })
        .max()
        .unwrap_or(4)
        .clamp(4, 80);
    let _ = writeln!(
        out,
        "  {:width$}  {:19} {:>8} {:>8} {:>12}",
        "path", "kind", "lines", "records", "unrecognized"
    );
    for line in lines {
        let _ = match line {
            Line::File(s) => writeln!(
                out,
                "  {:width$}  {:19} {:>8} {:>8} {:>12}{}",
                s.path,
                s.kind,
                s.lines,
                s.records,
                s.unrecognized_lines,
                s.server_log
                    .as_ref()
                    .map(|l| match l.copied_from.as_str() {
                        // Placed in its log by its name and times: no copy to name.
                        "" => format!("  [{}, from {}]", l.role, l.found_from),
                        from => format!("  [{}: {from}, from {}]", l.role, l.found_from),
                    })
                    .unwrap_or_default()
                    + &s.note
                        .as_deref()
                        .map(|n| format!("  ({n})"))
                        .unwrap_or_default()
            ),
            Line::Kind {
                kind,
                files,
                lines,
                records,
                dirs,
            } => writeln!(
                out,
                "  {:width$}  {:19} {:>8} {:>8} {:>12}",
                format!("{files} files, all read ({dirs})"),
                kind,
                lines,
                records,
                0
            ),
            Line::Links { count, first } => writeln!(
                out,
                "  {count} symbolic links, not followed (the files they point to are read where \
                 they lie: {}, …)",
                first.join(", ")
            ),
            Line::KeptHeading => writeln!(out, "  kept for a person to read (no rule reads them):"),
            Line::Kept { count, dirs } => writeln!(
                out,
                "  kept for a person to read (no rule reads them): {count} files ({dirs})"
            ),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_become_pictures() {
        assert_eq!(control_picture('\u{1b}'), '␛');
        assert_eq!(control_picture('\0'), '␀');
        assert_eq!(control_picture('\u{7f}'), '␡');
        assert_eq!(control_picture('\u{9b}'), '\u{FFFD}');
    }

    #[test]
    fn without_colour_nothing_is_painted_and_controls_are_still_shown() {
        let paint = Painter { color: false };
        let text = paint.style(Look::Critical, "CRITICAL \u{1b}[2J\r\n\tnext");
        assert_eq!(paint.finish(text), "CRITICAL ␛[2J␍\n\tnext");
    }

    #[test]
    fn with_colour_only_the_painted_pieces_carry_escape_codes() {
        let paint = Painter { color: true };
        let text = format!(
            "{} log \u{1b}[2J\n",
            paint.style(Look::Critical, "CRITICAL")
        );
        assert_eq!(
            paint.finish(text),
            "\u{1b}[1m\u{1b}[31mCRITICAL\u{1b}[0m log ␛[2J\n\u{1b}[0m"
        );
    }
}
