//! Tying the kernel's reports of a process's fatal fault (a segfault, a general protection
//! fault or another trap; a crash reporter's line) to the incidents: by PID to the PostgreSQL
//! crash of the same process, so that the incident names the object that crashed; and, when
//! the bundle has no PostgreSQL log, as incidents of their own for `postgres` processes (a
//! backend's fatal fault makes the postmaster crash-restart the instance, as an OOM kill does).

use std::collections::HashSet;

use pgmortem_parse::kernel::KernelEvent;

use crate::clock::{Clock, seconds_between};
use crate::report::{Incident, ProcessFault};
use crate::sources::KernelSource;

/// Every fatal fault of every kernel source, one per PID (the first line that names it), in
/// log order.
pub(crate) fn process_faults(kernel: &[KernelSource], clock: &Clock) -> Vec<ProcessFault> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for source in kernel {
        for record in &source.log.records {
            let fault = match &record.event {
                KernelEvent::Segfault(s) => ProcessFault {
                    pid: s.pid,
                    comm: s.comm.clone(),
                    fault: format!("segfault at {}", s.address),
                    signal: Some(11),
                    address: Some(s.address.clone()),
                    ip: Some(s.ip.clone()),
                    object: s.object.as_deref().map(object_name),
                    object_deleted: s.object.as_deref().is_some_and(deleted),
                    reporter: "kernel".to_owned(),
                    at: None,
                    path: source.path.clone(),
                    line: record.line,
                },
                KernelEvent::Trap(t) => ProcessFault {
                    pid: t.pid,
                    comm: t.comm.clone(),
                    fault: t.trap.clone(),
                    signal: t.signal,
                    address: None,
                    ip: Some(t.ip.clone()),
                    object: t.object.as_deref().map(object_name),
                    object_deleted: t.object.as_deref().is_some_and(deleted),
                    reporter: "kernel".to_owned(),
                    at: None,
                    path: source.path.clone(),
                    line: record.line,
                },
                KernelEvent::CrashReport(c) => ProcessFault {
                    pid: c.pid,
                    comm: c.comm.clone(),
                    fault: c
                        .signal
                        .map(signal_name)
                        .unwrap_or_else(|| "crash".to_owned()),
                    signal: c.signal,
                    address: None,
                    ip: None,
                    object: None,
                    object_deleted: false,
                    reporter: c.reporter.clone(),
                    at: None,
                    path: source.path.clone(),
                    line: record.line,
                },
                _ => continue,
            };
            if seen.insert(fault.pid) {
                out.push(ProcessFault {
                    at: clock.kernel(&record.time).map(|t| t.0),
                    ..fault
                });
            }
        }
    }
    out
}

/// `SIGABRT` for 6, … (`signal N` for others).
fn signal_name(signal: i32) -> String {
    crate::human::signal_name(signal).map_or_else(|| format!("signal {signal}"), str::to_owned)
}

/// `credcheck.so (deleted)` → `credcheck.so`.
fn object_name(object: &str) -> String {
    object.trim_end_matches(" (deleted)").to_owned()
}

fn deleted(object: &str) -> bool {
    object.ends_with(" (deleted)")
}

/// Signals a fatal fault delivers: SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT.
fn fatal(signal: Option<i32>) -> bool {
    matches!(signal, Some(11 | 7 | 4 | 8 | 6))
}

/// Whether a command name is PostgreSQL's (the postmaster, a backend, a worker: the kernel
/// prints the comm, `postgres` or `postmaster`, the title being no part of it).
fn postgres_comm(comm: &str) -> bool {
    comm.starts_with("postgres") || comm == "postmaster"
}

/// Ties `faults` to `incidents` (a crash of the same PID whose signal is a fault's), and, when
/// `postgres_logs` is false, makes an incident of each fault of a PostgreSQL process left.
pub(crate) fn tie(
    incidents: &mut Vec<Incident>,
    faults: Vec<ProcessFault>,
    postgres_logs: bool,
    tolerance_seconds: f64,
) {
    let mut left = Vec::new();
    for fault in faults {
        let crash = incidents.iter_mut().find(|i| {
            i.kernel_fault.is_none()
                && i.kernel_kill.is_none()
                && i.postgres_crash
                    .as_ref()
                    .is_some_and(|c| c.pid == fault.pid && fatal(c.signal))
        });
        match crash {
            Some(incident) => {
                let crash_at = incident.postgres_crash.as_ref().and_then(|c| c.at);
                if let (Some(f), Some(c)) = (fault.at, crash_at) {
                    let apart = seconds_between(f, c);
                    if apart.abs() > tolerance_seconds {
                        incident.notes.push(format!(
                            "the kernel's line ({}:{}) and PostgreSQL's are {:.0} s apart for \
                             the same death: one of the two clocks is off; tied by PID",
                            fault.path,
                            fault.line,
                            apart.abs()
                        ));
                    }
                }
                incident.kernel_fault = Some(fault);
            }
            None => left.push(fault),
        }
    }
    if postgres_logs {
        return;
    }
    for fault in left {
        if !postgres_comm(&fault.comm) || !fatal(fault.signal) {
            continue;
        }
        let cause = if fault.signal == Some(6) {
            "abort_or_panic"
        } else {
            "segfault"
        };
        let mut incident = Incident::new("crash_restart", cause, fault.at);
        incident.confidence = 0.8;
        incident.notes.push(format!(
            "from the {} line alone: the bundle has no PostgreSQL log, so the crash restart \
             that a PostgreSQL process's death sets off is not seen",
            if fault.reporter == "kernel" {
                "kernel's".to_owned()
            } else {
                format!("{}'s", fault.reporter)
            }
        ));
        incidents.push(incident);
        if let Some(last) = incidents.last_mut() {
            last.kernel_fault = Some(fault);
        }
    }
    incidents.sort_by(super::incident::by_time);
}
