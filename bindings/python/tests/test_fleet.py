"""pgmortem.fleet and `pgmortem fleet`: many bundles on Dask distributed into a Parquet dataset
whose rows are those of pgmortem.analyze, bundle by bundle, failures included."""

from __future__ import annotations

import datetime
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import pgmortem
from pgmortem import _tables, fleet

pytest.importorskip("distributed")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
COPIES = 4


def corpus() -> list[Path]:
    """One bundle per incident fixture (its archive when it has one) and the collected archive."""
    found = []
    for incident in sorted((FIXTURES / "incidents").iterdir()):
        archives = sorted(incident.glob("*.tar.*"))
        found.append(archives[0] if archives else incident)
    return found + [FIXTURES / "formats" / "bundle" / "pg15-collected.tar.gz"]


def fleet_of(directory: Path, copies: int = COPIES) -> dict[str, Path]:
    """Symlinks to the corpus under varied names: link name → original."""
    directory.mkdir()
    links = {}
    for k in range(copies):
        for original in corpus():
            name = original.parent.name if original.is_file() else original.name
            link = directory / (f"db{k:02d}-{name}" + (".tar.gz" if original.is_file() else ""))
            link.symlink_to(original)
            links[str(link)] = original
    return links


def micro(text: str | None) -> datetime.datetime | None:
    """An RFC 3339 time as the dataset stores it: UTC, to the microsecond."""
    ns = _tables.nanoseconds(text)
    if ns is None:
        return None
    return datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(microseconds=ns // 1000)


def read(dataset: Path, table: str) -> list[dict[str, Any]]:
    files = sorted((dataset / table).glob("part-*.parquet"))
    rows: list[dict[str, Any]] = []
    for file in files:
        rows.extend(pq.read_table(file).to_pylist())
    return rows


def test_a_local_cluster_writes_the_rows_analyze_gives_for_every_bundle(tmp_path: Path) -> None:
    links = fleet_of(tmp_path / "bundles")
    garbage = tmp_path / "bundles" / "db99-garbage.tar.gz"
    garbage.write_bytes(bytes([0x1F, 0x8B, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
    missing = str(tmp_path / "no-such-bundle.tar.gz")
    assert len(links) >= 100
    out = tmp_path / "dataset"
    summary = fleet.analyze([str(tmp_path / "bundles" / "*"), missing, str(tmp_path / "nothing-*.tar.gz")], out, workers=2)
    bundles = len(links) + 3
    assert (summary.bundles, summary.failed, summary.workers) == (bundles, 3, 2)

    # Several Parquet files per table, each with the table's schema (times: UTC microseconds).
    for table in fleet.TABLES:
        files = sorted((out / table).glob("part-*.parquet"))
        assert len(files) == summary.files[table] >= 4
        for file in files:
            schema = pq.read_schema(file)
            assert schema.names == [c.name for c in fleet.TABLES[table]]
            for column in fleet.TABLES[table]:
                if column.kind == "timestamp":
                    assert schema.field(column.name).type == pa.timestamp("us", tz="UTC")
        assert summary.rows[table] == len(read(out, table))
    assert not list(out.rglob(".*.tmp"))

    reports = {original: pgmortem.analyze(original) for original in corpus()}
    findings = read(out, "findings")
    incidents = read(out, "incidents")
    sources = read(out, "sources")
    assert set(Counter(r["bundle"] for r in sources)) == set(links) | {str(garbage), missing, str(tmp_path / "nothing-*.tar.gz")}

    for link, original in links.items():
        report = reports[original]
        host = report["collection"]["hostname"]
        starts = [micro(i["started_at"]) for i in report["incidents"]]
        want_findings = [
            {
                "bundle": link,
                "host": host,
                "id": f["id"],
                "severity": f["severity"],
                "title": f["title"],
                "incident": f["incident"],
                "at": None if f["incident"] is None else starts[f["incident"]],
                "evidence_path": f["evidence"][0]["path"] if f["evidence"] else None,
                "evidence_line": f["evidence"][0]["line"] if f["evidence"] else None,
            }
            for f in report["findings"]
        ]
        got_findings = [{k: r[k] for k in want_findings[0]} for r in findings if r["bundle"] == link] if want_findings else []
        assert got_findings == want_findings, link
        want_incidents = [
            {
                "bundle": link,
                "host": host,
                "kind": i["kind"],
                "cause": i["cause"],
                "pid": (i["kernel_kill"] or i["postgres_crash"] or {"pid": None})["pid"],
                "started_at": micro(i["started_at"]),
                "outage_seconds": i["outage_seconds"],
            }
            for i in report["incidents"]
        ]
        got_incidents = [{k: r[k] for k in want_incidents[0]} for r in incidents if r["bundle"] == link] if want_incidents else []
        assert got_incidents == want_incidents, link
        got_sources = [(r["path"], r["kind"], r["bytes"], r["error"]) for r in sources if r["bundle"] == link]
        assert got_sources == [(s["path"], s["kind"], s["bytes"], None) for s in report["sources"]], link

    failed = {r["bundle"]: r for r in sources if r["error"] is not None}
    assert set(failed) == {str(garbage), missing, str(tmp_path / "nothing-*.tar.gz")}
    assert failed[missing]["error_type"] == "FileNotFoundError"
    assert failed[str(garbage)]["error_type"] == "BundleError"
    assert "no bundle matches" in failed[str(tmp_path / "nothing-*.tar.gz")]["error"]
    assert all(r["path"] is None and r["host"] is None for r in failed.values())


def test_the_dataset_answers_duckdb(tmp_path: Path) -> None:
    duckdb = pytest.importorskip("duckdb")
    out = tmp_path / "dataset"
    fleet.analyze(str(FIXTURES / "incidents" / "*" / "*.tar.gz"), out, workers=1, processes=False)
    rows = duckdb.sql(
        f"SELECT id, count(*) FROM read_parquet('{out}/findings/*.parquet') "
        "WHERE id IN ('thp-always', 'oom-kill-crash-restart') GROUP BY id ORDER BY id"
    ).fetchall()
    # The OOM kills of pg10-, pg15-, pg18-memcg-oom-work-mem, pg15-memcg-oom-host-vm,
    # pg15-two-clusters-own-oom and pg15-two-clusters-listed-own-oom; the THP captures
    # pg15-thp-always-hugepages-try and -compaction-perf.
    assert rows == [("oom-kill-crash-restart", 6), ("thp-always", 2)]
    kinds = duckdb.sql(f"SELECT DISTINCT typeof(started_at) FROM read_parquet('{out}/incidents/*.parquet')").fetchall()
    assert kinds == [("TIMESTAMP WITH TIME ZONE",)]


def test_a_client_passed_in_is_used_and_left_open(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        with Client(cluster) as client:
            summary = fleet.analyze(str(FIXTURES / "incidents" / "pg15-*" / "*.tar.gz"), tmp_path / "d", client=client, batch_size=3)
            assert summary.workers == 2 and summary.failed == 0
            assert summary.files["findings"] == -(-summary.bundles // 3)
            assert client.status == "running"


def test_a_batch_whose_task_fails_is_run_again_bundle_by_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The task itself fails (as when its worker dies) for one bundle: only that bundle is lost,
    # as an error row; the others of its batch are analyzed.
    analyze_one = fleet._analyze_one

    def poisoned(bundle: str, options: dict[str, Any]) -> Any:
        # One bundle by its directory's name: the glob below matches other sigkill captures too.
        if str(bundle).rstrip("/").endswith("/pg15-sigkill-backend"):
            raise MemoryError("worker ran out of memory")
        return analyze_one(bundle, options)

    monkeypatch.setattr(fleet, "_analyze_one", poisoned)
    incidents = FIXTURES / "incidents"
    bundles = [incidents / "pg15-memcg-oom-sort", incidents / "pg15-sigkill-backend", str(incidents / "pg15-s*" / "*.tar.gz")]
    summary = fleet.analyze(bundles, tmp_path / "d", workers=1, processes=False, batch_size=100)
    assert summary.failed == 1 and summary.files["sources"] == summary.bundles
    errors = [r for r in read(tmp_path / "d", "sources") if r["error"] is not None]
    assert [(Path(r["bundle"]).name, r["error_type"]) for r in errors] == [("pg15-sigkill-backend", "MemoryError")]
    assert len({r["bundle"] for r in read(tmp_path / "d", "sources")}) == summary.bundles


def test_an_existing_dataset_is_kept_unless_overwrite(tmp_path: Path) -> None:
    pattern = str(FIXTURES / "incidents" / "pg17-*" / "*.tar.gz")
    fleet.analyze(pattern, tmp_path / "d", workers=1, processes=False)
    with pytest.raises(FileExistsError, match="overwrite"):
        fleet.analyze(pattern, tmp_path / "d", workers=1, processes=False)
    summary = fleet.analyze(pattern, tmp_path / "d", workers=1, processes=False, overwrite=True)
    assert len(read(tmp_path / "d", "findings")) == summary.rows["findings"]


def test_expand_keeps_the_order_and_unmatched_patterns() -> None:
    incidents = FIXTURES / "incidents"
    got = fleet.expand([str(incidents / "pg1[78]-*"), incidents / "nope", str(incidents / "zz*")])
    assert [Path(p).name for p in got] == ["pg17-segfault-backend", "pg18-memcg-oom-work-mem", "nope", "zz*"]
    assert fleet.expand(str(incidents / "pg17-*")) == [str(incidents / "pg17-segfault-backend")]


def console_script() -> str:
    script = Path(sys.executable).with_name("pgmortem")
    found = str(script) if script.exists() else shutil.which("pgmortem")
    if found is None:
        pytest.skip("the pgmortem console script is not installed")
    return found


def test_the_console_script_runs_fleet(tmp_path: Path) -> None:
    done = subprocess.run([console_script(), "fleet", "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "--scheduler" in done.stdout and "DATASET" in done.stdout
    pattern = FIXTURES / "incidents" / "pg15-s*" / "*.tar.gz"
    matched = sorted(pattern.parent.parent.glob(f"{pattern.parent.name}/{pattern.name}"))
    assert len(matched) >= 2
    args = [console_script(), "fleet", str(pattern), "-o", str(tmp_path / "d")]
    done = subprocess.run(args + ["--workers", "1", "--no-processes"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"pgmortem fleet: {len(matched)} bundles (0 failed)"), done.stdout
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 2 and "overwrite" in done.stderr
    done = subprocess.run(args + ["--scheduler", "tcp://127.0.0.1:1", "--workers", "2"], capture_output=True, text=True)
    assert done.returncode == 2 and "--scheduler" in done.stderr


def test_a_missing_dask_is_named(tmp_path: Path) -> None:
    code = (
        "import sys; sys.modules['distributed'] = None\n"
        "import pgmortem.fleet\n"
        f"try:\n    pgmortem.fleet.analyze('x', {str(tmp_path)!r})\nexcept ImportError as e:\n    print(e)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ})
    assert done.returncode == 0, done.stderr
    assert "pip install 'pgmortem[fleet]'" in done.stdout


def test_the_docs_name_every_column() -> None:
    root = Path(__file__).resolve().parents[3]
    fleet_md = (root / "docs" / "fleet.md").read_text()
    python_md = (root / "docs" / "python.md").read_text()
    for table, columns in fleet.TABLES.items():
        for column in columns:
            assert f"`{column.name}`" in fleet_md, (table, column.name)
    for table, columns in _tables.TABLES.items():
        for column in columns:
            assert f"`{column.name}`" in python_md, (table, column.name)


def test_the_wheels_command_line_is_the_rust_one_with_fleet(tmp_path: Path) -> None:
    # Listed, described, and its arguments parsed as analyze's are: sizes such as 256MiB.
    done = subprocess.run([console_script(), "--help"], capture_output=True, text=True)
    assert done.returncode == 0 and "\n  fleet " in done.stdout, done.stdout
    for args in (["help", "fleet"], ["fleet", "--help"]):
        done = subprocess.run([console_script(), *args], capture_output=True, text=True)
        assert done.returncode == 0, (args, done.stderr)
        assert "Usage: pgmortem fleet [OPTIONS] --output <DATASET> <GLOB>..." in done.stdout
        assert "--memory-limit <SIZE>" in done.stdout
    # One bundle, one worker, one file per table: said in the singular.
    bundle = FIXTURES / "incidents" / "pg15-sigkill-backend"
    args = [str(bundle), "-o", str(tmp_path / "d"), "--workers", "1", "--no-processes", "--batch-size", "1"]
    code, out, err = pgmortem.run_cli(["fleet", *args, "--memory-limit", "256MiB", "--max-log-bytes", "200MiB"])
    assert code == 0, err
    assert out.startswith("pgmortem fleet: 1 bundle (0 failed) in "), out
    assert " on 1 worker (" in out and " row in 1 file, " in out and " files" not in out, out
    # The same refusals as analyze's, in the same words.
    for bad in (["--memory-limit", "1MiB"], ["--memory-limit", "lots"], ["--threads", "0"]):
        code, out, err = pgmortem.run_cli(["fleet", *args, "--overwrite", *bad])
        _, _, analyze_err = pgmortem.run_cli(["analyze", str(bundle), *bad])
        assert code == 2 and out == "", bad
        said = analyze_err.splitlines()[0].split("for '")[-1]
        assert said in err, (bad, err, analyze_err)
    # An existing dataset: the flag to pass, in the command line's words.
    code, _, err = pgmortem.run_cli(["fleet", *args])
    assert code == 2 and "--overwrite replaces them" in err, err
    # fleet.main is the same command.
    assert fleet.main([*args, "--overwrite", "--quiet"]) == 0


def test_the_fleet_summary_says_plurals_right(tmp_path: Path) -> None:
    pattern = FIXTURES / "incidents" / "pg15-s*" / "*.tar.gz"
    code, out, err = pgmortem.run_cli(
        ["fleet", str(pattern), "-o", str(tmp_path / "d"), "--workers", "1", "--no-processes", "--batch-size", "64"]
    )
    assert code == 0, err
    assert " bundles (0 failed)" in out and " on 1 worker (" in out and " rows in 1 file," in out, out
