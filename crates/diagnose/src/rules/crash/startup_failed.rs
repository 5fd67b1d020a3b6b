//! ## What it finds
//! PostgreSQL did not start: the postmaster refused to (a FATAL before it served: `could not
//! map anonymous shared memory` with `huge_pages = on` and no huge pages, `could not create
//! shared memory segment`, `lock file "postmaster.pid" already exists`, `could not create any
//! TCP/IP sockets`, the data directory's permissions or version, a setting), or its startup
//! process (the one that replays WAL before the server accepts connections) died without a
//! PANIC and the postmaster gave up: `startup process (PID N) exited with exit code 1` or `was
//! terminated by signal N`, then `aborting startup due to startup process failure` or
//! `shutting down due to startup process failure`. Unlike a backend's death, this is no
//! crash-restart: the server stays down until someone (a person, systemd, Kubernetes) starts
//! it again, and it fails the same way while the cause remains. It cites the error that
//! stopped it and says what to do about it, with this host's numbers where the bundle has
//! them (for huge pages: the pages shared memory needs against the pool the host has).
//!
//! ## Why it matters
//! Every session is refused until the server is started again; a supervisor that restarts it
//! in a loop hides the outage as a series of short ones (a pod in CrashLoopBackOff).
//!
//! ## What to do
//! Read the startup process's FATAL cited in the finding and remove its cause (space on the
//! data or WAL volume, /dev/shm, a missing WAL file or a damaged checkpoint, a setting the host
//! cannot give), then start the server. When the log holds no line before the death (the log
//! was cut, or the process was killed), look at the kernel log and the supervisor's log for the
//! same time.
//!
//! ## Thresholds
//! Every incident of kind `startup_failed`, and of kind `recovery_failed` that no PANIC
//! preceded (panic-restart covers those) and no missing checkpoint or WAL explains
//! (recovery-failed covers those).
//!
//! ## Evidence it needs
//! The PostgreSQL log.
//!
//! ## Knowledge
//! [pg-config] (`restart_after_crash` applies to children's crashes, not to the startup
//! process: the postmaster exits when the startup process fails).

use crate::facts::Facts;
use crate::human::{quote_cut, quote_line};
use crate::report::{Finding, Incident, Severity};
use crate::rules::crash::crash_restart::signal_name;
use crate::rules::support::{incident_evidence, outage_text};
use crate::rules::{Input, RuleMeta, critical, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "startup-failed",
    title: "PostgreSQL's startup process failed and the server shut down",
    severities: &[critical("")],
    needs: &[Input::PostgresLog],
    uses: &[],
};

/// The event kinds of a recovery with nothing to start from: recovery-failed speaks of them.
const RECOVERY_FAILURES: &[&str] = &[
    "no_valid_checkpoint",
    "invalid_checkpoint_record",
    "redo_location_missing",
    "wal_segment_removed",
];

/// True when the incident is a start that failed with no PANIC (panic-restart speaks of
/// those) and no missing checkpoint or WAL (recovery-failed does): the postmaster refused to
/// start, or the startup process died and the postmaster gave up.
pub(crate) fn is_failed_start(incident: &Incident) -> bool {
    matches!(incident.kind, "startup_failed" | "recovery_failed")
        && !incident.died_of_panic()
        && !incident
            .preceded_by
            .iter()
            .any(|l| l.kind.is_some_and(|k| RECOVERY_FAILURES.contains(&k)))
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (index, incident) in facts.incidents.iter().enumerate() {
        if !is_failed_start(incident) {
            continue;
        }
        // The postmaster's own FATAL, or the startup process's error lines before it died.
        let reason = incident
            .preceded_by
            .iter()
            .rev()
            .find(|l| matches!(l.severity, Some("FATAL" | "ERROR" | "PANIC")));
        let quoted =
            |l: &crate::report::LogLine| quote_line(l.severity.unwrap_or("LOG"), &l.message, 300);
        let (title, summary) = match &incident.postgres_crash {
            Some(c) => {
                let how = match (c.signal, c.exit_code) {
                    (Some(s), _) => format!("was terminated by signal {s} ({})", signal_name(s)),
                    (None, Some(code)) => format!("exited with exit code {code}"),
                    _ => "died".to_owned(),
                };
                let why = reason.map_or_else(
                    || {
                        " The log holds no error line of the startup process before its death \
                         (the log may begin after it, or the process was killed from outside)."
                            .to_owned()
                    },
                    |l| format!(" Before it died it logged {}.", quoted(l)),
                );
                (
                    format!(
                        "PostgreSQL could not start: startup process {} {how}{}",
                        c.pid,
                        outage_text(incident)
                    ),
                    format!(
                        "The startup process {} {how} and the postmaster shut the server down \
                         instead of restarting it: it stays down until it is started again, and \
                         fails the same way while the cause remains.{why}",
                        c.pid
                    ),
                )
            }
            None => {
                let Some(l) = reason else { continue };
                (
                    format!(
                        "PostgreSQL could not start: {}{}",
                        quote_cut(&l.message, 100),
                        outage_text(incident)
                    ),
                    format!(
                        "The postmaster{} logged {} and exited before it served a connection: \
                         the server is down until it is started again, and every start fails \
                         the same way while the cause remains.{}",
                        l.pid.map(|p| format!(" {p}")).unwrap_or_default(),
                        quoted(l),
                        if incident.still_down {
                            " No later start succeeded in the log."
                        } else {
                            ""
                        }
                    ),
                )
            }
        };
        let advice = match reason {
            Some(l) if l.kind == Some("shared_memory_map_failed") => huge_pages_advice(facts),
            Some(l) => advice_for(l.kind, &l.message).to_owned(),
            None => "Find why the startup process died: the log's lines before this excerpt, \
                     the kernel log (an OOM kill, a segfault, I/O errors) and the supervisor's \
                     log at that time; then start the server again."
                .to_owned(),
        };
        let mut evidence = incident_evidence(incident);
        if incident.postgres_crash.is_none()
            && let Some(l) = reason
        {
            evidence.insert(
                0,
                crate::report::Evidence {
                    path: l.path.clone(),
                    line: l.line,
                    what: "the postmaster's refusal to start".to_owned(),
                    key: None,
                    host_file: None,
                    host_line: None,
                },
            );
            evidence.dedup_by(|a, b| a.path == b.path && a.line == b.line);
        }
        out.push(
            finding(&META, Severity::Critical, title)
                .summary(summary)
                .recommend(advice)
                .evidence(evidence)
                .confidence(incident.confidence)
                .incident(index)
                .impact(incident.outage_seconds.unwrap_or(f64::MAX / 4.0)),
        );
    }
    out
}

/// What to do when the postmaster could not map its shared memory: with `huge_pages = on`,
/// the huge pages it needs against the pool the host has; else memory or overcommit.
fn huge_pages_advice(facts: &Facts<'_>) -> String {
    let pg = &facts.host.postgres;
    let on = pg
        .setting("huge_pages")
        .is_some_and(|s| crate::rules::support::huge_pages_mode(s) == "on");
    if !on {
        return "The postmaster could not get its shared memory: the host is short of memory \
                or refuses to commit it (vm.overcommit_memory = 2 with a low CommitLimit); \
                free memory, raise the commit limit, or lower shared_buffers, then start the \
                server."
            .to_owned();
    }
    let pool = facts.host.memory.as_ref().and_then(|m| {
        Some((
            m.hugepages_total.as_ref()?.value,
            m.hugepages_free.as_ref().map(|f| f.value),
        ))
    });
    let pool_text = match pool {
        Some((total, Some(free))) => format!("the host has {total} huge pages, {free} free"),
        Some((total, None)) => format!("the host has {total} huge pages"),
        None => "the bundle does not say how many huge pages the host has".to_owned(),
    };
    match crate::rules::support::hugepages_needed(facts) {
        Some(need) => format!(
            "huge_pages = on and the huge page pool cannot hold shared memory: it needs {} \
             pages of {} ({}), and {pool_text}. Reserve them (vm.nr_hugepages = {} in \
             /etc/sysctl.d/, applied with sysctl --system, or at boot for 1 GiB pages), or set \
             huge_pages = try, then start the server.",
            need.pages,
            crate::human::human_bytes(need.page_size),
            need.how,
            need.pages
        ),
        None => format!(
            "huge_pages = on and the huge page pool cannot hold shared memory ({pool_text}): \
             reserve vm.nr_hugepages = `postgres -C shared_memory_size_in_huge_pages` (on the \
             stopped server, PostgreSQL ≥ 15), or set huge_pages = try, then start the server."
        ),
    }
}

/// What to do about the last error before a failed start (its event kind and message).
fn advice_for(kind: Option<&str>, message: &str) -> &'static str {
    match kind {
        Some("lock_file_exists") => {
            "Another postmaster holds the lock file, or a stale postmaster.pid names a live \
             process: check that no other server runs on this data directory (ps), and remove \
             postmaster.pid only when none does; then start the server."
        }
        Some("could_not_bind" | "listen_socket_failed") => {
            "The server could not listen: another process holds the port or address \
             (ss -ltnp), or listen_addresses names an address the host does not have; free the \
             port or fix listen_addresses/port, then start the server."
        }
        Some("data_directory_permissions") => {
            "The data directory's permissions are too open: chmod 700 (or 750 with group \
             access), owned by the server's OS user; then start the server."
        }
        Some("incompatible_data_files") => {
            "The data directory belongs to another major version: start it with that version's \
             binaries, or upgrade it (pg_upgrade, or a dump and restore)."
        }
        Some("shared_memory_create_failed") => {
            "The kernel refused the System V shared memory segment: raise kernel.shmmax and \
             kernel.shmall, or lower shared_buffers/max_connections; then start the server."
        }
        _ if message.contains("shared memory segment") => {
            "The startup process could not get dynamic shared memory: /dev/shm is full or too \
             small (a container's default is 64 MB): enlarge it (Docker --shm-size, a \
             Kubernetes emptyDir with medium Memory) or free it, then start the server."
        }
        _ if message.contains("No space left on device") => {
            "A volume the startup process writes to is full: free space on it (never by \
             deleting files from pg_wal), then start the server."
        }
        _ if message.contains("Input/output error") => {
            "The storage returned I/O errors: check the kernel log and the disk or volume \
             behind the data directory before starting the server again; copy the data \
             directory first."
        }
        _ => {
            "Fix what the error names (a file, a setting, a permission), then start the server \
             again."
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    #[test]
    fn a_full_dev_shm_at_start_is_a_failed_start() {
        // Real capture: the startup process could not resize its dynamic shared memory
        // segment, exited with code 1, and the postmaster shut down.
        let f = Scratch::new()
            .copy("postgresql.log", "formats/pglog/pg15-events.log")
            .run("startup-failed")
            .one();
        assert!(f.title.contains("exited with exit code 1"), "{}", f.title);
        assert!(
            f.summary.contains("could not resize shared memory"),
            "{}",
            f.summary
        );
        assert!(f.recommendation.unwrap().contains("/dev/shm"));
        assert!(f.evidence.iter().any(|e| e.line == 4), "{:#?}", f.evidence);
    }

    #[test]
    fn a_startup_abort_whose_panic_was_cut_off_is_a_failed_start() {
        // Public log (fixtures/wild/noobaa-6611-*): the excerpt begins at the first death, so
        // its PANIC is not in it; the second attempt's PANIC is, and panic-restart takes it.
        let findings = Scratch::new()
            .copy(
                "postgresql.log",
                "wild/noobaa-6611-wal-io-error-startup-loop/postgresql.log",
            )
            .run("startup-failed")
            .findings();
        assert_eq!(findings.len(), 1, "{findings:#?}");
        assert!(
            findings[0].summary.contains("no error line"),
            "{}",
            findings[0].summary
        );
    }

    #[test]
    fn a_startup_panic_is_left_to_panic_restart() {
        assert!(
            Scratch::new()
                .copy(
                    "postgresql.log",
                    "formats/pglog/pg15-panic-no-checkpoint.log"
                )
                .run("startup-failed")
                .silent()
        );
    }

    #[test]
    fn a_backend_crash_is_no_failed_start() {
        assert!(
            Scratch::incident("pg15-sigkill-backend")
                .run("startup-failed")
                .silent()
        );
    }

    #[test]
    fn huge_pages_on_without_a_pool_is_a_refused_start_with_the_pages_to_reserve() {
        // Real capture: huge_pages = on, vm.nr_hugepages 0, the logging collector on; the
        // postmaster's FATAL, before its logging collector ran, is only in its standard error
        // (the `pg_ctl -l` file), and the bundle was collected with the server down.
        let scratch = Scratch::incident("pg15-hugepages-on-none");
        let report = scratch.report();
        assert_eq!(report.incidents.len(), 1, "{:#?}", report.incidents);
        let i = &report.incidents[0];
        assert_eq!((i.kind, i.cause), ("startup_failed", "startup_failed"));
        assert!(i.still_down);
        assert!(
            i.down_for_seconds.is_some_and(|s| s > 0.0 && s < 60.0),
            "{i:#?}"
        );
        let f = scratch.run("startup-failed").one();
        assert!(
            f.title.contains("could not map anonymous shared memory"),
            "{}",
            f.title
        );
        let advice = f.recommendation.unwrap();
        assert!(advice.contains("needs 72 pages of 2 MiB"), "{advice}");
        assert!(advice.contains("the host has 0 huge pages"), "{advice}");
        assert!(advice.contains("vm.nr_hugepages = 72"), "{advice}");
        assert_eq!(
            (f.evidence[0].path.as_str(), f.evidence[0].line),
            ("postgres/stderr.log", 3),
            "{:#?}",
            f.evidence
        );
    }

    #[test]
    fn a_failure_only_the_standard_error_shows_is_found_and_without_it_the_log_reads_clean() {
        // The log directory's newest file of that capture is the clean run before the failed
        // start: without the postmaster's standard error nothing is wrong in the log.
        let without = Scratch::incident("pg15-hugepages-on-none").remove("postgres/stderr.log");
        assert!(without.report().incidents.is_empty());
        assert!(without.run("startup-failed").silent());
        let with = Scratch::incident("pg15-hugepages-on-none");
        assert_eq!(with.report().incidents.len(), 1);
        assert!(!with.run("startup-failed").silent());
    }

    #[test]
    fn huge_pages_try_gives_the_memory_advice_instead() {
        // The same capture with huge_pages = try in the server's answer: not a huge-page
        // refusal any more (the kernel refused the memory itself).
        let f = Scratch::incident("pg15-hugepages-on-none")
            .set_line(
                "postgres/pg_settings-postgres-C.txt",
                "huge_pages",
                "huge_pages|try||postgres -C||f",
            )
            .run("startup-failed")
            .one();
        assert!(
            f.recommendation.unwrap().contains("short of memory"),
            "{}",
            f.title
        );
    }

    #[test]
    fn a_lock_file_that_cannot_be_written_is_a_failed_start_on_a_full_disk() {
        // Public log (fixtures/wild/nextcloud-aio-1638-*): after the failed recovery, the next
        // start cannot write postmaster.pid on the full volume.
        let report = Scratch::new()
            .copy(
                "postgresql.log",
                "wild/nextcloud-aio-1638-startup-panic-disk-full/nextcloud-aio-database.log",
            )
            .report();
        let kinds: Vec<_> = report.incidents.iter().map(|i| (i.kind, i.cause)).collect();
        assert_eq!(
            kinds,
            [
                ("recovery_failed", "disk_full"),
                ("startup_failed", "disk_full")
            ]
        );
        assert!(report.incidents.iter().all(|i| i.still_down));
    }

    #[test]
    fn a_second_postmaster_refused_by_the_running_ones_lock_is_no_outage() {
        // Edge case, hand-written: the served server's log, then a second postmaster's
        // refusal as PostgreSQL 15 prints it.
        let report = Scratch::new()
            .write(
                "postgresql.log",
                "2026-11-21 17:58:07.926 UTC [21807] LOG:  starting PostgreSQL 15.18 on x86_64-pc-linux-gnu\n\
                 2026-11-21 17:58:07.961 UTC [21807] LOG:  database system is ready to accept connections\n\
                 2026-11-21 18:00:00.001 UTC [22001] FATAL:  lock file \"postmaster.pid\" already exists\n\
                 2026-11-21 18:00:00.001 UTC [22001] HINT:  Is another postmaster (PID 21807) running in data directory \"/var/lib/postgresql/15/main\"?\n",
            )
            .report();
        assert!(report.incidents.is_empty(), "{:#?}", report.incidents);
    }

    #[test]
    fn a_postmaster_that_ran_and_then_exited_is_no_failed_start() {
        // Public log (fixtures/wild/pg-cron-340-*): Aurora's runtime exits after a worker's
        // segfault; the postmaster's FATAL ends a run, not a start.
        let report = Scratch::new()
            .copy(
                "log.csv",
                "wild/pg-cron-340-aurora-cloudwatch-csv/log-events-viewer-result.csv",
            )
            .report();
        let kinds: Vec<_> = report.incidents.iter().map(|i| i.kind).collect();
        assert_eq!(kinds, ["crash_restart"]);
    }
}
