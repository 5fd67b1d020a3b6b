//! What the renderings for people fold (ruff's and ripgrep's answer-first shape): a crash loop
//! told as one group of incidents with its first and its worst in full, a rule's repeats over
//! the incidents of one group told once, and how much of the rest a reader asked to see
//! ([`Detail`]).

use std::borrow::Cow;

use pgmortem_diagnose::{
    Finding, Incident, IncidentGroup, Report, Severity, group_incidents, human_duration,
    signal_name,
};

use crate::describe::{plural, ts};

/// How much of the report a rendering for people shows. The default is the short report: each
/// finding in a few lines, of each group of incidents the first and the worst, the rules that
/// could not run and the sources each folded into a line (a source with a problem always
/// named).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Detail {
    /// Everything: each finding whole with all its evidence, every incident, the rules that
    /// could not run one by one, every source.
    pub verbose: bool,
    /// Every source, one by one (the sources table), without the rest of `verbose`.
    pub sources: bool,
    /// Findings the caller left out of the report (`--min-severity`, `--rule`): said in the
    /// headline, so that a filtered report never reads as a whole one.
    pub findings_left_out: usize,
}

/// The report's groups; computed from its incidents when it has none (a report built by hand,
/// or read from an older JSON) or when they do not cover its incidents.
pub(crate) fn groups(report: &Report) -> Cow<'_, [IncidentGroup]> {
    let covers = report.groups.iter().map(|g| g.count).sum::<usize>() == report.incidents.len()
        && report
            .groups
            .iter()
            .all(|g| g.last < report.incidents.len());
    if covers {
        Cow::Borrowed(&report.groups)
    } else {
        Cow::Owned(group_incidents(&report.incidents))
    }
}

/// A finding as a person reads it: one of a rule's findings about the incidents of one group,
/// standing for `repeats` of them (1 for a finding alone).
pub(crate) struct Folded<'a> {
    /// The first of them, in the report's order.
    pub(crate) finding: &'a Finding,
    /// How many findings it stands for.
    pub(crate) repeats: usize,
    /// The group of incidents they are about, when it holds more than one.
    pub(crate) group: Option<(usize, &'a IncidentGroup)>,
}

/// The findings with each rule's repeats over a group of incidents folded into the first, in
/// the report's order (most severe first).
pub(crate) fn findings<'a>(report: &'a Report, groups: &'a [IncidentGroup]) -> Vec<Folded<'a>> {
    let group_of = |f: &Finding| {
        f.incident
            .and_then(|i| groups.iter().position(|g| g.first <= i && i <= g.last))
            .filter(|&g| groups[g].count > 1)
    };
    let mut out: Vec<Folded<'a>> = Vec::new();
    let mut seen: std::collections::HashMap<(&str, usize), usize> = Default::default();
    for f in &report.findings {
        match group_of(f) {
            Some(g) => match seen.get(&(f.id, g)) {
                Some(&at) => out[at].repeats += 1,
                None => {
                    seen.insert((f.id, g), out.len());
                    out.push(Folded {
                        finding: f,
                        repeats: 1,
                        group: Some((g, &groups[g])),
                    });
                }
            },
            None => out.push(Folded {
                finding: f,
                repeats: 1,
                group: None,
            }),
        }
    }
    out
}

impl Folded<'_> {
    /// `once for each of incidents 1–47: 47 findings alike, the first shown`, for a finding
    /// that stands for its rule's repeats over a group.
    pub(crate) fn repeats_line(&self) -> Option<String> {
        let (_, g) = self.group?;
        Some(format!(
            "once for each of incidents {}–{}: {} findings alike, the first shown",
            g.first + 1,
            g.last + 1,
            thousands(self.repeats)
        ))
    }
}

/// `47 incidents in 1 group, 5 findings (1 critical, 2 warnings, 2 info) in 84 sources`: the
/// headline, findings folded; the OOM kills of other instances' processes counted apart
/// (`0 incidents (and 1 OOM kill of another instance's process, not counted)`); with no incident while a log is missing or was not read
/// (caveats `no_kernel_log`, `no_postgres_log`, `log_not_understood`, `archive_not_opened`),
/// followed by `: no clean bill of health, …` so that a blind report never reads as a healthy
/// one; and how many findings were left out, when some were.
pub(crate) fn headline(report: &Report, folded: &[Folded<'_>], detail: &Detail) -> String {
    let (n, others) = incident_counts(report);
    let groups = groups(report);
    let (group_count, other_groups) = (
        groups.len(),
        groups
            .iter()
            .filter(|g| {
                report
                    .incidents
                    .get(g.first)
                    .is_some_and(Incident::is_other_instances)
            })
            .count(),
    );
    let group_count = group_count - other_groups;
    let count = |s: Severity| folded.iter().filter(|f| f.finding.severity == s).count();
    let blind = report.caveats.iter().any(|c| {
        matches!(
            c.kind,
            "no_kernel_log" | "no_postgres_log" | "log_not_understood" | "archive_not_opened"
        )
    });
    let warning = if n == 0 && blind {
        ": no clean bill of health, a log is missing or was not read (see the caveats)"
    } else {
        ""
    };
    let mut incidents = if group_count < n {
        format!(
            "{} in {}",
            plural_thousands(n, "incident"),
            plural(group_count, "group")
        )
    } else {
        plural(n, "incident")
    };
    incidents.push_str(&others_count(others));
    let left_out = match detail.findings_left_out {
        0 => String::new(),
        k => format!(" ({k} more left out by the filter)"),
    };
    format!(
        "{incidents}, {}{left_out} ({} critical, {}, {} info) in {}{warning}",
        plural(folded.len(), "finding"),
        count(Severity::Critical),
        plural(count(Severity::Warning), "warning"),
        count(Severity::Info),
        plural(report.sources.len(), "source"),
    )
}

/// How many of the report's incidents are this server's, and how many are OOM kills of other
/// instances' processes ([`Incident::is_other_instances`]): listed, never counted as its own.
pub(crate) fn incident_counts(report: &Report) -> (usize, usize) {
    let others = report
        .incidents
        .iter()
        .filter(|i| i.is_other_instances())
        .count();
    (report.incidents.len() - others, others)
}

/// ` (and 1 OOM kill of another instance's process, not counted)` after the count of this
/// server's incidents, when `others` is not 0.
pub(crate) fn others_count(others: usize) -> String {
    match others {
        0 => String::new(),
        1 => " (and 1 OOM kill of another instance's process, not counted)".to_owned(),
        n => format!(
            " (and {} OOM kills of other instances' processes, not counted)",
            thousands(n)
        ),
    }
}

/// `; another cluster's process (postmaster 17444): not an incident of this server` (else
/// the owner's why in the brackets) for an OOM kill of another instance's process; empty for this server's.
pub(crate) fn others_clause(incident: &Incident) -> String {
    let Some(owner) = incident
        .kernel_kill
        .as_ref()
        .and_then(|k| k.owner.as_ref())
        .filter(|_| incident.is_other_instances())
    else {
        return String::new();
    };
    let whose = match owner.whose {
        "other_cluster" => "another cluster's process",
        "other_cgroup" => "another job's process",
        "before_start" => "killed before this server started",
        _ => "not this server's process",
    };
    match owner.postmaster {
        Some(pm) => format!("; {whose} (postmaster {pm}): not an incident of this server"),
        None => format!("; {whose} ({}): not an incident of this server", owner.why),
    }
}

/// ` (another instance's process, not counted)` after an incident's heading, for an OOM kill
/// of another instance's process; empty for this server's.
pub(crate) fn others_label(incident: &Incident) -> &'static str {
    if incident.is_other_instances() {
        " (another instance's process, not counted)"
    } else {
        ""
    }
}

/// `3,000` for 3000: thousands apart, as a person counts.
pub(crate) fn thousands(n: usize) -> String {
    thousands_with(n as u64, ',')
}

/// `n` with `separator` between its thousands.
pub(crate) fn thousands_with(n: u64, separator: char) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 * 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(separator);
        }
        out.push(c);
    }
    out
}

fn plural_thousands(n: usize, word: &str) -> String {
    format!("{} {word}{}", thousands(n), if n == 1 { "" } else { "s" })
}

/// What an incident of `kind` is called, one and many.
pub(crate) fn kind_words(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "oom_kill" => ("OOM kill and crash-restart", "OOM kills and crash-restarts"),
        "crash_restart" => ("crash-restart", "crash-restarts"),
        "postmaster_killed" => ("OOM kill of the postmaster", "OOM kills of the postmaster"),
        "unclean_restart" => ("unclean restart", "unclean restarts"),
        "kernel_oom" => ("kernel OOM kill", "kernel OOM kills"),
        "recovery_failed" => ("failed crash recovery", "failed crash recoveries"),
        "startup_failed" => ("failed start", "failed starts"),
        _ => ("incident", "incidents"),
    }
}

/// `server process` → `server processes`.
fn processes(process: &str, many: bool) -> String {
    if !many {
        process.to_owned()
    } else if process.ends_with("process") {
        format!("{process}es")
    } else if process.ends_with('s') {
        process.to_owned()
    } else {
        format!("{process}s")
    }
}

/// `2026-12-07T05:07:12.4Z` as `05:07:12.4Z` when `base` is on the same day.
fn time_after(base: Option<jiff::Timestamp>, at: Option<jiff::Timestamp>) -> String {
    let full = ts(at);
    match (base, at) {
        (Some(b), Some(_)) if full.get(..10) == ts(Some(b)).get(..10) => {
            full.get(11..).unwrap_or(&full).to_owned()
        }
        _ => full,
    }
}

/// One sentence for a group: `47 crash-restarts of server processes by SIGKILL (cause
/// signal_from_outside) between 2026-12-07T05:04:10.124Z and 05:07:12.456Z, every 3.9 s; the
/// worst outage 0.905 s (incident 10), 12.3 s down in all; pids 21950–23904`; for a group of
/// one, the incident in a line.
pub(crate) fn sentence(g: &IncidentGroup, report: &Report) -> String {
    let incidents = &report.incidents;
    let many = g.count > 1;
    let (one, several) = kind_words(g.kind);
    // The log counted more than it kept: the group holds the ones kept.
    let partial = report
        .caveats
        .iter()
        .any(|c| matches!(c.kind, "records_not_kept" | "incidents_not_kept"));
    let mut s = if many && partial {
        format!(
            "{} {several} kept (the log has more: see the caveats)",
            thousands(g.count)
        )
    } else if many {
        format!("{} {several}", thousands(g.count))
    } else {
        one.to_owned()
    };
    if let Some(p) = &g.process {
        s.push_str(" of ");
        s.push_str(&processes(p, many));
        if !many {
            if let Some(pid) = incidents.get(g.first).and_then(Incident::pid) {
                s.push_str(&format!(" {pid}"));
            }
        }
    } else if !many {
        if let Some(k) = incidents.get(g.first).and_then(|i| i.kernel_kill.as_ref()) {
            s.push_str(&format!(
                " of {} {}",
                pgmortem_diagnose::quote(&k.comm),
                k.pid
            ));
        }
    }
    if let Some(sig) = g.signal {
        match signal_name(sig) {
            Some(name) => s.push_str(&format!(" by {name}")),
            None => s.push_str(&format!(" by signal {sig}")),
        }
    }
    s.push_str(&format!(" (cause {})", g.cause));
    if many {
        s.push_str(&format!(
            " between {} and {}",
            ts(g.started_at),
            time_after(g.started_at, g.last_started_at)
        ));
        if let Some(every) = g.interval_seconds {
            s.push_str(&format!(", every {}", human_duration(every)));
        }
        if let Some(w) = g.worst_outage_seconds {
            s.push_str(&format!(
                "; the worst outage {w:.3} s (incident {})",
                g.worst + 1
            ));
            if let Some(t) = g.total_outage_seconds {
                s.push_str(&format!(", {} down in all", human_duration(t)));
            }
        }
        if let (Some(a), Some(b)) = (g.pid_min, g.pid_max) {
            s.push_str(&format!("; pids {a}–{b}"));
        }
    } else {
        s.push_str(&format!(" at {}", ts(g.started_at)));
        if let Some(w) = g.worst_outage_seconds {
            s.push_str(&format!(", outage {w:.3} s"));
        }
    }
    if let Some(first) = incidents.get(g.first) {
        s.push_str(&others_clause(first));
    }
    // The server not back at the end of the log is what matters most of the last one.
    if let Some(last) = incidents.get(g.last).filter(|i| i.still_down) {
        let down = crate::describe::still_down(last);
        if many {
            s.push_str(&format!("; after the last, {down}"));
        } else {
            s.push_str(&format!(", {down}"));
        }
    }
    s
}

/// The incidents of a group shown in full: all when `all` or the group holds two or fewer,
/// else its first and its worst.
pub(crate) fn shown(g: &IncidentGroup, all: bool) -> Vec<usize> {
    if all || g.count <= 2 {
        (g.first..=g.last).collect()
    } else if g.worst == g.first {
        vec![g.first]
    } else {
        vec![g.first, g.worst]
    }
}

/// Sources with a problem a reader must see: lines not understood, or a note that is not one
/// of the expected ones (a file kept for a person, collected and not read yet, a symbolic link
/// not followed). A file the collector could not get is a problem: what it would have said
/// is missing.
pub(crate) fn troubled(s: &pgmortem_diagnose::SourceSummary) -> bool {
    if s.unrecognized_lines > 0 {
        return true;
    }
    let Some(note) = s.note.as_deref() else {
        return false;
    };
    let expected = matches!(s.kind, "reference" | "collector_log")
        || note.contains("collected for diagnoses to come")
        || note.contains("collected, not read yet")
        || (s.kind == "unreadable" && note.starts_with("symbolic link"));
    !expected
}

/// `12 rules could not run for want of 6 inputs`.
pub(crate) fn not_evaluated_line(report: &Report) -> String {
    let inputs: std::collections::BTreeSet<&str> = report
        .not_evaluated
        .iter()
        .flat_map(|n| n.missing.iter().copied())
        .collect();
    format!(
        "{} could not run for want of {}",
        plural(report.not_evaluated.len(), "rule"),
        plural(inputs.len(), "input")
    )
}

/// `84 sources read, 2 with a problem`.
pub(crate) fn sources_line(report: &Report) -> String {
    let troubled = report.sources.iter().filter(|s| troubled(s)).count();
    let unrecognised = report
        .sources
        .iter()
        .filter(|s| s.unrecognized_lines > 0)
        .count();
    let mut line = format!("{} read", plural(report.sources.len(), "source"));
    if unrecognised > 0 {
        line.push_str(&format!(", {unrecognised} with unrecognised lines"));
    }
    if troubled > unrecognised {
        line.push_str(&format!(
            ", {} with another problem",
            troubled - unrecognised
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_set_apart() {
        assert_eq!(thousands(7), "7");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(3000), "3,000");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn process_names_take_their_plural() {
        assert_eq!(processes("server process", true), "server processes");
        assert_eq!(processes("checkpointer", true), "checkpointers");
        assert_eq!(processes("parallel worker", false), "parallel worker");
    }
}
