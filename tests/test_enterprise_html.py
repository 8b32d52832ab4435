"""Wikimedia Enterprise HTML dumps as input (issue 23): the streaming reader
(wikipairs/reading/enterprise_html.py), Parsoid HTML to Articles (wikipairs/text/parsoid.py) and
`wikipairs parse` on them.

The real sample is ../shared/data/html/frwiki-NS0-20231123-ENTERPRISE-HTML-sample.json.tar.gz
(26 frwiki articles, one NDJSON member, no `redirects` field); the shapes it lacks (several
members, redirects lists, another language, a cut file) are small fixtures written here.
"""
from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
from collections import Counter
from pathlib import Path

import nltk.data
import pyarrow.parquet as pq
import pytest
from selectolax.lexbor import LexborHTMLParser

from conftest import NLTK_DATA, SHARED_DATA, assert_one_line_error, punkt_free_paths, read_articles, run_cli
from wikipairs.errors import DumpError, TruncatedDumpError
from wikipairs.pairs.quality import leaking_sentences
from wikipairs.parse import ParseConfig, iter_articles, open_dump
from wikipairs.reading.enterprise_html import (ENTERPRISE_HTML, XML, EnterpriseDump, input_kind,
                                               plain_title, site_of, tar_members)
from wikipairs.reading.splits import plan_splits, prepare_file, read_split
from wikipairs.records import HtmlPage
from wikipairs.text.parsoid import ParsoidCleaner, drop_reason
from wikipairs.text.sentences import SentenceSplitter
from wikipairs.text.titles import TitleParser

HTML_SAMPLE = SHARED_DATA / "html" / "frwiki-NS0-20231123-ENTERPRISE-HTML-sample.json.tar.gz"
WIKITEXT_SAMPLE = SHARED_DATA / "wiki" / "frwiki-wikiplaintext-sample.xml.bz2"


def sample() -> Path:
    if not HTML_SAMPLE.is_file():
        pytest.fail(f"real test data missing: {HTML_SAMPLE} (see ../shared/data/README.md)",
                    pytrace=False)
    return HTML_SAMPLE


@pytest.fixture(scope="module")
def parsed_sample():
    """(articles, counts, info) of `parse`'s article stream on the real sample."""
    counts, info = Counter(), {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NLTK_DATA", str(NLTK_DATA))
        mp.setattr(nltk.data, "path", punkt_free_paths())
        articles = list(iter_articles(ParseConfig(inputs=[str(sample())], output=""), counts, info))
    return articles, counts, info


# ---- fixtures for the shapes the sample lacks ---------------------------------------------

def page_html(body: str, title: str = "T") -> str:
    return (f'<!DOCTYPE html><html><head><title>{title}</title></head>'
            f'<body lang="xx" class="mw-parser-output">{body}</body></html>')


def record(name: str, page_id: int, body: str, lang: str = "fr", **extra) -> dict:
    wiki = lang.replace("-", "_") + "wiki"
    return {"name": name, "identifier": page_id, "version": {"identifier": page_id * 10},
            "url": f"https://{lang}.wikipedia.org/wiki/{name.replace(' ', '_')}",
            "namespace": {"identifier": 0}, "in_language": {"identifier": lang},
            "is_part_of": {"identifier": wiki}, "article_body": {"html": page_html(body, name)},
            **extra}


def write_dump(path: Path, members: dict[str, list[dict]], compress: bool = True,
               long_names: bool = False) -> Path:
    """An Enterprise HTML dump: a (gzip'd) tar with one NDJSON member per entry."""
    buffer = io.BytesIO()
    fmt = tarfile.GNU_FORMAT if long_names else tarfile.USTAR_FORMAT
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
        for name, records in members.items():
            data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    data = buffer.getvalue()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


def lead(text: str) -> str:
    return f'<section data-mw-section-id="0"><p>{text}</p></section>'


def wikilink(target: str, text: str) -> str:
    return f'<a rel="mw:WikiLink" href="./{target.replace(" ", "_")}" title="{target}">{text}</a>'


# ---- the reader ------------------------------------------------------------------------------

def test_the_sample_is_told_from_xml_dumps_by_its_content(tmp_path):
    assert input_kind(str(sample())) == ENTERPRISE_HTML
    assert input_kind(str(WIKITEXT_SAMPLE)) == XML
    renamed = tmp_path / "dump.bin"  # the name says nothing
    renamed.write_bytes(sample().read_bytes())
    assert input_kind(str(renamed)) == ENTERPRISE_HTML
    assert isinstance(open_dump(str(renamed)), EnterpriseDump)
    plain = write_dump(tmp_path / "plain.tar", {"a.ndjson": [record("A", 1, lead("x"))]},
                       compress=False)
    assert input_kind(str(plain)) == ENTERPRISE_HTML
    other = tmp_path / "other.tar.gz"  # a tar.gz of something else is no HTML dump
    write_dump(other, {"notes.txt": []})
    assert input_kind(str(other)) == XML


def test_sample_records_become_pages():
    dump = EnterpriseDump(str(sample()))
    assert (dump.site.lang, dump.site.dbname) == ("fr", "frwiki")
    assert dump.member_names() == ["frwiki_namespace_0_0.ndjson"]
    counts = Counter()
    pages = list(dump.pages(counts))
    assert counts["pages_read"] == len(pages) == 26
    by_title = {p.title: p for p in pages}
    leonard = by_title["Léonard de Vinci"]
    assert (leonard.id, leonard.revision, leonard.ns, leonard.lang) == (10049, 209931064, 0, "fr")
    assert len(leonard.html) > 2_000_000 and leonard.redirects == [] and leonard.redirect is None
    # display titles lose their markup: "<i>Die Welt</i>"
    assert "Die Welt" in by_title and plain_title("<i>Die&nbsp;Welt</i>") == "Die Welt"
    assert all("<" not in p.title for p in pages)


def test_records_stream_one_at_a_time_from_several_members(tmp_path):
    members = {f"frwiki_namespace_0_{k}.ndjson": [record(f"Page {k}-{i}", 100 * k + i, lead("x"))
                                                  for i in range(3)] for k in range(3)}
    members["README.txt"] = []  # not NDJSON: skipped
    path = write_dump(tmp_path / "multi.json.tar.gz", members)
    dump = EnterpriseDump(str(path))
    assert dump.member_names() == [f"frwiki_namespace_0_{k}.ndjson" for k in range(3)]
    pages = dump.pages()
    first = next(pages)  # a generator: nothing beyond the first record is decoded yet
    assert first.title == "Page 0-0"
    assert [p.id for p in pages] == [1, 2, 100, 101, 102, 200, 201, 202]
    assert [p.id for p in EnterpriseDump(str(path), members={1}).pages()] == [100, 101, 102]


def test_long_member_names_and_a_member_without_a_final_newline(tmp_path):
    name = "x" * 120 + ".ndjson"  # over ustar's 100 bytes: a GNU long-name header
    path = write_dump(tmp_path / "long.tar.gz", {name: [record("A", 1, lead("a."))]},
                      long_names=True)
    assert EnterpriseDump(str(path)).member_names() == [name]
    raw = tmp_path / "nonl.tar"
    data = json.dumps(record("B", 2, lead("b."))).encode()  # no newline at the end
    with tarfile.open(raw, "w") as tar:
        info = tarfile.TarInfo("b.ndjson")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert [p.title for p in EnterpriseDump(str(raw)).pages()] == ["B"]


def test_redirects_lists_and_redirect_markers(tmp_path):
    records = [
        record("Cible", 1, lead("Voir " + wikilink("Ancien nom", "l'ancien nom") + "."),
               redirects=[{"name": "Ancien nom", "url": "https://fr.wikipedia.org/wiki/Ancien_nom"},
                          {"name": "autre_nom"}]),
        record("Page", 2, lead("Un lien vers " + wikilink("Autre nom", "la cible") + " ici.")),
        record("Vieux", 3, '<link rel="mw:PageProp/redirect" href="./Cible"/>'),
    ]
    path = write_dump(tmp_path / "redirects.json.tar.gz", {"a.ndjson": records})
    pages = list(EnterpriseDump(str(path)).pages())
    assert pages[0].redirects == ["Ancien nom", "Autre nom"]  # normalized
    assert pages[2].redirect == "Cible"
    # the redirects-only first pass decodes only the records that can hold redirects
    assert [p.id for p in EnterpriseDump(str(path), redirects_only=True).pages()] == [1, 3]
    counts, info = Counter(), {}
    articles = {a.title: a for a in iter_articles(ParseConfig(inputs=[str(path)], output="",
                                                              sentence_splitter="sentencex"),
                                                  counts, info)}
    assert set(articles) == {"Cible", "Page"}
    assert counts["redirects"] == 3  # two listed, one redirect page
    link = articles["Page"].links[0]
    assert (link.raw_target, link.target, link.anchor) == ("Autre nom", "Cible", "la cible")
    assert articles["Cible"].links[0].target == "Cible"  # a link to its own redirect
    assert info["redirects"].resolve("Vieux") == "Cible"


def test_a_record_of_another_wiki(tmp_path):
    body = ('<section data-mw-section-id="0"><p><b>Berlin</b> ist die Hauptstadt '
            + wikilink("Deutschland", "Deutschlands")
            + '.<sup class="mw-ref reference" typeof="mw:Extension/ref"><a href="#c">[1]</a></sup>'
            ' Sie hat 3,7 Millionen Einwohner.</p></section>'
            '<section data-mw-section-id="1"><h2 id="Geschichte">Geschichte</h2>'
            '<p>Berlin wurde 1237 erstmals erwähnt.</p></section>'
            '<section data-mw-section-id="2"><h2>Einzelnachweise</h2><p>Quelle.</p></section>'
            '<link rel="mw:PageProp/Category" href="./Kategorie:Hauptstadt_in_Europa"/>')
    path = write_dump(tmp_path / "dewiki.json.tar.gz",
                      {"dewiki_namespace_0_0.ndjson": [record("Berlin", 5, body, lang="de")]})
    dump = EnterpriseDump(str(path))
    assert (dump.site.lang, dump.site.dbname) == ("de", "dewiki")
    counts = Counter()
    cleaner = ParsoidCleaner(dump.titles, SentenceSplitter.for_language("de", method="sentencex"))
    article = cleaner.article(next(dump.pages()), counts)
    assert article.lang == "de" and article.categories == ["Hauptstadt in Europa"]
    assert [s.heading for s in article.sections] == ["", "Geschichte"]  # Einzelnachweise dropped
    assert article.sections[0].paragraphs == [["Berlin ist die Hauptstadt Deutschlands.",
                                               "Sie hat 3,7 Millionen Einwohner."]]
    assert counts["html_dropped_references"] == 1
    assert counts["html_dropped_boilerplate_sections"] == 1


def test_cut_and_broken_dumps(tmp_path):
    whole = write_dump(tmp_path / "whole.json.tar.gz",
                       {"a.ndjson": [record(f"P{i}", i, lead(" ".join(str(i * j) for j in range(3000))))
                                     for i in range(1, 6)]})
    data = whole.read_bytes()
    cut = tmp_path / "cut.json.tar.gz"
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(TruncatedDumpError, match="truncated"):
        list(EnterpriseDump(str(cut)).pages())
    counts = Counter()
    kept = list(EnterpriseDump(str(cut)).pages(counts, allow_truncated=True))
    assert 0 < len(kept) < 5 and counts["truncated_files"] == 1
    no_html = write_dump(tmp_path / "nohtml.json.tar.gz", {"a.ndjson": [{"name": "X"}]})
    with pytest.raises(DumpError, match="article_body.html"):
        list(EnterpriseDump(str(no_html)).pages())
    nameless = record("X", 7, lead("Text."))
    del nameless["name"]
    no_name = write_dump(tmp_path / "noname.json.tar.gz", {"a.ndjson": [nameless]})
    with pytest.raises(DumpError, match="without `name`"):  # not an article titled ""
        list(EnterpriseDump(str(no_name)).pages())
    bad = tmp_path / "bad.json.tar.gz"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("a.ndjson")
        info.size = len(b"{not json}\n")
        tar.addfile(info, io.BytesIO(b"{not json}\n"))
    raw = buffer.getvalue()
    bad.write_bytes(gzip.compress(raw))
    with pytest.raises(DumpError, match="not a JSON record"):
        list(EnterpriseDump(str(bad)).pages())
    header = bytearray(raw)
    header[148:156] = b"0000000\0"  # a wrong header checksum
    bad.write_bytes(gzip.compress(bytes(header)))
    with pytest.raises(DumpError, match="not a readable Enterprise HTML dump"):
        list(EnterpriseDump(str(bad)).pages())


def test_tar_members_reads_what_tarfile_reads(tmp_path):
    members = {f"m{k}.ndjson": [record(f"A{k}{i}", i, lead("é" * (k * 700 + i))) for i in range(4)]
               for k in range(3)}
    path = write_dump(tmp_path / "t.tar.gz", members)
    with gzip.open(path) as stream:
        ours = {name: b"".join(lines) for name, lines in tar_members(stream)}
    with tarfile.open(path) as tar:
        theirs = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    assert ours == theirs


# ---- Parsoid HTML to articles: the real sample ---------------------------------------------------

def test_every_in_text_link_span_is_its_anchor(parsed_sample):
    articles, _, _ = parsed_sample
    checked = 0
    for article in articles:
        for link in article.links:
            if link.sentence < 0:
                continue
            sentence = article.sections[link.section].paragraphs[link.paragraph][link.sentence]
            assert sentence[link.start:link.end] == link.anchor, (article.title, link)
            assert link.anchor and link.anchor == link.anchor.strip()
            checked += 1
    assert checked > 4000


def test_no_markup_left_in_sentences(parsed_sample):
    articles, _, _ = parsed_sample
    total, leaks = leaking_sentences(articles, "fr")
    assert total > 2900 and leaks == []  # 2,994 (bibliographies under "Annexes" go)
    for article in articles:
        for _, _, _, sentence in article.sentences():
            assert not re.search(r"[<>]\w|\ue000|\ue001|\ue002|\[\d+\]|mw-parser-output", sentence), \
                (article.title, sentence)


def test_sections_paragraphs_and_links_are_sane(parsed_sample):
    articles, counts, info = parsed_sample
    assert len(articles) == 25 and counts["skipped_empty"] == 1  # Gouvernement Diouf XI: a table
    assert info["lang"] == "fr" and counts["pages_read"] == 26
    by_title = {a.title: a for a in articles}
    leonard = by_title["Léonard de Vinci"]
    headings = [s.heading for s in leonard.sections]
    assert headings[0] == "" and leonard.sections[0].level == 0
    assert "Biographie" not in headings  # a heading with only subsections is an empty section
    assert {"Notes et références", "Bibliographie", "Articles connexes"}.isdisjoint(headings)
    assert all(s.level in (2, 3, 4, 5, 6) for s in leonard.sections[1:])
    assert len(leonard.sections) > 30 and sum(len(s.paragraphs) for s in leonard.sections) > 300
    valentin = by_title["Saint-Valentin"]
    assert valentin.sections[0].paragraphs[0][0].startswith(
        "Le jour de la Saint-Valentin, le 14 février, est considéré")
    # the text templates make is there ({{s|XIV}}, {{date|14 février}}): what the HTML is for
    text = " ".join(s for _, _, _, s in valentin.sentences())
    assert "XIVe siècle" in text and "fête laïque au ." not in text
    assert "Amour" in valentin.categories and "Fête de février" in valentin.categories
    first = valentin.links[0]
    assert (first.target, first.anchor, first.section, first.paragraph) == \
        ("14 février", "14 février", 0, 0)
    hidden = [link for link in leonard.links if link.sentence < 0]  # the infobox's links
    assert hidden and all(link.start == link.end == -1 for link in hidden)
    assert leonard.links.index(hidden[0]) == len(leonard.links) - len(hidden)  # after the text


def test_every_drop_is_counted(parsed_sample):
    """Each kind of non-prose element of the sample is dropped and counted, and none of their
    text reaches a sentence."""
    articles, counts, _ = parsed_sample
    for reason in ("references", "infoboxes", "navboxes", "notices", "tables", "figures", "math",
                   "styles", "boilerplate_sections"):
        assert counts[f"html_dropped_{reason}"] > 0, (reason, counts)
    # count the outermost elements of each kind in the HTML: the counts agree
    expected = Counter()
    boilerplate = 0
    names = ("Notes et références", "Bibliographie", "Voir aussi", "Articles connexes",
             "Liens externes", "Références", "Notes", "Annexes")

    def in_boilerplate_section(section) -> bool:
        heading = next((c for c in section.iter() if c.tag in ("h2", "h3", "h4")), None)
        return heading is not None and heading.text().strip() in names

    for page in EnterpriseDump(str(sample())).pages():
        tree = LexborHTMLParser(page.html)
        for node in tree.body.traverse():
            if node.tag[0] == "-":
                continue
            reason = drop_reason(node.tag, node.attributes)
            if reason is None:
                continue
            parent, inside = node.parent, False
            while parent is not None and parent.tag != "body":
                inside = inside or drop_reason(parent.tag, parent.attributes) is not None \
                    or parent.tag == "section" and in_boilerplate_section(parent)
                parent = parent.parent
            expected[reason] += not inside
        boilerplate += sum(1 for h in tree.css("h2") if h.text().strip() in names)
    dropped = Counter({k[len("html_dropped_"):]: v for k, v in counts.items()
                       if k.startswith("html_dropped_") and k != "html_dropped_boilerplate_sections"})
    # the walk does not enter boilerplate sections: what lies there is dropped, not counted
    for reason, n in dropped.items():
        assert 0 < n <= expected[reason], (reason, n, expected[reason])
    assert sum(dropped.values()) >= 0.9 * sum(expected.values())
    assert counts["html_dropped_boilerplate_sections"] >= boilerplate > 0
    text = " ".join(s for a in articles for _, _, _, s in a.sentences())
    assert "réf. nécessaire" not in text and "Portail de" not in text
    assert ".mw-parser-output" not in text and "Modifier" not in text


def test_drop_reasons_follow_parsoid_markers():
    cases = {
        ("sup", (("class", "mw-ref reference"), ("typeof", "mw:Extension/ref"))): "references",
        ("ol", (("class", "mw-references references"),)): "references",
        ("div", (("class", "mw-references-wrap"),)): "references",
        ("table", (("class", "infobox_v2 noarchive"),)): "infoboxes",
        ("div", (("class", "infobox_v3"),)): "infoboxes",
        ("div", (("class", "navbox-container"),)): "navboxes",
        ("div", (("class", "NavFrame"),)): "navboxes",
        ("table", (("class", "wikitable"),)): "tables",
        ("figure", (("typeof", "mw:File/Thumb"),)): "figures",
        ("span", (("typeof", "mw:File"),)): "figures",
        ("span", (("class", "mwe-math-element"), ("typeof", "mw:Extension/math"))): "math",
        ("span", (("style", "display: none"),)): "hidden",
        ("span", (("class", "mw-editsection"),)): "edit_sections",
        ("div", (("class", "hatnote navigation-not-searchable"),)): "notices",
        ("style", (("typeof", "mw:Extension/templatestyles"),)): "styles",
        ("a", (("rel", "mw:ExtLink"), ("class", "external free"))): "bare_urls",
        ("a", (("rel", "mw:ExtLink"), ("href", "//x/w/index.php?title=X&action=edit"))): "edit_sections",
        ("span", (("typeof", "mw:Extension/score"),)): "extensions",
        ("span", (("typeof", "mw:Error"),)): "errors",
        ("a", (("rel", "mw:WikiLink"), ("class", "mw-redirect"))): None,
        ("span", (("typeof", "mw:Transclusion"), ("class", "nowrap"))): None,
        ("table", (("class", "toccolours"),)): "tables",  # not a table of contents
        ("div", (("typeof", "mw:Extension/poem"),)): None,
    }
    for (tag, attrs), reason in cases.items():
        assert drop_reason(tag, dict(attrs)) == reason, (tag, attrs)


def test_lists_follow_the_wikitext_rule():
    """Each list item is a paragraph of its own, nested items after their parent; a <p> is a
    paragraph; inline text in a <div> is one too."""
    titles = TitleParser(site_of({"in_language": {"identifier": "en"}}))
    cleaner = ParsoidCleaner(titles, SentenceSplitter.for_language("en", method="sentencex"))
    body = ('<section data-mw-section-id="0"><p>Intro text here.</p>'
            '<ul><li>First item<ul><li>Nested item</li></ul></li><li>Second '
            + wikilink("Foo bar", "item") + '</li></ul>'
            '<dl><dt>Term</dt><dd>Definition</dd></dl><div>Loose text.</div>'
            '<p>Line one<br>line two.</p></section>')
    article = cleaner.article(HtmlPage(id=1, ns=0, title="T", html=page_html(body)))
    assert article.sections[0].paragraphs == [
        ["Intro text here."], ["First item"], ["Nested item"], ["Second item"], ["Term"],
        ["Definition"], ["Loose text."], ["Line one line two."]]
    link = article.links[0]
    assert (link.target, link.anchor, link.paragraph, link.start) == ("Foo bar", "item", 3, 7)


def test_the_rest_of_a_dropped_transclusion_and_language_marks_go():
    """Parsoid's elements of one template share its `about`: when one is dropped (a climate
    table), the others go too (its "Source : ..." line), as the wikitext path drops the whole
    template; frwiki's "(en)" after a link to another wiki is not text."""
    titles = TitleParser(site_of({"in_language": {"identifier": "fr"}}))
    cleaner = ParsoidCleaner(titles, SentenceSplitter.for_language("fr", method="sentencex"))
    body = ('<section data-mw-section-id="0"><p>Le climat est doux.</p>'
            '<table about="#mwt7" typeof="mw:Transclusion"><tr><td>12</td></tr></table>'
            '<div about="#mwt7">Source : Météo-France.</div>'
            '<p>La rue ' + wikilink("Rue Whitefriar", "Whitefriar")
            + ' <a rel="mw:WikiLink/Interwiki" class="extiw" href="https://en.wikipedia.org/wiki/X">'
            '<span class="indicateur-langue">(en)</span></a> est longue.</p>'
            # a dropped style of a template's output is not the template: its text stays
            '<p>Le gâteau fait <style about="#mwt9" typeof="mw:Extension/templatestyles '
            'mw:Transclusion">.f{}</style><span about="#mwt9" class="frac">1⁄2</span> du poids.</p>'
            '</section>')
    article = cleaner.article(HtmlPage(id=1, ns=0, title="T", html=page_html(body)))
    assert article.sections[0].paragraphs == [["Le climat est doux."],
                                              ["La rue Whitefriar est longue."],
                                              ["Le gâteau fait 1⁄2 du poids."]]


# ---- the command --------------------------------------------------------------------------------

def test_wikipairs_parse_on_the_sample(tmp_path):
    out = tmp_path / "out"
    result = run_cli("parse", "-i", sample(), "-o", out)
    assert result.returncode == 0, result.stderr
    assert "sentences: sentencex:fr" in result.stdout  # said as for an XML dump of frwiki
    rows = read_articles(out)
    assert len(rows) == 25 and {r["lang"] for r in rows} == {"fr"}
    stats = json.loads((out / "parse_stats.json").read_text())
    assert stats["articles"] == 25 and stats["pages"] == 26 and stats["sentences"] > 2900
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["inputs"][0]["path"].endswith("ENTERPRISE-HTML-sample.json.tar.gz")
    verify = run_cli("verify", out)
    assert verify.returncode == 0, verify.stderr


def test_wikipairs_parse_reports_a_broken_html_dump_in_one_line(tmp_path):
    path = write_dump(tmp_path / "x.json.tar.gz", {"a.ndjson": [{"name": "No body"}]})
    result = run_cli("parse", "-i", path, "-o", tmp_path / "out", "-q")
    assert_one_line_error(result, "article_body.html")


# ---- wikipairs build -------------------------------------------------------------------------

def linked_records() -> dict[str, list[dict]]:
    """Four pages that link to each other (one link through a listed redirect), in two members."""
    def prose(title: str, others: list[tuple[str, str]]) -> str:
        sentences = [f"{title} is a place described in this article with several words."]
        sentences += [f"It is near {wikilink(target, anchor)} and many other places around."
                      for target, anchor in others]
        sentences += ["The climate there is mild and the people are friendly to visitors.",
                      "Many travellers come each year to see the old town and its market."]
        return (f'<section data-mw-section-id="0"><p>{" ".join(sentences)}</p></section>'
                f'<section data-mw-section-id="1"><h2>History</h2><p>{" ".join(sentences[1:])} '
                f'The town grew slowly during the middle ages and after.</p></section>')
    alpha = record("Alpha", 1, prose("Alpha", [("Beta", "Beta"), ("Old gamma", "the old town")]),
                   lang="en")
    beta = record("Beta", 2, prose("Beta", [("Alpha", "Alpha"), ("Delta", "Delta")]), lang="en")
    gamma = record("Gamma", 3, prose("Gamma", [("Alpha", "its neighbour")]), lang="en",
                   redirects=[{"name": "Old gamma"}])
    delta = record("Delta", 4, prose("Delta", [("Beta", "Beta")]), lang="en")
    return {"enwiki_namespace_0_0.ndjson": [alpha, beta], "enwiki_namespace_0_1.ndjson": [gamma, delta]}


def test_wikipairs_build_on_an_html_dump(tmp_path):
    dump = write_dump(tmp_path / "enwiki-NS0-20240101-ENTERPRISE-HTML.json.tar.gz", linked_records())
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}"
        result = run_cli("build", "--task", "all", "-i", dump, "-o", out, "--workers", workers, "-q")
        assert result.returncode == 0, result.stderr
        outputs.append(out)
    shards = sorted(p.relative_to(outputs[0]) for p in outputs[0].rglob("part-*"))
    assert shards and all((outputs[0] / s).read_bytes() == (outputs[1] / s).read_bytes()
                          for s in shards)  # the same pairs whatever the worker count
    wlp = [row for path in sorted((outputs[0] / "parquet" / "wlp").glob("*.parquet"))
           for row in pq.read_table(path).to_pylist()]
    pairs = {(row["doc_title"], row["query_title"]) for row in wlp}
    assert ("Alpha", "Gamma") in pairs  # through Gamma's redirects list ("Old gamma")
    assert {("Alpha", "Beta"), ("Beta", "Alpha"), ("Beta", "Delta"), ("Delta", "Beta"),
            ("Gamma", "Alpha")} <= pairs
    for row in wlp:
        assert not row["link_in_doc"] or row["link_anchor"] in row["doc_text"], row
    assert any(row["link_in_doc"] and row["link_anchor"] == "the old town" for row in wlp)
    ict = [row for path in sorted((outputs[0] / "parquet" / "ict").glob("*.parquet"))
           for row in pq.read_table(path).to_pylist()]
    assert ict and {row["lang"] for row in ict} == {"en"}
    stats = json.loads((outputs[0] / "stats.json").read_text())
    assert "wlp" in json.dumps(stats)
    verify = run_cli("verify", outputs[0])
    assert verify.returncode == 0, verify.stderr


def test_dataflow_dry_run_on_an_html_dump(tmp_path):
    """The Dataflow job of an Enterprise HTML dump builds offline like the XML one's (the same
    graph: a file without an index is one whole-file split, prepared on a worker)."""
    result = run_cli("build", "--runner", "DataflowRunner", "--dry-run", "--project",
                     "test-project", "--region", "us-central1", "--temp_location",
                     "gs://test-bucket/tmp", "-o", "gs://test-bucket/out", "-i",
                     "gs://test-bucket/dumps/frwiki-NS0-20231123-ENTERPRISE-HTML.json.tar.gz",
                     "--sentence-splitter", "sentencex", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "dry run: DataflowRunner job built (1 input split" in result.stdout, result.stdout
    assert "sentencex:fr" in result.stdout + result.stderr, result.stdout
    assert list(tmp_path.iterdir()) == [], "a dry run writes nothing locally"


def test_language_variants_show_one_variant():
    """zhwiki and other wikis with variants: Parsoid leaves -{...}- empty, its text in JSON."""
    titles = TitleParser(site_of({"in_language": {"identifier": "zh"}}))
    cleaner = ParsoidCleaner(titles, SentenceSplitter.for_language("zh", method="sentencex"))
    two_way = json.dumps({"twoway": [{"l": "zh-tw", "t": "電腦"}, {"l": "zh-cn", "t": "计算机"}]})
    rule = json.dumps({"add": True, "twoway": [{"l": "zh-cn", "t": "x"}]})
    raw = json.dumps({"disabled": {"t": "<i>C&amp;C</i>"}})
    body = ("<section data-mw-section-id=\"0\"><p>这是一台"
            f"<span typeof=\"mw:LanguageVariant\" data-mw-variant='{two_way}'></span>。"
            f"<meta typeof=\"mw:LanguageVariant\" data-mw-variant='{rule}'/>"
            f"<span typeof=\"mw:LanguageVariant\" data-mw-variant='{rule}'></span>"
            f"名称是<span typeof=\"mw:LanguageVariant\" data-mw-variant='{raw}'></span>。</p></section>")
    article = cleaner.article(HtmlPage(id=1, ns=0, title="T", html=page_html(body)))
    assert article.sections[0].paragraphs == [["这是一台计算机。", "名称是C&C。"]]


def test_splits_of_an_html_dump_are_byte_ranges_of_a_plain_copy(tmp_path):
    path = write_dump(tmp_path / "multi.json.tar.gz",
                      {f"m{k}.ndjson": [record(f"Page {k} {i}", 10 * k + i, lead("x."),
                                               redirects=[{"name": f"Alias {k} {i}"}])
                                        for i in range(7)] for k in range(3)})
    dump = EnterpriseDump(str(path))
    planned = plan_splits([str(path)], parts_per_file=3)
    assert [(s.part, s.parts, s.whole_file) for s in planned] == [(0, 3, True), (1, 3, True),
                                                                  (2, 3, True)]
    splits, bloom, pages = prepare_file(str(path), 3, str(tmp_path / "work"), dump.titles, 1000)
    assert pages == 21 and len(splits) == 3 and all(s.plain.endswith(".ndjson") for s in splits)
    assert "Page 2 6" in bloom and "Alias 0 3" in bloom
    counts = Counter()
    read = [p.id for s in splits for p in read_split(s, counts)]
    assert read == [p.id for p in dump.pages()] and counts["pages_read"] == 21
    assert [len(list(read_split(s))) for s in splits] == [7, 7, 7]
    # the planned splits, reading the file itself by parts, give the same pages
    assert sorted(p.id for s in planned for p in read_split(s)) == sorted(read)
    cut = tmp_path / "cut.json.tar.gz"
    cut.write_bytes(path.read_bytes()[:-40])
    assert prepare_file(str(cut), 3, str(tmp_path / "work2"), dump.titles, 1000) == (None, None, 0)
    assert not list((tmp_path / "work2").iterdir())  # nothing left behind


def test_a_dropped_mark_after_a_space_leaves_no_space_before_punctuation():
    """frwiki's {{lien}} writes a no-break space, then the "(en)" mark, dropped; a reference
    after a space too: the punctuation that follows keeps to the word ("Kurso de Esperanto, a
    permis"), as the wikitext path's note marks do (wikitext.without_holes)."""
    titles = TitleParser(site_of({"in_language": {"identifier": "fr"}}))
    cleaner = ParsoidCleaner(titles, SentenceSplitter.for_language("fr", method="sentencex"))
    body = ('<section data-mw-section-id="0"><p>Les méthodes <i>' + wikilink("Kurso", "Kurso")
            + '<span about="#mwt1">\u00a0</span><a rel="mw:WikiLink/Interwiki" class="extiw" '
            'href="https://eo.wikipedia.org/wiki/K"><span class="indicateur-langue">(eo)</span>'
            '</a></i>, a permis de toucher <sup class="mw-ref reference" typeof="mw:Extension/ref">'
            '<a href="#c">[1]</a></sup>. Il vit à ' + wikilink("Paris", "Paris")
            + ' <sup class="mw-ref reference" typeof="mw:Extension/ref"><a href="#c">[2]</a></sup> '
            'depuis.</p></section>')
    article = cleaner.article(HtmlPage(id=1, ns=0, title="T", html=page_html(body)))
    assert article.sections[0].paragraphs == [["Les méthodes Kurso, a permis de toucher.",
                                               "Il vit à Paris depuis."]]
    for link in article.links:
        sentence = article.sections[0].paragraphs[0][link.sentence]
        assert sentence[link.start:link.end] == link.anchor
