"""Every Python example of README.md and docs/*.md runs as written (from the repository root,
against the shipped fixtures) and type-checks under mypy --strict and pyright.

Each runs as a user runs it: saved as a script and started with ``python example.py`` (so a
script that starts worker processes needs its ``if __name__ == "__main__":`` guard), with only
what its first line says to install importable (``# pip install './bindings/python[pandas]'
duckdb``; without that line, pgmortem alone): every other package of this environment is
hidden from it, as from a fresh virtual environment that installed only those. It leaves
nothing of its own in the temporary directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Installed in the example's interpreter before it runs: imports of the modules named in
# PGMORTEM_DOCS_HIDDEN fail as they would where those packages are not installed.
SITECUSTOMIZE = """
import importlib.abc, os, sys

_HIDDEN = frozenset(os.environ.get("PGMORTEM_DOCS_HIDDEN", "").split(","))


class _Hidden(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in _HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _Hidden())
"""


def installs(code: str) -> tuple[set[str], set[str]]:
    """The extras of pgmortem and the other packages an example's first line installs
    (``# pip install './bindings/python[fleet]' duckdb``)."""
    first = code.lstrip().splitlines()[0] if code.strip() else ""
    match = re.match(r"#\s*pip install (.*)", first)
    if match is None:
        return set(), set()
    extras: set[str] = set()
    others: set[str] = set()
    for word in match.group(1).split():
        word = word.strip("'\"")
        if word.startswith(("./bindings/python", "pgmortem")):
            found = re.search(r"\[(.*)\]", word)
            if found:
                extras.update(e.strip() for e in found.group(1).split(","))
        elif word and not word.startswith("-"):
            others.add(Requirement(word).name)
    return extras, others


def closure(extras: set[str], others: set[str]) -> set[str]:
    """The distributions ``pip install 'pgmortem[EXTRAS]' OTHERS`` installs: every
    requirement, with its own extras and markers, followed through the installed metadata."""
    wanted = [("pgmortem", frozenset(extras))] + [(o, frozenset()) for o in others]
    seen: set[str] = set()
    done: set[tuple[str, frozenset[str]]] = set()
    while wanted:
        name, with_extras = wanted.pop()
        if (canonicalize_name(name), with_extras) in done:
            continue
        done.add((canonicalize_name(name), with_extras))
        seen.add(canonicalize_name(name))
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue
        for text in requires:
            req = Requirement(text)
            environments = [{"extra": e} for e in with_extras] or [{"extra": ""}]
            if req.marker is None or any(req.marker.evaluate(env) for env in environments):
                wanted.append((req.name, frozenset(req.extras)))
    return seen


def hidden_modules(extras: set[str], others: set[str]) -> set[str]:
    """The top-level modules of this environment's packages that such an install lacks."""
    allowed = closure(extras, others)
    hidden = set()
    for module, dists in metadata.packages_distributions().items():
        if not any(canonicalize_name(d) in allowed for d in dists):
            hidden.add(module)
    return hidden


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
def test_example_runs(code: str, tmp_path: Path) -> None:
    extras, others = installs(code)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    script = tmp_path / "example.py"
    script.write_text(code)
    env = {
        **os.environ,
        "PYTHONPATH": str(tmp_path / "site"),
        "PGMORTEM_DOCS_HIDDEN": ",".join(sorted(hidden_modules(extras, others))),
    }
    temporary = Path(tempfile.gettempdir())
    before = {p.name for p in temporary.glob("pgmortem*")}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    left = sorted({p.name for p in temporary.glob("pgmortem*")} - before)
    assert left == [], f"the example left {left} in {temporary}"


def test_an_example_sees_only_what_it_installs() -> None:
    # pgmortem alone: no pandas, pyarrow, Dask or DuckDB (nor numpy, which pandas brings).
    bare = hidden_modules(set(), set())
    assert {"pandas", "pyarrow", "dask", "distributed", "duckdb", "numpy"} <= bare
    assert "pgmortem" not in bare
    # The fleet extra brings Dask, pyarrow and pandas (and numpy), not DuckDB.
    fleet = hidden_modules({"fleet"}, set())
    assert {"pandas", "pyarrow", "dask", "distributed", "numpy"}.isdisjoint(fleet)
    assert "duckdb" in fleet
    assert "duckdb" not in hidden_modules({"fleet"}, {"duckdb"})
    assert installs("# pip install './bindings/python[pandas,arrow]' duckdb\nimport duckdb\n") == (
        {"pandas", "arrow"},
        {"duckdb"},
    )
    assert installs("import pgmortem\n") == (set(), set())


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
