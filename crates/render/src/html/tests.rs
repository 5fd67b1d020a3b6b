//! The page's structure on reports of real incidents: every finding and incident present,
//! hostile text escaped, nothing fetched, the flame graph embedded when there is a profile.

use std::path::{Path, PathBuf};

use pgmortem_diagnose::{DiagnoseOptions, Report};

use super::html;

fn fixture(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/incidents")
        .join(name);
    std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap_or(dir)
}

fn report(name: &str) -> Report {
    let bundle =
        pgmortem_bundle::open(&fixture(name), &pgmortem_bundle::OpenOptions::default()).unwrap();
    pgmortem_diagnose::diagnose(&bundle, &DiagnoseOptions::default()).unwrap()
}

/// What a self-contained page must not hold: anything that loads from elsewhere.
fn assert_self_contained(page: &str) {
    let lower = page.to_ascii_lowercase();
    for bad in [
        "<link",
        "<script src",
        "src=\"http",
        "src='http",
        "href=\"http",
        "href='http",
        "url(http",
        "url(\"http",
        "url('http",
        "@import",
        "<img",
        "<object",
        "<embed",
        "fetch(",
        "xmlhttprequest",
        "<base",
    ] {
        assert!(!lower.contains(bad), "the page holds {bad:?}");
    }
    // The only scripts are inline, without attributes but the flame graph's type.
    for (i, _) in lower.match_indices("<script") {
        let tag = &lower[i..i + lower[i..].find('>').unwrap()];
        assert!(!tag.contains("src"), "script with a source: {tag}");
    }
}

#[test]
fn an_oom_incident_page_has_its_span_every_finding_and_the_task_table() {
    let report = report("pg15-memcg-oom-work-mem");
    let page = html(&report);
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.len() < 2 << 20, "{} bytes", page.len());
    assert_self_contained(&page);
    // The summary sentence, the incident and its restart drawn to scale.
    assert!(page.contains("the kernel OOM killer killed PostgreSQL server process PID 32691"));
    assert!(page.contains("id=\"incident-1\""));
    assert!(page.contains("id=\"span-1\""));
    for phase in ["seg-crash", "seg-reinit", "seg-redo", "seg-ready"] {
        assert!(page.contains(&format!("class=\"{phase}\"")), "{phase}");
    }
    assert!(page.contains("Incident 1: redo starts → redo done"));
    // Each mark says its file:line.
    assert!(page.contains("postgres/server.log:5</title>"));
    // Every finding, by rule id.
    for f in &report.findings {
        assert!(
            page.contains(&format!("data-rule=\"{}\"", f.id)),
            "{}",
            f.id
        );
    }
    // The OOM report explained, the task table sorted by RSS with the victim first.
    assert!(page.contains("The kernel's OOM report, explained"));
    let victim = page.find("<tr class=\"victim\"><td>32691</td>").unwrap();
    let next = page.find("<td>32422</td>").unwrap();
    assert!(victim < next);
    // Memory bars, lanes, the cited line of the crash behind its evidence.
    for part in [
        "id=\"memory\"",
        ">shared_buffers</text>",
        ">Committed_AS</text>",
        ">snapshots</text>",
    ] {
        assert!(page.contains(part), "{part}");
    }
    assert!(page.contains("<details><summary><code class=\"place\">postgres/server.log:5</code>"));
    // No profile, no flame graph.
    assert!(!page.contains("<iframe"));
}

#[test]
fn bundle_text_is_escaped_everywhere() {
    let mut report = report("pg15-memcg-oom-work-mem");
    let hostile = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>";
    report.collection.hostname = Some(hostile.to_owned());
    for e in &mut report.timeline {
        e.summary = format!("{hostile} {}", e.summary);
    }
    let incident = &mut report.incidents[0];
    if let Some(c) = &mut incident.postgres_crash {
        c.query = Some(format!("SELECT '{hostile}'"));
    }
    if let Some(k) = &mut incident.kernel_kill {
        k.comm = hostile.to_owned();
        k.tasks[0].name = hostile.to_owned();
    }
    report.findings[0].title = hostile.to_owned();
    report.findings[0].evidence[0].what = hostile.to_owned();
    report.sources[0].path = hostile.to_owned();
    let page = html(&report);
    assert!(
        !page.contains("<script>alert"),
        "a script from the bundle came through"
    );
    assert!(!page.contains("<img"));
    assert!(page.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&quot;&gt;&lt;img"));
    // The page's own script is the one line that opens <details> for printing.
    assert_eq!(page.matches("<script>").count(), 1);
    assert_self_contained(&page);
}

#[cfg(feature = "flamegraph")]
#[test]
fn a_perf_capture_page_embeds_a_searchable_flame_graph() {
    let mut report = report("pg15-thp-compaction-perf");
    assert!(!report.perf.is_empty());
    // A hostile symbol in a stack comes out as text inside the graph's frame.
    let total: u64 = report.perf[0].stacks.iter().map(|s| s.1).sum();
    report.perf[0]
        .stacks
        .push(("postgres;<script>alert(1)</script>".to_owned(), total / 10));
    let page = html(&report);
    assert_self_contained(&page);
    assert!(page.contains(">perf samples</text>"));
    assert!(page.contains("<iframe class=\"flame\""));
    assert!(page.contains("sandbox=\"allow-scripts allow-modals\""));
    // inferno's graph with its search, its frames, its script, escaped into srcdoc.
    let frame = &page[page.find("srcdoc=\"").unwrap()..];
    let frame = &frame[..frame[8..].find('"').unwrap() + 8];
    assert!(frame.contains("id=&quot;search&quot;"));
    assert!(frame.contains("tuplesort_performsort"));
    assert!(!frame.contains('<'), "markup inside the attribute value");
    assert!(
        !frame.contains("&lt;script&gt;alert"),
        "the symbol is escaped twice: once by inferno"
    );
    let at = frame
        .find("alert(1)")
        .expect("the hostile frame is in the graph");
    assert!(
        frame[at.saturating_sub(40)..at].ends_with("&amp;lt;script&amp;gt;"),
        "{}",
        &frame[at.saturating_sub(200)..at + 40]
    );
    for f in &report.findings {
        assert!(
            page.contains(&format!("data-rule=\"{}\"", f.id)),
            "{}",
            f.id
        );
    }
    // The same report gives the same page, flame graph colours included.
    assert!(html(&report) == page, "two renderings differ");
    let without: usize = page.len() - frame.len();
    assert!(without < 2 << 20, "{without} bytes without the flame graph");
}

/// Checks that every element of `page` is closed in order (void elements and `/>` aside),
/// skipping the raw text of `<style>` and `<script>`; returns the first problem.
fn unbalanced(page: &str) -> Option<String> {
    const VOID: [&str; 6] = ["meta", "br", "hr", "img", "input", "link"];
    let mut open: Vec<&str> = Vec::new();
    let mut rest = page;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let Some(end) = rest.find('>') else {
            return Some("a tag never ends".to_owned());
        };
        if rest.starts_with('!') {
            rest = &rest[end + 1..];
            continue;
        }
        let tag = &rest[..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(top) if top == name.trim() => continue,
                top => return Some(format!("</{name}> closes {top:?}")),
            }
        }
        let name = tag
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap_or_default();
        if tag.ends_with('/') || VOID.contains(&name) {
            continue;
        }
        if name == "style" || name == "script" {
            let close = format!("</{name}>");
            let Some(at) = rest.find(&close) else {
                return Some(format!("<{name}> never closed"));
            };
            rest = &rest[at + close.len()..];
            continue;
        }
        open.push(name);
    }
    (!open.is_empty()).then(|| format!("unclosed: {open:?}"))
}

#[test]
fn every_element_is_closed() {
    for name in [
        "pg15-memcg-oom-work-mem",
        "pg15-thp-compaction-perf",
        "pg15-oom-kill-postmaster",
    ] {
        let page = html(&report(name));
        assert_eq!(unbalanced(&page), None, "{name}");
    }
    assert!(unbalanced("<p><b>x</p></b>").is_some());
    assert!(unbalanced("<p>x").is_some());
    assert!(unbalanced("<script>x").is_some());
}

#[test]
fn a_day_of_events_stays_small() {
    let mut report = report("pg15-memcg-oom-work-mem");
    let template = report.timeline[0].clone();
    let start = template.at.unwrap();
    // 50 000 PostgreSQL events over a day, one every 1.7 s.
    for i in 0..50_000i64 {
        let mut e = template.clone();
        e.origin = "postgres";
        e.kind = "connection_received".to_owned();
        e.at = Some(start + jiff::SignedDuration::from_millis(i * 1728));
        e.line = 1000 + i as u64;
        report.timeline.push(e);
    }
    let page = html(&report);
    assert!(page.len() < 2 << 20, "{} bytes", page.len());
    assert!(page.contains("class=\"bin\""));
    assert!(page.contains("events here, the first:"));
    // The incident's own marks are still drawn one by one.
    assert!(page.contains("class=\"mk bad\""));
    assert_eq!(unbalanced(&page), None);
}
