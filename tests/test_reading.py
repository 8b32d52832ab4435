"""wikipairs.reading: the one page scanner and the streams a split hands the page reader.

Oracle for the scanner: a regular expression over the whole decompressed file, on every real
dump, with read sizes down to a few bytes (tags then straddle reads)."""
from __future__ import annotations

import io
import re

import pytest

from conftest import WIKI
from wikipairs.reading import PageReader, PageScanner, XmlStream, open_xml
from wikipairs.reading.sources import ChunkStream

DUMPS = sorted(p.name for p in WIKI.glob("*.xml*") if "truncated" not in p.name)
_PAGE = re.compile(rb"<page>.*?</page>", re.S)


def _expected(data: bytes):
    """(header, [(offset, xml, gap)], tail) by the regular expression."""
    matches = list(_PAGE.finditer(data))
    if not matches:
        return data, [], b""
    blocks, previous = [], matches[0].start()
    for m in matches:
        blocks.append((m.start(), m.group(), data[previous:m.start()]))
        previous = m.end()
    return data[:matches[0].start()], blocks, data[previous:]


def _scanned(data: bytes, block: int):
    scanner = PageScanner(io.BytesIO(data), block)
    header = scanner.header()
    blocks = [(b.offset, b.xml, b.gap) for b in scanner]
    return header, blocks, scanner.tail


@pytest.mark.parametrize("name", DUMPS)
def test_scanner_finds_what_a_regex_finds_on_real_dumps(name):
    data = open_xml(str(WIKI / name)).reader.read()
    expected = _expected(data)
    assert expected[1], name
    assert _scanned(data, 1 << 20) == expected
    assert _scanned(data, 4096) == expected


@pytest.mark.parametrize("block", [1, 3, 6, 7, 8, 13, 64])
def test_scanner_with_tags_across_reads(block):
    data = (b"<mediawiki><siteinfo/>\n  <page><title>A</title><text>x &lt;page&gt;</text></page>"
            b"\n  <page><title>B</title></page><page></page>  \n</mediawiki>\n")
    assert _scanned(data, block) == _expected(data)
    cut = data[:data.rindex(b"<page>") + 9]
    header, blocks, tail = _scanned(cut, block)
    assert len(blocks) == 2 and tail.startswith(b"<page>")
    assert _scanned(b"<mediawiki></mediawiki>", block) == (b"<mediawiki></mediawiki>", [], b"")


def test_chunk_stream_concatenates_bytes_and_streams_lazily():
    made = []

    def parts():
        for part in (b"ab", io.BytesIO(b"cde"), b"", b"f" * 10):
            made.append(part)
            yield part

    stream = io.BufferedReader(ChunkStream(parts()), 4)
    assert stream.read(2) == b"ab" and len(made) <= 2
    assert stream.read() == b"cde" + b"f" * 10


def test_page_reader_reads_a_stream_without_a_file():
    xml = (b'<mediawiki xml:lang="en"><siteinfo><dbname>enwiki</dbname></siteinfo>'
           b"<page><title>A</title><ns>0</ns><id>1</id><revision><id>1</id><text>x</text>"
           b"</revision></page></mediawiki>")
    reader = PageReader(lambda: XmlStream(ChunkStream([xml[:50], xml[50:]])), "part of x.xml")
    pages = list(reader.pages())
    assert [(p.id, p.title, p.text, p.source) for p in pages] == [(1, "A", "x", "part of x.xml")]
    assert reader.site.lang == "en"


def test_a_dump_opened_for_its_site_reads_no_pages_ahead():
    """`open_header` gives the site a pages reader gives, and starts no read-ahead thread (one
    opened for pages decodes 8 MiB of bz2 ahead: the CLI's language check and the build's
    driver spent ~0.6 s of CPU per opening on it for nothing)."""
    import threading

    from wikipairs.parse import open_dump, open_header
    path = str(WIKI / "enwiki-sample-gensim.xml.bz2")
    before = {t.ident for t in threading.enumerate() if t.name == "wikipairs-readahead"}
    site = open_header(path).site
    started = [t for t in threading.enumerate()
               if t.name == "wikipairs-readahead" and t.ident not in before]
    assert started == []
    assert site == open_dump(path).site
