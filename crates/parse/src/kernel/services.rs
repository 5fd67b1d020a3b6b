//! Lines of programs beside the kernel that report deaths of processes, read from the same
//! syslog or journal: crash reporters (abrt's `abrt-hook-ccpp`, `systemd-coredump`) and the
//! service manager's view of an OOM kill (systemd). Each is one line; the caller gives the
//! program's tag (`abrt-hook-ccpp`, `systemd[1]`) when the line printed one, and the message.

use super::{CrashReport, UnitEvent, UnitEventKind};

/// The program a syslog/journal tag names, without its `[pid]`.
pub(crate) fn program(tag: &str) -> &str {
    tag.split_once('[').map_or(tag, |(p, _)| p)
}

/// Splits `abrt-hook-ccpp: Process …` (a pasted line that kept its tag but not its stamp) into
/// the tag and the message, for the programs read here.
pub(crate) fn tagged(message: &str) -> Option<(&str, &str)> {
    let (tag, rest) = message.split_once(": ")?;
    let known = matches!(
        program(tag),
        "abrt-hook-ccpp" | "abrtd" | "systemd-coredump" | "systemd" | "systemd-oomd" | "earlyoom"
    );
    known.then_some((tag, rest))
}

/// Whether lines tagged `tag` may be read here (or by [`super::userspace_oom`]).
pub(crate) fn reads(tag: &str) -> bool {
    matches!(
        program(tag),
        "abrt-hook-ccpp" | "abrtd" | "systemd-coredump" | "systemd" | "systemd-oomd" | "earlyoom"
    )
}

/// A crash reporter's line about a process that died of a signal:
/// * abrt-hook-ccpp (abrt 2.x, `log_notice`): `Process 438 (postgres) of user 101 killed by
///   SIGABRT - dumping core` (or `- ignoring (repeated crash)`);
/// * systemd-coredump: `Process 1513 (postgres) of user 26 dumped core.` and, from systemd
///   254, `Process 1513 (postgres) of user 26 terminated abnormally with signal 6/ABRT,
///   processing...`.
pub(crate) fn crash_report(tag: &str, message: &str) -> Option<CrashReport> {
    let rest = message.trim().strip_prefix("Process ")?;
    let (pid, rest) = rest.split_once(" (")?;
    let pid: u32 = pid.parse().ok()?;
    let at = rest.rfind(") of user ")?;
    let comm = &rest[..at];
    let rest = &rest[at + ") of user ".len()..];
    let (uid, what) = rest.split_once(' ')?;
    let uid: u32 = uid.parse().ok()?;
    let (signal, core_dumped) = if let Some(sig) = what.strip_prefix("killed by SIG") {
        let (name, outcome) = sig.split_once(' ').unwrap_or((sig, ""));
        (signal_number(name), Some(outcome.contains("dumping core")))
    } else if what.starts_with("dumped core") {
        (None, Some(true))
    } else if let Some(sig) = what.strip_prefix("terminated abnormally with signal ") {
        let number = sig.split(['/', ',', ' ']).next()?;
        (number.parse().ok(), None)
    } else {
        return None;
    };
    Some(CrashReport {
        reporter: program(tag).to_owned(),
        pid,
        comm: comm.to_owned(),
        uid: Some(uid),
        signal,
        core_dumped,
    })
}

/// `SEGV` → 11, … (the names abrt prints after `SIG`).
fn signal_number(name: &str) -> Option<i32> {
    Some(match name {
        "ILL" => 4,
        "TRAP" => 5,
        "ABRT" => 6,
        "BUS" => 7,
        "FPE" => 8,
        "KILL" => 9,
        "SEGV" => 11,
        _ => return None,
    })
}

/// systemd's lines about a unit (src/core/unit.c, service.c):
/// * `postgresql.service: A process of this unit has been killed by the OOM killer.` (the
///   kernel killed a process in the unit's cgroup; printed again for every ancestor slice);
/// * `postgresql.service: Failed with result 'oom-kill'.` (any result: `signal`,
///   `exit-code`, …);
/// * `postgresql.service: Main process exited, code=killed, status=9/KILL`;
/// * `postgresql.service: Consumed 1d 13h 16min 45.839s CPU time, 6.5G memory peak, …`;
/// * `postgresql.service: systemd-oomd killed 12 process(es) in this unit.` (the userspace
///   killer, systemd 248+).
pub(crate) fn unit_event(tag: &str, message: &str) -> Option<UnitEvent> {
    if program(tag) != "systemd" {
        return None;
    }
    let (unit, text) = message.trim().split_once(": ")?;
    if unit.contains(' ') || !unit.contains('.') {
        return None;
    }
    let event = |kind, detail: Option<&str>| {
        Some(UnitEvent {
            unit: unit.to_owned(),
            what: kind,
            detail: detail.map(str::to_owned),
            ancestors: Vec::new(),
        })
    };
    if text == "A process of this unit has been killed by the OOM killer." {
        return event(UnitEventKind::OomKill, None);
    }
    if let Some(rest) = text.strip_prefix("systemd-oomd killed ")
        && rest.ends_with(" process(es) in this unit.")
    {
        return event(UnitEventKind::OomdKill, rest.split(' ').next());
    }
    if let Some(result) = text
        .strip_prefix("Failed with result '")
        .and_then(|r| r.strip_suffix("'."))
    {
        return event(UnitEventKind::Failed, Some(result));
    }
    if let Some(how) = text.strip_prefix("Main process exited, ") {
        return event(UnitEventKind::MainProcessExited, Some(how));
    }
    if let Some(usage) = text.strip_prefix("Consumed ")
        && let Some(peak) = usage
            .split(", ")
            .find_map(|part| part.strip_suffix(" memory peak"))
    {
        return event(UnitEventKind::MemoryPeak, Some(peak));
    }
    None
}

/// Whether `child` is under `slice` in systemd's unit tree: `system-postgresql.slice` is under
/// `system.slice`, `user@1021.service` under `user-1021.slice` (its slice is not in its name)
/// … By name alone: a slice `a-b.slice` is under `a.slice`; any unit is under `-.slice`.
pub(crate) fn slice_contains(slice: &str, child: &str) -> bool {
    let Some(prefix) = slice.strip_suffix(".slice") else {
        return false;
    };
    if prefix == "-" {
        return true;
    }
    // `user@1021.service`, the user's service manager, runs in `user-1021.slice`.
    if let Some(uid) = child
        .strip_prefix("user@")
        .and_then(|c| c.strip_suffix(".service"))
    {
        return prefix == "user" || prefix == format!("user-{uid}");
    }
    let Some(child_prefix) = child.strip_suffix(".slice") else {
        return false;
    };
    child_prefix.starts_with(prefix) && child_prefix[prefix.len()..].starts_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_reporter_forms() {
        let c = crash_report(
            "abrt-hook-ccpp",
            "Process 438 (postgres) of user 101 killed by SIGABRT - dumping core",
        )
        .unwrap();
        assert_eq!(
            (
                c.reporter.as_str(),
                c.pid,
                c.comm.as_str(),
                c.uid,
                c.signal,
                c.core_dumped
            ),
            (
                "abrt-hook-ccpp",
                438,
                "postgres",
                Some(101),
                Some(6),
                Some(true)
            )
        );
        let c = crash_report(
            "abrt-hook-ccpp",
            "Process 9 (postgres) of user 26 killed by SIGSEGV - ignoring (repeated crash)",
        )
        .unwrap();
        assert_eq!((c.signal, c.core_dumped), (Some(11), Some(false)));
        let c = crash_report(
            "systemd-coredump[134090]",
            "Process 91762 (python) of user 60105 terminated abnormally with signal 6/ABRT, processing...",
        )
        .unwrap();
        assert_eq!(
            (c.reporter.as_str(), c.pid, c.signal, c.core_dumped),
            ("systemd-coredump", 91762, Some(6), None)
        );
        let c = crash_report(
            "systemd-coredump[7]",
            "Process 1513 (my prog) of user 26 dumped core.",
        )
        .unwrap();
        assert_eq!((c.comm.as_str(), c.core_dumped), ("my prog", Some(true)));
        assert!(crash_report("abrtd", "Process 1 (x) of user 0 is fine").is_none());
        assert!(crash_report("abrtd", "Size of '/var/spool/abrt' >= 1000 MB").is_none());
    }

    #[test]
    fn unit_lines() {
        let e = unit_event(
            "systemd[1]",
            "postgresql.service: A process of this unit has been killed by the OOM killer.",
        )
        .unwrap();
        assert_eq!(
            (e.unit.as_str(), e.what),
            ("postgresql.service", UnitEventKind::OomKill)
        );
        let e = unit_event(
            "systemd[1]",
            "postgresql.service: Failed with result 'oom-kill'.",
        )
        .unwrap();
        assert_eq!(
            (e.what, e.detail.as_deref()),
            (UnitEventKind::Failed, Some("oom-kill"))
        );
        let e = unit_event(
            "systemd[1]",
            "postgresql.service: Main process exited, code=killed, status=9/KILL",
        )
        .unwrap();
        assert_eq!(e.detail.as_deref(), Some("code=killed, status=9/KILL"));
        let e = unit_event("systemd[1]", "postgresql.service: Consumed 1d 13h 16min 45.839s CPU time, 6.5G memory peak, 24.1M memory swap peak.").unwrap();
        assert_eq!(
            (e.what, e.detail.as_deref()),
            (UnitEventKind::MemoryPeak, Some("6.5G"))
        );
        let e = unit_event(
            "systemd[1]",
            "user@1000.service: systemd-oomd killed 12 process(es) in this unit.",
        )
        .unwrap();
        assert_eq!(
            (e.what, e.detail.as_deref()),
            (UnitEventKind::OomdKill, Some("12"))
        );
        // Other programs and other systemd lines are not unit events.
        assert!(
            unit_event(
                "sshd[3]",
                "postgresql.service: Failed with result 'oom-kill'."
            )
            .is_none()
        );
        assert!(unit_event("systemd[1]", "Started Session 3 of user root.").is_none());
        assert!(unit_event("systemd[1]", "postgresql.service: Consumed 2.1s CPU time.").is_none());
    }

    #[test]
    fn slices_hold_their_children_by_name() {
        assert!(slice_contains("system.slice", "system-postgresql.slice"));
        assert!(slice_contains("user.slice", "user-1021.slice"));
        assert!(slice_contains("-.slice", "user.slice"));
        assert!(slice_contains("user-1021.slice", "user@1021.service"));
        assert!(slice_contains("user.slice", "user@1021.service"));
        assert!(!slice_contains("user-1.slice", "user@1021.service"));
        assert!(!slice_contains("system.slice", "user@1021.service"));
        assert!(!slice_contains("user-1021.slice", "user-10210.slice"));
        assert!(!slice_contains("postgresql.service", "postgresql-x.slice"));
    }
}
