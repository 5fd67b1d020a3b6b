//! `pgmortem parse pglog FILE [--prefix P] [--format F] [--stats] [--threads N]`: a PostgreSQL
//! server log, read in blocks (memory stays bounded whatever the file size), one JSON object per
//! record or the counts. With more than one thread each block is cut into chunks at record
//! boundaries, the chunks are parsed (and their records serialised) in parallel and joined in
//! file order: the output is the same as with one thread.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use pgmortem::parse::pglog::{
    ParallelParser, PgLog, PgLogFormat, PgLogOptions, PgLogReader, PgRecord, PrefixChoice,
};
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
    /// How the prefix was chosen (`given`, `candidate`, `inferred`) and how many of the first
    /// lines it fits; null for csvlog and jsonlog.
    prefix_choice: Option<PrefixChoice>,
    unrecognized_examples: Vec<(u64, String)>,
}

/// Bytes read per chunk (one thread).
const CHUNK: usize = 1 << 20;

/// Bytes parsed per parallel block with `--stats` (the records are only counted).
const STATS_BLOCK: usize = 16 << 20;

/// Bytes parsed per parallel block when printing records (their JSON waits until the block is
/// joined: about four times the block).
const RECORDS_BLOCK: usize = 8 << 20;

/// Chunks per thread in a block: enough that a slow chunk does not leave a core idle.
const CHUNKS_PER_THREAD: usize = 8;

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
        },
        ..PgLogOptions::default()
    };
    let name = args.file.display().to_string();
    let input = crate::input::open(&args.file)?;
    let threads = match args.threads {
        Some(n) => usize::from(n),
        None => std::thread::available_parallelism().map_or(1, usize::from),
    };
    let mut out = std::io::BufWriter::new(out);
    let log = if threads <= 1 {
        sequential(input, &name, options, args.stats, &mut out)?
    } else {
        let block = args.block_bytes.unwrap_or(if args.stats {
            STATS_BLOCK
        } else {
            RECORDS_BLOCK
        });
        let run = Parallel {
            stats: args.stats,
            threads,
            block,
        };
        parallel(input, &name, options, &run, &mut out)?
    };
    if args.stats {
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
            events: log.events,
            languages: log.languages,
            prefix_choice: log.prefix_choice,
            unrecognized_examples: log.stats.unrecognized_examples,
        };
        serde_json::to_writer(&mut out, &stats)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    Ok(())
}

/// One thread: [`PgLogReader`] fed 1 MiB chunks.
fn sequential(
    mut input: Box<dyn Read + Send>,
    name: &str,
    options: PgLogOptions,
    stats: bool,
    out: &mut dyn Write,
) -> Result<PgLog> {
    let mut reader = PgLogReader::new(options);
    let mut buf = vec![0u8; CHUNK];
    let emit = |reader: &mut PgLogReader, out: &mut dyn Write| -> Result<()> {
        while let Some(record) = reader.next_record() {
            // The parser counts records by kind and language itself.
            if !stats {
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
        reader.push(&buf[..n]).with_context(|| name.to_owned())?;
        emit(&mut reader, out)?;
    }
    reader.finish().with_context(|| name.to_owned())?;
    emit(&mut reader, out)?;
    Ok(reader.summary())
}

/// How the parallel path runs.
struct Parallel {
    stats: bool,
    threads: usize,
    /// Bytes per block.
    block: usize,
}

/// Several threads: blocks cut after their last newline, each parsed by [`ParallelParser`]
/// (records counted or serialised on the parsing threads), written in file order.
fn parallel(
    input: Box<dyn Read + Send>,
    name: &str,
    options: PgLogOptions,
    run: &Parallel,
    out: &mut dyn Write,
) -> Result<PgLog> {
    let Parallel {
        stats,
        threads,
        block,
    } = *run;
    let max_line = options.max_line_bytes;
    let chunk = block / (threads * CHUNKS_PER_THREAD);
    let mut parser = ParallelParser::new(options, threads, chunk);
    // The next block is read while this one is parsed: one block being read, one waiting,
    // one being parsed. Parsed blocks' buffers go back to the reader (no fresh 16 MiB
    // allocation, and its page faults, per block).
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<std::io::Result<Vec<u8>>>(1);
        let (give_back, taken_back) = std::sync::mpsc::channel::<Vec<u8>>();
        scope.spawn(move || {
            let mut blocks = Blocks::new(input, block, max_line);
            loop {
                let next = match blocks.next() {
                    Ok(Some(bytes)) => {
                        let mut buf = taken_back.try_recv().unwrap_or_default();
                        buf.clear();
                        buf.extend_from_slice(bytes);
                        Ok(buf)
                    }
                    Ok(None) => return,
                    Err(e) => Err(e),
                };
                let stop = next.is_err();
                // A closed channel: the parsing side stopped on an error.
                if tx.send(next).is_err() || stop {
                    return;
                }
            }
        });
        let mut blocks = rx
            .into_iter()
            .map(|b| b.with_context(|| format!("cannot read {name}")));
        if stats {
            // The parser counts records by kind and language itself.
            let map = |_: Box<PgRecord>| ();
            let mut sink = |()| {};
            for bytes in blocks.by_ref() {
                let bytes = bytes?;
                parser
                    .feed(&bytes, &map, &mut sink)
                    .with_context(|| name.to_owned())?;
                // The reader may have finished: then the buffer is simply dropped.
                let _ = give_back.send(bytes);
            }
            return parser
                .finish(&map, &mut sink)
                .with_context(|| name.to_owned());
        }
        let map = |r: Box<PgRecord>| {
            let mut line = serde_json::to_vec(&r)?;
            line.push(b'\n');
            Ok(line)
        };
        let mut failed: Option<anyhow::Error> = None;
        let mut sink = |line: Result<Vec<u8>, serde_json::Error>| {
            if failed.is_none() {
                let written = line.map_err(anyhow::Error::from).and_then(|l| {
                    out.write_all(&l)?;
                    Ok(())
                });
                failed = written.err();
            }
        };
        for bytes in blocks {
            let bytes = bytes?;
            parser
                .feed(&bytes, &map, &mut sink)
                .with_context(|| name.to_owned())?;
            let _ = give_back.send(bytes);
        }
        let log = parser
            .finish(&map, &mut sink)
            .with_context(|| name.to_owned())?;
        match failed {
            Some(e) => Err(e),
            None => Ok(log),
        }
    })
}

/// Reads a log in blocks of about `size` bytes ending after a newline (only the last may not).
/// A line longer than `max_line` + 4 bytes with no newline in sight is handed out cut there
/// and the rest of it skipped, as [`PgLogReader`] does: memory stays bounded.
struct Blocks {
    input: Box<dyn Read + Send>,
    buf: Vec<u8>,
    /// Bytes of `buf` read and not handed out yet start at `start` and end at `filled`.
    start: usize,
    filled: usize,
    size: usize,
    max_line: usize,
    /// Dropping the rest of an over-long line.
    skipping: bool,
    eof: bool,
}

impl Blocks {
    fn new(input: Box<dyn Read + Send>, size: usize, max_line: usize) -> Self {
        Blocks {
            input,
            buf: Vec::new(),
            start: 0,
            filled: 0,
            size: size.max(max_line.saturating_add(5)),
            max_line,
            skipping: false,
            eof: false,
        }
    }

    /// The next block, `None` at the end.
    fn next(&mut self) -> std::io::Result<Option<&[u8]>> {
        // Move what is left of the previous block to the front, then fill up to `size`.
        self.buf.copy_within(self.start..self.filled, 0);
        self.filled -= self.start;
        self.start = 0;
        if self.buf.len() < self.size {
            self.buf.resize(self.size, 0);
        }
        loop {
            while !self.eof && self.filled < self.size {
                let n = self.input.read(&mut self.buf[self.filled..])?;
                if n == 0 {
                    self.eof = true;
                } else {
                    self.filled += n;
                }
            }
            if self.skipping {
                match memchr_newline(&self.buf[..self.filled]) {
                    Some(nl) => {
                        self.start = nl + 1;
                        self.skipping = false;
                        self.buf.copy_within(self.start..self.filled, 0);
                        self.filled -= self.start;
                        self.start = 0;
                        continue;
                    }
                    None if self.eof => return Ok(None),
                    None => {
                        self.filled = 0;
                        continue;
                    }
                }
            }
            break;
        }
        if self.filled == 0 {
            return Ok(None);
        }
        let end = if self.eof {
            self.filled
        } else {
            match last_newline(&self.buf[..self.filled]) {
                Some(nl) => nl + 1,
                None => {
                    // One line fills the whole block: keep its first max_line + 4 bytes.
                    self.skipping = true;
                    self.max_line + 4
                }
            }
        };
        self.start = end;
        Ok(Some(&self.buf[..end]))
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

fn last_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().rposition(|&b| b == b'\n')
}
