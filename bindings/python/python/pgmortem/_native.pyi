"""Type stubs of the native module (see pgmortem/__init__.pyi for the returned shapes)."""

from os import PathLike
from collections.abc import Iterator
from typing import Any

__version__: str

class PgmortemError(Exception): ...
class BundleError(PgmortemError): ...
class DiagnoseError(PgmortemError): ...

def analyze(
    path: str | PathLike[str],
    *,
    boot_time: str | None = None,
    host_utc_offset: str | None = None,
    prefix: str | None = None,
) -> dict[str, Any]: ...
def parse_kernel_log(data: str | bytes, *, year: int | None = None) -> list[dict[str, Any]]: ...
def kernel_log_stats(data: str | bytes, *, year: int | None = None) -> dict[str, Any]: ...
def run_cli(args: list[str]) -> tuple[int, str, str]: ...
def parse_perf_script(
    data: str | bytes,
    *,
    event: str | None = None,
    top: int = 25,
    bucket_seconds: float = 1.0,
    queries: dict[str, list[str]] | None = None,
) -> dict[str, Any]: ...
def perf_samples(data: str | bytes) -> list[dict[str, Any]]: ...
def collapse_perf(
    data: str | bytes,
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

class PgLogRecords(Iterator[dict[str, Any]]):
    def __next__(self) -> dict[str, Any]: ...
    def stats(self) -> dict[str, Any]: ...

def parse_pg_log(
    path_or_bytes: str | PathLike[str] | bytes,
    prefix: str | None = None,
    format: str = "auto",
) -> PgLogRecords: ...
