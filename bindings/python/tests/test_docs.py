"""Every Python example of README.md and docs/*.md runs as written (from the repository root,
against the shipped fixtures) and type-checks under mypy --strict and pyright."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def examples() -> list[tuple[str, str]]:
    """(name, code) of every ```python block, named file:line."""
    found = []
    for doc in DOCS:
        text = doc.read_text()
        for match in re.finditer(r"^```python\n(.*?)^```$", text, re.M | re.S):
            line = text.count("\n", 0, match.start()) + 1
            found.append((f"{doc.relative_to(ROOT)}:{line}", match.group(1)))
    return found


EXAMPLES = examples()


def test_the_docs_have_examples() -> None:
    names = [name for name, _ in EXAMPLES]
    assert any(n.startswith("README.md") for n in names)
    assert sum(n.startswith("docs/python.md") for n in names) >= 5


@pytest.mark.parametrize("code", [code for _, code in EXAMPLES], ids=[name for name, _ in EXAMPLES])
def test_example_runs(code: str) -> None:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_examples_type_check(tmp_path: Path) -> None:
    if subprocess.run([sys.executable, "-m", "mypy", "--version"], capture_output=True).returncode != 0:
        pytest.skip("mypy not installed")
    files = []
    for i, (name, code) in enumerate(EXAMPLES):
        path = tmp_path / f"example_{i}.py"
        path.write_text(f"# {name}\n{code}")
        files.append(path)
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--python-version", "3.10", *map(str, files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    # Name the doc and line of each error, not the temporary file.
    report = done.stdout
    for i, (name, _) in enumerate(EXAMPLES):
        report = report.replace(str(files[i]), name + "+")
    assert done.returncode == 0, report


def test_examples_pass_pyright(tmp_path: Path) -> None:
    # Pyright in its default (standard) mode, as an editor runs it on a user's code.
    files = []
    for i, (name, code) in enumerate(EXAMPLES):
        path = tmp_path / f"example_{i}.py"
        path.write_text(f"# {name}\n{code}")
        files.append(path)
    (tmp_path / "pyrightconfig.json").write_text('{"typeCheckingMode": "standard", "pythonVersion": "3.10"}')
    done = subprocess.run(
        [sys.executable, "-m", "pyright", "--pythonpath", sys.executable, *map(str, files)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    report = done.stdout + done.stderr
    for i, (name, _) in enumerate(EXAMPLES):
        report = report.replace(str(files[i]), name + "+")
    assert done.returncode == 0, report
