//! What clients saw through pgbouncer: each pgbouncer log of the bundle in a line, its starts
//! and stops, and its most frequent troubles with the line of each; and the same view of an
//! incident's window, for its table.

use std::fmt::Write as _;

use pgmortem_diagnose::{ClientsSaw, PoolerProblem, Report};

use super::markup::{esc, place, prose};
use crate::describe;

/// Writes the section (nothing when the bundle has no pgbouncer log).
pub(super) fn write(out: &mut String, report: &Report) {
    if report.pooler.is_empty() {
        return;
    }
    out.push_str("<section id=\"pooler\"><h2>Clients through pgbouncer</h2>\n");
    for s in &report.pooler {
        let _ = write!(
            out,
            "<p><code class=\"place\">{}</code>: {}</p>",
            esc(&s.path),
            esc(&describe::pooler_head(s))
        );
        if let Some(l) = describe::pooler_lifecycle(s) {
            let _ = write!(out, "<p class=\"muted\">{}</p>", esc(&l));
        }
        problems(out, &s.problems);
    }
    out.push_str("</section>\n");
}

/// The incident table's cell: what clients saw in its window.
pub(super) fn incident_cell(c: &ClientsSaw) -> String {
    let mut cell = esc(&describe::clients_saw_head(c));
    problems(&mut cell, &c.problems);
    for note in &c.notes {
        let _ = write!(cell, "<p class=\"muted\">{}</p>", prose(note));
    }
    cell
}

/// The first problems as a list, each with the line of its first example.
fn problems(out: &mut String, problems: &[PoolerProblem]) {
    if problems.is_empty() {
        return;
    }
    out.push_str("<ul class=\"lines\">");
    for p in problems.iter().take(describe::POOLER_PROBLEMS_SHOWN) {
        let (line, at) = describe::pooler_problem(p);
        let place = at.map_or_else(String::new, |(path, n)| format!(" {}", place(&path, n)));
        let _ = write!(out, "<li>{}{place}</li>", esc(&line));
    }
    if let Some(rest) = describe::pooler_rest(problems) {
        let _ = write!(out, "<li class=\"muted\">{}</li>", esc(&rest));
    }
    out.push_str("</ul>");
}
