//! ## What it finds
//! PostgreSQL's startup process (the one that replays WAL before the server accepts
//! connections, at a start or after a crash) died without a PANIC, and the postmaster gave up:
//! `startup process (PID N) exited with exit code 1` or `was terminated by signal N`, then
//! `aborting startup due to startup process failure` or `shutting down due to startup process
//! failure`. Unlike a backend's death, this is no crash-restart: the server shut down and stays
//! down until someone (a person, systemd, Kubernetes) starts it again, and it fails the same way
//! while the cause remains. It cites the startup process's own error lines before its death
//! (a FATAL naming the file, the shared memory segment or the setting that failed).
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
//! Every incident of kind `crash_restart` whose dead process is the startup process and that
//! no PANIC preceded (panic-restart covers those).
//!
//! ## Evidence it needs
//! The PostgreSQL log.
//!
//! ## Knowledge
//! [pg-config] (`restart_after_crash` applies to children's crashes, not to the startup
//! process: the postmaster exits when the startup process fails).

use crate::facts::Facts;
use crate::human::cut;
use crate::report::{Finding, Incident, Severity};
use crate::rules::crash::crash_restart::signal_name;
use crate::rules::support::{incident_evidence, outage_text};
use crate::rules::{Input, RuleMeta, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "startup-failed",
    title: "PostgreSQL's startup process failed and the server shut down",
    severity: Severity::Critical,
    needs: &[Input::PostgresLog],
    uses: &[],
};

/// True when the incident is a death of the startup process that no PANIC preceded: a failed
/// start, which crash-restart leaves to this rule.
pub(crate) fn is_failed_start(incident: &Incident) -> bool {
    incident.kind == "crash_restart"
        && incident
            .postgres_crash
            .as_ref()
            .is_some_and(|c| c.process.contains("startup"))
        && !incident
            .preceded_by
            .iter()
            .any(|l| l.severity == Some("PANIC"))
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (index, incident) in facts.incidents.iter().enumerate() {
        if !is_failed_start(incident) {
            continue;
        }
        let Some(c) = &incident.postgres_crash else {
            continue;
        };
        let how = match (c.signal, c.exit_code) {
            (Some(s), _) => format!("was terminated by signal {s} ({})", signal_name(s)),
            (None, Some(code)) => format!("exited with exit code {code}"),
            _ => "died".to_owned(),
        };
        // The startup process's own error lines before it died say why.
        let reason = incident
            .preceded_by
            .iter()
            .rev()
            .find(|l| matches!(l.severity, Some("FATAL" | "ERROR")));
        let why = reason.map_or_else(
            || {
                " The log holds no error line of the startup process before its death (the \
                 log may begin after it, or the process was killed from outside)."
                    .to_owned()
            },
            |l| {
                format!(
                    " Before it died it logged `{}: {}`.",
                    l.severity.unwrap_or("LOG"),
                    cut(&l.message, 300)
                )
            },
        );
        let advice = reason.map_or(
            "Find why the startup process died: the log's lines before this excerpt, the \
             kernel log (an OOM kill, a segfault, I/O errors) and the supervisor's log at that \
             time; then start the server again.",
            |l| advice_for(&l.message),
        );
        out.push(
            finding(
                &META,
                Severity::Critical,
                format!(
                    "PostgreSQL could not start: startup process {} {how}{}",
                    c.pid,
                    outage_text(incident)
                ),
            )
            .summary(format!(
                "The startup process {} {how} and the postmaster shut the server down \
                 instead of restarting it: it stays down until it is started again, and fails \
                 the same way while the cause remains.{why}",
                c.pid
            ))
            .recommend(advice)
            .evidence(incident_evidence(incident))
            .confidence(incident.confidence)
            .incident(index)
            .impact(incident.outage_seconds.unwrap_or(f64::MAX / 4.0)),
        );
    }
    out
}

/// What to do about the startup process's last error.
fn advice_for(message: &str) -> &'static str {
    if message.contains("shared memory segment") {
        "The startup process could not get dynamic shared memory: /dev/shm is full or too \
         small (a container's default is 64 MB): enlarge it (Docker --shm-size, a Kubernetes \
         emptyDir with medium Memory) or free it, then start the server."
    } else if message.contains("No space left on device") {
        "A volume the startup process writes to is full: free space on it (never by deleting \
         files from pg_wal), then start the server."
    } else if message.contains("Input/output error") {
        "The storage returned I/O errors: check the kernel log and the disk or volume behind \
         the data directory before starting the server again; copy the data directory first."
    } else {
        "Fix what the startup process's error names (a file, a setting, a permission), then \
         start the server again."
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
}
