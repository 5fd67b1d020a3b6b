//! ## What it finds
//! The kernel's OOM killer killed a process and no PostgreSQL crash is tied to it: another
//! program on the host, a PostgreSQL process whose death the log does not show (the log does
//! not cover that time), or a client such as psql or pg_dump.
//!
//! ## Why it matters
//! Memory ran out on this host or in this cgroup. If the victim was not PostgreSQL, PostgreSQL
//! was next in line; if it was a `postgres` process with no crash in the log, the log is
//! missing the outage.
//!
//! ## What to do
//! See what runs beside PostgreSQL and how much each holds (the task table of the OOM report),
//! bound PostgreSQL's memory (work-mem-exceeds-memory) and protect the postmaster
//! (postmaster-oom-unprotected).
//!
//! ## Thresholds
//! Every incident of kind `kernel_oom` with a victim: critical when the victim is a `postgres`
//! process, a warning otherwise.
//!
//! ## Evidence it needs
//! A kernel log.
//!
//! ## Knowledge
//! [kernel-oom] (how the OOM killer picks and reports its victim); [fr-memoire]'s task table,
//! where the postmaster at -900 is spared and its biggest child is killed.

use crate::facts::Facts;
use crate::report::{Finding, Severity};
use crate::rules::support::{incident_evidence, limit_text};
use crate::rules::{Input, RuleMeta, critical, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "kernel-oom-kill",
    title: "The kernel OOM killer killed a process with no PostgreSQL crash tied to it",
    severities: &[
        critical("when the victim is a postgres process"),
        warning("when the victim is another program"),
    ],
    needs: &[Input::KernelLog],
    uses: &[Input::PostgresLog],
};

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (index, incident) in facts.incidents.iter().enumerate() {
        if incident.kind != "kernel_oom" {
            continue;
        }
        let Some(k) = &incident.kernel_kill else {
            continue;
        };
        // A kill only systemd reported names its unit, not its victim.
        let unit = k
            .unit
            .as_deref()
            .filter(|_| k.comm.is_empty() && k.pid == 0);
        if k.comm.is_empty() && k.pid == 0 && unit.is_none() {
            continue;
        }
        let postgres = k.comm.starts_with("postgres")
            || unit.is_some_and(|u| u.contains("postgres") || u.contains("postmaster"));
        let why = if postgres && !facts.log.present() {
            " The bundle has no PostgreSQL log to show what followed."
        } else if postgres {
            " The PostgreSQL log shows no crash for it: the log does not cover this time, or \
             the process was a client program named postgres."
        } else {
            ""
        };
        out.push(
            finding(
                &META,
                if postgres {
                    Severity::Critical
                } else {
                    Severity::Warning
                },
                match unit {
                    Some(unit) => format!(
                        "The kernel OOM killer killed a process of {unit}{}",
                        limit_text(k)
                    ),
                    None => format!(
                        "The kernel OOM killer killed {} {}{}",
                        k.comm,
                        k.pid,
                        limit_text(k)
                    ),
                },
            )
            .summary(format!(
                "No PostgreSQL crash in the bundle is tied to this kill.{why}{}",
                incident
                    .notes
                    .iter()
                    .map(|n| format!(" {n}."))
                    .collect::<String>()
            ))
            .recommend(
                "Memory on this host or cgroup ran out: see what else runs beside PostgreSQL and \
                 how much each holds (the task table of the OOM report), bound PostgreSQL's \
                 memory and keep the postmaster at oom_score_adj -1000.",
            )
            .evidence(incident_evidence(incident))
            .incident(index),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::Scratch;

    #[test]
    fn a_kill_of_another_program_is_a_warning() {
        // A recorded memcg OOM kill of a task named `rs:main Q:Reg`, and of a second task.
        let found = Scratch::new()
            .copy("dmesg.txt", "formats/kernel/local-dmesg-raw.txt")
            .run("kernel-oom-kill")
            .findings();
        assert!(!found.is_empty());
        assert!(found.iter().any(|f| f.severity == Severity::Warning));
    }

    #[test]
    fn a_postgres_kill_without_its_log_is_critical() {
        let f = Scratch::new()
            .copy("dmesg.txt", "incidents/pg15-memcg-oom-sort/dmesg.txt")
            .run("kernel-oom-kill")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(f.summary.contains("no PostgreSQL log"), "{}", f.summary);
    }

    #[test]
    fn a_host_without_an_oom_kill_is_silent() {
        // Real capture of a healthy host: its kernel log has no OOM report.
        assert!(
            Scratch::incident("pg15-healthy-hugepages-protected-edited")
                .run("kernel-oom-kill")
                .silent()
        );
    }

    #[test]
    fn a_kill_only_systemd_reported_names_its_unit() {
        // Real excerpt (fixtures/wild/copr-systemd-oom-kill-stops-postgresql): systemd's four
        // lines, no kernel line.
        let f = Scratch::new()
            .copy(
                "journal.txt",
                "wild/copr-systemd-oom-kill-stops-postgresql/journal.txt",
            )
            .run("kernel-oom-kill")
            .one();
        assert!(
            f.title.contains("a process of postgresql.service"),
            "{}",
            f.title
        );
        assert!(f.summary.contains("result 'oom-kill'"), "{}", f.summary);
        assert!(f.summary.contains("6.5G"), "{}", f.summary);
    }
}
