//! ## What it finds
//! The perf profile shows kernel time in the audit subsystem (`audit_*`, `__audit_*`): audit
//! rules that check system calls run on every matching call of every process, PostgreSQL's
//! reads, writes and socket calls included.
//!
//! ## Why it matters
//! With broad syscall rules most of the CPU goes to the kernel: system time far above user
//! time, a load average that climbs, throughput that falls, on a host where PostgreSQL is the
//! only workload.
//!
//! ## What to do
//! Review the audit rules (`auditctl -l`, /etc/audit/rules.d) with whoever owns them: keep the
//! rules the policy needs but exclude PostgreSQL's hot system calls (`-F exe!=…/postgres`, `-F
//! auid>=1000`, or watch files with `-w` instead of `-S` rules); `auditctl -e 0` disables
//! auditing to confirm the effect (in agreement with the security policy).
//!
//! ## Thresholds
//! Audit frames in ≥ 5 % of the busy samples: a warning.
//!
//! ## Evidence it needs
//! A perf profile with call graphs; `auditctl -s` and `auditctl -l` when collected (the rule
//! count is named).
//!
//! ## Knowledge
//! [ru-anomalies]: `perf top` on a host at 87 % system time showed `audit_*` functions; after
//! `auditctl -e 0` system time fell eightfold — excessive auditd rules set by the security team.

use crate::facts::Facts;
use crate::human::percent;
use crate::report::{Finding, Severity};
use crate::rules::support::perf_coverage;
use crate::rules::{Input, RuleMeta, finding, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "perf-audit-overhead",
    title: "Kernel audit rules take CPU time",
    severities: &[warning("")],
    needs: &[Input::Perf],
    uses: &[],
};

/// Share of the busy samples from which the rule fires.
pub(crate) const THRESHOLD: f64 = 0.05;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in &facts.perf {
        let share = p.busy_share("audit");
        if share < THRESHOLD {
            continue;
        }
        let cpu = &facts.host.cpu;
        let rules = cpu
            .audit_syscall_rules
            .as_ref()
            .map(|r| {
                format!(
                    " auditctl -l lists {} system-call rule(s) ({}).",
                    r.value, r.path
                )
            })
            .unwrap_or_default();
        let mut evidence = vec![p.evidence(format!("{} of busy samples in audit", percent(share)))];
        evidence.extend(
            cpu.audit_syscall_rules
                .as_ref()
                .map(|r| r.evidence("audit rules")),
        );
        evidence.extend(
            cpu.audit_enabled
                .as_ref()
                .map(|e| e.evidence(format!("enabled {}", e.value))),
        );
        out.push(
            finding(
                &META,
                Severity::Warning,
                format!("{} of the busy CPU time is kernel audit", percent(share)),
            )
            .summary(format!(
                "{} of the busy samples ({}) run audit code in the kernel: every audited system \
                 call of PostgreSQL pays for it.{rules}",
                percent(share),
                perf_coverage(p)
            ))
            .recommend(
                "Review the audit rules (auditctl -l): exclude PostgreSQL's processes from \
                 system-call rules (-F exe!=/usr/lib/postgresql/…/bin/postgres) or watch files \
                 instead; auditctl -e 0 confirms the effect, within what the security policy \
                 allows.",
            )
            .evidence(evidence)
            .figure("audit_share", share)
            .impact(share),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::rules::testing::{FrameIn, Scratch, perf_script};

    #[test]
    fn a_plain_pgbench_profile_is_silent() {
        assert!(
            Scratch::new()
                .copy(
                    "perf/perf-script.txt",
                    "formats/perf/local-pg15-pgbench-a-g.txt"
                )
                .run("perf-audit-overhead")
                .silent()
        );
    }

    #[test]
    fn audit_frames_fire() {
        // A hand-made edge case: three samples, one under audit_filter_syscall (33 %).
        let f = Scratch::new()
            .copy(
                "perf/perf-script.txt",
                "formats/perf/edge-kvm-exit-multi.txt",
            )
            .run("perf-audit-overhead")
            .one();
        assert!((f.figures["audit_share"] - 1.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn an_audit_rule_on_every_syscall_of_the_database_user_fires() {
        // Real capture: `-a always,exit -S all -F uid=<postgres>` under pgbench; the rate
        // fell from 4544 to 630 transactions a second.
        let f = Scratch::incident("pg15-audit-perf")
            .run("perf-audit-overhead")
            .one();
        assert!(f.figures["audit_share"] > 0.15, "{f:#?}");
        assert!(
            f.summary.contains("auditctl -l lists 1 system-call rule"),
            "{}",
            f.summary
        );
    }

    #[test]
    fn a_pgbench_run_without_audit_rules_is_silent() {
        assert!(
            Scratch::incident("pg15-pgbench-baseline-perf")
                .run("perf-audit-overhead")
                .silent()
        );
    }

    #[test]
    fn five_percent_of_samples_in_audit_fire_and_four_do_not() {
        // Hand-made edge cases: 100 samples, 5 (then 4) of them in __audit_syscall_exit.
        let run = |hits| {
            Scratch::new()
                .write(
                    "perf/perf-script.txt",
                    perf_script(100, hits, "__audit_syscall_exit", FrameIn::Kernel),
                )
                .run("perf-audit-overhead")
        };
        assert!((run(5).one().figures["audit_share"] - 0.05).abs() < 1e-9);
        assert!(run(4).silent());
    }
}
