//! The `pgmortem` command line, as a library: [`run`] takes the arguments and the output
//! streams and returns the exit code, so the Python package can offer the same command without
//! `process::exit` ending the interpreter.
//!
//! Exit codes: 0 success, 1 a `check` fixture that no longer gets its diagnosis, 2 usage or
//! input error (the message says which file and why).
//!
//! The Python package runs this same command line, adding `pgmortem fleet` ([`Extensions`]):
//! its arguments are parsed and its summary printed here, the run is the package's.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

mod analyze;
mod check;
mod diff;
pub mod fleet;
mod generate;
mod input;
mod perf;
mod pgbouncer;
mod pglog;
mod progress;
mod redact;
mod rules;
mod timeline;

use anyhow::{Context, Result};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use pgmortem::parse::kernel;
use pgmortem::parse::lines::LineBlocks;
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
    /// Diagnose a bundle: a directory of loose files, an archive (.tar, .tar.gz, .tar.zst,
    /// .tar.xz, .tar.bz2, .zip; archives inside opened too), one file, standard input (`-`), or
    /// several of these together. Every log is read whole unless --max-log-bytes asks for less.
    Analyze(analyze::AnalyzeArgs),
    /// Compare two bundles of one host (or two reports' JSON), before and after a change: the
    /// settings changed, the findings gone, new or changed, the incidents since; did it fix it?
    Diff(diff::DiffArgs),
    /// Print the merged timeline of a bundle: every event of every source on UTC, with its
    /// error bar and file:line, filtered by --since, --until and --kind.
    Timeline(timeline::TimelineArgs),
    /// Parse one file and print its records as JSON lines (or `--stats`).
    #[command(subcommand)]
    Parse(ParseCommand),
    /// Fold `perf script` output into collapsed stacks (as inferno-collapse-perf).
    CollapsePerf(perf::CollapsePerfArgs),
    /// Draw a flame graph (SVG) of `perf script` output.
    Flamegraph(perf::FlamegraphArgs),
    /// List the rule catalog, or explain one rule: `pgmortem rules overcommit-heuristic`.
    Rules(rules::RulesArgs),
    /// Replay incident fixtures (a bundle and its expected.json) and say which no longer get
    /// their diagnosis: exit 1 if any. For CI.
    Check(check::CheckArgs),
    /// Write a copy of a bundle that can be shared: host names, addresses, user, database and
    /// application names and query literals become stable tokens; redaction.json counts them.
    Redact(redact::RedactArgs),
    /// Print the bundle collector, a POSIX shell script to run on the database host:
    /// `pgmortem collector > pgmortem-collect.sh; sh pgmortem-collect.sh --help`.
    Collector,
    /// Print the completion script of a shell, written from this command line's definition:
    /// `pgmortem completions bash > ~/.local/share/bash-completion/completions/pgmortem`.
    Completions(generate::CompletionsArgs),
    /// Print the man page (roff) of pgmortem or of one of its commands, written from this
    /// command line's definition: `pgmortem manpage > ~/.local/share/man/man1/pgmortem.1`.
    Manpage(generate::ManpageArgs),
}

/// What a program that embeds this command line adds to it.
#[derive(Default, Clone, Copy)]
pub struct Extensions<'a> {
    /// Runs `pgmortem fleet` (the Python package's Dask runner). With one, the command line
    /// has `fleet` (in `--help`, `help fleet`, completions and the man page); without, `pgmortem
    /// fleet` says where it runs.
    pub fleet: Option<&'a dyn fleet::FleetRunner>,
}

impl std::fmt::Debug for Extensions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Extensions")
            .field("fleet", &self.fleet.is_some())
            .finish()
    }
}

/// The command line's definition (clap), as `--help`, completions and the man page show it,
/// with what `extensions` add.
pub fn command(extensions: &Extensions<'_>) -> clap::Command {
    let command = Cli::command();
    if extensions.fleet.is_some() {
        command.subcommand(fleet::command())
    } else {
        command
    }
}

/// The command line parsed: a command of [`Cli`], or `fleet`.
enum Parsed {
    Cli(Cli),
    Fleet(fleet::FleetArgs),
}

/// Parses `args` with `definition` (which has `fleet` when an extension runs it).
fn parse(definition: &clap::Command, args: Vec<OsString>) -> Result<Parsed, clap::Error> {
    let matches = definition.clone().try_get_matches_from(args)?;
    if let Some(("fleet", sub)) = matches.subcommand() {
        return fleet::FleetArgs::from_arg_matches(sub).map(Parsed::Fleet);
    }
    Cli::from_arg_matches(&matches).map(Parsed::Cli)
}

/// A number of seconds: finite and not negative.
pub(crate) fn parse_seconds(text: &str) -> Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: expected a number of seconds such as 120 or 2.5"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!(
            "{text:?}: expected a finite number of seconds, 0 or more"
        ));
    }
    Ok(value)
}

/// `1048576`, `512KiB`, `200MiB`, `2GiB` (also `K`, `M`, `G`, `T`, `KB`, …: powers of 1024).
pub(crate) fn parse_size(text: &str) -> Result<u64, String> {
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
    /// A pgbouncer log (its log file, or its lines through syslog or the journal): one JSON
    /// object per record.
    Pgbouncer(pgbouncer::ParsePgbouncerArgs),
    /// `perf script` output: one JSON object per sample, or `--stats` for the profile.
    Perf(perf::ParsePerfArgs),
}

/// Which of the streams given to [`run_with`] are terminals: colour (`--color auto`) and
/// progress follow them. Default: neither, as for output captured by a program.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Terminals {
    /// Standard output is a terminal: the text report is coloured (unless `NO_COLOR`, …).
    pub stdout: bool,
    /// Standard error is a terminal: progress is shown while a bundle is read for more than
    /// a second (unless `--quiet`). It is drawn on the process's standard error itself.
    pub stderr: bool,
}

/// Runs the command line `args` (program name first), writing to `out` and `err`, neither of
/// them a terminal (no colour unless asked, no progress). Returns the process exit code.
pub fn run<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_with(args, out, err, Terminals::default())
}

/// [`run`], told which streams are terminals. Returns the process exit code.
pub fn run_with<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write, terminals: Terminals) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_extended(args, out, err, terminals, &Extensions::default())
}

/// [`run_with`], with the commands `extensions` add. Returns the process exit code.
pub fn run_extended<I, T>(
    args: I,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminals: Terminals,
    extensions: &Extensions<'_>,
) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    if extensions.fleet.is_none() && args.get(1).is_some_and(|a| a == "fleet") {
        let _ = writeln!(err, "pgmortem: error: {}", fleet::NOT_HERE);
        return 2;
    }
    let definition = command(extensions);
    let cli = match parse(&definition, args) {
        Ok(Parsed::Cli(cli)) => cli,
        Ok(Parsed::Fleet(args)) => {
            return finish(fleet::run(&args, extensions.fleet, out).map(|()| 0), err);
        }
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
    let result = match cli.command {
        Command::Check(args) => check::run(args, out),
        Command::Completions(args) => generate::completions(&args, definition, out).map(|()| 0),
        Command::Manpage(args) => generate::manpage(&args, definition, out).map(|()| 0),
        command => dispatch(command, out, err, terminals).map(|()| 0),
    };
    finish(result, err)
}

/// The exit code of a command's `result`, its error (if any) written to `err`.
fn finish(result: Result<u8>, err: &mut dyn Write) -> u8 {
    match result {
        Ok(code) => code,
        // A reader that stopped reading (`| head`) is not an error, as for ripgrep.
        Err(e) if is_broken_pipe(&e) => 0,
        Err(e) => {
            let _ = writeln!(err, "pgmortem: error: {}", error_text(&e));
            2
        }
    }
}

/// Whether `e` comes from writing to a closed pipe.
fn is_broken_pipe(e: &anyhow::Error) -> bool {
    // serde_json's error does not give its I/O error as a source: asked by kind.
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            || cause
                .downcast_ref::<serde_json::Error>()
                .is_some_and(|j| j.io_error_kind() == Some(std::io::ErrorKind::BrokenPipe))
    })
}

/// The error and its causes, each said once: a cause that a message already quotes (errors
/// that print their source) is not repeated.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let part = cause.to_string();
        if text.contains(&part) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&part);
    }
    text
}

fn dispatch(
    command: Command,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminals: Terminals,
) -> Result<()> {
    match command {
        Command::Analyze(args) => analyze::run(args, out, terminals),
        Command::Timeline(args) => timeline::run(args, out, err, terminals),
        Command::CollapsePerf(args) => perf::collapse(args, out),
        Command::Rules(args) => rules::run(args, out),
        Command::Diff(args) => diff::run(args, out),
        Command::Redact(args) => redact::run(args, out),
        Command::Flamegraph(args) => perf::flamegraph(args),
        Command::Parse(ParseCommand::Perf(args)) => perf::parse(args, out),
        Command::Collector => out
            .write_all(pgmortem::bundle::COLLECTOR_SCRIPT.as_bytes())
            .context("cannot write the collector script"),
        Command::Parse(ParseCommand::Kernel { file, stats, year }) => {
            parse_kernel(&file, stats, year, out)
        }
        Command::Parse(ParseCommand::Pglog(args)) => pglog::parse(args, out),
        Command::Parse(ParseCommand::Pgbouncer(args)) => pgbouncer::parse(args, out),
        Command::Check(_) | Command::Completions(_) | Command::Manpage(_) => {
            unreachable!("run before dispatch")
        }
    }
}

/// `parse kernel`: the log read block by block, each record written as soon as no later line
/// can change it, so memory stays bounded whatever the input.
fn parse_kernel(file: &Path, stats: bool, year: Option<i16>, out: &mut dyn Write) -> Result<()> {
    let (reader, cut) = input::open_lines(file)?;
    let options = kernel::KernelOptions {
        year,
        ..Default::default()
    };
    // Lines are already cut to input::MAX_LINE_BYTES: the blocks never cut one again.
    let mut blocks = LineBlocks::new(
        reader,
        kernel::STREAM_BLOCK_BYTES,
        input::MAX_LINE_BYTES.max(options.max_line_bytes) + 1,
    );
    let mut parser = kernel::KernelParser::new(options);
    let mut out = std::io::BufWriter::new(out);
    while let Some(block) = blocks
        .next_block()
        .with_context(|| format!("cannot read {}", file.display()))?
    {
        parser.push_block(block);
        for record in parser.take_settled() {
            if !stats {
                print_json(&mut out, &record)?;
            }
        }
    }
    input::report_cut(file, &cut);
    let log = parser.finish();
    if stats {
        /// What `parse kernel --stats` prints: the counts, and what a paste did when it did.
        #[derive(Serialize)]
        struct KernelStats<'a> {
            #[serde(flatten)]
            stats: &'a pgmortem::parse::ParseStats,
            #[serde(skip_serializing_if = "Option::is_none")]
            pasted: Option<&'a pgmortem::parse::paste::PasteReport>,
        }
        let value = KernelStats {
            stats: &log.stats,
            pasted: log.pasted.as_ref(),
        };
        print_json(&mut out, &value)?;
    } else {
        log.records
            .iter()
            .try_for_each(|r| print_json(&mut out, r))?;
    }
    out.flush()?;
    Ok(())
}

/// An error when `output` is the bundle `input` or a file inside it (writing the report there
/// would destroy what it reports on).
pub(crate) fn refuse_to_overwrite(output: &Path, input: &Path) -> Result<()> {
    let (Ok(out), Ok(inp)) = (std::fs::canonicalize(output), std::fs::canonicalize(input)) else {
        // The output does not exist yet (or the input cannot be resolved: analyze says why).
        return Ok(());
    };
    if out == inp || out.starts_with(&inp) {
        anyhow::bail!(
            "-o {}: that is the bundle being analysed{}; write the report elsewhere",
            output.display(),
            if out == inp {
                ""
            } else {
                " (a file inside it)"
            }
        );
    }
    Ok(())
}

fn print_json<T: Serialize + ?Sized>(out: &mut dyn Write, value: &T) -> Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    out.write_all(b"\n")?;
    Ok(())
}
