//! PostgreSQL's processes as the collector saw them: role (from the process titles),
//! `oom_score_adj`, and memory (status and smaps_rollup): what each really costs; the
//! postmaster's resource limits, which every process it forks inherits; and how the postmaster
//! was started: its `PG_OOM_ADJUST_*` environment, its systemd unit, its command line and its
//! memory cgroup. Without `/proc/PID/*` files (a sosreport before sos 4.3), the processes come
//! from the `ps` listings (`listing.rs`): the postmaster and the processes below it, with their
//! RSS and start; with the files of every process on the host (sos 4.3 and later), the listings
//! say which are the postmaster's.

use std::collections::BTreeMap;

use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::system::{self, PgRole, ProcStatus, SmapsRollup};

use super::listing::{self, Listed};
use super::{Known, all_of, pid_in_path};
use crate::report::{LimitFacts, OomAdjustFacts, PgProcess, ProcessFacts, UnitFacts};

/// The status fields whose lines are kept for evidence.
const STATUS_FIELDS: &[&str] = &["VmRSS", "RssAnon", "VmPTE", "VmSwap", "HugetlbPages"];
/// The smaps_rollup fields whose lines are kept for evidence.
const SMAPS_FIELDS: &[&str] = &["Pss_Anon", "AnonHugePages", "ShmemPmdMapped"];

pub(super) fn build(bundle: &Bundle) -> ProcessFacts {
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
    let mut titled_postmaster = None;
    for source in all_of(bundle, SourceKind::ProcessTitles) {
        for title in system::parse_titles(&source.bytes).0 {
            let Some(pid) = title.pid else { continue };
            let Some(p) = by_pid.get_mut(&pid) else {
                continue;
            };
            p.role = role_name(&title.role);
            if title.role == PgRole::Postmaster {
                titled_postmaster.get_or_insert(pid);
            }
        }
    }
    // The `ps` listings: the processes themselves when the bundle has no /proc files (a
    // sosreport), else what they add (start, cgroup) to the processes known.
    let listed = listing::listed(bundle);
    let opts_dir = all_of(bundle, SourceKind::PostmasterOpts)
        .find_map(|s| system::parse_postmaster_opts(&s.bytes).ok()?.data_directory);
    if by_pid.is_empty() {
        let pids: Vec<u32> = match listing::postmaster(&listed, opts_dir.as_deref()) {
            Some(pm) => {
                titled_postmaster = Some(pm);
                listing::tree(&listed, pm)
            }
            None => listed.keys().copied().collect(),
        };
        for pid in pids {
            let l = &listed[&pid];
            if l.is_postgres() {
                by_pid.insert(pid, from_listing(pid, l));
            }
        }
    } else {
        // sos 4.3 and later copy the /proc/PID files of every process on the host: when the
        // listings show the postmaster, only it and the processes below it are PostgreSQL's.
        if let Some(pm) = listing::postmaster(&listed, opts_dir.as_deref()) {
            let tree = listing::tree(&listed, pm);
            if by_pid.keys().any(|pid| !tree.contains(pid)) {
                by_pid.retain(|pid, _| tree.contains(pid));
                titled_postmaster.get_or_insert(pm);
                for pid in tree {
                    let l = &listed[&pid];
                    if l.is_postgres() && !by_pid.contains_key(&pid) {
                        by_pid.insert(pid, from_listing(pid, l));
                    }
                }
            }
        }
        for (pid, p) in &mut by_pid {
            if let Some(l) = listed.get(pid) {
                p.started = l.start.clone();
                p.rss_bytes = p.rss_bytes.or(l.rss_kb.map(|kb| kb.saturating_mul(1024)));
                if p.role == "unknown"
                    && let Some(title) = &l.title
                {
                    p.role = role_name(&title.role);
                }
            }
        }
    }
    let processes: Vec<PgProcess> = by_pid.into_values().collect();
    let postmaster = titled_postmaster.or_else(|| {
        // The process whose parent is not one of them, with the most children.
        let pids: Vec<u32> = processes.iter().map(|p| p.pid).collect();
        processes
            .iter()
            .filter(|p| p.ppid.is_some_and(|pp| !pids.contains(&pp)))
            .max_by_key(|p| processes.iter().filter(|c| c.ppid == Some(p.pid)).count())
            .filter(|p| processes.iter().any(|c| c.ppid == Some(p.pid)))
            .map(|p| p.pid)
    });
    let listed_pm = postmaster.and_then(|pm| listed.get(&pm));
    let mut facts = ProcessFacts {
        processes,
        postmaster,
        limits: postmaster.and_then(|pm| limits.remove(&pm)),
        oom_adjust: of_postmaster(oom_adjust, postmaster),
        unit: of_postmaster(units, postmaster),
        command: listing::postmaster_command(bundle, listed_pm),
        memory_cgroup: listed_pm
            .and_then(|l| l.memory_cgroup.clone())
            .or_else(|| listing::proc_cgroup(bundle, postmaster?)),
    };
    if let Some(pm) = facts.postmaster
        && let Some(p) = facts.processes.iter_mut().find(|p| p.pid == pm)
    {
        p.role = "postmaster".to_owned();
    }
    facts
}

/// The postmaster's entry; else, the postmaster unknown, the only one there is (the collector
/// writes these files for the postmaster alone).
fn of_postmaster<T>(mut by_pid: BTreeMap<u32, T>, postmaster: Option<u32>) -> Option<T> {
    match postmaster {
        Some(pm) => by_pid.remove(&pm),
        None if by_pid.len() == 1 => by_pid.pop_first().map(|(_, v)| v),
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

fn unknown(pid: u32) -> PgProcess {
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
