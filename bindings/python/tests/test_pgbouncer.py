"""pgmortem.parse_pgbouncer_log on real pgbouncer logs (the log file, syslog and the journal of one
recorded run, pgBadger's samples), and what an analysis says clients saw through pgbouncer."""

import gzip
from collections import Counter
from pathlib import Path

import pytest

import pgmortem

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
PGBOUNCER = FIXTURES / "formats" / "pgbouncer"
INCIDENT = FIXTURES / "incidents" / "pg15-pgbouncer-server-down"


def kinds(records: list[pgmortem.BouncerRecord]) -> list[str]:
    return [r["event"]["kind"] for r in records if r["event"]]


def test_the_log_file_and_the_journal_of_one_run_give_the_same_records() -> None:
    from_file = list(pgmortem.parse_pgbouncer_log(PGBOUNCER / "pgbouncer-1.18-outage.log"))
    journal = pgmortem.parse_pgbouncer_log(PGBOUNCER / "pgbouncer-1.18-journal.json")
    from_journal = list(journal)
    assert len(from_file) == len(from_journal) == 752
    assert [(r["connection"], r["message"], r["event"]) for r in from_file] == [
        (r["connection"], r["message"], r["event"]) for r in from_journal
    ]
    stats = journal.stats()
    assert stats["form"] == "journal_json"
    assert stats["other_program_lines"] == 2
    assert stats["events"] == dict(Counter(kinds(from_journal)))
    assert stats["pooler_errors"]["max_client_conn"] == 26
    refused = next(r for r in from_file if r["event"] and r["event"]["kind"] == "pooler_error")
    assert refused["level"] == "WARNING"
    assert refused["connection"] is not None and refused["connection"]["side"] == "client"


def test_syslog_stamps_take_the_year_given() -> None:
    path = PGBOUNCER / "pgbouncer-1.18-syslog-traditional.syslog"
    without = next(pgmortem.parse_pgbouncer_log(path))
    assert without["time"] is None and without["level"] is None
    first = next(pgmortem.parse_pgbouncer_log(path, form="syslog", year=2026))
    assert first["time"] is not None and first["time"]["civil"].startswith("2026-11-28T")


def test_a_gzip_sample_and_bytes_read_the_same() -> None:
    path = PGBOUNCER / "pgbadger-pgbouncer-1.21.log.gz"
    records = pgmortem.parse_pgbouncer_log(path)
    n = sum(1 for _ in records)
    assert n == 100_000
    assert records.stats()["stats"]["unrecognized_lines"] == 0
    data = gzip.decompress(path.read_bytes())[:200_000]
    assert list(pgmortem.parse_pgbouncer_log(data))[:10] == list(pgmortem.parse_pgbouncer_log(path))[:10]


def test_errors_and_bad_bytes() -> None:
    with pytest.raises(FileNotFoundError):
        pgmortem.parse_pgbouncer_log(PGBOUNCER / "no-such.log")
    with pytest.raises(ValueError):
        pgmortem.parse_pgbouncer_log(b"", form="xml")  # type: ignore[arg-type]
    garbage = bytes(range(256)) * 50 + b"\r\n\x00LOG \xe9t\xe9\n"
    records = pgmortem.parse_pgbouncer_log(garbage)
    assert list(records) == []
    assert records.stats()["stats"]["unrecognized_lines"] >= 1


def test_an_analysis_says_what_clients_saw() -> None:
    report = pgmortem.analyze(INCIDENT)
    (incident,) = report["incidents"]
    saw = incident["clients_saw"]
    assert saw["client_errors"] == 55
    assert saw["problems"][0]["cause"] == "server_refused"
    assert saw["from"] < saw["to"]
    (pooler,) = report["pooler"]
    assert pooler["version"] == "1.18.0"
    assert pooler["client_errors"] == 192
    # A bundle without a pgbouncer log has neither key.
    plain = pgmortem.analyze(FIXTURES / "incidents" / "pg15-sigkill-backend")
    assert "pooler" not in plain
    assert "clients_saw" not in plain["incidents"][0]
