//! Host facts from the /proc and /sys snapshots: memory, vm sysctls, THP, the memory cgroup,
//! /dev/shm, the CPU's vulnerabilities and clock source, kernel audit.

use pgmortem_bundle::{Bundle, SourceKind};
use pgmortem_parse::system::{self, CgroupMemory, Meminfo};

use super::{Known, all_of, first_of, pid_in_path};
use crate::report::{
    CgroupFacts, CpuFacts, DevShm, MemoryFacts, SubtransFacts, TSC_FLAGS, ThpFacts, VmFacts,
};

/// Every host fact except processes, PostgreSQL and the cgroup (which needs the postmaster).
pub(super) fn build(bundle: &Bundle) -> super::HostFacts {
    super::HostFacts {
        memory: first_of(bundle, SourceKind::Meminfo)
            .and_then(|s| memory(&s.path, &system::parse_meminfo(&s.bytes))),
        vm: vm(bundle),
        thp: thp(bundle),
        dev_shm: dev_shm(bundle),
        cpu: cpu(bundle),
        subtrans: subtrans(bundle),
        ..super::HostFacts::default()
    }
}

fn memory(path: &str, m: &Meminfo) -> Option<MemoryFacts> {
    let bytes = |key: &str| {
        let f = m.fields.get(key)?;
        Some(Known::new(f.bytes?, path, f.line, key))
    };
    let count = |key: &str| {
        let f = m.fields.get(key)?;
        Some(Known::new(f.number?, path, f.line, key))
    };
    Some(MemoryFacts {
        ram: bytes("MemTotal")?,
        available: bytes("MemAvailable"),
        swap_total: bytes("SwapTotal"),
        swap_free: bytes("SwapFree"),
        commit_limit: bytes("CommitLimit"),
        committed_as: bytes("Committed_AS"),
        page_tables: bytes("PageTables"),
        anon_huge_pages: bytes("AnonHugePages"),
        shmem: bytes("Shmem"),
        hugepages_total: count("HugePages_Total"),
        hugepages_free: count("HugePages_Free"),
        hugepages_rsvd: count("HugePages_Rsvd"),
        hugepage_size: bytes("Hugepagesize"),
    })
}

fn vm(bundle: &Bundle) -> VmFacts {
    let mut vm = VmFacts::default();
    // Listings (`sysctl -a`, `grep -r . /proc/sys/vm`), then the one-value files of a copied
    // /proc/sys (a sosreport's `proc/sys/vm/overcommit_memory`), each named by its path.
    let one_value = all_of(bundle, SourceKind::SysctlValue).filter_map(|source| {
        let rel = source
            .path
            .rsplit_once("proc/sys/")
            .map(|(_, rel)| rel)
            .filter(|rel| !rel.is_empty())?;
        let mut set = system::SysctlSet::default();
        set.entries
            .push(system::parse_proc_sys_file(rel, &source.bytes));
        Some((source, set))
    });
    let listings = all_of(bundle, SourceKind::Sysctl)
        .map(|source| (source, system::parse_sysctl(&source.bytes)))
        .chain(one_value);
    for (source, set) in listings {
        let get = |name: &str| {
            let s = set.get(name)?;
            let value = i64::try_from(s.integer()?).ok()?;
            Some(Known::new(value, &source.path, s.line, name))
        };
        let slots: [(&str, &mut Option<Known<i64>>); 10] = [
            ("vm.overcommit_memory", &mut vm.overcommit_memory),
            ("vm.overcommit_ratio", &mut vm.overcommit_ratio),
            ("vm.overcommit_kbytes", &mut vm.overcommit_kbytes),
            ("vm.swappiness", &mut vm.swappiness),
            ("vm.nr_hugepages", &mut vm.nr_hugepages),
            (
                "vm.nr_overcommit_hugepages",
                &mut vm.nr_overcommit_hugepages,
            ),
            ("vm.dirty_ratio", &mut vm.dirty_ratio),
            ("vm.dirty_background_ratio", &mut vm.dirty_background_ratio),
            ("vm.dirty_bytes", &mut vm.dirty_bytes),
            ("vm.dirty_background_bytes", &mut vm.dirty_background_bytes),
        ];
        for (name, slot) in slots {
            if slot.is_none() {
                *slot = get(name);
            }
        }
    }
    vm
}

fn thp(bundle: &Bundle) -> ThpFacts {
    let mut thp = ThpFacts::default();
    for source in all_of(bundle, SourceKind::ThpSetting) {
        let name = source.path.rsplit('/').next().unwrap_or(&source.path);
        let name = name.strip_suffix(".txt").unwrap_or(name);
        let name = name.strip_prefix("thp-").unwrap_or(name);
        let slot = match name {
            "enabled" => &mut thp.enabled,
            "defrag" => &mut thp.defrag,
            _ => continue,
        };
        if let Some(selected) = system::parse_choice(&source.bytes).selected {
            slot.get_or_insert(Known::new(
                selected,
                &source.path,
                1,
                &format!("transparent_hugepage/{name}"),
            ));
        }
    }
    thp
}

fn dev_shm(bundle: &Bundle) -> Option<DevShm> {
    all_of(bundle, SourceKind::Df).find_map(|source| {
        let df = system::parse_df(&source.bytes);
        if df.counts != "bytes" {
            return None;
        }
        let row = df.mounted_on("/dev/shm")?;
        Some(DevShm {
            size: Known::new(row.size?, &source.path, row.line, "/dev/shm"),
            used: row.used,
            available: row.available,
        })
    })
}

fn cpu(bundle: &Bundle) -> CpuFacts {
    let mut cpu = CpuFacts::default();
    if let Some(source) = first_of(bundle, SourceKind::CpuVulnerabilities) {
        cpu.vulnerabilities = system::parse_vulnerabilities(&source.bytes)
            .entries
            .into_iter()
            .map(|v| Known::new(v.status, &source.path, v.line, &v.name))
            .collect();
    }
    cpu.clocksource = first_of(bundle, SourceKind::Clocksource).and_then(|s| {
        let name = system::parse_clocksource(&s.bytes).ok()?;
        Some(Known::new(name, &s.path, 1, "current_clocksource"))
    });
    cpu.tsc_flags = first_of(bundle, SourceKind::CpuFlags).and_then(|s| {
        let flags = system::parse_cpu_flags(&s.bytes);
        if flags.line == 0 {
            return None;
        }
        let tsc = TSC_FLAGS
            .iter()
            .filter(|f| flags.has(f))
            .map(|f| (*f).to_owned())
            .collect();
        Some(Known::new(tsc, &s.path, flags.line, "flags"))
    });
    cpu.audit_enabled = first_of(bundle, SourceKind::AuditStatus).and_then(|s| {
        let status = system::parse_flat_keyed(&s.bytes);
        let f = status.fields.get("enabled")?;
        Some(Known::new(f.number?, &s.path, f.line, "enabled"))
    });
    cpu.audit_syscall_rules = first_of(bundle, SourceKind::AuditRules).map(|s| {
        let rules = system::parse_audit_rules(&s.bytes);
        let line = rules.rules.first().map_or(1, |r| r.0);
        Known::new(rules.syscall_rules, &s.path, line, "syscall rules")
    });
    cpu
}

/// Wait events that mean a session waits on the subtransaction SLRU: PostgreSQL 13+'s
/// `SubtransSLRU` and `SubtransBuffer`, and their 9.6–12 names `SubtransControlLock` and
/// `subtrans`.
pub const SUBTRANS_WAITS: &[&str] = &[
    "SubtransSLRU",
    "SubtransBuffer",
    "SubtransControlLock",
    "subtrans",
];

fn subtrans(bundle: &Bundle) -> Option<SubtransFacts> {
    let files = first_of(bundle, SourceKind::SubtransFiles).and_then(|s| {
        let n = system::parse_count(&s.bytes).ok()?;
        Some(Known::new(n, &s.path, 1, "pg_subtrans files"))
    });
    let activity =
        first_of(bundle, SourceKind::PgActivity).map(|s| (s, system::parse_pipe_table(&s.bytes)));
    if files.is_none() && activity.as_ref().is_none_or(|(_, t)| t.rows.is_empty()) {
        return None;
    }
    let mut facts = SubtransFacts {
        files,
        ..SubtransFacts::default()
    };
    if let Some((source, table)) = activity
        && let (Some(event), Some(count)) = (table.column("wait_event"), table.column("count"))
    {
        let mut sessions = 0;
        for (line, row) in &table.rows {
            let n: u64 = row[count].trim().parse().unwrap_or(0);
            sessions += n;
            let wait = row[event].trim();
            if SUBTRANS_WAITS.contains(&wait) && n > 0 {
                facts.waits.push(Known::new(n, &source.path, *line, wait));
            }
        }
        facts.sessions = Some(sessions);
    }
    Some(facts)
}

/// The postmaster's memory cgroup: the collector's `cgroup/PID/` files of the postmaster; else,
/// in a copy of the whole cgroup tree (a sosreport's `sys/fs/cgroup/`), the directory of the
/// cgroup the postmaster is in (`memory_cgroup`: its `ps` `CGROUP` column or
/// `/proc/PID/cgroup`), else of the cgroup the kernel's OOM report names for a killed
/// PostgreSQL process (`task_memcg=`, else `oom_memcg=`); else the only collector directory
/// there is. Never the root of a tree (whose limit is no limit, whose counters are every
/// process's): `None` when the postmaster is at the root or nothing says where it is.
pub(super) fn cgroup(
    bundle: &Bundle,
    postmaster: Option<u32>,
    memory_cgroup: Option<&Known<String>>,
    incidents: &[crate::report::Incident],
) -> Option<CgroupFacts> {
    let files: Vec<_> = bundle
        .sources
        .iter()
        .filter(|s| {
            matches!(
                s.kind,
                SourceKind::CgroupValue | SourceKind::CgroupEvents | SourceKind::CgroupStat
            )
        })
        .collect();
    let dir_of = |path: &str| {
        path.rsplit_once('/')
            .map_or(String::new(), |(d, _)| d.to_owned())
    };
    let mut dirs: Vec<String> = files.iter().map(|s| dir_of(&s.path)).collect();
    dirs.dedup();
    let by_pid = postmaster.and_then(|pid| {
        dirs.iter()
            .find(|d| pid_in_path(&format!("{d}/x")) == Some(pid))
            .cloned()
    });
    let from_oom = || oom_cgroup(incidents);
    let known_path = memory_cgroup.cloned().or_else(from_oom);
    let (dir, path) = if let Some(dir) = by_pid {
        (dir, known_path)
    } else if let Some(path) = known_path {
        let rel = path.value.trim_matches('/');
        if rel.is_empty() {
            // At the root: the host's memory is its limit.
            return None;
        }
        let suffix = format!("/{rel}");
        // The v1 memory hierarchy's copy, else any (v2) whose path ends with it.
        let dir = dirs
            .iter()
            .filter(|d| d.ends_with(&suffix))
            .min_by_key(|d| !d.contains("/memory/"))?
            .clone();
        (dir, Some(path))
    } else {
        // The collector's one directory; a copy of a whole tree says nothing by itself.
        let dir = dirs.iter().find(|d| !is_tree_dir(d))?.clone();
        (dir, None)
    };
    let mut memory = CgroupMemory::default();
    let mut facts = CgroupFacts {
        version: None,
        dir: dir.clone(),
        path,
        limit: None,
        limit_read: false,
        high: None,
        high_events: None,
        usage: None,
        peak: None,
        failcnt: None,
        oom_kills: None,
    };
    for source in files.iter().filter(|s| dir_of(&s.path) == dir) {
        let name = source.path.rsplit('/').next().unwrap_or(&source.path);
        let name = name.strip_suffix(".txt").unwrap_or(name);
        memory.add_file(name, &source.bytes);
        let at = |v: u64, key: &str| Some(Known::new(v, &source.path, 1, key));
        match name {
            "memory.limit_in_bytes" | "memory.max" => {
                facts.limit_read = true;
                facts.limit = memory.limit_bytes.and_then(|v| at(v, name));
            }
            "memory.high" => facts.high = memory.high_bytes.and_then(|v| at(v, name)),
            "memory.usage_in_bytes" | "memory.current" => {
                facts.usage = memory.usage_bytes.and_then(|v| at(v, name));
            }
            "memory.max_usage_in_bytes" | "memory.peak" => {
                facts.peak = memory.peak_bytes.and_then(|v| at(v, name));
            }
            "memory.failcnt" => facts.failcnt = memory.failcnt.and_then(|v| at(v, name)),
            "memory.oom_control" | "memory.events" => {
                let fields = system::parse_flat_keyed(&source.bytes).fields;
                let line = |key: &str| fields.get(key).map_or(1, |f| f.line);
                facts.oom_kills = memory
                    .oom_kills
                    .map(|v| Known::new(v, &source.path, line("oom_kill"), "oom_kill"));
                facts.high_events = memory
                    .high_events
                    .map(|v| Known::new(v, &source.path, line("high"), "high"));
            }
            _ => {}
        }
    }
    facts.version = memory.version;
    Some(facts)
}

/// Whether a directory is in a copy of a cgroup tree (`sys/fs/cgroup/…`), where a directory is
/// a cgroup like any other: which one is the postmaster's must be found.
fn is_tree_dir(dir: &str) -> bool {
    dir == "sys/fs/cgroup" || dir.starts_with("sys/fs/cgroup/") || dir.contains("/sys/fs/cgroup")
}

/// The cgroup of the last OOM kill of a PostgreSQL process the kernel logs show, one of the
/// instance's first (tied to a death in its log), never a stranger's: the victim's
/// (`task_memcg=`), else the one whose limit was hit (`oom_memcg=`).
fn oom_cgroup(incidents: &[crate::report::Incident]) -> Option<Known<String>> {
    let kills: Vec<_> = incidents
        .iter()
        .filter_map(|i| i.kernel_kill.as_ref())
        .filter(|k| k.comm.starts_with("postgres") && !k.is_stranger())
        .collect();
    let ours = kills
        .iter()
        .rev()
        .find(|k| k.owner.is_some())
        .or_else(|| kills.last())?;
    let memcg = ours.memcg.as_ref()?;
    let (path, key) = match (&memcg.task_path, &memcg.path) {
        (Some(p), _) => (p, "task_memcg"),
        (None, Some(p)) => (p, "oom_memcg"),
        _ => return None,
    };
    Some(Known::new(path.clone(), &ours.path, ours.line, key))
}
