"""The bundled sample dump as a whole, against what tools/make_sample.py declares."""
from __future__ import annotations

import bz2
import importlib.util
import re
from collections import Counter
from importlib.resources import files
from pathlib import Path

import pytest

from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.pairs.quality import MARKUP_LEAK

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = str(files("wikipairs") / "data" / "sample.xml.bz2")

DISAMBIGUATION = {"Vell", "Vell (disambiguation)"}
LISTS = {"List of bridges over the Vell"}
BOILERPLATE = {"See also", "References", "External links", "Further reading", "Notes"}


def _load_make_sample():
    spec = importlib.util.spec_from_file_location("make_sample", ROOT / "tools" / "make_sample.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MAKE_SAMPLE = _load_make_sample()
DECLARED = [(title, text, *MAKE_SAMPLE.split_namespace(title),
             MAKE_SAMPLE.redirect_target(text)) for title, text in MAKE_SAMPLE.PAGES]
NS0_PAGES = [(t, text) for t, text, ns, _, target in DECLARED if ns == 0 and target is None]
EXPECTED_ARTICLES = [t for t, _ in NS0_PAGES if t not in DISAMBIGUATION | LISTS]
SOURCE = dict(MAKE_SAMPLE.PAGES)


def parse(**options):
    counts, info = Counter(), {}
    articles = list(iter_articles(ParseConfig(inputs=[SAMPLE], output="", **options), counts, info))
    return articles, counts, info


@pytest.fixture(scope="module")
def parsed():
    return parse()


@pytest.fixture(scope="module")
def articles(parsed):
    return {a.title: a for a in parsed[0]}


def sentences(article) -> list[str]:
    return [s for _, _, _, s in article.sentences()]


def text_of(article) -> str:
    return " ".join(sentences(article))


def section(article, heading):
    found = [s for s in article.sections if s.heading == heading]
    assert len(found) == 1, f"{article.title}: {len(found)} sections named {heading!r}"
    return found[0]


# ---- the file and the counts ---------------------------------------------------------------

def test_sample_is_what_make_sample_writes():
    with open(SAMPLE, "rb") as f:
        data = bz2.decompress(f.read())
    assert data == MAKE_SAMPLE.build_xml().encode("utf-8"), \
        "wikipairs/data/sample.xml.bz2 is stale: run python3 tools/make_sample.py"


def test_declared_page_kinds():
    """make_sample.py declares 48 pages: 32 main-namespace pages, 11 redirects, 5 others."""
    assert len(DECLARED) == 48
    assert len(NS0_PAGES) == 32
    assert sum(1 for *_, target in DECLARED if target is not None) == 11
    assert sum(1 for _, _, ns, _, target in DECLARED if ns != 0) == 5
    assert len(EXPECTED_ARTICLES) == 29


def test_counts(parsed):
    articles, counts, _ = parsed
    assert counts["pages_read"] == 48
    assert counts["articles"] == len(articles) == 29
    assert counts["redirects"] == 11
    assert counts["skipped_namespace"] == 5
    assert counts["skipped_disambiguation"] == 2
    assert counts["skipped_list"] == 1
    assert counts["skipped_empty"] == 0
    assert counts["sentences"] == sum(len(sentences(a)) for a in articles)
    assert counts["links"] == sum(len(a.links) for a in articles)


def test_articles_in_dump_order(parsed):
    assert [a.title for a in parsed[0]] == EXPECTED_ARTICLES


def test_ids_and_language(articles):
    for index, (title, *_rest) in enumerate(DECLARED):
        if title in articles:
            assert articles[title].id == MAKE_SAMPLE.FIRST_PAGE_ID + index * 7, title
            assert articles[title].lang == "en"


def test_skipped_pages_come_back_with_keep_options():
    articles, counts, _ = parse(keep_disambiguation=True, keep_lists=True)
    titles = {a.title for a in articles}
    assert titles == {t for t, _ in NS0_PAGES}
    assert counts["skipped_disambiguation"] == counts["skipped_list"] == 0
    assert counts["articles"] == 32


def test_other_namespaces_on_request():
    articles, counts, _ = parse(namespaces=(0, 1, 4, 6, 10, 14))
    titles = {a.title for a in articles}
    assert {"Talk:River Vell", "Wikipedia:WikiProject Vell Valley",
            "Category:Towns in the Vell Valley"} <= titles
    # the File page is only templates under boilerplate-free headings, the Template page a navbox
    assert not titles & {"File:Vell bridge.jpg", "Template:Vell Valley"}
    assert counts["skipped_empty"] == 2
    assert counts["skipped_namespace"] == 0


# ---- structure ---------------------------------------------------------------------------

def test_every_article_has_a_lead(articles):
    for article in articles.values():
        lead = article.lead
        assert lead is not None and lead.level == 0 and lead.heading == "", article.title
        assert lead.paragraphs and lead.paragraphs[0], f"{article.title}: empty lead"
        lead_text = " ".join(s for paragraph in lead.paragraphs for s in paragraph)
        assert article.title in lead_text, article.title  # the bold title opens every lead


def test_headings_and_levels(articles):
    assert [(s.heading, s.level) for s in articles["River Vell"].sections] == [
        ("", 0), ("Course", 2), ("Tributaries", 3), ("History", 2), ("Ecology", 2)]
    assert [(s.heading, s.level) for s in articles["Ardmere"].sections] == [
        ("", 0), ("History", 2), ("Railway", 3), ("Education", 2), ("Notable people", 2)]


def test_headings_match_the_source(articles):
    """Every heading in the source is a section, except boilerplate ones (and their subsections)."""
    for title, article in articles.items():
        declared = re.findall(r"^(=+)\s*(.+?)\s*\1\s*$", SOURCE[title], re.M)
        expected = [(h, len(eq)) for eq, h in declared if h not in BOILERPLATE]
        assert [(s.heading, s.level) for s in article.sections[1:]] == expected, title


def test_boilerplate_sections_absent(articles):
    for article in articles.values():
        headings = {s.heading for s in article.sections}
        assert not headings & BOILERPLATE, (article.title, headings & BOILERPLATE)
    # and their content with them
    assert "Renfrew, T." not in text_of(articles["Vell Railway"])                 # Further reading
    assert "Official website" not in text_of(articles["Vell Valley University"])  # External links
    assert "Example site" not in text_of(articles["River Vell"])
    assert "The Vell Railway" not in text_of(articles["Ardmere railway station"])  # References
    for article in articles.values():
        assert "List of bridges over the Vell" not in text_of(article), article.title  # See also


def test_greywater_mill_is_a_stub_with_a_lead_only(articles):
    mill = articles["Greywater Mill"]
    assert len(mill.sections) == 1 and mill.sections[0].level == 0
    assert len(mill.sections[0].paragraphs) == 1
    assert text_of(mill) == (
        "Greywater Mill is a former watermill at Brannock, where the Greywater stream meets the "
        "River Vell. It ground corn from c. 1600 until 1921 and was badly damaged in the Great "
        "Flood of 1888. The building is now a private house, and its wheel was restored by "
        "volunteers from the Vell Valley Museum in 1996.")
    assert [link.target for link in mill.links] == [
        "Brannock", "River Vell", "Great Flood of 1888", "Vell Valley Museum"]


def test_list_items_are_paragraphs(articles):
    settlements = section(articles["Vell Valley"], "Settlements")
    assert [p[0] for p in settlements.paragraphs][:2] == [
        "Marrowfield, the highest town on the river",
        "Kessingham, the largest town and seat of the university"]


# ---- categories ------------------------------------------------------------------------------

def test_categories_as_declared(articles):
    for title, article in articles.items():
        found = re.findall(r"^\[\[Category:([^\]]+)\]\]", SOURCE[title], re.M)
        declared = [c.split("|")[0] for c in found]  # sort keys dropped
        assert article.categories == declared, title
    # [[:Category:Towns]] is a link to the category, not a categorization
    assert articles["Vell Valley"].categories == ["Vell Valley", "Regions"]


def test_categories_not_in_text(articles):
    for article in articles.values():
        for category in article.categories:
            if len(category.split()) > 2:  # distinctive names only ("Vell Valley" is also prose)
                assert category not in text_of(article), (article.title, category)


# ---- files, galleries, links -------------------------------------------------------------

def test_image_caption_absent_and_its_link_not_counted(articles):
    lake = articles["Lake Ossary"]
    assert "seen from" not in text_of(lake)
    assert "Lake Ossary from the north" not in text_of(lake)
    forest = [link for link in lake.links if link.target == "Ossary Forest"]
    assert len(forest) == 1, forest  # the one in "Wildlife", not the one in the caption
    assert lake.sections[forest[0].section].heading == "Wildlife"


def test_file_caption_absent_and_its_link_not_counted(articles):
    bridge = articles["Old Bridge"]
    assert "The bridge in 1910" not in text_of(bridge)
    assert "Vell bridge.jpg" not in text_of(bridge)
    assert [link for link in bridge.links if link.anchor == "river"] == []
    assert [link.anchor for link in bridge.links if link.target == "River Vell"] == ["River Vell"]


def test_gallery_absent(articles):
    festival = articles["Vell Valley Lantern Festival"]
    text = text_of(festival)
    assert "Lanterns on the river in 2018" not in text
    assert "The procession crossing" not in text
    assert "Ardmere procession" not in text
    assert len([link for link in festival.links if link.target == "Old Bridge"]) == 1


def test_link_trail(articles):
    river = articles["River Vell"]
    bridges = [link for link in river.links if link.raw_target == "Bridge"]
    assert [(link.target, link.anchor) for link in bridges] == [("Bridge", "bridges")]
    punts = [link for link in river.links if link.target == "Vell punt"]
    assert [link.anchor for link in punts] == ["Vell punts"]


def test_interlanguage_links_produce_nothing(articles):
    river = articles["River Vell"]
    text = text_of(river)
    for absent in ("Fluss", "rivière", "de:", "fr:"):
        assert absent not in text, absent
    assert not [link for link in river.links if "Vell (" in link.target]
    assert sentences(river)[-1] == \
        "Trout from this stretch is the traditional filling of Brannock pie."


def test_interwiki_link_keeps_text_but_is_no_link(articles):
    ford = articles["Harrowgate Ford"]
    assert "A ford is a shallow place where a river can be crossed on foot or by cart." \
        in sentences(ford)
    assert [link for link in ford.links if link.anchor.lower() == "ford"] == []
    assert [link for link in ford.links if "ford" in link.raw_target.lower()
            and link.raw_target != "Harrowgate Ford"] == []


def test_colon_category_link_is_text_not_link(articles):
    valley = articles["Vell Valley"]
    # the category link reads as its title without the namespace prefix, as in running text
    assert "See also Towns for a wider list." in sentences(valley)
    assert not [link for link in valley.links
                if "Category" in link.target or link.anchor == "Towns"]


def test_link_spans_match_anchors(parsed):
    for article in parsed[0]:
        for link in article.links:
            if link.section == -1:  # in an infobox or another dropped template: no span
                assert (link.paragraph, link.sentence, link.start, link.end) == (-1, -1, -1, -1)
                continue
            sentence = article.sections[link.section].paragraphs[link.paragraph][link.sentence]
            assert sentence[link.start:link.end] == link.anchor, (article.title, link, sentence)
            assert link.anchor and link.anchor == link.anchor.strip(), (article.title, link)
            assert link.target and link.raw_target, (article.title, link)


def test_links_in_text_order(parsed):
    for article in parsed[0]:
        keys = [(link.section, link.paragraph, link.sentence, link.start)
                for link in article.links if link.section >= 0]
        assert keys == sorted(keys), article.title


def test_link_counts_per_article(articles):
    """Every [[link]] in article prose of the source (main namespace, outside boilerplate
    sections, infoboxes, refs, captions and galleries) is found once."""
    assert len(articles["Greywater Mill"].links) == 4
    assert len(articles["Kessingham Abbey"].links) == 7
    assert [link.target for link in articles["Vell Valley Museum"].links] == [
        "Kessingham", "Vell Valley", "Anna Keller", "Vell Railway", "Vell punt",
        "Great Flood of 1888", "Brannock", "Kessingham Abbey", "Vell Railway Society"]


# ---- nothing of the markup survives ------------------------------------------------------

def test_no_markup_in_sentences(parsed):
    leaks = []
    for article in parsed[0]:
        for sentence in sentences(article):
            if MARKUP_LEAK.search(sentence):
                leaks.append((article.title, sentence))
    assert leaks == []


@pytest.mark.parametrize("absent", [
    "''", "'''", "<ref", "</ref>", "{{", "}}", "[[", "]]", "<!--", "__NOTOC__", "NOTOC", "<br",
    "&nbsp;", "\u00a0", "example.org", "cite web", "<math>", "x^2", "1:25,000", "Vell's own voice",
    "Survey of the River Vell", "DEFAULTSORT", "thumb", "<gallery>", "http",
])
def test_removed_markup_and_content(parsed, absent):
    hits = [(a.title, s) for a in parsed[0] for s in sentences(a) if absent in s]
    assert hits == [], absent


def test_entities_and_apostrophes(articles):
    river = text_of(articles["River Vell"])
    assert "falling approx. 300 m in its first twenty kilometres." in river  # &nbsp;
    assert "a dish called Brannock pie." in text_of(articles["Vell Valley"])
    assert "The word brig means a bridge" in text_of(articles["Vell dialect"])  # ''brig''
    assert "the Brig." in text_of(articles["Old Bridge"])


# ---- tables ----------------------------------------------------------------------------------

TABLE_TEXT = ("Crossings of the Vell", "Swing bridge", "Stone arch", "Opens for shipping",
              "Closed to heavy vehicles")


def test_table_absent_by_default():
    articles, _, _ = parse(keep_lists=True)
    page = {a.title: a for a in articles}["List of bridges over the Vell"]
    text = text_of(page)
    for cell in TABLE_TEXT:
        assert cell not in text, cell
    assert [s.heading for s in page.sections] == ["", "Former crossings"]
    # the table's link stays in the link graph, but with no position in the text
    table_links = [link for link in page.links if link.target == "Holtby Cross Swing Bridge"]
    assert table_links and all(link.section == -1 for link in table_links)


def test_table_kept_with_keep_tables():
    articles, counts, _ = parse(keep_lists=True, keep_tables=True)
    page = {a.title: a for a in articles}["List of bridges over the Vell"]
    text = text_of(page)
    for cell in TABLE_TEXT:
        assert cell in text, cell
    assert [s.heading for s in page.sections] == ["", "Current crossings", "Former crossings"]
    assert [link.target for link in page.links if link.target == "Holtby Cross Swing Bridge"] \
        == ["Holtby Cross Swing Bridge"]
    assert counts["tables"] >= 1
