//! PostgreSQL-log throughput on realistic logs (benches/realistic/mod.rs: real records of
//! fixtures/ in the mix measured from them, or real captures end to end), 256 MiB of each
//! built in memory, one at a time:
//!
//! - `realistic_prefix/NAME_{1,2}_threads`: stderr with each prefix of
//!   [`realistic::PREFIXES`] (Debian's, RHEL's, pgBadger's, RDS's, `%e %c %l`, `%x %v`),
//!   read by the parallel reader the `pgmortem parse pglog --stats` command uses, records
//!   counted;
//! - `realistic_format/{csvlog,jsonlog}`: the same records as csvlog and jsonlog, one thread;
//! - `realistic_wrapper/NAME`: the Debian-prefixed stderr lines in each wrapper, one thread;
//! - `realistic_json_output/debian_{1,2}_threads`: every record written as a JSON line
//!   (`pgmortem parse pglog`), throughput in bytes of log read;
//! - `realistic_captures/CLASS`: real captures of each prefix class end to end, one thread.
//!
//! `cargo bench -p pgmortem-parse --bench pglog_realistic -- --warm-up-time 1 --measurement-time 4`
//! (about 1 GB of memory; a filter such as `realistic_prefix` runs one group, and builds
//! only its inputs).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "realistic/mod.rs"]
#[allow(missing_docs)]
mod realistic;

/// The allocator the `pgmortem` binary ships (cli/src/main.rs), so the figures are the tool's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use pgmortem_parse::pglog::{self, ParallelParser, PgLogOptions};

/// Bytes of each input.
const BYTES: usize = 256 << 20;

/// Records of `log` read by the parallel reader on `threads` threads, in 1 MiB chunks (the
/// CLI's reading of a file); panics when a line was not recognised, so a bench never measures
/// a reader that gave up on the input.
fn count_parallel(log: &[u8], threads: usize) -> usize {
    let mut parser = ParallelParser::new(PgLogOptions::default(), threads, 1 << 20);
    let mut n = 0usize;
    let map = |r: Box<pglog::PgRecord>| r.event.is_some();
    let mut sink = |_: bool| n += 1;
    parser.feed(log, &map, &mut sink).expect("read");
    let summary = parser.finish(&map, &mut sink).expect("read");
    assert_eq!(
        summary.stats.unrecognized_lines, 0,
        "unrecognised lines: {:?}",
        summary.stats.unrecognized_examples
    );
    n
}

/// Whether the criterion command line names a filter that `name` cannot match (so the input
/// of a group left out is not built).
fn skipped(name: &str) -> bool {
    // Criterion's options that take a value (the value is not a filter).
    const VALUED: &[&str] = &[
        "--warm-up-time",
        "--measurement-time",
        "--sample-size",
        "--profile-time",
        "--save-baseline",
        "--baseline",
        "--load-baseline",
        "--nresamples",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--color",
        "--format",
        "--plotting-backend",
        "--output-format",
    ];
    let mut filters = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if VALUED.contains(&arg.as_str()) {
            args.next();
        } else if !arg.starts_with('-') {
            filters.push(arg);
        }
    }
    !filters.is_empty() && !filters.iter().any(|f| name.contains(f.as_str()))
}

fn bench(c: &mut Criterion) {
    let corpus = realistic::Corpus::load();
    let generate = |prefix: &str, format| {
        realistic::generate(
            &corpus,
            &realistic::Options {
                prefix: prefix.into(),
                format,
                size: BYTES,
                ..realistic::Options::default()
            },
        )
    };
    let mut group = c.benchmark_group("realistic_prefix");
    group.sample_size(10);
    for (name, prefix) in realistic::PREFIXES {
        if skipped(&format!("realistic_prefix/{name}_")) {
            continue;
        }
        let log = generate(prefix, realistic::Format::Stderr);
        count_parallel(&log, 1);
        group.throughput(Throughput::Bytes(log.len() as u64));
        for threads in [1, 2] {
            group.bench_function(format!("{name}_{threads}_threads"), |b| {
                b.iter(|| black_box(count_parallel(black_box(&log), threads)))
            });
        }
    }
    group.finish();

    let debian = realistic::prefix_named("debian");
    for (group_name, formats) in [
        ("realistic_format", &realistic::FORMATS[1..3]),
        ("realistic_wrapper", &realistic::FORMATS[3..]),
    ] {
        let mut group = c.benchmark_group(group_name);
        group.sample_size(10);
        for (name, format) in formats {
            if skipped(&format!("{group_name}/{name}")) {
                continue;
            }
            let log = generate(debian, *format);
            count_parallel(&log, 1);
            group.throughput(Throughput::Bytes(log.len() as u64));
            group.bench_function(*name, |b| {
                b.iter(|| black_box(count_parallel(black_box(&log), 1)))
            });
        }
        group.finish();
    }

    let mut group = c.benchmark_group("realistic_json_output");
    group.sample_size(10);
    if !skipped("realistic_json_output/debian_") {
        let log = generate(debian, realistic::Format::Stderr);
        group.throughput(Throughput::Bytes(log.len() as u64));
        for threads in [1, 2] {
            group.bench_function(format!("debian_{threads}_threads"), |b| {
                b.iter(|| {
                    let mut parser = ParallelParser::new(PgLogOptions::default(), threads, 1 << 20);
                    let mut written = 0usize;
                    let map = |r: Box<pglog::PgRecord>| {
                        let mut line = Vec::with_capacity(768);
                        pglog::write_json(&mut line, &r);
                        line.push(b'\n');
                        line
                    };
                    let mut sink = |line: Vec<u8>| written += line.len();
                    parser.feed(black_box(&log), &map, &mut sink).unwrap();
                    parser.finish(&map, &mut sink).unwrap();
                    black_box(written)
                })
            });
        }
    }
    group.finish();

    let mut group = c.benchmark_group("realistic_captures");
    group.sample_size(10);
    for (class, files) in realistic::CAPTURES {
        if skipped(&format!("realistic_captures/{class}")) {
            continue;
        }
        let log = realistic::concatenated(files, BYTES);
        count_parallel(&log, 1);
        group.throughput(Throughput::Bytes(log.len() as u64));
        group.bench_function(*class, |b| {
            b.iter(|| black_box(count_parallel(black_box(&log), 1)))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
