//! Every finding: severity, title, what happened, what to do, its figures and its evidence.
//! Evidence whose cited line the report holds (a log record of the timeline or of an
//! incident) opens (`<details>`) onto that line; the rest shows its `file:line`.

use std::collections::HashMap;
use std::fmt::Write as _;

use pgmortem_diagnose::{Report, Severity};

use super::markup::{count, esc, place, prose};

/// The text the report holds for a `(path, line)`: log records of the timeline, lines an
/// incident cites, and the query of each crash.
fn cited_lines(report: &Report) -> HashMap<(&str, u64), String> {
    let mut lines: HashMap<(&str, u64), String> = HashMap::new();
    for e in &report.timeline {
        lines
            .entry((e.path.as_str(), e.line))
            .or_insert_with(|| e.summary.clone());
    }
    for incident in &report.incidents {
        for l in &incident.preceded_by {
            lines
                .entry((l.path.as_str(), l.line))
                .or_insert_with(|| match l.severity {
                    Some(s) => format!("{s}:  {}", l.message),
                    None => l.message.clone(),
                });
        }
        if let Some(c) = &incident.postgres_crash
            && let Some(q) = &c.query
        {
            let text = lines.entry((c.path.as_str(), c.line)).or_default();
            if !text.contains(q.as_str()) {
                text.push_str("\nDETAIL:  Failed process was running: ");
                text.push_str(q);
            }
        }
    }
    lines
}

fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "critical",
        Severity::Warning => "warning",
        Severity::Info => "info",
    }
}

/// Writes the findings section.
pub(super) fn write(out: &mut String, report: &Report) {
    out.push_str("<section id=\"findings\"><h2>Findings</h2>");
    if report.findings.is_empty() {
        out.push_str("<p>No rule found anything to report.</p>");
    }
    let lines = cited_lines(report);
    let groups = crate::fold::groups(report);
    for (i, f) in crate::fold::findings(report, &groups).iter().enumerate() {
        write_finding(out, i, f, &lines);
    }
    if !report.not_evaluated.is_empty() {
        out.push_str(
            "<details class=\"notevaluated\"><summary>Rules not evaluated: the bundle lacks what \
             they read</summary><ul>",
        );
        for n in &report.not_evaluated {
            let _ = write!(
                out,
                "<li><code>{}</code> without {} (from {})</li>",
                esc(n.rule),
                esc(&n.missing.join(", ")),
                prose(&n.files.join("; "))
            );
        }
        out.push_str("</ul></details>");
    }
    out.push_str("</section>\n");
}

fn write_finding(
    out: &mut String,
    index: usize,
    folded: &crate::fold::Folded<'_>,
    lines: &HashMap<(&str, u64), String>,
) {
    let f = folded.finding;
    let sev = severity_name(f.severity);
    let _ = write!(
        out,
        "<article class=\"finding sev-{sev}\" id=\"finding-{}\" data-rule=\"{}\">\
         <h3><span class=\"badge {sev}\">{}</span> <code class=\"rule\">{}</code> {}{}</h3>",
        index + 1,
        esc(f.id),
        sev.to_uppercase(),
        esc(f.id),
        prose(&f.title),
        if f.confidence < 1.0 {
            format!(
                " <span class=\"muted\">(confidence {:.2})</span>",
                f.confidence
            )
        } else {
            String::new()
        }
    );
    if let Some((_, g)) = folded.group {
        let _ = write!(
            out,
            "<p class=\"muted\">Once for each of <a href=\"#incident-{}\">incidents {}–{}</a>: \
             {} findings alike, the first shown.</p>",
            g.first + 1,
            g.first + 1,
            g.last + 1,
            count(folded.repeats as u64)
        );
    } else if let Some(i) = f.incident {
        let _ = write!(
            out,
            "<p class=\"muted\">About <a href=\"#incident-{}\">incident {}</a>.</p>",
            i + 1,
            i + 1
        );
    }
    if !f.summary.is_empty() {
        let _ = write!(out, "<p class=\"prose\">{}</p>", prose(&f.summary));
    }
    if let Some(r) = &f.recommendation {
        let _ = write!(
            out,
            "<div class=\"todo\"><b>What to do</b><p class=\"prose\">{}</p></div>",
            prose(r)
        );
    }
    if !f.evidence.is_empty() {
        out.push_str("<div class=\"evidence\"><b>Evidence</b><ul>");
        for e in &f.evidence {
            let what = prose(&e.what);
            let from = e
                .host_place()
                .map(|h| format!(", from <code class=\"place\">{}</code>", esc(&h)))
                .unwrap_or_default();
            match lines.get(&(e.path.as_str(), e.line)) {
                Some(text) => {
                    let _ = write!(
                        out,
                        "<li><details><summary>{}{from} {what}</summary><pre class=\"cited\">{}</pre>\
                         </details></li>",
                        place(&e.path, e.line),
                        esc(text)
                    );
                }
                None => {
                    let _ = write!(out, "<li>{}{from} {what}</li>", place(&e.path, e.line));
                }
            }
        }
        out.push_str("</ul></div>");
    }
    if !f.figures.is_empty() {
        out.push_str("<details class=\"figures\"><summary>Figures</summary><table><tbody>");
        for (name, value) in &f.figures {
            let _ = write!(
                out,
                "<tr><th scope=\"row\"><code>{}</code></th><td class=\"num\">{}</td></tr>",
                esc(name),
                figure(*value)
            );
        }
        out.push_str("</tbody></table></details>");
    }
    out.push_str("</article>\n");
}

/// A figure without float noise: integers whole, others to four significant digits.
fn figure(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.3}")
    } else {
        format!("{v:.4}")
    }
}
