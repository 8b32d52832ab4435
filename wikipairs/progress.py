"""Progress lines of long jobs, one rule for all of them (`wikipairs parse`, the build driver,
ReQA's encoding): a line at most every `every` seconds with the counts so far and a rate since
the start, nothing when quiet, and a final line at the end, even right after another one.

`Throttle` says when a line (or a split's progress note) is due, `ProgressLines` applies the rule
and computes the rate; the line writers say where lines go (`LineWriter`: each on its own line,
to stderr or a file descriptor; `InPlaceLineWriter`: replacing each other on a terminal). Each job
words its own line. The trainer's log is per `log_every` steps, not per time, and keeps its own
(trainer/events.py). Standard library only: this is the core.
"""
from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable

Clock = Callable[[], float]


class Throttle:
    """Due at most once every `every` seconds, counted from its creation; a forced check (a
    final line, a last note) is due at once."""

    def __init__(self, every: float, clock: Clock = time.monotonic):
        self.every, self.clock = every, clock
        self.last = clock()

    def due(self, force: bool = False) -> bool:
        now = self.clock()
        if not force and now - self.last < self.every:
            return False
        self.last = now
        return True

    def seconds_left(self) -> float:
        """How long until it is due (what a reporting thread waits)."""
        return max(0.0, self.last + self.every - self.clock())


def _write_stderr(text: str) -> None:
    # sys.stderr looked up at each line: tests and the CLI may swap it after the writer is made.
    sys.stderr.write(text)
    sys.stderr.flush()


class LineWriter:
    """Each line on its own, ended by a newline, to `write` (default: stderr)."""

    def __init__(self, write: Callable[[str], object] = _write_stderr):
        self.write = write

    @classmethod
    def to_fd(cls, fd: int) -> LineWriter:
        """Lines written to a file descriptor (the build driver's saved stderr)."""
        return cls(lambda text: os.write(fd, text.encode()))

    def line(self, text: str, final: bool) -> None:
        self.write(text + "\n")


class InPlaceLineWriter:
    """On a terminal, each line replaces the one before ("\\r") and the final one stays; a log
    file gets the final line only, not one line per update."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = self.stream.isatty()

    def line(self, text: str, final: bool) -> None:
        if final or self.terminal:
            self.stream.write(text + ("\n" if final else "\r"))
            self.stream.flush()


class ProgressLines:
    """One job's progress lines, by the rule of this module. `report(done, line)` writes
    `line(rate)`, `rate` being `done` per second since the start, when a line is due; with
    `final=True` at once. Nothing at all when `quiet`."""

    def __init__(self, writer: LineWriter | InPlaceLineWriter | None = None, every: float = 5.0,
                 quiet: bool = False, clock: Clock = time.monotonic):
        self.writer = writer if writer is not None else LineWriter()
        self.quiet, self.clock = quiet, clock
        self.start = clock()
        self.throttle = Throttle(every, clock)

    def rate(self, done: float) -> float:
        return done / max(self.clock() - self.start, 1e-9)

    def report(self, done: float, line: Callable[[float], str], final: bool = False) -> bool:
        """Whether a line was written. `line` is called only then: wording it costs nothing
        between lines."""
        if self.quiet or not self.throttle.due(force=final):
            return False
        self.writer.line(line(self.rate(done)), final)
        return True
