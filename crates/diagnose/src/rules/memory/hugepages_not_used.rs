//! ## What it finds
//! A large shared_buffers mapped with ordinary 4 kB pages: `huge_pages` is `off` or `try`, and
//! no huge pages are reserved (`HugePages_Total` 0) or the postmaster maps none
//! (`HugetlbPages` 0 in its status: `try` fell back).
//!
//! ## Why it matters
//! Every process that touches shared memory needs a page-table entry (8 bytes) per 4 kB page
//! it touched: 2 MiB of page tables per GiB of shared_buffers, per connection. With hundreds of
//! long-lived connections that is gigabytes of kernel memory taken from the page cache, which
//! `ps` does not show and CommitLimit does not count. With 2 MiB huge pages the same mapping
//! needs 512 times fewer entries, the TLB misses less, and shared memory leaves Committed_AS.
//! `huge_pages = try` starts without them when the pool is missing or too small, silently.
//!
//! ## What to do
//! Reserve the pool PostgreSQL asks for: `vm.nr_hugepages` = `shared_memory_size_in_huge_pages`
//! (PostgreSQL ≥ 15 prints it: `postgres -C shared_memory_size_in_huge_pages` on the stopped
//! server), else `shared_memory_size` ÷ `Hugepagesize`, in /etc/sysctl.d/99-postgresql.conf;
//! then set `huge_pages = on` so a start without the pool fails instead of falling back, and
//! restart (reserve the pool early, on a host whose memory is not yet fragmented, or reboot).
//! The pool leaves CommitLimit: with `vm.overcommit_memory = 2`, recompute
//! `vm.overcommit_ratio` (the finding gives it).
//!
//! ## Thresholds
//! shared_buffers ≥ 1 GiB with huge pages unused: info; a warning when the page tables all
//! connections could need, max_connections × shared_buffers ÷ 512, reach 10 % of RAM. The
//! pool size is exact from `shared_memory_size_in_huge_pages` or `shared_memory_size`; from
//! shared_buffers alone it is an estimate (shared_buffers plus 10 %, at least 32 MiB) and the
//! finding's confidence is 0.7. Silent with `huge_pages = on` or when the postmaster maps
//! huge pages.
//!
//! ## Evidence it needs
//! The server settings and /proc/meminfo; the postmaster's status (`HugetlbPages`) and the vm
//! sysctls when present.
//!
//! ## Knowledge
//! [fr-memoire]: VmPTE of a backend growing by 2 MB after reading 1 GB of shared_buffers,
//! PageTables from 13 MB to 1.2 GB with 500 connections, "16 MB per connection" with 8 GB of
//! shared_buffers, the pool of 550 pages for 1 GB and 4500 for 8 GB, the ratio to recompute.
//! [ru-memory-overhead]: VmPTE 6480 kB with `huge_pages = off`, 132 kB with `on`.
//! [zh-low-level]: 20 % fewer dTLB load misses with huge pages. [pg-kernel-resources] ("Linux
//! Huge Pages"); [kernel-thp] ("HugeTLB Pages").

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::support::{
    commit_limit_for, huge_pages_mode, hugepages_needed, overcommit_ratio_for,
};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "hugepages-not-used",
    title: "A large shared_buffers is mapped without huge pages",
    severities: &[
        warning("when the page tables all connections could need reach 10 % of RAM"),
        info("when all connections' page tables could stay under 10 % of RAM"),
    ],
    needs: &[Input::PgSettings, Input::Meminfo],
    uses: &[Input::Processes, Input::VmSysctls],
};

/// shared_buffers from which the rule speaks.
pub(crate) const SHARED_BUFFERS_THRESHOLD: u64 = 1 << 30;
/// Share of RAM the page tables of every connection could take from which it warns.
pub(crate) const PAGE_TABLES_WORST_SHARE: f64 = 0.10;
/// Bytes of shared memory one byte of page-table entries maps with 4 kB pages (8 bytes per
/// 4096-byte page).
pub(crate) const MAPPED_PER_PTE_BYTE: u64 = 512;
/// Confidence when the pool size is estimated from shared_buffers.
pub(crate) const ESTIMATED_CONFIDENCE: f64 = 0.7;
/// Share of RAM the recomputed overcommit ratio leaves to the page cache.
const CACHE_SHARE: f64 = 0.2;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let pg = &facts.host.postgres;
    let Some(mem) = &facts.host.memory else {
        return Vec::new();
    };
    let (Some(shared_buffers), Some(huge_pages)) =
        (pg.setting("shared_buffers"), pg.setting("huge_pages"))
    else {
        return Vec::new();
    };
    let mode = huge_pages_mode(huge_pages);
    if mode == "on" {
        return Vec::new();
    }
    let Some(sb) = shared_buffers.bytes else {
        return Vec::new();
    };
    if sb < SHARED_BUFFERS_THRESHOLD {
        return Vec::new();
    }
    let pool = mem.hugepages_total.as_ref().map_or(0, |t| t.value);
    let postmaster = facts.host.processes.postmaster();
    let mapped = postmaster.and_then(|p| p.hugetlb_bytes);
    let used = match mapped {
        Some(b) => b > 0,
        None => mem.hugepages_in_use().unwrap_or(0) > 0,
    };
    if used {
        return Vec::new();
    }
    let Some(need) = hugepages_needed(facts) else {
        return Vec::new();
    };

    let ram = mem.ram.value;
    let connections = pg.number("max_connections").unwrap_or(0.0).max(0.0) as u64;
    let per_connection = sb / MAPPED_PER_PTE_BYTE;
    let worst_tables = per_connection.saturating_mul(connections);
    let worst_share = worst_tables as f64 / ram as f64;
    let severity = if worst_share >= PAGE_TABLES_WORST_SHARE {
        Severity::Warning
    } else {
        Severity::Info
    };

    let why = match (mode, pool, mapped) {
        ("off", _, _) => format!("huge_pages = off ({})", huge_pages.from()),
        (_, 0, _) => format!(
            "huge_pages = {} ({}) and no huge pages are reserved (HugePages_Total 0): \
             PostgreSQL started without them",
            huge_pages.value,
            huge_pages.from()
        ),
        (_, total, Some(_)) => format!(
            "huge_pages = {} ({}): {total} huge pages are reserved, {} needed, and the \
             postmaster maps none (HugetlbPages 0): it fell back to 4 kB pages",
            huge_pages.value,
            huge_pages.from(),
            need.pages
        ),
        (_, total, None) => format!(
            "huge_pages = {} ({}): {total} huge pages are reserved, {} needed, and none is in \
             use: PostgreSQL fell back to 4 kB pages",
            huge_pages.value,
            huge_pages.from(),
            need.pages
        ),
    };
    let overcommit = match &facts.host.vm.overcommit_memory {
        Some(m) => {
            let swap = mem.swap_total.as_ref().map_or(0, |s| s.value);
            let ratio = overcommit_ratio_for(ram, swap, need.bytes(), CACHE_SHARE);
            let limit = commit_limit_for(ram, swap, need.bytes(), ratio);
            if m.value == 2 {
                format!(
                    " The pool leaves CommitLimit (and shared memory leaves Committed_AS): with \
                     vm.overcommit_memory = 2, set vm.overcommit_ratio = {ratio} (CommitLimit \
                     {}, a fifth of RAM left to the page cache).",
                    human_bytes(limit)
                )
            } else {
                format!(
                    " The pool leaves CommitLimit: with vm.overcommit_memory = 2 the ratio \
                     would be {ratio} (CommitLimit {}).",
                    human_bytes(limit)
                )
            }
        }
        None => String::new(),
    };

    let mut evidence: Vec<Evidence> = Vec::new();
    for e in [shared_buffers, huge_pages]
        .into_iter()
        .chain(pg.setting("max_connections"))
        .chain(need.settings.iter())
        .filter_map(|s| s.evidence())
    {
        if !evidence.contains(&e) {
            evidence.push(e);
        }
    }
    if let Some(t) = &mem.hugepages_total {
        evidence.push(t.evidence(format!("HugePages_Total {}", t.value)));
    }
    if let Some(p) = postmaster
        && let Some(e) = p.evidence(
            "HugetlbPages",
            format!("postmaster (pid {}) HugetlbPages 0", p.pid),
        )
    {
        evidence.push(e);
    }

    let mut f = finding(
        &META,
        severity,
        format!(
            "shared_buffers = {} is mapped with 4 kB pages: up to {} of page tables for {} \
             connections",
            human_bytes(sb),
            human_bytes(worst_tables),
            connections
        ),
    )
    .summary(format!(
        "{why}. Each connection that touches all of shared_buffers builds {} of page tables \
         (8 bytes per 4 kB page); max_connections = {connections} could take {} ({:.1} % of \
         RAM), kernel memory the page cache loses and ps does not show. With {} huge pages \
         it would be {} times less.",
        human_bytes(per_connection),
        human_bytes(worst_tables),
        worst_share * 100.0,
        human_bytes(need.page_size),
        need.page_size / 4096
    ))
    .recommend(format!(
        "Set vm.nr_hugepages = {} ({}) in /etc/sysctl.d/99-postgresql.conf and huge_pages = on \
         in postgresql.conf (so a start without the pool fails instead of falling back), then \
         restart PostgreSQL; reserve the pool before memory fragments (at boot). The \
         postmaster's HugetlbPages then shows the mapping.{overcommit}",
        need.pages, need.how
    ))
    .evidence(evidence)
    .figure("shared_buffers_bytes", sb as f64)
    .figure("recommended_nr_hugepages", need.pages as f64)
    .figure("hugepage_size_bytes", need.page_size as f64)
    .figure("hugepages_total", pool as f64)
    .figure("page_tables_worst_bytes", worst_tables as f64)
    .figure("page_tables_worst_share", worst_share);
    if need.estimated {
        f = f.confidence(ESTIMATED_CONFIDENCE);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const SETTINGS: &str = "postgres/pg_settings.txt";

    fn settings_row(name: &str, value: &str, unit: &str) -> String {
        format!(
            "{name}|{value}|{unit}|configuration file|/var/lib/postgresql/15/main/postgresql.conf|f"
        )
    }

    /// The collected bundle (huge_pages try, no pool, 20 connections, 23.5 GiB of RAM) with
    /// shared_buffers edited to `buffers` × 8 kB and shared_memory_size_in_huge_pages to 530
    /// (about what PostgreSQL 15 prints for 1 GiB of shared_buffers).
    fn with_shared_buffers(buffers: u64) -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .set_line(
                SETTINGS,
                "shared_buffers|",
                &settings_row("shared_buffers", &buffers.to_string(), "8kB"),
            )
            .set_line(
                SETTINGS,
                "shared_memory_size_in_huge_pages|",
                "shared_memory_size_in_huge_pages|530||default||f",
            )
    }

    #[test]
    fn the_collected_32_mib_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("hugepages-not-used")
                .silent()
        );
    }

    #[test]
    fn one_gib_fires_with_the_pool_postgresql_asks_for() {
        let f = with_shared_buffers(131_072).run("hugepages-not-used").one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.confidence, 1.0);
        assert_eq!(f.figures["recommended_nr_hugepages"], 530.0);
        let text = f.recommendation.unwrap();
        assert!(
            text.contains("vm.nr_hugepages = 530 (shared_memory_size_in_huge_pages 530 × 2 MiB, from postgres/pg_settings.txt:265)"),
            "{text}"
        );
        // Mode 0 on this host: the ratio is given for mode 2.
        assert!(text.contains("the ratio would be"), "{text}");
        assert!(
            f.summary
                .contains("huge_pages = try (postgres/pg_settings.txt:126)")
        );
        assert!(
            with_shared_buffers(131_071)
                .run("hugepages-not-used")
                .silent()
        );
    }

    #[test]
    fn page_tables_of_a_tenth_of_ram_make_it_a_warning() {
        // 1 GiB of shared_buffers maps into 2 MiB of page tables per connection; a tenth of
        // 24,684,092 kB is 1205.3 connections' worth.
        let connections = |n: u32| {
            with_shared_buffers(131_072)
                .set_line(
                    SETTINGS,
                    "max_connections|",
                    &settings_row("max_connections", &n.to_string(), ""),
                )
                .run("hugepages-not-used")
                .one()
        };
        let f = connections(1206);
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(
            f.figures["page_tables_worst_bytes"],
            ((1206u64 * 2) << 20) as f64
        );
        assert_eq!(connections(1205).severity, Severity::Info);
    }

    #[test]
    fn huge_pages_on_or_mapped_is_silent() {
        assert!(
            with_shared_buffers(131_072)
                .set_line(
                    SETTINGS,
                    "huge_pages|",
                    &settings_row("huge_pages", "on", "")
                )
                .run("hugepages-not-used")
                .silent()
        );
        // The postmaster's HugetlbPages edited to the 10240 kB of the real huge-pages-on
        // capture, with that capture's meminfo (44 pages reserved).
        assert!(
            with_shared_buffers(131_072)
                .copy(
                    "memory/meminfo.txt",
                    "formats/system/meminfo/meminfo-hugepages-on.txt"
                )
                .set_line(
                    "processes/16859/status",
                    "HugetlbPages:",
                    "HugetlbPages:\t   10240 kB"
                )
                .run("hugepages-not-used")
                .silent()
        );
    }

    #[test]
    fn a_pool_the_postmaster_does_not_map_is_a_fallback() {
        // The huge-pages-on capture's meminfo (44 pages) with the collected postmaster at
        // HugetlbPages 0.
        let f = with_shared_buffers(131_072)
            .copy(
                "memory/meminfo.txt",
                "formats/system/meminfo/meminfo-hugepages-on.txt",
            )
            .run("hugepages-not-used")
            .one();
        assert!(
            f.summary.contains("44 huge pages are reserved, 530 needed"),
            "{}",
            f.summary
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path == "processes/16859/status" && e.line == 33)
        );
        assert_eq!(f.figures["hugepages_total"], 44.0);
    }

    #[test]
    fn off_says_so() {
        let f = with_shared_buffers(131_072)
            .set_line(
                SETTINGS,
                "huge_pages|",
                &settings_row("huge_pages", "off", ""),
            )
            .run("hugepages-not-used")
            .one();
        assert!(f.summary.starts_with("huge_pages = off"), "{}", f.summary);
    }

    #[test]
    fn without_the_servers_figure_the_pool_is_sized_from_shared_memory_size() {
        // -1 is what PostgreSQL prints where huge pages are unsupported; shared_memory_size
        // edited to 1063 MB: 532 pages.
        let f = with_shared_buffers(131_072)
            .set_line(
                SETTINGS,
                "shared_memory_size_in_huge_pages|",
                "shared_memory_size_in_huge_pages|-1||default||f",
            )
            .set_line(
                SETTINGS,
                "shared_memory_size|",
                "shared_memory_size|1063|MB|default||f",
            )
            .run("hugepages-not-used")
            .one();
        assert_eq!(f.figures["recommended_nr_hugepages"], 532.0);
        assert_eq!(f.confidence, 1.0);
    }

    #[test]
    fn from_postgresql_conf_alone_the_pool_is_an_estimate() {
        // pg_settings removed; postgresql.conf's `shared_buffers = 32MB` (line 821) edited
        // to 1GB: (1 GiB + 102.4 MiB) ÷ 2 MiB = 563.2, 564 pages.
        let f = Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .remove(SETTINGS)
            .set_line(
                "postgres/postgresql.conf",
                "shared_buffers = 32MB",
                "shared_buffers = 1GB",
            )
            .run("hugepages-not-used")
            .one();
        assert_eq!(f.figures["recommended_nr_hugepages"], 564.0);
        assert_eq!(f.confidence, 0.7);
        assert!(f.recommendation.unwrap().contains("an estimate"));
    }

    #[test]
    fn huge_pages_true_in_postgresql_conf_is_on() {
        // postgresql.conf alone, shared_buffers edited to 1GB and the commented
        // `#huge_pages = try` (line 129) to `huge_pages = true`.
        let conf = "postgres/postgresql.conf";
        let s = Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .remove(SETTINGS)
            .set_line(conf, "shared_buffers = 32MB", "shared_buffers = 1GB");
        assert!(
            s.set_line(conf, "#huge_pages = try", "huge_pages = true")
                .run("hugepages-not-used")
                .silent()
        );
    }

    #[test]
    fn without_meminfo_it_is_not_evaluated() {
        assert!(matches!(
            with_shared_buffers(131_072)
                .remove("memory/meminfo.txt")
                .run("hugepages-not-used"),
            Outcome::NotEvaluated(_)
        ));
    }
}
