"""pgmortem.analyze_many: many bundles on a pool of workers, results in input order, a failed
bundle's exception in its place, the interpreter free meanwhile."""

import threading
import time
from pathlib import Path

import pytest

import pgmortem

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures"
SIGKILL = FIXTURES / "incidents" / "pg15-sigkill-backend"
OOM = FIXTURES / "incidents" / "pg15-memcg-oom-sort"
ARCHIVE = FIXTURES / "formats" / "bundle" / "pg15-collected.tar.gz"


def test_reports_come_back_in_input_order_equal_to_analyze() -> None:
    paths = [SIGKILL, OOM, ARCHIVE, str(OOM), SIGKILL]
    for workers in (1, 2, 3):
        results = pgmortem.analyze_many(paths, workers=workers)
        assert len(results) == len(paths)
        for path, result in zip(paths, results):
            assert result == pgmortem.analyze(path)


def test_a_failed_bundle_gives_its_exception_in_its_place(tmp_path: Path) -> None:
    garbage = tmp_path / "x.tar.gz"
    garbage.write_bytes(bytes([0x1F, 0x8B, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
    paths = [SIGKILL, tmp_path / "missing", garbage, None, ARCHIVE.read_bytes(), OOM]
    results = pgmortem.analyze_many(paths, workers=2)  # type: ignore[arg-type]
    assert [type(r).__name__ for r in results] == [
        "dict",
        "FileNotFoundError",
        "BundleError",
        "TypeError",
        "dict",
        "dict",
    ]
    assert "missing" in str(results[1])
    assert isinstance(results[2], pgmortem.PgmortemError)
    assert results[4] == pgmortem.analyze(ARCHIVE.read_bytes())
    assert results[5] == pgmortem.analyze(OOM)


def test_options_apply_to_every_bundle_and_bad_ones_raise_at_once() -> None:
    (capped,) = pgmortem.analyze_many([SIGKILL], max_log_bytes=1024, threads=1)
    assert not isinstance(capped, Exception)
    assert capped["caveats"][0]["kind"] == "log_not_read_whole"
    with pytest.raises(pgmortem.OptionError, match="workers"):
        pgmortem.analyze_many([SIGKILL], workers=0)
    with pytest.raises(ValueError, match="boot_time"):
        pgmortem.analyze_many([SIGKILL], boot_time="yesterday")
    with pytest.raises(TypeError, match="iterable of bundles"):
        pgmortem.analyze_many(str(SIGKILL))  # type: ignore[arg-type]
    assert pgmortem.analyze_many([]) == []
    assert len(pgmortem.analyze_many(p for p in [SIGKILL, OOM])) == 2


def test_the_interpreter_runs_other_threads_meanwhile() -> None:
    ticks = 0
    done = threading.Event()

    def count() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.001)

    counter = threading.Thread(target=count)
    counter.start()
    started = time.perf_counter()
    pgmortem.analyze_many([ARCHIVE] * 8, workers=1)
    elapsed = time.perf_counter() - started
    done.set()
    counter.join()
    # Holding the GIL for the whole call would leave the counter at ~0.
    assert ticks > elapsed * 1000 / 10, (ticks, elapsed)
