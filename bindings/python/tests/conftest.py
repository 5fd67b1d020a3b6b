import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"


@pytest.fixture
def incidents() -> Path:
    return FIXTURES / "incidents"


@pytest.fixture
def type_check(tmp_path: Path) -> Callable[[str], None]:
    """Checks a typed use of the package with `mypy --strict` against the shipped stubs;
    skips the test when mypy is not installed."""
    if shutil.which("mypy") is None and not Path(sys.prefix, "bin", "mypy").exists():
        pytest.skip("mypy not installed")

    def check(code: str) -> None:
        usage = tmp_path / "usage.py"
        usage.write_text(code)
        result = subprocess.run(
            [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", str(usage)],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, result.stdout + result.stderr

    return check
