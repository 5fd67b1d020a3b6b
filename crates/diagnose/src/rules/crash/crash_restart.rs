//! ## What it finds
//! A PostgreSQL child process died (a signal, or an abnormal exit code) with no kernel OOM
//! kill to explain it, and the postmaster crash-restarted the instance. It says what the death
//! points at: SIGKILL from outside (kill -9, a supervisor, a userspace OOM killer such as
//! systemd-oomd or the kubelet), SIGSEGV/SIGBUS/SIGILL/SIGFPE (a bug in PostgreSQL or an
//! extension, or bad hardware), an exit code (a process that failed: the lines before it say
//! why), with the query it was running. For a segfault it cites the kernel's own report of the
//! fault (`postgres[PID]: segfault at ADDRESS ip IP … error N in OBJECT`) when the kernel log
//! has it: a fault at or near address 0, or an instruction pointer of 0, is a software bug.
//!
//! ## Why it matters
//! Whatever the cause, every session is cut and the instance is down until recovery ends. A
//! SIGKILL with no kernel report means something on the host kills PostgreSQL processes; a
//! segfault repeats with the same query until its cause is fixed.
//!
//! ## What to do
//! For SIGKILL: find who sent it (supervisor logs, `journalctl`, systemd-oomd, container
//! runtime events); never end a backend with kill -9 (use `pg_terminate_backend()`). For
//! SIGSEGV/SIGBUS: collect a core dump (`ulimit -c unlimited`, systemd-coredump), note the
//! query and the extensions loaded, check hardware (ECC errors in the kernel log) and report
//! it. For an exit code: the lines preceding the death (cited) name the failure.
//!
//! ## Thresholds
//! Every incident of kind `crash_restart` whose cause is not a PANIC (panic-restart covers
//! those) and whose dead process is not the startup process (startup-failed covers those: the
//! server shut down instead of restarting).
//!
//! ## Evidence it needs
//! The PostgreSQL log; the kernel log too, to rule out the OOM killer and to read a segfault's
//! address.
//!
//! ## Knowledge
//! [pg-config] (`restart_after_crash`: after any child's abnormal exit the postmaster
//! reinitialises shared memory); [fr-memoire] on why one backend's death restarts the whole
//! instance.

use crate::facts::Facts;
use crate::report::{Finding, Incident, Severity};
use crate::rules::support::{incident_evidence, near_zero, outage_text, query_text, redo_text};
use crate::rules::{Input, RuleMeta, critical, finding};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "crash-restart",
    title: "A PostgreSQL process died and the instance crash-restarted",
    severities: &[critical("")],
    needs: &[Input::PostgresLog],
    uses: &[Input::KernelLog],
};

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (index, incident) in facts.incidents.iter().enumerate() {
        if incident.kind != "crash_restart"
            || incident.died_of_panic()
            || super::startup_failed::is_failed_start(incident)
        {
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
        let kernel_note = if facts.kernel_logs.is_empty() && c.signal == Some(9) {
            " The bundle has no kernel log, so an OOM kill cannot be ruled out."
        } else {
            ""
        };
        let preceding = if incident.preceded_by.is_empty() {
            String::new()
        } else {
            format!(
                " Before it the log recorded: {}.",
                incident
                    .preceded_by
                    .iter()
                    .map(|l| crate::human::quote_line(l.severity.unwrap_or("LOG"), &l.message, 140))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        };
        // The kernel's own report of a fault of that process: where it faulted.
        let fault = facts
            .kernel_faults
            .iter()
            .find(|k| incident.cause == "segfault" && k.fault.pid == c.pid);
        let mut fault_text = fault.map_or_else(String::new, |k| {
            format!(
                " The kernel logged the fault: {}.{}",
                crate::human::quote(&k.describe()),
                fault_reading(k)
            )
        });
        if let Some(f) = incident.kernel_fault.as_ref().filter(|_| fault.is_none()) {
            let line = format!(
                "{}[{}] {}{}{}",
                f.comm,
                f.pid,
                f.fault,
                f.ip.as_deref()
                    .map(|ip| format!(" ip {ip}"))
                    .unwrap_or_default(),
                f.object
                    .as_deref()
                    .map(|o| format!(" in {o}"))
                    .unwrap_or_default()
            );
            fault_text = format!(
                " The kernel logged the fault: {}.",
                crate::human::quote(&line)
            );
        }
        if let Some(f) = &incident.kernel_fault
            && f.object_deleted
        {
            fault_text.push_str(&format!(
                " The kernel printed {} as (deleted): the file was replaced on disk after the \
                 server loaded it, so the process ran the old build; an upgraded library takes \
                 effect only after a restart.",
                f.object
                    .as_deref()
                    .map_or_else(|| "the object".to_owned(), crate::human::quote)
            ));
        }
        let summary = format!(
            "{} {} {how}; PostgreSQL terminated every session and restarted{}.{}{fault_text}{}{kernel_note} {}",
            c.process,
            c.pid,
            redo_text(incident),
            query_text(incident),
            preceding,
            incident.notes.join(" ")
        );
        let mut evidence = incident_evidence(incident);
        if let Some(k) = fault {
            evidence.insert(
                0,
                crate::report::Evidence::of_line(k.path, k.line, "the kernel's segfault report"),
            );
        }
        let mut f = finding(
            &META,
            Severity::Critical,
            format!(
                "PostgreSQL {} {} {how}{}",
                c.process,
                c.pid,
                outage_text(incident)
            ),
        )
        .summary(summary.trim_end())
        .recommend(recommendation(incident))
        .evidence(evidence)
        .confidence(if facts.kernel_logs.is_empty() && c.signal == Some(9) {
            0.7
        } else {
            incident.confidence
        })
        .incident(index)
        .impact(incident.outage_seconds.unwrap_or(0.0));
        if let Some(s) = incident.outage_seconds {
            f = f.figure("outage_seconds", s);
        }
        out.push(f);
    }
    out
}

/// What the kernel's fault report says of the cause: a fault at or near address 0 is a null
/// pointer (or a jump through one), the mark of a software bug; faults elsewhere may be either.
fn fault_reading(k: &crate::facts::KernelFault<'_>) -> String {
    if near_zero(&k.fault.ip) {
        " The instruction pointer was 0: the process jumped through a null or corrupted \
         function pointer: most likely a software bug (PostgreSQL or a loaded extension) rather \
         than failing hardware."
            .to_owned()
    } else if near_zero(&k.fault.address) {
        " A fault at address 0 is a null pointer dereference: most likely a software bug \
         (PostgreSQL or a loaded extension) rather than failing hardware."
            .to_owned()
    } else {
        String::new()
    }
}

fn recommendation(incident: &Incident) -> String {
    match incident.cause {
        "signal_from_outside" => {
            "Find who sent the signal: supervisor and container runtime logs, \
            systemd-oomd or another userspace OOM killer, an operator; never end a single \
            backend with kill -9: use pg_terminate_backend()."
                .into()
        }
        "segfault" => "A backend crashed on a bad memory access: enable core dumps \
            (systemd-coredump, ulimit -c unlimited), get a backtrace, note the query and the \
            extensions loaded, look for hardware errors (MCE, EDAC) in the kernel log, and \
            report it with the query above."
            .into(),
        "abort_or_panic" => "The process aborted (SIGABRT): an assertion or an internal error; \
            enable core dumps and report it with the query and the lines before it."
            .into(),
        "abnormal_exit" => "The process exited with an error: the lines before its death \
            (cited) say what failed; fix that cause (see the other findings about them)."
            .into(),
        _ => "Look at the lines before the crash and at the host's logs for what ended the \
            process."
            .into(),
    }
}

/// The usual name of a Linux signal, `signal` for a number without one.
pub(crate) fn signal_name(signal: i32) -> &'static str {
    crate::human::signal_name(signal).unwrap_or("signal")
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    #[test]
    fn sigkill_from_outside_says_who_to_look_for() {
        let f = Scratch::incident("pg15-sigkill-backend")
            .run("crash-restart")
            .one();
        assert!(f.title.contains("signal 9 (SIGKILL)"), "{}", f.title);
        assert!(f.recommendation.unwrap().contains("pg_terminate_backend"));
    }

    #[test]
    fn a_real_segfault_cites_the_kernel_report() {
        // Real capture: a backend running a join jumped to address 0 and faulted.
        let f = Scratch::incident("pg17-segfault-backend")
            .run("crash-restart")
            .one();
        assert!(f.title.contains("signal 11 (SIGSEGV)"), "{}", f.title);
        assert!(
            f.summary.contains("The kernel logged the fault: `postgres[5327]: segfault at 0 ip 0000000000000000 error 14")
                && f.summary.contains("The instruction pointer was 0"),
            "{}",
            f.summary
        );
        assert_eq!(f.evidence[0].what, "the kernel's segfault report");
        assert!(
            f.evidence[0].path.starts_with("kernel/"),
            "{:?}",
            f.evidence[0]
        );
        // Without the kernel log, the finding stands on PostgreSQL's line alone.
        let scratch = Scratch::incident("pg17-segfault-backend");
        let scratch = scratch
            .paths("kernel/")
            .iter()
            .fold(scratch, |s, p| s.remove(p));
        let f = scratch.run("crash-restart").one();
        assert!(!f.summary.contains("kernel logged"), "{}", f.summary);
    }

    #[test]
    fn a_segfault_points_at_a_bug_with_the_query() {
        let f = Scratch::new()
            .copy("postgresql.log", "formats/pglog/pg15-backend-sigsegv.log")
            .run("crash-restart")
            .one();
        assert!(f.title.contains("SIGSEGV"), "{}", f.title);
        assert!(f.recommendation.unwrap().contains("core dump"));
    }

    #[test]
    fn a_failed_start_is_left_to_startup_failed() {
        // The startup process cannot size its shared memory in a 1 MB /dev/shm and exits 1:
        // the server shuts down instead of restarting (startup-failed says so).
        let f = Scratch::new()
            .copy("postgresql.log", "formats/pglog/pg15-events.log")
            .run("crash-restart")
            .findings();
        assert!(
            !f.is_empty(),
            "the log's backend SIGKILL is still a crash-restart"
        );
        assert!(
            f.iter().all(|f| !f.title.contains("startup process")),
            "{f:#?}"
        );
    }

    #[test]
    fn no_log_no_evaluation() {
        assert!(matches!(
            Scratch::new()
                .copy("dmesg.txt", "incidents/pg15-memcg-oom-sort/dmesg.txt")
                .run("crash-restart"),
            crate::rules::testing::Outcome::NotEvaluated(_)
        ));
    }

    #[test]
    fn a_crash_the_oom_killer_explains_is_left_to_oom_kill_crash_restart() {
        // Real capture: a backend OOM-killed in its memory cgroup, then the crash cycle.
        assert!(
            Scratch::incident("pg15-memcg-oom-work-mem")
                .run("crash-restart")
                .silent()
        );
    }

    #[test]
    fn a_general_protection_fault_of_the_same_pid_names_the_library() {
        // Real excerpts (fixtures/wild/pg-pathman-gp-fault-rhel6-aug): RHEL 6's kernel line
        // and PostgreSQL's crash line of PID 11377, their clocks 85 s apart.
        let f = Scratch::new()
            .copy("messages", "wild/pg-pathman-gp-fault-rhel6-aug/messages")
            .copy(
                "postgresql.log",
                "wild/pg-pathman-gp-fault-rhel6-aug/postgresql.log",
            )
            .run("crash-restart")
            .one();
        assert!(
            f.summary.contains(
                "`postmaster[11377] general protection ip 7f5fbdb14c66 in pg_pathman.so`"
            ),
            "{}",
            f.summary
        );
    }

    #[test]
    fn a_kernel_segfault_alone_makes_an_incident_and_says_the_library_was_replaced() {
        // Real excerpt (fixtures/wild/credcheck-segfault-pg-cron-messages): two backends
        // segfault in `credcheck.so (deleted)`; the bundle has no PostgreSQL log.
        let report = Scratch::new()
            .copy(
                "messages",
                "wild/credcheck-segfault-pg-cron-messages/messages",
            )
            .report();
        let crashes: Vec<_> = report
            .incidents
            .iter()
            .filter(|i| i.kind == "crash_restart")
            .collect();
        assert_eq!(crashes.len(), 2, "{:#?}", report.incidents);
        let fault = crashes[0].kernel_fault.as_ref().unwrap();
        assert_eq!(
            (fault.pid, fault.object.as_deref(), fault.object_deleted),
            (55141, Some("credcheck.so"), true)
        );
        assert_eq!(crashes[0].cause, "segfault");
        // A program beside PostgreSQL that segfaults makes none.
        let report = Scratch::new()
            .copy(
                "ansible-output.txt",
                "wild/repmgrd-segfault-libpq-ansible/ansible-output.txt",
            )
            .report();
        assert!(report.incidents.is_empty(), "{:#?}", report.incidents);
    }
}
