//! Renders a [`Report`] for people (text) and for programs (JSON, schema `pgmortem.report/v1`).
//!
//! Rendering never fails on report content; JSON serialisation errors (which cannot happen for
//! this schema) are returned rather than hidden.

use std::fmt::Write as _;

use pgmortem_diagnose::{Incident, Report, Severity, human_kb};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Plain text for a terminal.
    Text,
    /// Pretty-printed JSON.
    Json,
}

/// Renders `report` in `format`.
pub fn render(report: &Report, format: Format) -> Result<String, serde_json::Error> {
    match format {
        Format::Text => Ok(text(report)),
        Format::Json => json(report),
    }
}

/// The report as pretty-printed JSON, with a trailing newline.
pub fn json(report: &Report) -> Result<String, serde_json::Error> {
    let mut out = serde_json::to_string_pretty(report)?;
    out.push('\n');
    Ok(out)
}

/// The report as text for a person.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    let n = report.incidents.len();
    let _ = writeln!(
        out,
        "pgmortem: {n} incident{} in {} source{}",
        if n == 1 { "" } else { "s" },
        report.sources.len(),
        if report.sources.len() == 1 { "" } else { "s" }
    );
    for (i, incident) in report.incidents.iter().enumerate() {
        out.push('\n');
        write_incident(&mut out, i + 1, incident);
    }
    if !report.findings.is_empty() {
        let _ = writeln!(out, "\nFindings");
        for f in &report.findings {
            let sev = match f.severity {
                Severity::Critical => "CRITICAL",
                Severity::Warning => "WARNING ",
                Severity::Info => "INFO    ",
            };
            let _ = writeln!(out, "  {sev} [{}] {}", f.id, f.title);
            let _ = writeln!(out, "           {}", f.summary);
            if let Some(r) = &f.recommendation {
                let _ = writeln!(out, "           What to do: {r}");
            }
            let ev: Vec<String> = f
                .evidence
                .iter()
                .map(|e| format!("{}:{} ({})", e.path, e.line, e.what))
                .collect();
            if !ev.is_empty() {
                let _ = writeln!(out, "           Evidence: {}", ev.join(", "));
            }
        }
    }
    let _ = writeln!(out, "\nClock");
    match (report.clock.boot_time, report.clock.boot_time_source) {
        (Some(at), Some(src)) => {
            let _ = writeln!(
                out,
                "  host boot time {at} (from {src}, ±{} s)",
                report
                    .clock
                    .boot_time_uncertainty_seconds
                    .unwrap_or_default()
            );
        }
        _ => {
            let _ = writeln!(out, "  host boot time unknown");
        }
    }
    for note in &report.clock.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    let _ = writeln!(out, "\nSources");
    let width = report
        .sources
        .iter()
        .map(|s| s.path.len())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(
        out,
        "  {:width$}  {:12} {:>8} {:>8} {:>12}",
        "path", "kind", "lines", "records", "unrecognized"
    );
    for s in &report.sources {
        let _ = writeln!(
            out,
            "  {:width$}  {:12} {:>8} {:>8} {:>12}{}",
            s.path,
            s.kind,
            s.lines,
            s.records,
            s.unrecognized_lines,
            s.note
                .as_deref()
                .map(|n| format!("  ({n})"))
                .unwrap_or_default()
        );
    }
    out
}

fn ts(at: Option<jiff::Timestamp>) -> String {
    at.map_or_else(|| "unknown time".to_owned(), |t| t.to_string())
}

fn write_incident(out: &mut String, number: usize, incident: &Incident) {
    let _ = writeln!(
        out,
        "Incident {number}: {} at {} (confidence {:.2}{})",
        incident.kind,
        ts(incident.started_at),
        incident.confidence,
        incident
            .matched_by
            .map(|m| format!(", tied by {m}"))
            .unwrap_or_default()
    );
    if let Some(k) = &incident.kernel_kill {
        let mut parts = vec![format!("OOM kill of {} pid {}", k.comm, k.pid)];
        let sizes: Vec<String> = [
            ("anon-rss", k.anon_rss_kb),
            ("file-rss", k.file_rss_kb),
            ("shmem-rss", k.shmem_rss_kb),
            ("total-vm", k.total_vm_kb),
            ("pgtables", k.pgtables_kb),
        ]
        .into_iter()
        .filter_map(|(name, v)| v.map(|kb| format!("{name} {}", human_kb(kb))))
        .collect();
        if !sizes.is_empty() {
            parts.push(sizes.join(", "));
        }
        if let Some(adj) = k.oom_score_adj {
            parts.push(format!("oom_score_adj {adj}"));
        }
        let _ = writeln!(out, "  kernel    {}", parts.join("; "));
        let mut limit = format!(
            "constraint {}",
            k.constraint.as_deref().unwrap_or("unknown")
        );
        if let Some(m) = &k.memcg {
            if let Some(l) = m.limit_kb {
                let _ = write!(limit, ", cgroup limit {}", human_kb(l));
            }
            if let Some(u) = m.usage_kb {
                let _ = write!(limit, ", usage {}", human_kb(u));
            }
            if let Some(f) = m.failcnt {
                let _ = write!(limit, ", failcnt {f}");
            }
            if let Some(p) = &m.path {
                let _ = write!(limit, " in {p}");
            }
        }
        let _ = writeln!(out, "            {limit}");
        if let Some(t) = &k.trigger_comm {
            let _ = writeln!(
                out,
                "            set off by an allocation of {t}{}",
                k.trigger_pid
                    .map(|p| format!(" pid {p}"))
                    .unwrap_or_default()
            );
        }
        let _ = writeln!(out, "            at {}   ({}:{})", ts(k.at), k.path, k.line);
    }
    if let Some(c) = &incident.postgres_crash {
        let how = match (c.signal, c.exit_code) {
            (Some(s), _) => format!("terminated by signal {s}"),
            (None, Some(code)) => format!("exited with code {code}"),
            _ => "died".to_owned(),
        };
        let _ = writeln!(out, "  postgres  {} (PID {}) {how}", c.process, c.pid);
        if let Some(q) = &c.query {
            let _ = writeln!(out, "            query: {}", q.replace('\n', " "));
        }
        let _ = writeln!(out, "            at {}   ({}:{})", ts(c.at), c.path, c.line);
    }
    if let Some(r) = &incident.recovery {
        let mut steps = Vec::new();
        let base = incident.postgres_crash.as_ref().and_then(|c| c.at);
        let rel = |t: Option<jiff::Timestamp>| match (base, t) {
            (Some(b), Some(t)) => Some(format!("+{:.3} s", t.duration_since(b).as_secs_f64())),
            _ => None,
        };
        if let Some(s) = rel(r.terminated_others_at) {
            steps.push(format!("others terminated {s}"));
        }
        if let Some(s) = rel(r.reinitialized_at) {
            steps.push(format!("reinitializing {s}"));
        }
        if let (Some(a), Some(b)) = (&r.redo_start_lsn, &r.redo_end_lsn) {
            steps.push(format!("redo {a} → {b}"));
        }
        if let Some(s) = rel(r.ready_at) {
            steps.push(format!("ready {s}"));
        }
        if !steps.is_empty() {
            let _ = writeln!(out, "  restart   {}", steps.join(", "));
        }
    }
    let mut figures = Vec::new();
    if let Some(s) = incident.outage_seconds {
        figures.push(format!("outage {s:.3} s"));
    }
    if let Some(s) = incident.redo_seconds {
        figures.push(format!("redo {s:.3} s"));
    }
    if let Some(b) = incident.wal_replayed_bytes {
        figures.push(format!("WAL replayed {b} bytes ({})", human_kb(b / 1024)));
    }
    if let Some(s) = incident.clock_skew_seconds {
        figures.push(format!("clock skew {s:+.3} s"));
    }
    if !figures.is_empty() {
        let _ = writeln!(out, "  figures   {}", figures.join(", "));
    }
    for note in &incident.notes {
        let _ = writeln!(out, "  note      {note}");
    }
}
