//! The flame graph of each perf profile the report carries, drawn by inferno from the
//! profile's collapsed stacks: searchable (its Search button, or Ctrl-F inside it) and
//! zoomable (click a frame).
//!
//! inferno's SVG is a document of its own: its script looks the drawing up as the page's
//! first `<svg>`, sets listeners on the window and takes Ctrl-F. Put among the report's other
//! pictures it would take the wrong drawing and the page's keys, so it is embedded whole as
//! the `srcdoc` of a sandboxed frame (`allow-scripts` for its search and zoom, `allow-modals`
//! for the search prompt; no same-origin access to the report): still one file, nothing
//! fetched, and its script reaches nothing but the graph.

use std::fmt::Write as _;

use pgmortem_diagnose::{PerfSummary, Report};

use super::markup::{count, esc, percent};

/// Writes the CPU profile section (nothing when the report carries no profile).
pub(super) fn write(out: &mut String, report: &Report) {
    if report.perf.is_empty() {
        return;
    }
    out.push_str("<section id=\"profile\"><h2>CPU profile</h2>");
    for p in &report.perf {
        let _ = write!(
            out,
            "<p><code class=\"place\">{}</code>: {} samples of <code>{}</code>{}{}, {} of them in \
             the kernel.</p>",
            esc(&p.path),
            count(p.samples),
            esc(p.event.as_deref().unwrap_or("?")),
            p.cpus.map(|c| format!(" on {c} CPUs")).unwrap_or_default(),
            p.duration_seconds
                .map(|s| format!(" over {s:.1} s"))
                .unwrap_or_default(),
            percent(p.kernel_share)
        );
        match svg(p) {
            Ok(svg) => frame(out, &svg),
            Err(why) => {
                let _ = write!(out, "<p class=\"muted\">No flame graph: {}.</p>", esc(&why));
            }
        }
    }
    out.push_str("</section>\n");
}

/// Without the `flamegraph` feature there is no flame graph, and the page says why.
#[cfg(not(feature = "flamegraph"))]
pub(super) fn svg(_: &PerfSummary) -> Result<String, String> {
    Err("this pgmortem was built without the flamegraph feature; \
         `pgmortem collapse-perf` folds the stacks for any flame graph tool"
        .to_owned())
}

/// The flame graph of `p`'s stacks as inferno draws it (colors hashed from the function
/// names, so the same profile always gives the same picture).
#[cfg(feature = "flamegraph")]
pub(super) fn svg(p: &PerfSummary) -> Result<String, String> {
    if p.stacks.is_empty() {
        return Err("the profile has no sample with a call stack".to_owned());
    }
    let mut options = inferno::flamegraph::Options::default();
    options.title = format!(
        "Flame graph: {} ({})",
        p.event.as_deref().unwrap_or("samples"),
        p.path
    );
    // Stacks are weighed by the events' period, as inferno-collapse-perf does: nanoseconds
    // for the clock events, else events counted.
    let event = p.event.as_deref().unwrap_or("");
    options.count_name = if event.starts_with("cpu-clock") || event.starts_with("task-clock") {
        "ns".to_owned()
    } else {
        "events".to_owned()
    };
    options.hash = true;
    options.deterministic = true;
    // Frames narrower than half a pixel of the 1200-pixel drawing cannot be seen; leaving them
    // out (inferno's default keeps down to 0.1) divides the graph's size by four on the
    // captures of fixtures/, e.g. 2.9 MB to 0.7 MB.
    options.min_width = 0.5;
    let lines: Vec<String> = p
        .stacks
        .iter()
        .map(|(stack, n)| format!("{stack} {n}"))
        .collect();
    let mut bytes = Vec::new();
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut bytes)
        .map_err(|e| format!("inferno could not draw it ({e})"))?;
    String::from_utf8(bytes).map_err(|_| "inferno wrote invalid UTF-8".to_owned())
}

/// Embeds inferno's SVG document as the `srcdoc` of a sandboxed frame as tall as the graph.
fn frame(out: &mut String, svg: &str) {
    // From the root element on: the XML declaration and the DTD reference are not needed in
    // an HTML document, and neither are the namespace declarations, which the HTML parser
    // ignores.
    let body = svg.find("<svg").map_or(svg, |i| &svg[i..]);
    let body = strip_namespaces(body);
    let height = body
        .find("height=\"")
        .and_then(|i| {
            let rest = &body[i + 8..];
            rest[..rest.find('"')?].parse::<u32>().ok()
        })
        .unwrap_or(600);
    let doc = format!(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><style>html,body{{margin:0;\
         background:#fff}}svg{{display:block;width:100%}}</style></head><body>{body}</body></html>"
    );
    let _ = write!(
        out,
        "<iframe class=\"flame\" title=\"flame graph\" sandbox=\"allow-scripts allow-modals\" \
         style=\"height:{}px\" srcdoc=\"{}\"></iframe>\
         <p class=\"muted\">Hover a frame for its samples, click to zoom, <q>Search</q> (top \
         right) to highlight functions by name.</p>",
        height + 4,
        esc(&body_fix(&doc))
    );
}

/// The root element's `xmlns…="…"` attributes removed.
fn strip_namespaces(svg: &str) -> String {
    let Some(end) = svg.find('>') else {
        return svg.to_owned();
    };
    let (head, rest) = svg.split_at(end);
    let mut kept = String::with_capacity(head.len());
    let mut attrs = head;
    while let Some(i) = attrs.find(" xmlns") {
        kept.push_str(&attrs[..i]);
        let after = &attrs[i + 1..];
        // Skip `xmlns[:p]="…"`.
        let skip = after
            .find('"')
            .and_then(|q| after[q + 1..].find('"').map(|r| q + 1 + r + 1))
            .unwrap_or(after.len());
        attrs = &after[skip..];
    }
    kept.push_str(attrs);
    kept + rest
}

/// The comment inferno puts after the root element points at web pages; the graph needs it
/// not, and a report that names no address is easier to vet.
fn body_fix(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    let mut rest = doc;
    while let Some(i) = rest.find("<!--") {
        out.push_str(&rest[..i]);
        match rest[i..].find("-->") {
            Some(j) => rest = &rest[i + j + 3..],
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}
