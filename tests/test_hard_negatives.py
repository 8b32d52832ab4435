"""`build --hard-negatives N` (wikipairs/pairs/negatives.py): the rules on small articles, the
in-memory reference against the Beam build on a real densely linked dump, 1 worker = 2 workers,
and the neg_* columns in both formats."""
from __future__ import annotations

import glob
import hashlib
import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import describe, run_cli, wiki_file
from wikipairs.pairs.negatives import attach_wlp_negatives, wlp_candidates
from wikipairs.pairs.tasks import PairBuilder, PairConfig, approx_token_count, build_pairs_in_memory
from wikipairs.records import Article, Negative, Pair, Section
from wikipairs.schemas import HARD_NEGATIVES
from wikipairs.shards.pair_shards import pair_row
from wikipairs.shards.tfrecord import read_tfrecords

DUMP = "enwiki-apache-category.xml.bz2"
N = 2


def sentence(topic: str, k: int) -> str:
    return f"The {topic} has a remarkable property number {k} that scholars discuss at length."


def article(page_id: int, title: str, sections: int, per_section: int = 2) -> Article:
    """One paragraph per section; doc_max_tokens below makes one passage per sentence pair."""
    return Article(id=page_id, title=title, lang="en", sections=[
        Section(heading=f"S{s}" if s else "", level=2 if s else 0,
                paragraphs=[[sentence(f"{title} s{s} p", k) for k in range(per_section)]])
        for s in range(sections)], links=[])


def builder(n: int = N, seed: int = 0) -> PairBuilder:
    return PairBuilder(PairConfig(seed=seed, doc_max_tokens=40, hard_negatives=n),
                       approx_token_count, Counter())


def test_page_negatives_follow_the_rules():
    a = article(7, "Lion", sections=4)
    b = builder()
    passages = b.passages(a)
    assert len({p.section for p in passages}) == 4
    for task in ("ict", "bfs"):
        pairs = getattr(b, task)(a, passages)
        assert pairs
        for pair in pairs:
            assert len(pair.negatives) == N
            chosen = pair.negatives
            ids = [n.passage_id for n in chosen]
            assert pair.passage_id not in ids, "the positive is never its own negative"
            assert len(set(ids)) == N
            for n in chosen:
                assert n.page_id == a.id and n.title == a.title
                assert pair.query not in n.text
                assert n.doc_id == hashlib.sha1(f"{n.title}\n{n.text}".encode()).hexdigest()[:16]
                section = next(p.section for p in passages if p.text() == n.text)
                assert section != pair.doc_section, "other sections come first (4 sections here)"
                if task == "bfs":
                    assert section != 0, "BFS never takes the lead, which holds its queries"
    # deterministic, and the seed matters
    again = builder().ict(a, builder().passages(a))
    assert [p.negatives for p in again] == [p.negatives for p in b.ict(a, passages)]
    other = [p.negatives for p in builder(seed=1).ict(a, passages)]
    assert other != [p.negatives for p in again]


def test_short_pages_and_queries_in_candidates_are_counted():
    a = article(8, "Owl", sections=1, per_section=4)  # one section: two passages of two sentences
    b = builder(n=3)
    pairs = b.ict(a, b.passages(a))
    assert pairs and all(len(p.negatives) <= 1 for p in pairs)
    assert b.counts["ict_hard_negatives_short"] >= 2 * len(pairs)
    # a candidate passage that holds the query sentence is never a negative
    dup = article(9, "Bat", sections=3)
    dup.sections[2].paragraphs[0][0] = dup.sections[1].paragraphs[0][0]
    b = builder(n=5)
    for pair in b.ict(dup, b.passages(dup)):
        assert all(pair.query not in n.text for n in pair.negatives)
    assert b.counts["ict_hard_negative_holds_query"] >= 1


def _pair(query_page: int, doc_page: int, doc_title: str) -> Pair:
    return Pair(pair_id=f"{query_page:08x}{doc_page:08x}", passage_id="p", doc_id="d", task="wlp",
                lang="en", query="Query text of the page.", query_page_id=query_page,
                query_title=f"Q{query_page}", query_section=0, query_paragraph=0,
                query_sentence=0, doc_page_id=doc_page, doc_title=doc_title, doc_section=0,
                doc_passage=0, doc_text="text")


def _neg(page: int) -> Negative:
    return Negative(f"p{page}", page, f"T{page}", f"first passage of {page}", f"d{page}")


def test_wlp_negatives_leave_out_pages_that_link_back():
    # page 1 is linked from 2 and 3; it links to 3 (links back), 4, 5 and itself
    pairs = [_pair(1, 2, "T2"), _pair(1, 3, "T3")]
    counts = Counter()
    attach_wlp_negatives(pairs, [_neg(3), _neg(4), _neg(5), _neg(1), _neg(4)], 3, 0, counts)
    for pair in pairs:
        assert sorted(n.page_id for n in pair.negatives) == [4, 5]
    assert counts["wlp_hard_negatives_short"] == 2
    # candidates go to the pages that link to the query page: its documents' pages
    assert wlp_candidates(pairs, _neg(1)) == [("T2", _neg(1)), ("T3", _neg(1))]
    assert wlp_candidates(pairs, None) == []


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hard-negatives")
    out = {}
    for workers in ("1", "2"):
        out[workers] = folder / f"w{workers}"
        result = run_cli("build", "-i", wiki_file(DUMP), "-o", out[workers], "--workers", workers,
                         "--hard-negatives", str(N), "--num-shards", "2")
        assert result.returncode == 0, describe(result)
    return out


def _shard_digests(folder: Path) -> dict[str, str]:
    return {str(Path(f).relative_to(folder)): hashlib.sha256(Path(f).read_bytes()).hexdigest()
            for f in sorted(glob.glob(str(folder / "*" / "*" / "part-*")))}


def _rows(folder: Path, task: str) -> list[dict]:
    files = sorted(glob.glob(str(folder / "parquet" / task / "part-*.parquet")))
    return sorted((r for f in files for r in pq.read_table(f).to_pylist()),
                  key=lambda r: r["pair_id"])


def test_build_equals_the_in_memory_reference(builds, parsed_dumps):
    articles = parsed_dumps(DUMP).articles
    builder = PairBuilder(PairConfig(hard_negatives=N), approx_token_count, Counter())
    reference = build_pairs_in_memory(articles, ("ict", "bfs", "wlp"), builder)
    stats = json.loads((builds["1"] / "stats.json").read_text())["counters"]
    for task, pairs in reference.items():
        expected = [pair_row(p, approx_token_count, with_negatives=True) for p in pairs]
        rows = _rows(builds["1"], task)
        assert [r["pair_id"] for r in rows] == [r["pair_id"] for r in expected], task
        assert rows == expected, task
        with_negatives = sum(1 for r in rows if r["neg_doc_id"])
        assert with_negatives > len(rows) / 4, (task, with_negatives, len(rows))
        assert stats.get(f"{task}_hard_negatives_short", 0) == \
            builder.counts.get(f"{task}_hard_negatives_short", 0)


def test_workers_give_the_same_shards(builds):
    one, two = _shard_digests(builds["1"]), _shard_digests(builds["2"])
    assert one and one == two


def test_both_formats_carry_the_columns(builds):
    names = [f.name for f in HARD_NEGATIVES]
    tf_file = sorted(glob.glob(str(builds["1"] / "tfrecord" / "wlp" / "part-*")))[0]
    records = list(read_tfrecords(tf_file))
    assert records
    for name in names:
        assert name.encode() in records[0]
    rows = _rows(builds["1"], "wlp")
    for row in rows:
        assert len({len(row[name]) for name in names}) == 1
        assert row["doc_page_id"] not in row["neg_page_id"]
        assert row["query_page_id"] not in row["neg_page_id"]


def test_default_builds_have_no_negative_columns(tmp_path):
    out = tmp_path / "out"
    result = run_cli("build", "-i", wiki_file("enwiki-sample-gensim.xml.bz2"), "-o", out,
                     "--workers", "1", "--task", "ict", "--format", "parquet")
    assert result.returncode == 0, describe(result)
    shard = sorted(glob.glob(str(out / "parquet" / "ict" / "part-*.parquet")))[0]
    assert not any(name.startswith("neg_") for name in pq.read_schema(shard).names)


def test_token_ids_of_the_negatives(tmp_path):
    """With --vocab: neg_ids holds each negative's ids as doc_ids would be, neg_ids_lengths
    their lengths."""
    from wikipairs.pairs.vocab import Tokenizer
    model = tmp_path / "v.model"
    result = run_cli("vocab", "-q", "-i", wiki_file("enwiki-sample-gensim.xml.bz2"), "-o", model,
                     "--vocab-size", "500", "--max-sentences", "3000")
    assert result.returncode == 0, describe(result)
    out = tmp_path / "out"
    result = run_cli("build", "-i", wiki_file("enwiki-sample-gensim.xml.bz2"), "-o", out,
                     "--workers", "1", "--task", "bfs", "--format", "parquet", "--vocab", model,
                     "--hard-negatives", "2")
    assert result.returncode == 0, describe(result)
    tokenizer = Tokenizer(str(model))
    rows = _rows(out, "bfs")
    assert rows and any(r["neg_ids_lengths"] for r in rows)
    for row in rows[:200]:
        assert sum(row["neg_ids_lengths"]) == len(row["neg_ids"])
        at = 0
        for title, text, length in zip(row["neg_title"], row["neg_text"], row["neg_ids_lengths"]):
            assert row["neg_ids"][at:at + length] == tokenizer.encode_pair(title, text, 288)
            at += length
