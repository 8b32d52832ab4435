"""`wikipairs verify DIR`: every file the manifest of a build or a parse lists is there, whole
and unchanged, and no unlisted shard lies beside them."""
from __future__ import annotations

import json
import os
import re

import pyarrow.parquet as pq

from .. import fileio
from ..errors import WikipairsError
from .output import MANIFEST, listed_files, sha256_file

_PART = re.compile(r"^part-\d{5}-of-\d{5}\.")


class VerifyError(WikipairsError):
    pass


def _rows(path: str, fmt: str) -> int:
    if fmt == "parquet":
        return pq.ParquetFile(fileio.arrow_input(path)).metadata.num_rows
    from .tfrecord import read_tfrecords
    return sum(1 for _ in read_tfrecords(path))  # also checks every record's CRCs


def verify_build(folder: str) -> int:
    """Check sizes, sha256 and row counts of every file the manifest of `wikipairs build` or
    `wikipairs parse` in `folder` lists, and that no unlisted shard lies beside them. Returns the
    number of files checked; raises VerifyError on the first mismatch."""
    path = fileio.join(folder, MANIFEST)
    try:
        return _verify(folder, path)
    except OSError as e:  # e.g. a remote file system that cannot be reached
        raise VerifyError(f"{e.filename or folder}: cannot read it ({e.strerror or e})") from None


def _verify(folder: str, path: str) -> int:
    if not fileio.exists(path):
        raise VerifyError(f"{folder}: no {MANIFEST} (not a build or parse output folder, or the "
                          f"run did not finish)")
    try:
        manifest = json.loads(fileio.read_text(path))
        entries = listed_files(manifest)
    except (ValueError, KeyError, TypeError) as e:
        raise VerifyError(f"{path}: not a wikipairs build or parse manifest ({e})") from None
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
    shards = [e["path"] for e in entries if _PART.match(os.path.basename(e["path"]))]
    for task in {os.path.dirname(p) for p in shards}:
        for name in fileio.listdir(fileio.join(folder, task)):
            if _PART.match(name) and os.path.normpath(os.path.join(task, name)) not in listed:
                raise VerifyError(f"{fileio.join(folder, task, name)}: a shard the manifest "
                                  f"does not list")
    return len(entries)

