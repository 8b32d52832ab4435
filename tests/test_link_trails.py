"""Link trails (wikipairs.text.wikitext): the letters right after `]]` join the anchor, as
MediaWiki's $linkTrail does ("[[bus]]es"), but never letters of scripts written without spaces:
on jawiki "[[言語]]と" is the link 言語 followed by と (jawiki and zhwiki have no such trail), where
13,093 of the sample's 30,048 anchors used to run on to the next punctuation mark."""
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
