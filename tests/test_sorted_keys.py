"""SortedKeys (pipelines/transforms.py), the combiner that gathers the held-out filter's query
keys into one sorted array, against np.unique of all keys: single keys and arrays mixed,
accumulators split and merged, and merges that stay O(log n) per key for millions of keys."""
from __future__ import annotations

import numpy as np
import pytest

from wikipairs.pipelines import transforms
from wikipairs.pipelines.transforms import SortedKeys


def _feed(fn, acc, items):
    for item in items:
        acc = fn.add_input(acc, item)
    return acc


def _items(rng, n):
    """n keys as a mix of single ints and int64 arrays, with repeats."""
    keys = rng.integers(-2**40, 2**40, size=n // 3, dtype=np.int64)
    keys = np.concatenate([keys, keys[: n // 5], rng.integers(0, 50, size=n - n // 3 - n // 5)])
    rng.shuffle(keys)
    items, i = [], 0
    while i < len(keys):
        step = int(rng.integers(1, 2000))
        items.append(int(keys[i]) if step < 1000 else keys[i:i + step])
        i += 1 if step < 1000 else step
    return items, keys


@pytest.mark.parametrize("n", [0, 7, 250_000])
def test_sorted_keys_equals_unique(n):
    rng = np.random.default_rng(n)
    items, keys = _items(rng, n)
    fn = SortedKeys()
    out = fn.extract_output(_feed(fn, fn.create_accumulator(), items))
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, np.unique(keys))


def test_sorted_keys_merged_accumulators_equal_one():
    rng = np.random.default_rng(3)
    items, keys = _items(rng, 300_000)
    fn = SortedKeys()
    parts = [_feed(fn, fn.create_accumulator(), items[i::3]) for i in range(3)]
    merged = fn.merge_accumulators(parts + [fn.create_accumulator()])
    np.testing.assert_array_equal(fn.extract_output(merged), np.unique(keys))


def test_sorted_keys_merges_logarithmically(monkeypatch):
    """2,000,000 distinct keys one by one: the merged array doubles between merges, so there are
    O(log n) merges (a fixed batch of 100,000 made 20, each sorting everything kept so far)."""
    sizes = []
    compact = SortedKeys._compact

    def counting(acc):
        sizes.append(len(acc[0]) + len(acc[1]))
        return compact(acc)

    monkeypatch.setattr(SortedKeys, "_compact", staticmethod(counting))
    fn = SortedKeys()
    acc = fn.create_accumulator()
    for block in np.array_split(np.arange(2_000_000, dtype=np.int64), 20_000):
        acc = fn.add_input(acc, block)
    out = fn.extract_output(acc)
    assert len(out) == 2_000_000
    assert len(sizes) <= 6, sizes
    assert sum(sizes) <= 3 * 2_000_000 + 200_000, sizes
