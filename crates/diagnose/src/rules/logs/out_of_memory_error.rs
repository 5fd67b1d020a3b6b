//! ## What it finds
//! `ERROR: out of memory` in the PostgreSQL log, in any language the parser reads: a backend
//! asked for memory (`DETAIL: Failed on request of size N in memory context "X"`) and `malloc`
//! failed. The finding gives how many, when, the statement, the request and its memory
//! context, and the memory-context dump the backend wrote before the error (its grand total
//! and largest contexts; stderr logs only).
//!
//! ## Why it matters
//! The statement failed and its client got the error; the instance stayed up (unlike an OOM
//! kill, which restarts every session). Why the allocation failed decides what to change:
//!
//! - a resource limit on the server's processes: `ulimit -v` / `LimitAS=` (RLIMIT_AS counts the
//!   whole address space, the shared memory every backend maps included) or `ulimit -d` /
//!   `LimitDATA=`;
//! - `vm.overcommit_memory = 2`: the kernel refused to commit more than CommitLimit. That is
//!   the setting doing its job: the runaway query failed alone;
//! - what the backend was doing: one huge value built whole (a request of hundreds of MB: a
//!   text, bytea, array or jsonb from `repeat`, `string_agg`, `array_agg`, a large field), or
//!   executor memory beyond `work_mem × hash_mem_multiplier` (a hash aggregate or hash join
//!   whose estimate was wrong; before PostgreSQL 13 a hash aggregate never spills), or many
//!   nodes, each allowed `work_mem`.
//!
//! ## What to do
//! Fix the statement first (its estimates with `ANALYZE`, the value it builds). Under a
//! process limit, remove it (`LimitAS=infinity`, no `ulimit -v` in the start script) and bound
//! memory with `vm.overcommit_memory = 2` or a memory cgroup, which count memory really used;
//! the finding shows how much of the limit the shared memory already takes. Under strict
//! overcommit, keep the setting; raise `vm.overcommit_ratio` only if legitimate queries fail
//! (the ratio that leaves a fifth of RAM to the page cache is computed for the host). Lower
//! `work_mem` for the role or statement when the executor's contexts exceed it.
//!
//! ## Thresholds
//! One `out of memory` error is a warning (a client saw a failed statement). A request of at
//! least 256 MiB ([`HUGE_REQUEST_BYTES`]) is read as one value built whole; one under 1 MiB
//! ([`SMALL_REQUEST_BYTES`]) as the last straw of a process that had used up what it could
//! allocate. The executor's contexts in the dump (ExecutorState, ExprContext, Hash*,
//! TupleSort*, …) are compared with `work_mem × hash_mem_multiplier` when the settings are
//! known. The finding describes the error with a huge request if there is one, else the one
//! whose dump is largest.
//!
//! ## Evidence it needs
//! The PostgreSQL log. Reads when present: the settings (work_mem, hash_mem_multiplier,
//! shared memory), the vm sysctls and /proc/meminfo (overcommit mode, CommitLimit,
//! Committed_AS), the postmaster's /proc/PID/limits (RLIMIT_AS, RLIMIT_DATA).
//!
//! ## Knowledge
//! [fr-memoire]: with `vm.overcommit_memory = 2` the 50-million-row sort fails with `ERROR: out
//! of memory`, `Failed on request of size 536870912 in memory context "ExecutorState"`, and
//! "the session stays open, the instance stays up"; before PostgreSQL 13 a HashAggregate is
//! not held to work_mem. [kernel-overcommit] (CommitLimit, Committed_AS); [man-rlimits]
//! (RLIMIT_AS, RLIMIT_DATA); [pg-config] (work_mem, hash_mem_multiplier);
//! [pg-kernel-resources] ("Linux Memory Overcommit").

use pgmortem_parse::pglog::PgEvent;

use crate::facts::{Facts, Known, OomError};
use crate::human::human_bytes;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::support::{commit_limit_for, counted, overcommit_ratio_for, settings_evidence};
use crate::rules::{Input, RuleMeta, finding, warning};
use pgmortem_parse::system::ResourceLimit;

pub(crate) const META: RuleMeta = RuleMeta {
    id: "out-of-memory-error",
    title: "Statements failed with ERROR: out of memory",
    severities: &[warning("")],
    needs: &[Input::PostgresLog],
    uses: &[
        Input::PgSettings,
        Input::VmSysctls,
        Input::Meminfo,
        Input::Processes,
    ],
};

/// A request this large is one value built whole.
pub(crate) const HUGE_REQUEST_BYTES: u64 = 256 << 20;
/// A request this small failed because the process had used up what it could allocate.
pub(crate) const SMALL_REQUEST_BYTES: u64 = 1 << 20;
/// Error records cited as evidence.
const EVIDENCE_RECORDS: usize = 5;
/// Share of RAM the recommended overcommit ratio leaves to the page cache.
const CACHE_SHARE: f64 = 0.2;

/// Memory contexts of the executor: held to work_mem (or meant to be).
const EXECUTOR_CONTEXTS: &[&str] = &[
    "ExecutorState",
    "ExprContext",
    "Hash",
    "TupleSort",
    "Caller tuples",
    "AggContext",
    "WindowAgg",
];

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(kind) = facts.log.kind("out_of_memory") else {
        return Vec::new();
    };
    let errors = facts.log.oom_errors();
    // A huge request when there is one, else the error whose process held the most.
    let huge = errors
        .iter()
        .filter(|e| e.request_bytes.is_some_and(|b| b >= HUGE_REQUEST_BYTES))
        .max_by_key(|e| e.request_bytes);
    let Some(worst) = huge.or_else(|| {
        errors.iter().max_by_key(|e| {
            (
                e.dump_total_bytes.unwrap_or(0),
                e.request_bytes.unwrap_or(0),
            )
        })
    }) else {
        return Vec::new();
    };
    let pg = &facts.host.postgres;
    let per_node = pg
        .bytes("work_mem")
        .map(|w| (w as f64 * pg.number("hash_mem_multiplier").unwrap_or(1.0)) as u64);
    let executor: u64 = worst
        .largest_contexts
        .iter()
        .filter(|(name, _)| is_executor(name))
        .map(|(_, b)| b)
        .sum();
    let executor_over = per_node.filter(|p| huge.is_none() && executor > *p);

    let mut evidence = facts.log.evidence(
        |e| matches!(e, PgEvent::OutOfMemory { .. }),
        EVIDENCE_RECORDS,
        |r| match &r.event {
            Some(PgEvent::OutOfMemory {
                request_bytes,
                memory_context,
            }) => format!(
                "ERROR: out of memory{}{}",
                request_bytes
                    .map(|b| format!(", a request of {}", human_bytes(b)))
                    .unwrap_or_default(),
                memory_context
                    .as_deref()
                    .map(|c| format!(" in {c}"))
                    .unwrap_or_default()
            ),
            _ => String::new(),
        },
    );

    let request = worst.request_bytes.map_or_else(String::new, |b| {
        let context = worst
            .memory_context
            .as_deref()
            .map(|c| format!(" in memory context {c}"))
            .unwrap_or_default();
        if b >= HUGE_REQUEST_BYTES {
            format!(
                " It failed on a request of {}{context}: one value built whole (a text, bytea, \
                 array or jsonb).",
                human_bytes(b)
            )
        } else if b < SMALL_REQUEST_BYTES {
            format!(
                " It failed on a request of only {}{context}: the process had already used up \
                 what it could allocate.",
                human_bytes(b)
            )
        } else {
            format!(" It failed on a request of {}{context}.", human_bytes(b))
        }
    });
    let statement = worst
        .statement
        .as_deref()
        .map(|s| format!(" Its statement: {}", crate::human::quote_cut(s, 300)))
        .unwrap_or_default();
    let held = what_held(worst, executor, executor_over);
    let Refusal {
        text: cause,
        advice: cause_advice,
        evidence: cause_evidence,
        figures: cause_figures,
    } = why_refused(facts, worst);
    evidence.extend(cause_evidence);
    evidence.extend(settings_evidence(
        facts,
        &["work_mem", "hash_mem_multiplier"],
    ));

    let mut advice = Vec::new();
    if let Some(b) = huge.and_then(|h| h.request_bytes) {
        advice.push(format!(
            "The statement builds one value of {} whole: no setting bounds that; change the \
             query (aggregate or stream the value in parts, cap what it reads).",
            human_bytes(b)
        ));
    } else if let Some(limit) = executor_over {
        advice.push(format!(
            "The executor held {} against a work_mem × hash_mem_multiplier of {} in the \
             settings: look for work_mem raised for the session, role or database (the \
             application's SET work_mem; SELECT * FROM pg_db_role_setting) and for a hash \
             aggregate or hash join whose estimate was wrong (EXPLAIN the statement, ANALYZE its \
             tables).",
            human_bytes(executor),
            human_bytes(limit)
        ));
    }
    advice.extend(cause_advice);
    if advice.is_empty() {
        advice.push(
            "Find what the statement holds (the memory-context dump names it; a stderr log \
             keeps the dump) and fix the statement; keep work_mem × the connections within \
             memory."
                .to_owned(),
        );
    }

    let mut f = finding(
        &META,
        Severity::Warning,
        format!(
            "{} failed with ERROR: out of memory",
            counted(kind.count, "statement")
        ),
    )
    .summary(format!(
        "PostgreSQL logged `out of memory` {}: the statement failed, its client got the error, \
         the instance stayed up.{request}{held}{cause}{statement}",
        kind.describe()
    ))
    .recommend(advice.join(" "))
    .evidence(evidence)
    .figure("out_of_memory_errors", kind.count as f64);
    if let Some(w) = kind.window_seconds() {
        f = f.figure("window_seconds", w);
    }
    if let Some(b) = worst.request_bytes {
        f = f.figure("request_bytes", b as f64);
    }
    if let Some(t) = worst.dump_total_bytes {
        f = f.figure("dump_grand_total_bytes", t as f64);
    }
    if let Some((_, b)) = worst.largest_contexts.first() {
        f = f.figure("largest_context_bytes", *b as f64);
    }
    if executor > 0 {
        f = f.figure("executor_context_bytes", executor as f64);
    }
    for (name, value) in cause_figures {
        f = f.figure(name, value);
    }
    vec![f]
}

/// The context is the executor's.
fn is_executor(name: &str) -> bool {
    EXECUTOR_CONTEXTS.iter().any(|c| name.starts_with(c))
}

/// What the memory-context dump says the backend held.
fn what_held(e: &OomError, executor: u64, executor_over: Option<u64>) -> String {
    let Some(total) = e.dump_total_bytes else {
        return String::new();
    };
    let contexts: Vec<String> = e
        .largest_contexts
        .iter()
        .take(3)
        .map(|(n, b)| format!("{n} {}", human_bytes(*b)))
        .collect();
    let mut out = format!(
        " The memory-context dump before the error totals {}; its largest contexts: {}.",
        human_bytes(total),
        contexts.join(", ")
    );
    if let Some(limit) = executor_over {
        out.push_str(&format!(
            " The executor's contexts hold {}, far more than the settings' work_mem × \
             hash_mem_multiplier ({}): the session ran with a larger work_mem, or a hash node \
             outgrew its estimate (before PostgreSQL 13 a hash aggregate never spills).",
            human_bytes(executor),
            human_bytes(limit)
        ));
    }
    out
}

/// Why the kernel refused, as the finding tells it.
struct Refusal {
    /// For the summary.
    text: String,
    /// For the recommendation.
    advice: Vec<String>,
    /// The lines it stands on.
    evidence: Vec<Evidence>,
    /// Its numbers.
    figures: Vec<(&'static str, f64)>,
}

/// Why the kernel refused: a process limit, strict overcommit, or not shown.
fn why_refused(facts: &Facts<'_>, worst: &OomError) -> Refusal {
    let shared = facts
        .host
        .postgres
        .bytes("shared_memory_size")
        .or_else(|| facts.host.postgres.bytes("shared_buffers"));
    let limit = facts.host.processes.limits.as_ref().and_then(|l| {
        let set = |k: &Option<Known<ResourceLimit>>| k.clone().filter(|k| k.value.soft.is_some());
        set(&l.max_address_space)
            .map(|k| (k, "RLIMIT_AS", "ulimit -v", "LimitAS"))
            .or_else(|| set(&l.max_data_size).map(|k| (k, "RLIMIT_DATA", "ulimit -d", "LimitDATA")))
    });
    if let Some((k, name, ulimit, unit)) = limit {
        let bytes = k.value.soft.unwrap_or(0);
        let room = match (name, shared) {
            ("RLIMIT_AS", Some(s)) => format!(
                ", of which the {} of shared memory every backend maps leaves at most {} for \
                 the rest{}",
                human_bytes(s),
                human_bytes(bytes.saturating_sub(s)),
                worst
                    .dump_total_bytes
                    .map(|t| format!(
                        " (the dump's {} and the shared memory make {})",
                        human_bytes(t),
                        human_bytes(t.saturating_add(s))
                    ))
                    .unwrap_or_default()
            ),
            _ => String::new(),
        };
        return Refusal {
            text: format!(
                " The postmaster runs under {name} = {} ({ulimit}){room}: its backends inherit \
                 it, and malloc fails past it whatever memory the host has free.",
                human_bytes(bytes)
            ),
            advice: vec![format!(
                "Remove the {} {name} limit from the server's start ({unit}=infinity in its \
                 systemd unit, no {ulimit} in its start script) and bound memory with \
                 vm.overcommit_memory = 2 or a memory cgroup, which count memory really used.",
                human_bytes(bytes)
            )],
            evidence: vec![k.evidence(format!("{name} {}", human_bytes(bytes)))],
            figures: vec![(
                if name == "RLIMIT_AS" {
                    "rlimit_as_bytes"
                } else {
                    "rlimit_data_bytes"
                },
                bytes as f64,
            )],
        };
    }
    let (Some(mode), Some(mem)) = (&facts.host.vm.overcommit_memory, &facts.host.memory) else {
        return Refusal {
            text: " The bundle shows neither the overcommit mode nor the server's limits: a \
                   `ulimit -v` or strict overcommit are the usual reasons malloc fails."
                .to_owned(),
            advice: Vec::new(),
            evidence: Vec::new(),
            figures: Vec::new(),
        };
    };
    let mut evidence = vec![mode.evidence(format!("vm.overcommit_memory = {}", mode.value))];
    if mode.value == 2 {
        let limit = mem.commit_limit.as_ref();
        let committed = mem.committed_as.as_ref();
        evidence.extend(limit.map(|l| l.evidence(format!("CommitLimit {}", human_bytes(l.value)))));
        evidence.extend(
            committed.map(|c| c.evidence(format!("Committed_AS {}", human_bytes(c.value)))),
        );
        let ram = mem.ram.value;
        let swap = mem.swap_total.as_ref().map_or(0, |s| s.value);
        let huge = mem.hugepage_pool_bytes();
        let ratio = overcommit_ratio_for(ram, swap, huge, CACHE_SHARE);
        let current = facts.host.vm.overcommit_ratio.as_ref().map(|r| r.value);
        let raise = match current {
            Some(c) if (c as u64) < ratio => format!(
                " If legitimate statements fail, vm.overcommit_ratio can go from {c} to {ratio} \
                 (CommitLimit {}) and still leave a fifth of RAM to the page cache.",
                human_bytes(commit_limit_for(ram, swap, huge, ratio))
            ),
            _ => String::new(),
        };
        return Refusal {
            text: format!(
                " vm.overcommit_memory = 2: the kernel refused to commit past CommitLimit{}{}; \
                 that is strict overcommit doing its job.",
                limit
                    .map(|l| format!(" ({})", human_bytes(l.value)))
                    .unwrap_or_default(),
                committed
                    .map(|c| format!(", Committed_AS {} when collected", human_bytes(c.value)))
                    .unwrap_or_default()
            ),
            advice: vec![format!(
                "Keep vm.overcommit_memory = 2: the runaway statement failed alone.{raise}"
            )],
            evidence,
            figures: limit
                .map(|l| vec![("commit_limit_bytes", l.value as f64)])
                .unwrap_or_default(),
        };
    }
    let swap = mem.swap_total.as_ref().map_or(0, |s| s.value);
    let request = worst.request_bytes.unwrap_or(0);
    let text = if mode.value == 0 && request > mem.ram.value.saturating_add(swap) {
        format!(
            " vm.overcommit_memory = 0 refuses a single request larger than RAM + swap ({}).",
            human_bytes(mem.ram.value.saturating_add(swap))
        )
    } else {
        format!(
            " vm.overcommit_memory = {} does not refuse such a request by itself: a limit on \
             the server's processes the bundle does not show (ulimit -v in its start script) \
             is the likely reason.",
            mode.value
        )
    };
    Refusal {
        text,
        advice: Vec::new(),
        evidence,
        figures: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const LOG: &str = "postgres/server.log";
    const LIMITS: &str = "processes/16859/limits";

    /// The collected bundle with the events log as its server log: an `out of memory` under a
    /// 1.2 GB `ulimit -v`, with its memory-context dump.
    fn bundle_with_events() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .copy(LOG, "formats/pglog/pg15-events.log")
    }

    #[test]
    fn the_recorded_error_with_its_request_context_and_dump() {
        let f = Scratch::new()
            .copy("postgresql.log", "formats/pglog/pg15-events.log")
            .run("out-of-memory-error")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["out_of_memory_errors"], 1.0);
        assert_eq!(f.figures["request_bytes"], 1_000_000_004.0);
        assert_eq!(f.figures["dump_grand_total_bytes"], 1_001_087_400.0);
        assert_eq!(f.figures["largest_context_bytes"], 1_000_008_256.0);
        assert!(
            f.summary.contains("in memory context MessageContext"),
            "{}",
            f.summary
        );
        assert!(
            f.summary
                .contains("its largest contexts: ExprContext 954 MiB"),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("repeat('x', 1000000000)"),
            "{}",
            f.summary
        );
        assert!(f.summary.contains("one value built whole"), "{}", f.summary);
        assert!(
            f.recommendation
                .unwrap()
                .contains("builds one value of 954 MiB")
        );
        assert_eq!(
            (f.evidence[0].path.as_str(), f.evidence[0].line),
            ("postgresql.log", 155)
        );
    }

    #[test]
    fn every_language_gives_the_same_request_and_context() {
        for lang in ["de", "es", "fr", "ja", "ru", "zh_CN"] {
            let f = Scratch::new()
                .copy(
                    "postgresql.log",
                    &format!("formats/pglog/pg15-{lang}-sigkill.log"),
                )
                .run("out-of-memory-error")
                .one();
            assert_eq!(f.figures["request_bytes"], 1_000_000_004.0, "{lang}");
            assert_eq!(f.figures["dump_grand_total_bytes"], 1_119_392.0, "{lang}");
            assert!(
                f.summary.contains("memory context ExprContext"),
                "{lang}: {}",
                f.summary
            );
        }
    }

    #[test]
    fn requests_at_256_mib_and_1_mib_and_one_byte_below() {
        // The recorded DETAIL line edited to a request at the threshold, then one byte below.
        let at = |size: u64| {
            Scratch::new()
                .copy("postgresql.log", "formats/pglog/pg15-events.log")
                .set_line(
                    "postgresql.log",
                    "2026-11-21 17:58:23.828 UTC [22428] DETAIL:",
                    &format!(
                        "2026-11-21 17:58:23.828 UTC [22428] DETAIL:  Failed on request of size \
                         {size} in memory context \"MessageContext\"."
                    ),
                )
                .run("out-of-memory-error")
                .one()
        };
        let huge = at(256 << 20);
        assert!(
            huge.summary.contains("one value built whole"),
            "{}",
            huge.summary
        );
        let below = at((256 << 20) - 1);
        assert_eq!(below.figures["request_bytes"], ((256u64 << 20) - 1) as f64);
        assert!(
            !below.summary.contains("one value built whole"),
            "{}",
            below.summary
        );
        // Under 1 MiB the request is the last straw; at 1 MiB it is an ordinary request.
        assert!(at((1 << 20) - 1).summary.contains("a request of only"));
        let ordinary = at(1 << 20);
        assert!(
            ordinary
                .summary
                .contains("It failed on a request of 1 MiB in"),
            "{}",
            ordinary.summary
        );
    }

    #[test]
    fn an_address_space_limit_on_the_postmaster_is_named_with_the_room_it_leaves() {
        // The postmaster's real limits file edited to the recorder's `ulimit -v` of 1.2 GB.
        let f = bundle_with_events()
            .set_line(
                LIMITS,
                "Max address space",
                "Max address space         1258291200           1258291200           bytes     ",
            )
            .run("out-of-memory-error")
            .one();
        // 1.2 GB minus the 38 MB of shared_memory_size.
        assert!(
            f.summary.contains("RLIMIT_AS = 1.2 GiB (ulimit -v)"),
            "{}",
            f.summary
        );
        assert!(
            f.summary.contains("leaves at most 1.1 GiB"),
            "{}",
            f.summary
        );
        assert!(
            f.recommendation
                .as_ref()
                .unwrap()
                .contains("LimitAS=infinity")
        );
        assert!(f.evidence.iter().any(|e| e.path == LIMITS && e.line == 11));
    }

    #[test]
    fn strict_overcommit_is_the_setting_doing_its_job() {
        // The bundle's sysctls edited to mode 2 with ratio 50; its limits are unlimited.
        let f = bundle_with_events()
            .set_line(
                "memory/sysctl-vm.txt",
                "/proc/sys/vm/overcommit_memory:",
                "/proc/sys/vm/overcommit_memory:2",
            )
            .set_line(
                "memory/sysctl-vm.txt",
                "/proc/sys/vm/overcommit_ratio:",
                "/proc/sys/vm/overcommit_ratio:50",
            )
            .run("out-of-memory-error")
            .one();
        assert!(
            f.summary.contains("strict overcommit doing its job"),
            "{}",
            f.summary
        );
        let advice = f.recommendation.unwrap();
        assert!(advice.contains("from 50 to 80"), "{advice}");
        // Without the edit the host overcommits (mode 0), which does not refuse 954 MiB on
        // 23.5 GiB of RAM by itself.
        let heuristic = bundle_with_events().run("out-of-memory-error").one();
        assert!(
            heuristic.summary.contains("likely reason"),
            "{}",
            heuristic.summary
        );
    }

    #[test]
    fn the_recorded_capture_under_ulimit_v_names_the_limit_and_the_hash_aggregate() {
        // Three `SET work_mem = '2GB'` hash aggregates under `ulimit -v 1200000`.
        let f = Scratch::incident("pg15-ulimit-v-out-of-memory")
            .run("out-of-memory-error")
            .one();
        assert_eq!(f.figures["out_of_memory_errors"], 3.0);
        assert!(f.summary.contains("3 times between"), "{}", f.summary);
        assert!(f.summary.contains("a request of only"), "{}", f.summary);
        // RLIMIT_AS 1228800000 bytes, from the postmaster's limits file.
        assert!(
            f.summary.contains("RLIMIT_AS = 1.1 GiB (ulimit -v)"),
            "{}",
            f.summary
        );
        assert_eq!(f.figures["rlimit_as_bytes"], 1_228_800_000.0);
        assert!(f.summary.contains("HashAgg meta context"), "{}", f.summary);
        assert!(
            f.summary.contains("a hash node outgrew its estimate"),
            "{}",
            f.summary
        );
        assert!(f.figures["executor_context_bytes"] > f.figures["dump_grand_total_bytes"] * 0.9);
        let advice = f.recommendation.unwrap();
        assert!(advice.contains("pg_db_role_setting"), "{advice}");
        assert!(advice.contains("LimitAS=infinity"), "{advice}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path.ends_with("/limits") && e.line == 11)
        );
        assert_eq!(
            f.evidence
                .iter()
                .filter(|e| e.path == "postgres/server.log")
                .count(),
            3
        );
    }

    #[test]
    fn a_log_without_the_error_is_silent_and_no_log_is_not_evaluated() {
        assert!(
            Scratch::new()
                .copy("postgresql.log", "formats/pglog/pg15-backend-sigkill.log")
                .run("out-of-memory-error")
                .silent()
        );
        assert!(matches!(
            Scratch::new()
                .copy("memory/meminfo.txt", "formats/system/meminfo/meminfo.txt")
                .run("out-of-memory-error"),
            Outcome::NotEvaluated(_)
        ));
    }
}
