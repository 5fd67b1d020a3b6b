//! Why a PostgreSQL process died, or the server did not start, beyond how it died: the error
//! the process (or the PANIC that ended it) met — a full volume, a read-only file system, an
//! I/O error, damaged data or WAL — and what the kernel reported about it: a poisoned page or
//! an uncorrected machine check, a user-space OOM killer's kill, storage errors just before a
//! SIGBUS. The server's own line names the cause best; the kernel's lines come second, tied by
//! PID, or by time within a window with a lower confidence.

use jiff::Timestamp;
use pgmortem_parse::kernel::{
    HardwareError, HardwareSource, KernelEvent, StorageError, UserspaceKiller, UserspaceOomKill,
};
use pgmortem_parse::pglog::{FileErrno, PgEvent, PgRecord, Severity};

use crate::clock::{self, Clock, seconds_between};
use crate::human::cut;
use crate::report::{CauseLine, Incident};
use crate::sources::KernelSource;

/// How long before a death an uncorrected hardware error is taken as its likely cause when the
/// kernel did not name the process (a machine check that corrupted memory another process read
/// later, an EDAC uncorrected error): ten minutes.
pub(crate) const HARDWARE_WINDOW_SECONDS: f64 = 600.0;
/// How long before a SIGBUS the kernel's storage errors are taken as its cause (a read of a
/// mapped file that failed with an I/O error raises SIGBUS in the reader).
pub(crate) const STORAGE_SIGBUS_WINDOW_SECONDS: f64 = 60.0;
/// The highest confidence of a cause read from the kernel by time alone.
const BY_TIME_CONFIDENCE: f64 = 0.6;

/// The cause an error-level record names, from its event: a full volume (`disk_full`), a
/// read-only file system (`filesystem_read_only`), an I/O error (`storage_error`), or
/// damaged or missing data or WAL (`corruption`). A full /dev/shm is not a full disk (the
/// dev-shm rule speaks of it), and a refusal to start for want of shared memory or a port is
/// not storage: both give none.
pub(crate) fn of_event(event: &PgEvent) -> Option<&'static str> {
    if let Some(errno) = event.file_errno() {
        return Some(match errno {
            FileErrno::NoSpace => "disk_full",
            FileErrno::ReadOnly => "filesystem_read_only",
            FileErrno::IoError => "storage_error",
        });
    }
    match event {
        // The startup process logs a failed WAL read at LOG, then looks elsewhere or stops:
        // an I/O error is the storage's; a short read is often the WAL's normal end.
        PgEvent::CouldNotReadWal { io_error, .. } => io_error.then_some("storage_error"),
        // A short read (`read only N of M bytes`) is a file cut short: damaged data.
        PgEvent::CouldNotReadBlock { io_error, .. } => Some(if *io_error {
            "storage_error"
        } else {
            "corruption"
        }),
        PgEvent::InvalidPage { .. }
        | PgEvent::ChecksumFailure { .. }
        | PgEvent::ToastChunkMissing { .. }
        | PgEvent::TupleXidCorruption { .. }
        | PgEvent::InvalidAllocSize { .. }
        | PgEvent::DataBeyondEof { .. }
        | PgEvent::NoValidCheckpoint { .. }
        | PgEvent::InvalidCheckpointRecord { .. }
        | PgEvent::RedoLocationMissing { .. }
        | PgEvent::WalSegmentRemoved { .. } => Some("corruption"),
        _ => None,
    }
}

/// The cause `record` names, when it is an error, FATAL or PANIC whose event names one (or a
/// failed WAL read, which the startup process logs at LOG).
pub(crate) fn of_record(record: &PgRecord) -> Option<&'static str> {
    let event = record.event.as_ref()?;
    let error_level = matches!(
        record.severity,
        Some(Severity::Error | Severity::Fatal | Severity::Panic)
    );
    if !error_level && !matches!(event, PgEvent::CouldNotReadWal { .. }) {
        return None;
    }
    of_event(event)
}

/// `record` of the server log `path` as the line a cause was read from.
pub(crate) fn postgres_line(path: &str, record: &PgRecord) -> CauseLine {
    CauseLine {
        origin: "postgres",
        at: record.time.as_ref().and_then(clock::postgres),
        path: path.to_owned(),
        line: record.line,
        text: cut(&record.message, 300),
    }
}

/// True for the causes the kernel's lines may replace: how a process died, not why.
fn only_how(cause: &str) -> bool {
    matches!(
        cause,
        "signal_from_outside"
            | "segfault"
            | "abort_or_panic"
            | "abnormal_exit"
            | "postmaster_killed"
            | "unknown"
    )
}

/// A kernel record a cause can be read from, on the clock.
struct KernelCause<'a> {
    at: Option<Timestamp>,
    path: &'a str,
    line: u64,
    what: What<'a>,
}

enum What<'a> {
    Hardware(&'a HardwareError),
    Userspace(&'a UserspaceOomKill),
    Storage(&'a StorageError),
}

impl KernelCause<'_> {
    fn line(&self, text: &str) -> CauseLine {
        CauseLine {
            origin: "kernel",
            at: self.at,
            path: self.path.to_owned(),
            line: self.line,
            text: cut(text, 300),
        }
    }
}

/// Reads the causes the kernel's lines give into `incidents` (see the module's doc): a
/// poisoned page the kernel killed the process for, a user-space OOM killer's kill of it or
/// of the server's unit, an uncorrected hardware error in the ten minutes before a fault, the
/// kernel's storage errors in the minute before a SIGBUS. A cause the server's log gave is
/// kept, but for a poisoned page named by PID.
pub(crate) fn tie_kernel(
    incidents: &mut [Incident],
    kernel: &[KernelSource],
    clock: &Clock,
    tolerance_seconds: f64,
) {
    let mut lines = Vec::new();
    for source in kernel {
        for record in &source.log.records {
            let what = match &record.event {
                KernelEvent::HardwareError(h) => What::Hardware(h),
                KernelEvent::UserspaceOomKill(u) => What::Userspace(u),
                KernelEvent::StorageError(s) => What::Storage(s),
                _ => continue,
            };
            lines.push(KernelCause {
                at: clock.kernel(&record.time).map(|t| t.0),
                path: &source.path,
                line: record.line,
                what,
            });
        }
    }
    if lines.is_empty() {
        return;
    }
    for incident in incidents.iter_mut() {
        if incident.kernel_kill.is_some() || incident.container_kill.is_some() {
            continue;
        }
        let pid = incident
            .postgres_crash
            .as_ref()
            .map(|c| c.pid)
            .or(incident.kernel_fault.as_ref().map(|f| f.pid));
        let signal = incident
            .postgres_crash
            .as_ref()
            .and_then(|c| c.signal)
            .or(incident.kernel_fault.as_ref().and_then(|f| f.signal));
        let at = incident.started_at;
        let before = |l: &KernelCause<'_>, window: f64| match (l.at, at) {
            (Some(k), Some(a)) => {
                let d = seconds_between(k, a);
                (-tolerance_seconds..=window).contains(&d)
            }
            _ => false,
        };
        // 1. The kernel killed the process for a poisoned page: decisive, named by PID.
        if let Some(l) = lines.iter().find(|l| {
            matches!(&l.what, What::Hardware(h) if h.pid.is_some() && h.pid == pid
                && h.source == HardwareSource::MemoryFailure)
                && (l.at.is_none() || before(l, HARDWARE_WINDOW_SECONDS))
        }) && let What::Hardware(h) = &l.what
        {
            incident.cause = "hardware_error";
            incident.cause_line = Some(l.line(&h.message));
            incident.notes.push(format!(
                "the kernel killed pid {} for touching memory with an uncorrectable hardware \
                 error ({}:{}): the machine's memory is failing",
                pid.unwrap_or_default(),
                l.path,
                l.line
            ));
            continue;
        }
        if !only_how(incident.cause) {
            continue;
        }
        // 2. A user-space OOM killer's kill of the process (earlyoom names it), or of a cgroup
        // that holds it (systemd-oomd names the unit and, before the kill, the pids).
        let sigkill_or_term = matches!(signal, Some(9 | 15))
            || matches!(incident.kind, "unclean_restart" | "postmaster_killed");
        let window = userspace_window(incident, tolerance_seconds);
        if sigkill_or_term
            && let Some(l) = lines.iter().find(|l| match &l.what {
                What::Userspace(u) => kills_it(u, l.at, pid, window),
                _ => false,
            })
            && let What::Userspace(u) = &l.what
        {
            incident.cause = "userspace_oom_killer";
            incident.cause_line = Some(l.line(&u.message));
            incident.notes.push(format!(
                "{} killed {} ({}:{}), not the kernel's OOM killer",
                killer_name(u.killer),
                u.cgroup
                    .as_deref()
                    .map(crate::human::quote)
                    .or_else(|| u.pid.map(|p| format!("pid {p}")))
                    .unwrap_or_else(|| "it".to_owned()),
                l.path,
                l.line
            ));
            continue;
        }
        // 3. An uncorrected hardware error shortly before a fault.
        let fault = matches!(signal, Some(4 | 6 | 7 | 8 | 11));
        if fault
            && let Some(l) = lines.iter().rev().find(|l| {
                matches!(&l.what, What::Hardware(h) if h.corrected == Some(false))
                    && before(l, HARDWARE_WINDOW_SECONDS)
            })
            && let What::Hardware(h) = &l.what
        {
            incident.cause = "hardware_error";
            incident.cause_line = Some(l.line(&h.message));
            incident.confidence = incident.confidence.min(BY_TIME_CONFIDENCE);
            incident.notes.push(format!(
                "the kernel reported an uncorrected hardware error {} before this death \
                 ({}:{}); tied by time alone, the process is not named",
                seconds_text(l.at, at),
                l.path,
                l.line
            ));
            continue;
        }
        // 4. The kernel's storage errors just before a SIGBUS.
        if signal == Some(7)
            && let Some(l) = lines.iter().rev().find(|l| {
                matches!(&l.what, What::Storage(_)) && before(l, STORAGE_SIGBUS_WINDOW_SECONDS)
            })
            && let What::Storage(s) = &l.what
        {
            incident.cause = "storage_error";
            incident.cause_line = Some(l.line(&s.message));
            incident.confidence = incident.confidence.min(BY_TIME_CONFIDENCE);
            incident.notes.push(format!(
                "SIGBUS {} after the kernel's storage error{} ({}:{}): a read of a mapped file \
                 that fails with an I/O error raises SIGBUS; tied by time alone",
                seconds_text(l.at, at),
                s.device
                    .as_deref()
                    .map(|d| format!(" on {d}"))
                    .unwrap_or_default(),
                l.path,
                l.line
            ));
        }
    }
}

/// When a user-space OOM killer's kill may have ended the incident's process: around its
/// death, or for a server that started again with crash recovery, from its last line before
/// to the new start.
fn userspace_window(incident: &Incident, tolerance: f64) -> Option<(Timestamp, Timestamp)> {
    let at = incident.started_at?;
    let widen = |t: Timestamp, by: f64| {
        t.checked_add(jiff::SignedDuration::from_secs_f64(by))
            .unwrap_or(t)
    };
    let from = match incident.kind {
        "unclean_restart" => incident
            .preceded_by
            .iter()
            .filter_map(|l| l.at)
            .min()
            .unwrap_or(at),
        _ => at,
    };
    Some((widen(from, -tolerance), widen(at, tolerance)))
}

/// True when `kill` (at `at`) ended the process `pid` or the server: it names the pid, or it
/// came within `window` and killed a `postgres` process or a cgroup named for PostgreSQL
/// (`postgresql@15-main.service`).
fn kills_it(
    kill: &UserspaceOomKill,
    at: Option<Timestamp>,
    pid: Option<u32>,
    window: Option<(Timestamp, Timestamp)>,
) -> bool {
    let within = match (at, window) {
        (Some(t), Some((from, to))) => from <= t && t <= to,
        _ => false,
    };
    let named = pid.is_some_and(|p| kill.pid == Some(p) || kill.pids.contains(&p));
    if named {
        return within || at.is_none() || window.is_none();
    }
    let postgres_cgroup = kill
        .cgroup
        .as_deref()
        .is_some_and(|c| c.to_ascii_lowercase().contains("postgres"));
    let postgres_comm = kill
        .comm
        .as_deref()
        .is_some_and(|c| c.starts_with("postgres"));
    within && (postgres_cgroup || (postgres_comm && (kill.pid.is_none() || pid.is_none())))
}

fn killer_name(killer: UserspaceKiller) -> &'static str {
    match killer {
        UserspaceKiller::SystemdOomd => "systemd-oomd",
        UserspaceKiller::Earlyoom => "earlyoom",
        _ => "a user-space OOM killer",
    }
}

fn seconds_text(kernel: Option<Timestamp>, death: Option<Timestamp>) -> String {
    match (kernel, death) {
        (Some(k), Some(d)) => format!("{:.0} s", seconds_between(k, d).max(0.0)),
        _ => "shortly".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fsync(no_space: bool, read_only: bool, io_error: bool) -> PgEvent {
        PgEvent::CouldNotFsync {
            path: "base/5/16384".into(),
            error: String::new(),
            io_error,
            no_space,
            read_only,
        }
    }

    #[test]
    fn errno_flags_name_the_cause() {
        assert_eq!(of_event(&fsync(true, false, false)), Some("disk_full"));
        assert_eq!(
            of_event(&fsync(false, true, false)),
            Some("filesystem_read_only")
        );
        assert_eq!(of_event(&fsync(false, false, true)), Some("storage_error"));
        assert_eq!(of_event(&fsync(false, false, false)), None);
    }

    #[test]
    fn a_short_read_is_damage_and_an_eio_read_is_storage() {
        let read = |io_error| PgEvent::CouldNotReadBlock {
            block: 0,
            path: "base/5/16384".into(),
            error: String::new(),
            io_error,
        };
        assert_eq!(of_event(&read(true)), Some("storage_error"));
        assert_eq!(of_event(&read(false)), Some("corruption"));
    }

    #[test]
    fn a_full_dev_shm_and_refused_starts_name_no_storage_cause() {
        let shm = PgEvent::SharedMemoryResizeFailed {
            segment: "/PostgreSQL.1".into(),
            bytes: 1,
            error: String::new(),
            no_space: true,
        };
        assert_eq!(of_event(&shm), None);
        let lock = PgEvent::LockFileExists {
            path: "postmaster.pid".into(),
            pid: Some(1),
        };
        assert_eq!(of_event(&lock), None);
    }

    use crate::rules::testing::Scratch;

    /// The real capture of a backend killed by `kill -9` (fixtures/incidents/pg15-sigkill-backend:
    /// PID 29082 at 17:17:17.797 UTC), with a journal line added by hand.
    fn sigkill_with(journal: &str) -> crate::Report {
        Scratch::incident("pg15-sigkill-backend")
            .write("journal.txt", journal)
            .report()
    }

    #[test]
    fn earlyoom_naming_the_backend_is_the_cause() {
        // Edge case, hand-written: earlyoom's kill line (public-earlyoom-journal.txt's form)
        // naming the captured backend's PID at its death.
        let report = sigkill_with(
            "Nov 21 17:17:17 dbhost earlyoom[1308]: sending SIGKILL to process 29082 uid 105 \
             \"postgres\": oom_score 900, VmRSS 409 MiB, cmdline \"postgres: app db [local] SELECT\"\n",
        );
        let i = &report.incidents[0];
        assert_eq!(i.cause, "userspace_oom_killer", "{:#?}", i.notes);
        let line = i.cause_line.as_ref().expect("the kill line");
        assert_eq!((line.origin, line.path.as_str()), ("kernel", "journal.txt"));
        assert!(
            i.notes
                .iter()
                .any(|n| n.starts_with("earlyoom killed pid 29082")),
            "{:#?}",
            i.notes
        );
    }

    #[test]
    fn earlyoom_killing_another_process_is_not_the_cause() {
        // The public sample's own kill (a browser's content process), at the backend's death.
        let report = sigkill_with(
            "Nov 21 17:17:17 qaa earlyoom[1308]: sending SIGTERM to process 1024668 uid 1000 \
             \"Web Content\": oom_score 823, VmRSS 79 MiB\n",
        );
        assert_eq!(report.incidents[0].cause, "signal_from_outside");
        assert!(report.incidents[0].cause_line.is_none());
    }

    #[test]
    fn a_poisoned_page_of_the_backend_is_a_hardware_error() {
        // Edge case, hand-written: the kernel's memory-failure kill (5.x wording) of the
        // captured backend, a second before its death.
        let report = sigkill_with(
            "Nov 21 17:17:16 dbhost kernel: Memory failure: 0x12a4f3: Killing postgres:29082 due \
             to hardware memory corruption\n",
        );
        let i = &report.incidents[0];
        assert_eq!(i.cause, "hardware_error", "{:#?}", i.notes);
        assert!(
            i.notes
                .iter()
                .any(|n| n.contains("uncorrectable hardware error"))
        );
    }

    #[test]
    fn a_corrected_error_is_no_cause() {
        // Corrected errors (EDAC CE) are counted by hardware-error; they kill nothing.
        let report = sigkill_with(
            "Nov 21 17:17:10 dbhost kernel: EDAC MC0: 1 CE memory read error on \
             CPU_SrcID#0_Ha#0_Chan#2_DIMM#0 (channel:2 slot:0 page:0x4b7b52 offset:0x400 \
             grain:32 syndrome:0x0 - area:DRAM err_code:0001:0092 socket:0 ha:0 channel_mask:4 \
             rank:0)\n",
        );
        assert_eq!(report.incidents[0].cause, "signal_from_outside");
    }
}
