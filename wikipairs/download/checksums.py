"""Checksums of downloaded bytes, and whether they are the file dumpstatus.json lists.

sha1 is always computed (download.json records it); md5 as well where it is the check, i.e.
where dumpstatus.json has no sha1 for the file; sha256 where it is the check or is recorded
(Enterprise HTML dumps, whose runs publish no checksum: there the size is the check).
"""
from __future__ import annotations

import hashlib

from .dumps import RemoteFile

_BLOCK = 1 << 20  # bytes per read when hashing a file already on disk


class Hashes:
    """sha1 (always), md5 and sha256 (when asked) of a byte prefix, and its length."""

    def __init__(self, md5: bool, sha256: bool = False):
        self.want_md5, self.want_sha256 = md5, sha256
        self.reset()

    def reset(self) -> None:
        self.sha1 = hashlib.sha1()
        self.md5 = hashlib.md5() if self.want_md5 else None
        self.sha256 = hashlib.sha256() if self.want_sha256 else None
        self.length = 0

    def update(self, data: bytes) -> None:
        self.sha1.update(data)
        if self.md5 is not None:
            self.md5.update(data)
        if self.sha256 is not None:
            self.sha256.update(data)
        self.length += len(data)

    def hexdigest(self, algorithm: str) -> str:
        return getattr(self, algorithm).hexdigest()

    def digests(self) -> dict:
        """{"sha1": hex, "sha256": hex where computed}: what download.json records."""
        found = {"sha1": self.sha1.hexdigest()}
        if self.sha256 is not None:
            found["sha256"] = self.sha256.hexdigest()
        return found


def hash_file(path: str, md5: bool, sha256: bool = False) -> Hashes:
    """The Hashes of a whole file on disk."""
    hashes = Hashes(md5, sha256)
    with open(path, "rb") as f:
        while True:
            block = f.read(_BLOCK)
            if not block:
                return hashes
            hashes.update(block)


def mismatch(hashes: Hashes, file: RemoteFile) -> str | None:
    """Why these bytes are not `file` (its size, where known, then its checksum); None if they
    are."""
    algorithm, expected = file.checksum
    if file.size is not None and hashes.length != file.size:
        return f"size {hashes.length:,} instead of {file.size:,}"
    if algorithm == "size":  # nothing published but the size (enterprise.py makes sure of it)
        return None
    got = hashes.hexdigest(algorithm)
    return None if got == expected else f"{algorithm} {got} instead of {expected}"
