//! The perf profile a bundle carries (the collector's `perf script`): where the CPU time went,
//! and the share of samples under the call stacks the perf rules look for.

use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::perf::{EventTotal, FoldOptions, Folder, Profile, ProfileOptions};

use super::all_of;
use crate::report::Evidence;

/// One `perf script` of the bundle, summarised.
#[derive(Debug, Clone)]
pub struct PerfFacts {
    /// The file.
    pub path: String,
    /// Its profile (the sampling event with the most samples broken down).
    pub profile: Profile,
    /// The profiled event's collapsed stacks, sorted (what `pgmortem collapse-perf --event`
    /// prints for it): the flame graph's input.
    pub stacks: Vec<(String, u64)>,
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

    /// Weight of the profiled event spent running something: all of it but the idle task
    /// (`swapper`), which `perf record -a` samples on idle CPUs when the timer fires there.
    pub fn busy_weight(&self) -> u64 {
        let idle: u64 = self
            .profile
            .by_comm
            .iter()
            .filter(|g| g.name == "swapper" || g.name.starts_with("swapper/"))
            .map(|g| g.weight)
            .sum();
        self.profile.weight.saturating_sub(idle)
    }

    /// Share (0–1) of the busy weight whose stack holds a symbol of the default stack query
    /// `name`: how much of the time the CPUs were doing something, they spent there.
    pub fn busy_share(&self, name: &str) -> f64 {
        let busy = self.busy_weight();
        if busy == 0 {
            return 0.0;
        }
        self.profile
            .stack_queries
            .iter()
            .find(|q| q.name == name)
            .map_or(0.0, |q| q.weight as f64 / busy as f64)
    }

    /// Share (0–1) of the busy weight whose stack holds a symbol matching `patterns` (globs).
    pub fn busy_share_of(&self, patterns: &[&str]) -> f64 {
        let busy = self.busy_weight();
        if busy == 0 {
            return 0.0;
        }
        self.profile.stack_share("query", patterns).weight as f64 / busy as f64
    }

    /// Seconds the profile covers.
    pub fn seconds(&self) -> Option<f64> {
        self.profile.duration_seconds.filter(|s| *s > 0.0)
    }

    /// The symbols of the heaviest leaf functions matching `patterns`, with their share of the
    /// busy weight, heaviest first (at most `n`).
    pub fn top_matching(&self, patterns: &[&str], n: usize) -> Vec<(String, f64)> {
        let busy = self.busy_weight().max(1) as f64;
        self.profile
            .top_inclusive
            .iter()
            .filter(|f| {
                patterns
                    .iter()
                    .any(|p| pgmortem_parse::perf::glob_match(p, &f.symbol))
            })
            .take(n)
            .map(|f| (f.symbol.clone(), f.weight as f64 / busy))
            .collect()
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
            host_file: None,
            host_line: None,
        }
    }
}

pub(super) fn build(bundle: &Bundle) -> Vec<PerfFacts> {
    all_of(bundle, SourceKind::PerfScript)
        .filter_map(|source| {
            let profile = Profile::from_input(&source.bytes, &ProfileOptions::default());
            if profile.samples == 0 {
                return None;
            }
            // A second pass folds the profiled event only (the folder would otherwise take the
            // first sample's event); on the threads available, as `collapse-perf` does.
            let mut folder = Folder::new(FoldOptions {
                event: profile.event.clone(),
                ..FoldOptions::default()
            });
            let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
            folder.add_input(&source.bytes, threads);
            Some(PerfFacts {
                path: source.path.clone(),
                profile,
                stacks: folder.into_sorted(),
            })
        })
        .collect()
}
