"""Templates kept as text (wikipairs.text.templates) and dropped ones, on the sample and inline."""
from __future__ import annotations

from collections import Counter
from importlib.resources import files

import pytest

from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.records import Page, SiteInfo
from wikipairs.text.sentences import SentenceSplitter
from wikipairs.text.templates import RENDERERS, renderer_for, template_key
from wikipairs.text.titles import TitleParser
from wikipairs.text.wikitext import Cleaner

SAMPLE = str(files("wikipairs") / "data" / "sample.xml.bz2")


def texts(article) -> list[str]:
    return [sentence for _, _, _, sentence in article.sentences()]


def section_texts(article, heading) -> list[str]:
    sections = [s for s in article.sections if s.heading == heading]
    assert len(sections) == 1, f"{article.title}: sections named {heading!r}: {len(sections)}"
    return [sentence for paragraph in sections[0].paragraphs for sentence in paragraph]


def joined(article) -> str:
    return "\n".join(texts(article))


@pytest.fixture(scope="module")
def sample():
    counts = Counter()
    articles = {a.title: a for a in iter_articles(
        ParseConfig(inputs=[SAMPLE], output=""), counts)}
    return articles


@pytest.fixture(scope="module")
def sample_with_tables():
    return {a.title: a for a in iter_articles(
        ParseConfig(inputs=[SAMPLE], output="", keep_lists=True, keep_tables=True))}


@pytest.fixture(scope="module")
def cleaner():
    return Cleaner(TitleParser(SiteInfo()), splitter=None)


def clean(cleaner, wikitext: str) -> str:
    """The plain text of one paragraph of wikitext."""
    paragraphs = cleaner.plain_paragraphs(Page(id=1, ns=0, title="Test", text=wikitext))
    return "\n".join(paragraphs)


# ---- kept templates on the sample ---------------------------------------------------------

@pytest.mark.parametrize("article, template, expected", [
    ("Vell Navigation", "{{convert|12|km|mi}}", "The Vell Navigation is a canal of 12 km that"),
    ("Vell dialect", "{{lang|de|Brücke}}", "related to English bridge and German Brücke."),
    ("Vell Railway", "{{nowrap|12 May 1904}}", "The line opened on 12 May 1904 and closed"),
    ("River Vell", "{{IPA|/vɛl/}}", "The River Vell (/vɛl/) is a river"),
    ("Vell dialect", "{{IPA|/vɛl/}}", "with a short vowel, /vɛl/, never"),
    ("Vell punt", "{{circa|1850}}", "The design was standardised c. 1850 by boatbuilders"),
    ("Anna Keller", "{{birth date|1901|5|12}}", "Anna Keller (born 12 May 1901; died 1987)"),
    ("Ardmere", "{{as of|2020}}", "It had a population of 18,420 As of 2020."),
    ("Vell Valley University", "{{as of|2020}}", "students As of 2020."),
    ("Vell Railway", "{{abbr|VR|Vell Railway}}", "The Vell Railway (VR) was a standard-gauge"),
])
def test_kept_templates_in_sample(sample, article, template, expected):
    text = joined(sample[article])
    assert expected in text, f"{article}: {template} should give {expected!r}; text:\n{text}"


def test_sortname_in_table_with_keep_tables(sample_with_tables):
    """`| Restored by {{sortname|Anna|Keller}} in 1934` is the last cell of a table row."""
    article = sample_with_tables["List of bridges over the Vell"]
    rows = [s for s in texts(article) if s.startswith("Old Bridge ;")]
    assert len(rows) == 1, texts(article)
    assert rows[0].endswith("Restored by Anna Keller in 1934"), (
        "wikitext.Cleaner._render_table splits a cell's attributes at the first '|', which here "
        f"is inside {{{{sortname|Anna|Keller}}}}: got {rows[0]!r}")


def test_sortname_links_to_the_person(cleaner):
    assert clean(cleaner, "Restored by {{sortname|Anna|Keller}} in 1934.") == \
        "Restored by Anna Keller in 1934."
    assert renderer_for("sortname")({"1": "Anna", "2": "Keller"}) == "[[Anna Keller|Anna Keller]]"
    assert renderer_for("sortname")({"1": "Anna", "2": "Keller", "nolink": "1"}) == "Anna Keller"
    assert renderer_for("sortname")({"1": "Anna", "2": "Keller", "3": "Anna Keller (engineer)"}) \
        == "[[Anna Keller (engineer)|Anna Keller]]"
    assert renderer_for("sortname")({"1": "Anna", "2": "Keller", "dab": "engineer"}) \
        == "[[Anna Keller (engineer)|Anna Keller]]"


# ---- dropped templates leave no text -----------------------------------------------------

def test_citation_needed_leaves_nothing(sample):
    ecology = section_texts(sample["River Vell"], "Ecology")
    assert "Water quality improved sharply after 1990, when the last tannery at Kessingham " \
           "closed." in ecology
    for article in sample.values():
        text = joined(article).lower()
        assert "citation needed" not in text and "may 2020" not in text, article.title


@pytest.mark.parametrize("article, heading, absent", [
    ("River Vell", "History", "Great Flood of 1888"),      # {{main|Great Flood of 1888}}
    ("Brannock", "Cuisine", "Brannock pie"),               # {{main|Brannock pie}}
    ("Vell Railway", "Legacy", "Vell Valley Museum"),      # {{see also|Vell Valley Museum}}
])
def test_hatnotes_leave_nothing(sample, article, heading, absent):
    sentences = section_texts(sample[article], heading)
    assert sentences, f"{article}/{heading} is empty"
    assert not [s for s in sentences if absent in s], sentences
    assert not [s for s in sentences if s.lower().startswith(("main article", "see also"))]


@pytest.mark.parametrize("article, absent", [
    ("Ardmere", "Per pontem"),
    ("Ardmere", "By the bridge"),
    ("Ardmere", "settlement_type"),
    ("Ardmere", "Market town in the Vell Valley"),  # {{Short description}}
    ("Anna Keller", "Civil engineer"),
    ("Anna Keller", "birth_place"),
    ("River Vell", "112 km"),                          # convert inside the infobox
    ("River Vell", "Alder Beck,"),
    ("River Vell", "Reflist"),
    ("Greywater Mill", "stub"),
])
def test_infobox_and_other_templates_leave_nothing(sample, article, absent):
    text = joined(sample[article])
    assert absent not in text, f"{article}: {absent!r} in\n{text}"


def test_infobox_links_are_not_text_links(sample):
    ardmere = sample["Ardmere"]
    # | river = [[River Vell]] in the infobox; the text links to it once, through [[Vell River|...]]
    in_text = [link for link in ardmere.links if link.section >= 0]
    assert [link.raw_target for link in in_text if link.target == "River Vell"] == ["Vell River"]
    # the infobox link is kept for the link graph, without a position in the text
    outside = [link for link in ardmere.links if link.section == -1]
    assert [link.raw_target for link in outside if link.target == "River Vell"] == ["River Vell"]


def test_links_of_footnotes_and_boilerplate_citations_are_not_the_pages():
    """As on the HTML path, an infobox's links are the page's; a footnote's ({{efn}}) and a
    citation's in a boilerplate section (the publisher of a {{cite book}} under "Sources": 221
    of the gensim sample's 3,796 hidden targets, mostly university presses) are not."""
    from conftest import page_article
    text = ("{{Infobox river|mouth=[[North Sea]]}}\nThe '''Vell''' is a river.{{efn|See "
            "[[John Smith]].}} It is long.\n\n== Sources ==\n* {{cite book|title=Rivers|"
            "publisher=[[Oxford University Press]]}}\n")
    hidden = [link.target for link in page_article("en", text).links if link.section == -1]
    assert hidden == ["North Sea"]


# ---- renderers, directly ----------------------------------------------------------------

def render(name: str, *positional: str, **named: str) -> str:
    args = {str(i + 1): v for i, v in enumerate(positional)}
    args.update(named)
    renderer = renderer_for(name)
    assert renderer is not None, f"{name} is not a kept template"
    return renderer(args)


@pytest.mark.parametrize("name, positional, named, expected", [
    ("convert", ("12", "km", "mi"), {}, "12 km"),
    ("flag", ("France",), {}, "[[France|France]]"),  # a link of the page, as MediaWiki's
    ("ill", ("Zeta Institute", "de", "Zeta-Institut"), {"lt": "Zeta"}, "[[Zeta Institute|Zeta]]"),
    ("flagu", ("Spain",), {}, "Spain"),  # u: unlinked
    ("convert", ("12", "km"), {"abbr": "on"}, "12 km"),
    ("Convert", ("2", "to", "5", "km"), {}, "2 to 5 km"),
    ("convert", ("2", "and", "5", "km", "mi"), {}, "2 and 5 km"),
    ("convert", ("2", "-", "5", "km"), {}, "2–5 km"),
    ("convert", ("2", "–", "5", "km"), {}, "2–5 km"),
    ("convert", ("306", "km2", "sqmi"), {}, "306 km²"),  # a code not written as shown
    ("convert", ("20", "to", "25", "C"), {}, "20 to 25 °C"),
    ("convert", ("150", "e6km"), {}, "150 million km"),
    ("convert", ("0.4", "C-change"), {}, "0.4 °C"),
    ("val", ("9.8",), {"u": "m/s2"}, "9.8 m/s²"),
    ("val", ("6.241",), {"e": "18", "u": "C"}, "6.241×10¹⁸ C"),  # coulombs: a symbol, no code
    ("cvt", ("3", "mi"), {}, "3 mi"),
    ("lang", ("de", "Brücke"), {}, "Brücke"),
    ("langx", ("de", "Brücke"), {}, "Brücke"),
    ("lang-fr", ("Pont Neuf",), {}, "Pont Neuf"),
    ("Lang-fr", ("Pont Neuf",), {"italic": "no"}, "Pont Neuf"),
    ("lang-sr-Latn", ("Most",), {}, "Most"),
    ("transl", ("ru", "Moskva"), {}, "Moskva"),
    ("nihongo", ("Tokyo", "東京", "Tōkyō"), {}, "Tokyo (東京, Tōkyō)"),
    ("nihongo", ("", "東京", "Tōkyō"), {}, "東京, Tōkyō"),
    ("nihongo", ("Tokyo", "東京"), {}, "Tokyo (東京)"),
    ("IPAc-en", ("ˈ", "v", "ɛ", "l"), {}, "/ˈvɛl/"),
    ("IPAc-en", ("lang", "ˈ", "v", "ɛ", "l"), {}, "/ˈvɛl/"),
    ("IPAc-en", ("ˈ", "v", "ɛ", "l", ",", "_", "ˈ", "v", "iː", "l"), {}, "/ˈvɛl, ˈviːl/"),
    ("IPA", ("/vɛl/",), {}, "/vɛl/"),
    ("IPA", ("fr", "pɔ̃ nœf"), {}, "pɔ̃ nœf"),
    ("IPA-fr", ("pɔ̃ nœf", "lang"), {}, "pɔ̃ nœf"),
    ("IPA-de", ("ˈbʁʏkə",), {}, "ˈbʁʏkə"),
    ("respell", ("KESS", "ing", "əm"), {}, "KESS-ing-əm"),
    ("birth date", ("1901", "5", "12"), {}, "12 May 1901"),
    ("birth date", ("1901", "5", "12"), {"mf": "yes"}, "May 12, 1901"),
    ("Birth date", ("1901", "5", "12"), {"mf": "y"}, "May 12, 1901"),
    ("birth date", ("1901", "05", "02"), {"df": "yes"}, "2 May 1901"),
    ("death date and age", ("1987", "11", "3", "1901", "5", "12"), {}, "3 November 1987"),
    ("start date", ("1904", "5"), {}, "May 1904"),
    ("end date", ("1968",), {}, "1968"),
    ("as of", ("2020",), {}, "As of 2020"),
    ("as of", ("2020", "5"), {"lc": "y"}, "as of May 2020"),
    ("as of", ("2020", "5", "12"), {}, "As of 12 May 2020"),
    ("circa", ("1850",), {}, "c. 1850"),
    ("c.", ("1150",), {}, "c. 1150"),
    ("frac", ("1", "2"), {}, "1\u20442"),  # the fraction slash
    ("frac", ("2", "1", "2"), {}, "2 1\u20442"),
    ("frac", ("4",), {}, "1\u20444"),
    ("abbr", ("VR", "Vell Railway"), {}, "VR"),
    ("abbrlink", ("VR", "Vell Railway"), {}, "[[Vell Railway|VR]]"),
    ("nowrap", ("12 May 1904",), {}, "12 May 1904"),
    ("val", ("1.2",), {"u": "m"}, "1.2 m"),
    # a number's exponent and uncertainty are the number's: never "the mass is 5.98 kg"
    ("val", ("6.241",), {"e": "18"}, "6.241×10¹⁸"),
    ("val", ("1.0586",), {"e": "-10", "u": "m"}, "1.0586×10⁻¹⁰ m"),
    ("val", (), {"e": "10"}, "10¹⁰"),
    ("val", ("1.00794", "(7)"), {}, "1.00794(7)"),
    ("val", ("1.00794", "0.00007"), {}, "1.00794±0.00007"),
    ("val", ("1.2", "+0.1", "-0.2"), {"ul": "MeV"}, "1.2+0.1−0.2 MeV"),
    ("e", ("24",), {}, "×10²⁴"),
    ("e", ("&minus;7",), {}, "×10⁻⁷"),
    ("e", ("x",), {}, "×10^x"),
    ("e", ("–7",), {}, "×10⁻⁷"),
    ("US$", ("5",), {}, "US$5"),
    ("ndash", (), {}, "–"),
    ("snd", (), {}, " – "),
    ("quote", ("Per pontem",), {}, "\n\n\x06Per pontem\n\n\x07"),  # a block, marked
    ("quote", (), {"text": "Per pontem"}, "\n\n\x06Per pontem\n\n\x07"),
])
def test_renderers(name, positional, named, expected):
    assert render(name, *positional, **named) == expected


@pytest.mark.parametrize("name", [
    "citation needed", "Citation needed", "main", "see also", "Infobox river",
    "Infobox settlement", "Reflist", "cite web", "Short description", "DEFAULTSORT:Keller, Anna",
    "VellValley-stub", "dab", "disambiguation", "Navbox", "Commons category", "lang-", "IPA-",
])
def test_dropped_templates_have_no_renderer(name):
    assert renderer_for(name) is None, name


def test_template_key():
    assert template_key("Template:Lang_de ") == "lang de"
    assert template_key("  Birth_date  and\tage ") == "birth date and age"
    assert template_key("template: Convert") == "convert"
    assert renderer_for("Template:Convert") is RENDERERS["convert"]
    assert renderer_for("NOWRAP") is RENDERERS["nowrap"]


# ---- through the cleaner: nesting, links inside kept templates --------------------------

@pytest.mark.parametrize("wikitext, expected", [
    ("A canal of {{convert|2|to|5|km}} long.", "A canal of 2 to 5 km long."),
    ("The {{nowrap|{{convert|12|km|mi}}}} run.", "The 12 km run."),
    ("Called {{lang-fr|Pont Neuf}} in French.", "Called Pont Neuf in French."),
    ("Born {{birth date|1901|5|12|mf=yes}} there.", "Born May 12, 1901 there."),
    ("Said {{IPAc-en|ˈ|v|ɛ|l}} here.", "Said /ˈvɛl/ here."),
    ("{{Citation needed|date=May 2020}}Text{{main|Foo}}.", "Text."),
    ("{{Template:Circa|1850}} ok", "c. 1850 ok"),
    ("{{Infobox river|name=X|length={{convert|1|km}}}}Rest.", "Rest."),
    ("See {{nowrap|[[River Vell]] bridge}} now.", "See River Vell bridge now."),
    ("Joined by {{abbrlink|VR|Vell Railway}} lines.", "Joined by VR lines."),
])
def test_cleaner_renders_templates(cleaner, wikitext, expected):
    assert clean(cleaner, wikitext) == expected


# ---- one Cleaner, many pages: it keeps no page's state ----------------------------------

# Pages with links that only dropped templates and tables hold (hidden links, see
# Cleaner._collect_hidden_links), a kept template and an unclosed one (counted).
PAGES_WITH_HIDDEN_LINKS = [
    Page(id=1, ns=0, title="Vell", text=(
        "{{Infobox river|mouth=[[Severn]]|basin=[[Wales|Welsh]] hills}}The Vell is a [[river]] "
        "of {{convert|12|km|mi}}. It runs through [[Wales]].\n\n{|\n| [[Cardiff]] || 12 km\n|}\n"
        "It ends near [[Bristol]].")),
    Page(id=2, ns=0, title="Severn", text=(
        "{{Infobox river|source=[[Plynlimon]]}}The Severn is long. {{Navbox|[[Gloucester]] "
        "[[Worcester]]}}It flows past [[Shrewsbury]].\n\n{{Unclosed|[[Tewkesbury]]")),
]


def _cleaned(cleaner: Cleaner, page: Page):
    counts = Counter()
    return cleaner.article(page, counts), counts


@pytest.fixture(scope="module")
def fresh_cleaner_results():
    """title -> (article, counts) of each page, cleaned by a Cleaner of its own."""
    splitter = SentenceSplitter.for_language("en", method="sentencex")
    results = {p.title: _cleaned(Cleaner(TitleParser(SiteInfo()), splitter), p)
               for p in PAGES_WITH_HIDDEN_LINKS}
    for article, _ in results.values():  # each page has hidden links, the state at stake
        assert article.links[-1].section == -1, article.links
    return results


def test_one_cleaner_cleans_pages_in_any_order_as_fresh_cleaners_do(fresh_cleaner_results):
    shared = Cleaner(TitleParser(SiteInfo()), SentenceSplitter.for_language("en", method="sentencex"))
    first, second = PAGES_WITH_HIDDEN_LINKS
    for page in (first, second, first, second, second, first):
        assert _cleaned(shared, page) == fresh_cleaner_results[page.title], page.title


def test_a_page_cleaned_while_another_is_being_cleaned_keeps_its_own_links(fresh_cleaner_results):
    """Re-entrant: the redirect lookup of the first page, at its first hidden link, cleans the
    second page with the same Cleaner."""
    first, second = PAGES_WITH_HIDDEN_LINKS
    inner = {}

    def resolve(title: str) -> str:
        if not inner:
            inner["started"] = True
            inner["result"] = _cleaned(shared, second)
        return title

    shared = Cleaner(TitleParser(SiteInfo()), SentenceSplitter.for_language("en", method="sentencex"),
                     resolve=resolve)
    assert _cleaned(shared, first) == fresh_cleaner_results[first.title]
    assert inner["result"] == fresh_cleaner_results[second.title]
