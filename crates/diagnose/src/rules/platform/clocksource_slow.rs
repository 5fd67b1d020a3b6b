//! ## What it finds
//! The kernel keeps time with a slow clock source: `xen`, `hpet` or `acpi_pm`
//! (`/sys/devices/system/clocksource/clocksource0/current_clocksource`), where `tsc` (x86),
//! `kvm-clock` (KVM guests) and `arch_sys_counter` (arm64) are read in user space through the
//! vDSO in a few tens of nanoseconds.
//!
//! ## Why it matters
//! With those sources `clock_gettime()` leaves user space: a system call, and for `hpet` and
//! `acpi_pm` a device read, around a microsecond each. PostgreSQL reads the clock for every
//! statement (its start, `log_min_duration_statement`, pg_stat_statements), twice per row and
//! plan node under `EXPLAIN ANALYZE`, and twice per I/O with `track_io_timing` on. The
//! PostgreSQL documentation measured 36 ns per reading with `tsc` and 723 ns with `acpi_pm` on
//! the same machine, and an `EXPLAIN ANALYZE` seven times slower; under Xen, `strace` shows
//! each `gettimeofday` as a real system call.
//!
//! ## What to do
//! When the CPU advertises an invariant TSC (`constant_tsc` and `nonstop_tsc` in its flags:
//! same rate whatever the frequency, ticking through sleep states), check that `tsc` is offered
//! (`available_clocksource`), switch (`echo tsc >
//! /sys/devices/system/clocksource/clocksource0/current_clocksource`) and keep it with
//! `clocksource=tsc` on the kernel command line (on Xen guests `tsc=reliable` too, as cloud
//! providers document for theirs). Without an invariant TSC keep the current source: the kernel
//! would mark the TSC unstable. Either way measure with `pg_test_timing` before and after, and
//! keep per-I/O timing (`track_io_timing`) off on a slow clock.
//!
//! ## Thresholds
//! `xen`, `hpet` or `acpi_pm`: a warning ([`SLOW_CLOCKSOURCES`]). Any other source: silent.
//!
//! ## Evidence it needs
//! The clock source (`cpu/clocksource.txt`). Reads when present: the CPU's flags
//! (`cpu/flags.txt`) and `track_io_timing`.
//!
//! ## Knowledge
//! [zh-low-level]: vDSO lets a process read the time without entering the kernel, but under Xen
//! `strace -k` shows every `gettimeofday` as a system call. [pg-test-timing]: 35.96 ns per
//! reading with TSC, 722.92 ns with acpi_pm; `EXPLAIN ANALYZE` 16.6 ms against 115.9 ms.
//! [pg-config] (track_io_timing).

use crate::facts::Facts;
use crate::report::{Finding, Severity};
use crate::rules::support::settings_evidence;
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "clocksource-slow",
    title: "The kernel's clock source makes every timestamp a slow system call",
    severities: &[warning("")],
    needs: &[Input::Clocksource],
    uses: &[Input::CpuFlags, Input::PgSettings],
};

/// Clock sources the vDSO does not read in user space, and what a reading costs.
pub(crate) const SLOW_CLOCKSOURCES: &[(&str, &str)] = &[
    (
        "xen",
        "the Xen paravirtual clock, which the vDSO cannot read on most Xen hosts: each reading \
         is a system call",
    ),
    (
        "hpet",
        "the HPET timer: each reading is a system call and a read of the device's registers, \
         around a microsecond",
    ),
    (
        "acpi_pm",
        "the ACPI power-management timer: each reading is a system call and an I/O port \
         access, around a microsecond (723 ns per reading where tsc took 36 ns in PostgreSQL's \
         documentation)",
    ),
];

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(source) = &facts.host.cpu.clocksource else {
        return Vec::new();
    };
    let Some((name, cost)) = SLOW_CLOCKSOURCES
        .iter()
        .find(|(n, _)| *n == source.value.as_str())
    else {
        return Vec::new();
    };
    let io_timing = facts
        .host
        .postgres
        .setting("track_io_timing")
        .filter(|s| s.is_on());
    let tsc = facts.host.cpu.tsc_flags.as_ref();
    let invariant = facts.host.cpu.invariant_tsc();

    let mut evidence = vec![source.evidence(format!("current clock source {name}"))];
    if let Some(t) = tsc {
        evidence.push(t.evidence(format!(
            "TSC flags: {}",
            if t.value.is_empty() {
                "none".to_owned()
            } else {
                t.value.join(" ")
            }
        )));
    }
    evidence.extend(settings_evidence(facts, &["track_io_timing"]));

    let advice = match invariant {
        Some(true) => format!(
            "The CPU advertises an invariant TSC (constant_tsc and nonstop_tsc in {}): check \
             that tsc is offered (cat /sys/devices/system/clocksource/clocksource0/\
             available_clocksource), switch to it (echo tsc > /sys/devices/system/clocksource/\
             clocksource0/current_clocksource) and keep it with clocksource=tsc on the kernel \
             command line{}. Measure with pg_test_timing before and after.",
            tsc.map_or("cpu/flags.txt", |t| t.path.as_str()),
            if *name == "xen" {
                " (and tsc=reliable on a Xen guest, which otherwise distrusts it)"
            } else {
                ""
            }
        ),
        Some(false) => format!(
            "The CPU does not advertise an invariant TSC (constant_tsc and nonstop_tsc are not \
             both in {}): the kernel would mark tsc unstable, so keep {name}. Measure the cost \
             with pg_test_timing, keep track_io_timing off, and use EXPLAIN (ANALYZE, TIMING \
             OFF) where row counts are enough.",
            tsc.map_or("cpu/flags.txt", |t| t.path.as_str())
        ),
        None => format!(
            "The bundle does not say whether the CPU has an invariant TSC: if grep -wo \
             'constant_tsc\\|nonstop_tsc' /proc/cpuinfo shows both, switch to tsc (echo tsc > \
             /sys/devices/system/clocksource/clocksource0/current_clocksource, then \
             clocksource=tsc on the kernel command line); otherwise keep {name}. Measure with \
             pg_test_timing."
        ),
    };

    let mut f = finding(
        &META,
        Severity::Warning,
        format!("The clock source is {name}: every timestamp is a slow system call"),
    )
    .summary(format!(
        "The kernel keeps time with {cost}. PostgreSQL reads the clock for every statement, \
         twice per row and plan node under EXPLAIN ANALYZE, and twice per I/O with \
         track_io_timing{}.",
        if io_timing.is_some() {
            " (on here)"
        } else {
            ""
        }
    ))
    .recommend(advice)
    .evidence(evidence)
    .figure("slow_clocksource", 1.0)
    .figure(
        "track_io_timing",
        if io_timing.is_some() { 1.0 } else { 0.0 },
    );
    if let Some(i) = invariant {
        f = f.figure("invariant_tsc", if i { 1.0 } else { 0.0 });
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch, fixtures};

    const SOURCE: &str = "cpu/clocksource.txt";

    /// The collected bundle (a KVM guest on tsc whose CPU has an invariant TSC) with its clock
    /// source file edited to `name`.
    fn on(name: &str) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz").write(SOURCE, format!("{name}\n"))
    }

    #[test]
    fn tsc_and_the_fast_paravirtual_clocks_are_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("clocksource-slow")
                .silent()
        );
        for name in [
            "kvm-clock",
            "arch_sys_counter",
            "hyperv_clocksource_tsc_page",
        ] {
            assert!(on(name).run("clocksource-slow").silent(), "{name}");
        }
        // A recorded capture: tsc.
        assert!(
            Scratch::incident("pg15-fork-failure")
                .run("clocksource-slow")
                .silent()
        );
    }

    #[test]
    fn xen_hpet_and_acpi_pm_are_warnings_with_the_switch_to_tsc() {
        for name in ["xen", "hpet", "acpi_pm"] {
            let f = on(name).run("clocksource-slow").one();
            assert_eq!(f.severity, Severity::Warning, "{name}");
            assert_eq!(f.figures["invariant_tsc"], 1.0, "{name}");
            let advice = f.recommendation.unwrap();
            assert!(advice.contains("echo tsc >"), "{name}: {advice}");
            assert_eq!(
                advice.contains("tsc=reliable"),
                name == "xen",
                "{name}: {advice}"
            );
            assert_eq!(
                (f.evidence[0].path.as_str(), f.evidence[0].line),
                (SOURCE, 1)
            );
            assert!(f.evidence.iter().any(|e| e.path == "cpu/flags.txt"));
        }
    }

    #[test]
    fn without_an_invariant_tsc_the_source_is_kept() {
        // The real flags line with nonstop_tsc taken out.
        let flags = std::fs::read_to_string(fixtures().join("formats/system/cpu/flags.txt"))
            .unwrap()
            .replace(" nonstop_tsc", "");
        let f = on("xen")
            .write("cpu/flags.txt", flags)
            .run("clocksource-slow")
            .one();
        assert_eq!(f.figures["invariant_tsc"], 0.0);
        assert!(f.recommendation.unwrap().contains("so keep xen"));
        // No flags file at all: the finding says how to look.
        let f = on("xen")
            .remove("cpu/flags.txt")
            .run("clocksource-slow")
            .one();
        assert!(!f.figures.contains_key("invariant_tsc"));
        assert!(f.recommendation.unwrap().contains("grep -wo"));
    }

    #[test]
    fn track_io_timing_on_is_said() {
        let f = on("acpi_pm")
            .set_line(
                "postgres/pg_settings.txt",
                "track_io_timing|",
                "track_io_timing|on||configuration file|/var/lib/postgresql/15/main/postgresql.conf|f",
            )
            .run("clocksource-slow")
            .one();
        assert_eq!(f.figures["track_io_timing"], 1.0);
        assert!(
            f.summary.contains("track_io_timing (on here)"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn without_the_clock_source_it_is_not_evaluated() {
        assert!(matches!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .remove(SOURCE)
                .run("clocksource-slow"),
            Outcome::NotEvaluated(_)
        ));
    }
}
