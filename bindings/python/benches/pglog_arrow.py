"""Throughput and peak memory of a PostgreSQL log into a polars DataFrame through
pgmortem.pg_log_batches, side by side with the dict loop of pgmortem.parse_pg_log on the same
file. Writes a log of --gib GiB (fixtures/formats/pglog/pg15-events.log repeated) unless --log
names one, runs each way in a process of its own (so each peak RSS is its own), prints MB/s
(10^6 bytes per second) and peak RSS, and deletes the log it wrote. Run from the repository
root:

    .venv/bin/python bindings/python/benches/pglog_arrow.py --gib 1
    .venv/bin/python bindings/python/benches/pglog_arrow.py --log /path/to/postgresql.log
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

SAMPLE = Path("fixtures/formats/pglog/pg15-events.log")

WAYS = {
    "polars.from_arrow(pg_log_batches)": """
import polars as pl, pgmortem
frame = pl.from_arrow(pgmortem.pg_log_batches(LOG))
rows = frame.height
""",
    "polars.from_arrow(pg_log_batches(threads=1))": """
import polars as pl, pgmortem
frame = pl.from_arrow(pgmortem.pg_log_batches(LOG, threads=1))
rows = frame.height
""",
    "pyarrow read_all(pg_log_batches)": """
import pgmortem
rows = pgmortem.pg_log_batches(LOG).read_all().num_rows
""",
    "batches read and dropped (pg_log_batches)": """
import pgmortem
rows = sum(batch.num_rows for batch in pgmortem.pg_log_batches(LOG))
""",
    "dict loop (parse_pg_log)": """
import pgmortem
rows = sum(1 for _ in pgmortem.parse_pg_log(LOG))
""",
}

RUN = """
import resource, sys, time
LOG = sys.argv[1]
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
started = time.perf_counter()
{body}
elapsed = time.perf_counter() - started
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(rows, elapsed, before, peak)
"""


def measure(log: Path, repeat: int) -> None:
    size = log.stat().st_size
    print(f"{log}: {size / 1e6:.0f} MB")
    for name, body in WAYS.items():
        best = None
        for _ in range(repeat):
            done = subprocess.run(
                [sys.executable, "-c", RUN.format(body=body), str(log)], capture_output=True, text=True, check=True
            )
            rows, elapsed, before, peak = done.stdout.split()
            if best is None or float(elapsed) < best[1]:
                best = (int(rows), float(elapsed), int(before), int(peak))
        assert best is not None
        rows, elapsed, before, peak = best
        print(
            f"{name}: {rows} records in {elapsed:.2f} s = {size / elapsed / 1e6:.0f} MB/s; "
            f"peak RSS {peak / 1024:.0f} MiB ({before / 1024:.0f} MiB before reading)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=1.0, help="size of the log to generate")
    parser.add_argument("--log", type=Path, help="an existing log to read instead")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each way (the best is shown)")
    args = parser.parse_args()
    if args.log is not None:
        measure(args.log, args.repeat)
        return
    one = SAMPLE.read_bytes()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "postgresql.log"
        with log.open("wb") as f:
            for _ in range(int(args.gib * 2**30) // len(one) + 1):
                f.write(one)
        measure(log, args.repeat)


if __name__ == "__main__":
    main()
