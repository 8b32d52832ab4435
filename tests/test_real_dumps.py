"""Parsing real Wikipedia dumps (../shared/data/wiki): counts, leads, links, markup leaks, Greek.

Each dump is parsed once per session (conftest.parsed_dumps).
"""
from __future__ import annotations

import re
from collections import Counter

import nltk.data
import pytest

from conftest import NLTK_DATA, SAMPLE_DUMP, WIKI, punkt_free_paths, wiki_file
from wikipairs.reading import DumpFile
from wikipairs.pairs.tasks import PairBuilder, PairConfig, build_pairs_in_memory
from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.pairs.quality import leaking_sentences, leaking_texts
from wikipairs.text.sentences import SentenceSplitter

LEAK_THRESHOLD = 0.002  # at most 0.2% of sentences may still hold markup
REAL_DUMPS = ["enwiki-sample-gensim.xml.bz2", "enwiki-table-markup.xml.bz2", "elwiki-sample.xml.bz2"]
# Every real dump there is (other languages, other page shapes): the invariants hold on all of them.
EVERY_DUMP = sorted(p.name for p in WIKI.glob("*.xml*"))


def test_every_dump_is_there():
    assert len(EVERY_DUMP) >= 13 and set(REAL_DUMPS) <= set(EVERY_DUMP), (WIKI, EVERY_DUMP)


def _skipped(counts: Counter) -> dict[str, int]:
    return {k: v for k, v in counts.items() if k.startswith("skipped_")}


# ---- enwiki-sample-gensim: counts ---------------------------------------------------------------

def test_gensim_sample_counts(enwiki_gensim):
    counts = enwiki_gensim.counts
    articles = len(enwiki_gensim.articles)
    summary = f"counts: {dict(counts)}"
    assert counts["pages_read"] == 206, summary
    assert counts["redirects"] == 100, summary
    assert counts["articles"] == articles, summary
    # 106 main-namespace pages that are not redirects: articles, disambiguation and list pages.
    assert articles + counts["skipped_disambiguation"] + counts["skipped_list"] == 106, summary
    assert 90 <= articles <= 106, summary
    # Every page is accounted for exactly once.
    assert counts["pages_read"] == articles + counts["redirects"] + sum(_skipped(counts).values()), \
        summary


def test_gensim_sample_wikipedia_page_is_counted_as_a_redirect(enwiki_gensim):
    """The one 'Wikipedia:' page (project namespace 4) is a redirect to another project page: it
    is counted once, among the redirects (redirects are counted before namespaces), never as a
    skipped namespace; the redirect table holds only main-namespace redirects, so not it."""
    pages = list(DumpFile(str(enwiki_gensim.path)).pages())
    assert len(pages) == 206
    other = [(p.ns, p.title, p.redirect) for p in pages if p.ns != 0]
    assert len(other) == 1 and other[0][0] == 4 and other[0][1].startswith("Wikipedia:"), other
    ns, title, target = other[0]
    assert target == "Wikipedia:Nupedia and Wikipedia", other
    main_redirects = sum(1 for p in pages if p.ns == 0 and p.redirect is not None)
    assert main_redirects == 99
    counts = enwiki_gensim.counts
    assert counts["redirects"] == main_redirects + 1, dict(counts)
    assert counts["skipped_namespace"] == 0, dict(counts)
    redirect_map = enwiki_gensim.info["redirects"]
    # the redirect table covers every namespace, so stats and redirects.parquet agree
    assert redirect_map.resolve(title) == "Wikipedia:Nupedia and Wikipedia"
    assert len(redirect_map) == counts["redirects"]


# ---- every article: a lead, consistent link spans ---------------------------------------------

@pytest.mark.parametrize("name", REAL_DUMPS)
def test_every_article_has_a_lead(parsed_dumps, name):
    parsed = parsed_dumps(name)
    assert parsed.articles, f"{name}: no articles"
    no_lead = []
    for article in parsed.articles:
        lead = article.sections[0] if article.sections else None
        if lead is None or lead.level != 0 or lead.heading != "" or \
                not any(sentence.strip() for paragraph in lead.paragraphs for sentence in paragraph):
            no_lead.append(article.title)
    # elwiki's "Δεκαετία 1930" opens with three navigation bars and nothing else (link_bars)
    no_lead = [title for title in no_lead if title != "Δεκαετία 1930"]
    assert not no_lead, f"{name}: {len(no_lead)} articles without lead text: {no_lead[:20]}"


@pytest.mark.parametrize("name", EVERY_DUMP)
def test_link_spans_are_consistent(parsed_dumps, name):
    """For every link: sentence_text[start:end] == anchor, indices inside the article, text order,
    and the target is the redirect-resolved raw target."""
    parsed = parsed_dumps(name)
    resolve = parsed.info["redirects"].resolve
    bad, total = [], 0
    for article in parsed.articles:
        previous = (-1, -1, -1, -1)
        outside = [link for link in article.links if link.section == -1]
        in_text = article.links[: len(article.links) - len(outside)]
        assert all(link.section == -1 for link in outside) and all(
            link.section >= 0 for link in in_text), "links outside the text must come last"
        for link in outside:  # in a dropped template or table: no position, but resolved
            assert (link.paragraph, link.sentence, link.start, link.end) == (-1, -1, -1, -1)
            assert link.target == resolve(link.raw_target), link
        for link in in_text:
            total += 1
            try:
                sentence = article.sections[link.section].paragraphs[link.paragraph][link.sentence]
            except IndexError:
                bad.append((article.title, "index out of range", link))
                continue
            position = (link.section, link.paragraph, link.sentence, link.start)
            if not link.anchor or sentence[link.start:link.end] != link.anchor:
                bad.append((article.title, sentence[link.start:link.end], link))
            elif not 0 <= link.start < link.end <= len(sentence):
                bad.append((article.title, "span outside the sentence", link))
            elif position < previous:
                bad.append((article.title, "links not in text order", link))
            elif link.target != resolve(link.raw_target):
                bad.append((article.title, "target is not the resolved raw_target", link))
            previous = position
    assert total > 0, f"{name}: no links at all"
    assert not bad, f"{name}: {len(bad)} of {total} links inconsistent, first ones:\n" + \
        "\n".join(map(repr, bad[:10]))


@pytest.mark.parametrize("name", EVERY_DUMP)
def test_wlp_link_in_doc_means_the_anchor_is_in_the_document(parsed_dumps, name):
    """A WLP pair that says its document holds the link (link_in_doc) has the anchor text in
    doc_text: the link was placed in the right section, paragraph and sentence."""
    parsed = parsed_dumps(name)
    pairs = build_pairs_in_memory(parsed.articles, ["wlp"], PairBuilder(PairConfig()))["wlp"]
    claimed = [p for p in pairs if p.link_in_doc]
    bad = [(p.doc_title, p.query_title, p.link_anchor, p.doc_text[:200]) for p in claimed
           if not p.link_anchor or p.link_anchor not in p.doc_text]
    assert not bad, f"{name}: {len(bad)} of {len(claimed)} WLP pairs claim a link their " \
        "document lacks:\n" + "\n".join(map(repr, bad[:10]))


# ---- links between pages of the gensim sample ----------------------------------------------------

@pytest.mark.parametrize("source,target", [
    ("Achilles", "Apollo"),
    ("Alabama", "American Revolutionary War"),
])
def test_links_between_sample_pages(enwiki_gensim, source, target):
    article = enwiki_gensim.article(source)
    targets = {link.target for link in article.links}
    assert target in targets, f"{source} -> {target} not found; {len(targets)} targets, " \
                              f"e.g. {sorted(targets)[:30]}"
    assert target in {a.title for a in enwiki_gensim.articles}, f"{target} is an article too"


def test_link_a_to_ascii(enwiki_gensim):
    """The brief asks for A -> ASCII. In the page 'A' the only link to ASCII is a parameter of the
    {{charmap}} table template of the section 'Computing codes':
        {{charmap | 0041 | 0061 | ... | map2 = [[ASCII]] <sup>1</sup> | map2char1 = 41 | ...}}
    and the prose never links ASCII. So this passes only if links inside such templates are kept
    (wikitext.py drops templates that it does not render, with their links)."""
    article = enwiki_gensim.article("A")
    targets = sorted({link.target for link in article.links})
    assert "ASCII" in targets, (
        "A -> ASCII not found: the only [[ASCII]] in the source of 'A' is the {{charmap}} template "
        f"parameter 'map2 = [[ASCII]]', and that template is dropped. Targets found: {targets}")


def test_many_links_between_sample_pages(enwiki_gensim):
    titles = {a.title for a in enwiki_gensim.articles}
    internal = [(a.title, link.target) for a in enwiki_gensim.articles for link in a.links
                if link.target in titles and link.target != a.title]
    assert len(internal) >= 50, f"only {len(internal)} links between articles of the sample"


# ---- markup leaks -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", EVERY_DUMP)
def test_markup_leak_rate(parsed_dumps, name):
    parsed = parsed_dumps(name, TRUE_LANGUAGE.get(name))
    total, leaks = leaking_sentences(parsed.articles)
    assert total > 0
    rate = len(leaks) / total
    assert rate <= LEAK_THRESHOLD, (
        f"{name}: {len(leaks)} of {total} sentences ({rate:.3%}) still hold markup "
        f"(limit {LEAK_THRESHOLD:.1%}); first ones:\n" + "\n".join(repr(s[:300]) for s in leaks[:15]))


# The cleaner's private marks: holes, notes and formulas of dropped templates (\x03-\x05), angle
# brackets typed as entities (\ue005, \ue006), link marks (\ue000-\ue002).
_PRIVATE_MARKS = re.compile("[\x02-\x05\ue000-\ue006]")


@pytest.mark.parametrize("name", EVERY_DUMP)
def test_no_private_mark_reaches_an_article(parsed_dumps, name):
    """No sentence, heading, link anchor or target, category of a real dump holds one of the
    marks the cleaner puts in its text while it works."""
    parsed = parsed_dumps(name, TRUE_LANGUAGE.get(name))
    texts = [text for article in parsed.articles for text in (
        [s for *_, s in article.sentences()] + [section.heading for section in article.sections]
        + [link.anchor for link in article.links] + [link.target for link in article.links]
        + article.categories)]
    assert texts and not [t for t in texts if _PRIVATE_MARKS.search(t)]


# Pages whose wikitext types markup as entities, which MediaWiki shows as text: the fixture's
# "Polish notation" is in CDATA with its tags escaped ("&lt;ref&gt;"), so a reader sees "<ref>".
TYPED_MARKUP = {"enwiki-wikibrain-p.xml.bz2": {"Polish notation"}}

# The language a dump's text is in, where its siteinfo says otherwise (the user's --lang).
TRUE_LANGUAGE = {"dewiki-minidump-dbpedia.xml.bz2": "de"}


@pytest.mark.parametrize("name", EVERY_DUMP)
def test_pairs_hold_no_markup(parsed_dumps, name):
    """At most 0.2% of the queries and of the documents of each task hold markup, by the leak
    metric of the dump's language (its File/Category prefixes and image options included)."""
    parsed = parsed_dumps(name, TRUE_LANGUAGE.get(name))
    articles = [a for a in parsed.articles if a.title not in TYPED_MARKUP.get(name, ())]
    pairs = build_pairs_in_memory(articles, ["ict", "bfs", "wlp"], PairBuilder(PairConfig()))
    report = []
    for task, task_pairs in pairs.items():
        for side in ("query", "doc_text"):
            total, leaks = leaking_texts([getattr(p, side) for p in task_pairs], parsed.info["lang"])
            if total and len(leaks) / total > LEAK_THRESHOLD:
                report.append(f"{task} {side}: {len(leaks)} of {total}: " +
                              " | ".join(repr(t[:200]) for t in leaks[:3]))
    assert sum(map(len, pairs.values())) > 0, name
    assert not report, f"{name}:\n" + "\n".join(report)


# ---- Greek ------------------------------------------------------------------------------------

def test_elwiki_language_and_sentencex_splitter(elwiki_sample):
    info = elwiki_sample.info
    assert info["lang"] == "el"
    assert {a.lang for a in elwiki_sample.articles} == {"el"}
    # No punkt_tab model for Greek in ../shared/data/nltk_data: sentencex splits it.
    assert info["sentence_splitter"] == "sentencex:el", info["sentence_splitter"]


def test_elwiki_counts(elwiki_sample):
    counts = elwiki_sample.counts
    summary = f"counts: {dict(counts)}"
    assert counts["pages_read"] == 933, summary
    assert counts["redirects"] == 26, summary
    assert counts["skipped_namespace"] == 383, summary  # namespaces 4, 8 and 12
    assert 450 <= counts["articles"] <= 530, summary
    assert counts["pages_read"] == counts["articles"] + counts["redirects"] + \
        sum(_skipped(counts).values()), summary


# Sentences over 1,000 characters that really are one sentence in the source, with no sentence
# end inside, so no splitter can cut them:
#  - 'Ανδρέας Παπανδρέου': one 1,498-character sentence listing the foreign dignitaries at his
#    funeral, separated by commas and ending with "και πολλοί άλλοι.";
#  - 'Μυθολογία': one source line ": [[μυθολογία Ακάμπα]], (Akhaba) - [[μυθολογία Ακάν]], ..."
#    listing African mythologies separated by " - ", without a full stop.
LEGIT_LONG_SENTENCES = {"Ανδρέας Παπανδρέου", "Μυθολογία"}


def test_elwiki_no_overlong_sentences(elwiki_sample):
    long = [(a.title, s) for a in elwiki_sample.articles for *_, s in a.sentences() if len(s) > 1000]
    offenders = [(title, s) for title, s in long if title not in LEGIT_LONG_SENTENCES]
    assert not offenders and len(long) <= len(LEGIT_LONG_SENTENCES), (
        f"{len(long)} sentences over 1,000 characters, {len(offenders)} not known to be real "
        "sentences:\n" + "\n".join(f"{t} ({len(s)} chars): {s[:400]!r}" for t, s in offenders))


_BOUNDARY = re.compile(r"[.;!?]\s+[\"«(]?[Α-ΩΆΈΉΊΌΎΏA-Z]")


def test_elwiki_paragraphs_with_several_full_stops_are_split(elwiki_sample):
    """A paragraph holding two or more 'end mark, space, capital' boundaries is almost always
    several sentences; the trained Punkt model must split nearly all of them."""
    several = split = 0
    unsplit = []
    for article in elwiki_sample.articles:
        for section in article.sections:
            for paragraph in section.paragraphs:
                if len(_BOUNDARY.findall(" ".join(paragraph))) >= 2:
                    several += 1
                    if len(paragraph) > 1:
                        split += 1
                    else:
                        unsplit.append(paragraph[0])
    assert several >= 500, f"only {several} paragraphs with several full stops"
    assert split / several >= 0.9, (
        f"only {split} of {several} paragraphs with several full stops were split; unsplit:\n"
        + "\n".join(repr(p[:300]) for p in unsplit[:10]))


# ---- Punkt models ----------------------------------------------------------------------------

def test_english_uses_installed_punkt_tab(monkeypatch):
    monkeypatch.setenv("NLTK_DATA", str(NLTK_DATA))
    folder = SentenceSplitter.installed_model("en")
    assert folder is not None and folder.replace("\\", "/").endswith("tokenizers/punkt_tab/english")
    splitter = SentenceSplitter.for_language("en")
    assert splitter.source == "punkt_tab:english"
    assert splitter.split("Dr. Smith arrived in Washington. He was tired. Was he? Yes!") == \
        ["Dr. Smith arrived in Washington.", "He was tired.", "Was he?", "Yes!"]


def test_english_punkt_trained_on_the_dump_without_punkt_tab(monkeypatch, tmp_path):
    """No punkt_tab anywhere (NLTK_DATA is an empty folder, nltk.data.path has no folder with
    one) and --sentence-splitter punkt-trained: English is split by Punkt trained on the dump
    itself, and still split."""
    monkeypatch.setenv("NLTK_DATA", str(tmp_path))
    monkeypatch.setattr(nltk.data, "path", punkt_free_paths())
    assert SentenceSplitter.installed_model("en") is None
    counts, info = Counter(), {}
    articles = list(iter_articles(ParseConfig(inputs=[str(SAMPLE_DUMP)], output="",
                                              sentence_splitter="punkt-trained"), counts, info))
    assert info["lang"] == "en"
    assert info["sentence_splitter"].startswith("punkt-trained"), info["sentence_splitter"]
    paragraphs = [p for a in articles for s in a.sections for p in s.paragraphs]
    several = [p for p in paragraphs if len(_BOUNDARY.findall(" ".join(p))) >= 2]
    assert several, "the bundled sample should have paragraphs with several sentences"
    split = sum(1 for p in several if len(p) > 1)
    assert split / len(several) >= 0.9, f"{split} of {len(several)} paragraphs split"
    # The trained model splits plain text too.
    splitter = SentenceSplitter.for_language("en", [" ".join(p) for p in paragraphs],
                                             method="punkt-trained")
    assert splitter.source.startswith("punkt-trained")
    assert len(splitter.split("The river is long. It flows to the sea. Fish live in it.")) == 3


def test_truncated_and_sample_greek_dumps_hold_the_same_pages(elwiki_sample):
    """elwiki-sample is elwiki-truncated cut at its last complete page: same pages, same order."""
    truncated = wiki_file("elwiki-truncated.xml.xz")
    counts = Counter()
    pages = [(p.id, p.ns, p.title) for p in DumpFile(str(truncated)).pages(counts, allow_truncated=True)]
    assert counts["truncated_files"] == 1
    sample = [(p.id, p.ns, p.title) for p in DumpFile(str(elwiki_sample.path)).pages()]
    assert pages == sample
