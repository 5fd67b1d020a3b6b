//! `pgmortem diff BEFORE AFTER` on two real bundles of one host, before and after lowering
//! work_mem (fixtures/diff/pg15-work-mem-lowered), and on a report's JSON kept from before.

mod common;
use common::{fixture, pgmortem, stdout_ok};

const BEFORE: &str = "diff/pg15-work-mem-lowered/before";
const AFTER: &str = "diff/pg15-work-mem-lowered/after";

#[test]
fn lowering_work_mem_after_an_oom_kill_reads_as_better_not_fixed_with_the_setting_and_no_incident_since()
 {
    let text = String::from_utf8(stdout_ok(
        pgmortem()
            .arg("diff")
            .arg(fixture(BEFORE))
            .arg(fixture(AFTER)),
    ))
    .unwrap();
    // Better, not fixed: the kill is gone, the settings still do not fit the limit.
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("pgmortem diff: Better: no incident since; gone or milder: "),
        "{text}"
    );
    assert!(first.contains("oom-kill-crash-restart"), "{text}");
    assert!(
        first.contains("still warning or critical: ") && first.contains("work-mem-exceeds-memory"),
        "{text}"
    );
    assert!(text.contains("\n  work_mem: 1.0 GiB → 4 MiB\n"), "{text}");
    assert!(
        text.contains("\nIncidents since the first bundle\n  none\n"),
        "{text}"
    );
    assert!(
        text.contains("1 incident of the second report is older: the first report knew it"),
        "{text}"
    );
    assert!(
        !text.contains("  ! "),
        "no doubt about the comparison: {text}"
    );
    // The worst case of the settings, before and after, with the finding that stays critical.
    let changed = &text[text.find("\nFindings changed\n").expect("changed findings")..];
    assert!(
        changed.contains("  [work-mem-exceeds-memory] critical: "),
        "{text}"
    );
    assert!(changed.contains("      worst_case_bytes: "), "{text}");
    assert!(
        text.contains("Findings only about incidents from before: ")
            && text.contains("oom-kill-crash-restart\n"),
        "{text}"
    );
}

#[test]
fn a_report_json_kept_from_before_compares_like_its_bundle_and_the_diff_has_json_and_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let kept = dir.path().join("before.json");
    std::fs::write(
        &kept,
        stdout_ok(
            pgmortem()
                .args(["analyze", "--format", "json"])
                .arg(fixture(BEFORE)),
        ),
    )
    .unwrap();
    let json = |before: &std::path::Path| -> serde_json::Value {
        serde_json::from_slice(&stdout_ok(
            pgmortem()
                .args(["diff", "--format", "json"])
                .arg(before)
                .arg(fixture(AFTER)),
        ))
        .unwrap()
    };
    let from_bundle = json(&fixture(BEFORE));
    let from_json = json(&kept);
    assert_eq!(from_bundle, from_json);
    assert_eq!(from_json["schema"], "pgmortem.diff/v1");
    assert!(
        from_json["settings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["name"] == "work_mem"),
        "{from_json}"
    );
    let md = String::from_utf8(stdout_ok(
        pgmortem()
            .args(["diff", "--format", "markdown"])
            .arg(&kept)
            .arg(fixture(AFTER)),
    ))
    .unwrap();
    assert!(md.starts_with("# pgmortem diff\n\n**"), "{md}");
    assert!(md.contains("- `work_mem`: `1.0 GiB` → `4 MiB`"), "{md}");
}

#[test]
fn the_bundles_given_the_wrong_way_round_are_said_to_be() {
    let text = String::from_utf8(stdout_ok(
        pgmortem()
            .arg("diff")
            .arg(fixture(AFTER))
            .arg(fixture(BEFORE)),
    ))
    .unwrap();
    assert!(
        text.contains("  ! the second bundle was collected before the first"),
        "{text}"
    );
}
