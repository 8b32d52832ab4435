"""`wikipairs verify DIR`: every file a build's manifest lists is there, whole and unchanged."""
from __future__ import annotations

import json
import os
import re

import pyarrow.parquet as pq

from . import fileio
from .errors import WikipairsError
from .shards import MANIFEST, sha256_file

_PART = re.compile(r"^part-\d{5}-of-\d{5}\.")


class VerifyError(WikipairsError):
    pass


def _rows(path: str, fmt: str) -> int:
    if fmt == "parquet":
        return pq.ParquetFile(fileio.arrow_input(path)).metadata.num_rows
    from .tfrecord import read_tfrecords
    return sum(1 for _ in read_tfrecords(path))  # also checks every record's CRCs


def verify_build(folder: str) -> int:
    """Check sizes, sha256 and row counts of every listed file, and that no unlisted shard lies
    beside them. Returns the number of files checked; raises VerifyError on the first mismatch."""
    path = fileio.join(folder, MANIFEST)
    try:
        return _verify(folder, path)
    except OSError as e:  # e.g. a remote file system that cannot be reached
        raise VerifyError(f"{e.filename or folder}: cannot read it ({e.strerror or e})") from None


def _verify(folder: str, path: str) -> int:
    if not fileio.exists(path):
        raise VerifyError(f"{folder}: no {MANIFEST} (not a build folder, or the build did not finish)")
    try:
        manifest = json.loads(fileio.read_text(path))
        entries = list(manifest["shards"]) + [manifest["stats"]]
    except (ValueError, KeyError, TypeError) as e:
        raise VerifyError(f"{path}: not a wikipairs build manifest ({e})") from None
    listed = set()
    for entry in entries:
        file = fileio.join(folder, entry["path"])
        listed.add(os.path.normpath(entry["path"]))
        if not fileio.exists(file):
            raise VerifyError(f"{file}: listed in the manifest but missing")
        if "bytes" in entry and fileio.size(file) != entry["bytes"]:
            raise VerifyError(f"{file}: {fileio.size(file)} bytes, manifest says {entry['bytes']}")
        if sha256_file(file) != entry["sha256"]:
            raise VerifyError(f"{file}: sha256 differs from the manifest")
        if "rows" in entry:
            try:
                rows = _rows(file, entry.get("format", "parquet"))
            except Exception as e:  # a corrupt file whose checksum was also forged
                raise VerifyError(f"{file}: unreadable ({e})") from None
            if rows != entry["rows"]:
                raise VerifyError(f"{file}: {rows} records, manifest says {entry['rows']}")
    for task in {os.path.dirname(e["path"]) for e in manifest["shards"]}:
        for name in fileio.listdir(fileio.join(folder, task)):
            if _PART.match(name) and os.path.normpath(os.path.join(task, name)) not in listed:
                raise VerifyError(f"{fileio.join(folder, task, name)}: a shard the manifest "
                                  f"does not list")
    return len(entries)
