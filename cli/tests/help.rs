//! What the command says about itself: the rule catalog (`pgmortem rules`), `--help`, shell
//! completions and the man page.

mod common;
use common::{pgmortem, stdout_ok};

fn text(command: &mut assert_cmd::Command) -> String {
    String::from_utf8(stdout_ok(command)).unwrap()
}

#[test]
fn rules_lists_each_rule_with_its_severities() {
    let list = text(pgmortem().arg("rules"));
    // The highest severity, then the others with when: as the reports give them.
    let block = |id: &str| {
        let start = list
            .find(&format!("  {id} "))
            .unwrap_or_else(|| panic!("{id}"));
        list[start..].lines().take(3).collect::<Vec<_>>().join("\n")
    };
    assert!(
        block("overcommit-heuristic").contains("warning (info without a global OOM kill)"),
        "{}",
        block("overcommit-heuristic")
    );
    assert!(
        block("debug-settings-in-production").contains("critical (warning for full_page_writes"),
        "{}",
        block("debug-settings-in-production")
    );
    assert!(
        block("dev-shm-too-small").contains("critical (warning for ENOSPC errors alone"),
        "{}",
        block("dev-shm-too-small")
    );
    assert!(block("crash-restart").contains("\n                                   critical\n"));
    assert!(block("crash-restart").ends_with("needs: postgres_log"));
}

#[test]
fn rules_json_adds_severities_and_keeps_every_field() {
    let all: serde_json::Value =
        serde_json::from_slice(&stdout_ok(pgmortem().args(["rules", "--format", "json"]))).unwrap();
    let all = all.as_array().unwrap();
    assert!(all.len() >= 40, "{}", all.len());
    for rule in all {
        for key in [
            "id",
            "group",
            "severity",
            "severities",
            "title",
            "needs",
            "uses",
        ] {
            assert!(rule.get(key).is_some(), "{key}: {rule}");
        }
        let cases = rule["severities"].as_array().unwrap();
        assert_eq!(rule["severity"], cases[0]["severity"], "{rule}");
        assert!(cases.iter().all(|c| c["when"].is_string()), "{rule}");
    }
    let overcommit = all
        .iter()
        .find(|r| r["id"] == "overcommit-heuristic")
        .unwrap();
    assert_eq!(
        overcommit["severities"],
        serde_json::json!([
            {"severity": "warning", "when": "when the bundle shows a global OOM kill"},
            {"severity": "info", "when": "without a global OOM kill"},
        ])
    );
}

#[test]
fn one_rule_is_found_in_any_case_and_explained_with_its_severities() {
    let lower = text(pgmortem().args(["rules", "oom-kill-crash-restart"]));
    let upper = text(pgmortem().args(["rules", "OOM-KILL-CRASH-RESTART"]));
    assert_eq!(lower, upper);
    assert!(
        lower.starts_with("# oom-kill-crash-restart (crash, critical)\n"),
        "{lower}"
    );
    let explained = text(pgmortem().args(["rules", "Work-Mem-Exceeds-Memory"]));
    assert!(
        explained.contains(
            "\n## Severity\n- critical when the bundle shows an OOM kill of a PostgreSQL process\n\
             - warning without an OOM kill of a PostgreSQL process\n"
        ),
        "{explained}"
    );
    let json: serde_json::Value = serde_json::from_slice(&stdout_ok(pgmortem().args([
        "rules",
        "THP-ALWAYS",
        "--format",
        "json",
    ])))
    .unwrap();
    assert_eq!(json["id"], "thp-always");
    assert!(json["doc"].as_str().unwrap().contains("## What it finds"));
}

#[test]
fn an_unknown_rule_is_a_usage_error_with_the_nearest_ids() {
    for (id, said) in [
        (
            "thp-alwys",
            "no rule \"thp-alwys\"; did you mean `thp-always` or `thp-defrag-always`?",
        ),
        (
            "disk_full",
            "no rule \"disk_full\"; did you mean `disk-full`",
        ),
        (
            "no-such-rule",
            "no rule \"no-such-rule\": `pgmortem rules` lists them",
        ),
    ] {
        pgmortem()
            .args(["rules", id])
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(said));
    }
}

#[test]
fn help_names_the_arguments_as_the_readme_does() {
    for (args, usage) in [
        (
            &["analyze", "--help"][..],
            "Usage: pgmortem analyze [OPTIONS] <BUNDLE>...",
        ),
        (
            &["timeline", "--help"],
            "Usage: pgmortem timeline [OPTIONS] <BUNDLE>...",
        ),
        (
            &["redact", "--help"],
            "Usage: pgmortem redact --output <OUT.tar.gz> <BUNDLE>",
        ),
        (&["flamegraph", "--help"], "--output <OUT.svg> <FILE>"),
        (
            &["check", "--help"],
            "Usage: pgmortem check [OPTIONS] <DIR>...",
        ),
    ] {
        let help = text(pgmortem().args(args));
        assert!(help.contains(usage), "{args:?}: {help}");
    }
    let analyze = text(pgmortem().args(["analyze", "--help"]));
    for shown in [
        "--boot-time <RFC3339>",
        "--host-utc-offset <+HH:MM>",
        "--prefix <LOG_LINE_PREFIX>",
        "--match-tolerance <SECONDS>",
        "--max-log-bytes <N>",
        "--memory-limit <SIZE>",
        "--threads <N>",
        "--output <FILE>",
    ] {
        assert!(analyze.contains(shown), "{shown}: {analyze}");
    }
    // The Rust binary does not run `fleet` (the Python package does): not listed, and asked
    // for, it says where it runs.
    let help = text(pgmortem().arg("--help"));
    assert!(!help.contains("fleet"), "{help}");
    for command in ["completions", "manpage", "rules", "analyze"] {
        assert!(
            help.contains(&format!("\n  {command} ")),
            "{command}: {help}"
        );
    }
    pgmortem()
        .args(["fleet", "fixtures/incidents/*", "-o", "dataset"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "`pgmortem fleet` runs in the Python package",
        ));
}

#[test]
fn completions_are_written_from_the_command_line_for_each_shell() {
    let bash = text(pgmortem().args(["completions", "bash"]));
    for word in [
        "analyze",
        "timeline",
        "rules",
        "completions",
        "manpage",
        "--memory-limit",
        "--format",
    ] {
        assert!(bash.contains(word), "bash lacks {word}");
    }
    assert!(!bash.contains("fleet"));
    // It is a script bash reads and registers.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("pgmortem.bash");
    std::fs::write(&script, &bash).unwrap();
    let registered = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "source {} && complete -p pgmortem",
            script.display()
        ))
        .output()
        .unwrap();
    assert!(
        registered.status.success(),
        "{}",
        String::from_utf8_lossy(&registered.stderr)
    );
    assert!(String::from_utf8_lossy(&registered.stdout).contains("pgmortem"));

    let zsh = text(pgmortem().args(["completions", "zsh"]));
    assert!(
        zsh.starts_with("#compdef pgmortem"),
        "{}",
        &zsh[..zsh.len().min(200)]
    );
    assert!(
        zsh.contains("'--memory-limit=[") && zsh.contains("analyze"),
        "zsh"
    );
    let fish = text(pgmortem().args(["completions", "fish"]));
    assert!(
        fish.contains("complete -c pgmortem")
            && fish.contains("-l memory-limit")
            && fish.contains("-a \"rules\""),
        "fish"
    );
    pgmortem()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("possible values: bash"));
}

#[test]
fn the_man_page_is_written_from_the_command_line() {
    let page = text(pgmortem().arg("manpage"));
    assert!(page.contains(".TH pgmortem 1"), "{page}");
    for section in [".SH NAME", ".SH SYNOPSIS", ".SH SUBCOMMANDS", ".SH VERSION"] {
        assert!(page.contains(section), "{section}: {page}");
    }
    assert!(page.contains("pgmortem\\-analyze(1)") && page.contains("pgmortem\\-rules(1)"));
    let analyze = text(pgmortem().args(["manpage", "analyze"]));
    assert!(analyze.contains(".TH pgmortem-analyze 1"), "{analyze}");
    assert!(analyze.contains("\\fBpgmortem analyze\\fR") && analyze.contains("BUNDLE"));
    assert!(analyze.contains("\\-\\-memory\\-limit"), "{analyze}");
    pgmortem()
        .args(["manpage", "no-such-command"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "no command \"no-such-command\": its commands are analyze, diff, timeline",
        ));
    // man(1) renders it when the machine has it.
    if std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok()
    {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pgmortem.1");
        std::fs::write(&file, &page).unwrap();
        let shown = std::process::Command::new("man")
            .arg("-l")
            .arg(&file)
            .env("MANPAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .unwrap();
        assert!(
            shown.status.success(),
            "{}",
            String::from_utf8_lossy(&shown.stderr)
        );
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(
            shown.contains("SUBCOMMANDS") && shown.contains("pgmortem-analyze(1)"),
            "{shown}"
        );
    }
}
