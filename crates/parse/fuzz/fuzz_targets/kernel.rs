//! Fuzzes the kernel-log parser with arbitrary bytes: it must never panic, and its statistics
//! must stay consistent. Seed it with the samples:
//! `RUSTC_BOOTSTRAP=1 cargo fuzz run kernel corpus/kernel ../../../fixtures/formats/kernel`

#![no_main]

use libfuzzer_sys::fuzz_target;
use pgmortem_parse::kernel::{self, KernelLimits, KernelOptions};

fuzz_target!(|data: &[u8]| {
    // The first byte picks the options, so tiny line limits, a known year and a collection day
    // get exercised too.
    let options = match data.first() {
        Some(b) if b % 4 == 0 => KernelOptions { year: Some(2026), max_line_bytes: usize::from(*b) + 1, ..KernelOptions::default() },
        Some(b) if b % 4 == 1 => KernelOptions { year: Some(2026), ..KernelOptions::default() },
        // A collection day early in the year: December stamps go to the year before.
        Some(b) if b % 4 == 2 => KernelOptions { collected_on: "2026-01-02".parse().ok(), ..KernelOptions::default() },
        // Tiny limits on what is kept: reports, their details (by count and by bytes), events.
        Some(b) if b % 8 == 3 => KernelOptions {
            limits: KernelLimits { oom_reports: 3, detailed_reports: 1, detail_bytes: usize::from(*b) * 16, events: 2 },
            ..KernelOptions::default()
        },
        _ => KernelOptions::default(),
    };
    let log = kernel::parse(data, &options);
    assert!(log.stats.unrecognized_lines <= log.stats.lines);
    assert!(log.stats.invalid_utf8_lines <= log.stats.lines);
    assert_eq!(log.stats.records as usize, log.records.len());
    let reports = log.records.iter().filter(|r| matches!(r.event, kernel::KernelEvent::OomReport(_))).count();
    assert!(reports <= options.limits.oom_reports.max(1));
    assert!(log.records.len() - reports <= options.limits.events.max(1));
    let detailed: usize = log.records.iter().filter_map(|r| match &r.event {
        kernel::KernelEvent::OomReport(report) => Some(kernel::report_detail_bytes(report)),
        _ => None,
    }).sum();
    assert!(detailed <= options.limits.detail_bytes, "{detailed} bytes of details kept");
    for record in &log.records {
        assert!(record.line <= record.end_line && record.end_line <= log.stats.lines);
    }
    for line in kernel::BlockLines::new(data) {
        let parsed = kernel::parse_line(&line.text, line.number, &options);
        assert!(parsed.message.len() <= line.text.len());
    }
    if let Some(confidence) = kernel::sniff(data) {
        assert!((0.0..=1.0).contains(&confidence));
    }
});
