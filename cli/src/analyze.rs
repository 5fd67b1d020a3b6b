//! `pgmortem analyze`: the report on a bundle, as text (coloured on a terminal), JSON or
//! Markdown; and the bundle options and reading that `timeline` shares.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use pgmortem::diagnose::Severity;
use pgmortem::diagnose::human_bytes;
use pgmortem::{DiagnoseOptions, Report, Step, render};

use crate::Terminals;
use crate::progress::Progress;

/// `--memory-limit`: a size, at least [`pgmortem::diagnose::MIN_MEMORY_LIMIT`].
pub(crate) fn parse_memory_limit(text: &str) -> Result<u64, String> {
    let bytes = crate::parse_size(text)?;
    if bytes < pgmortem::diagnose::MIN_MEMORY_LIMIT {
        return Err(format!("{text:?}: at least 32MiB"));
    }
    Ok(bytes)
}

/// The bundle and how to read it: what `analyze` and `timeline` share.
#[derive(Debug, Args)]
pub(crate) struct BundleArgs {
    /// The bundle: a directory, an archive (tar, plain or .gz/.zst/.xz/.bz2; zip) or a single
    /// file; `-` reads standard input (a log or an archive). Several are read as one bundle,
    /// each under its own name.
    #[arg(value_name = "BUNDLE", required = true, num_args = 1..)]
    pub(crate) paths: Vec<PathBuf>,
    /// The host's boot time (RFC 3339, e.g. 2026-11-21T03:00:00Z), overriding the bundle's anchors.
    #[arg(long, value_name = "RFC3339")]
    boot_time: Option<jiff::Timestamp>,
    /// UTC offset of kernel wall times printed without a zone (dmesg -T, syslog), e.g. +02:00.
    #[arg(long, value_name = "+HH:MM", allow_hyphen_values = true)]
    host_utc_offset: Option<String>,
    /// The PostgreSQL log_line_prefix (default: the bundle's pg_settings or postgresql.conf,
    /// else detected from the log).
    #[arg(long, value_name = "LOG_LINE_PREFIX")]
    prefix: Option<String>,
    /// Seconds an OOM kill and a crash line with the same PID may be apart.
    #[arg(
        long,
        value_name = "SECONDS",
        default_value_t = 120.0,
        value_parser = crate::parse_seconds
    )]
    match_tolerance: f64,
    /// Read only the last N bytes of each log larger than that (e.g. 200MiB); the report says
    /// so at the top. Default: every log is read whole.
    #[arg(long, value_name = "N", value_parser = crate::parse_size)]
    max_log_bytes: Option<u64>,
    /// Memory for the whole analysis (e.g. 512MiB, 2GiB): half for the files held in memory
    /// (larger logs are read from disk, larger files of other kinds keep their end, and the
    /// report says so at the top), the rest for reading the logs and what the diagnosis keeps
    /// of them (fewer records under the default, each limit said at the top; one thread under
    /// 128MiB). At least 32MiB.
    #[arg(long, value_name = "SIZE", default_value = "512MiB", value_parser = parse_memory_limit)]
    memory_limit: u64,
    /// Threads to parse large PostgreSQL logs on (default: one per available core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    /// No progress on standard error (shown only on a terminal, for reads over a second),
    /// nor notes: errors only.
    #[arg(short, long)]
    pub(crate) quiet: bool,
}

impl BundleArgs {
    fn options(&self) -> Result<DiagnoseOptions> {
        let host_utc_offset_seconds = self
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
        Ok(DiagnoseOptions {
            boot_time: self.boot_time,
            host_utc_offset_seconds,
            pg_prefix: self.prefix.clone(),
            match_tolerance_seconds: self.match_tolerance,
            max_log_bytes: self.max_log_bytes,
            memory_limit: self.memory_limit,
            threads: self.threads.map(usize::from),
            ..DiagnoseOptions::default()
        })
    }

    /// The inputs as paths: `-` is standard input (read whole, in a temporary file past what
    /// memory allows).
    fn input_paths(&self) -> Result<Vec<PathBuf>> {
        let stdin = self.paths.iter().filter(|p| is_stdin(p)).count();
        if stdin > 1 {
            anyhow::bail!("`-` (standard input) can be given once");
        }
        Ok(self
            .paths
            .iter()
            .map(|p| {
                if is_stdin(p) {
                    PathBuf::from("/dev/stdin")
                } else {
                    p.clone()
                }
            })
            .collect())
    }

    /// The bundle's inputs that are files of the file system (not standard input).
    pub(crate) fn files(&self) -> impl Iterator<Item = &Path> {
        self.paths
            .iter()
            .filter(|p| !is_stdin(p))
            .map(PathBuf::as_path)
    }

    /// Analyses the bundle, with progress on standard error when it is a terminal.
    pub(crate) fn report(&self, terminals: Terminals) -> Result<Report> {
        let options = self.options()?;
        let paths = self.input_paths()?;
        let name = match &self.paths[..] {
            [one] => one.display().to_string(),
            many => format!("{} inputs", many.len()),
        };
        let progress = Progress::start(terminals.stderr && !self.quiet, format!("opening {name}"));
        let report = pgmortem::analyze_paths_with_progress(&paths, &options, &mut |step| {
            if let Step::Diagnosing { sources, bytes } = step {
                let files = if sources == 1 { "file" } else { "files" };
                progress.message(format!(
                    "reading {sources} {files} ({}) of {name}",
                    human_bytes(bytes)
                ));
            }
        })?;
        drop(progress);
        Ok(report)
    }
}

/// `-`: standard input.
fn is_stdin(path: &Path) -> bool {
    path == Path::new("-")
}

#[derive(Debug, Args)]
pub(crate) struct AnalyzeArgs {
    #[command(flatten)]
    bundle: BundleArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    format: OutputFormat,
    /// Write the report to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Colour the text report: `auto` on a terminal unless NO_COLOR is set (CLICOLOR_FORCE
    /// forces it), `always` (even into a file or a pipe), or `never`.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN")]
    color: ColorChoice,
    /// Show only the findings of this severity or worse (every format; the headline says how
    /// many were left out).
    #[arg(long, value_enum, value_name = "SEVERITY")]
    min_severity: Option<MinSeverity>,
    /// Show only the findings of these rules (ids as `pgmortem rules` lists them, any case;
    /// several separated by commas, or the flag again), in every format.
    #[arg(long = "rule", value_name = "ID", value_delimiter = ',')]
    rules: Vec<String>,
    /// The whole report in text and Markdown: each finding with all its evidence, every
    /// incident of a group, the rules that could not run, every source.
    #[arg(short, long)]
    verbose: bool,
    /// List every source read in text and Markdown (the rest stays short).
    #[arg(long)]
    sources: bool,
}

/// `--min-severity`.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum MinSeverity {
    /// Everything.
    Info,
    /// Warnings and critical findings.
    Warning,
    /// Critical findings only.
    Critical,
}

impl MinSeverity {
    fn severity(self) -> Severity {
        match self {
            MinSeverity::Info => Severity::Info,
            MinSeverity::Warning => Severity::Warning,
            MinSeverity::Critical => Severity::Critical,
        }
    }
}

/// Keeps the findings `--min-severity` and `--rule` ask for; how many were left out.
fn filter_findings(report: &mut Report, min: Option<Severity>, rules: &[&str]) -> usize {
    let before = report.findings.len();
    report.findings.retain(|f| {
        min.is_none_or(|m| f.severity >= m) && (rules.is_empty() || rules.contains(&f.id))
    });
    before - report.findings.len()
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum OutputFormat {
    /// Text for a person.
    Text,
    /// The `pgmortem.report/v1` JSON.
    Json,
    /// Markdown, to paste into a ticket or an issue.
    Markdown,
    /// One self-contained HTML page: timeline, incidents, findings, memory, flame graph.
    Html,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorChoice {
    /// On a terminal, unless the environment says otherwise.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Whether to colour, for `choice`, a destination that is a terminal or not, and the
/// environment as `anstyle-query` reads it (the conventions clap follows): `NO_COLOR` set to
/// anything but the empty string turns `auto` off, `CLICOLOR_FORCE` turns it on even off a
/// terminal, `CLICOLOR=0` or `TERM=dumb` turn it off. An explicit `always` or `never` wins.
pub(crate) fn color_enabled(choice: ColorChoice, terminal: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            if anstyle_query::no_color() {
                false
            } else if anstyle_query::clicolor_force() {
                true
            } else {
                terminal
                    && anstyle_query::clicolor() != Some(false)
                    && anstyle_query::term_supports_color()
            }
        }
    }
}

pub(crate) fn run(args: AnalyzeArgs, out: &mut dyn Write, terminals: Terminals) -> Result<()> {
    if let Some(output) = &args.output {
        for input in args.bundle.files() {
            crate::refuse_to_overwrite(output, input)?;
        }
    }
    let rules = args
        .rules
        .iter()
        .map(|id| crate::rules::find(id).map(|rule| rule.meta.id))
        .collect::<Result<Vec<_>>>()
        .map_err(|e| anyhow::anyhow!("--rule: {e}"))?;
    let mut report = args.bundle.report(terminals)?;
    let left_out = filter_findings(
        &mut report,
        args.min_severity.map(MinSeverity::severity),
        &rules,
    );
    let detail = render::Detail {
        verbose: args.verbose,
        sources: args.sources,
        findings_left_out: left_out,
    };
    let text = match args.format {
        OutputFormat::Text => {
            // Under `auto`, a file is never coloured: only standard output.
            let color = match (args.color, &args.output) {
                (ColorChoice::Auto, Some(_)) => false,
                (choice, _) => color_enabled(choice, terminals.stdout),
            };
            let options = render::TextOptions { color, detail };
            render::text_with(&report, &options)
        }
        OutputFormat::Json => render::json(&report)?,
        OutputFormat::Markdown => render::markdown_with(&report, &detail),
        OutputFormat::Html => render::html(&report),
    };
    write_output(args.output.as_deref(), &text, out)
}

/// Writes `text` to `path`, or to `out` without one.
pub(crate) fn write_output(path: Option<&Path>, text: &str, out: &mut dyn Write) -> Result<()> {
    match path {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
        }
        None => out
            .write_all(text.as_bytes())
            .context("cannot write the report"),
    }
}
