"""pgmortem.parse_pg_log on real PostgreSQL logs: every destination, languages, streaming."""

import gzip
from collections import Counter
import resource
from pathlib import Path

import pytest

import pgmortem

PGLOG = Path(__file__).resolve().parents[3] / "fixtures" / "formats" / "pglog"


def kinds(records: list[dict[str, object]]) -> list[str]:
    return [r["event"]["kind"] for r in records if r["event"]]  # type: ignore[index]


def test_the_three_destinations_give_the_same_events() -> None:
    by_format = {
        ext: list(pgmortem.parse_pg_log(PGLOG / f"pg15-events.{ext}")) for ext in ("log", "csv", "json")
    }
    assert kinds(by_format["log"]) == kinds(by_format["csv"]) == kinds(by_format["json"])
    oom = next(r for r in by_format["log"] if r["event"] and r["event"]["kind"] == "out_of_memory")  # type: ignore[index]
    assert oom["event"] == {
        "kind": "out_of_memory",
        "request_bytes": 1000000004,
        "memory_context": "MessageContext",
    }
    dump = oom["memory_context_dump"]
    assert dump["grand_total"]["used_bytes"] > 1_000_000_000  # type: ignore[index]
    assert "too_many_clients" in kinds(by_format["json"])


def test_path_and_bytes_agree_and_stats_count_lines() -> None:
    path = PGLOG / "pg15-syslog-rfc3339.syslog"
    records = pgmortem.parse_pg_log(str(path))
    from_path = list(records)
    from_bytes = list(pgmortem.parse_pg_log(path.read_bytes(), format="syslog"))
    assert from_path == from_bytes
    stats = records.stats()
    assert stats["format"] == "syslog"
    assert stats["stats"]["lines"] == len(path.read_bytes().splitlines())
    assert stats["stats"]["unrecognized_lines"] == 0
    assert stats["events"] == dict(Counter(kinds(from_path)))
    assert stats["events"]["terminated_by_signal"] == 1
    assert stats["prefix_choice"] is not None
    assert stats["prefix_choice"]["method"] == "candidate"
    assert stats["prefix_choice"]["lines_fitting"] > 0


def test_stats_say_how_a_learned_prefix_was_chosen_and_count_languages() -> None:
    records = pgmortem.parse_pg_log(PGLOG / "pg15-prefix-pipes.log")
    assert sum(1 for _ in records) > 0
    stats = records.stats()
    assert stats["prefix"] == "%m|%p|%c|%l|%e|%u|%d|%a| "
    assert stats["prefix_choice"] == {"method": "inferred", "lines_tried": 30, "lines_fitting": 30}
    french = pgmortem.parse_pg_log(PGLOG / "pg15-fr-sigkill.log")
    n = sum(1 for r in french if r["language"] == "fr")
    assert french.stats()["languages"] == {"fr": n}


def test_a_gzip_compressed_path_reads_like_the_plain_file(tmp_path: Path) -> None:
    plain = PGLOG / "pg15-events.log"
    compressed = tmp_path / "postgresql.log.1.gz"
    compressed.write_bytes(gzip.compress(plain.read_bytes()))
    assert list(pgmortem.parse_pg_log(compressed)) == list(pgmortem.parse_pg_log(plain))


def test_a_french_log_reads_as_english() -> None:
    records = list(pgmortem.parse_pg_log(PGLOG / "pg15-fr-sigkill.log"))
    crash = next(r for r in records if r["event"] and r["event"]["kind"] == "terminated_by_signal")  # type: ignore[index]
    assert crash["event"]["signal"] == 9  # type: ignore[index]
    assert crash["language"] == "fr"
    assert "ready" in kinds(records)


def test_errors() -> None:
    with pytest.raises(FileNotFoundError):
        next(pgmortem.parse_pg_log(PGLOG / "no-such.log"))
    with pytest.raises(ValueError):
        pgmortem.parse_pg_log(b"", format="xml")
    with pytest.raises(ValueError):
        next(pgmortem.parse_pg_log(b"x\n", prefix="%Z"))
    with pytest.raises(pgmortem.PgmortemError, match="fits none"):
        next(pgmortem.parse_pg_log(PGLOG / "pg15-backend-sigkill.log", prefix="%t <%p> "))


def test_bad_bytes_never_raise() -> None:
    garbage = bytes(range(256)) * 50 + b"\r\n\x00LOG:  \xe9t\xe9\n" + b"\"unclosed," * 10
    for fmt in ("auto", "stderr", "csv", "json", "syslog"):
        records = pgmortem.parse_pg_log(garbage, format=fmt)  # type: ignore[arg-type]
        list(records)
        assert records.stats()["stats"]["lines"] >= 1


def test_a_large_file_streams_in_bounded_memory(tmp_path: Path) -> None:
    one = (PGLOG / "pg15-events.log").read_bytes()
    big = tmp_path / "big.log"
    with big.open("wb") as f:
        for _ in range(80 * 1024 * 1024 // len(one)):
            f.write(one)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    records = pgmortem.parse_pg_log(big)
    n = sum(1 for _ in records)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert n == records.stats()["stats"]["records"] > 100_000
    assert grown_kb < 40 * 1024, f"peak RSS grew by {grown_kb} kB for an 80 MB log"
