"""Pair rows and the shard files of `wikipairs build` (no Beam here: the pipeline calls these).

A shard holds the pairs whose `pair_id` hash falls in it, sorted by pair_id, so its bytes depend
only on the pairs, never on the runner or the number of workers. Each file is written under a
temporary name and renamed; a small JSON note per shard (rows, checksums, token sums) lets the
driver write stats.json and then manifest.json without reading the shards back.
"""
from __future__ import annotations

import io
import json
import os
from dataclasses import asdict

import pyarrow as pa
import pyarrow.parquet as pq

from wikipairs.schemas import arrow_schema, example_values, pair_fields

from .records import Pair
from .shards import TMP_SUFFIX, sha256_file, shard_name

FORMATS = ("parquet", "tfrecord")
SUFFIXES = {"parquet": ".parquet", "tfrecord": ".tfrecord.gz"}
NOTES = ".shards"  # folder of per-shard notes; removed once the manifest is written


def shard_of(pair_id: str, num_shards: int) -> int:
    return int(pair_id, 16) % num_shards


def pair_row(pair: Pair, count, tokenizer=None, query_max: int = 64, doc_max: int = 288) -> dict:
    """A Pair as a row of the pair schema; token ids only with a tokenizer."""
    row = asdict(pair)
    row["query_tokens"] = count(pair.query)
    row["doc_tokens"] = count(pair.doc_title) + count(pair.doc_text)
    if tokenizer is not None:
        row["query_ids"] = tokenizer.encode(pair.query, query_max)
        row["doc_ids"] = tokenizer.encode_pair(pair.doc_title, pair.doc_text, doc_max)
    return row


def _parquet_bytes(rows: list[dict], with_ids: bool) -> bytes:
    schema = arrow_schema(pair_fields(with_ids), metadata={"wikipairs": "pair"})
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), sink, compression="zstd",
                   row_group_size=10_000)
    return sink.getvalue()


def _tfrecord_bytes(rows: list[dict], with_ids: bool) -> bytes:
    from .tfrecord import TFRecordWriter, encode_example

    fields = pair_fields(with_ids)
    sink = io.BytesIO()
    with TFRecordWriter(sink, compression="gzip") as writer:
        for row in rows:
            values = example_values(fields, row)
            writer.write(encode_example({name: v for name, (_, v) in values.items()}))
    return sink.getvalue()


def _write_atomic(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + TMP_SUFFIX
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def write_shard(output: str, task: str, index: int, count: int, rows: list[dict],
                formats: tuple[str, ...], with_ids: bool) -> dict:
    """Write shard `index` of `count` of a task in every format; returns (and saves) its note."""
    rows = sorted(rows, key=lambda r: r["pair_id"])
    files = []
    for fmt in formats:
        data = _parquet_bytes(rows, with_ids) if fmt == "parquet" else _tfrecord_bytes(rows, with_ids)
        path = os.path.join(output, task, shard_name(index, count, SUFFIXES[fmt]))
        _write_atomic(path, data)
        files.append({"path": os.path.relpath(path, output), "format": fmt, "rows": len(rows),
                      "bytes": len(data), "sha256": sha256_file(path)})
    note = {"task": task, "shard": index, "of": count, "pairs": len(rows), "files": files,
            "query_tokens": sum(r["query_tokens"] for r in rows),
            "doc_tokens": sum(r["doc_tokens"] for r in rows)}
    _write_atomic(os.path.join(output, NOTES, f"{task}-{index:05d}.json"),
                  json.dumps(note).encode())
    return note


def read_notes(output: str) -> list[dict]:
    folder = os.path.join(output, NOTES)
    if not os.path.isdir(folder):
        return []
    notes = []
    for name in sorted(os.listdir(folder)):
        if name.endswith(".json"):
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                notes.append(json.load(f))
    return notes


__all__ = ["FORMATS", "SUFFIXES", "NOTES", "shard_of", "pair_row", "write_shard", "read_notes"]
