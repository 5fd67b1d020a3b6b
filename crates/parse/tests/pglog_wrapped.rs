//! The wrapped PostgreSQL log forms (fixtures/formats/pglog/enveloped-*, pg15-journal*,
//! pg15-syslog-rfc5424) read in chunks give what a whole-buffer parse gives.

use pgmortem_parse::pglog::{self, PgLogOptions, PgLogReader, PgRecord};

fn fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../fixtures/formats/pglog/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(path).unwrap()
}

fn chunked(bytes: &[u8], size: usize) -> (Vec<PgRecord>, pglog::PgLog) {
    let mut reader = PgLogReader::new(PgLogOptions::default());
    let mut records = Vec::new();
    for chunk in bytes.chunks(size) {
        reader.push(chunk).unwrap();
        while let Some(r) = reader.next_record() {
            records.push(*r);
        }
    }
    reader.finish().unwrap();
    while let Some(r) = reader.next_record() {
        records.push(*r);
    }
    (records, reader.summary())
}

#[test]
fn chunked_reading_gives_the_same_records_and_counts() {
    for name in [
        "enveloped-cloudsql-pg15-array.json",
        "enveloped-cloudsql-pg15.json",
        "enveloped-cnpg-pg15.json",
        "enveloped-heroku-pg15.log",
        "pg15-journal.json",
        "pg15-journal-short-precise.log",
        "pg15-syslog-rfc5424.syslog",
    ] {
        let bytes = fixture(name);
        let whole = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
        for size in [7, 4096] {
            let (records, summary) = chunked(&bytes, size);
            assert_eq!(records, whole.records, "{name} in chunks of {size}");
            let mut counts = whole.clone();
            counts.records.clear();
            assert_eq!(summary, counts, "{name} in chunks of {size}");
        }
    }
}
