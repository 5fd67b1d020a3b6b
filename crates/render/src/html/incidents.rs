//! Each incident: what died, what the log recorded before, the restart with its phases drawn
//! to scale, its figures, and for an OOM kill the kernel's report explained.

use std::fmt::Write as _;

use pgmortem_diagnose::{Incident, IncidentGroup, KernelKill, Report, human_kb};

use super::markup::{count, esc, place, prose, seconds, time_or_unknown};
use super::{summary, timeline};

/// Writes the incidents section (nothing when there is none).
pub(super) fn write(out: &mut String, report: &Report) {
    if report.incidents.is_empty() {
        return;
    }
    out.push_str("<section id=\"incidents\"><h2>Incidents</h2>\n");
    for g in crate::fold::groups(report).iter() {
        let shown = crate::fold::shown(g, false);
        if shown.len() < g.count {
            let _ = write!(
                out,
                "<div class=\"group\" id=\"group-{}\"><h3>Incidents {}–{}: {}</h3>\
                 <p>{}.</p><p class=\"muted\">The first and the worst are shown in full.</p>",
                g.first + 1,
                g.first + 1,
                g.last + 1,
                count(g.count as u64),
                esc(&crate::fold::sentence(g, report))
            );
        }
        for &i in &shown {
            write_incident(out, report, i, &report.incidents[i]);
        }
        if shown.len() < g.count {
            write_others(out, report, g, &shown);
            out.push_str("</div>");
        }
    }
    out.push_str("</section>\n");
}

/// Rows of the group's other incidents shown at most; the JSON report lists every one.
const OTHERS_LISTED: usize = 1000;

/// The group's incidents not shown in full, one table row each (at most [`OTHERS_LISTED`]).
fn write_others(out: &mut String, report: &Report, g: &IncidentGroup, shown: &[usize]) {
    let others: Vec<usize> = (g.first..=g.last).filter(|i| !shown.contains(i)).collect();
    let _ = write!(
        out,
        "<details class=\"others\"><summary>The other {} incidents</summary>\
         <table><thead><tr><th>#</th><th>started</th><th>pid</th><th>outage</th></tr></thead><tbody>",
        count(others.len() as u64)
    );
    for &i in others.iter().take(OTHERS_LISTED) {
        let incident = &report.incidents[i];
        let _ = write!(
            out,
            "<tr><td class=\"num\">{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            i + 1,
            esc(&time_or_unknown(incident.started_at)),
            incident
                .pid()
                .map_or_else(|| "—".to_owned(), |p| p.to_string()),
            incident
                .outage_seconds
                .map_or_else(|| "—".to_owned(), seconds)
        );
    }
    out.push_str("</tbody></table>");
    if others.len() > OTHERS_LISTED {
        let _ = write!(
            out,
            "<p class=\"muted\">and {} more: the JSON report lists every incident.</p>",
            count((others.len() - OTHERS_LISTED) as u64)
        );
    }
    out.push_str("</details>");
}

fn write_incident(out: &mut String, report: &Report, index: usize, incident: &Incident) {
    let number = index + 1;
    let _ = write!(
        out,
        "<article class=\"incident\" id=\"incident-{number}\">\
         <h3>Incident {number}{}: {} <span class=\"muted\">(cause {}, confidence {:.2}{})</span></h3>\
         <p>{}</p>",
        esc(crate::fold::others_label(incident)),
        esc(incident.kind),
        esc(incident.cause),
        incident.confidence,
        incident
            .matched_by
            .map(|m| format!(", tied by {}", esc(m)))
            .unwrap_or_default(),
        summary::sentence(incident)
    );
    timeline::incident_strip(out, report, number, incident);
    out.push_str("<table class=\"kv\"><tbody>");
    if let Some(k) = &incident.kernel_kill {
        row(out, "kernel", &kill_text(k));
    }
    if !incident.preceded_by.is_empty() {
        let mut cell = String::from("<ul class=\"lines\">");
        for l in &incident.preceded_by {
            let _ = write!(
                cell,
                "<li><span class=\"muted\">{}</span> <b>{}</b>: <span class=\"logtext\">{}</span> {}</li>",
                esc(&time_or_unknown(l.at)),
                esc(l.severity.unwrap_or("LOG")),
                esc(&l.message),
                place(&l.path, l.line)
            );
        }
        cell.push_str("</ul>");
        row(out, "before", &cell);
    }
    if let Some(c) = &incident.postgres_crash {
        let how = match (c.signal, c.exit_code) {
            (Some(s), _) => format!("terminated by signal {s}"),
            (None, Some(code)) => format!("exited with code {code}"),
            _ => "died".to_owned(),
        };
        let mut cell = format!(
            "{} (PID {}) {how} at {} {}",
            esc(&c.process),
            c.pid,
            esc(&time_or_unknown(c.at)),
            place(&c.path, c.line)
        );
        if let Some(q) = &c.query {
            let _ = write!(cell, "<pre class=\"query\">{}</pre>", esc(q));
        }
        row(out, "postgres", &cell);
    }
    if let Some(r) = &incident.recovery {
        let base = incident
            .postgres_crash
            .as_ref()
            .and_then(|c| c.at)
            .or(incident.started_at);
        let rel = |t: Option<jiff::Timestamp>| match (base, t) {
            (Some(b), Some(t)) => Some(format!("+{:.3} s", t.duration_since(b).as_secs_f64())),
            _ => None,
        };
        let mut steps = Vec::new();
        if let Some(s) = rel(r.terminated_others_at) {
            steps.push(format!("others terminated {s}"));
        }
        if let Some(s) = rel(r.reinitialized_at) {
            steps.push(format!("reinitializing {s}"));
        }
        if let Some(s) = rel(r.redo_started_at) {
            steps.push(format!("redo starts {s}"));
        }
        if let (Some(a), Some(b)) = (&r.redo_start_lsn, &r.redo_end_lsn) {
            steps.push(format!("redo {} → {}", esc(a), esc(b)));
        }
        if let Some(s) = rel(r.ready_at) {
            steps.push(format!("ready {s}"));
        }
        if !steps.is_empty() {
            row(out, "restart", &steps.join(", "));
        }
    }
    let mut figures = Vec::new();
    if let Some(s) = incident.outage_seconds {
        figures.push(format!("outage <strong>{}</strong>", seconds(s)));
    }
    if let Some(s) = incident.redo_seconds {
        figures.push(format!("redo {}", seconds(s)));
    }
    if let Some(b) = incident.wal_replayed_bytes {
        figures.push(format!("WAL replayed {}", human_kb(b / 1024)));
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
        row(out, "figures", &figures.join(", "));
    }
    for note in &incident.notes {
        row(out, "note", &prose(note));
    }
    if let Some(c) = &incident.clients_saw {
        row(out, "clients", &super::pooler::incident_cell(c));
    }
    out.push_str("</tbody></table>");
    if let Some(k) = &incident.kernel_kill {
        oom_explained(out, k);
    }
    out.push_str("</article>\n");
}

fn row(out: &mut String, name: &str, html: &str) {
    let _ = write!(out, "<tr><th scope=\"row\">{name}</th><td>{html}</td></tr>");
}

fn kill_text(k: &KernelKill) -> String {
    let victim = if k.pid == 0 && k.comm.is_empty() {
        "OOM killer ran; no victim recorded".to_owned()
    } else {
        format!("OOM kill of {} PID {}", esc(&k.comm), k.pid)
    };
    format!(
        "{victim} at {} {}",
        esc(&time_or_unknown(k.at)),
        place(&k.path, k.line)
    )
}

/// The kernel's OOM report in words: who was killed holding what, what set it off, which
/// limit was hit, and who held the memory (the task table by RSS).
fn oom_explained(out: &mut String, k: &KernelKill) {
    out.push_str("<div class=\"oom\"><h4>The kernel's OOM report, explained</h4><ul>");
    let size = |v: Option<u64>| v.map_or_else(|| "?".to_owned(), human_kb);
    if !(k.pid == 0 && k.comm.is_empty()) {
        let _ = write!(
            out,
            "<li><b>Victim</b>: {} PID {} held {} anonymous, {} file-backed and {} shared \
             memory (total virtual size {}, page tables {}){}.</li>",
            esc(&k.comm),
            k.pid,
            size(k.anon_rss_kb),
            size(k.file_rss_kb),
            size(k.shmem_rss_kb),
            size(k.total_vm_kb),
            size(k.pgtables_kb),
            k.oom_score_adj
                .map(|a| format!("; its oom_score_adj was {a}"))
                .unwrap_or_default()
        );
    }
    if let Some(t) = &k.trigger_comm {
        let _ = write!(
            out,
            "<li><b>Set off by</b> an allocation of {}{}{}{}.</li>",
            esc(t),
            k.trigger_pid
                .map(|p| format!(" PID {p}"))
                .unwrap_or_default(),
            k.trigger_gfp_mask
                .as_ref()
                .map(|g| format!(", gfp_mask {}", esc(g)))
                .unwrap_or_default(),
            k.trigger_order
                .map(|o| match o {
                    -1 => ", forced by SysRq".to_owned(),
                    o => format!(
                        ", order {o} ({} contiguous)",
                        human_kb(4u64 << o.clamp(0, 20))
                    ),
                })
                .unwrap_or_default()
        );
    }
    let constraint = match k.constraint.as_deref() {
        Some("memcg") => {
            let mut text = "the memory cgroup's limit was reached".to_owned();
            if let Some(m) = &k.memcg {
                if let (Some(u), Some(l)) = (m.usage_kb, m.limit_kb) {
                    let _ = write!(text, ": usage {} of limit {}", human_kb(u), human_kb(l));
                }
                if let Some(p) = &m.path {
                    let _ = write!(text, " in <code>{}</code>", esc(p));
                }
                if let Some(f) = m.failcnt {
                    let _ = write!(text, " (failcnt {f})");
                }
            }
            text + ". The rest of the host may have had memory to spare: the limit, not RAM, \
                    decided."
        }
        Some("global") => "the whole host was out of memory (RAM and swap), no cgroup limit \
                           involved."
            .to_owned(),
        Some(other) => format!("{}.", esc(other)),
        None => "the report does not say.".to_owned(),
    };
    let _ = write!(out, "<li><b>Constraint</b>: {constraint}</li></ul>");
    if !k.tasks.is_empty() {
        let total = k.tasks_rss_kb.unwrap_or(0).max(1);
        let _ = write!(
            out,
            "<table class=\"tasks\"><caption>Task table by RSS: the {} heaviest of {} tasks{} \
             (pages of {} KiB)</caption><thead><tr><th>PID</th><th>name</th><th>RSS</th>\
             <th>share</th><th>anon</th><th>file</th><th>shmem</th><th>swap</th>\
             <th>page tables</th><th>oom_score_adj</th></tr></thead><tbody>",
            k.tasks.len(),
            k.task_count,
            k.tasks_rss_kb
                .map(|kb| format!(" holding {} in all", human_kb(kb)))
                .unwrap_or_default(),
            k.page_kb
        );
        for t in &k.tasks {
            let share = t.rss_kb.unwrap_or(0) as f64 / total as f64;
            let _ = write!(
                out,
                "<tr{}><td>{}</td><td>{}{}</td><td class=\"num\">{}</td>\
                 <td><span class=\"bar\" style=\"width:{:.0}px\"></span> {:.0}\u{a0}%</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
                if t.victim { " class=\"victim\"" } else { "" },
                t.pid,
                esc(&t.name),
                if t.victim { " <b>(killed)</b>" } else { "" },
                size(t.rss_kb),
                (share * 80.0).clamp(1.0, 80.0),
                share * 100.0,
                size(t.rss_anon_kb),
                size(t.rss_file_kb),
                size(t.rss_shmem_kb),
                size(t.swap_kb),
                size(t.pgtables_kb),
                t.oom_score_adj
                    .map_or_else(|| "?".to_owned(), |a| a.to_string())
            );
        }
        out.push_str("</tbody></table>");
    } else {
        out.push_str("<p class=\"muted\">The report holds no task table for this kill.</p>");
    }
    let _ = write!(
        out,
        "<p class=\"muted\">From {}.</p></div>",
        place(&k.path, k.line)
    );
}
