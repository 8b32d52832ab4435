"""`wikipairs train pretrain|finetune --distinct-pages` (issue 17, clean negatives): batches of B
rows without duplicate query pages, chosen from 2B candidates read as without the option (the
rule in trainer/data.py's docstring). On the bundled sample (built here with `wikipairs vocab`
and `wikipairs build --vocab`): both readers give batches of distinct pages, exactly the
candidates' first rows of each page; on a one-file shard with few pages the fill rule, with the
same batches from the Parquet and the TFRecord reader; a short `train pretrain` run.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

pytest.importorskip("tensorflow")

from conftest import SAMPLE_DUMP, cli_command, describe, run_cli  # noqa: E402
from test_hard_negatives_trainer import ENV, make_rows, write_shards  # noqa: E402

from wikipairs.trainer import data  # noqa: E402

B = 8
LQ, LD = 16, 32


@pytest.fixture(scope="module")
def sample_shards(tmp_path_factory) -> Path:
    """Pair shards (Parquet + TFRecord, token ids) of the bundled sample: 29 articles."""
    root = tmp_path_factory.mktemp("distinct-pages")
    model = root / "spm.model"
    result = run_cli("vocab", "-i", SAMPLE_DUMP, "-o", model, "--vocab-size", "1000")
    assert result.returncode == 0, describe(result)
    result = run_cli("build", "-i", SAMPLE_DUMP, "-o", root / "pairs", "--vocab", model,
                     "--workers", "1", "--quiet")
    assert result.returncode == 0, describe(result)
    return root / "pairs"


def _key(q, d) -> tuple:
    return tuple(int(x) for x in q if x), tuple(int(x) for x in d if x)


def ids_to_column(shards: Path, column: str) -> dict[tuple, set]:
    """(query ids, doc ids) as the readers fit them -> the `column` values of such pairs."""
    out: dict[tuple, set] = {}
    for path in sorted(shards.glob("parquet/*/part-*.parquet")):
        rows = pq.read_table(path, columns=["query_ids", "doc_ids", column]).to_pylist()
        for r in rows:
            q = data.pad_ids(np.array(r["query_ids"]), np.array([len(r["query_ids"])]), LQ)[0]
            d = data.pad_ids(np.array(r["doc_ids"]), np.array([len(r["doc_ids"])]), LD)[0]
            out.setdefault(_key(q, d), set()).add(r[column])
    return out


def _pages_of(shards: Path) -> dict[tuple, set]:
    """(query ids, doc ids) as the readers fit them -> the query pages of such pairs."""
    return ids_to_column(shards, "query_page_id")


def _page(pages: dict, q, d) -> int:
    found = pages[_key(q, d)]
    assert len(found) == 1, found  # these ids name one query page
    return next(iter(found))


def _readers(shards, **kw):
    return {"np": lambda **k: data.numpy_batches(shards, **{**kw, **k}),
            "tf": lambda **k: data.tf_dataset(shards, **{**kw, **k}).as_numpy_iterator()}


def _same(a: dict, b: dict) -> bool:
    return set(a) == set(b) and all(np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes()
                                    for k in a)


def test_both_readers_give_distinct_pages_from_the_2b_candidates(sample_shards):
    """Mixed tasks, seeded shuffle: every batch of B = 8 has 8 query pages; it is exactly the
    rows `distinct_page_rows` picks from the batch of 2B the reader gives without the option
    (same mix, same shuffle); no query_page_id in the batch; deterministic under the seed."""
    pages = _pages_of(sample_shards)
    kw = dict(batch_size=B, seed=5, shuffle_buffer=100, max_query_len=LQ, max_doc_len=LD,
              negative_keys=True)
    for name, reader in _readers(sample_shards, **kw).items():
        distinct, again = reader(distinct_pages=True), reader(distinct_pages=True)
        candidates = reader(batch_size=2 * B)  # without the option
        some_duplicates = False
        for _ in range(4):
            b, c = next(distinct), next(candidates)
            assert set(b) == {"query_ids", "doc_ids", data.NEGATIVE_KEYS}, name
            assert b["doc_ids"].shape == (B, LD) and b["doc_ids"].dtype == np.int32, name
            rows = [_page(pages, q, d) for q, d in zip(b["query_ids"], b["doc_ids"])]
            assert len(set(rows)) == B, (name, rows)
            candidate_pages = [_page(pages, q, d) for q, d in zip(c["query_ids"], c["doc_ids"])]
            some_duplicates |= len(set(candidate_pages)) < 2 * B
            pick = data.distinct_page_rows(candidate_pages, B)
            assert _same(b, {k: v[pick] for k, v in c.items()}), name
            assert _same(b, next(again)), name
        assert some_duplicates, name  # the option had something to leave out


def test_distinct_page_rows_rule():
    assert data.distinct_page_rows([7, 7, 3, 3, 9, 9, 1, 2], 4).tolist() == [0, 2, 4, 6]
    # 3 pages for 4 rows: the first duplicate fills the batch
    assert data.distinct_page_rows([1, 1, 2, 2, 3, 3, 1, 2], 4).tolist() == [0, 1, 2, 4]
    assert data.distinct_page_rows([5] * 8, 4).tolist() == [0, 1, 2, 3]


@pytest.fixture(scope="module")
def few_pages(tmp_path_factory) -> Path:
    """One shard file (both formats) of 16 pairs whose query pages are
    1 1 2 2 3 3 1 2 | 4 5 6 7 4 5 6 7."""
    rows = make_rows(with_negatives=False)
    for row, page in zip(rows, [1, 1, 2, 2, 3, 3, 1, 2, 4, 5, 6, 7, 4, 5, 6, 7]):
        row["query_page_id"] = page
    return write_shards(tmp_path_factory.mktemp("few-pages"), rows)


def test_fill_rule_and_the_same_batches_from_both_readers(few_pages):
    """B = 4, unshuffled: batch 1 from candidates 0-7 (3 pages) is rows 0, 2, 4 and the filling
    duplicate 1; batch 2 from 8-15 is rows 8-11; then fewer than 2B rows are left: the end.
    Both readers give these batches (their ids byte for byte)."""
    rows = make_rows(with_negatives=False)
    kw = dict(tasks=None, batch_size=4, max_query_len=8, max_doc_len=LD, split="all",
              shuffle=False, repeat=False, negative_keys=True)
    got = {}
    for name, reader in _readers(few_pages, **kw).items():
        got[name] = list(reader(distinct_pages=True))
        assert len(got[name]) == 2, name
        for batch, picked in zip(got[name], ([0, 1, 2, 4], [8, 9, 10, 11])):
            expected = [rows[i]["doc_ids"] for i in picked]
            assert [[int(x) for x in d if x] for d in batch["doc_ids"]] == expected, name
    ids = ("query_ids", "doc_ids")  # (the key hashes differ: blake2b and TensorFlow's)
    assert all(_same({k: a[k] for k in ids}, {k: b[k] for k in ids})
               for a, b in zip(got["np"], got["tf"]))
    # without the option: the readers' batches of before (rows 0-3, 4-7, ...)
    plain = list(data.numpy_batches(few_pages, **kw))
    assert len(plain) == 4 and _same(plain[0], next(iter(data.numpy_batches(
        few_pages, distinct_pages=False, **kw))))
    assert [[int(x) for x in d if x] for d in plain[1]["doc_ids"]] == \
        [rows[i]["doc_ids"] for i in range(4, 8)]


def test_one_page_fills_every_batch(tmp_path):
    rows = make_rows(with_negatives=False)
    for row in rows:
        row["query_page_id"] = 42
    shards = write_shards(tmp_path, rows)
    kw = dict(tasks=None, batch_size=4, max_query_len=8, max_doc_len=LD, split="all",
              shuffle_buffer=8, seed=1, distinct_pages=True)
    for name, reader in _readers(shards, **kw).items():
        it = reader()
        batches = [next(it) for _ in range(6)]  # repeat: no end, no hang
        assert all(b["doc_ids"].shape == (4, LD) for b in batches), name


def test_train_pretrain_distinct_pages(sample_shards, tmp_path):
    """A few BoW steps with --distinct-pages on the JAX backend (Parquet) exit 0; the setting is
    in train_config.json."""
    out = tmp_path / "run"
    argv, env = cli_command("train", "pretrain", "-d", sample_shards, "-o", out, "--model", "bow",
                            "--model-opt", f"max_query_len={LQ}", "--model-opt",
                            f"max_doc_len={LD}", "--batch-size", "8", "--steps", "3",
                            "--eval-batches", "0", "--no-tensorboard", "--shuffle-buffer", "64",
                            "--distinct-pages", "--quiet")
    result = subprocess.run(argv, env={**env, "KERAS_BACKEND": "jax", **ENV},
                            capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert result.returncode == 0, describe(result)
    assert json.loads((out / "train_config.json").read_text())["distinct_pages"] is True
    assert (out / "model.weights.h5").is_file()
