"""pgmortem.parse_kernel_log on real kernel logs and on bad input."""

from pathlib import Path

import pgmortem


def test_oom_report_from_bytes_and_from_a_path_are_the_same(incidents: Path) -> None:
    path = incidents / "pg15-memcg-oom-sort" / "dmesg.txt"
    data = path.read_bytes()
    from_bytes = pgmortem.parse_kernel_log(data)
    assert pgmortem.parse_kernel_log(path) == from_bytes
    assert pgmortem.parse_kernel_log(str(path)) == from_bytes
    ooms = [r for r in from_bytes if r["kind"] == "oom_report"]
    assert len(ooms) == 1
    oom = ooms[0]
    victim = oom["victim"]
    assert victim["comm"] == "postgres"
    assert victim["anon_rss_kb"] > 200000
    assert oom["constraint"] == "memcg"
    assert oom["tasks"], "the task table was read"
    assert oom["trigger"]["comm"] == "postgres"


def test_stats_count_every_line(incidents: Path) -> None:
    data = (incidents / "pg15-memcg-oom-sort" / "dmesg.txt").read_bytes()
    stats = pgmortem.kernel_log_stats(data)
    assert stats["lines"] == len(data.splitlines())
    assert stats["unrecognized_lines"] == 0


def test_bad_bytes_never_raise() -> None:
    garbage = bytes(range(256)) * 100 + b"\n\xff invoked oom-killer: \x00\n"
    records = pgmortem.parse_kernel_log(garbage)
    assert isinstance(records, list)
    assert pgmortem.kernel_log_stats(b"")["lines"] == 0
