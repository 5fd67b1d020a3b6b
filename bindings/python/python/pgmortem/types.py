"""Types of the pgmortem package, importable at run time: the input convention, and a
``TypedDict`` for every structure the functions return.

Every name here is also an attribute of ``pgmortem`` (``pgmortem.Report``,
``pgmortem.PgRecord``, ``pgmortem.Input``). The dicts are the same as the CLI's JSON
(docs/report-schema.md); their keys are a contract.

Conventions (docs/python.md, "Types"): a key that is always present but whose value may be
unknown is typed ``T | None`` (``null`` in JSON); a key that may be absent is ``NotRequired``
(only where the JSON leaves it out). Records with several kinds (kernel records, PostgreSQL log
events) are unions of ``TypedDict`` with a ``kind: Literal[...]`` discriminator, so that
``if event["kind"] == "out_of_memory": event["request_bytes"]`` type-checks."""

from __future__ import annotations

import os
import sys
from typing import Literal, Protocol, TypedDict, Union

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - type checkers read it; at run time annotations stay strings
    try:
        from typing_extensions import NotRequired
    except ImportError:
        pass


class BinaryReader(Protocol):
    """A binary file object: anything with a ``read(size)`` that returns bytes (an ``open(…,
    "rb")`` file, ``io.BytesIO``, a ``gzip.GzipFile``)."""

    def read(self, size: int = ..., /) -> bytes: ...


Input = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryReader]
"""What every function taking an input accepts: ``str`` or ``os.PathLike`` is a path (read,
and decompressed when gzip, zstd, xz or bzip2); ``bytes``, ``bytearray`` or ``memoryview`` is
the content; a :class:`BinaryReader` is read. Anything else raises ``TypeError``."""


# ---------------------------------------------------------------------------------------------
# The report (pgmortem.analyze, pgmortem analyze --format json): docs/report-schema.md

CaveatKind = Literal[
    "log_not_read_whole",
    "log_not_understood",
    "records_not_kept",
    "oom_details_not_kept",
    "incidents_not_kept",
    "clock_anchors_disagree",
    "log_files_left_out",
    "other_clusters",
    "no_kernel_log",
    "no_postgres_log",
    "no_settings",
    "settings_not_from_server",
    "archive_not_opened",
    "archive_not_read_whole",
    "obfuscated",
]


class Caveat(TypedDict):
    kind: CaveatKind
    text: str


class ClockInfo(TypedDict):
    boot_time: str | None
    boot_time_source: Literal["option", "date_and_uptime", "btime", "dmesg_ctime_pair"] | None
    boot_time_uncertainty_seconds: float | None
    notes: list[str]


class SourceServerLog(TypedDict):
    role: Literal["current", "earlier", "stderr", "syslog"]
    copied_from: str
    found_from: str
    read_as_one_log: bool


class SourceSummary(TypedDict):
    path: str
    kind: str
    bytes: int
    lines: int
    records: int
    unrecognized_lines: int
    unrecognized_examples: list[tuple[int, str]]
    note: str | None
    log_line_prefix: NotRequired[str]
    """PostgreSQL logs only."""
    log_line_prefix_from: NotRequired[str]
    """PostgreSQL logs only."""
    server_log: NotRequired[SourceServerLog]
    """PostgreSQL logs the collector's manifest lists among the server's log files only."""


class MemcgLimit(TypedDict):
    path: str | None
    task_path: str | None
    limit_kb: int | None
    usage_kb: int | None
    failcnt: int | None


class OomTaskRss(TypedDict):
    """A row of the OOM report's task table (the heaviest ones), sizes in kB."""

    pid: int
    name: str
    rss_kb: int | None
    rss_anon_kb: int | None
    rss_file_kb: int | None
    rss_shmem_kb: int | None
    total_vm_kb: int | None
    pgtables_kb: int | None
    swap_kb: int | None
    oom_score_adj: int | None
    victim: bool


class KillOwner(TypedDict):
    """Whose process an OOM kill's victim was: the instance's, another cluster's, another
    job's (another memory cgroup), or killed before the postmaster started."""

    whose: Literal["instance", "other_cluster", "other_cgroup", "before_start"]
    why: str
    postmaster: NotRequired[int]
    """``other_cluster``: that cluster's postmaster."""


class KernelKill(TypedDict):
    pid: int | None
    comm: str
    unit: NotRequired[str]
    anon_rss_kb: int | None
    file_rss_kb: int | None
    shmem_rss_kb: int | None
    total_vm_kb: int | None
    pgtables_kb: int | None
    oom_score_adj: int | None
    constraint: Literal["global", "memcg", "cpuset", "memory_policy"] | None
    memcg: MemcgLimit | None
    trigger_comm: str | None
    trigger_pid: int | None
    trigger_gfp_mask: str | None
    trigger_order: int | None
    tasks: list[OomTaskRss]
    task_count: int
    tasks_rss_kb: int | None
    page_kb: int
    at: str | None
    path: str
    line: int
    owner: NotRequired[KillOwner]
    """Whose process the victim was, when the bundle tells."""


class PostgresCrash(TypedDict):
    pid: int
    process: str
    signal: int | None
    exit_code: int | None
    query: str | None
    at: str | None
    path: str
    line: int


class Recovery(TypedDict):
    terminated_others_at: str | None
    reinitialized_at: str | None
    redo_started_at: str | None
    redo_start_lsn: str | None
    redo_done_at: str | None
    redo_end_lsn: str | None
    ready_at: str | None
    ready_line: int | None


class LogLine(TypedDict):
    at: str | None
    path: str
    line: int
    pid: int | None
    severity: str | None
    kind: str | None
    message: str
    wrapper_at: NotRequired[str]
    """The wrapper's time of the line, when the log was wrapped and it is not ``at``."""


IncidentKind = Literal[
    "oom_kill",
    "crash_restart",
    "postmaster_killed",
    "unclean_restart",
    "recovery_failed",
    "startup_failed",
    "kernel_oom",
]
IncidentCause = Literal[
    "oom_killer",
    "container_oom_killed",
    "userspace_oom_killer",
    "disk_full",
    "filesystem_read_only",
    "storage_error",
    "corruption",
    "hardware_error",
    "startup_failed",
    "signal_from_outside",
    "segfault",
    "abort_or_panic",
    "abnormal_exit",
    "postmaster_killed",
    "unknown",
]


class PoolerLine(TypedDict):
    """A line of a pgbouncer log the report quotes."""

    at: str | None
    path: str
    line: int
    text: str
    """pgbouncer's message (the error a client was sent, a closing's reason, the server's
    refusal), cut to 300 bytes."""


PoolerWhat = Literal["client_error", "server_login_failed", "server_connection_lost"]
CloseCause = Literal[
    "client_close_request",
    "client_unexpected_eof",
    "max_client_conn",
    "client_connections_exceeded",
    "query_wait_timeout",
    "query_timeout",
    "client_idle_timeout",
    "client_login_timeout",
    "idle_transaction_timeout",
    "server_conn_crashed",
    "connect_failed",
    "connect_timeout",
    "login_failed",
    "server_login_retry",
    "server_refused",
    "auth_failed",
    "pooler_shutting_down",
    "routine",
    "other",
]


class PoolerProblem(TypedDict):
    """One sort of trouble clients met through pgbouncer: what and why, how many, when."""

    what: PoolerWhat
    cause: CloseCause
    count: int
    first_at: str | None
    last_at: str | None
    examples: list[PoolerLine]


# What clients saw through pgbouncer in an incident's window (``incident["clients_saw"]``).
# Functional form: its first key, ``from``, is a Python keyword.
ClientsSaw = TypedDict(
    "ClientsSaw",
    {
        "from": str,
        "to": str,
        "logs": list[str],
        "client_errors": int,
        "server_login_failures": int,
        "server_connections_lost": int,
        "problems": list[PoolerProblem],
        "notes": list[str],
    },
)


class PoolerStats(TypedDict):
    lines: int
    peak_wait_us: int | None
    peak_wait_at: str | None
    peak_wait_line: int | None
    peak_xacts_per_second: int | None
    peak_queries_per_second: int | None


class PoolerLifecycle(TypedDict):
    kind: Literal["process_up", "signal", "exiting", "fatal"]
    at: str | None
    path: str
    line: int
    text: str


class PoolerSummary(TypedDict):
    """One pgbouncer log of the bundle, summed up (``report["pooler"]``)."""

    path: str
    version: str | None
    first_at: str | None
    last_at: str | None
    records: int
    logins: int
    client_errors: int
    server_login_failures: int
    server_connections_lost: int
    problems: list[PoolerProblem]
    stats: PoolerStats | None
    lifecycle: list[PoolerLifecycle]
    trouble_not_kept: NotRequired[int]
    """Only when troubles were counted but not kept to tie to incidents."""
    times_without_zone: NotRequired[int]
    """Only when some times printed no zone (read at ``host_utc_offset``)."""


class ContainerKill(TypedDict):
    """A container Kubernetes recorded ``OOMKilled`` (``incident["container_kill"]``)."""

    pod: str | None
    namespace: str | None
    container: str | None
    reason: str
    exit_code: int | None
    signal: int | None
    """The signal given, else the one an exit code above 128 encodes (137: 9)."""
    started_at: str | None
    finished_at: str | None
    """When the killed run ended (whole seconds): where the incident is placed."""
    restarted_at: str | None
    restart_count: int | None
    memory_limit_bytes: int | None
    path: str
    line: int


class ProcessFault(TypedDict):
    pid: int
    comm: str
    fault: str
    signal: int | None
    address: str | None
    ip: str | None
    object: str | None
    object_deleted: bool
    reporter: str
    at: str | None
    path: str
    line: int


class CauseLine(TypedDict):
    """The line an incident's cause was read from."""

    origin: Literal["postgres", "kernel"]
    at: str | None
    path: str
    line: int
    text: str


class Incident(TypedDict):
    kind: IncidentKind
    cause: IncidentCause
    cause_line: NotRequired[CauseLine]
    """Only when the cause was read from a line other than the death itself."""
    started_at: str | None
    kernel_kill: KernelKill | None
    kernel_fault: NotRequired[ProcessFault]
    postgres_crash: PostgresCrash | None
    recovery: Recovery | None
    outage_seconds: float | None
    still_down: bool
    """No log shows the server ready again after the incident."""
    down_for_seconds: float | None
    redo_seconds: float | None
    wal_replayed_bytes: int | None
    clock_skew_seconds: float | None
    preceded_by: list[LogLine]
    sessions_lost: int | None
    connections_refused: int
    confidence: float
    matched_by: (
        Literal["pid_and_time", "pid_only", "time_signal_and_name", "postmaster_pid", "container_time"]
        | None
    )
    notes: list[str]
    container_kill: NotRequired[ContainerKill]
    """Only when the bundle holds Kubernetes' view of the pod and a container was OOMKilled."""
    clients_saw: NotRequired[ClientsSaw]
    """Only when the bundle has a pgbouncer log."""
    patroni: NotRequired[list[LogLine]]
    """What Patroni did to the server around the incident; only when there is any."""


class Evidence(TypedDict):
    path: str
    line: int
    what: str
    key: NotRequired[str]
    """The snapshot key or setting read on that line, when there is one."""
    host_file: NotRequired[str]
    """The database host's file the collector copied that line from (``postgresql.conf``'s
    includes, ``postgresql.auto.conf``), when it marked one."""
    host_line: NotRequired[int]


class Finding(TypedDict):
    id: str
    severity: Literal["info", "warning", "critical"]
    title: str
    summary: str
    recommendation: str | None
    evidence: list[Evidence]
    incident: int | None
    group: int | None
    """Index into ``Report.groups`` of the incident's group: in a crash loop the findings with
    the same ``id`` and ``group`` are one rule's repeats, one per incident."""
    confidence: float
    figures: dict[str, float]


class IncidentGroup(TypedDict):
    """A run of consecutive incidents of the same kind and cause (a crash loop), or one
    incident alone: ``incidents[first..last]``."""

    kind: str
    cause: str
    count: int
    first: int
    last: int
    worst: int
    """Index of the longest outage (the first incident when none is known)."""
    started_at: str | None
    last_started_at: str | None
    interval_seconds: float | None
    worst_outage_seconds: float | None
    total_outage_seconds: float | None
    outages_known: int
    pid_min: int | None
    pid_max: int | None
    process: str | None
    signal: int | None


class NotEvaluated(TypedDict):
    rule: str
    missing: list[str]
    files: list[str]


class TimelineEntry(TypedDict):
    at: str | None
    uncertainty_seconds: float | None
    origin: Literal["kernel", "postgres", "container", "patroni", "pgbackrest"]
    kind: str
    summary: str
    path: str
    line: int
    wrapper_at: NotRequired[str]
    """The wrapper's time of the event, when the log was wrapped and it is not ``at``."""
    failure: NotRequired[
        Literal[
            "filesystem_error", "read_only", "shutdown", "io_error", "device_reset", "timeout", "no_space"
        ]
    ]
    """What a ``storage_error`` says happened; absent for every other kind."""


TimelineEvent = TimelineEntry


# Host facts (report["host"]): each value read from a file is {value, path, line, key}.


class KnownInt(TypedDict):
    value: int
    path: str
    line: int
    key: str


class KnownStr(TypedDict):
    value: str
    path: str
    line: int
    key: str


class KnownStrList(TypedDict):
    value: list[str]
    path: str
    line: int
    key: str


class PgVersion(TypedDict):
    major: int
    minor: int | None
    text: str


class KnownPgVersion(TypedDict):
    value: PgVersion
    path: str
    line: int
    key: str


class ResourceLimit(TypedDict):
    name: str
    soft: int | None
    hard: int | None
    units: str | None
    line: int


class KnownResourceLimit(TypedDict):
    value: ResourceLimit
    path: str
    line: int
    key: str


class MemoryFacts(TypedDict):
    ram: KnownInt
    available: KnownInt | None
    swap_total: KnownInt | None
    swap_free: KnownInt | None
    commit_limit: KnownInt | None
    committed_as: KnownInt | None
    page_tables: KnownInt | None
    anon_huge_pages: KnownInt | None
    shmem: KnownInt | None
    hugepages_total: KnownInt | None
    hugepages_free: KnownInt | None
    hugepages_rsvd: KnownInt | None
    hugepage_size: KnownInt | None


class VmFacts(TypedDict):
    overcommit_memory: KnownInt | None
    overcommit_ratio: KnownInt | None
    overcommit_kbytes: KnownInt | None
    swappiness: KnownInt | None
    nr_hugepages: KnownInt | None
    nr_overcommit_hugepages: KnownInt | None
    dirty_ratio: KnownInt | None
    dirty_background_ratio: KnownInt | None
    dirty_bytes: KnownInt | None
    dirty_background_bytes: KnownInt | None


class ThpFacts(TypedDict):
    enabled: KnownStr | None
    defrag: KnownStr | None


class CgroupFacts(TypedDict):
    version: Literal["v1", "v2"] | None
    dir: str
    path: NotRequired[KnownStr]
    """The cgroup's path in the hierarchy and where the bundle says the postmaster is in it (a
    ``ps`` ``CGROUP`` column, ``/proc/PID/cgroup``, an OOM report's ``task_memcg``)."""
    limit: KnownInt | None
    limit_read: bool
    high: KnownInt | None
    high_events: KnownInt | None
    usage: KnownInt | None
    peak: KnownInt | None
    failcnt: KnownInt | None
    oom_kills: KnownInt | None


class DevShm(TypedDict):
    size: KnownInt
    used: int | None
    available: int | None


class CpuFacts(TypedDict):
    vulnerabilities: list[KnownStr]
    clocksource: KnownStr | None
    tsc_flags: KnownStrList | None
    audit_enabled: KnownInt | None
    audit_syscall_rules: KnownInt | None


class SubtransFacts(TypedDict):
    files: KnownInt | None
    waits: list[KnownInt]
    sessions: int | None


# `from` is a Python keyword: these use the functional TypedDict syntax.
SettingFromPgSettings = TypedDict(
    "SettingFromPgSettings", {"from": Literal["pg_settings"], "path": str, "line": int}
)
_SettingFromPgConfLine = TypedDict(
    "_SettingFromPgConfLine", {"from": Literal["pg_conf"], "path": str, "line": int}
)


class SettingFromPgConf(_SettingFromPgConfLine):
    host_file: NotRequired[str]
    """The database host's file the collector copied that line from (an included file,
    ``postgresql.auto.conf``), when it marked one."""
    host_line: NotRequired[int]


SettingFromDefault = TypedDict("SettingFromDefault", {"from": Literal["default"], "conf": str})
SettingOrigin = Union[SettingFromPgSettings, SettingFromPgConf, SettingFromDefault]
"""Where a setting's value comes from: ``origin["from"]`` tells which."""


class Setting(TypedDict):
    name: str
    value: str
    unit: NotRequired[str]
    bytes: NotRequired[int]
    number: NotRequired[float]
    seconds: NotRequired[float]
    origin: SettingOrigin
    source: NotRequired[str]
    sourcefile: NotRequired[str]


class PgFacts(TypedDict):
    version: KnownPgVersion | None
    settings_from: str | None
    settings: dict[str, Setting]


class PgProcess(TypedDict):
    pid: int
    role: str
    ppid: int | None
    oom_score_adj: KnownInt | None
    rss_bytes: int | None
    anon_bytes: int | None
    anon_basis: Literal["pss_anon", "rss_anon"] | None
    page_table_bytes: int | None
    swap_bytes: int | None
    hugetlb_bytes: int | None
    thp_bytes: int | None
    status_path: str | None
    started: NotRequired[str]
    """When it started, as a ``ps`` listing printed it."""


class LimitFacts(TypedDict):
    max_processes: KnownResourceLimit | None
    max_address_space: KnownResourceLimit | None
    max_data_size: KnownResourceLimit | None


class KnownOptionalStr(TypedDict):
    value: str | None
    path: str
    line: int
    key: str


class OomAdjustFacts(TypedDict):
    """The postmaster's ``PG_OOM_ADJUST_FILE`` and ``PG_OOM_ADJUST_VALUE``: ``value`` is
    ``None`` when the variable is unset."""

    file: KnownOptionalStr | None
    value: KnownOptionalStr | None


class UnitFacts(TypedDict):
    """The postmaster's systemd unit: its name and ``OOMScoreAdjust``."""

    id: KnownStr | None
    oom_score_adjust: KnownInt | None


class PostmasterCommand(TypedDict):
    """How the postmaster was started: its command line or ``postmaster.opts``."""

    program: str
    args: list[str]
    data_directory: NotRequired[str]
    config_file: NotRequired[str]
    port: NotRequired[int]


class KnownPostmasterCommand(TypedDict):
    value: PostmasterCommand
    path: str
    line: int
    key: str


class HostOtherPostmaster(TypedDict):
    """Another cluster's postmaster the bundle shows: named, never judged."""

    pid: int
    data_directory: str | None
    port: int | None
    memory_cgroup: str | None
    processes: int
    seen_in: str


class ProcessFacts(TypedDict):
    processes: list[PgProcess]
    postmaster: int | None
    postmaster_from: NotRequired[Literal["manifest", "data_directory", "only_postmaster", "parent_of_processes"]]
    """How the postmaster was found."""
    data_directory: NotRequired[str]
    """The instance's data directory."""
    other_postmasters: NotRequired[list[HostOtherPostmaster]]
    limits: LimitFacts | None
    oom_adjust: OomAdjustFacts | None
    unit: UnitFacts | None
    command: NotRequired[KnownPostmasterCommand]
    memory_cgroup: NotRequired[KnownStr]
    """The postmaster's memory cgroup path (a ``ps`` ``CGROUP`` column, ``/proc/PID/cgroup``)."""


class KnownBool(TypedDict):
    value: bool
    path: str
    line: int
    key: str


class Place(TypedDict):
    """One of PostgreSQL's places: ``data_directory``, ``pg_wal``, ``tablespace OID``,
    ``log_directory``."""

    role: str
    path: str


class Volume(TypedDict):
    """A file system holding PostgreSQL's places, with ``df`` and mountinfo figures."""

    places: list[Place]
    mount_point: str
    device: str | None
    fs_type: str | None
    read_only: KnownBool | None
    on_errors: str | None
    size_bytes: KnownInt | None
    used_bytes: int | None
    available_bytes: int | None
    use_percent: int | None
    inodes_use_percent: KnownInt | None


class WalFacts(TypedDict):
    segments: KnownInt
    bytes: int | None
    archive_ready: int | None
    oldest_segment: str | None
    newest_segment: str | None


class SlotFacts(TypedDict):
    name: KnownStr
    slot_type: str | None
    active: bool | None
    retained_bytes: int | None
    wal_status: str | None
    inactive_since: str | None
    invalidation_reason: str | None


class ArchiverFacts(TypedDict):
    archived_count: KnownInt | None
    failed_count: int | None
    last_archived_wal: str | None
    last_archived_time: str | None
    last_failed_wal: str | None
    last_failed_time: str | None
    failing: bool | None
    collected_at: str | None


class DatabaseFacts(TypedDict):
    name: str
    xid_age: KnownInt | None
    multixact_age: int | None
    allows_connections: bool | None
    checksum_failures: KnownInt | None
    checksum_last_failure: str | None


class StorageFacts(TypedDict):
    """Where PostgreSQL's files live: file systems, pg_wal, slots, archiver, database ages."""

    volumes: list[Volume]
    pg_wal: WalFacts | None
    slots: list[SlotFacts] | None
    archiver: ArchiverFacts | None
    databases: list[DatabaseFacts]


class HostFacts(TypedDict):
    memory: MemoryFacts | None
    vm: VmFacts
    thp: ThpFacts
    cgroup: CgroupFacts | None
    dev_shm: DevShm | None
    cpu: CpuFacts
    subtrans: SubtransFacts | None
    postgres: PgFacts
    processes: ProcessFacts
    storage: StorageFacts


class Collection(TypedDict):
    """The collected host and when: from ``hostname``/``uname -a`` and the collection time."""

    hostname: str | None
    kernel_release: str | None
    os: str | None
    virtualization: str | None
    collected_at: str | None
    collected_at_path: str | None
    collector: NotRequired[str]
    """The collector whose layout the bundle shows (``pgmortem-collect.sh 0.1.0``,
    ``sosreport 4.0``)."""


class PerfSummary(TypedDict):
    """A perf profile of the bundle: its samples' density per bucket on UTC."""

    path: str
    event: str | None
    samples: int
    cpus: int | None
    duration_seconds: float | None
    kernel_share: float
    started_at: str | None
    bucket_seconds: float
    density: list[int]


class Report(TypedDict):
    """What ``pgmortem.analyze`` returns: schema ``pgmortem.report/v1``."""

    schema: Literal["pgmortem.report/v1"]
    generator: str
    caveats: list[Caveat]
    clock: ClockInfo
    collection: Collection
    sources: list[SourceSummary]
    incidents: list[Incident]
    groups: list[IncidentGroup]
    findings: list[Finding]
    not_evaluated: list[NotEvaluated]
    host: HostFacts
    timeline: list[TimelineEntry]
    perf: list[PerfSummary]
    pooler: NotRequired[list[PoolerSummary]]
    """Only when the bundle has a pgbouncer log."""


# ---------------------------------------------------------------------------------------------
# Kernel logs (parse_kernel_log, kernel_log_stats)


class KernelStats(TypedDict):
    lines: int
    records: int
    unrecognized_lines: int
    invalid_utf8_lines: int
    oversized_lines: int
    unrecognized_examples: list[tuple[int, str]]


ParseStats = KernelStats


class WallClock(TypedDict):
    civil: str
    utc_offset_seconds: int | None
    year_inferred: bool


class KernelTime(TypedDict):
    monotonic_us: int | None
    wall: WallClock | None


class OomTrigger(TypedDict):
    comm: str
    pid: int | None
    gfp_mask: str | None
    order: int | None
    oom_score_adj: int | None
    oom_adj: int | None
    cpu: int | None


class OomVictim(TypedDict):
    pid: int
    comm: str
    anon_rss_kb: int | None
    file_rss_kb: int | None
    shmem_rss_kb: int | None
    total_vm_kb: int | None
    pgtables_kb: int | None
    oom_score_adj: int | None
    uid: int | None
    score: int | None
    reason: str | None
    kill_line: int


class MemcgCounter(TypedDict):
    usage_kb: int
    limit_kb: int | None
    failcnt: int


class MemcgInfo(TypedDict):
    path: str | None
    task_path: str | None
    memory: MemcgCounter | None
    memory_swap: MemcgCounter | None
    kmem: MemcgCounter | None
    swap: MemcgCounter | None
    stats: dict[str, dict[str, int]]


class OomSummary(TypedDict):
    constraint: str
    fields: list[tuple[str, str]]


class OomTask(TypedDict):
    pid: int
    uid: int | None
    tgid: int | None
    total_vm_pages: int | None
    rss_pages: int | None
    rss_anon_pages: int | None
    rss_file_pages: int | None
    rss_shmem_pages: int | None
    pgtables_bytes: int | None
    swapents: int | None
    oom_score_adj: int | None
    oom_adj: int | None
    cpu: int | None
    name: str


class OomReaped(TypedDict):
    pid: int
    comm: str
    anon_rss_kb: int | None
    file_rss_kb: int | None
    shmem_rss_kb: int | None


class OomReport(TypedDict):
    """A kernel OOM-killer report: the header, the task table and the kill line."""

    kind: Literal["oom_report"]
    line: int
    end_line: int
    time: KernelTime
    trigger: OomTrigger | None
    victim: OomVictim | None
    constraint: str | None
    summary: OomSummary | None
    memcg: MemcgInfo | None
    tasks: list[OomTask]
    task_columns: list[str]
    mem_info: dict[str, int]
    reaped: OomReaped | None
    group_kills: list[OomVictim]
    truncated: bool
    notes: list[str]
    interleaved_lines: int


class SegfaultRecord(TypedDict):
    kind: Literal["segfault"]
    line: int
    end_line: int
    time: KernelTime
    comm: str
    pid: int
    address: str
    ip: str
    sp: str
    error: int
    object: str | None


class PageAllocationFailureRecord(TypedDict):
    kind: Literal["page_allocation_failure"]
    line: int
    end_line: int
    time: KernelTime
    comm: str
    pid: int | None
    order: int
    mode: str


class HungTaskRecord(TypedDict):
    kind: Literal["hung_task"]
    line: int
    end_line: int
    time: KernelTime
    comm: str
    pid: int
    seconds: int
    state: str | None
    ppid: int | None
    frames: list[str]
    frames_not_kept: int


class TrapRecord(TypedDict):
    kind: Literal["trap"]
    line: int
    end_line: int
    time: KernelTime
    comm: str
    pid: int
    trap: str
    signal: int | None
    ip: str
    sp: str
    error: str
    object: str | None


class CoreDumpFailedRecord(TypedDict):
    kind: Literal["core_dump_failed"]
    line: int
    end_line: int
    time: KernelTime
    comm: str
    pid: int
    reason: str


class StorageErrorRecord(TypedDict):
    kind: Literal["storage_error"]
    line: int
    end_line: int
    time: KernelTime
    layer: Literal["ext4", "xfs", "journal", "buffer", "block", "scsi", "nvme"]
    failure: Literal[
        "filesystem_error", "read_only", "shutdown", "io_error", "device_reset", "timeout", "no_space"
    ]
    device: str | None
    comm: str | None
    status: str | None
    sector: int | None
    op: str | None
    message: str


class CrashReportRecord(TypedDict):
    kind: Literal["crash_report"]
    line: int
    end_line: int
    time: KernelTime
    reporter: str
    pid: int
    comm: str
    uid: int | None
    signal: int | None
    core_dumped: bool | None


class UnitEventRecord(TypedDict):
    kind: Literal["unit_event"]
    line: int
    end_line: int
    time: KernelTime
    unit: str
    what: Literal["oom_kill", "oomd_kill", "failed", "main_process_exited", "memory_peak"]
    detail: str | None
    ancestors: list[str]


class HardwareErrorRecord(TypedDict):
    kind: Literal["hardware_error"]
    line: int
    end_line: int
    time: KernelTime
    source: Literal["machine_check", "thermal", "edac", "memory_failure", "apei"]
    corrected: bool | None
    cpu: int | None
    bank: int | None
    status: str | None
    memory_controller: int | None
    count: int | None
    location: str | None
    page: str | None
    address: str | None
    pid: int | None
    comm: str | None
    outcome: str | None
    message: str
    details: list[str]


class UserspaceOomKillRecord(TypedDict):
    kind: Literal["userspace_oom_kill"]
    line: int
    end_line: int
    time: KernelTime
    killer: Literal["systemd_oomd", "earlyoom"]
    cgroup: str | None
    pid: int | None
    comm: str | None
    uid: int | None
    signal: str | None
    reason: str
    monitored: str | None
    measured: str | None
    limit: str | None
    duration: str | None
    rss_mib: int | None
    oom_score: int | None
    pids: list[int]
    candidates: list[str]
    message: str


KernelRecord = Union[
    OomReport,
    SegfaultRecord,
    PageAllocationFailureRecord,
    HungTaskRecord,
    TrapRecord,
    CoreDumpFailedRecord,
    StorageErrorRecord,
    CrashReportRecord,
    UnitEventRecord,
    HardwareErrorRecord,
    UserspaceOomKillRecord,
]
"""One record of a kernel log; ``record["kind"]`` tells which."""


# ---------------------------------------------------------------------------------------------
# PostgreSQL server logs (parse_pg_log): docs/pglog-events.md


class PgTerminatedBySignalEvent(TypedDict):
    kind: Literal["terminated_by_signal"]
    process: str
    pid: int
    signal: int
    signal_name: str
    query: str | None

class PgExitedWithCodeEvent(TypedDict):
    kind: Literal["exited_with_code"]
    process: str
    pid: int
    code: int
    query: str | None

class PgTerminatingOtherProcessesEvent(TypedDict):
    kind: Literal["terminating_other_processes"]

class PgReinitializingEvent(TypedDict):
    kind: Literal["reinitializing"]

class PgInterruptedEvent(TypedDict):
    kind: Literal["interrupted"]
    last_known_up: str

class PgAutomaticRecoveryEvent(TypedDict):
    kind: Literal["automatic_recovery"]

class PgRedoStartEvent(TypedDict):
    kind: Literal["redo_start"]
    lsn: str

class PgRedoDoneEvent(TypedDict):
    kind: Literal["redo_done"]
    lsn: str
    elapsed_seconds: float | None

class PgReadyEvent(TypedDict):
    kind: Literal["ready"]

class PgExitedWithUnrecognizedStatusEvent(TypedDict):
    kind: Literal["exited_with_unrecognized_status"]
    process: str
    pid: int
    status: int

class PgInterruptedWhileInRecoveryEvent(TypedDict):
    kind: Literal["interrupted_while_in_recovery"]
    at: str

class PgLastCompletedTransactionEvent(TypedDict):
    kind: Literal["last_completed_transaction"]
    at: str

class PgRedoNotRequiredEvent(TypedDict):
    kind: Literal["redo_not_required"]

class PgInvalidRecordLengthEvent(TypedDict):
    kind: Literal["invalid_record_length"]
    lsn: str

class PgCheckpointStartingEvent(TypedDict):
    kind: Literal["checkpoint_starting"]
    flags: list[str]

class PgShutDownAtEvent(TypedDict):
    kind: Literal["shut_down_at"]
    at: str

class PgShutdownRequestedEvent(TypedDict):
    kind: Literal["shutdown_requested"]
    mode: str

class PgShutDownEvent(TypedDict):
    kind: Literal["shut_down"]

class PgInRecoveryModeEvent(TypedDict):
    kind: Literal["in_recovery_mode"]

class PgStartingUpEvent(TypedDict):
    kind: Literal["starting_up"]

class PgNotYetAcceptingConnectionsEvent(TypedDict):
    kind: Literal["not_yet_accepting_connections"]

class PgTerminatingConnectionCrashEvent(TypedDict):
    kind: Literal["terminating_connection_crash"]

class PgUnexpectedPostmasterExitEvent(TypedDict):
    kind: Literal["unexpected_postmaster_exit"]

class PgShuttingDownAfterCrashEvent(TypedDict):
    kind: Literal["shutting_down_after_crash"]
    reason: str

class PgStartingEvent(TypedDict):
    kind: Literal["starting"]
    version: str

class PgOutOfMemoryEvent(TypedDict):
    kind: Literal["out_of_memory"]
    request_bytes: int | None
    memory_context: str | None

class PgTerminatedByExceptionEvent(TypedDict):
    kind: Literal["terminated_by_exception"]
    process: str
    pid: int
    code: str

class PgAbortingActiveTransactionsEvent(TypedDict):
    kind: Literal["aborting_active_transactions"]

class PgShuttingDownEvent(TypedDict):
    kind: Literal["shutting_down"]

class PgRefusedShuttingDownEvent(TypedDict):
    kind: Literal["refused_shutting_down"]

class PgReadyReadOnlyEvent(TypedDict):
    kind: Literal["ready_read_only"]

class PgCheckpointCompleteEvent(TypedDict):
    kind: Literal["checkpoint_complete"]
    buffers: int
    buffers_percent: float | None
    wal_added: int | None
    wal_removed: int | None
    wal_recycled: int | None
    write_seconds: float | None
    sync_seconds: float | None
    total_seconds: float | None
    distance_kb: int | None
    estimate_kb: int | None

class PgCheckpointsTooFrequentEvent(TypedDict):
    kind: Literal["checkpoints_too_frequent"]
    seconds: int

class PgSharedMemoryResizeFailedEvent(TypedDict):
    kind: Literal["shared_memory_resize_failed"]
    segment: str
    bytes: int
    error: str
    no_space: bool

class PgSharedMemoryMapFailedEvent(TypedDict):
    kind: Literal["shared_memory_map_failed"]
    error: str
    request_bytes: int | None

class PgForkFailedEvent(TypedDict):
    kind: Literal["fork_failed"]
    process: str
    error: str

class PgCouldNotWriteEvent(TypedDict):
    kind: Literal["could_not_write"]
    path: str
    error: str
    no_space: bool
    read_only: bool
    io_error: bool

class PgCouldNotExtendFileEvent(TypedDict):
    kind: Literal["could_not_extend_file"]
    path: str
    error: str
    no_space: bool
    read_only: bool
    io_error: bool

class PgCouldNotReadBlockEvent(TypedDict):
    kind: Literal["could_not_read_block"]
    block: int
    path: str
    error: str
    io_error: bool

class PgCouldNotReadWalEvent(TypedDict):
    kind: Literal["could_not_read_wal"]
    segment: str
    offset: int | None
    error: str
    io_error: bool

class PgInvalidPageEvent(TypedDict):
    kind: Literal["invalid_page"]
    block: int
    relation: str

class PgChecksumFailureEvent(TypedDict):
    kind: Literal["checksum_failure"]
    calculated: int
    expected: int

class PgPanicEvent(TypedDict):
    kind: Literal["panic"]

class PgTooManyClientsEvent(TypedDict):
    kind: Literal["too_many_clients"]

class PgReservedConnectionSlotsEvent(TypedDict):
    kind: Literal["reserved_connection_slots"]
    reserved_for: str

class PgTooManyConnectionsEvent(TypedDict):
    kind: Literal["too_many_connections"]
    scope: str
    name: str

class PgTempFileEvent(TypedDict):
    kind: Literal["temp_file"]
    path: str
    bytes: int

class PgStatementCanceledEvent(TypedDict):
    kind: Literal["statement_canceled"]
    reason: str

class PgAutovacuumCanceledEvent(TypedDict):
    kind: Literal["autovacuum_canceled"]

class PgIdleInTransactionTimeoutEvent(TypedDict):
    kind: Literal["idle_in_transaction_timeout"]

class PgIdleSessionTimeoutEvent(TypedDict):
    kind: Literal["idle_session_timeout"]

class PgTerminatedByAdministratorEvent(TypedDict):
    kind: Literal["terminated_by_administrator"]

class PgStaleStatisticsEvent(TypedDict):
    kind: Literal["stale_statistics"]

class PgCouldNotFsyncEvent(TypedDict):
    kind: Literal["could_not_fsync"]
    path: str
    error: str
    io_error: bool
    no_space: bool
    read_only: bool

class PgCouldNotOpenFileEvent(TypedDict):
    kind: Literal["could_not_open_file"]
    path: str
    error: str
    create: bool
    read_only: bool
    io_error: bool
    no_space: bool

class PgArchiveCommandFailedEvent(TypedDict):
    kind: Literal["archive_command_failed"]
    exit_code: int | None
    signal: int | None
    command: str | None

class PgArchiveFailedTooManyTimesEvent(TypedDict):
    kind: Literal["archive_failed_too_many_times"]
    segment: str

class PgArchiveNotConfiguredEvent(TypedDict):
    kind: Literal["archive_not_configured"]

class PgNoValidCheckpointEvent(TypedDict):
    kind: Literal["no_valid_checkpoint"]
    lsn: str | None
    required: bool

class PgInvalidCheckpointRecordEvent(TypedDict):
    kind: Literal["invalid_checkpoint_record"]
    which: str | None

class PgRedoLocationMissingEvent(TypedDict):
    kind: Literal["redo_location_missing"]
    redo: str | None
    checkpoint: str | None

class PgWalSegmentRemovedEvent(TypedDict):
    kind: Literal["wal_segment_removed"]
    segment: str

class PgSharedMemoryCreateFailedEvent(TypedDict):
    kind: Literal["shared_memory_create_failed"]
    error: str
    request_bytes: int | None

class PgWraparoundRefusedEvent(TypedDict):
    kind: Literal["wraparound_refused"]
    database: str | None
    database_oid: int | None
    multixact: bool

class PgWraparoundWarningEvent(TypedDict):
    kind: Literal["wraparound_warning"]
    database: str | None
    database_oid: int | None
    remaining: int
    multixact: bool

class PgSlotInvalidatedEvent(TypedDict):
    kind: Literal["slot_invalidated"]
    slot: str
    restart_lsn: str | None
    excess_bytes: int | None
    wal_limit: bool

class PgSlotHolderTerminatedEvent(TypedDict):
    kind: Literal["slot_holder_terminated"]
    pid: int
    slot: str

class PgToastChunkMissingEvent(TypedDict):
    kind: Literal["toast_chunk_missing"]
    chunk: int
    value: int
    relation: str

class PgTupleXidCorruptionEvent(TypedDict):
    kind: Literal["tuple_xid_corruption"]
    field: str
    xid: int
    cutoff_name: str | None
    cutoff: int | None

class PgInvalidAllocSizeEvent(TypedDict):
    kind: Literal["invalid_alloc_size"]
    bytes: int

class PgDataBeyondEofEvent(TypedDict):
    kind: Literal["data_beyond_eof"]
    block: int
    relation: str

class PgLockFileExistsEvent(TypedDict):
    kind: Literal["lock_file_exists"]
    path: str
    pid: int | None

class PgCouldNotBindEvent(TypedDict):
    kind: Literal["could_not_bind"]
    family: str
    address: str
    error: str
    in_use: bool

class PgListenSocketFailedEvent(TypedDict):
    kind: Literal["listen_socket_failed"]
    address: str | None

class PgDataDirectoryPermissionsEvent(TypedDict):
    kind: Literal["data_directory_permissions"]
    path: str

class PgIncompatibleDataFilesEvent(TypedDict):
    kind: Literal["incompatible_data_files"]
    data_version: str | None
    server_version: str | None

PgEvent = Union[
    # One per kind of docs/pglog-events.md; record["event"]["kind"] tells which.
    PgTerminatedBySignalEvent,
    PgExitedWithCodeEvent,
    PgTerminatingOtherProcessesEvent,
    PgReinitializingEvent,
    PgInterruptedEvent,
    PgAutomaticRecoveryEvent,
    PgRedoStartEvent,
    PgRedoDoneEvent,
    PgReadyEvent,
    PgExitedWithUnrecognizedStatusEvent,
    PgInterruptedWhileInRecoveryEvent,
    PgLastCompletedTransactionEvent,
    PgRedoNotRequiredEvent,
    PgInvalidRecordLengthEvent,
    PgCheckpointStartingEvent,
    PgShutDownAtEvent,
    PgShutdownRequestedEvent,
    PgShutDownEvent,
    PgInRecoveryModeEvent,
    PgStartingUpEvent,
    PgNotYetAcceptingConnectionsEvent,
    PgTerminatingConnectionCrashEvent,
    PgUnexpectedPostmasterExitEvent,
    PgShuttingDownAfterCrashEvent,
    PgStartingEvent,
    PgOutOfMemoryEvent,
    PgTerminatedByExceptionEvent,
    PgAbortingActiveTransactionsEvent,
    PgShuttingDownEvent,
    PgRefusedShuttingDownEvent,
    PgReadyReadOnlyEvent,
    PgCheckpointCompleteEvent,
    PgCheckpointsTooFrequentEvent,
    PgSharedMemoryResizeFailedEvent,
    PgSharedMemoryMapFailedEvent,
    PgForkFailedEvent,
    PgCouldNotWriteEvent,
    PgCouldNotExtendFileEvent,
    PgCouldNotReadBlockEvent,
    PgCouldNotReadWalEvent,
    PgInvalidPageEvent,
    PgChecksumFailureEvent,
    PgPanicEvent,
    PgTooManyClientsEvent,
    PgReservedConnectionSlotsEvent,
    PgTooManyConnectionsEvent,
    PgTempFileEvent,
    PgStatementCanceledEvent,
    PgAutovacuumCanceledEvent,
    PgIdleInTransactionTimeoutEvent,
    PgIdleSessionTimeoutEvent,
    PgTerminatedByAdministratorEvent,
    PgStaleStatisticsEvent,
    PgCouldNotFsyncEvent,
    PgCouldNotOpenFileEvent,
    PgArchiveCommandFailedEvent,
    PgArchiveFailedTooManyTimesEvent,
    PgArchiveNotConfiguredEvent,
    PgNoValidCheckpointEvent,
    PgInvalidCheckpointRecordEvent,
    PgRedoLocationMissingEvent,
    PgWalSegmentRemovedEvent,
    PgSharedMemoryCreateFailedEvent,
    PgWraparoundRefusedEvent,
    PgWraparoundWarningEvent,
    PgSlotInvalidatedEvent,
    PgSlotHolderTerminatedEvent,
    PgToastChunkMissingEvent,
    PgTupleXidCorruptionEvent,
    PgInvalidAllocSizeEvent,
    PgDataBeyondEofEvent,
    PgLockFileExistsEvent,
    PgCouldNotBindEvent,
    PgListenSocketFailedEvent,
    PgDataDirectoryPermissionsEvent,
    PgIncompatibleDataFilesEvent,
]


class PgTime(TypedDict):
    civil: str
    zone: str | None
    utc: str | None


class MemoryTotals(TypedDict):
    total_bytes: int
    blocks: int
    free_bytes: int
    free_chunks: int
    used_bytes: int


class MemoryContextStat(TypedDict):
    depth: int
    name: str | None
    identifier: str | None
    more_children: int | None
    total_bytes: int
    blocks: int
    free_bytes: int
    free_chunks: int
    used_bytes: int


class MemoryContextDump(TypedDict):
    line: int
    end_line: int
    contexts: list[MemoryContextStat]
    omitted_contexts: int
    grand_total: MemoryTotals | None


class PgRecord(TypedDict):
    """One record of a PostgreSQL server log, as ``parse_pg_log`` yields it."""

    line: int
    end_line: int
    time: PgTime | None
    pid: int | None
    session_id: str | None
    session_line: int | None
    user: str | None
    database: str | None
    application: str | None
    client: str | None
    backend_type: str | None
    sqlstate: str | None
    command_tag: str | None
    session_start: str | None
    xid: int | None
    vxid: str | None
    leader_pid: int | None
    query_id: int | None
    local_address: str | None
    severity: Literal["DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "LOG", "FATAL", "PANIC"] | None
    message: str
    detail: str | None
    hint: str | None
    context: str | None
    statement: str | None
    query: str | None
    location: str | None
    event: PgEvent | None
    language: str | None
    memory_context_dump: MemoryContextDump | None
    # The time a wrapper (a container runtime, the journal) gave the line, on UTC; present
    # only when the log was read out of one.
    wrapper_time: NotRequired[PgTime]


PgLogFormat = Literal[
    "stderr", "csv", "json", "syslog", "syslog5424", "journal", "journal_json", "heroku",
    "cloudsql", "cnpg",
]

Wrapper = Literal[
    "docker_json", "cri", "timestamped", "journal_json", "journal_export", "syslog5424", "syslog",
    "journal", "heroku", "cloudsql", "cnpg", "cloudwatch", "azure",
]
"""What a log's lines were read out of: a container runtime's log, a journal export, a relay, a
log service's envelope or a cloud service's export (docs/wrappers.md)."""


class PrefixChoice(TypedDict):
    method: Literal["given", "candidate", "inferred"]
    lines_tried: int
    lines_fitting: int


class CountedLines(TypedDict):
    count: int
    examples: list[tuple[int, str]]


class Paste(TypedDict):
    """What a paste did to a log's lines, learned from its first lines."""

    quoted: bool
    indent: int
    indent_tab: bool
    wrap_width: int | None
    hard_wrap: bool
    """The wraps are a terminal's: lines cut at exactly `wrap_width`, nothing dropped."""
    padded: bool


class PasteCounts(TypedDict):
    quoted_lines: int
    unindented_lines: int
    fence_lines: int
    cut_marks: int
    wraps_joined: int
    crlf_lines: int
    unpadded_lines: int
    emphasis_lines: int


class PasteReport(TypedDict):
    """What pasting a log into a ticket or a mail did to it and what was undone."""

    shape: Paste
    counts: PasteCounts


class PgLogStats(TypedDict):
    prefix: str
    format: PgLogFormat
    wrapper: NotRequired[Wrapper]
    """Only when the lines were read out of a wrapper (docs/wrappers.md)."""
    records: list[PgRecord]
    """Always empty here: the records are what the iterator yields."""
    stats: ParseStats
    continuation_lines: int
    orphan_lines: int
    memory_context_lines: int
    blank_lines: int
    other_program_lines: int
    header_lines: NotRequired[int]
    """Only when a CSV export's header rows naming its columns were skipped (CloudWatch, Azure)."""
    broken_rows: int
    unreadable_stamps: NotRequired[CountedLines]
    """Only when some record's stamp had the shape of a time but was none (a month 13)."""
    prefix_choice: PrefixChoice | None
    pasted: NotRequired[PasteReport]
    """Only when the log was pasted (quoted, indented, wrapped, cut) or had CRLF line ends."""
    events: dict[str, int]
    languages: dict[str, int]


# ---------------------------------------------------------------------------------------------
# pgbouncer logs (parse_pgbouncer_log)


class BouncerConnection(TypedDict):
    """The connection a pgbouncer line is about: ``C-0x…: db/user@addr:port``."""

    side: Literal["client", "server"]
    id: str
    database: str | None
    user: str | None
    peer: int | None
    address: str
    port: int | None


class BouncerLoginAttemptEvent(TypedDict):
    kind: Literal["login_attempt"]
    database: str
    user: str
    tls: str | None
    replication: str | None


class BouncerLoginFailedEvent(TypedDict):
    kind: Literal["login_failed"]
    database: str
    user: str | None


class BouncerClosingEvent(TypedDict):
    kind: Literal["closing"]
    reason: str
    cause: CloseCause
    age_seconds: int | None


class BouncerPoolerErrorEvent(TypedDict):
    kind: Literal["pooler_error"]
    message: str
    cause: CloseCause


class BouncerServerLoginFailedEvent(TypedDict):
    kind: Literal["server_login_failed"]
    severity: str
    message: str
    cause: CloseCause


# ``new connection to server (from ADDR)``. Functional form: its key ``from`` is a Python keyword.
BouncerServerConnectedEvent = TypedDict(
    "BouncerServerConnectedEvent",
    {"kind": Literal["server_connected"], "from": Union[str, None]},
)


class BouncerStatsEvent(TypedDict):
    """A ``stats:`` line; each field ``None`` when the line's version does not print it."""

    kind: Literal["stats"]
    xacts_per_second: int | None
    queries_per_second: int | None
    client_parses_per_second: int | None
    server_parses_per_second: int | None
    binds_per_second: int | None
    in_bytes_per_second: int | None
    out_bytes_per_second: int | None
    xact_us: int | None
    query_us: int | None
    wait_us: int | None


class BouncerProcessUpEvent(TypedDict):
    kind: Literal["process_up"]
    version: str | None


class BouncerListeningEvent(TypedDict):
    kind: Literal["listening"]
    address: str


class BouncerSignalEvent(TypedDict):
    kind: Literal["signal"]
    signal: str
    action: str


class BouncerExitingEvent(TypedDict):
    kind: Literal["exiting"]


class BouncerReservePoolEvent(TypedDict):
    kind: Literal["reserve_pool"]


class BouncerFatalEvent(TypedDict):
    kind: Literal["fatal"]
    location: str | None
    message: str


BouncerEvent = Union[
    # One per kind; event["kind"] tells which.
    BouncerLoginAttemptEvent,
    BouncerLoginFailedEvent,
    BouncerClosingEvent,
    BouncerPoolerErrorEvent,
    BouncerServerLoginFailedEvent,
    BouncerServerConnectedEvent,
    BouncerStatsEvent,
    BouncerProcessUpEvent,
    BouncerListeningEvent,
    BouncerSignalEvent,
    BouncerExitingEvent,
    BouncerReservePoolEvent,
    BouncerFatalEvent,
]


class BouncerRecord(TypedDict):
    """One record of a pgbouncer log, as ``parse_pgbouncer_log`` yields it."""

    line: int
    end_line: int
    time: PgTime | None
    pid: int | None
    level: Literal["FATAL", "ERROR", "WARNING", "LOG", "DEBUG", "NOISE"] | None
    connection: BouncerConnection | None
    message: str
    event: BouncerEvent | None


BouncerForm = Literal["file", "syslog", "syslog5424", "journal", "journal_json"]


class BouncerLogStats(TypedDict):
    """``parse_pgbouncer_log(...).stats()``: the counts so far."""

    form: BouncerForm
    records: list[BouncerRecord]
    """Always empty here: the records are what the iterator yields."""
    stats: ParseStats
    continuation_lines: int
    blank_lines: int
    other_program_lines: int
    unreadable_stamps: NotRequired[CountedLines]
    """Only when some stamp had the shape of a time but was none (a month 13)."""
    events: dict[str, int]
    client_closings: dict[str, int]
    server_closings: dict[str, int]
    pooler_errors: dict[str, int]


# ---------------------------------------------------------------------------------------------
# perf script (parse_perf_script, perf_samples): docs/perf.md


class PerfFrame(TypedDict):
    address: str
    symbol: str
    offset: int | None
    dso: str
    inlined: NotRequired[bool]
    srcline: NotRequired[str]

class PerfSample(TypedDict):
    """One sample of `perf script` (`perf_samples`)."""


    line: int
    comm: str
    pid: int | None
    tid: int
    cpu: int | None
    time: float | None
    event: str
    period: int | None
    trace: str | None
    frames: list[PerfFrame]

class PerfHeader(TypedDict):
    entries: list[tuple[str, str]]
    notes: list[str]

class PerfLineCounts(TypedDict):
    header_lines: int
    comment_lines: int
    blank_lines: int
    frame_lines: int
    srcline_lines: int
    frames_over_limit: int

class PerfEventTotal(TypedDict):
    event: str
    samples: int
    weight: int
    samples_with_frames: int

class PerfGroupShare(TypedDict):
    name: str
    pid: NotRequired[int]
    comm: NotRequired[str]
    samples: int
    weight: int
    share: float
    kernel_share: float

class PerfFunctionShare(TypedDict):
    symbol: str
    dso: str
    samples: int
    weight: int
    share: float

class PerfBucket(TypedDict):
    start: float
    samples: int
    weight: int
    kernel_weight: int

class PerfStackShare(TypedDict):
    name: str
    patterns: list[str]
    samples: int
    weight: int
    share: float

class PerfExitReason(TypedDict):
    reason: str
    samples: int

class PerfProfile(TypedDict):
    header: PerfHeader
    stats: KernelStats
    counts: PerfLineCounts
    cpus: int | None
    duration_seconds: float | None
    events: list[PerfEventTotal]
    event: str | None
    samples: int
    weight: int
    kernel_share: float
    user_share: float
    no_frame_share: float
    by_comm: list[PerfGroupShare]
    by_pid: list[PerfGroupShare]
    top_self: list[PerfFunctionShare]
    top_inclusive: list[PerfFunctionShare]
    bucket_seconds: float
    timeline: list[PerfBucket]
    stack_queries: list[PerfStackShare]
    kvm_exit_reasons: list[PerfExitReason]


# ---------------------------------------------------------------------------------------------
# Bundles and system snapshots (open_bundle, parse_meminfo, …)


class ManifestFile(TypedDict):
    path: str
    kind: str
    command: str
    status: int | None
    duration_ms: int | None
    bytes: int | None
    capped: bool
    note: str

class ManifestProcesses(TypedDict):
    """The postmaster's processes the collector read: collected, left out past its cap, and
    gone between being found and read."""

    collected: int
    left_out: int
    gone: list[int]


class OtherPostmaster(TypedDict):
    """Another cluster's postmaster on the host (its processes are not collected)."""

    pid: int
    data_directory: str
    port: int | None
    memory_cgroup: str
    started: str | None
    processes: int


class SyslogDestination(TypedDict):
    facility: str
    ident: str
    destinations: list[str]
    collected_from: str


class ServerLog(TypedDict):
    """One of the server's log files in the bundle and its role."""

    path: str
    role: Literal["current", "earlier", "stderr", "syslog", "other"]
    source: str
    found_from: str
    modified: str | None


class LeftOutLog(TypedDict):
    source: str
    bytes: int | None
    modified: str | None
    why: str


class Manifest(TypedDict):
    format: str
    format_version: int
    collector: str
    collector_version: str
    arguments: str
    uid: int | None
    started: str
    ended: str
    postmaster_pid: int | None
    data_directory: str
    settings_from: str
    postmaster_state: Literal["running", "down", "unknown", "other"] | None
    postmaster_found_from: str
    postmaster_started: str | None
    port: int | None
    postmaster_memory_cgroup: str
    processes: ManifestProcesses | None
    other_postmasters: list[OtherPostmaster]
    log_destination: str
    syslog: SyslogDestination | None
    server_logs: list[ServerLog]
    log_files_left_out: list[LeftOutLog]
    log_files_left_out_count: int
    notes: list[str]
    files: list[ManifestFile]

class BundleSource(TypedDict):
    path: str
    kind: str
    bytes: int
    recognized_by: Literal["manifest", "path", "content"]
    note: str | None
    stats: ParseStats | None

class SkippedFile(TypedDict):
    path: str
    reason: str
    archive: NotRequired[Literal["not_opened", "not_read_whole"]]
    """Present for an archive or compressed file that could not be opened at all, or read only
    up to a point: what it holds (after that point) is missing."""


class Obfuscation(TypedDict):
    """What ``sos clean`` did, as far as the report shows: the host name's replacement, where it
    shows, the files whose names it rewrote."""

    host: str
    evidence: str
    renamed: list[str]


class BundleLayout(TypedDict):
    """The known collector's layout a bundle's paths show."""

    layout: Literal["pgmortem", "sos", "cnpg", "crunchy"]
    root: str
    markers: list[str]
    obfuscation: NotRequired[Obfuscation]


class BundleListing(TypedDict):
    sources: list[BundleSource]
    skipped: list[SkippedFile]
    manifest: Manifest | None
    layout: BundleLayout | None

class SnapshotField(TypedDict):
    key: str
    raw: str
    number: NotRequired[int]
    unit: NotRequired[str]
    bytes: NotRequired[int]
    line: int

class Meminfo(TypedDict):
    fields: list[SnapshotField]
    missing: list[str]
    truncated: bool
    stats: ParseStats

class FlatKeyed(TypedDict):
    fields: list[SnapshotField]
    truncated: bool
    stats: ParseStats

class ProcStatus(TypedDict):
    name: str | None
    pid: int | None
    ppid: int | None
    threads: int | None
    kernel_thread: bool
    fields: list[SnapshotField]
    missing: list[str]
    truncated: bool
    stats: ParseStats

class SmapsRollup(TypedDict):
    header: str | None
    fields: list[SnapshotField]
    empty: bool
    missing: list[str]
    truncated: bool
    stats: ParseStats

class Sysctl(TypedDict):
    name: str
    value: str
    numbers: NotRequired[list[int]]
    line: int

class SysctlSet(TypedDict):
    entries: list[Sysctl]
    errors: NotRequired[list[str]]
    stats: ParseStats

class PgSetting(TypedDict):
    name: str
    setting: str
    unit: NotRequired[str]
    bytes: NotRequired[int]
    milliseconds: NotRequired[float]
    source: NotRequired[str]
    sourcefile: NotRequired[str]
    pending_restart: NotRequired[bool]
    other: NotRequired[list[tuple[str, str]]]
    line: int

class PgSettings(TypedDict):
    form: Literal["aligned", "unaligned", "csv"]
    columns: list[str]
    settings: list[PgSetting]
    footer_rows: int | None
    truncated: bool
    stats: ParseStats

class ConfEntry(TypedDict):
    name: str
    value: str
    line: int
    host_file: str | None
    host_line: int | None

class ConfInclude(TypedDict):
    directive: str
    path: str
    line: int
    host_file: str | None
    host_line: int | None

class ConfNotRead(TypedDict):
    """A file the collector could not inline into ``postgresql.conf``
    (``# pgmortem-collect: not read PATH: REASON``)."""

    path: str
    reason: str
    line: int
    host_file: str | None

class PgConf(TypedDict):
    entries: list[ConfEntry]
    includes: list[ConfInclude]
    not_read: list[ConfNotRead]
    stats: ParseStats

class CgroupMemory(TypedDict):
    version: Literal["v1", "v2"] | None
    limit_bytes: int | None
    limit_seen: bool
    usage_bytes: int | None
    peak_bytes: int | None
    failcnt: int | None
    oom_kills: int | None
    max_events: int | None
    high_bytes: int | None
    high_events: int | None
    swap_limit_bytes: int | None
    swap_usage_bytes: int | None
    stat: NotRequired[FlatKeyed]
    errors: NotRequired[list[tuple[str, str]]]
    ignored: list[str]


__all__ = [
    "BouncerClosingEvent",
    "BouncerConnection",
    "BouncerEvent",
    "BouncerExitingEvent",
    "BouncerFatalEvent",
    "BouncerForm",
    "BouncerListeningEvent",
    "BouncerLogStats",
    "BouncerLoginAttemptEvent",
    "BouncerLoginFailedEvent",
    "BouncerPoolerErrorEvent",
    "BouncerProcessUpEvent",
    "BouncerRecord",
    "BouncerReservePoolEvent",
    "BouncerServerConnectedEvent",
    "BouncerServerLoginFailedEvent",
    "BouncerSignalEvent",
    "BouncerStatsEvent",
    "ClientsSaw",
    "CloseCause",
    "PoolerLifecycle",
    "PoolerLine",
    "PoolerProblem",
    "PoolerStats",
    "PoolerSummary",
    "PoolerWhat",
    "Collection",
    "OomTaskRss",
    "PerfSummary",
    "BinaryReader",
    "BundleListing",
    "BundleLayout",
    "Obfuscation",
    "BundleSource",
    "Caveat",
    "CaveatKind",
    "CgroupFacts",
    "CgroupMemory",
    "ClockInfo",
    "ConfEntry",
    "ConfInclude",
    "ConfNotRead",
    "CpuFacts",
    "DevShm",
    "Evidence",
    "Finding",
    "FlatKeyed",
    "HostFacts",
    "HungTaskRecord",
    "ContainerKill",
    "ProcessFault",
    "TrapRecord",
    "CoreDumpFailedRecord",
    "StorageErrorRecord",
    "CrashReportRecord",
    "UnitEventRecord",
    "HardwareErrorRecord",
    "UserspaceOomKillRecord",
    "Incident",
    "IncidentGroup",
    "IncidentCause",
    "IncidentKind",
    "Input",
    "KernelKill",
    "KillOwner",
    "KernelRecord",
    "KernelStats",
    "KernelTime",
    "KnownInt",
    "KnownOptionalStr",
    "KnownPgVersion",
    "KnownPostmasterCommand",
    "KnownResourceLimit",
    "PostmasterCommand",
    "KnownStr",
    "KnownStrList",
    "LimitFacts",
    "LogLine",
    "LeftOutLog",
    "Manifest",
    "ManifestFile",
    "ManifestProcesses",
    "OtherPostmaster",
    "ServerLog",
    "SyslogDestination",
    "MemcgCounter",
    "MemcgInfo",
    "MemcgLimit",
    "Meminfo",
    "MemoryContextDump",
    "MemoryContextStat",
    "MemoryFacts",
    "MemoryTotals",
    "NotEvaluated",
    "OomAdjustFacts",
    "OomReaped",
    "OomReport",
    "OomSummary",
    "OomTask",
    "OomTrigger",
    "OomVictim",
    "PageAllocationFailureRecord",
    "ParseStats",
    "PerfBucket",
    "PerfEventTotal",
    "PerfExitReason",
    "PerfFrame",
    "PerfFunctionShare",
    "PerfGroupShare",
    "PerfHeader",
    "PerfLineCounts",
    "PerfProfile",
    "PerfSample",
    "PerfStackShare",
    "PgAbortingActiveTransactionsEvent",
    "PgAutomaticRecoveryEvent",
    "PgAutovacuumCanceledEvent",
    "PgCheckpointCompleteEvent",
    "PgCheckpointStartingEvent",
    "PgCheckpointsTooFrequentEvent",
    "PgChecksumFailureEvent",
    "PgConf",
    "PgCouldNotExtendFileEvent",
    "PgCouldNotReadBlockEvent",
    "PgCouldNotReadWalEvent",
    "PgCouldNotWriteEvent",
    "PgEvent",
    "PgExitedWithCodeEvent",
    "PgExitedWithUnrecognizedStatusEvent",
    "PgFacts",
    "PgForkFailedEvent",
    "PgIdleInTransactionTimeoutEvent",
    "PgIdleSessionTimeoutEvent",
    "PgInRecoveryModeEvent",
    "PgInterruptedEvent",
    "PgInterruptedWhileInRecoveryEvent",
    "PgInvalidPageEvent",
    "PgInvalidRecordLengthEvent",
    "PgLastCompletedTransactionEvent",
    "PgLogFormat",
    "PgLogStats",
    "PgNotYetAcceptingConnectionsEvent",
    "PgOutOfMemoryEvent",
    "PgPanicEvent",
    "PgProcess",
    "PgReadyEvent",
    "PgReadyReadOnlyEvent",
    "PgRecord",
    "PgRedoDoneEvent",
    "PgRedoNotRequiredEvent",
    "PgRedoStartEvent",
    "PgRefusedShuttingDownEvent",
    "PgReinitializingEvent",
    "PgReservedConnectionSlotsEvent",
    "PgSetting",
    "PgSettings",
    "PgSharedMemoryMapFailedEvent",
    "PgSharedMemoryResizeFailedEvent",
    "PgShutDownAtEvent",
    "PgShutDownEvent",
    "PgShutdownRequestedEvent",
    "PgShuttingDownAfterCrashEvent",
    "PgShuttingDownEvent",
    "PgStaleStatisticsEvent",
    "PgStartingEvent",
    "PgStartingUpEvent",
    "PgStatementCanceledEvent",
    "PgTempFileEvent",
    "PgTerminatedByAdministratorEvent",
    "PgTerminatedByExceptionEvent",
    "PgTerminatedBySignalEvent",
    "PgTerminatingConnectionCrashEvent",
    "PgTerminatingOtherProcessesEvent",
    "PgTime",
    "PgTooManyClientsEvent",
    "PgTooManyConnectionsEvent",
    "PgUnexpectedPostmasterExitEvent",
    "PgVersion",
    "PostgresCrash",
    "PrefixChoice",
    "Paste",
    "PasteCounts",
    "PasteReport",
    "ProcStatus",
    "ProcessFacts",
    "HostOtherPostmaster",
    "Recovery",
    "Report",
    "ResourceLimit",
    "SegfaultRecord",
    "Setting",
    "SettingFromDefault",
    "SettingFromPgConf",
    "SettingFromPgSettings",
    "SettingOrigin",
    "SkippedFile",
    "SmapsRollup",
    "SnapshotField",
    "SourceServerLog",
    "SourceSummary",
    "SubtransFacts",
    "Sysctl",
    "SysctlSet",
    "ThpFacts",
    "TimelineEntry",
    "TimelineEvent",
    "UnitFacts",
    "VmFacts",
    "WallClock",
    "Wrapper",
]
