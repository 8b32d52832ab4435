"""Clean negatives by page (`train --page-negatives`, issue 17): the fourth key of
`trainer.data.negative_keys(page_keys=True)` marks the rows whose documents are positives of each
other's queries by the task's own definition, on a table of hand-made rows, the same in NumPy
and in TensorFlow ops; the loss it gives; a short training run with it, and its usage error."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pyarrow as pa
import pytest

from conftest import assert_one_line_error, cli_command, describe
from test_distinct_pages import LD, LQ, sample_shards  # noqa: F401 (the fixture)

from wikipairs.trainer import data

# (task, lang, query_page_id, doc_page_id, doc_passage, query, doc_text)
ROWS = [
    ("ict", "en", 1, 1, 0, "q0", "passage 0 of page 1"),
    ("ict", "en", 1, 1, 1, "q1", "passage 1 of page 1"),        # same page: still a negative
    ("bfs", "en", 2, 2, 1, "lead a", "passage 1 of page 2"),
    ("bfs", "en", 2, 2, 2, "lead b", "passage 2 of page 2"),    # page 2's body: a positive
    ("wlp", "en", 3, 5, 0, "lead c", "passage of page 5 linking to 3"),
    ("wlp", "en", 3, 6, 4, "lead d", "passage of page 6 linking to 3"),  # links to 3: positive
    ("bfs", "en", 1, 1, 2, "lead e", "passage 2 of page 1"),    # BFS of page 1 against ICT rows
    ("wlp", "en", 2, 9, 0, "lead f", "passage of page 9 linking to 2"),  # query page 2, not BFS
    ("bfs", "de", 2, 2, 1, "lead g", "Absatz 1 der Seite 2"),   # another wiki's page 2
]
# row pairs whose page key is equal (and no other key): the rule's positives
EXPECTED = {(2, 3), (4, 5)}


def table() -> pa.Table:
    cols = list(zip(*ROWS))
    return pa.table({"pair_id": [f"p{i}" for i in range(len(ROWS))], "task": cols[0],
                     "lang": cols[1], "query_page_id": cols[2], "doc_page_id": cols[3],
                     "doc_passage": cols[4], "query": cols[5],
                     "doc_title": [f"T{p}" for p in cols[3]], "doc_text": cols[6]})


def page_pairs(keys: np.ndarray) -> set[tuple[int, int]]:
    same = (keys[:, None, 3] == keys[None, :, 3]).all(-1)
    return {(i, j) for i, j in zip(*np.nonzero(same)) if i < j}


def test_page_key_follows_the_tasks_positives():
    keys = data.negative_keys(table(), page_keys=True)
    assert keys.shape == (len(ROWS), 4, 2) and keys.dtype == np.int32
    assert (data.negative_keys(table()) == keys[:, :3]).all()  # without: the three of before
    assert page_pairs(keys) == EXPECTED
    # ICT: the page key is the document key, so it masks nothing the document key does not
    ict = [i for i, r in enumerate(ROWS) if r[0] == "ict"]
    assert (keys[ict, 3] == keys[ict, 0]).all()


def test_page_key_without_the_columns_is_the_document_key():
    keys = data.negative_keys(table().drop_columns(["task"]), page_keys=True)
    assert (keys[:, 3] == keys[:, 0]).all() and page_pairs(keys) == set()


def test_tensorflow_reader_gives_the_same_equalities():
    tf = pytest.importorskip("tensorflow")
    t = table().to_pydict()
    keys = np.stack([data._tf_negative_keys({k: tf.constant(v[i]) for k, v in t.items()},
                                            page_keys=True).numpy() for i in range(len(ROWS))])
    assert keys.shape == (len(ROWS), 4, 2)
    assert page_pairs(keys) == EXPECTED
    ref = data.negative_keys(table(), page_keys=True)
    for k in range(3):  # the other keys agree with NumPy's on which rows are equal
        assert ((keys[:, None, k] == keys[None, :, k]).all(-1)
                == (ref[:, None, k] == ref[None, :, k]).all(-1)).all()


def test_loss_leaves_the_page_positives_out():
    """The in-batch loss with the page keys equals a NumPy softmax over the columns that are not
    the row's page positives (the planted ones of EXPECTED)."""
    keras = pytest.importorskip("keras")
    from wikipairs.trainer.losses import in_batch_softmax_loss

    rng = np.random.default_rng(3)
    n = len(ROWS)
    q, d = rng.normal(size=(n, 8)), rng.normal(size=(n, 8))
    keys = data.negative_keys(table(), page_keys=True)
    loss = float(keras.ops.convert_to_numpy(in_batch_softmax_loss(q, d, 0.5, keys=keys)))
    scores = q @ d.T / 0.5
    drop = {(i, j) for i, j in EXPECTED} | {(j, i) for i, j in EXPECTED}
    want = np.mean([np.log(sum(np.exp(scores[i, j]) for j in range(n) if (i, j) not in drop))
                    - scores[i, i] for i in range(n)])
    assert abs(loss - want) < 1e-9
    plain = float(keras.ops.convert_to_numpy(in_batch_softmax_loss(q, d, 0.5)))
    assert abs(plain - want) > 1e-3  # the planted columns matter


def test_train_pretrain_page_negatives(sample_shards, tmp_path):  # noqa: F811
    """A few BoW steps with --page-negatives on TensorFlow (TFRecord reader, held-out batches
    with the page keys) exit 0; the setting is in train_config.json; without clean negatives it
    is a usage error (one line, exit 2)."""
    out = tmp_path / "run"
    args = ["train", "pretrain", "-d", sample_shards, "--model", "bow", "--model-opt",
            f"max_query_len={LQ}", "--model-opt", f"max_doc_len={LD}", "--batch-size", "8",
            "--steps", "3", "--eval-batches", "2", "--eval-batch-size", "8", "--no-tensorboard",
            "--shuffle-buffer", "64", "--page-negatives", "--quiet"]
    argv, env = cli_command(*args, "-o", out)
    result = subprocess.run(argv, env=env, capture_output=True, text=True, encoding="utf-8",
                            timeout=600)
    assert result.returncode == 0, describe(result)
    assert json.loads((out / "train_config.json").read_text())["page_negatives"] is True
    held_out = json.loads((out / "eval.json").read_text())
    assert held_out["batches"] == 0 or held_out["clean_negatives"] is True
    argv, env = cli_command(*args, "-o", tmp_path / "bad", "--no-clean-negatives")
    result = subprocess.run(argv, env=env, capture_output=True, text=True, encoding="utf-8",
                            timeout=300)
    assert_one_line_error(result, "--page-negatives")
