//! Kubernetes' record of PostgreSQL's containers (`pod_describe`, `pod_manifest` sources): a
//! container the kernel's memory-cgroup OOM killer ended is `OOMKilled`, exit code 137, with
//! the times its run started and ended. Takes the bundle and the incidents the logs gave;
//! yields each such kill tied to the PostgreSQL outage it caused, or as an incident of its
//! own (cause `container_oom_killed`), and the container's memory limit as the limit the
//! memory rules compare with (the limit of the container's cgroup).
//!
//! A kill the kernel log of the node also shows is the kernel's incident (cause `oom_killer`):
//! the container's record is kept beside it. Containers of other programs in the pod (a
//! backup or metrics sidecar) are not PostgreSQL's: their kills are not counted as its.

use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::kube::{self, ContainerStatus, PodStatuses, Termination};

use crate::clock::seconds_between;
use crate::options::DiagnoseOptions;
use crate::report::{Caveat, ContainerKill, Incident, TimelineEvent};
use crate::report::{CgroupFacts, Known};

/// One file of Kubernetes' view of the pods, read.
pub(crate) struct ContainerSource {
    /// Its path in the bundle.
    pub path: String,
    /// What it shows.
    pub statuses: PodStatuses,
}

/// Every `pod_describe` and `pod_manifest` source of the bundle, read.
pub(crate) fn read(bundle: &Bundle) -> Vec<ContainerSource> {
    bundle
        .sources
        .iter()
        .filter_map(|s| {
            let statuses = match s.kind {
                SourceKind::PodDescribe => kube::parse_describe(&s.bytes),
                SourceKind::PodManifest => kube::parse_manifests(&s.bytes),
                _ => return None,
            };
            Some(ContainerSource {
                path: s.path.clone(),
                statuses,
            })
        })
        .collect()
}

/// Whether a container is PostgreSQL's: CloudNativePG's `postgres`, Crunchy's `database`,
/// the official image's usual names; a container shown without its name (a pasted piece of
/// `kubectl describe`) is taken to be.
fn is_postgres(c: &ContainerStatus) -> bool {
    c.container.as_deref().is_none_or(|name| {
        let name = name.to_ascii_lowercase();
        !c.init && (name.contains("postgres") || name == "database" || name == "db")
    })
}

/// A container run of PostgreSQL's the OOM killer ended.
struct Kill<'a> {
    path: &'a str,
    status: &'a ContainerStatus,
    termination: &'a Termination,
}

impl Kill<'_> {
    fn record(&self) -> ContainerKill {
        let (c, t) = (self.status, self.termination);
        ContainerKill {
            pod: c.pod.clone(),
            namespace: c.namespace.clone(),
            container: c.container.clone(),
            reason: t.reason.clone().unwrap_or_default(),
            exit_code: t.exit_code,
            signal: t.killed_by(),
            started_at: t.started_at,
            finished_at: t.finished_at,
            restarted_at: c
                .running_since
                .filter(|r| t.finished_at.is_none_or(|f| *r >= f)),
            restart_count: c.restart_count,
            memory_limit_bytes: c.memory_limit.as_ref().map(|l| l.bytes),
            path: self.path.to_owned(),
            line: t.line,
        }
    }

    /// `postgres of pod cluster-example-1`, or `the container` for a fragment.
    fn name(&self) -> String {
        match (&self.status.container, &self.status.pod) {
            (Some(c), Some(p)) => format!("container {c} of pod {p}"),
            (Some(c), None) => format!("container {c}"),
            (None, Some(p)) => format!("a container of pod {p}"),
            (None, None) => "the container".to_owned(),
        }
    }
}

/// PostgreSQL's OOM-killed container runs, once each (a `kubectl describe` and a manifest of
/// the same pod show the same run), oldest first.
fn kills(sources: &[ContainerSource]) -> Vec<Kill<'_>> {
    let mut out: Vec<Kill<'_>> = Vec::new();
    for source in sources {
        for c in source.statuses.containers.iter().filter(|c| is_postgres(c)) {
            for t in c.terminations().filter(|t| t.oom_killed()) {
                let same = out.iter().any(|k| {
                    k.status.pod == c.pod
                        && k.status.container == c.container
                        && k.termination.finished_at == t.finished_at
                        && k.termination.started_at == t.started_at
                });
                if !same {
                    out.push(Kill {
                        path: &source.path,
                        status: c,
                        termination: t,
                    });
                }
            }
        }
    }
    out.sort_by_key(|k| k.termination.finished_at);
    out
}

/// The longest the kubelet waits before starting a crashed container again (its back-off
/// doubles from 10 s up to five minutes), plus a minute for PostgreSQL to start logging.
const RESTART_WINDOW_SECONDS: f64 = 360.0;

/// Kubernetes keeps whole seconds: an end time may be up to a second before the kill.
const WHOLE_SECOND: f64 = 1.0;

/// Ties every OOM-killed PostgreSQL container to the incident it explains, or adds it as an
/// incident of its own; keeps `incidents` oldest first.
pub(crate) fn tie(
    incidents: &mut Vec<Incident>,
    sources: &[ContainerSource],
    options: &DiagnoseOptions,
) {
    let logs_read = !incidents.is_empty();
    for kill in kills(sources) {
        let record = kill.record();
        let at = record.finished_at;
        let name = kill.name();
        // 1. The kernel's report of the same kill.
        if let Some(i) = at.and_then(|at| {
            incidents.iter().position(|i| {
                i.container_kill.is_none()
                    && i.kernel_kill.as_ref().and_then(|k| k.at).is_some_and(|k| {
                        seconds_between(k, at).abs() <= options.pid_namespace_tolerance_seconds
                    })
            })
        }) {
            let incident = &mut incidents[i];
            incident.notes.push(format!(
                "Kubernetes recorded the same kill: {name} ended OOMKilled{} at {} ({}:{})",
                exit(&record),
                at.map_or_else(|| "?".to_owned(), |t| t.to_string()),
                record.path,
                record.line
            ));
            incident.container_kill = Some(record);
            continue;
        }
        // 2. PostgreSQL's side: the next start with crash recovery, else a SIGKILL crash
        // logged at that time.
        let window = |i: &Incident| -> Option<f64> {
            let (at, started) = (at?, i.started_at?);
            let d = seconds_between(at, started);
            match i.kind {
                "unclean_restart" => (-WHOLE_SECOND
                    ..=RESTART_WINDOW_SECONDS.max(restart_delay(&record) + 60.0))
                    .contains(&d)
                    .then_some(d),
                "crash_restart" => (d.abs() <= options.pid_namespace_tolerance_seconds
                    && i.postgres_crash.as_ref().and_then(|c| c.signal) == Some(9))
                .then_some(d.abs()),
                _ => None,
            }
        };
        let tied = incidents
            .iter()
            .enumerate()
            .filter(|(_, i)| i.kernel_kill.is_none() && i.container_kill.is_none())
            .filter_map(|(n, i)| window(i).map(|d| (n, d)))
            .min_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(n, _)| n);
        if let Some(n) = tied {
            let incident = &mut incidents[n];
            let note = format!(
                "{name} ended OOMKilled{} at {} ({}:{}): the kernel's memory-cgroup OOM killer \
                 killed it at the container's memory limit{}; tied on time (Kubernetes keeps \
                 whole seconds), with lower confidence than a kernel log would give",
                exit(&record),
                at.map_or_else(|| "?".to_owned(), |t| t.to_string()),
                record.path,
                record.line,
                limit(&record),
            );
            if incident.kind == "unclean_restart" {
                incident.kind = "postmaster_killed";
                incident.started_at = at;
                let ready = incident.recovery.as_ref().and_then(|r| r.ready_at);
                if let (Some(from), Some(to)) = (at, ready) {
                    incident.outage_seconds = Some(round3(seconds_between(from, to)));
                }
            } else {
                incident.kind = "oom_kill";
            }
            incident.cause = "container_oom_killed";
            incident.confidence = incident.confidence.min(0.7);
            incident.matched_by = Some("container_time");
            incident.notes.insert(0, note);
            incident.container_kill = Some(record);
            continue;
        }
        // 3. On its own.
        let mut notes = vec![format!(
            "{name} ended OOMKilled{}{}: the kernel's memory-cgroup OOM killer killed it at \
             the container's memory limit{}",
            exit(&record),
            match (record.started_at, at) {
                (_, Some(f)) => format!(" at {f}"),
                (Some(s), None) => format!(
                    " after a run started at {s} (Kubernetes' record gives no end time{})",
                    record
                        .restarted_at
                        .map(|r| format!("; the container started again at {r}"))
                        .unwrap_or_default()
                ),
                (None, None) => String::new(),
            },
            limit(&record),
        )];
        notes.push(if logs_read {
            "no PostgreSQL crash or restart in the bundle's logs fits its time: the logs do not \
             cover it, or PostgreSQL's lines of that run were lost with the container"
                .to_owned()
        } else {
            "no kernel log or PostgreSQL log in the bundle covers it: which process the kernel \
             killed, and what PostgreSQL logged before and after, are unknown"
                .to_owned()
        });
        if let Some(n) = record.restart_count.filter(|n| *n > 1) {
            notes.push(format!(
                "the container has been restarted {n} times; Kubernetes keeps only the last \
                 termination"
            ));
        }
        let mut incident = Incident::new("kernel_oom", "container_oom_killed", at);
        incident.notes = notes;
        incident.container_kill = Some(record);
        incidents.push(incident);
    }
    incidents.sort_by(crate::correlate::by_time);
}

/// PostgreSQL's OOM-killed container runs as timeline events (origin `container`, kind
/// `container_oom_killed`), placed at their end time; a run Kubernetes gives no end time for is
/// listed unplaced.
pub(crate) fn timeline(sources: &[ContainerSource]) -> Vec<TimelineEvent> {
    kills(sources)
        .iter()
        .map(|kill| {
            let record = kill.record();
            TimelineEvent {
                at: record.finished_at,
                // Kubernetes keeps whole seconds.
                uncertainty_seconds: record.finished_at.map(|_| WHOLE_SECOND),
                origin: "container",
                kind: "container_oom_killed".to_owned(),
                summary: format!(
                    "{} ended OOMKilled{}{}{}",
                    kill.name(),
                    exit(&record),
                    record
                        .memory_limit_bytes
                        .map(|b| format!(" at its memory limit ({})", crate::human::human_bytes(b)))
                        .unwrap_or_default(),
                    record
                        .restarted_at
                        .map(|r| format!("; started again at {r}"))
                        .unwrap_or_default(),
                ),
                path: record.path,
                line: record.line,
                wrapper_at: None,
                failure: None,
            }
        })
        .collect()
}

/// The `no_kernel_log` caveat, told that Kubernetes recorded PostgreSQL's container OOM kills:
/// those are seen (each is an incident), what a kernel log alone shows is not.
pub(crate) fn amend_no_kernel_log(caveats: &mut [Caveat], sources: &[ContainerSource]) {
    let seen = kills(sources).len();
    if seen == 0 {
        return;
    }
    for caveat in caveats.iter_mut().filter(|c| c.kind == "no_kernel_log") {
        let rest = caveat
            .text
            .split_once(": the bundle has no kernel log, so ")
            .map_or(caveat.text.as_str(), |(_, rest)| rest);
        caveat.text = format!(
            "the bundle has no kernel log. Kubernetes recorded {seen} OOM kill{} of PostgreSQL's \
             container (each is an incident), but an OOM kill of one backend in a container \
             that kept running is seen only in the kernel log, so {rest}",
            if seen == 1 { "" } else { "s" },
        );
    }
}

/// Seconds from the kill to the container's next start, when both are known.
fn restart_delay(k: &ContainerKill) -> f64 {
    match (k.finished_at, k.restarted_at) {
        (Some(f), Some(r)) => seconds_between(f, r),
        _ => 0.0,
    }
}

fn exit(k: &ContainerKill) -> String {
    match (k.exit_code, k.signal) {
        (Some(code), Some(sig)) => format!(" (exit code {code}: signal {sig})"),
        (Some(code), None) => format!(" (exit code {code})"),
        (None, Some(sig)) => format!(" (signal {sig})"),
        (None, None) => String::new(),
    }
}

fn limit(k: &ContainerKill) -> String {
    k.memory_limit_bytes
        .map(|b| format!(" ({})", crate::human::human_bytes(b)))
        .unwrap_or_default()
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The memory limit of PostgreSQL's container: the OOM-killed one's, else the first
/// PostgreSQL container's that has one. It is the limit of the container's memory cgroup.
pub(crate) fn memory_limit(sources: &[ContainerSource]) -> Option<Known<u64>> {
    let with_limit = |oom: bool| {
        sources.iter().find_map(|s| {
            s.statuses
                .containers
                .iter()
                .filter(|c| is_postgres(c))
                .filter(|c| !oom || c.terminations().any(Termination::oom_killed))
                .find_map(|c| {
                    let l = c.memory_limit.as_ref()?;
                    Some(Known::new(
                        l.bytes,
                        &s.path,
                        l.line,
                        "resources.limits.memory",
                    ))
                })
        })
    };
    with_limit(true).or_else(|| with_limit(false))
}

/// PostgreSQL's container's memory cgroup as Kubernetes shows it, for a bundle with no cgroup
/// files: its limit, and the OOM kills recorded in it (a floor: Kubernetes keeps each
/// container's last termination only).
pub(crate) fn cgroup(sources: &[ContainerSource]) -> Option<CgroupFacts> {
    let limit = memory_limit(sources)?;
    let kills = kills(sources);
    let oom_kills = kills
        .first()
        .map(|k| Known::new(kills.len() as u64, k.path, k.termination.line, "OOMKilled"));
    Some(CgroupFacts {
        version: None,
        dir: limit.path.clone(),
        path: None,
        limit: Some(limit),
        limit_read: true,
        high: None,
        high_events: None,
        usage: None,
        peak: None,
        failcnt: None,
        oom_kills,
    })
}

#[cfg(test)]
mod tests {
    use jiff::Timestamp;
    use pgmortem_parse::kube::parse_describe;

    use super::*;
    use crate::report::{KernelKill, PostgresCrash, Recovery};

    /// `kubectl describe` of a pod whose `postgres` container was OOM-killed at 05:29:10, and
    /// of its backup sidecar, OOM-killed too.
    fn describe(finished: &str) -> ContainerSource {
        let text = format!(
            "Name:         pg-1\nContainers:\n  postgres:\n    State:          Running\n      \
             Started:      Tue, 24 Nov 2026 05:29:16 +0000\n    Last State:     Terminated\n      \
             Reason:       OOMKilled\n      Exit Code:    137\n      Started:      Tue, 24 Nov \
             2026 05:29:05 +0000\n{finished}    Restart Count:  1\n    Limits:\n      memory:  \
             1Gi\n  pgbackrest:\n    Last State:     Terminated\n      Reason:       OOMKilled\n      \
             Exit Code:    137\n    Limits:\n      memory:  64Mi\n"
        );
        ContainerSource {
            path: "describe/pods/pg-1".into(),
            statuses: parse_describe(text.as_bytes()),
        }
    }

    const FINISHED: &str = "      Finished:     Tue, 24 Nov 2026 05:29:10 +0000\n";

    fn t(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn incident(kind: &'static str, at: &str) -> Incident {
        let mut incident = Incident::new(kind, "unknown", Some(t(at)));
        incident.recovery = Some(Recovery {
            ready_at: Some(t("2026-11-24T05:29:16.578Z")),
            ..Recovery::default()
        });
        incident
    }

    fn crash(at: &str, signal: i32) -> Incident {
        let mut i = incident("crash_restart", at);
        i.cause = "signal_from_outside";
        i.postgres_crash = Some(PostgresCrash {
            pid: 42,
            process: "server process".into(),
            signal: Some(signal),
            exit_code: None,
            query: None,
            at: Some(t(at)),
            path: "postgresql.log".into(),
            line: 9,
        });
        i
    }

    fn tied(mut incidents: Vec<Incident>, source: ContainerSource) -> Vec<Incident> {
        tie(&mut incidents, &[source], &DiagnoseOptions::default());
        incidents
    }

    #[test]
    fn a_start_with_crash_recovery_after_the_kill_is_its_restart() {
        for (start, is_tied) in [
            ("2026-11-24T05:29:16.033Z", true),
            ("2026-11-24T05:29:09.500Z", true),
            ("2026-11-24T05:35:09Z", true),
            ("2026-11-24T05:35:11Z", false),
            ("2026-11-24T05:29:08Z", false),
        ] {
            let out = tied(vec![incident("unclean_restart", start)], describe(FINISHED));
            if is_tied {
                assert_eq!(out.len(), 1, "{start}: {out:#?}");
                let i = &out[0];
                assert_eq!(
                    (i.kind, i.cause),
                    ("postmaster_killed", "container_oom_killed")
                );
                assert_eq!(i.started_at, Some(t("2026-11-24T05:29:10Z")));
                assert_eq!(i.outage_seconds, Some(6.578));
                assert_eq!(i.matched_by, Some("container_time"));
                assert!(i.notes[0].contains("container postgres of pod pg-1"));
            } else {
                // Too early or too late: the kill stands alone beside the restart.
                assert_eq!(out.len(), 2, "{start}: {out:#?}");
                assert!(out.iter().any(|i| i.kind == "unclean_restart"));
                let lone = out.iter().find(|i| i.kind == "kernel_oom").unwrap();
                assert_eq!(lone.cause, "container_oom_killed");
                assert!(lone.notes[1].contains("no PostgreSQL crash or restart"));
            }
        }
    }

    #[test]
    fn a_sigkill_crash_at_the_kill_is_tied_and_other_signals_are_not() {
        let out = tied(vec![crash("2026-11-24T05:29:15Z", 9)], describe(FINISHED));
        assert_eq!(out.len(), 1);
        assert_eq!(
            (out[0].kind, out[0].cause),
            ("oom_kill", "container_oom_killed")
        );
        let out = tied(vec![crash("2026-11-24T05:29:21Z", 9)], describe(FINISHED));
        assert_eq!(out.len(), 2);
        let out = tied(vec![crash("2026-11-24T05:29:11Z", 11)], describe(FINISHED));
        assert_eq!(out.len(), 2);
        let segv = out.iter().find(|i| i.kind == "crash_restart").unwrap();
        assert_eq!(segv.cause, "signal_from_outside");
    }

    #[test]
    fn the_kernels_report_of_the_same_kill_keeps_its_cause() {
        let mut kernel = incident("kernel_oom", "2026-11-24T05:29:10.790Z");
        kernel.cause = "oom_killer";
        kernel.kernel_kill = Some(KernelKill {
            pid: 23749,
            comm: "postgres".into(),
            unit: None,
            page_kb: 4,
            at: Some(t("2026-11-24T05:29:10.790Z")),
            path: "dmesg.txt".into(),
            line: 88,
            ..KernelKill::default()
        });
        let out = tied(vec![kernel], describe(FINISHED));
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].kind, out[0].cause), ("kernel_oom", "oom_killer"));
        assert!(out[0].container_kill.is_some());
        assert!(out[0].notes[0].starts_with("Kubernetes recorded the same kill"));
    }

    #[test]
    fn a_kill_with_no_end_time_stands_alone_and_sidecars_are_not_postgres() {
        let out = tied(Vec::new(), describe(""));
        // The pgbackrest sidecar's kill is not PostgreSQL's.
        assert_eq!(out.len(), 1, "{out:#?}");
        let i = &out[0];
        assert_eq!(
            (i.kind, i.cause, i.started_at),
            ("kernel_oom", "container_oom_killed", None)
        );
        let k = i.container_kill.as_ref().unwrap();
        assert_eq!(k.container.as_deref(), Some("postgres"));
        assert_eq!(k.restarted_at, Some(t("2026-11-24T05:29:16Z")));
        assert!(i.notes[0].contains("gives no end time"), "{}", i.notes[0]);
        assert!(i.notes[1].contains("no kernel log or PostgreSQL log"));
        // The same run shown twice (a describe and a manifest) is one kill.
        let mut incidents = Vec::new();
        tie(
            &mut incidents,
            &[describe(FINISHED), describe(FINISHED)],
            &DiagnoseOptions::default(),
        );
        assert_eq!(incidents.len(), 1);
    }

    #[test]
    fn a_kill_is_a_timeline_event_and_a_run_without_end_is_unplaced() {
        let events = timeline(&[describe(FINISHED)]);
        assert_eq!(events.len(), 1, "{events:#?}");
        let e = &events[0];
        assert_eq!(
            (e.origin, e.kind.as_str(), e.at, e.uncertainty_seconds),
            (
                "container",
                "container_oom_killed",
                Some(t("2026-11-24T05:29:10Z")),
                Some(1.0)
            )
        );
        assert_eq!(
            e.summary,
            "container postgres of pod pg-1 ended OOMKilled (exit code 137: signal 9) at its \
             memory limit (1.0 GiB); started again at 2026-11-24T05:29:16Z"
        );
        let events = timeline(&[describe("")]);
        assert_eq!((events.len(), events[0].at), (1, None));
    }

    #[test]
    fn no_kernel_log_says_what_kubernetes_recorded() {
        let caveat = || Caveat {
            kind: "no_kernel_log",
            text: "OOM kills cannot be seen: the bundle has no kernel log, so a process killed \
                   by SIGKILL cannot be told from one the OOM killer took."
                .to_owned(),
        };
        let mut caveats = [caveat()];
        amend_no_kernel_log(&mut caveats, &[describe(FINISHED)]);
        assert!(
            caveats[0].text.starts_with(
                "the bundle has no kernel log. Kubernetes recorded 1 OOM kill of PostgreSQL's \
                 container (each is an incident), but an OOM kill of one backend in a container \
                 that kept running is seen only in the kernel log, so a process killed by SIGKILL"
            ),
            "{}",
            caveats[0].text
        );
        // No container kill recorded: the caveat is left as it was.
        let mut caveats = [caveat()];
        amend_no_kernel_log(&mut caveats, &[]);
        assert_eq!(caveats[0], caveat());
    }

    #[test]
    fn the_killed_containers_limit_is_the_memory_limit() {
        let sources = [describe(FINISHED)];
        let limit = memory_limit(&sources).unwrap();
        assert_eq!((limit.value, limit.line), (1 << 30, 13));
        let cgroup = cgroup(&sources).unwrap();
        assert_eq!(cgroup.oom_kills.unwrap().value, 1);
        assert!(cgroup.limit_read);
        let empty = ContainerSource {
            path: "x".into(),
            statuses: parse_describe(b"Containers:\n  postgres:\n    Restart Count:  0\n"),
        };
        assert!(cgroup_none(&[empty]));
    }

    fn cgroup_none(sources: &[ContainerSource]) -> bool {
        cgroup(sources).is_none()
    }
}
