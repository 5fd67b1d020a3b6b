"""Peak memory of iterating pgmortem.parse_pg_log over a large log: writes a log of --gib GiB
(fixtures/formats/pglog/pg15-events.log repeated) to a temporary directory, iterates over every
record, prints the peak RSS, and deletes the log. Run from the repository root:

    .venv/bin/python bindings/python/benches/pglog_rss.py --gib 1
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

import pgmortem

SAMPLE = Path("fixtures/formats/pglog/pg15-events.log")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of the log to generate")
    args = parser.parse_args()
    one = SAMPLE.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "postgresql.log"
        with log.open("wb") as f:
            for _ in range(int(args.gib * 2**30) // len(one) + 1):
                f.write(one)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        records = pgmortem.parse_pg_log(log)
        count = sum(1 for _ in records)
        elapsed = time.perf_counter() - started
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
        stats = records.stats()["stats"]
        print(
            f"{log.stat().st_size / 2**30:.2f} GiB, {stats['lines']} lines, {count} records "
            f"({stats['unrecognized_lines']} lines unrecognized) in {elapsed:.1f} s; "
            f"peak RSS {peak / 1024:.1f} MiB (before iterating: {before / 1024:.1f} MiB)"
        )


if __name__ == "__main__":
    main()
