//! What the diagnosis is told that a bundle may not say: the host's boot time and zone, the
//! log prefix, the matching tolerances, the threads and the memory budget.

use jiff::Timestamp;

/// What the diagnosis needs that a bundle may not say.
#[derive(Debug, Clone)]
pub struct DiagnoseOptions {
    /// The host's boot time, overriding any anchor found in the bundle.
    pub boot_time: Option<Timestamp>,
    /// UTC offset (seconds east) of wall times printed without a zone (dmesg -T, syslog).
    /// Default: UTC, with a note in the report.
    pub host_utc_offset_seconds: Option<i32>,
    /// The PostgreSQL `log_line_prefix`; `None` lets the parser detect it.
    pub pg_prefix: Option<String>,
    /// How far apart (seconds) an OOM kill and a crash line with the same PID may be. Default 120.
    pub match_tolerance_seconds: f64,
    /// How far apart (seconds) an OOM kill of `postgres` and a signal-9 crash with another PID
    /// may be to be tied as a PID-namespace match. Default 10.
    pub pid_namespace_tolerance_seconds: f64,
    /// Threads a large PostgreSQL log is parsed on; `None`: one per available core. The report
    /// is the same whatever the number.
    pub threads: Option<usize>,
    /// PostgreSQL logs of at least this many bytes are parsed on [`DiagnoseOptions::threads`]
    /// threads, smaller ones in one pass. Default 16 MiB.
    pub parallel_min_bytes: u64,
    /// The cap on logs the bundle is opened with by `pgmortem::analyze`
    /// ([`pgmortem_bundle::OpenOptions::max_log_bytes`]): `None` (the default) reads every log
    /// whole; `Some(n)` reads only the last `n` bytes of a larger log, and the report says so
    /// at the top (caveat `log_not_read_whole`). [`diagnose`] reads what the bundle holds.
    pub max_log_bytes: Option<u64>,
    /// The memory budget of one analysis by `pgmortem::analyze`, in bytes (default 512 MiB):
    /// half for the files the bundle holds in memory
    /// ([`pgmortem_bundle::OpenOptions::within`]: larger logs are read from disk, larger
    /// files of other kinds keep their end, with a note), the rest for reading the logs and
    /// what the diagnosis keeps of them ([`diagnose`] too): records per kind and in all, their
    /// bytes, OOM reports and their details, incidents, all in proportion to that half below
    /// the default, and a large log read in smaller blocks (on one thread under 128 MiB).
    pub memory_limit: u64,
}

/// The default of [`DiagnoseOptions::memory_limit`].
pub const DEFAULT_MEMORY_LIMIT: u64 = 512 << 20;

/// The smallest [`DiagnoseOptions::memory_limit`] the command line and the Python package
/// accept: below it not even a bundle's small files fit.
pub const MIN_MEMORY_LIMIT: u64 = 32 << 20;

impl Default for DiagnoseOptions {
    fn default() -> Self {
        Self {
            boot_time: None,
            host_utc_offset_seconds: None,
            pg_prefix: None,
            match_tolerance_seconds: 120.0,
            pid_namespace_tolerance_seconds: 10.0,
            threads: None,
            parallel_min_bytes: 16 << 20,
            max_log_bytes: None,
            memory_limit: DEFAULT_MEMORY_LIMIT,
        }
    }
}
