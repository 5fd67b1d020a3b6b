//! `/proc/meminfo` and `/proc/vmstat`.

use serde::Serialize;

use super::fields::{Fields, Separator, key_values, sniff_keys};
use crate::ParseStats;

/// `/proc/meminfo`: every line kept, sizes in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Meminfo {
    /// Every field in file order (`MemTotal`, …, `SecPageTables`, `Hugetlb`, and any key this
    /// version of pgmortem does not know).
    pub fields: Fields,
    /// Keys pgmortem uses that the file lacks: older kernels have no `MemAvailable` (before
    /// 3.14) or `Hugetlb` (before 4.16); a truncated file lacks its tail.
    pub missing: Vec<String>,
    /// The file ends in the middle of a line.
    pub truncated: bool,
    /// Line accounting.
    pub stats: ParseStats,
}

/// Keys of /proc/meminfo that pgmortem's derived facts read.
pub const MEMINFO_KEYS: &[&str] = &[
    "MemTotal",
    "MemFree",
    "MemAvailable",
    "Cached",
    "SwapTotal",
    "SwapFree",
    "Shmem",
    "PageTables",
    "CommitLimit",
    "Committed_AS",
    "AnonHugePages",
    "HugePages_Total",
    "Hugepagesize",
    "Hugetlb",
];

impl Meminfo {
    /// A size field in bytes (`MemTotal`, `PageTables`, …).
    pub fn bytes(&self, key: &str) -> Option<u64> {
        self.fields.bytes(key)
    }

    /// A count field (`HugePages_Total`, `HugePages_Free`, …).
    pub fn count(&self, key: &str) -> Option<u64> {
        self.fields.number(key)
    }

    /// Bytes reserved by hugetlb pools: `Hugetlb` (4.16+, every page size), else
    /// `HugePages_Total × Hugepagesize` (default size only).
    pub fn hugetlb_bytes(&self) -> Option<u64> {
        self.bytes("Hugetlb").or_else(|| {
            let pages = self.count("HugePages_Total")?;
            pages.checked_mul(self.bytes("Hugepagesize")?)
        })
    }
}

// MemTotal:       24684092 kB
// HugePages_Total:       0
/// Parses `/proc/meminfo` (any kernel): as far as it goes when cut.
pub fn parse_meminfo(input: &[u8]) -> Meminfo {
    let kv = key_values(input, Separator::Colon);
    let missing = kv.fields.missing(MEMINFO_KEYS);
    Meminfo {
        fields: kv.fields,
        missing,
        truncated: kv.truncated,
        stats: kv.stats,
    }
}

/// Sniffs /proc/meminfo: `Key:   N kB` lines with MemTotal, MemFree, Buffers or Cached.
pub fn sniff_meminfo(head: &[u8]) -> Option<f32> {
    sniff_keys(
        head,
        Separator::Colon,
        &["MemTotal", "MemFree", "Buffers", "Cached", "SwapTotal"],
    )
}

/// A flat `key number` file: `/proc/vmstat`, cgroup `memory.stat`, `memory.events`,
/// `memory.oom_control`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FlatKeyed {
    /// Every field in file order.
    pub fields: Fields,
    /// The file ends in the middle of a line.
    pub truncated: bool,
    /// Line accounting.
    pub stats: ParseStats,
}

impl FlatKeyed {
    /// The number of `key`.
    pub fn get(&self, key: &str) -> Option<u64> {
        self.fields.number(key)
    }
}

// nr_free_pages 4634118
/// Parses a flat `key number` file (`/proc/vmstat`, cgroup `memory.stat`, `memory.events`,
/// `memory.oom_control`). Values stay as printed: in vmstat they are pages or event counts, in
/// cgroup memory.stat mostly bytes; the key says which.
pub fn parse_flat_keyed(input: &[u8]) -> FlatKeyed {
    let kv = key_values(input, Separator::Space);
    FlatKeyed {
        fields: kv.fields,
        truncated: kv.truncated,
        stats: kv.stats,
    }
}

/// Sniffs /proc/vmstat: `key number` lines with nr_free_pages, pgfault, …
pub fn sniff_vmstat(head: &[u8]) -> Option<f32> {
    sniff_keys(
        head,
        Separator::Space,
        &[
            "nr_free_pages",
            "nr_inactive_anon",
            "nr_active_anon",
            "nr_dirty",
            "pgpgin",
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    // A 3.10 (RHEL 7 before its MemAvailable backport) style file, no MemAvailable, no Hugetlb.
    const OLD: &[u8] = b"MemTotal:        1016460 kB\nMemFree:          114116 kB\nBuffers:            6168 kB\nCached:           302276 kB\nCommitLimit:      508228 kB\nCommitted_AS:    1334124 kB\nHugePages_Total:       2\nHugepagesize:       2048 kB\n";

    #[test]
    fn old_kernel_without_memavailable_says_so() {
        let m = parse_meminfo(OLD);
        assert!(m.missing.contains(&"MemAvailable".to_owned()));
        assert!(m.missing.contains(&"Hugetlb".to_owned()));
        assert_eq!(m.bytes("MemTotal"), Some(1_016_460 * 1024));
        assert_eq!(m.hugetlb_bytes(), Some(2 * 2048 * 1024));
        assert_eq!(m.stats.unrecognized_lines, 0);
    }

    #[test]
    fn unknown_keys_are_kept() {
        let m = parse_meminfo(b"MemTotal: 10 kB\nSecPageTables: 4 kB\nFutureThing: 7 kB\n");
        assert_eq!(m.bytes("SecPageTables"), Some(4096));
        assert_eq!(m.bytes("FutureThing"), Some(7 * 1024));
        assert_eq!(m.fields.len(), 3);
    }

    #[test]
    fn truncated_meminfo_parses_what_is_there() {
        let m = parse_meminfo(b"MemTotal:  10 kB\nMemFree:   5 kB\nMemAvai");
        assert!(m.truncated);
        assert_eq!(m.bytes("MemFree"), Some(5 * 1024));
        assert!(m.missing.contains(&"MemAvailable".to_owned()));
    }

    #[test]
    fn sniffers_tell_meminfo_from_vmstat() {
        assert!(sniff_meminfo(OLD).is_some());
        assert!(sniff_vmstat(OLD).is_none());
        let vm = b"nr_free_pages 4634118\nnr_zone_inactive_anon 2531\nnr_inactive_anon 2531\nnr_active_anon 649\nnr_dirty 5\npgpgin 1\n";
        assert!(sniff_vmstat(vm).is_some());
        assert!(sniff_meminfo(vm).is_none());
        assert_eq!(parse_flat_keyed(vm).get("nr_free_pages"), Some(4_634_118));
    }
}
