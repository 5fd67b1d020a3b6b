//! `pgmortem parse pglog FILE [--prefix P] [--format F] [--stats] [--threads N]`: a PostgreSQL
//! server log, read in blocks (memory stays bounded whatever the file size), one JSON object per
//! record or the counts. With more than one thread each block is cut into chunks at record
//! boundaries, the chunks are parsed (and their records serialised) in parallel and joined in
//! file order: the output is the same as with one thread.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;
use clap::{Args, ValueEnum};
use pgmortem::parse::CountedLines;
use pgmortem::parse::paste::PasteReport;
use pgmortem::parse::pglog::{
    PgLogFormat, PgLogOptions, PgRecord, PrefixChoice, ReadError, ReadOptions, parse_reader,
};
use pgmortem::parse::wrap::Wrapper;
use serde::Serialize;

/// `pgmortem parse pglog`.
#[derive(Debug, Args)]
pub(crate) struct ParsePglogArgs {
    /// The log file (`-` for standard input).
    file: PathBuf,
    /// The log_line_prefix (default: detected from the first lines).
    #[arg(long)]
    prefix: Option<String>,
    /// The destination format, or the wrapper around the lines (`docker-json`, `cri`,
    /// `timestamped`, `journal-export`, `cloudwatch`, `azure`: the format inside is sniffed);
    /// `auto` sniffs both from the first lines.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// Print one JSON object with the counts (lines, records, continuation_lines,
    /// unrecognized_lines, events by kind, …) instead of the records.
    #[arg(long)]
    stats: bool,
    /// Threads to parse with (default: one per available core; 1 reads sequentially).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
    /// Bytes read and parsed at a time with several threads (default 64 MiB with --stats,
    /// 16 MiB otherwise); small values exercise the joins between chunks.
    #[arg(long, hide = true)]
    block_bytes: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormatArg {
    Auto,
    Stderr,
    Csv,
    Json,
    Syslog,
    Syslog5424,
    Journal,
    #[value(name = "journal_json", alias = "journal-json")]
    JournalJson,
    Heroku,
    #[value(name = "cloudsql")]
    CloudSql,
    Cnpg,
    /// Docker's json-file log.
    #[value(name = "docker-json", alias = "docker_json")]
    DockerJson,
    /// containerd / CRI-O log (`/var/log/pods/*/*.log`).
    Cri,
    /// `kubectl logs --timestamps`, `docker logs -t`.
    Timestamped,
    /// `journalctl -o export`.
    #[value(name = "journal-export", alias = "journal_export")]
    JournalExport,
    /// Amazon CloudWatch Logs' events (`aws logs filter-log-events` JSON, the console's CSV).
    #[value(name = "cloudwatch")]
    CloudWatch,
    /// Azure Monitor's rows of `PostgreSQLLogs` (Log Analytics CSV or JSON, resource logs).
    Azure,
}

/// What `--stats` prints.
#[derive(Debug, Serialize)]
struct Stats {
    prefix: String,
    format: PgLogFormat,
    /// The wrapper the lines were taken out of; absent when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    wrapper: Option<Wrapper>,
    lines: u64,
    records: u64,
    continuation_lines: u64,
    unrecognized_lines: u64,
    orphan_lines: u64,
    memory_context_lines: u64,
    blank_lines: u64,
    other_program_lines: u64,
    /// Header rows of a CSV export; absent when none.
    #[serde(skip_serializing_if = "is_zero")]
    header_lines: u64,
    broken_rows: u64,
    #[serde(skip_serializing_if = "CountedLines::is_empty")]
    unreadable_stamps: CountedLines,
    invalid_utf8_lines: u64,
    oversized_lines: u64,
    /// Event kind → records.
    events: BTreeMap<&'static str, u64>,
    /// Language → records whose message was read through that catalog.
    languages: BTreeMap<&'static str, u64>,
    /// How the prefix was chosen (`given`, `candidate`, `inferred`) and how many of the first
    /// lines it fits; null for csvlog and jsonlog.
    prefix_choice: Option<PrefixChoice>,
    /// What pasting the log did to its lines and what was undone (absent when nothing was).
    #[serde(skip_serializing_if = "Option::is_none")]
    pasted: Option<PasteReport>,
    unrecognized_examples: Vec<(u64, String)>,
}

/// Bytes parsed per parallel block with `--stats` (the records are only counted).
const STATS_BLOCK: usize = 16 << 20;

/// Bytes parsed per parallel block when printing records (their JSON waits until the block is
/// joined: about four times the block).
const RECORDS_BLOCK: usize = 8 << 20;

pub(crate) fn parse(args: ParsePglogArgs, out: &mut dyn Write) -> Result<()> {
    let options = PgLogOptions {
        prefix: args.prefix.clone(),
        format: match args.format {
            FormatArg::Auto => None,
            FormatArg::Stderr => Some(PgLogFormat::Stderr),
            FormatArg::Csv => Some(PgLogFormat::Csv),
            FormatArg::Json => Some(PgLogFormat::Json),
            FormatArg::Syslog => Some(PgLogFormat::Syslog),
            FormatArg::Syslog5424 => Some(PgLogFormat::Syslog5424),
            FormatArg::Journal => Some(PgLogFormat::Journal),
            FormatArg::JournalJson => Some(PgLogFormat::JournalJson),
            FormatArg::Heroku => Some(PgLogFormat::Heroku),
            FormatArg::CloudSql => Some(PgLogFormat::CloudSql),
            FormatArg::Cnpg => Some(PgLogFormat::Cnpg),
            FormatArg::DockerJson
            | FormatArg::Cri
            | FormatArg::Timestamped
            | FormatArg::JournalExport
            | FormatArg::CloudWatch
            | FormatArg::Azure => None,
        },
        wrapper: match args.format {
            FormatArg::DockerJson => Some(Wrapper::DockerJson),
            FormatArg::Cri => Some(Wrapper::Cri),
            FormatArg::Timestamped => Some(Wrapper::Timestamped),
            FormatArg::JournalExport => Some(Wrapper::JournalExport),
            FormatArg::CloudWatch => Some(Wrapper::CloudWatch),
            FormatArg::Azure => Some(Wrapper::Azure),
            _ => None,
        },
        ..PgLogOptions::default()
    };
    let name = args.file.display().to_string();
    let input = crate::input::open(&args.file)?;
    let threads = match args.threads {
        Some(n) => usize::from(n),
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    let read = ReadOptions {
        threads,
        block_bytes: args.block_bytes.unwrap_or(if args.stats {
            STATS_BLOCK
        } else {
            RECORDS_BLOCK
        }),
    };
    let mut out = std::io::BufWriter::new(out);
    let parsed = if args.stats {
        // The parser counts records by kind and language itself: each record is dropped on
        // the thread that parsed it.
        parse_reader(input, &options, &read, &|_| (), &mut |()| {})
    } else {
        // Records are serialised on the parsing threads and written in log order.
        let map = |r: Box<PgRecord>| {
            let mut line = Vec::with_capacity(768);
            pgmortem::parse::pglog::write_json(&mut line, &r);
            line.push(b'\n');
            line
        };
        let mut failed: Option<anyhow::Error> = None;
        // Once the output fails (a closed pipe), the input ends: nothing more is read.
        let stop = AtomicBool::new(false);
        let mut sink = |line: Vec<u8>| {
            if failed.is_none() {
                failed = out.write_all(&line).err().map(anyhow::Error::from);
                stop.store(failed.is_some(), Ordering::Relaxed);
            }
        };
        let input = StopWhen {
            inner: input,
            stop: &stop,
        };
        let parsed = parse_reader(input, &options, &read, &map, &mut sink);
        if let Some(e) = failed {
            return Err(e);
        }
        parsed
    };
    let log = match parsed {
        Ok(log) => log,
        Err(ReadError::Io(e)) => {
            return Err(anyhow::Error::new(e).context(format!("cannot read {name}")));
        }
        Err(e) => return Err(anyhow::Error::new(e).context(name)),
    };
    if args.stats {
        let stats = Stats {
            prefix: log.prefix,
            format: log.format,
            wrapper: log.wrapper,
            lines: log.stats.lines,
            records: log.stats.records,
            continuation_lines: log.continuation_lines,
            unrecognized_lines: log.stats.unrecognized_lines,
            orphan_lines: log.orphan_lines,
            memory_context_lines: log.memory_context_lines,
            blank_lines: log.blank_lines,
            other_program_lines: log.other_program_lines,
            header_lines: log.header_lines,
            broken_rows: log.broken_rows,
            unreadable_stamps: log.unreadable_stamps,
            invalid_utf8_lines: log.stats.invalid_utf8_lines,
            oversized_lines: log.stats.oversized_lines,
            events: log.events,
            languages: log.languages,
            prefix_choice: log.prefix_choice,
            pasted: log.pasted,
            unrecognized_examples: log.stats.unrecognized_examples,
        };
        serde_json::to_writer(&mut out, &stats)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// A stream that ends early once `stop` is set.
struct StopWhen<'a, R> {
    inner: R,
    stop: &'a AtomicBool,
}

impl<R: Read> Read for StopWhen<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return Ok(0);
        }
        self.inner.read(buf)
    }
}

/// Whether a count is 0 (for `skip_serializing_if`).
fn is_zero(n: &u64) -> bool {
    *n == 0
}
