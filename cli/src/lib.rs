//! The `pgmortem` command line, as a library: [`run`] takes the arguments and the output
//! streams and returns the exit code, so the Python package can offer the same command without
//! `process::exit` ending the interpreter.
//!
//! Exit codes: 0 success, 2 usage or input error (the message says which file and why).

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

mod input;
mod perf;
mod pglog;
mod rules;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};
use pgmortem::parse::kernel;
use pgmortem::{DiagnoseOptions, render};
use serde::Serialize;

/// Offline analyzer for PostgreSQL support bundles: why did the database restart?
#[derive(Debug, Parser)]
#[command(name = "pgmortem", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Diagnose a bundle: a directory of loose files, an archive (.tar, .tar.gz, .tar.zst) or
    /// one file. Every log is read whole unless --max-log-bytes asks for less.
    Analyze(AnalyzeArgs),
    /// Parse one file and print its records as JSON lines (or `--stats`).
    #[command(subcommand)]
    Parse(ParseCommand),
    /// Fold `perf script` output into collapsed stacks (as inferno-collapse-perf).
    CollapsePerf(perf::CollapsePerfArgs),
    /// Draw a flame graph (SVG) of `perf script` output.
    Flamegraph(perf::FlamegraphArgs),
    /// List the rule catalog, or explain one rule: `pgmortem rules overcommit-heuristic`.
    Rules(rules::RulesArgs),
    /// Print the bundle collector, a POSIX shell script to run on the database host:
    /// `pgmortem collector > pgmortem-collect.sh; sh pgmortem-collect.sh --help`.
    Collector,
}

#[derive(Debug, Args)]
struct AnalyzeArgs {
    /// The bundle: a directory, an archive or a single file.
    path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    format: OutputFormat,
    /// Write the report to this file instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The host's boot time (RFC 3339, e.g. 2026-11-21T03:00:00Z), overriding the bundle's anchors.
    #[arg(long)]
    boot_time: Option<jiff::Timestamp>,
    /// UTC offset of kernel wall times printed without a zone (dmesg -T, syslog), e.g. +02:00.
    #[arg(long, allow_hyphen_values = true)]
    host_utc_offset: Option<String>,
    /// The PostgreSQL log_line_prefix (default: the bundle's pg_settings or postgresql.conf,
    /// else detected from the log).
    #[arg(long)]
    prefix: Option<String>,
    /// Seconds an OOM kill and a crash line with the same PID may be apart.
    #[arg(long, default_value_t = 120.0)]
    match_tolerance: f64,
    /// Read only the last N bytes of each log larger than that (e.g. 200MiB); the report says
    /// so at the top. Default: every log is read whole.
    #[arg(long, value_name = "N", value_parser = parse_size)]
    max_log_bytes: Option<u64>,
    /// Threads to parse large PostgreSQL logs on (default: one per available core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

/// `1048576`, `512KiB`, `200MiB`, `2GiB` (also `K`, `M`, `G`, `T`, `KB`, …: powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?}: expected a size such as 1048576, 512KiB or 200MiB"))?;
    let shift = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(format!(
                "{text:?}: unknown unit {other:?} (KiB, MiB, GiB, TiB)"
            ));
        }
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("{text:?}: too large"))
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutputFormat {
    /// Text for a person.
    Text,
    /// The `pgmortem.report/v1` JSON.
    Json,
    /// Markdown, to paste into a ticket or an issue.
    Markdown,
}

#[derive(Debug, Subcommand)]
enum ParseCommand {
    /// A kernel log (dmesg, journalctl -k, kern.log, …): one JSON object per record.
    Kernel {
        /// The file.
        file: PathBuf,
        /// Print one JSON object with lines, records and unrecognized_lines instead.
        #[arg(long)]
        stats: bool,
        /// Year for stamps that print none (journalctl short, syslog).
        #[arg(long)]
        year: Option<i16>,
    },
    /// A PostgreSQL server log (stderr, csvlog, jsonlog or syslog): one JSON object per record.
    Pglog(pglog::ParsePglogArgs),
    /// `perf script` output: one JSON object per sample, or `--stats` for the profile.
    Perf(perf::ParsePerfArgs),
}

/// Runs the command line `args` (program name first), writing to `out` and `err`. Returns the
/// process exit code.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let text = e.render().to_string();
            let _ = if code == 0 {
                out.write_all(text.as_bytes())
            } else {
                err.write_all(text.as_bytes())
            };
            return code;
        }
    };
    match dispatch(cli.command, out) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "pgmortem: error: {e:#}");
            2
        }
    }
}

fn dispatch(command: Command, out: &mut dyn Write) -> Result<()> {
    match command {
        Command::Analyze(args) => analyze(args, out),
        Command::CollapsePerf(args) => perf::collapse(args, out),
        Command::Rules(args) => rules::run(args, out),
        Command::Flamegraph(args) => perf::flamegraph(args),
        Command::Parse(ParseCommand::Perf(args)) => perf::parse(args, out),
        Command::Collector => out
            .write_all(pgmortem::bundle::COLLECTOR_SCRIPT.as_bytes())
            .context("cannot write the collector script"),
        Command::Parse(ParseCommand::Kernel { file, stats, year }) => {
            let bytes = read(&file)?;
            let options = kernel::KernelOptions {
                year,
                ..Default::default()
            };
            let log = kernel::parse(&bytes, &options);
            if stats {
                print_json(out, &log.stats)
            } else {
                log.records.iter().try_for_each(|r| print_json(out, r))
            }
        }
        Command::Parse(ParseCommand::Pglog(args)) => pglog::parse(args, out),
    }
}

fn analyze(args: AnalyzeArgs, out: &mut dyn Write) -> Result<()> {
    let host_utc_offset_seconds = args
        .host_utc_offset
        .as_deref()
        .map(|s| {
            pgmortem::diagnose::zone_offset(s)
                .map(|o| o.seconds())
                .with_context(|| {
                    format!("--host-utc-offset {s:?}: expected e.g. +02:00, -0500 or UTC")
                })
        })
        .transpose()?;
    let options = DiagnoseOptions {
        boot_time: args.boot_time,
        host_utc_offset_seconds,
        pg_prefix: args.prefix,
        match_tolerance_seconds: args.match_tolerance,
        max_log_bytes: args.max_log_bytes,
        threads: args.threads.map(usize::from),
        ..DiagnoseOptions::default()
    };
    let report = pgmortem::analyze(&args.path, &options)?;
    let format = match args.format {
        OutputFormat::Text => render::Format::Text,
        OutputFormat::Json => render::Format::Json,
        OutputFormat::Markdown => render::Format::Markdown,
    };
    let text = render::render(&report, format)?;
    match args.output {
        Some(path) => {
            std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => out
            .write_all(text.as_bytes())
            .context("cannot write the report"),
    }
}

fn read(path: &Path) -> Result<Vec<u8>> {
    input::read_all(path)
}

fn print_json<T: Serialize + ?Sized>(out: &mut dyn Write, value: &T) -> Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")?;
    Ok(())
}
