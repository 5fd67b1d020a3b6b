//! A crash loop of 10,000 incidents reads in a screenful or two: the real crash-restart cycle of
//! fixtures/incidents/pg15-sigkill-backend (a backend killed by SIGKILL, the postmaster's
//! reinitialization, crash recovery, ready again) repeated with shifted times and pids, then
//! analysed: one group, and a default text report under 300 lines (printed, for the record).

// The test prints the report's length.
#![allow(clippy::print_stdout)]

use std::fmt::Write as _;
use std::path::Path;

use jiff::civil::DateTime;
use jiff::{SignedDuration, tz::TimeZone};
use pgmortem::{DiagnoseOptions, render};

/// The real log: a server start, one crash-restart cycle.
fn real_log() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/incidents/pg15-sigkill-backend/postgresql.log");
    std::fs::read_to_string(path).unwrap()
}

/// `2026-11-21 17:17:17.797 UTC [29013] …` → its time and the rest after ` UTC `.
fn split(line: &str) -> (jiff::Timestamp, &str) {
    let stamp = &line[..23];
    let at = DateTime::strptime("%Y-%m-%d %H:%M:%S%.f", stamp)
        .unwrap()
        .to_zoned(TimeZone::UTC)
        .unwrap()
        .timestamp();
    (at, &line[28..])
}

/// The real log's start, then its crash cycle `cycles` times, `every` seconds apart; each
/// cycle's pids (all but the postmaster's) moved up by 20 per cycle.
fn crash_loop(cycles: u32, every: f64) -> String {
    let log = real_log();
    let lines: Vec<&str> = log.lines().collect();
    let crash = lines
        .iter()
        .position(|l| l.contains("was terminated by signal 9"))
        .unwrap();
    let ready = crash
        + lines[crash..]
            .iter()
            .position(|l| l.contains("ready to accept connections"))
            .unwrap();
    let (start, cycle) = (&lines[..crash], &lines[crash..=ready]);
    let postmaster = "[29013]";
    // The pids of the cycle other than the postmaster's.
    let mut pids: Vec<u32> = Vec::new();
    for l in cycle {
        for piece in l.split(['[', ']', ' ', ')']) {
            if let Ok(p) = piece.parse::<u32>()
                && (20_000..40_000).contains(&p)
                && format!("[{p}]") != postmaster
                && !pids.contains(&p)
            {
                pids.push(p);
            }
        }
    }
    assert!(
        pids.len() >= 2,
        "the victim's and the startup process's pids: {pids:?}"
    );
    let mut out = String::new();
    for l in start {
        out.push_str(l);
        out.push('\n');
    }
    for k in 0..cycles {
        let shift = SignedDuration::from_secs_f64(f64::from(k) * every);
        for l in cycle {
            let (at, rest) = split(l);
            let mut rest = rest.to_owned();
            for &p in &pids {
                rest = rest.replace(&p.to_string(), &(p + 20 * k).to_string());
            }
            let _ = writeln!(
                out,
                "{} UTC {rest}",
                (at + shift).strftime("%Y-%m-%d %H:%M:%S%.3f")
            );
        }
    }
    out
}

#[test]
fn a_crash_loop_of_ten_thousand_incidents_reads_in_under_300_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("postgresql.log"), crash_loop(10_000, 3.3)).unwrap();
    let report = pgmortem::analyze(dir.path(), &DiagnoseOptions::default()).unwrap();
    // Every cycle the log has kept is an incident of the same kind and cause: one group.
    assert!(
        report.incidents.len() >= 1_000,
        "{}",
        report.incidents.len()
    );
    assert_eq!(report.groups.len(), 1, "{:?}", report.groups);
    let g = &report.groups[0];
    assert_eq!((g.kind, g.cause), ("crash_restart", "signal_from_outside"));
    assert_eq!(g.count, report.incidents.len());
    assert_eq!(g.signal, Some(9));
    // Each crash-restart finding repeats per incident in the JSON, and folds in the text.
    let repeats = report
        .findings
        .iter()
        .filter(|f| f.id == "crash-restart")
        .count();
    assert_eq!(repeats, report.incidents.len());
    assert!(
        report
            .findings
            .iter()
            .filter(|f| f.id == "crash-restart")
            .all(|f| f.group == Some(0))
    );
    let text = render::text(&report);
    let lines = text.lines().count();
    assert!(lines < 300, "{lines} lines:\n{text}");
    // The group in a sentence under the headline: what, how, how often (the median gap: the
    // hole between the first and the latest cycles the log kept does not stretch it).
    assert!(
        text.lines().take(4).any(|l| l.contains("crash-restarts")
            && l.contains("of server processes by SIGKILL")
            && l.contains("every 3.3 s")
            && l.contains("the worst outage 2.859 s")),
        "{text}"
    );
    let folded: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("[crash-restart]"))
        .collect();
    assert_eq!(folded.len(), 1, "{text}");
    // Markdown folds the same way.
    let md = render::markdown(&report);
    assert!(md.lines().count() < 300, "{} lines", md.lines().count());
    // The first and the worst are shown in full, and only they.
    assert_eq!(
        text.matches("\nIncident ").count(),
        if g.worst == g.first { 1 } else { 2 }
    );
    println!(
        "{lines} lines of text for {} incidents",
        report.incidents.len()
    );
}

#[test]
fn the_generated_loop_repeats_the_real_cycle() {
    let log = crash_loop(3, 3.3);
    assert_eq!(log.matches("was terminated by signal 9").count(), 3);
    assert_eq!(log.matches("ready to accept connections").count(), 4);
    // Times move on and pids differ from cycle to cycle.
    assert!(
        log.contains("(PID 29082)") && log.contains("(PID 29102)") && log.contains("(PID 29122)")
    );
    assert!(
        log.contains("17:17:21.097 UTC [29013] LOG:  server process (PID 29102)"),
        "{log}"
    );
}
