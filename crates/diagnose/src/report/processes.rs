//! PostgreSQL's processes as the report states them: role, memory, `oom_score_adj`, the
//! postmaster's limits, unit and start. Built by `facts`.

use std::collections::BTreeMap;

use pgmortem_parse::system::{PostmasterCommand, ResourceLimit};
use serde::Serialize;

use super::{Evidence, Known};

/// One PostgreSQL process.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PgProcess {
    /// Its pid (in the collector's PID namespace).
    pub pid: u32,
    /// `postmaster`, `client backend`, `parallel worker`, `autovacuum worker`, `walsender`,
    /// `background worker`, the auxiliary process's name (`checkpointer`, …), or `unknown`.
    pub role: String,
    /// Its parent's pid (`PPid:`).
    pub ppid: Option<u32>,
    /// `/proc/PID/oom_score_adj`.
    pub oom_score_adj: Option<Known<i32>>,
    /// `VmRSS`, bytes: counts every shared page it touched.
    pub rss_bytes: Option<u64>,
    /// Private anonymous memory: `Pss_Anon` (smaps_rollup), else `RssAnon`.
    pub anon_bytes: Option<u64>,
    /// Which field `anon_bytes` came from: `pss_anon` or `rss_anon`.
    pub anon_basis: Option<&'static str>,
    /// `VmPTE`: its page tables.
    pub page_table_bytes: Option<u64>,
    /// `VmSwap`.
    pub swap_bytes: Option<u64>,
    /// `HugetlbPages`: shared memory it maps in huge pages.
    pub hugetlb_bytes: Option<u64>,
    /// `AnonHugePages + ShmemPmdMapped` of smaps_rollup: transparent huge pages it maps.
    pub thp_bytes: Option<u64>,
    /// Its status file, for evidence.
    pub status_path: Option<String>,
    /// When it started, as `ps` printed it (`Sat Nov 28 05:29:36 2026` from `lstart`, else
    /// `05:29`: the host's local time), when a listing gave it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// Where each memory value above was read, by the field's name in its file (`VmPTE`,
    /// `HugetlbPages`, `Pss_Anon`, `AnonHugePages`, …): `(path, line)`, for evidence.
    #[serde(skip)]
    pub read_at: BTreeMap<&'static str, (String, u64)>,
}

impl PgProcess {
    /// What it adds to the host's memory use: private anonymous memory plus page tables.
    pub fn real_bytes(&self) -> Option<u64> {
        Some(
            self.anon_bytes?
                .saturating_add(self.page_table_bytes.unwrap_or(0)),
        )
    }

    /// The line field `field` (`VmPTE`, `HugetlbPages`, `Pss_Anon`, …) was read from, as a
    /// finding's evidence saying `what`; `None` when the bundle did not have it.
    pub fn evidence(&self, field: &str, what: impl Into<String>) -> Option<Evidence> {
        let (path, line) = self.read_at.get(field)?;
        Some(Evidence {
            path: path.clone(),
            line: *line,
            what: what.into(),
            key: Some(field.to_owned()),
            host_file: None,
            host_line: None,
        })
    }
}

/// The postmaster's resource limits that explain failed forks and allocations (soft and hard;
/// `null`: unlimited).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LimitFacts {
    /// `Max processes` (RLIMIT_NPROC, `ulimit -u`, systemd `LimitNPROC=`): processes and
    /// threads of the postmaster's user, every program of that user counted.
    pub max_processes: Option<Known<ResourceLimit>>,
    /// `Max address space` (RLIMIT_AS, `ulimit -v`, `LimitAS=`): virtual memory per process,
    /// shared memory mappings included.
    pub max_address_space: Option<Known<ResourceLimit>>,
    /// `Max data size` (RLIMIT_DATA, `ulimit -d`, `LimitDATA=`): private writable memory per
    /// process.
    pub max_data_size: Option<Known<ResourceLimit>>,
}

/// The postmaster's `PG_OOM_ADJUST_FILE` and `PG_OOM_ADJUST_VALUE`
/// (`processes/PID/pg-oom-adjust.txt`): after each fork, a child of the postmaster writes
/// `PG_OOM_ADJUST_VALUE` (`0` when unset) to the file `PG_OOM_ADJUST_FILE` names; with it unset,
/// every child keeps the postmaster's `oom_score_adj`.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OomAdjustFacts {
    /// `PG_OOM_ADJUST_FILE` (`/proc/self/oom_score_adj`); the value is `null` when it is
    /// unset. `null` as a whole when the file does not say.
    pub file: Option<Known<Option<String>>>,
    /// `PG_OOM_ADJUST_VALUE`; the value is `null` when it is unset (children write `0`).
    pub value: Option<Known<Option<String>>>,
}

impl OomAdjustFacts {
    /// Whether each child resets its `oom_score_adj` after the fork: `PG_OOM_ADJUST_FILE` is
    /// set to a file name (an empty one names none); `None` when the file does not say.
    pub fn children_reset(&self) -> Option<bool> {
        let file = self.file.as_ref()?;
        Some(file.value.as_deref().is_some_and(|f| !f.is_empty()))
    }

    /// What each child writes: `PG_OOM_ADJUST_VALUE` as printed, `0` when it is unset or not
    /// said (PostgreSQL's default).
    pub fn reset_to(&self) -> &str {
        self.value
            .as_ref()
            .and_then(|v| v.value.as_deref())
            .unwrap_or("0")
    }
}

/// The postmaster's systemd unit (`systemctl show -p Id -p OOMScoreAdjust UNIT`,
/// `processes/PID/systemd-unit.txt`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UnitFacts {
    /// Its name (`postgresql@15-main.service`).
    pub id: Option<Known<String>>,
    /// `OOMScoreAdjust`: the `oom_score_adj` systemd starts its processes at (0 when the unit
    /// sets none).
    pub oom_score_adjust: Option<Known<i32>>,
}

/// The processes of the instance the bundle is about: its postmaster and the processes below
/// it, and the other clusters' postmasters the bundle shows beside them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProcessFacts {
    /// The postmaster and its descendants (by parent pid), by pid; the processes of another
    /// cluster are never among them. With several clusters and nothing to tell which one the
    /// bundle is about, none.
    pub processes: Vec<PgProcess>,
    /// The postmaster's pid: the manifest's `postmaster_pid`; else the postmaster whose data
    /// directory is the bundle's (`postmaster.opts`, the settings' `data_directory`, the
    /// manifest's); else the only postmaster the bundle shows; else the only PostgreSQL process
    /// with children whose parent is not one.
    pub postmaster: Option<u32>,
    /// How the postmaster was found: `manifest`, `data_directory`, `only_postmaster`,
    /// `parent_of_processes`; null when it was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub postmaster_from: Option<&'static str>,
    /// The instance's data directory: the manifest's, else the postmaster's `-D`, else the
    /// settings' `data_directory`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_directory: Option<String>,
    /// The postmasters of other clusters the bundle shows (process titles, `ps` listings, the
    /// manifest's `other_postmasters`): named, never judged; empty when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub other_postmasters: Vec<OtherPostmaster>,
    /// The postmaster's `/proc/PID/limits`, when collected.
    pub limits: Option<LimitFacts>,
    /// The postmaster's `PG_OOM_ADJUST_*` environment, when collected.
    pub oom_adjust: Option<OomAdjustFacts>,
    /// The postmaster's systemd unit, when it runs under one and it was collected.
    pub unit: Option<UnitFacts>,
    /// How the postmaster was started: its command line (a `ps` listing), else
    /// `postmaster.opts`: the program, the data directory, the port, the configuration file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<Known<PostmasterCommand>>,
    /// The postmaster's memory cgroup (its path in the hierarchy, `/system.slice/…`): the
    /// `CGROUP` column of a `ps` listing, else its `/proc/PID/cgroup`, else the manifest's
    /// `postmaster_memory_cgroup` when the manifest's `postmaster_pid` is this postmaster (the
    /// collector read it when the snapshot's file was gone or left out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_cgroup: Option<Known<String>>,
}

/// Another cluster's postmaster on the same host, as the bundle shows it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OtherPostmaster {
    /// Its pid.
    pub pid: u32,
    /// Its data directory (`-D` of its command line, or the manifest's), when known.
    pub data_directory: Option<String>,
    /// Its port (`-p`, or the manifest's), when known.
    pub port: Option<u32>,
    /// Its memory cgroup's path, when known.
    pub memory_cgroup: Option<String>,
    /// Processes below it the bundle shows (the manifest's count when it gives one).
    pub processes: u64,
    /// Where the bundle shows it (`processes/postgres-titles.txt:7`, `manifest.json`).
    pub seen_in: String,
    /// The pids below it the bundle shows.
    #[serde(skip)]
    pub pids: Vec<u32>,
}

impl OtherPostmaster {
    /// `postmaster 12474 (/var/lib/postgresql/15/other, port 5433)`, for a person.
    pub fn describe(&self) -> String {
        let mut what = Vec::new();
        if let Some(d) = &self.data_directory {
            what.push(d.clone());
        }
        if let Some(p) = self.port {
            what.push(format!("port {p}"));
        }
        if what.is_empty() {
            format!("postmaster {}", self.pid)
        } else {
            format!("postmaster {} ({})", self.pid, what.join(", "))
        }
    }
}

/// How a memory cgroup stands to the postmaster's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupRelation {
    /// The postmaster's own.
    Same,
    /// One above it: its limit bounds the postmaster's cgroup too.
    Ancestor,
    /// One below it: counted in the postmaster's cgroup.
    Descendant,
    /// Neither: another branch of the tree.
    Unrelated,
}

/// How the cgroup `path` stands to `ours` (both paths in one hierarchy, `/a/b`).
pub fn cgroup_relation(ours: &str, path: &str) -> CgroupRelation {
    let parts = |p: &str| -> Vec<String> {
        p.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let (ours, theirs) = (parts(ours), parts(path));
    if ours == theirs {
        CgroupRelation::Same
    } else if ours.starts_with(&theirs) {
        CgroupRelation::Ancestor
    } else if theirs.starts_with(&ours) {
        CgroupRelation::Descendant
    } else {
        CgroupRelation::Unrelated
    }
}

impl ProcessFacts {
    /// The postmaster's pid.
    pub fn postmaster_pid(&self) -> Option<u32> {
        self.postmaster
    }

    /// Whether `pid` is the postmaster or a process below it, among those the bundle shows.
    pub fn holds(&self, pid: u32) -> bool {
        self.processes.iter().any(|p| p.pid == pid)
    }

    /// The other cluster whose postmaster is `pid` or has `pid` below it.
    pub fn other_cluster_of(&self, pid: u32) -> Option<&OtherPostmaster> {
        self.other_postmasters
            .iter()
            .find(|o| o.pid == pid || o.pids.contains(&pid))
    }

    /// How the memory cgroup `path` stands to the postmaster's; `None` when the postmaster's
    /// is not known, or is the root (`/`: the host's, or a cgroup namespace's, whose place in
    /// the kernel's tree is unknown).
    pub fn cgroup_relation(&self, path: &str) -> Option<CgroupRelation> {
        let ours = self.memory_cgroup.as_ref()?.value.as_str();
        if ours.trim_matches('/').is_empty() {
            return None;
        }
        Some(cgroup_relation(ours, path))
    }

    /// The postmaster.
    pub fn postmaster(&self) -> Option<&PgProcess> {
        let pid = self.postmaster?;
        self.processes.iter().find(|p| p.pid == pid)
    }

    /// Every process but the postmaster.
    pub fn children(&self) -> impl Iterator<Item = &PgProcess> {
        self.processes
            .iter()
            .filter(move |p| Some(p.pid) != self.postmaster)
    }

    /// Client backends.
    pub fn backends(&self) -> impl Iterator<Item = &PgProcess> {
        self.processes.iter().filter(|p| p.role == "client backend")
    }
}
