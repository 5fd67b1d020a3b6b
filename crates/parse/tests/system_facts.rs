//! Derived facts on the real snapshots of fixtures/formats/system (one PostgreSQL 15 cluster
//! in a 512 MiB memory cgroup on a 24 GiB host, THP `madvise`; the `*-hugepages-on` files from
//! the same cluster with `huge_pages = on` and a hugetlb pool of 2 MiB pages).

use std::path::Path;

use pgmortem_parse::system::{self, facts};

fn fixture(rel: &str) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures/formats/system");
    std::fs::read(root.join(rel)).unwrap()
}

#[test]
fn commit_limit_recomputed_matches_the_kernel() {
    let meminfo = system::parse_meminfo(&fixture("meminfo/meminfo.txt"));
    let sysctls = system::parse_sysctl(&fixture("sysctl/sysctl-vm.txt"));
    let c = facts::commit_limit(&meminfo, &sysctls, 4096).unwrap();
    assert_eq!(c.basis, "overcommit_ratio");
    assert_eq!(c.matches, Some(true), "{c:?}");
    assert_eq!(Some(c.computed_bytes), meminfo.bytes("CommitLimit"));
    assert!(!c.near_limit);
}

#[test]
fn backend_real_memory_is_far_below_its_rss() {
    for name in [
        "backend-active",
        "backend-idle",
        "checkpointer",
        "postmaster",
    ] {
        let status = system::parse_status(&fixture(&format!("status/{name}.txt")));
        let smaps = system::parse_smaps_rollup(&fixture(&format!("smaps_rollup/{name}.txt")));
        let m = facts::process_memory(&status, Some(&smaps)).unwrap();
        assert_eq!(m.anon_basis, "pss_anon", "{name}");
        assert_eq!(Some(m.anon_bytes), smaps.bytes("Pss_Anon"), "{name}");
        assert_eq!(Some(m.page_table_bytes), status.bytes("VmPTE"), "{name}");
        assert!(m.real_bytes < m.rss_bytes, "{name}: {m:?}");
        // Without the split, RssAnon counts copy-on-write pages in full: never less.
        let old = system::parse_smaps_rollup(&fixture("smaps_rollup/edge-no-pss-split.txt"));
        let fallback = facts::process_memory(&status, Some(&old)).unwrap();
        assert_eq!(fallback.anon_basis, "rss_anon");
        assert!(fallback.anon_bytes >= m.anon_bytes, "{name}");
    }
    let kthread = system::parse_status(&fixture("status/kthreadd.txt"));
    assert!(facts::process_memory(&kthread, None).is_none());
}

#[test]
fn page_tables_thp_and_effective_limit() {
    let meminfo = system::parse_meminfo(&fixture("meminfo/meminfo.txt"));
    let pt = facts::page_tables(&meminfo).unwrap();
    assert!(pt.share_of_ram > 0.0 && pt.share_of_ram < 0.05, "{pt:?}");
    assert!(pt.secondary_page_tables_bytes.is_some());

    let rollups: Vec<_> = [
        "postmaster",
        "backend-active",
        "backend-idle",
        "checkpointer",
    ]
    .iter()
    .map(|n| system::parse_smaps_rollup(&fixture(&format!("smaps_rollup/{n}.txt"))))
    .collect();
    let refs: Vec<_> = rollups.iter().collect();
    let thp = facts::thp_use(
        Some(&system::parse_choice(&fixture("thp/enabled.txt"))),
        Some(&system::parse_choice(&fixture("thp/defrag.txt"))),
        &refs,
        Some(&meminfo),
    );
    assert_eq!(thp.enabled.as_deref(), Some("madvise"));
    assert!(!thp.in_use && !thp.risk);
    assert_eq!(thp.processes_seen, 4);

    let mut cgroup = system::CgroupMemory::default();
    for f in [
        "memory.limit_in_bytes",
        "memory.usage_in_bytes",
        "memory.oom_control",
    ] {
        cgroup.add_file(f, &fixture(&format!("cgroup-v1/{f}.txt")));
    }
    let limit = facts::effective_memory_limit(Some(&meminfo), Some(&cgroup)).unwrap();
    assert_eq!((limit.source, limit.bytes), ("cgroup", 512 << 20));
    assert_eq!(cgroup.oom_kills, Some(0));
}

#[test]
fn commit_limit_leaves_out_the_hugetlb_pool() {
    let meminfo = system::parse_meminfo(&fixture("meminfo/meminfo-hugepages-on.txt"));
    let sysctls = system::parse_sysctl(&fixture("sysctl/sysctl-vm-hugepages-on.txt"));
    let pool_pages = meminfo.count("HugePages_Total").unwrap();
    assert!(pool_pages > 0);
    assert_eq!(
        sysctls.integer("vm.nr_hugepages"),
        Some(i128::from(pool_pages))
    );
    let pool = meminfo.hugetlb_bytes().unwrap();
    assert_eq!(pool, pool_pages * meminfo.bytes("Hugepagesize").unwrap());

    let c = facts::commit_limit(&meminfo, &sysctls, 4096).unwrap();
    assert_eq!(c.basis, "overcommit_ratio");
    assert_eq!(c.matches, Some(true), "{c:?}");
    // Not subtracting the pool would overstate the limit by half of it (ratio 50).
    let ratio = sysctls.integer("vm.overcommit_ratio").unwrap() as u64;
    let total_pages = meminfo.bytes("MemTotal").unwrap() / 4096;
    let swap = meminfo.bytes("SwapTotal").unwrap();
    let ignoring_pool = total_pages * ratio / 100 * 4096 + swap;
    let reported = meminfo.bytes("CommitLimit").unwrap();
    assert!(
        ignoring_pool.abs_diff(reported) >= pool * ratio / 100 - 4096,
        "{ignoring_pool} vs {reported}"
    );
}

#[test]
fn hugetlb_shared_memory_is_neither_rss_nor_thp() {
    let meminfo = system::parse_meminfo(&fixture("meminfo/meminfo-hugepages-on.txt"));
    let page = meminfo.bytes("Hugepagesize").unwrap();
    let (total, free, reserved) = (
        meminfo.count("HugePages_Total").unwrap(),
        meminfo.count("HugePages_Free").unwrap(),
        meminfo.count("HugePages_Rsvd").unwrap(),
    );
    // Part of the segment is faulted in (total − free), the rest only reserved at mmap time.
    assert!(
        free < total && reserved > 0 && reserved <= free,
        "{total} {free} {reserved}"
    );

    let mut rollups = Vec::new();
    let mut hugetlb_max = 0;
    for name in ["postmaster", "backend-active"] {
        let status = system::parse_status(&fixture(&format!("status/{name}-hugepages-on.txt")));
        let smaps =
            system::parse_smaps_rollup(&fixture(&format!("smaps_rollup/{name}-hugepages-on.txt")));
        let hugetlb = status.bytes("HugetlbPages").unwrap();
        assert!(hugetlb > 0 && hugetlb % page == 0, "{name}: {hugetlb}");
        assert_eq!(
            Some(hugetlb),
            smaps
                .bytes("Shared_Hugetlb")
                .zip(smaps.bytes("Private_Hugetlb"))
                .map(|(s, p)| s + p),
            "{name}"
        );
        // The kernel keeps hugetlb pages out of RSS: VmRSS is anon + file + shmem without them.
        let m = facts::process_memory(&status, Some(&smaps)).unwrap();
        let parts: u64 = ["RssAnon", "RssFile", "RssShmem"]
            .iter()
            .map(|k| status.bytes(k).unwrap())
            .sum();
        assert_eq!(m.rss_bytes, parts, "{name}");
        assert_eq!(smaps.bytes("Rss"), Some(m.rss_bytes), "{name}");
        hugetlb_max = hugetlb_max.max(hugetlb);
        rollups.push(smaps);
    }
    // No process maps more huge pages than the pool has handed out.
    assert!(hugetlb_max <= (total - free) * page);

    let refs: Vec<_> = rollups.iter().collect();
    let thp = facts::thp_use(
        Some(&system::parse_choice(&fixture("thp/enabled.txt"))),
        Some(&system::parse_choice(&fixture("thp/defrag.txt"))),
        &refs,
        Some(&meminfo),
    );
    assert_eq!((thp.processes_seen, thp.processes_using), (2, 0));
    assert!(
        !thp.in_use,
        "hugetlb pages are not transparent huge pages: {thp:?}"
    );
}
