//! Throughput of the perf reader, folder and profile on a large input made by repeating the
//! real captures in `fixtures/formats/perf` (call chains, no call chains, several events, a
//! tracepoint with call chains), about 32 MiB.
//!
//! `cargo bench -p pgmortem-parse --bench perf`

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pgmortem_parse::perf::{self, FoldOptions, Folder, Profile, ProfileOptions};

/// The integration tests' helpers, for their fixture reader.
#[path = "../tests/common/mod.rs"]
mod common;

fn fixture(name: &str) -> Vec<u8> {
    common::read_maybe_gzipped(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/formats/perf")
            .join(name),
    )
}

fn large_input() -> Vec<u8> {
    let pieces = [
        fixture("local-pg15-pgbench-a-g.txt"),
        fixture("local-pg15-pgbench-a-header.txt"),
        fixture("local-pg15-pgbench-multi-g.txt"),
        fixture("local-pg15-pgbench-sched-switch-g.txt.gz"),
    ];
    let mut input = Vec::new();
    while input.len() < 32 << 20 {
        for piece in &pieces {
            input.extend_from_slice(piece);
        }
    }
    input
}

fn bench(c: &mut Criterion) {
    let input = large_input();
    let mut group = c.benchmark_group("perf");
    group.throughput(Throughput::Bytes(input.len() as u64));
    group.sample_size(10);
    group.bench_function("parse", |b| {
        b.iter(|| {
            let mut frames = 0;
            for sample in perf::samples(black_box(&input)) {
                frames += sample.frames.len();
            }
            frames
        })
    });
    group.bench_function("parse_fold", |b| {
        b.iter(|| perf::collapse(black_box(&input), &FoldOptions::default()))
    });
    // Each sample parsed in full and folded, as before call chains were cached: what the
    // cache saves.
    group.bench_function("parse_fold_sample_by_sample", |b| {
        b.iter(|| {
            let mut folder = Folder::new(FoldOptions::default());
            for sample in perf::samples(black_box(&input)) {
                folder.add(&sample);
            }
            folder.render()
        })
    });
    group.bench_function("parse_fold_2_threads", |b| {
        b.iter(|| {
            let mut folder = Folder::new(FoldOptions::default());
            folder.add_input(black_box(&input), 2);
            folder.render()
        })
    });
    group.bench_function("profile", |b| {
        b.iter(|| Profile::from_input(black_box(&input), &ProfileOptions::default()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
