//! Snapshot of what the perf reader makes of every `perf script` sample in
//! `fixtures/formats/perf`: real captures (`local-*`, gzipped when large) and hand-written edge
//! cases (`edge-*`). Adding a file adds a test.
//!
//! Each snapshot holds the line statistics, the header, the profile's main figures, the folded
//! stack count, and the samples themselves (all of them for small files, the first three and
//! the last one otherwise).

mod common;

use std::path::Path;

use pgmortem_parse::perf::{self, FoldOptions, Folder, Profile, ProfileOptions};
use serde_json::{Value, json};

fn read(path: &Path) -> Vec<u8> {
    common::read_maybe_gzipped(path)
}

fn digest(bytes: &[u8]) -> Value {
    let samples: Vec<_> = perf::samples(bytes).collect();
    let shown: Vec<&perf::PerfSample<'_>> = if samples.len() <= 20 {
        samples.iter().collect()
    } else {
        samples[..3].iter().chain(samples.last()).collect()
    };
    let profile = Profile::from_input(
        bytes,
        &ProfileOptions {
            top: 5,
            ..ProfileOptions::default()
        },
    );
    let mut folder = Folder::new(FoldOptions::default());
    samples.iter().for_each(|s| folder.add(s));
    let folded_samples = folder.folded_samples();
    let stacks = folder.into_sorted().len();
    let queries: Vec<Value> = profile
        .stack_queries
        .iter()
        .filter(|q| q.samples > 0)
        .map(|q| json!({"name": q.name, "samples": q.samples, "share": q.share}))
        .collect();
    json!({
        "stats": profile.stats,
        "counts": profile.counts,
        "header": profile.header,
        "cpus": profile.cpus,
        "duration_seconds": profile.duration_seconds,
        "events": profile.events,
        "profiled_event": profile.event,
        "samples": profile.samples,
        "kernel_share": profile.kernel_share,
        "user_share": profile.user_share,
        "by_comm": profile.by_comm,
        "top_self": profile.top_self,
        "top_inclusive": profile.top_inclusive,
        "timeline_buckets": profile.timeline.len(),
        "stack_queries_hit": queries,
        "kvm_exit_reasons": profile.kvm_exit_reasons,
        "folded": {"event": perf::samples(bytes).next().map(|s| s.event.to_string()), "samples": folded_samples, "stacks": stacks},
        "samples_shown": shown,
    })
}

#[test]
fn perf_format_samples() {
    insta::glob!("../../../fixtures/formats/perf", "*.{txt,txt.gz}", |path| {
        insta::assert_json_snapshot!(digest(&read(path)));
    });
}
