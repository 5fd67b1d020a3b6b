//! Facts derived from the snapshots: what a connection really costs, how much RAM page tables
//! take, the commit limit as the kernel computes it, whether PostgreSQL uses transparent huge
//! pages, and the memory limit that actually applies. Pure arithmetic over parsed snapshots.

use serde::Serialize;

use super::cgroup::CgroupMemory;
use super::meminfo::Meminfo;
use super::process::{ProcStatus, SmapsRollup};
use super::sysctl::{Choice, SysctlSet};

/// The memory one PostgreSQL process costs beyond what it shares.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProcessMemory {
    /// `VmRSS`: what `ps`/`top` show; counts every shared_buffers page the process touched.
    pub rss_bytes: u64,
    /// The process's private anonymous memory: `Pss_Anon` of smaps_rollup (5.0+), else
    /// `RssAnon` of status (counts copy-on-write pages shared with the postmaster in full).
    pub anon_bytes: u64,
    /// `VmPTE`: its page tables, which grow with the shared memory it maps (without huge pages,
    /// ~2 MiB of page tables per GiB of shared_buffers touched).
    pub page_table_bytes: u64,
    /// `anon_bytes + page_table_bytes`: what this connection adds to the host's memory use.
    pub real_bytes: u64,
    /// `VmSwap`: swapped out anonymous memory (not in `real_bytes`).
    pub swap_bytes: u64,
    /// Which field `anon_bytes` came from: `pss_anon` or `rss_anon`.
    pub anon_basis: &'static str,
}

/// A process's real memory cost from its status (and smaps_rollup when collected). `None` for a
/// kernel thread or a status without `VmRSS`.
pub fn process_memory(status: &ProcStatus, smaps: Option<&SmapsRollup>) -> Option<ProcessMemory> {
    let rss_bytes = status.bytes("VmRSS")?;
    let (anon_bytes, anon_basis) = match smaps.and_then(|s| s.bytes("Pss_Anon")) {
        Some(pss_anon) => (pss_anon, "pss_anon"),
        None => (status.bytes("RssAnon")?, "rss_anon"),
    };
    let page_table_bytes = status.bytes("VmPTE").unwrap_or(0);
    Some(ProcessMemory {
        rss_bytes,
        anon_bytes,
        page_table_bytes,
        real_bytes: anon_bytes.saturating_add(page_table_bytes),
        swap_bytes: status.bytes("VmSwap").unwrap_or(0),
        anon_basis,
    })
}

/// Page tables against RAM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageTables {
    /// `PageTables` (all processes).
    pub page_tables_bytes: u64,
    /// `SecPageTables` (6.0+: KVM/IOMMU secondary page tables), when printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secondary_page_tables_bytes: Option<u64>,
    /// `MemTotal`.
    pub mem_total_bytes: u64,
    /// `(PageTables + SecPageTables) / MemTotal`.
    pub share_of_ram: f64,
}

/// Page tables against RAM, from /proc/meminfo.
pub fn page_tables(meminfo: &Meminfo) -> Option<PageTables> {
    let page_tables_bytes = meminfo.bytes("PageTables")?;
    let mem_total_bytes = meminfo.bytes("MemTotal")?;
    let secondary_page_tables_bytes = meminfo.bytes("SecPageTables");
    let total = page_tables_bytes + secondary_page_tables_bytes.unwrap_or(0);
    Some(PageTables {
        page_tables_bytes,
        secondary_page_tables_bytes,
        mem_total_bytes,
        share_of_ram: if mem_total_bytes == 0 {
            0.0
        } else {
            total as f64 / mem_total_bytes as f64
        },
    })
}

/// `CommitLimit` recomputed from the sysctls and checked against the one meminfo prints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CommitLimit {
    /// `vm.overcommit_memory`: 0 heuristic, 1 always, 2 never (only 2 enforces the limit).
    pub overcommit_memory: Option<i128>,
    /// `overcommit_kbytes` (when non-zero it replaces the ratio) or `overcommit_ratio`.
    pub basis: &'static str,
    /// The limit computed: `(MemTotal − hugetlb pool) × ratio / 100 + SwapTotal`, or
    /// `overcommit_kbytes + SwapTotal`, in whole pages as the kernel does.
    pub computed_bytes: u64,
    /// `CommitLimit` from meminfo.
    pub reported_bytes: Option<u64>,
    /// The two agree to the page (false means the snapshots were not taken together, or the
    /// kernel computes it differently).
    pub matches: Option<bool>,
    /// `Committed_AS`: memory promised to processes now.
    pub committed_bytes: Option<u64>,
    /// The limit is enforced (`overcommit_memory = 2`) and `Committed_AS` is within 5% of it or
    /// over: new allocations fail (`out of memory` errors in PostgreSQL, no OOM kill).
    pub near_limit: bool,
}

/// Recomputes `CommitLimit` from meminfo and the vm sysctls. `page_size` is the base page size
/// in bytes (4096 on x86-64; 64 KiB on some arm64 and ppc64le kernels). `None` when MemTotal,
/// SwapTotal or both overcommit sysctls are missing.
pub fn commit_limit(meminfo: &Meminfo, sysctls: &SysctlSet, page_size: u64) -> Option<CommitLimit> {
    let page = page_size.max(1);
    let total_pages = meminfo.bytes("MemTotal")? / page;
    let swap_pages = meminfo.bytes("SwapTotal")? / page;
    let hugetlb_pages = meminfo.hugetlb_bytes().unwrap_or(0) / page;
    let kbytes = sysctls
        .integer("vm.overcommit_kbytes")
        .and_then(|k| u64::try_from(k).ok())
        .unwrap_or(0);
    let (basis, allowed_pages) = if kbytes > 0 {
        ("overcommit_kbytes", kbytes / (page / 1024).max(1))
    } else {
        let ratio = u64::try_from(sysctls.integer("vm.overcommit_ratio")?).ok()?;
        (
            "overcommit_ratio",
            total_pages
                .saturating_sub(hugetlb_pages)
                .saturating_mul(ratio)
                / 100,
        )
    };
    let computed_bytes = (allowed_pages + swap_pages).saturating_mul(page);
    let reported_bytes = meminfo.bytes("CommitLimit");
    let committed_bytes = meminfo.bytes("Committed_AS");
    let overcommit_memory = sysctls.integer("vm.overcommit_memory");
    let near_limit = overcommit_memory == Some(2)
        && committed_bytes.is_some_and(|c| c as f64 >= computed_bytes as f64 * 0.95);
    Some(CommitLimit {
        overcommit_memory,
        basis,
        computed_bytes,
        reported_bytes,
        matches: reported_bytes.map(|r| r.abs_diff(computed_bytes) < page),
        committed_bytes,
        near_limit,
    })
}

/// Whether PostgreSQL uses transparent huge pages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThpUse {
    /// `transparent_hugepage/enabled` selection (`always`, `madvise`, `never`).
    pub enabled: Option<String>,
    /// `transparent_hugepage/defrag` selection.
    pub defrag: Option<String>,
    /// `AnonHugePages + ShmemPmdMapped` summed over the PostgreSQL processes given.
    pub postgres_huge_bytes: u64,
    /// How many of them map any huge page.
    pub processes_using: u32,
    /// How many smaps_rollup files were looked at.
    pub processes_seen: u32,
    /// `AnonHugePages` of the whole host (meminfo).
    pub host_anon_huge_bytes: Option<u64>,
    /// PostgreSQL processes map transparent huge pages now.
    pub in_use: bool,
    /// THP can stall PostgreSQL's page faults: `enabled` is `always` (PostgreSQL does not
    /// madvise its memory, so only `always` gives it huge pages) and `defrag` is `always`
    /// (direct compaction in the fault path).
    pub risk: bool,
}

/// Whether THP is in use by PostgreSQL, from the THP settings, the PostgreSQL processes'
/// smaps_rollup files and meminfo.
pub fn thp_use(
    enabled: Option<&Choice>,
    defrag: Option<&Choice>,
    postgres: &[&SmapsRollup],
    meminfo: Option<&Meminfo>,
) -> ThpUse {
    let mut postgres_huge_bytes = 0u64;
    let mut processes_using = 0;
    for s in postgres {
        let huge = s.bytes("AnonHugePages").unwrap_or(0) + s.bytes("ShmemPmdMapped").unwrap_or(0);
        postgres_huge_bytes += huge;
        if huge > 0 {
            processes_using += 1;
        }
    }
    let enabled = enabled.and_then(|c| c.selected.clone());
    let defrag = defrag.and_then(|c| c.selected.clone());
    let risk = enabled.as_deref() == Some("always") && defrag.as_deref() == Some("always");
    ThpUse {
        enabled,
        defrag,
        postgres_huge_bytes,
        processes_using,
        processes_seen: postgres.len() as u32,
        host_anon_huge_bytes: meminfo.and_then(|m| m.bytes("AnonHugePages")),
        in_use: postgres_huge_bytes > 0,
        risk,
    }
}

/// The memory limit that applies to PostgreSQL.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemoryLimit {
    /// The smaller of the cgroup limit and RAM.
    pub bytes: u64,
    /// `cgroup` or `ram`.
    pub source: &'static str,
    /// `MemTotal`, when known.
    pub ram_bytes: Option<u64>,
    /// The cgroup's limit, when one is set.
    pub cgroup_limit_bytes: Option<u64>,
}

/// The effective memory limit: the postmaster's cgroup limit when it is set and below RAM,
/// else RAM. `None` when neither is known.
pub fn effective_memory_limit(
    meminfo: Option<&Meminfo>,
    cgroup: Option<&CgroupMemory>,
) -> Option<MemoryLimit> {
    let ram_bytes = meminfo.and_then(|m| m.bytes("MemTotal"));
    let cgroup_limit_bytes = cgroup.and_then(|c| c.limit_bytes);
    let (bytes, source) = match (cgroup_limit_bytes, ram_bytes) {
        (Some(c), Some(r)) if c < r => (c, "cgroup"),
        (_, Some(r)) => (r, "ram"),
        (Some(c), None) => (c, "cgroup"),
        (None, None) => return None,
    };
    Some(MemoryLimit {
        bytes,
        source,
        ram_bytes,
        cgroup_limit_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{
        parse_choice, parse_meminfo, parse_smaps_rollup, parse_status, parse_sysctl,
    };
    use super::*;

    #[test]
    fn commit_limit_with_ratio_hugepages_and_swap() {
        // 4 GiB RAM, 100 × 2 MiB hugepages, 1 GiB swap, ratio 80.
        let m = parse_meminfo(b"MemTotal: 4194304 kB\nSwapTotal: 1048576 kB\nHugePages_Total: 100\nHugepagesize: 2048 kB\nCommitLimit: 4231168 kB\nCommitted_AS: 4100000 kB\n");
        let s = parse_sysctl(
            b"vm.overcommit_memory = 2\nvm.overcommit_ratio = 80\nvm.overcommit_kbytes = 0\n",
        );
        let c = commit_limit(&m, &s, 4096).unwrap();
        // (1048576 − 51200 pages) × 80 / 100 + 262144 pages = 1060044 pages.
        assert_eq!(c.computed_bytes, 1_060_044 * 4096);
        assert_eq!(c.reported_bytes, Some(4_231_168 * 1024));
        assert_eq!(c.matches, Some(false));
        assert!(c.near_limit);
        let s = parse_sysctl(b"vm.overcommit_ratio = 80\nvm.overcommit_kbytes = 2097152\n");
        let c = commit_limit(&m, &s, 4096).unwrap();
        assert_eq!(c.basis, "overcommit_kbytes");
        assert_eq!(c.computed_bytes, (2_097_152 + 1_048_576) * 1024);
    }

    #[test]
    fn process_memory_falls_back_to_rss_anon_without_pss_split() {
        let st = parse_status(b"Name:\tpostgres\nVmRSS:\t 1000 kB\nRssAnon:\t 300 kB\nVmPTE:\t 40 kB\nVmSwap:\t 0 kB\n");
        let old = parse_smaps_rollup(b"Rss: 1000 kB\nPss: 500 kB\n");
        let m = process_memory(&st, Some(&old)).unwrap();
        assert_eq!((m.anon_basis, m.real_bytes), ("rss_anon", 340 * 1024));
        let new = parse_smaps_rollup(b"Rss: 1000 kB\nPss: 500 kB\nPss_Anon: 120 kB\n");
        let m = process_memory(&st, Some(&new)).unwrap();
        assert_eq!((m.anon_basis, m.real_bytes), ("pss_anon", 160 * 1024));
        assert!(process_memory(&parse_status(b"Name:\tkthreadd\nKthread:\t1\n"), None).is_none());
    }

    #[test]
    fn thp_and_limits() {
        let huge = parse_smaps_rollup(b"Rss: 1000 kB\nAnonHugePages: 2048 kB\n");
        let none = parse_smaps_rollup(b"Rss: 1000 kB\nAnonHugePages: 0 kB\n");
        let t = thp_use(
            Some(&parse_choice(b"[always] madvise never")),
            Some(&parse_choice(b"[always] defer defer+madvise madvise never")),
            &[&huge, &none],
            None,
        );
        assert!(t.in_use && t.risk);
        assert_eq!((t.processes_using, t.processes_seen), (1, 2));
        let m = parse_meminfo(b"MemTotal: 1048576 kB\n");
        let mut cg = CgroupMemory::default();
        cg.add_file("memory.max", b"max\n");
        let l = effective_memory_limit(Some(&m), Some(&cg)).unwrap();
        assert_eq!((l.source, l.bytes), ("ram", 1 << 30));
        cg.add_file("memory.max", b"536870912\n");
        let l = effective_memory_limit(Some(&m), Some(&cg)).unwrap();
        assert_eq!((l.source, l.bytes), ("cgroup", 1 << 29));
        assert!(effective_memory_limit(None, None).is_none());
    }
}
