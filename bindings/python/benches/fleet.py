"""Times pgmortem.fleet.analyze over the shipped incident corpus repeated (symlinks under varied
names), on a LocalCluster of 1 and 2 worker processes (or those given). Run from the repository
root:

    .venv/bin/python bindings/python/benches/fleet.py --repeat 4 --workers 1 2
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from pgmortem import fleet


def corpus() -> list[Path]:
    """One bundle per incident fixture (its archive when it has one) and the collected archive."""
    found = []
    for incident in sorted(Path("fixtures/incidents").iterdir()):
        archives = sorted(incident.glob("*.tar.*"))
        found.append(archives[0] if archives else incident)
    return found + [Path("fixtures/formats/bundle/pg15-collected.tar.gz")]


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeat", type=int, default=4, help="times the corpus is repeated")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=3, help="runs per worker count (best is kept)")
    parser.add_argument("--threads", action="store_true", help="workers as threads, not processes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bundles = Path(tmp, "bundles")
        bundles.mkdir()
        for k in range(args.repeat):
            for original in corpus():
                name = original.parent.name if original.is_file() else original.name
                (bundles / f"db{k:02d}-{name}{'.tar.gz' if original.is_file() else ''}").symlink_to(original.resolve())
        count = len(list(bundles.iterdir()))
        print(f"{count} bundles ({len(corpus())} distinct x {args.repeat}), {os.cpu_count()} cores")
        for workers in args.workers:
            best = None
            for n in range(args.rounds):
                started = time.perf_counter()
                summary = fleet.analyze(
                    str(bundles / "*"), Path(tmp, f"d{workers}-{n}"), workers=workers, processes=not args.threads
                )
                wall = time.perf_counter() - started
                if best is None or summary.seconds < best[0]:
                    best = (summary.seconds, wall, summary)
            assert best is not None
            seconds, wall, summary = best
            print(
                f"workers={workers}: best of {args.rounds}: {seconds:.2f} s analysis "
                f"({summary.bundles / seconds:.0f} bundles/s), {wall:.2f} s with the cluster's start "
                f"({summary.bundles / wall:.0f} bundles/s), files per table {summary.files['findings']}, "
                f"failed {summary.failed}"
            )


if __name__ == "__main__":
    main()
