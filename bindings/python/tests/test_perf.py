"""pgmortem.parse_perf_script, perf_samples and collapse_perf on the real perf captures."""

from collections.abc import Callable
import gzip
from pathlib import Path

import pytest

import pgmortem

PERF = Path(__file__).resolve().parents[3] / "fixtures" / "formats" / "perf"


def test_profile_of_a_real_capture() -> None:
    data = (PERF / "local-pg15-pgbench-multi-g.txt").read_bytes()
    profile = pgmortem.parse_perf_script(data)
    assert profile["stats"]["lines"] == len(data.splitlines())
    assert profile["stats"]["unrecognized_lines"] == 0
    assert [e["event"] for e in profile["events"]] == ["cpu-clock", "cpu-migrations"]
    assert profile["event"] == "cpu-clock"
    assert 0.0 < profile["kernel_share"] < 1.0
    assert abs(profile["kernel_share"] + profile["user_share"] + profile["no_frame_share"] - 1.0) < 1e-9
    comms = {g["name"] for g in profile["by_comm"]}
    assert {"postgres", "pgbench"} <= comms
    assert profile["top_self"][0]["weight"] >= profile["top_self"][-1]["weight"]
    assert sum(b["samples"] for b in profile["timeline"]) == profile["samples"]
    assert {q["name"] for q in profile["stack_queries"]} >= {"thp_compaction", "audit", "snapshot_contention"}


def test_a_path_and_bytes_give_the_same_profile() -> None:
    data = (PERF / "local-pg15-pgbench-a-header.txt").read_bytes()
    assert pgmortem.parse_perf_script(data) == pgmortem.parse_perf_script(PERF / "local-pg15-pgbench-a-header.txt")
    profile = pgmortem.parse_perf_script(data)
    header = dict(profile["header"]["entries"])
    assert header["hostname"] == "dbhost"
    assert profile["cpus"] == 2


def test_custom_stack_query_and_event() -> None:
    data = (PERF / "edge-kvm-exit-multi.txt").read_bytes()
    profile = pgmortem.parse_perf_script(data, queries={"compaction": ["compact*", "*_compact"]})
    query = next(q for q in profile["stack_queries"] if q["name"] == "compaction")
    assert query["samples"] == 1
    assert query["share"] == pytest.approx(1 / 3)
    kvm = pgmortem.parse_perf_script(data, event="kvm:kvm_exit")
    assert kvm["event"] == "kvm:kvm_exit"
    assert kvm["kvm_exit_reasons"][0] == {"reason": "PAUSE_INSTRUCTION", "samples": 2}


def test_samples_of_a_tracepoint_capture() -> None:
    data = gzip.decompress((PERF / "local-pg15-pgbench-sched-switch-g.txt.gz").read_bytes())
    samples = pgmortem.perf_samples(data)
    first = samples[0]
    assert first["event"] == "sched:sched_switch"
    assert first["period"] is None
    assert first["trace"] is not None and "==> next_comm=" in first["trace"]
    assert first["frames"][0]["address"].startswith("0x")


def test_collapse_perf_matches_inferno() -> None:
    data = (PERF / "local-pg15-pgbench-a-g.txt").read_bytes()
    assert pgmortem.collapse_perf(data) == (PERF / "local-pg15-pgbench-a-g.folded").read_text()
    assert pgmortem.collapse_perf(data, tid=True, addrs=True, kernel=True) == (
        PERF / "local-pg15-pgbench-a-g.tid-addrs-kernel.folded"
    ).read_text()
    assert pgmortem.collapse_perf(data, event_filter="cycles") == ""


def test_collapse_perf_says_it_left_out_the_samples_of_exited_tasks() -> None:
    # Two samples of a task that had exited (`:-1    -1`) cut from a real capture: left out,
    # as inferno-collapse-perf does, and said.
    data = (PERF / "local-long-capture-exited.txt").read_bytes()
    with pytest.warns(RuntimeWarning, match="2 samples of tasks that had exited"):
        folded = pgmortem.collapse_perf(data)
    assert folded == (PERF / "local-long-capture-exited.folded").read_text()


def test_bad_bytes_never_raise() -> None:
    garbage = bytes(range(256)) * 50 + b"\npostgres 1 [000] 1.0: cpu-clock: \n\t\xff (x\n"
    profile = pgmortem.parse_perf_script(garbage)
    assert profile["stats"]["unrecognized_lines"] > 0
    assert isinstance(pgmortem.collapse_perf(garbage), str)
    assert pgmortem.parse_perf_script(b"")["samples"] == 0


PERF_USAGE = """
import pgmortem

profile: pgmortem.PerfProfile = pgmortem.parse_perf_script(b"", queries={"audit": ["audit_*"]})
share: float = profile["kernel_share"]
for function in profile["top_self"]:
    symbol: str = function["symbol"]
folded: str = pgmortem.collapse_perf(b"", tid=True, event_filter="cpu-clock")
for sample in pgmortem.perf_samples(b""):
    period: int | None = sample["period"]
    for frame in sample["frames"]:
        dso: str = frame["dso"]
"""


def test_perf_stubs_type_check(type_check: Callable[[str], None]) -> None:
    type_check(PERF_USAGE)
