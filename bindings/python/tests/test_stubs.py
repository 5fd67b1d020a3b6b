"""The hand-written stubs agree with the package: mypy checks a typed use of it."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pgmortem

USAGE = """
import pgmortem

report: pgmortem.Report = pgmortem.analyze("bundle")
for incident in report["incidents"]:
    seconds: float | None = incident["outage_seconds"]
    kill = incident["kernel_kill"]
    if kill is not None:
        pid: int = kill["pid"]
records: list[dict[str, object]] = pgmortem.parse_kernel_log(b"")
code, out, err = pgmortem.run_cli(["--version"])
"""


def test_all_names_exist() -> None:
    for name in pgmortem.__all__:
        assert hasattr(pgmortem, name), name


@pytest.mark.skipif(shutil.which("mypy") is None and not Path(sys.prefix, "bin", "mypy").exists(), reason="mypy not installed")
def test_stubs_type_check(tmp_path: Path) -> None:
    usage = tmp_path / "usage.py"
    usage.write_text(USAGE)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", str(usage)],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
