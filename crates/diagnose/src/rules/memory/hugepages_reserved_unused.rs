//! ## What it finds
//! Huge pages are reserved (`HugePages_Total` > 0) and sit unused: none is in use or promised
//! to a mapping (`Total − Free + Rsvd` = 0), or PostgreSQL was meant to use them
//! (`huge_pages = try`) and its postmaster maps none (`HugetlbPages` 0: it fell back to 4 kB
//! pages). Also, as information, a pool much larger than what is in use.
//!
//! ## Why it matters
//! A persistent huge page pool (`vm.nr_hugepages`) is taken from RAM at reservation: pages
//! nobody maps serve neither processes nor the page cache, and they leave CommitLimit too.
//! With `huge_pages = try`, PostgreSQL starts without huge pages when the pool is too small (or
//! was reserved after it started), so the host pays for the pool and still has the page-table
//! cost of 4 kB pages.
//!
//! ## What to do
//! Make the pool what PostgreSQL asks for (`shared_memory_size_in_huge_pages`, PostgreSQL
//! ≥ 15) and restart PostgreSQL with `huge_pages = on`, so a start without the pool fails
//! instead of falling back silently; or release the pool (`vm.nr_hugepages = 0`) when nothing
//! is meant to use it. A dynamic pool (`vm.nr_overcommit_hugepages`) takes memory only when a
//! mapping asks for it.
//!
//! ## Thresholds
//! A warning when the whole pool is unused, or when the postmaster maps no huge pages with
//! `huge_pages = try` (the unused pages are then wasted). Info when PostgreSQL uses the pool
//! and the unused pages are 256 MiB or more and at least 10 % of it. Silent otherwise, and
//! without a pool.
//!
//! ## Evidence it needs
//! /proc/meminfo (HugePages_Total, _Free, _Rsvd, Hugepagesize); the postmaster's status
//! (`HugetlbPages`), the server settings and the vm sysctls when present.
//!
//! ## Knowledge
//! [fr-memoire]: persistent pages are "allocated at once at start and thus blocked", a
//! problem when shared_buffers shrinks or the count is wrong; the dynamic pool
//! (`vm.nr_overcommit_hugepages`) falls back to normal pages "without wasting RAM"; 547 pages
//! reserved, 4 free once shared_buffers is warm. [pg-kernel-resources] ("Linux Huge Pages":
//! `huge_pages = try` falls back, `shared_memory_size_in_huge_pages`); [kernel-thp] ("HugeTLB
//! Pages": HugePages_Rsvd, the persistent and surplus pools).

use crate::facts::Facts;
use crate::human::human_bytes;
use crate::report::{Evidence, Finding, Severity};
use crate::rules::support::{huge_pages_mode, hugepages_needed};
use crate::rules::{Input, RuleMeta, finding, info, warning};

pub(crate) const META: RuleMeta = RuleMeta {
    id: "hugepages-reserved-unused",
    title: "Huge pages are reserved but unused",
    severities: &[
        warning(
            "when the whole pool is unused, or the postmaster fell back to 4 kB pages with \
             huge_pages = try",
        ),
        info("when PostgreSQL uses the pool and 256 MiB and 10 % of it are unused"),
    ],
    needs: &[Input::Meminfo],
    uses: &[Input::Processes, Input::PgSettings, Input::VmSysctls],
};

/// Unused pages of a pool PostgreSQL uses from which the pool is called oversized: this much
/// memory…
pub(crate) const OVERSIZE_MIN_BYTES: u64 = 256 << 20;
/// …and this share of the pool.
pub(crate) const OVERSIZE_SHARE: f64 = 0.10;

pub(crate) fn check(facts: &Facts<'_>) -> Vec<Finding> {
    let Some(mem) = &facts.host.memory else {
        return Vec::new();
    };
    let (Some(total), Some(size)) = (&mem.hugepages_total, &mem.hugepage_size) else {
        return Vec::new();
    };
    if total.value == 0 {
        return Vec::new();
    }
    let Some(in_use) = mem.hugepages_in_use() else {
        return Vec::new();
    };
    let unused = total.value - in_use;
    if unused == 0 {
        return Vec::new();
    }
    let unused_bytes = unused.saturating_mul(size.value);
    let pg = &facts.host.postgres;
    let huge_pages = pg.setting("huge_pages");
    let mode = huge_pages.map(huge_pages_mode);
    let postmaster = facts.host.processes.postmaster();
    let mapped = postmaster.and_then(|p| p.hugetlb_bytes);
    let fell_back = mapped == Some(0) && mode == Some("try");
    let nobody = in_use == 0;
    let need = hugepages_needed(facts);
    let unused_share = unused as f64 / total.value as f64;

    let (severity, title, what) = if nobody || fell_back {
        let who = if fell_back {
            format!(
                "the postmaster (pid {}) maps none of them (HugetlbPages 0) although huge_pages \
                 = try: PostgreSQL fell back to 4 kB pages",
                postmaster.map_or(0, |p| p.pid)
            )
        } else {
            "none is in use or promised to a mapping (HugePages_Total − HugePages_Free + \
             HugePages_Rsvd = 0)"
                .to_owned()
        };
        (
            Severity::Warning,
            format!(
                "{} of huge pages reserved and unused: {} of {} pages",
                human_bytes(unused_bytes),
                unused,
                total.value
            ),
            format!(
                "{} huge pages of {} are reserved and {who}. The {} they hold serve neither \
                 processes nor the page cache.",
                total.value,
                human_bytes(size.value),
                human_bytes(unused_bytes)
            ),
        )
    } else if unused_bytes >= OVERSIZE_MIN_BYTES && unused_share >= OVERSIZE_SHARE {
        (
            Severity::Info,
            format!(
                "The huge page pool is oversized: {} of {} pages unused ({})",
                unused,
                total.value,
                human_bytes(unused_bytes)
            ),
            format!(
                "{in_use} of the {} reserved huge pages are in use or promised; the other \
                 {unused} ({}, {:.0} % of the pool) serve nothing.",
                total.value,
                human_bytes(unused_bytes),
                unused_share * 100.0
            ),
        )
    } else {
        return Vec::new();
    };

    let fix = match (&need, mode) {
        (_, Some("off")) => format!(
            "huge_pages = off ({}): PostgreSQL never uses them. Set huge_pages = on and \
             restart it if the pool is meant for it, or release the pool (vm.nr_hugepages = \
             0) to give {} back.",
            huge_pages.map(|s| s.from()).unwrap_or_default(),
            human_bytes(unused_bytes)
        ),
        (Some(n), _) if severity == Severity::Warning && n.pages > total.value => format!(
            "The pool is smaller than the {} pages PostgreSQL asks for ({}): set \
             vm.nr_hugepages = {} in /etc/sysctl.d/99-postgresql.conf, set huge_pages = on so \
             a start without the pool fails instead of falling back, and restart PostgreSQL; \
             or release the pool (vm.nr_hugepages = 0) to give {} back.",
            n.pages,
            n.how,
            n.pages,
            human_bytes(unused_bytes)
        ),
        (Some(n), _) if severity == Severity::Warning => format!(
            "The pool holds the {} pages PostgreSQL asks for ({}): it was reserved after \
             PostgreSQL started, or for another huge page size. Restart PostgreSQL with \
             huge_pages = on (so a start without the pool fails instead of falling back); or \
             release the pool (vm.nr_hugepages = 0) to give {} back.",
            n.pages,
            n.how,
            human_bytes(unused_bytes)
        ),
        (Some(n), _) if n.pages < total.value => format!(
            "Lower vm.nr_hugepages to {} ({}; the pages in use now are {in_use}), which gives \
             {} back.",
            n.pages.max(in_use),
            n.how,
            human_bytes((total.value - n.pages.max(in_use)) * size.value)
        ),
        _ => format!(
            "Lower vm.nr_hugepages towards the {in_use} pages in use (with a few to spare), or \
             release the pool (vm.nr_hugepages = 0) if nothing is meant to use it: up to {} \
             come back.",
            human_bytes(unused_bytes)
        ),
    };

    let mut evidence: Vec<Evidence> =
        vec![total.evidence(format!("HugePages_Total {}", total.value))];
    if let Some(free) = &mem.hugepages_free {
        evidence.push(free.evidence(format!("HugePages_Free {}", free.value)));
    }
    if let Some(rsvd) = &mem.hugepages_rsvd {
        evidence.push(rsvd.evidence(format!("HugePages_Rsvd {}", rsvd.value)));
    }
    evidence.push(size.evidence(format!("Hugepagesize {}", human_bytes(size.value))));
    if let Some(n) = &facts.host.vm.nr_hugepages {
        evidence.push(n.evidence(format!("vm.nr_hugepages = {}", n.value)));
    }
    if let Some(p) = postmaster
        && let Some(e) = p.evidence(
            "HugetlbPages",
            format!(
                "postmaster (pid {}) HugetlbPages {}",
                p.pid,
                human_bytes(p.hugetlb_bytes.unwrap_or(0))
            ),
        )
    {
        evidence.push(e);
    }
    if let Some(e) = huge_pages.and_then(|s| s.evidence()) {
        evidence.push(e);
    }
    if let Some(n) = &need {
        evidence.extend(n.settings.iter().filter_map(|s| s.evidence()));
    }

    let mut f = finding(&META, severity, title)
        .summary(what)
        .recommend(fix)
        .evidence(evidence)
        .figure("hugepages_total", total.value as f64)
        .figure("hugepages_in_use", in_use as f64)
        .figure("hugepages_unused", unused as f64)
        .figure("unused_bytes", unused_bytes as f64)
        .impact(unused_bytes as f64);
    if let Some(b) = mapped {
        f = f.figure("postmaster_hugetlb_bytes", b as f64);
    }
    if let Some(n) = &need {
        f = f.figure("needed_hugepages", n.pages as f64);
    }
    vec![f]
}

#[cfg(test)]
mod tests {
    use crate::Severity;
    use crate::rules::testing::{Outcome, Scratch};

    const MEMINFO: &str = "memory/meminfo.txt";
    const STATUS: &str = "processes/16859/status";

    /// The collected bundle (huge_pages = try, shared_memory_size_in_huge_pages 19) with the
    /// meminfo of the real huge-pages-on capture: 44 pages, 33 free, 25 reserved (36 in use
    /// or promised, 8 unused).
    fn with_pool() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
            .copy(MEMINFO, "formats/system/meminfo/meminfo-hugepages-on.txt")
    }

    /// The same, the postmaster mapping the 10240 kB of huge pages the real capture's
    /// postmaster mapped.
    fn used_by_postgres() -> Scratch {
        with_pool().set_line(STATUS, "HugetlbPages:", "HugetlbPages:\t   10240 kB")
    }

    fn pool(s: Scratch, total: u64, free: u64) -> Scratch {
        s.set_line(
            MEMINFO,
            "HugePages_Total:",
            &format!("HugePages_Total:   {total:>5}"),
        )
        .set_line(
            MEMINFO,
            "HugePages_Free:",
            &format!("HugePages_Free:    {free:>5}"),
        )
    }

    #[test]
    fn no_pool_is_silent() {
        assert!(
            Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
                .run("hugepages-reserved-unused")
                .silent()
        );
    }

    #[test]
    fn the_real_pool_used_by_postgres_is_silent() {
        // 8 spare pages (16 MiB) are not an oversized pool.
        assert!(used_by_postgres().run("hugepages-reserved-unused").silent());
    }

    #[test]
    fn a_postmaster_that_fell_back_wastes_the_unused_pages() {
        let f = with_pool().run("hugepages-reserved-unused").one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["hugepages_in_use"], 36.0);
        assert_eq!(f.figures["hugepages_unused"], 8.0);
        assert_eq!(f.figures["unused_bytes"], (16u64 << 20) as f64);
        assert!(f.summary.contains("fell back"), "{}", f.summary);
        // 19 pages asked for, 44 reserved: reserved after the start, or another size.
        let text = f.recommendation.unwrap();
        assert!(
            text.contains("holds the 19 pages PostgreSQL asks for"),
            "{text}"
        );
        assert!(
            f.evidence
                .iter()
                .any(|e| e.path == STATUS && e.key.as_deref() == Some("HugetlbPages"))
        );
    }

    #[test]
    fn a_pool_smaller_than_asked_for_says_what_to_reserve() {
        let f = with_pool()
            .set_line(
                "postgres/pg_settings.txt",
                "shared_memory_size_in_huge_pages|",
                "shared_memory_size_in_huge_pages|1100||default||f",
            )
            .run("hugepages-reserved-unused")
            .one();
        let text = f.recommendation.unwrap();
        assert!(text.contains("vm.nr_hugepages = 1100"), "{text}");
    }

    #[test]
    fn a_pool_nobody_uses_is_a_warning_without_processes() {
        // Free edited to 44 and Rsvd to 0: nothing in use; the process files removed.
        let mut s = pool(with_pool(), 44, 44).set_line(
            MEMINFO,
            "HugePages_Rsvd:",
            "HugePages_Rsvd:        0",
        );
        for p in s.paths("processes/") {
            s = s.remove(&p);
        }
        let f = s.run("hugepages-reserved-unused").one();
        assert_eq!(f.severity, Severity::Warning);
        assert_eq!(f.figures["hugepages_unused"], 44.0);
        assert!(f.summary.contains("none is in use"), "{}", f.summary);
        // One page reserved for a mapping: something uses the pool, no process says what.
        let mut one = pool(with_pool(), 44, 44).set_line(
            MEMINFO,
            "HugePages_Rsvd:",
            "HugePages_Rsvd:        1",
        );
        for p in one.paths("processes/") {
            one = one.remove(&p);
        }
        assert!(one.run("hugepages-reserved-unused").silent());
    }

    #[test]
    fn a_pool_nobody_uses_with_huge_pages_off_names_the_setting() {
        // Nothing in use (Free 44, Rsvd 0) and huge_pages edited to off.
        let f = pool(with_pool(), 44, 44)
            .set_line(MEMINFO, "HugePages_Rsvd:", "HugePages_Rsvd:        0")
            .set_line(
                "postgres/pg_settings.txt",
                "huge_pages|",
                "huge_pages|off||configuration file|/var/lib/postgresql/15/main/postgresql.conf|f",
            )
            .run("hugepages-reserved-unused")
            .one();
        assert_eq!(f.severity, Severity::Warning);
        let text = f.recommendation.unwrap();
        assert!(
            text.starts_with("huge_pages = off (postgres/pg_settings.txt:126)"),
            "{text}"
        );
    }

    #[test]
    fn an_oversized_pool_is_info_from_256_mib_unused() {
        // 120 pages added to Total and Free: 128 unused (256 MiB, 78 % of the pool).
        let f = pool(used_by_postgres(), 164, 153)
            .run("hugepages-reserved-unused")
            .one();
        assert_eq!(f.severity, Severity::Info);
        assert_eq!(f.figures["unused_bytes"], (256u64 << 20) as f64);
        // 36 pages in use, 19 asked for: lower to what is in use.
        assert!(
            f.recommendation
                .unwrap()
                .contains("Lower vm.nr_hugepages to 36"),
        );
        assert!(
            pool(used_by_postgres(), 163, 152)
                .run("hugepages-reserved-unused")
                .silent()
        );
    }

    #[test]
    fn an_oversized_pool_is_also_a_tenth_of_the_pool() {
        // Total and Free edited so that 128 pages (256 MiB) stay unused: of 1280 pages that
        // is 10 %, of 1281 just under.
        let f = pool(used_by_postgres(), 1280, 153)
            .run("hugepages-reserved-unused")
            .one();
        assert_eq!(f.figures["hugepages_unused"], 128.0);
        assert!(
            pool(used_by_postgres(), 1281, 153)
                .run("hugepages-reserved-unused")
                .silent()
        );
    }

    #[test]
    fn without_meminfo_it_is_not_evaluated() {
        assert!(matches!(
            with_pool().remove(MEMINFO).run("hugepages-reserved-unused"),
            Outcome::NotEvaluated(_)
        ));
    }
}
