"""Streaming pages out of MediaWiki XML dumps with mwxml.

Plain, .bz2 (multistream too: Python's bz2 reads concatenated streams), .gz and .xz files,
recognized by their first bytes; several files or glob patterns; memory stays flat because pages
are read one at a time. Export versions 0.3 to 0.11: old ones have no <ns>, and the namespace
comes from the title prefix (siteinfo names, canonical names and aliases). Files without <siteinfo>
get English defaults. A file that ends mid-page (a cut plain file, or compressed data cut before
its end marker) is a TruncatedDumpError, or, with allow_truncated, ends after its last complete page.
"""
from __future__ import annotations

import bz2
import codecs
import contextlib
import glob
import gzip
import html
import io
import lzma
import os
import re
import shutil
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from xml.etree.ElementTree import ParseError

import mwxml
import mwxml.errors

from . import fileio
from .errors import DumpError, TruncatedDumpError
from .fastbz2 import open_bz2
from .language_check import TextLanguage, mismatch, warning_line
from .readahead import ReadAhead
from .records import Namespace, Page, SiteInfo
from .titles import TitleParser

_MAGIC = [(b"BZh", bz2.open), (b"\x1f\x8b", gzip.open), (b"\xfd7zXZ\x00", lzma.open)]
_HEAD_BYTES = 1 << 16
# Expat errors that mean "the document stopped": no closing root element, a token, a character or
# a CDATA section cut short. Any other error (an invalid token, a mismatched tag) is bad XML.
_CUT_XML_ERRORS = {3, 5, 6, 20}

# "#REDIRECT [[Target]]" in page text, for old dumps without <redirect>; localized magic words.
REDIRECT_WORDS = ("REDIRECT", "REDIRECTION", "WEITERLEITUNG", "ΑΝΑΚΑΤΕΥΘΥΝΣΗ", "REDIRECCIÓN",
                  "RINVIA", "DOORVERWIJZING", "REDIRECIONAMENTO", "ПЕРЕНАПРАВЛЕНИЕ", "PATRZ",
                  "OMDIRIGERING", "ΑΝΑΚΑΤΕΥΘΥΝΣΗ")
_REDIRECT_TEXT = re.compile(
    r"^\s*#(?:%s)\s*:?\s*\[\[([^\]|]+)" % "|".join(map(re.escape, set(REDIRECT_WORDS))), re.I)


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


class _EofTracker(io.RawIOBase):
    """Wraps a binary stream and remembers whether it reached the end (to tell a cut file).

    `cut` is true when the compressed data stopped before its end marker (see _StopAtCut)."""

    def __init__(self, raw, decompressor: "_StopAtCut | None" = None):
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


def decompressed(raw) -> tuple[object, bool]:
    """(the decompressed stream, True) for a bz2, gzip or xz stream `raw` (a buffered stream from
    fileio.open_read, recognized by its first bytes), else (raw, False)."""
    magic = raw.peek(6)[:6]
    for prefix, opener in _MAGIC:
        if magic.startswith(prefix):
            return opener(raw, "rb"), True
    return raw, False


def _is_compressed(path: str) -> bool:
    with fileio.open_read(path) as f:
        return decompressed(f)[1]


def _open_binary(path: str, copy: DecompressedCopy | None = None, light: bool = False):
    """The file's decompressed bytes. `light`: its reader does little per byte, so bz2 is
    decoded by indexed_bzip2 in the calling thread (less CPU; see fastbz2)."""
    raw = fileio.open_read(path)
    if light and raw.peek(3)[:3] == b"BZh":
        raw.close()
        return _StopAtCut(open_bz2(path), copy)
    stream, compressed = decompressed(raw)
    return _StopAtCut(stream, copy, raw) if compressed else raw


def _decoded_stream(path: str, copy: DecompressedCopy | None = None,
                    replay: "_CopyReader | None" = None,
                    light: bool = False) -> tuple[io.RawIOBase, object]:
    """A binary UTF-8 stream of the file's XML, whatever its compression or UTF-16 BOM, and the
    decompressor (None for a plain file), which tells whether the compressed data was cut.
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
        return _Utf8Reencoder(io.TextIOWrapper(stream, encoding="utf-16")), decompressor
    return stream, decompressor


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


_ATTR = re.compile(r'\b(version|xml:lang)="([^"]*)"')


def _language(dbname: str, base: str, xml_lang: str) -> str:
    """The wiki's language code as the siteinfo says it: its dbname ("zh_yuewiki" -> "zh-yue"),
    else its base URL's host, else the root's xml:lang (the content language, "nb" on nowiki)."""
    if dbname.endswith("wiki") and len(dbname) > 4:
        return dbname[:-4].replace("_", "-")
    host = re.match(r"https?://([a-z\-]+)\.wikipedia\.org", base or "")
    if host:
        return host.group(1)
    return xml_lang or "en"


class DumpFile:
    """One dump file: its siteinfo (read on opening) and a stream of its pages.

    With `keep_copy`, a compressed file's decompressed XML is kept while its pages are read (see
    DecompressedCopy), and `reopen()` reads the pages again from that copy."""

    def __init__(self, path: str, lang: str | None = None, keep_copy: bool = False,
                 redirects_only: bool = False, _replay: "_CopyReader | None" = None,
                 name: str | None = None, line_shift: int | None = 0):
        self.path = path
        # Errors name `name` (the user's file where `path` is a temporary copy of some of its
        # pages) and a line of it: the parser's line + `line_shift` (None: not known).
        self.name, self.line_shift = name or path, line_shift
        self._at: tuple[str, int, bool] | None = None  # (title, id, inside it) of the last page
        self.lang = lang
        self._pages_before = 0
        self._copy = None
        self._scan = False  # redirects_only, and the file's head allows the scan (see pages())
        try:
            size = fileio.size(path)
        except OSError as e:
            raise DumpError(f"{path}: cannot read it ({e.strerror or e})") from None
        if size == 0:
            raise DumpError(f"{path}: empty file, not a MediaWiki XML dump")
        head = b""
        self._cut_in_header = False  # the file ends before its first page: no pages at all
        try:
            with self._errors_as_dump_errors(Counter(), allow_truncated=False):
                if keep_copy and _replay is None and COPY_MAX_BYTES > 0 and _is_compressed(path):
                    self._copy = DecompressedCopy()
                self._eof = _EofTracker(*_decoded_stream(path, self._copy, _replay,
                                                         light=redirects_only))
                self._stream = io.BufferedReader(self._eof, _HEAD_BYTES)
                head = self._stream.peek(_HEAD_BYTES)[:_HEAD_BYTES]
                self._dump = self._scannable_header(head) if redirects_only else None
                self._scan = self._dump is not None
                if not self._scan:
                    self._dump = mwxml.Dump.from_file(self._with_siteinfo(head))
        except TruncatedDumpError:
            # pages() reports it, so that --allow-truncated treats it like any cut file.
            self._cut_in_header = True
            self._dump = self._header_only(head)
        # Export versions before 0.5 have no <ns>: mwxml then reads the namespace off the title
        # with the siteinfo's names only (or none, without <siteinfo>), so we derive it ourselves.
        page_at = head.find(b"<page>")
        self._has_ns = page_at < 0 or b"<ns>" in head[page_at:page_at + 4096]
        text_head = head.decode("utf-8", "replace")
        self.site = self._site_info(self._dump.site_info, text_head, lang)
        self.titles = TitleParser(self.site)

    def reopen(self) -> "DumpFile":
        """The same file opened again for another pass; from the decompressed copy when this one
        kept a complete copy and its pages were all read, else from the file."""
        replay = None
        if self._copy is not None:
            replay = self._copy.open() if self._eof.eof else None
            if replay is None:
                self._copy.discard()
            self._copy = None
        return DumpFile(self.path, lang=self.lang, _replay=replay, name=self.name,
                        line_shift=self.line_shift)

    @staticmethod
    def _scannable_header(head: bytes):
        """For a redirects-only pass: a pageless mwxml Dump of the head's <siteinfo>, where the
        head holds the whole <siteinfo> and a first page with <ns> (an export the scan of
        `_scan_redirects` reads as mwxml does); else None."""
        root = re.match(rb"^(\xef\xbb\xbf)?\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*<mediawiki\b[^>]*>",
                        head, re.S)
        start, end, page_at = head.find(b"<siteinfo>"), head.find(b"</siteinfo>"), head.find(b"<page>")
        if root is None or not 0 <= start < end < page_at or b"<ns>" not in head[page_at:page_at + 4096]:
            return None
        siteinfo = head[start:end + len(b"</siteinfo>")]
        try:
            return mwxml.Dump.from_file(io.BytesIO(root.group() + siteinfo + b"</mediawiki>"))
        except (ParseError, mwxml.errors.MalformedXML, ValueError):
            return None

    def _with_siteinfo(self, head: bytes):
        """The XML stream, with an empty <siteinfo> added where the file has none (mwxml needs it)."""
        root = re.search(rb"<mediawiki\b[^>]*>", head)
        if root is None or not re.match(rb"^(\xef\xbb\xbf)?\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*<mediawiki\b",
                                        head, re.S):
            if self._eof.cut and not head.strip():  # a cut .bz2 block gives no data at all
                raise TruncatedDumpError(f"{self.name}: truncated dump")
            raise DumpError(f"{self.name}: not a MediaWiki XML dump (no <mediawiki> root element)")
        page_at = head.find(b"<page>")
        if b"<siteinfo>" in head[: page_at if page_at >= 0 else None]:
            return self._stream
        start = self._stream.read(root.end())
        return _Concat([start + b"<siteinfo></siteinfo>", self._stream])

    @staticmethod
    def _header_only(head: bytes):
        """A dump without pages, with the <siteinfo> of `head` where it is complete."""
        root = re.search(rb"<mediawiki\b[^>]*>", head)
        root = root.group() if root else b"<mediawiki>"
        start, end = head.find(b"<siteinfo>"), head.find(b"</siteinfo>")
        for siteinfo in ([head[start:end + len(b"</siteinfo>")]] if 0 <= start < end else []) + \
                [b"<siteinfo></siteinfo>"]:
            try:
                return mwxml.Dump.from_file(io.BytesIO(root + siteinfo + b"</mediawiki>"))
            except (ParseError, mwxml.errors.MalformedXML, ValueError):
                continue
        return mwxml.Dump.from_file(io.BytesIO(b"<mediawiki><siteinfo></siteinfo></mediawiki>"))

    @contextlib.contextmanager
    def _errors_as_dump_errors(self, counts: Counter, allow_truncated: bool):
        """Turn parser and decompressor exceptions into one-line DumpErrors (or a clean stop)."""
        try:
            yield
        except DumpError:
            raise
        except (ParseError, mwxml.errors.MalformedXML, EOFError, lzma.LZMAError, OSError,
                AssertionError, UnicodeError, ValueError) as e:
            tracker = getattr(self, "_eof", None)
            cut = isinstance(e, EOFError) or (tracker is not None and tracker.cut) or (
                isinstance(e, ParseError) and e.code in _CUT_XML_ERRORS
                and (tracker is None or tracker.eof))
            if not cut:
                raise DumpError(f"{self.name}: not a readable MediaWiki XML dump"
                                f"{self._location(e)} ({_POSITION.sub('', str(e))})") from None
            self._truncated(counts, allow_truncated)

    def _location(self, error: Exception) -> str:
        """Where in the user's file the parser failed: the line (where known) and the page."""
        where = []
        position = getattr(error, "position", None)
        if position and self.line_shift is not None and position[0] + self.line_shift > 0:
            where.append(f" at line {position[0] + self.line_shift:,}")
        if self._at is not None:
            title, page_id, inside = self._at
            where.append(f"{',' if where else ''} {'in' if inside else 'after'} page "
                         f"{title!r} (id {page_id})")
        return "".join(where)

    def _truncated(self, counts: Counter, allow_truncated: bool) -> None:
        """The file ends inside a page: count it (allow_truncated), or raise."""
        if allow_truncated:
            counts["truncated_files"] += 1
            return
        raise TruncatedDumpError(
            f"{self.name}: truncated dump, it ends in the middle of a page after "
            f"{counts['pages_read'] - self._pages_before} complete pages "
            f"(use --allow-truncated to keep them)") from None

    def pages(self, counts: Counter | None = None, allow_truncated: bool = False) -> Iterator[Page]:
        """Yield each page (its last revision); `counts` gets pages_read and truncated_files."""
        counts = counts if counts is not None else Counter()
        self._pages_before = counts["pages_read"]  # the counter may be shared by several files
        if self._cut_in_header:
            if allow_truncated:
                counts["truncated_files"] += 1
                return
            raise TruncatedDumpError(f"{self.name}: truncated dump, it ends before its first page "
                                     f"(use --allow-truncated to go on without it)")
        if self._scan:
            with self._errors_as_dump_errors(counts, allow_truncated):
                yield from self._scan_redirects(counts, allow_truncated)
            return
        with self._errors_as_dump_errors(counts, allow_truncated):
            for page in self._dump:
                self._at = (page.title or "", page.id or 0, True)
                text = None
                for revision in page:
                    text = revision.text
                counts["pages_read"] += 1
                page = self._page(page, text or "")
                self._at = (page.title, page.id, False)
                yield page

    def _scan_redirects(self, counts: Counter, allow_truncated: bool) -> Iterator[Page]:
        """The redirect pages (text: only its start), found by scanning the XML for <page>
        blocks instead of parsing it, which is several times faster: a redirects-only pass reads
        each page's <title>, <ns>, <id> and <redirect title>, and the start of its last <text>
        (old dumps mark redirects there only). Pages whose text starts like a redirect are
        handed to `_page` as mwxml would give them. A file that ends inside a page or before
        </mediawiki> is truncated, as for `pages()`; other XML errors are left to the pass that
        parses the pages."""
        stream, pending, pos = self._stream, b"", 0
        while True:
            chunk = stream.read(_SCAN_BYTES)
            buffer = pending[pos:] + chunk if chunk else pending[pos:]
            pos = 0
            while True:
                start = buffer.find(b"<page>", pos)
                end = buffer.find(b"</page>", start) if start >= 0 else -1
                if end < 0:
                    break
                pos = end + len(b"</page>")
                counts["pages_read"] += 1
                try:
                    page = _scanned_page(buffer, start, end)
                except ValueError as e:
                    raise DumpError(f"{self.name}: not a readable MediaWiki XML dump ({e})") from None
                if page is not None:
                    yield self._page(page, page.text)
            pending = buffer
            if not chunk:
                break
        rest = pending[pos:]
        if self._eof.cut or b"<page>" in rest or b"</mediawiki>" not in rest:
            self._truncated(counts, allow_truncated)

    @staticmethod
    def _site_info(info, head: str, lang: str | None) -> SiteInfo:
        attrs = dict(_ATTR.findall(head[:2000]))
        case = info.case or "first-letter"
        namespaces = {ns.id: Namespace(ns.id, ns.name or "", ns.case or case)
                      for ns in (info.namespaces or [])}
        lang = lang or _language(info.dbname or "", info.base or "", attrs.get("xml:lang", ""))
        return SiteInfo(dbname=info.dbname or "", base=info.base or "", lang=lang, case=case,
                        namespaces=namespaces, export_version=attrs.get("version", ""))

    def _page(self, page, text: str) -> Page:
        title = page.title or ""
        ns_info = self.site.namespaces.get(page.namespace) if page.namespace is not None else None
        if ns_info is not None and ns_info.name and not title.startswith(ns_info.name + ":"):
            title = f"{ns_info.name}:{title}"
        parsed = self.titles.parse(title)
        norm = parsed.title if parsed and not parsed.interwiki else title
        if self._has_ns and page.namespace is not None:
            ns = page.namespace
        else:
            ns = parsed.ns if parsed and not parsed.interwiki else 0
        redirect = page.redirect
        if redirect is None:
            match = _REDIRECT_TEXT.match(text)
            redirect = match.group(1) if match else None
        return Page(id=page.id or 0, ns=ns, title=norm, text=text,
                    redirect=self.titles.normalize(redirect) if redirect else None,
                    source=self.path)


_SCAN_BYTES = 1 << 20
_POSITION = re.compile(r": line \d+, column \d+$")  # expat's, in the parser's input
_SCAN_HEADER = re.compile(rb"<title>([^<]*)</title>\s*<ns>(-?\d+)</ns>\s*<id>(\d+)</id>"
                          rb"(?:\s*<redirect\s+title=\"([^\"]*)\")?")
_SCAN_TEXT_START = re.compile(rb"<text\b[^>]*(?<!/)>\s*#")


@dataclass
class _ScannedPage:
    """What `DumpFile._page` reads of an mwxml page."""

    title: str
    namespace: int
    id: int
    redirect: str | None
    text: str


def _scanned_page(buffer: bytes, start: int, end: int) -> "_ScannedPage | None":
    """The page of the <page> block buffer[start:end] when it is, or may be, a redirect: it
    has a <redirect title>, or its last <text> starts with "#"; else None."""
    header = _SCAN_HEADER.search(buffer, start, end)
    if header is None:
        raise ValueError("a <page> without <title>, <ns> and <id>")
    title, ns, page_id, redirect = header.groups()
    text = ""
    if redirect is None:
        at = buffer.rfind(b"<text", start, end)
        match = _SCAN_TEXT_START.match(buffer, at, end) if at >= 0 else None
        if match is None:
            return None
        text = _xml_text(buffer[match.end() - 1:min(end, match.end() + 1024)].split(b"<", 1)[0])
    return _ScannedPage(title=_xml_text(title).replace("_", " "), namespace=int(ns),
                        id=int(page_id), redirect=_xml_text(redirect) if redirect is not None else None,
                        text=text)


def _xml_text(raw: bytes) -> str:
    """Character data or an attribute value of the dump's XML as the XML parser gives it."""
    text = raw.decode("utf-8", "replace")
    return html.unescape(text) if "&" in text else text


class _Concat(io.RawIOBase):
    def __init__(self, parts):
        self.parts = list(parts)

    def readable(self):
        return True

    def readinto(self, buffer):
        while self.parts:
            part = self.parts[0]
            if isinstance(part, bytes):
                n = min(len(buffer), len(part))
                buffer[:n] = part[:n]
                self.parts[0] = part[n:]
                if not self.parts[0]:
                    self.parts.pop(0)
                return n
            data = part.read(len(buffer))
            if data:
                buffer[: len(data)] = data
                return len(data)
            self.parts.pop(0)
        return 0


# The language check reads the first articles of each file: at most this much decompressed XML,
# this many articles, this many characters of their text.
_SAMPLE_BYTES = 4 << 20
_SAMPLE_ARTICLES = 30
_SAMPLE_CHARS = 300_000
_SAMPLE_CHUNK = 1 << 18
_SAMPLE_PAGE = re.compile(r"<page>(.*?)</page>", re.S)
_SAMPLE_NS = re.compile(r"<ns>(-?\d+)</ns>")
_SAMPLE_TEXT = re.compile(r"<text\b[^>]*>([^<]*)</text>")


def sample_article_texts(path: str) -> list[str]:
    """The wikitext of the first main-namespace articles of a dump file (no redirects), read
    from its first _SAMPLE_BYTES; [] for a file that cannot be read (opening it says why)."""
    texts: list[str] = []
    try:
        with fileio.open_read(path) as raw:
            stream, compressed = decompressed(raw)
            with contextlib.closing(stream) if compressed else contextlib.nullcontext(stream):
                for page in _first_pages(stream):
                    text = _article_text(page)
                    if text is not None:
                        texts.append(text[:_SAMPLE_CHARS - sum(map(len, texts))])
                        if len(texts) >= _SAMPLE_ARTICLES or sum(map(len, texts)) >= _SAMPLE_CHARS:
                            break
    except (OSError, EOFError, lzma.LZMAError, ValueError):
        pass  # a cut or bad file: what was read is sample enough
    return texts


def _first_pages(stream) -> Iterator[str]:
    """The XML of each <page> within the first _SAMPLE_BYTES of `stream`, UTF-8 or UTF-16."""
    first = stream.read(_SAMPLE_CHUNK)
    encoding = "utf-16" if first[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8"
    decoder = codecs.getincrementaldecoder(encoding)("replace")
    chunk, pending, read = first, "", len(first)
    while chunk:
        pending += decoder.decode(chunk)
        end = 0
        for page in _SAMPLE_PAGE.finditer(pending):
            end = page.end()
            yield page.group(1)
        pending = pending[end:]
        chunk = stream.read(_SAMPLE_CHUNK) if read < _SAMPLE_BYTES else b""
        read += len(chunk)


def _article_text(page: str) -> str | None:
    """The last revision's text of a page's XML where it is a main-namespace article."""
    ns = _SAMPLE_NS.search(page)
    texts = _SAMPLE_TEXT.findall(page)
    if (ns is not None and ns.group(1) != "0") or not texts or "<redirect" in page:
        return None
    text = html.unescape(texts[-1])
    return None if text.lstrip().startswith("#") else text


def language_mismatch(path: str) -> tuple[str, TextLanguage | None]:
    """The language `path` declares, and what its first articles look like where that is not
    it (None where they may well be in it)."""
    declared = DumpFile(path).site.lang
    return declared, mismatch(declared, sample_article_texts(path))


def check_declared_language(inputs: Iterable[str], lang: str | None = None) -> str | None:
    """Warn in one line on stderr where the first input's text does not look like the language
    its siteinfo declares, and return that line. Nothing to check when `lang` (--lang) is given;
    nothing said for inputs that cannot be read: reading them says why."""
    if lang:
        return None
    try:
        path = expand_inputs(inputs)[0]
        declared, found = language_mismatch(path)
    except DumpError:
        return None
    if found is None:
        return None
    line = warning_line(os.path.basename(path), declared, found)
    print(line, file=sys.stderr)
    return line


def read_pages(paths: Iterable[str], counts: Counter | None = None, allow_truncated: bool = False,
               lang: str | None = None) -> Iterator[Page]:
    """Pages of every file in turn (paths may be glob patterns)."""
    for path in expand_inputs(paths):
        yield from DumpFile(path, lang=lang).pages(counts, allow_truncated)
