//! Findings: for now, each incident as a finding that names its lines and says what to change.

use crate::report::{Evidence, Finding, Incident, Severity};

/// Kibibytes as a short human size.
pub fn human_kb(kb: u64) -> String {
    const MIB: f64 = 1024.0;
    let kb = kb as f64;
    if kb >= MIB * 1024.0 {
        format!("{:.1} GiB", kb / MIB / 1024.0)
    } else if kb >= MIB {
        format!("{:.0} MiB", kb / MIB)
    } else {
        format!("{kb:.0} kB")
    }
}

/// One finding per incident, in incident order.
pub(crate) fn from_incidents(incidents: &[Incident]) -> Vec<Finding> {
    incidents
        .iter()
        .enumerate()
        .map(|(i, incident)| finding(i, incident))
        .collect()
}

fn finding(index: usize, incident: &Incident) -> Finding {
    let mut evidence = Vec::new();
    if let Some(k) = &incident.kernel_kill {
        evidence.push(Evidence {
            path: k.path.clone(),
            line: k.line,
            what: "kernel OOM-killer report".into(),
        });
    }
    if let Some(c) = &incident.postgres_crash {
        evidence.push(Evidence {
            path: c.path.clone(),
            line: c.line,
            what: format!("{} died", c.process),
        });
        if let Some(line) = incident.recovery.as_ref().and_then(|r| r.ready_line) {
            evidence.push(Evidence {
                path: c.path.clone(),
                line,
                what: "ready to accept connections again".into(),
            });
        }
    }
    let outage = incident
        .outage_seconds
        .map(|s| format!("; the instance was down {s:.1} s"))
        .unwrap_or_default();
    let redo = match (incident.redo_seconds, incident.wal_replayed_bytes) {
        (Some(s), Some(b)) => format!(" ({} of WAL replayed in {s:.2} s)", human_kb(b / 1024)),
        (None, Some(b)) => format!(" ({} of WAL replayed)", human_kb(b / 1024)),
        _ => String::new(),
    };
    let query = incident
        .postgres_crash
        .as_ref()
        .and_then(|c| c.query.as_deref())
        .map(|q| format!(" It was running: {}", cut(q, 200)))
        .unwrap_or_default();
    match (incident.kind, &incident.kernel_kill, &incident.postgres_crash) {
        ("oom_kill", Some(k), Some(c)) => {
            let rss = k.anon_rss_kb.map(|kb| format!(" holding {} anonymous memory", human_kb(kb))).unwrap_or_default();
            let limit = limit_text(k);
            Finding {
                id: "oom-kill-crash-restart",
                severity: Severity::Critical,
                title: format!(
                    "The kernel OOM killer killed PostgreSQL {} {}{}{rss}{limit}{outage}",
                    c.process,
                    c.pid,
                    if k.pid == c.pid { String::new() } else { format!(" (kernel PID {})", k.pid) },
                ),
                summary: format!(
                    "{} {} ({}) was killed by the kernel OOM killer{}; PostgreSQL treated it as a \
                     crash, terminated every session and replayed WAL{redo}.{query}",
                    c.process,
                    c.pid,
                    k.comm,
                    k.trigger_comm
                        .as_ref()
                        .map(|t| format!(" after an allocation by {t}"))
                        .unwrap_or_default(),
                ),
                recommendation: Some(if k.constraint.as_deref() == Some("memcg") {
                    "The kill came from a memory cgroup limit, not from host RAM: size the limit \
                     for shared_buffers + max_connections × (work_mem × sort/hash nodes) + \
                     maintenance_work_mem, or lower work_mem for the query above; set the \
                     postmaster's oom_score_adj to -1000 so the kernel never picks it."
                        .into()
                } else {
                    "Bound memory per query (work_mem × nodes × parallel workers), set \
                     vm.overcommit_memory=2 with a matching overcommit_ratio so allocations fail \
                     with an error instead of a kill, and keep the postmaster at oom_score_adj -1000."
                        .into()
                }),
                evidence,
                incident: Some(index),
            }
        }
        ("crash_restart", _, Some(c)) => {
            let how = match (c.signal, c.exit_code) {
                (Some(s), _) => format!("was terminated by signal {s}"),
                (None, Some(code)) => format!("exited with exit code {code}"),
                _ => "died".to_owned(),
            };
            Finding {
                id: "crash-restart",
                severity: Severity::Critical,
                title: format!("PostgreSQL {} {} {how}{outage}", c.process, c.pid),
                summary: format!(
                    "{} {} {how}; PostgreSQL terminated every session and restarted{redo}.{query} {}",
                    c.process,
                    c.pid,
                    incident.notes.join(" ")
                )
                .trim_end()
                .to_owned(),
                recommendation: Some(match c.signal {
                    Some(9) => "Find who sent SIGKILL (supervisor, userspace OOM killer, an operator); never kill a single backend with -9: use pg_terminate_backend().".into(),
                    Some(11) | Some(6) | Some(7) => "A backend crashed: look for a core dump and the extension or query involved; report it with the query above.".into(),
                    _ => "Look at the lines before the crash for its cause.".into(),
                }),
                evidence,
                incident: Some(index),
            }
        }
        (_, Some(k), _) => Finding {
            id: "kernel-oom-kill",
            severity: if k.comm.starts_with("postgres") { Severity::Critical } else { Severity::Warning },
            title: format!(
                "The kernel OOM killer killed {} {}{}",
                k.comm,
                k.pid,
                limit_text(k)
            ),
            summary: format!(
                "No PostgreSQL crash in the bundle is tied to this kill.{}",
                incident.notes.iter().map(|n| format!(" {n}.")).collect::<String>()
            ),
            recommendation: Some("Memory on this host or cgroup ran out; see what else runs beside PostgreSQL and how much each holds (the task table of the report).".into()),
            evidence,
            incident: Some(index),
        },
        _ => Finding {
            id: "kernel-oom-no-victim",
            severity: Severity::Warning,
            title: "The kernel OOM killer ran but no victim was recorded".into(),
            summary: incident.notes.join(" "),
            recommendation: None,
            evidence,
            incident: Some(index),
        },
    }
}

fn limit_text(k: &crate::report::KernelKill) -> String {
    match (&k.memcg, k.constraint.as_deref()) {
        (Some(m), _) if m.limit_kb.is_some() => format!(
            " under the memory cgroup limit of {}{}",
            human_kb(m.limit_kb.unwrap_or_default()),
            m.path
                .as_deref()
                .map(|p| format!(" ({p})"))
                .unwrap_or_default()
        ),
        (_, Some("global")) => " when the host ran out of memory".to_owned(),
        _ => String::new(),
    }
}

fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_sizes() {
        assert_eq!(human_kb(512), "512 kB");
        assert_eq!(human_kb(307_200), "300 MiB");
        assert_eq!(human_kb(3 * 1024 * 1024), "3.0 GiB");
    }

    #[test]
    fn cut_respects_char_boundaries() {
        assert_eq!(cut("ééé", 3), "é…");
        assert_eq!(cut("abc", 3), "abc");
    }
}
