//! Where the time went: a summary of the samples of one `perf script` text.

use std::collections::HashMap;

use serde::Serialize;

use super::reader::Samples;
use super::types::{PerfHeader, PerfLineCounts, PerfSample};
use crate::ParseStats;

/// A named set of symbol globs (`audit_*`): the profile reports the share of samples whose
/// stack holds any of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StackQuery {
    /// Name of the figure (`thp_compaction`).
    pub name: String,
    /// Symbol globs: `*` matches any run of characters, `?` one character; matched against
    /// the whole symbol (offset excluded).
    pub patterns: Vec<String>,
}

impl StackQuery {
    /// A query from a name and glob strings.
    pub fn new(name: &str, patterns: &[&str]) -> Self {
        Self {
            name: name.to_owned(),
            patterns: patterns.iter().map(|p| (*p).to_owned()).collect(),
        }
    }
}

/// The stack queries a profile answers by default: the signatures of the usual "the host
/// hangs but nothing crashed" causes on a PostgreSQL server.
pub fn default_stack_queries() -> Vec<StackQuery> {
    vec![
        StackQuery::new(
            "thp_compaction",
            &[
                "compaction_alloc",
                "compact_zone",
                // compact_zone as Linux 6.18 names it (pg15-thp-compaction-perf).
                "__compact_zone",
                "compact_zone_order",
                "try_to_compact_pages",
                "__alloc_pages_direct_compact",
                "isolate_migratepages*",
            ],
        ),
        StackQuery::new(
            "direct_reclaim",
            &[
                "__alloc_pages_direct_reclaim",
                "try_to_free_pages",
                "do_try_to_free_pages",
                "shrink_node",
            ],
        ),
        StackQuery::new("audit", &["audit_*", "__audit_*"]),
        StackQuery::new("snapshot_contention", &["GetSnapshotData"]),
        StackQuery::new(
            "mds_mitigation",
            &[
                "mds_clear_cpu_buffers",
                "clear_cpu_buffers",
                "x86_clear_cpu_buffers",
                "verw*",
            ],
        ),
        StackQuery::new(
            "kvm_pause_exit",
            &["handle_pause", "pause_interception", "kvm_vcpu_on_spin"],
        ),
        StackQuery::new(
            "spinlock",
            &[
                "native_queued_spin_lock_slowpath",
                "queued_spin_lock_slowpath",
                "s_lock",
                "perform_spin_delay",
            ],
        ),
        StackQuery::new(
            "lwlock",
            &["LWLockAcquire", "LWLockAcquireOrWait", "LWLockWaitForVar"],
        ),
        StackQuery::new(
            "page_fault",
            &["asm_exc_page_fault", "exc_page_fault", "do_page_fault"],
        ),
    ]
}

/// What the profile covers and how finely.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileOptions {
    /// The event to break down (full name or without modifiers, see
    /// [`super::event_matches`]). `None`: the event with the most samples among those that
    /// print a period (sampling events such as `cpu-clock`, `cycles`), else among all.
    pub event: Option<String>,
    /// Entries kept in each top list (`by_comm`, `by_pid`, `top_self`, `top_inclusive`).
    /// Default 25.
    pub top: usize,
    /// Width of a timeline bucket in seconds (default 1.0). Doubled until the timeline has at
    /// most [`MAX_BUCKETS`] buckets.
    pub bucket_seconds: f64,
    /// Stack queries to answer (default [`default_stack_queries`]).
    pub stack_queries: Vec<StackQuery>,
}

/// Upper bound on timeline buckets.
pub const MAX_BUCKETS: usize = 10_000;

impl Default for ProfileOptions {
    fn default() -> Self {
        Self {
            event: None,
            top: 25,
            bucket_seconds: 1.0,
            stack_queries: default_stack_queries(),
        }
    }
}

/// Samples and summed periods of one event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventTotal {
    /// Event name as printed.
    pub event: String,
    /// Samples.
    pub samples: u64,
    /// Sum of the sample weights (periods; 1 per sample without a period).
    pub weight: u64,
    /// Samples that had at least one frame.
    pub samples_with_frames: u64,
}

/// Samples, weight and kernel share of one group (a process name, a pid, a time bucket).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupShare {
    /// The group: a process name, or for `by_pid` the pid as text.
    pub name: String,
    /// For `by_pid`: the pid (the printed id when perf printed only one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i32>,
    /// For `by_pid`: the process name seen most recently for that pid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comm: Option<String>,
    /// Samples.
    pub samples: u64,
    /// Summed weight.
    pub weight: u64,
    /// `weight` over the profiled event's total weight.
    pub share: f64,
    /// Share of this group's weight whose leaf frame is in the kernel.
    pub kernel_share: f64,
}

/// A function (symbol in a DSO) and its self or inclusive weight.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionShare {
    /// Symbol without offset (`[unknown]` when perf had none).
    pub symbol: String,
    /// DSO (`[kernel.kallsyms]`, `/usr/lib/postgresql/15/bin/postgres`).
    pub dso: String,
    /// Samples (self: the function is the leaf; inclusive: anywhere in the stack, once per
    /// sample).
    pub samples: u64,
    /// Summed weight of those samples.
    pub weight: u64,
    /// `weight` over the profiled event's total weight.
    pub share: f64,
}

/// One timeline bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bucket {
    /// Start of the bucket on perf's clock (seconds).
    pub start: f64,
    /// Samples in the bucket.
    pub samples: u64,
    /// Summed weight.
    pub weight: u64,
    /// Weight whose leaf frame is in the kernel.
    pub kernel_weight: u64,
}

/// The answer to one [`StackQuery`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StackShare {
    /// The query's name.
    pub name: String,
    /// Its globs.
    pub patterns: Vec<String>,
    /// Samples whose stack holds a matching symbol.
    pub samples: u64,
    /// Their summed weight.
    pub weight: u64,
    /// `weight` over the profiled event's total weight (0 when there is no weight).
    pub share: f64,
}

/// `kvm:kvm_exit` samples per exit reason (`PAUSE_INSTRUCTION`, `HLT`, `EPT_VIOLATION`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExitReason {
    /// The reason as printed in the payload.
    pub reason: String,
    /// Samples.
    pub samples: u64,
}

/// The summary of a `perf script` text. Every share is a weight ratio in 0..=1.
#[derive(Debug, Clone, Serialize)]
pub struct Profile {
    /// The `--header` block, empty without one.
    pub header: PerfHeader,
    /// Line statistics (`records` = samples).
    pub stats: ParseStats,
    /// Header, comment, blank, frame and srcline line counts.
    pub counts: PerfLineCounts,
    /// `nrcpus online` from the header.
    pub cpus: Option<u32>,
    /// `sample duration` from the header, else last minus first sample time.
    pub duration_seconds: Option<f64>,
    /// Every event in the input, most samples first.
    pub events: Vec<EventTotal>,
    /// The event the rest of the profile breaks down (`None` for an input without samples).
    pub event: Option<String>,
    /// Samples of that event.
    pub samples: u64,
    /// Their summed weight.
    pub weight: u64,
    /// Share of the weight whose leaf frame runs in the kernel.
    pub kernel_share: f64,
    /// Share of the weight whose leaf frame runs in user space.
    pub user_share: f64,
    /// Share of the weight without frames (no ip in the layout).
    pub no_frame_share: f64,
    /// Per process name, heaviest first (at most `top`).
    pub by_comm: Vec<GroupShare>,
    /// Per pid (the printed id when there is only one), heaviest first (at most `top`).
    pub by_pid: Vec<GroupShare>,
    /// Functions by self weight (leaf frame), heaviest first.
    pub top_self: Vec<FunctionShare>,
    /// Functions by inclusive weight (anywhere in the stack), heaviest first.
    pub top_inclusive: Vec<FunctionShare>,
    /// Width of the timeline buckets in seconds.
    pub bucket_seconds: f64,
    /// Contiguous buckets from the first sample with a time (empty without times).
    pub timeline: Vec<Bucket>,
    /// The answers to the stack queries.
    pub stack_queries: Vec<StackShare>,
    /// `kvm:kvm_exit` exit reasons, all samples of that tracepoint.
    pub kvm_exit_reasons: Vec<ExitReason>,
    #[serde(skip)]
    stacks: Stacks,
}

/// Unique stacks of the profiled event, as sorted sets of function ids, for
/// [`Profile::stack_share`].
#[derive(Debug, Clone, Default)]
struct Stacks {
    symbols: Vec<String>,
    sets: Vec<(Box<[u32]>, Acc)>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Acc {
    samples: u64,
    weight: u64,
    kernel_weight: u64,
}

impl Acc {
    fn add(&mut self, weight: u64, kernel: bool) {
        self.samples += 1;
        self.weight += weight;
        if kernel {
            self.kernel_weight += weight;
        }
    }
}

/// Everything gathered for one event.
#[derive(Debug, Default)]
struct EventAcc {
    first_seen: usize,
    has_period: bool,
    total: Acc,
    with_frames: u64,
    user_weight: u64,
    no_frame_weight: u64,
    by_comm: HashMap<String, Acc>,
    by_pid: HashMap<i32, (String, Acc)>,
    functions: HashMap<String, u32>,
    key: String,
    function_names: Vec<(String, String)>,
    self_acc: HashMap<u32, Acc>,
    inclusive: HashMap<u32, Acc>,
    times: Vec<(f64, u64, bool)>,
    stacks: HashMap<Box<[u32]>, Acc>,
    scratch: Vec<u32>,
}

impl EventAcc {
    fn function(&mut self, symbol: &str, dso: &str) -> u32 {
        self.key.clear();
        self.key.push_str(symbol);
        self.key.push('\0');
        self.key.push_str(dso);
        if let Some(&id) = self.functions.get(self.key.as_str()) {
            return id;
        }
        let id = self.function_names.len() as u32;
        self.function_names
            .push((symbol.to_owned(), dso.to_owned()));
        self.functions.insert(self.key.clone(), id);
        id
    }

    fn add(&mut self, sample: &PerfSample<'_>) {
        let weight = sample.weight();
        self.has_period |= sample.period.is_some();
        let leaf = sample.frames.first();
        let kernel = leaf.is_some_and(|f| f.is_kernel());
        self.total.add(weight, kernel);
        match leaf {
            None => self.no_frame_weight += weight,
            Some(_) if !kernel => self.user_weight += weight,
            Some(_) => {}
        }
        self.by_comm
            .entry(sample.comm.to_string())
            .or_default()
            .add(weight, kernel);
        let pid = self
            .by_pid
            .entry(sample.pid_or_tid())
            .or_insert_with(|| (String::new(), Acc::default()));
        if pid.0 != sample.comm {
            pid.0 = sample.comm.to_string();
        }
        pid.1.add(weight, kernel);
        if let Some(time) = sample.time {
            self.times.push((time, weight, kernel));
        }
        if sample.frames.is_empty() {
            return;
        }
        self.with_frames += 1;
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        for (i, frame) in sample.frames.iter().enumerate() {
            let id = self.function(&frame.symbol, &frame.dso);
            if i == 0 {
                self.self_acc.entry(id).or_default().add(weight, kernel);
            }
            ids.push(id);
        }
        ids.sort_unstable();
        ids.dedup();
        for &id in &ids {
            self.inclusive.entry(id).or_default().add(weight, kernel);
        }
        match self.stacks.get_mut(ids.as_slice()) {
            Some(acc) => acc.add(weight, kernel),
            None => {
                let mut acc = Acc::default();
                acc.add(weight, kernel);
                self.stacks.insert(ids.clone().into_boxed_slice(), acc);
            }
        }
        self.scratch = ids;
    }
}

/// Builds a [`Profile`] from samples fed one at a time (so one pass can also fold them).
#[derive(Debug, Default)]
pub struct ProfileBuilder {
    options: ProfileOptions,
    events: HashMap<String, EventAcc>,
    kvm_exits: HashMap<String, u64>,
}

impl ProfileBuilder {
    /// A builder with `options`.
    pub fn new(options: ProfileOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// Adds one sample.
    pub fn add(&mut self, sample: &PerfSample<'_>) {
        let next = self.events.len();
        let acc = match self.events.get_mut(sample.event.as_ref()) {
            Some(acc) => acc,
            None => self
                .events
                .entry(sample.event.to_string())
                .or_insert_with(|| EventAcc {
                    first_seen: next,
                    ..EventAcc::default()
                }),
        };
        acc.add(sample);
        if sample.event == "kvm:kvm_exit" {
            if let Some(reason) = sample.trace.as_deref().and_then(kvm_exit_reason) {
                *self.kvm_exits.entry(reason.to_owned()).or_insert(0) += 1;
            }
        }
    }

    /// The profile, given the reader's header and statistics.
    pub fn finish(self, header: PerfHeader, stats: ParseStats, counts: PerfLineCounts) -> Profile {
        let options = self.options;
        let mut events: Vec<EventTotal> = self
            .events
            .iter()
            .map(|(name, acc)| EventTotal {
                event: name.clone(),
                samples: acc.total.samples,
                weight: acc.total.weight,
                samples_with_frames: acc.with_frames,
            })
            .collect();
        events.sort_by(|a, b| {
            b.samples.cmp(&a.samples).then_with(|| {
                self.events[&a.event]
                    .first_seen
                    .cmp(&self.events[&b.event].first_seen)
            })
        });
        let chosen = match &options.event {
            Some(wanted) => self
                .events
                .keys()
                .filter(|name| super::event_matches(name, wanted))
                .min_by_key(|name| self.events[*name].first_seen)
                .cloned(),
            // The sampling event with the most samples (tracepoints print no period and
            // count occurrences, not time), else the event with the most samples.
            None => events
                .iter()
                .find(|e| self.events[&e.event].has_period)
                .or(events.first())
                .map(|e| e.event.clone()),
        };
        let mut kvm_exit_reasons: Vec<ExitReason> = self
            .kvm_exits
            .into_iter()
            .map(|(reason, samples)| ExitReason { reason, samples })
            .collect();
        kvm_exit_reasons.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.reason.cmp(&b.reason)));
        let cpus = header.cpus_online();
        let mut events_map = self.events;
        let acc = chosen
            .as_ref()
            .and_then(|name| events_map.remove(name))
            .unwrap_or_default();
        let total = acc.total.weight;
        let ratio = |w: u64| {
            if total == 0 {
                0.0
            } else {
                w as f64 / total as f64
            }
        };
        let group_kernel = |a: &Acc| {
            if a.weight == 0 {
                0.0
            } else {
                a.kernel_weight as f64 / a.weight as f64
            }
        };

        let mut by_comm: Vec<GroupShare> = acc
            .by_comm
            .iter()
            .map(|(name, a)| GroupShare {
                name: name.clone(),
                pid: None,
                comm: None,
                samples: a.samples,
                weight: a.weight,
                share: ratio(a.weight),
                kernel_share: group_kernel(a),
            })
            .collect();
        sort_groups(&mut by_comm, options.top);
        let mut by_pid: Vec<GroupShare> = acc
            .by_pid
            .iter()
            .map(|(pid, (comm, a))| GroupShare {
                name: pid.to_string(),
                pid: Some(*pid),
                comm: Some(comm.clone()),
                samples: a.samples,
                weight: a.weight,
                share: ratio(a.weight),
                kernel_share: group_kernel(a),
            })
            .collect();
        sort_groups(&mut by_pid, options.top);

        let functions = |map: &HashMap<u32, Acc>| {
            let mut list: Vec<FunctionShare> = map
                .iter()
                .map(|(id, a)| {
                    let (symbol, dso) = &acc.function_names[*id as usize];
                    FunctionShare {
                        symbol: symbol.clone(),
                        dso: dso.clone(),
                        samples: a.samples,
                        weight: a.weight,
                        share: ratio(a.weight),
                    }
                })
                .collect();
            list.sort_by(|a, b| {
                b.weight
                    .cmp(&a.weight)
                    .then_with(|| a.symbol.cmp(&b.symbol))
                    .then_with(|| a.dso.cmp(&b.dso))
            });
            list.truncate(options.top);
            list
        };
        let top_self = functions(&acc.self_acc);
        let top_inclusive = functions(&acc.inclusive);

        let (bucket_seconds, timeline) = timeline(&acc.times, options.bucket_seconds);
        let duration_seconds = header.sample_duration_seconds().or_else(|| {
            let first = acc.times.iter().map(|t| t.0).reduce(f64::min)?;
            let last = acc.times.iter().map(|t| t.0).reduce(f64::max)?;
            Some(last - first)
        });

        let stacks = Stacks {
            symbols: acc.function_names.iter().map(|(s, _)| s.clone()).collect(),
            sets: acc.stacks.into_iter().collect(),
        };
        let mut profile = Profile {
            header,
            stats,
            counts,
            cpus,
            duration_seconds,
            events,
            event: chosen,
            samples: acc.total.samples,
            weight: total,
            kernel_share: ratio(acc.total.kernel_weight),
            user_share: ratio(acc.user_weight),
            no_frame_share: ratio(acc.no_frame_weight),
            by_comm,
            by_pid,
            top_self,
            top_inclusive,
            bucket_seconds,
            timeline,
            stack_queries: Vec::new(),
            kvm_exit_reasons,
            stacks,
        };
        profile.stack_queries = options
            .stack_queries
            .iter()
            .map(|q| profile.stack_share(&q.name, &q.patterns))
            .collect();
        profile
    }
}

impl Profile {
    /// Parses a whole `perf script` text and summarises it.
    pub fn from_input(input: &[u8], options: &ProfileOptions) -> Profile {
        let mut samples = Samples::new(input);
        let mut builder = ProfileBuilder::new(options.clone());
        for sample in samples.by_ref() {
            builder.add(&sample);
        }
        let (header, stats, counts) = samples.finish();
        builder.finish(header, stats, counts)
    }

    /// Share of the profiled event's weight whose stack holds a symbol matching any of
    /// `patterns` (globs, `*` and `?`). Answered from the unique stacks kept in the profile,
    /// so any query can be asked after parsing.
    pub fn stack_share<S: AsRef<str>>(&self, name: &str, patterns: &[S]) -> StackShare {
        let matching: Vec<bool> = self
            .stacks
            .symbols
            .iter()
            .map(|s| patterns.iter().any(|p| glob_match(p.as_ref(), s)))
            .collect();
        let mut samples = 0;
        let mut weight = 0;
        for (set, acc) in &self.stacks.sets {
            if set.iter().any(|&id| matching[id as usize]) {
                samples += acc.samples;
                weight += acc.weight;
            }
        }
        StackShare {
            name: name.to_owned(),
            patterns: patterns.iter().map(|p| p.as_ref().to_owned()).collect(),
            samples,
            weight,
            share: if self.weight == 0 {
                0.0
            } else {
                weight as f64 / self.weight as f64
            },
        }
    }
}

fn sort_groups(groups: &mut Vec<GroupShare>, top: usize) {
    groups.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.name.cmp(&b.name)));
    groups.truncate(top);
}

fn timeline(times: &[(f64, u64, bool)], bucket_seconds: f64) -> (f64, Vec<Bucket>) {
    let mut width = if bucket_seconds.is_finite() && bucket_seconds > 0.0 {
        bucket_seconds
    } else {
        1.0
    };
    let Some(first) = times.iter().map(|t| t.0).reduce(f64::min) else {
        return (width, Vec::new());
    };
    let last = times.iter().map(|t| t.0).fold(first, f64::max);
    while (last - first) / width >= MAX_BUCKETS as f64 {
        width *= 2.0;
    }
    let count = ((last - first) / width) as usize + 1;
    let mut buckets: Vec<Bucket> = (0..count)
        .map(|i| Bucket {
            start: first + i as f64 * width,
            samples: 0,
            weight: 0,
            kernel_weight: 0,
        })
        .collect();
    for &(time, weight, kernel) in times {
        let index = (((time - first) / width) as usize).min(count - 1);
        let bucket = &mut buckets[index];
        bucket.samples += 1;
        bucket.weight += weight;
        if kernel {
            bucket.kernel_weight += weight;
        }
    }
    (width, buckets)
}

/// `vcpu 0 reason PAUSE_INSTRUCTION rip 0x…` / `reason EXTERNAL_INTERRUPT rip 0x…` → the reason.
fn kvm_exit_reason(payload: &str) -> Option<&str> {
    let mut words = payload.split_whitespace();
    words.find(|w| *w == "reason")?;
    words.next()
}

/// Glob match of the whole `text`: `*` any run of characters, `?` one character.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("audit_*", "audit_filter_syscall"));
        assert!(!glob_match("audit_*", "__audit_syscall_exit"));
        assert!(glob_match("*audit*", "__audit_syscall_exit"));
        assert!(glob_match("GetSnapshotData", "GetSnapshotData"));
        assert!(!glob_match("GetSnapshotData", "GetSnapshotDataReuse"));
        assert!(glob_match("verw?", "verw1"));
        assert!(glob_match("*", ""));
    }

    #[test]
    fn kvm_reason() {
        assert_eq!(
            kvm_exit_reason("vcpu 1 reason PAUSE_INSTRUCTION rip 0xffffffff81 info1 0x0"),
            Some("PAUSE_INSTRUCTION")
        );
        assert_eq!(kvm_exit_reason("reason HLT rip 0x0"), Some("HLT"));
        assert_eq!(kvm_exit_reason("nothing"), None);
    }

    #[test]
    fn timeline_is_contiguous_and_widens() {
        let times = [(10.0, 5, true), (12.5, 1, false)];
        let (w, b) = timeline(&times, 1.0);
        assert_eq!(w, 1.0);
        assert_eq!(b.len(), 3);
        assert_eq!((b[0].samples, b[1].samples, b[2].samples), (1, 0, 1));
        assert_eq!(b[0].kernel_weight, 5);
        let (w, b) = timeline(&[(0.0, 1, false), (1e6, 1, false)], 1.0);
        assert!(b.len() <= MAX_BUCKETS);
        assert!(w > 1.0);
    }
}
