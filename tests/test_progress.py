"""wikipairs.progress, the one rule of progress lines: at most one every `every` seconds, with
a rate since the start, nothing when quiet, a final line at the end. Time is a fake clock."""
from __future__ import annotations

import io

from wikipairs.progress import InPlaceLineWriter, LineWriter, ProgressLines, Throttle


class FakeClock:
    def __init__(self, now: float = 100.0):
        self.now = now

    def __call__(self) -> float:
        return self.now


def _lines(every: float = 5.0, quiet: bool = False):
    """(ProgressLines writing into a list, the list, its clock)."""
    written, clock = [], FakeClock()
    lines = ProgressLines(LineWriter(written.append), every, quiet, clock)
    return lines, written, clock


def _report(lines: ProgressLines, done: int, final: bool = False) -> bool:
    return lines.report(done, lambda rate: f"{done} done, {rate:.1f}/s", final)


def test_throttle_is_due_once_per_period_counted_from_its_start():
    clock = FakeClock()
    throttle = Throttle(2.0, clock)
    assert not throttle.due() and throttle.seconds_left() == 2.0
    clock.now += 1.5
    assert not throttle.due() and throttle.seconds_left() == 0.5
    clock.now += 0.5
    assert throttle.due() and not throttle.due()  # the period starts again from here
    clock.now += 1.0
    assert throttle.due(force=True)
    clock.now += 1.9
    assert not throttle.due()
    clock.now += 5.0
    assert throttle.seconds_left() == 0.0 and throttle.due()


def test_a_line_at_most_every_period_with_the_rate_since_the_start():
    lines, written, clock = _lines(every=5.0)
    for _ in range(4):  # four seconds: no line yet
        clock.now += 1.0
        assert not _report(lines, 10)
    clock.now += 1.0
    assert _report(lines, 50)
    clock.now += 4.0
    assert not _report(lines, 60)
    clock.now += 1.0
    assert _report(lines, 100)
    assert written == ["50 done, 10.0/s\n", "100 done, 10.0/s\n"]


def test_the_final_line_is_written_even_right_after_another():
    lines, written, clock = _lines(every=5.0)
    clock.now += 5.0
    assert _report(lines, 5)
    assert _report(lines, 5, final=True)
    assert written == ["5 done, 1.0/s\n", "5 done, 1.0/s\n"]


def test_a_job_shorter_than_the_period_writes_its_final_line_only():
    lines, written, clock = _lines(every=5.0)
    clock.now += 0.5
    assert not _report(lines, 1)
    assert _report(lines, 2, final=True)
    assert written == ["2 done, 4.0/s\n"]


def test_quiet_writes_nothing_not_even_the_final_line():
    lines, written, clock = _lines(quiet=True)
    worded = []
    clock.now += 60.0
    assert not lines.report(1, worded.append)
    assert not lines.report(1, worded.append, final=True)
    assert written == [] and worded == []  # not even worded


def test_the_line_is_worded_only_when_it_is_written():
    lines, _, clock = _lines(every=5.0)
    worded = []
    for _ in range(10):
        clock.now += 1.0
        lines.report(1, lambda rate: worded.append(rate) or "line")
    assert len(worded) == 2  # at 5 s and 10 s


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_in_place_lines_on_a_terminal_and_the_final_line_only_in_a_file():
    for stream, expected in ((_Terminal(), "1 done\r2 done\r3 done\n"),
                             (io.StringIO(), "3 done\n")):
        writer = InPlaceLineWriter(stream)
        writer.line("1 done", final=False)
        writer.line("2 done", final=False)
        writer.line("3 done", final=True)
        assert stream.getvalue() == expected


def test_lines_to_a_file_descriptor(tmp_path):
    path = tmp_path / "lines.txt"
    with open(path, "wb") as f:
        writer = LineWriter.to_fd(f.fileno())
        writer.line("one", final=False)
        writer.line("two", final=True)
    assert path.read_text() == "one\ntwo\n"


def test_lines_go_to_stderr_by_default(capsys):
    lines = ProgressLines(every=5.0)
    assert lines.report(3, lambda rate: "3 pages", final=True)
    assert capsys.readouterr().err == "3 pages\n"
