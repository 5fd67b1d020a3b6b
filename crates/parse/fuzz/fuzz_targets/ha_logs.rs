//! Fuzzes the Patroni and pgBackRest log readers with arbitrary bytes: they must never panic,
//! every line must be accounted for (a record's, a continuation, a banner, blank, or counted
//! as unrecognised), and records must stay inside the input. Seed it with the samples:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run ha_logs corpus/ha_logs ../../../fixtures/formats/patroni ../../../fixtures/formats/pgbackrest`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem_parse::patroni::{self, PatroniOptions};
use pgmortem_parse::pgbackrest::{self, BackrestOptions};

fuzz_target!(|data: &[u8]| {
    // The first byte picks a tiny line limit now and then.
    let max_line_bytes = match data.first() {
        Some(b) if b % 3 == 0 => usize::from(*b) + 1,
        _ => 64 * 1024,
    };

    let log = patroni::parse(data, &PatroniOptions { max_line_bytes });
    let s = &log.stats;
    assert_eq!(s.records as usize, log.records.len());
    assert_eq!(
        s.records + log.continuation_lines + log.blank_lines + s.unrecognized_lines,
        s.lines
    );
    assert_eq!(log.levels.iter().sum::<u64>(), s.records);
    for record in &log.records {
        assert!(record.line <= record.end_line && record.end_line <= s.lines);
    }
    if let Some(confidence) = patroni::sniff(data) {
        assert!((0.0..=1.0).contains(&confidence));
    }

    let log = pgbackrest::parse(data, &BackrestOptions { max_line_bytes });
    let s = &log.stats;
    assert_eq!(s.records as usize, log.records.len());
    assert_eq!(
        s.records
            + log.process_starts
            + log.continuation_lines
            + log.blank_lines
            + s.unrecognized_lines,
        s.lines
    );
    assert_eq!(log.levels.iter().sum::<u64>(), s.records);
    for record in &log.records {
        assert!(record.line <= record.end_line && record.end_line <= s.lines);
        assert!(record.message.len() <= 2048);
    }
    if let Some(confidence) = pgbackrest::sniff(data) {
        assert!((0.0..=1.0).contains(&confidence));
    }
});
