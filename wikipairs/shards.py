"""Writing output that never looks complete when it is not.

Shards are written under a temporary name and renamed when complete; the manifest (with each
file's row count and sha256) is written last, also through a rename, so a failed run leaves no
manifest and a manifest never lists incomplete output.
"""
from __future__ import annotations

import json
import os
import re

import pyarrow as pa
import pyarrow.parquet as pq

from . import fileio
from .fileio import TMP_SUFFIX

MANIFEST = "manifest.json"
_SHARD_FILE = re.compile(r"^part-\d{5}-of-\d{5}\.")


def sha256_file(path: str, chunk: int = 1 << 20) -> str:
    """sha256 of a local file or of a Beam file system URL (streamed)."""
    return fileio.sha256(path, chunk)


def shard_name(index: int, count: int, suffix: str) -> str:
    return f"part-{index:05d}-of-{count:05d}{suffix}"


class ParquetShards:
    """Writes rows to DIR/part-NNNNN-of-MMMMM.parquet, `rows_per_shard` rows each.

    The total is known only at the end, so shards are written as `.tmp` files and renamed by
    `close()`, which returns [(path, rows)]. Shards of an earlier run in the folder are
    removed first."""

    # Rows are buffered as Python objects until a row group is written: at most `row_group`
    # rows, and about `buffer_bytes` of Arrow data (the size of a row is learnt from the row
    # groups written, the first of which holds `_FIRST_GROUP` rows). Article rows are large
    # (~50 kB), so 1,000 of them as Python objects took hundreds of MB.
    _FIRST_GROUP = 32

    def __init__(self, folder: str, schema: pa.Schema, rows_per_shard: int = 50_000,
                 row_group: int = 1_000, buffer_bytes: int = 16 << 20):
        self.folder, self.schema = folder, schema
        self.rows_per_shard, self.row_group = rows_per_shard, row_group
        self.buffer_bytes = buffer_bytes
        self._group = min(row_group, self._FIRST_GROUP)  # rows to buffer before writing
        self._rows_written = self._bytes_written = 0
        os.makedirs(folder, exist_ok=True)
        # Shards of an earlier run (maybe more of them) must not mix with this run's.
        for name in os.listdir(folder):
            if _SHARD_FILE.match(name) or name.endswith(TMP_SUFFIX):
                os.remove(os.path.join(folder, name))
        self._tmp: list[tuple[str, int]] = []
        self._writer: pq.ParquetWriter | None = None
        self._rows_in_shard = 0
        self._buffer: list[dict] = []

    def write(self, row: dict) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= self._group:
            self._flush()

    def _flush(self) -> None:
        while self._buffer:
            if self._writer is None:
                path = os.path.join(self.folder, f"shard-{len(self._tmp):05d}{TMP_SUFFIX}")
                self._writer = pq.ParquetWriter(path, self.schema, compression="zstd")
                self._tmp.append((path, 0))
                self._rows_in_shard = 0
            room = self.rows_per_shard - self._rows_in_shard
            rows, self._buffer = self._buffer[:room], self._buffer[room:]
            table = pa.Table.from_pylist(rows, schema=self.schema)
            self._writer.write_table(table)
            self._rows_written += table.num_rows
            self._bytes_written += table.nbytes
            per_row = max(1, self._bytes_written // max(1, self._rows_written))
            self._group = max(1, min(self.row_group, self.buffer_bytes // per_row))
            self._rows_in_shard += table.num_rows
            del rows, table
            path, _ = self._tmp[-1]
            self._tmp[-1] = (path, self._rows_in_shard)
            if self._rows_in_shard >= self.rows_per_shard:
                self._writer.close()
                self._writer = None

    def close(self) -> list[tuple[str, int]]:
        self._flush()
        if self._writer is not None:
            self._writer.close()
        if not self._tmp:  # an empty shard keeps the schema readable
            path = os.path.join(self.folder, f"shard-00000{TMP_SUFFIX}")
            pq.write_table(self.schema.empty_table(), path)
            self._tmp.append((path, 0))
        done = []
        for i, (path, rows) in enumerate(self._tmp):
            final = os.path.join(self.folder, shard_name(i, len(self._tmp), ".parquet"))
            os.replace(path, final)
            done.append((final, rows))
        return done


def write_parquet(path: str, table: pa.Table) -> None:
    tmp = path + TMP_SUFFIX
    pq.write_table(table, tmp, compression="zstd")
    os.replace(tmp, path)


def write_json(path: str, data) -> None:
    """JSON (indented, UTF-8) under a temporary name, then renamed: never half written."""
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    fileio.write_atomic(path, text.encode("utf-8"))


def prepare_output(folder: str) -> None:
    """Make `folder` ready for a new run: an old manifest goes first, so a crash in between never
    leaves a manifest that describes files of a different run. OSError if it is not writable
    (for a URL: a missing bucket or no permission)."""
    fileio.check_writable(folder)
    manifest = fileio.join(folder, MANIFEST)
    if fileio.exists(manifest):
        fileio.remove(manifest)


def file_entry(folder: str, path: str, rows: int | None = None) -> dict:
    entry = {"path": fileio.relpath(path, folder), "bytes": fileio.size(path),
             "sha256": sha256_file(path)}
    if rows is not None:
        entry["rows"] = rows
    return entry
