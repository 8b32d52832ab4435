"""`build --ict-queries N` (PairConfig.ict_queries): up to N ICT pairs per passage, each with
another query sentence. Oracle: N=1 is the default build, pair for pair, and every N>1 build holds
it; each pair of N>1 is what the ICT rule makes of its query sentence (the passage without it)."""
from __future__ import annotations

import json
from collections import Counter, defaultdict
import pytest

from wikipairs.pairs.tasks import PairBuilder, PairConfig
from wikipairs.parse import ParseConfig, iter_articles

from conftest import SAMPLE_DUMP, assert_one_line_error, run_cli


@pytest.fixture(scope="module")
def articles():
    return list(iter_articles(ParseConfig(inputs=[str(SAMPLE_DUMP)], output="")))


def ict(articles, **config) -> list:
    builder = PairBuilder(PairConfig(**config))
    return [p for a in articles for p in builder.ict(a)]


def test_one_query_is_the_default_and_every_larger_n_keeps_it(articles):
    default = ict(articles)
    assert ict(articles, ict_queries=1) == default
    by_id = {p.pair_id: p for p in ict(articles, ict_queries=3)}
    assert all(by_id.get(p.pair_id) == p for p in default)


def test_each_passage_gives_up_to_n_distinct_queries_deterministically(articles):
    default = ict(articles)
    pairs = ict(articles, ict_queries=3)
    assert pairs == ict(articles, ict_queries=3)
    assert len(set(p.pair_id for p in pairs)) == len(pairs)
    per_passage = defaultdict(list)
    for p in pairs:
        per_passage[p.passage_id].append(p)
    sizes = Counter(len(v) for v in per_passage.values())
    assert max(sizes) == 3 and 2 * len(default) < len(pairs) <= 3 * len(default), sizes
    builder = PairBuilder(PairConfig())
    passages = {(a.id, x.index): x for a in articles for x in builder.passages(a)}
    for group in per_passage.values():
        queries = [(p.query_paragraph, p.query_sentence) for p in group]
        assert len(set(queries)) == len(queries), "one passage gave the same query twice"
        for p in group:  # the ICT rule: the document is the passage without the query
            passage = passages[(p.doc_page_id, p.doc_passage)]
            k = [(a, b) for a, b, _ in passage.sentences].index(
                (p.query_paragraph, p.query_sentence))
            assert passage.sentences[k][2] == p.query and not p.query_in_doc
            assert passage.text(k).startswith(p.doc_text), p.pair_id


def test_more_queries_than_sentences_takes_them_all(articles):
    builder = PairBuilder(PairConfig(ict_queries=1000))
    for article in articles[:10]:
        for passage in builder.passages(article):
            queries = builder._ict_queries(article, passage)
            usable = [k for k, (_, _, t) in enumerate(passage.sentences)
                      if builder._query_problem(t) is None]
            assert sorted(queries) == usable


def test_a_sentence_that_cannot_be_a_query_is_passed_over(articles):
    """Every passage of two or more sentences with a usable one gives its pair; where the seeded
    first choice is usable it is the query (the rule of before), else the next usable sentence
    in the seeded order of the other queries."""
    from wikipairs.pairs.sampling import choose, sample
    builder = PairBuilder(PairConfig())
    by_passage = {(p.doc_page_id, p.doc_passage): p for p in ict(articles)}
    passed_over = 0
    for article in articles:
        for passage in builder.passages(article):
            n = len(passage.sentences)
            usable = [k for k, (_, _, t) in enumerate(passage.sentences)
                      if builder._query_problem(t) is None]
            pair = by_passage.get((article.id, passage.index))
            if n < 2 or not usable:
                assert pair is None
                continue
            first = choose(n, 0, "ict", article.id, passage.index)
            if first in usable:
                expected = first
            else:
                passed_over += 1
                expected = min((k for k in usable),
                               key=lambda k: sample(0, "ict-more", article.id, passage.index, k))
            assert pair is not None and pair.query == passage.sentences[expected][2]
    assert passed_over > 0  # the sample holds such passages: the rule was exercised


def test_keep_rate_applies_to_every_query(articles):
    pairs = ict(articles, ict_queries=3, ict_keep_rate=0.5)
    kept = [p for p in pairs if p.query_in_doc]
    assert 0.35 < len(kept) / len(pairs) < 0.65
    assert all(p.query in p.doc_text for p in kept)


def test_cli_passes_the_option_and_refuses_zero(tmp_path):
    out = tmp_path / "out"
    result = run_cli("build", "--task", "ict", "--ict-queries", "2", "--format", "parquet",
                     "-o", out, "--workers", "1")
    assert result.returncode == 0, result.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["pairs"]["ict_queries"] == 2
    assert "gives up to 2 pairs, one per query sentence" in (out / "README.md").read_text()
    assert_one_line_error(run_cli("build", "--ict-queries", "0", "-o", tmp_path / "bad"),
                          "--ict-queries")


def test_a_label_of_an_unspaced_script_is_no_query():
    """Chinese and Japanese characters count as words (token_count), so a name or a list item
    ("上野病院", "監督 - 荒牧伸志") passed the four-token minimum: a text of such a script that does
    not end as a sentence needs twice the minimum; a sentence with its 。 does not."""
    from wikipairs.pairs.tasks import PairBuilder, PairConfig
    builder = PairBuilder(PairConfig())
    assert builder._query_problem("上野病院") == "short"
    assert builder._query_problem("監督 - 荒牧伸志") == "short"
    assert builder._query_problem("東京は首都。") is None
    assert builder._query_problem("Four words list item") is None
    # Thai and Lao end no sentence with a mark: no Thai sentence is a label for lack of one
    assert builder._query_problem("แมวกินปลาทุกวัน") is None


def test_a_sentence_said_twice_is_no_query_and_no_document_holds_its_query():
    """A passage that holds a sentence twice ("The value is not known at this time." twice, or
    "Sources: Census.gov" under two tables) would give an ICT document holding its query, and a
    lead sentence said again in a section a BFS document holding its query: neither is made."""
    from conftest import page_article
    article = page_article("en", "Dup is a page about repeated sentences in prose. The value is "
                                 "not known at this time. The value is not known at this time.\n\n"
                                 "== Body ==\nA body sentence is here for the section. Dup is a page "
                                 "about repeated sentences in prose.")
    builder = PairBuilder(PairConfig(ict_queries=5, min_query_tokens=1))
    pairs = builder.ict(article)
    assert pairs and all(p.query not in p.doc_text for p in pairs), pairs
    assert [p.query for p in pairs if p.doc_section == 0] == [
        "Dup is a page about repeated sentences in prose."]
    assert builder.counts["ict_skipped_repeated_query"] == 2
    repeated = page_article("en", "The lead has a first sentence here. The lead has a second "
                                  "sentence here.\n\n== Body ==\nThe lead has a first sentence "
                                  "here. The lead has a second sentence here. A new one is here.")
    builder = PairBuilder(PairConfig(min_query_tokens=1))
    assert builder.bfs(repeated) == [] and builder.counts["bfs_skipped_query_in_doc"] == 1
