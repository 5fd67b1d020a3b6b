//! ## What it finds
//! The kernel's OOM killer killed the postmaster itself. Its children exit when they notice,
//! and nothing accepts connections until something (systemd, Patroni, an operator) starts the
//! server again, which then runs crash recovery.
//!
//! ## Why it matters
//! A backend killed by the OOM killer costs a restart of a few seconds; a killed postmaster
//! costs an outage that lasts until a supervisor notices, and the server may not come back at
//! all on a host without one. The postmaster holds almost no memory of its own: it is killed
//! only when its oom_score_adj leaves it exposed.
//!
//! ## What to do
//! Start the postmaster with `oom_score_adj = -1000` (systemd `OOMScoreAdjust=-1000`, Debian's
//! pg_ctlcluster does -900) and its children reset to 0 through
//! `PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj` and `PG_OOM_ADJUST_VALUE=0`, so that the
//! kernel picks the backend that grew instead; then bound memory (work-mem-exceeds-memory).
//!
//! ## Thresholds
//! Every OOM kill whose victim PID is one the postmaster logged under (`ready to accept
//! connections`, `starting PostgreSQL`, the lines announcing a child's death).
//!
//! ## Evidence it needs
//! A kernel log and the PostgreSQL log.
//!
//! ## Knowledge
//! [fr-memoire]: the postmaster at -900 is spared while its children are not;
//! [pg-kernel-resources] ("Linux Memory Overcommit": PG_OOM_ADJUST_FILE, PG_OOM_ADJUST_VALUE).

use crate::facts::Facts;
use crate::human::{duration, human_kb};
use crate::report::{Finding, Severity};
use crate::rules::support::{incident_evidence, limit_text};
use crate::rules::{Input, RuleMeta, critical, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "oom-kill-postmaster",
    title: "The kernel OOM killer killed the postmaster",
    severities: &[critical("")],
    needs: &[Input::KernelLog, Input::PostgresLog],
    uses: &[Input::Processes],
};

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (index, incident) in facts.incidents.iter().enumerate() {
        if incident.kind != "postmaster_killed" {
            continue;
        }
        let Some(k) = &incident.kernel_kill else {
            continue;
        };
        let back = match (incident.outage_seconds, incident.recovery.as_ref()) {
            (Some(s), _) => format!(
                "the server was back {} after the kill, once started again and recovered",
                duration(s)
            ),
            (None, Some(r)) if r.ready_at.is_none() => {
                "the log shows the server starting again but not ready".to_owned()
            }
            _ => "the log shows no restart: the server was still down when the bundle was \
                  collected"
                .to_owned(),
        };
        let adj = k
            .oom_score_adj
            .map(|a| format!(" Its oom_score_adj was {a}."))
            .unwrap_or_default();
        let mut f = finding(
            &META,
            Severity::Critical,
            format!(
                "The kernel OOM killer killed the postmaster (pid {}){}",
                k.pid,
                limit_text(k)
            ),
        )
        .summary(format!(
            "The postmaster, pid {} ({}{}), was killed by the kernel OOM killer; every session \
             ended with it and {back}.{adj}",
            k.pid,
            crate::human::quote(&k.comm),
            k.anon_rss_kb
                .map(|kb| format!(", anon-rss {}", human_kb(kb)))
                .unwrap_or_default(),
        ))
        .recommend(
            "Protect the postmaster: oom_score_adj = -1000 (systemd OOMScoreAdjust=-1000) with \
             PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj and PG_OOM_ADJUST_VALUE=0 so its \
             children stay killable; make sure a supervisor restarts PostgreSQL; then bound \
             memory so the OOM killer is not needed.",
        )
        .evidence(incident_evidence(incident))
        .confidence(incident.confidence)
        .incident(index)
        .impact(incident.outage_seconds.unwrap_or(f64::MAX / 4.0));
        if let Some(s) = incident.outage_seconds {
            f = f.figure("outage_seconds", s);
        }
        out.push(f);
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::{Outcome, Scratch};

    const LOG: &str = "postgres/server.log";

    #[test]
    fn the_postmaster_killed_in_its_memory_cgroup_fires() {
        // Real capture: the postmaster at oom_score_adj 1000 in a 1G memory cgroup, OOM-killed,
        // started again 5 s later by the recorder.
        let f = Scratch::incident("pg15-oom-kill-postmaster")
            .run("oom-kill-postmaster")
            .one();
        assert_eq!(f.severity, crate::Severity::Critical);
        assert!(f.title.contains("(pid 23749)"), "{}", f.title);
        assert!(
            f.summary.contains("the server was back")
                && f.summary.contains("oom_score_adj was 1000"),
            "{}",
            f.summary
        );
        assert!(f.figures["outage_seconds"] > 5.0);
    }

    #[test]
    fn a_postmaster_never_started_again_is_still_down() {
        // The same capture, the log cut after the children's exit: no restart.
        let f = Scratch::incident("pg15-oom-kill-postmaster")
            .edit(LOG, |log| {
                log.lines()
                    .take_while(|l| !l.contains("[24812]"))
                    .map(|l| format!("{l}\n"))
                    .collect()
            })
            .run("oom-kill-postmaster")
            .one();
        assert!(f.summary.contains("still down"), "{}", f.summary);
        assert!(!f.figures.contains_key("outage_seconds"));
    }

    #[test]
    fn a_backend_killed_is_not_the_postmaster() {
        // Real capture: a sort's backend OOM-killed in its memory cgroup, crash-restart.
        assert!(
            Scratch::incident("pg15-memcg-oom-work-mem")
                .run("oom-kill-postmaster")
                .silent()
        );
    }

    #[test]
    fn without_the_kernel_log_it_cannot_say() {
        let scratch = Scratch::incident("pg15-oom-kill-postmaster");
        let scratch = scratch
            .paths("kernel/")
            .iter()
            .fold(scratch, |s, p| s.remove(p));
        assert!(matches!(
            scratch.run("oom-kill-postmaster"),
            Outcome::NotEvaluated(_)
        ));
        // … and the restart is one the log alone cannot explain.
        assert!(
            scratch
                .run("unclean-restart")
                .one()
                .title
                .contains("after an unlogged stop")
        );
    }
}
