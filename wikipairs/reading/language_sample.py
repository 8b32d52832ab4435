"""Whether a dump's text looks like the language its siteinfo declares, from its first articles.

dewiki-minidump declares en but is German: the check warns in one line and `--lang` then brings
that language's aliases and sentence splitter (wikipairs.text.language_check decides from the text).
An Enterprise HTML dump declares its language in each record (`in_language`; the first record's
is the dump's, as EnterpriseDump.site says): the text checked is its first articles' paragraphs
(`<p>`, tags dropped), by the same rules.
"""
from __future__ import annotations

import html
import lzma
import os
import re
import sys
from collections.abc import Iterable, Iterator

from ..errors import DumpError
from ..text.language_check import TextLanguage, mismatch, warning_line
from .enterprise_html import ENTERPRISE_HTML, EnterpriseDump, input_kind
from .page_reader import DumpFile
from .page_scanner import PageScanner
from .passages import detected_language, input_kind as passages_kind, sample_texts
from .sources import ChunkStream, expand_inputs, open_xml

# The check reads the first articles of each file: at most this much decompressed XML, this many
# articles, this many characters of their text.
_SAMPLE_BYTES = 4 << 20
_SAMPLE_ARTICLES = 30
_SAMPLE_CHARS = 300_000
_SAMPLE_CHUNK = 1 << 18
_SAMPLE_RECORDS = 200  # Enterprise HTML: records looked at, at most (redirects, other namespaces)
_SAMPLE_NS = re.compile(r"<ns>(-?\d+)</ns>")
_PARAGRAPH = re.compile(r"<p\b[^>]*>(.*?)</p>", re.S | re.I)
_HTML_TAG = re.compile(r"<[^<>]*>")
_HTML_DROPPED = re.compile(r"<(style|script|sup)\b[^>]*>.*?</\1>", re.S | re.I)
_SAMPLE_TEXT = re.compile(r"<text\b[^>]*>([^<]*)</text>")


def sample_article_texts(path: str) -> list[str]:
    """The wikitext of the first main-namespace articles of a dump file (no redirects), read
    from its first _SAMPLE_BYTES; [] for a file that cannot be read (opening it says why)."""
    texts: list[str] = []
    xml = None
    try:
        xml = open_xml(path, light=True)
        for block in PageScanner(ChunkStream(_first_bytes(xml.reader)), _SAMPLE_CHUNK):
            text = _article_text(block.xml.decode("utf-8", "replace"))
            if text is not None:
                texts.append(text[:_SAMPLE_CHARS - sum(map(len, texts))])
                if len(texts) >= _SAMPLE_ARTICLES or sum(map(len, texts)) >= _SAMPLE_CHARS:
                    break
    except (OSError, EOFError, lzma.LZMAError, ValueError):
        pass  # a cut or bad file: what was read is sample enough
    finally:
        if xml is not None:
            xml.close()
    return texts


def _first_bytes(reader) -> Iterator[bytes]:
    read = 0
    while read < _SAMPLE_BYTES and (chunk := reader.read(_SAMPLE_CHUNK)):
        read += len(chunk)
        yield chunk


def _article_text(page: str) -> str | None:
    """The last revision's text of a page's XML where it is a main-namespace article."""
    ns = _SAMPLE_NS.search(page)
    texts = _SAMPLE_TEXT.findall(page)
    if (ns is not None and ns.group(1) != "0") or not texts or "<redirect" in page:
        return None
    text = html.unescape(texts[-1])
    return None if text.lstrip().startswith("#") else text


def sample_html_article_texts(dump: EnterpriseDump) -> list[str]:
    """The paragraph text of an Enterprise HTML dump's first main-namespace articles (no
    redirects): at most _SAMPLE_ARTICLES of them, _SAMPLE_CHARS characters, from its first
    _SAMPLE_RECORDS records; what was read where the file is cut or bad."""
    texts: list[str] = []
    try:
        for seen, page in enumerate(dump.pages(allow_truncated=True)):
            if seen >= _SAMPLE_RECORDS:
                break
            if page.ns != 0 or page.redirect is not None:
                continue
            text = html_paragraph_text(page.html)
            if text:
                texts.append(text[:_SAMPLE_CHARS - sum(map(len, texts))])
            if len(texts) >= _SAMPLE_ARTICLES or sum(map(len, texts)) >= _SAMPLE_CHARS:
                break
    except (DumpError, OSError, EOFError, ValueError):
        pass
    return texts


def html_paragraph_text(page_html: str) -> str:
    """The words of an article's paragraphs (`<p>`): footnote markers, styles and tags dropped,
    entities decoded. Infoboxes, references and navboxes are not paragraphs."""
    found = []
    for paragraph in _PARAGRAPH.findall(page_html):
        paragraph = _HTML_DROPPED.sub("", paragraph)
        found.append(html.unescape(_HTML_TAG.sub("", paragraph)))
    return "\n".join(found)


def language_mismatch(path: str) -> tuple[str, TextLanguage | None]:
    """The language `path` declares (its siteinfo; an Enterprise HTML dump's records'
    `in_language`), and what its first articles look like where that is not it (None where
    they may well be in it)."""
    if input_kind(path) == ENTERPRISE_HTML:
        dump = EnterpriseDump(path)
        return dump.site.lang, mismatch(dump.site.lang, sample_html_article_texts(dump))
    declared = DumpFile(path, redirects_only=True).site.lang  # its head only, read in this thread
    return declared, mismatch(declared, sample_article_texts(path))


def _undetected_corpus_language(path: str, kind: str) -> str | None:
    """A passage corpus declares no language: warn where its text does not tell one either, as
    its passages are then taken for English (sentence rules, the pairs' `lang`)."""
    texts = sample_texts(path, kind)
    if not texts:
        return None  # no record to read: reading it says why
    found = detected_language(texts)
    if found.lang:
        return None
    line = (f"wikipairs: warning: {os.path.basename(path)}: its language is not clear from its "
            f"first records ({found.evidence}); taken as en: pass --lang")
    print(line, file=sys.stderr)
    return line


def check_declared_language(inputs: Iterable[str], lang: str | None = None) -> str | None:
    """Warn in one line on stderr where the first input's text does not look like the language
    its siteinfo declares, and return that line. Nothing to check when `lang` (--lang) is given;
    nothing said for inputs that cannot be read: reading them says why."""
    if lang:
        return None
    try:
        path = expand_inputs(inputs)[0]
        kind = passages_kind(path)
        if kind is not None:
            return _undetected_corpus_language(path, kind)
        declared, found = language_mismatch(path)
    except DumpError:
        return None
    if found is None:
        return None
    line = warning_line(os.path.basename(path), declared, found)
    print(line, file=sys.stderr)
    return line
