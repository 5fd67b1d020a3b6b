//! A real kernel log pasted into a ticket, a mail or a Markdown issue: quoting, code-block
//! indentation, fences, CRLF and mail line wraps are undone, the OOM report is the one of the
//! log itself, and what was undone is counted.

use pgmortem_parse::kernel::{self, KernelEvent, KernelLog, KernelOptions};

/// The dmesg of a real memcg OOM kill of a PostgreSQL backend.
fn original() -> String {
    let path = format!(
        "{}/../../fixtures/incidents/pg15-memcg-oom-sort/dmesg.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path).unwrap()
}

fn parse(text: &str) -> KernelLog {
    kernel::parse(text.as_bytes(), &KernelOptions::default())
}

/// What a paste must not change: the report's victim, trigger, cgroup, tasks and Mem-Info.
fn essentials(log: &KernelLog) -> Vec<String> {
    log.records
        .iter()
        .map(|r| match &r.event {
            KernelEvent::OomReport(o) => format!(
                "{:?} {:?} {:?} {:?} tasks={} mem_info={:?} {:?}",
                r.time.monotonic_us,
                o.trigger,
                o.victim.as_ref().map(|v| (v.pid, &v.comm, v.anon_rss_kb)),
                o.memcg.as_ref().map(|m| (&m.path, &m.memory)),
                o.tasks.len(),
                o.mem_info,
                o.constraint
            ),
            other => format!("{other:?}"),
        })
        .collect()
}

fn each_line(text: &str, f: impl Fn(&str) -> String) -> String {
    text.lines().map(|l| f(l) + "\n").collect()
}

#[test]
fn quoted_indented_fenced_and_crlf() {
    let text = original();
    let want = essentials(&parse(&text));
    assert_eq!(want.len(), 1);
    let quoted = each_line(&text, |l| format!("> {l}"));
    let block = format!(
        "The kernel said:\n\n```\n{}```\n",
        each_line(&text, |l| format!("    {l}"))
    );
    let crlf = text.replace('\n', "\r\n");
    for (what, pasted) in [("quoted", quoted), ("code block", block), ("crlf", crlf)] {
        let log = parse(&pasted);
        assert_eq!(essentials(&log), want, "{what}");
        let report = log.pasted.unwrap_or_else(|| panic!("{what}: nothing said"));
        assert!(report.note().is_some(), "{what}");
    }
}

#[test]
fn bare_messages_without_times_give_the_same_report() {
    // `dmesg --notime`, or the times cut off by the person pasting.
    let text = original();
    let bare = each_line(&text, |l| {
        l.split_once("] ")
            .map_or(l.to_owned(), |(_, m)| m.to_owned())
    });
    let log = parse(&bare);
    let r: Vec<_> = log
        .records
        .iter()
        .filter_map(|r| match &r.event {
            KernelEvent::OomReport(o) => Some(o),
            _ => None,
        })
        .collect();
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].victim.as_ref().unwrap().pid, 24718);
    assert_eq!(r[0].interleaved_lines, 0);
    assert!(kernel::sniff(bare.as_bytes()).unwrap() >= 0.5);
}

#[test]
fn mail_wraps_of_a_dmesg_are_joined_back() {
    let text = original();
    let want = essentials(&parse(&text));
    // A mail client's greedy wrap at 72 columns, breaking at spaces.
    let mut wrapped = String::new();
    for line in text.lines() {
        let mut rest = line;
        while rest.len() > 72 {
            let cut = rest[..72].rfind(' ').filter(|&i| i > 20).unwrap_or(72);
            wrapped.push_str(&rest[..cut]);
            wrapped.push('\n');
            rest = rest[cut..].strip_prefix(' ').unwrap_or(&rest[cut..]);
        }
        wrapped.push_str(rest);
        wrapped.push('\n');
    }
    let log = parse(&wrapped);
    assert_eq!(log.stats.unrecognized_lines, 0, "{:?}", log.stats);
    let report = log.pasted.unwrap();
    assert!(report.counts.wraps_joined > 10);
    assert_eq!(essentials(&log), want);
}
