//! Whose process an OOM kill's victim was. A bundle is about one instance (its postmaster and
//! the processes below it), but a kernel log holds every kill on the host: another cluster's
//! backends, other jobs in other memory cgroups, processes killed before this postmaster
//! started. A kill is the instance's when PostgreSQL's log shows the death, when the victim's
//! pid is the postmaster's or below it, or when it ran in the postmaster's memory cgroup (or
//! one below it); it is a stranger's when it ran in another memory cgroup, below another
//! cluster's postmaster, or before the postmaster started with no death in its log. Anything
//! else is not said.

use jiff::Timestamp;
use pgmortem_parse::pglog::PgEvent;

use crate::clock;
use crate::report::{CgroupRelation, KillOwner, ProcessFacts};
use crate::sources::PgSource;

/// What the bundle says of the instance, for telling its kills from others'.
pub(crate) struct Instance<'a> {
    /// Its processes, its memory cgroup, the other clusters' postmasters.
    pub processes: &'a ProcessFacts,
    /// When the postmaster started (its `starting PostgreSQL` line, else the manifest's
    /// `postmaster_started`), when the bundle shows it.
    pub started: Option<Timestamp>,
}

impl<'a> Instance<'a> {
    /// The instance of `processes`, started when `postgres`'s logs say its postmaster started,
    /// else when the collector's manifest says it did (`manifest_started`, for the manifest's
    /// postmaster).
    pub(crate) fn new(
        processes: &'a ProcessFacts,
        postgres: &[PgSource],
        manifest_started: Option<(u32, Timestamp)>,
    ) -> Self {
        let started = processes.postmaster.and_then(|pm| {
            started(postgres, pm).or_else(|| {
                manifest_started
                    .filter(|(pid, _)| *pid == pm)
                    .map(|(_, at)| at)
            })
        });
        Instance { processes, started }
    }

    /// Whose the victim `pid` (in memory cgroup `task_memcg`, killed `at`) was, from what the
    /// bundle shows of the processes and cgroups; `None` when it does not tell.
    pub(crate) fn owner(
        &self,
        pid: u32,
        task_memcg: Option<&str>,
        at: Option<Timestamp>,
    ) -> Option<KillOwner> {
        let p = self.processes;
        let owner = |whose, why: String, postmaster| {
            Some(KillOwner {
                whose,
                why,
                postmaster,
            })
        };
        if p.postmaster == Some(pid) {
            return owner("instance", format!("pid {pid} is the postmaster"), None);
        }
        if p.holds(pid) {
            return owner(
                "instance",
                format!(
                    "pid {pid} is below the postmaster{} in the bundle's processes",
                    p.postmaster
                        .map(|pm| format!(" (pid {pm})"))
                        .unwrap_or_default()
                ),
                None,
            );
        }
        let ours = p.memory_cgroup.as_ref().map(|c| c.value.as_str());
        if let (Some(task), Some(relation)) =
            (task_memcg, task_memcg.and_then(|t| p.cgroup_relation(t)))
        {
            if matches!(relation, CgroupRelation::Same | CgroupRelation::Descendant) {
                return owner(
                    "instance",
                    format!("it ran in the postmaster's memory cgroup {task}"),
                    None,
                );
            }
            let elsewhere = format!(
                "it ran in memory cgroup {task}, not in the postmaster's ({})",
                ours.unwrap_or("?")
            );
            let cluster = p.other_cluster_of(pid).or_else(|| {
                p.other_postmasters.iter().find(|o| {
                    o.memory_cgroup.as_deref().is_some_and(|c| {
                        matches!(
                            crate::report::cgroup_relation(c, task),
                            CgroupRelation::Same | CgroupRelation::Descendant
                        ) && !c.trim_matches('/').is_empty()
                    })
                })
            });
            return match cluster {
                Some(o) => owner(
                    "other_cluster",
                    format!("{elsewhere}: the cgroup of {}", o.describe()),
                    Some(o.pid),
                ),
                None => owner("other_cgroup", elsewhere, None),
            };
        }
        if let Some(o) = p.other_cluster_of(pid) {
            return owner(
                "other_cluster",
                if o.pid == pid {
                    format!("pid {pid} is {}", o.describe())
                } else {
                    format!("pid {pid} is below {}", o.describe())
                },
                Some(o.pid),
            );
        }
        if let (Some(at), Some(started), Some(pm)) = (at, self.started, p.postmaster)
            && at < started
        {
            return owner(
                "before_start",
                format!(
                    "it was killed at {}, before the postmaster (pid {pm}) started at {}",
                    at, started
                ),
                None,
            );
        }
        None
    }
}

/// What a kill tied to a death in PostgreSQL's log is: the instance's.
pub(crate) fn logged_death(postmaster: bool) -> KillOwner {
    KillOwner {
        whose: "instance",
        why: if postmaster {
            "the postmaster logged the server's start and readiness under its pid".to_owned()
        } else {
            "PostgreSQL's log shows its death".to_owned()
        },
        postmaster: None,
    }
}

/// When postmaster `pid` started: its last `starting PostgreSQL` line in the logs.
fn started(postgres: &[PgSource], pid: u32) -> Option<Timestamp> {
    postgres
        .iter()
        .flat_map(|s| &s.digest.records)
        .filter(|r| r.pid == Some(pid) && matches!(r.event, Some(PgEvent::Starting { .. })))
        .filter_map(|r| r.time.as_ref().and_then(clock::postgres))
        .max()
}
