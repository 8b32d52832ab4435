"""Training batches from the pair shards of `wikipairs build` (DIR/tfrecord/<task>/ and
DIR/parquet/<task>/, or an older build's DIR/<task>/: wikipairs.shards.layout).

Two readers with the same contract, seeded and with static shapes (what a TPU needs):

- `tf_dataset`: tf.data over the TFRecord shards, parsed with the schema's
  `tf_feature_spec(pair_fields(True))` (TensorFlow backend; TPU/GPU input pipelines).
- `numpy_batches`: a pyarrow reader of the Parquet shards yielding NumPy batches, for the JAX
  backend (no TensorFlow anywhere: this module imports TensorFlow only inside `tf_dataset`).

Both yield {"query_ids": int32 [B, max_query_len], "doc_ids": int32 [B, max_doc_len]}: ids
truncated (the last kept id becomes [SEP]) or padded with [PAD]=0; batches of exactly
`batch_size` (drop_remainder). With `negative_keys=True` also "negative_keys": int32 [B, 3, 2]
([B, 4, 2] with `page_keys=True`), each row's keys for clean in-batch negatives
(`losses.duplicate_mask`), 64-bit hashes as two int32 words (the JAX backend has no int64 by
default): [0] the document (the shards' `doc_id` where they have one, else its title and text),
[1] the passage (lang, doc_page_id, doc_passage: also ICT documents of one passage that leave
out different query sentences), [2] the query text, and with page_keys (`train
--page-negatives`; issue 17) [3] the page that makes a document a positive, by the row's task:
a BFS row's page (every body passage of page A is a BFS document of A's lead sentences,
whichever lead sentence a row drew), a WLP row's query page (every passage linking to A is a
WLP document of A's lead), and for ICT, whose positive is the one passage holding the query, the
document key again (the other passages of a page stay negatives). So two BFS rows of one
page, or two WLP rows of one query page, are not pushed apart when they drew different lead
sentences. The rule compares rows of one task: a BFS row of page A keeps an ICT or WLP row's
passage of A among its negatives.
The readers hash differently (blake2b in NumPy, TensorFlow's fingerprint
hash), which is fine: keys are only compared within a batch. Tasks are mixed per example,
uniformly by default (`weights` for another mix), or per batch (`task_batches=True`, `train
--task-batches`: all rows of a batch from the task drawn for it); with `repeat` each task's
stream repeats forever, so a small task (WLP) is oversampled rather than exhausted.

Distinct query pages (`distinct_pages=True`, `train --distinct-pages`; issue 17): a batch of B
rows is drawn from 2B candidate rows read as without the option (the same task mix, the same
seeded shuffle): it keeps, in their order, the first B candidates whose `query_page_id` is not
already in the batch; when fewer than B pages are distinct among the 2B, the other candidates in
order fill it (duplicates that clean negatives then mask), so shapes stay static and a tiny
corpus does not hang. The rows kept stay in their candidate order; the candidates not used are
dropped (each batch reads 2B rows, and with repeat=False a last tail of fewer than 2B is
dropped). Pages are compared by id alone (the same id in two languages counts as one page). The
same rule in both readers (`distinct_page_rows`, `_tf_distinct_pages`); without the option the
batches are those of before, byte for byte.

Hard negatives (`hard_negatives=H` > 0, shards of `wikipairs build --vocab ... --hard-negatives N`
with the list columns neg_ids / neg_ids_lengths, and with keys neg_doc_id / neg_passage_id): also
"hard_negative_ids" int32 [B, H, Ld], each row's first H negatives fitted like `doc_ids`, rows
beyond the pair's count all [PAD], and "hard_negative_mask" bool [B, H] (which are real); with
negative_keys=True "hard_negative_keys" int32 [B, H, 2, 2]: each negative's document (its
neg_doc_id) and passage (neg_passage_id) keys, comparable with the rows' keys [0] and [1], which
are then the shards' `doc_id` and `passage_id` (the ids the negatives carry), so that
`losses.in_batch_softmax_loss` masks a hard negative that is some row's positive for that row.
Shards without the columns: DataError (`check_hard_negatives`).

Held-out split: the build's `split` column (pair schema version 3: decided by the query page,
wikipairs.pairs.heldout; `eval_percent` is then the build's, `--eval-percent`). Older shards
without it: the same rule from `query_page_id` (`page_split_mask`: eval when
`page_bucket(query_page_id) < eval_percent * 100`), computed identically in NumPy and
TensorFlow. A query page is on one side in every task, so training never sees an eval page.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import zlib
from collections.abc import Iterator, Sequence

import numpy as np

from wikipairs.errors import WikipairsError
from wikipairs.pairs.heldout import (BUCKET_INCREMENT, BUCKET_MODULUS, BUCKET_MULTIPLIER, BUCKETS,
                                     eval_threshold, page_buckets)
from wikipairs.shards.layout import SUFFIXES, find_task_shards
from wikipairs.readahead import prefetched

from wikipairs.special_tokens import PAD_ID, SEP_ID

from .configs import HARD_NEGATIVE_IDS, HARD_NEGATIVE_KEYS, HARD_NEGATIVE_MASK, NEGATIVE_KEYS

TASKS = ("ict", "bfs", "wlp")
SPLITS = ("train", "eval", "all")
FORMATS = ("tfrecord", "parquet")
EVAL_PERCENT = 5
ID_COLUMNS = ("pair_id", "query_ids", "doc_ids")
KEY_COLUMNS = ("doc_id", "doc_title", "doc_text", "lang", "doc_page_id", "doc_passage", "query")
PAGE_KEY_COLUMNS = ("task", "query_page_id")  # and lang, doc_page_id: the page key's columns
HARD_ID_COLUMNS = ("neg_ids", "neg_ids_lengths")  # build --vocab --hard-negatives N
HARD_KEY_COLUMNS = ("neg_doc_id", "neg_passage_id", "doc_id", "passage_id")
QUERY_PAGE_ID = "query_page_id"  # read for distinct_pages, not given in the batches
PREFETCH_BATCHES = 2  # make_batches on Parquet: batches a thread makes ahead (readahead.prefetched)

# split_bucket: h = sum_i byte_i * 31^i mod (2^31 - 1) over the first 256 bytes, bucket = h % 100
_HASH_PRIME = 2_147_483_647
_HASH_BYTES = 256
_HASH_WEIGHTS = np.array([pow(31, i, _HASH_PRIME) for i in range(_HASH_BYTES)], dtype=np.int64)


class DataError(WikipairsError):
    """Training data that cannot be read: a missing folder, no shards, shards without ids."""


# ---- the held-out split ------------------------------------------------------------------------

def split_bucket(pair_id: str | bytes) -> int:
    """The pair's bucket in [0, 100): a stable hash of its id (not Python's `hash`)."""
    data = pair_id.encode("utf-8") if isinstance(pair_id, str) else bytes(pair_id)
    data = np.frombuffer(data[:_HASH_BYTES], dtype=np.uint8).astype(np.int64)
    return int(np.sum(data * _HASH_WEIGHTS[:len(data)]) % _HASH_PRIME % 100)


def page_split_mask(query_page_ids, split: str, eval_percent: float = EVAL_PERCENT) -> np.ndarray:
    """bool [N]: which pairs are in `split` by their query page (the build's rule,
    wikipairs.pairs.heldout), for shards without the `split` column."""
    _check_split(split, eval_percent)
    ids = np.asarray(query_page_ids, dtype=np.int64)
    if split == "all":
        return np.ones(len(ids), dtype=bool)
    is_eval = page_buckets(ids) < eval_threshold(eval_percent)
    return is_eval if split == "eval" else ~is_eval


def batch_split_mask(batch, split: str, eval_percent: float = EVAL_PERCENT) -> np.ndarray:
    """bool [N] of an Arrow batch: its `split` column where the shards have one, else the
    query page rule."""
    _check_split(split, eval_percent)
    if split == "all":
        return np.ones(batch.num_rows, dtype=bool)
    names = batch.schema.names
    if "split" in names:
        values = np.array(batch.column("split").to_pylist(), dtype=object)
        return values == split
    return page_split_mask(batch.column("query_page_id").to_numpy(), split, eval_percent)


def split_mask(pair_ids: Sequence, split: str, eval_percent: int = EVAL_PERCENT) -> np.ndarray:
    """bool [N]: which of `pair_ids` (str or bytes) are in `split` ("train", "eval" or "all")."""
    _check_split(split, eval_percent)
    if split == "all":
        return np.ones(len(pair_ids), dtype=bool)
    buckets = np.fromiter((split_bucket(p) for p in pair_ids), dtype=np.int64,
                          count=len(pair_ids))
    return buckets < eval_percent if split == "eval" else buckets >= eval_percent


def _check_split(split: str, eval_percent: int) -> None:
    if split not in SPLITS:
        raise DataError(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
    if not 0 <= eval_percent < 100:
        raise DataError(f"eval percent must be in [0, 100), not {eval_percent}")


# ---- finding shards ----------------------------------------------------------------------------

def _as_list(data_dirs) -> list[str]:
    dirs = [data_dirs] if isinstance(data_dirs, (str, os.PathLike)) else list(data_dirs)
    return [os.fspath(d) for d in dirs]


def task_folders(data_dir: str, fmt: str) -> dict[str, list[str]]:
    """task -> sorted shard files of one build folder: DIR/<format>/<task>/part-*<suffix>, an
    older build's DIR/<task>/part-*<suffix> (wikipairs.shards.layout), or DIR itself when it
    holds part-* files (the task is then the folder's name)."""
    found = {}
    own = sorted(glob.glob(os.path.join(glob.escape(data_dir), "part-*" + SUFFIXES[fmt])))
    if own:
        found[os.path.basename(os.path.normpath(data_dir))] = own
    for task, files in find_task_shards(data_dir, fmt).items():
        found.setdefault(task, []).extend(files)
    return found


def find_shards(data_dirs, tasks: Sequence[str] | None = None, fmt: str = "tfrecord"
                ) -> dict[str, list[str]]:
    """task -> shard files over all `data_dirs`, in `tasks` order.

    tasks None: every task found (ict, bfs, wlp first, then others by name); a task named
    explicitly must have shards in some folder. Raises DataError."""
    if fmt not in FORMATS:
        raise DataError(f"data format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    dirs = _as_list(data_dirs)
    if not dirs:
        raise DataError("no training data folder given (--data DIR)")
    found: dict[str, list[str]] = {}
    for d in dirs:
        if not os.path.isdir(d):
            raise DataError(f"{d}: no such data folder")
        for task, files in task_folders(d, fmt).items():
            found.setdefault(task, []).extend(files)
    if not found:
        raise DataError(f"{', '.join(dirs)}: no pair shards "
                        f"({fmt}/<task>/part-*{SUFFIXES[fmt]}); build them with "
                        f"`wikipairs build --vocab ...`")
    if tasks is None:
        order = [t for t in TASKS if t in found] + sorted(t for t in found if t not in TASKS)
        return {t: found[t] for t in order}
    tasks = list(tasks)
    if not tasks:
        raise DataError("no tasks given")
    missing = [t for t in tasks if t not in found]
    if missing:
        raise DataError(f"no {', '.join(missing)} shards in {', '.join(dirs)} "
                        f"(found: {', '.join(found)})")
    if len(set(tasks)) != len(tasks):
        raise DataError(f"tasks given twice: {', '.join(tasks)}")
    return {t: found[t] for t in tasks}


def task_weights(tasks: Sequence[str], weights: Sequence[float] | None) -> list[float]:
    """Normalized mixing weights (uniform when None)."""
    if weights is None or len(weights) == 0:
        return [1.0 / len(tasks)] * len(tasks)
    if len(weights) != len(tasks):
        raise DataError(f"{len(weights)} task weights for {len(tasks)} tasks "
                        f"({', '.join(tasks)})")
    w = [float(x) for x in weights]
    if any(not np.isfinite(x) or x < 0 for x in w) or sum(w) <= 0:
        raise DataError(f"task weights must be >= 0 with a positive sum, got {w}")
    return [x / sum(w) for x in w]


def read_manifest(data_dir: str) -> dict | None:
    path = os.path.join(data_dir, "manifest.json")
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise DataError(f"{path}: unreadable manifest ({e})") from None


def manifest_vocab(data_dir: str) -> str | None:
    """The SentencePiece model a build used: its copy in the build folder (the manifest's
    "vocab" entry, spm.model), else, for builds before the copy, the manifest's config.vocab if
    it still exists: the path as written (absolute, or relative to the working directory), else
    relative to the build folder, else a file of that name in the build folder or its parent."""
    manifest = read_manifest(data_dir) or {}
    copy = manifest.get("vocab")
    if isinstance(copy, dict) and isinstance(copy.get("path"), str) and \
            os.path.isfile(os.path.join(data_dir, copy["path"])):
        return os.path.abspath(os.path.join(data_dir, copy["path"]))
    vocab = (manifest.get("config") or {}).get("vocab")
    if not vocab:
        return None
    for path in (vocab, os.path.join(data_dir, vocab),
                 os.path.join(data_dir, os.path.basename(vocab)),
                 os.path.join(os.path.dirname(os.path.normpath(data_dir)),
                              os.path.basename(vocab))):
        if os.path.isfile(path):
            return os.path.abspath(path)
    return None


def check_token_ids(data_dirs, shards: dict[str, list[str]]) -> None:
    """DataError unless the shards carry token ids (a build with --vocab)."""
    for d in _as_list(data_dirs):
        manifest = read_manifest(d)
        if manifest and "config" in manifest and not manifest["config"].get("vocab"):
            raise DataError(f"{d}: the pairs have no token ids (built without --vocab); "
                            f"rebuild with `wikipairs build --vocab SPM.model`")
    import pyarrow.parquet as pq

    for files in shards.values():
        for path in files:
            if path.endswith(".parquet"):
                names = pq.read_schema(path).names
                missing = [c for c in ID_COLUMNS if c not in names]
                if missing:
                    raise DataError(f"{path}: no {', '.join(missing)} column (pairs built "
                                    f"without --vocab?)")
            break  # one file per task is enough


def _first_record_features(path: str) -> set[str]:
    """The feature names of the first Example of a (GZIP) TFRecord shard (none when empty)."""
    import tensorflow as tf

    for record in tf.data.TFRecordDataset(path, compression_type="GZIP").take(1):
        return set(tf.train.Example.FromString(record.numpy()).features.feature)
    return set()


def check_hard_negatives(shards: dict[str, list[str]], keys: bool = False) -> None:
    """DataError unless the shards carry hard negatives with token ids (`wikipairs build --vocab
    ... --hard-negatives N`): the neg_ids / neg_ids_lengths columns (and with `keys` neg_doc_id,
    neg_passage_id, doc_id, passage_id). One file per task is looked at."""
    import pyarrow.parquet as pq

    wanted = HARD_ID_COLUMNS + (HARD_KEY_COLUMNS if keys else ())
    for files in shards.values():
        for path in files[:1]:
            if path.endswith(".parquet"):
                names = set(pq.read_schema(path).names)
            else:
                names = _first_record_features(path)
                if not names:
                    continue  # an empty shard: nothing to tell
            missing = [c for c in wanted if c not in names]
            if missing:
                raise DataError(f"{path}: no hard negatives ({', '.join(missing)} missing): "
                                f"rebuild with `wikipairs build --vocab SPM.model "
                                f"--hard-negatives N`, or train without --hard-negatives")


def _task_seed(seed: int, task: str) -> int:
    return (int(seed) * 1_000_003 + zlib.crc32(task.encode())) % (2 ** 31 - 1)


# ---- NumPy / Parquet ---------------------------------------------------------------------------

def pad_ids(values: np.ndarray, lengths: np.ndarray, max_len: int, starts=None) -> np.ndarray:
    """Ragged ids (flat `values`, row `lengths`) -> int32 [N, max_len]: padded with [PAD]; a row
    longer than max_len is cut and its last kept id set to [SEP]. starts: where each row begins
    in `values` (None: the rows are back to back)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    if starts is None:
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    starts = np.asarray(starts, dtype=np.int64)
    positions = np.arange(max_len, dtype=np.int64)
    valid = positions[None, :] < lengths[:, None]
    out = np.full((len(lengths), max_len), PAD_ID, dtype=np.int32)
    index = starts[:, None] + positions[None, :]
    out[valid] = np.asarray(values)[index[valid]]
    out[lengths > max_len, max_len - 1] = SEP_ID
    return out


def _ragged(column) -> tuple[np.ndarray, np.ndarray]:
    import pyarrow.compute as pc

    lengths = pc.fill_null(pc.list_value_length(column), 0).to_numpy(zero_copy_only=False)
    values = pc.list_flatten(column).to_numpy(zero_copy_only=False)
    return values, lengths


def _hash64(strings) -> np.ndarray:
    """int64 [N]: 64-bit blake2b of each string (None: of the empty string)."""
    return np.array([int.from_bytes(hashlib.blake2b((x or "").encode("utf-8"), digest_size=8)
                                    .digest(), "little", signed=True) for x in strings],
                    dtype=np.int64)


def negative_keys(batch, passage_ids: bool = False, page_keys: bool = False) -> np.ndarray:
    """int32 [N, 3, 2]: the clean-negative keys (document, passage, query; with `page_keys`
    [N, 4, 2], and the page) of a pyarrow batch or table of pairs (see the module docstring).
    A key whose columns the shard lacks is the pair_id's hash (unique: nothing is masked by it);
    the page key without the task and page columns is the document key. passage_ids: the
    passage key is the hash of the `passage_id` column (what hard negatives carry:
    `hard_negative_keys`)."""
    from wikipairs.pairs.tasks import doc_id

    names = set(batch.schema.names)

    def col(name):
        return batch.column(name).to_pylist()

    pair = col("pair_id")
    if "doc_id" in names:
        doc = _hash64(col("doc_id"))
    elif {"doc_title", "doc_text"} <= names:  # older builds: the doc_id by the build's rule
        doc = _hash64(doc_id(t, x) for t, x in zip(col("doc_title"), col("doc_text")))
    else:
        doc = _hash64(pair)
    if passage_ids:
        passage = _hash64(col("passage_id"))
    elif {"doc_page_id", "doc_passage"} <= names:
        lang = col("lang") if "lang" in names else [""] * len(pair)
        passage = _hash64(f"{a}\x00{p}\x00{i}" for a, p, i in zip(
            lang, col("doc_page_id"), col("doc_passage")))
    else:
        passage = _hash64(pair)
    query = _hash64(col("query") if "query" in names else pair)
    if not page_keys:
        return np.stack([doc, passage, query], axis=1).view(np.int32).reshape(len(pair), 3, 2)
    page = doc.copy()  # ICT (and any other task): nothing beyond the document
    if {"task", "lang", "doc_page_id", "query_page_id"} <= names:
        tasks, lang = col("task"), col("lang")
        for page_of, task in ((col("doc_page_id"), "bfs"), (col("query_page_id"), "wlp")):
            rows = [r for r, t in enumerate(tasks) if t == task]
            if rows:
                page[rows] = _hash64(f"{task}\x00{lang[r]}\x00{page_of[r]}" for r in rows)
    return np.stack([doc, passage, query, page], axis=1).view(np.int32).reshape(len(pair), 4, 2)


def hard_negatives(batch, count: int, max_doc_len: int, keys: bool = False
                   ) -> tuple[np.ndarray, ...]:
    """(ids int32 [N, count, max_doc_len], mask bool [N, count](, keys int32 [N, count, 2, 2]))
    of a pyarrow batch with the hard-negative columns: each row's first `count` negatives (split
    from the concatenated `neg_ids` by `neg_ids_lengths`, fitted like `pad_ids`), all-[PAD] rows
    and mask False beyond the row's own count; keys: the hashes of neg_doc_id and neg_passage_id
    (those of padding negatives are 0: masked anyway)."""
    rows = batch.num_rows
    values, total = _ragged(batch.column("neg_ids"))
    lengths, per_row = _ragged(batch.column("neg_ids_lengths"))
    lengths, per_row = lengths.astype(np.int64), per_row.astype(np.int64)
    row_starts = np.concatenate([[0], np.cumsum(per_row)[:-1]]).astype(np.int64)
    row_of = np.repeat(np.arange(rows), per_row)  # per negative: its row ...
    sums = np.bincount(row_of, weights=lengths, minlength=rows).astype(np.int64)
    if (sums != total).any():
        bad = int(np.flatnonzero(sums != total)[0])
        raise DataError(f"hard negatives: row {bad} has {int(total[bad])} neg_ids but its "
                        f"neg_ids_lengths add up to {int(sums[bad])}")
    rank = np.arange(len(lengths)) - row_starts[row_of]  # ... and its place in the row
    kept = rank < count
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    ids = np.full((rows, count, max_doc_len), PAD_ID, dtype=np.int32)
    mask = np.zeros((rows, count), dtype=bool)
    if kept.any():
        fitted = pad_ids(values, lengths[kept], max_doc_len, starts=starts[kept])
        ids[row_of[kept], rank[kept]] = fitted
        mask[row_of[kept], rank[kept]] = True
    if not keys:
        return ids, mask
    out = np.zeros((rows, count, 2, 2), dtype=np.int32)
    for k, name in enumerate(("neg_doc_id", "neg_passage_id")):
        strings, _ = _ragged(batch.column(name))
        hashes = _hash64(strings[kept]).view(np.int32).reshape(-1, 2)
        out[row_of[kept], rank[kept], k] = hashes
    return ids, mask, out


class _ParquetTaskStream:
    """One task's examples: files in a seeded order (reshuffled every pass), read a record batch
    at a time, filtered to the split, padded, through a seeded shuffle buffer."""

    def __init__(self, files, *, split, eval_percent, max_query_len, max_doc_len, rng,
                 shuffle_buffer, repeat, read_rows=1024, keys=False, hard=0, pages=False,
                 page_keys=False):
        self.files, self.split, self.eval_percent = list(files), split, eval_percent
        self.lq, self.ld, self.rng = max_query_len, max_doc_len, rng
        self.shuffle_buffer, self.repeat, self.read_rows = shuffle_buffer, repeat, read_rows
        self.keys, self.hard, self.pages, self.page_keys = keys, hard, pages, page_keys
        self._chunks = self._read()
        self.exhausted = False
        # the fields (`batch_fields`) of the examples read and not yet taken
        self.parts = [np.zeros((0, *shape), dtype) for _, shape, dtype in
                      batch_fields(max_query_len, max_doc_len, keys, hard, pages,
                                   page_keys)]

    def _read(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        import pyarrow.parquet as pq

        while True:
            any_rows = False
            order = self.rng.permutation(len(self.files)) if self.shuffle_buffer > 1 \
                else range(len(self.files))
            for i in order:
                parquet = pq.ParquetFile(self.files[i])
                columns = list(ID_COLUMNS)
                if self.keys:
                    names = parquet.schema_arrow.names
                    wanted = [c for c in KEY_COLUMNS if c in names]
                    if "doc_id" in wanted:  # no need for the texts it stands for
                        wanted = [c for c in wanted if c not in ("doc_title", "doc_text")]
                    columns += wanted
                    if self.page_keys:
                        columns += [c for c in PAGE_KEY_COLUMNS if c in names]
                    if self.hard:
                        columns += [c for c in HARD_KEY_COLUMNS if c not in columns]
                if self.hard:
                    columns += list(HARD_ID_COLUMNS)
                if self.split != "all":
                    names = parquet.schema_arrow.names
                    columns += ["split"] if "split" in names else ["query_page_id"]
                if self.pages:
                    columns.append(QUERY_PAGE_ID)
                columns = list(dict.fromkeys(columns))  # a column wanted twice is read once
                for batch in parquet.iter_batches(batch_size=self.read_rows, columns=columns):
                    keep = batch_split_mask(batch, self.split, self.eval_percent)
                    if not keep.any():
                        continue
                    batch = batch.filter(keep) if not keep.all() else batch
                    any_rows = True
                    parts = (pad_ids(*_ragged(batch.column("query_ids")), self.lq),
                             pad_ids(*_ragged(batch.column("doc_ids")), self.ld))
                    if self.keys:
                        parts += (negative_keys(batch, passage_ids=self.hard > 0,
                                                page_keys=self.page_keys),)
                    if self.hard:
                        ids, mask, *hard_keys = hard_negatives(batch, self.hard, self.ld,
                                                               self.keys)
                        parts += (ids, mask, *hard_keys)
                    if self.pages:
                        parts += (batch.column(QUERY_PAGE_ID).to_numpy(zero_copy_only=False)
                                  .astype(np.int64),)
                    yield parts
            if not self.repeat or not any_rows:
                return

    def available(self) -> int:
        return len(self.parts[0])

    def _fill(self, need: int) -> None:
        read, have = [[p] for p in self.parts], self.available()
        while have < need and not self.exhausted:
            try:
                chunk = next(self._chunks)
            except StopIteration:
                self.exhausted = True
                break
            for parts, part in zip(read, chunk):
                parts.append(part)
            have += len(chunk[0])
        if len(read[0]) > 1:
            self.parts = [np.concatenate(parts) for parts in read]

    def take(self, k: int) -> list[np.ndarray]:
        """k examples: the `batch_fields` arrays (fewer only when a non-repeating stream runs
        out)."""
        self._fill(k + max(self.shuffle_buffer, 0))
        k = min(k, self.available())
        if self.shuffle_buffer > 1:
            pick = np.sort(self.rng.choice(self.available(), size=k, replace=False))
        else:
            pick = np.arange(k)
        taken = [p[pick] for p in self.parts]
        rest = np.ones(self.available(), dtype=bool)
        rest[pick] = False
        self.parts = [p[rest] for p in self.parts]
        return taken


def batch_fields(max_query_len: int, max_doc_len: int, keys: bool = False, hard: int = 0,
                 pages: bool = False, page_keys: bool = False) -> list[tuple[str, tuple, type]]:
    """(name, shape of one example, dtype) of each field of a batch, in the readers' order;
    pages: last, the rows' query_page_id (the readers' own, for distinct_pages: not in the
    batches they give)."""
    fields = [("query_ids", (max_query_len,), np.int32), ("doc_ids", (max_doc_len,), np.int32)]
    if keys:
        fields.append((NEGATIVE_KEYS, (4 if page_keys else 3, 2), np.int32))
    if hard:
        fields += [(HARD_NEGATIVE_IDS, (hard, max_doc_len), np.int32),
                   (HARD_NEGATIVE_MASK, (hard,), bool)]
        if keys:
            fields.append((HARD_NEGATIVE_KEYS, (hard, 2, 2), np.int32))
    if pages:
        fields.append((QUERY_PAGE_ID, (), np.int64))
    return fields


def distinct_page_rows(query_page_ids, batch_size: int) -> np.ndarray:
    """int64 [batch_size]: the rows (ascending) of the `distinct_pages` rule among candidates
    with these query pages: each page's first row, the first `batch_size` of them; when fewer
    pages are distinct, the other rows in order fill the batch."""
    pages = np.asarray(query_page_ids, dtype=np.int64)
    first = np.zeros(len(pages), dtype=bool)
    first[np.unique(pages, return_index=True)[1]] = True
    order = np.concatenate([np.flatnonzero(first), np.flatnonzero(~first)])[:batch_size]
    return np.sort(order)


def _sources(data_dirs, tasks, weights, batch_size: int, split: str, eval_percent: int,
             data_format: str, hard_negatives: int = 0, keys: bool = False
             ) -> tuple[dict, list[str], list[float]]:
    """What both readers check and find first: {task: shard paths}, task names, mix weights."""
    if batch_size < 1:
        raise DataError(f"batch size must be >= 1, not {batch_size}")
    if not isinstance(hard_negatives, int) or hard_negatives < 0:
        raise DataError(f"hard negatives must be an integer >= 0, not {hard_negatives!r}")
    _check_split(split, eval_percent)
    shards = find_shards(data_dirs, tasks, data_format)
    check_token_ids(data_dirs, shards)
    if hard_negatives:
        check_hard_negatives(shards, keys)
    names = list(shards)
    return shards, names, task_weights(names, weights)


def numpy_batches(data_dirs, *, tasks: Sequence[str] | None = TASKS,
                  weights: Sequence[float] | None = None, batch_size: int = 32,
                  max_query_len: int = 64, max_doc_len: int = 288, split: str = "train",
                  eval_percent: int = EVAL_PERCENT, seed: int = 0, shuffle: bool = True,
                  shuffle_buffer: int = 10_000, repeat: bool = True, skip_batches: int = 0,
                  negative_keys: bool = False, hard_negatives: int = 0,
                  distinct_pages: bool = False, page_keys: bool = False,
                  task_batches: bool = False) -> Iterator[dict[str, np.ndarray]]:
    """The Parquet reader: an iterator of {"query_ids": int32 [B, Lq], "doc_ids": int32 [B, Ld]}
    (and "negative_keys" int32 [B, 3, 2] with negative_keys=True, [B, 4, 2] with page_keys
    too; "hard_negative_ids", "hard_negative_mask" (and "hard_negative_keys") with
    hard_negatives=H > 0: the module docstring). distinct_pages: batches without duplicate
    query pages where the candidates allow (the module docstring).

    No TensorFlow. Deterministic under `seed`. Each example's task is drawn with `weights`
    (uniform by default), or with task_batches each batch's (all its rows from that task); with
    repeat=False a finished task drops out of the mix and the iterator ends when every task is
    done (the last partial batch is dropped; with task_batches each task's last partial batch,
    as the TFRecord reader drops it).
    skip_batches: batches to draw and throw away first (resuming a run where it stopped)."""
    shards, names, probs = _sources(data_dirs, tasks, weights, batch_size, split, eval_percent,
                                    "parquet", hard_negatives, negative_keys)
    fields = batch_fields(max_query_len, max_doc_len, negative_keys, hard_negatives,
                          distinct_pages, negative_keys and page_keys)
    draw = 2 * batch_size if distinct_pages else batch_size  # candidate rows per batch
    probs = np.array(probs)
    rng = np.random.default_rng([int(seed), 0x5EED])
    streams = [_ParquetTaskStream(files, split=split, eval_percent=eval_percent,
                                  max_query_len=max_query_len, max_doc_len=max_doc_len,
                                  rng=np.random.default_rng([int(seed), _task_seed(seed, t)]),
                                  shuffle_buffer=shuffle_buffer if shuffle else 0, repeat=repeat,
                                  keys=negative_keys, hard=hard_negatives,
                                  pages=distinct_pages, page_keys=page_keys)
               for t, files in zip(names, shards.values())]
    emitted = 0
    while True:
        alive = np.array([not (s.exhausted and s.available() == 0) for s in streams])
        if not alive.any():
            return
        p = probs * alive
        if p.sum() <= 0:
            return
        if task_batches:
            choice = np.full(draw, rng.choice(len(streams), p=p / p.sum()))
        else:
            choice = rng.choice(len(streams), size=draw, p=p / p.sum())
        out = [np.zeros((draw, *shape), dtype) for _, shape, dtype in fields]
        filled = np.zeros(draw, dtype=bool)
        for t, stream in enumerate(streams):
            slots = np.flatnonzero(choice == t)
            if len(slots) == 0:
                continue
            taken = stream.take(len(slots))
            for o, part in zip(out, taken):
                o[slots[:len(part)]] = part
            filled[slots[:len(taken[0])]] = True
        if not filled.all() and task_batches:
            continue  # a non-repeating task's last partial batch: dropped
        if not filled.all():  # a non-repeating task ran out: top up from the others
            for t, stream in enumerate(streams):
                missing = np.flatnonzero(~filled)
                if len(missing) == 0:
                    break
                if probs[t] <= 0:
                    continue
                taken = stream.take(len(missing))
                for o, part in zip(out, taken):
                    o[missing[:len(part)]] = part
                filled[missing[:len(taken[0])]] = True
            if not filled.all():
                return  # drop_remainder
        if distinct_pages:
            rows = distinct_page_rows(out.pop(), batch_size)  # the last field: query_page_id
            out = [o[rows] for o in out]
        emitted += 1
        if emitted > skip_batches:
            yield dict(zip([name for name, _, _ in fields], out))


# ---- tf.data / TFRecord ------------------------------------------------------------------------

def tf_split_bucket(pair_id):
    """`split_bucket` in TensorFlow ops, for a scalar string tensor."""
    import tensorflow as tf

    data = tf.cast(tf.io.decode_raw(pair_id, tf.uint8)[:_HASH_BYTES], tf.int64)
    weights = tf.constant(_HASH_WEIGHTS)[:tf.shape(data)[0]]
    return tf.math.floormod(tf.math.floormod(tf.reduce_sum(data * weights), _HASH_PRIME), 100)


def tf_page_bucket(page_id):
    """`wikipairs.pairs.heldout.page_bucket` in TensorFlow ops (int64, exact)."""
    import tensorflow as tf

    m = tf.constant(BUCKET_MODULUS, tf.int64)
    h = tf.math.floormod(
        tf.math.floormod(tf.cast(page_id, tf.int64), m) * BUCKET_MULTIPLIER + BUCKET_INCREMENT, m)
    return tf.math.floormod(h, BUCKETS)


def _tf_hash64(text):
    """int32 [..., 2]: a 64-bit hash of each string as two int32 words (TensorFlow's own)."""
    import tensorflow as tf

    return tf.bitcast(tf.strings.to_hash_bucket_fast(text, 2 ** 63 - 1), tf.int32)


def _tf_negative_keys(ex, passage_ids: bool = False, page_keys: bool = False):
    """int32 [3, 2] ([4, 2] with page_keys): `negative_keys` of one parsed example in TensorFlow
    ops (its own hash); passage_ids (hard negatives): the document and passage keys are the
    hashes of the doc_id and passage_id columns, like the negatives' (`_tf_hard_negatives`)."""
    import tensorflow as tf

    if passage_ids:
        doc, passage = _tf_hash64(ex["doc_id"]), _tf_hash64(ex["passage_id"])
    else:
        doc = _tf_hash64(tf.strings.join([ex["doc_title"], ex["doc_text"]], "\n"))
        passage = _tf_hash64(tf.strings.join([ex["lang"], tf.strings.as_string(ex["doc_page_id"]),
                                              tf.strings.as_string(ex["doc_passage"])], "\x00"))
    query = _tf_hash64(ex["query"])
    if not page_keys:
        return tf.stack([doc, passage, query])

    def page_of(task, page_id):
        return _tf_hash64(tf.strings.join([task, ex["lang"], tf.strings.as_string(page_id)],
                                          "\x00"))
    page = tf.where(tf.equal(ex["task"], "bfs"), page_of("bfs", ex["doc_page_id"]),
                    tf.where(tf.equal(ex["task"], "wlp"), page_of("wlp", ex["query_page_id"]),
                             doc))
    return tf.stack([doc, passage, query, page])


def _tf_hard_negatives(ex, count: int, max_len: int, keys: bool = False):
    """`hard_negatives` of one parsed example in TensorFlow ops: (ids int32 [count, max_len],
    mask bool [count](, keys int32 [count, 2, 2]))."""
    import tensorflow as tf

    values = tf.cast(tf.sparse.to_dense(ex["neg_ids"]), tf.int32)
    lengths = tf.cast(tf.sparse.to_dense(ex["neg_ids_lengths"]), tf.int32)
    n = tf.minimum(tf.size(lengths), count)
    lengths = lengths[:n]
    ragged = tf.RaggedTensor.from_row_lengths(values[:tf.reduce_sum(lengths)], lengths)
    ids = ragged.to_tensor(default_value=PAD_ID, shape=[None, max_len])  # cut or padded
    last = tf.logical_and((lengths > max_len)[:, None],
                          tf.equal(tf.range(max_len), max_len - 1)[None, :])
    ids = tf.where(last, tf.constant(SEP_ID, tf.int32), ids)
    ids = tf.ensure_shape(tf.pad(ids, [[0, count - n], [0, 0]], constant_values=PAD_ID),
                          [count, max_len])
    out = (ids, tf.range(count) < n)
    if keys:
        hashes = [_tf_hash64(tf.sparse.to_dense(ex[name], default_value="")[:n])
                  for name in ("neg_doc_id", "neg_passage_id")]
        out += (tf.ensure_shape(tf.pad(tf.stack(hashes, axis=1), [[0, count - n], [0, 0], [0, 0]]),
                                [count, 2, 2]),)
    return out


def _tf_fit(ids, max_len):
    import tensorflow as tf

    ids = tf.cast(ids, tf.int32)
    n = tf.shape(ids)[0]
    ids = tf.cond(n > max_len,
                  lambda: tf.concat([ids[:max_len - 1], tf.constant([SEP_ID], tf.int32)], 0),
                  lambda: ids)
    ids = tf.pad(ids, [[0, max_len - tf.shape(ids)[0]]], constant_values=PAD_ID)
    return tf.ensure_shape(ids, [max_len])


def _tf_distinct_pages(batch, batch_size: int):
    """`distinct_page_rows` in TensorFlow ops: the batch of `batch_size` rows of a batch of
    candidates (with their query_page_id, left out of the result)."""
    import tensorflow as tf

    pages = batch[QUERY_PAGE_ID]
    n = tf.shape(pages)[0]
    unique, index = tf.unique(pages)  # unique pages in the order of their first row
    first_row = tf.math.unsorted_segment_min(tf.range(n), index, tf.size(unique))
    first = tf.equal(tf.gather(first_row, index), tf.range(n))
    order = tf.concat([tf.where(first)[:, 0], tf.where(tf.logical_not(first))[:, 0]], 0)
    rows = tf.sort(order[:batch_size])
    return {k: tf.ensure_shape(tf.gather(v, rows), [batch_size, *v.shape[1:]])
            for k, v in batch.items() if k != QUERY_PAGE_ID}


def tf_dataset(data_dirs, *, tasks: Sequence[str] | None = TASKS,
               weights: Sequence[float] | None = None, batch_size: int = 32,
               max_query_len: int = 64, max_doc_len: int = 288, split: str = "train",
               eval_percent: int = EVAL_PERCENT, seed: int = 0, shuffle: bool = True,
               shuffle_buffer: int = 10_000, repeat: bool = True, skip_batches: int = 0,
               prefetch: bool = True, negative_keys: bool = False, hard_negatives: int = 0,
               distinct_pages: bool = False, page_keys: bool = False,
               task_batches: bool = False):
    """The tf.data reader of the TFRecord shards: a tf.data.Dataset of
    {"query_ids": int32 [B, Lq], "doc_ids": int32 [B, Ld]} with static shapes (and the keys and
    hard negatives of `numpy_batches`).

    Per task: shard files (shuffled with the seed), interleaved, parsed with the schema's
    feature spec, filtered to the split, padded, repeated, shuffled; the tasks are mixed with
    `tf.data.Dataset.sample_from_datasets` (uniform unless `weights`), batched with
    drop_remainder=True (distinct_pages: 2B candidates, then `_tf_distinct_pages`), prefetched;
    with task_batches each task is batched first and the batches are mixed (all rows of a batch
    from one task). Deterministic under `seed`."""
    import tensorflow as tf

    from wikipairs.schemas import pair_fields, tf_feature_spec

    shards, names, probs = _sources(data_dirs, tasks, weights, batch_size, split, eval_percent,
                                    "tfrecord", hard_negatives, negative_keys)
    full_spec = tf_feature_spec(pair_fields(True))
    spec = {name: full_spec[name] for name in ID_COLUMNS}
    # the build's split where the shards have it (schema version 3), else the query page rule
    spec["split"] = tf.io.FixedLenFeature([], tf.string, default_value="")
    spec["query_page_id"] = tf.io.FixedLenFeature([], tf.int64, default_value=0)
    if negative_keys:  # the document by its title and text (the doc_id they define)
        spec.update({name: full_spec[name] for name in KEY_COLUMNS if name != "doc_id"})
        if page_keys:  # query_page_id is read already (the split rule)
            spec["task"] = full_spec["task"]
    if hard_negatives:
        spec.update({name: tf.io.VarLenFeature(tf.int64) for name in HARD_ID_COLUMNS})
        if negative_keys:
            spec.update({name: tf.io.VarLenFeature(tf.string)
                         for name in ("neg_doc_id", "neg_passage_id")})
            spec.update({name: tf.io.FixedLenFeature([], tf.string)
                         for name in ("doc_id", "passage_id")})

    def parse(record):
        ex = tf.io.parse_single_example(record, spec)
        out = {"pair_id": ex["pair_id"], "split": ex["split"],
               "query_page_id": ex["query_page_id"],
               "query_ids": _tf_fit(tf.sparse.to_dense(ex["query_ids"]), max_query_len),
               "doc_ids": _tf_fit(tf.sparse.to_dense(ex["doc_ids"]), max_doc_len)}
        if negative_keys:
            out[NEGATIVE_KEYS] = _tf_negative_keys(ex, passage_ids=hard_negatives > 0,
                                                   page_keys=page_keys)
        if hard_negatives:
            hard = _tf_hard_negatives(ex, hard_negatives, max_doc_len, negative_keys)
            out.update(zip((HARD_NEGATIVE_IDS, HARD_NEGATIVE_MASK, HARD_NEGATIVE_KEYS), hard))
        return out

    def in_split(ex):
        if split == "all":
            return tf.constant(True)
        by_page = tf.where(tf_page_bucket(ex["query_page_id"]) < eval_threshold(eval_percent),
                           "eval", "train")
        side = tf.where(tf.strings.length(ex["split"]) > 0, ex["split"], by_page)
        return tf.equal(side, split)

    datasets = []
    for task, files in shards.items():
        task_seed = _task_seed(seed, task)
        ds = tf.data.Dataset.from_tensor_slices(files)
        if shuffle:
            ds = ds.shuffle(len(files), seed=task_seed, reshuffle_each_iteration=True)
        ds = ds.interleave(lambda f: tf.data.TFRecordDataset(f, compression_type="GZIP"),
                           cycle_length=min(len(files), 8), block_length=16,
                           num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
        ds = ds.map(parse, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True)
        ds = ds.filter(in_split)
        dropped = ("pair_id", "split") + (() if distinct_pages else (QUERY_PAGE_ID,))
        ds = ds.map(lambda ex: {k: v for k, v in ex.items() if k not in dropped})
        if repeat:
            ds = ds.repeat()
        if shuffle and shuffle_buffer > 1:
            ds = ds.shuffle(shuffle_buffer, seed=task_seed + 1, reshuffle_each_iteration=True)
        datasets.append(_tf_batched(ds, batch_size, distinct_pages) if task_batches else ds)
    if len(datasets) == 1:
        mixed = datasets[0]
    else:
        mixed = tf.data.Dataset.sample_from_datasets(
            datasets, weights=probs, seed=_task_seed(seed, "\x00mix"),
            stop_on_empty_dataset=False)
    if not task_batches:
        mixed = _tf_batched(mixed, batch_size, distinct_pages)
    if skip_batches:
        mixed = mixed.skip(skip_batches)
    options = tf.data.Options()
    options.deterministic = True
    mixed = mixed.with_options(options)
    return mixed.prefetch(tf.data.AUTOTUNE) if prefetch else mixed


def _tf_batched(ds, batch_size: int, distinct_pages: bool):
    """Examples -> batches of `batch_size` (drop_remainder); distinct_pages: from 2B candidates."""
    if distinct_pages:
        ds = ds.batch(2 * batch_size, drop_remainder=True)
        return ds.map(lambda b: _tf_distinct_pages(b, batch_size))
    return ds.batch(batch_size, drop_remainder=True)


def make_batches(data_dirs, *, data_format: str = "auto", **kwargs):
    """`tf_dataset` (data_format "tfrecord") or `numpy_batches` ("parquet"); "auto": TFRecord on
    the TensorFlow backend when those shards exist, else Parquet."""
    if data_format == "auto":
        import keras

        data_format = "parquet"
        if keras.backend.backend() == "tensorflow":
            try:
                find_shards(data_dirs, kwargs.get("tasks", TASKS), "tfrecord")
                data_format = "tfrecord"
            except DataError:
                pass
    if data_format == "tfrecord":
        return tf_dataset(data_dirs, **kwargs)
    if data_format == "parquet":
        prefetch = kwargs.pop("prefetch", True)
        batches = numpy_batches(data_dirs, **kwargs)
        return prefetched(batches, PREFETCH_BATCHES) if prefetch else batches
    raise DataError(f"data format must be auto, tfrecord or parquet, not {data_format!r}")
