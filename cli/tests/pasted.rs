//! `pgmortem analyze` on evidence pasted into a ticket: a kernel log without times in a
//! Markdown comment and a PostgreSQL log quoted and wrapped in a mail
//! (fixtures/incidents/pg15-pasted-memcg-oom, a real incident pasted by
//! fixtures/record/paste-ticket.py), and the same logs with every time cut off.

mod common;
use common::{fixture, pgmortem, stdout_ok};

const PASTED: &str = "incidents/pg15-pasted-memcg-oom";

fn report(path: &std::path::Path) -> serde_json::Value {
    serde_json::from_slice(&stdout_ok(
        pgmortem().args(["analyze", "--format", "json"]).arg(path),
    ))
    .unwrap()
}

fn note_of<'a>(report: &'a serde_json::Value, path: &str) -> &'a str {
    report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["path"] == path)
        .and_then(|s| s["note"].as_str())
        .unwrap_or_else(|| panic!("no note for {path}"))
}

#[test]
fn a_pasted_kernel_log_and_postgresql_log_give_one_incident() {
    let report = report(&fixture(PASTED));
    let incidents = report["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1, "{incidents:#?}");
    let incident = &incidents[0];
    assert_eq!(incident["kind"], "oom_kill");
    assert_eq!(incident["cause"], "oom_killer");
    // The kernel's victim and the backend PostgreSQL lost, tied by PID: the kernel lines
    // carry no time.
    let victim = &incident["kernel_kill"]["pid"];
    assert_eq!(&incident["postgres_crash"]["pid"], victim);
    assert_eq!(incident["matched_by"], "pid_only");
    assert!(incident["outage_seconds"].as_f64().unwrap() > 1.0);
    let kinds: Vec<&str> = report["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert!(
        kinds.contains(&"kernel_log") && kinds.contains(&"postgres_log"),
        "{kinds:?}"
    );

    let kernel = note_of(&report, "kernel-from-issue.txt");
    assert!(kernel.contains("indented by 4 spaces"), "{kernel}");
    assert!(kernel.contains("no line carries a time"), "{kernel}");
    let pg = note_of(&report, "postgresql-from-mail.txt");
    for said in ["quoted with `>`", "wrapped at 72 columns", "[snip]", "CRLF"] {
        assert!(pg.contains(said), "{said}: {pg}");
    }
    // The kernel's event keeps its place after the timed ones.
    let timeline = report["timeline"].as_array().unwrap();
    let last = timeline.last().unwrap();
    assert_eq!(last["origin"], "kernel");
    assert!(last["at"].is_null());
}

#[test]
fn the_text_report_says_how_the_kill_was_tied() {
    let text =
        String::from_utf8(stdout_ok(pgmortem().arg("analyze").arg(fixture(PASTED)))).unwrap();
    assert!(
        text.contains("Incident 1: oom_kill (cause oom_killer)"),
        "{text}"
    );
    assert!(text.contains("tied by PID alone"), "{text}");
    assert!(text.contains("[oom-kill-crash-restart]"), "{text}");
}

#[test]
fn logs_with_no_time_at_all_still_give_the_incident_in_order() {
    // The PostgreSQL log pasted with its prefix cut off (`LOG:  …`), the kernel's without
    // times: no event has a time, the crash cycle is still found and tied to the kill.
    let dir = tempfile::tempdir().unwrap();
    let log = std::fs::read_to_string(fixture("formats/pasted/pg15-memcg-oom-custom.log")).unwrap();
    let bare: String = log
        .lines()
        .map(|l| {
            let word = [
                "LOG:  ",
                "FATAL:  ",
                "ERROR:  ",
                "DETAIL:  ",
                "HINT:  ",
                "STATEMENT:  ",
            ]
            .iter()
            .filter_map(|w| l.find(w))
            .min();
            match word {
                Some(at) if !l.starts_with('\t') => format!("> {}\n", &l[at..]),
                _ => format!("> {l}\n"),
            }
        })
        .collect();
    std::fs::write(dir.path().join("postgres.txt"), bare).unwrap();
    std::fs::copy(
        fixture("formats/pasted/pg15-memcg-oom-notime.dmesg"),
        dir.path().join("kernel.txt"),
    )
    .unwrap();
    let report = report(dir.path());
    let incidents = report["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1, "{incidents:#?}");
    assert_eq!(incidents[0]["kind"], "oom_kill");
    assert_eq!(incidents[0]["matched_by"], "pid_only");
    assert!(incidents[0]["outage_seconds"].is_null());
    let notes = incidents[0]["notes"].to_string();
    assert!(notes.contains("carry no time"), "{notes}");
    let pg = note_of(&report, "postgres.txt");
    assert!(pg.contains("its lines have no log_line_prefix"), "{pg}");
    assert!(
        report["timeline"]
            .as_array()
            .unwrap()
            .iter()
            .all(|e| e["at"].is_null())
    );
    // The crash cycle in the log's order.
    let kinds: Vec<&str> = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["origin"] == "postgres")
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    let at = |k: &str| kinds.iter().position(|x| *x == k).unwrap();
    assert!(at("terminated_by_signal") < at("reinitializing"));
    assert!(at("reinitializing") < at("redo_start"));
}
