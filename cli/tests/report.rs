//! `pgmortem analyze` in the formats for people: Markdown for a ticket, text on a terminal.

mod common;
use common::{fixture, pgmortem, stdout_ok};

const WORK_MEM: &str = "incidents/pg15-memcg-oom-work-mem/pgmortem-dbhost-20261124T053616Z.tar.gz";

#[test]
fn analyze_markdown_has_the_incident_table_and_a_section_per_finding() {
    let md = String::from_utf8(stdout_ok(
        pgmortem()
            .args(["analyze", "--format", "markdown"])
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
