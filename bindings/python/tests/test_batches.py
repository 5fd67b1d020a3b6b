"""pgmortem.pg_log_batches / kernel_batches: Arrow record batches built in Rust, equal value for
value to the dict iterators on real logs of every destination, read by pyarrow, polars and
DuckDB, streaming in bounded memory, and bad input raising or counting, never crashing."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import pgmortem
from pgmortem._tables import nanoseconds

pa = pytest.importorskip("pyarrow")

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
PGLOG = FIXTURES / "formats" / "pglog"

# Real captures of each destination and wrapper (fixtures/formats/pglog/SOURCES.md), and the
# hand-written edge case of CRLF, bad bytes and a truncated last line.
LOGS = [
    "pg15-events.log",
    "pg15-events.csv",
    "pg15-events.json",
    "pg16-collector.json",
    "pg15-syslog-rfc3339.syslog",
    "enveloped-docker-json-pg15-backend-sigkill.log",
    "enveloped-cri-pg15-backend-sigkill.log",
    "pg15-fr-sigkill.log",
    "edge-crlf-badbytes-truncated.log",
    "edge-csv-broken-quote.csv",
]

STRINGS = [
    "session_id", "user", "database", "application", "client", "backend_type", "sqlstate",
    "command_tag", "session_start", "vxid", "local_address", "severity", "message", "detail",
    "hint", "context", "statement", "query", "location", "language",
]
INTS = ["line", "end_line", "pid", "session_line", "xid", "leader_pid", "query_id"]


def civil_nanoseconds(civil: str) -> int:
    value = nanoseconds(civil + "Z")
    assert value is not None
    return value


def row_of(record: Any, file: str | None) -> dict[str, Any]:
    """A record dict of parse_pg_log as the row pg_log_batches gives it (times as integer
    nanoseconds, JSON columns decoded)."""
    time = record["time"]
    wrapper = record.get("wrapper_time")
    row = {name: record[name] for name in STRINGS + INTS}
    row.update(
        time_utc=nanoseconds(time["utc"]) if time else None,
        time_civil=civil_nanoseconds(time["civil"]) if time else None,
        time_zone=time["zone"] if time else None,
        event_kind=record["event"]["kind"] if record["event"] else None,
        event=record["event"],
        memory_context_dump=record["memory_context_dump"],
        wrapper_time_utc=nanoseconds(wrapper["utc"]) if wrapper else None,
        file=file,
    )
    return row


def rows_of(table: Any) -> list[dict[str, Any]]:
    """The table's rows with times as integer nanoseconds and the JSON columns decoded."""
    for name in ("time_utc", "time_civil", "wrapper_time_utc"):
        index = table.schema.get_field_index(name)
        table = table.set_column(index, name, table[name].cast(pa.int64()))
    rows: list[dict[str, Any]] = table.to_pylist()
    for row in rows:
        for name in ("event", "memory_context_dump"):
            row[name] = None if row[name] is None else json.loads(row[name])
    return rows


def test_the_schema_is_typed_and_names_the_dict_fields() -> None:
    reader = pgmortem.pg_log_batches(PGLOG / "pg15-events.log")
    schema = reader.schema
    assert schema.field("time_utc").type == pa.timestamp("ns", tz="UTC")
    assert schema.field("time_civil").type == pa.timestamp("ns")
    assert schema.field("pid").type == pa.int64()
    assert schema.field("xid").type == pa.uint64()
    assert schema.field("severity").type == pa.dictionary(pa.int8(), pa.string())
    # Text as string views: the layout polars keeps its strings in (taken without a copy).
    assert schema.field("message").type == pa.string_view() and not schema.field("message").nullable
    assert schema.field("user").type == pa.string_view() and schema.field("user").nullable
    assert schema.field("file").type == pa.dictionary(pa.int8(), pa.string())
    # Every field of the record dict is a column, under its name or its nested names.
    record = next(iter(pgmortem.parse_pg_log(PGLOG / "pg15-events.log")))
    flattened = {"time": "time_utc", "wrapper_time": "wrapper_time_utc"}
    for key in list(pgmortem.PgRecord.__annotations__):
        assert flattened.get(key, key) in schema.names, key
    assert set(record) <= set(pgmortem.PgRecord.__annotations__)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("name", LOGS)
def test_rows_equal_the_dict_iterator(name: str, threads: int) -> None:
    path = PGLOG / name
    # Small batches, so that records cross batch boundaries.
    reader = pgmortem.pg_log_batches(path, batch_rows=7, threads=threads)
    batches = list(reader)
    assert all(b.num_rows <= 7 for b in batches)
    table = pa.Table.from_batches(batches, schema=reader.schema)
    expected = [row_of(r, str(path)) for r in pgmortem.parse_pg_log(path)]
    assert len(expected) > 0
    assert rows_of(table) == expected


def test_several_threads_give_the_rows_of_one_over_many_blocks(tmp_path: Path) -> None:
    # Past the 4 MiB block the threads parse at a time, with a crash cycle, DETAIL and TAB lines
    # and memory-context dumps in every copy: records cross the cuts between blocks and chunks.
    one = (PGLOG / "pg15-events.log").read_bytes()
    big = tmp_path / "big.log"
    big.write_bytes(one * ((10 << 20) // len(one) + 1))
    single = pgmortem.pg_log_stream(big, threads=1)
    parallel = pgmortem.pg_log_stream(big, threads=2, batch_rows=10_000)
    one_thread = pa.RecordBatchReader.from_stream(single).read_all()
    two_threads = pa.RecordBatchReader.from_stream(parallel).read_all()
    assert one_thread.num_rows > 40_000
    assert two_threads.combine_chunks().equals(one_thread.combine_chunks())
    assert parallel.stats() == single.stats()


def test_a_stream_dropped_early_stops_its_threads(tmp_path: Path) -> None:
    one = (PGLOG / "pg15-events.log").read_bytes()
    big = tmp_path / "big.log"
    big.write_bytes(one * ((40 << 20) // len(one) + 1))
    for _ in range(20):
        reader = pgmortem.pg_log_batches(big, threads=2, batch_rows=100)
        assert next(iter(reader)).num_rows == 100
        del reader
    with pytest.raises(pgmortem.OptionError, match="threads"):
        pgmortem.pg_log_batches(big, threads=0)


def test_string_views_reach_pandas_as_python_strings() -> None:
    pytest.importorskip("pandas")
    frame = pgmortem.pg_log_batches(PGLOG / "pg15-events.log").read_all().to_pandas()
    expected = [r["message"] for r in pgmortem.parse_pg_log(PGLOG / "pg15-events.log")]
    assert frame["message"].tolist() == expected
    assert frame["application"].isna().all()


def test_bytes_and_file_objects_give_the_same_rows_without_a_file() -> None:
    path = PGLOG / "pg15-events.csv"
    data = path.read_bytes()
    from_path = pgmortem.pg_log_batches(path).read_all().drop_columns(["file"])
    with path.open("rb") as f:
        from_file = pgmortem.pg_log_batches(f, batch_rows=5).read_all()
    from_bytes = pgmortem.pg_log_batches(data, format="csv").read_all()
    assert from_file["file"].null_count == from_file.num_rows
    assert from_bytes.drop_columns(["file"]).equals(from_path)
    assert from_file.drop_columns(["file"]).equals(from_path)


def test_the_stream_counts_what_the_dict_iterator_counts() -> None:
    path = PGLOG / "edge-crlf-badbytes-truncated.log"
    records = pgmortem.parse_pg_log(path)
    n = sum(1 for _ in records)
    stream = pgmortem.pg_log_stream(path, batch_rows=3)
    table = pa.RecordBatchReader.from_stream(stream).read_all()
    assert table.num_rows == n
    assert stream.stats() == records.stats()
    stats = stream.stats()
    assert stats is not None and stats["stats"]["unrecognized_lines"] == records.stats()["stats"]["unrecognized_lines"]


def test_polars_and_duckdb_read_the_batches() -> None:
    pl = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    path = PGLOG / "pg15-events.json"
    n = sum(1 for _ in pgmortem.parse_pg_log(path))
    frame = pl.from_arrow(pgmortem.pg_log_batches(path))
    assert frame.height == n
    assert frame.schema["time_utc"] == pl.Datetime("ns", "UTC")
    assert frame.schema["severity"] == pl.Categorical
    # polars reads the Arrow PyCapsule stream directly, pyarrow or not.
    assert pl.DataFrame(pgmortem.pg_log_stream(path)).height == n
    kinds = pl.from_arrow(pgmortem.pg_log_batches(path)).filter(pl.col("event_kind").is_not_null())
    assert kinds.height == sum(1 for r in pgmortem.parse_pg_log(path) if r["event"])
    batches = pgmortem.pg_log_batches(path)
    got = duckdb.sql("select severity, count(*) as n from batches group by severity order by n desc").fetchall()
    assert sum(count for _, count in got) == n
    assert dict(got)["LOG"] == sum(1 for r in pgmortem.parse_pg_log(path) if r["severity"] == "LOG")


def test_bad_input_raises_at_the_call_or_counts() -> None:
    with pytest.raises(FileNotFoundError):
        pgmortem.pg_log_batches(PGLOG / "no-such.log")
    with pytest.raises(ValueError):
        pgmortem.pg_log_batches(b"", format="xml")  # type: ignore[arg-type]
    with pytest.raises(pgmortem.OptionError):
        pgmortem.pg_log_batches(b"x\n", batch_rows=0)
    with pytest.raises(pgmortem.PgmortemError, match="fits none"):
        pgmortem.pg_log_batches(PGLOG / "pg15-backend-sigkill.log", prefix="%t <%p> ")
    with pytest.raises(TypeError):
        pgmortem.pg_log_batches(42)  # type: ignore[arg-type]
    stream = pgmortem.pg_log_stream(b"")
    assert pa.RecordBatchReader.from_stream(stream).read_all().num_rows == 0
    with pytest.raises(pgmortem.PgmortemError, match="read once"):
        stream.__arrow_c_stream__()
    # Invalid UTF-8 and garbage: every line counted, nothing raised.
    garbage = bytes(range(256)) * 50 + b"\r\n2026-01-01 00:00:00 UTC [1] LOG:  \xe9t\xe9\n" + b'"unclosed,' * 10
    for fmt in ("auto", "stderr", "csv", "json", "syslog"):
        stream = pgmortem.pg_log_stream(garbage, format=fmt)  # type: ignore[arg-type]
        table = pa.RecordBatchReader.from_stream(stream).read_all()
        records = pgmortem.parse_pg_log(garbage, format=fmt)  # type: ignore[arg-type]
        assert table.num_rows == sum(1 for _ in records)
        assert stream.stats() == records.stats()


def test_a_truncated_compressed_file_ends_the_stream_with_an_error(tmp_path: Path) -> None:
    one = (PGLOG / "pg15-events.log").read_bytes()
    whole = gzip.compress(one * 2000)
    cut = tmp_path / "postgresql.log.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    reader = pgmortem.pg_log_batches(cut, batch_rows=1000)
    with pytest.raises(OSError, match="postgresql.log.gz"):
        for _ in reader:
            pass


BOUNDED = """
import resource, sys
import pgmortem
import pyarrow
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = 0
for batch in pgmortem.pg_log_batches(sys.argv[1]):
    rows += batch.num_rows
grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
print(rows, grown)
"""


def test_a_large_file_streams_in_bounded_memory(tmp_path: Path) -> None:
    one = (PGLOG / "pg15-events.log").read_bytes()
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        for _ in range(200 * 1024 * 1024 // len(one)):
            f.write(one)
    # A process of its own, so that its peak RSS is this read's alone.
    done = subprocess.run([sys.executable, "-c", BOUNDED, str(big)], capture_output=True, text=True, check=True)
    rows, grown_kb = (int(x) for x in done.stdout.split())
    per_copy = sum(1 for _ in pgmortem.parse_pg_log(PGLOG / "pg15-events.log"))
    assert rows == per_copy * (200 * 1024 * 1024 // len(one))
    assert grown_kb < 64 * 1024, f"peak RSS grew by {grown_kb} kB reading a 200 MB log"


def test_kernel_batches_equal_parse_kernel_log(incidents: Path) -> None:
    # Every kernel-log sample: real captures of each form and the hand-written edge cases.
    samples = [p for p in sorted((FIXTURES / "formats" / "kernel").iterdir()) if p.is_file() and p.suffix != ".md"]
    for path in [incidents / "pg15-memcg-oom-sort" / "dmesg.txt", *samples]:
        records = pgmortem.parse_kernel_log(path)
        table = pgmortem.kernel_batches(path, batch_rows=2).read_all()
        # Through JSON, the dicts' tuples are lists.
        assert [json.loads(r) for r in table["record"].to_pylist()] == json.loads(json.dumps(records)), path
        assert len(records) > 0 or path.name != "dmesg.txt"
        assert table["kind"].to_pylist() == [r["kind"] for r in records]
        assert table["line"].to_pylist() == [r["line"] for r in records]
        monotonic = [r["time"]["monotonic_us"] for r in records]
        assert table["time_monotonic_us"].to_pylist() == monotonic
    stream = pgmortem.kernel_stream(incidents / "pg15-memcg-oom-sort" / "dmesg.txt")
    assert stream.stats() == pgmortem.kernel_log_stats(incidents / "pg15-memcg-oom-sort" / "dmesg.txt")
    assert pgmortem.kernel_batches(bytes(range(256)) * 100).read_all().num_rows == len(
        pgmortem.parse_kernel_log(bytes(range(256)) * 100)
    )


def test_timeline_and_findings_batches_are_the_report_tables(incidents: Path) -> None:
    report = pgmortem.analyze(incidents / "pg15-memcg-oom-sort")
    tables = pgmortem.to_arrow(report)
    assert pgmortem.timeline_batches(report).read_all().equals(tables.timeline)
    findings = pgmortem.findings_batches(report).read_all()
    assert findings.equals(tables.findings) and findings.num_rows == len(report["findings"]) > 0
