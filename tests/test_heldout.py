"""The held-out split of `wikipairs build` (issue 20): decided by the query page, the same side in
every task, eval queries that are train queries left out; on the builds of every real dump."""
from __future__ import annotations

import json
import os
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import WIKI, run_cli, describe
from wikipairs.pairs.heldout import (BUCKETS, eval_threshold, in_sorted, page_bucket,
                                     page_buckets, query_key, split_of)
from wikipairs.pairs.tasks import assign_splits
from wikipairs.records import Pair

EVERY_DUMP = sorted(p.name for p in WIKI.glob("*.xml*"))
TASKS = ("ict", "bfs", "wlp")


# ---- units -------------------------------------------------------------------------------------

def test_page_bucket_is_pinned_and_vectorized():
    ids = [0, 1, 2, 12, 594, 752, 2**31 - 1, 2**31, 70_000_000_123]
    assert [page_bucket(i) for i in ids] == page_buckets(ids).tolist()
    # pinned: a build and a trainer of another version must agree on these
    assert [page_bucket(i) for i in ids[:6]] == [4223, 4920, 1970, 4352, 1313, 2619]


def test_eval_share_and_threshold():
    ids = np.arange(1, 200_001)
    share = (page_buckets(ids) < eval_threshold(5)).mean()
    assert 0.045 < share < 0.055
    assert eval_threshold(0) == 0 and eval_threshold(5) == 500 and eval_threshold(2.5) == 250
    assert 0 <= page_buckets(ids).min() and page_buckets(ids).max() < BUCKETS
    with pytest.raises(ValueError):
        eval_threshold(100)
    assert {split_of(i, 0) for i in range(1000)} == {"train"}


def test_tensorflow_computes_the_same_bucket():
    tf = pytest.importorskip("tensorflow")
    from trainer.data import tf_page_bucket
    ids = [0, 1, 12, 594, 2**31 - 1, 2**31, 70_000_000_123, 123_456_789]
    assert [int(tf_page_bucket(tf.constant(i, tf.int64))) for i in ids] == page_buckets(ids).tolist()


def test_query_key_normalizes_case_and_space():
    assert query_key("The  cat sat.") == query_key("the cat\nsat.")
    assert query_key("The cat sat.") != query_key("The cat sat!")
    assert -2**63 <= query_key("x") < 2**63


def test_in_sorted_agrees_with_isin():
    rng = np.random.default_rng(0)
    keys = np.unique(rng.integers(-2**63, 2**63 - 1, 5000, dtype=np.int64))
    probes = np.concatenate([rng.choice(keys, 300), rng.integers(-2**63, 2**63 - 1, 700,
                                                                  dtype=np.int64),
                             [keys[0], keys[-1], np.iinfo(np.int64).min, np.iinfo(np.int64).max]])
    assert in_sorted(keys, probes).tolist() == np.isin(probes, keys).tolist()
    assert in_sorted(keys, probes).sum() >= 302  # the test can fail: hits are there
    assert in_sorted(keys[:0], probes).tolist() == [False] * len(probes)
    assert in_sorted(keys, probes[:0]).tolist() == []


def _pair(task, page, query, n=0):
    return Pair(pair_id=f"{task}{page}{n}", passage_id="", doc_id="", task=task, lang="en",
                query=query, query_page_id=page, query_title=str(page), query_section=0,
                query_paragraph=0, query_sentence=n, doc_page_id=page, doc_title=str(page),
                doc_section=0, doc_passage=0, doc_text="d")


def test_assign_splits_drops_eval_queries_seen_in_train():
    eval_page = next(i for i in range(1, 1000) if split_of(i, 5) == "eval")
    train_page = next(i for i in range(1, 1000) if split_of(i, 5) == "train")
    pairs = {"ict": [_pair("ict", eval_page, "Shared sentence."), _pair("ict", eval_page, "Own.", 1)],
             "wlp": [_pair("wlp", train_page, "shared  SENTENCE.")]}
    counts = Counter()
    assign_splits(pairs, 5, counts)
    assert [(p.query, p.split) for p in pairs["ict"]] == [("Own.", "eval")]
    assert [p.split for p in pairs["wlp"]] == ["train"]
    assert counts == {"ict_eval_dropped_query_on_train_page": 1}


# ---- every real dump ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def every_build(tmp_path_factory):
    """Each real dump built once (all tasks, 20% eval pages: both sides big enough to collide),
    one single-process build per core at a time (the builds are independent)."""
    def build(name):
        folder = tmp_path_factory.mktemp("heldout") / name.split(".")[0]
        args = ["-q", "-i", str(WIKI / name), "-o", str(folder), "--format", "parquet",
                "--eval-percent", "20", "--workers", "1"]
        if "truncated" in name:
            args.append("--allow-truncated")
        result = run_cli("build", *args, timeout=600)
        assert result.returncode == 0, name + describe(result)
        return name, folder

    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        return dict(pool.map(build, EVERY_DUMP))


def _rows(folder, task):
    return pq.read_table(folder / "parquet" / task,
                         columns=["query", "query_page_id", "split"]).to_pylist()


def test_no_query_page_and_no_query_text_on_both_sides(every_build):
    totals = Counter()
    for name, folder in every_build.items():
        stats = json.loads((folder / "stats.json").read_text())
        pages, texts = {"train": set(), "eval": set()}, {"train": set(), "eval": set()}
        for task in TASKS:
            rows = _rows(folder, task)
            split_counts = Counter(r["split"] for r in rows)
            assert dict(stats["tasks"][task]["splits"]) == {
                "train": split_counts["train"], "eval": split_counts["eval"]}, (name, task)
            for r in rows:
                assert r["split"] == split_of(r["query_page_id"], 20), (name, task, r)
                pages[r["split"]].add(r["query_page_id"])
                texts[r["split"]].add(query_key(r["query"]))
            totals[f"{task}_eval"] += split_counts["eval"]
            totals[f"{task}_dropped"] += stats["tasks"][task]["eval_dropped_query_on_train_page"]
        assert not pages["train"] & pages["eval"], name
        assert not texts["train"] & texts["eval"], name
        totals["dumps_with_both_sides"] += bool(pages["train"] and pages["eval"])
    print(dict(totals))
    assert totals["dumps_with_both_sides"] >= 12
    assert all(totals[f"{t}_eval"] > 0 for t in TASKS)
    assert sum(totals[f"{t}_dropped"] for t in TASKS) > 0, "the query text rule is exercised"
