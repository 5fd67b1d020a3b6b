//! The top of the page: the host, what was collected when, what to read first, and one
//! sentence per incident saying what happened.

use std::fmt::Write as _;

use pgmortem_diagnose::{Incident, Report, Severity, human_kb};

use super::markup::{esc, prose, seconds, time, time_or_unknown};

/// Writes the header (`title` as its heading), the caveats and the incident sentences.
pub(super) fn write(out: &mut String, report: &Report, title: &str) {
    let c = &report.collection;
    let _ = write!(
        out,
        "<header>\n<h1>{}</h1>\n<dl class=\"facts\">",
        esc(title)
    );
    let mut fact = |name: &str, value: String| {
        let _ = write!(out, "<div><dt>{name}</dt><dd>{value}</dd></div>");
    };
    fact(
        "host",
        esc(c.hostname.as_deref().unwrap_or("not in the bundle")),
    );
    if let Some(os) = &c.os {
        fact("OS", esc(os));
    }
    if let Some(k) = &c.kernel_release {
        fact("kernel", esc(k));
    }
    if let Some(v) = &c.virtualization {
        fact("virtualization", esc(v));
    }
    let pg = &report.host.postgres;
    fact(
        "PostgreSQL",
        pg.version.as_ref().map_or_else(
            || "version not in the bundle".to_owned(),
            |v| esc(&v.value.text),
        ),
    );
    if let Some(at) = c.collected_at {
        fact("collected", esc(&time(at)));
    }
    let groups = crate::fold::groups(report);
    let folded = crate::fold::findings(report, &groups);
    let count = |s: Severity| folded.iter().filter(|f| f.finding.severity == s).count();
    // A count is coloured only when there is something to see: "0 critical" is plain.
    let coloured = |n: usize, class: &str, text: String| {
        if n == 0 {
            text
        } else {
            format!("<span class=\"{class}\">{text}</span>")
        }
    };
    let (critical, warnings) = (count(Severity::Critical), count(Severity::Warning));
    let (ours, others) = crate::fold::incident_counts(report);
    let others = esc(&crate::fold::others_count(others));
    fact(
        "found",
        format!(
            "{} incident{}{others}, {}, {}, {} info in {} sources",
            ours,
            plural(ours),
            coloured(critical, "sev-critical", format!("{critical} critical")),
            coloured(
                warnings,
                "sev-warning",
                format!("{warnings} warning{}", plural(warnings))
            ),
            count(Severity::Info),
            report.sources.len()
        ),
    );
    out.push_str("</dl>\n</header>\n");
    if !report.caveats.is_empty() {
        out.push_str(
            "<section class=\"caveats\" aria-label=\"read first\"><h2>Read first</h2><ul>",
        );
        for caveat in &report.caveats {
            let _ = write!(out, "<li>{}</li>", prose(&caveat.text));
        }
        out.push_str("</ul></section>\n");
    }
    out.push_str("<section id=\"summary\"><h2>What happened</h2>");
    if report.incidents.is_empty() {
        out.push_str(
            "<p>No crash, kill or restart of PostgreSQL is recorded in the bundle's logs.</p>",
        );
    } else {
        out.push_str("<ol class=\"sentences\">");
        for g in groups.iter() {
            if g.count == 1 {
                let _ = write!(
                    out,
                    "<li><a href=\"#incident-{}\">Incident {}</a> <span class=\"kind\">{}</span>: {}</li>",
                    g.first + 1,
                    g.first + 1,
                    esc(g.kind),
                    sentence(&report.incidents[g.first])
                );
            } else {
                let _ = write!(
                    out,
                    "<li><a href=\"#incident-{}\">Incidents {}–{}</a> <span class=\"kind\">{}</span>: {}.</li>",
                    g.first + 1,
                    g.first + 1,
                    g.last + 1,
                    esc(g.kind),
                    esc(&crate::fold::sentence(g, report))
                );
            }
        }
        out.push_str("</ol>");
    }
    out.push_str("</section>\n");
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// One sentence (HTML, escaped) saying what happened: kind, cause, victim, outage.
pub(super) fn sentence(incident: &Incident) -> String {
    let when = esc(&time_or_unknown(incident.started_at));
    let kill = incident.kernel_kill.as_ref();
    let crash = incident.postgres_crash.as_ref();
    let victim = match (kill, crash) {
        (_, Some(c)) => format!("PostgreSQL {} PID {}", esc(&c.process), c.pid),
        (Some(k), None) if k.pid == 0 && k.comm.is_empty() => "an unrecorded victim".to_owned(),
        (Some(k), None) => format!("{} PID {}", esc(&k.comm), k.pid),
        (None, None) => "the server".to_owned(),
    };
    let held = kill
        .and_then(|k| k.anon_rss_kb)
        .map(|kb| format!(" holding {} of anonymous memory", human_kb(kb)))
        .unwrap_or_default();
    let limit = kill
        .map(|k| {
            match (
                k.constraint.as_deref(),
                k.memcg.as_ref().and_then(|m| m.limit_kb),
            ) {
                (Some("memcg"), Some(l)) => {
                    format!(", its memory cgroup's {} limit reached", human_kb(l))
                }
                (Some("memcg"), None) => ", its memory cgroup's limit reached".to_owned(),
                (Some("global"), _) => ", the whole host out of memory".to_owned(),
                (Some(other), _) => format!(", constraint {}", esc(other)),
                (None, _) => String::new(),
            }
        })
        .unwrap_or_default();
    let what = match incident.kind {
        "oom_kill" => format!(
            "at {when} the kernel OOM killer killed {victim}{held}{limit}; the postmaster \
             ended every session and restarted with crash recovery"
        ),
        "postmaster_killed" => format!(
            "at {when} the kernel OOM killer killed the postmaster ({victim}){held}{limit}: \
             the whole server went down"
        ),
        "kernel_oom" => format!(
            "at {when} the kernel OOM killer killed {victim}{held}{limit}; no PostgreSQL \
             crash is tied to it"
        ),
        "unclean_restart" => format!(
            "at {when} PostgreSQL started with crash recovery and no logged death before it: \
             the postmaster or the host died"
        ),
        "startup_failed" if crash.is_none() => format!(
            "at {when} the postmaster refused to start (cause {})",
            esc(&incident.cause.replace('_', " "))
        ),
        "startup_failed" | "recovery_failed" => format!(
            "at {when} {victim} died {} (cause {}) and the postmaster shut the server down \
             instead of restarting it",
            if incident.kind == "recovery_failed" {
                "during recovery"
            } else {
                "before the server served"
            },
            esc(&incident.cause.replace('_', " "))
        ),
        _ => {
            let how = match crash.map(|c| (c.signal, c.exit_code)) {
                Some((Some(s), _)) => format!("was terminated by signal {s}"),
                Some((None, Some(code))) => format!("exited with code {code}"),
                _ => "died".to_owned(),
            };
            format!(
                "at {when} {victim} {how} (cause {}); the postmaster restarted with crash recovery",
                esc(&incident.cause.replace('_', " "))
            )
        }
    };
    let outage = match (incident.outage_seconds, incident.recovery.as_ref()) {
        (Some(s), _) => {
            let wal = incident
                .wal_replayed_bytes
                .map(|b| format!(", {} of WAL replayed", human_kb(b / 1024)))
                .unwrap_or_default();
            format!(
                ". Outage: <strong>{}</strong> until ready to accept connections{wal}.",
                seconds(s)
            )
        }
        _ if incident.kind == "kernel_oom" => ".".to_owned(),
        _ if incident.still_down => format!(
            ". No log shows it ready to accept connections again: <strong>{}</strong>.",
            esc(&crate::describe::still_down(incident))
        ),
        _ => ". The log shows no <q>ready to accept connections</q> after it.".to_owned(),
    };
    let mut text = what + &esc(&crate::fold::others_clause(incident));
    if let Some(first) = text.get(..1) {
        text = first.to_uppercase() + &text[1..];
    }
    text + &outage
}
