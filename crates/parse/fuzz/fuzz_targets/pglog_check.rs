// Shared by the pglog_* fuzz targets (included, not a target of its own).

use pgmortem_parse::pglog::{self, ParallelParser, PgLogFormat, PgLogOptions, PgLogReader};
use pgmortem_parse::wrap::Wrapper;

/// The first `\n` in `bytes`.
fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Parses `data` as `format` whole and through the chunked reader: never a panic, consistent
/// counts, and the same records both ways. The first byte picks the chunk size and the limits.
#[allow(dead_code)] // not used by every target that includes this file
pub fn check(data: &[u8], format: PgLogFormat) {
    check_maybe_sniffed(data, Some(format));
}

/// [`check`], with the format sniffed when `format` is `None`.
#[allow(dead_code)] // not used by every target that includes this file
pub fn check_maybe_sniffed(data: &[u8], format: Option<PgLogFormat>) {
    check_with(data, format, None);
}

/// [`check`] of a log inside `wrapper`, the format inside sniffed.
#[allow(dead_code)] // not used by every target that includes this file
pub fn check_wrapped(data: &[u8], wrapper: Wrapper) {
    check_with(data, None, Some(wrapper));
}

fn check_with(data: &[u8], format: Option<PgLogFormat>, wrapper: Option<Wrapper>) {
    let (knob, data) = match data.split_first() {
        Some((k, rest)) => (*k, rest),
        None => (0, data),
    };
    let options = PgLogOptions {
        format,
        wrapper,
        max_line_bytes: if knob % 2 == 0 { 64 + usize::from(knob) } else { 1 << 20 },
        max_record_bytes: 256 + usize::from(knob) * 8,
        ..PgLogOptions::default()
    };
    let log = pglog::parse(data, &options).expect("no prefix given: never an error");
    assert_eq!(log.stats.records as usize, log.records.len());
    assert!(log.stats.unrecognized_lines <= log.stats.lines);
    assert!(log.stats.invalid_utf8_lines <= log.stats.lines);
    for record in &log.records {
        assert!(record.line <= record.end_line, "{record:?}");
        assert!(record.end_line <= log.stats.lines, "{record:?}");
    }
    let mut reader = PgLogReader::new(options.clone());
    let mut streamed = Vec::new();
    for chunk in data.chunks(1 + usize::from(knob) * 3) {
        reader.push(chunk).expect("no prefix given");
        while let Some(r) = reader.next_record() {
            streamed.push(*r);
        }
    }
    reader.finish().expect("no prefix given");
    while let Some(r) = reader.next_record() {
        streamed.push(*r);
    }
    // Lines longer than the limit are cut differently when they straddle chunks; compare only
    // when none was cut.
    if log.stats.oversized_lines == 0 {
        assert_eq!(streamed, log.records);
    }
    // The parallel engine, cut into tiny chunks and blocks (every join path taken), gives the
    // same log as one pass.
    if log.stats.oversized_lines == 0 {
        let chunk = 1 + usize::from(knob) % 64;
        let mut parser = ParallelParser::new(options.clone(), 1, chunk);
        let mut records = Vec::new();
        let mut rest = data;
        let block = 1 + usize::from(knob) * 5;
        while !rest.is_empty() {
            let cut = if rest.len() <= block {
                rest.len()
            } else {
                memchr_newline(&rest[block..]).map_or(rest.len(), |i| block + i + 1)
            };
            parser
                .feed(&rest[..cut], &|r| *r, &mut |r| records.push(r))
                .expect("no prefix given");
            rest = &rest[cut..];
        }
        let mut parallel = parser
            .finish(&|r| *r, &mut |r| records.push(r))
            .expect("no prefix given");
        parallel.records = records;
        assert!(parallel == log, "parallel differs from one pass");
    }
    if let Some(confidence) = pglog::sniff(data) {
        assert!((0.0..=1.0).contains(&confidence));
    }
    let _ = pglog::sniff_format(data);
}
