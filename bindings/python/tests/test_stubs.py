"""The hand-written stubs agree with the package: mypy checks a typed use of it."""

from collections.abc import Callable

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

def test_stubs_type_check(type_check: Callable[[str], None]) -> None:
    type_check(USAGE)
