"""Units of parallel reading: a whole dump file, or a range of bz2 streams of a multistream dump.

An Enterprise HTML dump (a gzip'd tar of NDJSON records: a gzip stream cannot be entered in
the middle) is treated as a dump without an index: `prepare_file` decompresses it once into a
plain NDJSON copy (every member's records, in order) cut into byte ranges of whole records;
where that cannot be done, each of its `parts_per_file` splits reads the file and parses every
`parts`-th block of PAGES_PER_BLOCK records.

Wikimedia's `*-multistream.xml.bz2` files are many bz2 streams of ~100 pages each, and the
`*-multistream-index.txt.bz2` beside them lists `offset:page_id:title` for every page. A split is
a byte range [start, end) covering whole streams; it decompresses on its own, so many workers read
one large file. The stream before the first page (offset 0) holds `<mediawiki>` and `<siteinfo>`,
which every split reuses as its header.

A plain passage corpus (JSON lines or Parquet: reading/passages.py) is planned here directly:
byte ranges of whole lines or ranges of rows, cut where the title changes (`kind`).
"""
from __future__ import annotations

import bz2
import contextlib
import hashlib
import html
import io
import lzma
import math
import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from .. import fileio
from .bloom import BloomFilter
from ..errors import DumpError
from ..records import Page
from ..text.titles import TitleParser
from . import fastbz2
from .fastbz2 import open_bz2
from .enterprise_html import ENTERPRISE_HTML, EnterpriseDump, byte_lines, input_kind
from .page_reader import DumpFile, PageReader
from .page_scanner import PageBlock, PageScanner
from .passages import PASSAGE_KINDS, PASSAGES_PARQUET, input_kind as passages_kind, \
    plan_passage_splits, read_passage_pages
from .sources import (ChunkStream, XmlStream, decompressed, expand_inputs, is_compressed,
                      open_xml)

STREAMS_PER_SPLIT = 50  # ~5,000 pages: enough work per split, little memory
PARTS_PER_FILE = 2  # splits of a file without an index: each reads the file, parses its pages
PAGES_PER_BLOCK = 50  # those splits take turns by blocks of this many pages


@dataclass(frozen=True)
class Split:
    path: str
    start: int = 0  # byte range of whole bz2 streams; (0, None): the whole file
    end: int | None = None
    header_end: int = 0  # end of the header stream (multistream splits only)
    part: int = 0  # without an index: part `part` of `parts`
    parts: int = 1
    plain: str | None = None  # decompressed copy (prepare_file): [start, end) are offsets in it
    line: int = 0  # line of the file (decompressed) where the page at `start` begins; 0: unknown
    kind: str = ""  # a passage corpus (passages.PASSAGE_KINDS): [start, end) bytes or rows

    @property
    def whole_file(self) -> bool:
        return self.plain is None and self.start == 0 and self.end is None and not self.kind

    def owns(self, ordinal: int) -> bool:
        """Whether the page at this position of the file is this split's to parse."""
        return (ordinal // PAGES_PER_BLOCK) % self.parts == self.part


PLAIN_TO_COMPRESSED = 4  # plain XML or JSON lines: about 4x the bytes of the same pages in bz2


def input_work_bytes(paths: list[str]) -> int:
    """The inputs' size as compressed dump (a plain file, XML or JSON lines, counts
    1/PLAIN_TO_COMPRESSED; Parquet is compressed): what the work of reading them scales with,
    known before reading."""
    def compressed(path):
        return is_compressed(path) or passages_kind(path) == PASSAGES_PARQUET
    return sum(fileio.size(p) // (1 if compressed(p) else PLAIN_TO_COMPRESSED) for p in paths)


def auto_workers(cores: int, work_bytes: int, bytes_per_worker: int,
                 units: int | None = None) -> int:
    """Processes for a `--workers 0` run: one per core, but no more than one per
    `bytes_per_worker` of `work_bytes` (input_work_bytes; a worker process costs seconds to
    start, which a small input does not pay back) nor than the `units` of parallel work."""
    return max(1, min(cores, units or cores, math.ceil(work_bytes / bytes_per_worker)))


def index_for(path: str) -> str | None:
    """The multistream index beside `path` (Wikimedia's naming), if it exists."""
    name = re.sub(r"multistream\.xml\.bz2$", "multistream-index.txt.bz2", path)
    return name if name != path and fileio.exists(name) else None


def _index_lines(index_path: str) -> Iterator[str]:
    with fileio.open_read(index_path) as raw, bz2.open(raw, "rt", encoding="utf-8") as f:
        yield from f


def stream_offsets(index_path: str) -> list[int]:
    """Sorted distinct stream offsets of a multistream index."""
    offsets = set()
    try:
        for line in _index_lines(index_path):
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
        kind = passages_kind(path)
        if kind is not None:  # whole lines or rows, cut where the title changes
            ranges = plan_passage_splits(path, parts_per_file, kind)
            splits.extend(Split(path, a, b, part=k, parts=len(ranges), kind=kind)
                          for k, (a, b) in enumerate(ranges))
            continue
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


_CLOSING = re.compile(rb"</mediawiki>\s*\Z")


def _multistream_chunks(split: Split) -> Iterator[bytes]:
    """The XML of a multistream split: header (root element and siteinfo) + the split's pages
    + the closing tag, decompressed as it is read (a split of 50 streams is ~150 MB of XML: never
    held whole). The last split's own closing tag is replaced by ours."""
    try:
        with fileio.open_read(split.path) as f:
            header = bz2.decompress(f.read(split.header_end))
            cut = header.find(b"<page>")
            yield header if cut < 0 else header[:cut]
            f.seek(split.start)
            streams = f.read() if split.end is None else f.read(split.end - split.start)
        body = fastbz2.FastBz2Reader(lambda: io.BytesIO(streams))  # compressed: ~1/4 of the XML
        try:
            tail = b""  # the last bytes, held back: they may hold the file's closing tag
            while chunk := body.read1(1 << 20):
                pending = tail + chunk
                yield pending[:-64]
                tail = pending[-64:]
            yield _CLOSING.sub(b"", tail) if split.end is None else tail
        finally:
            body.close()
    except (OSError, EOFError, ValueError) as e:
        raise DumpError(f"{split.path}: bytes {split.start}-{split.end} are not whole bz2 "
                        f"streams ({e})") from None
    yield b"</mediawiki>\n"


# ---- files without an index: one decompression, a plain copy, byte ranges of whole pages -----

_TITLE = re.compile(rb"<title>([^<]*)</title>(?:\s*<ns>(-?\d+)</ns>)?")


def _whole_pages(scanner: PageScanner) -> Iterator[PageBlock]:
    """Every page of the scanner's stream, for a plain copy: a stray </page> is a ValueError
    and a stream that ends inside a page an EOFError."""
    for block in scanner:
        if b"</page>" in block.gap:
            raise ValueError("malformed page boundaries")
        yield block
    if b"<page>" in scanner.tail:
        raise EOFError("the file ends inside a page")
    if b"</page>" in scanner.tail:
        raise ValueError("malformed page boundaries")


def prepare_file(path: str, parts: int, workdir: str, titles: TitleParser, capacity: int
                 ) -> tuple[list[Split] | None, BloomFilter | None, int]:
    """Decompress a file without an index once: write a plain copy into `workdir`, note where
    its pages start, and cut it into `parts` byte ranges of about equal page counts. Also returns
    a Bloom filter of its main-namespace titles and the number of pages.

    Returns (None, None, 0) where the fast path does not apply (UTF-16, a truncated or odd file):
    the splits then read the file itself (and report what is wrong with it)."""
    if input_kind(path) == ENTERPRISE_HTML:
        return _prepare_html(path, parts, workdir, titles, capacity)
    fileio.makedirs(workdir)
    copy = fileio.join(workdir, hashlib.sha1(fileio.abspath(path).encode()).hexdigest() + ".xml")
    compressed, starts, lines, names, header_end, end = False, [], [], [], 0, 0
    try:
        with fileio.open_read(path) as source:
            if source.peek(3)[:3] == b"BZh":  # this stage only copies: decode on every core
                stream = io.BufferedReader(open_bz2(path, threads=os.cpu_count() or 1), 1 << 20)
                compressed = True
            else:
                stream, compressed = decompressed(source)
            copy = copy if compressed else path  # a plain file is its own copy
            with stream, (fileio.create(copy + ".tmp") if compressed else io.BytesIO()) as out:
                if stream.peek(4)[:2] in (b"\xff\xfe", b"\xfe\xff"):
                    raise ValueError("UTF-16")
                scanner = PageScanner(stream)
                header = scanner.header()
                header_end = len(header)
                line = header.count(b"\n") + 1  # lines, for errors that name one (DumpError)
                if compressed:
                    out.write(header)
                for block in _whole_pages(scanner):
                    line += block.gap.count(b"\n")
                    lines.append(line)
                    line += block.xml.count(b"\n")
                    if compressed:  # the copy is the decompressed file, up to its last page
                        out.write(block.gap)
                        starts.append(out.tell())
                        out.write(block.xml)
                    else:
                        starts.append(block.offset)
                    match = _TITLE.search(block.xml, 0, 2048)
                    if match:
                        names.append((match.group(1), match.group(2)))
                end = (out.tell() if compressed
                       else starts[-1] + len(block.xml) if starts else header_end)
        if compressed:
            fileio.rename(copy + ".tmp", copy)
    except (OSError, EOFError, ValueError, lzma.LZMAError):
        if compressed:
            for leftover in (copy + ".tmp", copy):
                with contextlib.suppress(OSError):
                    if fileio.exists(leftover):
                        fileio.remove(leftover)
        return None, None, 0
    bloom = BloomFilter(capacity)
    for raw, ns in names:
        title = html.unescape(raw.decode("utf-8", "replace"))
        parsed = titles.parse(title)
        if ns in (None, b"0") or (parsed is not None and parsed.ns == 0):
            bloom.add(parsed.title if parsed is not None and not parsed.interwiki else title)
    firsts = [len(starts) * k // parts for k in range(parts)]
    bounds = [starts[i] if starts else end for i in firsts] + [end]
    splits = [Split(path, bounds[k], bounds[k + 1], header_end, k, parts, plain=copy,
                    line=lines[firsts[k]] if firsts[k] < len(lines) else 0)
              for k in range(parts)]
    return splits, bloom, len(starts)


def _prepare_html(path: str, parts: int, workdir: str, titles: TitleParser, capacity: int
                  ) -> tuple[list[Split] | None, BloomFilter | None, int]:
    """prepare_file for an Enterprise HTML dump: its records (every NDJSON member, in order) are
    written once to a plain NDJSON copy in `workdir`, cut into `parts` byte ranges of whole
    records; the Bloom filter holds its main-namespace titles and the titles its records list
    as redirects. (None, None, 0) where the file cannot be read to its end: the planned splits
    then read the file itself and report what is wrong with it."""
    fileio.makedirs(workdir)
    copy = fileio.join(workdir, hashlib.sha1(fileio.abspath(path).encode()).hexdigest() + ".ndjson")
    bloom, starts, end = BloomFilter(capacity), [], 0
    try:
        dump = EnterpriseDump(path, lang=titles.site.lang)
        with fileio.create(copy + ".tmp") as out:
            for member, line_no, line in dump.lines():
                page = dump.page(dump.decode(line, member, line_no), member, line_no)
                if page.ns == 0:
                    bloom.add(page.title)
                    for source in page.redirects:
                        bloom.add(source)
                starts.append(end)
                out.write(line)
                end += len(line)
                if not line.endswith(b"\n"):
                    out.write(b"\n")
                    end += 1
        fileio.rename(copy + ".tmp", copy)
    except (DumpError, OSError):
        for leftover in (copy + ".tmp", copy):
            with contextlib.suppress(OSError):
                if fileio.exists(leftover):
                    fileio.remove(leftover)
        return None, None, 0
    firsts = [len(starts) * k // parts for k in range(parts)]
    bounds = [starts[i] if i < len(starts) else end for i in firsts] + [end]
    splits = [Split(path, bounds[k], bounds[k + 1], 0, k, parts, plain=copy) for k in range(parts)]
    return splits, bloom, len(starts)


def _html_plain_pages(split: Split, counts: Counter, lang: str | None) -> Iterator[Page]:
    """The records of a split of an Enterprise HTML dump's plain copy, as HtmlPages."""
    dump = EnterpriseDump(split.path, lang=lang)
    with fileio.open_read(split.plain) as f:
        f.seek(split.start)
        for number, line in enumerate(byte_lines(f, split.end - split.start), 1):
            if line.strip():
                counts["pages_read"] += 1
                yield dump.page(dump.decode(line, split.plain, number), split.plain, number)


def _plain_chunks(split: Split) -> Iterator[bytes]:
    """The XML of a split of a plain copy: its header, the split's byte range (whole pages and
    the text between them, as in the file), and the closing tag."""
    with fileio.open_read(split.plain) as f:
        yield f.read(split.header_end)
        f.seek(split.start)
        remaining = split.end - split.start
        while remaining > 0 and (chunk := f.read(min(remaining, 1 << 20))):
            remaining -= len(chunk)
            yield chunk
    yield b"</mediawiki>\n"


def _plain_line_shift(split: Split) -> int | None:
    """From the lines of a plain split's XML to the file's (None: the split does not know)."""
    if not split.line:
        return None
    with fileio.open_read(split.plain) as f:
        header_lines = f.read(split.header_end).count(b"\n")
    return split.line - (header_lines + 1)


def read_split(split: Split, counts: Counter | None = None, allow_truncated: bool = False,
               lang: str | None = None) -> Iterator[Page]:
    """The pages of a split (Page.source is the dump file's path). `counts` gets pages_read
    for the split's own pages only, and truncated_files from the file's first split only."""
    counts = counts if counts is not None else Counter()
    if split.kind in PASSAGE_KINDS:
        yield from read_passage_pages(split.path, split.kind, split.start, split.end, counts)
        return
    if split.whole_file:
        yield from _pages_of_part(split, counts, allow_truncated, lang)
        return
    if split.plain is not None and split.plain.endswith(".ndjson"):
        yield from _html_plain_pages(split, counts, lang)
        return
    if split.plain is not None:
        chunks, shift = _plain_chunks(split), _plain_line_shift(split)
    else:
        chunks, shift = _multistream_chunks(split), None
    reader = PageReader(lambda: XmlStream(ChunkStream(chunks)), split.path, lang=lang,
                        line_shift=shift)
    yield from reader.pages(counts, allow_truncated)


def _pages_of_part(split: Split, counts: Counter, allow_truncated: bool, lang: str | None
                   ) -> Iterator[Page]:
    """The pages of a whole-file split: all of them, or those its part owns."""
    reader = EnterpriseDump if input_kind(split.path) == ENTERPRISE_HTML else DumpFile
    if split.parts == 1:
        yield from reader(split.path, lang=lang).pages(counts, allow_truncated)
        return
    seen = Counter()
    for ordinal, page in enumerate(reader(split.path, lang=lang).pages(seen, allow_truncated)):
        if split.owns(ordinal):
            counts["pages_read"] += 1
            yield page
    if split.part == 0 and seen["truncated_files"]:
        counts["truncated_files"] += seen["truncated_files"]


def write_multistream(source: str, dump: str, index: str, pages_per_stream: int = 100) -> int:
    """Write `source` (any dump we read) as Wikimedia lays out a multistream file: a header stream
    (<mediawiki>, <siteinfo>), bz2 streams of `pages_per_stream` pages, a last stream with the
    closing tag, and `index` (bz2 text) with `offset:page_id:title` per page. Returns the number of
    page streams. For tests and benchmarks."""
    xml = open_xml(source, light=True)
    scanner = PageScanner(xml.reader)
    lines, streams, group = [], 0, []
    with open(dump, "wb") as f:
        f.write(bz2.compress(scanner.header()))

        def flush():
            offset = f.tell()
            for page in group:
                page_id = int(re.search(rb"<id>(\d+)</id>", page).group(1))
                title = re.search(rb"<title>(.*?)</title>", page, re.S).group(1).decode("utf-8")
                lines.append(f"{offset}:{page_id}:{title}\n")
            f.write(bz2.compress(b"".join(group)))
            group.clear()

        for block in scanner:
            group.append(block.gap + block.xml)
            if len(group) == pages_per_stream:
                flush()
                streams += 1
        if group:
            flush()
            streams += 1
        f.write(bz2.compress(scanner.tail))
    xml.close()
    with bz2.open(index, "wt", encoding="utf-8") as f:
        f.writelines(lines)
    return streams


def index_titles(index_path: str, titles: TitleParser, capacity: int) -> BloomFilter:
    """A Bloom filter of the main-namespace titles a multistream index lists."""
    names = []
    for line in _index_lines(index_path):
        parts = line.rstrip("\n").split(":", 2)
        if len(parts) == 3:
            names.append(parts[2])
    bloom = BloomFilter(capacity)
    for name in names:
        parsed = titles.parse(name)
        if parsed is not None and parsed.ns == 0 and not parsed.interwiki:
            bloom.add(parsed.title)
    return bloom


__all__ = ["Split", "plan_splits", "read_split", "prepare_file", "index_titles", "index_for",
           "stream_offsets", "STREAMS_PER_SPLIT", "PARTS_PER_FILE", "PAGES_PER_BLOCK",
           "PLAIN_TO_COMPRESSED", "auto_workers", "input_work_bytes"]
