//! ## What it finds
//! The kernel's OOM killer killed a PostgreSQL process, and PostgreSQL answered with a
//! crash-restart: every session terminated, shared memory reinitialised, WAL replayed.
//!
//! ## Why it matters
//! A SIGKILLed backend may have held shared memory in an inconsistent state, so the postmaster
//! cannot trust shared memory and restarts the whole instance: one runaway query takes every
//! session down and the instance is unavailable until redo ends.
//!
//! ## What to do
//! Bound memory per query (work_mem × sort/hash nodes × parallel workers), size the limit the
//! kill came from (a memory cgroup, or RAM with `vm.overcommit_memory = 2` and the computed
//! `vm.overcommit_ratio`, so an allocation fails with an error instead of a kill), and keep the
//! postmaster out of the OOM killer's reach (`oom_score_adj = -1000`, children reset through
//! `PG_OOM_ADJUST_FILE`). The figures of this host come from the settings and limits in the
//! bundle when it has them.
//!
//! ## Thresholds
//! Every incident of kind `oom_kill` (a kernel OOM kill tied to a `terminated by signal 9`
//! line); its confidence is the tie's (0.95 same PID within 5 s, 0.8 within the tolerance,
//! 0.6 PID only, 0.5 PID namespace).
//!
//! ## Evidence it needs
//! A kernel log and the PostgreSQL log covering the same time, and a clock anchor (uptime +
//! date, btime, or a `dmesg -T` copy).
//!
//! ## Knowledge
//! [fr-memoire] walks through this very sequence: a sort with a huge work_mem exhausts RAM and
//! swap, the OOM killer takes backend 14643, the postmaster logs `terminated by signal 9` and
//! restarts everything. [pg-kernel-resources] ("Linux Memory Overcommit").

use crate::facts::Facts;
use crate::human::human_kb;
use crate::report::{Finding, Severity};
use crate::rules::support::{
    incident_evidence, limit_text, memory_limit, outage_text, query_text, redo_text, worst_case,
};
use crate::rules::{Input, RuleMeta, critical, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "oom-kill-crash-restart",
    title: "The kernel OOM killer killed a PostgreSQL process and the instance crash-restarted",
    severities: &[critical("")],
    needs: &[Input::KernelLog, Input::PostgresLog],
    uses: &[Input::PgSettings, Input::Cgroup, Input::Meminfo],
};

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (index, incident) in facts.incidents.iter().enumerate() {
        if incident.kind != "oom_kill" {
            continue;
        }
        let (Some(k), Some(c)) = (&incident.kernel_kill, &incident.postgres_crash) else {
            continue;
        };
        let rss = k
            .anon_rss_kb
            .map(|kb| format!(" holding {} anonymous memory", human_kb(kb)))
            .unwrap_or_default();
        let title = format!(
            "The kernel OOM killer killed PostgreSQL {} {}{}{rss}{}{}",
            c.process,
            c.pid,
            if k.pid == c.pid {
                String::new()
            } else {
                format!(" (kernel PID {})", k.pid)
            },
            limit_text(k),
            outage_text(incident)
        );
        let summary = format!(
            "{} {} ({}) was killed by the kernel OOM killer{}; PostgreSQL treated it as a \
             crash, terminated every session and replayed WAL{}.{}",
            c.process,
            c.pid,
            crate::human::quote(&k.comm),
            k.trigger_comm
                .as_ref()
                .map(|t| format!(" after an allocation by {}", crate::human::quote(t)))
                .unwrap_or_default(),
            redo_text(incident),
            query_text(incident),
        );
        let mut f = finding(&META, Severity::Critical, title)
            .summary(summary)
            .recommend(recommendation(facts, incident))
            .evidence(incident_evidence(incident))
            .confidence(incident.confidence)
            .incident(index)
            .impact(incident.outage_seconds.unwrap_or(0.0));
        if let Some(kb) = k.anon_rss_kb {
            f = f.figure("victim_anon_rss_bytes", (kb * 1024) as f64);
        }
        if let Some(s) = incident.outage_seconds {
            f = f.figure("outage_seconds", s);
        }
        out.push(f);
    }
    out
}

fn recommendation(facts: &Facts<'_>, incident: &crate::report::Incident) -> String {
    let memcg = incident
        .kernel_kill
        .as_ref()
        .is_some_and(|k| k.constraint.as_deref() == Some("memcg"));
    let mut text = if memcg {
        "The kill came from a memory cgroup limit, not from host RAM: size the limit for \
         shared memory + work_mem × hash_mem_multiplier for each connection and each parallel \
         worker the server can start + autovacuum, or lower work_mem for the query above."
            .to_owned()
    } else {
        "Bound memory per query (work_mem × nodes × parallel workers) and set \
         vm.overcommit_memory = 2 with a matching vm.overcommit_ratio so allocations fail with \
         an error instead of a kill (see overcommit-heuristic)."
            .to_owned()
    };
    if let (Some(w), Some((limit, what, _))) = (worst_case(facts), memory_limit(facts))
        && w.total > limit
    {
        text.push_str(&format!(
            " With these settings the worst case is {} against a {what} of {} (see \
             work-mem-exceeds-memory).",
            w.formula(),
            crate::human::human_bytes(limit)
        ));
    }
    text.push_str(
        " Keep the postmaster at oom_score_adj = -1000 (systemd OOMScoreAdjust=-1000) with \
         PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj and PG_OOM_ADJUST_VALUE=0 so the kernel \
         never picks it and its children stay killable.",
    );
    text
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    #[test]
    fn a_memcg_kill_tied_to_its_crash_is_one_critical_finding() {
        let f = Scratch::incident("pg15-memcg-oom-sort")
            .run("oom-kill-crash-restart")
            .one();
        assert_eq!(f.severity, crate::Severity::Critical);
        assert!(f.title.contains("cgroup limit of 300 MiB"), "{}", f.title);
        assert!(f.summary.contains("generate_series"), "{}", f.summary);
        assert_eq!(f.confidence, 0.95);
        assert!(f.figures["outage_seconds"] > 0.0);
    }

    #[test]
    fn a_kill_from_outside_is_not_an_oom_kill() {
        assert!(
            Scratch::incident("pg15-sigkill-backend")
                .run("oom-kill-crash-restart")
                .silent()
        );
    }
}
