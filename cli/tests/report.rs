//! `pgmortem analyze` in the formats for people: Markdown for a ticket, text on a terminal.

mod common;
use common::{fixture, pgmortem, stdout_ok};

const WORK_MEM: &str = "incidents/pg15-memcg-oom-work-mem/pgmortem-dbhost-20261124T053616Z.tar.gz";

#[test]
fn analyze_markdown_has_the_incident_table_and_a_section_per_finding() {
    let md = String::from_utf8(stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "markdown", "--sources"])
            .arg(fixture(WORK_MEM)),
    ))
    .unwrap();
    assert!(md.starts_with("# pgmortem report\n"), "{md}");
    assert!(
        md.contains("| 1 | `oom_kill` | `oom_killer` | 32691 | 9 | 2026-11-24T05:29:29.924706954Z | 0.439 s |"),
        "{md}"
    );
    assert!(
        md.contains("### 1. CRITICAL `oom-kill-crash-restart`"),
        "{md}"
    );
    assert!(
        md.contains("- `postgres/pg_settings.txt:352` work_mem = 1.0 GiB"),
        "{md}"
    );
    assert!(md.contains("```sql\nSELECT g, md5(g::text)"), "{md}");
    assert!(
        md.contains("| `postgres/server.log` | `postgres_log` |"),
        "{md}"
    );
}

#[test]
fn analyze_markdown_goes_to_the_output_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.md");
    pgmortem()
        .args(["analyze", "--format", "markdown", "-o"])
        .arg(&path)
        .arg(fixture(WORK_MEM))
        .assert()
        .success()
        .stdout("");
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(md.starts_with("# pgmortem report\n"), "{md}");
}

/// Runs `analyze` on the work_mem incident with `args` and `env`, and returns standard output.
fn analyze_text(args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = pgmortem();
    command
        .env_remove("NO_COLOR")
        .env_remove("CLICOLOR")
        .env_remove("CLICOLOR_FORCE")
        .arg("analyze")
        .args(args)
        .arg(fixture(WORK_MEM));
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    assert!(output.stderr.is_empty(), "stderr: {output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn text_is_plain_off_a_terminal_and_coloured_when_asked() {
    let plain = analyze_text(&[], &[]);
    assert!(!plain.contains('\u{1b}'));
    assert_eq!(analyze_text(&["--color", "never"], &[]), plain);
    assert_eq!(analyze_text(&["--color", "auto", "--quiet"], &[]), plain);
    let coloured = analyze_text(&["--color", "always"], &[]);
    assert!(
        coloured.contains("\u{1b}[1m\u{1b}[31mCRITICAL\u{1b}[0m [oom-kill-crash-restart]"),
        "{coloured}"
    );
    assert!(coloured.contains("\u{1b}[33mWARNING\u{1b}[0m  [postmaster-oom-unprotected]"));
    assert!(coloured.contains("\u{1b}[36mINFO\u{1b}[0m     [dirty-writeback-bytes]"));
    assert!(coloured.contains("\u{1b}[1mFindings\u{1b}[0m\n"));
    // Without its escape codes the coloured text is the plain text.
    let stripped = coloured
        .replace("\u{1b}[1m", "")
        .replace("\u{1b}[31m", "")
        .replace("\u{1b}[33m", "")
        .replace("\u{1b}[36m", "")
        .replace("\u{1b}[0m", "");
    assert_eq!(stripped, plain);
}

#[test]
fn no_color_and_clicolor_force_are_honoured() {
    let plain = analyze_text(&[], &[]);
    // CLICOLOR_FORCE colours even off a terminal; NO_COLOR (any non-empty value) wins over it.
    assert!(analyze_text(&[], &[("CLICOLOR_FORCE", "1")]).contains('\u{1b}'));
    assert_eq!(
        analyze_text(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")]),
        plain
    );
    assert!(analyze_text(&[], &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "")]).contains('\u{1b}'));
    // An explicit --color always is the user's word over the environment's.
    assert!(analyze_text(&["--color", "always"], &[("NO_COLOR", "1")]).contains('\u{1b}'));
    // JSON and Markdown are never coloured.
    let md = analyze_text(&["--format", "markdown", "--color", "always"], &[]);
    assert!(!md.contains('\u{1b}'));
}

#[test]
fn a_report_written_to_a_file_is_plain_under_auto() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("report.txt");
    analyze_text(&["-o", path.to_str().unwrap()], &[("CLICOLOR_FORCE", "1")]);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        analyze_text(&[], &[])
    );
}

#[test]
fn a_bad_color_choice_is_a_usage_error() {
    pgmortem()
        .args(["analyze", "--color", "sometimes"])
        .arg(fixture(WORK_MEM))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--color"));
}

#[test]
fn control_characters_of_a_bundle_never_reach_the_terminal() {
    // A query any client controls, logged as the crashed backend's: an OSC retitle, a clear
    // screen and a carriage return. Shown as pictures in plain text too (a pager, `cat`).
    let scratch = tempfile::tempdir().unwrap();
    let log = scratch.path().join("postgresql.log");
    std::fs::write(
        &log,
        "2026-11-24 05:29:10.800 UTC [100] LOG:  server process (PID 200) was terminated by signal 9: Killed\n\
         2026-11-24 05:29:10.800 UTC [100] DETAIL:  Failed process was running: SELECT 1 \x1b]0;pwned\x07\x1b[2J\r-- end\n\
         2026-11-24 05:29:10.801 UTC [100] LOG:  all server processes terminated; reinitializing\n",
    )
    .unwrap();
    for color in ["never", "always"] {
        let out = pgmortem()
            .args(["analyze", "--color", color])
            .arg(&log)
            .output()
            .unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("SELECT 1 ␛]0;pwned␇␛[2J␍-- end"), "{text}");
        assert!(
            !text.contains("\x1b]") && !text.contains('\x07') && !text.contains('\r'),
            "{text:?}"
        );
    }
}

#[test]
fn a_cut_oom_report_keeps_what_it_has_at_a_lower_confidence() {
    // A report cut in its task table (fixtures/formats/kernel, named edge-): no victim is
    // invented, what is missing is said, and the incident is not sure.
    let out = stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "json"])
            .arg(fixture("formats/kernel/edge-truncated-mid-task-table.txt")),
    );
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let incident = &report["incidents"][0];
    assert_eq!(incident["confidence"], 0.6);
    let notes: Vec<&str> = incident["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes.contains(&"cut before its kill line: the input ended"),
        "{notes:?}"
    );
    assert!(notes.contains(&"no victim recorded"), "{notes:?}");
    assert!(incident["kernel_kill"]["pid"].is_null(), "{incident}");
    assert_eq!(incident["kernel_kill"]["trigger_pid"], 20718);
}

#[test]
fn a_path_longer_than_any_column_is_reported_in_every_format() {
    // A manifest entry with a 70,000-byte path (a text report once panicked on paths of
    // 65,536 bytes and more: "Formatting argument out of range").
    let dir = tempfile::tempdir().unwrap();
    let long = "p".repeat(70_000);
    let manifest = format!(
        r#"{{"format": "pgmortem.bundle", "format_version": 1, "files": [
            {{"path": "{long}", "kind": "meminfo", "command": "cat", "status": 1, "note": "gone"}}]}}"#
    );
    std::fs::write(dir.path().join("manifest.json"), manifest).unwrap();
    std::fs::write(
        dir.path().join("meminfo"),
        "MemTotal:       24684092 kB\nMemFree:        18423292 kB\n",
    )
    .unwrap();
    for format in ["text", "markdown", "html", "json"] {
        let out = stdout_ok(
            pgmortem()
                .args(["analyze", "--format", format])
                .arg(dir.path()),
        );
        // The path is named whole: nothing of the bundle is dropped to fit a column.
        assert!(String::from_utf8_lossy(&out).contains(&long), "{format}");
    }
}

#[test]
fn a_kernel_log_of_many_kills_keeps_the_latest_in_bounded_memory() {
    // 9,050 kill lines whose headers were lost, then 1,002 real memcg OOM reports (the first
    // of local-dmesg-raw.txt, repeated): 10,052 kills. The report keeps the latest 10,000
    // incidents, and only the last 1,000 reports keep their task tables; each limit is said.
    let sample = std::fs::read_to_string(fixture("formats/kernel/local-dmesg-raw.txt")).unwrap();
    let lines: Vec<&str> = sample.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("invoked oom-killer"))
        .unwrap();
    let end = lines
        .iter()
        .position(|l| l.contains("Killed process"))
        .unwrap();
    let mut log = String::new();
    for i in 0..9_050u32 {
        log.push_str(&format!(
            "[{}.000000] Out of memory: Killed process {} (postgres) total-vm:8811412kB, \
             anon-rss:6204112kB, file-rss:0kB, shmem-rss:1604kB, UID:113 pgtables:12888kB \
             oom_score_adj:0\n",
            1_000 + i,
            40_000 + i
        ));
    }
    log.push_str(&(lines[start..=end].join("\n") + "\n").repeat(1_002));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("kernel")).unwrap();
    std::fs::write(dir.path().join("kernel/dmesg.txt"), log).unwrap();
    let out = stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "json"])
            .arg(dir.path()),
    );
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let caveats: Vec<(&str, &str)> = report["caveats"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["kind"].as_str().unwrap(), c["text"].as_str().unwrap()))
        .collect();
    assert!(
        caveats.contains(&(
            "incidents_not_kept",
            "52 incidents before the last 10000 were counted but not kept: the report details \
             the latest ones, and the findings are about those"
        )),
        "{caveats:?}"
    );
    assert!(
        caveats.contains(&(
            "oom_details_not_kept",
            "`kernel/dmesg.txt`: 2 OOM reports keep their kill, trigger and cgroup counters but \
             not their task table, Mem-Info or cgroup stats: the last 1000 reports of a log \
             keep them, within 64 MiB"
        )),
        "{caveats:?}"
    );
    let incidents = report["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 10_000);
    assert_eq!(incidents[0]["kernel_kill"]["pid"], 40_000 + 52);
    assert_eq!(incidents[9_999]["kernel_kill"]["comm"], "memhog");
    let with_tasks = incidents
        .iter()
        .filter(|i| i["kernel_kill"]["task_count"].as_u64() > Some(0))
        .count();
    assert_eq!(with_tasks, 1_000);
}

/// A smaller `--memory-limit` keeps proportionally less of the logs, and says so: 2,000 kill
/// lines (all kept within the default budget, 1,250 within 32 MiB), and a PostgreSQL log of
/// errors whose statements are 900 KiB each (kept cut to their first 2 KiB; within 32 MiB
/// read only to 128 KiB).
#[test]
fn a_smaller_memory_limit_keeps_less_of_the_logs_and_says_so() {
    use std::fmt::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let mut kernel = String::new();
    for i in 0..2_000u32 {
        let _ = writeln!(
            kernel,
            "[{}.000000] Out of memory: Killed process {} (postgres) total-vm:8811412kB, \
             anon-rss:6204112kB, file-rss:0kB, shmem-rss:1604kB, UID:113 pgtables:12888kB \
             oom_score_adj:0",
            1_000 + i,
            40_000 + i
        );
    }
    let mut postgres = String::new();
    let statement = "x".repeat(900 << 10);
    for i in 0..20u32 {
        let _ = write!(
            postgres,
            "2026-11-20 03:00:{i:02}.000 UTC [{pid}] ERROR:  out of memory\n\
             2026-11-20 03:00:{i:02}.000 UTC [{pid}] DETAIL:  Failed on request of size 1024.\n\
             2026-11-20 03:00:{i:02}.000 UTC [{pid}] STATEMENT:  SELECT '{statement}'\n",
            pid = 5_000 + i
        );
    }
    std::fs::create_dir(dir.path().join("kernel")).unwrap();
    std::fs::write(dir.path().join("kernel/dmesg.txt"), kernel).unwrap();
    std::fs::create_dir(dir.path().join("postgres")).unwrap();
    std::fs::write(dir.path().join("postgres/postgresql.log"), postgres).unwrap();
    let report = |limit: &[&str]| -> serde_json::Value {
        let out = stdout_ok(
            pgmortem()
                .args(["analyze", "--format", "json"])
                .args(limit)
                .arg(dir.path()),
        );
        serde_json::from_slice(&out).unwrap()
    };
    let caveat = |report: &serde_json::Value, kind: &str| -> Vec<String> {
        report["caveats"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["kind"] == kind)
            .map(|c| c["text"].as_str().unwrap().to_owned())
            .collect()
    };
    let whole = report(&[]);
    assert_eq!(whole["incidents"].as_array().unwrap().len(), 2_000);
    assert!(caveat(&whole, "records_not_kept").is_empty());
    let small = report(&["--memory-limit", "32MiB"]);
    let incidents = small["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 625);
    assert_eq!(incidents[624]["kernel_kill"]["pid"], 40_000 + 1_999);
    assert_eq!(
        caveat(&small, "records_not_kept"),
        [
            "`kernel/dmesg.txt`: 750 OOM reports before the last 1250 were counted but not kept: \
          their kills are not in the incidents"
        ]
    );
    assert_eq!(
        caveat(&small, "incidents_not_kept"),
        [
            "625 incidents before the last 625 were counted but not kept: the report details the \
          latest ones, and the findings are about those"
        ]
    );
    let note = |report: &serde_json::Value| -> String {
        let log = report["sources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["path"] == "postgres/postgresql.log")
            .unwrap();
        log["note"].as_str().unwrap().to_owned()
    };
    let texts_cut = "20 texts of the records kept were longer than 2048 bytes and were cut there \
                     (a finding quotes 400 bytes of a query at most)";
    assert_eq!(note(&whole), texts_cut);
    // Within 32 MiB the lines themselves are read up to 128 KiB.
    assert_eq!(
        note(&small),
        format!(
            "20 lines were longer than 131072 bytes (or past a record's limit) and were cut \
             there: the rest of each was not read; {texts_cut}"
        )
    );
}

/// A crash loop longer than what a log keeps of a kind: 3,000 OOM kills, each followed 30 ms
/// later by PostgreSQL's `terminated by signal 9` for the same PID. The first 1,000 crashes and
/// the latest 1,000 are kept, each tied to its own kill by PID; the kills in between have no
/// crash to tie to, and none takes a later kill's crash on time alone.
#[test]
fn a_long_crash_loop_ties_its_first_and_latest_kills_each_to_its_own_crash() {
    use std::fmt::Write as _;
    let (mut kernel, mut postgres) = (String::new(), String::new());
    let boot = jiff::Timestamp::from_second(1_795_280_400).unwrap(); // 2026-11-21T17:00:00Z
    for i in 0..3_000u32 {
        let t = 100.0 + f64::from(i) * 2.0;
        let pid = 100_000 + i;
        let _ = writeln!(
            kernel,
            "[{t:12.6}] postgres invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0\n\
             [{:12.6}] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/db,task_memcg=/db,task=postgres,pid={pid},uid=1002\n\
             [{:12.6}] Memory cgroup out of memory: Killed process {pid} (postgres) total-vm:1000kB, anon-rss:500kB, file-rss:0kB, shmem-rss:0kB, UID:1002 pgtables:100kB oom_score_adj:0",
            t + 0.0001,
            t + 0.0002
        );
        let at = boot + jiff::SignedDuration::from_secs_f64(t + 0.03);
        let _ = writeln!(
            postgres,
            "{} UTC [999] LOG:  server process (PID {pid}) was terminated by signal 9: Killed",
            at.strftime("%Y-%m-%d %H:%M:%S%.3f")
        );
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("kernel")).unwrap();
    std::fs::create_dir(dir.path().join("postgres")).unwrap();
    std::fs::write(dir.path().join("kernel/dmesg.txt"), kernel).unwrap();
    std::fs::write(dir.path().join("postgres/postgresql.log"), postgres).unwrap();
    let out = stdout_ok(
        pgmortem()
            .args([
                "analyze",
                "--format",
                "json",
                "--boot-time",
                "2026-11-21T17:00:00Z",
            ])
            .arg(dir.path()),
    );
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let incidents = report["incidents"].as_array().unwrap();
    assert_eq!(incidents.len(), 3_000);
    let tied: Vec<Option<(u64, u64)>> = incidents
        .iter()
        .map(|i| {
            let crash = i["postgres_crash"].as_object()?;
            Some((
                i["kernel_kill"]["pid"].as_u64().unwrap(),
                crash["pid"].as_u64().unwrap(),
            ))
        })
        .collect();
    for (n, tie) in tied.iter().enumerate() {
        let kept = !(1_000..2_000).contains(&n);
        match tie {
            Some((kill, crash)) => assert!(kept && kill == crash, "incident {n}: {tie:?}"),
            None => assert!(!kept, "incident {n} not tied"),
        }
    }
    let caveats = report["caveats"].as_array().unwrap();
    assert!(
        caveats.iter().any(|c| c["kind"] == "records_not_kept"
            && c["text"].as_str().unwrap().contains("1000 records")),
        "{caveats:?}"
    );
}

/// `pgmortem analyze ARGS WORK_MEM` as text.
fn text_of(args: &[&str]) -> String {
    String::from_utf8(stdout_ok(
        pgmortem().arg("analyze").args(args).arg(fixture(WORK_MEM)),
    ))
    .unwrap()
}

#[test]
fn the_text_report_gives_the_verdict_first_and_folds_the_inventories() {
    let text = text_of(&[]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "pgmortem: 1 incident, 6 findings (3 critical, 1 warning, 2 info) in 82 sources"
    );
    assert!(
        lines[1].starts_with("  OOM kill and crash-restart of server process 32691 by SIGKILL"),
        "{text}"
    );
    assert_eq!(lines[3], "Findings");
    assert!(
        lines[4].starts_with("  CRITICAL [oom-kill-crash-restart]"),
        "{text}"
    );
    // Each finding: its first evidence, the rest counted.
    assert!(
        text.contains("Evidence: kernel/dmesg.txt:2 (kernel OOM-killer report), and 2 more: -v"),
        "{text}"
    );
    // The rules that could not run and the sources in a line each; a source with a problem
    // (here a file the collector could not get) still named.
    assert!(
        text.contains("\n8 rules could not run for want of 3 inputs (-v lists them)\n"),
        "{text}"
    );
    assert!(
        text.contains("\n82 sources read, 1 with another problem (--sources lists them)\n  identity/dmi.txt (unreadable, 0 lines: not in the bundle: "),
        "{text}"
    );
    assert!(!text.contains("memory/meminfo.txt "), "{text}");
    assert!(lines.len() < 80, "{} lines", lines.len());
}

#[test]
fn verbose_and_sources_show_what_the_short_report_folds() {
    let verbose = text_of(&["-v"]);
    assert!(verbose.contains("\nNot evaluated (the bundle lacks what they read)\n  without temp_file_logging: temp-file-spill\n"), "{verbose}");
    assert!(verbose.contains("\nSources\n  path "), "{verbose}");
    assert!(
        verbose.contains("Evidence:\n             kernel/dmesg.txt:2 (kernel OOM-killer report)\n"),
        "{verbose}"
    );
    let sources = text_of(&["--sources"]);
    assert!(sources.contains("\nSources\n  path "), "{sources}");
    assert!(sources.contains("8 rules could not run"), "{sources}");
    assert!(text_of(&[]).len() < verbose.len());
    let md = String::from_utf8(stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "markdown", "--verbose"])
            .arg(fixture(WORK_MEM)),
    ))
    .unwrap();
    assert!(
        md.contains("| path | kind | lines | records | unrecognized | note |"),
        "{md}"
    );
    assert!(
        md.contains("The bundle lacks what these rules read."),
        "{md}"
    );
}

#[test]
fn min_severity_and_rule_keep_the_findings_asked_for_and_say_how_many_were_left_out() {
    let critical = text_of(&["--min-severity", "critical"]);
    assert!(
        critical.starts_with("pgmortem: 1 incident, 3 findings (3 more left out by the filter) (3 critical, 0 warnings, 0 info)"),
        "{critical}"
    );
    assert!(!critical.contains("[dirty-writeback-bytes]"), "{critical}");
    let warning = text_of(&["--min-severity", "warning"]);
    assert!(
        warning.contains("[postmaster-oom-unprotected]")
            && !warning.contains("[overcommit-heuristic]")
    );
    // Ids in any case, several separated by commas or the flag again; JSON filtered alike.
    let two = text_of(&[
        "--rule",
        "THP-ALWAYS,overcommit-heuristic",
        "--rule",
        "cgroup-memory-limit",
    ]);
    assert!(
        two.starts_with("pgmortem: 1 incident, 2 findings (4 more left out by the filter)"),
        "{two}"
    );
    assert!(
        two.contains("[overcommit-heuristic]") && two.contains("[cgroup-memory-limit]"),
        "{two}"
    );
    let json: serde_json::Value = serde_json::from_slice(&stdout_ok(
        pgmortem()
            .args([
                "analyze",
                "--format",
                "json",
                "--rule",
                "overcommit-heuristic",
            ])
            .arg(fixture(WORK_MEM)),
    ))
    .unwrap();
    let ids: Vec<&str> = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["overcommit-heuristic"]);
}

#[test]
fn an_unknown_rule_id_is_an_error_with_the_nearest_ones() {
    let out = pgmortem()
        .args(["analyze", "--rule", "oom-kill-crash-restrat"])
        .arg(fixture(WORK_MEM))
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8(out).unwrap();
    assert!(
        err.contains(
            "--rule: no rule \"oom-kill-crash-restrat\"; did you mean `oom-kill-crash-restart`"
        ),
        "{err}"
    );
}

/// The real bundle of a server started with `pg_ctl -l FILE` (pg15-pg-ctl-l-sigkill), unpacked
/// into `dir` without the files `drop` names.
fn unpacked_without(dir: &std::path::Path, drop: &[&str]) -> std::path::PathBuf {
    let incident = fixture("incidents/pg15-pg-ctl-l-sigkill");
    let archive = std::fs::read_dir(&incident)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .unwrap();
    let file = std::fs::File::open(archive).unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(file))
        .unpack(dir)
        .unwrap();
    let top = std::fs::read_dir(dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for path in drop {
        std::fs::remove_file(top.join(path)).unwrap();
    }
    top
}

#[test]
fn a_bundle_collected_with_the_data_directory_but_no_log_asks_for_the_log() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = unpacked_without(tmp.path(), &["postgres/server.log"]);
    let text = String::from_utf8(stdout_ok(pgmortem().arg("analyze").arg(&bundle))).unwrap();
    assert!(
        text.contains("The collector knew the data directory (/var/lib/postgresql/15/main) and found no log from it"),
        "{text}"
    );
    assert!(
        text.contains("give it the log with --log FILE (for a server started with `pg_ctl -l FILE`, that FILE)"),
        "{text}"
    );
    assert!(!text.contains("or at the data directory (-D)"), "{text}");
    // With its log, the crash is read from it and nothing is asked.
    let tmp = tempfile::tempdir().unwrap();
    let whole = unpacked_without(tmp.path(), &[]);
    let text = String::from_utf8(stdout_ok(pgmortem().arg("analyze").arg(&whole))).unwrap();
    assert!(text.contains("crash-restart of server process"), "{text}");
    assert!(!text.contains("no PostgreSQL server log"), "{text}");
}
