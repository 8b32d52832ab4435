"""Streaming pages out of MediaWiki XML dumps with mwxml.

Plain, .bz2 (multistream too: Python's bz2 reads concatenated streams), .gz and .xz files,
recognized by their first bytes; several files or glob patterns; memory stays flat because pages
are read one at a time. Export versions 0.3 to 0.11: old ones have no <ns>, and mwxml derives the
namespace from the title prefix. Files without <siteinfo> get English defaults.
"""
from __future__ import annotations

import bz2
import contextlib
import glob
import gzip
import io
import lzma
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from xml.etree.ElementTree import ParseError

import mwxml
import mwxml.errors

from .errors import DumpError, TruncatedDumpError
from .readahead import ReadAhead
from .records import Namespace, Page, SiteInfo
from .titles import TitleParser

_MAGIC = [(b"BZh", bz2.open), (b"\x1f\x8b", gzip.open), (b"\xfd7zXZ\x00", lzma.open)]
_HEAD_BYTES = 1 << 16

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
        if glob.has_magic(pattern):
            matches = sorted(glob.glob(pattern))
            if not matches:
                raise DumpError(f"{pattern}: no file matches this pattern")
            paths.extend(matches)
        elif not os.path.exists(pattern):
            raise DumpError(f"{pattern}: no such file")
        elif os.path.isdir(pattern):
            raise DumpError(f"{pattern}: is a directory, not a dump file")
        else:
            paths.append(pattern)
    if not paths:
        raise DumpError("no input files given")
    return paths


class _EofTracker(io.RawIOBase):
    """Wraps a binary stream and remembers whether it reached the end (to tell a cut file)."""

    def __init__(self, raw):
        self.raw, self.eof = raw, False

    def readable(self):
        return True

    def readinto(self, buffer):
        data = self.raw.read(len(buffer))
        if not data:
            self.eof = True
        buffer[: len(data)] = data
        return len(data)


def _open_binary(path: str):
    with open(path, "rb") as f:
        magic = f.read(6)
    for prefix, opener in _MAGIC:
        if magic.startswith(prefix):
            return opener(path, "rb")
    return open(path, "rb")


def _decoded_stream(path: str) -> io.RawIOBase:
    """A binary UTF-8 stream of the file's XML, whatever its compression or UTF-16 BOM."""
    stream = _open_binary(path)
    if not isinstance(stream, io.BufferedReader):  # compressed: decompress on another core
        stream = io.BufferedReader(ReadAhead(stream), 1 << 16)
    head = stream.peek(4)[:4]
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return _Utf8Reencoder(io.TextIOWrapper(stream, encoding="utf-16"))
    return stream


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
    if dbname.endswith("wiki") and len(dbname) > 4:
        return dbname[:-4].replace("_", "-")
    host = re.match(r"https?://([a-z\-]+)\.wikipedia\.org", base or "")
    if host:
        return host.group(1)
    return xml_lang or "en"


class DumpFile:
    """One dump file: its siteinfo (read on opening) and a stream of its pages."""

    def __init__(self, path: str, lang: str | None = None):
        self.path = path
        if os.path.getsize(path) == 0:
            raise DumpError(f"{path}: empty file, not a MediaWiki XML dump")
        with self._errors_as_dump_errors(Counter(), allow_truncated=False):
            self._eof = _EofTracker(_decoded_stream(path))
            self._stream = io.BufferedReader(self._eof, _HEAD_BYTES)
            head = self._stream.peek(_HEAD_BYTES)[:_HEAD_BYTES]
            xml = self._with_siteinfo(head)
            self._dump = mwxml.Dump.from_file(xml)
        text_head = head.decode("utf-8", "replace")
        self.site = self._site_info(self._dump.site_info, text_head, lang)
        self.titles = TitleParser(self.site)

    def _with_siteinfo(self, head: bytes):
        """The XML stream, with an empty <siteinfo> added where the file has none (mwxml needs it)."""
        root = re.search(rb"<mediawiki\b[^>]*>", head)
        if root is None or not re.match(rb"^(\xef\xbb\xbf)?\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*<mediawiki\b",
                                        head, re.S):
            raise DumpError(f"{self.path}: not a MediaWiki XML dump (no <mediawiki> root element)")
        page_at = head.find(b"<page>")
        if b"<siteinfo>" in head[: page_at if page_at >= 0 else None]:
            return self._stream
        start = self._stream.read(root.end())
        return _Concat([start + b"<siteinfo></siteinfo>", self._stream])

    @contextlib.contextmanager
    def _errors_as_dump_errors(self, counts: Counter, allow_truncated: bool):
        """Turn parser and decompressor exceptions into one-line DumpErrors (or a clean stop)."""
        try:
            yield
        except DumpError:
            raise
        except (ParseError, mwxml.errors.MalformedXML, EOFError, lzma.LZMAError, OSError,
                AssertionError, UnicodeError, ValueError) as e:
            cut = isinstance(e, EOFError) or "no element found" in str(e) or (
                hasattr(self, "_eof") and self._eof.eof and not isinstance(e, UnicodeError))
            if not cut:
                raise DumpError(f"{self.path}: not a readable MediaWiki XML dump ({e})") from None
            if allow_truncated:
                counts["truncated_files"] += 1
                return
            raise TruncatedDumpError(
                f"{self.path}: truncated dump, it ends in the middle of a page after "
                f"{counts['pages_read']} complete pages (use --allow-truncated to keep them)"
            ) from None

    def pages(self, counts: Counter | None = None, allow_truncated: bool = False) -> Iterator[Page]:
        """Yield each page (its last revision); `counts` gets pages_read and truncated_files."""
        counts = counts if counts is not None else Counter()
        with self._errors_as_dump_errors(counts, allow_truncated):
            for page in self._dump:
                text = None
                for revision in page:
                    text = revision.text
                counts["pages_read"] += 1
                yield self._page(page, text or "")

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
        ns = page.namespace if page.namespace is not None else (parsed.ns if parsed else 0)
        redirect = page.redirect
        if redirect is None:
            match = _REDIRECT_TEXT.match(text)
            redirect = match.group(1) if match else None
        return Page(id=page.id or 0, ns=ns, title=norm, text=text,
                    redirect=self.titles.normalize(redirect) if redirect else None,
                    source=self.path)


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


def read_pages(paths: Iterable[str], counts: Counter | None = None, allow_truncated: bool = False,
               lang: str | None = None) -> Iterator[Page]:
    """Pages of every file in turn (paths may be glob patterns)."""
    for path in expand_inputs(paths):
        yield from DumpFile(path, lang=lang).pages(counts, allow_truncated)
