//! ## What it finds
//! Kubernetes recorded PostgreSQL's container as killed by the OOM killer: its `lastState` (or
//! `state`) `terminated` with reason `OOMKilled`, exit code 137 (128 + SIGKILL), in a pod
//! manifest or `kubectl describe pod`. It names the container and pod, its memory limit, when
//! the killed run started and ended and when the container ran again, the kernel's kill when
//! the node's kernel log shows it, what PostgreSQL went through (the postmaster killed and the
//! restart with crash recovery, or a backend and the crash restart), and compares the limit
//! with what the server's settings need.
//!
//! ## Why it matters
//! A container's memory limit is its memory cgroup's: when PostgreSQL's processes, the page
//! cache they cause and the files in a memory-backed `/dev/shm` reach it, the kernel kills a
//! process inside, usually the biggest. When that is the postmaster (often the container's main
//! process) the container ends and the kubelet starts it again, with crash recovery, after a
//! back-off that doubles up to five minutes; every session is cut either way.
//!
//! ## What to do
//! Size the limit for the server: at least twice its floor (shared memory + max_connections × a
//! connection's real cost) and the worst case of its memory settings with a fifth to spare (the
//! figures cgroup-memory-limit and work-mem-exceeds-memory compute), or lower shared_buffers,
//! max_connections (a pooler) and work_mem to fit the limit. Set `resources.requests.memory`
//! equal to `limits.memory` (the Guaranteed QoS class: the kubelet evicts the pod last and the
//! node's OOM killer spares it). `/dev/shm` in a pod is a memory-backed `emptyDir` whose pages
//! count against the limit: bound it (`sizeLimit`) and count PostgreSQL's dynamic shared memory
//! (parallel query) in the limit.
//!
//! ## Thresholds
//! Every incident Kubernetes' record of an `OOMKilled` PostgreSQL container is part of:
//! critical. The limit is said too small when the floor takes half of it or more, or the worst
//! case of the settings with a fifth to spare exceeds it.
//!
//! ## Evidence it needs
//! A pod manifest or `kubectl describe pod` of PostgreSQL's pod; reads the server settings, the
//! processes, `/dev/shm` and the kernel log when present.
//!
//! ## Knowledge
//! [kubernetes-resources] (limits, requests, QoS classes, OOMKilled and exit code 137, the
//! restart back-off, memory-backed emptyDir); [kernel-oom] (memory cgroup OOM);
//! [zh-low-level] (/dev/shm of containers).

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{ContainerKill, Evidence, Finding, Incident, Severity};
use crate::rules::support::{
    FLOOR_SHARE, LimitNeed, incident_evidence, kill_evidence, limit_text, outage_text,
};
use crate::rules::{Input, RuleMeta, critical, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "container-oom-killed",
    title: "Kubernetes OOM-killed PostgreSQL's container at its memory limit",
    severities: &[critical("")],
    needs: &[],
    uses: &[
        Input::PgSettings,
        Input::Processes,
        Input::DevShm,
        Input::KernelLog,
    ],
};

/// `container postgres of pod cluster-example-1`.
fn container_name(c: &ContainerKill) -> String {
    match (&c.container, &c.pod) {
        (Some(c), Some(p)) => format!("container {c} of pod {p}"),
        (Some(c), None) => format!("container {c}"),
        (None, Some(p)) => format!("a container of pod {p}"),
        (None, None) => "PostgreSQL's container".to_owned(),
    }
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    facts
        .incidents
        .iter()
        .enumerate()
        .filter_map(|(index, incident)| {
            let c = incident.container_kill.as_ref()?;
            Some(kill_finding(facts, index, incident, c))
        })
        .collect()
}

fn kill_finding(
    facts: &Facts<'_>,
    index: usize,
    incident: &Incident,
    c: &ContainerKill,
) -> Finding {
    let name = container_name(c);
    let limit = c.memory_limit_bytes;
    let exit = match (c.exit_code, c.signal) {
        (Some(code), Some(sig)) => format!(" (exit code {code}: signal {sig})"),
        (Some(code), None) => format!(" (exit code {code})"),
        (None, Some(sig)) => format!(" (signal {sig})"),
        (None, None) => String::new(),
    };
    let title = format!(
        "Kubernetes: {name} was OOMKilled{}{}{}",
        limit
            .map(|l| format!(" at its {} memory limit", human_bytes(l)))
            .unwrap_or_default(),
        c.finished_at
            .map(|t| format!(" at {t}"))
            .unwrap_or_default(),
        outage_text(incident)
    );
    let mut summary = format!(
        "Kubernetes recorded {name} terminated {}{exit}: the kernel's memory-cgroup OOM killer \
         killed it at the container's memory limit{}.",
        c.reason,
        limit
            .map(|l| format!(" ({})", human_bytes(l)))
            .unwrap_or_else(|| " (the record shows no limit)".to_owned())
    );
    match (c.started_at, c.finished_at) {
        (Some(s), Some(f)) => summary.push_str(&format!(" The killed run lasted from {s} to {f}.")),
        (Some(s), None) => summary.push_str(&format!(" The killed run started at {s}.")),
        _ => {}
    }
    if let Some(r) = c.restarted_at {
        summary.push_str(&format!(" The container ran again from {r}."));
    }
    if let Some(n) = c.restart_count.filter(|n| *n > 0) {
        summary.push_str(&format!(
            " It has been restarted {n} time{} (Kubernetes keeps the last termination only).",
            if n == 1 { "" } else { "s" }
        ));
    }
    let mut evidence = vec![Evidence::of_line(
        &c.path,
        c.line,
        format!("Kubernetes: {name} {}", c.reason),
    )];
    match &incident.kernel_kill {
        Some(k) => {
            summary.push_str(&format!(
                " The node's kernel log shows the kill: {} {}{}.",
                crate::human::quote(&k.comm),
                k.pid,
                limit_text(k)
            ));
            evidence.push(kill_evidence(k, "the kernel's OOM report of the same kill"));
        }
        None if facts.kernel_logs.is_empty() => summary.push_str(
            " The bundle has no kernel log of the node: which process the kernel killed is not \
             known.",
        ),
        None => summary.push_str(" The bundle's kernel log does not show this kill."),
    }
    summary.push_str(match incident.kind {
        "postmaster_killed" => {
            " PostgreSQL's postmaster died with the container; the server came back only when \
             the container started again, with crash recovery."
        }
        "oom_kill" | "crash_restart" => {
            " PostgreSQL logged the death of one of its processes and crash-restarted."
        }
        _ if incident.postgres_crash.is_none() && incident.recovery.is_none() => {
            " No PostgreSQL log in the bundle covers it."
        }
        _ => "",
    });

    // The limit against what the server needs.
    let need = LimitNeed::of(facts);
    let mut fix = Vec::new();
    if let Some(l) = limit {
        if let Some(floor) = &need.floor {
            summary.push_str(&format!(
                " {}, {:.0} % of the limit.",
                floor.describe(),
                floor.total as f64 / l as f64 * 100.0
            ));
        }
        if let Some(w) = &need.worst {
            summary.push_str(&format!(
                " The worst case of the memory settings is {} ({}).",
                human_bytes(w.total),
                w.formula()
            ));
        }
        let wants = need.wants(l);
        if !wants.is_empty() {
            fix.push(format!(
                "Raise resources.limits.memory of {name} (now {}) for this server: {}; or lower \
                 shared_buffers, max_connections (a pooler) and work_mem to fit it.",
                human_bytes(l),
                wants.join("; ")
            ));
        } else if need.floor.is_some() && need.worst.is_some() {
            fix.push(format!(
                "The limit ({}) holds twice the server's floor and the worst case of its memory \
                 settings: the memory came from beyond them (a session's own SET work_mem, an \
                 extension, files in /dev/shm, another process in the container); find it in \
                 the kernel's OOM report of the node or the PostgreSQL log, and bound it.",
                human_bytes(l)
            ));
        } else {
            fix.push(format!(
                "Size resources.limits.memory of {name} (now {}) for shared_buffers + \
                 max_connections × a connection's cost, with room for work_mem and the page \
                 cache (the bundle has no server settings to compute it: collect pg_settings or \
                 postgresql.conf).",
                human_bytes(l)
            ));
        }
    } else {
        fix.push(format!(
            "Give {name} a memory limit sized for the server (shared_buffers + max_connections × \
             a connection's cost, with room for work_mem and the page cache): the limit it was \
             killed at is a parent's (the pod's or the node's)."
        ));
    }
    fix.push(
        "Set resources.requests.memory equal to limits.memory (the Guaranteed QoS class: the \
         kubelet evicts the pod last and the node's OOM killer spares it)."
            .to_owned(),
    );
    let shm = facts.host.dev_shm.as_ref();
    fix.push(format!(
        "/dev/shm in a pod is a memory-backed emptyDir whose pages count against the limit{}: \
         bound it (sizeLimit) and count PostgreSQL's dynamic shared memory (parallel query) in \
         the limit.",
        shm.map(|d| format!(
            " (here {}{})",
            human_bytes(d.size.value),
            d.used
                .map(|u| format!(", {} used", human_bytes(u)))
                .unwrap_or_default()
        ))
        .unwrap_or_default()
    ));
    if let Some(d) = shm {
        evidence.push(d.size.evidence("df of /dev/shm"));
    }
    evidence.extend(incident_evidence(incident).into_iter().filter(|e| {
        incident
            .kernel_kill
            .as_ref()
            .is_none_or(|k| !(e.path == k.path && e.line == k.line))
    }));
    if let Some(floor) = &need.floor {
        evidence.extend(floor.settings.iter().filter_map(|s| s.evidence()));
    }

    let mut f = finding(&META, Severity::Critical, title)
        .summary(summary)
        .recommend(fix.join(" "))
        .evidence(evidence)
        .confidence(incident.confidence)
        .incident(index)
        .impact(incident.outage_seconds.unwrap_or(1.0));
    if let Some(l) = limit {
        f = f.figure("limit_bytes", l as f64);
        if let Some(floor) = &need.floor {
            f = f
                .figure("floor_bytes", floor.total as f64)
                .figure("floor_share", floor.total as f64 / l as f64);
            if floor.total as f64 >= FLOOR_SHARE * l as f64 {
                f = f.figure("floor_over_half", 1.0);
            }
        }
        if let Some(r) = need.recommended(l) {
            f = f.figure("recommended_limit_bytes", r as f64);
        }
    }
    if let Some(s) = incident.outage_seconds {
        f = f.figure("outage_seconds", s);
    }
    f
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::Scratch;

    /// Real CloudNativePG report: the postgres container OOM-killed at its 1 GiB limit.
    fn cnpg() -> Scratch {
        Scratch::incident("pg15-cnpg-report-container-oom")
    }

    fn pods(s: &Scratch) -> String {
        s.paths("cluster-pods.yaml").remove(0)
    }

    #[test]
    fn the_oom_killed_container_is_named_with_its_limit_and_restart() {
        let f = cnpg().run("container-oom-killed").one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, Some(0));
        assert!(
            f.title.starts_with(
                "Kubernetes: container postgres of pod cluster-example-1 was OOMKilled at its \
                 1.0 GiB memory limit at 2026-11-24T05:29:10Z"
            ),
            "{}",
            f.title
        );
        assert!(
            f.summary.contains("(exit code 137: signal 9)"),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("ran again from 2026-11-24T05:29:16Z"),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("postmaster died with the container"),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("no kernel log of the node"),
            "{}",
            f.summary
        );
        let fix = f.recommendation.unwrap();
        assert!(fix.contains("the bundle has no server settings"), "{fix}");
        assert!(
            fix.contains("requests.memory equal to limits.memory"),
            "{fix}"
        );
        assert!(fix.contains("sizeLimit"), "{fix}");
    }

    #[test]
    fn the_limit_is_compared_with_the_settings_worst_case() {
        // The real initdb postgresql.conf the recorder edited (shared_buffers 32MB,
        // max_connections 20, work_mem 4MB by default): a floor of 32 MiB + 20 × 2 MiB = 72 MiB,
        // a worst case of 4 MiB × hash_mem_multiplier 2 × (20 connections + min(8, 8, 20 × 2)
        // parallel workers) + 32 MiB + 3 × 64 MiB of autovacuum = 448 MiB (560 MiB with a fifth
        // to spare).
        let with_conf = |limit: &str| {
            let s = cnpg().copy(
                "postgresql.conf",
                "formats/system/postgresql_conf/initdb-postgresql.conf",
            );
            let path = pods(&s);
            s.edit(&path, |t| t.replace("memory: 1Gi", limit))
                .run("container-oom-killed")
                .one()
        };
        // 1 GiB holds both: the memory came from beyond the settings.
        let f = with_conf("memory: 1Gi");
        assert_eq!(f.figures["floor_bytes"], ((32u64 + 40) << 20) as f64);
        assert!(!f.figures.contains_key("recommended_limit_bytes"), "{f:#?}");
        assert!(f.recommendation.unwrap().contains("came from beyond them"));
        // 512 MiB holds twice the floor but not the worst case.
        let f = with_conf("memory: 512Mi");
        assert!(!f.figures.contains_key("floor_over_half"));
        let fix = f.recommendation.unwrap();
        assert!(
            fix.contains("Raise resources.limits.memory of container postgres"),
            "{fix}"
        );
        assert!(
            fix.contains("to hold the worst case of the memory settings"),
            "{fix}"
        );
        assert!(!fix.contains("twice the floor"), "{fix}");
        assert_eq!(
            f.figures["recommended_limit_bytes"],
            ((448u64 << 20) as f64 / 0.8).floor()
        );
        // 128 MiB: the floor takes 56 % of it.
        let f = with_conf("memory: 128Mi");
        assert_eq!(f.figures["floor_over_half"], 1.0);
        assert!(
            f.recommendation
                .unwrap()
                .contains("twice the floor of 72 MiB")
        );
    }

    #[test]
    fn a_describe_alone_is_an_incident_of_its_own() {
        // Real: cloudnative-pg#7579's `kubectl describe pod`, no log of any kind.
        let f = Scratch::new()
            .copy(
                "kubectl-describe-pod.txt",
                "wild/cnpg-oomkilled-dev-shm-describe/kubectl-describe-pod.txt",
            )
            .run("container-oom-killed")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(f.summary.contains("No PostgreSQL log"), "{}", f.summary);
        assert!(f.recommendation.unwrap().contains("a parent's"));
    }

    #[test]
    fn a_container_that_ended_for_another_reason_is_silent() {
        let s = cnpg();
        let path = pods(&s);
        assert!(
            s.edit(&path, |t| t.replace("reason: OOMKilled", "reason: Error"))
                .run("container-oom-killed")
                .silent()
        );
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("container-oom-killed")
                .silent()
        );
    }
}
