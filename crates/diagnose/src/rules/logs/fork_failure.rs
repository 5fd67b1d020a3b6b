//! ## What it finds
//! The postmaster could not start a process: `could not fork new process for connection`,
//! `could not fork autovacuum worker process`, `could not fork worker process` (a parallel or
//! background worker; 17+: `could not fork "autovacuum worker" process`, `could not fork
//! background worker process`), in any language the parser reads. The finding counts them by
//! kind of process and by error.
//!
//! ## Why it matters
//! A connection that cannot be forked is refused; an autovacuum worker that cannot be forked
//! leaves its tables unvacuumed (bloat, then transaction id wraparound); a parallel query
//! loses its workers (`parallel worker failed to initialize`). The error says which limit was
//! hit:
//!
//! - `Resource temporarily unavailable` (EAGAIN): a process-count limit: RLIMIT_NPROC of the
//!   server's user (`ulimit -u`, systemd `LimitNPROC=`; it counts every process and thread of
//!   that user on the host), the pids cgroup of the service or container (`pids.max`, systemd
//!   `TasksMax=`, `docker --pids-limit`), or the kernel's `kernel.threads-max` /
//!   `kernel.pid_max`;
//! - `Cannot allocate memory` (ENOMEM): the kernel could not give the child its memory: strict
//!   overcommit at CommitLimit, a memory cgroup at its limit, or the host out of memory.
//!
//! ## What to do
//! For EAGAIN, give the server's user room for every process PostgreSQL may run (the finding
//! adds `max_connections + autovacuum_max_workers + 1 + max_worker_processes +
//! max_wal_senders` and the auxiliary processes for this server) plus what else that user runs:
//! `LimitNPROC=` in the unit (`systemctl edit postgresql@…`), `nproc` in
//! /etc/security/limits.d for a server started from a login shell, `TasksMax=` or the
//! container's pids limit; check `kernel.threads-max` and `kernel.pid_max`. The postmaster's
//! limit as collected may be above that budget (the limit was lower when the forks failed, or the
//! user's other processes, a pids cgroup or the kernel's limits were reached): the finding says
//! so, and never suggests a value below the limit in force. For ENOMEM, see what
//! holds memory (Committed_AS against CommitLimit under `vm.overcommit_memory = 2`, the memory
//! cgroup's usage).
//!
//! ## Thresholds
//! One failed fork is a warning ([`MIN_FAILURES`]): a client, a vacuum or a query lost its
//! process.
//!
//! ## Evidence it needs
//! The PostgreSQL log. Reads when present: the settings (the process budget), the postmaster's
//! /proc/PID/limits (`Max processes`), the processes collected, the vm sysctls and
//! /proc/meminfo (for ENOMEM).
//!
//! ## Knowledge
//! [man-rlimits] (fork's EAGAIN and ENOMEM; RLIMIT_NPROC counts the user's processes);
//! [kernel-pids] (the pids controller); [pg-kernel-resources] ("Resource Limits": the server's
//! user needs room for its processes, `ulimit -u`); [pg-config] (max_connections,
//! autovacuum_max_workers, max_worker_processes, max_wal_senders).

use pgmortem_parse::pglog::PgEvent;

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::support::{counted, settings_evidence};
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "fork-failure",
    title: "The postmaster could not fork new processes",
    severities: &[warning("")],
    needs: &[Input::PostgresLog],
    uses: &[
        Input::PgSettings,
        Input::Processes,
        Input::VmSysctls,
        Input::Meminfo,
    ],
};

/// Failed forks from which the rule reports.
pub(crate) const MIN_FAILURES: u64 = 1;
/// Processes a server runs besides its backends and workers: the postmaster, checkpointer,
/// background writer, WAL writer, archiver, logging collector, and the startup process or WAL
/// receiver (the statistics collector on 14 and older takes the place of one of them).
pub(crate) const AUXILIARY_PROCESSES: u64 = 7;
/// Failure records cited as evidence.
const EVIDENCE_RECORDS: usize = 5;

/// EAGAIN as glibc prints it (the parser turns translations into this text).
const EAGAIN: &str = "Resource temporarily unavailable";
/// ENOMEM.
const ENOMEM: &str = "Cannot allocate memory";

/// What could not be started, from the message's process text.
fn kind_of(process: &str) -> &'static str {
    let p = process.trim_matches('"');
    if p.starts_with("new process for connection") {
        "connections"
    } else if p.contains("autovacuum worker") {
        "autovacuum workers"
    } else if p.contains("autovacuum launcher") {
        "the autovacuum launcher"
    } else if p == "worker process" || p.starts_with("background worker") {
        "parallel or background workers"
    } else {
        "auxiliary processes"
    }
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(kind) = facts.log.kind("fork_failed") else {
        return Vec::new();
    };
    if kind.count < MIN_FAILURES {
        return Vec::new();
    }
    let failures: Vec<(String, String)> = facts
        .log
        .records(|e| matches!(e, PgEvent::ForkFailed { .. }))
        .into_iter()
        .filter_map(|(_, r)| match &r.event {
            Some(PgEvent::ForkFailed { process, error }) => Some((process.clone(), error.clone())),
            _ => None,
        })
        .collect();
    let tally = |key: &dyn Fn(&(String, String)) -> String| {
        let mut counts: Vec<(String, u64)> = Vec::new();
        for f in &failures {
            let k = key(f);
            match counts.iter_mut().find(|(name, _)| *name == k) {
                Some((_, n)) => *n += 1,
                None => counts.push((k, 1)),
            }
        }
        counts
    };
    let by_kind = tally(&|(p, _)| kind_of(p).to_owned());
    let by_error = tally(&|(_, e)| e.clone());
    let eagain = failures.iter().filter(|(_, e)| e.contains(EAGAIN)).count() as u64;
    let enomem = failures.iter().filter(|(_, e)| e.contains(ENOMEM)).count() as u64;
    let list = |counts: &[(String, u64)]| {
        counts
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };

    let budget = process_budget(facts);
    let running = facts.host.processes.processes.len() as u64;
    let nproc = facts
        .host
        .processes
        .limits
        .as_ref()
        .and_then(|l| l.max_processes.clone());

    let mut evidence = facts.log.evidence(
        |e| matches!(e, PgEvent::ForkFailed { .. }),
        EVIDENCE_RECORDS,
        |r| format!("LOG: {}", r.message),
    );
    let mut summary = format!(
        "The postmaster logged `could not fork` {} (by what it was starting: {}; by error: {}).",
        kind.describe(),
        list(&by_kind),
        list(&by_error)
    );
    let mut advice = Vec::new();

    if eagain > 0 {
        if let Some(k) = &nproc {
            evidence.push(k.evidence(format!(
                "Max processes {} (soft) / {} (hard)",
                limit_value(k.value.soft),
                limit_value(k.value.hard)
            )));
        }
        let soft = nproc.as_ref().map(|k| k.value.soft);
        let example = |b: u64| (b * 2).next_power_of_two().max(1024);
        let (limit_text, eagain_advice) = match (soft, &budget) {
            (Some(Some(soft)), Some((b, formula))) if soft < *b => (
                format!(
                    " The postmaster's RLIMIT_NPROC is {soft}: below the {b} processes \
                     PostgreSQL alone may run here."
                ),
                format!(
                    "Raise the process limit the server runs under: PostgreSQL may run {b} \
                     processes here ({formula}); allow that plus what else the server's user \
                     runs (for example LimitNPROC={}). In a systemd unit: LimitNPROC= \
                     (systemctl edit on the PostgreSQL service); from a login shell: nproc in \
                     /etc/security/limits.d.",
                    example(*b)
                ),
            ),
            (Some(Some(soft)), _) => (
                format!(
                    " The postmaster's RLIMIT_NPROC is {soft} as collected{}: either it was \
                     lower when the forks failed (a start script's ulimit -u, since changed), or \
                     the user's other processes filled it (it counts every process and thread \
                     of the user on the host), or a pids cgroup or the kernel's thread limits \
                     were reached.",
                    budget
                        .as_ref()
                        .map(|(b, _)| format!(", above the {b} processes PostgreSQL may run"))
                        .unwrap_or_default()
                ),
                "Count what the server's user runs against that limit (ps -L -u postgres | wc \
                 -l), check the pids limit of the service or container (pids.max, systemd \
                 TasksMax=, docker --pids-limit), kernel.threads-max and kernel.pid_max; set the \
                 process limit in the unit (LimitNPROC=), not in a start script."
                    .to_owned(),
            ),
            (Some(None), _) => (
                " The postmaster's RLIMIT_NPROC is unlimited: a pids cgroup or the kernel's \
                 thread limits were reached."
                    .to_owned(),
                "Check the pids limit of the service or container (pids.max, systemd TasksMax=, \
                 docker --pids-limit), kernel.threads-max and kernel.pid_max."
                    .to_owned(),
            ),
            (None, _) => (
                String::new(),
                format!(
                    "Raise the process limit the server runs under{}. In a systemd unit: \
                     LimitNPROC= and TasksMax= (systemctl edit on the PostgreSQL service); from \
                     a login shell: nproc in /etc/security/limits.d; in a container: its pids \
                     limit (pids.max, docker --pids-limit). Check kernel.threads-max and \
                     kernel.pid_max too.",
                    budget
                        .as_ref()
                        .map(|(b, formula)| format!(
                            ": PostgreSQL may run {b} processes here ({formula}); allow that \
                             plus what else the server's user runs (for example \
                             LimitNPROC={})",
                            example(*b)
                        ))
                        .unwrap_or_default()
                ),
            ),
        };
        summary.push_str(&format!(
            " {} failed with EAGAIN (`{EAGAIN}`): a limit on the number of processes.{limit_text}",
            counted(eagain, "fork")
        ));
        advice.push(eagain_advice);
    }
    if enomem > 0 {
        let mut memory = String::new();
        if let (Some(mode), Some(mem)) = (&facts.host.vm.overcommit_memory, &facts.host.memory) {
            evidence.push(mode.evidence(format!("vm.overcommit_memory = {}", mode.value)));
            if mode.value == 2
                && let (Some(l), Some(c)) = (&mem.commit_limit, &mem.committed_as)
            {
                evidence.push(l.evidence(format!("CommitLimit {}", human_bytes(l.value))));
                evidence.push(c.evidence(format!("Committed_AS {}", human_bytes(c.value))));
                memory = format!(
                    " Under vm.overcommit_memory = 2, Committed_AS was {} of CommitLimit {} \
                     when collected.",
                    human_bytes(c.value),
                    human_bytes(l.value)
                );
            }
        }
        summary.push_str(&format!(
            " {} failed with ENOMEM (`{ENOMEM}`): the kernel could not give the child its \
             memory.{memory}",
            counted(enomem, "fork")
        ));
        advice.push(
            "Find what holds the memory: Committed_AS against CommitLimit under strict \
             overcommit, the memory cgroup's usage against its limit, the largest processes; \
             lower work_mem × connections or give the host memory."
                .to_owned(),
        );
    }
    if eagain + enomem < failures.len() as u64 {
        advice.push(
            "For other errors, the errno text names the cause (fork(2) lists them).".to_owned(),
        );
    }
    if running > 0 {
        summary.push_str(&format!(
            " When the bundle was collected, {running} PostgreSQL processes were running."
        ));
    }
    evidence.extend(settings_evidence(
        facts,
        &[
            "max_connections",
            "autovacuum_max_workers",
            "max_worker_processes",
            "max_wal_senders",
        ],
    ));

    let mut f = finding(
        &META,
        Severity::Warning,
        format!(
            "The postmaster could not fork {} ({})",
            counted(kind.count, "time"),
            by_kind
                .iter()
                .map(|(k, _)| k.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    )
    .summary(summary)
    .recommend(advice.join(" "))
    .evidence(evidence)
    .figure("fork_failures", kind.count as f64)
    .figure("eagain", eagain as f64)
    .figure("enomem", enomem as f64);
    for (k, n) in &by_kind {
        let name = match k.as_str() {
            "connections" => "connection_forks_failed",
            "autovacuum workers" => "autovacuum_forks_failed",
            "parallel or background workers" => "worker_forks_failed",
            _ => "other_forks_failed",
        };
        let before = f.figures.get(name).copied().unwrap_or(0.0);
        f = f.figure(name, before + *n as f64);
    }
    if let Some(w) = kind.window_seconds() {
        f = f.figure("window_seconds", w);
    }
    if let Some((b, _)) = budget {
        f = f.figure("postgres_process_budget", b as f64);
    }
    if let Some(soft) = nproc.as_ref().and_then(|k| k.value.soft) {
        f = f.figure("rlimit_nproc", soft as f64);
    }
    vec![f]
}

/// `unlimited` or the number.
fn limit_value(v: Option<u64>) -> String {
    v.map_or_else(|| "unlimited".to_owned(), |n| n.to_string())
}

/// How many processes this server may run at once, and the sum written out.
fn process_budget(facts: &Facts<'_>) -> Option<(u64, String)> {
    let pg = &facts.host.postgres;
    let n = |name: &str| pg.number(name).map(|v| v.max(0.0) as u64);
    let connections = n("max_connections")?;
    let av = n("autovacuum_max_workers").unwrap_or(3);
    let workers = n("max_worker_processes").unwrap_or(8);
    let senders = n("max_wal_senders").unwrap_or(10);
    let total = connections + av + 1 + workers + senders + AUXILIARY_PROCESSES;
    Some((
        total,
        format!(
            "max_connections {connections} + autovacuum_max_workers {av} + its launcher + \
             max_worker_processes {workers} + max_wal_senders {senders} + \
             {AUXILIARY_PROCESSES} auxiliary"
        ),
    ))
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::{Outcome, Scratch};

    const LOG: &str = "postgres/server.log";

    fn of(log: &str) -> crate::report::Finding {
        Scratch::new()
            .copy("postgresql.log", &format!("formats/pglog/{log}"))
            .run("fork-failure")
            .one()
    }

    #[test]
    fn the_recorded_failures_by_kind_and_error_in_english_french_and_18() {
        for log in [
            "pg15-fork-failure.log",
            "pg15-fr-fork-failure.log",
            "pg18-fork-failure.log",
        ] {
            let f = of(log);
            // Two connections, three autovacuum workers, two parallel workers: all EAGAIN
            // (the recorder lowered RLIMIT_NPROC with prlimit).
            assert_eq!(f.figures["fork_failures"], 7.0, "{log}");
            assert_eq!(f.figures["eagain"], 7.0, "{log}");
            assert_eq!(f.figures["connection_forks_failed"], 2.0, "{log}");
            assert_eq!(f.figures["autovacuum_forks_failed"], 3.0, "{log}");
            assert_eq!(f.figures["worker_forks_failed"], 2.0, "{log}");
            assert!(
                f.summary.contains("a limit on the number of processes"),
                "{log}"
            );
            let advice = f.recommendation.unwrap();
            assert!(advice.contains("LimitNPROC="), "{log}: {advice}");
            assert!(!advice.contains("Committed_AS"), "{log}: {advice}");
            assert_eq!(f.evidence.len(), 5, "{log}");
            assert_eq!(f.evidence[0].line, 5, "{log}");
        }
    }

    #[test]
    fn the_postmaster_limit_below_the_process_budget_is_named() {
        // The collected bundle with the fork-failure log as its server log and the
        // postmaster's real limits file edited to a soft RLIMIT_NPROC of 9, as the recorder's
        // prlimit left it.
        let f = Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .copy(LOG, "formats/pglog/pg15-fork-failure.log")
            .set_line(
                "processes/16859/limits",
                "Max processes",
                "Max processes             9                    96365                processes ",
            )
            .run("fork-failure")
            .one();
        // 20 + 3 + 1 + 8 + 10 + 7.
        assert_eq!(f.figures["postgres_process_budget"], 49.0);
        assert_eq!(f.figures["rlimit_nproc"], 9.0);
        assert!(
            f.summary
                .contains("RLIMIT_NPROC is 9: below the 49 processes"),
            "{}",
            f.summary
        );
        assert!(f.recommendation.unwrap().contains("LimitNPROC=1024"));
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path == "processes/16859/limits" && e.line == 8)
        );
        // The real, unedited file: a limit far above the budget, counted per user.
        let real = Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .copy(LOG, "formats/pglog/pg15-fork-failure.log")
            .run("fork-failure")
            .one();
        assert!(
            real.summary
                .contains("RLIMIT_NPROC is 96365 as collected, above the 49 processes"),
            "{}",
            real.summary
        );
        // Never a suggestion below the limit in force.
        assert!(!real.recommendation.unwrap().contains("LimitNPROC=1024"));
    }

    #[test]
    fn the_recorded_capture_at_rlimit_nproc() {
        // 24 connections, 14 autovacuum workers and 14 parallel workers refused with EAGAIN;
        // the limit was put back to 96365 before the collector ran.
        let f = Scratch::incident("pg15-fork-failure")
            .run("fork-failure")
            .one();
        assert_eq!(f.figures["fork_failures"], 52.0);
        assert_eq!(f.figures["eagain"], 52.0);
        assert_eq!(f.figures["connection_forks_failed"], 24.0);
        assert_eq!(f.figures["autovacuum_forks_failed"], 14.0);
        assert_eq!(f.figures["worker_forks_failed"], 14.0);
        assert_eq!(f.figures["rlimit_nproc"], 96_365.0);
        assert!(
            f.summary.contains("lower when the forks failed"),
            "{}",
            f.summary
        );
        assert!(f.recommendation.unwrap().contains("pids.max"));
    }

    #[test]
    fn enomem_points_at_memory() {
        // One recorded failure edited to ENOMEM.
        let f = Scratch::new()
            .copy("postgresql.log", "formats/pglog/pg15-fork-failure.log")
            .set_line(
                "postgresql.log",
                "2026-11-21 19:08:12.555 UTC [11208] LOG:",
                "2026-11-21 19:08:12.555 UTC [11208] LOG:  could not fork new process for \
                 connection: Cannot allocate memory",
            )
            .run("fork-failure")
            .one();
        assert_eq!((f.figures["eagain"], f.figures["enomem"]), (6.0, 1.0));
        assert!(
            f.summary.contains("1 fork failed with ENOMEM"),
            "{}",
            f.summary
        );
        assert!(f.recommendation.unwrap().contains("CommitLimit"));
    }

    #[test]
    fn one_failure_fires_and_none_is_silent() {
        // The English log cut to its first failure: every later failure edited into a
        // routine line.
        let mut scratch =
            Scratch::new().copy("postgresql.log", "formats/pglog/pg15-fork-failure.log");
        for (stamp, pid) in [
            ("19:08:12.555", 11208),
            ("19:08:12.858", 11208),
            ("19:08:12.872", 11208),
            ("19:08:13.865", 11208),
        ] {
            scratch = scratch.set_line(
                "postgresql.log",
                &format!("2026-11-21 {stamp} UTC [{pid}] LOG:  could not fork"),
                &format!("2026-11-21 {stamp} UTC [{pid}] LOG:  checkpoint starting: time"),
            );
        }
        for _ in 0..2 {
            scratch = scratch.set_line(
                "postgresql.log",
                "2026-11-21 19:08:14.567 UTC [11208] LOG:  could not fork",
                "2026-11-21 19:08:14.567 UTC [11208] LOG:  checkpoint starting: time",
            );
        }
        let f = scratch.run("fork-failure").one();
        assert_eq!(f.figures["fork_failures"], 1.0);
        assert!(
            f.title
                .contains("could not fork 1 time (autovacuum workers)"),
            "{}",
            f.title
        );
        assert!(
            Scratch::new()
                .copy("postgresql.log", "formats/pglog/pg15-backend-sigkill.log")
                .run("fork-failure")
                .silent()
        );
        assert!(matches!(
            Scratch::new()
                .copy("memory/meminfo.txt", "formats/system/meminfo/meminfo.txt")
                .run("fork-failure"),
            Outcome::NotEvaluated(_)
        ));
    }
}
