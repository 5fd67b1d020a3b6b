//! Kernel logs: every line form a bundle may hold (dmesg raw / `-T` / `-x` / `-r` / iso, raw
//! `/dev/kmsg`, journalctl short forms, syslog kern.log, pasted text), detected per line by
//! shape, and the events pgmortem needs assembled from them: OOM-killer reports from kernels 2.6
//! to 6.x, segfaults, page allocation failures and hung tasks.

mod types;

pub use types::*;

use crate::ParseStats;

/// Context the kernel parser cannot find in the input itself.
#[derive(Debug, Clone)]
pub struct KernelOptions {
    /// Year to give stamps that print none (journalctl short, BSD syslog). `None` leaves such
    /// wall times without a year-resolved civil time: they are then kept as monotonic-less
    /// lines with `wall: None`.
    pub year: Option<i16>,
    /// Lines longer than this many bytes are cut (and counted in `oversized_lines`).
    /// Default 64 KiB.
    pub max_line_bytes: usize,
}

impl Default for KernelOptions {
    fn default() -> Self {
        Self {
            year: None,
            max_line_bytes: 64 * 1024,
        }
    }
}

/// Everything parsed out of one kernel log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KernelLog {
    /// Events in input order.
    pub records: Vec<KernelRecord>,
    /// What was understood and what was not.
    pub stats: ParseStats,
}

use serde::Serialize;

/// Parses a whole kernel log held in memory.
pub fn parse(input: &[u8], options: &KernelOptions) -> KernelLog {
    let _ = options;
    let mut stats = ParseStats::default();
    for line in crate::lines::Lines::new(input) {
        stats.lines += 1;
        stats.unrecognized(line.number, &line.text);
    }
    KernelLog {
        records: Vec::new(),
        stats,
    }
}

/// How sure it is that `head` (the first few KiB of a file) is a kernel log; `None` when it is
/// not one. Used by the bundle reader to recognise files by content.
pub fn sniff(head: &[u8]) -> Option<f32> {
    let _ = head;
    None
}
