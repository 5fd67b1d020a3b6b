"""Types of the pgmortem package, importable at run time: the input convention, and (below) a
``TypedDict`` for every structure the functions return.

Every name here is re-exported by ``pgmortem`` (``pgmortem.Report``, ``pgmortem.Input``)."""

from __future__ import annotations

import os
from typing import Protocol, Union


class BinaryReader(Protocol):
    """A binary file object: anything with a ``read(size)`` that returns bytes (an ``open(…,
    "rb")`` file, ``io.BytesIO``, a ``gzip.GzipFile``, a socket's ``makefile("rb")``)."""

    def read(self, size: int = ..., /) -> bytes: ...


Input = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryReader]
"""What every function taking an input accepts: ``str`` or ``os.PathLike`` is a path (read,
and decompressed when gzip or zstd); ``bytes``, ``bytearray`` or ``memoryview`` is the content;
a :class:`BinaryReader` is read. Anything else raises ``TypeError``."""

__all__ = ["BinaryReader", "Input"]
