//! Incidents grouped ([`IncidentGroup`]): each run of consecutive incidents of the same kind
//! and cause (and of the same instance: this one's, or others' kills,
//! [`Incident::is_other_instances`]) becomes one group, so that a crash loop of thousands of incidents reads as one
//! line ("3,000 crash-restarts … every 3.3 s, the worst outage 12 s"); and each finding is told
//! the group of its incident, so that the renderings fold a rule's repeats into one.

use crate::report::{Finding, Incident, IncidentGroup};

/// The groups of `incidents`, in their order; every incident in exactly one. Linear in the
/// incidents.
pub fn group(incidents: &[Incident]) -> Vec<IncidentGroup> {
    let mut groups = Vec::new();
    let mut start = 0;
    for i in 1..=incidents.len() {
        let ends = i == incidents.len()
            || incidents[i].kind != incidents[start].kind
            || incidents[i].cause != incidents[start].cause
            || incidents[i].is_other_instances() != incidents[start].is_other_instances();
        if ends && i > start {
            groups.push(describe(incidents, start, i - 1));
            start = i;
        }
    }
    groups
}

/// The one value every incident that has one agrees on, or `None`.
fn shared<T: PartialEq>(values: impl Iterator<Item = Option<T>>) -> Option<T> {
    let mut one = None;
    for v in values.flatten() {
        match &one {
            None => one = Some(v),
            Some(o) if *o == v => {}
            Some(_) => return None,
        }
    }
    one
}

fn describe(incidents: &[Incident], first: usize, last: usize) -> IncidentGroup {
    let run = &incidents[first..=last];
    let mut worst = first;
    let mut worst_outage: Option<f64> = None;
    let mut total = 0.0;
    let mut known = 0;
    for (i, incident) in run.iter().enumerate() {
        if let Some(o) = incident.outage_seconds {
            known += 1;
            total += o;
            if worst_outage.is_none_or(|w| o > w) {
                worst_outage = Some(o);
                worst = first + i;
            }
        }
    }
    let started_at = run[0].started_at;
    let last_started_at = run[run.len() - 1].started_at;
    let interval_seconds = median_gap(run);
    let pids = run.iter().filter_map(Incident::pid);
    IncidentGroup {
        kind: run[0].kind,
        cause: run[0].cause,
        count: run.len(),
        first,
        last,
        worst,
        started_at,
        last_started_at,
        interval_seconds,
        worst_outage_seconds: worst_outage,
        total_outage_seconds: (known > 0).then_some(total),
        outages_known: known,
        pid_min: pids.clone().min(),
        pid_max: pids.max(),
        process: shared(
            run.iter()
                .map(|i| i.postgres_crash.as_ref().map(|c| c.process.clone())),
        ),
        signal: shared(
            run.iter()
                .map(|i| i.postgres_crash.as_ref().and_then(|c| c.signal)),
        ),
    }
}

/// The median of the seconds from one incident's start to the next's, over the pairs whose
/// times are known: robust to a hole in the run (the incidents a long log counted but did not
/// keep, between its first and its latest) where a mean would not be.
fn median_gap(run: &[Incident]) -> Option<f64> {
    let mut gaps: Vec<f64> = run
        .windows(2)
        .filter_map(|w| match (w[0].started_at, w[1].started_at) {
            (Some(a), Some(b)) => Some(b.duration_since(a).as_secs_f64()),
            _ => None,
        })
        .collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_by(f64::total_cmp);
    let mid = gaps.len() / 2;
    Some(if gaps.len() % 2 == 1 {
        gaps[mid]
    } else {
        (gaps[mid - 1] + gaps[mid]) / 2.0
    })
}

/// Tells each finding about an incident the group of that incident.
pub(crate) fn tag_findings(findings: &mut [Finding], groups: &[IncidentGroup]) {
    for f in findings {
        f.group = f
            .incident
            .and_then(|i| groups.iter().position(|g| g.first <= i && i <= g.last));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::PostgresCrash;

    fn incident(
        kind: &'static str,
        cause: &'static str,
        at: i64,
        pid: u32,
        outage: Option<f64>,
    ) -> Incident {
        let at = Some(jiff::Timestamp::from_second(at).unwrap());
        Incident {
            started_at: at,
            postgres_crash: Some(PostgresCrash {
                pid,
                process: "server process".into(),
                signal: Some(9),
                exit_code: None,
                query: None,
                at,
                path: "postgres/server.log".into(),
                line: 1,
            }),
            outage_seconds: outage,
            ..Incident::new(kind, cause, None)
        }
    }

    #[test]
    fn a_run_of_one_kind_and_cause_is_one_group_with_its_figures() {
        let incidents: Vec<Incident> = (0..4)
            .map(|i| {
                let outage = [Some(0.5), None, Some(2.0), Some(1.0)][i];
                incident(
                    "crash_restart",
                    "signal_from_outside",
                    100 + 3 * i as i64,
                    500 - i as u32,
                    outage,
                )
            })
            .collect();
        let groups = group(&incidents);
        assert_eq!(groups.len(), 1);
        let g = &groups[0];
        assert_eq!((g.count, g.first, g.last, g.worst), (4, 0, 3, 2));
        assert_eq!(g.interval_seconds, Some(3.0));
        assert_eq!(g.worst_outage_seconds, Some(2.0));
        assert_eq!(g.total_outage_seconds, Some(3.5));
        assert_eq!(g.outages_known, 3);
        assert_eq!((g.pid_min, g.pid_max), (Some(497), Some(500)));
        assert_eq!(g.process.as_deref(), Some("server process"));
        assert_eq!(g.signal, Some(9));
    }

    #[test]
    fn the_interval_is_the_median_gap_so_a_hole_in_the_run_does_not_stretch_it() {
        let starts = [0, 3, 6, 9, 5000, 5003];
        let incidents: Vec<Incident> = starts
            .iter()
            .map(|&t| incident("crash_restart", "signal_from_outside", 100 + t, 1, None))
            .collect();
        assert_eq!(group(&incidents)[0].interval_seconds, Some(3.0));
        let two: Vec<Incident> = [0, 10, 20, 40]
            .iter()
            .map(|&t| incident("crash_restart", "signal_from_outside", t, 1, None))
            .collect();
        // Gaps 10, 10, 20: the middle one.
        assert_eq!(group(&two)[0].interval_seconds, Some(10.0));
        assert_eq!(median_gap(&two[..2]), Some(10.0));
        assert_eq!(median_gap(&two[..1]), None);
    }

    #[test]
    fn another_kind_or_cause_starts_a_new_group_and_lone_incidents_are_groups_of_one() {
        let mut odd = incident("crash_restart", "segfault", 110, 7, None);
        odd.postgres_crash.as_mut().unwrap().signal = Some(11);
        let incidents = vec![
            incident("crash_restart", "signal_from_outside", 100, 1, Some(1.0)),
            incident("crash_restart", "signal_from_outside", 105, 2, Some(1.0)),
            odd,
            incident("oom_kill", "oom_killer", 120, 3, None),
            incident("crash_restart", "signal_from_outside", 130, 4, None),
        ];
        let groups = group(&incidents);
        let spans: Vec<_> = groups.iter().map(|g| (g.first, g.last, g.count)).collect();
        assert_eq!(spans, [(0, 1, 2), (2, 2, 1), (3, 3, 1), (4, 4, 1)]);
        // One incident: no interval; no outage known: the first is the worst.
        assert_eq!(groups[1].interval_seconds, None);
        assert_eq!(groups[3].worst, 4);
        assert_eq!(groups[3].worst_outage_seconds, None);
        assert_eq!(groups[3].total_outage_seconds, None);
        assert!(group(&[]).is_empty());
    }

    #[test]
    fn another_instances_kills_are_a_group_apart_from_this_servers() {
        // Edge case: three lone kernel OOM kills, the middle one's victim another cluster's.
        let kill = |at: i64, pid: u32, whose: &'static str| Incident {
            started_at: Some(jiff::Timestamp::from_second(at).unwrap()),
            kernel_kill: Some(crate::report::KernelKill {
                pid,
                owner: Some(crate::report::KillOwner {
                    whose,
                    why: String::new(),
                    postmaster: (whose == "other_cluster").then_some(900),
                }),
                ..Default::default()
            }),
            ..Incident::new("kernel_oom", "oom_killer", None)
        };
        let incidents = vec![
            kill(100, 1, "instance"),
            kill(110, 2, "other_cluster"),
            kill(120, 3, "instance"),
        ];
        assert!(incidents[1].is_other_instances() && !incidents[0].is_other_instances());
        let spans: Vec<_> = group(&incidents)
            .iter()
            .map(|g| (g.first, g.last))
            .collect();
        assert_eq!(spans, [(0, 0), (1, 1), (2, 2)]);
        // Its crash tied to it, a kill is this server's whoever the kernel's report names.
        let mut tied = kill(130, 4, "other_cluster");
        tied.postgres_crash = incident("oom_kill", "oom_killer", 130, 4, None).postgres_crash;
        assert!(!tied.is_other_instances());
    }

    #[test]
    fn a_group_names_a_signal_or_process_only_when_all_agree() {
        let mut b = incident("crash_restart", "abnormal_exit", 101, 2, None);
        b.postgres_crash.as_mut().unwrap().signal = Some(6);
        b.postgres_crash.as_mut().unwrap().process = "checkpointer".into();
        let a = incident("crash_restart", "abnormal_exit", 100, 1, None);
        let g = &group(&[a, b])[0];
        assert_eq!((g.signal, g.process.as_deref()), (None, None));
    }

    #[test]
    fn findings_learn_the_group_of_their_incident() {
        let incidents: Vec<Incident> = (0..3)
            .map(|i| incident("crash_restart", "signal_from_outside", 100 + i, 1, None))
            .chain([incident("oom_kill", "oom_killer", 200, 9, None)])
            .collect();
        let groups = group(&incidents);
        let meta = crate::rules::RULES[0].meta;
        // A severity the rule gives, whichever rule comes first.
        let severity = meta.severities.last().unwrap().severity;
        let mut findings: Vec<Finding> = [Some(1), Some(3), None]
            .into_iter()
            .map(|i| {
                let mut f = crate::rules::finding(meta, severity, "t");
                f.incident = i;
                f
            })
            .collect();
        tag_findings(&mut findings, &groups);
        let tags: Vec<_> = findings.iter().map(|f| f.group).collect();
        assert_eq!(tags, [Some(0), Some(1), None]);
    }
}
