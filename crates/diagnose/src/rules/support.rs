//! Pieces several rules write the same way: an incident's evidence and figures in words, the
//! PostgreSQL settings sum that bounds memory use, the overcommit ratio the seeds compute, the
//! OOM kills of PostgreSQL processes, the huge pages PostgreSQL's shared memory needs, what one
//! connection really costs, the settings a finding stands on, sizes written as postgresql.conf
//! values, counted nouns.

use crate::facts::{Facts, Setting};
use crate::human::{QUOTED_QUERY_BYTES, duration, human_bytes, human_kb, quote_cut, quote_line};
use crate::report::{CgroupRelation, Evidence, Incident, KernelKill, ProcessFault};

/// The lines an incident stands on: the kernel's report, the death, the preceding lines, ready.
pub(crate) fn incident_evidence(incident: &Incident) -> Vec<Evidence> {
    let mut evidence = Vec::new();
    if let Some(k) = &incident.kernel_kill {
        evidence.push(Evidence {
            path: k.path.clone(),
            line: k.line,
            what: "kernel OOM-killer report".into(),
            key: None,
            host_file: None,
            host_line: None,
        });
    }
    for l in &incident.preceded_by {
        evidence.push(Evidence {
            path: l.path.clone(),
            line: l.line,
            what: match l.severity {
                Some(s) => quote_line(s, &l.message, 160),
                None => quote_cut(&l.message, 160),
            },
            key: None,
            host_file: None,
            host_line: None,
        });
    }
    if let Some(c) = &incident.postgres_crash {
        evidence.push(Evidence {
            path: c.path.clone(),
            line: c.line,
            what: format!("{} died", c.process),
            key: None,
            host_file: None,
            host_line: None,
        });
    }
    if let (Some(line), Some(path)) = (
        incident.recovery.as_ref().and_then(|r| r.ready_line),
        incident
            .postgres_crash
            .as_ref()
            .map(|c| c.path.clone())
            .or_else(|| incident.preceded_by.first().map(|l| l.path.clone())),
    ) {
        evidence.push(Evidence {
            path,
            line,
            what: "ready to accept connections again".into(),
            key: None,
            host_file: None,
            host_line: None,
        });
    }
    evidence
}

/// `; the instance was down 31.0 s` or nothing.
pub(crate) fn outage_text(incident: &Incident) -> String {
    incident
        .outage_seconds
        .map(|s| format!("; the instance was down {}", duration(s)))
        .unwrap_or_default()
}

/// ` (76 MiB of WAL replayed in 0.68 s)` or nothing.
pub(crate) fn redo_text(incident: &Incident) -> String {
    match (incident.redo_seconds, incident.wal_replayed_bytes) {
        (Some(s), Some(b)) => format!(" ({} of WAL replayed in {s:.2} s)", human_kb(b / 1024)),
        (None, Some(b)) => format!(" ({} of WAL replayed)", human_kb(b / 1024)),
        _ => String::new(),
    }
}

/// ` It was running: <query>` or nothing.
pub(crate) fn query_text(incident: &Incident) -> String {
    incident
        .postgres_crash
        .as_ref()
        .and_then(|c| c.query.as_deref())
        .map(|q| format!(" It was running: {}", quote_cut(q, QUOTED_QUERY_BYTES)))
        .unwrap_or_default()
}

/// ` under the memory cgroup limit of 300 MiB (/path)` / ` when the host ran out of memory`.
pub(crate) fn limit_text(k: &KernelKill) -> String {
    match (&k.memcg, k.constraint.as_deref()) {
        (Some(m), _) if m.limit_kb.is_some() => format!(
            " under the memory cgroup limit of {}{}",
            human_kb(m.limit_kb.unwrap_or_default()),
            m.path
                .as_deref()
                .map(|p| format!(" ({})", crate::human::quote(p)))
                .unwrap_or_default()
        ),
        (_, Some("global")) => " when the host ran out of memory".to_owned(),
        _ => String::new(),
    }
}

/// The effective memory limit PostgreSQL lives under: the cgroup limit when one is set and
/// below RAM, else RAM. `(bytes, "cgroup memory limit" | "RAM", evidence)`.
pub(crate) fn memory_limit(facts: &Facts<'_>) -> Option<(u64, &'static str, Evidence)> {
    let ram = facts.host.memory.as_ref().map(|m| &m.ram);
    let cgroup = facts.host.cgroup.as_ref().and_then(|c| c.limit.as_ref());
    match (cgroup, ram) {
        (Some(c), Some(r)) if c.value < r.value => Some((
            c.value,
            "cgroup memory limit",
            c.evidence(format!("memory limit {}", human_bytes(c.value))),
        )),
        (_, Some(r)) => Some((
            r.value,
            "RAM",
            r.evidence(format!("RAM {}", human_bytes(r.value))),
        )),
        (Some(c), None) => Some((
            c.value,
            "cgroup memory limit",
            c.evidence(format!("memory limit {}", human_bytes(c.value))),
        )),
        (None, None) => None,
    }
}

/// The worst case of PostgreSQL's memory settings: every process that can run a query (each
/// connection, and each parallel worker the server can start) running one sort or hash node at
/// its limit, beside shared memory and the autovacuum workers at theirs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WorstCase {
    /// `work_mem × hash_mem_multiplier`: a hash node's limit, the largest a node may take.
    pub per_node: u64,
    /// `work_mem`.
    pub work_mem: u64,
    /// `hash_mem_multiplier` (1 where the version has none).
    pub multiplier: f64,
    /// The processes that can each spend `per_node`: `max_connections` + [`Self::parallel`].
    pub nodes: u64,
    /// `max_connections`.
    pub connections: u64,
    /// The parallel workers that can run at once: `min(max_parallel_workers,
    /// max_worker_processes, max_connections × max_parallel_workers_per_gather)`.
    pub parallel: u64,
    /// The caps of the parallel workers, as set: `max_parallel_workers` (`None` before
    /// PostgreSQL 10, which has none), `max_worker_processes`, `max_parallel_workers_per_gather`.
    pub caps: ParallelCaps,
    /// `shared_buffers` (or `shared_memory_size` when the dump has it).
    pub shared: u64,
    /// `autovacuum_max_workers × autovacuum_work_mem` (`maintenance_work_mem` when it is -1 or
    /// not set).
    pub maintenance: u64,
    /// `autovacuum_max_workers`.
    pub av_workers: u64,
    /// What each autovacuum worker may take.
    pub av_mem: u64,
    /// The setting `av_mem` is: `autovacuum_work_mem` or `maintenance_work_mem`.
    pub av_setting: &'static str,
    /// The sum.
    pub total: u64,
    /// The settings it was computed from, for evidence and text.
    pub settings: Vec<Setting>,
}

/// What bounds the parallel workers a server can run at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ParallelCaps {
    /// `max_parallel_workers`: for the whole server (PostgreSQL 10 and later).
    pub max_parallel_workers: Option<u64>,
    /// `max_worker_processes`: every background worker, parallel ones among them.
    pub max_worker_processes: Option<u64>,
    /// `max_parallel_workers_per_gather`: for each Gather node of a query.
    pub per_gather: u64,
}

impl ParallelCaps {
    /// The parallel caps of the server's settings (absent ones uncapped, per_gather 0).
    pub fn of(pg: &crate::facts::PgFacts) -> Self {
        let number = |name: &str| pg.number(name).map(|n| n.max(0.0) as u64);
        ParallelCaps {
            max_parallel_workers: number("max_parallel_workers"),
            max_worker_processes: number("max_worker_processes"),
            per_gather: number("max_parallel_workers_per_gather").unwrap_or(0),
        }
    }

    /// The workers one Gather can have: `min(max_parallel_workers_per_gather,
    /// max_parallel_workers, max_worker_processes)`.
    pub fn per_query(&self) -> u64 {
        self.server_wide(self.per_gather)
    }

    /// The workers `connections` sessions can have at once: `min(max_parallel_workers,
    /// max_worker_processes, connections × max_parallel_workers_per_gather)`.
    pub fn for_connections(&self, connections: u64) -> u64 {
        self.server_wide(connections.saturating_mul(self.per_gather))
    }

    fn server_wide(&self, wanted: u64) -> u64 {
        wanted
            .min(self.max_parallel_workers.unwrap_or(u64::MAX))
            .min(self.max_worker_processes.unwrap_or(u64::MAX))
    }
}

impl WorstCase {
    /// The processes `connections` sessions make at worst: `connections` + their parallel
    /// workers, within the server's caps.
    pub fn nodes_for(&self, connections: u64) -> u64 {
        connections.saturating_add(self.caps.for_connections(connections))
    }

    /// The most connections whose worst case of nodes at `per_node` each fits `budget`.
    pub fn connections_within(&self, budget: u64) -> u64 {
        let per_node = self.per_node.max(1);
        let (mut low, mut high) = (0u64, budget / per_node);
        while low < high {
            let mid = low + (high - low).div_ceil(2);
            if self.nodes_for(mid).saturating_mul(per_node) <= budget {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        low
    }

    /// `108 processes (max_connections 100 + min(max_parallel_workers 8, max_worker_processes
    /// 8, 100 × max_parallel_workers_per_gather 2))`, for a person.
    pub fn nodes_formula(&self) -> String {
        let c = &self.caps;
        let mut caps = Vec::new();
        if let Some(p) = c.max_parallel_workers {
            caps.push(format!("max_parallel_workers {p}"));
        }
        if let Some(w) = c.max_worker_processes {
            caps.push(format!("max_worker_processes {w}"));
        }
        caps.push(format!(
            "{} × max_parallel_workers_per_gather {}",
            self.connections, c.per_gather
        ));
        format!(
            "{} processes (max_connections {} + min({}) parallel workers)",
            self.nodes,
            self.connections,
            caps.join(", ")
        )
    }

    /// `work_mem × hash_mem_multiplier × processes + shared + autovacuum` with the values and
    /// the settings they come from, for a person.
    pub fn formula(&self) -> String {
        format!(
            "{} (work_mem {} × hash_mem_multiplier {}) × {} + {} shared + {} for autovacuum \
             ({} workers × {} {}) = {}",
            human_bytes(self.per_node),
            human_bytes(self.work_mem),
            self.multiplier,
            self.nodes_formula(),
            human_bytes(self.shared),
            human_bytes(self.maintenance),
            self.av_workers,
            self.av_setting,
            human_bytes(self.av_mem),
            human_bytes(self.total)
        )
    }
}

/// The worst case of the server's settings, when they are known.
pub(crate) fn worst_case(facts: &Facts<'_>) -> Option<WorstCase> {
    let pg = &facts.host.postgres;
    let setting = |name: &str| pg.setting(name).cloned();
    let work_mem = setting("work_mem")?;
    let max_connections = setting("max_connections")?;
    let shared_buffers = setting("shared_buffers")?;
    let multiplier = setting("hash_mem_multiplier");
    let gather = setting("max_parallel_workers_per_gather");
    let max_parallel = setting("max_parallel_workers");
    let max_workers = setting("max_worker_processes");
    let maintenance = setting("maintenance_work_mem");
    // autovacuum_work_mem = -1 (its default) means maintenance_work_mem.
    let av_work_mem = setting("autovacuum_work_mem").filter(|s| s.bytes.is_some());
    let av_workers = setting("autovacuum_max_workers");
    let shared_size = setting("shared_memory_size");

    let work_mem_bytes = work_mem.bytes?;
    let factor = multiplier.as_ref().and_then(|m| m.number).unwrap_or(1.0);
    let per_node = (work_mem_bytes as f64 * factor) as u64;
    let connections = max_connections.number?.max(0.0) as u64;
    let caps = ParallelCaps::of(pg);
    let parallel = caps.for_connections(connections);
    let nodes = connections.saturating_add(parallel);
    let shared = shared_size
        .as_ref()
        .and_then(|s| s.bytes)
        .or(shared_buffers.bytes)?;
    let (av_setting, av_mem) = match (&av_work_mem, &maintenance) {
        (Some(a), _) => ("autovacuum_work_mem", a.bytes.unwrap_or(0)),
        (None, Some(m)) => ("maintenance_work_mem", m.bytes.unwrap_or(0)),
        (None, None) => ("maintenance_work_mem", 0),
    };
    let av_count = av_workers
        .as_ref()
        .and_then(|s| s.number)
        .unwrap_or(3.0)
        .max(0.0) as u64;
    let av = av_mem.saturating_mul(av_count);
    let total = per_node
        .saturating_mul(nodes)
        .saturating_add(shared)
        .saturating_add(av);
    let settings = [
        Some(work_mem),
        multiplier,
        Some(max_connections),
        gather,
        max_parallel,
        max_workers,
        Some(shared_buffers),
        shared_size,
        av_work_mem.or(maintenance),
        av_workers,
    ]
    .into_iter()
    .flatten()
    .collect();
    Some(WorstCase {
        per_node,
        work_mem: work_mem_bytes,
        multiplier: factor,
        nodes,
        connections,
        parallel,
        caps,
        shared,
        maintenance: av,
        av_workers: av_count,
        av_mem,
        av_setting,
        total,
        settings,
    })
}

/// Share of a memory limit PostgreSQL's floor ([`MemoryFloor`]) may take before the limit is
/// too small: half is left for queries and the page cache.
pub(crate) const FLOOR_SHARE: f64 = 0.5;
/// A connection's cost when the bundle has no client backend to measure.
pub(crate) const DEFAULT_CONNECTION_COST: u64 = 2 << 20;
/// Share of a memory limit left free when sizing it for the worst case of the settings.
pub(crate) const LIMIT_HEADROOM: f64 = 0.2;

/// What PostgreSQL needs before any query's memory: its shared memory (`shared_memory_size`,
/// else shared_buffers) plus max_connections × a connection's real cost (measured on the
/// client backends, else [`DEFAULT_CONNECTION_COST`]).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MemoryFloor {
    /// Shared memory, bytes.
    pub shared: u64,
    /// `max_connections` (0 when unknown).
    pub connections: u64,
    /// A connection's cost, bytes.
    pub per_connection: u64,
    /// True when `per_connection` was measured on the bundle's client backends.
    pub measured: bool,
    /// The sum.
    pub total: u64,
    /// The settings it was computed from (shared memory, max_connections).
    pub settings: Vec<Setting>,
}

impl MemoryFloor {
    /// `Shared memory (32 MiB) and max_connections = 100 at 2.0 MiB each (assumed: …) need
    /// 232 MiB`, for a person.
    pub fn describe(&self) -> String {
        format!(
            "Shared memory ({}) and max_connections = {} at {} each ({}) need {}",
            human_bytes(self.shared),
            self.connections,
            human_bytes(self.per_connection),
            if self.measured {
                "measured: Pss_Anon + VmPTE of the client backends"
            } else {
                "assumed: the bundle has no client backend to measure"
            },
            human_bytes(self.total)
        )
    }
}

/// The floor of the server's memory, when its shared memory is known.
pub(crate) fn memory_floor(facts: &Facts<'_>) -> Option<MemoryFloor> {
    let pg = &facts.host.postgres;
    let shared_setting = pg
        .setting("shared_memory_size")
        .filter(|s| s.bytes.is_some())
        .or_else(|| pg.setting("shared_buffers"))?;
    let shared = shared_setting.bytes?;
    let connections = pg.setting("max_connections");
    let count = connections
        .and_then(|s| s.number)
        .map_or(0, |n| n.max(0.0) as u64);
    let cost = connection_cost(facts);
    let per_connection = cost
        .as_ref()
        .map_or(DEFAULT_CONNECTION_COST, |c| c.mean_real);
    Some(MemoryFloor {
        shared,
        connections: count,
        per_connection,
        measured: cost.is_some(),
        total: shared.saturating_add(count.saturating_mul(per_connection)),
        settings: std::iter::once(shared_setting)
            .chain(connections)
            .cloned()
            .collect(),
    })
}

/// What a memory limit must hold for this server: twice its floor, and the worst case of its
/// memory settings with [`LIMIT_HEADROOM`] to spare (each when the bundle gives it).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LimitNeed {
    /// The floor.
    pub floor: Option<MemoryFloor>,
    /// The worst case of the settings.
    pub worst: Option<WorstCase>,
}

impl LimitNeed {
    /// The server's needs, from its settings and processes.
    pub fn of(facts: &Facts<'_>) -> Self {
        Self {
            floor: memory_floor(facts),
            worst: worst_case(facts),
        }
    }

    /// Twice the floor.
    pub fn twice_floor(&self) -> Option<u64> {
        self.floor
            .as_ref()
            .map(|f| (f.total as f64 / FLOOR_SHARE) as u64)
    }

    /// The worst case with a fifth to spare.
    pub fn worst_need(&self) -> Option<u64> {
        self.worst
            .as_ref()
            .map(|w| (w.total as f64 / (1.0 - LIMIT_HEADROOM)) as u64)
    }

    /// The larger of the two, when it is above `limit`.
    pub fn recommended(&self, limit: u64) -> Option<u64> {
        self.twice_floor()
            .max(self.worst_need())
            .filter(|&r| r > limit)
    }

    /// What `limit` lacks, for a person: `at least 1.0 GiB (twice the floor of 513 MiB)`,
    /// `600 MiB to hold the worst case of the memory settings with a fifth to spare (…; see
    /// work-mem-exceeds-memory)`; empty when it holds both.
    pub fn wants(&self, limit: u64) -> Vec<String> {
        let mut wants = Vec::new();
        if let (Some(t), Some(f)) = (self.twice_floor(), &self.floor)
            && t > limit
        {
            wants.push(format!(
                "at least {} (twice the floor of {})",
                human_bytes(t),
                human_bytes(f.total)
            ));
        }
        if let (Some(n), Some(w)) = (self.worst_need(), &self.worst)
            && n > limit
        {
            wants.push(format!(
                "{} to hold the worst case of the memory settings with a fifth to spare ({}; \
                 see work-mem-exceeds-memory)",
                human_bytes(n),
                w.formula()
            ));
        }
        wants
    }
}

/// The `vm.overcommit_ratio` that leaves `keep` (0.2: a fifth) of RAM to the page cache under
/// `vm.overcommit_memory = 2`, from the seeds' derivation: CommitLimit + huge pages + cache =
/// RAM, CommitLimit = swap + (RAM − huge pages) × ratio, so ratio = ((1 − keep) × RAM − swap −
/// huge pages) / (RAM − huge pages). Clamped to 1–100.
pub(crate) fn overcommit_ratio_for(ram: u64, swap: u64, huge: u64, keep: f64) -> u64 {
    let usable = ram.saturating_sub(huge) as f64;
    if usable <= 0.0 {
        return 1;
    }
    let ratio = ((1.0 - keep) * ram as f64 - swap as f64 - huge as f64) / usable * 100.0;
    ratio.floor().clamp(1.0, 100.0) as u64
}

/// The CommitLimit a ratio gives: `swap + (RAM − huge pages) × ratio / 100`.
pub(crate) fn commit_limit_for(ram: u64, swap: u64, huge: u64, ratio: u64) -> u64 {
    swap.saturating_add(ram.saturating_sub(huge) / 100 * ratio)
}

/// What a perf profile covers, for a person: `1,234 samples over 20.0 s on 2 CPUs
/// (perf/perf-script.txt)`.
pub(crate) fn perf_coverage(p: &crate::facts::PerfFacts) -> String {
    format!(
        "{} samples of {} over {}{} ({})",
        p.samples(),
        p.profile.event.as_deref().unwrap_or("?"),
        p.seconds()
            .map_or_else(|| "an unknown time".to_owned(), duration),
        p.profile
            .cpus
            .map(|c| format!(" on {c} CPUs"))
            .unwrap_or_default(),
        p.path
    )
}

/// The OOM incidents whose victim is a PostgreSQL process (`postgres` command) the bundle does
/// not show to be a stranger's (another cluster's, another job's), with their index in the
/// report.
pub(crate) fn postgres_oom_kills<'a>(
    facts: &'a Facts<'_>,
) -> impl Iterator<Item = (usize, &'a Incident, &'a KernelKill)> {
    oom_kills(facts).filter(|(_, _, k)| k.comm.starts_with("postgres") && !k.is_stranger())
}

/// Every incident with a kernel OOM kill, with its index in the report.
pub(crate) fn oom_kills<'a>(
    facts: &'a Facts<'_>,
) -> impl Iterator<Item = (usize, &'a Incident, &'a KernelKill)> {
    facts
        .incidents
        .iter()
        .enumerate()
        .filter_map(|(i, incident)| Some((i, incident, incident.kernel_kill.as_ref()?)))
}

/// How the memory cgroup `path` stands to the postmaster's: from the postmaster's own cgroup
/// (its `ps` row, its `/proc/PID/cgroup`), else from the cgroup the memory facts found for it;
/// `None` when neither is known (or it is the root).
pub(crate) fn cgroup_relation(facts: &Facts<'_>, path: &str) -> Option<CgroupRelation> {
    facts.host.processes.cgroup_relation(path).or_else(|| {
        let ours = facts.host.cgroup.as_ref()?.path.as_ref()?;
        (!ours.value.trim_matches('/').is_empty())
            .then(|| crate::report::cgroup_relation(&ours.value, path))
    })
}

/// Whether the limit an OOM kill hit bounds the postmaster's memory cgroup too: its
/// `oom_memcg` is that cgroup or one above it. `None` when the kill is no memory cgroup's, or
/// the report or the bundle does not say where the cgroups are.
pub(crate) fn limit_bounds_instance(facts: &Facts<'_>, k: &KernelKill) -> Option<bool> {
    if k.constraint.as_deref() != Some("memcg") {
        return None;
    }
    let hit = k.memcg.as_ref()?.path.as_deref()?;
    let relation = cgroup_relation(facts, hit)?;
    Some(matches!(
        relation,
        CgroupRelation::Same | CgroupRelation::Ancestor
    ))
}

/// Whether an OOM kill shows memory pressure that could reach the instance: its victim was
/// not shown to be a stranger's; or the host ran out of memory (not a cgroup); or the limit it
/// hit bounds the postmaster's cgroup too. A stranger's kill at another cgroup's limit does not.
pub(crate) fn kill_reaches_instance(facts: &Facts<'_>, k: &KernelKill) -> bool {
    !k.is_stranger()
        || k.constraint.as_deref() == Some("global")
        || limit_bounds_instance(facts, k).unwrap_or(k.constraint.is_none())
}

/// `of another cluster (postmaster 24868, /var/lib/postgresql/15/other)`, `of another job`,
/// `killed before the postmaster started`: whose a stranger's victim was, for a title; empty
/// for the instance's or an unknown owner's.
pub(crate) fn stranger_text(facts: &Facts<'_>, k: &KernelKill) -> String {
    let Some(owner) = k.owner.as_ref().filter(|o| !o.is_instance()) else {
        return String::new();
    };
    match owner.whose {
        "other_cluster" => {
            let other = owner.postmaster.and_then(|pm| {
                facts
                    .host
                    .processes
                    .other_postmasters
                    .iter()
                    .find(|o| o.pid == pm)
            });
            match other {
                Some(o) => format!(
                    " of another cluster (postmaster {}{})",
                    o.pid,
                    o.data_directory
                        .as_deref()
                        .map(|d| format!(", {}", crate::human::quote(d)))
                        .unwrap_or_default()
                ),
                None => " of another cluster".to_owned(),
            }
        }
        "before_start" => " before the postmaster started".to_owned(),
        _ => " of another job (another memory cgroup)".to_owned(),
    }
}

/// The kernel report of an OOM kill, as evidence saying `what`.
pub(crate) fn kill_evidence(k: &KernelKill, what: impl Into<String>) -> Evidence {
    Evidence::of_line(&k.path, k.line, what)
}

/// The incident of those `fits` accepts whose start is nearest `at`, within `seconds` either
/// way.
pub(crate) fn incident_near(
    facts: &Facts<'_>,
    at: jiff::Timestamp,
    seconds: f64,
    fits: impl Fn(&Incident) -> bool,
) -> Option<usize> {
    facts
        .incidents
        .iter()
        .enumerate()
        .filter(|(_, i)| fits(i))
        .filter_map(|(n, i)| {
            let apart = crate::clock::seconds_between(at, i.started_at?).abs();
            (apart <= seconds).then_some((n, apart))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(n, _)| n)
}

/// Who died in an incident, for a person: `PostgreSQL server process 17908 (signal 11,
/// SIGSEGV)`, `postgres 55141 (segfault at 188)`, `PostgreSQL's postmaster` (a restart with
/// crash recovery), or `PostgreSQL`.
pub(crate) fn death_text(incident: &Incident) -> String {
    if let Some(c) = &incident.postgres_crash {
        let how = match (c.signal, c.exit_code) {
            (Some(s), _) => format!(
                " (signal {s}, {})",
                crate::rules::crash::crash_restart::signal_name(s)
            ),
            (None, Some(code)) => format!(" (exit code {code})"),
            _ => String::new(),
        };
        return format!("PostgreSQL {} {}{how}", c.process, c.pid);
    }
    if let Some(f) = &incident.kernel_fault {
        return format!("{} {} ({})", crate::human::quote(&f.comm), f.pid, f.fault);
    }
    if let Some(k) = incident.kernel_kill.as_ref().filter(|k| k.pid != 0) {
        return format!("{} {} (OOM-killed)", crate::human::quote(&k.comm), k.pid);
    }
    if matches!(incident.kind, "unclean_restart" | "postmaster_killed") {
        return "PostgreSQL's postmaster".to_owned();
    }
    "PostgreSQL".to_owned()
}

/// The line of a process's fatal fault (the kernel's segfault or trap line, a crash
/// reporter's), as evidence saying `what`.
pub(crate) fn fault_evidence(f: &ProcessFault, what: impl Into<String>) -> Evidence {
    Evidence::of_line(&f.path, f.line, what)
}

/// True for an address (hex as the kernel prints it, `0x` or not) in the first page: a null
/// pointer, or a null pointer plus a field's offset.
pub(crate) fn near_zero(hex: &str) -> bool {
    u64::from_str_radix(hex.trim_start_matches("0x"), 16).is_ok_and(|a| a < 4096)
}

/// `huge_pages` as `on`, `off` or `try`, whatever spelling postgresql.conf used (`true`,
/// `no`, `1`, any case: PostgreSQL takes the boolean words for on and off).
pub(crate) fn huge_pages_mode(setting: &Setting) -> &'static str {
    match setting.value.to_ascii_lowercase().as_str() {
        "off" | "false" | "no" | "0" => "off",
        "try" => "try",
        _ if setting.is_on() => "on",
        _ => "try",
    }
}

/// Share of `shared_buffers` added when the shared memory size has to be estimated (buffer
/// descriptors, the lock table, PGPROC, SLRU buffers, …).
pub(crate) const SHARED_OVERHEAD_SHARE: f64 = 0.10;
/// The least overhead added to `shared_buffers` in that estimate.
pub(crate) const SHARED_OVERHEAD_MIN: u64 = 32 << 20;

/// The huge pages PostgreSQL's shared memory needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct HugePagesNeed {
    /// Pages of `page_size`.
    pub pages: u64,
    /// The huge page size: `huge_page_size` when set, else the kernel's `Hugepagesize`.
    pub page_size: u64,
    /// How `pages` was found, for a person: `shared_memory_size_in_huge_pages 1084 × 2 MiB,
    /// from postgres/pg_settings.txt:245`, `shared_memory_size 2168 MiB ÷ 2 MiB rounded up,
    /// from …`, or the estimate from shared_buffers.
    pub how: String,
    /// False when computed from the server's own figure, true when estimated from
    /// shared_buffers (the bundle has neither `shared_memory_size_in_huge_pages` nor
    /// `shared_memory_size`: PostgreSQL before 15, or postgresql.conf alone).
    pub estimated: bool,
    /// The settings it was computed from.
    pub settings: Vec<Setting>,
}

impl HugePagesNeed {
    /// `pages × page_size`.
    pub fn bytes(&self) -> u64 {
        self.pages.saturating_mul(self.page_size)
    }
}

/// The huge pages PostgreSQL's shared memory needs: `shared_memory_size_in_huge_pages`
/// (PostgreSQL ≥ 15 computes it for its huge page size), else `shared_memory_size ÷ page
/// size`, else an estimate: `shared_buffers` plus [`SHARED_OVERHEAD_SHARE`] (at least
/// [`SHARED_OVERHEAD_MIN`]), rounded up to whole pages.
pub(crate) fn hugepages_needed(facts: &Facts<'_>) -> Option<HugePagesNeed> {
    let pg = &facts.host.postgres;
    let set_size = pg
        .setting("huge_page_size")
        .filter(|s| s.bytes.is_some_and(|b| b > 0));
    let page_size = set_size
        .and_then(|s| s.bytes)
        .or_else(|| {
            facts
                .host
                .memory
                .as_ref()
                .and_then(|m| m.hugepage_size.as_ref())
                .map(|s| s.value)
        })
        .filter(|&b| b > 0)?;
    let mut settings: Vec<Setting> = set_size.into_iter().cloned().collect();
    let size_text = human_bytes(page_size);
    if let Some(s) = pg.setting("shared_memory_size_in_huge_pages")
        && let Some(n) = s.number.filter(|&n| n > 0.0)
    {
        settings.push(s.clone());
        return Some(HugePagesNeed {
            pages: n as u64,
            page_size,
            how: format!(
                "shared_memory_size_in_huge_pages {} × {size_text}, from {}",
                n as u64,
                s.from()
            ),
            estimated: false,
            settings,
        });
    }
    if let Some(s) = pg.setting("shared_memory_size")
        && let Some(b) = s.bytes.filter(|&b| b > 0)
    {
        settings.push(s.clone());
        let pages = b.div_ceil(page_size);
        return Some(HugePagesNeed {
            pages,
            page_size,
            how: format!(
                "shared_memory_size {} ÷ {size_text} rounded up, from {}",
                human_bytes(b),
                s.from()
            ),
            estimated: false,
            settings,
        });
    }
    let shared = pg.setting("shared_buffers")?;
    let b = shared.bytes?;
    let overhead = ((b as f64 * SHARED_OVERHEAD_SHARE) as u64).max(SHARED_OVERHEAD_MIN);
    settings.push(shared.clone());
    Some(HugePagesNeed {
        pages: (b + overhead).div_ceil(page_size),
        page_size,
        how: format!(
            "an estimate: shared_buffers {} from {} plus {} for the rest of shared memory, \
             ÷ {size_text}; the bundle has no shared_memory_size_in_huge_pages, which `postgres \
             -C shared_memory_size_in_huge_pages` prints exactly on a stopped PostgreSQL ≥ 15",
            human_bytes(b),
            shared.from(),
            human_bytes(overhead)
        ),
        estimated: true,
        settings,
    })
}

/// What one connection really costs, measured on the bundle's client backends.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConnectionCost {
    /// Client backends measured.
    pub backends: u64,
    /// Mean `Pss_Anon + VmPTE` (`RssAnon` when smaps_rollup is missing): what a connection adds.
    pub mean_real: u64,
    /// Mean `VmRSS`: what `ps` shows (every shared page touched).
    pub mean_rss: u64,
    /// Mean `VmPTE`.
    pub mean_page_tables: u64,
    /// Sum of `VmPTE` of every PostgreSQL process collected.
    pub all_page_tables: u64,
    /// `pss_anon` or `rss_anon`: what private memory was read from.
    pub basis: &'static str,
}

/// The real cost of a connection on this host, when the bundle has client backends with their
/// status (and smaps_rollup) files.
pub(crate) fn connection_cost(facts: &Facts<'_>) -> Option<ConnectionCost> {
    let processes = &facts.host.processes;
    let measured: Vec<_> = processes
        .backends()
        .filter(|p| p.real_bytes().is_some())
        .collect();
    if measured.is_empty() {
        return None;
    }
    let n = measured.len() as u64;
    let mean = |f: &dyn Fn(&crate::facts::PgProcess) -> u64| {
        measured.iter().map(|p| f(p)).sum::<u64>() / n
    };
    Some(ConnectionCost {
        backends: n,
        mean_real: mean(&|p| p.real_bytes().unwrap_or(0)),
        mean_rss: mean(&|p| p.rss_bytes.unwrap_or(0)),
        mean_page_tables: mean(&|p| p.page_table_bytes.unwrap_or(0)),
        all_page_tables: processes
            .processes
            .iter()
            .filter_map(|p| p.page_table_bytes)
            .sum(),
        basis: if measured.iter().all(|p| p.anon_basis == Some("pss_anon")) {
            "pss_anon"
        } else {
            "rss_anon"
        },
    })
}

/// The lines of the settings `names` that the bundle has (defaults have no line and are
/// left out).
pub(crate) fn settings_evidence(facts: &Facts<'_>, names: &[&str]) -> Vec<Evidence> {
    names
        .iter()
        .filter_map(|n| facts.host.postgres.setting(n)?.evidence())
        .collect()
}

/// `bytes` rounded up to a value for postgresql.conf: `640kB`, `96MB`, `2GB`.
pub(crate) fn pg_size(bytes: u64) -> String {
    const KB: u64 = 1 << 10;
    const MB: u64 = 1 << 20;
    const GB: u64 = 1 << 30;
    if bytes < MB {
        format!("{}kB", bytes.div_ceil(KB).max(64))
    } else if bytes >= GB && bytes % GB == 0 {
        format!("{}GB", bytes / GB)
    } else {
        format!("{}MB", bytes.div_ceil(MB))
    }
}

/// `1 error`, `3 errors`: `n` and `word`, with an `s` when `n` is not 1.
pub(crate) fn counted(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huge_pages_spelled_any_way() {
        let setting = |value: &str| Setting {
            name: "huge_pages".into(),
            value: value.into(),
            unit: None,
            bytes: None,
            number: None,
            seconds: None,
            source: None,
            sourcefile: None,
            origin: crate::facts::SettingOrigin::Default {
                conf: "postgresql.conf".into(),
            },
        };
        assert_eq!(huge_pages_mode(&setting("on")), "on");
        assert_eq!(huge_pages_mode(&setting("TRUE")), "on");
        assert_eq!(huge_pages_mode(&setting("no")), "off");
        assert_eq!(huge_pages_mode(&setting("Off")), "off");
        assert_eq!(huge_pages_mode(&setting("try")), "try");
    }

    #[test]
    fn sizes_as_postgresql_conf_values() {
        assert_eq!(pg_size(1000), "64kB");
        assert_eq!(pg_size(300 << 10), "300kB");
        assert_eq!(pg_size((96 << 20) - 1), "96MB");
        assert_eq!(pg_size(96 << 20), "96MB");
        assert_eq!(pg_size((96 << 20) + 1), "97MB");
        assert_eq!(pg_size(2 << 30), "2GB");
        assert_eq!(pg_size((2 << 30) + 1), "2049MB");
        assert_eq!(counted(1, "error"), "1 error");
        assert_eq!(counted(0, "error"), "0 errors");
    }

    #[test]
    fn overcommit_ratio_as_the_seed_computes_it() {
        const GIB: u64 = 1 << 30;
        // The seed's host has 5 GB of RAM and 1 GB of swap, no huge pages: (0.8 × 5 − 1) / 5.
        assert_eq!(overcommit_ratio_for(5 * GIB, GIB, 0, 0.2), 60);
        // 64 GiB RAM, no swap, 8 GiB of huge pages: (51.2 − 8) / 56 = 77 %.
        let ratio = overcommit_ratio_for(64 * GIB, 0, 8 * GIB, 0.2);
        assert_eq!(ratio, 77);
        let limit = commit_limit_for(64 * GIB, 0, 8 * GIB, ratio);
        assert!((limit as f64 / GIB as f64 - 43.12).abs() < 0.01);
        // A large swap cannot push the ratio below 1.
        assert_eq!(overcommit_ratio_for(4 * GIB, 16 * GIB, 0, 0.2), 1);
    }
}
