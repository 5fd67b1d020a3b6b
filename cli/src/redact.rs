//! `pgmortem redact BUNDLE -o OUT.tar.gz`: a copy of a bundle that can be shared.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

#[derive(Debug, Args)]
pub(crate) struct RedactArgs {
    /// The bundle: a directory, an archive or a single file.
    #[arg(value_name = "BUNDLE")]
    path: PathBuf,
    /// The redacted bundle to write (.tar.gz); its files go under a directory of the same name.
    #[arg(short, long, value_name = "OUT.tar.gz")]
    output: PathBuf,
}

pub(crate) fn run(args: RedactArgs, out: &mut dyn Write) -> Result<()> {
    crate::refuse_to_overwrite(&args.output, &args.path)?;
    let redacted = pgmortem::redact::redact_bundle(&args.path, &args.output)
        .with_context(|| format!("cannot redact {}", args.path.display()))?;
    writeln!(
        out,
        "wrote {}: {} file{} and redaction.json",
        args.output.display(),
        redacted.files,
        if redacted.files == 1 { "" } else { "s" }
    )?;
    for (kind, count) in &redacted.replaced {
        if count.occurrences > 0 {
            let name = serde_json::to_value(kind)?;
            writeln!(
                out,
                "  {:<14} {} replaced ({} distinct)",
                name.as_str().unwrap_or_default(),
                count.occurrences,
                count.distinct
            )?;
        }
    }
    if redacted.lines_not_utf8 > 0 {
        writeln!(
            out,
            "  {} line(s) not UTF-8: invalid bytes became U+FFFD",
            redacted.lines_not_utf8
        )?;
    }
    if redacted.lines_split > 0 {
        writeln!(
            out,
            "  {} line(s) over 1 MiB rewritten in pieces",
            redacted.lines_split
        )?;
    }
    for n in &redacted.not_copied {
        writeln!(out, "  not copied: {} ({})", n.path, n.reason)?;
    }
    writeln!(
        out,
        "Query text is redacted after `statement:`, `STATEMENT:`, `QUERY:` and `parameters:` and in \
         pg_stat_activity dumps; read the bundle before sharing it."
    )?;
    Ok(())
}
