//! The pgbouncer log reader on every sample in fixtures/formats/pgbouncer (adding a file there
//! adds a snapshot): real captures are understood completely, the same capture reads the same
//! in each of its forms, and reading in chunks gives what one pass gives.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use pgmortem_parse::pgbouncer::{
    self, BouncerEvent, BouncerForm, BouncerLog, BouncerOptions, BouncerReader, BouncerRecord,
};
use serde::Serialize;

fn fixture_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/pgbouncer")
}

/// A fixture parsed once.
type Slot = Arc<OnceLock<Arc<BouncerLog>>>;

/// The fixture `path` read whole (decompressed when gzipped), parsed once for every test that
/// asks (the two pgBadger samples hold 228 000 lines).
fn parsed(path: &std::path::Path) -> Arc<BouncerLog> {
    static CACHE: OnceLock<Mutex<HashMap<std::path::PathBuf, Slot>>> = OnceLock::new();
    let slot = CACHE
        .get_or_init(Mutex::default)
        .lock()
        .unwrap()
        .entry(path.canonicalize().unwrap())
        .or_default()
        .clone();
    slot.get_or_init(|| {
        let bytes = common::read_maybe_gzipped(path);
        Arc::new(pgbouncer::parse(&bytes, &options()))
    })
    .clone()
}

/// The year of the BSD stamps of the recorded syslog and journal files (they print none).
fn options() -> BouncerOptions {
    BouncerOptions {
        year: Some(2026),
        ..BouncerOptions::default()
    }
}

/// What a snapshot shows of a log: every count, and the first record of each sort (level,
/// event kind, cause, side) in log order: the whole of a small log's variety without its
/// thousands of login lines.
#[derive(Serialize)]
struct Seen<'a> {
    form: BouncerForm,
    stats: &'a pgmortem_parse::ParseStats,
    continuation_lines: u64,
    blank_lines: u64,
    other_program_lines: u64,
    unreadable_stamps: &'a pgmortem_parse::CountedLines,
    events: &'a std::collections::BTreeMap<&'static str, u64>,
    client_closings: &'a std::collections::BTreeMap<&'static str, u64>,
    server_closings: &'a std::collections::BTreeMap<&'static str, u64>,
    pooler_errors: &'a std::collections::BTreeMap<&'static str, u64>,
    first_record_of_each_sort: Vec<&'a BouncerRecord>,
}

fn sort_of(r: &BouncerRecord) -> String {
    let cause = match &r.event {
        Some(BouncerEvent::Closing { cause, .. })
        | Some(BouncerEvent::PoolerError { cause, .. })
        | Some(BouncerEvent::ServerLoginFailed { cause, .. }) => cause.as_str(),
        _ => "",
    };
    format!(
        "{:?} {} {cause} {:?}",
        r.level,
        r.event.as_ref().map_or("-", |e| e.kind()),
        r.connection.as_ref().map(|c| c.side)
    )
}

fn seen(log: &BouncerLog) -> Seen<'_> {
    let mut sorts = BTreeSet::new();
    Seen {
        form: log.form,
        stats: &log.stats,
        continuation_lines: log.continuation_lines,
        blank_lines: log.blank_lines,
        other_program_lines: log.other_program_lines,
        unreadable_stamps: &log.unreadable_stamps,
        events: &log.events,
        client_closings: &log.client_closings,
        server_closings: &log.server_closings,
        pooler_errors: &log.pooler_errors,
        first_record_of_each_sort: log
            .records
            .iter()
            .filter(|r| sorts.insert(sort_of(r)))
            .collect(),
    }
}

#[test]
fn pgbouncer_fixtures() {
    insta::glob!(
        "../../../fixtures/formats/pgbouncer",
        "*.{log,syslog,json,gz}",
        |path| {
            let log = parsed(path);
            let name = path.file_name().unwrap().to_string_lossy();
            if !name.starts_with("edge-") {
                assert_eq!(
                    log.stats.unrecognized_lines, 0,
                    "{name}: {:?}",
                    log.stats.unrecognized_examples
                );
                assert_eq!(log.stats.invalid_utf8_lines, 0, "{name}");
                assert!(log.unreadable_stamps.is_empty(), "{name}");
                assert!(log.records.iter().all(|r| r.time.is_some()), "{name}");
                assert!(log.stats.records > 0, "{name}");
            }
            // Every line is accounted for.
            let log = &*log;
            assert!(
                log.stats.records
                    + log.continuation_lines
                    + log.blank_lines
                    + log.other_program_lines
                    + log.stats.unrecognized_lines
                    >= log.stats.lines,
                "{name}"
            );
            insta::assert_json_snapshot!(seen(log));
        }
    );
}

#[test]
fn the_pgbadger_samples_are_read_whole() {
    let log = parsed(&fixture_dir().join("pgbadger-pgbouncer-1.9.log.gz"));
    assert_eq!(log.stats.lines, 127_910);
    assert_eq!(log.stats.records, 127_910);
    assert_eq!(log.events.get("login_attempt"), Some(&63_943));
    assert_eq!(
        log.client_closings.get("client_close_request"),
        Some(&63_943)
    );
    assert_eq!(log.events.get("stats"), Some(&5));
    // Before 1.12: no zone printed; the pid without brackets.
    let first = &log.records[0];
    assert_eq!(first.pid, Some(3392));
    assert_eq!(first.time.as_ref().unwrap().zone, None);

    let log = parsed(&fixture_dir().join("pgbadger-pgbouncer-1.21.log.gz"));
    assert_eq!(log.stats.lines, 100_000);
    assert_eq!(log.stats.records, 100_000);
    let stats: Vec<_> = log
        .records
        .iter()
        .filter_map(|r| match &r.event {
            Some(BouncerEvent::Stats(s)) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(stats.len(), 9);
    // 1.21 prints the prepared-statement counters.
    assert!(
        stats
            .iter()
            .all(|s| s.binds_per_second.is_some() && s.wait_us.is_some())
    );
    assert_eq!(
        log.records[0].time.as_ref().unwrap().zone.as_deref(),
        Some("CET")
    );
}

/// The one capture, as pgbouncer wrote it to its log file, to syslog (two rsyslog formats) and
/// to the journal (four journalctl views): the same records, events and connections.
#[test]
fn every_form_of_the_capture_reads_the_same() {
    let read = |name: &str| {
        let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
        pgbouncer::parse(&bytes, &options())
    };
    let file = read("pgbouncer-1.18-outage.log");
    assert_eq!(file.form, BouncerForm::File);
    let key = |r: &BouncerRecord| {
        (
            r.pid,
            r.connection.clone(),
            r.message.clone(),
            r.event.clone(),
        )
    };
    let want: Vec<_> = file.records.iter().map(key).collect();
    for (name, form) in [
        (
            "pgbouncer-1.18-syslog-traditional.syslog",
            BouncerForm::Syslog,
        ),
        (
            "pgbouncer-1.18-syslog-rfc5424.syslog",
            BouncerForm::Syslog5424,
        ),
        ("pgbouncer-1.18-journal-short.log", BouncerForm::Syslog),
        ("pgbouncer-1.18-journal-short-iso.log", BouncerForm::Journal),
        (
            "pgbouncer-1.18-journal-short-precise.log",
            BouncerForm::Journal,
        ),
        ("pgbouncer-1.18-journal.json", BouncerForm::JournalJson),
    ] {
        let log = read(name);
        assert_eq!(log.form, form, "{name}");
        let got: Vec<_> = log.records.iter().map(key).collect();
        assert_eq!(got.len(), want.len(), "{name}");
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w, "{name}");
        }
        // The envelope's time is the same second as pgbouncer's own stamp.
        for (r, f) in log.records.iter().zip(&file.records) {
            let (a, b) = (r.time.as_ref().unwrap(), f.time.as_ref().unwrap());
            assert_eq!(a.civil.date(), b.civil.date(), "{name}:{}", r.line);
            let gap = (a.civil - b.civil).get_seconds().abs();
            assert!(gap <= 1, "{name}:{} {} vs {}", r.line, a.civil, b.civil);
        }
        // The journal and RFC 5424 carry the level as a priority; BSD syslog files do not.
        let levels: Vec<_> = log.records.iter().map(|r| r.level).collect();
        if matches!(form, BouncerForm::JournalJson | BouncerForm::Syslog5424) {
            let file_levels: Vec<_> = file.records.iter().map(|r| r.level).collect();
            assert_eq!(levels, file_levels, "{name}");
        }
        assert_eq!(log.stats.unrecognized_lines, 0, "{name}");
        // Two lines of another program were logged into the journal during the capture.
        if name.contains("journal") {
            assert_eq!(log.other_program_lines, 2, "{name}");
        }
    }
}

#[test]
fn reading_in_chunks_gives_what_one_pass_gives() {
    for name in [
        "pgbouncer-1.18-outage.log",
        "pgbouncer-1.18-journal.json",
        "edge-damaged.log",
    ] {
        let bytes = std::fs::read(fixture_dir().join(name)).unwrap();
        let whole = pgbouncer::parse(&bytes, &options());
        for size in [1, 7, 4096] {
            let mut reader = BouncerReader::new(options());
            let mut records = Vec::new();
            for chunk in bytes.chunks(size) {
                reader.push(chunk);
                records.extend(std::iter::from_fn(|| reader.next_record()).map(|r| *r));
            }
            reader.finish();
            records.extend(std::iter::from_fn(|| reader.next_record()).map(|r| *r));
            let mut log = reader.summary();
            log.records = records;
            assert_eq!(log, whole, "{name} in chunks of {size}");
        }
    }
}

#[test]
fn the_fixtures_are_sniffed_as_pgbouncer_logs() {
    for entry in std::fs::read_dir(fixture_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".md") || name.starts_with("edge-") {
            continue;
        }
        let bytes = common::read_maybe_gzipped(&path);
        let head = &bytes[..bytes.len().min(8192)];
        let confidence = pgbouncer::sniff(head).unwrap_or(0.0);
        assert!(confidence >= 0.9, "{name}: {confidence}");
        assert!(pgbouncer::sniff_form(head).is_some(), "{name}");
    }
}
