//! `pgmortem redact BUNDLE -o OUT.tar.gz`: a copy of a bundle that can be shared.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use pgmortem::redact::FieldsOnlyReason;

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
    for only in &redacted.names_only_in_fields {
        let kind = serde_json::to_value(only.kind)?;
        let why = match only.reason {
            FieldsOnlyReason::CommonWord => "it is a common word of bundles",
            FieldsOnlyReason::TooShort => "it is too short to be told from other words",
            FieldsOnlyReason::UsedInTheBundle => {
                "the bundle uses it as a path component or a setting's name"
            }
        };
        writeln!(
            out,
            "  {} {}: replaced only in the fields that print a name ({why})",
            kind.as_str().unwrap_or_default(),
            only.token
        )?;
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
    if redacted.csv_records_as_text > 0 {
        writeln!(
            out,
            "  {} csvlog record(s) that did not split into fields rewritten as text",
            redacted.csv_records_as_text
        )?;
    }
    if redacted.json_lines_as_text > 0 {
        writeln!(
            out,
            "  {} line(s) of JSON-lines files that were not JSON rewritten as text",
            redacted.json_lines_as_text
        )?;
    }
    for n in &redacted.not_copied {
        writeln!(out, "  not copied: {} ({})", n.path, n.reason)?;
    }
    writeln!(
        out,
        "Query literals are redacted wherever a PostgreSQL log, a plan, a memory-context dump or \
         the pg_stat_activity dump prints a query; read the bundle before sharing it."
    )?;
    Ok(())
}
