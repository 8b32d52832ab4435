"""Decompression on a second core: a thread reads ahead into a bounded queue.

bz2, lzma and zlib release the GIL while they decompress, so a reader thread overlaps
decompression with parsing in the main thread (the reference extractor uses a reader process for
the same reason). Memory stays bounded: at most `depth` chunks wait in the queue.
"""
from __future__ import annotations

import io
import queue
import threading

CHUNK = 1 << 20


class ReadAhead(io.RawIOBase):
    """A readable binary stream fed by a thread that reads `source` ahead of the consumer."""

    def __init__(self, source, depth: int = 8, chunk: int = CHUNK):
        self._source, self._chunk = source, chunk
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._pending, self._offset, self._done = b"", 0, False
        self._thread = threading.Thread(target=self._run, name="wikipairs-readahead", daemon=True)
        self._thread.start()

    def _run(self):
        try:
            while not self._stop.is_set():
                data = self._source.read(self._chunk)
                self._put(data)
                if not data:
                    return
        except BaseException as e:  # handed to the consumer, raised where it reads
            self._put(e)

    def _put(self, item):
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def readable(self):
        return True

    def readinto(self, buffer):
        while self._offset >= len(self._pending) and not self._done:
            item = self._queue.get()
            if isinstance(item, BaseException):
                self._done = True
                raise item
            if not item:
                self._done = True
            self._pending, self._offset = item, 0
        start = self._offset
        n = min(len(buffer), len(self._pending) - start)
        buffer[:n] = memoryview(self._pending)[start:start + n]
        self._offset += n
        return n

    def close(self):
        self._stop.set()
        super().close()
        try:
            self._source.close()
        except Exception:
            pass
