"""Checksums of downloaded bytes, and whether they are the file dumpstatus.json lists.

sha1 is always computed (download.json records it); md5 as well where it is the check, i.e.
where dumpstatus.json has no sha1 for the file.
"""
from __future__ import annotations

import hashlib

from .dumps import RemoteFile

_BLOCK = 1 << 20  # bytes per read when hashing a file already on disk


class Hashes:
    """sha1 (always) and md5 (when it is the check) of a byte prefix, and its length."""

    def __init__(self, md5: bool):
        self.want_md5 = md5
        self.reset()

    def reset(self) -> None:
        self.sha1 = hashlib.sha1()
        self.md5 = hashlib.md5() if self.want_md5 else None
        self.length = 0

    def update(self, data: bytes) -> None:
        self.sha1.update(data)
        if self.md5 is not None:
            self.md5.update(data)
        self.length += len(data)

    def hexdigest(self, algorithm: str) -> str:
        return (self.sha1 if algorithm == "sha1" else self.md5).hexdigest()


def hash_file(path: str, md5: bool) -> Hashes:
    """The Hashes of a whole file on disk."""
    hashes = Hashes(md5)
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
    got = hashes.hexdigest(algorithm)
    return None if got == expected else f"{algorithm} {got} instead of {expected}"
