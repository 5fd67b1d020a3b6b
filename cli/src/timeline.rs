//! `pgmortem timeline`: the merged timeline of the analysis, every event of every source on
//! UTC with its error bar and `file:line`, filtered by time window and kind; the view to
//! scroll when the findings are not enough.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::Write;

use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use jiff::Timestamp;
use pgmortem::diagnose::TimelineEvent;

use crate::Terminals;
use crate::analyze::BundleArgs;

#[derive(Debug, Args)]
pub(crate) struct TimelineArgs {
    #[command(flatten)]
    bundle: BundleArgs,
    /// Only events at or after T: RFC 3339 (2026-11-24T05:29:10Z, 2026-11-24T07:29:10+02:00)
    /// or a time without a zone, read as UTC (2026-11-24 05:29:10, 2026-11-24).
    #[arg(long, value_name = "T", value_parser = parse_time)]
    since: Option<Timestamp>,
    /// Only events at or before T (same forms as --since).
    #[arg(long, value_name = "T", value_parser = parse_time)]
    until: Option<Timestamp>,
    /// Only events of kind K (repeat for several): oom_report, terminated_by_signal,
    /// redo_done, ready, … (the `kind` of the report's timeline).
    #[arg(long = "kind", value_name = "K")]
    kinds: Vec<String>,
    /// Output format: aligned text, or one JSON object per event (the report's timeline
    /// entries: at, uncertainty_seconds, origin, kind, summary, path, line).
    #[arg(long, value_enum, default_value_t = TimelineFormat::Text)]
    format: TimelineFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum TimelineFormat {
    /// One aligned line per event.
    Text,
    /// One JSON object per line.
    Json,
}

/// `T` of `--since`/`--until`: RFC 3339, or a civil time (or date) read as UTC.
fn parse_time(text: &str) -> Result<Timestamp, String> {
    let text = text.trim();
    if let Ok(t) = text.parse::<Timestamp>() {
        return Ok(t);
    }
    text.parse::<jiff::civil::DateTime>()
        .ok()
        .and_then(|dt| dt.to_zoned(jiff::tz::TimeZone::UTC).ok())
        .map(|z| z.timestamp())
        .ok_or_else(|| {
            format!(
                "{text:?} is not a time: expected RFC 3339 (2026-11-24T05:29:10Z, \
                 2026-11-24T07:29:10+02:00) or a UTC time without a zone (2026-11-24 05:29:10)"
            )
        })
}

pub(crate) fn run(
    args: TimelineArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
    terminals: Terminals,
) -> Result<()> {
    if let (Some(since), Some(until)) = (args.since, args.until) {
        if since > until {
            bail!("--since {since} is after --until {until}: no event can be in between");
        }
    }
    let report = args.bundle.report(terminals)?;
    let window = args.since.is_some() || args.until.is_some();
    let mut untimed = 0;
    let events: Vec<&TimelineEvent> = report
        .timeline
        .iter()
        .filter(|e| args.kinds.is_empty() || args.kinds.contains(&e.kind))
        .filter(|e| match e.at {
            Some(at) => args.since.is_none_or(|s| at >= s) && args.until.is_none_or(|u| at <= u),
            None => {
                untimed += usize::from(window);
                !window
            }
        })
        .collect();
    if !args.bundle.quiet {
        let present: BTreeSet<&str> = report.timeline.iter().map(|e| e.kind.as_str()).collect();
        for kind in args.kinds.iter().filter(|k| !present.contains(k.as_str())) {
            let kinds: Vec<&str> = present.iter().copied().collect();
            writeln!(
                err,
                "pgmortem: no event of kind {kind:?} in this bundle's timeline (its kinds: {})",
                kinds.join(", ")
            )?;
        }
        if untimed > 0 {
            writeln!(
                err,
                "pgmortem: {untimed} events whose time could not be put on UTC are left out \
                 (--since, --until)"
            )?;
        }
    }
    match args.format {
        TimelineFormat::Json => {
            for e in events {
                crate::print_json(out, e)?;
            }
        }
        TimelineFormat::Text => out.write_all(text(&events).as_bytes())?,
    }
    Ok(())
}

/// One aligned line per event: time (UTC), error bar, origin, kind, summary, `(file:line)`.
fn text(events: &[&TimelineEvent]) -> String {
    let times: Vec<String> = events
        .iter()
        .map(|e| {
            e.at.map_or_else(|| "unknown time".to_owned(), |t| t.to_string())
        })
        .collect();
    let bars: Vec<String> = events
        .iter()
        .map(|e| {
            e.uncertainty_seconds
                .map(|s| format!("±{s} s"))
                .unwrap_or_default()
        })
        .collect();
    let width = |v: &[String]| v.iter().map(|s| s.chars().count()).max().unwrap_or(0);
    let (tw, bw) = (width(&times), width(&bars));
    let kw = events.iter().map(|e| e.kind.len()).max().unwrap_or(0);
    // `kernel`, `postgres`, and `container` when Kubernetes recorded a kill.
    let ow = events
        .iter()
        .map(|e| e.origin.len())
        .max()
        .unwrap_or(0)
        .max(8);
    let mut out = String::new();
    for ((e, time), bar) in events.iter().zip(&times).zip(&bars) {
        let head = format!("{time:tw$}  {bar:bw$}  {:ow$}  {:kw$}  ", e.origin, e.kind);
        let indent = " ".repeat(head.chars().count());
        // The summary and path come from the bundle: their control characters are shown.
        let summary = pgmortem::render::visible(&e.summary);
        let mut lines = summary.lines();
        let _ = write!(out, "{head}{}", lines.next().unwrap_or_default());
        for line in lines {
            let _ = write!(out, "\n{indent}{}", line.trim_end());
        }
        let _ = writeln!(
            out,
            "   ({}:{})",
            pgmortem::render::visible(&e.path),
            e.line
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc3339_or_utc_without_a_zone() {
        let utc: Timestamp = "2026-11-24T05:29:10Z".parse().unwrap();
        for text in [
            "2026-11-24T05:29:10Z",
            "2026-11-24T07:29:10+02:00",
            "2026-11-24 05:29:10",
            "2026-11-24T05:29:10",
            " 2026-11-24 05:29:10 ",
        ] {
            assert_eq!(parse_time(text), Ok(utc), "{text}");
        }
        assert_eq!(
            parse_time("2026-11-24"),
            Ok("2026-11-24T00:00:00Z".parse().unwrap())
        );
        assert_eq!(
            parse_time("2026-11-24 05:29:10.5").unwrap(),
            "2026-11-24T05:29:10.5Z".parse::<Timestamp>().unwrap()
        );
        for bad in ["yesterday", "2026-13-01 00:00:00", "05:29:10", ""] {
            let e = parse_time(bad).unwrap_err();
            assert!(e.contains("RFC 3339"), "{e}");
        }
    }
}
