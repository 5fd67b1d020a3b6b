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
mod groups;
mod ha;
mod human;
mod limits;
mod options;
mod pooler;
mod report;
pub mod rules;
mod settings;
mod sources;
mod timeline;

pub use clock::zone_offset;
pub use groups::group as group_incidents;
pub use human::{duration as human_duration, human_bytes, human_kb, quote, quote_cut, signal_name};
pub use options::{DEFAULT_MEMORY_LIMIT, DiagnoseOptions, MIN_MEMORY_LIMIT};
pub use report::*;
pub use sources::DiagnoseError;

use pgmortem_bundle::Bundle;

/// A bundle read through: its logs, its clock, and the incidents correlation found. The
/// [`facts::Facts`] the rules read borrow from it.
pub(crate) struct Analysis<'b> {
    bundle: &'b Bundle,
    parsed: sources::Parsed,
    /// The instance the bundle is about.
    instance: facts::InstanceFacts,
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
            failed_starts: correlate::failed_starts(&parsed.postgres),
            postmasters: correlate::postmaster_pids(&parsed.postgres),
        };
        let instance = facts::instance(bundle, &parsed.postgres);
        let mut incidents = correlate::incidents(
            &kills,
            &outages,
            options,
            &correlate::Instance::new(
                &instance.processes,
                &parsed.postgres,
                bundle.manifest.as_ref().and_then(|m| {
                    Some((
                        m.postmaster_pid?,
                        m.postmaster_started.as_deref()?.parse().ok()?,
                    ))
                }),
            ),
        );
        correlate::tie_faults(
            &mut incidents,
            correlate::process_faults(&parsed.kernel, &parsed.clock),
            !parsed.postgres.is_empty(),
            options.match_tolerance_seconds,
        );
        correlate::tie_units(&mut incidents, &parsed.kernel, &parsed.clock);
        correlate::tie_kernel_causes(
            &mut incidents,
            &parsed.kernel,
            &parsed.clock,
            options.match_tolerance_seconds,
        );
        correlate::mark_still_down(
            &mut incidents,
            &parsed.postgres,
            sources::collection(bundle).collected_at,
        );
        drop(outages);
        drop(kills);
        if let Some(caveat) = caveats::keep_latest_incidents(&mut incidents, limits.incidents) {
            parsed.caveats.push(caveat);
        }
        let containers = containers::read(bundle);
        containers::tie(&mut incidents, &containers, options);
        containers::amend_no_kernel_log(&mut parsed.caveats, &containers);
        pooler::tie(
            &mut incidents,
            &parsed.pooler,
            parsed.postgres.iter().map(|p| &p.digest),
        );
        ha::tie(&mut incidents, &parsed.ha, &parsed.clock);
        Ok(Self {
            bundle,
            parsed,
            instance,
            incidents,
            containers,
        })
    }

    /// The facts the rules read.
    pub(crate) fn facts(&self) -> facts::Facts<'_> {
        facts::build(
            self.bundle,
            self.instance.clone(),
            &self.parsed.kernel,
            &self.parsed.postgres,
            &self.parsed.ha,
            &self.incidents,
            &self.parsed.clock,
        )
    }
}

/// Diagnoses an opened bundle.
pub fn diagnose(bundle: &Bundle, options: &DiagnoseOptions) -> Result<Report, DiagnoseError> {
    let analysis = Analysis::new(bundle, options)?;
    let facts = analysis.facts();
    let (mut findings, not_evaluated) = rules::evaluate(&facts);
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
    let groups = groups::group(&incidents);
    groups::tag_findings(&mut findings, &groups);
    let mut read_first = parsed.caveats;
    read_first.extend(caveats::obfuscation(bundle));
    read_first.extend(caveats::settings(bundle, &host.postgres));
    read_first.extend(caveats::other_clusters(&host.processes));
    Ok(Report {
        schema: SCHEMA,
        generator: format!("pgmortem {}", env!("CARGO_PKG_VERSION")),
        caveats: read_first,
        clock: parsed.clock_info,
        collection: sources::collection(bundle),
        sources: parsed.summaries,
        incidents,
        groups,
        findings,
        not_evaluated,
        host,
        timeline,
        perf,
        pooler: pooler::summaries(&parsed.pooler),
    })
}
