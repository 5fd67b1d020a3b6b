"""Type stubs of the native module. The returned shapes are the TypedDicts of pgmortem.types;
the package (pgmortem/__init__.py) re-exports everything here with ``__all__``."""

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar

from pgmortem.types import (
    BouncerForm,
    BouncerLogStats,
    BouncerRecord,
    BundleListing,
    CgroupMemory,
    FlatKeyed,
    Input,
    KernelRecord,
    KernelStats,
    Meminfo,
    PerfProfile,
    PerfSample,
    PgConf,
    PgLogStats,
    PgRecord,
    PgSettings,
    ProcStatus,
    Report,
    SmapsRollup,
    SysctlSet,
)

__version__: str

def analyze(
    path: Input | Sequence[Input],
    *,
    boot_time: str | None = None,
    host_utc_offset: str | None = None,
    prefix: str | None = None,
    match_tolerance: float | None = None,
    max_log_bytes: int | None = None,
    threads: int | None = None,
    memory_limit: int | None = None,
) -> Report: ...
def analyze_many(
    paths: Iterable[Input],
    *,
    workers: int | None = None,
    boot_time: str | None = None,
    host_utc_offset: str | None = None,
    prefix: str | None = None,
    match_tolerance: float | None = None,
    max_log_bytes: int | None = None,
    threads: int | None = None,
    memory_limit: int | None = None,
) -> list[Report | Exception]: ...
def parse_kernel_log(data: Input, *, year: int | None = None) -> list[KernelRecord]: ...
def kernel_log_stats(data: Input, *, year: int | None = None) -> KernelStats: ...
def run_cli(args: list[str]) -> tuple[int, str, str]: ...
def run_cli_stdio(args: list[str]) -> int: ...
def parse_perf_script(
    data: Input,
    *,
    event: str | None = None,
    top: int = 25,
    bucket_seconds: float = 1.0,
    queries: Mapping[str, list[str]] | None = None,
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

class PgLogRecords(Iterator[PgRecord]):
    """Iterator over the records of a PostgreSQL log; ``stats()`` gives the counts so far."""

    def __iter__(self) -> PgLogRecords: ...
    def __next__(self) -> PgRecord: ...
    def stats(self) -> PgLogStats: ...

def parse_pg_log(
    path_or_bytes: Input,
    prefix: str | None = None,
    format: Literal[
        "auto", "stderr", "csv", "json", "syslog", "syslog5424", "journal", "journal_json",
        "heroku", "cloudsql", "cnpg", "docker-json", "cri", "timestamped", "journal-export",
        "cloudwatch", "azure",
    ] = "auto",
) -> PgLogRecords: ...

_Stats = TypeVar("_Stats", PgLogStats, KernelStats)

class ArrowStream(Generic[_Stats]):
    """A stream of Arrow record batches (the Arrow PyCapsule interface, read once by
    ``pyarrow.RecordBatchReader.from_stream``, ``polars.DataFrame`` or DuckDB) with the counts
    of what was read so far (``None`` before the first batch)."""

    @property
    def column_names(self) -> list[str]: ...
    def __arrow_c_stream__(self, requested_schema: object | None = None) -> Any: ...
    def stats(self) -> _Stats | None: ...

def pg_log_stream(
    path_or_bytes: Input,
    prefix: str | None = None,
    format: Literal[
        "auto", "stderr", "csv", "json", "syslog", "syslog5424", "journal", "journal_json",
        "heroku", "cloudsql", "cnpg", "docker-json", "cri", "timestamped", "journal-export",
        "cloudwatch", "azure",
    ] = "auto",
    *,
    batch_rows: int | None = None,
    threads: int | None = None,
) -> ArrowStream[PgLogStats]: ...
def kernel_stream(
    data: Input, *, year: int | None = None, batch_rows: int | None = None
) -> ArrowStream[KernelStats]: ...

class PgbouncerRecords(Iterator[BouncerRecord]):
    """Iterator over the records of a pgbouncer log; ``stats()`` gives the counts so far."""

    def __iter__(self) -> PgbouncerRecords: ...
    def __next__(self) -> BouncerRecord: ...
    def stats(self) -> BouncerLogStats: ...

def parse_pgbouncer_log(
    path_or_bytes: Input,
    form: Literal["auto"] | BouncerForm = "auto",
    year: int | None = None,
) -> PgbouncerRecords: ...
