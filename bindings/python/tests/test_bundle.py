"""Bundles and system snapshots from Python, over the real fixtures."""

from collections.abc import Callable
import tarfile
from pathlib import Path

import pytest

import pgmortem

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
SYSTEM = FIXTURES / "formats" / "system"
ARCHIVE = FIXTURES / "formats" / "bundle" / "pg15-collected.tar.gz"


def archive_members() -> list[str]:
    with tarfile.open(ARCHIVE) as tar:
        return [m.name.split("/", 1)[1] for m in tar.getmembers() if m.isfile()]


def test_open_bundle_lists_every_file_of_the_collected_archive() -> None:
    listing = pgmortem.open_bundle(ARCHIVE)
    by_path = {s["path"]: s for s in listing["sources"]}
    assert sorted(by_path) == sorted(archive_members())
    meminfo = by_path["memory/meminfo.txt"]
    assert meminfo["kind"] == "meminfo"
    assert meminfo["recognized_by"] == "manifest"
    assert meminfo["bytes"] > 1000
    stats = meminfo["stats"]
    assert stats is not None and stats["records"] == 54 and stats["unrecognized_lines"] == 0
    assert by_path["postgres/server.log"]["stats"] is None  # logs are counted by analyze
    # Kept for a person to read: listed as such (by its path; the manifest says unknown).
    assert by_path["processes/ps.txt"]["kind"] == "reference"
    assert by_path["processes/ps.txt"]["recognized_by"] == "path"
    manifest = listing["manifest"]
    assert manifest is not None and manifest["format"] == "pgmortem.bundle"
    assert manifest["uid"] == 0
    # Items the collector could not collect are listed with what it recorded.
    skipped = {s["path"]: s["reason"] for s in listing["skipped"]}
    assert skipped["audit/status.txt"] == (
        "not in the bundle: `auditctl -s` exited with status 127 (tool missing: auditctl)"
    )


def test_open_bundle_notes_and_limits(tmp_path: Path) -> None:
    (tmp_path / "meminfo").write_bytes((FIXTURES / "incidents" / "pg15-memcg-oom-sort" / "dmesg.txt").read_bytes())
    (tmp_path / "uptime").write_bytes(b"")
    (tmp_path / "big.log").write_bytes(b"".join(b"line %05d\n" % i for i in range(1000)))
    listing = pgmortem.open_bundle(tmp_path, max_file_bytes=4096)
    by_path = {s["path"]: s for s in listing["sources"]}
    assert by_path["meminfo"]["kind"] == "kernel_log"
    assert by_path["meminfo"]["recognized_by"] == "content"
    assert (by_path["meminfo"]["note"] or "").startswith("its path says meminfo")
    assert by_path["uptime"]["note"] == "empty file"
    # Over the limit: the end is kept, and the note says how much of what.
    big = by_path["big.log"]
    assert big["bytes"] <= 4096
    assert (big["note"] or "").startswith("only its last 4.0 KiB of 10.7 KiB were read")
    assert listing["skipped"] == []


def test_open_bundle_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="nope"):
        pgmortem.open_bundle(tmp_path / "nope")
    # A cut archive keeps what came before the cut and says where it stopped.
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(ARCHIVE.read_bytes()[:300])
    listing = pgmortem.open_bundle(cut)
    reasons = {s["path"]: s["reason"] for s in listing["skipped"]}
    assert "incomplete deflate stream" in reasons["cut.tar.gz"]
    # Nothing readable at all: BundleError, a PgmortemError.
    garbage = tmp_path / "x.tar.gz"
    garbage.write_bytes(bytes([0x1F, 0x8B, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
    with pytest.raises(pgmortem.BundleError, match="x.tar.gz"):
        pgmortem.open_bundle(garbage)
    with pytest.raises(pgmortem.PgmortemError):
        pgmortem.open_bundle(garbage)


def test_analyze_the_collected_archive() -> None:
    report = pgmortem.analyze(ARCHIVE)
    by_path = {s["path"]: s for s in report["sources"]}
    for member in archive_members():
        assert by_path[member]["kind"] != "unreadable", member
    assert by_path["memory/meminfo.txt"]["records"] == 54
    assert by_path["postgres/server.log"]["kind"] == "postgres_log"
    assert by_path["postgres/server.log"]["records"] > 0
    assert by_path["audit/status.txt"]["kind"] == "unreadable"
    assert report["clock"]["boot_time_source"] == "date_and_uptime"


def test_parse_meminfo_real_and_truncated() -> None:
    m = pgmortem.parse_meminfo((SYSTEM / "meminfo" / "meminfo.txt").read_bytes())
    fields = {f["key"]: f for f in m["fields"]}
    assert fields["MemTotal"]["unit"] == "kB"
    assert fields["MemTotal"]["bytes"] == fields["MemTotal"]["number"] * 1024
    assert "bytes" not in fields["HugePages_Total"]
    assert m["missing"] == [] and not m["truncated"]
    assert m["stats"]["unrecognized_lines"] == 0
    cut = pgmortem.parse_meminfo(SYSTEM / "meminfo" / "edge-truncated.txt")
    assert cut["truncated"] and cut["missing"]


def test_parse_proc_status_and_smaps_rollup() -> None:
    status = pgmortem.parse_proc_status((SYSTEM / "status" / "postmaster.txt").read_bytes())
    assert status["name"] == "postgres"
    assert status["pid"] is not None and not status["kernel_thread"]
    assert any(f["key"] == "VmRSS" and f["bytes"] for f in status["fields"])
    kthread = pgmortem.parse_proc_status((SYSTEM / "status" / "kthreadd.txt").read_bytes())
    assert kthread["kernel_thread"]
    smaps = pgmortem.parse_smaps_rollup((SYSTEM / "smaps_rollup" / "backend-active.txt").read_bytes())
    assert smaps["header"] is not None and not smaps["empty"]
    assert {f["key"] for f in smaps["fields"]} >= {"Rss", "Pss", "Pss_Anon"}
    empty = pgmortem.parse_smaps_rollup((SYSTEM / "smaps_rollup" / "kthreadd-empty.txt").read_bytes())
    assert empty["empty"]


def test_parse_sysctl_and_vmstat() -> None:
    s = pgmortem.parse_sysctl((SYSTEM / "sysctl" / "sysctl-vm.txt").read_bytes())
    by_name = {e["name"]: e for e in s["entries"]}
    assert by_name["vm.overcommit_memory"]["numbers"] in ([0], [1], [2])
    assert s["stats"]["unrecognized_lines"] == 0
    v = pgmortem.parse_vmstat((SYSTEM / "vmstat" / "vmstat.txt").read_bytes())
    assert any(f["key"] == "oom_kill" for f in v["fields"])


def test_parse_pg_settings_in_every_form() -> None:
    forms = {}
    for name in ["aligned.txt", "unaligned.txt", "settings.csv"]:
        s = pgmortem.parse_pg_settings((SYSTEM / "pg_settings" / name).read_bytes())
        forms[s["form"]] = s
        by_name = {row["name"]: row for row in s["settings"]}
        assert by_name["shared_buffers"]["bytes"] is not None and by_name["shared_buffers"]["bytes"] > 0
        assert s["stats"]["unrecognized_lines"] == 0
    assert set(forms) == {"aligned", "unaligned", "csv"}
    cut = pgmortem.parse_pg_settings((SYSTEM / "pg_settings" / "edge-aligned-truncated.txt").read_bytes())
    assert cut["truncated"] or cut["footer_rows"] is None


def test_parse_pg_conf() -> None:
    conf = pgmortem.parse_pg_conf((SYSTEM / "postgresql_conf" / "initdb-postgresql.conf").read_bytes())
    names = [e["name"] for e in conf["entries"]]
    assert "shared_buffers" in names
    assert conf["stats"]["unrecognized_lines"] == 0


def test_parse_cgroup_memory_v1() -> None:
    files = {p.name: p.read_bytes() for p in (SYSTEM / "cgroup-v1").iterdir()}
    files["notes.txt"] = b"hello"
    cg = pgmortem.parse_cgroup_memory(files)
    assert cg["version"] == "v1"
    assert cg["limit_seen"]
    assert cg["limit_bytes"] is not None and cg["limit_bytes"] > 0
    assert cg["oom_kills"] is not None
    assert "stat" in cg and cg["stat"]["fields"]
    assert cg["ignored"] == ["notes.txt"]
    bad = pgmortem.parse_cgroup_memory({"memory.limit_in_bytes": b"lots\n"})
    assert bad["errors"] and bad["errors"][0][0] == "memory.limit_in_bytes"


def test_parsers_take_a_path_or_bytes_and_never_raise_on_garbage(tmp_path: Path) -> None:
    (tmp_path / "meminfo").write_bytes(b"MemTotal: 1 kB\n")
    assert pgmortem.parse_meminfo(str(tmp_path / "meminfo")) == pgmortem.parse_meminfo(b"MemTotal: 1 kB\n")
    junk = bytes(range(256)) * 40
    for parse in [
        pgmortem.parse_meminfo,
        pgmortem.parse_vmstat,
        pgmortem.parse_proc_status,
        pgmortem.parse_smaps_rollup,
        pgmortem.parse_sysctl,
        pgmortem.parse_pg_settings,
        pgmortem.parse_pg_conf,
    ]:
        out = parse(junk)
        assert out["stats"]["lines"] > 0
    with pytest.raises(TypeError):
        pgmortem.parse_meminfo(42)  # type: ignore[arg-type]


TYPED_USE = """
import pgmortem

listing: pgmortem.BundleListing = pgmortem.open_bundle("bundle.tar.gz", max_file_bytes=1 << 20)
for source in listing["sources"]:
    size: int = source["bytes"]
    note: str | None = source["note"]
    stats = source["stats"]
    if stats is not None:
        unrecognized: int = stats["unrecognized_lines"]
manifest = listing["manifest"]
if manifest is not None:
    statuses: list[int | None] = [f["status"] for f in manifest["files"]]
meminfo: pgmortem.Meminfo = pgmortem.parse_meminfo(b"MemTotal: 1 kB")
total: int | None = next((f.get("bytes") for f in meminfo["fields"] if f["key"] == "MemTotal"), None)
status: pgmortem.ProcStatus = pgmortem.parse_proc_status(b"Name:\tpostgres")
rollup: pgmortem.SmapsRollup = pgmortem.parse_smaps_rollup(b"")
sysctls: pgmortem.SysctlSet = pgmortem.parse_sysctl(b"vm.swappiness = 60")
settings: pgmortem.PgSettings = pgmortem.parse_pg_settings(b"")
limit: int | None = pgmortem.parse_cgroup_memory({"memory.max": b"max"})["limit_bytes"]
conf: pgmortem.PgConf = pgmortem.parse_pg_conf(b"shared_buffers = 128MB")
vmstat: pgmortem.FlatKeyed = pgmortem.parse_vmstat(b"oom_kill 0")
"""


def test_bundle_stubs_type_check(type_check: Callable[[str], None]) -> None:
    type_check(TYPED_USE)
