//! Derived facts on the real snapshots of fixtures/formats/system (one PostgreSQL 15 cluster
//! in a 512 MiB memory cgroup on a 24 GiB host, THP `madvise`).

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
