//! A bench that fails: one-thread throughput of the PostgreSQL-log reader on every shipped
//! log fixture, against a committed baseline (`pglog_regression.baseline` beside this file).
//!
//! Each file of fixtures/formats/pglog (its `prefixes/` and `pgbadger/` too; compressed ones
//! decompressed; not the `.prefix`, `.conf` and `.md` files) is repeated until 8 MiB and read
//! by `pglog::records` on one thread with default options (format, wrapper and prefix
//! detected, as `pgmortem parse pglog` does), records counted. The figure is MB of input per
//! second of the reading thread's CPU time (`/proc/thread-self/schedstat`, wall time where
//! that file is missing), best of [`RUNS`] runs of at least [`RUN_SECONDS`], made in rounds
//! over all inputs: CPU time moves less than wall time when other work shares the machine, and
//! the best run is the one least disturbed.
//!
//! ```text
//! cargo bench -p pgmortem-parse --bench pglog_regression
//! PGMORTEM_BASELINE=update cargo bench -p pgmortem-parse --bench pglog_regression
//! ```
//!
//! The first compares and exits with status 1 when any input is more than the tolerance
//! ([`TOLERANCE`], or `PGMORTEM_TOLERANCE=0.2` for 20 %) below its baseline, or is missing from
//! it; the second writes the figures measured as the new baseline (measure on an idle machine,
//! on the commit whose speed is the one to keep, and commit the file with it). A name after
//! `--` keeps only the inputs whose names hold it.

#![allow(clippy::print_stdout, clippy::print_stderr, clippy::exit, missing_docs)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use pgmortem_parse::pglog::{self, PgLogOptions};

#[path = "realistic/mod.rs"]
#[allow(missing_docs)]
mod realistic;

/// The allocator the `pgmortem` binary ships (cli/src/main.rs), so the figures are the tool's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Bytes each fixture is repeated to.
const INPUT_BYTES: usize = 8 << 20;
/// Runs per input; the best counts.
const RUNS: usize = 5;
/// Seconds a run lasts at least: it reads its input again until then. Linux adds a running
/// thread's time up at each scheduler tick (4 ms at 250 Hz), so a run of 0.2 s is timed to 2 %.
const RUN_SECONDS: f64 = 0.2;
/// How far below its baseline an input may read before the bench fails.
const TOLERANCE: f64 = 0.10;

fn baseline_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/pglog_regression.baseline")
}

/// The log fixtures, by their path under fixtures/formats/pglog.
fn fixtures() -> Vec<String> {
    let mut names = Vec::new();
    for dir in ["", "prefixes", "pgbadger"] {
        let entries = std::fs::read_dir(realistic::fixtures().join(dir)).expect("fixtures");
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let skip = [".md", ".prefix", ".conf"]
                .iter()
                .any(|e| name.ends_with(e));
            if entry.path().is_file() && !skip {
                names.push(if dir.is_empty() {
                    name
                } else {
                    format!("{dir}/{name}")
                });
            }
        }
    }
    names.sort();
    names
}

/// The fixture repeated to [`INPUT_BYTES`], a newline put between copies whose last line has
/// none.
fn repeated(name: &str) -> Vec<u8> {
    let mut one = realistic::read_fixture(name);
    if one.last() != Some(&b'\n') {
        one.push(b'\n');
    }
    let mut out = Vec::with_capacity(INPUT_BYTES + one.len());
    while out.len() < INPUT_BYTES {
        out.extend_from_slice(&one);
    }
    out
}

/// Nanoseconds this thread has run on a processor, where Linux says.
fn thread_cpu_nanos() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

/// Bytes per second of one run: `input` read again and again for at least [`RUN_SECONDS`]
/// (CPU time of this thread, or wall time).
fn time_one(input: &[u8], options: &PgLogOptions) -> f64 {
    let wall = Instant::now();
    let cpu = thread_cpu_nanos();
    let mut bytes = 0usize;
    loop {
        let n = pglog::records(black_box(input), options)
            .map(|records| records.count())
            .unwrap_or(0);
        black_box(n);
        bytes += input.len();
        let seconds = match (cpu, thread_cpu_nanos()) {
            (Some(a), Some(b)) if b > a => (b - a) as f64 / 1e9,
            _ => wall.elapsed().as_secs_f64(),
        };
        if seconds >= RUN_SECONDS {
            return bytes as f64 / seconds;
        }
    }
}

fn load_baseline() -> BTreeMap<String, f64> {
    let Ok(text) = std::fs::read_to_string(baseline_path()) else {
        return BTreeMap::new();
    };
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let (mbps, name) = l.trim().split_once(char::is_whitespace)?;
            Some((name.trim().to_string(), mbps.parse().ok()?))
        })
        .collect()
}

fn main() {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let update = std::env::var("PGMORTEM_BASELINE").is_ok_and(|v| v == "update");
    let tolerance = std::env::var("PGMORTEM_TOLERANCE")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(TOLERANCE);
    let baseline = load_baseline();
    let options = PgLogOptions::default();
    let mut measured = BTreeMap::new();
    let mut failed = Vec::new();
    let names: Vec<String> = fixtures()
        .into_iter()
        .filter(|name| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    // Rounds over every input, not the runs of one input in a row: the machine's slow spells
    // (seconds to a minute on a shared VM) then cost one run of
    // each input they fall on, which the best of the others outweighs.
    let mut best: BTreeMap<&str, f64> = BTreeMap::new();
    for _ in 0..RUNS {
        for name in &names {
            let input = repeated(name);
            // Warm-up: caches, the allocator's pages.
            black_box(pglog::records(&input, &options).map(|r| r.count()).ok());
            let run = time_one(&input, &options);
            let kept = best.entry(name.as_str()).or_insert(0.0);
            *kept = kept.max(run);
        }
    }
    for (name, best) in best {
        let name = name.to_string();
        let mbps = best / 1e6;
        measured.insert(name.clone(), mbps);
        let verdict = match baseline.get(&name) {
            None if !update => {
                failed.push(format!("{name}: no baseline"));
                "no baseline".to_string()
            }
            None => String::new(),
            Some(&base) => {
                let ratio = mbps / base;
                if ratio < 1.0 - tolerance && !update {
                    failed.push(format!("{name}: {mbps:.1} MB/s, baseline {base:.1}"));
                    format!("{:+.1} % SLOWER", (ratio - 1.0) * 100.0)
                } else {
                    format!("{:+.1} %", (ratio - 1.0) * 100.0)
                }
            }
        };
        println!("{mbps:9.1} MB/s  {name}  {verdict}");
    }
    if update {
        let mut all = baseline;
        all.extend(measured);
        let mut text = String::from(
            "# MB of input per second of the reading thread's CPU time, best of 5 runs of 0.2 s (in rounds over all inputs), one thread:\n\
             # `PGMORTEM_BASELINE=update cargo bench -p pgmortem-parse --bench pglog_regression`\n\
             # (benches/pglog_regression.rs). Measured on the 2-vCPU build VM.\n",
        );
        for (name, mbps) in &all {
            text.push_str(&format!("{mbps:.1} {name}\n"));
        }
        if let Err(e) = std::fs::write(baseline_path(), text) {
            eprintln!("{}: {e}", baseline_path().display());
            std::process::exit(2);
        }
        println!("baseline written: {}", baseline_path().display());
        return;
    }
    if !failed.is_empty() {
        eprintln!(
            "{} of {} inputs below their baseline by more than {:.0} %:",
            failed.len(),
            measured.len(),
            tolerance * 100.0
        );
        for f in &failed {
            eprintln!("  {f}");
        }
        std::process::exit(1);
    }
    println!(
        "{} inputs, none more than {:.0} % below its baseline",
        measured.len(),
        tolerance * 100.0
    );
}
