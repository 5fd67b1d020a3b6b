//! ## What it finds
//! A user-space OOM killer killed something: systemd-oomd (`Killed /system.slice/x.service due
//! to memory pressure for /system.slice being 85.03% > 80.00% for > 2s with reclaim activity`,
//! `Marked … for killing …`, or systemd's own `x.service: systemd-oomd killed N process(es) in
//! this unit.`) or earlyoom (`sending SIGKILL to process N uid N "postgres": oom_score N, VmRSS
//! N MiB`). It says who killed what (the cgroup or the process), the pressure or the memory
//! limits it printed, and, when the victim is PostgreSQL, the crash it caused (the backend's
//! `terminated by signal 9`, or the restart with crash recovery after the whole service was
//! killed). A kill of another program is reported as such, tied to no crash.
//!
//! ## Why it matters
//! These killers act before the kernel's OOM killer would, by their own thresholds, and the
//! kernel log shows nothing: PostgreSQL's log says only `terminated by signal 9` (a backend),
//! or nothing at all when systemd-oomd kills the whole service with SIGKILL (the postmaster
//! included: the server is down until something starts it again). A kill of another program
//! means the host's or the slice's memory is short: PostgreSQL is a candidate next time unless
//! it is excluded.
//!
//! ## What to do
//! systemd-oomd: PostgreSQL's unit in a drop-in (`systemctl edit <unit>`) with
//! `ManagedOOMPreference=avoid` (or `omit`; honoured for root-owned cgroups), and the slice's
//! `ManagedOOMMemoryPressure=`/`ManagedOOMMemoryPressureLimit=` (a distribution default such as
//! systemd-oomd-defaults sets `kill` at 80 % on system.slice) raised or set back to `auto` for
//! a database host; `oomctl` shows what is monitored. earlyoom: keep it off PostgreSQL with
//! `--avoid '(^|/)(postgres|postmaster)$'` and point it at the real culprits with `--prefer`;
//! it kills the highest `oom_score`, so a lower `oom_score_adj` (the unit's `OOMScoreAdjust=`)
//! moves its choice away. In both cases bound the memory that caused the pressure
//! (work_mem, the other services' `MemoryHigh=`/`MemoryMax=`).
//!
//! ## Thresholds
//! Every kill. Critical when the victim is PostgreSQL: earlyoom's process named `postgres` or
//! `postmaster` (or a PID of a PostgreSQL process or crash), systemd-oomd's cgroup or unit
//! naming postgres or Patroni, holding the postmaster's cgroup or unit, or signalling a PID
//! PostgreSQL's log shows dying. Tied to the incident of a crash of a PID it signalled within
//! [`TIE_SECONDS`] (2 minutes), else to a crash by a signal from outside within that time, else
//! to a start with crash recovery within [`RESTART_SECONDS`] (10 minutes) after it. Another
//! program's kill: a warning when the killer's scope covers PostgreSQL (earlyoom: the whole
//! host; systemd-oomd: a monitored cgroup above PostgreSQL's, or system.slice when PostgreSQL's
//! cgroup is not in the bundle), else info.
//!
//! ## Evidence it needs
//! A kernel log read from the journal or syslog (the killers log there, not to the kernel);
//! the PostgreSQL log to tie a kill to its crash; the processes' cgroup and unit when present.
//!
//! ## Knowledge
//! [userspace-oom] (systemd-oomd, systemd.resource-control's ManagedOOM settings, earlyoom's
//! limits, --avoid and --prefer); [kernel-oom] (oom_score and oom_score_adj, which earlyoom
//! reads).

use pgmortem_parse::kernel::{KernelEvent, UnitEventKind, UserspaceKiller, UserspaceOomKill};

use crate::clock::seconds_between;
use crate::facts::{Facts, KernelEventAt, SAME_EVENT_SECONDS};
use crate::human::kernel::userspace_oom_why;
use crate::report::{Finding, Incident, Severity};
use crate::rules::support::{death_text, incident_evidence};
use crate::rules::{Input, RuleMeta, critical, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "userspace-oom-kill",
    title: "A user-space OOM killer (systemd-oomd, earlyoom) killed a process or a service",
    severities: &[
        critical("for a kill of PostgreSQL"),
        warning("for another program's kill when the killer's scope covers PostgreSQL"),
        info("for another program's kill outside PostgreSQL's scope"),
    ],
    needs: &[Input::KernelLog],
    uses: &[Input::PostgresLog, Input::Processes],
};

/// Seconds between a kill and PostgreSQL's line of the death for the two to be one event.
pub(crate) const TIE_SECONDS: f64 = 120.0;
/// Seconds after a kill of the whole service within which a start with crash recovery is its
/// restart.
pub(crate) const RESTART_SECONDS: f64 = 600.0;

/// One kill, from the killer's own line or from systemd's unit line alone.
struct Kill<'a> {
    record: KernelEventAt<'a>,
    /// The killer's line, when there is one.
    kill: Option<&'a UserspaceOomKill>,
    /// systemd's unit line alone (`x.service: systemd-oomd killed N process(es)`): the unit and
    /// the count.
    unit: Option<(&'a str, Option<&'a str>)>,
}

impl Kill<'_> {
    fn killer(&self) -> &'static str {
        match self.kill.map(|k| k.killer) {
            Some(UserspaceKiller::Earlyoom) => "earlyoom",
            _ => "systemd-oomd",
        }
    }

    /// The cgroup or unit it killed.
    fn cgroup(&self) -> Option<&str> {
        self.kill
            .and_then(|k| k.cgroup.as_deref())
            .or(self.unit.map(|u| u.0))
    }

    /// The pids it signalled.
    fn pids(&self) -> Vec<u32> {
        self.kill
            .map(|k| k.pid.into_iter().chain(k.pids.iter().copied()).collect())
            .unwrap_or_default()
    }

    /// What it killed, for a person.
    fn victim(&self) -> String {
        match (self.kill, self.unit) {
            (Some(k), _) if k.killer == UserspaceKiller::Earlyoom => format!(
                "{} {}{}",
                k.comm
                    .as_deref()
                    .map_or_else(|| "process".to_owned(), crate::human::quote),
                k.pid.map(|p| p.to_string()).unwrap_or_default(),
                k.rss_mib
                    .map(|m| format!(" (VmRSS {m} MiB)"))
                    .unwrap_or_default()
            ),
            (Some(k), _) => k
                .cgroup
                .as_deref()
                .map_or_else(|| "a cgroup".to_owned(), crate::human::quote),
            (None, Some((unit, n))) => format!(
                "{} process{} of {unit}",
                n.unwrap_or("the"),
                if n == Some("1") { "" } else { "es" }
            ),
            (None, None) => "a process".to_owned(),
        }
    }

    /// Why, as the killer printed it.
    fn why(&self) -> String {
        self.kill.map(userspace_oom_why).unwrap_or_default()
    }
}

fn postgres_name(text: &str) -> bool {
    let text = text.to_ascii_lowercase();
    text.contains("postgres") || text.contains("postmaster") || text.contains("patroni")
}

/// The last component of a cgroup path (`/system.slice/x.service` → `x.service`).
fn leaf(cgroup: &str) -> &str {
    cgroup.rsplit('/').next().unwrap_or(cgroup)
}

/// The PIDs PostgreSQL's processes and crashes have in the bundle.
fn postgres_pids(facts: &Facts<'_>) -> Vec<u32> {
    facts
        .host
        .processes
        .processes
        .iter()
        .map(|p| p.pid)
        .chain(
            facts
                .incidents
                .iter()
                .filter_map(|i| i.postgres_crash.as_ref().map(|c| c.pid)),
        )
        .collect()
}

/// Whether the kill's victim is PostgreSQL.
fn is_postgres(facts: &Facts<'_>, kill: &Kill<'_>) -> bool {
    let pids = postgres_pids(facts);
    if kill.pids().iter().any(|p| pids.contains(p)) {
        return true;
    }
    if let Some(k) = kill.kill
        && k.killer == UserspaceKiller::Earlyoom
    {
        return k.comm.as_deref().is_some_and(postgres_name);
    }
    let Some(cgroup) = kill.cgroup() else {
        return false;
    };
    let processes = &facts.host.processes;
    postgres_name(leaf(cgroup))
        || processes
            .unit
            .as_ref()
            .and_then(|u| u.id.as_ref())
            .is_some_and(|id| leaf(cgroup) == id.value)
        || processes
            .memory_cgroup
            .as_ref()
            .is_some_and(|m| under(&m.value, cgroup))
}

/// Whether cgroup `path` is `ancestor` or below it.
fn under(path: &str, ancestor: &str) -> bool {
    let ancestor = ancestor.trim_end_matches('/');
    path == ancestor
        || ancestor.is_empty()
        || path
            .strip_prefix(ancestor)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Whether the killer's scope covers PostgreSQL (another program's kill warns then).
fn covers_postgres(facts: &Facts<'_>, kill: &Kill<'_>) -> bool {
    if kill.killer() == "earlyoom" {
        return true;
    }
    let monitored = kill.kill.and_then(|k| k.monitored.as_deref());
    match (&facts.host.processes.memory_cgroup, monitored) {
        (Some(m), Some(scope)) => under(&m.value, scope),
        (None, Some(scope)) => scope == "/" || under("/system.slice", scope),
        (_, None) => false,
    }
}

/// The incident the kill of PostgreSQL caused.
fn tied(facts: &Facts<'_>, kill: &Kill<'_>) -> Option<usize> {
    let at = kill.record.at;
    let near = |i: &Incident, seconds: f64| match (at, i.started_at) {
        (Some(a), Some(b)) => seconds_between(a, b).abs() <= seconds,
        _ => false,
    };
    let outside = |i: &Incident| i.kernel_kill.is_none() && i.container_kill.is_none();
    // The incident correlation already named this kill as its cause.
    let by_cause = facts.incidents.iter().position(|i| {
        i.cause == "userspace_oom_killer"
            && i.cause_line
                .as_ref()
                .is_some_and(|l| l.path == kill.record.path && l.line == kill.record.record.line)
    });
    if by_cause.is_some() {
        return by_cause;
    }
    let pids = kill.pids();
    // The death of a PID it signalled.
    let by_pid = facts.incidents.iter().position(|i| {
        outside(i)
            && i.postgres_crash
                .as_ref()
                .is_some_and(|c| pids.contains(&c.pid))
            && (at.is_none() || i.started_at.is_none() || near(i, TIE_SECONDS))
    });
    if by_pid.is_some() {
        return by_pid;
    }
    // A death by a signal from outside at that time.
    let by_time = facts.incidents.iter().position(|i| {
        outside(i)
            && near(i, TIE_SECONDS)
            && (matches!(i.cause, "signal_from_outside" | "userspace_oom_killer")
                || i.kind == "postmaster_killed")
    });
    if by_time.is_some() {
        return by_time;
    }
    // The service killed whole: the next start with crash recovery.
    let at = at?;
    facts
        .incidents
        .iter()
        .enumerate()
        .filter(|(_, i)| outside(i) && i.kind == "unclean_restart")
        .filter_map(|(n, i)| {
            let d = seconds_between(at, i.started_at?);
            (-SAME_EVENT_SECONDS..=RESTART_SECONDS)
                .contains(&d)
                .then_some((n, d))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(n, _)| n)
}

/// Every kill, once: the killers' lines, and systemd's unit lines no killer's line explains.
fn kills<'a>(facts: &Facts<'a>) -> Vec<Kill<'a>> {
    let mut out: Vec<Kill<'a>> = facts
        .kernel
        .records(|e| matches!(e, KernelEvent::UserspaceOomKill(_)))
        .into_iter()
        .filter_map(|record| match &record.record.event {
            KernelEvent::UserspaceOomKill(k) => Some(Kill {
                record,
                kill: Some(k),
                unit: None,
            }),
            _ => None,
        })
        .collect();
    let units = facts
        .kernel
        .records(|e| matches!(e, KernelEvent::UnitEvent(u) if u.what == UnitEventKind::OomdKill));
    for record in units {
        let KernelEvent::UnitEvent(u) = &record.record.event else {
            continue;
        };
        let explained = out.iter().any(|k| {
            k.kill.and_then(|x| x.cgroup.as_deref()).map(leaf) == Some(u.unit.as_str())
                && match (k.record.at, record.at) {
                    (Some(a), Some(b)) => seconds_between(a, b).abs() <= TIE_SECONDS,
                    _ => k.record.path == record.path,
                }
        });
        if !explained {
            out.push(Kill {
                record,
                kill: None,
                unit: Some((&u.unit, u.detail.as_deref())),
            });
        }
    }
    out
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    kills(facts)
        .iter()
        .map(|kill| kill_finding(facts, kill))
        .collect()
}

fn kill_finding(facts: &Facts<'_>, kill: &Kill<'_>) -> Finding {
    let postgres = is_postgres(facts, kill);
    let incident = postgres.then(|| tied(facts, kill)).flatten();
    let killer = kill.killer();
    let why = kill.why();
    let when = kill
        .record
        .at
        .map(|t| format!(" at {t}"))
        .unwrap_or_default();
    let mut summary = format!(
        "{killer} killed {}{when}{}.",
        kill.victim(),
        if why.is_empty() {
            String::new()
        } else {
            format!(": {why}")
        }
    );
    if let Some(k) = kill.kill {
        if !k.pids.is_empty() {
            summary.push_str(&format!(
                " It signalled PID{} {}{}.",
                if k.pids.len() == 1 { "" } else { "s" },
                k.pids
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                k.signal
                    .as_deref()
                    .map(|s| format!(" with {s}"))
                    .unwrap_or_default()
            ));
        } else if let Some(s) = &k.signal {
            summary.push_str(&format!(" It sent {s}."));
        }
        if let Some(score) = k.oom_score {
            summary.push_str(&format!(
                " earlyoom picks the process with the highest oom_score: {score}."
            ));
        }
    }
    summary.push_str(" The kernel's OOM killer did not act: a user-space killer acts by its own thresholds, before the kernel would, and the kernel log shows nothing of it.");
    if killer == "systemd-oomd" {
        summary.push_str(
            " systemd-oomd kills a whole cgroup with SIGKILL: for PostgreSQL's service that is \
             the postmaster and every session.",
        );
    }
    if postgres {
        match incident.and_then(|n| facts.incidents.get(n)) {
            Some(i) => summary.push_str(&format!(
                " This is the death of {}: {}",
                death_text(i),
                if i.kind == "unclean_restart" {
                    "the server came back only when it was started again, with crash recovery."
                } else {
                    "the instance crash-restarted."
                }
            )),
            None => summary.push_str(
                " No PostgreSQL crash or restart in the bundle's logs is tied to it: the logs do \
                 not cover that time, or the killed server logged nothing (SIGKILL).",
            ),
        }
    } else {
        summary.push_str(&format!(
            " It was not PostgreSQL{}.",
            if covers_postgres(facts, kill) {
                "; but PostgreSQL is under the same killer's watch, and a candidate next time"
            } else {
                ""
            }
        ));
    }
    let severity = if postgres {
        Severity::Critical
    } else if covers_postgres(facts, kill) {
        Severity::Warning
    } else {
        Severity::Info
    };
    let title = format!(
        "{killer} killed {}{}{}",
        if postgres { "PostgreSQL's " } else { "" },
        kill.victim(),
        match incident.and_then(|n| facts.incidents.get(n)) {
            Some(i) => format!(": the death of {}", death_text(i)),
            None if postgres => String::new(),
            None => ", not PostgreSQL".to_owned(),
        }
    );
    let mut evidence = vec![kill.record.evidence(format!("{killer}'s kill"))];
    if let Some(i) = incident.and_then(|n| facts.incidents.get(n)) {
        evidence.extend(incident_evidence(i));
    }
    let mut f = finding(&META, severity, title)
        .summary(summary)
        .recommend(recommendation(facts, kill, postgres))
        .evidence(evidence)
        .confidence(match (postgres, incident) {
            (true, Some(_)) if kill.pids().is_empty() => 0.7,
            _ => 1.0,
        })
        .impact(if postgres { 1.0 } else { 0.0 });
    if let Some(i) = incident {
        f = f.incident(i);
    }
    f
}

fn recommendation(facts: &Facts<'_>, kill: &Kill<'_>, postgres: bool) -> String {
    let processes = &facts.host.processes;
    let unit = processes
        .unit
        .as_ref()
        .and_then(|u| u.id.as_ref())
        .map(|id| id.value.clone())
        .or_else(|| {
            kill.cgroup()
                .map(leaf)
                .filter(|l| postgres && (l.ends_with(".service") || l.ends_with(".slice")))
                .map(str::to_owned)
        });
    let unit_text = unit.as_deref().unwrap_or("<PostgreSQL's unit>");
    let adjust = processes
        .unit
        .as_ref()
        .and_then(|u| u.oom_score_adjust.as_ref())
        .map(|a| format!(" (OOMScoreAdjust={} now, {})", a.value, a.path))
        .or_else(|| {
            processes
                .postmaster()
                .and_then(|p| p.oom_score_adj.as_ref())
                .map(|a| format!(" (the postmaster's oom_score_adj is {} now)", a.value))
        })
        .unwrap_or_default();
    let mut text = match kill.kill.map(|k| k.killer) {
        Some(UserspaceKiller::Earlyoom) => format!(
            "earlyoom kills the process with the highest oom_score once available memory and free \
             swap are both below its limits{}: keep it off PostgreSQL with --avoid \
             '(^|/)(postgres|postmaster)$' and point it at the real culprits with --prefer; a \
             lower oom_score_adj for PostgreSQL (OOMScoreAdjust= of {unit_text}){adjust} moves its \
             choice elsewhere.",
            kill.kill
                .and_then(|k| k.measured.as_deref())
                .map(|m| format!(" (here {m})"))
                .unwrap_or_default()
        ),
        _ => {
            let limit = kill.kill.map_or_else(String::new, |k| {
                match (&k.monitored, &k.limit, &k.duration) {
                    (Some(m), Some(l), d) => format!(
                        " (here {m} over {l}{})",
                        d.as_deref()
                            .map(|d| format!(" for {d}"))
                            .unwrap_or_default()
                    ),
                    _ => String::new(),
                }
            });
            format!(
                "systemd-oomd kills the cgroups under a unit or slice set to \
                 ManagedOOMMemoryPressure=kill when its memory pressure stays over \
                 ManagedOOMMemoryPressureLimit={limit}. For {unit_text}, add \
                 ManagedOOMPreference=avoid (or omit) in a drop-in (systemctl edit {unit_text}): \
                 honoured for root-owned cgroups; on a database host raise the slice's limit or \
                 set its ManagedOOMMemoryPressure= back to auto (a distribution default such as \
                 systemd-oomd-defaults sets kill at 80% on system.slice); oomctl shows what is \
                 monitored."
            )
        }
    };
    text.push_str(
        " Then bound the memory that caused the pressure: PostgreSQL's work_mem and \
         connections (work-mem-exceeds-memory), the other services' MemoryHigh=/MemoryMax=.",
    );
    if postgres && kill.killer() == "systemd-oomd" {
        text.push_str(
            " A service killed whole stays down unless its unit restarts it (Restart=on-failure).",
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::Scratch;

    #[test]
    fn systemd_oomd_killing_another_service_of_system_slice_warns() {
        // Real: systemd/systemd#42321, oomd killed journald for /system.slice's pressure.
        let f = Scratch::new()
            .copy(
                "journal.txt",
                "wild/systemd-oomd-kills-journald-system-slice/journal.txt",
            )
            .run("userspace-oom-kill")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.incident, None);
        assert!(
            f.title.starts_with(
                "systemd-oomd killed `/system.slice/systemd-journald.service`, not PostgreSQL"
            ),
            "{}",
            f.title
        );
        assert!(
            f.summary
                .contains("memory pressure of `/system.slice` at 85.03%, over its limit of 80.00% for more than 2s"),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("PIDs") || f.summary.contains("PID 407"),
            "{}",
            f.summary
        );
        // systemd's unit line for the same kill is not a second kill.
        assert!(
            f.recommendation
                .unwrap()
                .contains("ManagedOOMPreference=avoid")
        );
    }

    #[test]
    fn a_kill_in_a_user_session_is_only_info() {
        // Real: systemd/systemd#23606, a terminal scope of user@1001.service.
        let f = Scratch::new()
            .copy(
                "journal.txt",
                "formats/kernel/public-oomd-killed-journal.txt",
            )
            .run("userspace-oom-kill")
            .one();
        assert_eq!(f.severity, Severity::Info);
    }

    #[test]
    fn earlyoom_killing_another_program_warns() {
        // Real: rfjakob/earlyoom#344, Firefox's "Web Content" at mem 10.00%, swap 10.00%.
        let f = Scratch::new()
            .copy("journal.txt", "formats/kernel/public-earlyoom-journal.txt")
            .run("userspace-oom-kill")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.title.contains("`Web Content` 1024668"), "{}", f.title);
        assert!(
            f.recommendation
                .unwrap()
                .contains("(here mem 10.00%, swap 10.00%)"),
        );
    }

    /// The real capture of a backend killed with SIGKILL (pg15-sigkill-backend, PID 29082 at
    /// 17:17:17 UTC) beside earlyoom's real kill line of earlyoom#344 made a kill of that
    /// backend at `when`.
    fn earlyoom_kills_the_backend(when: &str) -> Scratch {
        let incident = "incidents/pg15-sigkill-backend";
        [
            "postgresql.log",
            "dmesg.txt",
            "dmesg-T.txt",
            "uptime.txt",
            "date.txt",
            "btime.txt",
        ]
        .iter()
        .fold(Scratch::new(), |s, f| s.copy(f, &format!("{incident}/{f}")))
        .copy("journal.txt", "formats/kernel/public-earlyoom-journal.txt")
        .edit("journal.txt", |t| {
            t.replace("Aug 04 23:41:26", when)
                .replace("SIGTERM to process 1024668", "SIGKILL to process 29082")
                .replace("\"Web Content\"", "\"postgres\"")
        })
    }

    #[test]
    fn earlyoom_killing_a_backend_is_tied_to_its_crash() {
        let f = earlyoom_kills_the_backend("Nov 21 17:17:17")
            .run("userspace-oom-kill")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, Some(0));
        assert!(
            f.title.contains(
                "earlyoom killed PostgreSQL's `postgres` 29082 (VmRSS 79 MiB): the death of \
                 PostgreSQL server process 29082 (signal 9, SIGKILL)"
            ),
            "{}",
            f.title
        );
        // The same PID seven minutes later is another process's death: not tied.
        let f = earlyoom_kills_the_backend("Nov 21 17:24:30")
            .run("userspace-oom-kill")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, None);
    }

    #[test]
    fn systemd_oomd_killing_postgresqls_service_is_critical() {
        // The real journald kill, its cgroup made PostgreSQL's unit.
        let f = Scratch::new()
            .copy(
                "journal.txt",
                "wild/systemd-oomd-kills-journald-system-slice/journal.txt",
            )
            .edit("journal.txt", |t| {
                t.replace("systemd-journald.service", "postgresql@15-main.service")
            })
            .run("userspace-oom-kill")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(
            f.title.starts_with(
                "systemd-oomd killed PostgreSQL's `/system.slice/postgresql@15-main.service`"
            ),
            "{}",
            f.title
        );
        assert!(
            f.recommendation
                .unwrap()
                .contains("systemctl edit postgresql@15-main.service"),
        );
    }

    #[test]
    fn systemds_unit_line_alone_is_a_kill() {
        // The real journal with only systemd's line, of PostgreSQL's unit.
        let f = Scratch::new()
            .copy(
                "journal.txt",
                "wild/systemd-oomd-kills-journald-system-slice/journal.txt",
            )
            .edit("journal.txt", |t| {
                t.lines()
                    .filter(|l| l.contains("systemd[1]"))
                    .map(|l| l.replace("systemd-journald.service", "postgresql.service") + "\n")
                    .collect()
            })
            .run("userspace-oom-kill")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(
            f.title.contains("1 process of postgresql.service"),
            "{}",
            f.title
        );
    }

    #[test]
    fn the_service_killed_whole_is_tied_to_its_restart_with_crash_recovery() {
        // Real capture: the postmaster killed at 05:29:10 UTC and started again at 05:29:16
        // (pg15-oom-kill-postmaster), its kernel logs left out, beside the real oomd kill line
        // of systemd#23606 made a kill of the postmaster's cgroup at `when`.
        let oomd = |when: &str, cgroup: &str| {
            let scratch = Scratch::incident("pg15-oom-kill-postmaster");
            let scratch = scratch
                .paths("kernel/")
                .iter()
                .fold(scratch, |s, p| s.remove(p));
            scratch
                .copy("journal.txt", "formats/kernel/public-oomd-killed-journal.txt")
                .edit("journal.txt", |t| {
                    // The kill line alone: systemd's lines name the scope's unit.
                    t.lines().next().unwrap_or_default().replace("Dec 18 19:34:56", when).replace(
                        "/user.slice/user-1001.slice/user@1001.service/app.slice/app-org.gnome.Terminal.slice/vte-spawn-dbb4a75e-031f-480d-924b-5de5af7579d2.scope",
                        cgroup,
                    )
                    .replace("/user.slice/user-1001.slice/user@1001.service", "/pgmortem-record")
                        + "\n"
                })
                .run("userspace-oom-kill")
                .one()
        };
        // The kill at 05:29:06, 10 s before the start with crash recovery (05:29:16).
        let pg = "/pgmortem-record/pgmortem-rec-pg15-oom-kill-postmaster";
        let f = oomd("Nov 24 05:29:06", pg);
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, Some(0), "{f:#?}");
        assert!(
            f.title.ends_with("the death of PostgreSQL's postmaster"),
            "{}",
            f.title
        );
        assert!(
            f.summary.contains("started again, with crash recovery"),
            "{}",
            f.summary
        );
        // An hour before it: not its cause.
        let f = oomd("Nov 24 04:29:06", pg);
        assert!(f.incident.is_none(), "{f:#?}");
        // Another service under the same monitored cgroup: not PostgreSQL, but PostgreSQL's
        // cgroup is under that watch.
        let f = oomd("Nov 24 05:29:06", "/pgmortem-record/backup.service");
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.incident.is_none(), "{f:#?}");
        assert!(f.summary.contains("a candidate next time"), "{}", f.summary);
    }

    #[test]
    fn a_bundle_without_user_space_kills_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("userspace-oom-kill")
                .silent()
        );
        // systemd's lines of a kernel OOM kill are not systemd-oomd's.
        assert!(
            Scratch::new()
                .copy(
                    "syslog",
                    "wild/openprescribing-systemd-oom-kill-slices/syslog"
                )
                .run("userspace-oom-kill")
                .silent()
        );
    }
}
