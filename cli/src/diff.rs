//! `pgmortem diff BEFORE AFTER`: two bundles of one host (or two reports' JSON) compared, to
//! answer "did the change we made fix it?" (the comparison is `pgmortem::diff`'s).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use pgmortem::DiagnoseOptions;
use pgmortem::diff;

#[derive(Debug, Args)]
pub(crate) struct DiffArgs {
    /// The bundle (or a report's JSON, `analyze --format json`) from before the change.
    #[arg(value_name = "BEFORE")]
    before: PathBuf,
    /// The bundle (or a report's JSON) from after it.
    #[arg(value_name = "AFTER")]
    after: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
    /// Write the comparison to this file instead of standard output.
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum DiffFormat {
    /// Text for a person.
    Text,
    /// The `pgmortem.diff/v1` JSON.
    Json,
    /// Markdown, to paste into a ticket or an issue.
    Markdown,
}

/// The report of `path` as JSON: a report's JSON read as it is, a bundle analysed.
fn report_of(path: &Path) -> Result<serde_json::Value> {
    if path.is_file() && path.extension().is_some_and(|e| e == "json") {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        if let Ok(value) = serde_json::from_slice::<serde_json::Value>(&bytes)
            && value["schema"] == pgmortem::diagnose::SCHEMA
        {
            return Ok(value);
        }
    }
    let report = pgmortem::analyze(path, &DiagnoseOptions::default())
        .with_context(|| format!("cannot analyse {}", path.display()))?;
    Ok(diff::report_json(&report))
}

pub(crate) fn run(args: DiffArgs, out: &mut dyn Write) -> Result<()> {
    if let Some(output) = &args.output {
        for input in [&args.before, &args.after] {
            crate::refuse_to_overwrite(output, input)?;
        }
    }
    let d = diff::diff(&report_of(&args.before)?, &report_of(&args.after)?);
    let text = match args.format {
        DiffFormat::Text => diff::text(&d),
        DiffFormat::Json => serde_json::to_string_pretty(&d)? + "\n",
        DiffFormat::Markdown => diff::markdown(&d),
    };
    crate::analyze::write_output(args.output.as_deref(), &text, out)
}
