"""Text that markup must not leave behind, on small dumps of the shapes real wikis have, and the
leak metric that measures it (wikipairs.pairs.quality)."""
from __future__ import annotations

from collections import Counter

import pytest

from conftest import page_article, page_sentences, write_fake_dump
from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.pairs.quality import is_leak


def _parse(tmp_path, pages, lang="en", namespaces=None):
    dump = write_fake_dump(tmp_path / "wiki.xml", pages, lang=lang, namespaces=namespaces)
    counts = Counter()
    articles = list(iter_articles(ParseConfig(inputs=[str(dump)], output=""), counts, {}))
    return {a.title: a for a in articles}, counts


def _html_article(body: str, counts: Counter | None = None):
    """The Article of an English page whose Parsoid <body> is `body` (the HTML path)."""
    from wikipairs.records import HtmlPage, SiteInfo
    from wikipairs.text.parsoid import ParsoidCleaner
    from wikipairs.text.sentences import SentenceSplitter
    from wikipairs.text.titles import TitleParser
    parsoid = ParsoidCleaner(TitleParser(SiteInfo(lang="en")),
                             SentenceSplitter.for_language("en", method="sentencex"))
    html = f"<html><head><title>T</title></head><body>{body}</body></html>"
    return parsoid.article(HtmlPage(id=1, ns=0, title="T", html=html),
                           counts if counts is not None else Counter())


def _sentences(article) -> list[str]:
    return [s for *_, s in article.sentences()]


# The map-legend caption of jawiki/ukwiki: a File link over several lines of legend templates.
LEGEND = """The town is old. It lies on a river.
[[File:Map.svg|thumb|450px|left|Population growth map.
{{legend|#00FF00|Increase}}
{{legend|#FF0000|Decrease}}
]]
The climate is mild. Summers are warm.

== Languages ==
[[ファイル:Spain languages.svg|thumb|right|alt=Languages|
{{legend|#B3A34A|Spanish}}

{{legend|#A34AB3|Basque}}
]]
Many languages are spoken here. Spanish is the most common one."""


def test_file_caption_over_lines_of_templates_leaves_nothing(tmp_path):
    articles, _ = _parse(tmp_path, [("Town", LEGEND)], namespaces={6: "ファイル"})
    sentences = _sentences(articles["Town"])
    assert sentences == ["The town is old.", "It lies on a river.", "The climate is mild.",
                         "Summers are warm.", "Many languages are spoken here.",
                         "Spanish is the most common one."], sentences


def test_extra_brackets_before_a_file_link(tmp_path):
    text = "[[[[image:Map.gif |thumb|center|250px|Cities and urban areas]]\nThe state is large. " \
        "It has many [[city|cities]]."
    articles, _ = _parse(tmp_path, [("State", text)])
    assert _sentences(articles["State"]) == ["The state is large.", "It has many cities."]


def test_double_escaped_entities_are_decoded(tmp_path):
    text = "The film is 35&amp;nbsp;mm wide. Rock &amp;amp; roll came later. It uses " \
        "[[35&nbsp;mm film]] stock. N&amp;nbsp;+&amp;nbsp;1 operands remain."
    articles, _ = _parse(tmp_path, [("Film", text)])
    article = articles["Film"]
    assert _sentences(article) == ["The film is 35 mm wide.", "Rock & roll came later.",
                                   "It uses 35 mm film stock.", "N + 1 operands remain."]
    (link,) = article.links
    assert (link.target, link.anchor) == ("35 mm film", "35 mm film"), link


def test_stray_link_brackets_are_removed_and_counted(tmp_path):
    text = "The college is in [[Thrissur]. It was founded by [[[The Founders]]] in 1970. " \
        "A map of [[Kerala|the state]] hangs in the hall."
    articles, counts = _parse(tmp_path, [("College", text)])
    article = articles["College"]
    assert _sentences(article) == ["The college is in Thrissur.",
                                   "It was founded by The Founders in 1970.",
                                   "A map of the state hangs in the hall."]
    assert counts["stray_link_brackets"] >= 2, counts  # one per run of brackets removed
    kerala = [link for link in article.links if link.target == "Kerala"]
    sentence = article.sections[0].paragraphs[0][kerala[0].sentence]
    assert sentence[kerala[0].start:kerala[0].end] == "the state"


@pytest.mark.parametrize("wikitext, expected", [
    # elwiki's real slips: a link's closing brackets typed before it, an unclosed link, a
    # single closing bracket, a third opening one, a bracket inside the target
    ("των ]]Οίκος των Αγιλολφιδών|Αγιλολφιδών]] μέχρι το 788.", "των Αγιλολφιδών μέχρι το 788."),
    ("(της [[Οίκος των Γιαγκελλόνων|δυναστείας των Γιαγκελλόνων) σκοτώθηκε.",
     "(της δυναστείας των Γιαγκελλόνων) σκοτώθηκε."),
    ("Των ιδιωτικών [[Απόσταξη|αποστακτηρίων] είναι γνωστά.", "Των ιδιωτικών αποστακτηρίων είναι γνωστά."),
    ("Η εορτή της [[[Ελληνική Επανάσταση του 1821|Εθνεγερσίας]] ήρθε.", "Η εορτή της Εθνεγερσίας ήρθε."),
    ("Μία λεία [[Σύνδεση [(κύρια δέσμη)|γραμμική σύνδεση]] είναι δομή.",
     "Μία λεία γραμμική σύνδεση είναι δομή."),
    # bars that are no link's: kept
    ("It is [[here] and f|X is the map.", "It is here and f|X is the map."),
    ("A set {t| a in A} is [[here]] and g|Y is [[there].", "A set {t| a in A} is here and g|Y is there."),
])
def test_a_stray_links_target_goes_with_its_bar(wikitext, expected):
    assert page_sentences("el", wikitext) == [expected]


@pytest.mark.parametrize("lang, wikitext, expected", [
    # jawiki's: a sentence goes on after a list in its middle, with a particle
    ("ja", "基本の5母音は、それぞれ\n*{{IPA|ä}}、{{IPA|i̠}}\nに近い発音と捉えられる。次の文です。",
     ["ä、i̠", "次の文です。"]),
    ("ja", "題目を示す。たとえば、\n*4. 象は 大きい。\n*5. 象は おりに入れた。\nなどの文では、題目を示す。"
     "後の文。", ["題目を示す。", "4. 象は 大きい。", "5. 象は おりに入れた。", "後の文。"]),
    ("en", "It has two kinds. The main types are\n* [[Alpha]]\n* Beta\nwhich differ in [[size]]. "
     "They are common.", ["It has two kinds.", "Alpha", "Beta", "They are common."]),
    ("en", "It came in 1969 from six journals,\n#one\n#two\nand grew later. It is read.",
     ["one", "two", "It is read."]),
    # a list after a finished sentence, before a capital or a new block: nothing is cut
    ("ja", "次のとおりである。\n*A\n*B\nこれらは別の文である。", ["次のとおりである。", "A", "B", "これらは別の文である。"]),
    ("ja", "以下の子音は二重子音となる。\n; + r\n: br, tr\ndr は二重子音である。",
     ["以下の子音は二重子音となる。", "+ r", "br, tr", "dr は二重子音である。"]),
    ("ja", "高速バス\n*東京駅\n夜行高速バス\n*上野駅", ["高速バス", "東京駅", "夜行高速バス", "上野駅"]),
    ("en", "Notable people include\n* [[Alpha]]\nThe town has a school.",
     ["Notable people include", "Alpha", "The town has a school."]),
    ("en", "Such as:\n* [[Alpha]]\n\nand others were there.", ["Such as:", "Alpha", "and others were there."]),
    # a block quotation interrupts a sentence as a list does (jawiki's "と述べている。"); its own
    # paragraphs are never cut, and a line after "X wrote," and a quotation in a script without
    # capitals may begin a sentence (bnwiki)
    ("ja", "前の文です。彼は\n{{Quote|幸いである。\n\nと書いた。}}\nと述べている{{Sfn|a|2000}}。次の文です。",
     ["前の文です。", "幸いである。", "と書いた。", "次の文です。"]),
    ("en", "He wrote, in the preface,\n{{Quote|It is good.}}\nand then he stopped. Next one.",
     ["It is good.", "Next one."]),
    ("fr", "Il écrit : {{citation bloc|Il est bon.}} et il s’arrête. Suite.",
     ["Il écrit :", "« Il est bon. »", "Suite."]),
    # other wikis' block quotations: their text kept (it was lost), the sentence's tail cut
    ("es", "Antes. Él escribió:\n{{Cita|La vida es sueño.|Calderón}}\ny luego se fue. Fin.",
     ["Antes.", "Él escribió:", "La vida es sueño.", "Fin."]),
    ("ru", "Раньше. Он написал:\n{{Цитата|Жизнь прекрасна.|Автор}}\nи потом ушёл. Конец.",
     ["Раньше.", "Он написал:", "Жизнь прекрасна.", "Конец."]),
    ("bn", "হার্ডি লিখেছেন,\n{{cquote|মায়ের সম্মতি পাওয়া যায়।}}\nকেমব্রিজ এর আমন্ত্রণে তিনি আসেন।",
     ["হার্ডি লিখেছেন,", "মায়ের সম্মতি পাওয়া যায়।", "কেমব্রিজ এর আমন্ত্রণে তিনি আসেন।"]),
    # Georgian letters are all "lower case": no sign of a cut sentence
    ("ka", "მთავარი ქალაქები:\n* თბილისი\nთბილისი არის დედაქალაქი. მეორე წინადადება.",
     ["მთავარი ქალაქები:", "თბილისი", "თბილისი არის დედაქალაქი.", "მეორე წინადადება."]),
    # Japanese: only a particle goes on with a sentence; "これ", "この", "では" open one
    ("ja", "主な路線\n*東京駅\nこれらの路線は廃止された。次の文。",
     ["主な路線", "東京駅", "これらの路線は廃止された。", "次の文。"]),
    ("ja", "作品一覧\n{{Quote|引用文。}}\nこの作品は有名である。", ["作品一覧", "引用文。", "この作品は有名である。"]),
    ("ja", "教育では\n*暗記\nというのも、暗記は書けることではない。", ["教育では", "暗記", "というのも、暗記は書けることではない。"]),
    # a blank line after a quotation starts a paragraph; nested quotations are one
    ("en", "He wrote:\n{{Quote|It is good.}}\n\neBay bought it in 2005. It grew.",
     ["He wrote:", "It is good.", "eBay bought it in 2005.", "It grew."]),
    ("en", "Intro done. He wrote\n{{Quote|Outer starts. {{Quote|Inner one.}} and outer goes on.}}\n"
           "That was all.",
     ["Intro done.", "He wrote", "Outer starts.", "Inner one.", "and outer goes on.", "That was all."]),
    # the cut takes the fragment, never a sentence next to debris that went already
    ("en", "It is a good sentence here. [[Alpha]] · [[Beta]] · [[Gamma]]\n* x item\nand more text "
           "follows. Next one.", ["It is a good sentence here.", "x item", "Next one."]),
])
def test_the_ends_of_a_sentence_a_list_interrupts_are_dropped(lang, wikitext, expected):
    assert page_sentences(lang, wikitext) == expected


def test_links_of_a_sentence_a_list_interrupts_go_with_it():
    article = page_article("en", "[[Alpha]] is one. The types are [[Beta]]\n* x\nwhich [[Gamma|differ]]"
                           " in [[size]]. Then [[Delta]] came.\n")
    assert article.sections[0].paragraphs == [["Alpha is one."], ["x"], ["Then Delta came."]]
    assert [(link.target, link.paragraph, link.sentence) for link in article.links] == [
        ("Alpha", 0, 0), ("Delta", 2, 0)]
    for link in article.links:
        sentence = article.sections[link.section].paragraphs[link.paragraph][link.sentence]
        assert sentence[link.start:link.end] == link.target, (link, sentence)


def test_table_and_column_debris_lines_are_dropped(tmp_path):
    text = "Egypt has a long history. Many people study it.\n{{col-begin}}\n|\n''Known scholars''\n" \
        "* [[Jean-François Champollion]]\n|\n''Writers of fiction''\n* [[Christian Jacq]]\n|}\n----\n"
    articles, _ = _parse(tmp_path, [("Egypt", text)])
    sentences = _sentences(articles["Egypt"])
    assert not any(s.strip(" |!-{}") == "" or s.startswith("|") for s in sentences), sentences
    assert "Known scholars" in sentences and "Jean-François Champollion" in sentences, sentences


def test_chinese_language_conversion_markup_shows_one_variant(tmp_path):
    text = "'''电脑'''，又称-{zh-hans:计算机; zh-hant:電腦;}-，是一种机器。-{H|zh-cn:软件; zh-tw:軟體;}-" \
        "它运行-{A|zh-hans:软件;zh-hant:軟體}-。名称-{C++}-来自英语。"
    articles, _ = _parse(tmp_path, [("电脑", text)], lang="zh")
    text_out = " ".join(_sentences(articles["电脑"]))
    assert "-{" not in text_out and "}-" not in text_out, text_out
    assert "又称计算机，是一种机器。" in text_out and "它运行软件。" in text_out, text_out
    assert "電腦" not in text_out and "軟體" not in text_out and "C++" in text_out, text_out


def test_leak_metric_catches_markup_of_any_wiki():
    for text, lang in [("A &nbsp; B", "en"), ("x &amp; y", "en"), ("__TOC__ here", "en"),
                       ("see Hình:Map.jpg now", "vi"), ("Map|nhỏ|250px|trái|Caption", "vi"),
                       ("mini|hochkant|links|Das Haus", "de"), ("カテゴリ:日本の川", "ja"),
                       ("分類:河流", "zh"), ("ملف:خريطة.png", "ar"), ("A -{zh-hans:B}- C", "zh"),
                       ("thumb|center|250px|Cities", "en"), ("[[Thrissur]", "en"),
                       ("&#91;1&#93;", "en")]:
        assert is_leak(text, lang), (text, lang)


def test_leak_metric_passes_prose():
    for text, lang in [("Titled The Odyssey File: The Making of 2010.", "en"),
                       ("This mode uses the file:///path access scheme.", "en"),
                       ("Links und rechts stehen Häuser, mini ist das Wort.", "de"),
                       ("AT&T bought it for $5 & more.", "en"), ("Cats & dogs; x & y.", "en"),
                       ("Tôi đi học, nhỏ và trái.", "vi"), ("東京は日本の首都である。", "ja")]:
        assert not is_leak(text, lang), (text, lang)


def test_debris_sentences_are_left_out_and_counted(tmp_path):
    """A sentence with no letter or digit (a period left by a dropped template, "|", "+ +") is
    not a sentence; a pipe typed before a hatnote in running text ("| Main article: [[X]]", as
    on bnwiki) is cut off, and the link after it keeps its offsets."""
    text = ("The town is old.<ref>Old.</ref> | Main article: [[History of the town]]\n\n"
            "It has a river. {{unknown template}}. The river is long. |")
    articles, counts = _parse(tmp_path, [("Town", text)])
    article = articles["Town"]
    assert _sentences(article) == ["The town is old.", "Main article: History of the town",
                                   "It has a river.", "The river is long."], _sentences(article)
    link, = article.links
    sentence = article.sections[0].paragraphs[link.paragraph][link.sentence]
    assert sentence[link.start:link.end] == link.anchor == "History of the town"
    # (the "." after the dropped template goes with it: see without_holes)
    assert counts["wordless_sentences"] == 1 and counts["leading_pipes"] == 1, counts


def test_poems_quotations_and_divs_are_blocks_of_their_own():
    """MediaWiki ends the paragraph at a block element: the last line of a poem or a quotation
    never runs into the next sentence (elwiki's Αυστρία read "...dat tibi regna VenusΆσε τους").
    A poem's lines stay one paragraph: a verse sentence spans them."""
    from conftest import page_sentences
    text = ("The motto reads:<poem>\nBella gerant alii,\ntu felix Austria nube\n</poem>"
            "It was coined late.\n\nHe said:\n<blockquote>Now is the time. It is late</blockquote>\n"
            "After that he left. <div class=\"x\">A box.</div> The end.")
    assert page_sentences("en", text) == [
        "The motto reads:", "Bella gerant alii, tu felix Austria nube", "It was coined late.",
        "He said:", "Now is the time.", "It is late", "After that he left.", "A box.", "The end."]


def test_apostrophes_that_mediawiki_shows_between_quote_runs_stay():
    """Parser::doQuotes: with an odd number of both bold and italic runs on a line, a bold run
    is an apostrophe and an italic run ("l'''Homme ...''": 15 sentences of the frwiki sample's
    Léonard de Vinci read "lAdoration", "lÉtude"); four quotes keep one, six keep one; {{'}} and
    {{'s}} show the apostrophe; a dropped template between two runs keeps them apart."""
    from conftest import page_sentences
    cases = [("fr", "Il dessine l'''Homme de Vitruve'' en 1490.",
              "Il dessine l'Homme de Vitruve en 1490."),
             ("it", "La trama dell'''Eneide'' è nota.", "La trama dell'Eneide è nota."),
             ("en", "They fired ''Eagle'''s engine.", "They fired Eagle's engine."),
             ("en", "The ''Titanic''{{'}}s maiden voyage.", "The Titanic's maiden voyage."),
             ("en", "Fired ''Eagle''{{'s}} engine.", "Fired Eagle's engine."),
             ("en", "''''''x'''''' and l''''art''' and '''''bold''''' and '''Alpha''' is ''b''.",
              "'x' and l'art and bold and Alpha is b."),
             ("en", "Sugar'''{{chem|C|12}}'''; glucose'''''{{chem|C|6}}''''', too.",
              "Sugar; glucose, too."),
             # the mark between the two quotes goes where no quote run is, too
             ("en", "The word '{{notarealtemplate|x}}' is odd.", "The word '' is odd.")]
    for lang, text, expected in cases:
        assert page_sentences(lang, text) == [expected], text


def test_text_that_only_looks_like_a_tag_stays():
    """MediaWiki removes the tags it renders and shows any other "<...>" as typed: the Greek
    letter articles' graphemes ("λατινικό <r>"), Maven's "<plugins>-section", "x<y and y>z"."""
    from conftest import page_sentences
    assert page_sentences("en", "If x&lt;y and y&gt;z, the &lt;blink&gt; tag and a "
                                "<plugins>-section stay; a <span class=x>span</span> goes.") == [
        "If x<y and y>z, the <blink> tag and a <plugins>-section stay; a span goes."]


def test_a_comment_or_ref_alone_on_its_line_does_not_end_the_paragraph():
    """MediaWiki's preprocessor removes a comment alone on its line with its line break; a ref
    there leaves its footnote mark. A comment that text follows is not alone, and no comment
    reaches past its own end (a later "-->" on a line of its own)."""
    from conftest import page_sentences
    text = ("He was born in 1900\n<!-- check date -->\nin Paris. And\n<ref name=\"a/b\">Smith."
            "</ref>\nthen left.\n\n<!-- c --> x\nMore -->\n\nNew para.")
    assert page_sentences("en", text) == ["He was born in 1900 in Paris.", "And then left.",
                                          "x More -->", "New para."]


def test_headings_read_as_shown_and_boilerplate_with_a_spaced_colon_goes():
    from conftest import page_article
    article = page_article("fr", "Intro.\n\n== XIX<sup>e</sup>&nbsp;siècle ==\nIl était.\n\n"
                                 "== Career<br />and work ==\nIl fut.\n\n== Références&nbsp;: ==\nRéf.")
    assert [s.heading for s in article.sections] == ["", "XIXe siècle", "Career and work"]


def test_joined_boilerplate_headings_go_with_their_tables_links():
    """A heading that joins boilerplate titles ("References and further reading", "Quellen und
    Literatur") is boilerplate; a table in a boilerplate section gives the page no links (a
    table of sources made WLP pairs), one in the article's prose still does."""
    from conftest import page_article
    text = ("Topic is a page with [[Beta]] in it. It is long.\n{|\n| [[Zeta]] || a table\n|}\n\n"
            "== History ==\nIt has a long history of study.\n\n"
            "== See also ==\n{| class=wikitable\n|-\n| [[Alpha]] || a related page\n|}\n\n"
            "== References and further reading ==\n* Smith, John (2001). A Book. Penguin.\n"
            "{|\n| [[Gamma]] source table\n|}\n\n== Notes, citations and sources ==\n* Doe, Jane.\n"
            "== Art and culture ==\nIt is art.")
    article = page_article("en", text)
    assert [s.heading for s in article.sections] == ["", "History", "Art and culture"]
    assert [(link.target, link.section) for link in article.links] == [("Beta", 0), ("Zeta", -1)]
    german = page_article("de", "Ein Text ist hier.\n\n== Quellen und Literatur ==\n* Buch.")
    assert [s.heading for s in german.sections] == [""]
    # a title that also names a topic is boilerplate at level 2 only
    danish = page_article("da", "Danmark er et land.\n\n== Kultur ==\nKultur er vigtig.\n"
                                "=== Litteratur ===\nH.C. Andersen er en forfatter.\n\n"
                                "== Litteratur ==\n* En bog.")
    assert [s.heading for s in danish.sections] == ["", "Kultur", "Litteratur"]


def test_definition_terms_and_rules_are_blocks():
    """"; Term : definition" shows a term and its definition on two lines; "----" is a rule
    between two blocks."""
    from conftest import page_sentences
    assert page_sentences("en", "Intro.\n; Term : inline def.\n; [[a:b|Note]]: the rest\n"
                                "Text without period\n----\nnext text.") == [
        "Intro.", "Term", "inline def.", "Note", "the rest", "Text without period", "next text."]


def test_a_link_takes_no_trail_across_quote_markup():
    """MediaWiki reads links before bold and italics: "[[Syllabe|silab]]'''o'''" is the link
    "silab" then a bold "o" (frwiki Espéranto: 11 anchors read "silabo")."""
    from conftest import page_article
    article = page_article("fr", "La [[Syllabe|silab]]'''o''' et ''[[Titanic]]''s et [[bus]]es.")
    assert [s for *_, s in article.sentences()] == ["La silabo et Titanics et buses."]
    assert [link.anchor for link in article.links] == ["silab", "Titanic", "buses"]
    heading = page_article("en", "Intro.\n\n== The [[Titanic]]''s'' voyage ==\nText.").sections[1]
    assert heading.heading == "The Titanics voyage"  # no trail breaker (U+2060) left in it


def test_navigation_bars_are_debris():
    """elwiki's month and day pages open with a bar of links ("Δεκέμβριος | Ιανουάριος |
    ..."): 1,559 of the sample's 11,826 WLP pairs had one as their query. Counted as
    `link_bars`; a formula with a bar and an end mark stays."""
    from conftest import cleaner
    from wikipairs.records import Page
    counts = Counter()
    article = cleaner("el").article(Page(id=1, ns=0, title="Ιανουάριος", text=(
        "<center>[[Δεκέμβριος]] | [[Ιανουάριος]] | [[Φεβρουάριος]]</center>\n"
        "Ο Ιανουάριος είναι μήνας. Ισχύει a · c ≤ b · c.")), counts)
    assert [s for *_, s in article.sentences()] == ["Ο Ιανουάριος είναι μήνας.", "Ισχύει a · c ≤ b · c."]
    assert counts["link_bars"] == 1 and [link.target for link in article.links] == []


def test_a_sentence_that_lost_words_to_a_dropped_template_or_formula_goes():
    """A template the cleaner cannot render, or a formula, dropped from running text after a
    word and a space took words out of the sentence ("the letter {{IPA|e}} represents", "is
    located at {{coord|..}}."): the sentence goes, counted as lost_words_sentences. Note marks
    ({{citation needed}}) and templates right after a word (a note, an icon) lose no words: the
    space and the doubled separator they leave go. Inline code is text; display math is not,
    and a sentence that goes on across it ("The sum is\n:<math>x</math>\nwhere x is big.") lost
    words too."""
    from conftest import cleaner
    from wikipairs.records import Page
    text = ("The letter {{xyz|e}} represents seven sounds. It is common. Rome is located at "
            "{{coord|1|2}}. For <math>y</math>, it holds.\n\nThe sum is\n:<math>x</math>\nwhere x "
            "is big. The file is named <code>build.xml</code>. Go to [[Foo]] {{cn}}, then "
            "[[Bar]] ran. Vinci{{abc}}, dit le peintre. Merkel (born; {{zzz}}; 1954) ran. "
            "Springer, 1999. {{zz}}. Kraton ({{zz}}) ran. Gamma <ref>x</ref>, delta ran.")
    counts = Counter()
    article = cleaner("en").article(Page(id=1, ns=0, title="T", text=text), counts)
    sentences = [s for _, _, _, s in article.sentences()]
    assert sentences == ["It is common.",
                         "The file is named build.xml.", "Go to Foo, then Bar ran.",
                         "Vinci, dit le peintre.", "Merkel (born; 1954) ran.", "Springer, 1999.",
                         "Kraton ran.", "Gamma, delta ran."], sentences
    assert counts["lost_words_sentences"] == 4, counts
    for link in article.links:
        sentence = article.sections[0].paragraphs[link.paragraph][link.sentence]
        assert sentence[link.start:link.end] == link.anchor == link.target


def test_the_html_path_drops_a_sentence_that_lost_a_formula_and_keeps_inline_code():
    body = ('<section data-mw-section-id="0"><p>For <span class="mwe-math-element">y</span>, it '
            'holds. It is common.</p><p>The file is named <code>build.xml</code>.</p>'
            '<p><span class="mwe-math-element">x</span></p></section>')
    counts = Counter()
    article = _html_article(body, counts)
    assert [s for _, _, _, s in article.sentences()] == ["It is common.",
                                                          "The file is named build.xml."]
    assert counts["lost_words_sentences"] == 1, counts


@pytest.mark.parametrize("lang, text, expected", [
    # a sentence cut by a display formula went as two fragments: it lost words, it goes whole
    ("en", "The area is given by\n:<math>A = \\pi r^2</math>\nwhere r is the radius. It is "
           "round.", ["It is round."]),
    ("ja", "円の面積 S は\n:<math>S = \\pi r^2</math>\nで与えられる。次の文である。",
     ["次の文である。"]),
    ("en", "The sum is\n\n<math display=\"block\">x,</math>\n\nwhich is big. It is.\n\n"
           "The product is\n::<math>y</math>\n::<chem>H2O</chem>.\nIt is a number.",
     ["It is.", "It is a number."]),
    # a formula line in a paragraph (no ":", no blank line) is running text: no paragraph break
    ("en", "He multiplied\n<math>x</math>\nby\n<math>y</math>\nand got it. The next is whole.",
     ["The next is whole."]),
    # a script without capitals goes on across blank lines; a capital or a full stop ends
    ("ja", "よって S は、角を用いて\n\n<math>S = 1</math>\n\nと書くことができる。", []),
    ("en", "The mean is\n\n:<math>A = a_i.</math>\n\n(See [[summation]] for it).\n\nNext.",
     ["(See summation for it).", "Next."]),
    ("en", "The mean is\n:<math>A</math>\nThe next one is whole.", ["The next one is whole."]),
    # after a finished sentence or a colon, a display formula is dropped as before
    ("en", "It is as follows.\n:<math>x</math>\nThe next one is whole.",
     ["It is as follows.", "The next one is whole."]),
    ("en", "The following holds:\n:<math>x</math>\nwhere x is big.",
     ["The following holds:", "where x is big."]),
    # the line's words end before its notes, a link's brackets, its quote marks
    ("en", "The value is given by" + "".join(f"<ref name=r{i}>r{i}</ref>" for i in range(40))
           + "{{efn|see {{harvnb|X|2000}}}}\n:<math>x=1</math>\nwhere x is one. Good.", ["Good."]),
    ("en", "The area of a [[circle]]\n:<math>x</math>\nwhere r is it. The area of a ''disc''\n"
           ":<math>y</math>\nwhere s is it. Good.", ["Good."]),
    ("en", "The area is<ref>a</ref> shown below.<ref>b</ref>\n:<math>x</math>\nThe next is fine.",
     ["The area is shown below.", "The next is fine."]),
    # a line that is a picture or a category is no sentence going on
    ("en", "A circle is round.\n[[File:X.png|thumb|Area of a circle]]\n:<math>x</math>\nIt is. "
           "The area is shown.\n[[Category:Circles]]\n:<math>y</math>\nGood.",
     ["A circle is round.", "It is.", "The area is shown.", "Good."]),
    # blank lines around the formulas, thousands of them
    ("en", "Intro is here.\n" + " \n" * 5000 + "The area is\n:<math>x</math>\n" + "\n" * 5000
           + "where it is. Good.", ["Intro is here.", "Good."]),
    # a list item or a formula on a line of text is not a display formula between lines
    ("en", "* an item\n:<math>x</math>\nThe next one is whole.", ["an item", "The next one is whole."]),
])
def test_a_sentence_cut_by_a_display_formula_goes_whole(lang, text, expected):
    from conftest import page_article
    article = page_article(lang, text)
    assert [s for *_, s in article.sentences()] == expected


def test_the_html_path_drops_a_sentence_cut_by_a_display_formula_whole():
    """Parsoid's <dl><dd> of a formula between two paragraphs of one sentence (frwiki's
    "vérifie la formule de réflexion" / formula), as on the wikitext path."""

    def formula(source):
        return ('<dl><dd><span class="mwe-math-element" typeof="mw:Extension/math" '
                f"data-mw='{{\"name\":\"math\",\"body\":{{\"extsrc\":\"{source}\"}}}}'>"
                "x</span></dd></dl>\n")
    body = ('<section data-mw-section-id="0"><p>The area is given by<sup typeof="mw:Extension/ref">'
            f'[1]</sup></p>\n{formula("A")}{formula("B,")}\n<p>where r is the radius. It is '
            f'round.</p><p>It holds as follows.</p>{formula("C")}<p>where it is. Fine.</p>'
            f'<p>The mean is</p>{formula("A = a.")}<p>which is new. It is.</p>'
            f'<p>The sum is</p>{formula("A")}<p>This one is whole.</p></section>')
    counts = Counter()
    article = _html_article(body, counts)
    assert [s for _, _, _, s in article.sentences()] == [
        "It is round.", "It holds as follows.", "where it is.", "Fine.", "which is new.",
        "It is.", "This one is whole."]
    assert counts["lost_words_sentences"] == 3, counts
    # paragraphs joined across formulas stay apart from the ones around them; chains join
    body = (f'<section><p>A is</p>{formula("A")}<p>where x is done. Still here</p><p>next one '
            f'starts here. Then</p>{formula("B")}<p>where y is. Good.</p><p>C is</p>{formula("C")}'
            f'<p>where x is</p>{formula("D")}<p>and y is the end. Good one here.</p></section>')
    article = _html_article(body)
    assert article.sections[0].paragraphs == [["Still here"], ["next one starts here.", "Good."],
                                              ["Good one here."]]


def test_the_html_path_reads_superscript_numbers_as_superscripts():
    """"10<sup>9</sup>" read "109" on both paths; a fraction's numerator stays as it is."""
    body = ('<section data-mw-section-id="0"><p>It is 10<sup>9</sup> years old, 5 km<sup>2</sup>'
            ' big, H<sup>+</sup> and the 1<sup>st</sup>. Half is <span class="frac"><sup>1</sup>'
            '<span typeof="mw:Entity">⁄</span><sub>2</sub></span>. It has 4.5×10<sup>9</sup>/L '
            'cells.<sup>1</sup> Some find it.</p></section>')
    article = _html_article(body)
    assert [s for _, _, _, s in article.sentences()] == [
        "It is 10⁹ years old, 5 km² big, H⁺ and the 1st.", "Half is 1⁄2.",
        "It has 4.5×10⁹/L cells.", "Some find it."]  # (a footnote's number goes)


def test_the_html_path_keeps_ipa_drops_quote_attributions_and_reads_typed_entities():
    """enwiki's {{IPA}} carries class "noexcerpt" and was dropped as a notice ("YAML (, rhymes");
    a quotation's attribution after its <blockquote> in one transclusion (frwiki's {{Citation
    bloc}}: "— Léonard de Vinci, Carnets", six sentences of his article) or in {{Quote}}'s cite
    goes, as on the wikitext path; "35&amp;nbsp;mm" typed reads "35 mm" on both paths."""
    body = ('<section><p><b>YAML</b> (<span class="IPA nopopups noexcerpt" lang="en-fonipa">'
            '<a rel="mw:WikiLink" href="./Help:IPA/English">/ˈjæməl/</a></span>, rhymes with '
            '<i>camel</i>) was first proposed in 2001.</p><blockquote about="#mwt1" '
            'typeof="mw:Transclusion"><p>« Les sciences sont belles. »</p></blockquote>'
            '<p about="#mwt1">— Léonard de Vinci, <cite>Carnets</cite></p><blockquote><p>Per '
            'pontem ad astra.</p><div class="templatequotecite">—<cite>Someone</cite></div>'
            '</blockquote><p>The film is 35<span typeof="mw:Entity">&amp;</span>nbsp;mm wide. It '
            'costs <span class="frac" role="math">1<span class="sr-only">+</span><span class="num">'
            '1</span>⁄<span class="den">2</span></span> dollars.</p></section>')
    wrapper = _html_article('<section><blockquote about="#mwt3"><p>Quoted.</p></blockquote><p '
                            'about="#mwt3">After the war the city was rebuilt. [12]</p></section>')
    assert wrapper.sections[0].paragraphs == [["Quoted."], ["After the war the city was rebuilt."]]
    article = _html_article(body)
    assert article.sections[0].paragraphs == [
        ["YAML (/ˈjæməl/, rhymes with camel) was first proposed in 2001."],
        ["« Les sciences sont belles. »"], ["Per pontem ad astra."],
        ["The film is 35 mm wide.", "It costs 1 1⁄2 dollars."]]  # (screen readers' "+": a space)


def test_nowiki_content_reads_as_typed():
    """<nowiki> shows its content as typed: no link, template, quote or list markup in it is
    read ("[[x]]" lost its brackets, "{{cite}}" its text, "''italic''" its quotes); its
    entities are read once ("&lt;br&gt;" read "<;br>;")."""
    from conftest import page_article, page_sentences
    assert page_sentences("en", "Use <nowiki>&lt;br&gt;</nowiki> here. And <nowiki>&amp;lt;</nowiki>"
                                " is it.") == ["Use <br> here.", "And &lt; is it."]
    article = page_article("en", "Write <nowiki>[[x]]</nowiki> to link. Use <nowiki>{{cite}}</nowiki>"
                                 " here. The <nowiki>''italic''</nowiki> form. A <nowiki/>[[y]]s word.")
    assert [s for *_, s in article.sentences()] == [
        "Write [[x]] to link.", "Use {{cite}} here.", "The ''italic'' form.", "A ys word."]
    assert [(link.target, link.anchor) for link in article.links] == [("Y", "ys")]


@pytest.mark.parametrize("lang, text, expected", [
    # a formula in running text always lost words; so did a template after a clause's start
    ("en", "<math>p</math> is the momentum. It is big.", ["It is big."]),
    ("en", "Mount Tahat ({{formatnum: 3003}} m) is high. In 1930, {{US patent|1}} was awarded. "
           "It is.", ["It is."]),
    ("en", "Known: <math>x</math>. It is.", ["It is."]),
    # ... or between two letters of a script written without spaces
    ("ja", "東京は{{Coord|1|2}}に位置する。琉球諸島{{要出典範囲|島々}}で方言差が著しい。",
     ["琉球諸島島々で方言差が著しい。"]),
    ("zh", "设<math>x</math>为实数。第二句。", ["第二句。"]),
    # marks and renderers: no words lost, none glued, none doubled
    ("en", "Promoted {{sic}} moderate Islam. It was very {{Citation needed span|popular}} then.",
     ["Promoted moderate Islam.", "It was very popular then."]),
    ("en", "It ran 2009{{endash}}2014, a union{{emdash}}and more.", ["It ran 2009–2014, a union—and more."]),
    ("en", "Paris{{x}}; at last. Lyon,{{x}}? It was warming [http://x.org/a] in 2000.",
     ["Paris; at last.", "Lyon?", "It was warming in 2000."]),
    ("en", "Paris ; {{x}}. Dari: {{nq|x}}, Afghanistan. It is (e.g. {{chem|M}}) ok.\n\nEnds.",
     ["Ends."]),
    ("ru", "Площадь — {{s2|2561 км²}}. Население — {{num2|5601911}} чел. Город большой.",
     ["Город большой."]),
    ("bn", "রাজধানী {{sfn|x}}। পরের বাক্য।", ["রাজধানী।", "পরের বাক্য।"]),
    ("fr", "La France {{refnec}}. Paris est grand {{qui}}, oui.", ["La France.", "Paris est grand, oui."]),
    # a template right after a digit is part of the number: rendered, or the sentence goes
    ("en", "The mass is 5.98{{e|24}}&nbsp;kg. It is 1.06&times;10{{smsup|&minus;10}} m wide. "
           "It has 3{{zzz|1|4}} legs. It is 10<sup>9</sup> years old, 5 km<sup>2</sup> in size, "
           "the 1<sup>st</sup> and {{frac|1|2}} of <sup>1</sup>&frasl;<sub>2</sub>.",
     ["The mass is 5.98×10²⁴ kg.", "It is 1.06×10⁻¹⁰ m wide.",
      "It is 10⁹ years old, 5 km² in size, the 1st and 1⁄2 of 1⁄2."]),
    ("bn", "ভর ৫.৯৮{{e|২৪}} কেজি। ভর ৭{{zzz|২২}} কেজি। পরের বাক্য।", ["ভর ৫.৯৮×10^২৪ কেজি।", "পরের বাক্য।"]),
    # a citation mark typed as text at a sentence's end is a note mark; an index, a set is not
    ("el", "Παράγει 63 τρισεκατομμύρια BTU. [59] Η χώρα έχει 24 γερουσιαστές [20]. Το a[1] "
           "μένει.", ["Παράγει 63 τρισεκατομμύρια BTU.", "Η χώρα έχει 24 γερουσιαστές.",
                     "Το a[1] μένει."]),
    ("en", "The set [1] is a singleton. Write a = b [0] to get it.",
     ["The set [1] is a singleton.", "Write a = b [0] to get it."]),
    # a run of marks is one ("প্রযুক্তি।[1][2][3] রেডিও": bnwiki), a run of indices is none
    ("bn", "এটি যোগাযোগের প্রযুক্তি।[1][2][3] রেডিও তরঙ্গ ব্যবহার করে।",
     ["এটি যোগাযোগের প্রযুক্তি।", "রেডিও তরঙ্গ ব্যবহার করে।"]),
    ("en", "Take a[1][2] here. It is b [0][1] too.", ["Take a[1][2] here.", "It is b [0][1] too."]),
    # ... and one typed in superscript, anywhere ("চর্চা।” <sup>[37]</sup>" was a sentence "[37]")
    ("bn", "সংস্কৃতি নির্দেশ করে “রূপের চর্চা।” <sup>[37]</sup> চিন্তার ধারা সংস্কৃতি বলে।",
     ["সংস্কৃতি নির্দেশ করে “রূপের চর্চা।”", "চিন্তার ধারা সংস্কৃতি বলে।"]),
    # ... unless it is a note: a reference, a note's mark
    ("en", "It was 5{{#tag:ref|A note.|group=n}} metres high. It rose 7{{cref2|a}} feet.",
     ["It was 5 metres high.", "It rose 7 feet."]),
    ("en", "It has 4.5×10<sup>9</sup>/L cells.<sup>1</sup> Some find it.",
     ["It has 4.5×10⁹/L cells.", "Some find it."]),
    # typed as entities or code: text, never a tag
    ("en", "Use the {{tag|div}} element. Write <code>&lt;div&gt;</code> or {{code|lang=html|<p>}}.",
     ["Use the <div>...</div> element.", "Write <div> or <p>."]),
    # a dropped template in a link's target: which page is not known, no link
    ("en", "See [[List of {{CURRENTYEAR}} films|films]] here.", ["See films here."]),
])
def test_holes_and_marks(lang, text, expected):
    from conftest import page_article
    article = page_article(lang, text)
    assert [s for *_, s in article.sentences()] == expected
    assert not [link for link in article.links if "\x03" in link.target or "\x05" in link.target]


def test_noinclude_content_is_the_pages_own():
    """<noinclude> hides its content where the page is transcluded, not on the page itself;
    <includeonly> shows only there."""
    from conftest import page_sentences
    assert page_sentences("en", "Text <noinclude>shown</noinclude> here. Not <includeonly>this"
                                "</includeonly> that.") == ["Text shown here.", "Not that."]


def test_pseudo_headings_are_headings_on_both_paths():
    """";Term" alone on its line is a heading (MOS:PSEUDOHEAD), one level below the one it stands
    under, and no sentence; a boilerplate one drops what follows it; "; Term : definition" and
    ";Term" over ": definition" stay a definition list. Parsoid's <dl> of <dt>s alone, the same."""
    from conftest import page_article
    article = page_article("en", "Lead text is here.\n\n== History ==\nIntro.\n;Early life\nHe was "
                                 "born.\n;Term\n:A definition.\n; Key : value here\n\n;Notes\n* Smith "
                                 "2000, p. 3.\n== Career ==\nHe worked.")
    expected = [(0, "", [["Lead text is here."]]), (2, "History", [["Intro."]]),
                (3, "Early life", [["He was born."], ["Term"], ["A definition."], ["Key"],
                                   ["value here"]]),
                (2, "Career", [["He worked."]])]
    assert [(s.level, s.heading, s.paragraphs) for s in article.sections] == expected
    body = ('<section><p>Lead text is here.</p></section><section><h2>History</h2><p>Intro.</p>'
            '<dl><dt>Early life</dt></dl><p>He was born.</p><dl><dt>Term</dt><dd>A definition.</dd>'
            '<dt>Key</dt><dd>value here</dd></dl><dl><dt>Notes</dt></dl><ul><li>Smith 2000, p. 3.'
            '</li></ul></section><section><h2>Career</h2><p>He worked.</p></section>')
    article = _html_article(body)
    assert [(s.level, s.heading, s.paragraphs) for s in article.sections] == expected


@pytest.mark.parametrize("text, anchors", [
    # marks next to links: every later link keeps its offsets, no anchor takes in a fill
    ("Alpha [[Beta]], {{cn}}; {{cn}} [[Gamma]] is here.", ["Beta", "Gamma"]),
    ("Alpha [[Beta|{{cn}} beta]] gamma [[Delta]].", ["beta", "Delta"]),
    ("Arabic ({{cn}}, less formally, {{cn}}) is a [[Semitic]] and [[Afro-Asiatic]] one.",
     ["Semitic", "Afro-Asiatic"]),
    ("A [[b|c {{cn}}]] d [[e]] f.", ["c", "e"]),
])
def test_link_anchors_around_marks(text, anchors):
    from conftest import page_article
    article = page_article("en", text)
    assert [link.anchor for link in article.links] == anchors
    for link in article.links:
        sentence = article.sections[0].paragraphs[link.paragraph][link.sentence]
        assert sentence[link.start:link.end] == link.anchor
    assert "  " not in " ".join(s for *_, s in article.sentences())


def test_citation_templates_in_running_text_keep_their_words():
    from conftest import page_sentences
    assert page_sentences("en", "It is spelled {{sic|teh}} there. As shown by {{harvtxt|Smith|"
                                "Jones|2000}}, it holds.") == [
        "It is spelled teh there.", "As shown by Smith & Jones (2000), it holds."]


def test_a_link_to_another_wikis_category_reads_its_name():
    """[[:de:Kategorie:X]] on jawiki: "Kategorie" is a namespace of dewiki, not of jawiki, and the
    link reads "X" as [[:en:Category:X]] does."""
    from conftest import page_sentences
    assert page_sentences("ja", "[[:de:Kategorie:Österreichische Sprache]] - ドイツ語の記事。") == [
        "Österreichische Sprache - ドイツ語の記事。"]
