//! Snapshots of the PostgreSQL log parser on every sample in fixtures/formats/pglog: adding a
//! `.log` file there adds a test. Real captures must be understood completely.

use pgmortem_parse::pglog::{self, PgLogOptions};

#[test]
fn pglog_fixtures() {
    insta::glob!(
        "../../../fixtures/formats/pglog",
        "*.{log,csv,json,syslog}",
        |path| {
            let bytes = std::fs::read(path).unwrap();
            let log = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
            let name = path.file_name().unwrap().to_string_lossy();
            if !name.starts_with("edge-") {
                assert_eq!(
                    log.stats.unrecognized_lines, 0,
                    "{name}: {:?}",
                    log.stats.unrecognized_examples
                );
                assert_eq!(log.orphan_lines, 0, "{name}");
                assert!(
                    log.records
                        .iter()
                        .all(|r| r.time.as_ref().is_some_and(|t| t.utc.is_some())),
                    "{name}"
                );
            }
            insta::assert_json_snapshot!(log);
        }
    );
}

/// `write_json` gives, for every record of every sample (every format, language, event and
/// memory-context dump, and the edge cases with bad bytes), the bytes serde_json gives.
#[test]
fn records_written_as_json_lines_are_serde_json_byte_for_byte() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/pglog");
    let mut records = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !["log", "csv", "json", "syslog"].contains(&ext) {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let log = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
        for record in &log.records {
            let mut ours = Vec::new();
            pglog::write_json(&mut ours, record);
            let theirs = serde_json::to_vec(record).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&ours),
                String::from_utf8_lossy(&theirs),
                "{}:{}",
                path.display(),
                record.line
            );
            records += 1;
        }
    }
    assert!(records > 1_000, "{records} records");
}
