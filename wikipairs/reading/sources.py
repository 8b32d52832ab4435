"""Dump files as XML byte streams: which files the inputs name, and `open_xml(path)`.

`open_xml` recognizes compression by the first bytes (bz2, multistream bz2 too, gzip, xz; plain
otherwise), re-encodes UTF-16 (a BOM) as UTF-8, decompresses on a second core, and tells at the
end whether the compressed data stopped before its end marker (`XmlStream.cut`: a truncated
download) and whether the reader got to the end (`XmlStream.eof`). A split that is a part of a
file is also an `XmlStream`, over the chunks it is made of (`ChunkStream`): the page reader reads
both alike and never a temporary file.
"""
from __future__ import annotations

import bz2
import glob
import gzip
import io
import lzma
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable

from .. import fileio
from ..errors import DumpError
from ..readahead import ReadAhead
from .fastbz2 import open_bz2

_MAGIC = [(b"BZh", bz2.open), (b"\x1f\x8b", gzip.open), (b"\xfd7zXZ\x00", lzma.open)]
HEAD_BYTES = 1 << 16  # what the page reader peeks at: the root element, <siteinfo>, a page


def expand_inputs(patterns: Iterable[str]) -> list[str]:
    """Files named by paths or glob patterns, in a stable order; a clear error for missing ones."""
    paths: list[str] = []
    for pattern in patterns:
        try:
            if glob.has_magic(pattern):
                matches = fileio.glob(pattern)
                if not matches:
                    raise DumpError(f"{pattern}: no file matches this pattern")
                paths.extend(matches)
            elif not fileio.exists(pattern):
                raise DumpError(f"{pattern}: no such file")
            elif fileio.isdir(pattern):
                raise DumpError(f"{pattern}: is a directory, not a dump file")
            else:
                paths.append(pattern)
        except OSError as e:  # a remote file system refused (permissions, network)
            raise DumpError(f"{pattern}: cannot read it ({e.strerror or e})") from None
    if not paths:
        raise DumpError("no input files given")
    return paths


class XmlStream:
    """A buffered binary UTF-8 stream of XML (`reader`, with peek) and what is known of its end:
    `eof`, the reader met the end; `cut`, the compressed data under it stopped before its end
    marker (see _StopAtCut; never for plain data)."""

    def __init__(self, raw, decompressor: "_StopAtCut | _CopyReader | None" = None):
        self._tracker = _EofTracker(raw, decompressor)
        self.reader = io.BufferedReader(self._tracker, HEAD_BYTES)

    @property
    def eof(self) -> bool:
        return self._tracker.eof

    @property
    def cut(self) -> bool:
        return self._tracker.cut

    def head(self) -> bytes:
        """The first HEAD_BYTES bytes (fewer for a shorter stream), not consumed."""
        return self.reader.peek(HEAD_BYTES)[:HEAD_BYTES]

    def close(self) -> None:
        """Closes the streams under it (a read-ahead thread stops, the file is closed)."""
        self.reader.close()
        self._tracker.raw.close()


class _EofTracker(io.RawIOBase):
    """Wraps a binary stream and remembers whether it reached the end (to tell a cut file)."""

    def __init__(self, raw, decompressor=None):
        self.raw, self.eof, self._decompressor = raw, False, decompressor

    @property
    def cut(self) -> bool:
        return self._decompressor is not None and self._decompressor.cut

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.raw.read(len(buffer))
        if not data:
            self.eof = True
        buffer[: len(data)] = data
        return len(data)


class ChunkStream(io.RawIOBase):
    """The concatenation of `parts` (bytes, or binary streams read to their end), taken from
    the iterable as they are needed: a split's XML is made while it is parsed."""

    def __init__(self, parts: Iterable):
        self._parts = iter(parts)
        self._current: memoryview | object | None = None

    def readable(self):
        return True

    def readinto(self, buffer):
        while True:
            if self._current is None:
                part = next(self._parts, None)
                if part is None:
                    return 0
                self._current = memoryview(part) if isinstance(part, bytes) else part
            if isinstance(self._current, memoryview):
                n = min(len(buffer), len(self._current))
                buffer[:n] = self._current[:n]
                self._current = self._current[n:] if n < len(self._current) else None
                if n:
                    return n
                continue
            data = self._current.read(len(buffer))
            if data:
                buffer[: len(data)] = data
                return len(data)
            self._current = None


# A copy of the decompressed XML kept by the first pass so that the second does not decompress
# again (bz2 decompression costs as much CPU as parsing): at most this many bytes per file
# (WIKIPAIRS_COPY_MAX_BYTES, 0 to never keep one), and never leaving less than _COPY_MIN_FREE
# bytes free on the temporary folder's disk. A larger file is decompressed twice.
COPY_MAX_BYTES = int(os.environ.get("WIKIPAIRS_COPY_MAX_BYTES", 4 << 30))
_COPY_MIN_FREE = 2 << 30


class DecompressedCopy:
    """The decompressed bytes of a compressed dump file, in an anonymous temporary file, written
    while a first pass reads the file; `complete` once that pass read to the end. `cut`: whether
    the compressed data stopped before its end marker (a truncated download)."""

    def __init__(self, max_bytes: int | None = None):
        max_bytes = COPY_MAX_BYTES if max_bytes is None else max_bytes
        self.max_bytes, self.size = max_bytes, 0
        self.complete = self.cut = self.abandoned = False
        self._file = None if max_bytes <= 0 else tempfile.TemporaryFile(prefix="wikipairs-")
        self._lock = threading.Lock()
        if self._file is None:
            self.abandoned = True

    def write(self, data) -> None:
        """Append decompressed bytes (called by the read-ahead thread)."""
        with self._lock:
            if self.abandoned:
                return
            self.size += len(data)
            if self.size > self.max_bytes or (
                    self.size % (64 << 20) < len(data) and not self._room()):
                self.discard()
                return
            self._file.write(data)

    def _room(self) -> bool:
        try:
            return shutil.disk_usage(tempfile.gettempdir()).free > _COPY_MIN_FREE
        except OSError:
            return False

    def finish(self, cut: bool) -> None:
        """The reader met the end of the decompressed data: the copy is whole."""
        with self._lock:
            if not self.abandoned:
                self.complete, self.cut = True, cut

    def open(self) -> "_CopyReader | None":
        """A stream reading the copy from its start (for the second pass), or None."""
        with self._lock:
            if not self.complete or self.abandoned:
                return None
            self._file.flush()
            self._file.seek(0)
            return _CopyReader(self)

    def discard(self) -> None:
        self.abandoned, self.complete = True, False
        if self._file is not None:
            self._file.close()
            self._file = None


class _CopyReader(io.RawIOBase):
    """Reads a DecompressedCopy; like _StopAtCut it reports `cut` for a truncated download."""

    def __init__(self, copy: DecompressedCopy):
        self.copy, self.cut = copy, copy.cut

    def readable(self):
        return True

    def readinto(self, buffer):
        return self.copy._file.readinto(buffer)

    def close(self):
        if not self.closed:
            self.copy.discard()  # read once: the disk space is given back
        super().close()


class _StopAtCut(io.RawIOBase):
    """A decompressed stream that ends, instead of raising EOFError, where the compressed data of a
    cut download stops before its end marker; `cut` records that it happened.

    It reads with `read1`: `read(n)` of a BZ2File/GzipFile/LZMAFile drops the data it decompressed
    in the same call when it then meets the cut, which would lose the last complete pages.
    With a `copy`, what it gives is also written there (see DecompressedCopy)."""

    def __init__(self, stream, copy: DecompressedCopy | None = None, raw=None):
        self.stream, self.cut, self.copy, self.raw = stream, False, copy, raw

    def readable(self):
        return True

    def readinto(self, buffer):
        view, filled = memoryview(buffer).cast("B"), 0
        while filled < len(view) and not self.cut:
            try:
                data = self.stream.read1(len(view) - filled)
            except EOFError:
                self.cut = True
                break
            if not data:
                break
            view[filled:filled + len(data)] = data
            filled += len(data)
        if self.copy is not None:
            if filled:
                self.copy.write(view[:filled])
            elif len(view):
                self.copy.finish(self.cut)
        return filled

    def close(self):
        self.stream.close()
        if self.raw is not None:
            self.raw.close()
        super().close()


def _opener(raw):
    """The decompressing opener for a bz2, gzip or xz stream `raw` (by its first bytes), or None."""
    magic = raw.peek(6)[:6]
    return next((opener for prefix, opener in _MAGIC if magic.startswith(prefix)), None)


def decompressed(raw) -> tuple[object, bool]:
    """(the decompressed stream, True) for a bz2, gzip or xz stream `raw` (a buffered stream from
    fileio.open_read, recognized by its first bytes), else (raw, False)."""
    opener = _opener(raw)
    return (raw, False) if opener is None else (opener(raw, "rb"), True)


def is_compressed(path: str) -> bool:
    """Whether the file is bz2, gzip or xz, by its first bytes (as `decompressed` tells them)."""
    with fileio.open_read(path) as raw:
        return _opener(raw) is not None


def copy_for(path: str) -> DecompressedCopy | None:
    """A DecompressedCopy to keep while a first pass reads `path`, where it is compressed and
    copies are allowed (COPY_MAX_BYTES); else None."""
    if COPY_MAX_BYTES <= 0:
        return None
    with fileio.open_read(path) as f:
        return DecompressedCopy() if decompressed(f)[1] else None


def _open_binary(path: str, copy: DecompressedCopy | None = None, light: bool = False):
    """The file's decompressed bytes. `light`: its reader does little per byte, so bz2 is
    decoded by indexed_bzip2 in the calling thread (less CPU; see fastbz2)."""
    raw = fileio.open_read(path)
    if light and raw.peek(3)[:3] == b"BZh":
        raw.close()
        return _StopAtCut(open_bz2(path), copy)
    stream, compressed = decompressed(raw)
    return _StopAtCut(stream, copy, raw) if compressed else raw


def open_xml(path: str, copy: DecompressedCopy | None = None,
             replay: "_CopyReader | None" = None, light: bool = False) -> XmlStream:
    """The XML of a dump file as a UTF-8 XmlStream, whatever its compression or UTF-16 BOM.
    `copy`: keep the decompressed bytes there; `replay`: read them from such a copy instead.
    `light`: the reader does little per byte (see _open_binary): no read-ahead thread."""
    if replay is not None:
        stream = decompressor = replay
        stream = io.BufferedReader(stream, 1 << 16)
    else:
        stream = _open_binary(path, copy, light)
        decompressor = stream if isinstance(stream, _StopAtCut) else None
    if decompressor is not None and replay is None:
        # Decompress on another core; a light reader would mostly wait for it anyway.
        stream = io.BufferedReader(stream if light else ReadAhead(stream), 1 << 16)
    head = stream.peek(4)[:4]
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        stream = _Utf8Reencoder(io.TextIOWrapper(stream, encoding="utf-16"))
    return XmlStream(stream, decompressor)


class _Utf8Reencoder(io.RawIOBase):
    """Re-encodes a text stream as UTF-8 bytes, dropping the XML declaration's encoding."""

    def __init__(self, text):
        self.text, self.pending, self.first = text, b"", True

    def readable(self):
        return True

    def readinto(self, buffer):
        while len(self.pending) < len(buffer):
            chunk = self.text.read(1 << 16)
            if not chunk:
                break
            if self.first:
                chunk = re.sub(r'^(\ufeff)?<\?xml[^>]*\?>', "", chunk)
                self.first = False
            self.pending += chunk.encode("utf-8")
        n = min(len(buffer), len(self.pending))
        buffer[:n], self.pending = self.pending[:n], self.pending[n:]
        return n
