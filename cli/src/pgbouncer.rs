//! `pgmortem parse pgbouncer FILE [--form F] [--year Y] [--stats]`: a pgbouncer log (its own
//! log file, or its lines through syslog or the journal), read in blocks (memory stays bounded
//! whatever the file size), one JSON object per record or the counts.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use pgmortem::parse::CountedLines;
use pgmortem::parse::pgbouncer::{BouncerForm, BouncerOptions, BouncerReader};
use serde::Serialize;

/// `pgmortem parse pgbouncer`.
#[derive(Debug, Args)]
pub(crate) struct ParsePgbouncerArgs {
    /// The log file (`-` for standard input; gzip and zstd are decompressed).
    file: PathBuf,
    /// The form the log was written in; `auto` tells it from the first lines.
    #[arg(long, value_enum, default_value_t = FormArg::Auto)]
    form: FormArg,
    /// Year for syslog and journal stamps that print none (`Nov 28 05:30:10`).
    #[arg(long)]
    year: Option<i16>,
    /// Print one JSON object with the counts (lines, records, unrecognized_lines, events by
    /// kind, closings and pooler errors by cause, …) instead of the records.
    #[arg(long)]
    stats: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum FormArg {
    Auto,
    File,
    Syslog,
    Syslog5424,
    Journal,
    #[value(name = "journal_json", alias = "journal-json")]
    JournalJson,
}

/// What `--stats` prints.
#[derive(Debug, Serialize)]
struct Stats {
    form: BouncerForm,
    lines: u64,
    records: u64,
    continuation_lines: u64,
    unrecognized_lines: u64,
    blank_lines: u64,
    other_program_lines: u64,
    #[serde(skip_serializing_if = "CountedLines::is_empty")]
    unreadable_stamps: CountedLines,
    invalid_utf8_lines: u64,
    oversized_lines: u64,
    /// Event kind → records.
    events: BTreeMap<&'static str, u64>,
    /// Cause → client connections closed.
    client_closings: BTreeMap<&'static str, u64>,
    /// Cause → server connections closed.
    server_closings: BTreeMap<&'static str, u64>,
    /// Cause → `pooler error:` lines.
    pooler_errors: BTreeMap<&'static str, u64>,
    unrecognized_examples: Vec<(u64, String)>,
}

/// Bytes read at a time.
const BLOCK_BYTES: usize = 1 << 20;

pub(crate) fn parse(args: ParsePgbouncerArgs, out: &mut dyn Write) -> Result<()> {
    let options = BouncerOptions {
        form: match args.form {
            FormArg::Auto => None,
            FormArg::File => Some(BouncerForm::File),
            FormArg::Syslog => Some(BouncerForm::Syslog),
            FormArg::Syslog5424 => Some(BouncerForm::Syslog5424),
            FormArg::Journal => Some(BouncerForm::Journal),
            FormArg::JournalJson => Some(BouncerForm::JournalJson),
        },
        year: args.year,
        ..BouncerOptions::default()
    };
    let mut input = crate::input::open(&args.file)?;
    let mut reader = BouncerReader::new(options);
    let mut out = std::io::BufWriter::new(out);
    let mut block = vec![0u8; BLOCK_BYTES];
    let write = |reader: &mut BouncerReader, out: &mut dyn Write| -> Result<()> {
        while let Some(record) = reader.next_record() {
            if !args.stats {
                serde_json::to_writer(&mut *out, &record)?;
                out.write_all(b"\n")?;
            }
        }
        Ok(())
    };
    loop {
        let n = match input.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return Err(anyhow::Error::new(e))
                    .with_context(|| format!("cannot read {}", args.file.display()));
            }
        };
        reader.push(&block[..n]);
        write(&mut reader, &mut out)?;
    }
    reader.finish();
    write(&mut reader, &mut out)?;
    if args.stats {
        let log = reader.summary();
        let stats = Stats {
            form: log.form,
            lines: log.stats.lines,
            records: log.stats.records,
            continuation_lines: log.continuation_lines,
            unrecognized_lines: log.stats.unrecognized_lines,
            blank_lines: log.blank_lines,
            other_program_lines: log.other_program_lines,
            unreadable_stamps: log.unreadable_stamps,
            invalid_utf8_lines: log.stats.invalid_utf8_lines,
            oversized_lines: log.stats.oversized_lines,
            events: log.events,
            client_closings: log.client_closings,
            server_closings: log.server_closings,
            pooler_errors: log.pooler_errors,
            unrecognized_examples: log.stats.unrecognized_examples,
        };
        serde_json::to_writer(&mut out, &stats)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}
