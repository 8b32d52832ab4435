"""The held-out split of `wikipairs build`, decided by the query page (issue 20).

A pair is "eval" when its query page's bucket, `page_bucket(query_page_id)`, is below
`eval_percent * 100` (buckets 0..9999), else "train". The bucket is a stable hash of the page id
alone: no seed, no task, so one page is on the same side for ICT, BFS and WLP under any seed,
runner and worker count. It is integer arithmetic that NumPy and TensorFlow compute exactly the
same way (the trainer applies it to builds older than the `split` column).

A query text that also occurs as the query of a train pair (any task, after `query_key`'s
normalization: case folded, whitespace collapsed) is removed from the eval side by the build.
"""
from __future__ import annotations

import hashlib

import numpy as np

SPLITS = ("train", "eval")
EVAL_PERCENT = 5.0
BUCKETS = 10_000
# page_bucket: ((page_id mod M) * A + C) mod M mod 10000; M = 2^31 - 1, so the product fits
# int64. Public because the trainer computes the same bucket in TensorFlow ops.
BUCKET_MODULUS = 2_147_483_647
BUCKET_MULTIPLIER = 48_271 * 16_807  # < 2^31
BUCKET_INCREMENT = 1_013_904_223


def page_bucket(page_id: int) -> int:
    """A page's bucket in [0, 10000): a stable hash of its id (not Python's `hash`)."""
    h = (int(page_id) % BUCKET_MODULUS) * BUCKET_MULTIPLIER + BUCKET_INCREMENT
    return h % BUCKET_MODULUS % BUCKETS


def page_buckets(page_ids) -> np.ndarray:
    """`page_bucket` of an array of page ids (int64)."""
    ids = np.asarray(page_ids, dtype=np.int64) % BUCKET_MODULUS
    return (ids * BUCKET_MULTIPLIER + BUCKET_INCREMENT) % BUCKET_MODULUS % BUCKETS


def eval_threshold(eval_percent: float) -> int:
    """Buckets below this are eval."""
    if not 0 <= eval_percent < 100:
        raise ValueError(f"eval percent must be in [0, 100), not {eval_percent}")
    return int(round(eval_percent * BUCKETS / 100))


def split_of(page_id: int, eval_percent: float = EVAL_PERCENT) -> str:
    """"train" or "eval" for a pair whose query comes from page `page_id`."""
    return "eval" if page_bucket(page_id) < eval_threshold(eval_percent) else "train"


def in_sorted(sorted_keys: np.ndarray, keys) -> np.ndarray:
    """bool [len(keys)]: which of `keys` occur in `sorted_keys` (ascending, e.g. from np.unique).
    A binary search per key; unlike np.isin, `sorted_keys` is not sorted again on each call,
    which matters when it is a large key set and the calls are many (one per WLP train key)."""
    keys = np.asarray(keys)
    if not len(sorted_keys) or not len(keys):
        return np.zeros(len(keys), bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


def query_key(text: str) -> int:
    """A 64-bit key of a query text (case folded, whitespace collapsed), as a signed int64."""
    norm = " ".join(text.casefold().split())
    return int.from_bytes(hashlib.blake2b(norm.encode("utf-8"), digest_size=8).digest(), "little",
                          signed=True)


__all__ = ["SPLITS", "EVAL_PERCENT", "BUCKETS", "BUCKET_MODULUS", "BUCKET_MULTIPLIER",
           "BUCKET_INCREMENT", "page_bucket", "page_buckets", "eval_threshold",
           "split_of", "query_key", "in_sorted"]
