//! The perf profile a bundle carries (the collector's `perf script`): where the CPU time went,
//! and the share of samples under the call stacks the perf rules look for.

use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::perf::{EventTotal, Profile, ProfileOptions};

use super::all_of;
use crate::report::Evidence;

/// One `perf script` of the bundle, summarised.
#[derive(Debug, Clone)]
pub struct PerfFacts {
    /// The file.
    pub path: String,
    /// Its profile (the sampling event with the most samples broken down).
    pub profile: Profile,
}

impl PerfFacts {
    /// Share (0–1) of the profiled event's weight whose stack holds a symbol of the default
    /// stack query `name` (`thp_compaction`, `audit`, `snapshot_contention`,
    /// `mds_mitigation`, `spinlock`, `lwlock`, `page_fault`, `direct_reclaim`).
    pub fn stack_share(&self, name: &str) -> f64 {
        self.profile
            .stack_queries
            .iter()
            .find(|q| q.name == name)
            .map_or(0.0, |q| q.share)
    }

    /// Samples of the profiled event.
    pub fn samples(&self) -> u64 {
        self.profile.samples
    }

    /// The totals of event `name` (matched without modifiers: `cpu-migrations` finds
    /// `cpu-migrations:u`), when the script holds it.
    pub fn event(&self, name: &str) -> Option<&EventTotal> {
        self.profile
            .events
            .iter()
            .find(|e| pgmortem_parse::perf::event_matches(&e.event, name))
    }

    /// Evidence pointing at the profile: its first line, saying `what`.
    pub fn evidence(&self, what: impl Into<String>) -> Evidence {
        Evidence {
            path: self.path.clone(),
            line: 1,
            what: what.into(),
            key: self.profile.event.clone(),
        }
    }
}

pub(super) fn build(bundle: &Bundle) -> Vec<PerfFacts> {
    all_of(bundle, SourceKind::PerfScript)
        .map(|source| PerfFacts {
            path: source.path.clone(),
            profile: Profile::from_input(&source.bytes, &ProfileOptions::default()),
        })
        .filter(|p| p.profile.samples > 0)
        .collect()
}
