//! Kernel-log throughput over a ≥100 MB log built in memory from the real samples: this
//! machine's boot log as noise, with real OOM reports (memcg kills of PostgreSQL backends and
//! of test programs) mixed in every few thousand lines.
//!
//! `cargo bench -p pgmortem-parse --bench kernel`

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pgmortem_parse::kernel::{self, KernelOptions};

const TARGET_BYTES: usize = 100 * 1024 * 1024;
/// Noise lines between two OOM reports.
const NOISE_RUN: usize = 3000;

fn fixture(relative: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(relative);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Boot noise, and whole OOM-report windows, as lines.
fn build_log() -> Vec<u8> {
    let noise = fixture("formats/kernel/local-boot-dmesg.txt");
    let noise: Vec<&[u8]> = noise.split_inclusive(|b| *b == b'\n').collect();
    let reports: Vec<Vec<u8>> = [
        "incidents/pg15-memcg-oom-sort/dmesg.txt",
        "incidents/pg15-memcg-oom-pidns/dmesg.txt",
        "formats/kernel/local-dmesg-raw.txt",
    ]
    .iter()
    .map(|p| fixture(p))
    .collect();
    let mut out = Vec::with_capacity(TARGET_BYTES + (1 << 20));
    let mut round = 0usize;
    while out.len() < TARGET_BYTES {
        for i in 0..NOISE_RUN {
            out.extend_from_slice(noise[(round * 7 + i) % noise.len()]);
        }
        out.extend_from_slice(&reports[round % reports.len()]);
        round += 1;
    }
    out
}

fn bench(c: &mut Criterion) {
    let log = build_log();
    let options = KernelOptions::default();
    let mut group = c.benchmark_group("kernel");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(log.len() as u64));
    group.bench_function("split_lines", |b| {
        b.iter(|| {
            kernel::BlockLines::new(black_box(&log))
                .map(|l| l.text.len())
                .sum::<usize>()
        })
    });
    group.bench_function("line_forms", |b| {
        b.iter(|| {
            let mut sum = 0usize;
            for line in kernel::BlockLines::new(black_box(&log)) {
                let parsed = kernel::parse_line(&line.text, line.number, &options);
                sum += parsed.message.len() + parsed.form as usize;
            }
            sum
        })
    });
    group.bench_function("parse", |b| {
        b.iter(|| kernel::parse(black_box(&log), &options).records.len())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
