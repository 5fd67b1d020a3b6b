use std::path::PathBuf;

use super::*;
use crate::pglog::{PgLogFormat, parse};

fn fixtures() -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/pglog");
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e != "md"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    assert!(out.len() >= 20, "fixtures missing: {}", out.len());
    out
}

/// The log through [`ParallelParser`] in blocks of `block_bytes` (cut after a newline) and
/// chunks of `chunk_bytes`.
fn parallel(
    input: &[u8],
    options: &PgLogOptions,
    threads: usize,
    block_bytes: usize,
    chunk_bytes: usize,
) -> PgLog {
    let mut parser = ParallelParser::new(options.clone(), threads, chunk_bytes);
    let mut records = Vec::new();
    let mut rest = input;
    while !rest.is_empty() {
        let cut = if rest.len() <= block_bytes {
            rest.len()
        } else {
            memchr::memchr(b'\n', &rest[block_bytes..]).map_or(rest.len(), |i| block_bytes + i + 1)
        };
        parser
            .feed(&rest[..cut], &|r| *r, &mut |r| records.push(r))
            .unwrap();
        rest = &rest[cut..];
    }
    let mut log = parser.finish(&|r| *r, &mut |r| records.push(r)).unwrap();
    log.records = records;
    log
}

fn assert_same(name: &str, sequential: &PgLog, parallel: &PgLog) {
    let a = serde_json::to_value(sequential).unwrap();
    let b = serde_json::to_value(parallel).unwrap();
    if a != b {
        let (ra, rb) = (&sequential.records, &parallel.records);
        let first = ra.iter().zip(rb).position(|(x, y)| x != y);
        panic!(
            "{name}: parallel differs: {} vs {} records, first differing record {first:?}: \
             {:?}\nvs {:?}\nstats {:?}\nvs {:?}",
            ra.len(),
            rb.len(),
            first.map(|i| &ra[i]),
            first.map(|i| &rb[i]),
            (
                sequential.continuation_lines,
                sequential.orphan_lines,
                &sequential.stats
            ),
            (
                parallel.continuation_lines,
                parallel.orphan_lines,
                &parallel.stats
            ),
        );
    }
}

#[test]
fn every_fixture_same_as_one_pass_at_many_cuts() {
    let options = PgLogOptions::default();
    for (name, input) in fixtures() {
        let sequential = parse(&input, &options).unwrap();
        for chunk in [1, 100, 1024, 4096] {
            for threads in [1, 2] {
                let got = parallel(&input, &options, threads, usize::MAX, chunk);
                assert_same(
                    &format!("{name} chunk {chunk} threads {threads}"),
                    &sequential,
                    &got,
                );
            }
            let got = parallel(&input, &options, 2, 3000, chunk);
            assert_same(
                &format!("{name} chunk {chunk} blocks 3000"),
                &sequential,
                &got,
            );
        }
        let got = parse_parallel(&input, &options, 2).unwrap();
        assert_same(&format!("{name} parse_parallel"), &sequential, &got);
    }
}

#[test]
fn fixtures_of_each_format_concatenated_same_as_one_pass() {
    let all = fixtures();
    for (ext, format) in [
        ("log", PgLogFormat::Stderr),
        ("csv", PgLogFormat::Csv),
        ("json", PgLogFormat::Json),
        ("syslog", PgLogFormat::Syslog),
    ] {
        let mut input = Vec::new();
        for _ in 0..3 {
            for (name, bytes) in &all {
                // The default-prefix English stderr logs share one prefix; the others would
                // only be unrecognised lines.
                let english = !name.contains("-de-")
                    && !name.contains("-es-")
                    && !name.contains("-fr-")
                    && !name.contains("-ja-")
                    && !name.contains("-ru-")
                    && !name.contains("-zh_CN-")
                    && !name.contains("debian");
                if name.ends_with(&format!(".{ext}")) && english {
                    input.extend_from_slice(bytes);
                }
            }
        }
        let options = PgLogOptions {
            format: Some(format),
            ..PgLogOptions::default()
        };
        let sequential = parse(&input, &options).unwrap();
        assert!(sequential.stats.records > 10, "{ext}");
        for chunk in [1024, 16 * 1024] {
            let got = parallel(&input, &options, 2, 50_000, chunk);
            assert_same(&format!("{ext} x3 chunk {chunk}"), &sequential, &got);
        }
    }
}

#[test]
fn a_detail_tab_line_and_dump_across_cuts() {
    // Interleaved processes: the DETAIL, STATEMENT and TAB lines of pid 1 come after records
    // of pid 2, so a cut between them must be joined; the dump before `out of memory`
    // likewise.
    let mut log = String::new();
    for i in 0..40 {
        log.push_str(&format!(
            "2026-11-21 17:57:13.{:03} UTC [1] ERROR:  relation \"t{i}\" does not exist\n",
            i % 1000
        ));
        log.push_str("2026-11-21 17:57:13.200 UTC [2] LOG:  checkpoint starting: time\n");
        log.push_str("2026-11-21 17:57:13.300 UTC [1] STATEMENT:  select *\n\tfrom t\n");
        log.push_str(
            "TopMemoryContext: 68704 total in 5 blocks; 2256 free (2 chunks); 66448 used\n",
        );
        log.push_str("Grand total: 68704 bytes in 5 blocks; 2256 free (2 chunks); 66448 used\n");
        log.push_str("2026-11-21 17:57:13.400 UTC [2] HINT:  a hint\n");
        log.push_str("2026-11-21 17:57:13.500 UTC [3] ERROR:  out of memory\n");
        log.push_str("2026-11-21 17:57:13.500 UTC [3] DETAIL:  Failed on request of size 8.\n");
        log.push_str("not a log line\n\n");
    }
    let options = PgLogOptions::default();
    let sequential = parse(log.as_bytes(), &options).unwrap();
    assert!(sequential.continuation_lines > 100);
    assert!(sequential.stats.unrecognized_lines >= 40);
    for chunk in [1, 50, 200, 1024] {
        for block in [500, 5000, usize::MAX] {
            let got = parallel(log.as_bytes(), &options, 2, block, chunk);
            assert_same(&format!("chunk {chunk} block {block}"), &sequential, &got);
        }
    }
}

#[test]
fn a_language_seen_in_an_earlier_chunk_still_counts() {
    // The French severity word early on changes how later messages are read; the chunk
    // readers never see it, so their state never meets the one pass's and the join reads on.
    let mut log = String::from("2026-11-21 17:57:13.100 UTC [1] ERREUR:  mémoire épuisée\n");
    for i in 0..200 {
        log.push_str(&format!(
            "2026-11-21 17:57:13.200 UTC [{i}] LOG:  database system is ready to accept connections\n"
        ));
    }
    let options = PgLogOptions::default();
    let sequential = parse(log.as_bytes(), &options).unwrap();
    let got = parallel(log.as_bytes(), &options, 2, usize::MAX, 512);
    assert_same("french first", &sequential, &got);
}

#[test]
fn the_summary_so_far_counts_the_lines_joined() {
    let one = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/formats/pglog/pg15-events.log"),
    )
    .unwrap();
    // Enough lines that the first half is past the lines format and prefix are chosen from.
    let input = one.repeat((4 << 20) / one.len() + 1);
    let whole = parse(&input, &PgLogOptions::default()).unwrap();
    let mut parser = ParallelParser::new(PgLogOptions::default(), 2, 4096);
    assert_eq!(parser.summary().stats.lines, 0);
    let half = memchr::memchr(b'\n', &input[input.len() / 2..]).unwrap() + input.len() / 2 + 1;
    let mut records = 0;
    parser
        .feed(&input[..half], &|_| (), &mut |()| records += 1)
        .unwrap();
    let so_far = parser.summary();
    assert_eq!(so_far.prefix, whole.prefix);
    assert!(so_far.stats.lines > 0 && so_far.stats.lines < whole.stats.lines);
    parser
        .feed(&input[half..], &|_| (), &mut |()| records += 1)
        .unwrap();
    let finished = parser.finish(&|_| (), &mut |()| records += 1).unwrap();
    assert_eq!(finished.stats, whole.stats);
    assert_eq!(records, whole.records.len());
}
