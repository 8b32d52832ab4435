"""Held-out evaluation of a TwoTower: `in_batch_accuracy` (top-1, MRR and softmax loss of each
query against its batch's documents) over `eval_batches` (a run's held-out split)."""
from __future__ import annotations

import numpy as np
from keras import ops

from . import data as data_lib
from .configs import NEGATIVE_KEYS, ModelConfig
from .losses import duplicate_mask
from .train_config import TrainConfig


def in_batch_accuracy(model, batches, max_batches: int | None = None) -> dict:
    """Held-out retrieval within each batch: every query against the batch's B documents.

    model: a TwoTower. batches: an iterable of {"query_ids", "doc_ids"} (NumPy or tensors),
    with "negative_keys" (clean negatives, `trainer.data`): the documents that duplicate a
    query's own (same document, passage or query text) are left out of its ranking and softmax.
    Returns {"accuracy": top-1 share of queries whose own document scores highest, "mrr",
    "loss": mean in-batch softmax loss (model temperature), "batches", "examples",
    "clean_negatives": whether the batches had the keys}."""
    correct = rr = loss = 0.0
    n = count = 0
    clean = False
    for batch in batches:
        if max_batches is not None and count >= max_batches:
            break
        scores = _batch_scores(model, batch)
        clean = clean or NEGATIVE_KEYS in batch
        b = scores.shape[0]
        own = scores[np.arange(b), np.arange(b)]
        rank = (scores > own[:, None]).sum(axis=1) + 1
        correct += float((rank == 1).sum())
        rr += float((1.0 / rank).sum())
        loss += _softmax_loss_sum(scores, model.config.temperature)
        n += b
        count += 1
    if n == 0:
        return {"accuracy": None, "mrr": None, "loss": None, "batches": 0, "examples": 0}
    return {"accuracy": correct / n, "mrr": rr / n, "loss": loss / n, "batches": count,
            "examples": n, "clean_negatives": clean}


def _batch_scores(model, batch) -> np.ndarray:
    """[B, B] float64 scores of the batch's queries against its documents."""
    q = model.encode_queries(batch["query_ids"], training=False)
    d = model.encode_docs(batch["doc_ids"], training=False)
    scores = np.asarray(ops.convert_to_numpy(model.score(q, d)), dtype=np.float64)
    if NEGATIVE_KEYS in batch:
        scores[ops.convert_to_numpy(duplicate_mask(batch[NEGATIVE_KEYS]))] = -np.inf
    return scores


def _softmax_loss_sum(scores: np.ndarray, temperature: float) -> float:
    """Summed in-batch softmax loss of `scores` (query i's own document is column i)."""
    z = scores / temperature
    z = z - z.max(axis=1, keepdims=True)
    return float((np.log(np.exp(z).sum(axis=1)) - np.diag(z)).sum())


def eval_batches(config: TrainConfig, model_config: ModelConfig, tasks, batch_size: int | None
                 = None, data_format: str = "parquet"):
    """The held-out batches of a run's data (split "eval", no repeat, no shuffle), with the
    clean-negative keys when the run has them (config.clean_negatives, two-tower)."""
    return data_lib.make_batches(
        config.data, data_format=data_format, tasks=tasks, weights=config.task_weights,
        batch_size=batch_size or config.eval_batch_size,
        max_query_len=model_config.max_query_len, max_doc_len=model_config.max_doc_len,
        split="eval", eval_percent=config.eval_percent, seed=config.seed, shuffle=False,
        repeat=False, negative_keys=config.clean_negatives and config.objective == "two-tower",
        page_keys=config.page_negatives)

