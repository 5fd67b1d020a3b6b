//! `pgmortem::analyze` of a large bundle made from real captures (examples/big_bundle): a
//! directory and the same files in a `.tar.gz`, every log read whole. Throughput is the
//! server log's bytes per second. The bundle is generated in a temporary directory at start
//! (1 GiB of log by default, `PGMORTEM_BENCH_LOG_BYTES` to change it): nothing big is
//! committed. Run by hand:
//!
//! `cargo bench -p pgmortem --bench analyze -- --warm-up-time 1 --measurement-time 60`

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pgmortem::DiagnoseOptions;

/// The allocator the `pgmortem` binary ships (cli/src/main.rs), so the figures are the tool's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "../examples/big_bundle/generate.rs"]
mod generate;

fn bench_analyze(c: &mut Criterion) {
    let log_bytes = std::env::var("PGMORTEM_BENCH_LOG_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1u64 << 30);
    let scratch = tempfile::tempdir().unwrap();
    let (dir, tgz) = generate::generate(&scratch.path().join("bundle"), log_bytes).unwrap();
    let log = std::fs::metadata(dir.join("postgres/server.log"))
        .unwrap()
        .len();
    let options = DiagnoseOptions::default();
    let mut group = c.benchmark_group("analyze");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(log));
    for (name, path) in [("directory", &dir), ("tar.gz", &tgz)] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let report = pgmortem::analyze(path, &options).unwrap();
                assert!(
                    report
                        .caveats
                        .iter()
                        .all(|c| c.kind != "log_not_read_whole")
                );
                report
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_analyze);
criterion_main!(benches);
