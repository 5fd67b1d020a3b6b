//! Record assembly of the PostgreSQL log parser: DETAIL attachment, TAB continuation, orphans,
//! the MemoryContextStats dump, prefix choice and bad bytes.

use pgmortem_parse::pglog::{self, PgEvent, PgLog, PgLogError, PgLogOptions, Severity};

mod common;

fn parse(text: &str) -> PgLog {
    pglog::parse(text.as_bytes(), &PgLogOptions::default()).unwrap()
}

#[test]
fn detail_of_the_same_pid_attaches_to_the_crash_line() {
    let log = parse(
        "2026-11-21 17:08:44.123 UTC [100] LOG:  server process (PID 205) was terminated by signal 9: Killed\n\
         2026-11-21 17:08:44.123 UTC [100] DETAIL:  Failed process was running: select pg_sleep(600)\n\
         2026-11-21 17:08:44.124 UTC [100] LOG:  terminating any other active server processes\n",
    );
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.continuation_lines, 1);
    let crash = &log.records[0];
    assert_eq!((crash.line, crash.end_line), (1, 2));
    assert_eq!(
        crash.detail.as_deref(),
        Some("Failed process was running: select pg_sleep(600)")
    );
    assert_eq!(
        crash.event,
        Some(PgEvent::TerminatedBySignal {
            process: "server process".into(),
            pid: 205,
            signal: 9,
            signal_name: "Killed".into(),
            query: Some("select pg_sleep(600)".into()),
        })
    );
    assert_eq!(
        log.records[1].event,
        Some(PgEvent::TerminatingOtherProcesses)
    );
    assert_eq!(log.stats.unrecognized_lines, 0);
}

#[test]
fn interleaved_processes_keep_their_own_details() {
    let log = parse(
        "2026-11-21 17:08:44.100 UTC [201] ERROR:  relation \"nope\" does not exist at character 15\n\
         2026-11-21 17:08:44.100 UTC [202] LOG:  checkpoint starting: time\n\
         2026-11-21 17:08:44.101 UTC [201] STATEMENT:  select * from nope\n\
         2026-11-21 17:08:44.101 UTC [201] HINT:  Check the name.\n",
    );
    assert_eq!(log.records.len(), 2);
    assert_eq!(
        log.records[0].statement.as_deref(),
        Some("select * from nope")
    );
    assert_eq!(log.records[0].hint.as_deref(), Some("Check the name."));
    assert_eq!(log.records[0].end_line, 4);
    assert_eq!(log.records[1].statement, None);
    assert_eq!(log.records[0].severity, Some(Severity::Error));
}

#[test]
fn tab_lines_continue_the_last_part() {
    let log = parse(
        "2026-11-21 17:08:44.100 UTC [201] ERROR:  syntax error at or near \"fro\"\n\
         2026-11-21 17:08:44.100 UTC [201] STATEMENT:  select 1\n\
         \tfro t\n\
         \t\n\
         2026-11-21 17:08:44.200 UTC [100] LOG:  multi\n\
         \tline message\n",
    );
    assert_eq!(
        log.records[0].statement.as_deref(),
        Some("select 1\nfro t\n")
    );
    assert_eq!(log.records[0].end_line, 4);
    assert_eq!(log.records[1].message, "multi\nline message");
    assert_eq!(log.continuation_lines, 4);
}

#[test]
fn a_detail_without_parent_becomes_an_orphan_record() {
    let log = parse(
        "2026-11-21 17:08:44.100 UTC [300] DETAIL:  nobody before me\n\
         2026-11-21 17:08:44.100 UTC [301] LOG:  x\n\
         2026-11-21 17:08:44.100 UTC [301] DETAIL:  first\n\
         2026-11-21 17:08:44.100 UTC [301] DETAIL:  second\n",
    );
    assert_eq!(log.records.len(), 3);
    assert_eq!(log.orphan_lines, 2);
    assert_eq!(log.records[0].severity, None);
    assert_eq!(log.records[0].detail.as_deref(), Some("nobody before me"));
    assert_eq!(log.records[1].detail.as_deref(), Some("first"));
    assert_eq!(log.records[2].detail.as_deref(), Some("second"));
    assert_eq!(log.records[2].pid, Some(301));
}

#[test]
fn memory_context_dump_joins_the_out_of_memory_error() {
    let log = parse(
        "2026-11-21 17:08:44.100 UTC [400] LOG:  statement: select big()\n\
         TopMemoryContext: 97696 total in 5 blocks; 14288 free (11 chunks); 83408 used\n\
         \x20 ExprContext: 600000104 total in 2 blocks; 2984 free (0 chunks); 599997120 used\n\
         \x20 PortalContext: 1024 total in 1 blocks; 592 free (0 chunks); 432 used: <unnamed>\n\
         \x20 12 more child contexts containing 45056 total in 7 blocks; 18872 free (15 chunks); 26184 used\n\
         Grand total: 600321456 bytes in 245 blocks; 123456 free (67 chunks); 600198000 used\n\
         2026-11-21 17:08:44.300 UTC [400] ERROR:  out of memory\n\
         2026-11-21 17:08:44.300 UTC [400] DETAIL:  Failed on request of size 600000004 in memory context \"ExprContext\".\n",
    );
    assert_eq!(log.memory_context_lines, 5);
    assert_eq!(log.stats.unrecognized_lines, 0);
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.records[0].message, "statement: select big()");
    assert_eq!(log.records[0].memory_context_dump, None);
    let oom = &log.records[1];
    assert_eq!(
        oom.event,
        Some(PgEvent::OutOfMemory {
            request_bytes: Some(600000004),
            memory_context: Some("ExprContext".into())
        })
    );
    let dump = oom.memory_context_dump.as_ref().unwrap();
    assert_eq!((dump.line, dump.end_line), (2, 6));
    assert_eq!(dump.contexts.len(), 4);
    assert_eq!(dump.contexts[1].name.as_deref(), Some("ExprContext"));
    assert_eq!(dump.contexts[1].depth, 1);
    assert_eq!(dump.contexts[1].totals.total_bytes, 600000104);
    assert_eq!(dump.contexts[2].identifier.as_deref(), Some("<unnamed>"));
    assert_eq!(dump.contexts[3].more_children, Some(12));
    assert_eq!(dump.grand_total.unwrap().used_bytes, 600198000);
}

#[test]
fn a_dump_without_its_error_stays_a_record_of_its_own() {
    let log = parse(
        "TopMemoryContext: 97696 total in 5 blocks; 14288 free (11 chunks); 83408 used\n\
         Grand total: 97696 bytes in 5 blocks; 14288 free (11 chunks); 83408 used\n\
         2026-11-21 17:08:44.300 UTC [400] LOG:  checkpoint starting: time\n",
    );
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.records[0].severity, None);
    assert_eq!(log.records[0].line, 1);
    assert!(log.records[0].memory_context_dump.is_some());
    assert_eq!(log.records[1].memory_context_dump, None);
}

#[test]
fn pg_ctl_lines_are_other_programs_and_its_dots_do_not_hide_the_server_line() {
    let log = parse(
        "waiting for server to start....2026-11-21 17:08:44.100 UTC [500] LOG:  starting PostgreSQL 15.14 on x86_64-pc-linux-gnu\n\
         \ta TAB line after it\n\
         \n\
         2026-11-21 17:08:45.100 UTC [500] LOG:  database system is ready to accept connections\n\
         server started\n\
         \tstray TAB line\n",
    );
    assert_eq!(log.stats.lines, 6);
    // The server's first line after pg_ctl's dots is read; `server started` is pg_ctl's, and
    // the TAB line after it continues nothing.
    assert_eq!(log.other_program_lines, 1);
    assert_eq!(
        log.stats.unrecognized_examples,
        vec![(6, "\tstray TAB line".to_owned())]
    );
    assert_eq!(log.blank_lines, 1);
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.records[0].line, 1);
    assert_eq!(
        log.records[0].message,
        "starting PostgreSQL 15.14 on x86_64-pc-linux-gnu\na TAB line after it"
    );
    assert_eq!(log.records[1].event, Some(PgEvent::Ready));
}

#[test]
fn debian_prefix_is_chosen_when_session_lines_need_it() {
    let log = parse(
        "2026-11-21 17:08:44.100 UTC [500] LOG:  database system is ready to accept connections\n\
         2026-11-21 17:08:45.100 UTC [501] postgres@bench ERROR:  division by zero\n\
         2026-11-21 17:08:45.100 UTC [501] postgres@bench STATEMENT:  select 1/0\n",
    );
    assert_eq!(log.prefix, "%m [%p] %q%u@%d ");
    assert_eq!(log.records.len(), 2);
    assert_eq!(log.records[1].user.as_deref(), Some("postgres"));
    assert_eq!(log.records[1].database.as_deref(), Some("bench"));
    assert_eq!(log.records[1].statement.as_deref(), Some("select 1/0"));
    assert_eq!(
        parse("2026-11-21 17:08:44.100 UTC [500] LOG:  x\n").prefix,
        "%m [%p] "
    );
}

#[test]
fn a_given_prefix_is_used_and_bad_ones_are_errors() {
    let options = PgLogOptions {
        prefix: Some("%t [%p]: [%l-1] user=%u,db=%d ".into()),
        ..PgLogOptions::default()
    };
    let log = pglog::parse(
        b"2026-11-21 17:08:44 +03 [12]: [3-1] user=bob,db=shop LOG:  database system is ready to accept connections\n",
        &options,
    )
    .unwrap();
    let r = &log.records[0];
    assert_eq!(r.session_line, Some(3));
    assert_eq!(r.user.as_deref(), Some("bob"));
    assert_eq!(
        r.time.as_ref().unwrap().utc.unwrap().to_string(),
        "2026-11-21T14:08:44Z"
    );
    let options = PgLogOptions {
        prefix: Some("%m %y".into()),
        ..PgLogOptions::default()
    };
    assert!(matches!(
        pglog::parse(b"", &options),
        Err(PgLogError::InvalidPrefix { .. })
    ));
}

#[test]
fn bad_bytes_are_counted_never_fatal() {
    let mut input = b"2026-11-21 17:08:44.100 UTC [1] LOG:  caf\xe9 \0 nul\r\n".to_vec();
    input.extend_from_slice(b"2026-11-21 17:08:44.100 UTC [1] LOG:  ");
    input.extend(std::iter::repeat_n(b'x', 10 * 1024 * 1024));
    input.extend_from_slice(b"\n2026-11-21 17:08:44.100 UTC [1] LOG:  database system is rea");
    let log = pglog::parse(&input, &PgLogOptions::default()).unwrap();
    assert_eq!(log.stats.lines, 3);
    assert_eq!(log.stats.invalid_utf8_lines, 1);
    assert_eq!(log.stats.oversized_lines, 1);
    assert_eq!(log.records.len(), 3);
    assert_eq!(log.records[0].message, "caf\u{fffd} \0 nul");
    assert_eq!(
        log.records[1].message.len(),
        1024 * 1024 - "2026-11-21 17:08:44.100 UTC [1] LOG:  ".len()
    );
    assert_eq!(log.records[2].message, "database system is rea");
    assert_eq!(log.records[2].event, None);
}

#[test]
fn sniff_knows_postgres_from_kernel_logs() {
    let pg =
        b"2026-11-21 17:08:44.100 UTC [500] LOG:  database system is ready to accept connections\n\
               2026-11-21 17:08:45.100 UTC [501] postgres@bench ERROR:  division by zero\n";
    assert_eq!(pglog::sniff(pg), Some(1.0));
    let custom =
        b"<2026-11-21 17:08:44> {500} LOG:  database system is ready to accept connections\n";
    assert_eq!(pglog::sniff(custom), Some(0.5));
    assert_eq!(
        pglog::sniff(b"[ 1234.567890] Out of memory: Killed process 4242 (postgres)\n"),
        None
    );
    assert_eq!(
        pglog::sniff(b"Apr  5 18:24:23 host kernel: oom-kill:constraint=CONSTRAINT_NONE\n"),
        None
    );
    assert_eq!(pglog::sniff(b""), None);
    assert_eq!(pglog::sniff(b"\xff\xfe\0\0"), None);
}

/// Property: arbitrary bytes (random, and random mutations of real-looking lines) never panic
/// and every line is accounted for.
#[test]
fn arbitrary_bytes_never_panic() {
    let seeds: &[&[u8]] = &[
        b"2026-11-21 17:08:44.123 UTC [24797] LOG:  server process (PID 205) was terminated by signal 9: Killed\n",
        b"2026-11-21 17:08:44.123 UTC [24797] DETAIL:  Failed process was running: select\n\tfrom t\n",
        b"2026-11-21 17:08:44.123 UTC [1] postgres@db LOG:  redo done at 0/2C31F28 system usage: elapsed: 0.12 s\n",
        b"TopMemoryContext: 97696 total in 5 blocks; 14288 free (11 chunks); 83408 used\n",
    ];
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..3000 {
        let mut input = Vec::new();
        for _ in 0..(next() % 6) {
            let seed = seeds[(next() % seeds.len() as u64) as usize];
            input.extend_from_slice(seed);
        }
        let edits = next() % 8;
        for _ in 0..edits {
            if input.is_empty() || next() % 4 == 0 {
                input.push(next() as u8);
            } else {
                let at = (next() % input.len() as u64) as usize;
                match next() % 3 {
                    0 => input[at] = next() as u8,
                    1 => input.truncate(at),
                    _ => {
                        input.remove(at);
                    }
                }
            }
        }
        if round % 10 == 0 {
            input = (0..next() % 300).map(|_| next() as u8).collect();
        }
        for prefix in [None, Some("%m [%p] %q%u@%d "), Some("%u%d%a%r%p")] {
            let options = PgLogOptions {
                prefix: prefix.map(str::to_owned),
                format: Some(pglog::PgLogFormat::Stderr),
                max_line_bytes: 64,
                max_record_bytes: 256,

                wrapper: None,
            };
            let log = match pglog::parse(&input, &options) {
                Ok(log) => log,
                Err(PgLogError::PrefixMatchesNothing { .. }) => continue,
                Err(e) => panic!("{e}"),
            };
            let accounted = log.records.iter().filter(|r| r.severity.is_some()).count() as u64
                + log.continuation_lines
                + log.orphan_lines
                + log.memory_context_lines
                + log.blank_lines
                + log.stats.unrecognized_lines;
            assert_eq!(accounted, log.stats.lines, "input {input:?}");
        }
        let _ = pglog::sniff(&input);
        for format in ["csv", "json", "syslog"] {
            let options = PgLogOptions {
                format: Some(format.parse().unwrap()),
                ..PgLogOptions::default()
            };
            let log = pglog::parse(&input, &options).unwrap();
            assert!(log.stats.records <= log.stats.lines);
        }
    }
}

#[test]
fn a_fifty_megabyte_statement_is_cut_and_counted() {
    // One line: cut at max_line_bytes (1 MiB), counted, the record kept.
    let mut one_line = b"2026-11-21 17:08:44.100 UTC [7] ERROR:  syntax error\n2026-11-21 17:08:44.100 UTC [7] STATEMENT:  SELECT '".to_vec();
    one_line.extend(std::iter::repeat_n(b'x', 50 << 20));
    one_line.extend_from_slice(b"'\n2026-11-21 17:08:45.000 UTC [8] LOG:  database system is ready to accept connections\n");
    let log = pglog::parse(&one_line, &PgLogOptions::default()).unwrap();
    assert_eq!(log.stats.oversized_lines, 1);
    assert_eq!(log.records.len(), 2);
    assert_eq!(
        log.records[0].statement.as_ref().unwrap().len(),
        (1 << 20) - 44
    );
    assert_eq!(log.records[1].event, Some(PgEvent::Ready));
    // Many TAB lines: the statement grows up to max_record_bytes, the rest is counted.
    let mut many = b"2026-11-21 17:08:44.100 UTC [7] STATEMENT:  SELECT 1\n".to_vec();
    let tab_line = [b"\t".as_slice(), &[b'y'; 1000], b"\n"].concat();
    for _ in 0..(50 << 10) {
        many.extend_from_slice(&tab_line);
    }
    let options = PgLogOptions {
        max_record_bytes: 8 << 20,
        ..PgLogOptions::default()
    };
    let log = pglog::parse(&many, &options).unwrap();
    assert_eq!(log.records.len(), 1);
    let statement = log.records[0].statement.as_ref().unwrap();
    assert!(statement.len() < 8 << 20 && statement.len() > (8 << 20) - 2000);
    assert!(log.stats.oversized_lines > 40_000);
    assert_eq!(log.stats.lines, (50 << 10) + 1);
}

#[test]
fn the_reader_gives_the_same_records_in_any_chunks() {
    let bytes = common::pglog_fixture("pg15-events.log");
    let whole = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
    for size in [1, 7, 100, 4096, 1 << 20] {
        let (records, summary) = common::read_in_chunks(&bytes, size, &PgLogOptions::default());
        assert_eq!(records, whole.records, "chunks of {size}");
        assert_eq!(summary.stats, whole.stats);
        assert_eq!(summary.continuation_lines, whole.continuation_lines);
    }
}

#[test]
fn the_reader_reads_ahead_when_records_are_not_taken() {
    // 20 MiB pushed in 1 MiB chunks with no record taken in between: past 16 MiB unread the
    // reader reads lines itself (bounded memory); the records and counts are the same.
    let one = common::pglog_fixture("pg15-events.log");
    let bytes = one.repeat((20 << 20) / one.len() + 1);
    let whole = pglog::parse(&bytes, &PgLogOptions::default()).unwrap();
    let mut reader = pglog::PgLogReader::new(PgLogOptions::default());
    for chunk in bytes.chunks(1 << 20) {
        reader.push(chunk).unwrap();
    }
    reader.finish().unwrap();
    let records: Vec<_> = std::iter::from_fn(|| reader.next_record()).collect();
    assert_eq!(records.len(), whole.records.len());
    assert!(records.iter().zip(&whole.records).all(|(a, b)| **a == *b));
    assert_eq!(reader.summary().stats, whole.stats);
}

#[test]
fn an_over_long_line_in_tiny_chunks_is_cut_once() {
    let options = PgLogOptions {
        max_line_bytes: 4096,
        ..PgLogOptions::default()
    };
    let mut bytes = b"2026-11-21 17:08:44.123 UTC [42] LOG:  before\n".to_vec();
    bytes.extend(b"2026-11-21 17:08:44.124 UTC [42] ERROR:  ");
    bytes.extend(std::iter::repeat_n(b'x', 100_000));
    bytes.extend(b"\n2026-11-21 17:08:44.125 UTC [42] LOG:  after\n");
    let whole = pglog::parse(&bytes, &options).unwrap();
    for size in [1, 3, 5000] {
        let (records, summary) = common::read_in_chunks(&bytes, size, &options);
        assert_eq!(records, whole.records, "chunks of {size}");
        assert_eq!(summary.stats, whole.stats, "chunks of {size}");
    }
    assert_eq!(whole.stats.oversized_lines, 1);
    assert_eq!(whole.records.len(), 3);
    assert!(whole.records[1].message.len() < 4096);
}

#[test]
fn bad_csv_and_json_lines_are_counted() {
    let csv = common::pglog_fixture("edge-csv-broken-quote.csv");
    let log = pglog::parse(&csv, &PgLogOptions::default()).unwrap();
    assert_eq!(log.format, pglog::PgLogFormat::Csv);
    // The unclosed row (2 lines) ends at the next row; the short row and the cut last row
    // are counted too.
    assert_eq!(log.broken_rows, 2);
    assert_eq!(log.stats.unrecognized_lines, 4);
    assert_eq!(log.records.len(), 6);
    assert!(matches!(
        log.records[2].event,
        Some(PgEvent::TerminatedBySignal { ref query, .. }) if query.as_deref() == Some("SELECT pg_sleep(600)")
    ));
    let json = common::pglog_fixture("edge-json-bad-lines.json");
    let log = pglog::parse(&json, &PgLogOptions::default()).unwrap();
    assert_eq!(log.format, pglog::PgLogFormat::Json);
    assert_eq!(log.stats.unrecognized_lines, 3);
    assert_eq!(log.blank_lines, 1);
    assert_eq!(log.records.len(), 3);
}

#[test]
fn a_record_split_across_rotated_files_is_counted_not_lost() {
    // logrotate cut the file between the crash line and its DETAIL: the first file ends with
    // the record, the next one starts with the DETAIL and its TAB line.
    let first = parse(
        "2026-11-21 17:08:44.123 UTC [100] LOG:  server process (PID 205) was terminated by signal 9: Killed\n",
    );
    let second = parse(
        "2026-11-21 17:08:44.123 UTC [100] DETAIL:  Failed process was running: SELECT 1\n\
         \t  FROM t\n\
         2026-11-21 17:08:44.124 UTC [100] LOG:  terminating any other active server processes\n",
    );
    assert!(matches!(
        first.records[0].event,
        Some(PgEvent::TerminatedBySignal { .. })
    ));
    // The DETAIL has no parent in its file: a record of its own (severity null), counted,
    // with its TAB line, so its text is kept and nothing is unrecognised.
    assert_eq!(second.orphan_lines, 1);
    assert_eq!(second.stats.unrecognized_lines, 0);
    let orphan = &second.records[0];
    assert!(orphan.severity.is_none());
    assert_eq!(
        orphan.detail.as_deref(),
        Some("Failed process was running: SELECT 1\n  FROM t")
    );
    assert_eq!(second.records.len(), 2);
}
