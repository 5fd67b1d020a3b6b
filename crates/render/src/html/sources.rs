//! The sources table (every file of the bundle, its kind and how much of it was understood)
//! and how the clocks were put on UTC.

use std::fmt::Write as _;

use pgmortem_diagnose::{Report, human_bytes};

use super::markup::{count, esc, prose, time};

/// Beyond this many files the table starts folded (a bundle of a busy server holds a few files
/// per backend).
const OPEN_ROWS: usize = 120;

/// Writes the sources section with the clock.
pub(super) fn write(out: &mut String, report: &Report) {
    // What a collector wrote about its own run (a sosreport's sos_logs/) is for people too.
    let is_for_people = |kind: &str| kind == "reference" || kind == "collector_log";
    let used = report
        .sources
        .iter()
        .filter(|s| s.kind != "unknown" && !is_for_people(s.kind))
        .count();
    let for_people = report
        .sources
        .iter()
        .filter(|s| is_for_people(s.kind))
        .count();
    let _ = write!(
        out,
        "<section id=\"sources\"><h2>Sources</h2><details class=\"sources\"{}><summary>{} files, \
         {} of them read, {} kept for a person to read, {} not recognised (all listed)</summary><table class=\"sources\"><thead><tr>\
         <th>path</th><th>kind</th><th>size</th><th>lines</th><th>records</th>\
         <th>unrecognized</th><th>note</th></tr></thead><tbody>",
        if report.sources.len() <= OPEN_ROWS {
            " open"
        } else {
            ""
        },
        count(report.sources.len() as u64),
        count(used as u64),
        count(for_people as u64),
        count((report.sources.len() - used - for_people) as u64)
    );
    for s in &report.sources {
        let mut note = s.note.as_deref().map(esc).unwrap_or_default();
        if let Some(prefix) = &s.log_line_prefix {
            let _ = write!(
                note,
                "{}log_line_prefix <code>{}</code>{}",
                if note.is_empty() { "" } else { "; " },
                esc(prefix),
                s.log_line_prefix_from
                    .as_deref()
                    .map(|f| format!(" ({})", esc(f)))
                    .unwrap_or_default()
            );
        }
        let unrecognized = if s.unrecognized_lines == 0 {
            "0".to_owned()
        } else {
            let examples: Vec<String> = s
                .unrecognized_examples
                .iter()
                .map(|(line, text)| format!("{line}: {text}"))
                .collect();
            format!(
                "<details><summary>{}</summary><pre class=\"cited\">{}</pre></details>",
                count(s.unrecognized_lines),
                esc(&examples.join("\n"))
            )
        };
        let _ = write!(
            out,
            "<tr class=\"{}\"><td><code>{}</code></td><td>{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{unrecognized}</td>\
             <td>{note}</td></tr>",
            if s.kind == "unknown" || s.kind == "reference" {
                "muted"
            } else {
                ""
            },
            esc(&s.path),
            esc(s.kind),
            human_bytes(s.bytes),
            count(s.lines),
            count(s.records)
        );
    }
    out.push_str("</tbody></table></details>");
    let c = &report.clock;
    out.push_str("<h3>Clock</h3><ul>");
    match (c.boot_time, c.boot_time_source) {
        (Some(at), Some(source)) => {
            let _ = write!(
                out,
                "<li>Host boot time {} (from {}, ±{} s): kernel times are placed with it.</li>",
                esc(&time(at)),
                esc(source),
                c.boot_time_uncertainty_seconds.unwrap_or_default()
            );
        }
        _ => out.push_str(
            "<li>Host boot time unknown: kernel times without a wall clock are not placed.</li>",
        ),
    }
    for note in &c.notes {
        let _ = write!(out, "<li>{}</li>", prose(note));
    }
    out.push_str("</ul></section>\n");
}
