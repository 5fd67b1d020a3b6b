"""pgmortem: an offline analyzer for PostgreSQL support bundles.

>>> import pgmortem
>>> report = pgmortem.analyze("fixtures/incidents/pg15-memcg-oom-sort")  # doctest: +SKIP
>>> report["incidents"][0]["outage_seconds"]  # doctest: +SKIP

Every function returns plain data (dicts and lists) with the same schema as the CLI's JSON
output (``pgmortem.report/v1``), typed by the ``TypedDict`` of :mod:`pgmortem.types` (all
re-exported here: ``pgmortem.Report``, ``pgmortem.PgRecord``, …). Errors are subclasses of
:class:`PgmortemError`, except a missing or unreadable path, which raises
:class:`FileNotFoundError` / :class:`PermissionError`, and an argument of the wrong type
(:class:`TypeError`).

``to_pandas(report)`` and ``to_arrow(report)`` give a report's tables as pandas DataFrames or
pyarrow Tables (optional extras ``pgmortem[pandas]``, ``pgmortem[arrow]``, imported only when
called); :mod:`pgmortem.fleet` analyzes many bundles on Dask into a Parquet dataset
(``pgmortem[fleet]``).

``pg_log_batches(path)`` and ``kernel_batches(path)`` give a log's records as a
``pyarrow.RecordBatchReader`` built in Rust as the file is read, for polars and DuckDB;
``timeline_batches(report)`` and ``findings_batches(report)`` a report's tables the same way.
"""

from pgmortem._errors import (
    BundleError,
    DiagnoseError,
    NothingToReadError,
    OptionError,
    ParseError,
    PgmortemError,
)
from pgmortem._native import (
    __version__,
    analyze,
    analyze_many,
    collapse_perf,
    kernel_log_stats,
    open_bundle,
    parse_cgroup_memory,
    parse_kernel_log,
    parse_meminfo,
    parse_perf_script,
    parse_pg_conf,
    parse_pg_settings,
    parse_proc_status,
    parse_smaps_rollup,
    parse_sysctl,
    parse_vmstat,
    perf_samples,
    run_cli,
)
from pgmortem._native import PgLogRecords, parse_pg_log
from pgmortem._native import ArrowStream, kernel_stream, pg_log_stream
from pgmortem._native import PgbouncerRecords, parse_pgbouncer_log
from pgmortem._frames import Frames, to_arrow, to_pandas
from pgmortem._batches import findings_batches, kernel_batches, pg_log_batches, timeline_batches
from pgmortem import types
from pgmortem.types import *  # noqa: F403 - every TypedDict, importable at run time

__all__ = [
    "BundleError",
    "DiagnoseError",
    "NothingToReadError",
    "OptionError",
    "ParseError",
    "PgmortemError",
    "__version__",
    "analyze",
    "analyze_many",
    "collapse_perf",
    "kernel_log_stats",
    "open_bundle",
    "parse_cgroup_memory",
    "parse_kernel_log",
    "parse_meminfo",
    "parse_perf_script",
    "parse_pg_conf",
    "parse_pg_settings",
    "parse_proc_status",
    "parse_smaps_rollup",
    "parse_sysctl",
    "parse_vmstat",
    "perf_samples",
    "run_cli",
    "PgLogRecords",
    "parse_pg_log",
    "PgbouncerRecords",
    "parse_pgbouncer_log",
    "ArrowStream",
    "pg_log_stream",
    "kernel_stream",
    "pg_log_batches",
    "kernel_batches",
    "timeline_batches",
    "findings_batches",
    "Frames",
    "to_arrow",
    "to_pandas",
    "types",
]
__all__ += types.__all__
