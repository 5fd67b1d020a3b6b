//! Fuzzes the pgbouncer log reader with arbitrary bytes: it must never panic, every line must be
//! accounted for, and reading in chunks must give what one pass gives. Seed it with the samples:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run pgbouncer corpus/pgbouncer ../../../fixtures/formats/pgbouncer`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem_parse::pgbouncer::{self, BouncerForm, BouncerOptions, BouncerReader};

fuzz_target!(|data: &[u8]| {
    // The first byte picks the form (or none: told from the lines), a year, a tiny line limit.
    let options = match data.first() {
        Some(b) => BouncerOptions {
            form: match b % 6 {
                0 => None,
                1 => Some(BouncerForm::File),
                2 => Some(BouncerForm::Syslog),
                3 => Some(BouncerForm::Syslog5424),
                4 => Some(BouncerForm::Journal),
                _ => Some(BouncerForm::JournalJson),
            },
            year: (b % 2 == 0).then_some(2026),
            max_line_bytes: if b % 3 == 0 { usize::from(*b) + 1 } else { 64 * 1024 },
            ..BouncerOptions::default()
        },
        None => BouncerOptions::default(),
    };
    let log = pgbouncer::parse(data, &options);
    let s = &log.stats;
    assert!(s.unrecognized_lines <= s.lines + 1);
    assert!(s.invalid_utf8_lines <= s.lines);
    assert_eq!(s.records as usize, log.records.len());
    assert!(s.records + log.blank_lines + log.other_program_lines <= s.lines);
    for record in &log.records {
        assert!(record.line <= record.end_line && record.end_line <= s.lines);
    }
    // In chunks of a size the data picks: the same log.
    let size = data.get(1).map_or(1, |b| usize::from(*b % 17) + 1);
    let mut reader = BouncerReader::new(options.clone());
    let mut records = Vec::new();
    for chunk in data.chunks(size) {
        reader.push(chunk);
        records.extend(std::iter::from_fn(|| reader.next_record()).map(|r| *r));
    }
    reader.finish();
    records.extend(std::iter::from_fn(|| reader.next_record()).map(|r| *r));
    assert_eq!(records, log.records);
    if let Some(confidence) = pgbouncer::sniff(data) {
        assert!((0.0..=1.0).contains(&confidence));
    }
    let _ = pgbouncer::sniff_form(data);
});
