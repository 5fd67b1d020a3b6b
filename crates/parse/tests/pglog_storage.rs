//! The PostgreSQL logs of the recorded storage incidents (fixtures/formats/pglog-storage, each
//! the `postgres/server.log` of a bundle of fixtures/incidents-pending or fixtures/incidents):
//! a snapshot of every classified event with its line and severity, and the lines the parser
//! could not read, which must be other programs' output only. Checkpoint events are left out of
//! the snapshots.

use pgmortem_parse::pglog::{self, PgLogOptions};

#[test]
fn storage_incident_logs() {
    insta::glob!("../../../fixtures/formats/pglog-storage", "*.log", |path| {
        let bytes = std::fs::read(path).unwrap();
        let log = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(
            log.records
                .iter()
                .all(|r| r.time.as_ref().is_some_and(|t| t.utc.is_some())),
            "{name}"
        );
        // What the archive command itself writes to the server's stderr (`cp: cannot create
        // regular file …`) is the only text the parser may leave unread.
        let unrecognized = log.stats.unrecognized_lines;
        let from_cp = String::from_utf8_lossy(&bytes)
            .lines()
            .filter(|l| l.starts_with("cp: "))
            .count() as u64;
        assert_eq!(
            unrecognized, from_cp,
            "{name}: {:?}",
            log.stats.unrecognized_examples
        );
        let events: Vec<serde_json::Value> = log
            .records
            .iter()
            .filter_map(|r| {
                // Checkpoints are read the same in every log (pglog_fixtures).
                let event = r.event.as_ref().filter(|e| {
                    !matches!(e.kind(), "checkpoint_starting" | "checkpoint_complete")
                })?;
                Some(serde_json::json!({
                    "line": r.line,
                    "severity": r.severity,
                    "event": event,
                }))
            })
            .collect();
        insta::assert_json_snapshot!(serde_json::json!({
            "records": log.records.len(),
            "unrecognized_lines": unrecognized,
            "events": events,
        }));
    });
}
