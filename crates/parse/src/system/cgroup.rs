//! Memory cgroup files, v1 (`memory.limit_in_bytes`, `memory.usage_in_bytes`,
//! `memory.max_usage_in_bytes`, `memory.failcnt`, `memory.stat`, `memory.oom_control`) and v2
//! (`memory.max`, `memory.high`, `memory.current`, `memory.peak`, `memory.events`,
//! `memory.swap.max`, `memory.stat`).

use serde::Serialize;

use super::clock::SnapshotError;
use super::meminfo::{FlatKeyed, parse_flat_keyed};

/// v1 prints "no limit" as the largest page-aligned counter (`9223372036854771712` with 4 KiB
/// pages); anything at or above 2^62 bytes is taken as unlimited.
const V1_UNLIMITED: u64 = 1 << 62;

/// A single-value cgroup file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum CgroupValue {
    /// `max` (v2) or the v1 "unlimited" sentinel.
    Unlimited,
    /// A number (bytes for limits and usage, a count for failcnt).
    Number(u64),
}

impl CgroupValue {
    /// The number, unless unlimited.
    pub fn limit(self) -> Option<u64> {
        match self {
            CgroupValue::Unlimited => None,
            CgroupValue::Number(n) => Some(n),
        }
    }
}

// 536870912
// max
/// Parses a single-value cgroup file (`memory.max`, `memory.limit_in_bytes`, `memory.current`,
/// `memory.failcnt`, …).
pub fn parse_cgroup_value(input: &[u8]) -> Result<CgroupValue, SnapshotError> {
    let err = || SnapshotError::Shape {
        expected: "a cgroup value (a number or max)",
        found: String::from_utf8_lossy(&input[..input.len().min(80)]).into_owned(),
    };
    let text = std::str::from_utf8(input).map_err(|_| err())?.trim();
    if text == "max" {
        return Ok(CgroupValue::Unlimited);
    }
    let n: u64 = text.parse().map_err(|_| {
        if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
            SnapshotError::Shape {
                expected: "a cgroup value of at most 2^64 - 1 (number out of range)",
                found: text[..text.len().min(80)].to_owned(),
            }
        } else {
            err()
        }
    })?;
    Ok(if n >= V1_UNLIMITED {
        CgroupValue::Unlimited
    } else {
        CgroupValue::Number(n)
    })
}

/// Which cgroup version the files came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CgroupVersion {
    /// The v1 memory controller (`memory.limit_in_bytes`, …).
    V1,
    /// The unified hierarchy (`memory.max`, …).
    V2,
}

/// The memory cgroup of a process, from whichever of its files were collected.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CgroupMemory {
    /// v1 or v2, from the file names seen.
    pub version: Option<CgroupVersion>,
    /// The memory limit in bytes; `None` when unlimited or not collected (see `limit_seen`).
    pub limit_bytes: Option<u64>,
    /// A limit file was read (so `limit_bytes: None` means unlimited).
    pub limit_seen: bool,
    /// Usage now (`memory.usage_in_bytes` / `memory.current`).
    pub usage_bytes: Option<u64>,
    /// Highest usage seen (`memory.max_usage_in_bytes` / `memory.peak`).
    pub peak_bytes: Option<u64>,
    /// v1 `memory.failcnt`: how often the limit was hit.
    pub failcnt: Option<u64>,
    /// OOM kills in this cgroup (v1 `memory.oom_control` `oom_kill`, v2 `memory.events`
    /// `oom_kill`).
    pub oom_kills: Option<u64>,
    /// v2 `memory.events` `max`: times usage was about to go over the limit.
    pub max_events: Option<u64>,
    /// v2 `memory.high`: the throttling limit, in bytes. Past it the kernel reclaims the
    /// cgroup's memory and slows its processes' allocations down, before `memory.max` is hit;
    /// `None` when it is `max` (no throttling) or not collected.
    pub high_bytes: Option<u64>,
    /// v2 `memory.events` `high`: times the cgroup's processes were throttled and made to
    /// reclaim because usage went over `memory.high`.
    pub high_events: Option<u64>,
    /// Swap limit (v1 `memory.memsw.limit_in_bytes` is memory+swap; v2 `memory.swap.max` is
    /// swap alone).
    pub swap_limit_bytes: Option<u64>,
    /// Swap usage (v1 `memory.memsw.usage_in_bytes` is memory+swap; v2 `memory.swap.current`
    /// is swap alone).
    pub swap_usage_bytes: Option<u64>,
    /// `memory.stat` as read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stat: Option<FlatKeyed>,
    /// Files given that could not be read, with why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<(String, String)>,
}

impl CgroupMemory {
    /// Adds one file by its base name (`memory.max`, `memory.limit_in_bytes.txt`: a `.txt`
    /// suffix is ignored). Unknown names are ignored and reported `false`.
    pub fn add_file(&mut self, name: &str, input: &[u8]) -> bool {
        let name = name.rsplit('/').next().unwrap_or(name);
        let name = name.strip_suffix(".txt").unwrap_or(name);
        let (version, what) = match name {
            "memory.limit_in_bytes" => (CgroupVersion::V1, Field::Limit),
            "memory.usage_in_bytes" => (CgroupVersion::V1, Field::Usage),
            "memory.max_usage_in_bytes" => (CgroupVersion::V1, Field::Peak),
            "memory.failcnt" => (CgroupVersion::V1, Field::Failcnt),
            "memory.oom_control" => (CgroupVersion::V1, Field::OomControl),
            "memory.memsw.limit_in_bytes" => (CgroupVersion::V1, Field::SwapLimit),
            "memory.memsw.usage_in_bytes" => (CgroupVersion::V1, Field::SwapUsage),
            "memory.max" => (CgroupVersion::V2, Field::Limit),
            "memory.high" => (CgroupVersion::V2, Field::High),
            "memory.current" => (CgroupVersion::V2, Field::Usage),
            "memory.peak" => (CgroupVersion::V2, Field::Peak),
            "memory.events" => (CgroupVersion::V2, Field::Events),
            "memory.swap.max" => (CgroupVersion::V2, Field::SwapLimit),
            "memory.swap.current" => (CgroupVersion::V2, Field::SwapUsage),
            "memory.stat" => {
                self.stat = Some(parse_flat_keyed(input));
                return true;
            }
            _ => return false,
        };
        self.version = Some(version);
        let value = || parse_cgroup_value(input);
        let result = match what {
            Field::Limit => value().map(|v| {
                self.limit_seen = true;
                self.limit_bytes = v.limit();
            }),
            Field::High => value().map(|v| self.high_bytes = v.limit()),
            Field::Usage => value().map(|v| self.usage_bytes = v.limit()),
            Field::Peak => value().map(|v| self.peak_bytes = v.limit()),
            Field::Failcnt => value().map(|v| self.failcnt = v.limit()),
            Field::SwapLimit => value().map(|v| self.swap_limit_bytes = v.limit()),
            Field::SwapUsage => value().map(|v| self.swap_usage_bytes = v.limit()),
            Field::OomControl => {
                self.oom_kills = parse_flat_keyed(input).get("oom_kill");
                Ok(())
            }
            Field::Events => {
                let events = parse_flat_keyed(input);
                self.oom_kills = events.get("oom_kill");
                self.max_events = events.get("max");
                self.high_events = events.get("high");
                Ok(())
            }
        };
        if let Err(e) = result {
            self.errors.push((name.to_owned(), e.to_string()));
        }
        true
    }
}

enum Field {
    Limit,
    High,
    Usage,
    Peak,
    Failcnt,
    OomControl,
    SwapLimit,
    SwapUsage,
    Events,
}

/// Sniffs v1 `memory.oom_control` (`oom_kill_disable`, `under_oom`) or v2 `memory.events`
/// (`low`, `high`, `max`, `oom`, `oom_kill`).
pub fn sniff_cgroup_events(head: &[u8]) -> Option<f32> {
    let f = parse_flat_keyed(head);
    if f.stats.unrecognized_lines > 0 || f.fields.is_empty() {
        return None;
    }
    let v1 = f.get("oom_kill_disable").is_some() && f.get("under_oom").is_some();
    let v2 = ["low", "high", "max", "oom", "oom_kill"]
        .iter()
        .all(|k| f.get(k).is_some());
    (v1 || v2).then_some(0.95)
}

/// Sniffs a cgroup `memory.stat` (v1: `cache`, `rss`, `mapped_file`; v2: `anon`, `file`,
/// `kernel_stack`, `sock`).
pub fn sniff_cgroup_stat(head: &[u8]) -> Option<f32> {
    let f = parse_flat_keyed(head);
    if f.stats.unrecognized_lines > 0 {
        return None;
    }
    let v1 = ["cache", "rss", "mapped_file", "pgpgin"]
        .iter()
        .all(|k| f.get(k).is_some());
    let v2 = ["anon", "file", "kernel_stack", "sock"]
        .iter()
        .all(|k| f.get(k).is_some());
    (v1 || v2).then_some(0.9)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_max_and_v1_unlimited() {
        assert_eq!(
            parse_cgroup_value(b"max\n").unwrap(),
            CgroupValue::Unlimited
        );
        assert_eq!(
            parse_cgroup_value(b"9223372036854771712\n").unwrap(),
            CgroupValue::Unlimited
        );
        assert_eq!(
            parse_cgroup_value(b"536870912\n").unwrap(),
            CgroupValue::Number(536_870_912)
        );
        assert!(parse_cgroup_value(b"-1\n").is_err());
    }

    #[test]
    fn v2_files_build_the_memory_view() {
        let mut m = CgroupMemory::default();
        assert!(m.add_file("memory.max", b"1073741824\n"));
        assert!(m.add_file("memory.current", b"1048576000\n"));
        assert!(m.add_file(
            "memory.events",
            b"low 0\nhigh 0\nmax 812\noom 3\noom_kill 2\noom_group_kill 0\n"
        ));
        assert!(m.add_file("memory.swap.max", b"max\n"));
        assert!(m.add_file("memory.high", b"805306368\n"));
        assert!(!m.add_file("cpu.max", b"max 100000\n"));
        assert_eq!(m.version, Some(CgroupVersion::V2));
        assert_eq!(m.limit_bytes, Some(1 << 30));
        assert_eq!((m.oom_kills, m.max_events), (Some(2), Some(812)));
        assert_eq!((m.high_bytes, m.high_events), (Some(768 << 20), Some(0)));
        assert_eq!(m.swap_limit_bytes, None);
    }

    #[test]
    fn unlimited_v2_is_seen_but_none() {
        let mut m = CgroupMemory::default();
        m.add_file("memory.max", b"max\n");
        assert!(m.limit_seen);
        assert_eq!(m.limit_bytes, None);
        m.add_file("memory.current", b"garbage");
        assert_eq!(m.errors.len(), 1);
        // `max` in memory.high: no throttling.
        assert!(m.add_file("memory.high", b"max\n"));
        assert_eq!(m.high_bytes, None);
        assert!(m.limit_seen);
    }
}
