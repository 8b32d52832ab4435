"""Pages out of a MediaWiki XML stream with mwxml: `PageReader(open_stream)` and, for a whole
file, `DumpFile(path)`.

Export versions 0.3 to 0.11: old ones have no <ns>, and the namespace comes from the title prefix
(siteinfo names, canonical names and aliases). Streams without <siteinfo> get English defaults.
Memory stays flat: pages are read one at a time. A stream that ends mid-page (a cut plain file, or
compressed data cut before its end marker) is a TruncatedDumpError, or, with allow_truncated,
ends after its last complete page. Every other error is one DumpError line naming the user's
file, the line (where known) and the page.
"""
from __future__ import annotations

import contextlib
import html
import io
import lzma
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from xml.etree.ElementTree import ParseError

import mwxml
import mwxml.errors

from .. import fileio
from ..errors import DumpError, TruncatedDumpError
from ..records import Namespace, Page, SiteInfo
from ..text.titles import TitleParser
from .page_scanner import PageScanner
from .sources import ChunkStream, XmlStream, copy_for, expand_inputs, open_xml

# Expat errors that mean "the document stopped": no closing root element, a token, a character or
# a CDATA section cut short. Any other error (an invalid token, a mismatched tag) is bad XML.
_CUT_XML_ERRORS = {3, 5, 6, 20}

# "#REDIRECT [[Target]]" in page text, for old dumps without <redirect>; localized magic words.
# Every wiki also accepts the English word. (MediaWiki's Messages*.php lists them; dumps carry
# no magic words, and export-0.4 and later mark redirects with <redirect> anyway.)
REDIRECT_WORDS = ("REDIRECT", "REDIRECTION", "WEITERLEITUNG", "ΑΝΑΚΑΤΕΥΘΥΝΣΗ", "REDIRECCIÓN",
                  "RINVIA", "DOORVERWIJZING", "REDIRECIONAMENTO", "ПЕРЕНАПРАВЛЕНИЕ", "ПЕРЕНАПР",
                  "ПЕРЕНАПРАВЛЕННЯ", "PATRZ", "PRZEKIERUJ", "OMDIRIGERING", "PŘESMĚRUJ",
                  "OHJAUS", "UUDELLEENOHJAUS", "ÁTIRÁNYÍTÁS", "YÖNLENDİRME", "ALIH", "REDIRECCIÓ",
                  "تحويل", "הפניה", "重定向", "転送", "リダイレクト", "넘겨주기",
                  "تغییرمسیر", "अनुप्रेषित", "เปลี่ยนทาง", "ՎԵՐԱՀՂՈՒՄ", "পুনর্নির্দেশ",
                  "ĐỔI")
_REDIRECT_TEXT = re.compile(  # (ASCII spaces first: those the redirects pass's scan allows)
    r"^[ \t\n\r]*#(?:%s)\s*:?\s*\[\[([^\]|]+)" % "|".join(map(re.escape, set(REDIRECT_WORDS))),
    re.I)
# A wiki's word not listed above ("#வழிமாற்று [[சென்னை]]", Tamil): a page whose whole text is a
# "#word" and a link, but for categories, templates ({{R from ...}}) and behaviour switches, is a
# redirect: no article is one numbered item. Only short texts (SHORT_REDIRECT_BYTES), so that the
# redirects pass, which reads the start of each text, finds the same pages as the parse.
_ANY_REDIRECT = re.compile(r"#([^\s\[\]#:|{}<>]+)\s*:?\s*\[\[([^\]|]+)[^\]]*\]\](.*)", re.S)
# what may follow a redirect's link: categories, templates, behaviour switches, comments
_NOT_WORDS = re.compile(r"\[\[[^\[\]|:]+:[^\[\]]*\]\]|\{\{[^{}]*\}\}|__[^\W\d]+__|<!--.*?-->",
                        re.S)
SHORT_REDIRECT_BYTES = 600


def redirect_in_text(text: str, complete: bool = True) -> str | None:
    """The target of a redirect written in a page's text ("#REDIRECT [[Target]]", in any wiki's
    word: see _ANY_REDIRECT), for dumps without <redirect>; None for other pages. `complete`:
    whether `text` is the whole text, not its start."""
    match = _REDIRECT_TEXT.match(text)
    if match:
        return match.group(1)
    text = text.strip(" \t\n\r")  # (the redirects pass reads the text from its "#")
    if not complete or len(text) > SHORT_REDIRECT_BYTES \
            or len(text.encode("utf-8")) > SHORT_REDIRECT_BYTES:
        return None
    match = _ANY_REDIRECT.fullmatch(text)
    if match is None or not any(c.isalpha() for c in match.group(1)):  # ("#1. [[x]]")
        return None
    rest = match.group(3)
    for _ in range(3):  # (templates inside templates)
        rest = _NOT_WORDS.sub("", rest)
    return None if any(c.isalnum() for c in rest) else match.group(2)
_ROOT = re.compile(rb"^(\xef\xbb\xbf)?\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*<mediawiki\b[^>]*>",
                   re.S)
_ATTR = re.compile(r'\b(version|xml:lang)="([^"]*)"')
_POSITION = re.compile(r": line \d+, column \d+$")  # expat's, in the parser's input


def _language(dbname: str, base: str, xml_lang: str) -> str:
    """The wiki's language code as the siteinfo says it: its dbname ("zh_yuewiki" -> "zh-yue"),
    else its base URL's host, else the root's xml:lang (the content language, "nb" on nowiki)."""
    if dbname.endswith("wiki") and len(dbname) > 4:
        return dbname[:-4].replace("_", "-")
    host = re.match(r"https?://([a-z\-]+)\.wikipedia\.org", base or "")
    if host:
        return host.group(1)
    return xml_lang or "en"


class PageReader:
    """The siteinfo (read on opening) and the pages of one XML stream.

    `open_stream()` opens the stream (called under the reader's error handling, so a file that
    cannot be decompressed is a one-line DumpError). Errors name `name` (the user's file) and a
    line of it: the parser's line + `line_shift` (None: not known, as in a multistream split).
    Pages get `source` as their source. `redirects_only`: a first pass that needs only the
    redirect pages; where the stream's head allows it, it scans bytes instead of parsing.
    """

    def __init__(self, open_stream: Callable[[], XmlStream], name: str, *,
                 source: str | None = None, lang: str | None = None, line_shift: int | None = 0,
                 redirects_only: bool = False):
        self.name, self.source, self.line_shift = name, source or name, line_shift
        self.lang = lang
        self._at: tuple[str, int, bool] | None = None  # (title, id, inside it) of the last page
        self._pages_before = 0
        self._xml: XmlStream | None = None
        self._scan = False  # redirects_only, and the stream's head allows the scan (see pages())
        head = b""
        self._cut_in_header = False  # the stream ends before its first page: no pages at all
        try:
            with self._errors_as_dump_errors(Counter(), allow_truncated=False):
                self._xml = open_stream()
                head = self._xml.head()
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
        self.site = self._site_info(self._dump.site_info, head.decode("utf-8", "replace"), lang)
        self.titles = TitleParser(self.site)

    @staticmethod
    def _scannable_header(head: bytes):
        """For a redirects-only pass: a pageless mwxml Dump of the head's <siteinfo>, where the
        head holds the whole <siteinfo> and a first page with <ns> (an export the scan of
        `_scan_redirects` reads as mwxml does); else None."""
        root = _ROOT.match(head)
        start, end, page_at = head.find(b"<siteinfo>"), head.find(b"</siteinfo>"), head.find(b"<page>")
        if root is None or not 0 <= start < end < page_at or b"<ns>" not in head[page_at:page_at + 4096]:
            return None
        siteinfo = head[start:end + len(b"</siteinfo>")]
        try:
            return mwxml.Dump.from_file(io.BytesIO(root.group() + siteinfo + b"</mediawiki>"))
        except (ParseError, mwxml.errors.MalformedXML, ValueError):
            return None

    def _with_siteinfo(self, head: bytes):
        """The XML stream, with an empty <siteinfo> added where it has none (mwxml needs it)."""
        reader = self._xml.reader
        root = re.search(rb"<mediawiki\b[^>]*>", head)
        if root is None or not _ROOT.match(head):
            if self._xml.cut and not head.strip():  # a cut .bz2 block gives no data at all
                raise TruncatedDumpError(f"{self.name}: truncated dump")
            raise DumpError(f"{self.name}: not a MediaWiki XML dump (no <mediawiki> root element)")
        page_at = head.find(b"<page>")
        if b"<siteinfo>" in head[: page_at if page_at >= 0 else None]:
            return reader
        start = reader.read(root.end())
        return ChunkStream([start + b"<siteinfo></siteinfo>", reader])

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
            xml = self._xml
            cut = isinstance(e, EOFError) or (xml is not None and xml.cut) or (
                isinstance(e, ParseError) and e.code in _CUT_XML_ERRORS
                and (xml is None or xml.eof))
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
        """The stream ends inside a page: count it (allow_truncated), or raise."""
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
        """The redirect pages (text: only its start), found by the PageScanner instead of
        parsing, which is several times faster: a redirects-only pass reads each page's <title>,
        <ns>, <id> and <redirect title>, and the start of its last <text> (old dumps mark
        redirects there only). Pages whose text starts like a redirect are handed to `_page` as
        mwxml would give them. A stream that ends inside a page or before </mediawiki> is
        truncated, as for `pages()`; other XML errors are left to the pass that parses."""
        scanner = PageScanner(self._xml.reader)
        for block in scanner:
            counts["pages_read"] += 1
            try:
                page = _scanned_page(block.xml)
            except ValueError as e:
                raise DumpError(f"{self.name}: not a readable MediaWiki XML dump ({e})") from None
            if page is not None:
                yield self._page(page, page.text)
        if self._xml.cut or b"<page>" in scanner.tail or b"</mediawiki>" not in scanner.tail:
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
            redirect = redirect_in_text(text, getattr(page, "text_complete", True))
        if redirect:  # "" where the target is another wiki's or no title ([[wikt:foo]])
            redirect = self.titles.normalize(redirect) or ""
        return Page(id=page.id or 0, ns=ns, title=norm, text=text, redirect=redirect,
                    source=self.source)


class DumpFile(PageReader):
    """One whole dump file: `path`, opened with `open_xml`.

    With `keep_copy`, a compressed file's decompressed XML is kept while its pages are read (see
    DecompressedCopy), and `reopen()` reads the pages again from that copy."""

    def __init__(self, path: str, lang: str | None = None, keep_copy: bool = False,
                 redirects_only: bool = False, _replay=None):
        self.path = path
        try:
            size = fileio.size(path)
        except OSError as e:
            raise DumpError(f"{path}: cannot read it ({e.strerror or e})") from None
        if size == 0:
            raise DumpError(f"{path}: empty file, not a MediaWiki XML dump")
        self._copy = None

        def open_stream() -> XmlStream:
            if keep_copy and _replay is None:
                self._copy = copy_for(path)
            # A redirects-only pass does little per byte: indexed_bzip2 in this thread.
            return open_xml(path, self._copy, _replay, light=redirects_only)

        super().__init__(open_stream, path, lang=lang, redirects_only=redirects_only)

    def reopen(self) -> "DumpFile":
        """The same file opened again for another pass; from the decompressed copy when this one
        kept a complete copy and its pages were all read, else from the file."""
        replay = None
        if self._copy is not None:
            replay = self._copy.open() if self._xml.eof else None
            if replay is None:
                self._copy.discard()
            self._copy = None
        return DumpFile(self.path, lang=self.lang, _replay=replay)


@dataclass
class _ScannedPage:
    """What `PageReader._page` reads of an mwxml page."""

    title: str
    namespace: int
    id: int
    redirect: str | None
    text: str
    text_complete: bool = True  # False: `text` is the start of a longer text


_SCAN_HEADER = re.compile(rb"<title>([^<]*)</title>\s*<ns>(-?\d+)</ns>\s*<id>(\d+)</id>"
                          rb"(?:\s*<redirect\s+title=\"([^\"]*)\")?")
_SCAN_TEXT_START = re.compile(rb"<text\b[^>]*(?<!/)>\s*#")


def _scanned_page(xml: bytes) -> "_ScannedPage | None":
    """The page of a <page> block when it is, or may be, a redirect: it has a <redirect title>,
    or its last <text> starts with "#"; else None."""
    header = _SCAN_HEADER.search(xml)
    if header is None:
        raise ValueError("a <page> without <title>, <ns> and <id>")
    title, ns, page_id, redirect = header.groups()
    text, complete = "", True
    if redirect is None:
        at = xml.rfind(b"<text")
        match = _SCAN_TEXT_START.match(xml, at) if at >= 0 else None
        if match is None:
            return None
        close = xml.find(b"<", match.end())  # (</text>: no "<" is raw in character data)
        raw = xml[match.end() - 1:close if close >= 0 else len(xml)]
        complete = close >= 0 and len(raw) <= _WHOLE_TEXT_BYTES
        text = xml_text(raw if complete else raw[:1024])
    return _ScannedPage(title=xml_text(title).replace("_", " "), namespace=int(ns),
                        id=int(page_id), redirect=xml_text(redirect) if redirect is not None else None,
                        text=text, text_complete=complete)


# The longest raw text the redirects pass reads whole: a redirect's text of SHORT_REDIRECT_BYTES,
# every character escaped ("&quot;" for '"').
_WHOLE_TEXT_BYTES = 8 * SHORT_REDIRECT_BYTES


def xml_text(raw: bytes) -> str:
    """Character data or an attribute value of the dump's XML as the XML parser gives it (its
    entities decoded, its line ends "\\n")."""
    text = raw.decode("utf-8", "replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return html.unescape(text) if "&" in text else text


def read_pages(paths: Iterable[str], counts: Counter | None = None, allow_truncated: bool = False,
               lang: str | None = None) -> Iterator[Page]:
    """Pages of every file in turn (paths may be glob patterns)."""
    for path in expand_inputs(paths):
        yield from DumpFile(path, lang=lang).pages(counts, allow_truncated)
