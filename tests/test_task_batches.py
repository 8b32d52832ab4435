"""`wikipairs train pretrain --task-batches` (issue 17): each batch from one task, the task drawn
by the mix per batch, so a query's in-batch negatives are documents of its own task. On the
bundled sample's shards (ICT, BFS and WLP, built with token ids by test_distinct_pages'
fixture): both readers give batches whose rows all belong to one task, several tasks over the
batches, the same batches under the same seed; without the option the same readers mix tasks
within a batch (so the first test fails if the option is ignored); with --distinct-pages too;
and a short `train pretrain` run.
"""
from __future__ import annotations

import itertools
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

pytest.importorskip("tensorflow")

from conftest import cli_command, describe  # noqa: E402
from test_distinct_pages import (LD, LQ, _key, _readers, _same, ids_to_column,  # noqa: E402
                                 sample_shards)  # noqa: F401 (the fixture)
from test_hard_negatives_trainer import ENV  # noqa: E402

from wikipairs.trainer import data  # noqa: E402

B = 8
BATCHES = 24


def _batch_tasks(tasks: dict, batch: dict) -> set:
    """The tasks every row of the batch may come from (empty: rows of different tasks)."""
    common = None
    for q, d in zip(batch["query_ids"], batch["doc_ids"]):
        found = tasks[_key(q, d)]
        common = set(found) if common is None else common & found
    return common


def _first(reader, n: int = BATCHES) -> list[dict]:
    return list(itertools.islice(reader, n))


@pytest.mark.parametrize("distinct", [False, True])
def test_both_readers_give_batches_of_one_task(sample_shards, distinct):
    """Uniform mix of the three tasks, seeded shuffle: each of 24 batches of 8 is of one task,
    at least two tasks appear, and the same seed gives the same batches. With distinct pages
    too, each batch also has 8 query pages (the sample's tasks each have more than 8)."""
    tasks = ids_to_column(sample_shards, "task")
    kw = dict(batch_size=B, seed=3, shuffle_buffer=100, max_query_len=LQ, max_doc_len=LD,
              negative_keys=True, distinct_pages=distinct, task_batches=True)
    for name, reader in _readers(sample_shards, **kw).items():
        batches, again = _first(reader()), _first(reader())
        assert len(batches) == BATCHES, name
        seen = set()
        for batch in batches:
            common = _batch_tasks(tasks, batch)
            assert common, (name, "a batch mixes tasks")
            seen |= common
        assert len(seen) >= 2, (name, seen)
        assert all(_same(a, b) for a, b in zip(batches, again)), name


def test_without_the_option_batches_mix_tasks(sample_shards):
    """The oracle's other side: the same readers and seed, tasks mixed per row, give batches of
    several tasks (else the test above could not fail)."""
    tasks = ids_to_column(sample_shards, "task")
    kw = dict(batch_size=B, seed=3, shuffle_buffer=100, max_query_len=LQ, max_doc_len=LD)
    for name, reader in _readers(sample_shards, **kw).items():
        mixed = sum(not _batch_tasks(tasks, batch) for batch in _first(reader()))
        assert mixed >= BATCHES // 2, (name, mixed)


def test_numpy_reader_without_repeat_drops_a_tasks_last_partial_batch(sample_shards):
    """repeat=False: every batch is still of one task (a finished task's last rows are dropped,
    not topped up from another task), and the reader ends."""
    tasks = ids_to_column(sample_shards, "task")
    batches = list(data.numpy_batches(sample_shards, batch_size=B, seed=1, max_query_len=LQ,
                                      max_doc_len=LD, repeat=False, task_batches=True))
    assert batches and all(_batch_tasks(tasks, b) for b in batches)
    per_task = Counter(next(iter(_batch_tasks(tasks, b))) for b in batches)
    assert len(per_task) == 3, per_task


def test_train_pretrain_task_batches(sample_shards, tmp_path):
    """A few BoW steps with --task-batches on the JAX backend (Parquet) exit 0; the setting is
    in train_config.json and the start line says the mix is per batch."""
    out = tmp_path / "run"
    argv, env = cli_command("train", "pretrain", "-d", sample_shards, "-o", out, "--model", "bow",
                            "--model-opt", f"max_query_len={LQ}", "--model-opt",
                            f"max_doc_len={LD}", "--batch-size", "8", "--steps", "3",
                            "--eval-batches", "0", "--no-tensorboard", "--shuffle-buffer", "64",
                            "--task-batches")
    result = subprocess.run(argv, env={**env, "KERAS_BACKEND": "jax", **ENV},
                            capture_output=True, text=True, encoding="utf-8", timeout=300)
    assert result.returncode == 0, describe(result)
    assert json.loads((out / "train_config.json").read_text())["task_batches"] is True
    assert "per batch" in result.stdout
