//! The Markdown rendering read back as GitHub reads it (CommonMark with tables): text from a
//! hostile bundle stays text, never Markdown structure.

use std::collections::BTreeMap;

use pgmortem_diagnose::{
    Caveat, ClientsSaw, ClockInfo, Evidence, Finding, Incident, LogLine, PoolerLifecycle,
    PoolerLine, PoolerProblem, PoolerSummary, PostgresCrash, Report, Severity, SourceSummary,
    quote,
};
use pgmortem_render::{Detail, markdown_with};

/// The whole report: every piece of hostile text in it.
const VERBOSE: Detail = Detail {
    verbose: true,
    sources: true,
    findings_left_out: 0,
};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// Text a hostile bundle could hold: every character Markdown gives a meaning to, at a line's
/// start and inside it, raw HTML, a link, an image, a mention, a table row, a fence, an
/// escape sequence.
const HOSTILE: &str = "# not a heading | a | b |\n\
    ---|---\n\
    > quote <script>alert(1)</script> [link](https://example.invalid) ![img](x.png)\n\
    - item *em* _em_ __strong__ ~~del~~ `code` ``` \\ &amp; @someone 1. two\n\
    \n\
    \u{20}   indented code\n\
    2) list\n\
    ===\n\
    \u{1b}[31mred";

fn hostile_report() -> Report {
    let source = |path: &str, note: Option<&str>| SourceSummary {
        path: path.to_owned(),
        kind: "postgres_log",
        bytes: 10,
        lines: 3,
        records: 2,
        unrecognized_lines: 1,
        unrecognized_examples: vec![(1, HOSTILE.to_owned())],
        note: note.map(str::to_owned),
        log_line_prefix: None,
        log_line_prefix_from: None,
        server_log: None,
    };
    let path = "postgres/a|b`c`<x>#.log";
    let at: jiff::Timestamp = "2026-11-28T05:51:09Z".parse().unwrap();
    let hostile_line = PoolerLine {
        at: Some(at),
        path: path.to_owned(),
        line: 4,
        text: HOSTILE.to_owned(),
    };
    let problem = PoolerProblem {
        what: "client_error",
        cause: "other",
        count: 2,
        first_at: Some(at),
        last_at: Some(at),
        examples: vec![hostile_line.clone()],
    };
    let mut report = Report {
        schema: pgmortem_diagnose::SCHEMA,
        generator: "pgmortem 0.0.0".to_owned(),
        caveats: vec![Caveat {
            kind: "log_not_read_whole",
            text: HOSTILE.to_owned(),
        }],
        collection: Default::default(),
        clock: ClockInfo {
            boot_time: None,
            boot_time_source: None,
            boot_time_uncertainty_seconds: None,
            notes: vec![HOSTILE.to_owned()],
        },
        sources: vec![source(path, Some(HOSTILE)), source("ok.log", None)],
        incidents: vec![Incident {
            kind: "crash_restart",
            cause: "signal_from_outside",
            started_at: None,
            kernel_kill: None,
            kernel_fault: None,
            postgres_crash: Some(PostgresCrash {
                pid: 7,
                process: "server | process".to_owned(),
                signal: Some(9),
                exit_code: None,
                query: Some(format!("SELECT '```'\n{HOSTILE}")),
                at: None,
                path: path.to_owned(),
                line: 3,
            }),
            recovery: None,
            outage_seconds: Some(1.5),
            redo_seconds: None,
            wal_replayed_bytes: None,
            clock_skew_seconds: None,
            preceded_by: vec![
                LogLine {
                    at: None,
                    path: path.to_owned(),
                    line: 1,
                    pid: Some(7),
                    severity: Some("ERROR"),
                    kind: None,
                    message: "one `line` | with <b>".to_owned(),
                    wrapper_at: None,
                },
                LogLine {
                    at: None,
                    path: path.to_owned(),
                    line: 2,
                    pid: Some(7),
                    severity: Some("ERROR"),
                    kind: None,
                    message: HOSTILE.to_owned(),
                    wrapper_at: None,
                },
            ],
            sessions_lost: None,
            connections_refused: 0,
            confidence: 1.0,
            matched_by: None,
            notes: vec![
                HOSTILE.to_owned(),
                format!("It was running: {} killed by SIGKILL", quote(HOSTILE)),
            ],
            container_kill: None,
            clients_saw: Some(ClientsSaw {
                from: at,
                to: at,
                logs: vec![path.to_owned()],
                client_errors: 2,
                server_login_failures: 0,
                server_connections_lost: 0,
                problems: vec![problem.clone()],
                notes: vec![HOSTILE.to_owned()],
            }),
            patroni: Vec::new(),
            ..Incident::new("crash_restart", "signal_from_outside", None)
        }],
        findings: vec![Finding {
            id: "oom-kill-crash-restart",
            severity: Severity::Critical,
            title: HOSTILE.to_owned(),
            summary: HOSTILE.to_owned(),
            recommendation: Some(HOSTILE.to_owned()),
            evidence: vec![Evidence {
                path: path.to_owned(),
                line: 2,
                what: HOSTILE.to_owned(),
                key: None,
                host_file: None,
                host_line: None,
            }],
            incident: Some(0),
            group: Some(0),
            confidence: 0.5,
            figures: BTreeMap::new(),
            impact: 0.0,
        }],
        groups: Vec::new(),
        not_evaluated: Vec::new(),
        host: Default::default(),
        timeline: Vec::new(),
        perf: Vec::new(),
        pooler: vec![PoolerSummary {
            path: path.to_owned(),
            version: Some(HOSTILE.to_owned()),
            first_at: Some(at),
            last_at: Some(at),
            records: 3,
            logins: 1,
            client_errors: 2,
            server_login_failures: 0,
            server_connections_lost: 0,
            problems: vec![problem],
            stats: None,
            lifecycle: vec![PoolerLifecycle {
                kind: "fatal",
                line: hostile_line,
            }],
            trouble_not_kept: 0,
            times_without_zone: 0,
        }],
    };
    report.groups = pgmortem_diagnose::group_incidents(&report.incidents);
    report
}

fn events(md: &str) -> Vec<Event<'_>> {
    Parser::new_ext(md, Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH).collect()
}

/// The text of the events, as a reader sees it.
fn plain(events: &[Event<'_>]) -> String {
    let mut out = String::new();
    for e in events {
        match e {
            Event::Text(t) | Event::Code(t) => out.push_str(t),
            Event::SoftBreak | Event::HardBreak => out.push('\n'),
            _ => {}
        }
    }
    out
}

#[test]
fn hostile_text_never_becomes_markdown_structure() {
    let md = markdown_with(&hostile_report(), &VERBOSE);
    let events = events(&md);
    let mut headings = Vec::new();
    for (i, e) in events.iter().enumerate() {
        match e {
            Event::Html(h) | Event::InlineHtml(h) => panic!("raw HTML {h:?} in\n{md}"),
            Event::Start(Tag::Link { .. } | Tag::Image { .. }) => panic!("a link in\n{md}"),
            Event::Start(Tag::Emphasis | Tag::Strong) => {
                // Only the renderer's own bold labels: `**What to do:**`, `**Caveats**`, ….
                let Some(Event::Text(t)) = events.get(i + 1) else {
                    panic!("emphasis without text in\n{md}")
                };
                assert!(
                    [
                        "Caveats",
                        "What to do:",
                        "kernel",
                        "postgres",
                        "restart",
                        "figures",
                        "note",
                        "clients",
                    ]
                    .contains(&t.as_ref())
                        || t.starts_with("1 incident")
                        || t.starts_with("# not a heading"),
                    "emphasis on {t:?} in\n{md}"
                );
            }
            Event::Start(Tag::Strikethrough) => panic!("strikethrough in\n{md}"),
            Event::Start(Tag::Heading { .. }) => {
                let text = plain(&events[i + 1..i + 4]);
                headings.push(text);
            }
            _ => {}
        }
    }
    assert_eq!(
        headings.len(),
        8,
        "the report's own headings only: {headings:?}\n{md}"
    );
    // The sources table keeps its two rows of six cells; the incidents table its one of eight.
    let mut rows: Vec<usize> = Vec::new();
    for e in &events {
        match e {
            Event::Start(Tag::TableRow | Tag::TableHead) => rows.push(0),
            Event::Start(Tag::TableCell) => *rows.last_mut().unwrap() += 1,
            _ => {}
        }
    }
    assert_eq!(rows, [8, 8, 6, 6, 6], "{md}");
    // What the bundle wrote reads as it wrote it, line by line: in prose, lines start trimmed
    // and a mention is broken by a zero-width space; in a code block or span, it is verbatim.
    // Either way the escape character shows as its picture.
    let text = plain(&events);
    for line in HOSTILE.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let verbatim = line.replace('\u{1b}', "␛");
        let in_prose = verbatim.replace("@s", "@\u{200B}s");
        assert!(
            text.contains(&in_prose) || text.contains(&verbatim),
            "{verbatim:?} not read back from\n{md}"
        );
    }
    // Bundle text that pgmortem quotes in its own sentence is one code span holding the whole
    // text on one line, and the sentence goes on after it as prose.
    let one_line = HOSTILE.replace('\n', " ").replace('\u{1b}', "␛");
    let quoted = events
        .iter()
        .position(|e| matches!(e, Event::Code(t) if *t.as_ref() == one_line))
        .unwrap_or_else(|| panic!("{one_line:?} is not one code span in\n{md}"));
    assert!(
        matches!(&events[quoted - 1], Event::Text(t) if t.ends_with("It was running: ")),
        "{:?}",
        &events[quoted - 1..quoted + 2]
    );
    assert!(
        matches!(&events[quoted + 1], Event::Text(t) if t.starts_with(" killed by SIGKILL")),
        "{:?}",
        &events[quoted - 1..quoted + 2]
    );
    assert!(
        !md.contains('\u{1b}'),
        "an escape character reached the output"
    );
    assert!(text.contains("postgres/a|b`c`<x>#.log:2"), "{md}");
    // A note of several lines is one line in its table cell.
    let note_row = md
        .lines()
        .find(|l| l.starts_with("| ``postgres/a"))
        .unwrap();
    assert!(
        note_row.contains(" | \\# not a heading \\| a \\| b \\| ---\\|--- > quote \\<script>"),
        "{note_row}"
    );
    assert!(
        text.contains("# not a heading | a | b | ---|--- > quote <script>alert(1)</script> [link]"),
        "{text}"
    );
}

#[test]
fn a_query_is_a_fenced_block_longer_than_its_backticks() {
    let md = markdown_with(&hostile_report(), &VERBOSE);
    let events = events(&md);
    let blocks: Vec<String> = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e, Event::Start(Tag::CodeBlock(_))))
        .map(|(i, _)| {
            events[i + 1..]
                .iter()
                .take_while(|e| !matches!(e, Event::End(TagEnd::CodeBlock)))
                .map(|e| match e {
                    Event::Text(t) => t.to_string(),
                    _ => String::new(),
                })
                .collect()
        })
        .collect();
    assert!(
        blocks
            .iter()
            .any(|b| b.starts_with("SELECT '```'\n# not a heading")),
        "{blocks:?}"
    );
    assert!(md.contains("````sql\n"), "{md}");
}

/// The same hostile report as a page: every piece of bundle text is inert there too.
#[test]
fn the_hostile_report_as_html_is_escaped() {
    let page = pgmortem_render::html(&hostile_report());
    assert!(!page.contains("<script>alert"));
    assert!(!page.contains("href=\"https"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert_eq!(
        page.matches("<script>").count(),
        1,
        "only the page's own print script"
    );
}
