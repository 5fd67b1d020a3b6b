//! The report as text for a person: what to read first, each incident, the findings most
//! severe first with their evidence, the rules that could not run, the host, the clock and the
//! sources.

use std::fmt::Write as _;

use pgmortem_diagnose::{Finding, Incident, Report, Severity, human_bytes, human_kb};

/// Indent of the text under a label (`  kernel    `).
const INDENT: &str = "            ";
/// Indent of a finding's body.
const BODY: &str = "           ";

/// The report as text for a person.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    header(&mut out, report);
    if !report.caveats.is_empty() {
        let _ = writeln!(out, "\nRead first");
        for c in &report.caveats {
            let _ = writeln!(out, "  ! {}", c.text);
        }
    }
    for (i, incident) in report.incidents.iter().enumerate() {
        out.push('\n');
        write_incident(&mut out, i + 1, incident);
    }
    if !report.findings.is_empty() {
        let _ = writeln!(out, "\nFindings");
        for f in &report.findings {
            write_finding(&mut out, f);
        }
    }
    if !report.not_evaluated.is_empty() {
        let _ = writeln!(out, "\nNot evaluated (the bundle lacks what they read)");
        // One line per set of missing inputs: `perf` alone keeps six rules from running.
        let mut groups: Vec<(String, Vec<&str>, &[&str])> = Vec::new();
        for n in &report.not_evaluated {
            let key = n.missing.join(", ");
            match groups.iter_mut().find(|g| g.0 == key) {
                Some(g) => g.1.push(n.rule),
                None => groups.push((key, vec![n.rule], &n.files)),
            }
        }
        for (missing, rules, files) in groups {
            let _ = writeln!(out, "  without {missing}: {}", rules.join(", "));
            let _ = writeln!(out, "    (from {})", files.join("; "));
        }
    }
    write_host(&mut out, report);
    write_clock(&mut out, report);
    write_sources(&mut out, report);
    out
}

fn header(out: &mut String, report: &Report) {
    let n = report.incidents.len();
    let count = |s: Severity| report.findings.iter().filter(|f| f.severity == s).count();
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let _ = writeln!(
        out,
        "pgmortem: {}, {} ({} critical, {}, {} info) in {}",
        plural(n, "incident"),
        plural(report.findings.len(), "finding"),
        count(Severity::Critical),
        plural(count(Severity::Warning), "warning"),
        count(Severity::Info),
        plural(report.sources.len(), "source"),
    );
}

fn ts(at: Option<jiff::Timestamp>) -> String {
    at.map_or_else(|| "unknown time".to_owned(), |t| t.to_string())
}

/// `text` with every line after the first indented by `indent`.
fn indented(text: &str, indent: &str) -> String {
    let mut lines = text.lines();
    let mut out = lines.next().unwrap_or_default().to_owned();
    for line in lines {
        out.push('\n');
        out.push_str(indent);
        out.push_str(line.trim_end());
    }
    out
}

fn write_incident(out: &mut String, number: usize, incident: &Incident) {
    let _ = writeln!(
        out,
        "Incident {number}: {} (cause {}) at {} (confidence {:.2}{})",
        incident.kind,
        incident.cause,
        ts(incident.started_at),
        incident.confidence,
        incident
            .matched_by
            .map(|m| format!(", tied by {m}"))
            .unwrap_or_default()
    );
    if let Some(k) = &incident.kernel_kill {
        let victim = if k.pid == 0 && k.comm.is_empty() {
            "OOM killer ran; no victim recorded".to_owned()
        } else {
            format!("OOM kill of {} pid {}", k.comm, k.pid)
        };
        let mut parts = vec![victim];
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
        let _ = writeln!(out, "{INDENT}{limit}");
        if let Some(t) = &k.trigger_comm {
            let _ = writeln!(
                out,
                "{INDENT}set off by an allocation of {t}{}",
                k.trigger_pid
                    .map(|p| format!(" pid {p}"))
                    .unwrap_or_default()
            );
        }
        let _ = writeln!(out, "{INDENT}at {}   ({}:{})", ts(k.at), k.path, k.line);
    }
    if !incident.preceded_by.is_empty() {
        let _ = writeln!(out, "  before    (what the log recorded just before)");
        for l in &incident.preceded_by {
            let _ = writeln!(
                out,
                "{INDENT}{} {}: {}   ({}:{})",
                ts(l.at),
                l.severity.unwrap_or("LOG"),
                indented(&l.message, INDENT),
                l.path,
                l.line
            );
        }
    }
    if let Some(c) = &incident.postgres_crash {
        let how = match (c.signal, c.exit_code) {
            (Some(s), _) => format!("terminated by signal {s}"),
            (None, Some(code)) => format!("exited with code {code}"),
            _ => "died".to_owned(),
        };
        let _ = writeln!(out, "  postgres  {} (PID {}) {how}", c.process, c.pid);
        if let Some(q) = &c.query {
            let _ = writeln!(
                out,
                "{INDENT}query: {}",
                indented(q, &format!("{INDENT}       "))
            );
        }
        let _ = writeln!(out, "{INDENT}at {}   ({}:{})", ts(c.at), c.path, c.line);
    }
    if let Some(r) = &incident.recovery {
        let mut steps = Vec::new();
        let base = incident
            .postgres_crash
            .as_ref()
            .and_then(|c| c.at)
            .or(incident.started_at);
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
    if let Some(n) = incident.sessions_lost {
        figures.push(format!("{n} sessions cut"));
    }
    if incident.connections_refused > 0 {
        figures.push(format!(
            "{} connections refused during recovery",
            incident.connections_refused
        ));
    }
    if !figures.is_empty() {
        let _ = writeln!(out, "  figures   {}", figures.join(", "));
    }
    for note in &incident.notes {
        let _ = writeln!(out, "  note      {note}");
    }
}

fn write_finding(out: &mut String, f: &Finding) {
    let sev = match f.severity {
        Severity::Critical => "CRITICAL",
        Severity::Warning => "WARNING ",
        Severity::Info => "INFO    ",
    };
    let confidence = if f.confidence < 1.0 {
        format!(" (confidence {:.2})", f.confidence)
    } else {
        String::new()
    };
    let _ = writeln!(out, "  {sev} [{}] {}{confidence}", f.id, f.title);
    if !f.summary.is_empty() {
        let _ = writeln!(out, "{BODY}{}", indented(&f.summary, BODY));
    }
    if let Some(r) = &f.recommendation {
        let _ = writeln!(out, "{BODY}What to do: {}", indented(r, BODY));
    }
    if !f.evidence.is_empty() {
        let _ = writeln!(out, "{BODY}Evidence:");
        for e in &f.evidence {
            let _ = writeln!(
                out,
                "{BODY}  {}:{} ({})",
                e.path,
                e.line,
                indented(&e.what, BODY)
            );
        }
    }
}

fn write_host(out: &mut String, report: &Report) {
    let h = &report.host;
    let mut lines = Vec::new();
    if let Some(m) = &h.memory {
        let mut s = format!("RAM {}", human_bytes(m.ram.value));
        match m.swap_total.as_ref().map(|s| s.value) {
            Some(0) | None => s.push_str(", no swap"),
            Some(total) => {
                let _ = write!(
                    s,
                    ", swap {} ({} used)",
                    human_bytes(total),
                    human_bytes(m.swap_used().unwrap_or(0))
                );
            }
        }
        if let (Some(l), Some(c)) = (&m.commit_limit, &m.committed_as) {
            let _ = write!(
                s,
                ", Committed_AS {} of CommitLimit {}",
                human_bytes(c.value),
                human_bytes(l.value)
            );
        }
        if m.hugepage_pool_bytes() > 0 {
            let _ = write!(s, ", huge pages {}", human_bytes(m.hugepage_pool_bytes()));
        }
        lines.push(s);
    }
    let vm = &h.vm;
    let mut kernel = Vec::new();
    if let Some(v) = &vm.overcommit_memory {
        kernel.push(format!("vm.overcommit_memory {}", v.value));
    }
    if let Some(v) = &vm.swappiness {
        kernel.push(format!("vm.swappiness {}", v.value));
    }
    if let Some(v) = &h.thp.enabled {
        kernel.push(format!("THP {}", v.value));
    }
    if let Some(v) = &h.thp.defrag {
        kernel.push(format!("defrag {}", v.value));
    }
    if !kernel.is_empty() {
        lines.push(kernel.join(", "));
    }
    if let Some(c) = &h.cgroup {
        lines.push(match &c.limit {
            Some(l) => format!("memory cgroup limit {} ({})", human_bytes(l.value), c.dir),
            None => format!("memory cgroup without a limit ({})", c.dir),
        });
    }
    let pg = &h.postgres;
    if pg.version.is_some() || pg.settings_from.is_some() {
        let mut s = pg.version.as_ref().map_or_else(
            || "PostgreSQL".to_owned(),
            |v| format!("PostgreSQL {}", v.value.text),
        );
        for name in [
            "shared_buffers",
            "work_mem",
            "max_connections",
            "huge_pages",
        ] {
            if let Some(setting) = pg.setting(name) {
                let _ = write!(s, ", {name} {}", setting.display());
            }
        }
        if let Some(from) = &pg.settings_from {
            let _ = write!(s, " (settings from {from})");
        }
        lines.push(s);
    }
    if !h.processes.processes.is_empty() {
        lines.push(format!(
            "{} PostgreSQL processes collected{}",
            h.processes.processes.len(),
            h.processes
                .postmaster
                .map(|p| format!(", postmaster pid {p}"))
                .unwrap_or_default()
        ));
    }
    if !lines.is_empty() {
        let _ = writeln!(out, "\nHost");
        for l in lines {
            let _ = writeln!(out, "  {l}");
        }
    }
}

fn write_clock(out: &mut String, report: &Report) {
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
}

fn write_sources(out: &mut String, report: &Report) {
    let _ = writeln!(out, "\nSources");
    let width = report
        .sources
        .iter()
        .map(|s| s.path.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 80);
    let _ = writeln!(
        out,
        "  {:width$}  {:19} {:>8} {:>8} {:>12}",
        "path", "kind", "lines", "records", "unrecognized"
    );
    for s in &report.sources {
        let _ = writeln!(
            out,
            "  {:width$}  {:19} {:>8} {:>8} {:>12}{}",
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
}
