"""Redirects: the RedirectMap on small inline tables, then end to end on the bundled sample."""
from __future__ import annotations

from collections import Counter
from importlib.resources import files

import pytest

from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.records import Redirect
from wikipairs.text.redirects import MAX_DEPTH, RedirectMap

SAMPLE = str(files("wikipairs") / "data" / "sample.xml.bz2")


def rmap(*pairs, **kwargs) -> RedirectMap:
    return RedirectMap([Redirect(s, t) for s, t in pairs], **kwargs)


# ---- the map itself --------------------------------------------------------------------------

def test_direct_redirect():
    m = rmap(("Vell River", "River Vell"))
    assert m.resolve("Vell River") == "River Vell"
    assert m.resolve("River Vell") == "River Vell"  # not a redirect: itself
    assert m.resolve("Unknown page") == "Unknown page"
    assert "Vell River" in m and "River Vell" not in m
    assert len(m) == 1


def test_chain_of_three_resolves_to_the_article():
    m = rmap(("VVU", "Vell University"), ("Vell University", "University of the Vell Valley"),
             ("University of the Vell Valley", "Vell Valley University"))
    for source in ("VVU", "Vell University", "University of the Vell Valley"):
        assert m.resolve(source) == "Vell Valley University", source
    assert m.resolve("Vell Valley University") == "Vell Valley University"
    assert m.cycles == set()


def test_chain_order_of_input_does_not_matter():
    pairs = [("A", "B"), ("B", "C"), ("C", "D"), ("D", "E")]
    forward, backward = rmap(*pairs), rmap(*reversed(pairs))
    assert [forward.resolve(x) for x in "ABCD"] == ["E"] * 4
    assert list(forward.rows()) == list(backward.rows())


def test_two_cycle_resolves_to_nothing():
    m = rmap(("Vell Bridge Trust", "Vell Bridge Company"),
             ("Vell Bridge Company", "Vell Bridge Trust"))
    assert m.resolve("Vell Bridge Trust") == "Vell Bridge Trust"
    assert m.resolve("Vell Bridge Company") == "Vell Bridge Company"
    assert m.final == {"Vell Bridge Trust": None, "Vell Bridge Company": None}
    assert m.cycles == {"Vell Bridge Trust", "Vell Bridge Company"}


def test_self_loop_resolves_to_nothing_but_is_listed():
    m = rmap(("Loop", "Loop"), ("A", "B"))
    assert m.resolve("Loop") == "Loop"
    assert "Loop" in m and len(m) == 2
    assert list(m.rows()) == [("A", "B", "B"), ("Loop", "Loop", None)]
    assert m.cycles == {"Loop"}


def test_chain_into_a_cycle():
    m = rmap(("X", "A"), ("A", "B"), ("B", "A"))
    assert m.resolve("X") == "X"
    assert m.final["X"] is None
    assert m.cycles == {"A", "B"}  # X leads into the cycle but is not part of it


def test_three_cycle():
    m = rmap(("A", "B"), ("B", "C"), ("C", "A"))
    assert [m.final[x] for x in "ABC"] == [None, None, None]
    assert [m.resolve(x) for x in "ABC"] == ["A", "B", "C"]


def test_chain_longer_than_max_depth():
    chain = [(f"P{i}", f"P{i + 1}") for i in range(5)]  # P0 -> ... -> P5: 5 hops
    assert rmap(*chain, max_depth=5).resolve("P0") == "P5"   # exactly max_depth hops
    short = rmap(*chain, max_depth=4)
    assert short.resolve("P0") == "P0" and short.final["P0"] is None
    assert short.resolve("P1") == "P5"                        # 4 hops from P1
    long_chain = [(f"Q{i}", f"Q{i + 1}") for i in range(MAX_DEPTH + 1)]
    default = rmap(*long_chain)
    assert default.resolve("Q0") == "Q0"
    assert default.resolve("Q1") == f"Q{MAX_DEPTH + 1}"


def test_rows_sorted_with_resolution():
    m = rmap(("VVU", "Vell University"), ("Vell University", "Vell Valley University"),
             ("Trust", "Company"), ("Company", "Trust"), ("Ossary", "Lake Ossary"))
    assert list(m.rows()) == [
        ("Company", "Trust", None),
        ("Ossary", "Lake Ossary", "Lake Ossary"),
        ("Trust", "Company", None),
        ("VVU", "Vell University", "Vell Valley University"),
        ("Vell University", "Vell Valley University", "Vell Valley University"),
    ]


def test_empty_map():
    m = RedirectMap()
    assert len(m) == 0 and list(m.rows()) == [] and m.resolve("Foo") == "Foo"


# ---- end to end on the bundled sample ------------------------------------------------------

EXPECTED_REDIRECT_ROWS = [
    ("Anna Keller (engineer)", "Anna Keller", "Anna Keller"),           # underscore target
    ("Flood of 1888", "Great Flood of 1888", "Great Flood of 1888"),
    ("Lantern festival", "Vell Valley Lantern Festival", "Vell Valley Lantern Festival"),
    ("Ossary", "Lake Ossary", "Lake Ossary"),
    ("University of the Vell Valley", "Vell Valley University", "Vell Valley University"),
    ("VVU", "Vell University", "Vell Valley University"),               # chain of three
    ("Vell Bridge Company", "Vell Bridge Trust", None),                 # 2-cycle
    ("Vell Bridge Trust", "Vell Bridge Company", None),
    ("Vell Railway stations", "Vell Railway", "Vell Railway"),          # to a section
    ("Vell River", "River Vell", "River Vell"),
    ("Vell University", "University of the Vell Valley", "Vell Valley University"),
]


@pytest.fixture(scope="module")
def sample():
    counts, info = Counter(), {}
    articles = {a.title: a for a in iter_articles(  # keep_lists: the list page links too
        ParseConfig(inputs=[SAMPLE], output="", keep_lists=True), counts, info)}
    return articles, counts, info


def links_from(article, raw_target):
    return [link for link in article.links if link.raw_target == raw_target]


def test_sample_redirect_table(sample):
    _, counts, info = sample
    redirects = info["redirects"]
    assert len(redirects) == 11
    assert counts["redirects"] == 11
    assert list(redirects.rows()) == EXPECTED_REDIRECT_ROWS


@pytest.mark.parametrize("article, raw_target, target, anchor", [
    ("Ardmere", "Vell River", "River Vell", "River Vell"),
    ("Ardmere", "VVU", "Vell Valley University", "university"),
    ("Kessingham", "Vell University", "Vell Valley University", "Vell University"),
    ("Edwin Marsh", "University of the Vell Valley", "Vell Valley University",
     "Vell Valley University"),
    ("Ardmere railway station", "Vell Railway stations", "Vell Railway",
     "other stations on the line"),
    ("Marrowfield", "Lantern festival", "Vell Valley Lantern Festival", "Lantern festival"),
    ("Old Bridge", "Anna Keller (engineer)", "Anna Keller", "Anna Keller"),
    ("List of bridges over the Vell", "Anna Keller (engineer)", "Anna Keller", "Anna Keller"),
    ("River Vell", "Flood of 1888", "Great Flood of 1888", "great flood of 1888"),
    ("Brannock", "Flood of 1888", "Great Flood of 1888", "the 1888 flood"),
    ("Brannock", "Ossary", "Lake Ossary", "Ossary"),
    ("Brannock pie", "Ossary", "Lake Ossary", "Ossary"),
])
def test_links_through_redirects(sample, article, raw_target, target, anchor):
    articles, _, _ = sample
    found = links_from(articles[article], raw_target)
    assert found, f"{article}: no link with raw_target {raw_target!r}"
    assert [(link.target, link.anchor) for link in found] == [(target, anchor)] * len(found)


@pytest.mark.parametrize("article, title", [
    ("Kessingham", "Vell Bridge Trust"),
    ("Old Bridge", "Vell Bridge Company"),
])
def test_cycle_links_keep_their_own_title(sample, article, title):
    articles, _, _ = sample
    found = links_from(articles[article], title)
    assert len(found) == 1, f"{article}: links to {title}: {found}"
    assert found[0].target == title and found[0].anchor == title


def test_no_link_targets_a_redirect(sample):
    """Every link whose target resolves lands on the final page, never on a redirect."""
    articles, _, info = sample
    resolvable = {s for s, _, r in EXPECTED_REDIRECT_ROWS if r is not None}
    for article in articles.values():
        for link in article.links:
            assert link.target not in resolvable, (article.title, link)
            if link.raw_target not in info["redirects"]:
                assert link.target == link.raw_target, (article.title, link)


def test_redirects_are_not_articles(sample):
    articles, _, _ = sample
    assert not set(articles) & {s for s, _, _ in EXPECTED_REDIRECT_ROWS}


def test_a_redirect_to_another_wiki_is_no_article_and_no_edge(tmp_path):
    """#REDIRECT [[wikt:foo]] and [[:fr:Bar]] are redirects MediaWiki does not follow: the pages
    are not articles ("REDIRECT foo" was one), counted as skipped_redirect_elsewhere, and links
    to them resolve to nothing else."""
    from conftest import write_fake_dump
    dump = write_fake_dump(tmp_path / "d.xml", [
        ("Foo", "#REDIRECT [[wikt:foo]]"), ("Bar", "#REDIRECT [[:fr:Bar]]"),
        ("Qux", "#REDIRECT [[Baz]]"),
        ("Baz", "Baz is a thing that links [[Foo]], [[Bar]] and [[Qux]] a lot.")])
    counts = Counter()
    articles = list(iter_articles(ParseConfig(inputs=[str(dump)], output=""), counts))
    assert [a.title for a in articles] == ["Baz"]
    assert [link.target for link in articles[0].links] == ["Foo", "Bar", "Baz"]
    assert counts["skipped_redirect_elsewhere"] == 2 and counts["redirects"] == 1, counts
