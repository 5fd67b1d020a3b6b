//! A [`Diff`] for a person: text, and Markdown in the text's order.

use std::fmt::Write as _;

use serde_json::Value;

use super::{Diff, FindingChange, Side};

fn side_text(s: &Side) -> String {
    format!(
        "{} collected {} ({}, {})",
        s.hostname.as_deref().unwrap_or("unknown host"),
        s.collected_at.as_deref().unwrap_or("at an unknown time"),
        crate::render::plural(s.incidents, "incident"),
        crate::render::plural(s.findings, "finding")
    )
}

fn value_text(v: &Option<Value>) -> String {
    match v {
        None | Some(Value::Null) => "—".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// A figure for a person: a size when its name says it is in bytes, else the number.
fn figure_text(name: &str, v: Option<f64>) -> String {
    match v {
        None => "—".to_owned(),
        Some(v) if name.ends_with("_bytes") && v >= 0.0 && v.fract() == 0.0 && v < 1e18 => {
            crate::diagnose::human_bytes(v as u64)
        }
        Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{v:.0}"),
        Some(v) => format!("{v:.4}"),
    }
}

fn severity_text(c: &FindingChange) -> String {
    match (&c.severity_before, &c.severity_after) {
        (Some(b), Some(a)) if b != a => format!("{b} → {a}"),
        (_, Some(a)) => a.clone(),
        (Some(b), None) => b.clone(),
        (None, None) => String::new(),
    }
}

fn count_text(c: &FindingChange) -> String {
    if c.count_before == c.count_after || c.count_before == 0 || c.count_after == 0 {
        String::new()
    } else {
        format!(", {} → {} findings", c.count_before, c.count_after)
    }
}

/// The diff as text for a person: the answer first, then the settings changed, the findings
/// gone, new and changed, and the incidents since.
pub fn text(d: &Diff) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "pgmortem diff: {}", d.summary);
    let _ = writeln!(out, "  before: {}", side_text(&d.before));
    let _ = writeln!(out, "  after:  {}", side_text(&d.after));
    for note in &d.notes {
        let _ = writeln!(out, "  ! {note}");
    }
    if !d.settings.is_empty() {
        let _ = writeln!(out, "\nSettings changed");
        for s in &d.settings {
            let _ = writeln!(
                out,
                "  {}: {} → {}",
                s.name,
                value_text(&s.before),
                value_text(&s.after)
            );
        }
    }
    for (heading, list) in [
        ("Findings gone", &d.gone),
        ("Findings new", &d.new),
        ("Findings changed", &d.changed),
        ("Rules that could not run after", &d.not_evaluated_after),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "\n{heading}");
        for c in list {
            let _ = writeln!(
                out,
                "  [{}] {}{}: {}",
                c.id,
                severity_text(c),
                count_text(c),
                c.title
            );
            for f in &c.figures {
                let _ = writeln!(
                    out,
                    "      {}: {} → {}",
                    f.name,
                    figure_text(&f.name, f.before),
                    figure_text(&f.name, f.after)
                );
            }
        }
    }
    if !d.unchanged.is_empty() {
        let _ = writeln!(out, "\nFindings unchanged: {}", d.unchanged.join(", "));
    }
    if !d.about_the_past.is_empty() {
        let _ = writeln!(
            out,
            "Findings only about incidents from before: {}",
            d.about_the_past.join(", ")
        );
    }
    let _ = writeln!(out, "\nIncidents since the first bundle");
    if d.incidents_since.is_empty() {
        let _ = writeln!(out, "  none");
    }
    for i in &d.incidents_since {
        let _ = writeln!(
            out,
            "  {}: {} (cause {}) at {}{}",
            i.index + 1,
            i.kind,
            i.cause,
            i.started_at.as_deref().unwrap_or("unknown time"),
            i.outage_seconds
                .map(|s| format!(", outage {s:.3} s"))
                .unwrap_or_default()
        );
    }
    if d.incidents_before > 0 {
        let _ = writeln!(
            out,
            "  ({} of the second report {} older: the first report knew {})",
            crate::render::plural(d.incidents_before, "incident"),
            if d.incidents_before == 1 { "is" } else { "are" },
            if d.incidents_before == 1 {
                "it"
            } else {
                "them"
            }
        );
    }
    crate::render::visible(&out).into_owned()
}

/// The diff as Markdown, in the text's order.
pub fn markdown(d: &Diff) -> String {
    use crate::render::{markdown_code as code, markdown_prose as prose};
    let mut out = String::new();
    let _ = writeln!(out, "# pgmortem diff\n\n**{}**\n", prose(&d.summary));
    for (label, s) in [("before", &d.before), ("after", &d.after)] {
        let _ = writeln!(out, "- {label}: {}", prose(&side_text(s)));
    }
    for note in &d.notes {
        let _ = writeln!(out, "- **{}**", prose(note));
    }
    out.push('\n');
    if !d.settings.is_empty() {
        let _ = writeln!(out, "## Settings changed\n");
        for s in &d.settings {
            let _ = writeln!(
                out,
                "- {}: {} → {}",
                code(&s.name),
                code(&value_text(&s.before)),
                code(&value_text(&s.after))
            );
        }
        out.push('\n');
    }
    for (heading, list) in [
        ("Findings gone", &d.gone),
        ("Findings new", &d.new),
        ("Findings changed", &d.changed),
        ("Rules that could not run after", &d.not_evaluated_after),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(out, "## {heading}\n");
        for c in list {
            let _ = writeln!(
                out,
                "- {} {}{}: {}",
                code(&c.id),
                prose(&severity_text(c)),
                prose(&count_text(c)),
                prose(&c.title)
            );
            for f in &c.figures {
                let _ = writeln!(
                    out,
                    "  - {}: {} → {}",
                    code(&f.name),
                    figure_text(&f.name, f.before),
                    figure_text(&f.name, f.after)
                );
            }
        }
        out.push('\n');
    }
    if !d.unchanged.is_empty() {
        let ids: Vec<String> = d.unchanged.iter().map(|i| code(i)).collect();
        let _ = writeln!(out, "Findings unchanged: {}.\n", ids.join(", "));
    }
    if !d.about_the_past.is_empty() {
        let ids: Vec<String> = d.about_the_past.iter().map(|i| code(i)).collect();
        let _ = writeln!(
            out,
            "Findings only about incidents from before: {}.\n",
            ids.join(", ")
        );
    }
    let _ = writeln!(out, "## Incidents since the first bundle\n");
    if d.incidents_since.is_empty() {
        let _ = writeln!(out, "None.");
    }
    for i in &d.incidents_since {
        let _ = writeln!(
            out,
            "- {}: {} ({}) at {}{}",
            i.index + 1,
            code(&i.kind),
            code(&i.cause),
            prose(i.started_at.as_deref().unwrap_or("unknown time")),
            i.outage_seconds
                .map(|s| format!(", outage {s:.3} s"))
                .unwrap_or_default()
        );
    }
    out
}
