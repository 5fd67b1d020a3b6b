//! ## What it finds
//! The postmaster's memory cgroup has a limit too small for the configuration (shared memory
//! plus the connections' own cost take half of it or more), or the cgroup's OOM killer has
//! killed processes in it (`oom_kill` of memory.oom_control or memory.events, or a limit above
//! it was hit, as the kernel's OOM report shows), or usage has
//! reached the limit (`memory.failcnt`, the peak near the limit); or (cgroup v2) its
//! `memory.high` sits below the limit, so the kernel throttles it before the limit is hit.
//!
//! ## Why it matters
//! A memory cgroup limit is a small host inside the host: when PostgreSQL's processes (and
//! the page cache they cause, which the cgroup also counts) reach it, the kernel reclaims the
//! cgroup's cache first, then its OOM killer kills a backend and the instance crash-restarts,
//! however much RAM the host has free. A limit sized for shared_buffers alone leaves nothing
//! for sorts, hashes and the cache the database reads through. A v2 `memory.high` below
//! `memory.max` acts sooner and more quietly: past it no process is killed, but the kernel
//! reclaims the cgroup's memory and makes every allocating process wait for it, so PostgreSQL
//! slows down (page cache thrown out, queries stalled in reclaim) with nothing in its log.
//!
//! ## What to do
//! Size the limit for what PostgreSQL needs: at least twice its floor (shared memory plus
//! max_connections × a connection's real cost, so half remains for queries and the page
//! cache), and enough for the worst case of the memory settings (work-mem-exceeds-memory); or
//! keep the limit and lower shared_buffers, max_connections (a pooler) and work_mem to fit.
//! Set it where the cgroup is made: systemd `MemoryMax=` of the unit, the container's
//! `--memory`, a Kubernetes `resources.limits.memory`. When the limit already holds both and
//! the cgroup still killed, the memory came from beyond the settings (a session's own
//! `SET work_mem`, an extension): bound that query rather than the limit. A `memory.high`
//! below the limit goes up to the limit (or `max`: systemd `MemoryHigh=`), unless the
//! throttling is wanted; then it is sized like the limit.
//!
//! ## Thresholds
//! The floor — shared memory (`shared_memory_size`, else shared_buffers) + max_connections ×
//! the mean `Pss_Anon + VmPTE` of the client backends (2 MiB each when the bundle has none) —
//! at 50 % of the limit or more: a warning. OOM kills in the cgroup (its `oom_kill` counter, or
//! memory-cgroup OOM kills the kernel log shows at its limit or at the limit of a cgroup above
//! it: `oom_memcg` is the postmaster's cgroup or an ancestor of it): a warning, critical when
//! one of them killed a process of the instance (the finding is tied to it). A kill at another
//! cgroup's limit (another cluster's, another job's) does not count here: kernel-oom-kill
//! reports it. The limit reached (`failcnt` > 0, or the peak at 95 % of the limit or more)
//! with neither: info. A `memory.high` below `memory.max` (and below RAM): info, a warning when
//! `memory.events` counts throttling (`high` above 0). A limit at or above RAM counts as none.
//!
//! ## Evidence it needs
//! The postmaster's memory cgroup files (cgroup/PID/memory.*: `memory.max`, `memory.high` and
//! `memory.events` on v2); the server settings, the processes, /proc/meminfo and the kernel
//! log when present.
//!
//! ## Knowledge
//! [zh-low-level]: Kubernetes memory requests and limits, PostgreSQL in layers of cgroups, VMs
//! and containers where each layer can slow or stop it. [ru-memory-overhead]: a connection's
//! real cost is Pss_Anon + VmPTE, under 2 MiB with huge pages. [kernel-oom] (memory cgroup
//! OOM, oom_kill counters); [pg-kernel-resources] ("Linux Memory Overcommit").

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::CgroupRelation;
use crate::report::{Finding, Severity};
use crate::rules::support::{
    FLOOR_SHARE, LimitNeed, cgroup_relation, counted as counted_noun, kill_evidence,
    oom_kills as oom_kills_of,
};
use crate::rules::{Input, RuleMeta, critical, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "cgroup-memory-limit",
    title: "The postmaster's memory cgroup limit is too small, or was hit",
    severities: &[
        critical("when the kernel log shows a memory-cgroup OOM kill of a PostgreSQL process"),
        warning(
            "when the configuration's floor takes half the limit, the cgroup counts OOM kills, or \
             memory.high throttled",
        ),
        info("when usage reached the limit, or memory.high is below it, and nothing worse"),
    ],
    needs: &[Input::Cgroup],
    uses: &[
        Input::PgSettings,
        Input::Processes,
        Input::Meminfo,
        Input::KernelLog,
    ],
};

/// Peak ÷ limit from which the limit counts as reached.
pub(crate) const PEAK_SHARE: f64 = 0.95;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(cg) = &facts.host.cgroup else {
        return Vec::new();
    };
    let ram = facts.host.memory.as_ref().map(|m| m.ram.value);
    let limit = cg
        .limit
        .as_ref()
        .filter(|l| ram.is_none_or(|r| l.value < r));
    let oom_kills = cg.oom_kills.as_ref().map_or(0, |k| k.value);
    // The memory cgroup OOM kills the kernel log shows that count for this cgroup: at its own
    // limit, or at a limit above it (which bounds it too); where the cgroups are is unknown, the
    // kills of PostgreSQL processes not shown to be strangers'.
    let counted: Vec<_> = oom_kills_of(facts)
        .filter(|(_, _, k)| k.constraint.as_deref() == Some("memcg"))
        .filter_map(|(i, incident, k)| {
            let at = match k.memcg.as_ref().and_then(|m| m.path.as_deref()) {
                Some(hit) => cgroup_relation(facts, hit),
                None => None,
            };
            match at {
                Some(CgroupRelation::Same) => Some((i, incident, k, false)),
                Some(CgroupRelation::Ancestor) => Some((i, incident, k, true)),
                Some(_) => None,
                None => (k.comm.starts_with("postgres") && !k.is_stranger())
                    .then_some((i, incident, k, false)),
            }
        })
        .collect();
    // Those whose victim was the instance's (or not shown to be a stranger's PostgreSQL).
    let memcg_kills: Vec<_> = counted
        .iter()
        .filter(|(_, _, k, _)| {
            k.owner.as_ref().is_some_and(|o| o.is_instance())
                || (k.owner.is_none() && k.comm.starts_with("postgres"))
        })
        .map(|(i, incident, k, _)| (*i, *incident, *k))
        .collect();
    let own_limit_kills = counted.iter().filter(|(_, _, _, above)| !above).count() as u64;
    let above: Vec<_> = counted.iter().filter(|(_, _, _, above)| *above).collect();
    let killed = oom_kills.max(own_limit_kills);
    let pg = &facts.host.postgres;

    // What the configuration needs before any query memory, and at worst.
    let need = LimitNeed::of(facts);
    let floor_facts = need.floor.as_ref();
    let floor = floor_facts.map(|f| f.total);
    let shared = floor_facts.map(|f| f.shared);

    let mut severity = None::<Severity>;
    let mut raise = |s: Severity| severity = Some(severity.map_or(s, |o| o.max(s)));
    let mut said = Vec::new();
    let mut too_small = false;
    if let (Some(l), Some(fl)) = (limit, floor)
        && fl as f64 >= FLOOR_SHARE * l.value as f64
    {
        too_small = true;
        raise(Severity::Warning);
        said.push(format!(
            "{}, {:.0} % of the {} limit: little is left for sorts, hashes and the page cache, \
             which the cgroup also counts.",
            floor_facts.map_or_else(String::new, |f| f.describe()),
            fl as f64 / l.value as f64 * 100.0,
            human_bytes(l.value)
        ));
    }
    if killed > 0 || !above.is_empty() {
        raise(if memcg_kills.is_empty() {
            Severity::Warning
        } else {
            Severity::Critical
        });
    }
    if oom_kills > 0 {
        said.push(format!(
            "The cgroup's OOM killer has killed {oom_kills} process{} in it{}.",
            if oom_kills == 1 { "" } else { "es" },
            match memcg_kills.first() {
                Some((_, _, k)) => format!(
                    "; the kernel log shows the memory cgroup OOM kill of {} {}",
                    crate::human::quote(&k.comm),
                    k.pid
                ),
                None => String::new(),
            }
        ));
    } else if own_limit_kills > 0 {
        said.push(format!(
            "The kernel log shows {} memory cgroup OOM kill{} at its limit{}.",
            own_limit_kills,
            if own_limit_kills == 1 { "" } else { "s" },
            match memcg_kills.first() {
                Some((_, _, k)) => format!(" ({} {})", crate::human::quote(&k.comm), k.pid),
                None => String::new(),
            }
        ));
    }
    for (_, _, k, _) in &above {
        let hit = k
            .memcg
            .as_ref()
            .and_then(|m| m.path.as_deref())
            .map_or_else(|| "?".to_owned(), crate::human::quote);
        said.push(format!(
            "The limit of {hit}, a cgroup above the postmaster's, was hit: the OOM killer \
             killed {} {}{}, and the same limit bounds PostgreSQL.",
            crate::human::quote(&k.comm),
            k.pid,
            match k.owner.as_ref() {
                Some(o) if !o.is_instance() => format!(" ({})", o.why),
                _ => String::new(),
            }
        ));
    }
    let failcnt = cg.failcnt.as_ref().map_or(0, |f| f.value);
    let peak = cg.peak.as_ref().map(|p| p.value);
    let mut reached = false;
    if let Some(l) = limit {
        let peak_reached = peak.is_some_and(|p| p as f64 >= PEAK_SHARE * l.value as f64);
        if failcnt > 0 || peak_reached {
            reached = true;
            raise(Severity::Info);
            said.push(format!(
                "Usage has reached the limit{}{}: the kernel reclaimed the cgroup's page cache \
                 (or failed allocations) to stay under it.",
                if failcnt > 0 {
                    format!(" {failcnt} times (memory.failcnt)")
                } else {
                    String::new()
                },
                peak.map(|p| format!(
                    ", peaking at {} ({:.0} %)",
                    human_bytes(p),
                    p as f64 / l.value as f64 * 100.0
                ))
                .unwrap_or_default()
            ));
        }
    }
    let limit_problem = too_small || reached || killed > 0 || !above.is_empty();
    let high = cg
        .high
        .as_ref()
        .filter(|h| limit.is_none_or(|l| h.value < l.value) && ram.is_none_or(|r| h.value < r));
    let throttled = cg.high_events.as_ref().map_or(0, |e| e.value);
    if let Some(h) = high {
        raise(if throttled > 0 {
            Severity::Warning
        } else {
            Severity::Info
        });
        said.push(format!(
            "memory.high is {}, {}: past it the kernel reclaims the cgroup's memory and makes \
             every allocating process wait for it, so PostgreSQL slows down before any limit \
             is hit{}.",
            human_bytes(h.value),
            match limit {
                Some(l) => format!("below the {} limit (memory.max)", human_bytes(l.value)),
                None => "and memory.max sets no lower limit".to_owned(),
            },
            if throttled > 0 {
                format!(
                    "; memory.events counts {throttled} time{} it was throttled (high)",
                    if throttled == 1 { "" } else { "s" }
                )
            } else {
                String::new()
            }
        ));
    }
    let Some(severity) = severity else {
        return Vec::new();
    };

    let worst = need.worst.as_ref();
    let mut fix = Vec::new();
    if !limit_problem {
        // Only memory.high to say: its advice follows.
    } else if let Some(l) = limit {
        let wants = need.wants(l.value);
        let killed = killed > 0 || !above.is_empty();
        let settings_fit = worst.is_some_and(|w| w.total <= l.value);
        if !wants.is_empty() {
            fix.push(format!(
                "Size the limit ({}, now {}) for PostgreSQL: {}.",
                l.path,
                human_bytes(l.value),
                wants.join("; ")
            ));
            if killed && settings_fit {
                fix.push(format!(
                    "The worst case of the settings ({}) is under the limit, yet the cgroup \
                     killed: the memory also came from beyond the settings (a session's own \
                     SET work_mem, an extension, something else in the cgroup); find the \
                     query the OOM report and the log name, and bound it.",
                    human_bytes(worst.map_or(0, |w| w.total))
                ));
            }
        } else if floor.is_some() && worst.is_some() {
            fix.push(format!(
                "The limit ({}, {}) holds twice the configuration's floor and the worst case \
                 of its memory settings: what ran out came from beyond the settings (a \
                 session's own SET work_mem, an extension, something else in the cgroup). \
                 Find the query the OOM report and the log name, and bound it (work_mem per \
                 role, statement_timeout) rather than the limit.",
                l.path,
                human_bytes(l.value)
            ));
        } else {
            fix.push(format!(
                "Size the limit ({}, now {}) for shared_buffers, the connections and their \
                 work_mem, with room for the page cache.",
                l.path,
                human_bytes(l.value)
            ));
        }
        if too_small && let Some(s) = shared {
            let room = (FLOOR_SHARE * l.value as f64) as u64;
            let connections_cost = floor.unwrap_or(s).saturating_sub(s);
            if room > connections_cost {
                fix.push(format!(
                    "Or keep it and bring shared memory under {} (now {}) or max_connections \
                     down with a pooler.",
                    human_bytes(room - connections_cost),
                    pg.setting("shared_buffers")
                        .map_or_else(|| "unknown".to_owned(), |s| s.describe())
                ));
            }
        }
        fix.push(
            "The limit is set where the cgroup is made: MemoryMax= of the systemd unit, \
             --memory of the container, resources.limits.memory in Kubernetes."
                .to_owned(),
        );
    } else if killed > 0 || !above.is_empty() {
        let hit = above
            .first()
            .and_then(|(_, _, k, _)| k.memcg.as_ref()?.path.as_deref())
            .map(|p| format!(": {p}"))
            .unwrap_or_default();
        fix.push(format!(
            "The cgroup itself is not limited below RAM: the kill came from a limit above it \
             (a parent cgroup, the container or the pod{hit}): size that one for PostgreSQL."
        ));
    }

    if let Some(h) = high {
        let floor_text = floor
            .map(|fl| {
                format!(
                    ", and at least the configuration's floor of {}",
                    human_bytes(fl)
                )
            })
            .unwrap_or_default();
        fix.push(format!(
            "Raise memory.high ({}, now {}) to {}max (systemd MemoryHigh=, a container's or \
             Kubernetes' memory.high), unless the throttling is wanted: then size it for \
             PostgreSQL like a limit{floor_text}.",
            h.path,
            human_bytes(h.value),
            limit.map_or_else(String::new, |l| format!(
                "the limit ({}) or to ",
                human_bytes(l.value)
            ))
        ));
    }

    let mut evidence = Vec::new();
    if let Some(l) = &cg.limit {
        evidence.push(l.evidence(format!("memory limit {}", human_bytes(l.value))));
    }
    if let Some(u) = &cg.usage {
        evidence.push(u.evidence(format!("usage {}", human_bytes(u.value))));
    }
    if let Some(p) = &cg.peak {
        evidence.push(p.evidence(format!("peak usage {}", human_bytes(p.value))));
    }
    if let Some(f) = &cg.failcnt {
        evidence.push(f.evidence(format!("failcnt {}", f.value)));
    }
    if let Some(k) = &cg.oom_kills {
        evidence.push(k.evidence(format!("oom_kill {}", k.value)));
    }
    if let Some(h) = high {
        evidence.push(h.evidence(format!("memory.high {}", human_bytes(h.value))));
        if let Some(e) = &cg.high_events {
            evidence.push(e.evidence(format!("throttled over memory.high {} times", e.value)));
        }
    }
    if too_small {
        evidence.extend(
            floor_facts
                .iter()
                .flat_map(|f| &f.settings)
                .filter_map(|s| s.evidence()),
        );
    }
    evidence.extend(counted.iter().map(|(_, _, k, _)| {
        kill_evidence(
            k,
            format!(
                "memory cgroup OOM kill of {} {}",
                crate::human::quote(&k.comm),
                k.pid
            ),
        )
    }));

    let title = match (limit, killed) {
        _ if !limit_problem => format!(
            "The postmaster's memory cgroup is throttled from {} (memory.high), {}",
            high.map_or_else(String::new, |h| human_bytes(h.value)),
            limit.map_or_else(
                || "with no lower limit".to_owned(),
                |l| format!("below its {} limit", human_bytes(l.value))
            )
        ),
        (_, 0) if !above.is_empty() => format!(
            "The memory cgroup above the postmaster's ({}) hit its limit: {}",
            above
                .first()
                .and_then(|(_, _, k, _)| k.memcg.as_ref()?.path.as_deref())
                .unwrap_or("?"),
            counted_noun(above.len() as u64, "OOM kill")
        ),
        (Some(l), _) if killed == 0 => format!(
            "The postmaster's memory cgroup limit of {} is {}",
            human_bytes(l.value),
            if too_small {
                "too small for the configuration"
            } else {
                "reached"
            }
        ),
        (Some(l), n) => format!(
            "The postmaster's memory cgroup (limit {}) has had {n} OOM kill{}",
            human_bytes(l.value),
            if n == 1 { "" } else { "s" }
        ),
        (None, n) => format!(
            "The postmaster's memory cgroup has had {n} OOM kill{}",
            if n == 1 { "" } else { "s" }
        ),
    };
    let mut f = finding(&META, severity, title)
        .summary(said.join(" "))
        .recommend(fix.join(" "))
        .evidence(evidence)
        .figure("oom_kills", oom_kills as f64)
        .figure("kills_above", above.len() as f64)
        .figure("failcnt", failcnt as f64);
    if let Some(l) = limit {
        f = f.figure("limit_bytes", l.value as f64);
        if let Some(fl) = floor {
            f = f
                .figure("floor_bytes", fl as f64)
                .figure("floor_share", fl as f64 / l.value as f64);
        }
        if let Some(r) = need.recommended(l.value) {
            f = f.figure("recommended_limit_bytes", r as f64);
        }
    }
    if let Some(h) = high {
        f = f
            .figure("high_bytes", h.value as f64)
            .figure("high_events", throttled as f64);
    }
    if let Some(u) = &cg.usage {
        f = f.figure("usage_bytes", u.value as f64);
    }
    if let Some(p) = peak {
        f = f.figure("peak_bytes", p as f64);
    }
    if let Some((index, incident, _)) = memcg_kills.first() {
        f = f.incident(*index).confidence(incident.confidence);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const CGROUP: &str = "cgroup/16859";

    /// The collected bundle: a 1 GiB cgroup, usage 70 MB, peak 86 MB, failcnt 0, no OOM
    /// kill; 38 MiB of shared memory and 20 connections at a measured 1465 kB.
    fn collected() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
    }

    fn shared_memory_mb(mb: u64) -> Scratch {
        collected().set_line(
            "postgres/pg_settings.txt",
            "shared_memory_size|",
            &format!("shared_memory_size|{mb}|MB|default||f"),
        )
    }

    #[test]
    fn the_collected_cgroup_is_silent() {
        assert!(collected().run("cgroup-memory-limit").silent());
    }

    #[test]
    fn a_floor_of_half_the_limit_is_a_warning() {
        // 484 MB + 20 × 1,500,160 B = 537,513,984 B ≥ 512 MiB; 483 MB gives 536,465,408 B.
        let f = shared_memory_mb(484).run("cgroup-memory-limit").one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["floor_bytes"], 537_513_984.0);
        assert!(f.summary.contains("measured"), "{}", f.summary);
        let text = f.recommendation.unwrap();
        assert!(text.contains("at least 1.0 GiB (twice the floor"), "{text}");
        // The larger of twice the floor (1,075,027,968 B) and the worst case, 8 MiB × 28
        // processes (20 connections, 8 parallel workers) + 484 MB + 192 MiB = 943,718,400 B,
        // with a fifth to spare.
        assert_eq!(f.figures["recommended_limit_bytes"], 1_179_648_000.0);
        assert!(
            text.contains("cgroup/16859/memory.limit_in_bytes"),
            "{text}"
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("shared_memory_size"))
        );
        assert!(shared_memory_mb(483).run("cgroup-memory-limit").silent());
    }

    #[test]
    fn without_backends_a_connection_is_assumed_to_cost_2_mib() {
        // The two client backends' files removed: 484 MB + 20 × 2 MiB = 549,453,824 B.
        let mut s = shared_memory_mb(484);
        for p in s.paths("processes/1689") {
            s = s.remove(&p);
        }
        let f = s.run("cgroup-memory-limit").one();
        assert_eq!(f.figures["floor_bytes"], 549_453_824.0);
        assert!(f.summary.contains("assumed"), "{}", f.summary);
    }

    #[test]
    fn an_oom_kill_in_the_cgroup_is_a_warning() {
        let f = collected()
            .set_line(
                &format!("{CGROUP}/memory.oom_control"),
                "oom_kill ",
                "oom_kill 1",
            )
            .run("cgroup-memory-limit")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["oom_kills"], 1.0);
        assert!(f.title.contains("1 OOM kill"), "{}", f.title);
        // 1 GiB holds twice the 67 MiB floor and the 710 MiB worst case with a fifth spare.
        assert!(!f.figures.contains_key("recommended_limit_bytes"));
        let text = f.recommendation.unwrap();
        assert!(text.contains("from beyond the settings"), "{text}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("oom_kill") && e.line == 3)
        );
    }

    #[test]
    fn an_unlimited_cgroup_that_killed_points_above_it() {
        // The limit edited to what cgroup v1 prints for no limit, oom_kill to 1.
        let f = collected()
            .write(
                &format!("{CGROUP}/memory.limit_in_bytes"),
                "9223372036854771712\n",
            )
            .set_line(
                &format!("{CGROUP}/memory.oom_control"),
                "oom_kill ",
                "oom_kill 1",
            )
            .run("cgroup-memory-limit")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert!(!f.figures.contains_key("limit_bytes"));
        assert!(f.recommendation.unwrap().contains("not limited below RAM"),);
    }

    #[test]
    fn the_limit_reached_is_info() {
        // failcnt edited to 1.
        let f = collected()
            .write(&format!("{CGROUP}/memory.failcnt"), "1\n")
            .run("cgroup-memory-limit")
            .one();
        assert_eq!(f.severity, Severity::Info);
        // The peak edited to 95 % of 1 GiB (1,020,054,732.8 B) and one byte under.
        let peak = |b: u64| {
            collected()
                .write(
                    &format!("{CGROUP}/memory.max_usage_in_bytes"),
                    format!("{b}\n"),
                )
                .run("cgroup-memory-limit")
        };
        assert_eq!(peak(1_020_054_733).one().severity, Severity::Info);
        assert!(peak(1_020_054_732).silent());
    }

    #[test]
    fn the_recorded_memcg_kill_is_critical_and_tied() {
        // 512 MiB limit, oom_kill 1, peak at the limit; 143 MiB + 100 × 2 MiB = 343 MiB floor
        // (no client backend survived the crash-restart to measure).
        let f = Scratch::incident("pg15-memcg-oom-work-mem")
            .run("cgroup-memory-limit")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, Some(0));
        assert_eq!(f.figures["oom_kills"], 1.0);
        assert_eq!(f.figures["limit_bytes"], (512u64 << 20) as f64);
        assert_eq!(f.figures["floor_bytes"], ((143u64 + 200) << 20) as f64);
        assert!(f.summary.contains("`postgres` 32691"), "{}", f.summary);
        assert!(
            f.summary.contains("Usage has reached the limit"),
            "{}",
            f.summary
        );
        let text = f.recommendation.unwrap();
        assert!(text.contains("worst case"), "{text}");
    }

    #[test]
    fn the_recorded_postmaster_kill_counts_two_kills() {
        let f = Scratch::incident("pg15-oom-kill-postmaster")
            .run("cgroup-memory-limit")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.figures["oom_kills"], 2.0);
        assert!(f.summary.contains("`postgres` 23749"), "{}", f.summary);
        // 8 MiB × 28 processes + 275 MiB + 192 MiB = 691 MiB: under 80 % of the 1 GiB limit;
        // the sort that ran out had SET work_mem = '4GB' itself.
        let text = f.recommendation.unwrap();
        assert!(!text.contains("to hold the worst case"), "{text}");
        assert!(text.contains("beyond the settings"), "{text}");
    }

    /// Two clusters on one host, collected for main (2 GiB cgroup, no kill in it): the other
    /// cluster's backend 25039 was OOM-killed at its own cgroup's 512 MiB limit; the kill line
    /// of both kernel logs with `from` replaced by `to`.
    fn two_clusters(from: &str, to: &str) -> Scratch {
        Scratch::incident("pg15-two-clusters-other-oom").edit_all("kernel/dmesg", |t| {
            assert!(t.contains(from), "{from}");
            t.replace(from, to)
        })
    }

    const OTHER_CG: &str = "/pgmortem-record/pgmortem-rec-pg15-two-clusters-other";
    const MAIN_CG: &str = "/pgmortem-record/pgmortem-rec-pg15-two-clusters";

    #[test]
    fn another_clusters_kill_at_its_own_limit_is_not_this_cgroups() {
        // Critical, "has had 0 OOM kills", before the kill's cgroup was read.
        assert!(two_clusters("", "").run("cgroup-memory-limit").silent());
    }

    #[test]
    fn a_strangers_kill_at_a_limit_above_the_postmasters_is_a_warning() {
        let f = two_clusters(
            &format!("oom_memcg={OTHER_CG},"),
            "oom_memcg=/pgmortem-record,",
        )
        .run("cgroup-memory-limit")
        .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            f.title,
            "The memory cgroup above the postmaster's (/pgmortem-record) hit its limit: 1 OOM kill"
        );
        assert_eq!(f.figures["oom_kills"], 0.0);
        assert_eq!(f.figures["kills_above"], 1.0);
        assert!(
            f.summary.contains(
                "The limit of `/pgmortem-record`, a cgroup above the postmaster's, was hit: the \
                 OOM killer killed `postgres` 25039 (it ran in memory cgroup"
            ),
            "{}",
            f.summary
        );
        assert_eq!(f.incident, None);
    }

    #[test]
    fn a_kill_at_the_postmasters_limit_counts_though_the_counter_says_0() {
        // Both cgroups of the kill edited to main's: the kernel log shows a kill of main's at
        // its limit, while memory.oom_control (read at collection) says 0.
        let f = two_clusters(
            &format!("oom_memcg={OTHER_CG},task_memcg={OTHER_CG},"),
            &format!("oom_memcg={MAIN_CG},task_memcg={MAIN_CG},"),
        )
        .run("cgroup-memory-limit")
        .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(
            f.title,
            "The postmaster's memory cgroup (limit 2.0 GiB) has had 1 OOM kill"
        );
        assert!(
            f.summary.contains(
                "The kernel log shows 1 memory cgroup OOM kill at its limit (`postgres` 25039)"
            ),
            "{}",
            f.summary
        );
    }

    #[test]
    fn the_same_kill_collected_for_its_own_cluster_is_critical() {
        let f = Scratch::incident("pg15-two-clusters-own-oom")
            .run("cgroup-memory-limit")
            .one();
        assert_eq!(f.severity, Severity::Critical);
        assert_eq!(f.incident, Some(0));
        assert!(f.title.contains("has had 1 OOM kill"), "{}", f.title);
    }

    #[test]
    fn no_title_states_0_oom_kills() {
        for s in [
            two_clusters("", ""),
            two_clusters(
                &format!("oom_memcg={OTHER_CG},"),
                "oom_memcg=/pgmortem-record,",
            ),
            collected().write(&format!("{CGROUP}/memory.failcnt"), "1\n"),
        ] {
            for f in s.run("cgroup-memory-limit").findings() {
                assert!(!f.title.contains(" 0 OOM kill"), "{}", f.title);
            }
        }
    }

    /// The collected bundle's cgroup as cgroup v2 shows one: `memory.max` (1 GiB), `max` and
    /// `high` (the memory.events counters, as the kernel prints them), usage 70 MB; `high`
    /// written to memory.high.
    fn v2(max: &str, high: &str, high_events: u64) -> Scratch {
        let mut s = collected();
        for p in s.paths(&format!("{CGROUP}/")) {
            s = s.remove(&p);
        }
        s.write(&format!("{CGROUP}/memory.max"), format!("{max}\n"))
            .write(&format!("{CGROUP}/memory.high"), format!("{high}\n"))
            .write(&format!("{CGROUP}/memory.current"), "73400320\n")
            .write(
                &format!("{CGROUP}/memory.events"),
                format!("low 0\nhigh {high_events}\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n"),
            )
    }

    #[test]
    fn memory_high_below_the_limit_throttles_first() {
        let f = v2("1073741824", "805306368", 0)
            .run("cgroup-memory-limit")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.figures["high_bytes"], (768u64 << 20) as f64);
        assert!(
            f.title
                .contains("throttled from 768 MiB (memory.high), below its 1.0 GiB limit"),
            "{}",
            f.title
        );
        assert!(
            f.summary
                .contains("memory.high is 768 MiB, below the 1.0 GiB limit (memory.max)"),
            "{}",
            f.summary
        );
        let text = f.recommendation.unwrap();
        assert!(
            text.contains(
                "Raise memory.high (cgroup/16859/memory.high, now 768 MiB) to the limit (1.0 GiB)"
            ),
            "{text}"
        );
        // Nothing about the limit itself: it was neither too small nor reached.
        assert!(!text.contains("beyond the settings"), "{text}");
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("memory.high"))
        );
    }

    #[test]
    fn throttling_counted_in_memory_events_is_a_warning() {
        let f = v2("1073741824", "805306368", 12)
            .run("cgroup-memory-limit")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["high_events"], 12.0);
        assert!(f.summary.contains("throttled (high)"), "{}", f.summary);
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("high") && e.line == 2)
        );
    }

    #[test]
    fn memory_high_at_or_above_the_limit_or_max_is_silent() {
        for high in ["1073741824", "1073741825", "max"] {
            assert!(
                v2("1073741824", high, 0)
                    .run("cgroup-memory-limit")
                    .silent(),
                "{high}"
            );
        }
        // One byte under the limit counts.
        let f = v2("1073741824", "1073741823", 0)
            .run("cgroup-memory-limit")
            .one();
        assert_eq!(f.severity, Severity::Info);
    }

    #[test]
    fn memory_high_without_a_limit_is_the_only_bound() {
        let f = v2("max", "805306368", 0).run("cgroup-memory-limit").one();
        assert!(
            f.summary.contains("and memory.max sets no lower limit"),
            "{}",
            f.summary
        );
        let text = f.recommendation.unwrap();
        assert!(
            text.contains("Raise memory.high (cgroup/16859/memory.high, now 768 MiB) to max"),
            "{text}"
        );
        assert!(!text.contains("not limited below RAM"), "{text}");
        // At or above RAM (24 GiB here) it never throttles before the host runs out.
        assert!(
            v2("max", "25769803776", 0)
                .run("cgroup-memory-limit")
                .silent()
        );
    }

    #[test]
    fn without_cgroup_files_it_is_not_evaluated() {
        let mut s = collected();
        for p in s.paths("cgroup/") {
            s = s.remove(&p);
        }
        assert!(matches!(
            s.run("cgroup-memory-limit"),
            Outcome::NotEvaluated(_)
        ));
    }
}
