//! The host's snapshots as the report states them: memory, vm sysctls, THP, the memory
//! cgroup, /dev/shm, the CPU, subtransaction waits. Built by `facts`; every value is a
//! [`Known`], with the file and line it was read from.

use pgmortem_parse::system::CgroupVersion;
use serde::Serialize;

use super::{Known, PgFacts, ProcessFacts, StorageFacts};

/// `/proc/meminfo`: sizes in bytes, huge page counts in pages.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryFacts {
    /// `MemTotal`.
    pub ram: Known<u64>,
    /// `MemAvailable`.
    pub available: Option<Known<u64>>,
    /// `SwapTotal`.
    pub swap_total: Option<Known<u64>>,
    /// `SwapFree`.
    pub swap_free: Option<Known<u64>>,
    /// `CommitLimit`.
    pub commit_limit: Option<Known<u64>>,
    /// `Committed_AS`.
    pub committed_as: Option<Known<u64>>,
    /// `PageTables`.
    pub page_tables: Option<Known<u64>>,
    /// `AnonHugePages`: anonymous memory in transparent huge pages.
    pub anon_huge_pages: Option<Known<u64>>,
    /// `Shmem`.
    pub shmem: Option<Known<u64>>,
    /// `HugePages_Total` (pages of the default huge page size).
    pub hugepages_total: Option<Known<u64>>,
    /// `HugePages_Free`.
    pub hugepages_free: Option<Known<u64>>,
    /// `HugePages_Rsvd`: promised to a mapping, not yet touched.
    pub hugepages_rsvd: Option<Known<u64>>,
    /// `Hugepagesize`, bytes.
    pub hugepage_size: Option<Known<u64>>,
}

impl MemoryFacts {
    /// Swap in use: `SwapTotal − SwapFree`.
    pub fn swap_used(&self) -> Option<u64> {
        Some(
            self.swap_total
                .as_ref()?
                .value
                .saturating_sub(self.swap_free.as_ref()?.value),
        )
    }

    /// Bytes held by the default-size huge page pool (`HugePages_Total × Hugepagesize`).
    pub fn hugepage_pool_bytes(&self) -> u64 {
        match (&self.hugepages_total, &self.hugepage_size) {
            (Some(n), Some(size)) => n.value.saturating_mul(size.value),
            _ => 0,
        }
    }

    /// Huge pages in use or promised: `Total − Free + Rsvd`.
    pub fn hugepages_in_use(&self) -> Option<u64> {
        let total = self.hugepages_total.as_ref()?.value;
        let free = self.hugepages_free.as_ref()?.value;
        let rsvd = self.hugepages_rsvd.as_ref().map_or(0, |r| r.value);
        Some(total.saturating_sub(free).saturating_add(rsvd).min(total))
    }
}

/// The `vm.*` sysctls pgmortem reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VmFacts {
    /// `vm.overcommit_memory`: 0 heuristic, 1 always, 2 strict.
    pub overcommit_memory: Option<Known<i64>>,
    /// `vm.overcommit_ratio`, percent.
    pub overcommit_ratio: Option<Known<i64>>,
    /// `vm.overcommit_kbytes` (replaces the ratio when not 0).
    pub overcommit_kbytes: Option<Known<i64>>,
    /// `vm.swappiness`.
    pub swappiness: Option<Known<i64>>,
    /// `vm.nr_hugepages`.
    pub nr_hugepages: Option<Known<i64>>,
    /// `vm.nr_overcommit_hugepages`.
    pub nr_overcommit_hugepages: Option<Known<i64>>,
    /// `vm.dirty_ratio`, percent of available memory.
    pub dirty_ratio: Option<Known<i64>>,
    /// `vm.dirty_background_ratio`.
    pub dirty_background_ratio: Option<Known<i64>>,
    /// `vm.dirty_bytes` (replaces the ratio when not 0).
    pub dirty_bytes: Option<Known<i64>>,
    /// `vm.dirty_background_bytes`.
    pub dirty_background_bytes: Option<Known<i64>>,
}

/// Transparent huge page settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ThpFacts {
    /// `transparent_hugepage/enabled`: `always`, `madvise` or `never`.
    pub enabled: Option<Known<String>>,
    /// `transparent_hugepage/defrag`: `always`, `defer`, `defer+madvise`, `madvise`, `never`.
    pub defrag: Option<Known<String>>,
}

/// The postmaster's memory cgroup.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CgroupFacts {
    /// `v1` or `v2`.
    pub version: Option<CgroupVersion>,
    /// The directory its files were collected in (`cgroup/1234`; in a copy of the whole tree,
    /// `sys/fs/cgroup/memory/system.slice/postgresql.service`).
    pub dir: String,
    /// Its path in the hierarchy (`/system.slice/postgresql.service`) and where the bundle
    /// says the postmaster is in it: a `ps` listing's `CGROUP` column, its `/proc/PID/cgroup`,
    /// or the kernel's OOM report of a PostgreSQL process (`task_memcg=`, `oom_memcg=`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<Known<String>>,
    /// The memory limit; `null` with `limit_read` means unlimited.
    pub limit: Option<Known<u64>>,
    /// A limit file was read.
    pub limit_read: bool,
    /// v2 `memory.high`: where the kernel starts throttling the cgroup's allocations and
    /// reclaiming its memory, below the limit; `null` when it is `max` or was not collected.
    pub high: Option<Known<u64>>,
    /// v2 `memory.events` `high`: times the cgroup was throttled over `memory.high`.
    pub high_events: Option<Known<u64>>,
    /// Usage when collected.
    pub usage: Option<Known<u64>>,
    /// Highest usage seen.
    pub peak: Option<Known<u64>>,
    /// v1 `memory.failcnt`: times the limit was hit.
    pub failcnt: Option<Known<u64>>,
    /// OOM kills in this cgroup (v1 `memory.oom_control`, v2 `memory.events`).
    pub oom_kills: Option<Known<u64>>,
}

/// `/dev/shm` as `df` printed it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DevShm {
    /// Size in bytes.
    pub size: Known<u64>,
    /// Used bytes.
    pub used: Option<u64>,
    /// Available bytes.
    pub available: Option<u64>,
}

/// The CPU and the kernel features that cost CPU time.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CpuFacts {
    /// Every CPU vulnerability and the kernel's verdict (key: the vulnerability's name).
    pub vulnerabilities: Vec<Known<String>>,
    /// The clock source in use.
    pub clocksource: Option<Known<String>>,
    /// The time-stamp counter flags the CPU advertises, of [`TSC_FLAGS`] (from its `flags`
    /// line in /proc/cpuinfo; empty when it has none of them, as on arm64).
    pub tsc_flags: Option<Known<Vec<String>>>,
    /// `auditctl -s` `enabled` (1: audit on, 2: locked).
    pub audit_enabled: Option<Known<u64>>,
    /// Audit rules that check system calls on exit (`auditctl -l`).
    pub audit_syscall_rules: Option<Known<u64>>,
}

/// The CPU flags about the time-stamp counter that pgmortem keeps: `tsc` (there is one),
/// `constant_tsc` (it ticks at a constant rate whatever the frequency), `nonstop_tsc` (it keeps
/// ticking in deep C-states), `tsc_reliable` (the hypervisor vouches for it), `tsc_known_freq`,
/// `rdtscp`.
pub const TSC_FLAGS: &[&str] = &[
    "tsc",
    "constant_tsc",
    "nonstop_tsc",
    "tsc_reliable",
    "tsc_known_freq",
    "rdtscp",
];

impl CpuFacts {
    /// The verdict on vulnerability `name` (`mds`).
    pub fn vulnerability(&self, name: &str) -> Option<&Known<String>> {
        self.vulnerabilities.iter().find(|v| v.key == name)
    }

    /// Whether the CPU's TSC is invariant (`constant_tsc` and `nonstop_tsc`), when its flags
    /// are known.
    pub fn invariant_tsc(&self) -> Option<bool> {
        let flags = &self.tsc_flags.as_ref()?.value;
        let has = |f: &str| flags.iter().any(|x| x == f);
        Some(has("constant_tsc") && has("nonstop_tsc"))
    }
}

/// Subtransaction pressure: `pg_subtrans` size and sessions waiting on its SLRU.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SubtransFacts {
    /// Segment files in `pg_subtrans` (each covers 65,536 transaction ids of the range kept
    /// since the oldest transaction still needed).
    pub files: Option<Known<u64>>,
    /// Sessions waiting on a subtransaction SLRU wait event (`SubtransSLRU`, `SubtransBuffer`,
    /// `SubtransControlLock`, `subtrans`), by wait event (key), from the activity summary.
    pub waits: Vec<Known<u64>>,
    /// Sessions in the activity summary (all states).
    pub sessions: Option<u64>,
}

/// The host as the bundle shows it: every fact pgmortem derives from the snapshots. Absent
/// facts are `null`: the file was not in the bundle (or could not be read).
#[derive(Debug, Clone, Default, Serialize)]
pub struct HostFacts {
    /// `/proc/meminfo`.
    pub memory: Option<MemoryFacts>,
    /// `vm.*` sysctls.
    pub vm: VmFacts,
    /// Transparent huge pages.
    pub thp: ThpFacts,
    /// The postmaster's memory cgroup.
    pub cgroup: Option<CgroupFacts>,
    /// `/dev/shm` as `df` saw it.
    pub dev_shm: Option<DevShm>,
    /// CPU vulnerabilities, clock source, audit.
    pub cpu: CpuFacts,
    /// `pg_subtrans` size and subtransaction SLRU waits.
    pub subtrans: Option<SubtransFacts>,
    /// PostgreSQL's version and settings.
    pub postgres: PgFacts,
    /// PostgreSQL's processes.
    pub processes: ProcessFacts,
    /// Where PostgreSQL's files live: file systems, pg_wal, slots, archiver, database ages.
    pub storage: StorageFacts,
}
