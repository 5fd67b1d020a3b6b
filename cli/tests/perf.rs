//! `pgmortem collapse-perf`, `parse perf` and `flamegraph` end to end on the perf fixtures.

use std::io::Read;
use std::path::{Path, PathBuf};

mod common;
use common::pgmortem;
use predicates::prelude::*;

fn perf_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/formats/perf")
}

/// `INPUT.folded` / `INPUT.OPT[-OPT…].folded` → (input file, flags).
fn reference_case(folded: &Path) -> (PathBuf, Vec<String>) {
    let name = folded.file_name().unwrap().to_str().unwrap();
    let stem = name.strip_suffix(".folded").unwrap();
    let (input, flags) = match stem.split_once('.') {
        Some((input, opts)) => (input, opts.split('-').map(|o| format!("--{o}")).collect()),
        None => (stem, Vec::new()),
    };
    (perf_dir().join(format!("{input}.txt")), flags)
}

#[test]
fn collapse_perf_is_byte_identical_to_inferno() {
    let mut references: Vec<PathBuf> = std::fs::read_dir(perf_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "folded"))
        .collect();
    references.sort();
    assert!(
        references.len() >= 10,
        "the inferno references are missing: {references:?}"
    );
    for reference in references {
        let (input, flags) = reference_case(&reference);
        let expected = std::fs::read(&reference).unwrap();
        let output = pgmortem()
            .arg("collapse-perf")
            .args(&flags)
            .arg(&input)
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", reference.display());
        if output.stdout != expected {
            let ours = String::from_utf8_lossy(&output.stdout);
            let theirs = String::from_utf8_lossy(&expected);
            let first = ours
                .lines()
                .zip(theirs.lines())
                .find(|(a, b)| a != b)
                .map(|(a, b)| format!("\n ours:    {a}\n inferno: {b}"))
                .unwrap_or_default();
            panic!(
                "{} {flags:?}: {} lines vs inferno's {}{first}",
                input.display(),
                ours.lines().count(),
                theirs.lines().count()
            );
        }
    }
}

#[test]
fn collapse_perf_reads_standard_input_and_writes_a_file() {
    let input = perf_dir().join("local-pg15-pgbench-a-g.txt");
    let expected = std::fs::read(perf_dir().join("local-pg15-pgbench-a-g.pid.folded")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stacks.folded");
    pgmortem()
        .args(["collapse-perf", "--pid", "-o"])
        .arg(&out)
        .pipe_stdin(&input)
        .unwrap()
        .assert()
        .success()
        .stdout("");
    assert_eq!(std::fs::read(&out).unwrap(), expected);
}

#[test]
fn collapse_perf_and_flamegraph_say_they_left_out_the_samples_of_exited_tasks() {
    let input = perf_dir().join("local-long-capture-exited.txt");
    let expected = std::fs::read(perf_dir().join("local-long-capture-exited.folded")).unwrap();
    let note = "local-long-capture-exited.txt: 2 samples of tasks that had exited (`:-1 -1`) \
                not folded, as inferno-collapse-perf does\n";
    pgmortem()
        .arg("collapse-perf")
        .arg(&input)
        .assert()
        .success()
        .stdout(expected)
        .stderr(predicate::str::ends_with(note));
    let dir = tempfile::tempdir().unwrap();
    pgmortem()
        .arg("flamegraph")
        .arg(&input)
        .arg("-o")
        .arg(dir.path().join("flame.svg"))
        .assert()
        .success()
        .stderr(predicate::str::ends_with(note));
}

#[test]
fn collapse_perf_folds_tracepoints_with_call_chains() {
    // inferno turns `sched:sched_switch` into `sched` and the payload into a frame; ours
    // folds the call chain under the process name.
    let input = perf_dir().join("edge-kvm-exit-multi.txt");
    pgmortem()
        .args(["collapse-perf", "--event", "kvm:kvm_exit"])
        .arg(&input)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "CPU_1/KVM;kvm_cpu_exec;kvm_arch_vcpu_ioctl_run;vcpu_enter_guest;vmx_handle_exit 1\n",
        ));
    pgmortem()
        .args(["collapse-perf", "--event-filter", "cpu-clock"])
        .arg(&input)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "postgres;palloc0;__alloc_pages_direct_compact;compact_zone;migrate_pages;compaction_alloc 10101010\n",
        ))
        .stdout(predicate::str::contains("kvm_exit").not());
}

#[test]
fn parse_perf_prints_one_json_object_per_sample() {
    let input = perf_dir().join("local-pg15-pgbench-a-g.txt");
    let out = pgmortem()
        .args(["parse", "perf"])
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let text = String::from_utf8(out).unwrap();
    let text_input = std::fs::read_to_string(&input).unwrap();
    let event_lines = text_input
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('\t'))
        .count();
    let samples: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(samples.len(), event_lines);
    let first = &samples[0];
    for key in [
        "line", "comm", "pid", "tid", "cpu", "time", "event", "period", "trace", "frames",
    ] {
        assert!(first.get(key).is_some(), "sample lacks {key}: {first}");
    }
    assert_eq!(first["event"], "cpu-clock:pppH");
    assert_eq!(first["period"], 10101010);
    let frame = &first["frames"][0];
    assert!(frame["address"].as_str().unwrap().starts_with("0x"));
    assert!(frame["dso"].is_string());
}

#[test]
fn parse_perf_stats_gives_the_profile() {
    let input = perf_dir().join("local-pg15-pgbench-multi-g.txt");
    let out = pgmortem()
        .args([
            "parse",
            "perf",
            "--stats",
            "--query",
            "postgres=Postgres*,Exec*",
        ])
        .arg(&input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let profile: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let lines = std::fs::read_to_string(&input).unwrap().lines().count();
    assert_eq!(profile["stats"]["lines"], lines as u64);
    assert_eq!(profile["stats"]["unrecognized_lines"], 0);
    let events: Vec<&str> = profile["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(events, ["cpu-clock", "cpu-migrations"]);
    assert_eq!(profile["event"], "cpu-clock");
    let queries = profile["stack_queries"].as_array().unwrap();
    let custom = queries.iter().find(|q| q["name"] == "postgres").unwrap();
    assert!(custom["samples"].as_u64().unwrap() > 0);
    assert!(profile["kernel_share"].as_f64().unwrap() > 0.0);
}

#[test]
fn flamegraph_writes_an_svg() {
    let input = perf_dir().join("local-pg15-pgbench-a-g.txt");
    let dir = tempfile::tempdir().unwrap();
    let svg = dir.path().join("out.svg");
    pgmortem()
        .args(["flamegraph", "--title", "pgbench"])
        .arg(&input)
        .arg("-o")
        .arg(&svg)
        .assert()
        .success();
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(
        text.starts_with("<?xml"),
        "{}",
        &text[..100.min(text.len())]
    );
    assert!(text.contains("<svg"));
    assert!(text.contains("pgbench"));
    assert!(text.contains("PostgresMain"));
}

#[test]
fn flamegraph_without_stacks_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "not perf output\n").unwrap();
    pgmortem()
        .arg("flamegraph")
        .arg(&empty)
        .arg("-o")
        .arg(dir.path().join("out.svg"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no stack to draw"));
}

#[test]
fn missing_file_is_a_clear_error() {
    pgmortem()
        .args(["collapse-perf", "/nonexistent/perf.txt"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "cannot read /nonexistent/perf.txt",
        ));
}

#[test]
fn a_line_without_end_is_cut_not_held() {
    // 64 MiB of one byte and no newline, zstd-compressed to a few kilobytes (a 2 GB one took
    // 3 to 4 GB of memory and a minute before lines were cut): each reader keeps its first
    // 64 KiB and says so.
    let dir = tempfile::tempdir().unwrap();
    let bomb = dir.path().join("bomb.zst");
    let bytes = zstd::encode_all(std::io::repeat(b'a').take(64 << 20), 3).unwrap();
    std::fs::write(&bomb, bytes).unwrap();
    for args in [
        &["parse", "kernel"][..],
        &["parse", "perf"],
        &["collapse-perf"],
    ] {
        let output = pgmortem().args(args).arg(&bomb).output().unwrap();
        assert!(output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("bomb.zst: 1 line longer than 65536 bytes kept only its first bytes"),
            "{args:?}: {stderr}"
        );
    }
}

/// A profile longer than the blocks it is read in (1 MiB on one thread, 16 MiB on several),
/// with samples across every block boundary and, first, 3 MiB of frame lines without a sample
/// start (the block grows until one comes): folded as the library folds it in one pass, on
/// one thread and on two.
#[test]
fn a_long_profile_is_folded_across_blocks_as_in_one_pass() {
    let sample = std::fs::read(perf_dir().join("local-pg15-pgbench-a-g.txt")).unwrap();
    let orphan = b"\t          5bbbb4 ExecScan+0x14 (/usr/lib/postgresql/15/bin/postgres)\n";
    let mut input = orphan.repeat((3 << 20) / orphan.len());
    input.push(b'\n');
    while input.len() < 40 << 20 {
        input.extend_from_slice(&sample);
    }
    let options = pgmortem::parse::perf::FoldOptions::default();
    let expected = pgmortem::parse::perf::collapse(&input, &options);
    assert!(expected.lines().count() > 100, "a profile with many stacks");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.txt");
    std::fs::write(&path, &input).unwrap();
    for threads in ["1", "2"] {
        let out = pgmortem()
            .args(["collapse-perf", "--nthreads", threads])
            .arg(&path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        assert!(
            String::from_utf8(out.stdout).unwrap() == expected,
            "{threads} thread(s): not the one-pass fold"
        );
    }
}
