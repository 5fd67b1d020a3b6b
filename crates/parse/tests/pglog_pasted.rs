//! A real PostgreSQL log pasted into a ticket, a mail or a Markdown issue: each kind of damage a
//! paste does (quoting, code-block indentation, fences, CRLF, cut marks, mail line wraps) is
//! undone, the records are those of the log itself, and what was undone is counted.

mod common;

use common::pglog_fixture;
use pgmortem_parse::paste::PasteCounts;
use pgmortem_parse::pglog::{self, PgLog, PgLogOptions, PgRecord};

fn parse(text: &str) -> PgLog {
    pglog::parse(text.as_bytes(), &PgLogOptions::default()).unwrap()
}

/// What a paste must not change: when, who, what.
fn essentials(records: &[PgRecord]) -> Vec<String> {
    records
        .iter()
        .map(|r| {
            format!(
                "{:?} {:?} {:?} {:?} {:?} {:?} {:?}",
                r.time.as_ref().and_then(|t| t.utc),
                r.pid,
                r.severity,
                r.message,
                r.detail,
                r.statement,
                r.event
            )
        })
        .collect()
}

fn original() -> String {
    String::from_utf8(pglog_fixture("pg15-backend-sigkill.log")).unwrap()
}

fn each_line(text: &str, f: impl Fn(&str) -> String) -> String {
    text.lines().map(|l| f(l) + "\n").collect()
}

/// A mail client's greedy wrap at `width` columns, breaking at a single space (the space is
/// dropped) and inside a word only when a word is longer than the width.
fn wrap(line: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while rest.chars().count() > width {
        let cut: usize = rest
            .char_indices()
            .nth(width)
            .map_or(rest.len(), |(i, _)| i);
        let head = &rest[..cut];
        let space = head
            .char_indices()
            .rev()
            .find(|&(i, c)| {
                c == ' ' && i > 0 && !head[..i].ends_with(' ') && !rest[i + 1..].starts_with(' ')
            })
            .map(|(i, _)| i);
        match space {
            Some(i) => {
                out.push(rest[..i].to_owned());
                rest = &rest[i + 1..];
            }
            None => {
                out.push(head.to_owned());
                rest = &rest[cut..];
            }
        }
    }
    out.push(rest.to_owned());
    out
}

#[test]
fn the_log_itself_is_no_paste() {
    let log = parse(&original());
    assert_eq!(log.pasted, None);
    assert_eq!(log.stats.unrecognized_lines, 0);
}

#[test]
fn quoted_lines_read_as_the_log() {
    let text = original();
    let want = essentials(&parse(&text).records);
    for quote in ["> ", "> > ", ">> ", ">"] {
        let pasted = each_line(&text, |l| format!("{quote}{l}"));
        let log = parse(&pasted);
        assert_eq!(essentials(&log.records), want, "{quote:?}");
        assert_eq!(log.stats.unrecognized_lines, 0, "{quote:?}");
        let pasted = log.pasted.unwrap();
        assert!(pasted.shape.quoted);
        assert_eq!(pasted.counts.quoted_lines, text.lines().count() as u64);
        assert!(pasted.note().unwrap().contains("quoted with `>`"));
    }
}

#[test]
fn a_markdown_code_block_reads_as_the_log() {
    let text = original();
    let want = essentials(&parse(&text).records);
    let pasted = format!(
        "Here is what the server logged:\n\n```text\n{}```\n\nThanks.\n",
        each_line(&text, |l| format!("    {l}"))
    );
    let log = parse(&pasted);
    assert_eq!(essentials(&log.records), want);
    let report = log.pasted.unwrap();
    assert_eq!(report.shape.indent, 4);
    assert_eq!(report.counts.fence_lines, 2);
    // The two sentences around the block are the only lines not understood.
    assert_eq!(log.stats.unrecognized_lines, 2, "{:?}", log.stats);
}

#[test]
fn crlf_line_ends_are_said() {
    let text = original();
    let want = essentials(&parse(&text).records);
    let log = parse(&text.replace('\n', "\r\n"));
    assert_eq!(essentials(&log.records), want);
    let report = log.pasted.unwrap();
    assert_eq!(report.counts.crlf_lines, text.lines().count() as u64);
    assert_eq!(
        report.note().unwrap(),
        format!("line ends: {} lines ended in CRLF", text.lines().count())
    );
}

#[test]
fn cut_marks_are_counted_and_cut_nothing_else() {
    let text = original();
    let lines: Vec<&str> = text.lines().collect();
    // The middle of the log replaced by a mark, as a person shortening a paste does.
    let mut pasted = String::new();
    for (i, line) in lines.iter().enumerate() {
        match i {
            10 => pasted.push_str("[...]\n"),
            11..=13 => {}
            20 => pasted.push_str("[snip]\n--\n"),
            _ => {
                pasted.push_str(line);
                pasted.push('\n');
            }
        }
    }
    let log = parse(&pasted);
    assert_eq!(log.stats.unrecognized_lines, 0, "{:?}", log.stats);
    assert_eq!(log.pasted.unwrap().counts.cut_marks, 3);
    assert!(log.events.contains_key("terminated_by_signal"));
}

#[test]
fn mail_line_wraps_are_joined_back() {
    let text = original();
    let want = essentials(&parse(&text).records);
    for width in [72, 76, 78] {
        let wrapped: String = text
            .lines()
            .flat_map(|l| wrap(l, width))
            .map(|l| format!("> {l}\n"))
            .collect();
        assert!(wrapped.lines().count() > text.lines().count() + 10);
        let log = parse(&wrapped);
        assert_eq!(essentials(&log.records), want, "wrapped at {width}");
        assert_eq!(log.stats.unrecognized_lines, 0, "{width}: {:?}", log.stats);
        let report = log.pasted.unwrap();
        // The longest line is the width, or a column short of it (the space a break dropped).
        let learned = usize::from(report.shape.wrap_width.unwrap());
        assert!(
            (width - 2..=width).contains(&learned),
            "{learned} for {width}"
        );
        assert_eq!(
            report.counts.wraps_joined,
            (wrapped.lines().count() - text.lines().count()) as u64
        );
    }
}

#[test]
fn wraps_are_joined_in_a_log_that_is_only_wrapped() {
    // No quote marks: the wraps alone say it was pasted (most lines are broken).
    let text = original();
    let want = essentials(&parse(&text).records);
    let wrapped: String = text
        .lines()
        .flat_map(|l| wrap(l, 76))
        .map(|l| l + "\n")
        .collect();
    let log = parse(&wrapped);
    assert_eq!(essentials(&log.records), want);
    let shape = log.pasted.unwrap().shape;
    assert!(!shape.quoted && shape.indent == 0);
    assert!(shape.wrap_width.is_some_and(|w| (74..=76).contains(&w)));
}

#[test]
fn no_prefix_at_all_in_a_quoted_paste() {
    // `LOG:  …` lines, as a person pastes them with the prefix cut off.
    let text = original();
    let bare = each_line(&text, |l| {
        let at = l.find("] ").map_or(0, |i| i + 2);
        format!("> {}", &l[at..])
    });
    let log = parse(&bare);
    assert_eq!(log.prefix, "");
    assert_eq!(log.stats.unrecognized_lines, 0, "{:?}", log.stats);
    assert!(log.records.iter().all(|r| r.time.is_none()));
    for kind in [
        "terminated_by_signal",
        "reinitializing",
        "redo_start",
        "ready",
    ] {
        assert!(log.events.contains_key(kind), "{kind}");
    }
    assert_ne!(log.pasted.unwrap().counts, PasteCounts::default());
}

#[test]
fn a_terminal_s_hard_wraps_and_padding_are_undone() {
    // Copied from a terminal 120 columns wide: short lines padded with spaces to the width,
    // long ones cut at exactly 120 characters, nothing dropped.
    let text = original();
    let want = essentials(&parse(&text).records);
    let width = 120;
    let mut pasted = String::new();
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        for piece in chars.chunks(width) {
            let piece: String = piece.iter().collect();
            pasted.push_str(&format!("{piece:<width$}"));
            pasted.push('\n');
        }
    }
    let log = parse(&pasted);
    assert_eq!(essentials(&log.records), want);
    assert_eq!(log.stats.unrecognized_lines, 0, "{:?}", log.stats);
    let report = log.pasted.unwrap();
    assert!(report.shape.hard_wrap && report.shape.padded);
    assert_eq!(report.shape.wrap_width, Some(120));
    assert!(report.counts.wraps_joined > 0 && report.counts.unpadded_lines > 0);
    assert!(report.note().unwrap().contains("by a terminal"));
}

#[test]
fn prefixes_cut_by_hand_and_progress_dots() {
    // ` LOG:  …` (a prefix cut off by hand, its space left), `.FATAL:  …` (pg_ctl -w's dots
    // in front of what the server wrote next), `**…**` (Markdown emphasis typed around a line).
    let log = parse(
        "LOG:  database system is ready to accept connections\n\
         \x20LOG:  background worker \"pg_cron launcher\" (PID 1139600) was terminated by signal 11: Segmentation fault\n\
         LOG:  terminating any other active server processes\n\
         ..FATAL:  the database system is in recovery mode\n\
         **LOG:  all server processes terminated; reinitializing**\n",
    );
    assert_eq!(log.stats.unrecognized_lines, 0, "{:?}", log.stats);
    assert_eq!(log.records.len(), 5);
    for kind in ["terminated_by_signal", "in_recovery_mode", "reinitializing"] {
        assert!(log.events.contains_key(kind), "{kind}: {:?}", log.events);
    }
    assert_eq!(log.pasted.unwrap().counts.emphasis_lines, 1);
}

#[test]
fn a_psql_prompt_is_not_the_prefix_of_the_servers_error() {
    // percona/postgres#598: psql's prompt and query, then the server's ERROR as psql printed
    // it. The prompt has no digit: not a prefix a mail client broke off the next line.
    let log = parse(
        "tenants=# select * from sessions;\n\
         ERROR:  invalid page in block 0 of relation \"base/16593/17596\"\n",
    );
    assert_eq!(log.records.len(), 1, "{:?}", log.stats);
    assert_eq!(
        log.records[0].message,
        "invalid page in block 0 of relation \"base/16593/17596\""
    );
    assert_eq!(log.stats.unrecognized_lines, 1);
    // Prefixes a mail client broke off (they carry a time or a PID) are still joined back:
    // mail_line_wraps_are_joined_back.
}
