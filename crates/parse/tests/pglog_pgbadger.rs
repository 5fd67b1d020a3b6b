//! pgBadger's reference logs (fixtures/formats/pglog/pgbadger/, from darold/pgbadger
//! `t/fixtures`, see SOURCES.md there), read whole: every line is a record, part of one, or
//! counted as what it is (blank, another program's, an orphan secondary line), none
//! unrecognised; the counts of each are kept as a snapshot.

use std::io::Read;
use std::path::Path;

use pgmortem_parse::pglog::{self, PgLogOptions};

/// The text of a sample, decompressed as it is shipped (`.gz`, `.bz2` or plain).
fn decompressed(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = Vec::new();
    match path.extension().and_then(|e| e.to_str()) {
        Some("gz") => {
            flate2::read::GzDecoder::new(&bytes[..])
                .read_to_end(&mut text)
                .expect("gzip sample");
        }
        Some("bz2") => {
            bzip2::read::BzDecoder::new(&bytes[..])
                .read_to_end(&mut text)
                .expect("bzip2 sample");
        }
        _ => text = bytes,
    }
    text
}

/// What a sample's reading is judged by: its counts, and the records' times.
#[derive(serde::Serialize)]
struct Reading {
    log: pglog::PgLog,
    /// Records without a time.
    records_without_time: usize,
    /// Records whose time is not on UTC (a zone abbreviation the parser does not place).
    records_off_utc: usize,
}

#[test]
fn pgbadger_reference_logs_are_read_whole() {
    let mut samples = 0;
    insta::glob!("../../../fixtures/formats/pglog/pgbadger", "*", |path| {
        let name = path.file_name().unwrap().to_string_lossy();
        if !path.is_file() || name.ends_with(".md") {
            return;
        }
        samples += 1;
        let bytes = decompressed(path);
        let mut log = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
        assert_eq!(
            log.stats.unrecognized_lines, 0,
            "{name}: {:?}",
            log.stats.unrecognized_examples
        );
        assert!(log.stats.records > 0, "{name}");
        let records = std::mem::take(&mut log.records);
        let reading = Reading {
            records_without_time: records.iter().filter(|r| r.time.is_none()).count(),
            records_off_utc: records
                .iter()
                .filter(|r| r.time.as_ref().is_some_and(|t| t.utc.is_none()))
                .count(),
            log,
        };
        insta::assert_json_snapshot!(reading);
    });
    assert_eq!(samples, 20, "pgBadger's 20 non-pgbouncer samples");
}
