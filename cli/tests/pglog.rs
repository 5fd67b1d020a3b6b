//! `pgmortem parse pglog` end to end on the real PostgreSQL log fixtures.

use std::path::{Path, PathBuf};

mod common;
use common::{pgmortem, stdout_ok};
use predicates::prelude::*;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    common::fixture(&format!("formats/pglog/{name}"))
}

fn stats(args: &[&str]) -> Value {
    let stdout = stdout_ok(pgmortem().args(["parse", "pglog", "--stats"]).args(args));
    serde_json::from_slice(&stdout).unwrap()
}

#[test]
fn the_three_destinations_of_one_run_give_the_same_events() {
    let mut seen = Vec::new();
    for (file, format) in [
        ("pg15-events.log", "stderr"),
        ("pg15-events.csv", "csv"),
        ("pg15-events.json", "json"),
    ] {
        let s = stats(&[fixture(file).to_str().unwrap()]);
        assert_eq!(s["format"], format, "{file}");
        assert_eq!(s["unrecognized_lines"], 0, "{file}: {s}");
        let events = &s["events"];
        for kind in [
            "out_of_memory",
            "too_many_clients",
            "reserved_connection_slots",
            "idle_in_transaction_timeout",
            "could_not_extend_file",
            "invalid_page",
            "terminated_by_signal",
        ] {
            assert_eq!(events[kind], 1, "{file}: {kind} in {events}");
        }
        assert_eq!(events["statement_canceled"], 3, "{file}");
        assert_eq!(events["shared_memory_resize_failed"], 3, "{file}");
        assert!(events["temp_file"].as_u64().unwrap() >= 5, "{file}");
        seen.push((s["records"].clone(), events.clone()));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:?}");
    // Only stderr carries the MemoryContextStats dump.
    let s = stats(&[fixture("pg15-events.log").to_str().unwrap()]);
    assert!(s["memory_context_lines"].as_u64().unwrap() > 50);
    assert!(s["continuation_lines"].as_u64().unwrap() > 0);
}

#[test]
fn records_are_json_lines_with_their_event() {
    let output = pgmortem()
        .args(["parse", "pglog"])
        .arg(fixture("pg15-events.json"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let records: Vec<Value> = output
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let oom = records
        .iter()
        .find(|r| r["event"]["kind"] == "out_of_memory")
        .unwrap();
    assert_eq!(oom["event"]["request_bytes"], 1000000004u64);
    assert_eq!(oom["event"]["memory_context"], "MessageContext");
    assert_eq!(oom["severity"], "ERROR");
}

#[test]
fn standard_input_is_read_too() {
    let bytes = std::fs::read(fixture("pg15-backend-sigkill.log")).unwrap();
    let from_file = stats(&[fixture("pg15-backend-sigkill.log").to_str().unwrap()]);
    let output = pgmortem()
        .args(["parse", "pglog", "--stats", "-"])
        .write_stdin(bytes)
        .output()
        .unwrap();
    let from_stdin: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(from_file, from_stdin);
}

#[test]
fn stamps_that_are_no_time_are_counted_in_the_stats() {
    // A month 13 and an hour 99 (hand-written edge case): the record has no time, the stats
    // say which stamp; a log without such stamps has no `unreadable_stamps` at all.
    let output = pgmortem()
        .args(["parse", "pglog", "--stats", "-"])
        .write_stdin(
            "2026-11-21 17:15:11.884 UTC [100] LOG:  database system is ready to accept connections\n\
             2026-13-45 99:99:99.000 UTC [200] LOG:  server process (PID 300) was terminated by signal 9: Killed\n",
        )
        .output()
        .unwrap();
    let counted: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        counted["unreadable_stamps"],
        serde_json::json!({"count": 1, "examples": [[2, "2026-13-45 99:99:99.000 UTC"]]})
    );
    let clean = stats(&[fixture("pg15-backend-sigkill.log").to_str().unwrap()]);
    assert!(clean.get("unreadable_stamps").is_none());
}

#[test]
fn a_prefix_that_fits_nothing_is_a_clear_error() {
    pgmortem()
        .args(["parse", "pglog", "--prefix", "%t <%p> "])
        .arg(fixture("pg15-backend-sigkill.log"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("\"%t <%p> \"")
                .and(predicate::str::contains("line 1"))
                .and(predicate::str::contains("starting PostgreSQL 15.18")),
        );
}

#[test]
fn a_missing_file_is_an_error() {
    pgmortem()
        .args(["parse", "pglog", "/nonexistent/pg.log"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("cannot read /nonexistent/pg.log"));
}

#[test]
fn wrapped_forms_are_sniffed_and_selectable_by_format() {
    for (file, format) in [
        ("pg15-syslog-rfc5424.syslog", "syslog5424"),
        ("pg15-journal-short.log", "journal"),
        ("pg15-journal-short-iso.log", "journal"),
        ("pg15-journal-short-precise.log", "journal"),
        ("pg15-journal.json", "journal_json"),
        ("pg15-journal-syslog-short.log", "journal"),
        ("pg15-journal-syslog.json", "journal_json"),
        ("enveloped-heroku-pg15.log", "heroku"),
        ("enveloped-heroku-pg15-new.log", "heroku"),
        ("enveloped-cloudsql-pg15.json", "cloudsql"),
        ("enveloped-cloudsql-pg15-array.json", "cloudsql"),
        ("enveloped-cnpg-pg15.json", "cnpg"),
    ] {
        let path = fixture(file);
        let sniffed = stats(&[path.to_str().unwrap()]);
        let given = stats(&[path.to_str().unwrap(), "--format", format]);
        assert_eq!(sniffed, given, "{file}");
        assert_eq!(given["format"], format, "{file}");
        assert_eq!(given["unrecognized_lines"], 0, "{file}: {given}");
        let events = &given["events"];
        for kind in [
            "terminated_by_signal",
            "terminating_other_processes",
            "reinitializing",
            "redo_start",
            "redo_done",
        ] {
            assert_eq!(events[kind], 1, "{file}: {kind} in {events}");
        }
        assert_eq!(events["ready"], 2, "{file}");
    }
    // The journal's four views of one run agree record for record; its one line of another
    // program is counted, not parsed.
    let short = stats(&[fixture("pg15-journal-short.log").to_str().unwrap()]);
    for file in [
        "pg15-journal-short-iso.log",
        "pg15-journal-short-precise.log",
        "pg15-journal.json",
    ] {
        let s = stats(&[fixture(file).to_str().unwrap()]);
        assert_eq!(
            (&s["records"], &s["events"], &s["other_program_lines"]),
            (
                &short["records"],
                &short["events"],
                &short["other_program_lines"]
            ),
            "{file}"
        );
    }
    assert_eq!(short["other_program_lines"], 1);
    // RDS is stderr with its own prefix, picked without being told.
    let rds = stats(&[fixture("pg15-rds-sigkill.log").to_str().unwrap()]);
    assert_eq!(
        (&rds["format"], &rds["prefix"]),
        (&Value::from("stderr"), &Value::from("%t:%r:%u@%d:[%p]:"))
    );
    // A wrapped format that does not fit the file: every line is counted, nothing parsed.
    let wrong = stats(&[
        fixture("pg15-backend-sigkill.log").to_str().unwrap(),
        "--format",
        "heroku",
    ]);
    assert_eq!(wrong["records"], 0);
    assert_eq!(wrong["unrecognized_lines"], wrong["lines"]);
}

/// `args` on `file`, standard output.
fn run(file: &Path, args: &[&str]) -> Vec<u8> {
    stdout_ok(pgmortem().args(["parse", "pglog"]).arg(file).args(args))
}

#[test]
fn two_threads_print_what_one_thread_prints() {
    // Each format's fixtures, several times over, cut into small blocks and chunks so that
    // many records, DETAIL and TAB lines and memory-context dumps cross a cut.
    let dir = tempfile::tempdir().unwrap();
    for (ext, names) in [
        (
            "log",
            &[
                "pg15-events.log",
                "pg15-backend-sigsegv.log",
                "pg13-parallel-worker-sigkill.log",
                "edge-crlf-badbytes-truncated.log",
            ][..],
        ),
        ("csv", &["pg15-events.csv", "edge-csv-broken-quote.csv"][..]),
        (
            "json",
            &["pg15-events.json", "edge-json-bad-lines.json"][..],
        ),
    ] {
        let mut log = Vec::new();
        for _ in 0..4 {
            for name in names {
                log.extend(std::fs::read(fixture(name)).unwrap());
                if !log.ends_with(b"\n") {
                    log.push(b'\n');
                }
            }
        }
        let file = dir.path().join(format!("big.{ext}"));
        std::fs::write(&file, &log).unwrap();
        for stats in [&["--stats"][..], &[][..]] {
            let one = run(&file, &[stats, &["--threads", "1"]].concat());
            assert!(one.len() > 1000, "{ext}");
            for block in ["20000", "100000"] {
                let two = run(
                    &file,
                    &[stats, &["--threads", "2", "--block-bytes", block]].concat(),
                );
                assert!(
                    one == two,
                    "{ext} {stats:?} block {block}:\n{}\nvs\n{}",
                    String::from_utf8_lossy(&one[..one.len().min(2000)]),
                    String::from_utf8_lossy(&two[..two.len().min(2000)])
                );
            }
        }
    }
}

#[test]
fn over_long_lines_are_cut_the_same_way_with_two_threads() {
    // A 3 MiB record line, a 5 MiB line of nothing, and a 2 MiB last line without a newline:
    // each is cut at the 1 MiB line limit and counted, whether it sits inside a block or
    // fills one (block of 1.5 MB: the rest of the line is skipped up to its newline).
    let events = std::fs::read(fixture("pg15-events.log")).unwrap();
    let mut log = events.clone();
    log.extend(b"2026-11-21 17:57:13.106 UTC [1] LOG:  ");
    log.extend(std::iter::repeat_n(b'x', 3 << 20));
    log.push(b'\n');
    log.extend(&events);
    log.extend(std::iter::repeat_n(b'y', 5 << 20));
    log.push(b'\n');
    log.extend(&events);
    log.extend(std::iter::repeat_n(b'z', 2 << 20));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.log");
    std::fs::write(&file, &log).unwrap();
    let one = run(&file, &["--stats", "--threads", "1"]);
    let counts: Value = serde_json::from_slice(&one).unwrap();
    assert_eq!(counts["oversized_lines"], 3, "{counts}");
    for block in ["1500000", "4000000"] {
        let two = run(
            &file,
            &["--stats", "--threads", "2", "--block-bytes", block],
        );
        assert_eq!(
            String::from_utf8_lossy(&one),
            String::from_utf8_lossy(&two),
            "block {block}"
        );
    }
}

/// A real journal export holding a kernel OOM kill and the PostgreSQL crash it caused
/// (fixtures/formats/journal): `parse pglog` and `parse kernel` each read their own lines out
/// of it, and `analyze` reads it as one system log and ties the kill to the crash.
#[test]
fn a_journal_export_with_an_oom_kill_and_the_crash_it_caused() {
    let journal = common::fixture("formats/journal/pg15-oom-journal.export");
    let journal = journal.to_str().unwrap();
    let pg = stats(&[journal]);
    assert_eq!(
        (&pg["wrapper"], &pg["format"], &pg["unrecognized_lines"]),
        (
            &Value::from("journal_export"),
            &Value::from("stderr"),
            &Value::from(0)
        ),
        "{pg}"
    );
    assert_eq!(pg["events"]["terminated_by_signal"], 1, "{pg}");
    let forced = stats(&["--format", "journal-export", journal]);
    assert_eq!(forced["records"], pg["records"]);
    let kernel: Value = serde_json::from_slice(&stdout_ok(
        pgmortem().args(["parse", "kernel", "--stats", journal]),
    ))
    .unwrap();
    assert_eq!(
        (&kernel["records"], &kernel["unrecognized_lines"]),
        (&Value::from(1), &Value::from(0)),
        "{kernel}"
    );
    let report: Value = serde_json::from_slice(&stdout_ok(
        pgmortem().args(["analyze", "--format", "json", journal]),
    ))
    .unwrap();
    assert_eq!(
        report["sources"][0]["kind"], "system_log",
        "{}",
        report["sources"]
    );
    let incidents = report["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1, "{incidents:?}");
    let incident = &incidents[0];
    assert_eq!(incident["cause"], "oom_killer");
    assert_eq!(
        incident["kernel_kill"]["pid"], incident["postgres_crash"]["pid"],
        "{incident}"
    );
}

/// The cloud services' exports are sniffed and read whole: CloudWatch's JSON and its console's
/// CSV (a real one), Azure's Log Analytics CSV, and `--format` forces each.
#[test]
fn cloud_exports_are_sniffed_and_read_whole() {
    for (file, wrapper, format) in [
        (
            "formats/pglog/enveloped-cloudwatch-filter-log-events-pg15.json",
            "cloudwatch",
            "stderr",
        ),
        (
            "wild/pg-cron-340-aurora-cloudwatch-csv/log-events-viewer-result.csv",
            "cloudwatch",
            "stderr",
        ),
        (
            "formats/pglog/enveloped-azure-diagnostics-pg15.csv",
            "azure",
            "csv",
        ),
    ] {
        let path = common::fixture(file);
        let path = path.to_str().unwrap();
        let sniffed = stats(&[path]);
        assert_eq!(
            (&sniffed["wrapper"], &sniffed["format"]),
            (&Value::from(wrapper), &Value::from(format)),
            "{file}: {sniffed}"
        );
        assert_eq!(sniffed["unrecognized_lines"], 0, "{file}: {sniffed}");
        let forced = stats(&["--format", wrapper, path]);
        assert_eq!(forced["records"], sniffed["records"], "{file}");
    }
}

/// An Amazon RDS log file as `aws rds download-db-log-file-portion` saves it
/// (`postgresql.log.YYYY-MM-DD-HH`) is a PostgreSQL log whose lines fall in the hour its name
/// says.
#[test]
fn an_rds_log_file_is_read_in_the_hour_of_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("postgresql.log.2026-11-21-19");
    std::fs::copy(common::fixture("formats/pglog/pg15-rds-sigkill.log"), &file).unwrap();
    let report: Value = serde_json::from_slice(&stdout_ok(pgmortem().args([
        "analyze",
        "--format",
        "json",
        dir.path().to_str().unwrap(),
    ])))
    .unwrap();
    let source = &report["sources"][0];
    assert_eq!(
        (&source["kind"], &source["unrecognized_lines"]),
        (&Value::from("postgres_log"), &Value::from(0)),
        "{source}"
    );
    assert_eq!(source["log_line_prefix"], "%t:%r:%u@%d:[%p]:");
    let times: Vec<&str> = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["at"].as_str())
        .collect();
    assert!(!times.is_empty());
    assert!(
        times.iter().all(|t| t.starts_with("2026-11-21T19:")),
        "{times:?}"
    );
}

/// A real /var/log/messages written by rsyslogd (fixtures/formats/journal/pg15-oom-messages.log:
/// `kernel:` lines of a memcg OOM kill and `postgres[PID]:` lines of the crash it caused):
/// `analyze` reads it as one system log, gives the kernel's syslog stamps (no year) the year of
/// the server's lines, and ties the kill to the crash by PID and time.
#[test]
fn a_messages_file_with_an_oom_kill_and_the_crash_it_caused() {
    let messages = common::fixture("formats/journal/pg15-oom-messages.log");
    let messages = messages.to_str().unwrap();
    let pg = stats(&[messages]);
    assert_eq!(
        (&pg["format"], &pg["unrecognized_lines"]),
        (&Value::from("syslog"), &Value::from(0)),
        "{pg}"
    );
    assert!(pg["other_program_lines"].as_u64() > Some(50), "{pg}");
    let report: Value = serde_json::from_slice(&stdout_ok(
        pgmortem().args(["analyze", "--format", "json", messages]),
    ))
    .unwrap();
    assert_eq!(report["sources"][0]["kind"], "system_log");
    let incidents = report["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 1, "{incidents:?}");
    let incident = &incidents[0];
    assert_eq!(incident["cause"], "oom_killer");
    assert_eq!(incident["kernel_kill"]["pid"], 14217);
    assert_eq!(incident["postgres_crash"]["pid"], 14217);
    assert_eq!(incident["matched_by"], "pid_and_time", "{incident}");
}

/// A container log whose runtime stamps are an hour after PostgreSQL's own (a runtime clock
/// set wrongly, built from the real Docker fixture): the report keeps both times on each event
/// (`wrapper_at`), places events by PostgreSQL's, and says so once at its top; with the
/// runtime's true stamps (180 µs later) there is neither a caveat nor a second time.
#[test]
fn a_wrapper_time_an_hour_off_is_kept_beside_the_own_and_said_once() {
    let real = std::fs::read_to_string(common::fixture(
        "formats/pglog/enveloped-docker-json-pg15-backend-sigkill.log",
    ))
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let analyze = |name: &str, text: &str, format: &str| {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        stdout_ok(pgmortem().args(["analyze", "--format", format, file.to_str().unwrap()]))
    };
    let report: Value = serde_json::from_slice(&analyze("real.log", &real, "json")).unwrap();
    let caveats = report["caveats"].as_array().unwrap();
    assert!(
        caveats
            .iter()
            .all(|c| c["kind"] != "wrapper_time_disagrees"),
        "{caveats:?}"
    );
    let crash = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "terminated_by_signal")
        .unwrap();
    assert_eq!(crash["at"], "2026-11-21T17:15:15.868Z", "{crash}");
    assert!(crash.get("wrapper_at").is_none(), "{crash}");

    let shifted = real.replace("\"time\":\"2026-11-21T17:", "\"time\":\"2026-11-21T18:");
    let report: Value = serde_json::from_slice(&analyze("shifted.log", &shifted, "json")).unwrap();
    let disagree: Vec<&Value> = report["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "wrapper_time_disagrees")
        .collect();
    assert_eq!(disagree.len(), 1, "{:?}", report["caveats"]);
    let text = disagree[0]["text"].as_str().unwrap();
    assert!(text.contains("by up to 60 min"), "{text}");
    assert!(
        text.contains("PostgreSQL's time before the wrapper's"),
        "{text}"
    );
    let crash = report["timeline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "terminated_by_signal")
        .unwrap();
    assert_eq!(crash["at"], "2026-11-21T17:15:15.868Z", "{crash}");
    assert_eq!(crash["wrapper_at"], "2026-11-21T18:15:15.86818Z", "{crash}");
    let incident = &report["incidents"][0];
    assert_eq!(incident["postgres_crash"]["pid"], 17167, "{incident}");
    let words = String::from_utf8(analyze("shifted-text.log", &shifted, "text")).unwrap();
    assert_eq!(
        words.matches("wrapper (the container").count(),
        1,
        "{words}"
    );
}
