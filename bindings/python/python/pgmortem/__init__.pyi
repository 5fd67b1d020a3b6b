"""Typed view of the pgmortem package: the returned dicts as TypedDicts."""

from collections.abc import Mapping
from typing import Literal, TypedDict

from typing_extensions import NotRequired

__version__: str
__all__: list[str]

from pgmortem._errors import (
    BundleError as BundleError,
    DiagnoseError as DiagnoseError,
    OptionError as OptionError,
    ParseError as ParseError,
    PgmortemError as PgmortemError,
)
from pgmortem.types import BinaryReader as BinaryReader, Input as Input

class SourceSummary(TypedDict):
    path: str
    kind: str
    bytes: int
    lines: int
    records: int
    unrecognized_lines: int
    unrecognized_examples: list[tuple[int, str]]
    note: str | None

class MemcgLimit(TypedDict):
    path: str | None
    task_path: str | None
    limit_kb: int | None
    usage_kb: int | None
    failcnt: int | None

class KernelKill(TypedDict):
    pid: int
    comm: str
    anon_rss_kb: int | None
    file_rss_kb: int | None
    shmem_rss_kb: int | None
    total_vm_kb: int | None
    pgtables_kb: int | None
    oom_score_adj: int | None
    constraint: str | None
    memcg: MemcgLimit | None
    trigger_comm: str | None
    trigger_pid: int | None
    at: str | None
    path: str
    line: int

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

class Incident(TypedDict):
    kind: Literal["oom_kill", "crash_restart", "postmaster_killed", "unclean_restart", "kernel_oom"]
    cause: Literal[
        "oom_killer",
        "signal_from_outside",
        "segfault",
        "abort_or_panic",
        "abnormal_exit",
        "postmaster_killed",
        "unknown",
    ]
    started_at: str | None
    kernel_kill: KernelKill | None
    postgres_crash: PostgresCrash | None
    recovery: Recovery | None
    outage_seconds: float | None
    redo_seconds: float | None
    wal_replayed_bytes: int | None
    clock_skew_seconds: float | None
    preceded_by: list[LogLine]
    sessions_lost: int | None
    connections_refused: int
    confidence: float
    matched_by: str | None
    notes: list[str]

class Evidence(TypedDict):
    path: str
    line: int
    what: str
    key: NotRequired[str]

class Finding(TypedDict):
    id: str
    severity: Literal["info", "warning", "critical"]
    title: str
    summary: str
    recommendation: str | None
    evidence: list[Evidence]
    incident: int | None
    confidence: float
    figures: dict[str, float]

class Caveat(TypedDict):
    kind: str
    text: str

class NotEvaluated(TypedDict):
    rule: str
    missing: list[str]
    files: list[str]

class ClockInfo(TypedDict):
    boot_time: str | None
    boot_time_source: str | None
    boot_time_uncertainty_seconds: float | None
    notes: list[str]

class TimelineEvent(TypedDict):
    at: str | None
    uncertainty_seconds: float | None
    origin: Literal["kernel", "postgres"]
    kind: str
    summary: str
    path: str
    line: int

class Report(TypedDict):
    schema: Literal["pgmortem.report/v1"]
    generator: str
    caveats: list[Caveat]
    clock: ClockInfo
    sources: list[SourceSummary]
    incidents: list[Incident]
    findings: list[Finding]
    not_evaluated: list[NotEvaluated]
    host: dict[str, object]
    timeline: list[TimelineEvent]

class KernelStats(TypedDict):
    lines: int
    records: int
    unrecognized_lines: int
    invalid_utf8_lines: int
    oversized_lines: int
    unrecognized_examples: list[tuple[int, str]]

class PerfFrame(TypedDict):
    address: str
    symbol: str
    offset: int | None
    dso: str
    inlined: NotRequired[bool]
    srcline: NotRequired[str]

class PerfSample(TypedDict):
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

# Bundles and system snapshots

ParseStats = KernelStats

class ManifestFile(TypedDict):
    path: str
    kind: str
    command: str
    status: int | None
    duration_ms: int | None
    bytes: int | None
    capped: bool
    note: str

class Manifest(TypedDict):
    format: str
    format_version: int
    collector: str
    collector_version: str
    arguments: str
    uid: int | None
    started: str
    ended: str
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

class BundleListing(TypedDict):
    sources: list[BundleSource]
    skipped: list[SkippedFile]
    manifest: Manifest | None

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
    unit: str | None
    bytes: int | None
    milliseconds: float | None
    source: str | None
    sourcefile: str | None
    pending_restart: bool | None
    other: list[tuple[str, str]]
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

class ConfInclude(TypedDict):
    directive: str
    path: str
    line: int

class PgConf(TypedDict):
    entries: list[ConfEntry]
    includes: list[ConfInclude]
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
    swap_limit_bytes: int | None
    swap_usage_bytes: int | None
    stat: NotRequired[FlatKeyed]
    errors: NotRequired[list[tuple[str, str]]]
    ignored: list[str]

def analyze(
    path: Input,
    *,
    boot_time: str | None = None,
    host_utc_offset: str | None = None,
    prefix: str | None = None,
    match_tolerance: float | None = None,
    max_log_bytes: int | None = None,
    threads: int | None = None,
) -> Report: ...
def parse_kernel_log(data: Input, *, year: int | None = None) -> list[dict[str, object]]: ...
def kernel_log_stats(data: Input, *, year: int | None = None) -> KernelStats: ...
def run_cli(args: list[str]) -> tuple[int, str, str]: ...
def parse_perf_script(
    data: Input,
    *,
    event: str | None = None,
    top: int = 25,
    bucket_seconds: float = 1.0,
    queries: dict[str, list[str]] | None = None,
) -> PerfProfile: ...
def perf_samples(data: Input) -> list[PerfSample]: ...
def collapse_perf(
    data: Input,
    *,
    pid: bool = False,
    tid: bool = False,
    addrs: bool = False,
    kernel: bool = False,
    jit: bool = False,
    all: bool = False,
    event_filter: str | None = None,
    skip_after: list[str] | None = None,
) -> str: ...
def open_bundle(
    path: Input,
    *,
    max_file_bytes: int | None = None,
    max_log_bytes: int | None = None,
) -> BundleListing: ...
def parse_meminfo(data: Input) -> Meminfo: ...
def parse_vmstat(data: Input) -> FlatKeyed: ...
def parse_proc_status(data: Input) -> ProcStatus: ...
def parse_smaps_rollup(data: Input) -> SmapsRollup: ...
def parse_sysctl(data: Input) -> SysctlSet: ...
def parse_pg_settings(data: Input) -> PgSettings: ...
def parse_pg_conf(data: Input) -> PgConf: ...
def parse_cgroup_memory(files: Mapping[str, Input]) -> CgroupMemory: ...

# PostgreSQL server logs (parse_pg_log): see docs/pglog-events.md for the event kinds.
class PgLogStats(TypedDict):
    prefix: str
    format: Literal[
        "stderr", "csv", "json", "syslog", "syslog5424", "journal", "journal_json", "heroku",
        "cloudsql", "cnpg",
    ]
    records: list[dict[str, object]]
    stats: dict[str, object]
    continuation_lines: int
    orphan_lines: int
    memory_context_lines: int
    blank_lines: int
    other_program_lines: int
    broken_rows: int
    prefix_choice: PrefixChoice | None
    events: dict[str, int]
    languages: dict[str, int]

class PrefixChoice(TypedDict):
    method: Literal["given", "candidate", "inferred"]
    lines_tried: int
    lines_fitting: int

class PgLogRecords:
    def __iter__(self) -> PgLogRecords: ...
    def __next__(self) -> dict[str, object]: ...
    def stats(self) -> PgLogStats: ...

def parse_pg_log(
    path_or_bytes: Input,
    prefix: str | None = None,
    format: Literal[
        "auto", "stderr", "csv", "json", "syslog", "syslog5424", "journal", "journal_json",
        "heroku", "cloudsql", "cnpg",
    ] = "auto",
) -> PgLogRecords: ...
