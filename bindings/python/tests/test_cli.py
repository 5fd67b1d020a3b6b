"""The `pgmortem` console script and `python -m pgmortem`: the Rust binary's command line,
installed with the wheel."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pgmortem
from pgmortem import _native

INCIDENT = Path(__file__).resolve().parents[3] / "fixtures" / "incidents" / "pg15-sigkill-backend"


def console_script() -> str:
    script = Path(sys.executable).with_name("pgmortem")
    if script.exists():
        return str(script)
    found = shutil.which("pgmortem")
    if found is None:
        pytest.skip("the pgmortem console script is not installed")
    return found


def test_the_native_module_is_an_abi3_extension() -> None:
    assert Path(_native.__file__).name.endswith(".abi3.so")


@pytest.mark.parametrize("how", ["script", "module"])
def test_analyze_prints_what_run_cli_returns(how: str) -> None:
    command = [console_script()] if how == "script" else [sys.executable, "-m", "pgmortem"]
    args = ["analyze", "--format", "json", str(INCIDENT)]
    done = subprocess.run(command + args, capture_output=True)
    code, out, err = pgmortem.run_cli(args)
    assert (done.returncode, done.stdout.decode(), done.stderr.decode()) == (code, out, err)
    assert done.returncode == 0
    assert json.loads(done.stdout)["schema"] == "pgmortem.report/v1"


def test_usage_errors_exit_two_on_stderr() -> None:
    done = subprocess.run([console_script(), "analyze", "--no-such-flag"], capture_output=True)
    assert done.returncode == 2
    assert done.stdout == b""
    assert b"--no-such-flag" in done.stderr


def test_version_and_help_exit_zero_on_stdout() -> None:
    done = subprocess.run([sys.executable, "-m", "pgmortem", "--version"], capture_output=True)
    assert done.returncode == 0
    assert done.stdout.decode().strip() == f"pgmortem {pgmortem.__version__}"
    done = subprocess.run([console_script(), "--help"], capture_output=True)
    assert done.returncode == 0 and b"analyze" in done.stdout


def test_output_bytes_are_forwarded_unchanged(tmp_path: Path) -> None:
    # A log line that is not UTF-8 comes back in the JSON exactly as the binary writes it.
    log = tmp_path / "postgresql.log"
    log.write_bytes(b"2026-11-21 17:12:49.050 UTC [14643] LOG:  caf\xe9\n")
    done = subprocess.run([console_script(), "parse", "pglog", str(log)], capture_output=True)
    assert done.returncode == 0, done.stderr
    code, out, _ = pgmortem.run_cli(["parse", "pglog", str(log)])
    assert done.stdout.decode("utf-8", "replace") == out
