use super::*;
use pgmortem_parse::pglog::{self, PgLogOptions};

fn digest_of(name: &str) -> PgDigest {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/formats/pglog")
        .join(name);
    let bytes = std::fs::read(path).unwrap();
    let mut digest = PgDigest::new(None);
    for record in pglog::records(&bytes, &PgLogOptions::default()).unwrap() {
        digest.push(*record);
    }
    digest
}

#[test]
fn routine_records_are_counted_not_kept() {
    let d = digest_of("pg15-events.log");
    assert!(d.count("checkpoint_complete") > 0);
    assert!(d.count("temp_file") > 0);
    assert!(
        d.records
            .iter()
            .all(|r| !matches!(r.event, Some(PgEvent::CheckpointComplete { .. })))
    );
    assert_eq!(d.temp_files.count, d.count("temp_file"));
    assert!(d.temp_files.largest.is_some());
    assert_eq!(d.count("too_many_clients"), 1);
    assert!(d.severities.get("FATAL").copied().unwrap_or(0) > 0);
}

#[test]
fn a_death_keeps_the_errors_its_process_logged_before_it() {
    // The startup process fails to size its shared memory in a 1 MB /dev/shm, then exits.
    let d = digest_of("pg15-events.log");
    let exit = d
        .records
        .iter()
        .find(|r| matches!(r.event, Some(PgEvent::ExitedWithCode { pid: 21799, .. })))
        .unwrap();
    let before = &d.before_death[&exit.line];
    assert_eq!(before.len(), 1);
    assert!(matches!(
        before[0].event,
        Some(PgEvent::SharedMemoryResizeFailed { no_space: true, .. })
    ));
}

/// What a digest holds stays bounded whatever the log: records per kind and in all, the
/// errors remembered, the context kept per death.
#[test]
fn memory_is_bounded_by_construction() {
    let mut d = PgDigest::new(None);
    let mut line = 0;
    for round in 0..(3 * MAX_PER_KIND) {
        let pid = 1000 + (round % 7) as u32;
        for _ in 0..3 {
            line += 1;
            d.push(PgRecord {
                line,
                pid: Some(pid),
                severity: Some(Severity::Error),
                message: "out of memory".into(),
                ..PgRecord::default()
            });
        }
        line += 1;
        d.push(PgRecord {
            line,
            event: Some(PgEvent::TerminatedBySignal {
                process: "server process".into(),
                pid,
                signal: 9,
                signal_name: "Killed".into(),
                query: None,
            }),
            severity: Some(Severity::Log),
            ..PgRecord::default()
        });
    }
    d.finish();
    assert_eq!(d.count("terminated_by_signal"), 3 * MAX_PER_KIND);
    assert_eq!(d.records.len() as u64, MAX_PER_KIND);
    assert!(d.records.len() <= MAX_KEPT);
    assert_eq!(d.before_death.len() as u64, MAX_PER_KIND);
    // The first deaths and the latest, in log order, each with the errors before it.
    let lines: Vec<u64> = d.records.iter().map(|r| r.line).collect();
    let every = 4; // three errors, then the death
    let expected: Vec<u64> = (1..=HEAD_PER_KIND)
        .chain(3 * MAX_PER_KIND - (MAX_PER_KIND - HEAD_PER_KIND) + 1..=3 * MAX_PER_KIND)
        .map(|death| death * every)
        .collect();
    assert_eq!(lines, expected);
    assert!(lines.iter().all(|line| d.before_death.contains_key(line)));
    assert!(
        d.before_death
            .values()
            .all(|b| b.len() <= CONTEXT_PER_DEATH)
    );
    assert!(d.recent_errors.len() <= RECENT_ERRORS);
    assert_eq!(d.not_kept, 2 * MAX_PER_KIND);
}

/// The digest of records sieved a block ahead (as the parallel reader does: a block is
/// sieved on its threads, then taken) is the digest of records pushed one by one.
#[test]
fn records_sieved_ahead_give_the_same_digest() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut log = Vec::new();
    for name in [
        "pg15-events.log",
        "pg15-backend-sigkill.log",
        "pg13-backend-sigkill.log",
    ] {
        log.extend(std::fs::read(dir.join("formats/pglog").join(name)).unwrap());
    }
    // Enough copies that kinds pass the cap, and temporary files repeat.
    let log = log.repeat(400);
    let records = || pglog::records(&log, &PgLogOptions::default()).unwrap();
    let mut one_by_one = PgDigest::new(None);
    for record in records() {
        one_by_one.push(*record);
    }
    one_by_one.finish();
    assert!(one_by_one.not_kept > 0 && one_by_one.temp_files.count > 1000);
    for block in [1, 7, 5000] {
        let mut ahead = PgDigest::new(None);
        let sieve = ahead.sieve();
        let mut records = records().peekable();
        while records.peek().is_some() {
            let batch: Vec<Taken> = records
                .by_ref()
                .take(block)
                .map(|r| sieve.prepare(r))
                .collect();
            batch.into_iter().for_each(|t| ahead.take(t));
        }
        ahead.finish();
        assert_eq!(ahead.records, one_by_one.records, "block {block}");
        assert_eq!(ahead.kinds, one_by_one.kinds);
        assert_eq!(ahead.severities, one_by_one.severities);
        assert_eq!(ahead.not_kept, one_by_one.not_kept);
        assert_eq!(ahead.dumps_dropped, one_by_one.dumps_dropped);
        assert_eq!(ahead.temp_files, one_by_one.temp_files);
        assert_eq!(ahead.before_death, one_by_one.before_death);
        assert_eq!(ahead.records_read, one_by_one.records_read);
        assert_eq!(ahead.zone_use, one_by_one.zone_use);
        assert_eq!(ahead.recent_errors, one_by_one.recent_errors);
    }
}

#[test]
fn kinds_over_the_cap_are_counted_not_kept() {
    let mut d = PgDigest::new(None);
    for line in 1..=(MAX_PER_KIND + 5) {
        d.push(PgRecord {
            line,
            event: Some(PgEvent::TooManyClients),
            severity: Some(Severity::Fatal),
            ..PgRecord::default()
        });
    }
    assert_eq!(d.count("too_many_clients"), MAX_PER_KIND + 5);
    assert_eq!(d.records.len() as u64, MAX_PER_KIND);
    assert_eq!(d.not_kept, 5);
    assert_eq!(d.kinds["too_many_clients"].last.line, MAX_PER_KIND + 5);
}

/// A crash loop longer than the cap keeps its first deaths and its latest ones; a kind
/// outside the crash cycle keeps only its first.
#[test]
fn a_long_crash_loop_keeps_its_latest_crashes_too() {
    let mut d = PgDigest::new(None);
    let cycles = 5_000u64;
    for cycle in 0..cycles {
        let line = cycle * 3;
        d.push(PgRecord {
            line: line + 1,
            event: Some(PgEvent::TerminatedBySignal {
                process: "server process".into(),
                pid: 2_000 + cycle as u32,
                signal: 9,
                signal_name: "Killed".into(),
                query: None,
            }),
            severity: Some(Severity::Log),
            ..PgRecord::default()
        });
        d.push(PgRecord {
            line: line + 2,
            event: Some(PgEvent::Ready),
            severity: Some(Severity::Log),
            ..PgRecord::default()
        });
        d.push(PgRecord {
            line: line + 3,
            event: Some(PgEvent::TooManyClients),
            severity: Some(Severity::Fatal),
            ..PgRecord::default()
        });
    }
    d.finish();
    let of = |kind: &str| -> Vec<u64> {
        d.records
            .iter()
            .filter(|r| r.event.as_ref().is_some_and(|e| e.kind() == kind))
            .map(|r| r.line)
            .collect()
    };
    let deaths = of("terminated_by_signal");
    assert_eq!(deaths.len() as u64, MAX_PER_KIND);
    assert_eq!(deaths[0], 1);
    assert_eq!(*deaths.last().unwrap(), (cycles - 1) * 3 + 1);
    assert_eq!(
        deaths[HEAD_PER_KIND as usize],
        (cycles - (MAX_PER_KIND - HEAD_PER_KIND)) * 3 + 1
    );
    assert_eq!(of("ready").len() as u64, MAX_PER_KIND);
    let refused = of("too_many_clients");
    assert_eq!(refused.len() as u64, MAX_PER_KIND);
    assert_eq!(*refused.last().unwrap(), MAX_PER_KIND * 3);
    assert!(d.records.windows(2).all(|w| w[0].line < w[1].line));
    assert_eq!(d.not_kept, 3 * (cycles - MAX_PER_KIND));
}

/// An `ERROR: out of memory` of process `pid` at `line` whose statement is `statement_bytes`
/// long.
fn oom_error(line: u64, pid: u32, statement_bytes: usize) -> PgRecord {
    PgRecord {
        line,
        pid: Some(pid),
        severity: Some(Severity::Error),
        message: "out of memory".into(),
        statement: Some(format!("SELECT '{}'", "x".repeat(statement_bytes))),
        event: Some(PgEvent::OutOfMemory {
            request_bytes: Some(1024),
            memory_context: None,
        }),
        ..PgRecord::default()
    }
}

fn death(line: u64, pid: u32) -> PgRecord {
    PgRecord {
        line,
        severity: Some(Severity::Log),
        message: format!("server process (PID {pid}) was terminated by signal 9: Killed"),
        event: Some(PgEvent::TerminatedBySignal {
            process: "server process".into(),
            pid,
            signal: 9,
            signal_name: "Killed".into(),
            query: Some("y".repeat(1 << 20)),
        }),
        ..PgRecord::default()
    }
}

#[test]
fn kept_texts_are_cut_and_counted() {
    let mut d = PgDigest::new(None);
    d.push(oom_error(1, 7, 1 << 20));
    d.push(death(2, 7));
    d.finish();
    assert_eq!(d.records.len(), 2);
    assert_eq!(d.texts_cut, 2, "the statement and the query");
    let statement = d.records[0].statement.as_deref().unwrap();
    assert!(statement.len() <= KEPT_TEXT_BYTES && statement.ends_with('…'));
    assert!(statement.starts_with("SELECT 'xxx"));
    assert!(d.held_bytes() < 4 * (KEPT_TEXT_BYTES + size_of::<PgRecord>() + 512));
    // The error before the death is kept with it, cut the same way.
    assert_eq!(d.before_death[&2].len(), 1);
    assert!(d.before_death[&2][0].statement.as_ref().unwrap().len() <= KEPT_TEXT_BYTES);
    assert_eq!((d.not_kept, d.bytes_reached), (0, false));
}

#[test]
fn records_past_the_bytes_are_counted_and_the_latest_crashes_still_kept() {
    let limits = DigestLimits {
        bytes: 256 << 10,
        ..DigestLimits::default()
    };
    let mut d = PgDigest::within(None, limits);
    let mut line = 0;
    // A log full of large errors, then a crash loop.
    for i in 0..1_000 {
        line += 1;
        d.push(oom_error(line, 10_000 + i, 4096));
    }
    let errors_kept = d.records.len();
    assert!(errors_kept > 10 && errors_kept < 1_000, "{errors_kept}");
    assert!(d.bytes_reached);
    for i in 0..300 {
        line += 1;
        d.push(oom_error(line, 20_000 + i, 100));
        line += 1;
        d.push(death(line, 20_000 + i));
    }
    d.finish();
    let deaths: Vec<&PgRecord> = d
        .records
        .iter()
        .filter(|r| matches!(r.event, Some(PgEvent::TerminatedBySignal { .. })))
        .collect();
    // The latest deaths are kept, each with the error before it, within a quarter.
    assert!(deaths.len() > 10, "{}", deaths.len());
    assert_eq!(deaths.last().unwrap().line, line);
    assert!(deaths.iter().all(|r| d.before_death.contains_key(&r.line)));
    assert_eq!(d.before_death.len(), deaths.len());
    assert!(
        d.held_bytes() <= limits.bytes + limits.bytes / 8,
        "{}",
        d.held_bytes()
    );
    let kept = d.records.len() as u64;
    assert_eq!(kept + d.not_kept, 1_600);
    assert!(d.records.windows(2).all(|w| w[0].line < w[1].line));
}
