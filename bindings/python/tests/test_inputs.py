"""One argument convention for every function that takes an input: str or os.PathLike is a
path; bytes, bytearray or memoryview is the content; a binary file object is read; anything
else is a TypeError naming these."""

import gzip
import json
import io
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import pgmortem

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
DMESG = FIXTURES / "incidents" / "pg15-memcg-oom-sort" / "dmesg.txt"
PGLOG = FIXTURES / "formats" / "pglog" / "pg15-events.log"
PERF = FIXTURES / "formats" / "perf" / "local-pg15-pgbench-a-g.txt"
MEMINFO = FIXTURES / "formats" / "system" / "meminfo" / "meminfo.txt"
ARCHIVE = FIXTURES / "formats" / "bundle" / "pg15-collected.tar.gz"

# Every function that takes one input, with a file it reads.
PARSERS: list[tuple[Callable[[Any], Any], Path]] = [
    (pgmortem.parse_kernel_log, DMESG),
    (pgmortem.kernel_log_stats, DMESG),
    (lambda data: list(pgmortem.parse_pg_log(data)), PGLOG),
    (lambda data: list(pgmortem.parse_pgbouncer_log(data)), FIXTURES / "formats" / "pgbouncer" / "pgbouncer-1.18-outage.log"),
    (pgmortem.parse_perf_script, PERF),
    (pgmortem.perf_samples, PERF),
    (pgmortem.collapse_perf, PERF),
    (pgmortem.parse_meminfo, MEMINFO),
    (pgmortem.parse_vmstat, FIXTURES / "formats" / "system" / "vmstat" / "vmstat.txt"),
    (pgmortem.parse_proc_status, FIXTURES / "formats" / "system" / "status" / "postmaster.txt"),
    (pgmortem.parse_smaps_rollup, FIXTURES / "formats" / "system" / "smaps_rollup" / "backend-active.txt"),
    (pgmortem.parse_sysctl, FIXTURES / "formats" / "system" / "sysctl" / "sysctl-vm.txt"),
    (pgmortem.parse_pg_settings, FIXTURES / "formats" / "system" / "pg_settings" / "aligned.txt"),
    (pgmortem.parse_pg_conf, FIXTURES / "formats" / "system" / "postgresql_conf" / "initdb-postgresql.conf"),
]


def forms(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    return {
        "str": str(path),
        "PathLike": path,
        "bytes": data,
        "bytearray": bytearray(data),
        "memoryview": memoryview(data),
        "file object": io.BytesIO(data),
    }


@pytest.mark.parametrize("parse,path", PARSERS)
def test_every_form_of_an_input_gives_the_same_result(parse: Callable[[Any], Any], path: Path) -> None:
    results = {name: parse(value) for name, value in forms(path).items()}
    with path.open("rb") as f:
        results["open file"] = parse(f)
    expected = results["bytes"]
    assert expected, "the fixture gives something"
    for name, result in results.items():
        assert result == expected, name


@pytest.mark.parametrize("parse,path", PARSERS)
def test_anything_else_is_a_type_error_naming_the_accepted_types(parse: Callable[[Any], Any], path: Path) -> None:
    for wrong in (None, 42, ["a"], object()):
        with pytest.raises(TypeError, match=r"path \(str or os.PathLike\).*bytes, bytearray or memoryview.*binary file object"):
            parse(wrong)
    with path.open("r") as text_file, pytest.raises(TypeError, match="binary mode"):
        parse(text_file)


def test_a_str_is_a_path_never_the_content() -> None:
    # The classic mistake: text read in advance. The error says what to do.
    with pytest.raises(OSError, match="pass the content as bytes"):
        pgmortem.parse_kernel_log(DMESG.read_text())
    with pytest.raises(FileNotFoundError, match="pass the content as bytes"):
        pgmortem.parse_pg_log("LOG:  one\nLOG:  two\n")
    with pytest.raises(FileNotFoundError, match="dmesg-none.txt"):
        pgmortem.parse_kernel_log("dmesg-none.txt")


def test_a_compressed_path_is_read_decompressed(tmp_path: Path) -> None:
    compressed = tmp_path / "dmesg.txt.gz"
    compressed.write_bytes(gzip.compress(DMESG.read_bytes()))
    assert pgmortem.parse_kernel_log(compressed) == pgmortem.parse_kernel_log(DMESG)


def test_parse_cgroup_memory_takes_each_file_by_the_convention(tmp_path: Path) -> None:
    limit = tmp_path / "memory.max"
    limit.write_bytes(b"536870912\n")
    as_path = pgmortem.parse_cgroup_memory({"memory.max": limit})
    as_bytes = pgmortem.parse_cgroup_memory({"memory.max": b"536870912\n"})
    as_file = pgmortem.parse_cgroup_memory({"memory.max": io.BytesIO(b"536870912\n")})
    assert as_path == as_bytes == as_file
    assert as_path["limit_bytes"] == 536870912
    with pytest.raises(TypeError, match="memory.max"):
        pgmortem.parse_cgroup_memory({"memory.max": 536870912})


def test_analyze_and_open_bundle_take_a_path_bytes_or_a_file_object() -> None:
    by_path = pgmortem.analyze(ARCHIVE)
    by_bytes = pgmortem.analyze(ARCHIVE.read_bytes())
    with ARCHIVE.open("rb") as f:
        by_file = pgmortem.analyze(f)
    assert by_path == by_bytes == by_file
    listing = pgmortem.open_bundle(memoryview(ARCHIVE.read_bytes()))
    assert listing == pgmortem.open_bundle(str(ARCHIVE))
    with pytest.raises(TypeError, match="binary file object"):
        pgmortem.analyze(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="binary file object"):
        pgmortem.open_bundle(3)  # type: ignore[arg-type]


def test_parse_pg_log_reads_a_file_object_as_it_advances() -> None:
    class Counting(io.BytesIO):
        calls = 0

        def read(self, size: int | None = -1, /) -> bytes:
            Counting.calls += 1
            return super().read(size)

    data = PGLOG.read_bytes() * 64  # several MiB: more than one read
    records = pgmortem.parse_pg_log(Counting(data))
    first = next(records)
    assert first["line"] == 1
    assert Counting.calls == 1, "one chunk read for the first record"
    assert sum(1 for _ in records) + 1 == len(list(pgmortem.parse_pg_log(data)))
    assert Counting.calls > 2


def test_every_analyze_flag_is_a_keyword() -> None:
    incident = FIXTURES / "incidents" / "pg15-memcg-oom-sort"
    code, out, err = pgmortem.run_cli(["analyze", "--format", "json", "--match-tolerance", "0.5", str(incident)])
    assert code == 0, err
    assert json.loads(json.dumps(pgmortem.analyze(incident, match_tolerance=0.5))) == json.loads(out)
    report = pgmortem.analyze(
        incident,
        boot_time="2026-11-21T17:07:49Z",
        host_utc_offset="+00:00",
        prefix=None,
        match_tolerance=60.0,
        max_log_bytes=1 << 30,
        threads=1,
    )
    assert report["schema"] == "pgmortem.report/v1"
    with pytest.raises(ValueError, match="match_tolerance"):
        pgmortem.analyze(incident, match_tolerance=-1.0)


def test_errors_are_one_hierarchy_in_the_pgmortem_module() -> None:
    for cls in (
        pgmortem.BundleError,
        pgmortem.NothingToReadError,
        pgmortem.DiagnoseError,
        pgmortem.ParseError,
        pgmortem.OptionError,
    ):
        assert issubclass(cls, pgmortem.PgmortemError)
        assert cls.__module__ == "pgmortem"
        assert getattr(pgmortem, cls.__name__) is cls
    assert pgmortem.PgmortemError.__module__ == "pgmortem"
    assert issubclass(pgmortem.OptionError, ValueError)
    with pytest.raises(pgmortem.OptionError) as raised:
        pgmortem.analyze(ARCHIVE, boot_time="yesterday")
    assert type(raised.value).__module__ == "pgmortem"
    again = pickle.loads(pickle.dumps(raised.value))
    assert type(again) is pgmortem.OptionError and str(again) == str(raised.value)
    with pytest.raises(pgmortem.ParseError, match="fits none"):
        next(pgmortem.parse_pg_log(PGLOG, prefix="%t <%p> "))
    with pytest.raises(pgmortem.OptionError):
        pgmortem.parse_pg_log(b"", format="xml")  # type: ignore[arg-type]
