"""Fleet scale: analyze many bundles on Dask distributed into a Parquet dataset.

:func:`analyze` takes a list or glob of bundles, analyzes them on a Dask cluster (a
``LocalCluster`` it starts, or a ``distributed.Client`` you pass) and writes one Parquet dataset
that DuckDB, Spark, polars or pandas query directly (docs/fleet.md)::

    DATASET/findings/part-00000.parquet    one row per finding
    DATASET/incidents/part-00000.parquet   one row per incident
    DATASET/sources/part-00000.parquet     one row per file of each bundle, and one row per
                                           bundle that could not be analyzed, with its error

Each task analyzes a batch of bundles and writes one file per table: several files per table,
written by the workers in parallel. The command line is ``pgmortem fleet GLOB... -o DATASET``.

Needs the ``fleet`` extra (``pip install 'pgmortem[fleet]'``: dask[distributed], pyarrow,
pandas); importing this module does not import them, calling :func:`analyze` does."""

from __future__ import annotations

import dataclasses
import glob as _glob
import math
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from pgmortem import _tables

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["TABLES", "FleetSummary", "analyze", "main", "schema"]

Bundles = Union[str, "os.PathLike[str]", Iterable[Union[str, "os.PathLike[str]"]]]
"""A glob pattern or a path, or an iterable of those."""

_ID = [
    _tables.Column("bundle", "str", False, "the bundle as given (the path a glob matched)"),
    _tables.Column("host", "str", True, "report['collection']['hostname'], or null"),
]


def _loose(columns: list[_tables.Column]) -> list[_tables.Column]:
    return [_tables.Column(c.name, c.kind, True, c.doc) for c in columns]


TABLES: dict[str, list[_tables.Column]] = {
    "findings": _ID + _tables.FINDINGS,
    "incidents": _ID + _tables.INCIDENTS,
    # A bundle that fails has one row here with its error and nulls for the file's figures.
    "sources": _ID
    + _loose(_tables.SOURCES)
    + [
        _tables.Column("error_type", "str", True, "the exception's class for a bundle that failed, else null"),
        _tables.Column("error", "str", True, "the error message for a bundle that failed, else null"),
    ],
}
"""The dataset's tables: name → columns (``bundle``, ``host``, then those of ``pgmortem.to_arrow``)."""


@dataclasses.dataclass(frozen=True)
class FleetSummary:
    """What :func:`analyze` wrote."""

    dataset: str
    """The dataset's directory."""
    bundles: int
    """Bundles analyzed or tried (each glob match, each path, each glob that matched nothing)."""
    failed: int
    """Bundles that could not be analyzed: a row each in ``sources`` with ``error`` set."""
    rows: dict[str, int]
    """Rows written per table."""
    files: dict[str, int]
    """Parquet files written per table."""
    workers: int
    """Dask workers (threads across the cluster) the run had."""
    seconds: float
    """Wall time of the analysis, from the first task submitted to the last file written (the
    cluster's start not included)."""

    @property
    def bundles_per_second(self) -> float:
        """Throughput: ``bundles / seconds``."""
        return self.bundles / self.seconds if self.seconds > 0 else math.inf


def schema(table: str) -> Any:
    """The pyarrow schema of a table of the dataset (``findings``, ``incidents``, ``sources``);
    every part file of that table has exactly this schema."""
    from pgmortem import _frames

    pa = _need("pyarrow")
    return _frames.arrow_schema(pa, TABLES[table])


def analyze(
    bundles: Bundles,
    dataset: Union[str, "os.PathLike[str]"],
    *,
    client: Optional[Client] = None,
    workers: Optional[int] = None,
    processes: bool = True,
    batch_size: Optional[int] = None,
    overwrite: bool = False,
    host_utc_offset: Optional[str] = None,
    prefix: Optional[str] = None,
    match_tolerance: Optional[float] = None,
    max_log_bytes: Optional[int] = None,
    threads: Optional[int] = 1,
    memory_limit: Optional[int] = None,
) -> FleetSummary:
    """Analyzes every bundle of ``bundles`` on Dask and writes the Parquet dataset ``dataset``.

    ``bundles`` is a glob pattern (``"/srv/bundles/*.tar.gz"``), a path, or an iterable of
    those; each pattern is expanded on the client, in sorted order, and each match is the
    ``bundle`` column as written. A pattern that matches nothing and a path that does not exist
    become a failed row, like a bundle that cannot be analyzed: the ``sources`` table has one
    row per failed bundle with ``error_type`` and ``error``, so no bundle is lost silently.

    ``client``: a ``distributed.Client`` to run on (left open); by default a ``LocalCluster``
    is started for the call and closed after, with ``workers`` workers (default: one per core)
    of one thread each, as separate processes (``processes=True``, the default: the
    analysis's Python side, turning reports into Arrow, holds the GIL, and a bundle that makes
    a process fail takes down only its worker) or as threads of this process
    (``processes=False``: starts faster, fine for a few bundles). With processes, a script
    that calls this must guard its top level with ``if __name__ == "__main__":``.

    Workers read the bundles and write the dataset at the paths given: on a real cluster both
    must be on storage every worker sees at the same path.

    ``batch_size``: bundles per task, hence per Parquet file of each table (default: enough
    batches for four tasks per worker thread, at most 64 bundles each). A batch that fails as
    a whole (its worker died) is run again one bundle per task, so only the bundle at fault
    gets an error row.

    ``dataset`` must not already hold part files unless ``overwrite`` (their old part files
    are then removed first). The analysis options (``host_utc_offset``, ``prefix``,
    ``match_tolerance``, ``max_log_bytes``, ``threads``, ``memory_limit``) are those of
    ``pgmortem.analyze`` and apply to every bundle; ``threads`` defaults to 1 here: the workers
    are the parallelism, and each worker's analysis has its own ``memory_limit``.

    Raises ``ImportError`` naming the ``fleet`` extra when Dask or pyarrow is missing,
    ``FileExistsError`` for a dataset that has part files, ``ValueError`` for ``workers`` or
    ``batch_size`` below 1."""
    dask = _need("distributed")
    _need("pyarrow")
    if workers is not None and workers < 1:
        raise ValueError(f"workers must be at least 1, not {workers}")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, not {batch_size}")
    options = {
        "host_utc_offset": host_utc_offset,
        "prefix": prefix,
        "match_tolerance": match_tolerance,
        "max_log_bytes": max_log_bytes,
        "threads": threads,
        "memory_limit": memory_limit,
    }
    out = Path(dataset)
    _prepare(out, overwrite)
    entries = expand(bundles)

    cluster = None
    run_on: Any = client
    if client is None:
        cluster = dask.LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=processes,
            dashboard_address=None,
        )
        run_on = dask.Client(cluster)
    try:
        return _run(run_on, entries, out, batch_size, options)
    finally:
        if cluster is not None:
            run_on.close()
            cluster.close()


def expand(bundles: Bundles) -> list[str]:
    """The bundles a glob, a path or an iterable of those stands for, in order: each pattern's
    matches sorted; a pattern with no match stays as it is (its row will say it matched
    nothing); a path is kept as given, whether it exists or not."""
    if isinstance(bundles, (str, os.PathLike)):
        items: Iterable[Union[str, os.PathLike[str]]] = [bundles]
    else:
        items = bundles
    out: list[str] = []
    for item in items:
        text = os.fspath(item)
        if not isinstance(text, str):
            raise TypeError(f"bundles: expected str or os.PathLike[str], got {type(item).__name__}")
        if _glob.has_magic(text):
            matches = sorted(_glob.glob(text))
            out.extend(matches if matches else [text])
        else:
            out.append(text)
    return out


def _need(module: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(f"pgmortem.fleet needs {module}: pip install 'pgmortem[fleet]'") from e


def _prepare(out: Path, overwrite: bool) -> None:
    for table in TABLES:
        directory = out / table
        old = sorted(directory.glob("part-*.parquet")) if directory.is_dir() else []
        if old and not overwrite:
            raise FileExistsError(f"{directory} already holds {len(old)} part files (overwrite=True replaces them)")
        for path in old:
            path.unlink()
        directory.mkdir(parents=True, exist_ok=True)


def _run(
    client: Any, entries: list[str], out: Path, batch_size: Optional[int], options: dict[str, Any]
) -> FleetSummary:
    as_completed = _need("distributed").as_completed
    threads = sum(client.nthreads().values()) or 1
    size = batch_size or max(1, min(64, math.ceil(len(entries) / (4 * threads))))
    batches = {f"{n:05d}": entries[i : i + size] for n, i in enumerate(range(0, len(entries), size))}
    rows = dict.fromkeys(TABLES, 0)
    files = dict.fromkeys(TABLES, 0)
    failed = 0
    started = time.perf_counter()
    futures = {
        client.submit(_analyze_batch, part, batch, str(out), options, pure=False): (part, batch)
        for part, batch in batches.items()
    }
    pending = as_completed(list(futures))
    for future in pending:
        part, batch = futures[future]
        try:
            done: dict[str, int] = future.result()
        except Exception as e:  # the worker died or the task could not run: never lose a bundle
            _remove_part(out, part)
            if len(batch) > 1:
                for j, bundle in enumerate(batch):
                    retry = client.submit(_analyze_batch, f"{part}-{j:03d}", [bundle], str(out), options, pure=False)
                    futures[retry] = (f"{part}-{j:03d}", [bundle])
                    pending.add(retry)
                continue
            done = _write_part(out, part, [_failed(batch[0], e)])
        for table in TABLES:
            rows[table] += done[table]
            files[table] += 1
        failed += done["failed"]
    return FleetSummary(
        dataset=str(out),
        bundles=len(entries),
        failed=failed,
        rows=rows,
        files=files,
        workers=threads,
        seconds=time.perf_counter() - started,
    )


def _remove_part(out: Path, part: str) -> None:
    for table in TABLES:
        path = out / table / f"part-{part}.parquet"
        if path.exists():
            path.unlink()


def _failed(bundle: str, error: BaseException) -> dict[str, _tables.Columns]:
    """The rows of a bundle that could not be analyzed: one in ``sources``, with its error."""
    columns = {table: _tables.empty(cols) for table, cols in TABLES.items()}
    for column in TABLES["sources"]:
        value: _tables.Value = None
        if column.name == "bundle":
            value = bundle
        elif column.name == "error_type":
            value = type(error).__name__
        elif column.name == "error":
            value = str(error) or repr(error)
        columns["sources"][column.name].append(value)
    return columns


def _analyze_one(bundle: str, options: dict[str, Any]) -> dict[str, _tables.Columns]:
    import pgmortem

    if _glob.has_magic(bundle) and not os.path.exists(bundle):
        return _failed(bundle, FileNotFoundError(f"no bundle matches {bundle}"))
    try:
        report = pgmortem.analyze(bundle, **options)
        host = report["collection"]["hostname"]
        columns = {table: _tables.BUILDERS[table](report) for table in TABLES}
    except Exception as e:  # recorded in the dataset, never raised: one bundle never stops the run
        return _failed(bundle, e)
    for table, data in columns.items():
        n = len(next(iter(data.values())))
        data["bundle"] = [bundle] * n
        data["host"] = [host] * n
        if table == "sources":
            data["error_type"] = [None] * n
            data["error"] = [None] * n
    return columns


def _analyze_batch(part: str, bundles: list[str], out: str, options: dict[str, Any]) -> dict[str, int]:
    """A task: analyzes a batch of bundles and writes its part file of each table."""
    return _write_part(Path(out), part, [_analyze_one(bundle, options) for bundle in bundles])


def _write_part(out: Path, part: str, results: list[dict[str, _tables.Columns]]) -> dict[str, int]:
    from pgmortem import _frames

    pq = _need("pyarrow.parquet")

    pa = _need("pyarrow")
    done = {"failed": sum(1 for r in results if r["sources"]["error"] and r["sources"]["error"][0] is not None)}
    for table, columns in TABLES.items():
        merged = _tables.empty(columns)
        for result in results:
            for column in columns:
                merged[column.name].extend(result[table][column.name])
        arrow = _frames.arrow_table(pa, columns, merged)
        path = out / table / f"part-{part}.parquet"
        partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        # Microseconds on disk: TIMESTAMP(MICROS, UTC) is what Spark reads as a timestamp
        # (it rejects nanoseconds); DuckDB, polars and pandas read it too.
        pq.write_table(arrow, partial, coerce_timestamps="us", allow_truncated_timestamps=True)
        os.replace(partial, path)  # a task run twice never leaves a half-written file
        done[table] = arrow.num_rows
    return done


def main(argv: Optional[list[str]] = None) -> int:
    """``pgmortem fleet ARGS``: the command line of :func:`analyze`, as the ``pgmortem`` command
    runs it (``argv`` without ``fleet``; default: ``sys.argv[1:]``). Returns the exit code: 0
    when the dataset is written (failed bundles are rows of it, counted on the last line), 2
    for a usage error, a dataset that already has part files, or a missing extra.

    The arguments are parsed by pgmortem's own command line, as ``pgmortem analyze``'s are
    (sizes such as ``--memory-limit 256MiB``), and ``pgmortem help fleet`` describes them."""
    import sys

    from pgmortem.__main__ import main as command

    return command(["fleet", *(sys.argv[1:] if argv is None else argv)])


def _run_command(options: dict[str, Any]) -> FleetSummary:
    """``pgmortem fleet`` once the command line has parsed and checked its arguments
    (``options``: :func:`analyze`'s keywords, ``bundles``, ``output`` and ``scheduler``): runs
    :func:`analyze`, on the scheduler's cluster when one is named. The command line prints
    the summary, or the message of what this raises, and exits 2."""
    client = None
    try:
        if options["scheduler"]:
            client = _need("distributed").Client(options["scheduler"])
        return analyze(
            options["bundles"],
            options["output"],
            client=client,
            workers=options["workers"],
            processes=options["processes"],
            batch_size=options["batch_size"],
            overwrite=options["overwrite"],
            host_utc_offset=options["host_utc_offset"],
            prefix=options["prefix"],
            match_tolerance=options["match_tolerance"],
            max_log_bytes=options["max_log_bytes"],
            memory_limit=options["memory_limit"],
            threads=options["threads"],
        )
    except FileExistsError as e:
        # Said in the command line's words: its flag, not the keyword.
        raise FileExistsError(str(e).replace("overwrite=True", "--overwrite")) from None
    finally:
        if client is not None:
            client.close()
