"""What a person sees while a download runs: per-file lines on stdout, a tqdm bar on stderr (on
a terminal only), sizes in KiB/MiB/GiB. tqdm is imported only when a download runs.

Not wikipairs.progress: its rule is a throttled line of counts for long jobs, while a download
says each event (a file started, resumed, retried, verified) at once and shows bytes as a bar.
"""
from __future__ import annotations

import sys


def human_size(n: int | None) -> str:
    """A byte count for people: 1.5 GiB."""
    if n is None:
        return "? bytes"
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n:,} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"


def echo_stdout(line: str) -> None:
    """A line on stdout; tqdm.write clears a progress bar on stderr first and redraws it after."""
    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)


class Progress:
    """A tqdm bar on stderr for one file, only on a terminal and without --quiet."""

    def __init__(self, name: str, total: int | None, initial: int, quiet: bool):
        from tqdm import tqdm

        enabled = not quiet and sys.stderr.isatty()
        self.bar = tqdm(total=total, initial=initial, unit="B", unit_scale=True,
                        unit_divisor=1024, desc=name, file=sys.stderr, leave=True,
                        dynamic_ncols=True, disable=not enabled)

    def reset(self):
        self.bar.reset(total=self.bar.total)

    def update(self, n: int):
        self.bar.update(n)

    def close(self):
        self.bar.close()
