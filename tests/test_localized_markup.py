"""Markup in the wiki's own language and script, as independent checks on other Wikipedias found
it (2026-12-05): behaviour switches (__БЕЗ_ОГЛАВЛЕНИЯ__) left in the text, Thai sentences cut at
the period of an abbreviation (พ.ศ., the Buddhist era of most dates), the label of [[Media:]] and
[[:File:]] links lost, "#تحويل [[X]]" redirects of dumps without <redirect> read as articles,
and Chinese and Japanese documents given a space between sentences."""
from __future__ import annotations

import pytest

from conftest import page_article, page_sentences as sentences
from wikipairs.pairs.tasks import PairBuilder, PairConfig
from wikipairs.reading.page_reader import DumpFile
from wikipairs.records import Article, Section
from wikipairs.text.sentences import SentenceSplitter


@pytest.mark.parametrize("lang,text,expected", [
    ("en", "__NOTOC__ A river flows.", ["A river flows."]),
    ("ru", "__БЕЗ_ОГЛАВЛЕНИЯ__ Река течёт к морю.", ["Река течёт к морю."]),
    ("ar", "__لا_فهرس__ يجري النهر إلى البحر.", ["يجري النهر إلى البحر."]),
    ("he", "__ללא_תוכן_עניינים__ הנהר זורם לים.", ["הנהר זורם לים."]),
    ("zh", "__无目录__河流入海。", ["河流入海。"]),
    ("hi", "__अनुक्रम_नहीं__ नदी समुद्र में बहती है।", ["नदी समुद्र में बहती है।"]),
    # a word with a lower-case letter is no switch: Python's __init__ in running text stays
    ("en", "The method __init__ runs first.", ["The method __init__ runs first."]),
])
def test_behaviour_switches_of_any_language_leave_the_text(lang, text, expected):
    assert sentences(lang, text) == expected


THAI = ("ในปี พ.ศ. 2325 พระบาทสมเด็จพระพุทธยอดฟ้าจุฬาโลกมหาราชทรงสถาปนากรุงรัตนโกสินทร์เป็นราชธานี"
        " ห่างจากฝั่งทะเลราว 20 กม. ตามที่ ดร. สมชาย ได้บันทึกไว้ในหนังสือประวัติศาสตร์ของเมืองนี้")


def test_thai_abbreviation_periods_end_no_sentence():
    # sentencex cut after พ.ศ., กม. and ดร.: Thai never ends a sentence with "."
    # (the space between two long stretches of Thai ends a sentence: that rule stays)
    got = sentences("th", THAI)
    assert " ".join(got) == THAI
    assert not [s for s in got if s.endswith(".")], got
    assert got[0].startswith("ในปี พ.ศ. 2325")
    # a Latin sentence inside a Thai page still ends at its period
    assert sentences("th", "Bangkok is big. It is the capital.") == [
        "Bangkok is big.", "It is the capital."]


@pytest.mark.parametrize("lang,text,expected", [
    ("ru", "См. [[Файл:X.jpg|мини|Подпись]] и [[Медиа:Sound.ogg|звук]].", ["См. и звук."]),
    ("en", "See [[:File:Y.png|this picture]] and [[Media:Z.ogg]].", ["See this picture and Z.ogg."]),
    ("en", "[[File:A.jpg|thumb|A caption]] Done.", ["Done."]),  # a picture: caption dropped
    ("en", "In [[:Category:Towns|towns]] only.", ["In towns only."]),
])
def test_links_shown_in_the_text_keep_their_label(lang, text, expected):
    assert sentences(lang, text) == expected


@pytest.mark.parametrize("lang,word,target", [
    ("ar", "تحويل", "النيل"), ("he", "הפניה", "ירושלים"), ("zh", "重定向", "北京"),
    ("hy", "ՎԵՐԱՀՂՈՒՄ", "Երևան"), ("hi", "अनुप्रेषित", "भारत"), ("th", "เปลี่ยนทาง", "กรุงเทพ"),
    ("ja", "転送", "東京"), ("ru", "перенаправление", "Москва"), ("en", "REDIRECT", "Paris"),
    # a wiki's word not listed: a text that is only "#word [[link]]" (categories, templates)
    ("ta", "வழிமாற்று", "சென்னை"), ("ka", "გადამისამართება", "თბილისი"),
    ("ta", "வழிமாற்று", "சென்னை]]\n[[பகுப்பு:நகரங்கள்]]\n{{R from|{{x}}}}__STATICREDIRECT__"),
    # the redirects pass reads what the parse reads: escaped characters, CRLF line ends
    ("ta", "வழிமாற்று", "சென்னை]]{{R|" + "&quot;" * 200 + "}}"),
    ("ta", "வழிமாற்று", "சென்னை]]" + "\r\n" * 300 + "&lt;!-- a note --&gt;"),
])
@pytest.mark.parametrize("redirects_only", [False, True])
def test_redirects_in_text_of_dumps_without_the_redirect_element(tmp_path, lang, word, target,
                                                                 redirects_only):
    # export 0.3 (2006) has no <redirect>: the page text is all there is
    xml = (f'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.3/" version="0.3" '
           f'xml:lang="{lang}"><siteinfo><sitename>W</sitename>'
           f"<base>https://{lang}.wikipedia.org/wiki/Main</base><generator>MediaWiki 1.8</generator>"
           '<case>first-letter</case><namespaces><namespace key="0" /></namespaces></siteinfo>'
           "<page><title>Alias</title><id>2</id><revision><id>3</id>"
           "<timestamp>2006-01-01T00:00:00Z</timestamp><contributor><username>U</username>"
           f"<id>1</id></contributor><text xml:space=\"preserve\">#{word} [[{target}]]</text>"
           "</revision></page></mediawiki>")
    path = tmp_path / "dump.xml"
    path.write_text(xml, encoding="utf-8")
    pages = list(DumpFile(str(path), redirects_only=redirects_only).pages())
    assert [(p.title, p.redirect) for p in pages] == [("Alias", target.split("]]")[0])]


@pytest.mark.parametrize("text", [
    "#Foo [[Bar]] is the first item of a numbered list.", "#[[Bar]]", "#1. [[Foo]] [[Bar]]",
    "#'''[[Foo]]'''",
    "#வழிமாற்று [[சென்னை]] " + "சென்னை ஒரு நகரம். " * 40,  # long: not a redirect's text
])
def test_a_numbered_item_is_no_redirect(text):
    from wikipairs.reading.page_reader import redirect_in_text
    assert redirect_in_text(text) is None
    assert redirect_in_text("#வழிமாற்று [[சென்னை]]", complete=False) is None  # a text's start


ZH = ["北京是中华人民共和国的首都。", "它是全国的政治和文化中心。", "北京有三千多年的建城史。",
      "“城市的中心是故宫。”", "故宫很大。"]  # nothing joins after 。” either


@pytest.mark.parametrize("keep_rate", [0.0, 1.0])
def test_documents_join_cjk_sentences_as_written(keep_rate):
    # One space between two sentences in a document is a character the page never had in
    # Chinese and Japanese ("…首都。 它是…"); after 。 or 」 nothing joins them.
    article = Article(1, "北京", "zh", sections=[Section("", 0, [ZH])])
    config = PairConfig(ict_queries=2, ict_keep_rate=keep_rate, min_query_tokens=2)
    pairs = PairBuilder(config).ict(article)
    assert pairs
    for pair in pairs:
        assert " " not in pair.doc_text, pair.doc_text
        others = [s for s in ZH if s in pair.doc_text]
        assert pair.doc_text == "".join(others)
        assert (pair.query in pair.doc_text) == pair.query_in_doc
    # an opening quote after 。 opens the next sentence; a closing one closes this one
    assert SentenceSplitter.for_language("zh").split("".join(ZH)) == ZH
    # after 。” only a CJK sentence follows with no space ("…之。” It was founded" keeps it)
    from wikipairs.pairs.tasks import joiner
    assert joiner("The motto is “学而时习之。”", "It was founded.") == " "
    assert joiner("他说“好。”", "然后走了。") == ""
    # a Latin sentence keeps its space
    latin = Article(2, "P", "en", sections=[Section("", 0, [["One sentence here now.", "Two more words here."]])])
    (pair,) = PairBuilder(PairConfig(min_query_tokens=2)).ict(latin)
    assert pair.doc_text in ("One sentence here now.", "Two more words here.")
    passage = PairBuilder().passages(latin)[0]
    assert passage.text() == "One sentence here now. Two more words here."
    assert passage.text()[passage.offset(1):] == "Two more words here."


def headings(lang: str, text: str) -> list[str]:
    return [section.heading for section in page_article(lang, text).sections]


@pytest.mark.parametrize("lang,see_also,links", [
    ("pl", "Zobacz też", "Linki zewnętrzne"), ("uk", "Див. також", "Посилання"),
    ("fa", "جستارهای وابسته", "پیوند به بیرون"), ("ko", "같이 보기", "외부 링크"),
    ("ja", "関連項目", "外部リンク"), ("vi", "Xem thêm", "Liên kết ngoài"),
    ("tr", "Ayrıca bakınız", "Dış bağlantılar"), ("ru", "См. также", "Ссылки"),
])
def test_see_also_and_external_links_of_other_wikis_are_no_text(lang, see_also, links):
    text = (f"Lead text here.\n\n== History ==\nBody text.\n\n== {see_also} ==\n* [[Other page]]"
            f"\n\n== {links} ==\n* [http://example.org Official site]\n")
    assert headings(lang, text) == ["", "History"]


@pytest.mark.parametrize("lang,text,expected", [
    # a dropped template leaves no empty brackets behind
    ("en", "'''Alpha''' ({{notarealtemplate|x}}) is a letter.", ["Alpha is a letter."]),
    ("ko", "'''서울특별시'''({{xllang|en|Seoul}})는 수도이다.", ["서울특별시는 수도이다."]),
    ("ko", "'''서울특별시'''({{llang|en|Seoul}})는 수도이다.", ["서울특별시(Seoul)는 수도이다."]),
    ("en", "Beta ({{notarealtemplate|x}}; born 1900) was a poet.", ["Beta (born 1900) was a poet."]),
    # ... nor the separator a dropped template followed ("(서울特別市, )", "（Neumann János，）")
    ("ko", "'''서울특별시'''(서울特別市, {{xllang|en|Seoul}})는 수도이다.", ["서울특별시(서울特別市)는 수도이다."]),
    ("zh", "诺伊曼（{{lang-hu|Neumann János}}，{{bd|1903年|1957年}}）是数学家。",
     ["诺伊曼（Neumann János）是数学家。"]),
    # characters that show nothing are no part of a sentence
    ("en", "Soft&shy;hyphen and zero&#x200B;width text.", ["Softhyphen and zerowidth text."]),
    ("fa", "می\u200cروم به خانه.", ["می\u200cروم به خانه."]),  # ZWNJ stays: part of the word
    ("ar", "ولد في 1900&rlm; في [[القاهرة]]\u200f.", ["ولد في 1900 في القاهرة."]),  # RLM goes
    # {{formatnum:}} with the wiki's separators
    ("tr", "Nüfusu {{formatnum:2750000}} kişidir.", ["Nüfusu 2.750.000 kişidir."]),
    ("pl", "Liczy {{formatnum:1861975}} mieszkańców.", ["Liczy 1 861 975 mieszkańców."]),
    # an interlanguage link goes to the sidebar, piped or not; an interwiki one shows its label
    ("en", "Paris [[fr:Paris|in French]]is big, see [[wikt:big|big]].", ["Paris is big, see big."]),
    # an unpiped link shows its target decoded, as MediaWiki's rawurldecode
    ("en", "Alpha is a [[Caf%C3%A9]] in Paris, [[100% Wolf]] too.",
     ["Alpha is a Café in Paris, 100% Wolf too."]),
    # a namespace name with a space, written with "_": the file and its caption go
    ("vi", "Alpha là một vật. [[Tập_tin:X.jpg|nhỏ|Quang cảnh [[Hà Nội]] năm 1900]] Nó ở Huế.",
     ["Alpha là một vật.", "Nó ở Huế."]),
])
def test_what_the_page_shows(lang, text, expected):
    assert sentences(lang, text) == expected


def test_a_call_written_in_running_text_keeps_its_brackets():
    assert sentences("en", "Operations such as rename() and match()-step are atomic.") == [
        "Operations such as rename() and match()-step are atomic."]


def test_every_boilerplate_title_matches_its_heading():
    """Headings are compared casefolded: "Fußnoten" never matched the table's "fußnoten"."""
    from wikipairs.text.wikitext import BOILERPLATE_SECTIONS, in_boilerplate
    for lang, titles in BOILERPLATE_SECTIONS.items():
        for title in titles:
            for heading in (title, title.capitalize() + " :"):
                assert in_boilerplate(heading, titles), (lang, heading)
    assert in_boilerplate("Fußnoten", BOILERPLATE_SECTIONS["de"])
    # a final sigma casefolds to σ: elwiki's References, Sources, Notes, See also never matched
    for heading in ("Παραπομπές", "Πηγές", "Σημειώσεις", "Δείτε επίσης"):
        assert in_boilerplate(heading, BOILERPLATE_SECTIONS["el"]), heading
    from conftest import page_article
    for lang, title in (("th", "อ้างอิง"), ("ta", "மேற்கோள்கள்"), ("ca", "Vegeu també")):
        article = page_article(lang, f"Lead text is here.\n\n== {title} ==\n* An item.")
        assert [s.heading for s in article.sections] == [""], (lang, title)


@pytest.mark.parametrize("lang, heading, level, dropped", [
    # further reading and bibliographies the survey of the real dumps found kept (de 114
    # sentences of book entries, bn 304, el 232)
    ("de", "Sekundärliteratur", 2, True), ("el", "Προτεινόμενη βιβλιογραφία", 2, True),
    ("el", "Δικτυακοί τόποι", 2, True), ("bn", "আরও পড়ুন", 2, True), ("bn", "গ্রন্থপঞ্জি", 2, True),
    ("ja", "Further readings", 2, True),
    # a qualifier in brackets after a boilerplate title
    ("el", "Βιβλιογραφία (στα αγγλικά)", 2, True), ("de", "Weblinks (englisch)", 3, True),
    ("en", "History (ancient)", 2, False), ("en", "Sources (of the Nile)", 2, False),
    # titles joined by a hyphen or a dash
    ("el", "Βιβλιογραφία-Πηγές", 2, True), ("en", "Notes – References", 2, True),
    ("en", "Anglo-Saxon", 2, False),
    # titles that also name a topic are boilerplate at level 2 only; Greek "links" is never
    # one (ligaments in anatomy, conjunctions in grammar)
    ("bn", "উৎস", 2, True), ("bn", "উৎস", 3, False), ("el", "Σύνδεσμοι", 2, False),
])
def test_more_boilerplate_titles(lang, heading, level, dropped):
    from wikipairs.text.wikitext import BOILERPLATE_SECTIONS, in_boilerplate
    titles = BOILERPLATE_SECTIONS["en"] | BOILERPLATE_SECTIONS[lang]
    assert in_boilerplate(heading, titles, level) is dropped
