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

from .. import fileio
from ..errors import WikipairsError
from ..fileio import TMP_SUFFIX

MANIFEST = "manifest.json"
_SHARD_FILE = re.compile(r"^part-\d{5}-of-\d{5}\.")


def sha256_file(path: str, chunk: int = 1 << 20) -> str:
    """sha256 of a local file or of a Beam file system URL (streamed)."""
    return fileio.sha256(path, chunk)


def shard_name(index: int, count: int, suffix: str) -> str:
    return f"part-{index:05d}-of-{count:05d}{suffix}"


class ParquetRows:
    """Rows into one Parquet file (zstd), buffered as they come and written as row groups of at
    most `row_group` rows and, with `buffer_bytes`, about that much Arrow data: the size of a row
    is learnt from the groups written, the first of which holds at most `first_group` rows
    (article rows are ~50 kB, so 1,000 of them as Python objects took hundreds of MB). A file without rows holds an empty
    table, so its schema stays readable. The group sizes depend only on this file's rows.

    `where`: a path or an open binary file (fileio.create for gs://); `close()` does not close
    a file it was given."""

    def __init__(self, where, schema: pa.Schema, row_group: int,
                 buffer_bytes: int | None = None, first_group: int | None = None):
        self.schema, self.row_group, self.buffer_bytes = schema, row_group, buffer_bytes
        self.writer = pq.ParquetWriter(where, schema, compression="zstd")
        self.rows = 0  # written and buffered
        self._group = min(row_group, first_group or row_group)  # rows to buffer before writing
        self._rows_written = self._bytes_written = 0
        self._buffer: list[dict] = []

    def write(self, row: dict) -> None:
        self._buffer.append(row)
        self.rows += 1
        if len(self._buffer) >= self._group:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer:
            return
        # Columns by one comprehension each: ~7x faster than appending a row's values one by one.
        rows, self._buffer = self._buffer, []
        table = pa.table({name: [row[name] for row in rows] for name in self.schema.names},
                         schema=self.schema)
        self.writer.write_table(table)
        if self.buffer_bytes is not None:
            self._rows_written += table.num_rows
            self._bytes_written += table.nbytes
            per_row = max(1, self._bytes_written // max(1, self._rows_written))
            self._group = max(1, min(self.row_group, self.buffer_bytes // per_row))

    def close(self) -> None:
        self._flush()
        if self.rows == 0:
            self.writer.write_table(self.schema.empty_table())
        self.writer.close()


class ParquetShards:
    """Writes rows to DIR/part-NNNNN-of-MMMMM.parquet, `rows_per_shard` rows each (ParquetRows:
    row groups of at most `row_group` rows and about `buffer_bytes`).

    The total is known only at the end, so shards are written as `.tmp` files and renamed by
    `close()`, which returns [(path, rows)]. Shards of an earlier run in the folder are
    removed first."""

    _FIRST_GROUP = 32  # rows of a shard's first row group, before a row's size is known

    def __init__(self, folder: str, schema: pa.Schema, rows_per_shard: int = 50_000,
                 row_group: int = 1_000, buffer_bytes: int = 16 << 20):
        self.folder, self.schema = folder, schema
        self.rows_per_shard, self.row_group = rows_per_shard, row_group
        self.buffer_bytes = buffer_bytes
        os.makedirs(folder, exist_ok=True)
        # Shards of an earlier run (maybe more of them) must not mix with this run's.
        for name in os.listdir(folder):
            if _SHARD_FILE.match(name) or name.endswith(TMP_SUFFIX):
                os.remove(os.path.join(folder, name))
        self._tmp: list[tuple[str, int]] = []
        self._shard: ParquetRows | None = None

    def write(self, row: dict) -> None:
        if self._shard is None:
            path = os.path.join(self.folder, f"shard-{len(self._tmp):05d}{TMP_SUFFIX}")
            self._shard = ParquetRows(path, self.schema, self.row_group, self.buffer_bytes,
                                      self._FIRST_GROUP)
            self._tmp.append((path, 0))
        self._shard.write(row)
        if self._shard.rows >= self.rows_per_shard:
            self._close_shard()

    def _close_shard(self) -> None:
        self._shard.close()
        path, _ = self._tmp[-1]
        self._tmp[-1] = (path, self._shard.rows)
        self._shard = None

    def close(self) -> list[tuple[str, int]]:
        if self._shard is not None:
            self._close_shard()
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
    with fileio.local_atomic(path) as tmp:
        pq.write_table(table, tmp, compression="zstd")


def write_json(path: str, data) -> None:
    """JSON (indented, UTF-8) under a temporary name, then renamed: never half written."""
    text = json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n"
    fileio.write_atomic(path, text.encode("utf-8"))


class OutputError(WikipairsError):
    """An output folder a run must not write into (it would delete or mix with other files)."""


# What wikipairs writes in the folders a run replaces: shards (build: Parquet and TFRecord;
# parse: Parquet) and their temporary names (ParquetShards: shard-NNNNN.tmp).
_TMP = re.escape(TMP_SUFFIX)
OWN_SHARD_FILE = re.compile(
    r"^(?:part-\d{5}-of-\d{5}\.(?:parquet|tfrecord\.gz)(?:%s)?|shard-\d{5}%s)$" % (_TMP, _TMP))


def listed_files(manifest: dict) -> list[dict]:
    """The file entries ({"path", "sha256", maybe "bytes" and "rows"}) of a manifest of
    `wikipairs build` (its shards, stats.json, README.md and the copied vocabulary) or of `wikipairs parse` (its article
    shards, redirects.parquet, parse_stats.json and README.md). KeyError or TypeError for
    anything else."""
    if not isinstance(manifest, dict):
        raise TypeError("not a JSON object")
    if manifest.get("tool") == "wikipairs parse":
        entries = list(manifest["outputs"])
    else:
        entries = list(manifest["shards"]) + [manifest["stats"]]
        entries += [manifest["card"]] if "card" in manifest else []  # older builds had none
        entries += vocab_entries(manifest)  # so had builds before the copied model
    for entry in entries:
        if not isinstance(entry["path"], str) or not isinstance(entry["sha256"], str):
            raise TypeError(f"a file entry without a path and sha256: {entry!r}")
    return entries


# The SentencePiece model of `wikipairs build --vocab X.model`, copied into the output folder
# (with X.vocab, the pieces, where it exists), so that a moved or copied folder still trains.
VOCAB_COPIES = {"vocab": "spm.model", "vocab_pieces": "spm.vocab"}  # manifest key -> file name


def vocab_entries(manifest: dict) -> list[dict]:
    """The file entries of the copied vocabulary in a build manifest (none before they were)."""
    return [manifest[key] for key in VOCAB_COPIES if key in manifest]


def vocab_sources(model: str) -> dict[str, str]:
    """Manifest key -> the local file copied for it: the model and, where it exists, the
    .vocab file beside it."""
    pieces = os.path.splitext(model)[0] + ".vocab"
    return {"vocab": model, **({"vocab_pieces": pieces} if os.path.isfile(pieces) else {})}


def _is_file(path: str, other: str | None) -> bool:
    try:
        return other is not None and not fileio.is_url(path) and os.path.samefile(path, other)
    except OSError:
        return False


def check_vocab_copies(folder: str, tool: str, manifest: dict | None,
                       model: str | None) -> list[str]:
    """Where a run would overwrite spm.model or spm.vocab in `folder` with its copy of `model`:
    OutputError, before anything is deleted, unless the file is the previous run's copy (listed
    in `manifest`, the folder's old one, and not itself the model that run copied) or holds the
    same bytes. Returns the previous run's copies, which the new run removes."""
    sources = vocab_sources(model) if model else {}
    listed = manifest if isinstance(manifest, dict) else {}
    old = []
    for key, name in VOCAB_COPIES.items():
        path = fileio.join(folder, name)
        if not fileio.exists(path):
            continue
        entry = listed.get(key)
        if isinstance(entry, dict) and os.path.normpath(entry.get("path", "")) == name and \
                not _is_file(path, entry.get("source")):
            old.append(path)
        elif key in sources and not _is_file(path, sources[key]) and \
                fileio.sha256(path) != fileio.sha256(sources[key]):
            raise OutputError(f"{path}: not written by {tool}, and the run copies "
                              f"{sources[key]} there: move it away or choose another output "
                              f"folder (nothing was deleted)")
    return old


def copy_vocab(folder: str, model: str) -> dict[str, dict]:
    """Copy `model` (and its .vocab) into `folder` as spm.model (spm.vocab), each written whole
    or not at all; returns their manifest entries (file_entry plus the absolute source path).
    A source that already is the copy (a model written into the output folder) stays as it is."""
    entries = {}
    for key, source in vocab_sources(model).items():
        path = fileio.join(folder, VOCAB_COPIES[key])
        if not _is_file(path, source):
            with open(source, "rb") as f:
                fileio.write_atomic(path, f.read())
        entries[key] = {**file_entry(folder, path), "source": os.path.abspath(source)}
    return entries


def check_replaceable(folder: str, tool: str, replaced: dict[str, re.Pattern | None]) -> None:
    """Raise OutputError, before anything is deleted, where a run of `tool` ("wikipairs build")
    into `folder` would delete files wikipairs did not write. `replaced`: the subfolders the run
    empties, each with the names wikipairs writes there (None: a hidden folder of its own, all
    of it). A file there must be named so, and where `folder` holds a manifest (of the same
    tool: else the folder is another command's output), be listed by it or be a temporary file.
    A run that stopped before its manifest leaves only such names: it can be run again."""
    manifest_path = fileio.join(folder, MANIFEST)
    listed = None
    if fileio.exists(manifest_path):
        try:
            manifest = json.loads(fileio.read_text(manifest_path))
            other = manifest.get("tool") if isinstance(manifest, dict) else None
            if other != tool:
                raise OutputError(f"{folder}: holds the output of {other or 'another program'} "
                                  f"({MANIFEST}), not of {tool}: choose another output folder "
                                  f"(nothing was deleted)")
            listed = {os.path.normpath(e["path"]) for e in listed_files(manifest)}
        except (ValueError, KeyError, TypeError) as e:
            raise OutputError(f"{manifest_path}: not a manifest of {tool} ({e}): choose another "
                              f"output folder (nothing was deleted)") from None
    for sub, own in replaced.items():
        if own is None:
            continue
        where = fileio.join(folder, sub)
        for name in fileio.listdir(where):
            path = fileio.join(where, name)
            if "/" in name or fileio.isdir(path) or not own.match(name):
                why = f"not written by {tool}"
            elif listed is not None and not name.endswith(TMP_SUFFIX) and \
                    os.path.normpath(os.path.join(sub, name)) not in listed:
                why = f"not listed in {manifest_path}"
            else:
                continue
            raise OutputError(f"{path}: {why}, and a new run replaces {where}: move it away or "
                              f"choose another output folder (nothing was deleted)")


def prepare_output(folder: str, tool: str | None = None,
                   replaced: dict[str, re.Pattern | None] | None = None,
                   vocab: str | None = None) -> None:
    """Make `folder` ready for a new run: an old manifest goes first, so a crash in between never
    leaves a manifest that describes files of a different run, then the old run's copied
    vocabulary. OSError if it is not writable (for a URL: a missing bucket or no permission);
    OutputError where the run would delete or overwrite files wikipairs did not write there (see
    check_replaceable and check_vocab_copies; `vocab`: the model this run copies), before
    anything is deleted."""
    fileio.check_writable(folder)
    old_copies = []
    manifest = fileio.join(folder, MANIFEST)
    if tool is not None:
        check_replaceable(folder, tool, replaced or {})
        previous = json.loads(fileio.read_text(manifest)) if fileio.exists(manifest) else None
        old_copies = check_vocab_copies(folder, tool, previous, vocab)
    if fileio.exists(manifest):
        fileio.remove(manifest)
    for path in old_copies:
        fileio.remove(path)


def file_entry(folder: str, path: str, rows: int | None = None) -> dict:
    entry = {"path": fileio.relpath(path, folder), "bytes": fileio.size(path),
             "sha256": sha256_file(path)}
    if rows is not None:
        entry["rows"] = rows
    return entry
