//! Recognising a file's kind from its first bytes.

use pgmortem_parse::{kernel, pglog, system};
use serde::Serialize;

/// What a bundle file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SourceKind {
    /// A kernel log in any of its printed forms (dmesg, journalctl -k, kern.log, …).
    KernelLog,
    /// A PostgreSQL server log (stderr format).
    PostgresLog,
    /// `/proc/uptime`.
    Uptime,
    /// A UTC wall-clock reading (`date -u +%Y-%m-%dT%H:%M:%S.%NZ`).
    Date,
    /// `/proc/stat` or its `btime` line: the boot time in epoch seconds.
    Btime,
    /// Nothing pgmortem reads (yet); listed in the report, not dropped.
    Unknown,
}

impl SourceKind {
    /// The snake_case name used in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::KernelLog => "kernel_log",
            SourceKind::PostgresLog => "postgres_log",
            SourceKind::Uptime => "uptime",
            SourceKind::Date => "date",
            SourceKind::Btime => "btime",
            SourceKind::Unknown => "unknown",
        }
    }
}

/// Recognises a file's kind from its first bytes (a few KiB are enough). The most confident
/// sniffer wins; ties go to the order kernel log, PostgreSQL log.
pub fn recognize(head: &[u8]) -> SourceKind {
    if system::parse_uptime(head).is_ok() {
        return SourceKind::Uptime;
    }
    if system::parse_date(head).is_ok() {
        return SourceKind::Date;
    }
    if system::parse_btime(head).is_ok() {
        return SourceKind::Btime;
    }
    let candidates = [
        (SourceKind::KernelLog, kernel::sniff(head)),
        (SourceKind::PostgresLog, pglog::sniff(head)),
    ];
    candidates
        .into_iter()
        .filter_map(|(kind, confidence)| confidence.map(|c| (kind, c)))
        .fold(None::<(SourceKind, f32)>, |best, (kind, c)| match best {
            Some((_, b)) if b >= c => best,
            _ => Some((kind, c)),
        })
        .map_or(SourceKind::Unknown, |(kind, _)| kind)
}
