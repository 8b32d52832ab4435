"""Units of parallel reading: a whole dump file, or a range of bz2 streams of a multistream dump.

Wikimedia's `*-multistream.xml.bz2` files are many bz2 streams of ~100 pages each, and the
`*-multistream-index.txt.bz2` beside them lists `offset:page_id:title` for every page. A split is
a byte range [start, end) covering whole streams; it decompresses on its own, so many workers read
one large file. The stream before the first page (offset 0) holds `<mediawiki>` and `<siteinfo>`,
which every split reuses as its header.
"""
from __future__ import annotations

import bz2
import os
import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from .dump import DumpFile, expand_inputs
from .errors import DumpError
from .records import Page

STREAMS_PER_SPLIT = 50  # ~5,000 pages: enough work per split, little memory
PARTS_PER_FILE = 2  # splits of a file without an index: each reads the file, parses its pages
PAGES_PER_BLOCK = 50  # those splits take turns by blocks of this many pages


@dataclass(frozen=True)
class Split:
    path: str
    start: int = 0  # byte range of whole bz2 streams; (0, None): the whole file
    end: int | None = None
    header_end: int = 0  # end of the header stream (multistream splits only)
    part: int = 0  # without an index: this split parses blocks `part`, `part + parts`, ...
    parts: int = 1

    @property
    def whole_file(self) -> bool:
        return self.start == 0 and self.end is None

    def owns(self, ordinal: int) -> bool:
        """Whether the page at this position of the file is this split's to parse."""
        return (ordinal // PAGES_PER_BLOCK) % self.parts == self.part


def index_for(path: str) -> str | None:
    """The multistream index beside `path` (Wikimedia's naming), if it exists."""
    name = re.sub(r"multistream\.xml\.bz2$", "multistream-index.txt.bz2", path)
    return name if name != path and os.path.exists(name) else None


def stream_offsets(index_path: str) -> list[int]:
    """Sorted distinct stream offsets of a multistream index."""
    offsets = set()
    try:
        with bz2.open(index_path, "rt", encoding="utf-8") as f:
            for line in f:
                head, sep, _ = line.partition(":")
                if sep:
                    offsets.add(int(head))
    except (OSError, EOFError, ValueError) as e:
        raise DumpError(f"{index_path}: not a readable multistream index ({e})") from None
    return sorted(offsets)


def plan_splits(patterns: list[str], streams_per_split: int = STREAMS_PER_SPLIT,
                parts_per_file: int = PARTS_PER_FILE) -> list[Split]:
    """Splits of the inputs: byte ranges for multistream files with an index; else `parts_per_file`
    splits per file that each read the file and parse every `parts_per_file`-th block of pages.
    The plan depends on the inputs and these two numbers only (never on the runner)."""
    splits = []
    for path in expand_inputs(patterns):
        index = index_for(path)
        offsets = stream_offsets(index) if index else []
        if len(offsets) <= 1 or streams_per_split <= 0:
            parts = max(1, parts_per_file)
            splits.extend(Split(path, part=k, parts=parts) for k in range(parts))
            continue
        starts = offsets[::streams_per_split]
        ends = starts[1:] + [None]
        splits.extend(Split(path, a, b, offsets[0]) for a, b in zip(starts, ends))
    return splits


def _split_xml(split: Split) -> bytes:
    """Header (root element and siteinfo) + the split's pages + the closing tag, decompressed."""
    with open(split.path, "rb") as f:
        header = bz2.decompress(f.read(split.header_end))
        f.seek(split.start)
        body = bz2.decompress(f.read() if split.end is None else f.read(split.end - split.start))
    cut = header.find(b"<page>")
    header = header if cut < 0 else header[:cut]
    body = body.replace(b"</mediawiki>", b"")
    return header + body + b"</mediawiki>\n"


def read_split(split: Split, counts: Counter | None = None, allow_truncated: bool = False,
               lang: str | None = None) -> Iterator[Page]:
    """The pages of a split (Page.source is the dump file's path). `counts` gets pages_read
    for the split's own pages only, and truncated_files from the file's first split only."""
    counts = counts if counts is not None else Counter()
    if split.whole_file:
        if split.parts == 1:
            yield from DumpFile(split.path, lang=lang).pages(counts, allow_truncated)
            return
        seen = Counter()
        for ordinal, page in enumerate(DumpFile(split.path, lang=lang).pages(seen, allow_truncated)):
            if split.owns(ordinal):
                counts["pages_read"] += 1
                yield page
        if split.part == 0 and seen["truncated_files"]:
            counts["truncated_files"] += seen["truncated_files"]
        return
    try:
        xml = _split_xml(split)
    except (OSError, EOFError, ValueError) as e:
        raise DumpError(f"{split.path}: bytes {split.start}-{split.end} are not whole bz2 streams "
                        f"({e})") from None
    with tempfile.TemporaryDirectory(prefix="wikipairs-split-") as folder:
        tmp = os.path.join(folder, "split.xml")
        with open(tmp, "wb") as f:
            f.write(xml)
        del xml
        for page in DumpFile(tmp, lang=lang).pages(counts, allow_truncated):
            page.source = split.path
            yield page


def read_titles(split: Split, lang: str | None = None) -> Iterator[Page]:
    """Every page of the split's file (whole-file splits: only from part 0), for the title and
    redirect scan; tolerant of a cut file (the parse stage reports it)."""
    if split.whole_file and split.part != 0:
        return
    yield from read_split(Split(split.path, split.start, split.end, split.header_end), None,
                          True, lang)


__all__ = ["Split", "plan_splits", "read_split", "read_titles", "index_for", "stream_offsets",
           "STREAMS_PER_SPLIT", "PARTS_PER_FILE", "PAGES_PER_BLOCK"]
