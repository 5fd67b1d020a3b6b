//! `/proc/PID/status`, `/proc/PID/smaps_rollup` and `/proc/PID/limits`.

use serde::Serialize;

use super::fields::{Fields, Separator, key_values, sniff_keys};
use crate::ParseStats;
use crate::lines::Lines;

/// `/proc/PID/status`: every line kept, `Vm*`/`Rss*`/`HugetlbPages` in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProcStatus {
    /// The task's comm (`Name:`), with the kernel's escapes undone: it may hold spaces and
    /// colons (`rs:main Q:Reg`); the kernel escapes control characters and `\\`.
    pub name: Option<String>,
    /// `Pid:`.
    pub pid: Option<u64>,
    /// `PPid:`.
    pub ppid: Option<u64>,
    /// `Threads:`.
    pub threads: Option<u64>,
    /// A kernel thread: `Kthread: 1` (6.x), or no `VmSize` line at all while the file went on
    /// past where it would be (older kernels print no Vm lines for tasks without an mm).
    pub kernel_thread: bool,
    /// Every field in file order.
    pub fields: Fields,
    /// Memory keys pgmortem reads that the file lacks (all of them for a kernel thread).
    pub missing: Vec<String>,
    /// The file ends in the middle of a line.
    pub truncated: bool,
    /// Line accounting.
    pub stats: ParseStats,
}

/// Memory keys of /proc/PID/status that pgmortem reads.
pub const STATUS_MEMORY_KEYS: &[&str] = &[
    "VmPeak",
    "VmSize",
    "VmHWM",
    "VmRSS",
    "RssAnon",
    "RssFile",
    "RssShmem",
    "VmPTE",
    "VmSwap",
    "HugetlbPages",
];

impl ProcStatus {
    /// A size field in bytes (`VmRSS`, `VmPTE`, `RssAnon`, …).
    pub fn bytes(&self, key: &str) -> Option<u64> {
        self.fields.bytes(key)
    }
}

// Name:	rs:main Q:Reg
// VmRSS:	   14024 kB
/// Parses `/proc/PID/status`. The `Name:` value is taken whole (everything after the tab).
pub fn parse_status(input: &[u8]) -> ProcStatus {
    let kv = key_values(input, Separator::Colon);
    let mut fields = kv.fields;
    // `Name:` is split at its first colon like every key; its value keeps later colons. Only
    // the leading tab is the separator: a name may start or end with spaces.
    if let Some(line) = Lines::new(input).find(|l| l.text.starts_with("Name:")) {
        let value = line.text["Name:".len()..]
            .strip_prefix('\t')
            .unwrap_or_else(|| line.text["Name:".len()..].trim_start());
        if let Some(f) = fields.0.iter_mut().find(|f| f.key == "Name") {
            f.raw = value.to_owned();
        }
    }
    let name = fields.raw("Name").map(unescape_comm);
    let has_vm = fields.get("VmSize").is_some();
    let kernel_thread = match fields.number("Kthread") {
        Some(k) => k == 1,
        None => !has_vm && fields.get("Threads").is_some() && !kv.truncated,
    };
    let missing = fields.missing(STATUS_MEMORY_KEYS);
    ProcStatus {
        name,
        pid: fields.number("Pid"),
        ppid: fields.number("PPid"),
        threads: fields.number("Threads"),
        kernel_thread,
        fields,
        missing,
        truncated: kv.truncated,
        stats: kv.stats,
    }
}

/// Undoes the kernel's escaping of `Name:` (`seq_escape_str` with `ESCAPE_SPACE |
/// ESCAPE_SPECIAL`: `\n`, `\t`, `\r`, `\f`, `\v`, `\\`), one escape at a time.
fn unescape_comm(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Sniffs /proc/PID/status: `Name:`, `State:`, `Tgid:`, `Pid:` lines.
pub fn sniff_status(head: &[u8]) -> Option<f32> {
    if !head.starts_with(b"Name:") {
        return None;
    }
    sniff_keys(
        head,
        Separator::Colon,
        &["Name", "State", "Tgid", "Pid", "PPid"],
    )
}

/// `/proc/PID/smaps_rollup`: the whole address space summed, sizes in bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SmapsRollup {
    /// The `[rollup]` header line (address range and flags), when present.
    pub header: Option<String>,
    /// Every field in file order (`Rss`, `Pss`, `Pss_Anon`, …).
    pub fields: Fields,
    /// The file is empty: the task has no address space (a kernel thread, or a process that
    /// exited while being read).
    pub empty: bool,
    /// Keys pgmortem reads that the file lacks: `Pss_Anon`, `Pss_File`, `Pss_Shmem` arrived in
    /// 5.0; before that only `Pss` is there.
    pub missing: Vec<String>,
    /// The file ends in the middle of a line.
    pub truncated: bool,
    /// Line accounting.
    pub stats: ParseStats,
}

/// Keys of smaps_rollup that pgmortem reads.
pub const SMAPS_ROLLUP_KEYS: &[&str] = &[
    "Rss",
    "Pss",
    "Pss_Anon",
    "Pss_File",
    "Pss_Shmem",
    "Anonymous",
    "AnonHugePages",
    "Swap",
];

impl SmapsRollup {
    /// A size field in bytes.
    pub fn bytes(&self, key: &str) -> Option<u64> {
        self.fields.bytes(key)
    }
}

// 56181d5b8000-7fff086e5000 ---p 00000000 00:00 0                          [rollup]
// Pss_Anon:           1937 kB
/// Parses `/proc/PID/smaps_rollup` (with or without the header line, with or without the
/// Pss_Anon/Pss_File/Pss_Shmem split).
pub fn parse_smaps_rollup(input: &[u8]) -> SmapsRollup {
    let mut lines = Lines::new(input);
    let first = lines.next();
    let header = first
        .as_ref()
        .filter(|l| is_vma_header(&l.text))
        .map(|l| l.text.trim_end().to_owned());
    let body = match (&header, first) {
        (Some(_), Some(_)) => {
            let cut = memchr::memchr(b'\n', input).map_or(input.len(), |i| i + 1);
            &input[cut..]
        }
        _ => input,
    };
    let mut kv = key_values(body, Separator::Colon);
    if header.is_some() {
        kv.stats.lines += 1;
        for f in &mut kv.fields.0 {
            f.line += 1;
        }
        for (n, _) in &mut kv.stats.unrecognized_examples {
            *n += 1;
        }
    }
    let empty = input.iter().all(u8::is_ascii_whitespace);
    let missing = if empty {
        Vec::new()
    } else {
        kv.fields.missing(SMAPS_ROLLUP_KEYS)
    };
    SmapsRollup {
        header,
        fields: kv.fields,
        empty,
        missing,
        truncated: kv.truncated,
        stats: kv.stats,
    }
}

// 56181d5b8000-7fff086e5000 ---p 00000000 00:00 0                          [rollup]
fn is_vma_header(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let range = words.next().unwrap_or_default();
    let perms = words.next().unwrap_or_default();
    let hex = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_hexdigit());
    matches!(range.split_once('-'), Some((a, b)) if hex(a) && hex(b)) && perms.len() == 4
}

/// Sniffs smaps_rollup: the `[rollup]` header, or `Rss:`/`Pss:` first.
pub fn sniff_smaps_rollup(head: &[u8]) -> Option<f32> {
    let first = Lines::new(head).next()?;
    if is_vma_header(&first.text) && first.text.trim_end().ends_with("[rollup]") {
        return Some(1.0);
    }
    if !head.starts_with(b"Rss:") {
        return None;
    }
    sniff_keys(
        head,
        Separator::Colon,
        &["Rss", "Pss", "Shared_Clean", "Private_Dirty"],
    )
}

/// One resource limit of `/proc/PID/limits`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ResourceLimit {
    /// The limit's name as the kernel prints it (`Max processes`, `Max address space`).
    pub name: String,
    /// The soft limit (what the process is held to); `None`: unlimited.
    pub soft: Option<u64>,
    /// The hard limit (how far the process may raise the soft one); `None`: unlimited.
    pub hard: Option<u64>,
    /// The unit printed (`bytes`, `processes`, `seconds`), when any.
    pub units: Option<String>,
    /// 1-based line number.
    pub line: u64,
}

/// `/proc/PID/limits`: a process's resource limits (`getrlimit`), in the order printed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProcLimits {
    /// Every limit row.
    pub limits: Vec<ResourceLimit>,
    /// Line accounting.
    pub stats: ParseStats,
}

impl ProcLimits {
    /// The limit named `name` (`Max processes`: RLIMIT_NPROC; `Max address space`: RLIMIT_AS).
    pub fn get(&self, name: &str) -> Option<&ResourceLimit> {
        self.limits.iter().find(|l| l.name == name)
    }
}

/// `unlimited` → `Some(None)`, a number → `Some(Some(n))`, anything else → `None`.
fn limit_value(token: &str) -> Option<Option<u64>> {
    if token == "unlimited" {
        Some(None)
    } else {
        token.parse().ok().map(Some)
    }
}

// Limit                     Soft Limit           Hard Limit           Units
// Max processes             96365                96365                processes
// Max address space         unlimited            unlimited            bytes
// Max nice priority         0                    0
/// Parses `/proc/PID/limits`: the header, then one row per limit (a name of several words,
/// the soft and hard limits as numbers or `unlimited`, and the unit when there is one).
pub fn parse_limits(input: &[u8]) -> ProcLimits {
    let mut out = ProcLimits::default();
    for line in Lines::new(input) {
        out.stats.lines += 1;
        if line.lossy {
            out.stats.invalid_utf8_lines += 1;
        }
        let text = line.text.as_ref();
        if text.trim().is_empty() || (text.starts_with("Limit ") && text.contains("Soft Limit")) {
            continue;
        }
        let tokens: Vec<&str> = text.split_whitespace().collect();
        let Some(at) = tokens.iter().position(|t| limit_value(t).is_some()) else {
            out.stats.unrecognized(line.number, text);
            continue;
        };
        let hard = tokens.get(at + 1).and_then(|t| limit_value(t));
        match (at, hard) {
            (1.., Some(hard)) if tokens.len() <= at + 3 => {
                out.limits.push(ResourceLimit {
                    name: tokens[..at].join(" "),
                    soft: limit_value(tokens[at]).flatten(),
                    hard,
                    units: tokens.get(at + 2).map(|u| (*u).to_owned()),
                    line: line.number,
                });
                out.stats.records += 1;
            }
            _ => out.stats.unrecognized(line.number, text),
        }
    }
    out
}

/// Sniffs `/proc/PID/limits` by its header line.
pub fn sniff_limits(head: &[u8]) -> Option<f32> {
    let first = Lines::new(head).next()?;
    let text = first.text.as_ref();
    (text.starts_with("Limit ") && text.contains("Soft Limit") && text.contains("Hard Limit"))
        .then_some(0.95)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_with_spaces_and_colons_is_kept_whole() {
        let s = parse_status(b"Name:\trs:main Q:Reg\nUmask:\t0022\nState:\tS (sleeping)\nPid:\t7\nVmSize:\t  100 kB\n");
        assert_eq!(s.name.as_deref(), Some("rs:main Q:Reg"));
        assert_eq!(s.pid, Some(7));
        assert_eq!(s.bytes("VmSize"), Some(102_400));
        let s = parse_status(b"Name:\t a b \\\\x\\n\nPid:\t1\n");
        assert_eq!(s.name.as_deref(), Some(" a b \\x\n"));
        // An escaped backslash followed by `n` is a backslash and an `n`, not a newline.
        let s = parse_status(b"Name:\ta\\\\nb\\t\nPid:\t1\n");
        assert_eq!(s.name.as_deref(), Some("a\\nb\t"));
    }

    #[test]
    fn kernel_thread_without_vm_lines_on_old_kernels() {
        let s = parse_status(
            b"Name:\tkswapd0\nState:\tS (sleeping)\nPid:\t40\nPPid:\t2\nThreads:\t1\nSigQ:\t0/1\n",
        );
        assert!(s.kernel_thread);
        assert_eq!(s.missing.len(), STATUS_MEMORY_KEYS.len());
        let s = parse_status(b"Name:\tpostgres\nPid:\t40\nVmSize:\t1 kB\nThreads:\t1\n");
        assert!(!s.kernel_thread);
    }

    #[test]
    fn smaps_rollup_without_pss_split_says_what_is_missing() {
        // 4.14-era layout: no Pss_Anon/Pss_File/Pss_Shmem, no Pss_Dirty.
        let r = parse_smaps_rollup(b"00400000-7ffd8a5f1000 ---p 00000000 00:00 0                                [rollup]\nRss:                2048 kB\nPss:                 900 kB\nShared_Clean:       1000 kB\nAnonymous:           500 kB\nSwap:                  0 kB\n");
        assert!(r.header.is_some());
        assert_eq!(
            r.missing,
            ["Pss_Anon", "Pss_File", "Pss_Shmem", "AnonHugePages"]
        );
        assert_eq!(r.bytes("Pss"), Some(900 * 1024));
        assert_eq!(r.fields.get("Rss").unwrap().line, 2);
        assert_eq!(r.stats.lines, 6);
    }

    #[test]
    fn empty_smaps_rollup_is_an_address_space_less_task() {
        let r = parse_smaps_rollup(b"");
        assert!(r.empty);
        assert!(r.missing.is_empty());
    }

    #[test]
    fn limits_with_and_without_units() {
        let l = parse_limits(
            b"Limit                     Soft Limit           Hard Limit           Units     \n\
              Max processes             31                   96365                processes \n\
              Max address space         1258291200           unlimited            bytes     \n\
              Max nice priority         0                    0                    \n\
              Max broken                lots                 lots                 \n",
        );
        let nproc = l.get("Max processes").unwrap();
        assert_eq!((nproc.soft, nproc.hard), (Some(31), Some(96365)));
        assert_eq!((nproc.units.as_deref(), nproc.line), (Some("processes"), 2));
        let address = l.get("Max address space").unwrap();
        assert_eq!((address.soft, address.hard), (Some(1_258_291_200), None));
        assert_eq!(l.get("Max nice priority").unwrap().units, None);
        assert_eq!((l.stats.records, l.stats.unrecognized_lines), (3, 1));
        assert_eq!(
            sniff_limits(
                b"Limit                     Soft Limit           Hard Limit           Units     \n"
            ),
            Some(0.95)
        );
        assert!(sniff_limits(b"Max processes 1 1 processes\n").is_none());
    }
}
