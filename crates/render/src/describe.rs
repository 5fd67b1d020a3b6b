//! The words both renderings for people (text and Markdown) use for an incident and the host,
//! so that the two say the same thing.

use std::fmt::Write as _;

use pgmortem_diagnose::{
    ClientsSaw, Incident, KernelKill, PoolerProblem, PoolerSummary, Report, human_bytes, human_kb,
    quote,
};

/// `1 incident`, `2 incidents`.
pub fn plural(n: usize, word: &str) -> String {
    format!("{n} {word}{}", if n == 1 { "" } else { "s" })
}

/// A time, or `unknown time`.
pub(crate) fn ts(at: Option<jiff::Timestamp>) -> String {
    at.map_or_else(|| "unknown time".to_owned(), |t| t.to_string())
}

/// `OOM kill of postgres pid 32691; anon-rss 409 MiB, …; oom_score_adj 0`.
pub(crate) fn kill_victim(k: &KernelKill) -> String {
    let victim = if k.pid == 0 && k.comm.is_empty() {
        "OOM killer ran; no victim recorded".to_owned()
    } else {
        format!("OOM kill of {} pid {}", quote(&k.comm), k.pid)
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
    parts.join("; ")
}

/// `constraint memcg, cgroup limit 512 MiB, usage 512 MiB, failcnt 0 in /path`.
pub(crate) fn kill_limit(k: &KernelKill) -> String {
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
            let _ = write!(limit, " in {}", quote(p));
        }
    }
    limit
}

/// `terminated by signal 9`, `exited with code 1`, or `died`.
pub(crate) fn how_died(signal: Option<i32>, exit_code: Option<i32>) -> String {
    match (signal, exit_code) {
        (Some(s), _) => format!("terminated by signal {s}"),
        (None, Some(code)) => format!("exited with code {code}"),
        _ => "died".to_owned(),
    }
}

/// The steps of the restart, relative to the crash: `others terminated +0.000 s`, ….
pub(crate) fn restart_steps(incident: &Incident) -> Vec<String> {
    let mut steps = Vec::new();
    let Some(r) = &incident.recovery else {
        return steps;
    };
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
    steps
}

/// `still down` and, when the bundle's clock reading says, for how long when it was collected.
pub(crate) fn still_down(incident: &Incident) -> String {
    match incident.down_for_seconds {
        Some(s) => format!("still down ({s:.3} s when the bundle was collected)"),
        None => "still down when the log ends".to_owned(),
    }
}

/// The incident's figures: outage, redo, WAL replayed, clock skew, sessions, refusals.
pub(crate) fn figures(incident: &Incident) -> Vec<String> {
    let mut figures = Vec::new();
    if let Some(s) = incident.outage_seconds {
        figures.push(format!("outage {s:.3} s"));
    }
    if incident.still_down {
        figures.push(still_down(incident));
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
    figures
}

/// Problems shown of a pgbouncer view (the most frequent); the rest are counted.
pub(crate) const POOLER_PROBLEMS_SHOWN: usize = 5;

/// `55 client errors, 4 server logins refused, 8 server connections lost`.
fn pooler_counts(client_errors: u64, login_failures: u64, lost: u64) -> String {
    [
        (client_errors, "client error", "client errors"),
        (
            login_failures,
            "server login refused",
            "server logins refused",
        ),
        (lost, "server connection lost", "server connections lost"),
    ]
    .iter()
    .filter(|(n, _, _)| *n > 0)
    .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
    .collect::<Vec<_>>()
    .join(", ")
}

/// What clients saw in an incident's window, in one line: `55 client errors, … through
/// pgbouncer`, or that they saw nothing there.
pub(crate) fn clients_saw_head(c: &ClientsSaw) -> String {
    let counts = pooler_counts(
        c.client_errors,
        c.server_login_failures,
        c.server_connections_lost,
    );
    let window = format!("{} to {}", c.from, c.to);
    if c.logs.is_empty() {
        format!("no pgbouncer log covers {window}")
    } else if counts.is_empty() {
        format!("no error through pgbouncer from {window}")
    } else {
        format!("{counts} through pgbouncer from {window}")
    }
}

/// A problem with its first example: `30 client errors (server_refused): the database system
/// is in recovery mode`, and where that line is.
pub(crate) fn pooler_problem(p: &PoolerProblem) -> (String, Option<(String, u64)>) {
    let what = match (p.what, p.count) {
        ("client_error", 1) => "client error",
        ("client_error", _) => "client errors",
        ("server_login_failed", 1) => "server login refused",
        ("server_login_failed", _) => "server logins refused",
        ("server_connection_lost", 1) => "server connection lost",
        ("server_connection_lost", _) => "server connections lost",
        (other, _) => other,
    };
    let example = p.examples.first();
    let mut line = format!("{} {what} ({})", p.count, p.cause);
    if let Some(e) = example {
        let _ = write!(line, ": {}", quote(&e.text));
    }
    (line, example.map(|e| (e.path.clone(), e.line)))
}

/// `3 more sorts of trouble (19 in all)` for the problems past [`POOLER_PROBLEMS_SHOWN`].
pub(crate) fn pooler_rest(problems: &[PoolerProblem]) -> Option<String> {
    let rest = problems.get(POOLER_PROBLEMS_SHOWN..)?;
    (!rest.is_empty()).then(|| {
        format!(
            "{} more {} of trouble ({} in all)",
            rest.len(),
            if rest.len() == 1 { "sort" } else { "sorts" },
            rest.iter().map(|p| p.count).sum::<u64>()
        )
    })
}

/// A pgbouncer log in one line: version, span, logins and the counts of trouble.
pub(crate) fn pooler_head(s: &PoolerSummary) -> String {
    let mut parts = Vec::new();
    if let Some(v) = &s.version {
        parts.push(format!("pgbouncer {v}"));
    }
    if let (Some(a), Some(b)) = (s.first_at, s.last_at) {
        parts.push(format!("{a} to {b}"));
    }
    parts.push(plural(s.logins as usize, "login"));
    let counts = pooler_counts(
        s.client_errors,
        s.server_login_failures,
        s.server_connections_lost,
    );
    parts.push(if counts.is_empty() {
        "no error".to_owned()
    } else {
        counts
    });
    if let Some(st) = &s.stats
        && let Some(wait) = st.peak_wait_us.filter(|&w| w > 0)
    {
        parts.push(format!(
            "longest average wait for a server {:.1} s",
            wait as f64 / 1e6
        ));
    }
    parts.join(", ")
}

/// pgbouncer's starts, signals, exits and deaths shown in a line: the first and the last,
/// the others counted.
const LIFECYCLE_SHOWN: usize = 6;

/// pgbouncer's starts, signals, exits and deaths: `started at T; got SIGINT, shutting down at
/// T; exited at T` (past [`LIFECYCLE_SHOWN`], the first three, how many more, the last two).
pub(crate) fn pooler_lifecycle(s: &PoolerSummary) -> Option<String> {
    if s.lifecycle.is_empty() {
        return None;
    }
    let n = s.lifecycle.len();
    let shown: Vec<&pgmortem_diagnose::PoolerLifecycle> = if n > LIFECYCLE_SHOWN {
        s.lifecycle[..3]
            .iter()
            .chain(&s.lifecycle[n - 2..])
            .collect()
    } else {
        s.lifecycle.iter().collect()
    };
    let mut parts: Vec<String> = shown
        .into_iter()
        .map(|l| {
            let what = match l.kind {
                "process_up" => "started".to_owned(),
                "exiting" => "exited".to_owned(),
                "fatal" => format!("died ({})", quote(&l.line.text)),
                _ => quote(&l.line.text),
            };
            format!("{what} at {}", ts(l.line.at))
        })
        .collect();
    if n > LIFECYCLE_SHOWN {
        parts.insert(3, format!("{} more", n - 5));
    }
    Some(parts.join("; "))
}

/// The rules that could not run, one entry per set of missing inputs (`perf` alone keeps six
/// rules from running): `(missing inputs, rules, files that give them)`.
pub(crate) fn not_evaluated_groups(report: &Report) -> Vec<(String, Vec<&str>, &[&str])> {
    let mut groups: Vec<(String, Vec<&str>, &[&str])> = Vec::new();
    for n in &report.not_evaluated {
        let key = n.missing.join(", ");
        match groups.iter_mut().find(|g| g.0 == key) {
            Some(g) => g.1.push(n.rule),
            None => groups.push((key, vec![n.rule], &n.files)),
        }
    }
    groups
}

/// The host in a few lines: memory, kernel settings, the cgroup, PostgreSQL, its processes.
pub(crate) fn host_lines(report: &Report) -> Vec<String> {
    let h = &report.host;
    let mut lines = Vec::new();
    let c = &report.collection;
    let identity: Vec<String> = [
        c.hostname.as_deref().map(|h| format!("host {}", quote(h))),
        c.os.clone(),
        c.kernel_release.as_ref().map(|k| format!("kernel {k}")),
        c.virtualization.as_ref().map(|v| {
            if v == "none" {
                "no virtualization".to_owned()
            } else {
                format!("virtualization {v}")
            }
        }),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !identity.is_empty() {
        lines.push(identity.join(", "));
    }
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
            Some(l) => format!(
                "memory cgroup limit {} ({})",
                human_bytes(l.value),
                quote(&c.dir)
            ),
            None => format!("memory cgroup without a limit ({})", quote(&c.dir)),
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
    lines
}

/// `host boot time … (from …, ±… s)` or `host boot time unknown`.
pub(crate) fn boot_time(report: &Report) -> String {
    match (report.clock.boot_time, report.clock.boot_time_source) {
        (Some(at), Some(src)) => format!(
            "host boot time {at} (from {src}, ±{} s)",
            report
                .clock
                .boot_time_uncertainty_seconds
                .unwrap_or_default()
        ),
        _ => "host boot time unknown".to_owned(),
    }
}

/// `postgres of pod cluster-example-1 OOMKilled, exit code 137 (signal 9), limit 1.0 GiB, run
/// 2026-11-24T05:29:05Z → 2026-11-24T05:29:10Z, running again since …, 1 restart`.
pub(crate) fn container_kill(k: &pgmortem_diagnose::ContainerKill) -> String {
    let mut parts = vec![match (&k.container, &k.pod) {
        (Some(c), Some(p)) => format!("{} of pod {} {}", quote(c), quote(p), k.reason),
        (Some(c), None) => format!("{} {}", quote(c), k.reason),
        (None, Some(p)) => format!("a container of pod {} {}", quote(p), k.reason),
        (None, None) => format!("the container {}", k.reason),
    }];
    match (k.exit_code, k.signal) {
        (Some(c), Some(s)) => parts.push(format!("exit code {c} (signal {s})")),
        (Some(c), None) => parts.push(format!("exit code {c}")),
        (None, Some(s)) => parts.push(format!("signal {s}")),
        (None, None) => {}
    }
    if let Some(b) = k.memory_limit_bytes {
        parts.push(format!("limit {}", pgmortem_diagnose::human_bytes(b)));
    }
    let at = |t: Option<jiff::Timestamp>| t.map_or_else(|| "?".to_owned(), |t| t.to_string());
    parts.push(format!("run {} → {}", at(k.started_at), at(k.finished_at)));
    if let Some(r) = k.restarted_at {
        parts.push(format!("running again since {r}"));
    }
    if let Some(n) = k.restart_count {
        parts.push(format!("{n} restart{}", if n == 1 { "" } else { "s" }));
    }
    parts.join(", ")
}
