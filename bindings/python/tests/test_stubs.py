"""The typed view of the package agrees with it: mypy --strict checks typed uses of every
returned structure, and fails on misuses."""

from collections.abc import Callable

import pytest

import pgmortem

USAGE = """
import io
import pgmortem

report: pgmortem.Report = pgmortem.analyze("bundle", match_tolerance=60.0, threads=2)
for incident in report["incidents"]:
    seconds: float | None = incident["outage_seconds"]
    kind: str = incident["kind"]
    kill = incident["kernel_kill"]
    if kill is not None:
        pid: int | None = kill["pid"]
for finding in report["findings"]:
    for evidence in finding["evidence"]:
        where: str = f"{evidence['path']}:{evidence['line']}"
        key: str | None = evidence.get("key")
for entry in report["timeline"]:
    origin: str = entry["origin"]
memory = report["host"]["memory"]
if memory is not None:
    ram: int = memory["ram"]["value"]
for setting in report["host"]["postgres"]["settings"].values():
    if setting["origin"]["from"] == "pg_settings":
        line: int = setting["origin"]["line"]
for source in report["sources"]:
    prefix: str | None = source.get("log_line_prefix")

for record in pgmortem.parse_kernel_log(b""):
    if record["kind"] == "oom_report":
        victim = record["victim"]
        if victim is not None:
            anon: int | None = victim["anon_rss_kb"]
    elif record["kind"] == "segfault":
        address: str = record["address"]
oom: pgmortem.OomReport | None = None

for r in pgmortem.parse_pg_log(io.BytesIO(b"")):
    if r["event"] and r["event"]["kind"] == "out_of_memory":
        request: int | None = r["event"]["request_bytes"]
    event = r["event"]
    if event is not None and event["kind"] == "terminated_by_signal":
        signal: int = event["signal"]
    utc: str | None = r["time"]["utc"] if r["time"] else None
sample: pgmortem.PerfSample = pgmortem.perf_samples(memoryview(b""))[0]
results = pgmortem.analyze_many(["a", "b"], workers=2, max_log_bytes=1 << 20)
for result in results:
    if isinstance(result, Exception):
        message: str = str(result)
    else:
        schema: str = result["schema"]
code, out, err = pgmortem.run_cli(["--version"])
try:
    pgmortem.analyze(b"")
except pgmortem.OptionError as e:
    text: str = str(e)

for b in pgmortem.parse_pgbouncer_log(b"", form="journal_json", year=2026):
    if b["event"] is not None and b["event"]["kind"] == "pooler_error":
        cause: str = b["event"]["cause"]
    conn = b["connection"]
    if conn is not None:
        side: str = conn["side"]
for incident in report["incidents"]:
    saw = incident.get("clients_saw")
    if saw is not None:
        refused: int = saw["client_errors"]
        start: str = saw["from"]
        first: str | None = saw["problems"][0]["first_at"]
for pooler in report.get("pooler", []):
    version: str | None = pooler["version"]
"""

MISUSES = [
    'import pgmortem\npgmortem.parse_kernel_log(None)',
    'import pgmortem\npgmortem.parse_kernel_log(42)',
    'import pgmortem\npgmortem.analyze("b", no_such_option=1)',
    'import pgmortem\npgmortem.analyze("b")["incidents"][0]["no_such_key"]',
    'import pgmortem\nfor r in pgmortem.parse_pg_log("x"):\n    r["event"]["kind"]',  # event may be None
    'import pgmortem\nfor r in pgmortem.parse_kernel_log("x"):\n    r["victim"]',  # not every kind has one
    'import pgmortem\nfor r in pgmortem.parse_pgbouncer_log("x"):\n    r["event"]["kind"]',  # event may be None
]


def test_all_names_exist() -> None:
    for name in pgmortem.__all__:
        assert hasattr(pgmortem, name), name


def test_stubs_type_check(type_check: Callable[[str], None]) -> None:
    type_check(USAGE)


@pytest.mark.parametrize("code", MISUSES)
def test_misuses_fail_to_type_check(type_check: Callable[[str], None], code: str) -> None:
    with pytest.raises(AssertionError, match="error:"):
        type_check(code)


def test_the_package_itself_type_checks() -> None:
    import shutil
    import subprocess
    import sys

    if shutil.which("mypy") is None and subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True).returncode:
        pytest.skip("mypy not installed")
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", "-p", "pgmortem"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
