"""pgmortem.to_pandas and pgmortem.to_arrow: the report's tables, row for row, with real UTC
timestamps, and optional dependencies imported only when called."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import pgmortem
from pgmortem import _tables

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
OOM = FIXTURES / "incidents" / "pg15-memcg-oom-work-mem" / "pgmortem-dbhost-20261124T053616Z.tar.gz"


def bundles() -> list[Path]:
    found = []
    for incident in sorted((FIXTURES / "incidents").iterdir()):
        archives = sorted(incident.glob("*.tar.*"))
        found.append(archives[0] if archives else incident)
    return found


def time_columns(table: str) -> list[str]:
    return [c.name for c in _tables.TABLES[table] if c.kind == "timestamp"]


def utc(text: str | None) -> object:
    return pd.NaT if text is None else pd.Timestamp(text)


def test_importing_pgmortem_imports_neither_pandas_nor_pyarrow_nor_dask() -> None:
    code = (
        "import sys, pgmortem, pgmortem.fleet\n"
        "heavy = [m for m in ('pandas', 'pyarrow', 'numpy', 'dask', 'distributed') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("function, extra, module", [("to_pandas", "pandas", "pandas"), ("to_arrow", "arrow", "pyarrow")])
def test_a_missing_extra_is_named(function: str, extra: str, module: str) -> None:
    code = (
        f"import sys; sys.modules[{module!r}] = None\n"
        "import pgmortem\n"
        f"report = pgmortem.analyze({str(OOM)!r})\n"
        f"try:\n    pgmortem.{function}(report)\nexcept ImportError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"pip install 'pgmortem[{extra}]'" in done.stdout


@pytest.mark.parametrize("bundle", bundles(), ids=lambda p: p.parent.name if p.is_file() else p.name)
def test_pandas_frames_hold_every_row_with_utc_times(bundle: Path) -> None:
    report = pgmortem.analyze(bundle)
    frames = pgmortem.to_pandas(report)
    assert [name for name, _ in frames] == list(_tables.TABLES)
    for name, frame in frames:
        assert list(frame.columns) == [c.name for c in _tables.TABLES[name]]
        assert len(frame) == len(report[name])  # type: ignore[literal-required]
        for column in time_columns(name):
            assert str(frame[column].dtype) == "datetime64[ns, UTC]", (name, column)
    for n, incident in enumerate(report["incidents"]):
        row = frames.incidents.iloc[n]
        assert row["kind"] == incident["kind"] and row["cause"] == incident["cause"]
        assert row["started_at"] is utc(incident["started_at"]) or row["started_at"] == utc(incident["started_at"])
        kill = incident["kernel_kill"]
        if kill is not None:
            assert row["pid"] == kill["pid"] and row["anon_rss_kb"] == kill["anon_rss_kb"]
            # A kill whose kernel log printed no time (a pasted report) has none.
            if kill["at"] is None:
                assert row["killed_at"] is pd.NaT
            else:
                assert row["killed_at"] == utc(kill["at"])
        if incident["outage_seconds"] is not None:
            assert row["outage_seconds"] == incident["outage_seconds"]
        assert bool(row["still_down"]) is incident["still_down"]
        if incident["down_for_seconds"] is not None:
            assert row["down_for_seconds"] == incident["down_for_seconds"]
    for n, finding in enumerate(report["findings"]):
        row = frames.findings.iloc[n]
        assert (row["id"], row["severity"], row["title"]) == (finding["id"], finding["severity"], finding["title"])
        assert row["confidence"] == finding["confidence"]
        if finding["incident"] is None:
            assert row["incident"] is pd.NA and row["at"] is pd.NaT
        else:
            assert row["incident"] == finding["incident"]
            assert row["at"] == utc(report["incidents"][finding["incident"]]["started_at"])
        if finding["evidence"]:
            first = finding["evidence"][0]
            assert (row["evidence_path"], row["evidence_line"]) == (first["path"], first["line"])
    times = [utc(e["at"]) for e in report["timeline"]]
    assert frames.timeline["at"].isna().tolist() == [t is pd.NaT for t in times]
    assert [t for t in frames.timeline["at"] if t is not pd.NaT] == [t for t in times if t is not pd.NaT]
    assert frames.sources["path"].tolist() == [s["path"] for s in report["sources"]]
    assert frames.sources["bytes"].tolist() == [s["bytes"] for s in report["sources"]]


def test_kernel_times_keep_their_nanoseconds() -> None:
    report = pgmortem.analyze(OOM)
    kill_at = report["incidents"][0]["kernel_kill"]["at"]  # type: ignore[index]
    assert kill_at == "2026-11-24T05:29:29.924706954Z"
    frames = pgmortem.to_pandas(report)
    assert frames.incidents["killed_at"][0].value == 1795498169924706954
    table = pgmortem.to_arrow(report).incidents
    assert table.column("killed_at").cast(pa.int64())[0].as_py() == 1795498169924706954


@pytest.mark.parametrize("bundle", bundles()[:8], ids=lambda p: p.parent.name if p.is_file() else p.name)
def test_arrow_tables_have_the_columns_and_values_of_the_pandas_frames(bundle: Path) -> None:
    report = pgmortem.analyze(bundle)
    frames = pgmortem.to_pandas(report)
    tables = pgmortem.to_arrow(report)
    for (name, frame), (_, table) in zip(frames, tables):
        assert table.column_names == list(frame.columns)
        assert table.num_rows == len(frame)
        for column in _tables.TABLES[name]:
            if column.kind == "timestamp":
                assert table.schema.field(column.name).type == pa.timestamp("ns", tz="UTC")
            if column.kind == "timestamp":
                ours = table.column(column.name).cast(pa.int64()).to_pylist()
                theirs = [None if v is pd.NaT else v.value for v in frame[column.name]]
            else:
                ours = table.column(column.name).to_pylist()
                theirs = [None if pd.isna(v) else v for v in frame[column.name].tolist()]
            assert ours == theirs, (name, column.name)


def test_an_empty_report_gives_empty_typed_tables() -> None:
    report = pgmortem.analyze(FIXTURES / "incidents" / "pg15-memcg-oom-sort")
    report["findings"] = []
    report["incidents"] = []
    frames = pgmortem.to_pandas(report)
    assert len(frames.findings) == 0 and str(frames.findings["at"].dtype) == "datetime64[ns, UTC]"
    assert str(frames.findings["incident"].dtype) == "Int64"
    tables = pgmortem.to_arrow(report)
    assert tables.incidents.num_rows == 0
    assert tables.incidents.schema.field("started_at").type == pa.timestamp("ns", tz="UTC")


@pytest.mark.parametrize(
    "text, ns",
    [
        ("1970-01-01T00:00:00Z", 0),
        ("2026-11-24T05:29:29.924706954Z", 1795498169924706954),
        ("2026-11-24T05:29:29.9Z", 1795498169900000000),
        ("2026-11-24T06:29:29.5+01:00", 1795498169500000000),
        ("2026-11-24T04:59:29-00:30", 1795498169000000000),
        (None, None),
    ],
)
def test_rfc3339_times_become_exact_nanoseconds(text: str | None, ns: int | None) -> None:
    assert _tables.nanoseconds(text) == ns


def test_a_time_that_is_not_rfc3339_is_an_error() -> None:
    with pytest.raises(ValueError, match="not an RFC 3339 time"):
        _tables.nanoseconds("yesterday")


def test_frames_type_check(type_check: Callable[[str], None]) -> None:
    type_check(
        "import pgmortem\n"
        "report = pgmortem.analyze('b')\n"
        "frames = pgmortem.to_pandas(report)\n"
        "tables: pgmortem.Frames[object] = pgmortem.to_arrow(report)\n"
        "for name, frame in frames:\n"
        "    label: str = name\n"
        "print(frames.findings, frames.incidents, frames.timeline, frames.sources)\n"
    )


@pytest.mark.parametrize(
    "code",
    [
        "import pgmortem\npgmortem.to_pandas('bundle.tar.gz')",  # a report, not a path
        "import pgmortem\npgmortem.to_arrow(pgmortem.analyze('b')).no_such_table",
    ],
)
def test_frame_misuses_fail_to_type_check(type_check: Callable[[str], None], code: str) -> None:
    with pytest.raises(AssertionError, match="error:"):
        type_check(code)
