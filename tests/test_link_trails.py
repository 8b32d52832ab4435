"""Link trails (wikipairs.text.wikitext): the letters right after `]]` join the anchor as
MediaWiki's $linkTrail of the wiki's language says ("[[bus]]es"; link_trails.py, from MediaWiki
1.43). On jawiki "[[言語]]と" is the link 言語 followed by と, where 13,093 of the sample's 30,048
anchors used to run on to the next punctuation mark; on bnwiki a trail takes its vowel signs
("[[বাংলা লিপি]]তে"), where 308 of the sample's anchors used to end inside a letter."""
from __future__ import annotations

import re

import pytest

from wikipairs.records import Page, SiteInfo
from wikipairs.text.sentences import SentenceSplitter
from wikipairs.text.titles import TitleParser, default_namespaces
from wikipairs.text.wikitext import Cleaner

CASES = [
    ("en", "Two [[bus]]es and a [[train|rail car]]s left.", ["buses", "rail cars"]),
    ("de", "Die [[Zürich|Zürch]]er Altstadt.", ["Zürcher"]),
    ("fr", "Les [[Béziers|Biterrois]] et les [[pomme]]s.", ["Biterrois", "pommes"]),
    ("ru", "Жители [[Москва|Москв]]ы любят [[театр]].", ["Москвы", "театр"]),
    ("ja", "[[言語]]とは[[記号]]である。", ["言語", "記号"]),
    ("ja", "[[ラテン語]]で書かれた[[アルファベット]]を使う。", ["ラテン語", "アルファベット"]),
    ("zh", "[[北京]]市是[[中国]]的首都。", ["北京", "中国"]),
    ("th", "[[กรุงเทพมหานคร]]เป็นเมืองหลวง", ["กรุงเทพมหานคร"]),
    ("ja", "[[C言語]]sと[[Unix]]es。", ["C言語s", "Unixes"]),  # Latin letters still trail
    ("en", "[[Nine]]9 and [[x]]_y.", ["Nine", "x"]),  # never digits or underscores
    ("en", "The [[ARM]]SA and [[café]]és.", ["ARM", "café"]),  # [a-z] only on enwiki
    ("bn", "[[বাংলা লিপি]]তে লেখা [[বড়ু চণ্ডীদাস]]ের কাব্য", ["বাংলা লিপিতে", "বড়ু চণ্ডীদাসের"]),
    ("hi", "[[भारत]]ीय [[दिल्ली]] में", ["भारतीय", "दिल्ली"]),  # a vowel sign joins
    ("ko", "[[대한민국]]의 [[서울]]은 [[bus]]es", ["대한민국", "서울", "buses"]),  # particles stay out
    ("zh", "[[Apple]]s的[[北京]]", ["Apple", "北京"]),  # zhwiki: no trail at all
    ("ar", "[[مصر]]ية و[[القاهرة]]", ["مصرية", "القاهرة"]),
    ("no", "[[Bergen]]søy og [[Oslo]]s", ["Bergensøy", "Oslos"]),  # nowiki speaks nb
]


def article(lang: str, text: str):
    site = SiteInfo(lang=lang, namespaces=default_namespaces(lang))
    splitter = SentenceSplitter.for_language(lang, [], method="sentencex")
    return Cleaner(TitleParser(site), splitter=splitter).article(Page(1, 0, "P", text))


@pytest.mark.parametrize("lang,text,anchors", CASES)
def test_anchor_takes_the_trail_of_its_wiki(lang, text, anchors):
    a = article(lang, text)
    assert [link.anchor for link in a.links] == anchors
    sentences = [s for section in a.sections for paragraph in section.paragraphs
                 for s in paragraph]
    for link in a.links:
        sentence = a.sections[link.section].paragraphs[link.paragraph][link.sentence]
        assert sentence[link.start:link.end] == link.anchor
    # the text itself is unchanged: only where the link ends moves
    assert "".join(sentences).replace(" ", "") == re.sub(r"\[\[(?:[^|\]]*\|)?|\]\]", "",
                                                          text).replace(" ", "")


def test_every_language_has_a_trail_pattern_re_compiles():
    from wikipairs.text.link_trails import LINK_TRAILS
    from wikipairs.text.wikitext import link_trail
    for lang in list(LINK_TRAILS) + ["xx", "simple", "zh-yue", "de-formal"]:
        re.compile(link_trail(lang))
    assert link_trail("simple") == link_trail("en") == "(?:[a-z])*"
    assert link_trail("zh-classical") == link_trail("zh") == ""  # lzh falls back to zh


def test_jawiki_anchors_stop_at_the_link(parsed_dumps):
    """On the real jawiki sample (almost) no in-text anchor is its target followed by hiragana:
    the run-on anchors of a trail ("記号である"); piped labels such as [[明治|明治時代]] stay."""
    articles = parsed_dumps("jawiki-sample.xml.bz2").articles
    run_on = re.compile(r"[\u3041-\u309f]")
    links = [link for a in articles for link in a.links]
    assert len(links) > 20_000
    bad = [link for link in links if link.anchor.startswith(link.target) and
           len(link.anchor) > len(link.target) and run_on.match(link.anchor[len(link.target)])]
    assert len(bad) < len(links) / 1000, [(b.target, b.anchor) for b in bad[:5]]


def test_the_generator_reads_mediawikis_patterns():
    """tools/make_link_trails.py turns each $linkTrail into one letter of the trail for `re`
    (the generated table needs php and MediaWiki's files; its conversion is checked here)."""
    import importlib.util
    from pathlib import Path
    path = Path(__file__).resolve().parents[1] / "tools" / "make_link_trails.py"
    spec = importlib.util.spec_from_file_location("make_link_trails", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool._python_unit("/^([a-z]+)(.*)$/sD") == "[a-z]"
    assert tool._python_unit("/^([\\x{0980}-\\x{09FF}]+)(.*)$/sDu") == "[\u0980-\u09ff]"
    assert tool._python_unit("/^(\\p{L}+)(.*)$/sDu") == r"[^\W\d_]"
    assert tool._python_unit("/^()(.*)$/sD") == ""
    assert tool._python_unit("/^((?:[a-z]|'(?!'))+)(.*)$/sDu") == "(?:[a-z]|'(?!'))"
    with pytest.raises(ValueError):
        tool._python_unit("/^(x)(.*)$/")
