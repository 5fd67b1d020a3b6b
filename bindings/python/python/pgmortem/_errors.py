"""The exceptions pgmortem raises: one hierarchy under :class:`PgmortemError`.

They are defined here, in Python, and raised by the native module, so that each reports its
module as ``pgmortem`` (``pgmortem.BundleError``), pickles, and can also derive from a built-in
class (:class:`OptionError` is a :class:`ValueError` too).

A path that does not exist or cannot be read raises the built-in :class:`FileNotFoundError` or
:class:`PermissionError`; an argument of the wrong type raises :class:`TypeError`. Bad lines
inside files are never errors: they are counted (``unrecognized_lines``)."""

from __future__ import annotations

__all__ = [
    "PgmortemError",
    "BundleError",
    "NothingToReadError",
    "DiagnoseError",
    "ParseError",
    "OptionError",
]


class PgmortemError(Exception):
    """Base class of every error pgmortem raises itself."""

    __module__ = "pgmortem"


class BundleError(PgmortemError):
    """The bundle could not be opened or read (an archive that yields no file at all, a path
    that is neither a file nor a directory, a read that fails half way)."""

    __module__ = "pgmortem"


class NothingToReadError(BundleError):
    """No file of the bundle is of a kind pgmortem reads (an empty file or directory, a FIFO
    nobody writes to, ``/etc/passwd``, an archive of unrelated files): there is nothing to
    diagnose. The message says what the input held and what pgmortem looks for, as
    ``pgmortem analyze`` does when it exits with status 2."""

    __module__ = "pgmortem"


class DiagnoseError(PgmortemError):
    """The bundle could not be diagnosed with the options given."""

    __module__ = "pgmortem"


class ParseError(PgmortemError):
    """An input cannot be read the way it was asked to be: a ``log_line_prefix`` given to
    :func:`pgmortem.parse_pg_log` that fits none of the log's first lines."""

    __module__ = "pgmortem"


class OptionError(PgmortemError, ValueError):
    """An option has a malformed value (``boot_time="yesterday"``, ``threads=0``, an unknown
    ``format``, an invalid ``log_line_prefix``). Also a :class:`ValueError`."""

    __module__ = "pgmortem"
