"""Inputs that are not clean dumps, through the real command line: each gives the right articles or
exit status 2 with one line on stderr (no traceback; `--debug` shows one). Also other encodings and
compressions of the bundled sample, several files, cut files, and exports without <ns>."""
from __future__ import annotations

import bz2
import gzip
import json
import lzma
import random
import zlib
from collections import Counter
from pathlib import Path

import pytest

from conftest import SAMPLE_DUMP, assert_one_line_error, describe, read_articles, run_cli
from wikipairs.reading import DumpFile
from wikipairs.errors import DumpError, TruncatedDumpError

SAMPLE_XML = bz2.decompress(SAMPLE_DUMP.read_bytes())  # UTF-8, no XML declaration
SAMPLE_PAGES = SAMPLE_XML.count(b"</page>")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Bad and re-encoded copies of the bundled sample, written once for the module."""
    folder = tmp_path_factory.mktemp("inputs")
    rng = random.Random(0)
    (folder / "empty.xml").write_bytes(b"")
    (folder / "random.xml").write_bytes(rng.randbytes(100_000))
    (folder / "random.xml.bz2").write_bytes(rng.randbytes(100_000))
    (folder / "corrupt.xml.bz2").write_bytes(b"BZh9" + rng.randbytes(100_000))  # bz2 magic only
    text = "".join(rng.choice("abcdefghij <>/&;=\"'\n") for _ in range(200_000))
    (folder / "random-text.xml.bz2").write_bytes(bz2.compress(text.encode("utf-8")))
    (folder / "not-mediawiki.xml").write_text(
        '<?xml version="1.0"?><root><page><title>A</title></page></root>', encoding="utf-8")

    (folder / "copy.xml").write_bytes(SAMPLE_XML)
    (folder / "copy.xml.gz").write_bytes(gzip.compress(SAMPLE_XML))
    (folder / "copy.xml.xz").write_bytes(lzma.compress(SAMPLE_XML))
    text = SAMPLE_XML.decode("utf-8")
    declared = '<?xml version="1.0" encoding="UTF-16"?>\n' + text
    (folder / "utf16.xml").write_bytes(declared.encode("utf-16"))  # with a BOM
    (folder / "utf16be.xml.bz2").write_bytes(
        bz2.compress(b"\xfe\xff" + declared.encode("utf-16-be")))
    (folder / "utf8-bom.xml").write_bytes(b"\xef\xbb\xbf" + SAMPLE_XML)

    # Malformed XML in the middle of a page, in a small file and in one bigger than the 64 KiB
    # the reader looks at first (both must say "not readable", not "truncated").
    middle = SAMPLE_XML.index(b"</text>", len(SAMPLE_XML) // 2)
    (folder / "malformed.xml").write_bytes(SAMPLE_XML[:middle] + b"<bad & token>" + SAMPLE_XML[middle:])
    head, pages = SAMPLE_XML[:SAMPLE_XML.index(b"<page>")], \
        SAMPLE_XML[SAMPLE_XML.index(b"<page>"):SAMPLE_XML.rindex(b"</mediawiki>")]
    (folder / "malformed-big.xml").write_bytes(
        head + pages * 20 + b"<page><title>X & Y</title></page></mediawiki>\n")
    # Cut downloads: a plain file and a gzip file cut in the middle.
    (folder / "cut.xml").write_bytes(SAMPLE_XML[:len(SAMPLE_XML) // 2])
    packed = gzip.compress(SAMPLE_XML)
    (folder / "cut.xml.gz").write_bytes(packed[:len(packed) // 2])
    packed = lzma.compress(SAMPLE_XML)
    (folder / "cut.xml.xz").write_bytes(packed[:len(packed) // 2])
    packed = bz2.compress(SAMPLE_XML)  # one bz2 block: cut, it gives no data at all
    (folder / "cut.xml.bz2").write_bytes(packed[:len(packed) // 2])
    (folder / "dir.xml").mkdir()
    return folder


# ---- one error line, exit status 2 ---------------------------------------------------------

@pytest.mark.parametrize("name,says", [
    ("missing.xml", "no such file"),
    ("nothing-*.xml.bz2", "no file matches"),
    ("dir.xml", "directory"),
    ("empty.xml", "empty"),
    ("random.xml", "not a MediaWiki XML dump"),
    ("random.xml.bz2", "not a MediaWiki XML dump"),
    ("corrupt.xml.bz2", "not a"),
    ("random-text.xml.bz2", "not a MediaWiki XML dump"),
    ("not-mediawiki.xml", "not a MediaWiki XML dump"),
    ("malformed.xml", "not a readable MediaWiki XML dump"),
    ("malformed-big.xml", "not a readable MediaWiki XML dump"),
])
def test_bad_input_is_one_error_line(inputs, tmp_path, name, says):
    path = inputs / name
    out = tmp_path / "out"
    line = assert_one_line_error(run_cli("parse", "-q", "-i", path, "-o", out), str(path), says)
    assert "truncated" not in line
    assert not (out / "manifest.json").exists()


@pytest.mark.parametrize("name", ["malformed.xml", "malformed-big.xml"])
def test_malformed_xml_is_not_taken_for_a_cut_file(inputs, tmp_path, name):
    """--allow-truncated keeps the pages of a cut file; it must not hide broken XML."""
    path = inputs / name
    assert_one_line_error(run_cli("parse", "-q", "-i", path, "-o", tmp_path, "--allow-truncated"),
                          str(path), "not a readable")


def test_debug_shows_the_traceback(inputs, tmp_path):
    path = inputs / "random.xml"
    result = run_cli("--debug", "parse", "-q", "-i", path, "-o", tmp_path)
    assert result.returncode == 2, describe(result)
    assert "Traceback (most recent call last)" in result.stderr, describe(result)
    assert "DumpError" in result.stderr, describe(result)
    assert result.stderr.splitlines()[-1].startswith(f"wikipairs: error: {path}"), describe(result)


_DECOMPRESS = {".xml": lambda data: data, ".gz": lambda data: zlib.decompressobj(31).decompress(data),
               ".xz": lambda data: lzma.LZMADecompressor().decompress(data),
               ".bz2": lambda data: bz2.BZ2Decompressor().decompress(data)}


@pytest.mark.parametrize("name", ["cut.xml", "cut.xml.gz", "cut.xml.xz", "cut.xml.bz2"])
def test_cut_file(inputs, tmp_path, name):
    path = inputs / name
    line = assert_one_line_error(run_cli("parse", "-q", "-i", path, "-o", tmp_path / "a"),
                                 str(path), "truncated")
    assert "--allow-truncated" in line
    result = run_cli("parse", "-i", path, "-o", tmp_path / "b", "--allow-truncated")
    assert result.returncode == 0, describe(result)
    assert "Traceback" not in result.stderr, describe(result)
    stats = json.loads((tmp_path / "b" / "parse_stats.json").read_text(encoding="utf-8"))
    # Every complete page the decompressor can give before the cut is kept.
    data = _DECOMPRESS[path.suffix](path.read_bytes())
    assert stats["truncated_files"] == 1 and stats["pages"] == data.count(b"</page>"), stats
    if stats["pages"]:
        assert f"after {stats['pages']} complete pages" in line, line
    else:
        assert "before its first page" in line, line


def test_every_cut_of_a_dump_keeps_the_complete_pages(tmp_path):
    """The sample cut at many offsets (plain XML, in process): a TruncatedDumpError without
    --allow-truncated; with it, exactly the pages that end before the cut."""
    def dump(data: bytes, name: str) -> DumpFile:
        path = tmp_path / name
        path.write_bytes(data)
        return DumpFile(str(path))

    full = [(p.id, p.title) for p in dump(SAMPLE_XML, "full.xml").pages()]
    assert len(full) == SAMPLE_PAGES
    first_page = SAMPLE_XML.index(b"<page>")
    offsets = sorted(set(range(first_page + 1, len(SAMPLE_XML) - 2, len(SAMPLE_XML) // 60))
                     | {SAMPLE_XML.index(b"</page>") + len(b"</page>"),
                        SAMPLE_XML.rindex(b"</mediawiki>") + 5})
    for offset in offsets:
        data = SAMPLE_XML[:offset]
        complete = data.count(b"</page>")
        with pytest.raises(TruncatedDumpError, match="truncated"):
            list(dump(data, f"cut-{offset}.xml").pages())
        counts = Counter()
        kept = [(p.id, p.title)
                for p in dump(data, f"cut-{offset}.xml").pages(counts, allow_truncated=True)]
        assert kept == full[:complete], f"cut at byte {offset}"
        assert counts["truncated_files"] == 1 and counts["pages_read"] == complete


@pytest.mark.parametrize("end", [b"</siteinfo>", b"<page>"])
def test_cut_before_the_first_page(tmp_path, end):
    """A file that ends before its first page has no pages: an error, or none with
    --allow-truncated (like any cut file); its siteinfo is kept where it is complete."""
    path = tmp_path / "header.xml"
    path.write_bytes(SAMPLE_XML[:SAMPLE_XML.index(end) + 3])
    with pytest.raises(TruncatedDumpError, match="before its first page"):
        list(DumpFile(str(path)).pages())
    counts = Counter()
    dump = DumpFile(str(path))
    assert list(dump.pages(counts, allow_truncated=True)) == []
    assert counts["truncated_files"] == 1 and counts["pages_read"] == 0
    assert dump.site.lang == "en"
    if end == b"<page>":
        assert dump.site.dbname == "enwiki" and 14 in dump.site.namespaces


def test_dump_file_errors_are_dump_errors(tmp_path):
    with pytest.raises(DumpError, match="missing.xml"):
        DumpFile(str(tmp_path / "missing.xml"))
    (tmp_path / "empty.xml").write_bytes(b"")
    with pytest.raises(DumpError, match="empty"):
        DumpFile(str(tmp_path / "empty.xml"))


# ---- the same articles whatever the encoding or compression ---------------------------------

@pytest.fixture(scope="module")
def reference_articles(tmp_path_factory) -> list[dict]:
    out = tmp_path_factory.mktemp("reference")
    result = run_cli("parse", "-q", "-i", SAMPLE_DUMP, "-o", out)
    assert result.returncode == 0, describe(result)
    rows = read_articles(out)
    assert len(rows) > 10
    return rows


@pytest.mark.parametrize("name", ["copy.xml", "copy.xml.gz", "copy.xml.xz", "utf16.xml",
                                  "utf16be.xml.bz2", "utf8-bom.xml"])
def test_same_articles_whatever_the_encoding_or_compression(inputs, tmp_path, reference_articles,
                                                            name):
    result = run_cli("parse", "-q", "-i", inputs / name, "-o", tmp_path)
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)
    rows = read_articles(tmp_path)
    assert [r["title"] for r in rows] == [r["title"] for r in reference_articles]
    assert rows == reference_articles, f"{name}: articles differ from the UTF-8 .bz2 original"


def test_two_files_and_a_glob_read_all_of_them(inputs, tmp_path, reference_articles):
    result = run_cli("parse", "-q", "-i", inputs / "copy.xml", "-i", inputs / "copy.xml.gz",
                     "-o", tmp_path / "two")
    assert result.returncode == 0, describe(result)
    stats = json.loads((tmp_path / "two" / "parse_stats.json").read_text(encoding="utf-8"))
    assert stats["pages"] == 2 * SAMPLE_PAGES, stats
    assert read_articles(tmp_path / "two") == reference_articles * 2
    manifest = json.loads((tmp_path / "two" / "manifest.json").read_text(encoding="utf-8"))
    assert [Path(i["path"]).name for i in manifest["inputs"]] == ["copy.xml", "copy.xml.gz"]

    result = run_cli("parse", "-q", "-i", str(inputs / "copy.xml*"), "-o", tmp_path / "glob")
    assert result.returncode == 0, describe(result)
    stats = json.loads((tmp_path / "glob" / "parse_stats.json").read_text(encoding="utf-8"))
    assert stats["pages"] == 3 * SAMPLE_PAGES, stats  # copy.xml, copy.xml.gz, copy.xml.xz
    assert read_articles(tmp_path / "glob") == reference_articles * 3


# ---- an old export without <ns> ------------------------------------------------------------

SITEINFO_03 = """  <siteinfo>
    <sitename>Wikipedia</sitename>
    <base>http://en.wikipedia.org/wiki/Main_Page</base>
    <generator>MediaWiki 1.13alpha</generator>
    <case>first-letter</case>
    <namespaces>
      <namespace key="-2">Media</namespace>
      <namespace key="-1">Special</namespace>
      <namespace key="0" />
      <namespace key="1">Talk</namespace>
      <namespace key="10">Template</namespace>
      <namespace key="11">Template talk</namespace>
      <namespace key="14">Category</namespace>
    </namespaces>
  </siteinfo>
"""


def _page_03(page_id: int, title: str, text: str) -> str:
    return f"""  <page>
    <title>{title}</title>
    <id>{page_id}</id>
    <revision>
      <id>{100 + page_id}</id>
      <timestamp>2008-01-01T00:00:00Z</timestamp>
      <contributor><username>Someone</username><id>1</id></contributor>
      <text xml:space="preserve">{text}</text>
    </revision>
  </page>
"""


def _export_03(siteinfo: str) -> str:
    return ('<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.3/" version="0.3" '
            'xml:lang="en">\n' + siteinfo
            + _page_03(1, "Ostrich", "The '''ostrich''' is a large [[flightless bird]]. "
                                     "It lives in [[Africa]] and runs fast.")
            + _page_03(2, "Talk:Ostrich", "This talk page discusses the article. It is no article.")
            + _page_03(3, "Template:Bird", "A template about birds. It is not an article either.")
            + "</mediawiki>\n")


@pytest.mark.parametrize("siteinfo", [SITEINFO_03, ""], ids=["with-siteinfo", "no-siteinfo"])
def test_export_without_ns_tags(tmp_path, siteinfo):
    path = tmp_path / "old-export.xml"
    path.write_text(_export_03(siteinfo), encoding="utf-8")
    assert [(p.ns, p.title) for p in DumpFile(str(path)).pages()] == \
        [(0, "Ostrich"), (1, "Talk:Ostrich"), (10, "Template:Bird")]
    out = tmp_path / "out"
    result = run_cli("parse", "-q", "-i", path, "-o", out)
    assert result.returncode == 0, describe(result)
    rows = read_articles(out)
    assert [r["title"] for r in rows] == ["Ostrich"], [r["title"] for r in rows]
    assert [link["target"] for link in rows[0]["links"]] == ["Flightless bird", "Africa"]
    stats = json.loads((out / "parse_stats.json").read_text(encoding="utf-8"))
    assert stats["pages"] == 3 and stats["skipped"] == {"namespace": 2}, stats
