//! Opening bundles: a .tar.zst and a .tar.gz holding a 32 MiB PostgreSQL log (a real
//! PostgreSQL 15 log repeated) and the real snapshots of the committed collected bundle, read
//! with the default options (the log, too big for memory, decompressed once into a temporary
//! file) and with room for the whole log in memory. Throughput is uncompressed bytes per
//! second. The bundles are generated in a temporary directory at start: nothing big is
//! committed.

use std::io::{Read, Write};
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pgmortem_bundle::{OpenOptions, open};

const LOG_BYTES: usize = 32 << 20;

fn repo(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel)
}

/// The committed collected bundle as a tar stream, its server log replaced by `LOG_BYTES` of
/// real log lines.
fn big_tar() -> Vec<u8> {
    let log = std::fs::read(repo(
        "fixtures/formats/pglog/pg15-debian-checkpointer-sigkill.log",
    ))
    .unwrap();
    let mut big = Vec::with_capacity(LOG_BYTES + log.len());
    while big.len() < LOG_BYTES {
        big.extend_from_slice(&log);
    }
    let gz = std::fs::read(repo("fixtures/formats/bundle/pg15-collected.tar.gz")).unwrap();
    let mut input = tar::Archive::new(flate2::read::GzDecoder::new(&gz[..]));
    let mut out = tar::Builder::new(Vec::new());
    for entry in input.entries().unwrap() {
        let mut entry = entry.unwrap();
        let mut header = entry.header().clone();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).unwrap();
        if entry.path().unwrap().ends_with("postgres/server.log") {
            data = big.clone();
        }
        header.set_size(data.len() as u64);
        header.set_cksum();
        out.append(&header, &data[..]).unwrap();
    }
    out.into_inner().unwrap()
}

fn bench_open(c: &mut Criterion) {
    let tar = big_tar();
    let dir = tempfile::tempdir().unwrap();
    let zst = dir.path().join("bundle.tar.zst");
    std::fs::write(&zst, zstd::encode_all(&tar[..], 3).unwrap()).unwrap();
    let gz = dir.path().join("bundle.tar.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&tar).unwrap();
    std::fs::write(&gz, e.finish().unwrap()).unwrap();

    let in_memory = OpenOptions {
        memory_file_bytes: 1 << 30,
        ..OpenOptions::default()
    };
    let mut group = c.benchmark_group("open");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(tar.len() as u64));
    for (name, path) in [("tar.zst", &zst), ("tar.gz", &gz)] {
        group.bench_function(format!("{name}/spooled"), |b| {
            b.iter(|| open(path, &OpenOptions::default()).unwrap())
        });
        group.bench_function(format!("{name}/in-memory"), |b| {
            b.iter(|| open(path, &in_memory).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, bench_open);
criterion_main!(benches);
