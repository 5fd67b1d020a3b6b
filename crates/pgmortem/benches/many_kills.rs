//! `pgmortem::analyze` of a bundle of many OOM kills, each tied to its crash line: correlation,
//! clock anchors and rules must stay n log n in kills and crashes, and memory bounded by the
//! limits on what is kept. The kernel log and the server
//! log are written in a temporary directory at start (`PGMORTEM_BENCH_KILLS`, default 100 000
//! of each). Run by hand:
//!
//! `cargo bench -p pgmortem --bench many_kills -- --warm-up-time 1 --measurement-time 30`

use std::fmt::Write as _;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pgmortem::DiagnoseOptions;

/// The allocator the `pgmortem` binary ships (cli/src/main.rs), so the figures are the tool's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `kills` memcg OOM kills two seconds apart (the three kernel lines correlation reads), each
/// followed 30 ms later by PostgreSQL's `terminated by signal 9` line for the same PID.
fn write_bundle(dir: &std::path::Path, kills: u64) {
    let (mut kernel, mut postgres) = (String::new(), String::new());
    let boot = jiff::Timestamp::from_second(1_795_280_400).unwrap(); // 2026-11-21T17:00:00Z
    for i in 0..kills {
        let t = 100.0 + i as f64 * 2.0;
        let pid = 100_000 + i;
        let _ = writeln!(
            kernel,
            "[{t:12.6}] postgres invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=0"
        );
        let _ = writeln!(
            kernel,
            "[{:12.6}] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0,oom_memcg=/db,task_memcg=/db,task=postgres,pid={pid},uid=1002",
            t + 0.0001
        );
        let _ = writeln!(
            kernel,
            "[{:12.6}] Memory cgroup out of memory: Killed process {pid} (postgres) total-vm:1000kB, anon-rss:500kB, file-rss:0kB, shmem-rss:0kB, UID:1002 pgtables:100kB oom_score_adj:0",
            t + 0.0002
        );
        let at = boot + jiff::SignedDuration::from_secs_f64(t + 0.03);
        let _ = writeln!(
            postgres,
            "{} UTC [999] LOG:  server process (PID {pid}) was terminated by signal 9: Killed",
            at.strftime("%Y-%m-%d %H:%M:%S%.3f")
        );
    }
    std::fs::write(dir.join("dmesg.txt"), kernel).unwrap();
    std::fs::write(dir.join("postgresql.log"), postgres).unwrap();
}

fn bench_many_kills(c: &mut Criterion) {
    let kills = std::env::var("PGMORTEM_BENCH_KILLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000u64);
    let scratch = tempfile::tempdir().unwrap();
    write_bundle(scratch.path(), kills);
    let options = DiagnoseOptions {
        boot_time: Some(jiff::Timestamp::from_second(1_795_280_400).unwrap()),
        ..DiagnoseOptions::default()
    };
    let mut group = c.benchmark_group("many_kills");
    group.sample_size(10);
    group.throughput(Throughput::Elements(kills));
    group.bench_function("analyze", |b| {
        b.iter(|| {
            let report = pgmortem::analyze(scratch.path(), &options).unwrap();
            // Every kill is an incident, up to the latest 10 000 a report keeps (the kernel
            // log's last 20 000 OOM reports are read; the rest are counted, and said).
            assert_eq!(report.incidents.len() as u64, kills.min(10_000));
            report
        })
    });
    group.finish();
}

criterion_group!(benches, bench_many_kills);
criterion_main!(benches);
