"""bz2 decompression with indexed_bzip2 where that is faster, giving exactly Python's bz2 output.

indexed_bzip2 decodes a bz2 file with about 25% less CPU than Python's `bz2` module, and with
`threads` > 1 it decodes blocks on several cores. It holds the GIL while it decodes, so it suits
stages whose own work is light (scanning for redirects or titles, copying), not a read-ahead
thread beside a busy parser; there Python's `bz2`, which releases the GIL, stays.

Its errors are less precise than Python's (a cut file loses its last, partial block; corrupt
data raises a bare RuntimeError; a file with no bz2 block at all may give nothing), so where it
fails, or gives no byte at all, Python's `bz2` takes over at the same decompressed offset and
gives what it gives from there: the same bytes and the same errors (EOFError for a cut file,
OSError for bad data) as Python's `bz2` alone, only faster on good files.
"""
from __future__ import annotations

import bz2
import io
from collections.abc import Callable
from typing import BinaryIO

from .. import fileio

try:
    import indexed_bzip2
except ImportError:  # a platform without its wheels: Python's bz2 alone
    indexed_bzip2 = None


class FastBz2Reader(io.RawIOBase):
    """A readable stream of the decompressed bytes of the bz2 file that `open_raw()` opens.

    `read1(n)` never drops data before an error (what `_StopAtCut` in reading/sources.py relies on)."""

    def __init__(self, open_raw: Callable[[], BinaryIO], threads: int = 1):
        self._open_raw = open_raw
        self._raw: list[BinaryIO] = []  # the compressed files opened, closed with this
        self._delivered = 0
        self._fast = self._slow = None
        if indexed_bzip2 is not None:
            try:
                self._fast = indexed_bzip2.open(self._opened(), parallelization=max(1, threads))
            except Exception:  # anything it cannot open is Python's bz2's to report
                self._fast = None
        if self._fast is None:
            self._slow = bz2.BZ2File(self._opened(), "rb")

    def _opened(self) -> BinaryIO:
        raw = self._open_raw()
        self._raw.append(raw)
        return raw

    @property
    def fast(self) -> bool:
        """Whether indexed_bzip2 is still decoding (no fallback happened)."""
        return self._fast is not None

    def readable(self) -> bool:
        return True

    def read1(self, size: int = -1) -> bytes:
        if self._fast is not None:
            try:
                data = self._fast.read(size if size > 0 else io.DEFAULT_BUFFER_SIZE)
            except Exception:
                data = None
            if data or (data is not None and self._delivered > 0):
                self._delivered += len(data)
                return data
            self._fall_back()
        return self._slow.read1(size)

    read = read1

    def readinto(self, buffer) -> int:
        data = self.read1(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def _fall_back(self) -> None:
        """Python's bz2 from the offset reached (decompressing what was given again, once)."""
        self._fast.close()
        self._fast = None
        self._slow = bz2.BZ2File(self._opened(), "rb")
        remaining = self._delivered
        while remaining:
            skipped = len(self._slow.read(min(remaining, 1 << 20)))
            if not skipped:  # Python's bz2 ends earlier than indexed_bzip2 did: cannot happen
                raise OSError("bz2 decoders disagree on the data")  # for data with good CRCs
            remaining -= skipped

    def close(self) -> None:
        if not self.closed:
            for stream in (self._fast, self._slow, *self._raw):
                if stream is not None:
                    stream.close()
        super().close()


def open_bz2(path: str, threads: int = 1) -> FastBz2Reader:
    """The decompressed bytes of the bz2 file at `path` (local, or a URL: see fileio)."""
    return FastBz2Reader(lambda: fileio.open_read(path), threads)
