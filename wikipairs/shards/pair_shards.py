"""Pair rows and the shard files of `wikipairs build` (no Beam here: the pipeline calls these).

A shard holds the pairs whose `pair_id` hash falls in it, sorted by pair_id, so its bytes depend
only on the pairs, never on the runner or the number of workers. Each file is written under a
temporary name and renamed; closing a shard returns its note (rows, files with checksums, token
sums), which the build driver keeps (pipelines/notes.py).
"""
from __future__ import annotations

from wikipairs.schemas import SCHEMA_VERSION, arrow_schema, example_kinds, pair_fields

from .. import fileio
from ..records import Pair
from .layout import FORMATS, SUFFIXES, task_folder
from .output import TMP_SUFFIX, ParquetRows, sha256_file, shard_name


def shard_of(pair_id: str, num_shards: int) -> int:
    return int(pair_id, 16) % num_shards


def pair_row(pair: Pair, count, tokenizer=None, query_max: int = 64, doc_max: int = 288,
             with_negatives: bool = False) -> dict:
    """A Pair as a row of the pair schema; token ids only with a tokenizer, the hard-negative
    lists (schemas.pair.HARD_NEGATIVES) only `with_negatives`."""
    row = dict(vars(pair))  # a flat dataclass: no deep copy needed (asdict is 10x slower)
    negatives = row.pop("negatives")
    if pair.query_tokens < 0:
        row["query_tokens"] = count(pair.query)
    if pair.doc_tokens < 0:
        row["doc_tokens"] = count(pair.doc_title) + count(pair.doc_text)
    if tokenizer is not None:
        row["query_ids"] = tokenizer.encode(pair.query, query_max)
        row["doc_ids"] = tokenizer.encode_pair(pair.doc_title, pair.doc_text, doc_max)
    if with_negatives:
        row["neg_doc_id"] = [n.doc_id for n in negatives]
        row["neg_passage_id"] = [n.passage_id for n in negatives]
        row["neg_page_id"] = [n.page_id for n in negatives]
        row["neg_title"] = [n.title for n in negatives]
        row["neg_text"] = [n.text for n in negatives]
        if tokenizer is not None:
            ids = [tokenizer.encode_pair(n.title, n.text, doc_max) for n in negatives]
            row["neg_ids"] = [i for one in ids for i in one]
            row["neg_ids_lengths"] = [len(one) for one in ids]
    return row


class ShardWriter:
    """Streams rows into DIR/<format>/<task>/part-<index>-of-<count> in every format (see
    layout.py; temporary names, renamed by close(), which also returns the shard's note)."""

    def __init__(self, output: str, task: str, index: int, count: int,
                 formats: tuple[str, ...], with_ids: bool, row_group: int = 2_000,
                 with_negatives: bool = False):
        self.output, self.task, self.index, self.count = output, task, index, count
        self.fields = pair_fields(with_ids, with_negatives)
        self.schema = arrow_schema(self.fields, metadata={"wikipairs": "pair",
                                                          "schema_version": str(SCHEMA_VERSION)})
        self.paths = {fmt: fileio.join(task_folder(output, fmt, task),
                                       shard_name(index, count, SUFFIXES[fmt]))
                      for fmt in formats}
        for fmt in formats:
            fileio.makedirs(task_folder(output, fmt, task))
        self.files = {fmt: fileio.create(path + TMP_SUFFIX) for fmt, path in self.paths.items()}
        self.parquet, self.tfrecord = None, None
        if "parquet" in formats:
            self.parquet = ParquetRows(self.files["parquet"], self.schema, row_group)
        if "tfrecord" in formats:
            from .tfrecord import RowEncoder, TFRecordWriter
            self.encoder = RowEncoder(example_kinds(self.fields))
            # gzip level 1: several times faster than the default 6, files ~10% larger
            self.tfrecord = TFRecordWriter(self.files["tfrecord"], compression="gzip",
                                           compresslevel=1)
        self.pairs = self.query_tokens = self.doc_tokens = 0
        self.splits = {"train": 0, "eval": 0}

    def write(self, row: dict) -> None:
        self.pairs += 1
        self.splits[row.get("split", "train")] += 1
        self.query_tokens += row["query_tokens"]
        self.doc_tokens += row["doc_tokens"]
        if self.tfrecord is not None:
            self.tfrecord.write(self.encoder.encode(row))
        if self.parquet is not None:
            self.parquet.write(row)

    def close(self) -> dict:
        if self.parquet is not None:
            self.parquet.close()
        if self.tfrecord is not None:
            self.tfrecord.close()
        files = []
        for fmt, path in self.paths.items():
            self.files[fmt].close()  # remote: the object is written now
            fileio.rename(path + TMP_SUFFIX, path)
            files.append({"path": fileio.relpath(path, self.output), "format": fmt,
                          "rows": self.pairs, "bytes": fileio.size(path),
                          "sha256": sha256_file(path)})
        return {"task": self.task, "shard": self.index, "of": self.count, "pairs": self.pairs,
                "splits": self.splits, "files": files, "query_tokens": self.query_tokens, "doc_tokens": self.doc_tokens}


def write_shard(output: str, task: str, index: int, count: int, rows: list[dict],
                formats: tuple[str, ...], with_ids: bool, with_negatives: bool = False) -> dict:
    """Write shard `index` of `count` of a task from rows (sorted by pair_id); returns its note."""
    writer = ShardWriter(output, task, index, count, formats, with_ids,
                         with_negatives=with_negatives)
    for row in sorted(rows, key=lambda r: r["pair_id"]):
        writer.write(row)
    return writer.close()


__all__ = ["FORMATS", "SUFFIXES", "ShardWriter", "shard_of", "pair_row", "write_shard"]
