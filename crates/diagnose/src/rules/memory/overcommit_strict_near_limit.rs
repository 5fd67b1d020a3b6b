//! ## What it finds
//! Strict overcommit accounting is on (`vm.overcommit_memory = 2`) and what is committed
//! (`Committed_AS`) is close to what the kernel allows (`CommitLimit`): the next large
//! allocation (a sort, a hash, a new connection) fails.
//!
//! ## Why it matters
//! Mode 2 is the right setting for a database host: a query that asks for too much fails with
//! `ERROR: out of memory` instead of the OOM killer restarting the instance. But when the limit
//! is nearly used up by what is normally there, ordinary queries fail, and a `fork()` for a
//! new connection or an autovacuum worker fails too (`could not fork`).
//!
//! ## What to do
//! When the limit leaves more than a fifth of RAM to the page cache, raise it:
//! `vm.overcommit_ratio` = (80 % × RAM − swap − huge pages) ÷ (RAM − huge pages), so that
//! CommitLimit = swap + (RAM − huge pages) × ratio leaves a fifth of RAM to the cache (the
//! finding computes it; with `vm.overcommit_kbytes` set, the same limit in kB). When the limit
//! already does, lower what is committed instead: Committed_AS counts every private writable
//! mapping of every process (a JVM heap in full, whether touched or not) and PostgreSQL's
//! shared memory while it is not in huge pages. Putting shared memory in huge pages takes it
//! out of Committed_AS (and the pool out of CommitLimit: recompute the ratio); lowering
//! work_mem or max_connections bounds what sessions commit.
//!
//! ## Thresholds
//! Mode 2 and Committed_AS ≥ 90 % of CommitLimit: a warning. From 80 % to 90 %: info, a
//! warning when the PostgreSQL log has `out of memory` errors (allocations already fail at the
//! peaks). Below 80 %, or another mode: silent (overcommit-heuristic watches modes 0 and 1).
//! The recommendation moves PostgreSQL's shared memory into huge pages when it is at least
//! 10 % of Committed_AS and the postmaster maps none.
//!
//! ## Evidence it needs
//! The vm sysctls (overcommit mode, ratio or kbytes) and /proc/meminfo (CommitLimit,
//! Committed_AS, RAM, swap, huge pages); the PostgreSQL log and settings when present.
//!
//! ## Knowledge
//! [fr-memoire]: the derivation "CommitLimit + HP + Cache OS = RAM; Cache OS = 20 % RAM", the
//! sort that fails with `out of memory` once mode 2 is set while the instance stays up,
//! Committed_AS approaching CommitLimit with 500 connections, huge pages leaving both
//! Committed_AS and CommitLimit. [kernel-overcommit] (CommitLimit, Committed_AS,
//! overcommit_kbytes); [pg-kernel-resources] ("Linux Memory Overcommit").

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::support::{commit_limit_for, hugepages_needed, overcommit_ratio_for};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "overcommit-strict-near-limit",
    title: "Strict overcommit is on and Committed_AS is close to CommitLimit",
    severities: &[
        warning("at 90 % of CommitLimit, or from 80 % with out of memory errors in the log"),
        info("from 80 % to 90 % of CommitLimit without out of memory errors"),
    ],
    needs: &[Input::VmSysctls, Input::Meminfo],
    uses: &[Input::PostgresLog, Input::PgSettings, Input::Processes],
};

/// Committed_AS ÷ CommitLimit from which the rule warns.
pub(crate) const WARNING_SHARE: f64 = 0.90;
/// Committed_AS ÷ CommitLimit from which it informs (warns with `out of memory` errors).
pub(crate) const INFO_SHARE: f64 = 0.80;
/// Share of RAM the recommended limit leaves to the page cache.
pub(crate) const CACHE_SHARE: f64 = 0.2;
/// Share of Committed_AS PostgreSQL's shared memory must reach for the finding to suggest
/// moving it into huge pages.
pub(crate) const SHARED_WORTH_SHARE: f64 = 0.10;
/// `out of memory` records cited, at most.
const ERRORS_CITED: usize = 3;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let vm = &facts.host.vm;
    let (Some(mode), Some(mem)) = (&vm.overcommit_memory, &facts.host.memory) else {
        return Vec::new();
    };
    if mode.value != 2 {
        return Vec::new();
    }
    let (Some(limit), Some(committed)) = (&mem.commit_limit, &mem.committed_as) else {
        return Vec::new();
    };
    if limit.value == 0 {
        return Vec::new();
    }
    let share = committed.value as f64 / limit.value as f64;
    if share < INFO_SHARE {
        return Vec::new();
    }
    let oom_errors = facts.log.count("out_of_memory");
    let severity = if share >= WARNING_SHARE || oom_errors > 0 {
        Severity::Warning
    } else {
        Severity::Info
    };

    let ram = mem.ram.value;
    let swap = mem.swap_total.as_ref().map_or(0, |s| s.value);
    let huge = mem.hugepage_pool_bytes();
    let ratio = overcommit_ratio_for(ram, swap, huge, CACHE_SHARE);
    let target = commit_limit_for(ram, swap, huge, ratio);
    let kbytes = vm.overcommit_kbytes.as_ref().filter(|k| k.value > 0);

    let mut evidence = vec![
        mode.evidence("vm.overcommit_memory = 2 (strict)"),
        limit.evidence(format!("CommitLimit {}", human_bytes(limit.value))),
        committed.evidence(format!("Committed_AS {}", human_bytes(committed.value))),
        mem.ram.evidence(format!("MemTotal {}", human_bytes(ram))),
    ];
    if let Some(k) = kbytes {
        evidence.push(k.evidence(format!("vm.overcommit_kbytes = {}", k.value)));
    } else if let Some(r) = &vm.overcommit_ratio {
        evidence.push(r.evidence(format!("vm.overcommit_ratio = {}", r.value)));
    }
    if let Some(s) = &mem.swap_total {
        evidence.push(s.evidence(format!("SwapTotal {}", human_bytes(s.value))));
    }
    evidence.extend(
        facts
            .log
            .oom_errors()
            .into_iter()
            .take(ERRORS_CITED)
            .map(|e| Evidence {
                path: e.path,
                line: e.line,
                what: format!(
                    "ERROR: out of memory{}",
                    e.request_bytes
                        .map(|b| format!(" (failed on a request of {})", human_bytes(b)))
                        .unwrap_or_default()
                ),
                key: None,
                host_file: None,
                host_line: None,
            }),
    );

    let errors = match oom_errors {
        0 => String::new(),
        n => format!(
            " The PostgreSQL log has {n} `out of memory` error{}: allocations already fail \
             at the peaks.",
            if n == 1 { "" } else { "s" }
        ),
    };
    let current = match (kbytes, &vm.overcommit_ratio) {
        (Some(k), _) => format!("vm.overcommit_kbytes = {}", k.value),
        (None, Some(r)) => format!("vm.overcommit_ratio = {}", r.value),
        (None, None) => "the current setting".to_owned(),
    };
    let raise = if target > limit.value + limit.value / 100 {
        let setting = match kbytes {
            Some(_) => format!(
                "vm.overcommit_kbytes = {} (in /etc/sysctl.d/99-postgresql.conf, instead of \
                 {current})",
                target.saturating_sub(swap) / 1024
            ),
            None => format!(
                "vm.overcommit_ratio = {ratio} (in /etc/sysctl.d/99-postgresql.conf, instead \
                 of {current})"
            ),
        };
        format!(
            "Raise the limit: {setting} gives CommitLimit = {} + ({} − {}) × {ratio} % = {}, \
             which still leaves a fifth of RAM to the page cache; today's Committed_AS would \
             be {:.0} % of it.",
            human_bytes(swap),
            human_bytes(ram),
            human_bytes(huge),
            human_bytes(target),
            committed.value as f64 / target as f64 * 100.0
        )
    } else {
        format!(
            "The limit ({current}) already leaves no more than a fifth of RAM to the page \
             cache (a ratio of {ratio} would give {}): raising it would take the cache's \
             share. Lower what is committed instead: find the processes that reserve the most \
             (Committed_AS counts every private writable mapping, touched or not), and bound \
             PostgreSQL's sessions (work_mem × max_connections, see \
             work-mem-exceeds-memory).",
            human_bytes(target)
        )
    };
    let shared = shared_memory_text(facts, committed.value, ram, swap);

    let mut f = finding(
        &META,
        severity,
        format!(
            "Committed_AS is {:.0} % of CommitLimit under strict overcommit ({} of {})",
            share * 100.0,
            human_bytes(committed.value),
            human_bytes(limit.value)
        ),
    )
    .summary(format!(
        "vm.overcommit_memory = 2: the kernel refuses allocations beyond CommitLimit ({}), and \
         {} is already committed; the next large sort or hash, or a fork for a new \
         connection, fails with out of memory.{errors}",
        human_bytes(limit.value),
        human_bytes(committed.value)
    ))
    .recommend(format!("{raise}{shared}"))
    .evidence(evidence)
    .figure("committed_as_bytes", committed.value as f64)
    .figure("commit_limit_bytes", limit.value as f64)
    .figure("committed_share", share)
    .figure("recommended_overcommit_ratio", ratio as f64)
    .figure("recommended_commit_limit_bytes", target as f64)
    .figure("out_of_memory_errors", oom_errors as f64);
    if let Some(k) = kbytes {
        f = f.figure("overcommit_kbytes", k.value as f64);
    }
    vec![f]
}

/// What PostgreSQL's shared memory adds to Committed_AS while it is not in huge pages, and the
/// ratio to use once it is; empty when the bundle does not say, when it already is, or when it
/// is less than [`SHARED_WORTH_SHARE`] of what is committed.
fn shared_memory_text(facts: &Facts<'_>, committed: u64, ram: u64, swap: u64) -> String {
    let in_huge_pages = facts
        .host
        .processes
        .postmaster()
        .and_then(|p| p.hugetlb_bytes)
        .is_some_and(|b| b > 0);
    if in_huge_pages {
        return String::new();
    }
    let Some(need) = hugepages_needed(facts) else {
        return String::new();
    };
    if (need.bytes() as f64) < committed as f64 * SHARED_WORTH_SHARE {
        return String::new();
    }
    let with_pool = overcommit_ratio_for(ram, swap, need.bytes(), CACHE_SHARE);
    format!(
        " PostgreSQL's shared memory ({}) counts in Committed_AS while it is not in huge \
         pages: with vm.nr_hugepages = {} ({}) it leaves Committed_AS, and the pool leaves \
         CommitLimit, so vm.overcommit_ratio becomes {with_pool} (CommitLimit {}).",
        human_bytes(need.bytes()),
        need.pages,
        need.how,
        human_bytes(commit_limit_for(ram, swap, need.bytes(), with_pool))
    )
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const SYSCTL: &str = "memory/sysctl-vm.txt";
    const MEMINFO: &str = "memory/meminfo.txt";

    /// The collected bundle switched to strict overcommit (its ratio is 50: CommitLimit
    /// 12,342,044 kB of 24,684,092 kB of RAM, no swap), with Committed_AS edited to `kb`.
    fn strict_with_committed(kb: u64) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .set_line(
                SYSCTL,
                "/proc/sys/vm/overcommit_memory:",
                "/proc/sys/vm/overcommit_memory:2",
            )
            .set_line(
                MEMINFO,
                "Committed_AS:",
                &format!("Committed_AS:   {kb:>8} kB"),
            )
    }

    #[test]
    fn ninety_percent_warns_and_just_below_informs() {
        // 90 % of 12,342,044 kB is 11,107,839.6 kB.
        let f = strict_with_committed(11_107_840)
            .run("overcommit-strict-near-limit")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(f.figures["committed_share"] >= 0.9);
        let below = strict_with_committed(11_107_839)
            .run("overcommit-strict-near-limit")
            .one();
        assert_eq!(below.severity, Severity::Info);
    }

    #[test]
    fn eighty_percent_informs_and_just_below_is_silent() {
        // 80 % of 12,342,044 kB is 9,873,635.2 kB.
        let f = strict_with_committed(9_873_636)
            .run("overcommit-strict-near-limit")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert!(
            strict_with_committed(9_873_635)
                .run("overcommit-strict-near-limit")
                .silent()
        );
    }

    #[test]
    fn the_ratio_to_raise_to_is_computed_for_this_host() {
        // Ratio 50 leaves half of RAM; 80 leaves a fifth: CommitLimit 19,747,273 kB.
        let f = strict_with_committed(11_107_840)
            .run("overcommit-strict-near-limit")
            .one();
        assert_eq!(f.figures["recommended_overcommit_ratio"], 80.0);
        let text = f.recommendation.unwrap();
        assert!(
            text.contains("vm.overcommit_ratio = 80 (in /etc/sysctl.d/99-postgresql.conf, instead of vm.overcommit_ratio = 50)"),
            "{text}"
        );
        // 38 MiB of shared memory is not worth moving into huge pages for this limit.
        assert!(!text.contains("vm.nr_hugepages"), "{text}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("vm.overcommit_ratio"))
        );
    }

    #[test]
    fn shared_memory_worth_a_tenth_of_committed_is_put_in_huge_pages() {
        // shared_buffers edited to 1 GiB and the pool PostgreSQL would print for it to 1100
        // pages (2.1 GiB, 21 % of the 10.6 GiB committed).
        let settings = "postgres/pg_settings.txt";
        let edited = |pages: u64| {
            strict_with_committed(11_107_840)
                .set_line(
                    settings,
                    "shared_buffers|",
                    "shared_buffers|131072|8kB|configuration file|/var/lib/postgresql/15/main/postgresql.conf|f",
                )
                .set_line(
                    settings,
                    "shared_memory_size_in_huge_pages|",
                    &format!("shared_memory_size_in_huge_pages|{pages}||default||f"),
                )
                .run("overcommit-strict-near-limit")
                .one()
                .recommendation
                .unwrap()
        };
        let text = edited(1100);
        assert!(
            text.contains("vm.nr_hugepages = 1100 (shared_memory_size_in_huge_pages 1100 × 2 MiB, from postgres/pg_settings.txt:265)"),
            "{text}"
        );
        // (0.8 × 24,684,092 − 2,252,800) ÷ (24,684,092 − 2,252,800) = 77.99 %.
        assert!(text.contains("vm.overcommit_ratio becomes 77"), "{text}");
        // A tenth of the 11,107,840 kB committed is 1,110,784 kB: 543 pages (1,112,064 kB)
        // reach it, 542 (1,110,016 kB) do not.
        assert!(edited(543).contains("vm.nr_hugepages = 543"));
        assert!(!edited(542).contains("vm.nr_hugepages"));
    }

    #[test]
    fn a_limit_that_already_leaves_a_fifth_is_not_raised() {
        // Ratio edited to 80 and CommitLimit to what the kernel then computes.
        let f = strict_with_committed(18_000_000)
            .set_line(
                SYSCTL,
                "/proc/sys/vm/overcommit_ratio:",
                "/proc/sys/vm/overcommit_ratio:80",
            )
            .set_line(MEMINFO, "CommitLimit:", "CommitLimit:    19747273 kB")
            .run("overcommit-strict-near-limit")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        let text = f.recommendation.unwrap();
        assert!(text.contains("Lower what is committed"), "{text}");
    }

    #[test]
    fn a_limit_set_in_kilobytes_is_recommended_in_kilobytes() {
        // vm.overcommit_kbytes edited to the 12,342,044 kB the ratio gave: the same
        // CommitLimit, set the other way.
        let f = strict_with_committed(11_107_840)
            .set_line(
                SYSCTL,
                "/proc/sys/vm/overcommit_kbytes:",
                "/proc/sys/vm/overcommit_kbytes:12342044",
            )
            .run("overcommit-strict-near-limit")
            .one();
        assert_eq!(f.figures["overcommit_kbytes"], 12_342_044.0);
        let text = f.recommendation.unwrap();
        // 80 % of 25,276,510,208 B of RAM, no swap: 19,747,273 kB.
        assert!(
            text.contains("vm.overcommit_kbytes = 19747273 (in /etc/sysctl.d/99-postgresql.conf, instead of vm.overcommit_kbytes = 12342044)"),
            "{text}"
        );
    }

    #[test]
    fn out_of_memory_errors_make_eighty_percent_a_warning() {
        // The server log replaced by a real one with an `ERROR: out of memory` (line 155).
        let f = strict_with_committed(9_873_636)
            .copy("postgres/server.log", "formats/pglog/pg15-events.log")
            .run("overcommit-strict-near-limit")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["out_of_memory_errors"], 1.0);
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path == "postgres/server.log" && e.line == 155)
        );
    }

    #[test]
    fn the_default_mode_is_silent_and_no_sysctls_is_not_evaluated() {
        let heuristic = Scratch::bundle("formats/bundle/pg15-collected.tar.gz").set_line(
            MEMINFO,
            "Committed_AS:",
            "Committed_AS:   12000000 kB",
        );
        assert!(heuristic.run("overcommit-strict-near-limit").silent());
        assert!(matches!(
            heuristic.remove(SYSCTL).run("overcommit-strict-near-limit"),
            Outcome::NotEvaluated(_)
        ));
    }
}
