"""Times pgmortem.analyze_many over the shipped incident corpus repeated, with 1 and 2 workers
(or those given). Run from the repository root:

    .venv/bin/python bindings/python/benches/analyze_many.py --repeat 8 --workers 1 2
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import pgmortem


def corpus() -> list[Path]:
    """One bundle per incident fixture (its archive when it has one) and the collected archive."""
    found = []
    for incident in sorted(Path("fixtures/incidents").iterdir()):
        archives = sorted(incident.glob("*.tar.*"))
        found.append(archives[0] if archives else incident)
    return found + [Path("fixtures/formats/bundle/pg15-collected.tar.gz")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=8, help="times the corpus is repeated")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3, help="runs per worker count (best is kept)")
    args = parser.parse_args()
    bundles = corpus() * args.repeat
    size = sum(p.stat().st_size if p.is_file() else sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) for p in bundles)
    print(f"{len(bundles)} bundles ({len(corpus())} distinct x {args.repeat}), {size / 2**20:.1f} MiB, {os.cpu_count()} cores")
    pgmortem.analyze_many(corpus(), workers=1)  # warm the page cache
    baseline = None
    for workers in args.workers:
        times = []
        for _ in range(args.rounds):
            started = time.perf_counter()
            results = pgmortem.analyze_many(bundles, workers=workers, threads=1)
            times.append(time.perf_counter() - started)
        failed = sum(isinstance(r, Exception) for r in results)
        best = min(times)
        baseline = baseline or best
        print(
            f"workers={workers}: best {best:.2f} s of {args.rounds} ({len(bundles) / best:.0f} bundles/s, "
            f"speed-up {baseline / best:.2f}x), failed {failed}"
        )


if __name__ == "__main__":
    main()
