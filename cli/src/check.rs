//! `pgmortem check DIR... [--junit FILE] [--update]`: replays incident fixtures (a bundle plus
//! its `expected.json`) and says which no longer get their diagnosis, for CI.
//!
//! Exit codes: 0 every fixture passed (or was updated), 1 at least one failed, 2 usage or
//! input error (a path that does not exist, a JUnit file that cannot be written).

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::Args;
use pgmortem::DiagnoseOptions;
use pgmortem::check::{self, Fixture, Outcome};

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Incident fixtures: a directory holding a bundle (the collector's .tar.gz, or the
    /// bundle's own files) and expected.json, or a directory of such directories.
    #[arg(required = true, value_name = "DIR")]
    paths: Vec<PathBuf>,
    /// Also write the outcomes as JUnit XML to this file.
    #[arg(long, value_name = "FILE")]
    junit: Option<PathBuf>,
    /// Write each fixture's expected.json from today's report instead of checking it (review
    /// the change before committing it).
    #[arg(long, conflicts_with = "junit")]
    update: bool,
    /// Threads to parse large PostgreSQL logs on (default: one per available core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    threads: Option<u16>,
}

pub(crate) fn run(args: CheckArgs, out: &mut dyn Write) -> Result<u8> {
    let mut fixtures: Vec<Fixture> = Vec::new();
    for path in &args.paths {
        if !path.is_dir() {
            bail!(
                "{}: not a directory (an incident fixture is a directory with a bundle and {})",
                path.display(),
                check::EXPECTED_FILE
            );
        }
        fixtures.extend(check::fixtures_in(path)?);
    }
    let options = DiagnoseOptions {
        threads: args.threads.map(usize::from),
        ..DiagnoseOptions::default()
    };
    if args.update {
        return update(&fixtures, &options, out);
    }
    let width = fixtures
        .iter()
        .map(|f| f.name.len())
        .max()
        .unwrap_or(0)
        .min(60);
    let github = std::env::var("GITHUB_ACTIONS").is_ok_and(|v| v == "true");
    let start = Instant::now();
    let mut outcomes = Vec::with_capacity(fixtures.len());
    for fixture in &fixtures {
        let outcome = check::check(fixture, &options);
        print_outcome(out, &outcome, width)?;
        if github {
            annotate(out, &outcome)?;
        }
        outcomes.push(outcome);
    }
    let failed = outcomes.iter().filter(|o| !o.passed()).count();
    writeln!(
        out,
        "\n{} fixture(s): {} passed, {failed} failed ({:.1} s)",
        outcomes.len(),
        outcomes.len() - failed,
        start.elapsed().as_secs_f64()
    )?;
    if let Some(path) = &args.junit {
        std::fs::write(path, check::junit_xml(&outcomes))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

/// `PASS name  0.31 s`, or `FAIL name  0.40 s` and what differed, indented.
fn print_outcome(out: &mut dyn Write, outcome: &Outcome, width: usize) -> Result<()> {
    let verdict = if outcome.passed() { "PASS" } else { "FAIL" };
    writeln!(
        out,
        "{verdict} {:width$}  {:>6.2} s",
        outcome.fixture.name, outcome.seconds
    )?;
    for failure in outcome.failures() {
        // A message of several lines keeps its lines under the first.
        writeln!(out, "       {}", failure.replace('\n', "\n       "))?;
    }
    Ok(())
}

/// GitHub Actions workflow commands: one `::error` per difference, on the fixture's
/// expected.json.
fn annotate(out: &mut dyn Write, outcome: &Outcome) -> Result<()> {
    for failure in outcome.failures() {
        writeln!(
            out,
            "::error file={},title={}::{}",
            property(&outcome.fixture.expected_path().display().to_string()),
            property(&format!("pgmortem check: {}", outcome.fixture.name)),
            data(&failure)
        )?;
    }
    Ok(())
}

/// A workflow command's message, escaped as GitHub's toolkit does.
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A workflow command's property value: also `:` and `,` escaped.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

fn update(fixtures: &[Fixture], options: &DiagnoseOptions, out: &mut dyn Write) -> Result<u8> {
    for fixture in fixtures {
        let expected = check::update(fixture, options)?;
        writeln!(
            out,
            "wrote {}: {} finding(s) that must be there, {} incident(s)",
            fixture.expected_path().display(),
            expected.must.len(),
            expected.incidents.len()
        )?;
    }
    writeln!(
        out,
        "review the changes (git diff) before committing them: outage ranges are half to twice \
         today's"
    )?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workflow_command_escaping() {
        assert_eq!(data("50% of\nit"), "50%25 of%0Ait");
        assert_eq!(property("a:b,c"), "a%3Ab%2Cc");
    }
}
