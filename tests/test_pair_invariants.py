"""Page shapes that once put links in the wrong place: the lead is only an infobox or templates.

The real-dump versions of these invariants are in test_real_dumps.py (every dump in
../shared/data/wiki); here small dumps show the shape alone, through the parser and `build`.
"""
from __future__ import annotations

from collections import Counter

import pyarrow.parquet as pq

from conftest import describe, run_cli, write_fake_dump
from wikipairs.pairs.tasks import PairBuilder, PairConfig, build_pairs_in_memory
from wikipairs.parse import ParseConfig, iter_articles

# B's lead is an infobox only; its first section has no link, the second links to Alpha.
EMPTY_LEAD = "{{Infobox settlement\n| name = Beta\n| country = [[Gamma]]\n}}\n" \
    "== History ==\nBeta was founded by farmers long ago. They grew wheat and barley there.\n" \
    "== Trade ==\nThe town trades with [[Alpha]] across the river. Merchants came every year."
ALPHA = "'''Alpha''' is a town on the river bank. It has a bridge and a market square.\n" \
    "== Name ==\nThe name is old and its meaning is not known to anyone."


def _articles(path):
    return list(iter_articles(ParseConfig(inputs=[str(path)], output=""), Counter(), {}))


def test_links_after_a_lead_without_text_are_in_their_section(tmp_path):
    dump = write_fake_dump(tmp_path / "wiki.xml", [("Beta", EMPTY_LEAD), ("Alpha", ALPHA)])
    beta = {a.title: a for a in _articles(dump)}["Beta"]
    assert beta.sections[0].level == 0 and not beta.sections[0].paragraphs
    assert [s.heading for s in beta.sections] == ["", "History", "Trade"]
    (link,) = [link for link in beta.links if link.target == "Alpha"]
    sentence = beta.sections[link.section].paragraphs[link.paragraph][link.sentence]
    assert (link.section, sentence[link.start:link.end]) == (2, "Alpha"), (link, sentence)
    hidden = [link for link in beta.links if link.target == "Gamma"]
    assert [(x.section, x.start) for x in hidden] == [(-1, -1)]  # in the infobox: no position


def test_wlp_document_of_a_page_without_lead_text_holds_the_link(tmp_path):
    dump = write_fake_dump(tmp_path / "wiki.xml", [("Beta", EMPTY_LEAD), ("Alpha", ALPHA)])
    (pair,) = build_pairs_in_memory(_articles(dump), ["wlp"], PairBuilder(PairConfig()))["wlp"]
    assert (pair.query_title, pair.doc_title, pair.link_anchor) == ("Alpha", "Beta", "Alpha")
    assert pair.link_in_doc and "trades with Alpha across" in pair.doc_text, pair
    # The same through `wikipairs build`, on Beam.
    out = tmp_path / "out"
    result = run_cli("build", "--task", "wlp", "-i", dump, "-o", out, "--format", "parquet")
    assert result.returncode == 0, describe(result)
    rows = [row for shard in sorted((out / "parquet" / "wlp").glob("*.parquet"))
            for row in pq.read_table(shard).to_pylist()]
    assert [(r["doc_title"], r["link_in_doc"], r["doc_section"]) for r in rows] == \
        [("Beta", True, 2)], rows
    assert "trades with Alpha across" in rows[0]["doc_text"]
