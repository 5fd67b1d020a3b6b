//! The instance's processes as the collector saw them: role (from the process titles),
//! `oom_score_adj`, and memory (status and smaps_rollup): what each really costs; the
//! postmaster's resource limits, which every process it forks inherits; and how the postmaster
//! was started: its `PG_OOM_ADJUST_*` environment, its systemd unit, its command line and its
//! memory cgroup. The instance is the manifest's postmaster, else the postmaster of the
//! bundle's data directory, else the only one; its processes are those below it by parent pid,
//! and the other clusters' postmasters the bundle shows are named beside them, never judged.
//! Without `/proc/PID/*` files (a sosreport before sos 4.3), the processes come from the `ps`
//! listings (`listing.rs`), with their RSS and start; with the files of every process on the
//! host (sos 4.3 and later), only the postmaster's tree is kept.

use std::collections::{BTreeMap, BTreeSet};

use pgmortem_bundle::{Bundle, PostmasterState, SourceKind};
use pgmortem_parse::system::{self, PgRole, ProcStatus, SmapsRollup};

use super::listing::{self, Listed};
use super::{Known, all_of, pid_in_path};
use crate::report::{
    LimitFacts, OomAdjustFacts, OtherPostmaster, PgProcess, ProcessFacts, UnitFacts,
};

/// The status fields whose lines are kept for evidence.
const STATUS_FIELDS: &[&str] = &["VmRSS", "RssAnon", "VmPTE", "VmSwap", "HugetlbPages"];
/// The smaps_rollup fields whose lines are kept for evidence.
const SMAPS_FIELDS: &[&str] = &["Pss_Anon", "AnonHugePages", "ShmemPmdMapped"];

pub(super) fn build(bundle: &Bundle, settings_dir: Option<&str>) -> ProcessFacts {
    let mut by_pid: BTreeMap<u32, PgProcess> = BTreeMap::new();
    let mut statuses: BTreeMap<u32, ProcStatus> = BTreeMap::new();
    let mut smaps: BTreeMap<u32, (String, SmapsRollup)> = BTreeMap::new();
    let mut limits: BTreeMap<u32, LimitFacts> = BTreeMap::new();
    let mut oom_adjust: BTreeMap<u32, OomAdjustFacts> = BTreeMap::new();
    let mut units: BTreeMap<u32, UnitFacts> = BTreeMap::new();
    for source in &bundle.sources {
        let Some(pid) = pid_in_path(&source.path) else {
            continue;
        };
        match source.kind {
            SourceKind::ProcStatus => {
                let status = system::parse_status(&source.bytes);
                if status.kernel_thread {
                    continue;
                }
                statuses.insert(pid, status);
                by_pid
                    .entry(pid)
                    .or_insert_with(|| unknown(pid))
                    .status_path = Some(source.path.clone());
            }
            SourceKind::SmapsRollup => {
                smaps.insert(
                    pid,
                    (
                        source.path.clone(),
                        system::parse_smaps_rollup(&source.bytes),
                    ),
                );
            }
            SourceKind::ProcLimits => {
                let parsed = system::parse_limits(&source.bytes);
                let known = |name: &str| {
                    parsed
                        .get(name)
                        .map(|l| Known::new(l.clone(), &source.path, l.line, name))
                };
                limits.insert(
                    pid,
                    LimitFacts {
                        max_processes: known("Max processes"),
                        max_address_space: known("Max address space"),
                        max_data_size: known("Max data size"),
                    },
                );
            }
            SourceKind::PgOomAdjust => {
                let env = system::parse_pg_oom_adjust(&source.bytes);
                let known = |v: Option<&system::EnvVariable>| {
                    v.map(|v| Known::new(v.value.clone(), &source.path, v.line, &v.name))
                };
                oom_adjust.insert(
                    pid,
                    OomAdjustFacts {
                        file: known(env.file()),
                        value: known(env.value()),
                    },
                );
            }
            SourceKind::SystemdUnit => {
                let unit = system::parse_systemctl_show(&source.bytes);
                units.insert(
                    pid,
                    UnitFacts {
                        id: unit
                            .id()
                            .map(|p| Known::new(p.value.clone(), &source.path, p.line, "Id")),
                        oom_score_adjust: unit
                            .oom_score_adjust()
                            .map(|(v, line)| Known::new(v, &source.path, line, "OOMScoreAdjust")),
                    },
                );
            }
            SourceKind::OomScoreAdj => {
                if let Ok(adj) = system::parse_oom_score_adj(&source.bytes) {
                    by_pid
                        .entry(pid)
                        .or_insert_with(|| unknown(pid))
                        .oom_score_adj = Some(Known::new(adj, &source.path, 1, "oom_score_adj"));
                }
            }
            _ => {}
        }
    }
    for (pid, status) in &statuses {
        let Some(p) = by_pid.get_mut(pid) else {
            continue;
        };
        p.ppid = status.ppid.and_then(|v| u32::try_from(v).ok());
        p.swap_bytes = status.bytes("VmSwap");
        p.hugetlb_bytes = status.bytes("HugetlbPages");
        p.page_table_bytes = status.bytes("VmPTE");
        p.rss_bytes = status.bytes("VmRSS");
        let rollup = smaps.get(pid).map(|(_, s)| s);
        if let Some(m) = system::facts::process_memory(status, rollup) {
            p.anon_bytes = Some(m.anon_bytes);
            p.anon_basis = Some(m.anon_basis);
        }
        if let Some(path) = p.status_path.clone() {
            for &field in STATUS_FIELDS {
                if let Some(f) = status.fields.get(field) {
                    p.read_at.insert(field, (path.clone(), f.line));
                }
            }
        }
        if let Some((path, s)) = smaps.get(pid) {
            for &field in SMAPS_FIELDS {
                if let Some(f) = s.fields.get(field) {
                    p.read_at.insert(field, (path.clone(), f.line));
                }
            }
            p.thp_bytes = Some(
                s.bytes("AnonHugePages").unwrap_or(0) + s.bytes("ShmemPmdMapped").unwrap_or(0),
            );
        }
    }
    // Every postmaster the bundle shows, and the instance among them.
    let mut seen: BTreeMap<u32, SeenPostmaster> = BTreeMap::new();
    for source in all_of(bundle, SourceKind::ProcessTitles) {
        let text = String::from_utf8_lossy(&source.bytes);
        for (n, line) in text.lines().enumerate() {
            let Some(title) = system::parse_title(line) else {
                continue;
            };
            let Some(pid) = title.pid else { continue };
            if title.role == PgRole::Postmaster {
                seen.entry(pid).or_insert_with(|| SeenPostmaster {
                    command: system::parse_postmaster_command(&title.title),
                    at: format!("{}:{}", source.path, n + 1),
                    ..SeenPostmaster::default()
                });
            }
            if let Some(p) = by_pid.get_mut(&pid) {
                p.role = role_name(&title.role);
            }
        }
    }
    let listed = listing::listed(bundle);
    for (pid, l) in listed.iter().filter(|(_, l)| l.is_postmaster()) {
        seen.entry(*pid).or_insert_with(|| SeenPostmaster {
            command: l
                .command
                .as_deref()
                .and_then(system::parse_postmaster_command),
            at: l
                .command_at
                .as_ref()
                .map_or_else(String::new, |(path, line)| format!("{path}:{line}")),
            ..SeenPostmaster::default()
        });
    }
    let manifest = bundle.manifest.as_ref();
    for o in manifest.map_or(&[][..], |m| m.other_postmasters.as_slice()) {
        let s = seen.entry(o.pid).or_insert_with(|| SeenPostmaster {
            at: "manifest.json".to_owned(),
            ..SeenPostmaster::default()
        });
        s.named_other = true;
        s.data_directory = Some(o.data_directory.clone()).filter(|d| !d.is_empty());
        s.port = o.port.map(u32::from);
        s.memory_cgroup = Some(o.memory_cgroup.clone()).filter(|c| !c.is_empty());
        // The manifest counts the postmaster with the processes below it (0: not counted).
        s.processes = o.processes.checked_sub(1).map(u64::from);
    }
    // Parents, from the status files and the listings.
    let mut parent: BTreeMap<u32, u32> = listed
        .iter()
        .filter_map(|(pid, l)| Some((*pid, l.ppid?)))
        .collect();
    parent.extend(by_pid.iter().filter_map(|(pid, p)| Some((*pid, p.ppid?))));
    let postgres_pids: BTreeSet<u32> = by_pid
        .keys()
        .copied()
        .chain(
            listed
                .iter()
                .filter(|(_, l)| l.is_postgres())
                .map(|(pid, _)| *pid),
        )
        .collect();

    let opts_dir = all_of(bundle, SourceKind::PostmasterOpts)
        .find_map(|s| system::parse_postmaster_opts(&s.bytes).ok()?.data_directory);
    let manifest_dir = manifest
        .map(|m| m.data_directory.clone())
        .filter(|d| !d.is_empty());
    let dirs: Vec<&str> = [manifest_dir.as_deref(), opts_dir.as_deref(), settings_dir]
        .into_iter()
        .flatten()
        .collect();
    let same_dir = |a: &str, b: &str| a.trim_end_matches('/') == b.trim_end_matches('/');
    // A postmaster the manifest names as another cluster's is never taken for the instance;
    // nor is any when the manifest says the instance's is down.
    let down = manifest.and_then(|m| m.postmaster_state) == Some(PostmasterState::Down);
    let candidates = || seen.iter().filter(|(_, s)| !s.named_other && !down);
    let chosen: Option<(u32, &'static str)> = manifest
        .and_then(|m| m.postmaster_pid)
        .map(|pm| (pm, "manifest"))
        .or_else(|| {
            // The manifest's directory first, then postmaster.opts', then the settings'.
            dirs.iter().find_map(|dir| {
                candidates()
                    .find(|(_, s)| s.dir().is_some_and(|d| same_dir(d, dir)))
                    .map(|(pid, _)| (*pid, "data_directory"))
            })
        })
        .or_else(|| {
            let mut only = candidates();
            match (only.next(), only.next()) {
                (Some((pid, _)), None) if seen.len() == 1 => Some((*pid, "only_postmaster")),
                _ => None,
            }
        })
        .or_else(|| {
            if down {
                return None;
            }
            // No postmaster titled: the only PostgreSQL process with children whose parent is
            // not one.
            if !seen.is_empty() {
                return None;
            }
            let mut roots = postgres_pids.iter().copied().filter(|pid| {
                parent.get(pid).is_none_or(|pp| !postgres_pids.contains(pp))
                    && parent.values().any(|pp| pp == pid)
            });
            match (roots.next(), roots.next()) {
                (Some(pm), None) => Some((pm, "parent_of_processes")),
                _ => None,
            }
        });
    let postmaster = chosen.map(|(pm, _)| pm);
    let others: Vec<u32> = seen
        .keys()
        .copied()
        .filter(|pid| Some(*pid) != postmaster)
        .collect();

    // The instance's processes: the postmaster and the processes below it; a process whose
    // parent the bundle does not show, only when no other cluster could own it. With several
    // clusters and none chosen, none.
    let keep: Option<BTreeSet<u32>> = match postmaster {
        Some(pm) => {
            let mut tree = descendants(&parent, pm);
            if others.is_empty() {
                tree.extend(by_pid.keys().filter(|pid| !parent.contains_key(pid)));
            }
            Some(tree)
        }
        None if others.is_empty() => None,
        None => Some(BTreeSet::new()),
    };
    if by_pid.is_empty() {
        // A sosreport: the processes from the listings.
        for (pid, l) in &listed {
            if l.is_postgres() && keep.as_ref().is_none_or(|k| k.contains(pid)) {
                by_pid.insert(*pid, from_listing(*pid, l));
            }
        }
    } else if let Some(keep) = &keep {
        // sos 4.3 and later copy the /proc/PID files of every process on the host, and a
        // collector may copy another cluster's beside ours: only the instance's stay.
        by_pid.retain(|pid, _| keep.contains(pid));
        for pid in keep {
            if let Some(l) = listed.get(pid).filter(|l| l.is_postgres())
                && !by_pid.contains_key(pid)
            {
                by_pid.insert(*pid, from_listing(*pid, l));
            }
        }
    }
    for (pid, p) in &mut by_pid {
        if let Some(l) = listed.get(pid) {
            p.started = p.started.take().or_else(|| l.start.clone());
            p.rss_bytes = p.rss_bytes.or(l.rss_kb.map(|kb| kb.saturating_mul(1024)));
            if p.role == "unknown"
                && let Some(title) = &l.title
            {
                p.role = role_name(&title.role);
            }
        }
    }
    let other_postmasters = others
        .iter()
        .map(|&pid| {
            let s = &seen[&pid];
            let pids: Vec<u32> = descendants(&parent, pid)
                .into_iter()
                .filter(|p| *p != pid && postgres_pids.contains(p))
                .collect();
            OtherPostmaster {
                pid,
                data_directory: s.dir().map(str::to_owned),
                port: s.port.or_else(|| s.command.as_ref()?.port.map(u32::from)),
                memory_cgroup: s
                    .memory_cgroup
                    .clone()
                    .or_else(|| {
                        listed
                            .get(&pid)?
                            .memory_cgroup
                            .as_ref()
                            .map(|c| c.value.clone())
                    })
                    .or_else(|| listing::proc_cgroup(bundle, pid).map(|c| c.value)),
                processes: s.processes.unwrap_or(pids.len() as u64),
                seen_in: s.at.clone(),
                pids,
            }
        })
        .collect();
    let processes: Vec<PgProcess> = by_pid.into_values().collect();
    let listed_pm = postmaster.and_then(|pm| listed.get(&pm));
    let command = match (postmaster, listed_pm) {
        (Some(pm), l) => listing::postmaster_command(bundle, l).or_else(|| {
            // Our collector's titles hold the postmaster's command line.
            let at = &seen.get(&pm)?.at;
            let (path, line) = at.rsplit_once(':')?;
            let cmd = seen.get(&pm)?.command.clone()?;
            Some(Known::new(cmd, path, line.parse().ok()?, "command line"))
        }),
        (None, _) if others.is_empty() => listing::postmaster_command(bundle, None),
        (None, _) => None,
    };
    let data_directory = manifest_dir
        .or_else(|| command.as_ref()?.value.data_directory.clone())
        .or_else(|| settings_dir.map(str::to_owned));
    let mut facts = ProcessFacts {
        processes,
        postmaster,
        postmaster_from: chosen.map(|(_, from)| from),
        data_directory,
        other_postmasters,
        limits: postmaster.and_then(|pm| limits.remove(&pm)),
        oom_adjust: of_postmaster(oom_adjust, postmaster, others.is_empty()),
        unit: of_postmaster(units, postmaster, others.is_empty()),
        command,
        memory_cgroup: listed_pm
            .and_then(|l| l.memory_cgroup.clone())
            .or_else(|| listing::proc_cgroup(bundle, postmaster?))
            .or_else(|| {
                // The snapshot lacks the postmaster's cgroup file (gone, unreadable, left
                // out): the manifest's, which the collector read for that same postmaster.
                let manifest = manifest?;
                (manifest.postmaster_pid? == postmaster?).then(|| manifest_cgroup(bundle))?
            }),
    };
    if let Some(pm) = facts.postmaster
        && let Some(p) = facts.processes.iter_mut().find(|p| p.pid == pm)
    {
        p.role = "postmaster".to_owned();
    }
    facts
}

/// The manifest's `postmaster_memory_cgroup`, with the line of the manifest that says it.
fn manifest_cgroup(bundle: &Bundle) -> Option<Known<String>> {
    let value = bundle.manifest.as_ref()?.postmaster_memory_cgroup()?;
    let key = "\"postmaster_memory_cgroup\"";
    all_of(bundle, SourceKind::Manifest).find_map(|s| {
        let text = String::from_utf8_lossy(&s.bytes);
        let line = text.lines().position(|l| l.contains(key))? as u64 + 1;
        Some(Known::new(
            value.to_owned(),
            &s.path,
            line,
            "postmaster_memory_cgroup",
        ))
    })
}

/// A postmaster the bundle shows.
#[derive(Debug, Default)]
struct SeenPostmaster {
    /// Its command line, when the bundle has it.
    command: Option<system::PostmasterCommand>,
    /// The manifest's data directory, port, cgroup and count of processes.
    data_directory: Option<String>,
    port: Option<u32>,
    memory_cgroup: Option<String>,
    processes: Option<u64>,
    /// Where it was seen first (`path:line`, or `manifest.json`).
    at: String,
    /// The manifest lists it among the other clusters' postmasters.
    named_other: bool,
}

impl SeenPostmaster {
    /// Its data directory: the manifest's, else its `-D`.
    fn dir(&self) -> Option<&str> {
        self.data_directory
            .as_deref()
            .or_else(|| self.command.as_ref()?.data_directory.as_deref())
    }
}

/// `root` and every process below it, by the parents known.
fn descendants(parent: &BTreeMap<u32, u32>, root: u32) -> BTreeSet<u32> {
    let mut children: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for (pid, pp) in parent {
        children.entry(*pp).or_default().push(*pid);
    }
    let mut seen = BTreeSet::from([root]);
    let mut stack = vec![root];
    while let Some(p) = stack.pop() {
        for &child in children.get(&p).map_or(&[][..], Vec::as_slice) {
            if seen.insert(child) {
                stack.push(child);
            }
        }
    }
    seen
}

/// The postmaster's entry; else, the postmaster unknown and no other cluster in sight, the
/// only one there is (the collector writes these files for the postmaster alone).
fn of_postmaster<T>(
    mut by_pid: BTreeMap<u32, T>,
    postmaster: Option<u32>,
    alone: bool,
) -> Option<T> {
    match postmaster {
        Some(pm) => by_pid.remove(&pm),
        None if alone && by_pid.len() == 1 => by_pid.pop_first().map(|(_, v)| v),
        None => None,
    }
}

/// A process known from the `ps` listings only.
fn from_listing(pid: u32, l: &Listed) -> PgProcess {
    let mut p = unknown(pid);
    p.role = l
        .title
        .as_ref()
        .map_or_else(|| "unknown".to_owned(), |t| role_name(&t.role));
    p.ppid = l.ppid;
    p.rss_bytes = l.rss_kb.map(|kb| kb.saturating_mul(1024));
    p.started = l.start.clone();
    if let Some(at) = &l.rss_at {
        p.read_at.insert("RSS", at.clone());
    }
    p
}

/// A process known by its pid alone: its role `unknown`, nothing read of it.
pub(crate) fn unknown(pid: u32) -> PgProcess {
    PgProcess {
        pid,
        role: "unknown".to_owned(),
        ppid: None,
        oom_score_adj: None,
        rss_bytes: None,
        anon_bytes: None,
        anon_basis: None,
        page_table_bytes: None,
        swap_bytes: None,
        hugetlb_bytes: None,
        thp_bytes: None,
        status_path: None,
        started: None,
        read_at: BTreeMap::new(),
    }
}

fn role_name(role: &PgRole) -> String {
    match role {
        PgRole::Postmaster => "postmaster".to_owned(),
        PgRole::ClientBackend { .. } => "client backend".to_owned(),
        PgRole::WalSender { .. } => "walsender".to_owned(),
        PgRole::AutovacuumWorker { .. } => "autovacuum worker".to_owned(),
        PgRole::ParallelWorker { .. } => "parallel worker".to_owned(),
        PgRole::Auxiliary { name, .. } => name.clone(),
        PgRole::BackgroundWorker { .. } => "background worker".to_owned(),
        _ => "unknown".to_owned(),
    }
}
