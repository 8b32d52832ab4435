"""Wikimedia Enterprise HTML dumps: `WIKI-NS0-DATE-ENTERPRISE-HTML.json.tar.gz` -> `HtmlPage`s.

Such a dump is a gzip'd tar of NDJSON members (`frwiki_namespace_0_0.ndjson`, ...), one JSON
record per article: `name`, `identifier` (page id), `version.identifier` (revision id),
`namespace.identifier`, `in_language.identifier`, `is_part_of.identifier` (the wiki), `url`,
`redirects` (the titles that redirect to it, in a full dump) and `article_body.html`, the Parsoid
HTML of the revision. The tar is read in streaming mode and each member line by line: one record
is in memory at a time, whatever the size of the dump (an English one is ~100 GB).

`input_kind(path)` tells such a file from an XML dump by its content (gzip or plain tar whose
first member is .ndjson/.json and starts with a JSON object), so `--input` takes both.
"""
from __future__ import annotations

import html as htmllib
import json
import re
import tarfile
import zlib
from collections import Counter
from collections.abc import Iterator

from isal import isal_zlib

from .. import fileio
from ..errors import DumpError, TruncatedDumpError
from ..records import HtmlPage, SiteInfo
from ..text.titles import TitleParser, clean_spaces, default_namespaces

MEMBER_SUFFIXES = (".ndjson", ".json", ".jsonl")
ENTERPRISE_HTML = "enterprise-html"
XML = "xml"
_TAG = re.compile(r"<[^<>]*>")
_REDIRECT_MARKER = re.compile(r'<link\b[^>]*\brel="mw:PageProp/redirect"[^>]*\bhref="([^"]*)"')
_HEAD_BYTES = 1 << 16


def _head(path: str) -> bytes:
    """The first bytes of the file, decompressed where it is gzip."""
    with fileio.open_read(path) as f:
        raw = f.read(_HEAD_BYTES)
    if raw[:2] == b"\x1f\x8b":
        try:
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(raw, _HEAD_BYTES)
        except zlib.error:
            return b""
    return raw


def input_kind(path: str) -> str:
    """ENTERPRISE_HTML for a (gzip'd) tar whose first member is NDJSON records, else XML (the
    XML reader then says what is wrong with a file that is neither)."""
    try:
        head = _head(path)
    except OSError:
        return XML
    if len(head) < 512 or head[257:262] != b"ustar":
        return XML
    name = head[:100].split(b"\0", 1)[0].decode("utf-8", "replace")
    body = head[512:].lstrip()
    if name.endswith(MEMBER_SUFFIXES) and body[:1] == b"{":
        return ENTERPRISE_HTML
    return XML


def plain_title(name: str) -> str:
    """A record's `name` as a title: display-title markup dropped (`<i>Die Welt</i>`)."""
    if "<" in name:
        name = _TAG.sub("", name)
    if "&" in name:
        name = htmllib.unescape(name)
    return clean_spaces(name.replace("_", " "))


def site_of(record: dict, lang: str | None = None) -> SiteInfo:
    """The wiki of a record: language (`in_language`, else the `is_part_of` dbname), dbname, base
    URL; namespaces as that Wikipedia names them (mwconstants)."""
    dbname = str((record.get("is_part_of") or {}).get("identifier") or "")
    declared = (record.get("in_language") or {}).get("identifier") or ""
    if not declared and dbname.endswith("wiki") and len(dbname) > 4:
        declared = dbname[:-4].replace("_", "-")
    lang = lang or declared or "en"
    url = record.get("url") or ""
    base = url.split("/wiki/", 1)[0] + "/wiki/" if "/wiki/" in url else ""
    return SiteInfo(dbname=dbname, base=base, lang=lang,
                    namespaces=default_namespaces(lang), export_version="enterprise-html")


class EnterpriseDump:
    """One Enterprise HTML dump file: its wiki (`site`, `titles`, from the first record) and its
    records as `HtmlPage`s, read one at a time. The same interface as `DumpFile` for `parse`."""

    def __init__(self, path: str, lang: str | None = None, members: set[int] | None = None,
                 redirects_only: bool = False, site: SiteInfo | None = None):
        self.path, self.lang, self.members = path, lang, members
        self.name = path
        # A first pass that needs only the redirects: records that list none and are no
        # redirect are counted but not decoded (most of a record is its HTML).
        self.redirects_only = redirects_only
        if site is None:  # `site`: this file's, known already (reopen)
            first = next(self._records(Counter(), allow_truncated=True, first_only=True), None)
            site = site_of(first[2] if first else {}, lang)
        self.site = site
        self.titles = TitleParser(self.site)

    def reopen(self) -> "EnterpriseDump":
        """The same file, read again from its start; its wiki is not read again (that decodes
        the first record, HTML and all: ~1/6 of a six-page file)."""
        return EnterpriseDump(self.path, lang=self.lang, members=self.members, site=self.site)

    def member_names(self) -> list[str]:
        """The NDJSON members, in tar order (a pass over the file that skips their data)."""
        with fileio.open_read(self.path) as raw:
            return [name for name, _ in tar_members(_decompressed(raw))
                    if name.endswith(MEMBER_SUFFIXES)]

    def lines(self, counts: Counter | None = None, allow_truncated: bool = False,
              first_only: bool = False) -> Iterator[tuple[str, int, bytes]]:
        """(member name, line number, line) of each non-empty NDJSON line, streaming (the last
        line of a member may lack its newline). A cut stream is a TruncatedDumpError, or with
        `allow_truncated` an end counted in `counts["truncated_files"]`."""
        counts = counts if counts is not None else Counter()
        ordinal, name = -1, ""
        try:
            with fileio.open_read(self.path) as raw:
                for name, lines in tar_members(_decompressed(raw)):
                    if not name.endswith(MEMBER_SUFFIXES):
                        continue
                    ordinal += 1
                    if self.members is not None and ordinal not in self.members:
                        continue
                    for line_no, line in enumerate(lines, 1):
                        if line.strip():
                            yield name, line_no, line
                            if first_only:
                                return
        except EOFError:
            if first_only:
                return
            if allow_truncated:
                counts["truncated_files"] += 1
                return
            raise TruncatedDumpError(
                f"{self.path}: truncated dump, it ends in the middle of a record after "
                f"{counts['pages_read']} complete records (use --allow-truncated to keep "
                f"them)") from None
        except (zlib.error, isal_zlib.error, tarfile.TarError, OSError) as e:
            raise DumpError(f"{self.path}: not a readable Enterprise HTML dump"
                            f"{f' (member {name})' if name else ''} ({e})") from None

    def _records(self, counts: Counter, allow_truncated: bool, first_only: bool = False
                 ) -> Iterator[tuple[str, int, dict | None]]:
        """(member name, line number, record) of each record, streaming (record None: skipped
        undecoded by a redirects-only pass)."""
        for name, line_no, line in self.lines(counts, allow_truncated, first_only):
            if self.redirects_only and not first_only and b'"redirects"' not in line \
                    and b"mw:PageProp/redirect" not in line:
                yield name, line_no, None
                continue
            if not line.endswith(b"\n"):  # a member's last line: cut, or just no newline
                try:
                    record = json.loads(line)
                except ValueError:
                    if allow_truncated and not first_only:
                        counts["truncated_files"] += 1
                        return
                    if first_only:
                        return
                    raise TruncatedDumpError(
                        f"{self.path}: truncated dump, member {name} ends in the middle of a "
                        f"record (use --allow-truncated to keep the records before)") from None
            else:
                record = self.decode(line, name, line_no)
            yield name, line_no, record

    def decode(self, line: bytes, member: str, line_no: int) -> dict:
        try:
            record = json.loads(line)
        except ValueError as e:
            raise DumpError(f"{self.path}: not a readable Enterprise HTML dump: member {member} "
                            f"line {line_no} is not a JSON record ({e})") from None
        if not isinstance(record, dict):
            raise DumpError(f"{self.path}: member {member} line {line_no} is not a JSON object")
        return record

    def pages(self, counts: Counter | None = None, allow_truncated: bool = False
              ) -> Iterator[HtmlPage]:
        """Each record as an HtmlPage; `counts` gets pages_read (and truncated_files)."""
        counts = counts if counts is not None else Counter()
        for member, line_no, record in self._records(counts, allow_truncated):
            counts["pages_read"] += 1
            if record is not None:
                yield self.page(record, member, line_no)

    def page(self, record: dict, member: str = "", line_no: int = 0) -> HtmlPage:
        body = record.get("article_body")
        html = body.get("html") if isinstance(body, dict) else None
        if not isinstance(html, str):
            raise DumpError(f"{self.path}: member {member} line {line_no}: a record without "
                            f"article_body.html (not an Enterprise HTML dump record)")
        ns = int((record.get("namespace") or {}).get("identifier") or 0)
        name = plain_title(str(record.get("name") or ""))
        if not name:
            raise DumpError(f"{self.path}: member {member} line {line_no}: a record without "
                            f"`name` (the page's title)")
        parsed = self.titles.parse(name)
        title = parsed.title if parsed is not None and not parsed.interwiki else name
        if ns and parsed is not None and parsed.ns != ns:  # names carry no prefix in some dumps
            prefix = self.titles.namespaces.get(ns)
            if prefix is not None and prefix.name:
                title = self.titles.normalize(f"{prefix.name}:{name}") or title
        redirects = []
        for entry in record.get("redirects") or ():
            source = entry.get("name") if isinstance(entry, dict) else entry
            source = self.titles.normalize(plain_title(str(source or ""))) if source else None
            if source and source != title:
                redirects.append(source)
        redirect = None
        if "mw:PageProp/redirect" in html[:_HEAD_BYTES]:
            marker = _REDIRECT_MARKER.search(html)
            if marker:
                target = marker.group(1)
                local = target[2:] if target.startswith("./") else target
                # "" for a target out of this wiki's pages (an interwiki URL), as in XML dumps
                redirect = "" if "://" in local else self.titles.normalize(local) or ""
        lang = (record.get("in_language") or {}).get("identifier") or self.site.lang
        return HtmlPage(id=int(record.get("identifier") or 0), ns=ns, title=title, html=html,
                        revision=int((record.get("version") or {}).get("identifier") or 0),
                        lang=lang, redirects=redirects, redirect=redirect, source=self.path)


_BLOCK = 512
_CHUNK = 1 << 20


def _decompressed(raw):
    """The tar stream of a .tar.gz (gzip decoded by ISA-L, ~3x zlib's speed: a dump is read
    twice, once for its redirects) or a plain .tar."""
    return _Gunzip(raw) if raw.peek(2)[:2] == b"\x1f\x8b" else raw


class _Gunzip:
    """A gzip stream (one or more members) decoded by ISA-L, with `read(n)` and `read1(n)`.
    Everything decoded before a cut is returned before the EOFError that the cut raises (igzip's
    own file object loses the last block's data), so a truncated download keeps its records."""

    def __init__(self, raw, chunk: int = _CHUNK):
        self.raw, self.chunk = raw, chunk
        self._decoder = isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)
        self._buffer, self._at, self._done = b"", 0, False

    def _fill(self) -> None:
        data = self.raw.read(self.chunk)
        if not data:
            if not self._decoder.eof:
                raise EOFError("the gzip stream ends before its end marker")
            self._done = True
            return
        out = [self._buffer[self._at:]]
        while data:
            out.append(self._decoder.decompress(data))
            data = self._decoder.unused_data
            if self._decoder.eof:  # zero padding may follow a member (as gzip allows)
                data = data.lstrip(b"\0")
            if self._decoder.eof and data:  # another gzip member follows
                self._decoder = isal_zlib.decompressobj(16 + isal_zlib.MAX_WBITS)
        self._buffer, self._at = b"".join(out), 0

    def read1(self, size: int = -1) -> bytes:
        while self._at >= len(self._buffer) and not self._done:
            self._fill()
        size = len(self._buffer) - self._at if size < 0 else size
        data = self._buffer[self._at:self._at + size]
        self._at += len(data)
        return data

    def read(self, size: int = -1) -> bytes:
        while (size < 0 or len(self._buffer) - self._at < size) and not self._done:
            self._fill()
        return self.read1(size)

    def close(self) -> None:
        pass


def _read_exact(stream, size: int) -> bytes:
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the tar stream ends inside a member")
    return data


def tar_members(stream) -> Iterator[tuple[str, Iterator[bytes]]]:
    """(name, lines) of each regular file of a tar stream, in order, read once: its lines must
    be consumed (or not) before the next member is asked for. Ustar, GNU long names and pax
    `path` records; other entries (folders, links) are skipped. tarfile's own streaming mode
    copies its whole buffer on each small read, which made reading ~10x slower than gzip."""
    long_name = None
    while True:
        block = stream.read(_BLOCK)
        if not block or block == b"\0" * len(block):
            if block and len(block) < _BLOCK:
                raise EOFError("the tar stream ends inside a header")
            return  # the end-of-archive blocks (or a tar without them)
        if len(block) < _BLOCK:
            raise EOFError("the tar stream ends inside a header")
        info = tarfile.TarInfo.frombuf(block, "utf-8", "surrogateescape")
        padded = -(-info.size // _BLOCK) * _BLOCK
        if info.type in (tarfile.GNUTYPE_LONGNAME, tarfile.XHDTYPE):
            data = _read_exact(stream, padded)[:info.size]
            if info.type == tarfile.GNUTYPE_LONGNAME:
                long_name = data.rstrip(b"\0").decode("utf-8", "surrogateescape")
            else:
                path = re.search(rb"\d+ path=([^\n]*)\n", data)
                long_name = path.group(1).decode("utf-8", "surrogateescape") if path else None
            continue
        name, long_name = long_name or info.name, None
        if not info.isfile():
            _read_exact(stream, padded)
            continue
        lines = byte_lines(stream, info.size)
        yield name, lines
        for _ in lines:  # what the caller left unread
            pass
        if padded > info.size:
            _read_exact(stream, padded - info.size)


def byte_lines(stream, size: int) -> Iterator[bytes]:
    """The lines of the next `size` bytes of `stream` (the last one without its newline where
    the member does not end with one)."""
    remaining, held = size, []
    # read1: a GzipFile's read(n) loses what it decoded in the call that meets a cut; read1
    # gives it, so the records before the cut of a truncated download are kept
    read = getattr(stream, "read1", stream.read)
    while remaining:
        chunk = read(min(_CHUNK, remaining))
        if not chunk:
            raise EOFError("the tar stream ends inside a member")
        remaining -= len(chunk)
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            if end < 0:
                held.append(chunk[start:] if start else chunk)
                break
            line = chunk[start:end + 1]
            if held:
                held.append(line)
                line = b"".join(held)
                held = []
            yield line
            start = end + 1
    if held:
        yield b"".join(held)


def read_html_pages(path: str, counts: Counter | None = None, allow_truncated: bool = False,
                    lang: str | None = None) -> Iterator[HtmlPage]:
    """The pages of one Enterprise HTML dump file."""
    yield from EnterpriseDump(path, lang=lang).pages(counts, allow_truncated)


__all__ = ["ENTERPRISE_HTML", "XML", "EnterpriseDump", "input_kind", "plain_title",
           "read_html_pages", "site_of"]
