"""Type stubs of the native module (see pgmortem/__init__.pyi for the returned shapes)."""

from collections.abc import Iterator, Mapping
from typing import Any

from pgmortem.types import Input

__version__: str


def analyze(
    path: Input,
    *,
    boot_time: str | None = None,
    host_utc_offset: str | None = None,
    prefix: str | None = None,
    match_tolerance: float | None = None,
    max_log_bytes: int | None = None,
    threads: int | None = None,
) -> dict[str, Any]: ...
def parse_kernel_log(data: Input, *, year: int | None = None) -> list[dict[str, Any]]: ...
def kernel_log_stats(data: Input, *, year: int | None = None) -> dict[str, Any]: ...
def run_cli(args: list[str]) -> tuple[int, str, str]: ...
def run_cli_stdio(args: list[str]) -> int: ...
def parse_perf_script(
    data: Input,
    *,
    event: str | None = None,
    top: int = 25,
    bucket_seconds: float = 1.0,
    queries: dict[str, list[str]] | None = None,
) -> dict[str, Any]: ...
def perf_samples(data: Input) -> list[dict[str, Any]]: ...
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
) -> dict[str, Any]: ...
def parse_meminfo(data: Input) -> dict[str, Any]: ...
def parse_vmstat(data: Input) -> dict[str, Any]: ...
def parse_proc_status(data: Input) -> dict[str, Any]: ...
def parse_smaps_rollup(data: Input) -> dict[str, Any]: ...
def parse_sysctl(data: Input) -> dict[str, Any]: ...
def parse_pg_settings(data: Input) -> dict[str, Any]: ...
def parse_pg_conf(data: Input) -> dict[str, Any]: ...
def parse_cgroup_memory(files: Mapping[str, Input]) -> dict[str, Any]: ...

class PgLogRecords(Iterator[dict[str, Any]]):
    def __next__(self) -> dict[str, Any]: ...
    def stats(self) -> dict[str, Any]: ...

def parse_pg_log(
    path_or_bytes: Input,
    prefix: str | None = None,
    format: str = "auto",
) -> PgLogRecords: ...
