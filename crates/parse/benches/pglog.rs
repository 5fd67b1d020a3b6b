//! PostgreSQL-log throughput over a 1 GiB stderr log built in memory from real captured logs
//! (the English `%m [%p] ` fixtures of PostgreSQL 10, 13, 15 and 18, whole, one after another:
//! crash cycles, checkpoints, temp files, errors with their STATEMENT and TAB-continued queries,
//! a MemoryContextStats dump), and the same through csvlog and jsonlog (1 GiB each).
//! `stderr_parse_to_vec` keeps every record, so it reads the first 100 MiB only.
//!
//! The `pglog_parallel` group reads the same stderr log with `pglog::parse_parallel`-style
//! chunking ([`ParallelParser`], 1 MiB chunks) on 1 and 2 threads, records only counted, then
//! each record written as a JSON line (`pgmortem parse pglog`).
//!
//! `cargo bench -p pgmortem-parse --bench pglog -- --warm-up-time 1 --measurement-time 5`
//! (about 4 GB of memory: the three logs, and the records of the 100 MiB kept).

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// The allocator the `pgmortem` binary ships (cli/src/main.rs), so the figures are the tool's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;
use pgmortem_parse::pglog::{self, ParallelParser, PgLogOptions, PgLogReader};

const TARGET_BYTES: usize = 1 << 30;

/// What `stderr_parse_to_vec` reads (it keeps every record in memory).
const TO_VEC_BYTES: usize = 100 << 20;

fn fixture(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/formats/pglog")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The files, repeated in turn until `TARGET_BYTES`.
fn build(files: &[&str]) -> Vec<u8> {
    let parts: Vec<Vec<u8>> = files.iter().map(|f| fixture(f)).collect();
    let mut out = Vec::with_capacity(TARGET_BYTES + (1 << 20));
    let mut i = 0;
    while out.len() < TARGET_BYTES {
        out.extend_from_slice(&parts[i % parts.len()]);
        i += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let stderr = build(&[
        "pg15-events.log",
        "pg15-backend-sigkill.log",
        "pg15-backend-sigsegv.log",
        "pg13-backend-sigkill.log",
        "pg13-parallel-worker-sigkill.log",
        "pg18-backend-sigkill.log",
        "pg10-parallel-worker-sigkill.log",
    ]);
    let options = PgLogOptions::default();
    let mut group = c.benchmark_group("pglog");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(stderr.len() as u64));
    group.bench_function("stderr_records_iterator", |b| {
        b.iter(|| {
            let n = pglog::records(black_box(&stderr), &options)
                .unwrap()
                .filter(|r| r.event.is_some())
                .count();
            black_box(n)
        })
    });
    // The first 100 MiB, cut after a line.
    let head = &stderr[..=memchr::memrchr(b'\n', &stderr[..TO_VEC_BYTES]).unwrap()];
    group.throughput(Throughput::Bytes(head.len() as u64));
    group.bench_function("stderr_parse_to_vec", |b| {
        b.iter(|| {
            black_box(
                pglog::parse(black_box(head), &options)
                    .unwrap()
                    .records
                    .len(),
            )
        })
    });
    group.throughput(Throughput::Bytes(stderr.len() as u64));
    group.bench_function("stderr_reader_1mib_chunks", |b| {
        b.iter(|| {
            let mut reader = PgLogReader::new(options.clone());
            let mut n = 0usize;
            for chunk in stderr.chunks(1 << 20) {
                reader.push(chunk).unwrap();
                while reader.next_record().is_some() {
                    n += 1;
                }
            }
            reader.finish().unwrap();
            while reader.next_record().is_some() {
                n += 1;
            }
            black_box(n)
        })
    });
    for (name, file) in [
        ("csvlog", "pg15-events.csv"),
        ("jsonlog", "pg15-events.json"),
    ] {
        let log = build(&[file]);
        group.throughput(Throughput::Bytes(log.len() as u64));
        group.bench_function(name, |b| {
            b.iter(|| black_box(pglog::records(black_box(&log), &options).unwrap().count()))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("pglog_parallel");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(stderr.len() as u64));
    for threads in [1, 2] {
        group.bench_function(format!("stderr_{threads}_threads"), |b| {
            b.iter(|| {
                let mut parser = ParallelParser::new(options.clone(), threads, 1 << 20);
                let mut n = 0usize;
                let map = |r: Box<pglog::PgRecord>| r.event.is_some();
                let mut sink = |e: bool| n += usize::from(e);
                parser.feed(black_box(&stderr), &map, &mut sink).unwrap();
                parser.finish(&map, &mut sink).unwrap();
                black_box(n)
            })
        });
    }
    // `pgmortem parse pglog`: every record written as a JSON line (pglog::write_json) on the
    // parsing threads, the lines gathered in order. Throughput counts the log's bytes.
    for threads in [1, 2] {
        group.bench_function(format!("stderr_json_lines_{threads}_threads"), |b| {
            b.iter(|| {
                let mut parser = ParallelParser::new(options.clone(), threads, 1 << 20);
                let mut written = 0usize;
                let map = |r: Box<pglog::PgRecord>| {
                    let mut line = Vec::with_capacity(768);
                    pglog::write_json(&mut line, &r);
                    line.push(b'\n');
                    line
                };
                let mut sink = |line: Vec<u8>| written += line.len();
                parser.feed(black_box(&stderr), &map, &mut sink).unwrap();
                parser.finish(&map, &mut sink).unwrap();
                black_box(written)
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
