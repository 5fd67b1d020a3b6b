"""Data frames of a report: :func:`to_pandas` (pandas ``DataFrame``) and :func:`to_arrow`
(pyarrow ``Table``, for polars, DuckDB and Parquet). pandas and pyarrow are optional
(``pip install 'pgmortem[pandas]'``, ``'pgmortem[arrow]'``) and imported only when these
functions are called, never by ``import pgmortem``."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from pgmortem import _tables
from pgmortem.types import Report

if TYPE_CHECKING:
    # Precise types when pandas-stubs (or a typed pyarrow) is installed, ``Any`` otherwise.
    import pandas  # type: ignore[import-untyped, import-not-found, unused-ignore]
    import pyarrow  # type: ignore[import-untyped, import-not-found, unused-ignore]

T = TypeVar("T")

_NAT = -(2**63)  # numpy's NaT as int64


@dataclasses.dataclass(frozen=True)
class Frames(Generic[T]):
    """The tables of one report: ``Frames[pandas.DataFrame]`` from :func:`to_pandas`,
    ``Frames[pyarrow.Table]`` from :func:`to_arrow`, with the same columns in both.

    ``findings.incident`` and ``incidents.incident`` are the same index (the position in
    ``report["incidents"]``): join on it. Iterating yields ``(name, table)`` pairs."""

    findings: T
    """One row per finding, most severe first."""
    incidents: T
    """One row per incident, oldest first."""
    timeline: T
    """One row per timeline event, oldest first."""
    sources: T
    """One row per file of the bundle."""

    def __iter__(self) -> Iterator[tuple[str, T]]:
        for field in dataclasses.fields(self):
            yield field.name, getattr(self, field.name)


def _require(module: str, extra: str) -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"pgmortem.{'to_pandas' if extra == 'pandas' else 'to_arrow'} needs {module}: "
            f"pip install 'pgmortem[{extra}]'"
        ) from e


def _pandas_frame(pd: Any, columns: list[_tables.Column], data: _tables.Columns) -> Any:
    import numpy as np

    series = {}
    for column in columns:
        values = data[column.name]
        if column.kind == "timestamp":
            raw = np.array([_NAT if v is None else v for v in values], dtype="int64")
            series[column.name] = pd.Series(raw.view("datetime64[ns]"), dtype="datetime64[ns]").dt.tz_localize("UTC")
        elif column.kind == "int":
            series[column.name] = pd.Series(values, dtype="Int64" if column.nullable else "int64")
        elif column.kind == "float":
            series[column.name] = pd.Series([np.nan if v is None else v for v in values], dtype="float64")
        elif column.kind == "bool":
            series[column.name] = pd.Series(values, dtype="boolean" if column.nullable else "bool")
        else:
            # pandas 3: its string dtype (missing values NaN); pandas 2: Python objects (None).
            series[column.name] = pd.Series(values, dtype="str" if _major(pd) >= 3 else object)
    return pd.DataFrame(series, columns=[c.name for c in columns])


def _major(module: Any) -> int:
    return int(str(module.__version__).split(".")[0])


def _frames(tables: dict[str, T]) -> Frames[T]:
    return Frames(
        findings=tables["findings"],
        incidents=tables["incidents"],
        timeline=tables["timeline"],
        sources=tables["sources"],
    )


def arrow_type(pa: Any, kind: _tables.Kind) -> Any:
    """The pyarrow type of a column kind."""
    return {
        "str": pa.string(),
        "int": pa.int64(),
        "float": pa.float64(),
        "bool": pa.bool_(),
        "timestamp": pa.timestamp("ns", tz="UTC"),
    }[kind]


def arrow_schema(pa: Any, columns: list[_tables.Column]) -> Any:
    """The pyarrow schema of a table's columns."""
    return pa.schema([pa.field(c.name, arrow_type(pa, c.kind), nullable=c.nullable) for c in columns])


def arrow_table(pa: Any, columns: list[_tables.Column], data: _tables.Columns) -> Any:
    """A pyarrow Table of columns built by :mod:`pgmortem._tables`."""
    schema = arrow_schema(pa, columns)
    return pa.Table.from_pydict({c.name: data[c.name] for c in columns}, schema=schema)


def to_pandas(report: Report) -> Frames[pandas.DataFrame]:
    """The report as pandas DataFrames: ``findings``, ``incidents``, ``timeline``, ``sources``
    (docs/python.md, "Data frames").

    Every time is a ``datetime64[ns, UTC]`` column (``NaT`` when unknown), integer columns
    that may be unknown are nullable ``Int64``, other numbers ``int64``/``float64`` (``NaN``
    when unknown). Needs pandas (``pip install 'pgmortem[pandas]'``); raises ``ImportError``
    naming that extra without it. Cost: linear in the report, a few milliseconds."""
    pd = _require("pandas", "pandas")
    return _frames(
        {name: _pandas_frame(pd, columns, _tables.BUILDERS[name](report)) for name, columns in _tables.TABLES.items()}
    )


def to_arrow(report: Report) -> Frames[pyarrow.Table]:
    """The report as pyarrow Tables with the columns of :func:`to_pandas`: times are
    ``timestamp[ns, tz=UTC]``, unknown values null. For polars (``polars.from_arrow``), DuckDB
    (a Table is queried by its variable name) and Parquet (``pyarrow.parquet.write_table``).
    Needs pyarrow (``pip install 'pgmortem[arrow]'``); raises ``ImportError`` naming that
    extra without it."""
    pa = _require("pyarrow", "arrow")
    return _frames(
        {name: arrow_table(pa, columns, _tables.BUILDERS[name](report)) for name, columns in _tables.TABLES.items()}
    )
