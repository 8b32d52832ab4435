"""Which main-namespace pages are not prose articles (wikipairs.text.filters.skip_reason)."""
from __future__ import annotations

import pytest

from wikipairs.text.filters import skip_reason
from wikipairs.records import Page

PROSE = "'''Ardmere''' is a market town on the [[River Vell]]. It had 18,420 people {{as of|2020}}."


def page(title: str, text: str = PROSE) -> Page:
    return Page(id=1, ns=0, title=title, text=text)


# ---- disambiguation --------------------------------------------------------------------------

@pytest.mark.parametrize("title", [
    "Vell (disambiguation)",
    "Mercury (Disambiguation)",
    "Vell (Begriffsklärung)",
    "Vell (homonymie)",
    "Βελ (αποσαφήνιση)",
    "EU (曖昧さ回避)",  # jawiki
    "Москва (значения)",  # ruwiki
    "দেশ (দ্ব্যর্থতা নিরসন)",  # bnwiki
    "Paris (desambiguação)",
    "Lima (消歧义)",
])
def test_disambiguation_by_title(title):
    assert skip_reason(page(title)) == "disambiguation", title


@pytest.mark.parametrize("text", [
    "'''Vell''' may refer to:\n* [[River Vell]]\n\n{{Disambiguation}}",
    "'''Vell''' may refer to:\n* [[River Vell]]\n\n{{disambiguation|geo}}",
    "* [[River Vell]]\n{{dab}}",
    "* [[River Vell]]\n{{DAB}}",
    "* [[River Vell]]\n{{Disambig}}",
    "* [[River Vell]]\n{{ disambiguation }}",
    "* [[River Vell]]\n{{Template:Disambiguation}}",
    "* [[Jonas Vell]]\n* [[Anna Vell]]\n{{hndis|name=Vell}}",
    "* [[Jonas Vell]]\n{{Human name disambiguation}}",
    "* [[Vell, Ohio]]\n{{Geodis}}",
    "* [[Vell, Ohio]]\n{{Place_name_disambiguation}}",
    "'''Vell''' steht für:\n* [[Vell (Fluss)]]\n\n{{Begriffsklärung}}",
    "'''Vell''' peut désigner :\n* [[Vell (rivière)]]\n\n{{Homonymie}}",
    "'''Βελ''' μπορεί να αναφέρεται:\n* [[Βελ (ποταμός)]]\n\n{{Αποσαφήνιση}}",
    "* [[River Vell]]\n{{disambiguation\n|geo}}",
    "'''タイ'''は以下を指す。\n* [[タイ王国]]\n{{aimai}}",  # jawiki's 地理 and タイ
    "'''地理'''\n* [[地理学]]\n{{Aimai}}",
    "'''দেশ'''\n* [[রাষ্ট্র]]\n{{দ্ব্যর্থতা নিরসন}}",
    "'''서울'''\n* [[서울특별시]]\n{{동음이의}}",
    "'''بيروت'''\n* [[بيروت (مدينة)]]\n{{توضيح}}",
    "'''Lima'''\n* [[Lima (Peru)]]\n{{Desambiguação}}",
])
def test_disambiguation_by_template(text):
    assert skip_reason(page("Vell", text)) == "disambiguation", text


@pytest.mark.parametrize("categories", [
    ["Disambiguation pages"],
    ["All disambiguation pages"],
    ["Place name disambiguation pages"],
    ["Disambiguation"],
    ["Begriffsklärung"],
    ["Homonymie"],
    ["Homonymie de toponyme"],
    ["Wikipedia:Desambiguación"],
    ["Σελίδες αποσαφήνισης"],
])
def test_disambiguation_by_category(categories):
    assert skip_reason(page("Vell", "* [[River Vell]]"), categories) == "disambiguation", categories


def test_topic_categories_about_disambiguation_are_prose():
    """An article about word-sense disambiguation is an article, not a disambiguation page."""
    lesk = page("Lesk algorithm", "The '''Lesk algorithm''' is a classical algorithm for "
                "[[word sense disambiguation]].")
    assert skip_reason(lesk, ["Word-sense disambiguation", "Natural language processing"]) is None
    assert skip_reason(page("Word-sense disambiguation"), ["Word-sense disambiguation"]) is None


def test_templates_named_like_dab_words_are_not_dab():
    assert skip_reason(page("Vell", PROSE + "\n{{Disambiguation needed|date=May 2020}}")) is None
    assert skip_reason(page("Vell", PROSE + "\n{{About|the river|other uses|Vell (disambiguation)}}"
                            )) is None
    assert skip_reason(page("Vell", PROSE + "\n{{Short description|Disambiguation-free river}}"
                            )) is None
    assert skip_reason(page("タイ", PROSE + "{{要曖昧さ回避|date=2020年1月}}")) is None
    assert skip_reason(page("Vell", PROSE), ["曖昧さ回避の必要なリンクのあるページ"]) is None
    for category in ("Chạy định hướng", "مقالات تحتاج توضيح", "Неоднозначные ситуации",
                     "صفحه‌های دارای پیوند به صفحه‌های ابهام‌زدایی"):  # words with other senses
        assert skip_reason(page("Vell", PROSE), [category]) is None, category


# ---- lists -----------------------------------------------------------------------------------

@pytest.mark.parametrize("title", [
    "List of bridges over the Vell",
    "Lists of bridges",
    "list of rivers of England",
    "Index of Vell Valley-related articles",
    "Outline of the Vell Valley",
    "Glossary of bridge terms",
    "Liste der Brücken über die Vell",
    "Liste des ponts",
    "Lista de puentes",
    # other wikis: a prefix or a suffix
    "日本の川の一覧", "中国城市列表", "대한민국의 국보 목록", "قائمة الدول", "רשימת ערים",
    "भारत के राज्यों की सूची", "সার্বভৌম রাষ্ট্রের তালিকা", "Türkiye illeri listesi",
    "Danh sách quốc gia",
    "ミュージシャン一覧 (グループ)", "작가 목록 (영국)",  # the suffix before a title's qualifier
])
def test_list_by_title(title):
    assert skip_reason(page(title)) == "list", title


def test_list_by_category_and_template():
    assert skip_reason(page("Bridges of the Vell"), ["Lists of bridges"]) == "list"
    assert skip_reason(page("Bridges of the Vell", "{{Dynamic list}}\n* [[Old Bridge]]")) == "list"


@pytest.mark.parametrize("title", [
    "Listing (finance)", "Listeria", "Indexer", "Indexed family", "Outlines", "Listed building",
    "一覧表の作り方", "東京", "一覧表 (書籍)",
])
def test_titles_that_only_start_like_lists(title):
    assert skip_reason(page(title)) is None, title


# ---- articles ------------------------------------------------------------------------------

@pytest.mark.parametrize("title, categories", [
    ("Ardmere", ["Towns in the Vell Valley", "Market towns"]),
    ("River Vell", ["Rivers of the Vell Valley"]),
    ("Vell", []),
    ("Vell Valley University", ["Universities"]),
])
def test_normal_article(title, categories):
    assert skip_reason(page(title), categories) is None


def test_disambiguation_wins_over_list():
    assert skip_reason(page("List of Vells (disambiguation)")) == "disambiguation"


# ---- before the parse: skip_reason(page, None) ---------------------------------------------

def test_list_by_title_before_parse_unless_a_category_could_say_disambiguation():
    assert skip_reason(page("List of rivers of the Vell Valley"), None) == "list"
    assert skip_reason(page("Vell (disambiguation)"), None) == "disambiguation"
    assert skip_reason(page("Vell", PROSE + "\n{{dab}}"), None) == "disambiguation"
    assert skip_reason(page("Ardmere"), None) is None  # its categories may still say so
    maybe = page("List of Vells", PROSE + "\n[[Category:Disambiguation pages]]")
    assert skip_reason(maybe, None) is None
    assert skip_reason(maybe, ["Disambiguation pages"]) == "disambiguation"


@pytest.mark.parametrize("dump", ["sample", "enwiki-sample-gensim.xml.bz2", "elwiki-sample.xml.bz2"])
def test_reason_before_the_parse_is_the_reason_after_it(dump):
    """parse_page skips a page unparsed when skip_reason(page, None) names a reason: on every
    main-namespace page of real dumps, that reason is the one the parsed categories give."""
    from collections import Counter
    from pathlib import Path

    from wikipairs.reading import DumpFile
    from wikipairs.text.wikitext import Cleaner

    from conftest import wiki_file

    path = Path(__file__).parents[1] / "wikipairs" / "data" / "sample.xml.bz2" \
        if dump == "sample" else wiki_file(dump)
    source = DumpFile(str(path))
    cleaner = Cleaner(source.titles, splitter=None)
    decided = 0
    for p in source.pages():
        if p.redirect is not None or p.ns != 0:
            continue
        early = skip_reason(p, None)
        if early is not None:
            decided += 1
            categories = cleaner.strip(p.text, Counter())[1]
            assert skip_reason(p, categories) == early, p.title
    assert decided > 0
