"""The export's output folder: written whole, never over files it did not write.

Everything is written into `OUT.tmp-export-PID` beside OUT and renamed to OUT when complete; a
previous export there (it holds `wikipairs-export.json`) is replaced only then. A non-empty OUT
without that file is refused, and nothing is deleted.
"""
from __future__ import annotations

import contextlib
import json
import os
import shutil
from typing import Iterator

from .. import __version__, fileio
from .rows import ExportError

MARKER = "wikipairs-export.json"


def check_output(out: str) -> None:
    if fileio.is_url(out):
        raise ExportError(f"{out}: export writes local folders only")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ExportError(f"{out}: exists and is not a folder")
    if os.path.isdir(out) and os.listdir(out) and not os.path.isfile(os.path.join(out, MARKER)):
        raise ExportError(f"{out}: not empty and not written by wikipairs export "
                          f"(no {MARKER}); refusing to overwrite it")


@contextlib.contextmanager
def output_folder(out: str, info: dict) -> Iterator[str]:
    """Yields a temporary folder to write into; on success it holds `MARKER` (`info` plus the
    wikipairs version) and replaces `out`; on failure it is removed and `out` is untouched."""
    check_output(out)
    out = os.path.abspath(out)
    tmp = f"{out}.tmp-export-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    try:
        yield tmp
        with open(os.path.join(tmp, MARKER), "w", encoding="utf-8") as f:
            json.dump({"tool": "wikipairs export", "version": __version__, **info}, f, indent=2)
            f.write("\n")
        check_output(out)  # still ours (or absent) after the work
        old = f"{out}.old-export-{os.getpid()}"
        if os.path.isdir(out):
            os.rename(out, old)
        os.rename(tmp, out)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


class JsonLines:
    """One JSON object per line, UTF-8 as is (not \\u-escaped)."""

    def __init__(self, path: str):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        self.file = open(path, "w", encoding="utf-8")
        self.count = 0

    def write(self, obj: dict) -> None:
        self.file.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.count += 1

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.file.close()
