"""The TypedDicts of pgmortem.types describe exactly what the functions return: every key of
every dict (no more, no fewer), with the type of its value, checked over every shipped fixture;
and every name is importable at run time."""

from __future__ import annotations

import re
import sys
import types as pytypes
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import pytest

import pgmortem
from pgmortem import types as T

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "fixtures"

if sys.version_info < (3, 11):  # pragma: no cover
    pytest.skip("run-time checking of NotRequired needs Python 3.11", allow_module_level=True)

from typing import NotRequired  # noqa: E402


def hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(T), include_extras=True)


def check(value: Any, tp: Any, where: str) -> None:
    """Raises AssertionError naming the first place `value` does not fit `tp`."""
    origin = get_origin(tp)
    if tp is Any or tp is object:
        return
    if tp is None or tp is type(None):
        assert value is None, f"{where}: expected None, got {value!r:.80}"
        return
    if origin in (Union, pytypes.UnionType):
        errors = []
        for alternative in get_args(tp):
            try:
                check(value, alternative, where)
                return
            except AssertionError as e:
                errors.append(str(e))
        raise AssertionError(" | ".join(errors) if len(errors) < 3 else f"{where}: {value!r:.120} fits none of {tp}")
    if origin is Literal:
        assert value in get_args(tp), f"{where}: {value!r} not in {get_args(tp)}"
        return
    if typing.is_typeddict(tp):
        assert isinstance(value, dict), f"{where}: expected {tp.__name__}, got {type(value).__name__}"
        fields = hints(tp)
        required = {k for k, v in fields.items() if get_origin(v) is not NotRequired}
        missing = required - value.keys()
        extra = value.keys() - fields.keys()
        assert not missing, f"{where}: {tp.__name__} lacks {sorted(missing)}"
        assert not extra, f"{where}: {tp.__name__} does not declare {sorted(extra)}"
        for key, item in value.items():
            field = fields[key]
            if get_origin(field) is NotRequired:
                field = get_args(field)[0]
            check(item, field, f"{where}.{key}")
        return
    if origin is list:
        assert isinstance(value, list), f"{where}: expected list, got {type(value).__name__}"
        (item,) = get_args(tp)
        for i, x in enumerate(value):
            check(x, item, f"{where}[{i}]")
        return
    if origin is tuple:
        assert isinstance(value, tuple), f"{where}: expected tuple, got {type(value).__name__}"
        args = get_args(tp)
        assert len(value) == len(args), where
        for i, (x, a) in enumerate(zip(value, args)):
            check(x, a, f"{where}[{i}]")
        return
    if origin is dict:
        assert isinstance(value, dict), f"{where}: expected dict, got {type(value).__name__}"
        k, v = get_args(tp)
        for key, item in value.items():
            check(key, k, f"{where} key")
            check(item, v, f"{where}[{key!r}]")
        return
    if tp is float:
        assert isinstance(value, (int, float)) and not isinstance(value, bool), f"{where}: expected float, got {value!r}"
        return
    if tp is int:
        assert isinstance(value, int) and not isinstance(value, bool), f"{where}: expected int, got {value!r}"
        return
    assert isinstance(value, tp), f"{where}: expected {tp}, got {type(value).__name__} {value!r:.80}"


def bundles() -> list[Path]:
    found = []
    for incident in sorted((FIXTURES / "incidents").iterdir()):
        archives = sorted(incident.glob("*.tar.*"))
        found.append(archives[0] if archives else incident)
    return found + [FIXTURES / "formats" / "bundle" / "pg15-collected.tar.gz"]


@pytest.mark.parametrize("bundle", bundles(), ids=lambda p: p.parent.name if p.is_file() else p.name)
def test_report_matches_the_report_typeddict(bundle: Path) -> None:
    check(pgmortem.analyze(bundle), T.Report, "report")


def test_kernel_records_match_the_kernel_record_typeddicts() -> None:
    kinds = set()
    for path in sorted((FIXTURES / "formats" / "kernel").glob("*.txt")) + sorted((FIXTURES / "incidents").glob("*/dmesg*.txt")):
        for i, record in enumerate(pgmortem.parse_kernel_log(path)):
            check(record, T.KernelRecord, f"{path.name}[{i}]")
            kinds.add(record["kind"])
        check(pgmortem.kernel_log_stats(path), T.KernelStats, path.name)
    assert {"oom_report", "segfault"} <= kinds


def test_postgres_records_match_the_pg_record_typeddict() -> None:
    kinds = set()
    # Every sample, those in directories too (pgBadger's, the recorded prefixes), but for the
    # compressed ones and the files that say how a sample was written.
    # The storage incidents' logs (pglog-storage) hold the storage, archiving and start events.
    paths = sorted((FIXTURES / "formats" / "pglog").rglob("*"))
    for path in paths + sorted((FIXTURES / "formats" / "pglog-storage").glob("*.log")):
        if path.is_dir() or path.suffix in (".md", ".gz", ".bz2", ".prefix", ".conf"):
            continue
        records = pgmortem.parse_pg_log(path)
        for i, record in enumerate(records):
            check(record, T.PgRecord, f"{path.name}[{i}]")
            if record["event"] is not None:
                kinds.add(record["event"]["kind"])
        check(records.stats(), T.PgLogStats, f"{path.name} stats")
    assert len(kinds) > 30


def test_pgbouncer_records_match_the_bouncer_record_typeddict() -> None:
    kinds = set()
    for path in sorted((FIXTURES / "formats" / "pgbouncer").iterdir()):
        if path.suffix == ".md" or path.name.startswith("pgbadger-"):
            continue
        records = pgmortem.parse_pgbouncer_log(path, year=2026)
        for i, record in enumerate(records):
            check(record, T.BouncerRecord, f"{path.name}[{i}]")
            if record["event"] is not None:
                kinds.add(record["event"]["kind"])
        check(records.stats(), T.BouncerLogStats, f"{path.name} stats")
    assert len(kinds) >= 10


def test_every_pgbouncer_event_kind_has_its_typeddict() -> None:
    source = (ROOT / "crates" / "parse" / "src" / "pgbouncer" / "types.rs").read_text()
    in_rust = set(re.findall(r'BouncerEvent::\w+(?: \{ \.\. \}|\(_\))? => "(\w+)"', source))
    in_stubs = {get_args(hints(cls)["kind"])[0] for cls in get_args(T.BouncerEvent)}
    assert in_rust and in_stubs == in_rust
    causes = set(re.findall(r'CloseCause::\w+ => "(\w+)"', source))
    assert causes and set(get_args(T.CloseCause)) == causes


def test_every_postgres_event_kind_has_its_typeddict() -> None:
    source = (ROOT / "crates" / "parse" / "src" / "pglog" / "types.rs").read_text()
    in_rust = set(re.findall(r'PgEvent::\w+(?: \{ \.\. \})? => "(\w+)"', source))
    in_stubs = {get_args(hints(cls)["kind"])[0] for cls in get_args(T.PgEvent)}
    assert in_rust and in_stubs == in_rust


def test_perf_output_matches_the_perf_typeddicts() -> None:
    for path in sorted((FIXTURES / "formats" / "perf").glob("*.txt")):
        check(pgmortem.parse_perf_script(path), T.PerfProfile, path.name)
        for i, sample in enumerate(pgmortem.perf_samples(path)):
            check(sample, T.PerfSample, f"{path.name}[{i}]")


SNAPSHOTS: list[tuple[Callable[[Any], Any], str, Any]] = [
    (pgmortem.parse_meminfo, "meminfo", T.Meminfo),
    (pgmortem.parse_vmstat, "vmstat", T.FlatKeyed),
    (pgmortem.parse_proc_status, "status", T.ProcStatus),
    (pgmortem.parse_smaps_rollup, "smaps_rollup", T.SmapsRollup),
    (pgmortem.parse_sysctl, "sysctl", T.SysctlSet),
    (pgmortem.parse_pg_settings, "pg_settings", T.PgSettings),
    (pgmortem.parse_pg_conf, "postgresql_conf", T.PgConf),
]


@pytest.mark.parametrize("parse,directory,typeddict", SNAPSHOTS, ids=[s[1] for s in SNAPSHOTS])
def test_snapshots_match_their_typeddicts(parse: Callable[[Any], Any], directory: str, typeddict: Any) -> None:
    for path in sorted((FIXTURES / "formats" / "system" / directory).iterdir()):
        check(parse(path), typeddict, path.name)


def test_bundle_listing_and_cgroup_match_their_typeddicts() -> None:
    check(pgmortem.open_bundle(FIXTURES / "formats" / "bundle" / "pg15-collected.tar.gz"), T.BundleListing, "listing")
    cgroup = FIXTURES / "formats" / "system" / "cgroup-v1"
    check(pgmortem.parse_cgroup_memory({p.name: p for p in cgroup.iterdir()}), T.CgroupMemory, "cgroup")


def test_every_name_of_the_stubs_exists_at_run_time() -> None:
    for name in pgmortem.__all__:
        assert hasattr(pgmortem, name), name
    for name in T.__all__:
        assert getattr(pgmortem, name) is getattr(T, name), name
    assert pgmortem.Report is T.Report and pgmortem.Incident is T.Incident
    # The .pyi of the native module names nothing the module lacks.
    stub = (Path(pgmortem.__file__).parent / "_native.pyi").read_text()
    for name in re.findall(r"^(?:def|class) (\w+)", stub, re.M):
        assert hasattr(pgmortem._native, name), name
