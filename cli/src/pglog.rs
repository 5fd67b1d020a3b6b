//! `pgmortem parse pglog FILE [--prefix P] [--format F] [--stats]`: a PostgreSQL server log, read
//! in chunks (memory stays bounded whatever the file size), one JSON object per record or the
//! counts.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use pgmortem::parse::pglog::{PgLogFormat, PgLogOptions, PgLogReader};
use serde::Serialize;

/// `pgmortem parse pglog`.
#[derive(Debug, Args)]
pub(crate) struct ParsePglogArgs {
    /// The log file (`-` for standard input).
    file: PathBuf,
    /// The log_line_prefix (default: detected from the first lines).
    #[arg(long)]
    prefix: Option<String>,
    /// The destination format; `auto` sniffs it from the first lines.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// Print one JSON object with the counts (lines, records, continuation_lines,
    /// unrecognized_lines, events by kind, …) instead of the records.
    #[arg(long)]
    stats: bool,
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
}

/// What `--stats` prints.
#[derive(Debug, Serialize)]
struct Stats {
    prefix: String,
    format: PgLogFormat,
    lines: u64,
    records: u64,
    continuation_lines: u64,
    unrecognized_lines: u64,
    orphan_lines: u64,
    memory_context_lines: u64,
    blank_lines: u64,
    other_program_lines: u64,
    broken_rows: u64,
    invalid_utf8_lines: u64,
    oversized_lines: u64,
    /// Event kind → records.
    events: BTreeMap<&'static str, u64>,
    /// Language → records whose message was read through that catalog.
    languages: BTreeMap<&'static str, u64>,
    unrecognized_examples: Vec<(u64, String)>,
}

/// Bytes read per chunk.
const CHUNK: usize = 1 << 20;

pub(crate) fn parse(args: ParsePglogArgs, out: &mut dyn Write) -> Result<()> {
    let options = PgLogOptions {
        prefix: args.prefix,
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
        },
        ..PgLogOptions::default()
    };
    let name = args.file.display().to_string();
    let mut input = crate::input::open(&args.file)?;
    let mut reader = PgLogReader::new(options);
    let mut events: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut languages: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut out = std::io::BufWriter::new(out);
    let mut buf = vec![0u8; CHUNK];
    let mut emit = |reader: &mut PgLogReader, out: &mut dyn Write| -> Result<()> {
        while let Some(record) = reader.next_record() {
            if args.stats {
                if let Some(e) = &record.event {
                    *events.entry(e.kind()).or_default() += 1;
                }
                if let Some(l) = record.language {
                    *languages.entry(l).or_default() += 1;
                }
            } else {
                serde_json::to_writer(&mut *out, &record)?;
                out.write_all(b"\n")?;
            }
        }
        Ok(())
    };
    loop {
        let n = input
            .read(&mut buf)
            .with_context(|| format!("cannot read {name}"))?;
        if n == 0 {
            break;
        }
        reader.push(&buf[..n]).with_context(|| name.clone())?;
        emit(&mut reader, &mut out)?;
    }
    reader.finish().with_context(|| name.clone())?;
    emit(&mut reader, &mut out)?;
    if args.stats {
        let log = reader.summary();
        let stats = Stats {
            prefix: log.prefix,
            format: log.format,
            lines: log.stats.lines,
            records: log.stats.records,
            continuation_lines: log.continuation_lines,
            unrecognized_lines: log.stats.unrecognized_lines,
            orphan_lines: log.orphan_lines,
            memory_context_lines: log.memory_context_lines,
            blank_lines: log.blank_lines,
            other_program_lines: log.other_program_lines,
            broken_rows: log.broken_rows,
            invalid_utf8_lines: log.stats.invalid_utf8_lines,
            oversized_lines: log.stats.oversized_lines,
            events,
            languages,
            unrecognized_examples: log.stats.unrecognized_examples,
        };
        serde_json::to_writer(&mut out, &stats)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}
