//! The report as one self-contained HTML page: a summary, a timeline picture, each incident
//! with its OOM report explained (and what clients saw through pgbouncer), every finding with
//! its evidence, the pgbouncer logs, the host's memory, the flame graph of the bundle's perf
//! profile and the sources.
//!
//! The page needs nothing but itself: CSS inline, pictures as inline SVG, no font, image,
//! script or style from anywhere else, nothing fetched, so it opens from `file://` on a
//! machine with no network and can be mailed or attached to a ticket. The only script is a
//! line that opens every `<details>` before printing, and the flame graph's own (inferno's
//! search and zoom), which runs inside the graph's frame. Light and dark follow the reader's
//! `prefers-color-scheme`; `@media print` lays it out for paper.
//!
//! Everything a bundle wrote is escaped ([`markup::esc`]): a bundle is hostile input. Without
//! a flame graph the page stays small (a few hundred KiB for a day of events: marks beyond
//! [`timeline::MAX_MARKS`] per lane are drawn as counted bins).

mod axis;
mod findings;
mod flame;
mod incidents;
mod markup;

pub(crate) use markup::esc as escape;
mod memory;
mod pooler;
mod sources;
mod summary;
mod timeline;

#[cfg(test)]
mod tests;

use std::fmt::Write as _;

use pgmortem_diagnose::Report;

use markup::esc;

/// The page's style sheet: light by default, dark with `prefers-color-scheme: dark`, a print
/// layout.
const STYLE: &str = include_str!("style.css");

/// Opens every `<details>` before printing, so a printed report shows the cited lines.
const PRINT_SCRIPT: &str = "addEventListener('beforeprint',function(){\
document.querySelectorAll('details').forEach(function(d){d.open=true})});";

/// The report as a self-contained HTML page (UTF-8). Never fails: parts the report lacks are
/// left out or said to be missing; a flame graph that cannot be drawn is replaced by why.
pub fn html(report: &Report) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let title = match &report.collection.hostname {
        Some(host) => format!("pgmortem report: {host}"),
        None => "pgmortem report".to_owned(),
    };
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"color-scheme\" content=\"light dark\">\n\
         <meta name=\"generator\" content=\"{}\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n\
         </head>\n<body>\n<main>\n",
        esc(&report.generator),
        esc(&title)
    );
    summary::write(&mut out, report, &title);
    nav(&mut out, report);
    timeline::write(&mut out, report);
    incidents::write(&mut out, report);
    findings::write(&mut out, report);
    pooler::write(&mut out, report);
    memory::write(&mut out, report);
    flame::write(&mut out, report);
    sources::write(&mut out, report);
    let _ = write!(
        out,
        "<footer>Made by {} from the bundle alone: every figure names the file and line it \
         comes from.</footer>\n</main>\n<script>{PRINT_SCRIPT}</script>\n</body>\n</html>\n",
        esc(&report.generator)
    );
    out
}

/// The table of contents: one link per section the page has.
fn nav(out: &mut String, report: &Report) {
    let mut links = vec![("timeline", "Timeline")];
    if !report.incidents.is_empty() {
        links.push(("incidents", "Incidents"));
    }
    links.push(("findings", "Findings"));
    if !report.pooler.is_empty() {
        links.push(("pooler", "pgbouncer"));
    }
    if report.host.memory.is_some() {
        links.push(("memory", "Memory"));
    }
    if !report.perf.is_empty() {
        links.push(("profile", "CPU profile"));
    }
    links.push(("sources", "Sources"));
    out.push_str("<nav aria-label=\"sections\">");
    for (id, name) in links {
        let _ = write!(out, "<a href=\"#{id}\">{name}</a>");
    }
    out.push_str("</nav>\n");
}
