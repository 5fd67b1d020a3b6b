//! Helpers the integration tests share (each test file uses some of them).

#![allow(dead_code)]

use pgmortem_parse::pglog::{PgLog, PgLogOptions, PgLogReader, PgRecord};

/// The bytes of `fixtures/formats/pglog/<name>`.
pub fn pglog_fixture(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/../../fixtures/formats/pglog/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The text of a fixture file, decompressed when its name ends in `.gz`.
pub fn read_maybe_gzipped(path: &std::path::Path) -> Vec<u8> {
    use std::io::Read;
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    if path.extension().is_some_and(|e| e == "gz") {
        let mut text = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut text)
            .expect("gzip fixture");
        text
    } else {
        bytes
    }
}

/// `bytes` pushed to a [`PgLogReader`] in chunks of `size`, the records taken after every
/// push: the records and the summary.
pub fn read_in_chunks(bytes: &[u8], size: usize, options: &PgLogOptions) -> (Vec<PgRecord>, PgLog) {
    let mut reader = PgLogReader::new(options.clone());
    let mut records = Vec::new();
    for chunk in bytes.chunks(size) {
        reader.push(chunk).unwrap();
        records.extend(std::iter::from_fn(|| reader.next_record()).map(|r| *r));
    }
    reader.finish().unwrap();
    records.extend(std::iter::from_fn(|| reader.next_record()).map(|r| *r));
    (records, reader.summary())
}
