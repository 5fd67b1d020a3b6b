//! ## What it finds
//! Page tables take a large share of RAM (`PageTables` of /proc/meminfo), and the PostgreSQL
//! processes' own page tables (`VmPTE`) say how much of it is theirs. The finding gives what a
//! connection really costs on this host, `Pss_Anon + VmPTE`, beside the RSS `ps` shows.
//!
//! ## Why it matters
//! Without huge pages, every backend that reads shared_buffers builds 8 bytes of page tables
//! per 4 kB page it touched: 2 MiB per GiB of shared_buffers, per connection, kept for the
//! connection's lifetime. Hundreds of long-lived connections turn that into gigabytes of
//! kernel memory, taken from the page cache, counted neither by `ps` (RSS shows shared pages
//! instead) nor by CommitLimit.
//!
//! ## What to do
//! Put shared memory in huge pages (`vm.nr_hugepages` from
//! `shared_memory_size_in_huge_pages`, `huge_pages = on`): with 2 MiB pages a backend maps
//! shared_buffers with 512 times fewer entries. And hold fewer connections: a pooler
//! (PgBouncer in transaction mode) multiplexes many clients over a few server connections,
//! each of which costs the `Pss_Anon + VmPTE` the finding measured. When PostgreSQL holds little
//! of the page tables, look for the programs that do (`grep VmPTE /proc/*/status`).
//!
//! ## Thresholds
//! PageTables ≥ 5 % of RAM: a warning; from 2 % to 5 %: info; below, silent. PostgreSQL's
//! share is the sum of its processes' VmPTE; under half, the finding says the rest belongs to
//! other programs.
//!
//! ## Evidence it needs
//! /proc/meminfo; the PostgreSQL processes' status and smaps_rollup, and the server settings,
//! when present.
//!
//! ## Knowledge
//! [fr-memoire]: VmPTE from 280 kB to 2336 kB after one backend read 1 GB of shared_buffers,
//! PageTables from 13 MB to 1.2 GB with 500 such connections ("2 MB × 500 connections is the
//! lost gigabyte"), 224 kB with huge pages. [ru-memory-overhead]: RSS misleads, Pss_Anon +
//! VmPTE is a connection's cost, 7.6 MiB with huge_pages = off and 1.3 MiB with on.
//! [kernel-overcommit] (the /proc/meminfo description of PageTables).

use crate::facts::{Facts, PgProcess};
use crate::human::human_bytes;
use crate::report::{Finding, Severity};
use crate::rules::support::{connection_cost, hugepages_needed};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "page-tables-bloat",
    title: "Page tables take a large share of RAM",
    severities: &[
        warning("at 5 % of RAM or more"),
        info("from 2 % to 5 % of RAM"),
    ],
    needs: &[Input::Meminfo],
    uses: &[Input::Processes, Input::PgSettings],
};

/// PageTables ÷ MemTotal from which the rule warns.
pub(crate) const WARNING_SHARE: f64 = 0.05;
/// PageTables ÷ MemTotal from which it informs.
pub(crate) const INFO_SHARE: f64 = 0.02;
/// PostgreSQL's share of the page tables under which the rest is called other programs'.
pub(crate) const POSTGRES_MAJORITY: f64 = 0.5;
/// Processes cited by their VmPTE, at most.
const CITED: usize = 3;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(mem) = &facts.host.memory else {
        return Vec::new();
    };
    let Some(tables) = &mem.page_tables else {
        return Vec::new();
    };
    let ram = mem.ram.value;
    if ram == 0 {
        return Vec::new();
    }
    let share = tables.value as f64 / ram as f64;
    if share < INFO_SHARE {
        return Vec::new();
    }
    let severity = if share >= WARNING_SHARE {
        Severity::Warning
    } else {
        Severity::Info
    };
    let processes = &facts.host.processes.processes;
    let measured = processes.iter().any(|p| p.page_table_bytes.is_some());
    let postgres_tables: u64 = processes.iter().filter_map(|p| p.page_table_bytes).sum();
    let postgres_share = postgres_tables as f64 / tables.value.max(1) as f64;
    let others = measured && postgres_share < POSTGRES_MAJORITY;
    let cost = connection_cost(facts);
    let pg = &facts.host.postgres;
    let in_huge_pages = facts
        .host
        .processes
        .postmaster()
        .and_then(|p| p.hugetlb_bytes)
        .is_some_and(|b| b > 0);

    let mut summary = format!(
        "PageTables is {} of {} of RAM ({:.1} %): kernel memory the page cache loses.",
        human_bytes(tables.value),
        human_bytes(ram),
        share * 100.0
    );
    if measured {
        summary.push_str(&format!(
            " PostgreSQL's {} processes hold {} of it (their VmPTE, {:.0} %){}.",
            processes.len(),
            human_bytes(postgres_tables),
            postgres_share * 100.0,
            if others {
                "; the rest belongs to other programs"
            } else {
                ""
            }
        ));
    }
    if let Some(c) = &cost {
        summary.push_str(&format!(
            " A connection really costs {} on this host (mean {} + VmPTE of {} client \
             backends), not the {} of RSS ps shows (which counts the shared pages it touched).",
            human_bytes(c.mean_real),
            if c.basis == "pss_anon" {
                "Pss_Anon"
            } else {
                "RssAnon"
            },
            c.backends,
            human_bytes(c.mean_rss)
        ));
    }
    if let Some(sb) = pg.bytes("shared_buffers")
        && !in_huge_pages
    {
        summary.push_str(&format!(
            " With shared_buffers = {} in 4 kB pages, each connection that reads all of it \
             builds {} of page tables.",
            human_bytes(sb),
            human_bytes(sb / 512)
        ));
    }

    let mut advice = Vec::new();
    if others {
        advice.push(format!(
            "Most page tables are not PostgreSQL's: find the programs that hold the other {} \
             (grep VmPTE /proc/*/status).",
            human_bytes(tables.value.saturating_sub(postgres_tables))
        ));
    }
    if !others && !in_huge_pages {
        match hugepages_needed(facts) {
            Some(need) => advice.push(format!(
                "Put shared memory in huge pages: vm.nr_hugepages = {} ({}) and huge_pages = \
                 on, then restart; each backend then maps shared memory with {} times fewer \
                 page-table entries.",
                need.pages,
                need.how,
                need.page_size / 4096
            )),
            None => advice.push(
                "Put shared memory in huge pages (vm.nr_hugepages from \
                 shared_memory_size_in_huge_pages, huge_pages = on): each backend then maps \
                 it with 512 times fewer page-table entries."
                    .to_owned(),
            ),
        }
    }
    if !others {
        let connections = pg.number("max_connections").map(|n| n as u64);
        let pooler = match (&cost, connections) {
            (Some(c), Some(m)) => format!(
                "Hold fewer server connections with a pooler (PgBouncer, transaction mode): \
                 each costs {} here (Pss_Anon + VmPTE), so max_connections = {m} can reach {m} \
                 × {} = {}; each connection fewer saves its page tables ({} now on average).",
                human_bytes(c.mean_real),
                human_bytes(c.mean_real),
                human_bytes(c.mean_real.saturating_mul(m)),
                human_bytes(c.mean_page_tables)
            ),
            (Some(c), None) => format!(
                "Hold fewer server connections with a pooler (PgBouncer, transaction mode): \
                 each costs {} here (Pss_Anon + VmPTE).",
                human_bytes(c.mean_real)
            ),
            _ => "Hold fewer server connections with a pooler (PgBouncer, transaction mode): \
                  each one's page tables grow with the shared memory it touches."
                .to_owned(),
        };
        advice.push(pooler);
    }

    let mut evidence = vec![
        tables.evidence(format!("PageTables {}", human_bytes(tables.value))),
        mem.ram.evidence(format!("MemTotal {}", human_bytes(ram))),
    ];
    let mut largest: Vec<&PgProcess> = processes
        .iter()
        .filter(|p| p.page_table_bytes.is_some())
        .collect();
    largest.sort_by_key(|p| std::cmp::Reverse(p.page_table_bytes));
    evidence.extend(largest.iter().take(CITED).filter_map(|p| {
        p.evidence(
            "VmPTE",
            format!(
                "{} (pid {}) VmPTE {}",
                p.role,
                p.pid,
                human_bytes(p.page_table_bytes.unwrap_or(0))
            ),
        )
    }));
    if let Some(e) = pg.setting("shared_buffers").and_then(|s| s.evidence()) {
        evidence.push(e);
    }
    if let Some(e) = pg.setting("max_connections").and_then(|s| s.evidence()) {
        evidence.push(e);
    }

    let mut f = finding(
        &META,
        severity,
        format!(
            "Page tables take {} ({:.1} % of RAM)",
            human_bytes(tables.value),
            share * 100.0
        ),
    )
    .summary(summary)
    .recommend(advice.join(" "))
    .evidence(evidence)
    .figure("page_tables_bytes", tables.value as f64)
    .figure("page_tables_share", share)
    .impact(tables.value as f64);
    if measured {
        f = f
            .figure("postgres_page_tables_bytes", postgres_tables as f64)
            .figure("postgres_page_tables_share", postgres_share);
    }
    if let Some(c) = &cost {
        f = f
            .figure("backends", c.backends as f64)
            .figure("mean_real_bytes", c.mean_real as f64)
            .figure("mean_rss_bytes", c.mean_rss as f64)
            .figure("mean_page_tables_bytes", c.mean_page_tables as f64);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const MEMINFO: &str = "memory/meminfo.txt";

    /// The collected bundle (24,684,092 kB of RAM, PageTables 7004 kB) with PageTables edited.
    fn page_tables(kb: u64) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz").set_line(
            MEMINFO,
            "PageTables:",
            &format!("PageTables:     {kb:>8} kB"),
        )
    }

    /// `n` more connections: the active backend 16893's status, smaps_rollup and
    /// oom_score_adj copied under new pids with their process titles, its VmPTE edited to the
    /// 2336 kB [fr-memoire] measured after a backend read 1 GB of shared_buffers.
    fn with_connections(mut s: Scratch, n: u32) -> Scratch {
        s = s.set_line("processes/16893/status", "VmPTE:", "VmPTE:\t    2336 kB");
        let mut titles = String::new();
        for pid in 30_000..30_000 + n {
            for file in ["status", "smaps_rollup", "oom_score_adj"] {
                s = s.duplicate(
                    &format!("processes/16893/{file}"),
                    &format!("processes/{pid}/{file}"),
                );
            }
            titles.push_str(&format!(
                "{pid} postgres: postgres postgres [local] idle                                \n"
            ));
        }
        s.append("processes/postgres-titles.txt", &titles)
    }

    #[test]
    fn the_collected_host_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("page-tables-bloat")
                .silent()
        );
    }

    #[test]
    fn five_percent_warns_two_informs_and_below_is_silent() {
        // 5 % of 24,684,092 kB is 1,234,204.6 kB; 2 % is 493,681.84 kB.
        let f = page_tables(1_234_205).run("page-tables-bloat").one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            page_tables(1_234_204)
                .run("page-tables-bloat")
                .one()
                .severity,
            Severity::Info
        );
        assert_eq!(
            page_tables(493_682).run("page-tables-bloat").one().severity,
            Severity::Info
        );
        assert!(page_tables(493_681).run("page-tables-bloat").silent());
    }

    #[test]
    fn the_real_cost_of_a_connection_is_pss_anon_plus_vmpte() {
        // Backends 16892 (Pss_Anon 1313 kB + VmPTE 140 kB, RSS 12464 kB) and 16893 (1333 +
        // 144 kB, RSS 12900 kB).
        let f = page_tables(1_234_205).run("page-tables-bloat").one();
        assert_eq!(f.figures["backends"], 2.0);
        assert_eq!(f.figures["mean_real_bytes"], (1465u64 * 1024) as f64);
        assert_eq!(f.figures["mean_rss_bytes"], (12682u64 * 1024) as f64);
        assert!(f.summary.contains("really costs 1 MiB"), "{}", f.summary);
        // PostgreSQL's eight processes hold 1060 kB of the 1.2 GiB: someone else's.
        assert_eq!(
            f.figures["postgres_page_tables_bytes"],
            (1060u64 * 1024) as f64
        );
        assert!(f.summary.contains("other programs"), "{}", f.summary);
        assert!(f.recommendation.unwrap().contains("grep VmPTE"));
    }

    #[test]
    fn five_hundred_connections_that_read_shared_buffers() {
        // 500 copies of a backend at VmPTE 2336 kB: 1,168,000 kB of the 1,234,205 kB; the
        // settings edited to match: max_connections 600, shared_buffers 1 GiB and the 530
        // huge pages PostgreSQL 15 asks for about it.
        let settings = "postgres/pg_settings.txt";
        let row = |name: &str, value: &str, unit: &str| {
            format!(
                "{name}|{value}|{unit}|configuration file|/var/lib/postgresql/15/main/postgresql.conf|f"
            )
        };
        let f = with_connections(page_tables(1_234_205), 500)
            .set_line(
                settings,
                "max_connections|",
                &row("max_connections", "600", ""),
            )
            .set_line(
                settings,
                "shared_buffers|",
                &row("shared_buffers", "131072", "8kB"),
            )
            .set_line(
                settings,
                "shared_memory_size_in_huge_pages|",
                "shared_memory_size_in_huge_pages|530||default||f",
            )
            .run("page-tables-bloat")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["backends"], 502.0);
        assert!(f.figures["postgres_page_tables_share"] > 0.9);
        let text = f.recommendation.unwrap();
        assert!(
            f.summary.contains("builds 2 MiB of page tables"),
            "{}",
            f.summary
        );
        assert!(text.contains("vm.nr_hugepages = 530"), "{text}");
        assert!(
            text.contains("max_connections = 600 can reach 600 ×"),
            "{text}"
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.key.as_deref() == Some("VmPTE") && e.line == 31)
        );
    }

    #[test]
    fn without_processes_the_page_tables_are_not_attributed() {
        let mut s = page_tables(1_234_205);
        for p in s.paths("processes/") {
            s = s.remove(&p);
        }
        let f = s.run("page-tables-bloat").one();
        assert!(!f.figures.contains_key("postgres_page_tables_bytes"));
        let text = f.recommendation.unwrap();
        assert!(text.contains("vm.nr_hugepages = 19"), "{text}");
        assert!(text.contains("pooler"), "{text}");
    }

    #[test]
    fn without_meminfo_it_is_not_evaluated() {
        assert!(matches!(
            page_tables(1_234_205)
                .remove(MEMINFO)
                .run("page-tables-bloat"),
            Outcome::NotEvaluated(_)
        ));
    }
}
