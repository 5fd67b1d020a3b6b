//! ## What it finds
//! The kernel's OOM killer killed a process and no PostgreSQL crash is tied to it: another
//! program on the host, a PostgreSQL process whose death the log does not show (the log does
//! not cover that time), a client such as psql or pg_dump, or a process of another cluster or
//! another job on the same host.
//!
//! ## Why it matters
//! Memory ran out on this host or in this cgroup. If the victim was not PostgreSQL, PostgreSQL
//! was next in line; if it was a `postgres` process with no crash in the log, the log is
//! missing the outage. A kill of another cluster's backend, or of another job in another
//! memory cgroup, is not this instance's outage: it says memory ran out next to it, which
//! matters to this instance only when the same limit (the host's memory, or a cgroup above the
//! postmaster's) bounds it too.
//!
//! ## What to do
//! See what runs beside PostgreSQL and how much each holds (the task table of the OOM report),
//! bound PostgreSQL's memory (work-mem-exceeds-memory) and protect the postmaster
//! (postmaster-oom-unprotected). For another cluster's or job's kill, look at that one (the
//! collector's `-D` of that cluster), and at the shared limit when there is one.
//!
//! ## Thresholds
//! Every incident of kind `kernel_oom` with a victim: critical when the victim is a `postgres`
//! process, a warning otherwise; when the bundle shows the victim was not this instance's
//! (in another memory cgroup, below another cluster's postmaster, or killed before the
//! postmaster started, with no death in its log), info, or a warning when the memory that ran
//! out bounds this instance too (the host's: a global OOM kill; or a memory cgroup limit at
//! or above the postmaster's cgroup).
//!
//! ## Evidence it needs
//! A kernel log; the processes, the postmaster's memory cgroup and the PostgreSQL log tell
//! whose the victim was.
//!
//! ## Knowledge
//! [kernel-oom] (how the OOM killer picks and reports its victim, `oom_memcg` and
//! `task_memcg`); [fr-memoire]'s task table, where the postmaster at -900 is spared and its
//! biggest child is killed.

use crate::facts::Facts;
use crate::report::{Finding, Severity};
use crate::rules::support::{
    incident_evidence, kill_reaches_instance, limit_bounds_instance, limit_text, stranger_text,
};
use crate::rules::{Input, RuleMeta, critical, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "kernel-oom-kill",
    title: "The kernel OOM killer killed a process with no PostgreSQL crash tied to it",
    severities: &[
        critical("when the victim is a postgres process the bundle does not show to be another's"),
        warning(
            "when the victim is another program, or another cluster's or job's and the memory \
             that ran out bounds this instance too",
        ),
        info(
            "when the victim was another cluster's or job's, at a limit that does not bound this instance",
        ),
    ],
    needs: &[Input::KernelLog],
    uses: &[Input::PostgresLog, Input::Processes, Input::Cgroup],
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
        let stranger = k.owner.as_ref().filter(|o| !o.is_instance());
        let reaches = kill_reaches_instance(facts, k);
        let severity = match stranger {
            Some(_) if reaches => Severity::Warning,
            Some(_) => Severity::Info,
            None if postgres => Severity::Critical,
            None => Severity::Warning,
        };
        let why = if let Some(o) = stranger {
            format!(" The victim was not this instance's process: {}.", o.why)
        } else if postgres && !facts.log.present() {
            " The bundle has no PostgreSQL log to show what followed.".to_owned()
        } else if postgres {
            " The PostgreSQL log shows no crash for it: the log does not cover this time, or \
             the process was a client program named postgres."
                .to_owned()
        } else {
            String::new()
        };
        let what_to_do = match stranger {
            Some(_) if k.constraint.as_deref() == Some("global") => {
                "The host itself ran out of memory, and this instance lives in the same memory: \
                 see what each program holds (the task table of the OOM report), bound \
                 PostgreSQL's memory and keep the postmaster at oom_score_adj -1000."
                    .to_owned()
            }
            Some(_) if limit_bounds_instance(facts, k) == Some(true) => format!(
                "The limit that was hit{} bounds this instance's memory cgroup too: size it for \
                 everything below it, or give each cluster or job its own limit.",
                k.memcg
                    .as_ref()
                    .and_then(|m| m.path.as_deref())
                    .map(|p| format!(" ({})", crate::human::quote(p)))
                    .unwrap_or_default()
            ),
            Some(_) => "Nothing of this instance was killed, and the limit that was hit does \
                        not bound it: look at that cluster or job itself (for another cluster, \
                        its own bundle: the collector with its -D)."
                .to_owned(),
            None => "Memory on this host or cgroup ran out: see what else runs beside PostgreSQL \
                     and how much each holds (the task table of the OOM report), bound \
                     PostgreSQL's memory and keep the postmaster at oom_score_adj -1000."
                .to_owned(),
        };
        let whose = stranger_text(facts, k);
        out.push(
            finding(
                &META,
                severity,
                match unit {
                    Some(unit) => format!(
                        "The kernel OOM killer killed a process of {unit}{}",
                        limit_text(k)
                    ),
                    None => format!(
                        "The kernel OOM killer killed {} {}{whose}{}",
                        crate::human::quote(&k.comm),
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
            .recommend(what_to_do)
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

    /// Two clusters on one host, collected for main: the other cluster's backend 25039 was
    /// OOM-killed at its own cgroup's limit.
    fn two_clusters() -> Scratch {
        Scratch::incident("pg15-two-clusters-other-oom")
    }

    const OTHER_CG: &str = "/pgmortem-record/pgmortem-rec-pg15-two-clusters-other";
    const MAIN_CG: &str = "/pgmortem-record/pgmortem-rec-pg15-two-clusters";

    /// The kill line of both kernel logs with `from` replaced by `to`.
    fn kill_line(scratch: Scratch, from: &str, to: &str) -> Scratch {
        scratch.edit_all("kernel/dmesg", |t| {
            assert!(t.contains(from), "{from}");
            t.replace(from, to)
        })
    }

    #[test]
    fn another_clusters_backend_killed_at_its_own_limit_is_info() {
        let f = two_clusters().run("kernel-oom-kill").one();
        assert_eq!(f.severity, Severity::Info);
        assert!(
            f.title.starts_with(
                "The kernel OOM killer killed `postgres` 25039 of another cluster (postmaster \
                 24868, `/var/lib/postgresql/15/other`)"
            ),
            "{}",
            f.title
        );
        assert!(
            f.summary.contains("not this instance's process"),
            "{}",
            f.summary
        );
        assert!(
            f.recommendation
                .unwrap()
                .contains("Nothing of this instance was killed")
        );
    }

    #[test]
    fn a_strangers_kill_at_a_limit_above_ours_is_a_warning() {
        // oom_memcg edited to the parent of both clusters' cgroups: its limit bounds main's.
        let f = kill_line(
            two_clusters(),
            &format!("oom_memcg={OTHER_CG},"),
            "oom_memcg=/pgmortem-record,",
        )
        .run("kernel-oom-kill")
        .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.recommendation
                .unwrap()
                .contains("The limit that was hit (`/pgmortem-record`) bounds this instance"),
        );
    }

    #[test]
    fn a_strangers_kill_when_the_host_ran_out_is_a_warning() {
        // The constraint edited to a host-wide OOM.
        let f = kill_line(two_clusters(), "CONSTRAINT_MEMCG", "CONSTRAINT_NONE")
            .run("kernel-oom-kill")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.recommendation
                .unwrap()
                .contains("The host itself ran out of memory")
        );
    }

    #[test]
    fn a_kill_in_the_postmasters_cgroup_is_ours_and_critical() {
        // task_memcg edited to main's cgroup: ours, with no crash in main's log.
        let f = kill_line(
            two_clusters(),
            &format!("task_memcg={OTHER_CG},"),
            &format!("task_memcg={MAIN_CG},"),
        )
        .run("kernel-oom-kill")
        .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(!f.title.contains("another"), "{}", f.title);
        assert!(f.summary.contains("shows no crash for it"), "{}", f.summary);
    }

    #[test]
    fn another_job_in_another_cgroup_is_info() {
        // The other cluster gone from the bundle (its titles and /proc files): the victim ran
        // in a cgroup that is not main's, whose it is unknown.
        let mut s = two_clusters().edit("processes/postgres-titles.txt", |t| {
            t.lines()
                .filter(|l| !l.contains("15/other"))
                .map(|l| format!("{l}\n"))
                .collect()
        });
        // The other cluster's postmaster and the 5 processes below it.
        for pid in [24868, 25073, 25074, 25136, 25137, 25138] {
            for f in s.paths(&format!("processes/{pid}/")) {
                s = s.remove(&f);
            }
        }
        let f = s.run("kernel-oom-kill").one();
        assert_eq!(f.severity, Severity::Info);
        assert!(
            f.title
                .contains("killed `postgres` 25039 of another job (another memory cgroup)"),
            "{}",
            f.title
        );
    }

    #[test]
    fn the_same_kill_collected_for_its_own_cluster_is_tied_to_its_crash() {
        assert!(
            Scratch::incident("pg15-two-clusters-own-oom")
                .run("kernel-oom-kill")
                .silent()
        );
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
