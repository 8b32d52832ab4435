"""Seeded choices as pure functions of their key, so every runner and worker count agrees.

Every random choice in the pair builders is `sample(seed, task, page_id, position, ...)`: a
stable 64-bit hash, never `random` with process state. Retries, re-orderings and different
workers therefore make the same choices.
"""
from __future__ import annotations

import hashlib


def _digest(parts: tuple, size: int) -> bytes:
    text = "\x1f".join(str(p) for p in parts)
    return hashlib.blake2b(text.encode("utf-8"), digest_size=size).digest()


def sample(seed: int, *key) -> int:
    """A uniform 64-bit integer determined by (seed, *key)."""
    return int.from_bytes(_digest((seed,) + key, 8), "big")


def choose(n: int, seed: int, *key) -> int:
    """An index in [0, n) determined by (seed, *key). `n` must be positive."""
    return sample(seed, *key) % n


def coin(rate: float, seed: int, *key) -> bool:
    """True with probability `rate`, determined by (seed, *key)."""
    if rate <= 0.0:  # the default ICT keep rate: no hash for a certain answer
        return False
    return sample(seed, "coin", *key) < rate * 2.0 ** 64


def stable_id(*key) -> str:
    """A 16-hex-digit id of `key` (no seed: the same pair has the same id under any seed)."""
    return _digest(key, 8).hex()
