"""The ``pgmortem`` command: ``python -m pgmortem ARGS`` and the ``pgmortem`` console script run
the same command line as the Rust binary (``pgmortem analyze BUNDLE``, ``pgmortem parse …``),
with the same output and exit codes. It has one command more, ``pgmortem fleet`` (many bundles on
Dask into a Parquet dataset, docs/fleet.md): the command line parses its arguments and prints its
summary, :mod:`pgmortem.fleet` runs it."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from pgmortem import _native


def main(argv: Sequence[str] | None = None) -> int:
    """Runs ``pgmortem`` with ``argv`` (default: ``sys.argv[1:]``) and returns its exit code.

    Output is written to the process's standard output and error as it is produced, byte for
    byte as the binary writes it; Python's own buffers are flushed first so the order holds."""
    args = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    return _native.run_cli_stdio(args)


if __name__ == "__main__":
    sys.exit(main())
