//! Every `parse` command reads gzip- and zstd-compressed input (rotated logs, compressed perf
//! captures) as a stream, from a file or from standard input, with the same result as the
//! plain file.

use std::io::Write;
use std::path::Path;

mod common;
use common::{fixture, pgmortem, stdout_ok};

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Stdout of `pgmortem <args> <file>`, asserting success.
fn run(args: &[&str], file: &Path) -> Vec<u8> {
    stdout_ok(pgmortem().args(args).arg(file))
}

/// The command on the plain fixture, on a .gz and a .zst copy, and on the .gz from stdin:
/// all four outputs are the same, and not empty.
fn same_output_compressed(args: &[&str], plain: &str) {
    let plain = fixture(&format!("formats/{plain}"));
    let bytes = std::fs::read(&plain).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let gz = dir.path().join("input.gz");
    std::fs::write(&gz, gzip(&bytes)).unwrap();
    let zst = dir.path().join("input.zst");
    std::fs::write(&zst, zstd::encode_all(&bytes[..], 3).unwrap()).unwrap();
    let expected = run(args, &plain);
    assert!(
        expected.len() > 10,
        "{}",
        String::from_utf8_lossy(&expected)
    );
    assert_eq!(run(args, &gz), expected, "gzip");
    assert_eq!(run(args, &zst), expected, "zstd");
    let piped = pgmortem()
        .args(args)
        .arg("-")
        .write_stdin(gzip(&bytes))
        .output()
        .unwrap();
    assert_eq!(piped.stdout, expected, "gzip on stdin");
}

#[test]
fn parse_pglog_reads_compressed_logs() {
    same_output_compressed(&["parse", "pglog"], "pglog/pg15-events.log");
    same_output_compressed(&["parse", "pglog", "--stats"], "pglog/pg15-events.csv");
}

#[test]
fn parse_kernel_reads_compressed_logs() {
    same_output_compressed(&["parse", "kernel", "--stats"], "kernel/local-dmesg-T.txt");
}

#[test]
fn perf_commands_read_compressed_captures() {
    same_output_compressed(&["collapse-perf"], "perf/local-pg15-pgbench-a-g.txt");
    same_output_compressed(
        &["parse", "perf", "--stats"],
        "perf/local-pg15-pgbench-a-g.txt",
    );
}

#[test]
fn a_corrupt_gzip_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.log.gz");
    std::fs::write(&bad, [0x1f, 0x8b, 8, 0, 9, 9, 9, 9, 9, 9, 9, 9]).unwrap();
    let output = pgmortem()
        .args(["parse", "pglog"])
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("bad.log.gz"), "{err}");
}
