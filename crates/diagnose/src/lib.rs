//! Diagnosis: puts every event of a bundle on one clock, ties kernel OOM kills to PostgreSQL
//! crash-restart cycles, builds one model of the host from every source ([`facts`]), runs the
//! rule catalog ([`rules`]) over it, and builds the [`Report`].
//!
//! Input is an opened [`pgmortem_bundle::Bundle`]; output is a [`Report`] (schema
//! `pgmortem.report/v1`). Nothing here reads the machine's clock or environment: the same bundle
//! gives the same report anywhere.

mod caveats;
mod clock;
mod containers;
mod correlate;
mod digest;
pub mod facts;
mod ha;
mod human;
mod limits;
mod pooler;
mod report;
pub mod rules;
mod settings;
mod sources;
mod timeline;

pub use clock::zone_offset;
pub use human::{human_bytes, human_kb};
pub use pooler::{
    ClientsSaw, PoolerLifecycle, PoolerLine, PoolerProblem, PoolerStats, PoolerSummary,
};
pub use report::*;
pub use sources::DiagnoseError;

use jiff::Timestamp;
use pgmortem_bundle::Bundle;

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

/// A bundle read through: its logs, its clock, and the incidents correlation found. The
/// [`facts::Facts`] the rules read borrow from it.
pub(crate) struct Analysis<'b> {
    bundle: &'b Bundle,
    parsed: sources::Parsed,
    incidents: Vec<Incident>,
    /// Kubernetes' record of the pods' containers.
    containers: Vec<containers::ContainerSource>,
}

impl<'b> Analysis<'b> {
    /// Reads every source of `bundle` and correlates.
    pub(crate) fn new(
        bundle: &'b Bundle,
        options: &DiagnoseOptions,
    ) -> Result<Self, DiagnoseError> {
        let limits = limits::Limits::within(options.memory_limit / 2);
        let mut parsed = sources::parse_all(bundle, options, &limits)?;
        let kills = correlate::oom_kills(&parsed.kernel, &parsed.clock);
        let crashes = correlate::crashes(&parsed.postgres);
        let unclean = correlate::unclean_starts(&parsed.postgres, &crashes);
        let outages = correlate::PgOutages {
            crashes,
            unclean,
            postmasters: correlate::postmaster_pids(&parsed.postgres),
        };
        let mut incidents = correlate::incidents(&kills, &outages, options);
        correlate::tie_faults(
            &mut incidents,
            correlate::process_faults(&parsed.kernel, &parsed.clock),
            !parsed.postgres.is_empty(),
            options.match_tolerance_seconds,
        );
        correlate::tie_units(&mut incidents, &parsed.kernel, &parsed.clock);
        drop(outages);
        drop(kills);
        if let Some(caveat) = caveats::keep_latest_incidents(&mut incidents, limits.incidents) {
            parsed.caveats.push(caveat);
        }
        let containers = containers::read(bundle);
        containers::tie(&mut incidents, &containers, options);
        containers::amend_no_kernel_log(&mut parsed.caveats, &containers);
        pooler::tie(&mut incidents, &parsed.pooler, &parsed.postgres);
        ha::tie(&mut incidents, &parsed.ha, &parsed.clock);
        Ok(Self {
            bundle,
            parsed,
            incidents,
            containers,
        })
    }

    /// The facts the rules read.
    pub(crate) fn facts(&self) -> facts::Facts<'_> {
        facts::build(
            self.bundle,
            &self.parsed.kernel,
            &self.parsed.postgres,
            &self.parsed.ha,
            &self.incidents,
        )
    }
}

/// Diagnoses an opened bundle.
pub fn diagnose(bundle: &Bundle, options: &DiagnoseOptions) -> Result<Report, DiagnoseError> {
    let analysis = Analysis::new(bundle, options)?;
    let facts = analysis.facts();
    let (findings, not_evaluated) = rules::evaluate(&facts);
    let host = facts.host;
    let parsed = &analysis.parsed;
    let perf = facts
        .perf
        .into_iter()
        .map(|p| timeline::perf_summary(p, &parsed.clock))
        .collect();
    let mut timeline = timeline::build(
        &parsed.kernel,
        &parsed.postgres,
        containers::timeline(&analysis.containers),
        &parsed.clock,
    );
    timeline::add_ha(&mut timeline, &parsed.ha, &parsed.clock);
    let Analysis {
        parsed, incidents, ..
    } = analysis;
    let mut read_first = parsed.caveats;
    read_first.extend(caveats::obfuscation(bundle));
    read_first.extend(caveats::settings(bundle, &host.postgres));
    Ok(Report {
        schema: SCHEMA,
        generator: format!("pgmortem {}", env!("CARGO_PKG_VERSION")),
        caveats: read_first,
        clock: parsed.clock_info,
        collection: sources::collection(bundle),
        sources: parsed.summaries,
        incidents,
        findings,
        not_evaluated,
        host,
        timeline,
        perf,
        pooler: pooler::summaries(&parsed.pooler),
    })
}
