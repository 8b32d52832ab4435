"""Decompression on a second core: a thread reads ahead into a bounded queue (`ReadAhead`
for byte streams, `prefetched` for any iterator, e.g. the trainer's Parquet batches).

bz2, lzma and zlib release the GIL while they decompress, so a reader thread overlaps
decompression with parsing in the main thread (the reference extractor uses a reader process for
the same reason). Memory stays bounded: at most `depth` chunks wait in the queue.
"""
from __future__ import annotations

import atexit
import io
import queue
import threading
import weakref
from collections.abc import Iterator

CHUNK = 1 << 20


_LIVE: "weakref.WeakSet[ReadAhead]" = weakref.WeakSet()
_STOPS: "set[threading.Event]" = set()  # the stop events of running `prefetched` threads


@atexit.register
def _stop_all():
    """Stop reader threads before the interpreter finalizes (a daemon thread inside a buffered
    read at shutdown aborts the process)."""
    for reader in list(_LIVE):
        reader.close()
    for stop in list(_STOPS):
        stop.set()


class ReadAhead(io.RawIOBase):
    """A readable binary stream fed by a thread that reads `source` ahead of the consumer."""

    def __init__(self, source, depth: int = 8, chunk: int = CHUNK):
        self._source = source
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._pending, self._offset, self._done = b"", 0, False
        # The thread holds no reference to self, so an abandoned reader is collected and stopped.
        self._thread = threading.Thread(target=_read_into, args=(source, chunk, self._queue, self._stop),
                                        name="wikipairs-readahead", daemon=True)
        weakref.finalize(self, self._stop.set)
        _LIVE.add(self)
        self._thread.start()

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
        if self.closed:
            return
        self._stop.set()
        self._thread.join()
        super().close()
        try:
            self._source.close()
        except Exception:
            pass


def put_unless_stopped(out: queue.Queue, item, stop: threading.Event) -> bool:
    """Put `item` into the bounded queue `out`, waiting while it is full, unless `stop` is set
    first (the consumer went away): then False."""
    while not stop.is_set():
        try:
            out.put(item, timeout=0.05)
            return True
        except queue.Full:
            continue
    return False


def _read_into(source, chunk: int, out: queue.Queue, stop: threading.Event) -> None:
    try:
        while not stop.is_set():
            data = source.read(chunk)
            if not put_unless_stopped(out, data, stop) or not data:
                return
    except BaseException as e:  # handed to the consumer, raised where it reads
        put_unless_stopped(out, e, stop)


_END = object()


def prefetched(items: Iterator, depth: int = 2) -> Iterator:
    """`items` in the same order, produced up to `depth` ahead by a background thread, so that
    producing overlaps the consumer's work (the trainer: reading and padding the next Parquet
    batches while the device runs a step, as Keras' JAX loop waits for each step when a
    callback reads its logs). An exception of `items` is raised here, after the items before
    it. Closing this iterator (or dropping it, or the interpreter exiting) stops the thread at
    its next hand-over."""
    if depth < 1:
        yield from items
        return
    pipe: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def produce():
        try:
            for item in items:
                if not put_unless_stopped(pipe, (item, None), stop):
                    return
            put_unless_stopped(pipe, (_END, None), stop)
        except BaseException as error:  # noqa: BLE001: handed to the consumer as it is
            put_unless_stopped(pipe, (_END, error), stop)

    threading.Thread(target=produce, name="wikipairs-prefetch", daemon=True).start()
    _STOPS.add(stop)
    try:
        while True:
            item, error = pipe.get()
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        _STOPS.discard(stop)
