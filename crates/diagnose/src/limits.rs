//! What the diagnosis keeps of the logs, within its share of the memory budget
//! ([`crate::options::DiagnoseOptions::memory_limit`]: the bundle holds its files within one half, the
//! diagnosis keeps its records within the other). At the default budget the limits are the
//! full ones; a smaller budget keeps proportionally fewer records, bytes and incidents, never
//! more. What is not kept is counted and said at the top of the report.

use pgmortem_parse::kernel::KernelLimits;
use pgmortem_parse::pglog::PgLogOptions;

use crate::digest::{self, DigestLimits};

/// The share of the budget at which every limit is the full one: half the default budget.
pub(crate) const FULL_BYTES: u64 = crate::options::DEFAULT_MEMORY_LIMIT / 2;

/// The smallest block of [`Limits::block_bytes`].
const MIN_BLOCK_BYTES: usize = 64 << 10;

/// The smallest share of the budget (its half) within which a PostgreSQL log is parsed on
/// several threads: under a 128 MiB budget it is read on one. Within a 64 MiB budget a 1 GiB
/// log took 65 MB read on two threads, 46 MB on one.
pub(crate) const PARALLEL_MIN_BYTES: u64 = 64 << 20;

/// The shortest line cap and record cap, whatever the budget (a library caller may ask for
/// less than the command line's 32 MiB).
const MIN_LINE_BYTES: usize = 64 << 10;

/// Incidents a report keeps (the latest).
pub(crate) const MAX_INCIDENTS: usize = 10_000;

/// Troubles of each pgbouncer log kept to tie to incidents (the latest): about 32 bytes each.
pub(crate) const MAX_POOLER_TROUBLE: usize = 200_000;

/// What a diagnosis keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Of each kernel log.
    pub kernel: KernelLimits,
    /// Of the PostgreSQL logs: the bytes are shared by the logs of a bundle, read one after
    /// another ([`Limits::after`]).
    pub digest: DigestLimits,
    /// Incidents kept.
    pub incidents: usize,
    /// Troubles of each pgbouncer log kept to tie to incidents.
    pub pooler_trouble: usize,
    /// The largest block a PostgreSQL log is parsed in on several threads: the records of a
    /// block wait for the block before them, and take about fifteen times its bytes, two
    /// blocks at a time. A ninety-sixth of the diagnosis's share, 64 KiB at least.
    pub block_bytes: usize,
    /// PostgreSQL log lines longer than this are cut (and counted): the default of
    /// [`PgLogOptions::max_line_bytes`], or a hundred-and-twenty-eighth of a smaller share
    /// (128 KiB within the smallest budget). A text of a record is allocated whole before it
    /// is cut to [`DigestLimits::text_bytes`]: within the smallest budget a line of 256 KiB
    /// took the process from 28 to 46 MB on 400 such records, as mimalloc gives texts over
    /// 200 KiB pages of their own and returns freed ones to the system only after a delay.
    pub line_bytes: usize,
    /// A PostgreSQL record stops growing at this many bytes: the default of
    /// [`PgLogOptions::max_record_bytes`], or a quarter of a smaller share.
    pub record_bytes: usize,
    /// Whether a large PostgreSQL log may be parsed on several threads: not within a share
    /// under [`PARALLEL_MIN_BYTES`], where each thread's records and allocator caches would
    /// take more than the share.
    pub parallel: bool,
}

impl Limits {
    /// The limits of a diagnosis within `bytes`: the full ones at [`FULL_BYTES`] and above,
    /// proportionally smaller below (at least one record of each sort).
    pub(crate) fn within(bytes: u64) -> Self {
        let share = |full: usize| -> usize {
            let scaled =
                (full as u128 * u128::from(bytes.min(FULL_BYTES))) / u128::from(FULL_BYTES);
            usize::try_from(scaled).unwrap_or(full).max(1)
        };
        let part = |divisor: u64| usize::try_from(bytes / divisor).unwrap_or(usize::MAX);
        let full_kernel = KernelLimits::default();
        let full_pg = PgLogOptions::default();
        let full_digest = DigestLimits::default();
        let per_kind = share(full_digest.per_kind as usize).max(2) as u64;
        Limits {
            kernel: KernelLimits {
                oom_reports: share(full_kernel.oom_reports),
                detailed_reports: share(full_kernel.detailed_reports),
                detail_bytes: share(full_kernel.detail_bytes),
                events: share(full_kernel.events),
            },
            digest: DigestLimits {
                per_kind,
                head_per_kind: per_kind * full_digest.head_per_kind / full_digest.per_kind,
                kept: share(full_digest.kept),
                bytes: share(full_digest.bytes),
                text_bytes: digest::KEPT_TEXT_BYTES,
            },
            incidents: share(MAX_INCIDENTS),
            pooler_trouble: share(MAX_POOLER_TROUBLE),
            block_bytes: usize::try_from(bytes.min(FULL_BYTES) / 96)
                .unwrap_or(usize::MAX)
                .max(MIN_BLOCK_BYTES),
            line_bytes: full_pg.max_line_bytes.min(part(128).max(MIN_LINE_BYTES)),
            record_bytes: full_pg.max_record_bytes.min(part(4).max(MIN_LINE_BYTES)),
            parallel: bytes >= PARALLEL_MIN_BYTES,
        }
    }

    /// The digest limits left for the next PostgreSQL log once earlier ones hold `held`
    /// bytes.
    pub(crate) fn after(&self, held: usize) -> DigestLimits {
        DigestLimits {
            bytes: self.digest.bytes.saturating_sub(held),
            ..self.digest
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits::within(FULL_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgmortem_parse::kernel;

    #[test]
    fn the_default_budget_keeps_the_full_limits() {
        let full = Limits::within(crate::options::DEFAULT_MEMORY_LIMIT / 2);
        assert_eq!(full.kernel, KernelLimits::default());
        assert_eq!(full.digest, DigestLimits::default());
        assert_eq!(full.incidents, MAX_INCIDENTS);
        assert_eq!(full.pooler_trouble, MAX_POOLER_TROUBLE);
        assert_eq!(Limits::within(u64::MAX), full);
    }

    #[test]
    fn a_smaller_budget_keeps_proportionally_less() {
        let small = Limits::within(crate::MIN_MEMORY_LIMIT / 2);
        assert_eq!(small.kernel.oom_reports, kernel::MAX_REPORTS / 16);
        assert_eq!(small.kernel.detailed_reports, kernel::DETAILED_REPORTS / 16);
        assert_eq!(small.kernel.detail_bytes, kernel::DETAIL_BYTES / 16);
        assert_eq!(small.digest.per_kind, digest::MAX_PER_KIND / 16);
        assert_eq!(small.digest.head_per_kind, digest::HEAD_PER_KIND / 16);
        assert_eq!(small.digest.bytes, digest::MAX_KEPT_BYTES / 16);
        assert_eq!(small.incidents, MAX_INCIDENTS / 16);
        assert_eq!(small.pooler_trouble, MAX_POOLER_TROUBLE / 16);
        assert_eq!(small.block_bytes, (16 << 20) / 96);
        assert!(
            Limits::default().block_bytes > 2 << 20,
            "the default reads as before"
        );
        assert!(Limits::default().parallel && !small.parallel);
        assert_eq!((small.line_bytes, small.record_bytes), (128 << 10, 4 << 20));
        let full = PgLogOptions::default();
        let default = Limits::default();
        assert_eq!(default.line_bytes, full.max_line_bytes);
        assert_eq!(default.record_bytes, full.max_record_bytes);
        assert!(Limits::within(PARALLEL_MIN_BYTES).parallel);
        let none = Limits::within(0);
        assert_eq!((none.kernel.oom_reports, none.digest.per_kind), (1, 2));
        assert_eq!(none.digest.head_per_kind, 1);
        assert_eq!((none.line_bytes, none.record_bytes), (64 << 10, 64 << 10));
    }

    #[test]
    fn later_logs_get_the_bytes_earlier_ones_left() {
        let limits = Limits::default();
        assert_eq!(
            limits.after(1 << 20).bytes,
            digest::MAX_KEPT_BYTES - (1 << 20)
        );
        assert_eq!(limits.after(usize::MAX).bytes, 0);
    }
}
