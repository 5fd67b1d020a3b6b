"""pgmortem.analyze on the real captured incidents: the same schema as the CLI's JSON."""

import json
from pathlib import Path

import pytest

import pgmortem


def test_memcg_oom_incident_is_tied_to_the_crash_restart(incidents: Path) -> None:
    report = pgmortem.analyze(incidents / "pg15-memcg-oom-sort")
    assert report["schema"] == "pgmortem.report/v1"
    (incident,) = report["incidents"]
    assert incident["kind"] == "oom_kill"
    kill, crash = incident["kernel_kill"], incident["postgres_crash"]
    assert kill is not None and crash is not None
    assert kill["pid"] == crash["pid"]
    assert kill["constraint"] == "memcg"
    assert kill["memcg"] is not None and kill["memcg"]["limit_kb"] == 307200
    assert crash["signal"] == 9
    assert "generate_series" in (crash["query"] or "")
    assert incident["outage_seconds"] is not None and incident["outage_seconds"] > 0
    assert incident["wal_replayed_bytes"] is not None and incident["wal_replayed_bytes"] > 0
    assert incident["started_at"] is not None and incident["started_at"].endswith("Z")


def test_report_equals_the_cli_json(incidents: Path) -> None:
    path = str(incidents / "pg15-sigkill-backend")
    code, out, err = pgmortem.run_cli(["analyze", "--format", "json", path])
    assert code == 0, err
    from_cli = json.loads(out)
    from_python = pgmortem.analyze(path)
    # Tuples (unrecognized examples) become lists in JSON; compare through JSON.
    assert json.loads(json.dumps(from_python)) == from_cli


def test_sigkill_from_outside_says_no_kernel_report(incidents: Path) -> None:
    report = pgmortem.analyze(incidents / "pg15-sigkill-backend")
    (incident,) = report["incidents"]
    assert incident["kind"] == "crash_restart"
    assert incident["kernel_kill"] is None
    assert any("SIGKILL" in note for note in incident["notes"])


def test_options_are_passed_through(incidents: Path) -> None:
    # Within a second of the bundle's own date - uptime: the given boot time is used.
    report = pgmortem.analyze(incidents / "pg15-memcg-oom-sort", boot_time="2026-11-21T17:07:49Z")
    assert report["clock"]["boot_time_source"] == "option"
    # Seven minutes off: the bundle's anchor is used and the report says why, first.
    report = pgmortem.analyze(incidents / "pg15-memcg-oom-sort", boot_time="2026-11-21T17:00:00Z")
    assert report["clock"]["boot_time_source"] == "date_and_uptime"
    assert report["caveats"][0]["kind"] == "clock_anchors_disagree"
    with pytest.raises(ValueError, match="boot_time"):
        pgmortem.analyze(incidents / "pg15-memcg-oom-sort", boot_time="yesterday")


def test_logs_are_read_whole_unless_a_cap_is_asked_for(incidents: Path) -> None:
    whole = pgmortem.analyze(incidents / "pg15-sigkill-backend", threads=1)
    assert all(c["kind"] != "log_not_read_whole" for c in whole["caveats"])
    capped = pgmortem.analyze(incidents / "pg15-sigkill-backend", max_log_bytes=1024)
    caveat = capped["caveats"][0]
    assert caveat["kind"] == "log_not_read_whole"
    assert caveat["text"].startswith("`postgresql.log`: only its last")
    with pytest.raises(ValueError, match="threads"):
        pgmortem.analyze(incidents / "pg15-sigkill-backend", threads=0)


def test_memory_limit_keeps_the_end_of_a_perf_script_over_half_of_it(
    tmp_path: Path, incidents: Path
) -> None:
    # A real perf script repeated to 17 MB: over half of a 32 MiB budget.
    sample = (incidents.parent / "formats" / "perf" / "local-pg15-pgbench-a-g.txt").read_bytes()
    (tmp_path / "perf").mkdir()
    (tmp_path / "perf" / "perf-script.txt").write_bytes(sample * 33)
    report = pgmortem.analyze(tmp_path, memory_limit=32 << 20)
    (caveat,) = [c for c in report["caveats"] if c["kind"] == "log_not_read_whole"]
    assert caveat["text"].startswith("`perf/perf-script.txt`: only its last 16.0 MiB of 16.3 MiB")
    whole = pgmortem.analyze(tmp_path)
    assert all(c["kind"] != "log_not_read_whole" for c in whole["caveats"])
    with pytest.raises(ValueError, match="memory_limit: at least 32 MiB"):
        pgmortem.analyze(tmp_path, memory_limit=1 << 20)


def test_missing_path_raises_file_not_found(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope"):
        pgmortem.analyze(tmp_path / "nope")


def test_nothing_to_read_raises_instead_of_an_empty_report(tmp_path: Path) -> None:
    (tmp_path / "empty-dir").mkdir()
    (tmp_path / "empty.log").write_bytes(b"")
    (tmp_path / "notes.txt").write_text("call the vendor on Monday\n")
    cases = [
        (tmp_path / "empty-dir", "no file in it"),
        (tmp_path / "empty.log", "1 empty file"),
        (tmp_path / "notes.txt", "1 file of no kind pgmortem knows (notes.txt)"),
        (b"", "1 empty file"),
    ]
    for path, held in cases:
        with pytest.raises(pgmortem.NothingToReadError) as raised:
            pgmortem.analyze(path)
        message = str(raised.value)
        assert f": {held}\n" in message, message
        assert message.startswith("nothing pgmortem can read in ")
        assert "PostgreSQL server logs" in message
    # Content has no path of its own to name.
    with pytest.raises(pgmortem.NothingToReadError, match="^nothing pgmortem can read in the bytes given: "):
        pgmortem.analyze(b"call the vendor\n")
    # A BundleError, so code that caught those before still catches it.
    assert issubclass(pgmortem.NothingToReadError, pgmortem.BundleError)
    with pytest.raises(pgmortem.BundleError):
        pgmortem.analyze(tmp_path / "notes.txt")
    # The CLI in-process says the same and exits 2.
    code, out, err = pgmortem.run_cli(["analyze", str(tmp_path / "notes.txt")])
    assert (code, out) == (2, "")
    assert "nothing pgmortem can read in" in err


def test_analyze_many_gives_nothing_to_read_in_its_place(tmp_path: Path, incidents: Path) -> None:
    (tmp_path / "empty-dir").mkdir()
    results = pgmortem.analyze_many([tmp_path / "empty-dir", incidents / "pg15-sigkill-backend"])
    assert type(results[0]) is pgmortem.NothingToReadError
    assert not isinstance(results[1], Exception)


def test_errors_share_one_base_class() -> None:
    assert issubclass(pgmortem.BundleError, pgmortem.PgmortemError)
    assert issubclass(pgmortem.DiagnoseError, pgmortem.PgmortemError)
    assert issubclass(pgmortem.PgmortemError, Exception)


def test_cli_usage_error_returns_code_two() -> None:
    code, _, err = pgmortem.run_cli(["analyze", "--no-such-flag"])
    assert code == 2
    assert "--no-such-flag" in err


def test_cli_markdown_and_timeline_in_process(incidents: Path) -> None:
    path = str(incidents / "pg15-sigkill-backend")
    code, out, err = pgmortem.run_cli(["analyze", "--format", "markdown", path])
    assert code == 0, err
    assert out.startswith("# pgmortem report\n")
    # Captured output is not a terminal: no colour, no progress.
    code, out, err = pgmortem.run_cli(["analyze", path])
    assert code == 0 and "\x1b" not in out and err == ""
    code, out, err = pgmortem.run_cli(
        ["timeline", "--kind", "terminated_by_signal", "--format", "json", path]
    )
    assert code == 0, err
    (event,) = [json.loads(line) for line in out.splitlines()]
    assert event["kind"] == "terminated_by_signal"
    assert event["at"].endswith("Z")


def test_a_list_of_files_is_one_bundle(incidents: Path) -> None:
    # Two attachments of a ticket: alone, the server log cannot tell an OOM kill; with the
    # kernel log beside it, it can.
    case = incidents / "pg15-memcg-oom-sort"
    alone = pgmortem.analyze(case / "postgresql.log")
    assert [i["kind"] for i in alone["incidents"]] == ["crash_restart"]
    both = pgmortem.analyze([case / "dmesg.txt", str(case / "postgresql.log")])
    assert [i["kind"] for i in both["incidents"]] == ["oom_kill"]
    assert sorted(s["path"] for s in both["sources"]) == ["dmesg.txt", "postgresql.log"]
    code, out, err = pgmortem.run_cli(
        ["analyze", "--format", "json", str(case / "dmesg.txt"), str(case / "postgresql.log")]
    )
    assert code == 0, err
    assert json.loads(json.dumps(both)) == json.loads(out)
    with pytest.raises(ValueError, match="empty list"):
        pgmortem.analyze([])
