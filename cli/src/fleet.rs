//! `pgmortem fleet`: many bundles on Dask into one Parquet dataset. The command line is parsed
//! here, with the same value parsers as `analyze` (sizes such as `256MiB`, seconds, UTC
//! offsets), and its summary printed here; the run itself is the Python package's (a
//! [`FleetRunner`] given through [`crate::Extensions`]), so `pgmortem fleet` reads the same in
//! every word whichever `pgmortem` runs it. The Rust binary alone has no runner: it says where
//! the command runs.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use clap::Args;

/// `pgmortem fleet`'s arguments, parsed and checked.
#[derive(Debug, Clone, Args)]
#[non_exhaustive]
pub struct FleetArgs {
    /// The bundles: paths or glob patterns (quoted, a pattern is expanded by pgmortem, with no
    /// shell limit on the number of bundles; each pattern's matches in sorted order).
    #[arg(value_name = "GLOB", required = true, num_args = 1..)]
    pub bundles: Vec<String>,
    /// The dataset's directory (created); one that already holds part files is refused unless
    /// --overwrite.
    #[arg(short, long, value_name = "DATASET", required = true)]
    pub output: PathBuf,
    /// Run on a running Dask scheduler (tcp://10.0.0.5:8786) instead of a local cluster.
    #[arg(long, value_name = "ADDRESS", conflicts_with_all = ["workers", "no_processes"])]
    pub scheduler: Option<String>,
    /// Local cluster: worker processes (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub workers: Option<u32>,
    /// Local cluster: run the workers as threads of this process (starts at once; for a few
    /// bundles).
    #[arg(long)]
    pub no_processes: bool,
    /// Bundles per task, and so per Parquet file of each table (default: four tasks per worker
    /// thread, at most 64 bundles each).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub batch_size: Option<u32>,
    /// Replace the part files of an existing dataset.
    #[arg(long)]
    pub overwrite: bool,
    /// As `pgmortem analyze --host-utc-offset`, for every bundle.
    #[arg(long, value_name = "+HH:MM", allow_hyphen_values = true, value_parser = parse_utc_offset)]
    pub host_utc_offset: Option<String>,
    /// As `pgmortem analyze --prefix`, for every bundle.
    #[arg(long, value_name = "LOG_LINE_PREFIX")]
    pub prefix: Option<String>,
    /// As `pgmortem analyze --match-tolerance`, for every bundle (default 120).
    #[arg(long, value_name = "SECONDS", value_parser = crate::parse_seconds)]
    pub match_tolerance: Option<f64>,
    /// As `pgmortem analyze --max-log-bytes` (e.g. 200MiB), for every bundle.
    #[arg(long, value_name = "N", value_parser = crate::parse_size)]
    pub max_log_bytes: Option<u64>,
    /// As `pgmortem analyze --memory-limit` (e.g. 256MiB, default 512MiB, at least 32MiB), for
    /// each analysis: a worker runs one at a time per thread.
    #[arg(long, value_name = "SIZE", value_parser = crate::analyze::parse_memory_limit)]
    pub memory_limit: Option<u64>,
    /// Threads per analysis, as `pgmortem analyze --threads` (default 1: the workers are the
    /// parallelism).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        value_parser = clap::value_parser!(u16).range(1..)
    )]
    pub threads: u16,
    /// No summary line.
    #[arg(short, long)]
    pub quiet: bool,
}

/// What `pgmortem fleet` answers where no runner is (the Rust binary alone).
pub(crate) const NOT_HERE: &str = "`pgmortem fleet` runs in the Python package (Dask, \
    Parquet): pip install './bindings/python[fleet]' (or 'pgmortem[fleet]') and run the \
    pgmortem command it installs; see docs/fleet.md";

/// The `fleet` command of the command line, as an extension adds it.
pub(crate) fn command() -> clap::Command {
    FleetArgs::augment_args(clap::Command::new("fleet").about(
        "Analyze many bundles on Dask into one Parquet dataset (DATASET/findings/, \
         DATASET/incidents/, DATASET/sources/) for DuckDB, Spark, polars or pandas; bundles \
         that cannot be analyzed are rows of DATASET/sources/ with their error (docs/fleet.md)",
    ))
}

/// `--host-utc-offset`: checked as `analyze` checks it, kept as written.
fn parse_utc_offset(text: &str) -> Result<String, String> {
    pgmortem::diagnose::zone_offset(text)
        .map(|_| text.to_owned())
        .ok_or_else(|| format!("{text:?}: expected e.g. +02:00, -0500 or UTC"))
}

/// What a fleet run wrote, for its summary line.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetSummary {
    /// The dataset's directory.
    pub dataset: String,
    /// Bundles analyzed or tried.
    pub bundles: u64,
    /// Bundles that could not be analyzed (each a row of `sources` with its error).
    pub failed: u64,
    /// Each table (`findings`, `incidents`, `sources`) with its rows and Parquet files.
    pub tables: Vec<FleetTable>,
    /// Dask workers (threads across the cluster).
    pub workers: u64,
    /// Wall time of the analysis, in seconds (the cluster's start not included).
    pub seconds: f64,
}

/// One table of a fleet's dataset, as [`FleetSummary`] counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetTable {
    /// Its name (`findings`).
    pub name: String,
    /// Rows written.
    pub rows: u64,
    /// Parquet files written.
    pub files: u64,
}

/// Runs `pgmortem fleet` (the Python package implements it on Dask).
pub trait FleetRunner {
    /// Analyzes `args.bundles` into `args.output`; `Err` with the message to print (a dataset
    /// that already has part files, the `fleet` extra missing, a scheduler out of reach).
    fn run(&self, args: &FleetArgs) -> std::result::Result<FleetSummary, String>;
}

/// `pgmortem fleet`: `runner`'s run and its summary line.
pub(crate) fn run(
    args: &FleetArgs,
    runner: Option<&dyn FleetRunner>,
    out: &mut dyn Write,
) -> Result<()> {
    let Some(runner) = runner else {
        bail!(NOT_HERE);
    };
    let summary = runner.run(args).map_err(anyhow::Error::msg)?;
    if !args.quiet {
        writeln!(out, "{}", summary_line(&summary)).context("cannot write the summary")?;
    }
    Ok(())
}

/// `n thing` or `n things`.
fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `pgmortem fleet: 24 bundles (1 failed) in 1.42 s on 2 workers (16.9 bundles/s): 101
/// findings rows in 8 files, … under DATASET`.
fn summary_line(s: &FleetSummary) -> String {
    let rate = if s.seconds > 0.0 {
        format!("{:.1}", s.bundles as f64 / s.seconds)
    } else {
        "∞".to_owned()
    };
    let tables: Vec<String> = s
        .tables
        .iter()
        .map(|t| {
            format!(
                "{} in {}",
                counted(
                    t.rows,
                    &format!("{} row", t.name),
                    &format!("{} rows", t.name)
                ),
                counted(t.files, "file", "files")
            )
        })
        .collect();
    format!(
        "pgmortem fleet: {} ({} failed) in {:.2} s on {} ({rate} bundles/s): {} under {}",
        counted(s.bundles, "bundle", "bundles"),
        s.failed,
        s.seconds,
        counted(s.workers, "worker", "workers"),
        tables.join(", "),
        s.dataset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(bundles: u64, rows: u64, files: u64, workers: u64) -> FleetSummary {
        FleetSummary {
            dataset: "/tmp/d".to_owned(),
            bundles,
            failed: 0,
            tables: ["findings", "sources"]
                .iter()
                .map(|name| FleetTable {
                    name: (*name).to_owned(),
                    rows,
                    files,
                })
                .collect(),
            workers,
            seconds: 0.5,
        }
    }

    /// A runner that keeps the arguments it was given and writes nothing.
    struct Recorder(std::sync::Mutex<Vec<FleetArgs>>);

    impl FleetRunner for Recorder {
        fn run(&self, args: &FleetArgs) -> std::result::Result<FleetSummary, String> {
            self.0.lock().unwrap().push(args.clone());
            if args.bundles == ["fail"] {
                return Err("the dataset already holds 3 part files".to_owned());
            }
            Ok(summary(1, 3, 1, 2))
        }
    }

    /// Runs `pgmortem ARGS` with `runner`: (exit code, stdout, stderr).
    fn run_with_runner(runner: &Recorder, args: &[&str]) -> (u8, String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let extensions = crate::Extensions {
            fleet: Some(runner),
        };
        let argv = std::iter::once("pgmortem").chain(args.iter().copied());
        let code = crate::run_extended(argv, &mut out, &mut err, Default::default(), &extensions);
        (
            code,
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    #[test]
    fn fleet_parses_as_analyze_parses() {
        let runner = Recorder(Default::default());
        let (code, out, err) = run_with_runner(
            &runner,
            &[
                "fleet",
                "a/*.tar.gz",
                "b",
                "-o",
                "/tmp/d",
                "--memory-limit",
                "256MiB",
                "--max-log-bytes",
                "200MiB",
                "--match-tolerance",
                "2.5",
                "--host-utc-offset",
                "-05:00",
                "--workers",
                "2",
            ],
        );
        assert_eq!(code, 0, "{err}");
        assert!(
            out.starts_with("pgmortem fleet: 1 bundle (0 failed)"),
            "{out}"
        );
        let args = runner.0.lock().unwrap()[0].clone();
        assert_eq!(args.bundles, ["a/*.tar.gz", "b"]);
        assert_eq!(args.memory_limit, Some(256 << 20));
        assert_eq!(args.max_log_bytes, Some(200 << 20));
        assert_eq!(args.match_tolerance, Some(2.5));
        assert_eq!(args.host_utc_offset.as_deref(), Some("-05:00"));
        assert_eq!(
            (args.workers, args.threads, args.quiet),
            (Some(2), 1, false)
        );
        // The same refusals as analyze's, as usage errors.
        for (bad, said) in [
            (&["--memory-limit", "1MiB"][..], "at least 32MiB"),
            (&["--memory-limit", "lots"], "expected a size such as"),
            (&["--host-utc-offset", "Mars"], "expected e.g. +02:00"),
            (&["--match-tolerance", "inf"], "0 or more"),
            (&["--workers", "0"], "--workers"),
            (
                &["--scheduler", "tcp://127.0.0.1:1", "--workers", "2"],
                "cannot be used with",
            ),
        ] {
            let mut args = vec!["fleet", "x", "-o", "d"];
            args.extend_from_slice(bad);
            let (code, out, err) = run_with_runner(&runner, &args);
            assert_eq!((code, out.as_str()), (2, ""), "{bad:?}");
            assert!(err.contains(said), "{bad:?}: {err}");
        }
        // An error of the run: exit 2, said once.
        let (code, _, err) = run_with_runner(&runner, &["fleet", "fail", "-o", "d"]);
        assert_eq!(code, 2);
        assert_eq!(
            err,
            "pgmortem: error: the dataset already holds 3 part files\n"
        );
        // --quiet: no summary.
        let (code, out, _) = run_with_runner(&runner, &["fleet", "x", "-o", "d", "-q"]);
        assert_eq!((code, out.as_str()), (0, ""));
    }

    #[test]
    fn with_a_runner_fleet_is_in_the_help() {
        let runner = Recorder(Default::default());
        let (code, help, _) = run_with_runner(&runner, &["--help"]);
        assert_eq!(code, 0);
        assert!(help.contains("\n  fleet "), "{help}");
        for args in [&["help", "fleet"][..], &["fleet", "--help"]] {
            let (code, help, err) = run_with_runner(&runner, args);
            assert_eq!(code, 0, "{args:?}: {err}");
            assert!(
                help.contains("Usage: pgmortem fleet [OPTIONS] --output <DATASET> <GLOB>...")
                    && help.contains("--memory-limit <SIZE>"),
                "{args:?}: {help}"
            );
        }
        let (_, bash, _) = run_with_runner(&runner, &["completions", "bash"]);
        assert!(
            bash.contains("pgmortem__subcmd__fleet"),
            "fleet not completed"
        );
        let (_, page, _) = run_with_runner(&runner, &["manpage", "fleet"]);
        assert!(page.contains(".TH pgmortem-fleet 1"), "{page}");
        assert!(runner.0.lock().unwrap().is_empty());
    }

    #[test]
    fn the_summary_counts_in_the_singular_and_the_plural() {
        assert_eq!(
            summary_line(&summary(1, 1, 1, 1)),
            "pgmortem fleet: 1 bundle (0 failed) in 0.50 s on 1 worker (2.0 bundles/s): 1 \
             findings row in 1 file, 1 sources row in 1 file under /tmp/d"
        );
        assert_eq!(
            summary_line(&summary(24, 0, 8, 2)),
            "pgmortem fleet: 24 bundles (0 failed) in 0.50 s on 2 workers (48.0 bundles/s): 0 \
             findings rows in 8 files, 0 sources rows in 8 files under /tmp/d"
        );
    }
}
