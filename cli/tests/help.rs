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
