"""A build folder as an older wikipairs wrote it, made from a new one, for the readers' tests.

Before the per-format trees a build wrote DIR/<task>/part-*.parquet and .tfrecord.gz side by
side; `to_old_layout` moves the shards there and rewrites the manifest's paths (sizes and sha256
stay: the bytes are the same). `to_schema_v1` rewrites the shards in pair schema version 1: no
`passage_id` or `doc_id`, `anchor` for `link_anchor`, no schema_version in manifest or metadata
(the manifest's sizes and sha256 follow)."""
from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from wikipairs.schemas import Field, arrow_schema, example_kinds, pair_fields
from wikipairs.shards.tfrecord import RowEncoder, TFRecordWriter

FORMAT_FOLDERS = ("parquet", "tfrecord")


def to_old_layout(folder: Path) -> Path:
    """DIR/<format>/<task>/part-* -> DIR/<task>/part-*, the manifest following."""
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for entry in manifest["shards"]:
        fmt, task, name = Path(entry["path"]).parts
        assert fmt in FORMAT_FOLDERS, entry
        (folder / task).mkdir(exist_ok=True)
        (folder / fmt / task / name).rename(folder / task / name)
        entry["path"] = f"{task}/{name}"
    for fmt in FORMAT_FOLDERS:
        shutil.rmtree(folder / fmt, ignore_errors=True)
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return folder


def v1_fields(with_ids: bool) -> tuple[Field, ...]:
    """The pair schema of version 1."""
    return tuple(Field("anchor", f.type, f.doc) if f.name == "link_anchor" else f
                 for f in pair_fields(with_ids) if f.name not in ("passage_id", "doc_id", "split"))


def to_schema_v1(folder: Path) -> Path:
    """Every shard of the build rewritten in pair schema version 1, the manifest following."""
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    fields = v1_fields(bool(manifest["config"].get("vocab")))
    parquet = {e["path"]: e for e in manifest["shards"] if e["format"] == "parquet"}
    tfrecord = {e["path"]: e for e in manifest["shards"] if e["format"] == "tfrecord"}
    for path, entry in parquet.items():
        rows = pq.read_table(folder / path).to_pylist()
        for row in rows:
            row["anchor"] = row.pop("link_anchor")
        schema = arrow_schema(fields, metadata={"wikipairs": "pair"})
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), folder / path,
                       compression="zstd")
        twin = [p for p in tfrecord if Path(p).name == Path(path).name.replace(
            ".parquet", ".tfrecord.gz") and Path(p).parent.name == Path(path).parent.name]
        for record_path in twin:
            encoder = RowEncoder(example_kinds(fields))
            with open(folder / record_path, "wb") as f, \
                    TFRecordWriter(f, compresslevel=1) as writer:  # as ShardWriter
                for row in rows:
                    writer.write(encoder.encode(row))
            _refresh(folder, tfrecord[record_path])
        _refresh(folder, entry)
    manifest.pop("schema_version", None)
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return folder


def _refresh(folder: Path, entry: dict) -> None:
    data = (folder / entry["path"]).read_bytes()
    entry["bytes"], entry["sha256"] = len(data), hashlib.sha256(data).hexdigest()
