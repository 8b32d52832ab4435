"""A Bloom filter of titles: "surely not a page" answers in a few bits per title.

WLP keeps only links whose target may be a page of the dump; the set of titles is too large to
ship to every worker at Wikipedia scale (~18M titles with redirects) but a filter at 1% false
positives takes ~1.2 bytes per title, and a false positive only costs a document that later finds
no query page in the join.
"""
from __future__ import annotations

import hashlib
import math


class BloomFilter:
    def __init__(self, capacity: int, error_rate: float = 0.01):
        capacity = max(1, capacity)
        self.bits = max(64, int(-capacity * math.log(error_rate) / math.log(2) ** 2))
        self.hashes = max(1, round(self.bits / capacity * math.log(2)))
        self.array = bytearray((self.bits + 7) // 8)

    def _positions(self, key: str):
        digest = hashlib.blake2b(key.encode("utf-8"), digest_size=16).digest()
        a, b = int.from_bytes(digest[:8], "little"), int.from_bytes(digest[8:], "little") | 1
        return ((a + i * b) % self.bits for i in range(self.hashes))

    def add(self, key: str) -> None:
        for p in self._positions(key):
            self.array[p >> 3] |= 1 << (p & 7)

    def __contains__(self, key: str) -> bool:
        return all(self.array[p >> 3] & (1 << (p & 7)) for p in self._positions(key))

    def union(self, other: "BloomFilter") -> "BloomFilter":
        """Bitwise OR in place (both filters must have the same shape)."""
        if (self.bits, self.hashes) != (other.bits, other.hashes):
            raise ValueError("Bloom filters of different shapes")
        merged = int.from_bytes(self.array, "little") | int.from_bytes(other.array, "little")
        self.array = bytearray(merged.to_bytes(len(self.array), "little"))
        return self
