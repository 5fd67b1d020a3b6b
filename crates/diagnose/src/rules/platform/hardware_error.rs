//! ## What it finds
//! The kernel reported hardware errors: machine checks (`mce: [Hardware Error]: CPU N: Machine
//! Check: …`), memory-controller errors decoded by EDAC (`EDAC MC1: 1 CE memory scrubbing
//! error on CPU_SrcID#1_Ha#0_Chan#0_DIMM#0 …`), memory failures (`Memory failure: 0x…:
//! recovery action for …`, a process killed for a poisoned page), firmware-first (APEI/GHES)
//! records, CPUs throttled for their temperature. It says how many of each, over what window,
//! and which DIMM or location the lines name, and ties them to a PostgreSQL crash by signal
//! (SIGBUS, SIGSEGV, SIGILL) near them in time, or to the process the kernel killed for them.
//!
//! ## Why it matters
//! An uncorrected error means memory or a CPU returned wrong data: the kernel kills the
//! process that touched a poisoned page (SIGBUS), a backend can crash on a corrupted pointer,
//! and data written from bad memory reaches the disk as corruption. Corrected errors (ECC
//! fixed them) harm nothing yet, but corrected errors repeating on one DIMM come before
//! uncorrected ones. An error logged seconds after boot was found by the firmware before the
//! boot: it is what reset the machine.
//!
//! ## What to do
//! For uncorrected errors: treat the host as failing; read the full records (`ras-mc-ctl
//! --errors`, `mcelog --client`, the BMC's event log), replace the DIMM or CPU named, move the
//! database (fail over to a standby on another host) until then, and check the data afterwards
//! (`pg_amcheck`; `pg_checksums --check` when data checksums are on). For corrected errors:
//! watch the counters (`ras-mc-ctl --error-count`, `/sys/devices/system/edac/mc/mc*/ce_count`)
//! and replace the DIMM they name when they keep coming. For thermal throttling: cooling, fans
//! and the BIOS power profile.
//!
//! ## Thresholds
//! Critical: any uncorrected error (a machine check with its UC bit, an EDAC `UE`/`Fatal`
//! error, an APEI `recoverable`/`fatal` record) or memory failure. Warning: corrected errors
//! (their count, summed over the lines) or machine checks the log does not decode. Info:
//! thermal throttling alone. An error is tied to the incident of a PostgreSQL process the
//! kernel names for it (same PID), else to a crash by SIGBUS, SIGSEGV, SIGILL or SIGFPE within
//! [`TIE_SECONDS`] (10 minutes) either way; an uncorrected error also to a start with crash
//! recovery within that window (the host reset). Errors tied to one incident make one finding.
//!
//! ## Evidence it needs
//! A kernel log; the PostgreSQL log to tie the errors to a crash.
//!
//! ## Knowledge
//! [kernel-ras] (machine checks, EDAC's CE and UE counts, memory failure handling and
//! hwpoison, APEI/GHES); [pg-checksums] (checking the data afterwards).

use std::collections::BTreeMap;

use pgmortem_parse::kernel::{HardwareError, HardwareSource, KernelEvent};

use crate::facts::{Facts, KernelEventAt};
use crate::human::kernel::{bare_notice, hardware_error as describe};
use crate::human::{duration, quote_cut};
use crate::report::{Evidence, Finding, Incident, Severity};
use crate::rules::support::{death_text, incident_near};
use crate::rules::{Input, RuleMeta, critical, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "hardware-error",
    title: "The kernel logged hardware errors: machine checks, memory errors, memory failures",
    severities: &[
        critical("for an uncorrected error or a memory failure"),
        warning("for corrected errors, or machine checks the log does not decode"),
        info("for thermal throttling alone"),
    ],
    needs: &[Input::KernelLog],
    uses: &[Input::PostgresLog],
};

/// Seconds between a hardware error and a PostgreSQL crash for the one to be tied to the
/// other.
pub(crate) const TIE_SECONDS: f64 = 600.0;

/// Seconds after boot within which a machine check was found in the banks at boot: the kernel
/// reads them when it sets the handler up (well within the first second), and what it finds
/// there happened before the boot.
const AT_BOOT_SECONDS: f64 = 10.0;

/// What one hardware record is worth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Class {
    /// A CPU over its temperature threshold.
    Thermal,
    /// A machine check whose kind the log does not say.
    Undecoded,
    /// Corrected by ECC or the CPU.
    Corrected,
    /// Uncorrected, or a memory failure.
    Uncorrected,
}

fn class(e: &HardwareError) -> Class {
    match (e.source, e.corrected) {
        (HardwareSource::Thermal, _) => Class::Thermal,
        (HardwareSource::MemoryFailure, _) | (_, Some(false)) => Class::Uncorrected,
        (_, Some(true)) => Class::Corrected,
        (_, None) => Class::Undecoded,
    }
}

fn hardware<'a>(record: &KernelEventAt<'a>) -> Option<&'a HardwareError> {
    match &record.record.event {
        KernelEvent::HardwareError(e) => Some(e),
        _ => None,
    }
}

/// A death a hardware error can cause: a fatal signal of a fault.
fn died_of_a_fault(incident: &Incident) -> bool {
    let signal = incident
        .postgres_crash
        .as_ref()
        .and_then(|c| c.signal)
        .or_else(|| incident.kernel_fault.as_ref().and_then(|f| f.signal));
    matches!(signal, Some(7 | 11 | 4 | 8))
        || matches!(incident.cause, "segfault" | "hardware_error")
}

/// The incident a hardware record is tied to.
fn tied(facts: &Facts<'_>, record: &KernelEventAt<'_>, e: &HardwareError) -> Option<usize> {
    if let Some(pid) = e.pid {
        let by_pid = facts.incidents.iter().position(|i| {
            i.postgres_crash.as_ref().is_some_and(|c| c.pid == pid)
                || i.kernel_fault.as_ref().is_some_and(|f| f.pid == pid)
        });
        if by_pid.is_some() {
            return by_pid;
        }
    }
    let at = record.at?;
    let uncorrected = class(e) == Class::Uncorrected;
    incident_near(facts, at, TIE_SECONDS, |i| {
        died_of_a_fault(i) || (uncorrected && i.kind == "unclean_restart")
    })
}

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let records = facts
        .kernel
        .records(|e| matches!(e, KernelEvent::HardwareError(_)));
    let decoded = records.iter().filter_map(hardware).any(|e| !bare_notice(e));
    // Records by the incident they are tied to (None: none), in log order.
    let mut groups: BTreeMap<Option<usize>, Vec<&KernelEventAt<'_>>> = BTreeMap::new();
    for r in &records {
        let Some(e) = hardware(r) else { continue };
        if decoded && bare_notice(e) {
            continue;
        }
        groups.entry(tied(facts, r, e)).or_default().push(r);
    }
    groups
        .into_iter()
        .map(|(incident, group)| group_finding(facts, incident, &group))
        .collect()
}

fn group_finding(
    facts: &Facts<'_>,
    incident: Option<usize>,
    group: &[&KernelEventAt<'_>],
) -> Finding {
    let errors: Vec<&HardwareError> = group.iter().filter_map(|r| hardware(r)).collect();
    let worst = errors
        .iter()
        .map(|e| class(e))
        .max()
        .unwrap_or(Class::Thermal);
    let of = |c: Class| errors.iter().filter(move |e| class(e) == c);
    let uncorrected = of(Class::Uncorrected).count() as u64;
    let corrected: u64 = of(Class::Corrected).map(|e| e.count.unwrap_or(1)).sum();
    let undecoded = of(Class::Undecoded).count() as u64;
    let thermal = of(Class::Thermal).count() as u64;

    // Where: each location (DIMM, APEI's location) with its count of errors.
    let mut places: BTreeMap<&str, u64> = BTreeMap::new();
    for e in &errors {
        if let Some(l) = e.location.as_deref() {
            *places.entry(l).or_default() += e.count.unwrap_or(1);
        }
    }
    let places_text: Vec<String> = places.iter().map(|(l, n)| format!("{l} ({n})")).collect();
    let window = window_seconds(group);
    let when = match (group.first().and_then(|r| r.at), window) {
        (Some(at), Some(w)) if w >= 1.0 => format!(" from {at} over {}", duration(w)),
        (Some(at), _) => format!(" at {at}"),
        (None, Some(w)) if w >= 1.0 => format!(" over {} (times not placed on UTC)", duration(w)),
        _ => String::new(),
    };

    let mut counts = Vec::new();
    if uncorrected > 0 {
        counts.push(format!(
            "{uncorrected} uncorrected error{} or memory failure{}",
            s(uncorrected),
            s(uncorrected)
        ));
    }
    if corrected > 0 {
        counts.push(format!("{corrected} corrected error{}", s(corrected)));
    }
    if undecoded > 0 {
        counts.push(format!(
            "{undecoded} machine check{} the log does not decode",
            s(undecoded)
        ));
    }
    if thermal > 0 {
        counts.push(format!("{thermal} thermal throttling event{}", s(thermal)));
    }
    let first_worst = errors
        .iter()
        .find(|e| class(e) == worst)
        .copied()
        .unwrap_or(errors[0]);
    let mut summary = format!(
        "The kernel logged {}{when}: first {}, {}.",
        counts.join(", "),
        describe(first_worst),
        quote_cut(&first_worst.message, 160)
    );
    if !places_text.is_empty() {
        summary.push_str(&format!(" The lines name {}.", places_text.join(", ")));
    }
    let at_boot = group
        .iter()
        .filter(|r| {
            hardware(r).is_some_and(|e| {
                class(e) == Class::Uncorrected && e.source == HardwareSource::MachineCheck
            })
        })
        .find_map(|r| r.record.time.monotonic_us)
        .filter(|us| (*us as f64) / 1e6 < AT_BOOT_SECONDS);
    if let Some(us) = at_boot {
        summary.push_str(&format!(
            " It was logged {:.1} s after boot: the firmware found it before this boot, and it \
             is likely what reset the machine.",
            us as f64 / 1e6
        ));
    }
    let victims: Vec<String> = errors
        .iter()
        .filter_map(|e| Some(format!("{} {}", e.comm.as_deref()?, e.pid?)))
        .collect();
    if !victims.is_empty() {
        summary.push_str(&format!(
            " The kernel killed {} for touching a poisoned page.",
            victims.join(", ")
        ));
    }
    if let Some(i) = incident.and_then(|n| facts.incidents.get(n)) {
        let apart = match (group.first().and_then(|r| r.at), i.started_at) {
            (Some(h), Some(c)) => {
                let d = crate::clock::seconds_between(h, c);
                format!(
                    ", {} {} the first error",
                    duration(d.abs()),
                    if d >= 0.0 { "after" } else { "before" }
                )
            }
            _ => String::new(),
        };
        summary.push_str(&format!(
            " {} died{apart}: {}",
            death_text(i),
            if worst == Class::Uncorrected {
                "bad memory or a failing CPU is the likely cause of the crash."
            } else {
                "these errors were corrected, so they did not corrupt what it read, but they \
                 show the memory is failing and an uncorrected error may have gone unlogged."
            }
        ));
    }

    let severity = match worst {
        Class::Uncorrected => Severity::Critical,
        Class::Corrected | Class::Undecoded => Severity::Warning,
        Class::Thermal => Severity::Info,
    };
    let title = match worst {
        Class::Uncorrected => format!(
            "Uncorrected hardware error{}: {}",
            s(uncorrected),
            describe(first_worst).trim_start_matches("uncorrected ")
        ),
        Class::Corrected => format!(
            "{corrected} corrected memory or CPU error{}{}",
            s(corrected),
            if places.is_empty() {
                String::new()
            } else {
                format!(
                    " on {}",
                    places.keys().copied().collect::<Vec<_>>().join(", ")
                )
            }
        ),
        Class::Undecoded => format!(
            "{undecoded} machine check{} logged, not decoded in the log",
            s(undecoded)
        ),
        Class::Thermal => format!(
            "CPUs throttled for their temperature ({thermal} event{})",
            s(thermal)
        ),
    } + &incident
        .and_then(|n| facts.incidents.get(n))
        .map(|i| format!(", near the death of {}", death_text(i)))
        .unwrap_or_default();

    let mut evidence: Vec<Evidence> = Vec::new();
    for (c, what) in [
        (Class::Uncorrected, "an uncorrected hardware error"),
        (Class::Corrected, "a corrected hardware error"),
        (Class::Undecoded, "a machine check"),
        (Class::Thermal, "thermal throttling"),
    ] {
        let of_class: Vec<_> = group
            .iter()
            .filter(|r| hardware(r).is_some_and(|e| class(e) == c))
            .collect();
        if let Some(first) = of_class.first() {
            evidence.push(first.evidence(format!("the first: {what}")));
        }
        if let Some(last) = of_class.last().filter(|_| of_class.len() > 1) {
            evidence.push(last.evidence(format!("the last: {what}")));
        }
    }
    let recommendation = match worst {
        Class::Uncorrected => {
            "Treat the host as failing: read the full records (ras-mc-ctl --errors, mcelog \
             --client, the BMC's event log), replace the DIMM or CPU they name, and move the \
             database off this host (fail over to a standby elsewhere) until then. Afterwards \
             check the data: pg_amcheck, and pg_checksums --check when data checksums are on."
                .to_owned()
        }
        Class::Corrected => format!(
            "ECC corrected these, but corrected errors repeating on one DIMM come before \
             uncorrected ones: watch the counters (ras-mc-ctl --error-count, \
             /sys/devices/system/edac/mc/mc*/ce_count) and replace {} if they keep coming.",
            if places.is_empty() {
                "the module they name".to_owned()
            } else {
                places.keys().copied().collect::<Vec<_>>().join(", ")
            }
        ),
        Class::Undecoded => "The kernel's line says only that machine checks were logged: read \
             them with rasdaemon (ras-mc-ctl --errors) or mcelog, or in the BMC's event log, to \
             learn whether they were corrected and which part failed."
            .to_owned(),
        Class::Thermal => "Check the cooling, the fans and the BIOS power profile: a throttled \
             CPU runs every query slower."
            .to_owned(),
    };
    let mut f = finding(&META, severity, title)
        .summary(summary)
        .recommend(recommendation)
        .evidence(evidence)
        .figure("uncorrected", uncorrected as f64)
        .figure("corrected", corrected as f64)
        .impact((uncorrected * 1000 + corrected) as f64)
        .confidence(if incident.is_some() && worst != Class::Uncorrected {
            0.6
        } else {
            1.0
        });
    if let Some(w) = window {
        f = f.figure("window_seconds", w);
    }
    if let Some(i) = incident {
        f = f.incident(i);
    }
    f
}

/// Seconds from the group's first record to its last: on UTC when both are placed, else by
/// the kernel's monotonic clock (one boot).
fn window_seconds(group: &[&KernelEventAt<'_>]) -> Option<f64> {
    let (first, last) = (group.first()?, group.last()?);
    if let (Some(a), Some(b)) = (first.at, last.at) {
        return Some(crate::clock::seconds_between(a, b));
    }
    let (a, b) = (
        first.record.time.monotonic_us?,
        last.record.time.monotonic_us?,
    );
    Some(b.saturating_sub(a) as f64 / 1e6)
}

fn s(n: u64) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use crate::report::Severity;
    use crate::rules::testing::Scratch;

    fn kernel(fixture: &str) -> Scratch {
        Scratch::new().copy("kernel/dmesg.txt", fixture)
    }

    #[test]
    fn a_corrected_error_on_a_dimm_is_a_warning_naming_it() {
        // Real: radiasoft/devops#134, a corrected scrubbing error the DIMM was replaced for.
        let f = kernel("wild/radiasoft-edac-ce-dimm-replaced/syslog")
            .run("hardware-error")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(
            f.title
                .contains("1 corrected memory or CPU error on CPU_SrcID#1_Ha#0_Chan#0_DIMM#0"),
            "{}",
            f.title
        );
        assert!(f.summary.contains("page 0xee30a0"), "{}", f.summary);
        assert_eq!(f.figures["corrected"], 1.0);
        assert!(f.incident.is_none());
        assert!(f.recommendation.unwrap().contains("ce_count"));
    }

    #[test]
    fn corrected_counts_are_summed_over_their_window() {
        // Real: openstreetmap/operations#300, seven EDAC lines counting 4+2+6+1+1+1+1 errors on
        // one DIMM over 8 s of the kernel's clock.
        let f = kernel("formats/kernel/public-edac-ce-kern-log.txt")
            .run("hardware-error")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["corrected"], 16.0);
        assert!(
            f.summary.contains("CPU#0Channel#2_DIMM#0 (16)"),
            "{}",
            f.summary
        );
        let window = f.figures["window_seconds"];
        assert!((8.0..9.0).contains(&window), "{window}");
    }

    #[test]
    fn corrected_machine_checks_without_a_dimm_are_a_warning() {
        // Real: home-assistant/operating-system#2989, four corrected machine checks.
        let f = kernel("formats/kernel/public-mce-journal.txt")
            .run("hardware-error")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["corrected"], 4.0);
    }

    #[test]
    fn an_uncorrected_machine_check_at_boot_is_critical_and_said_to_predate_the_boot() {
        // Real: andikleen/mcelog#70, bank 4 status a600000000020408 (UC, PCC) 0.064 s after
        // boot.
        let f = kernel("formats/kernel/public-mce-boot-syslog.txt")
            .run("hardware-error")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(
            f.title
                .contains("Uncorrected hardware error: machine check on CPU 0 bank 4"),
            "{}",
            f.title
        );
        assert!(f.summary.contains("before this boot"), "{}", f.summary);
        // The `Machine check events logged` notice is not counted beside its record.
        assert_eq!(f.figures["uncorrected"], 1.0);
    }

    #[test]
    fn memory_failures_and_firmware_records_are_critical() {
        // Real: four injected memory failures (nccgroup/TriforceLinuxSyscallFuzzer#2), and an
        // APEI record with `already hardware poisoned` (andikleen/mcelog#74).
        let f = kernel("formats/kernel/public-memory-failure-inject-dmesg.txt")
            .run("hardware-error")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.figures["uncorrected"], 4.0);
        assert!(f.title.contains("page 0x39c2 (Recovered)"), "{}", f.title);
        // Handled 18.9 s after boot while running: not a machine check from before the boot.
        assert!(!f.summary.contains("before this boot"), "{}", f.summary);
        let f = kernel("formats/kernel/public-apei-memory-failure-syslog.txt")
            .run("hardware-error")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert!(f.summary.contains("CPU 1 DIMM 5"), "{}", f.summary);
    }

    #[test]
    fn an_undecoded_machine_check_warns_and_thermal_throttling_informs() {
        // Real: mchehab/rasdaemon#155 (bank status 0: not decoded), erpalma/throttled#186.
        let f = kernel("formats/kernel/public-mce-dmesg.txt")
            .run("hardware-error")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.title.contains("not decoded"), "{}", f.title);
        let f = kernel("formats/kernel/public-thermal-dmesg.txt")
            .run("hardware-error")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert!(f.title.contains("10 events"), "{}", f.title);
    }

    /// The real EDAC read error (grondo/edac-utils#10) moved to `when` (dmesg -T), beside a real
    /// PostgreSQL 15 log whose backend died of SIGSEGV at 2026-11-21 17:15:25 UTC.
    fn beside_a_segfault(when: &str) -> Scratch {
        Scratch::new()
            .copy(
                "kernel/dmesg-T.txt",
                "formats/kernel/public-edac-sbridge-read-dmesg-T.txt",
            )
            .edit("kernel/dmesg-T.txt", |t| {
                t.replace("Mon Jan 27 19:27:15 2020", when)
            })
            .copy("postgresql.log", "formats/pglog/pg15-backend-sigsegv.log")
    }

    #[test]
    fn an_error_within_ten_minutes_of_a_segfault_is_tied_to_its_incident() {
        // 9 min 10 s before the crash: tied.
        let f = beside_a_segfault("Sat Nov 21 17:06:15 2026")
            .run("hardware-error")
            .one();
        assert_eq!(f.incident, Some(0));
        assert!(
            f.summary.contains(
                "PostgreSQL server process 17908 (signal 11, SIGSEGV) died, 9 min 10 s after"
            ),
            "{}",
            f.summary
        );
        assert_eq!(f.severity, Severity::Warning, "corrected: severity by kind");
        // 10 min 10 s before: not tied.
        let f = beside_a_segfault("Sat Nov 21 17:05:15 2026")
            .run("hardware-error")
            .one();
        assert_eq!(f.incident, None);
    }

    #[test]
    fn a_kernel_log_without_hardware_errors_is_silent() {
        assert!(
            kernel("formats/kernel/local-dmesg-raw.txt")
                .run("hardware-error")
                .silent()
        );
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("hardware-error")
                .silent()
        );
    }
}
