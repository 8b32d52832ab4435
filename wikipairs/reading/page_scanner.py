"""The one byte-level scanner of a dump's `<page>` blocks, for the stages that need no parsed XML.

Searching bytes for `<page>` and `</page>` is several times faster than parsing, and enough where
a stage reads only a few tags of each page or moves whole pages: the redirects pass (page_reader),
the language sample (language_sample), cutting a file into byte ranges of whole pages and
writing a multistream copy (splits). The tags cannot occur in a page's text: XML escapes `<`.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

_OPEN, _CLOSE = b"<page>", b"</page>"


@dataclass(frozen=True)
class PageBlock:
    offset: int  # where its "<page>" starts in the stream
    xml: bytes  # "<page>" ... "</page>"
    gap: bytes  # the bytes between the previous page (or the header) and this one


class PageScanner:
    """The `<page>...</page>` blocks of a binary XML stream, in order.

    `header()`: the bytes before the first `<page>` (all of them in a stream without pages).
    Iterating yields PageBlocks; a page runs from `<page>` to the first `</page>` after it.
    Once iterated to the end, `tail` holds the bytes after the last page: a `<page>` there means
    the stream ends inside a page, and `</mediawiki>` is missing from a cut file.
    """

    def __init__(self, stream, block: int = 1 << 20):
        self.stream, self.block = stream, block
        self.tail = b""
        self._buffer, self._offset = b"", 0  # unscanned bytes, and the offset of their start
        self._header: bytes | None = None

    def header(self) -> bytes:
        if self._header is None:
            buffer = b""
            while (at := buffer.find(_OPEN)) < 0:
                data = self.stream.read(self.block)
                if not data:
                    at = len(buffer)
                    break
                buffer += data
            self._header, self._buffer, self._offset = buffer[:at], buffer[at:], at
        return self._header

    def __iter__(self) -> Iterator[PageBlock]:
        self.header()
        buffer, pos, offset = self._buffer, 0, self._offset
        searched = 0  # where the search for the current page's "</page>" resumes
        while True:
            start = buffer.find(_OPEN, pos)
            end = buffer.find(_CLOSE, max(start, searched)) if start >= 0 else -1
            if end >= 0:
                end += len(_CLOSE)
                yield PageBlock(offset + start, buffer[start:end], buffer[pos:start])
                pos = searched = end
                continue
            data = self.stream.read(self.block)
            if not data:
                self.tail, self._buffer = buffer[pos:], b""
                return
            # A long page takes several reads: search only what came since (less the tag's length).
            searched = max(len(buffer) - len(_CLOSE), start if start >= 0 else pos) - pos
            buffer, offset, pos = buffer[pos:] + data, offset + pos, 0
