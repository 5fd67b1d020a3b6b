//! The perf subcommands: `parse perf`, `collapse-perf` and `flamegraph`.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::Args;
use pgmortem::parse::perf;

/// `pgmortem parse perf FILE [--stats]`.
#[derive(Debug, Args)]
pub(crate) struct ParsePerfArgs {
    /// The `perf script` output (`-` for standard input).
    file: PathBuf,
    /// Print one JSON object: the profile (per-event totals, processes, top functions,
    /// kernel share, timeline, stack queries) with the line statistics and the header.
    #[arg(long)]
    stats: bool,
    /// The event the profile breaks down (default: the one with the most samples).
    #[arg(long)]
    event: Option<String>,
    /// Entries in each top list of the profile.
    #[arg(long, default_value_t = 25)]
    top: usize,
    /// Width of the profile's timeline buckets, in seconds.
    #[arg(long, default_value_t = 1.0)]
    bucket_seconds: f64,
    /// An extra stack query, NAME=GLOB[,GLOB…] (e.g. audit=audit_*,__audit_*); repeatable.
    #[arg(long = "query", value_name = "NAME=GLOBS")]
    queries: Vec<String>,
}

/// The folding flags, named as `inferno-collapse-perf` names them.
#[derive(Debug, Args)]
pub(crate) struct FoldArgs {
    /// Include the PID in the root frame (`comm-PID`).
    #[arg(long)]
    pid: bool,
    /// Include PID and TID in the root frame (`comm-PID/TID`).
    #[arg(long)]
    tid: bool,
    /// Include raw addresses where symbols can't be found.
    #[arg(long)]
    addrs: bool,
    /// Annotate kernel functions with `_[k]`.
    #[arg(long)]
    kernel: bool,
    /// Annotate JIT functions with `_[j]`.
    #[arg(long)]
    jit: bool,
    /// All annotations (--kernel --jit).
    #[arg(long)]
    all: bool,
    /// Fold only this event (full name such as `cpu-clock:pppH` or `sched:sched_switch`, or
    /// without modifiers); default the first event, as inferno.
    #[arg(long = "event-filter", visible_alias = "event", value_name = "NAME")]
    event_filter: Option<String>,
    /// Omit the callers of any frame with this function name (repeatable).
    #[arg(long = "skip-after", value_name = "NAME")]
    skip_after: Vec<String>,
    /// Threads folding in parallel (default: the number of CPUs).
    #[arg(short = 'n', long = "nthreads", value_name = "UINT")]
    nthreads: Option<usize>,
}

impl FoldArgs {
    fn options(&self) -> perf::FoldOptions {
        perf::FoldOptions {
            include_pid: self.pid,
            include_tid: self.tid,
            include_addrs: self.addrs,
            annotate_kernel: self.kernel || self.all,
            annotate_jit: self.jit || self.all,
            event: self.event_filter.clone(),
            skip_after: self.skip_after.clone(),
        }
    }
}

/// `pgmortem collapse-perf [FILE]`.
#[derive(Debug, Args)]
pub(crate) struct CollapsePerfArgs {
    /// The `perf script` output (standard input when absent or `-`).
    file: Option<PathBuf>,
    #[command(flatten)]
    fold: FoldArgs,
    /// Write the collapsed stacks to this file instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

/// `pgmortem flamegraph FILE -o out.svg`.
#[derive(Debug, Args)]
pub(crate) struct FlamegraphArgs {
    /// The `perf script` output (`-` for standard input).
    file: PathBuf,
    /// The SVG file to write.
    #[arg(short, long, value_name = "OUT.svg")]
    output: PathBuf,
    /// Title of the graph.
    #[arg(long, default_value = "Flame Graph")]
    title: String,
    #[command(flatten)]
    fold: FoldArgs,
}

fn parse_query(text: &str) -> Result<perf::StackQuery> {
    let (name, globs) = text
        .split_once('=')
        .with_context(|| format!("--query {text:?}: expected NAME=GLOB[,GLOB…]"))?;
    let patterns: Vec<&str> = globs.split(',').filter(|g| !g.is_empty()).collect();
    anyhow::ensure!(
        !name.is_empty() && !patterns.is_empty(),
        "--query {text:?}: expected NAME=GLOB[,GLOB…]"
    );
    Ok(perf::StackQuery::new(name, &patterns))
}

pub(crate) fn parse(args: ParsePerfArgs, out: &mut dyn Write) -> Result<()> {
    let mut out = std::io::BufWriter::new(out);
    let mut state = perf::SamplesState::default();
    if args.stats {
        let mut options = perf::ProfileOptions {
            event: args.event,
            top: args.top,
            bucket_seconds: args.bucket_seconds,
            ..Default::default()
        };
        for q in &args.queries {
            options.stack_queries.push(parse_query(q)?);
        }
        let mut builder = perf::ProfileBuilder::new(options);
        for_each_block(&args.file, |block| {
            let mut samples = perf::Samples::resume(block, std::mem::take(&mut state));
            for sample in samples.by_ref() {
                builder.add(&sample);
            }
            state = samples.into_state();
            Ok(())
        })?;
        let (header, stats, counts) = perf::Samples::resume(&[], state).finish();
        serde_json::to_writer(&mut out, &builder.finish(header, stats, counts))?;
        out.write_all(b"\n")?;
    } else {
        for_each_block(&args.file, |block| {
            let mut samples = perf::Samples::resume(block, std::mem::take(&mut state));
            for sample in samples.by_ref() {
                serde_json::to_writer(&mut out, &sample)?;
                out.write_all(b"\n")?;
            }
            state = samples.into_state();
            Ok(())
        })?;
    }
    out.flush()?;
    Ok(())
}

/// Bytes read per block of a `perf script` input read on one thread: memory stays near twice
/// this, whatever the input size. A block this small stays in the processor's cache between
/// the read that copies it and the fold that reads it: folding a 224 MB capture took 5 % less
/// time than in 16 MiB blocks, and 43 MB instead of 59.
const BLOCK_BYTES: usize = 1 << 20;

/// Bytes read per block when a block is folded on several threads: each thread folds its
/// part of the block with tables of its own, merged at the end of the block.
const PARALLEL_BLOCK_BYTES: usize = 16 << 20;

/// The longest block: one without a sample start is read on up to this (a sample of this many
/// bytes of frames, or not a profile), then handed as it is, so memory stays bounded.
const MAX_BLOCK_BYTES: usize = 2 * PARALLEL_BLOCK_BYTES;

/// Hands the file (or standard input for `-`) to `block` in blocks, each cut where a sample
/// starts, so inputs of many GB are read in bounded memory and no sample spans two blocks.
fn for_each_block(path: &Path, block: impl FnMut(&[u8]) -> Result<()>) -> Result<()> {
    for_each_block_of(path, BLOCK_BYTES, block)
}

/// [`for_each_block`] in blocks of `block_bytes`.
fn for_each_block_of(
    path: &Path,
    block_bytes: usize,
    mut block: impl FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let (mut reader, cut) = crate::input::open_lines(path)?;
    // Room for the longest block, allocated once (its pages are touched only as far as it
    // is filled): what follows the last cut moves to the front.
    let mut buffer = vec![0u8; MAX_BLOCK_BYTES.max(block_bytes)];
    let mut filled = 0;
    let mut searched = 0;
    loop {
        let goal = (filled + block_bytes).min(buffer.len());
        let mut eof = false;
        while filled < goal {
            match reader.read(&mut buffer[filled..goal]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot read {}", path.display()));
                }
            }
        }
        if eof {
            if filled > 0 {
                block(&buffer[..filled])?;
            }
            break;
        }
        // The last sample start, searched for in the lines read since the last search: a
        // block without one grows a block at a time, and is not searched again from its
        // start each time. From the newline before them, so a sample starting right after
        // it is found (at 1, never 0).
        let from = memchr::memrchr(b'\n', &buffer[..searched]).unwrap_or(0);
        let found = perf::last_sample_start(&buffer[from..filled]);
        let start = if found > 0 { from + found } else { 0 };
        if start > 0 {
            block(&buffer[..start])?;
            buffer.copy_within(start..filled, 0);
            filled -= start;
        } else if filled == buffer.len() {
            // The longest block without a second sample start: not a profile (or one sample
            // of 32 MiB of frames): read as it is, so memory stays bounded.
            block(&buffer[..filled])?;
            filled = 0;
        }
        // What is left holds no sample start past its first byte.
        searched = filled;
    }
    crate::input::report_cut(path, &cut);
    Ok(())
}

/// Folds the file (or standard input for `-`) block by block.
fn fold_file(path: &Path, fold: &FoldArgs) -> Result<perf::Folder> {
    let threads = fold
        .nthreads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut folder = perf::Folder::new(fold.options());
    let block_bytes = if threads > 1 {
        PARALLEL_BLOCK_BYTES
    } else {
        BLOCK_BYTES
    };
    for_each_block_of(path, block_bytes, |block| {
        folder.add_input(block, threads);
        Ok(())
    })?;
    for note in folder.left_out() {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("pgmortem: note: {}: {note}", path.display());
        }
    }
    Ok(folder)
}

pub(crate) fn collapse(args: CollapsePerfArgs, out: &mut dyn Write) -> Result<()> {
    let path = args.file.unwrap_or_else(|| PathBuf::from("-"));
    if let Some(file) = &args.output {
        crate::refuse_to_overwrite(file, &path)?;
    }
    let folder = fold_file(&path, &args.fold)?;
    match args.output {
        Some(file) => {
            let mut writer = std::io::BufWriter::new(
                std::fs::File::create(&file)
                    .with_context(|| format!("cannot write {}", file.display()))?,
            );
            folder
                .write_sorted(&mut writer)
                .and_then(|()| writer.flush())
                .with_context(|| format!("cannot write {}", file.display()))
        }
        None => {
            let mut writer = std::io::BufWriter::new(out);
            folder
                .write_sorted(&mut writer)
                .and_then(|()| writer.flush())
                .context("cannot write the collapsed stacks")
        }
    }
}

pub(crate) fn flamegraph(args: FlamegraphArgs) -> Result<()> {
    crate::refuse_to_overwrite(&args.output, &args.file)?;
    let folded = fold_file(&args.file, &args.fold)?.render();
    anyhow::ensure!(
        !folded.is_empty(),
        "{}: no stack to draw (no sample with frames for the chosen event)",
        args.file.display()
    );
    let svg = render_svg(&folded, &args.title)?;
    std::fs::write(&args.output, svg)
        .with_context(|| format!("cannot write {}", args.output.display()))
}

#[cfg(feature = "flamegraph")]
fn render_svg(folded: &str, title: &str) -> Result<Vec<u8>> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_owned();
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, folded.lines(), &mut svg)
        .context("cannot draw the flame graph")?;
    Ok(svg)
}

#[cfg(not(feature = "flamegraph"))]
fn render_svg(_folded: &str, _title: &str) -> Result<Vec<u8>> {
    anyhow::bail!(
        "this pgmortem was built without the `flamegraph` feature; run `pgmortem collapse-perf` \
         and draw its output with a flame graph tool"
    )
}
