"""Arrow record batches of logs and reports, for pyarrow, polars and DuckDB:
:func:`pg_log_batches` and :func:`kernel_batches` build them in Rust as they are read and hand
them over through the Arrow C stream interface (no copy of the buffers);
:func:`timeline_batches` and :func:`findings_batches` give a report's tables of
:func:`pgmortem.to_arrow` as readers. pyarrow is optional (``pip install 'pgmortem[arrow]'``)
and imported only when these functions are called."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Optional

from pgmortem import _native
from pgmortem._native import ArrowStream
from pgmortem.types import Input, Report

if TYPE_CHECKING:
    # A precise type when a typed pyarrow is installed, ``Any`` otherwise.
    import pyarrow  # type: ignore[import-untyped, import-not-found, unused-ignore]

PgLogFormatName = Literal[
    "auto", "stderr", "csv", "json", "syslog", "syslog5424", "journal", "journal_json",
    "heroku", "cloudsql", "cnpg", "docker-json", "cri", "timestamped", "journal-export",
    "cloudwatch", "azure",
]


def _pyarrow(function: str) -> Any:
    try:
        import pyarrow
    except ImportError as e:
        raise ImportError(f"pgmortem.{function} needs pyarrow: pip install 'pgmortem[arrow]'") from e
    return pyarrow


def _reader(pa: Any, stream: ArrowStream[Any]) -> Any:
    from_stream = getattr(pa.RecordBatchReader, "from_stream", None)
    if from_stream is not None:  # pyarrow >= 15
        return from_stream(stream)
    return pa.RecordBatchReader._import_from_c_capsule(stream.__arrow_c_stream__())


def pg_log_batches(
    path_or_bytes: Input,
    prefix: Optional[str] = None,
    format: PgLogFormatName = "auto",
    *,
    batch_rows: int = 65536,
    threads: Optional[int] = None,
) -> pyarrow.RecordBatchReader:
    """The records of a PostgreSQL server log as a ``pyarrow.RecordBatchReader`` of
    ``batch_rows`` records per batch (docs/python.md, "Logs as Arrow batches"), parsed on
    ``threads`` threads (default: one per core; a file object is read on one).

    Arguments as :func:`pgmortem.parse_pg_log`: the same reader, so the same records, with the
    dict's fields as columns under the same names (a nested dict's joined with ``_``:
    ``time_utc``, ``time_civil``, ``time_zone``; ``event`` and ``memory_context_dump`` as JSON
    text, ``event_kind`` the event's kind), then ``file``. A path is read in 1 MiB chunks as
    batches are asked for: memory is one batch, whatever the file's size. The first batch is
    read at the call, so a missing file or a prefix that fits nothing raises here;
    :func:`pg_log_stream` gives the same batches with the counts (``stats()``). Needs pyarrow
    (``pip install 'pgmortem[arrow]'``, pyarrow 16 or later: text columns are string views)."""
    pa = _pyarrow("pg_log_batches")
    return _reader(pa, _native.pg_log_stream(path_or_bytes, prefix, format, batch_rows=batch_rows, threads=threads))


def kernel_batches(data: Input, *, year: Optional[int] = None, batch_rows: int = 65536) -> pyarrow.RecordBatchReader:
    """The records of a kernel log (those of :func:`pgmortem.parse_kernel_log`) as a
    ``pyarrow.RecordBatchReader``: ``line``, ``end_line``, ``kind``, the record's ``time``
    flattened (``time_monotonic_us``, ``time_wall_civil``, ``time_wall_utc_offset_seconds``,
    ``time_wall_year_inferred``) and ``record``, the whole record as JSON text. The log is read in
    blocks of lines, never whole; :func:`kernel_stream` gives the counts. Needs pyarrow."""
    pa = _pyarrow("kernel_batches")
    return _reader(pa, _native.kernel_stream(data, year=year, batch_rows=batch_rows))


def timeline_batches(report: Report) -> pyarrow.RecordBatchReader:
    """The report's timeline, the table of ``pgmortem.to_arrow(report).timeline``, as a
    ``pyarrow.RecordBatchReader``. Needs pyarrow."""
    from pgmortem._frames import to_arrow

    _pyarrow("timeline_batches")
    return to_arrow(report).timeline.to_reader()


def findings_batches(report: Report) -> pyarrow.RecordBatchReader:
    """The report's findings, the table of ``pgmortem.to_arrow(report).findings``, as a
    ``pyarrow.RecordBatchReader``. Needs pyarrow."""
    from pgmortem._frames import to_arrow

    _pyarrow("findings_batches")
    return to_arrow(report).findings.to_reader()
