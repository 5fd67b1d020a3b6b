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
