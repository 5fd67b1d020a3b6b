//! One model of the host, built once per bundle from every source: memory, kernel tunables,
//! transparent huge pages, the memory cgroup, /dev/shm, the CPU, PostgreSQL's settings and
//! version, its processes, the perf profile, what the server log and the kernel log recorded,
//! and the incidents. Rules read these facts, never raw text; each fact keeps the file and line
//! (and key) it was read from, so a finding can cite it.

mod host;
mod listing;
mod log;
mod perf;
mod postgres;
pub(crate) mod processes;
mod storage;

use crate::report::{Evidence, Incident};
use crate::sources::{KernelSource, PgSource};

pub use crate::report::{
    ArchiverFacts, DatabaseFacts, Place, SlotFacts, StorageFacts, Volume, WalFacts,
};
pub use crate::report::{
    CgroupFacts, CpuFacts, DevShm, HostFacts, Known, LimitFacts, MemoryFacts, OomAdjustFacts,
    PgFacts, PgProcess, ProcessFacts, Setting, SettingOrigin, SettingsSource, SubtransFacts,
    TSC_FLAGS, ThpFacts, UnitFacts, VmFacts,
};
pub use host::SUBTRANS_WAITS;
pub use log::{LogFacts, LogKind, OomError, TempFileFacts};
pub use perf::PerfFacts;

/// Everything the rules read.
pub struct Facts<'a> {
    /// The host's snapshots.
    pub host: HostFacts,
    /// The PostgreSQL logs.
    pub log: LogFacts<'a>,
    /// Kernel logs were in the bundle.
    pub kernel_logs: Vec<&'a str>,
    /// User-space faults the kernel logged (`postgres[5327]: segfault at 0 ip …`), one per
    /// process (the first kernel log that has it).
    pub kernel_faults: Vec<KernelFault<'a>>,
    /// Perf profiles.
    pub perf: Vec<PerfFacts>,
    /// The incidents found by correlation.
    pub incidents: &'a [Incident],
    /// WAL archiving as pgBackRest's logs show it.
    pub archiving: ArchivingFacts<'a>,
    /// Every kernel log's records, on the bundle's clock.
    pub kernel: KernelEvents<'a>,
}

/// How far apart (seconds) the same kernel event in two logs may be placed and still be one.
pub const SAME_EVENT_SECONDS: f64 = 2.0;

/// The kernel logs' records, each placeable on UTC.
#[derive(Clone, Copy)]
pub struct KernelEvents<'a> {
    sources: &'a [KernelSource],
    clock: &'a crate::clock::Clock,
}

/// A kernel record with its log and its time on UTC (when the clock can place it).
#[derive(Debug, Clone, Copy)]
pub struct KernelEventAt<'a> {
    /// The kernel log.
    pub path: &'a str,
    /// The record (its `line`, its `event`).
    pub record: &'a pgmortem_parse::kernel::KernelRecord,
    /// Its time on UTC.
    pub at: Option<jiff::Timestamp>,
}

impl KernelEventAt<'_> {
    /// The record as evidence, saying `what`.
    pub fn evidence(&self, what: impl Into<String>) -> Evidence {
        Evidence {
            path: self.path.to_owned(),
            line: self.record.line,
            what: what.into(),
            key: None,
            host_file: None,
            host_line: None,
        }
    }
}

impl<'a> KernelEvents<'a> {
    /// The records whose event satisfies `want`, in each log's order. A record another log
    /// already gave (the same event within [`SAME_EVENT_SECONDS`]: `dmesg` and `dmesg -T` of
    /// one buffer, a journal beside them) is given once, from the first log.
    pub fn records(
        &self,
        want: impl Fn(&pgmortem_parse::kernel::KernelEvent) -> bool,
    ) -> Vec<KernelEventAt<'a>> {
        let mut out: Vec<KernelEventAt<'a>> = Vec::new();
        for (n, source) in self.sources.iter().enumerate() {
            let before = out.len();
            for record in source.log.records.iter().filter(|r| want(&r.event)) {
                let at = self.clock.kernel(&record.time).map(|t| t.0);
                let seen = n > 0
                    && out[..before].iter().any(|o| {
                        o.record.event == record.event
                            && match (o.at, at) {
                                (Some(a), Some(b)) => {
                                    crate::clock::seconds_between(a, b).abs() <= SAME_EVENT_SECONDS
                                }
                                _ => false,
                            }
                    });
                if !seen {
                    out.push(KernelEventAt {
                        path: &source.path,
                        record,
                        at,
                    });
                }
            }
        }
        out
    }
}

/// WAL archiving as pgBackRest's logs show it: which logs the bundle has, and each time
/// pgBackRest failed to archive (an error or warning of an `archive-push` run: `could not push
/// WAL file '…' to the archive (will be retried)`, `ERROR: [104]: archive-push command
/// encountered error(s)`; `check` finding a segment not archived in time, `ERROR: [082]`).
/// While archiving fails, `pg_wal` keeps every segment not archived.
#[derive(Debug, Clone, Default)]
pub struct ArchivingFacts<'a> {
    /// The pgBackRest logs read.
    pub logs: Vec<&'a str>,
    /// The failures, in each log's order (at most 2 000 records kept per log).
    pub failures: Vec<ArchiveFailure<'a>>,
}

/// pgBackRest failing to archive WAL, once.
#[derive(Debug, Clone)]
pub struct ArchiveFailure<'a> {
    /// The log.
    pub path: &'a str,
    /// The record's first line.
    pub line: u64,
    /// Its stamp: the host's local time, no zone.
    pub time: jiff::civil::DateTime,
    /// pgBackRest's error code (`82`), when it printed one.
    pub code: Option<u16>,
    /// The command of the run (`archive-push:async`, `check`).
    pub command: Option<&'a str>,
    /// One line for a person.
    pub summary: &'a str,
}

/// The archiving failures of the pgBackRest logs.
fn archiving(ha: &[crate::ha::HaSource]) -> ArchivingFacts<'_> {
    let mut facts = ArchivingFacts::default();
    for source in ha.iter().filter(|s| s.tool == crate::ha::Tool::Pgbackrest) {
        facts.logs.push(&source.path);
        for e in source.events.iter().filter(|e| e.is_archive_failure()) {
            facts.failures.push(ArchiveFailure {
                path: &source.path,
                line: e.line,
                time: e.time.civil,
                code: e.code,
                command: e.command.as_deref(),
                summary: &e.summary,
            });
        }
    }
    facts
}

/// The instance the bundle is about: its settings and its processes (the postmaster, the
/// processes below it, the other clusters beside it). Built before the incidents, which it
/// tells the instance's kills from strangers'.
#[derive(Debug, Clone)]
pub(crate) struct InstanceFacts {
    /// PostgreSQL's version and settings.
    pub postgres: PgFacts,
    /// Its processes.
    pub processes: ProcessFacts,
}

/// The instance of a bundle whose PostgreSQL logs were read.
pub(crate) fn instance(bundle: &pgmortem_bundle::Bundle, postgres: &[PgSource]) -> InstanceFacts {
    let pg = postgres::build(bundle, postgres);
    let settings_dir = pg
        .setting("data_directory")
        .map(|s| s.value.clone())
        .filter(|d| !d.is_empty());
    InstanceFacts {
        processes: processes::build(bundle, settings_dir.as_deref()),
        postgres: pg,
    }
}

/// Builds the facts of a bundle from its sources, its instance and the logs already read.
pub(crate) fn build<'a>(
    bundle: &pgmortem_bundle::Bundle,
    instance: InstanceFacts,
    kernel: &'a [KernelSource],
    postgres: &'a [PgSource],
    ha: &'a [crate::ha::HaSource],
    incidents: &'a [Incident],
    clock: &'a crate::clock::Clock,
) -> Facts<'a> {
    let mut host = host::build(bundle);
    host.processes = instance.processes;
    host.postgres = instance.postgres;
    host.storage = storage::build(bundle, &host.postgres);
    host.cgroup = host::cgroup(
        bundle,
        host.processes.postmaster_pid(),
        host.processes.memory_cgroup.as_ref(),
        incidents,
    );
    if host.cgroup.is_none() {
        // A container's limit (Kubernetes' view of the pod) is its memory cgroup's.
        host.cgroup = crate::containers::cgroup(&crate::containers::read(bundle));
    }
    Facts {
        host,
        log: log::build(postgres),
        kernel_logs: kernel.iter().map(|k| k.path.as_str()).collect(),
        kernel_faults: kernel_faults(kernel),
        perf: perf::build(bundle),
        incidents,
        archiving: archiving(ha),
        kernel: KernelEvents {
            sources: kernel,
            clock,
        },
    }
}

/// A segmentation fault the kernel logged, and where.
#[derive(Debug, Clone)]
pub struct KernelFault<'a> {
    /// The kernel log.
    pub path: &'a str,
    /// Its line.
    pub line: u64,
    /// What the kernel printed.
    pub fault: &'a pgmortem_parse::kernel::Segfault,
}

impl KernelFault<'_> {
    /// `postgres[5327]: segfault at 0 ip 0000000000000000 … error 14 in postgres`, shortened.
    pub fn describe(&self) -> String {
        let f = self.fault;
        format!(
            "{}[{}]: segfault at {} ip {} error {}{}",
            f.comm,
            f.pid,
            f.address,
            f.ip,
            f.error,
            f.object
                .as_deref()
                .map(|o| format!(" in {o}"))
                .unwrap_or_default()
        )
    }
}

fn kernel_faults(kernel: &[KernelSource]) -> Vec<KernelFault<'_>> {
    let mut out: Vec<KernelFault<'_>> = Vec::new();
    for source in kernel {
        for record in &source.log.records {
            if let pgmortem_parse::kernel::KernelEvent::Segfault(fault) = &record.event
                && !out.iter().any(|k| k.fault.pid == fault.pid)
            {
                out.push(KernelFault {
                    path: &source.path,
                    line: record.line,
                    fault,
                });
            }
        }
    }
    out
}

/// The first source of `kind` in the bundle (sources are sorted by path).
fn first_of(
    bundle: &pgmortem_bundle::Bundle,
    kind: pgmortem_bundle::SourceKind,
) -> Option<&pgmortem_bundle::Source> {
    bundle.sources.iter().find(|s| s.kind == kind)
}

/// Every source of `kind`.
fn all_of(
    bundle: &pgmortem_bundle::Bundle,
    kind: pgmortem_bundle::SourceKind,
) -> impl Iterator<Item = &pgmortem_bundle::Source> {
    bundle.sources.iter().filter(move |s| s.kind == kind)
}

/// The pid directory a per-process file sits in (`processes/1234/status` → 1234).
fn pid_in_path(path: &str) -> Option<u32> {
    let mut parts = path.rsplit('/');
    parts.next()?;
    parts.next()?.parse().ok()
}

#[cfg(test)]
mod instance_tests;
#[cfg(test)]
mod sos_tests;

#[cfg(test)]
mod tests {
    use crate::rules::testing::Scratch;

    /// The bundle the collector made of a real PostgreSQL 15 in a 1 GiB memory cgroup.
    fn collected() -> Scratch {
        Scratch::bundle("formats/bundle/pg15-collected.tar.gz")
    }

    #[test]
    fn every_snapshot_of_a_collected_bundle_becomes_a_fact() {
        let host = collected().report().host;
        let memory = host.memory.unwrap();
        assert_eq!(memory.ram.value, 24_684_092 * 1024);
        assert_eq!(
            (memory.ram.path.as_str(), memory.ram.line),
            ("memory/meminfo.txt", 1)
        );
        assert_eq!(host.vm.overcommit_memory.unwrap().value, 0);
        assert_eq!(host.vm.swappiness.unwrap().value, 60);
        assert_eq!(host.thp.enabled.unwrap().value, "madvise");
        let cgroup = host.cgroup.unwrap();
        assert_eq!(cgroup.limit.unwrap().value, 1 << 30);
        assert_eq!(cgroup.oom_kills.unwrap().value, 0);
        assert_eq!(host.dev_shm.unwrap().size.value, 24_684_092 * 1024);
        assert_eq!(host.cpu.clocksource.as_ref().unwrap().value, "tsc");
        assert!(host.cpu.vulnerability("mds").is_some());
        let pg = host.postgres;
        assert_eq!(pg.major(), Some(15));
        assert!(
            pg.settings_from
                .as_ref()
                .unwrap()
                .starts_with("pg_settings")
        );
        assert_eq!(pg.bytes("shared_buffers"), Some(32 << 20));
        assert_eq!(pg.number("max_connections"), Some(20.0));
        let processes = host.processes;
        let postmaster = processes.postmaster().unwrap();
        assert_eq!(postmaster.role, "postmaster");
        assert_eq!(postmaster.oom_score_adj.as_ref().unwrap().value, 0);
        assert!(processes.backends().count() >= 2);
        assert!(
            processes
                .processes
                .iter()
                .all(|p| p.page_table_bytes.is_some())
        );
    }

    #[test]
    fn a_process_value_cites_the_line_it_was_read_from() {
        let host = collected().report().host;
        let postmaster = host.processes.postmaster().unwrap();
        // processes/16859/status line 31 is `VmPTE:	     148 kB`; smaps_rollup line 5 is
        // `Pss_Anon:            476 kB`.
        let pte = postmaster.evidence("VmPTE", "page tables").unwrap();
        assert_eq!(
            (pte.path.as_str(), pte.line, pte.key.as_deref()),
            ("processes/16859/status", 31, Some("VmPTE"))
        );
        assert_eq!(postmaster.page_table_bytes, Some(148 << 10));
        let anon = postmaster.evidence("Pss_Anon", "private memory").unwrap();
        assert_eq!(
            (anon.path.as_str(), anon.line),
            ("processes/16859/smaps_rollup", 5)
        );
        assert!(postmaster.evidence("NoSuchField", "x").is_none());
    }

    #[test]
    fn cpu_flags_limits_and_where_settings_were_set() {
        let host = collected().report().host;
        let tsc = host.cpu.tsc_flags.as_ref().unwrap();
        assert_eq!((tsc.path.as_str(), tsc.line), ("cpu/flags.txt", 1));
        assert_eq!(
            tsc.value,
            [
                "tsc",
                "constant_tsc",
                "nonstop_tsc",
                "tsc_known_freq",
                "rdtscp"
            ]
        );
        assert_eq!(host.cpu.invariant_tsc(), Some(true));
        // The postmaster's limits, not another process's.
        let limits = host.processes.limits.unwrap();
        let nproc = limits.max_processes.unwrap();
        assert_eq!(
            (nproc.path.as_str(), nproc.line),
            ("processes/16859/limits", 8)
        );
        assert_eq!(
            (nproc.value.soft, nproc.value.hard),
            (Some(96365), Some(96365))
        );
        assert_eq!(limits.max_address_space.unwrap().value.soft, None);
        let pg = host.postgres;
        assert_eq!(
            pg.setting("max_connections").unwrap().set_in(),
            ", set in `/var/lib/postgresql/15/main/postgresql.conf`"
        );
        assert_eq!(pg.setting("work_mem").unwrap().set_in(), "");
        assert_eq!(pg.bytes("bgwriter_flush_after"), Some(512 << 10));
    }

    #[test]
    fn the_postmaster_is_found_without_titles() {
        let scratch = collected();
        let titles = scratch.paths("postgres-titles");
        assert_eq!(titles.len(), 1);
        let with = scratch.report().host.processes.postmaster;
        let without = scratch
            .remove(&titles[0])
            .report()
            .host
            .processes
            .postmaster;
        assert!(with.is_some());
        assert_eq!(with, without, "the process whose parent is not postgres");
    }

    #[test]
    fn postgresql_conf_alone_gives_settings_and_defaults() {
        let pg = Scratch::new()
            .copy(
                "postgresql.conf",
                "formats/system/postgresql_conf/initdb-postgresql.conf",
            )
            .report()
            .host
            .postgres;
        // initdb wrote `shared_buffers = 128MB` at line 127; the recorder appended 32MB at 821.
        let shared = pg.setting("shared_buffers").unwrap();
        assert_eq!(shared.bytes, Some(32 << 20));
        assert_eq!(shared.from(), "postgresql.conf:821");
        let work_mem = pg.setting("work_mem").unwrap();
        assert_eq!(work_mem.bytes, Some(4 << 20));
        assert!(
            work_mem.from().starts_with("PostgreSQL's default"),
            "{}",
            work_mem.from()
        );
    }

    #[test]
    fn a_postgresql_conf_with_the_collectors_markers_cites_the_host_files() {
        // The collector's contract: includes inlined, postgresql.auto.conf appended.
        let pg = Scratch::new()
            .write(
                "postgres/postgresql.conf",
                "# pgmortem-collect: file /etc/postgresql/15/main/postgresql.conf\n\
                 shared_buffers = 128MB\n\
                 include_dir = 'conf.d'\n\
                 # pgmortem-collect: file /etc/postgresql/15/main/conf.d/10-mem.conf\n\
                 work_mem = 64MB\n\
                 # pgmortem-collect: end /etc/postgresql/15/main/conf.d/10-mem.conf\n\
                 include_if_exists = 'missing.conf'\n\
                 # pgmortem-collect: not read /etc/postgresql/15/main/missing.conf: no such file\n\
                 max_connections = 300\n\
                 # pgmortem-collect: end /etc/postgresql/15/main/postgresql.conf\n\
                 # pgmortem-collect: file /var/lib/postgresql/15/main/postgresql.auto.conf\n\
                 # Do not edit this file manually!\n\
                 work_mem = '1GB'\n\
                 # pgmortem-collect: end /var/lib/postgresql/15/main/postgresql.auto.conf\n",
            )
            .report()
            .host
            .postgres;
        assert_eq!(
            pg.settings_from.as_deref(),
            Some(
                "postgresql.conf (postgres/postgresql.conf; include \
                 /etc/postgresql/15/main/missing.conf was not read: no such file)"
            )
        );
        // ALTER SYSTEM's value wins over the included file's.
        let work_mem = pg.setting("work_mem").unwrap();
        assert_eq!(work_mem.bytes, Some(1 << 30));
        assert_eq!(
            work_mem.from(),
            "postgres/postgresql.conf:13, from \
             /var/lib/postgresql/15/main/postgresql.auto.conf:2"
        );
        let e = pg.setting("max_connections").unwrap().evidence().unwrap();
        assert_eq!((e.path.as_str(), e.line), ("postgres/postgresql.conf", 9));
        assert_eq!(
            (e.host_file.as_deref(), e.host_line),
            (Some("/etc/postgresql/15/main/postgresql.conf"), Some(4))
        );
        // Not set anywhere: PostgreSQL's default, as without markers.
        assert!(
            pg.setting("maintenance_work_mem")
                .unwrap()
                .from()
                .starts_with("PostgreSQL's default")
        );
    }

    /// What the collector writes when the server cannot be asked (`postgres -C` per setting).
    const POSTGRES_C: &str = "\
name|setting|unit|source|sourcefile|pending_restart
huge_pages|try||postgres -C||f
max_connections|100||postgres -C||f
server_version_num|150010||postgres -C||f
shared_buffers|16384|8kB|postgres -C||f
shared_memory_size|143|MB|postgres -C||f
work_mem|4096|kB|postgres -C||f
(6 rows)
";

    #[test]
    fn the_postgres_c_answer_gives_settings_when_the_server_could_not_be_asked() {
        let scratch = collected().remove("postgres/pg_settings.txt");
        let pg = scratch
            .write("postgres/pg_settings-postgres-C.txt", POSTGRES_C)
            .report()
            .host
            .postgres;
        assert_eq!(
            pg.settings_from.as_deref(),
            Some("postgres -C (postgres/pg_settings-postgres-C.txt)")
        );
        assert_eq!(pg.bytes("shared_buffers"), Some(128 << 20));
        assert_eq!(pg.number("max_connections"), Some(100.0));
        let work_mem = pg.setting("work_mem").unwrap();
        assert_eq!(work_mem.source.as_deref(), Some("postgres -C"));
        assert_eq!(work_mem.from(), "postgres/pg_settings-postgres-C.txt:7");
        assert_eq!(pg.major(), Some(15));
        // A setting it was not asked about is not guessed.
        assert!(pg.setting("maintenance_work_mem").is_none());
    }

    #[test]
    fn a_running_servers_dump_wins_over_the_postgres_c_answer() {
        // The file sorts before postgres/pg_settings.txt: the order of the bundle decides nothing.
        let pg = collected()
            .write("postgres/pg_settings-postgres-C.txt", POSTGRES_C)
            .report()
            .host
            .postgres;
        assert_eq!(
            pg.settings_from.as_deref(),
            Some("pg_settings (postgres/pg_settings.txt)")
        );
        assert_eq!(pg.number("max_connections"), Some(20.0));
    }

    #[test]
    fn the_postmasters_environment_and_unit_are_its_own() {
        let scratch = collected()
            .write(
                "processes/16859/pg-oom-adjust.txt",
                "PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj\nunset PG_OOM_ADJUST_VALUE\n",
            )
            .write(
                "processes/16859/systemd-unit.txt",
                "OOMScoreAdjust=-900\nId=postgresql@15-main.service\n",
            )
            // Another process's files are not the postmaster's.
            .write(
                "processes/16862/pg-oom-adjust.txt",
                "unset PG_OOM_ADJUST_FILE\n",
            );
        let processes = scratch.report().host.processes;
        let env = processes.oom_adjust.unwrap();
        assert_eq!(env.children_reset(), Some(true));
        assert_eq!(env.reset_to(), "0");
        let file = env.file.unwrap();
        assert_eq!(
            (file.path.as_str(), file.line, file.key.as_str()),
            ("processes/16859/pg-oom-adjust.txt", 1, "PG_OOM_ADJUST_FILE")
        );
        assert_eq!(env.value.unwrap().value, None);
        let unit = processes.unit.unwrap();
        assert_eq!(unit.id.unwrap().value, "postgresql@15-main.service");
        let adjust = unit.oom_score_adjust.unwrap();
        assert_eq!((adjust.value, adjust.line), (-900, 1));
        // Without the files: unknown, not guessed.
        let processes = collected().report().host.processes;
        assert!(processes.oom_adjust.is_none() && processes.unit.is_none());
    }
}
