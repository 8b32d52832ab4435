"""A build's pairs as a PyTorch IterableDataset, without TensorFlow:

    from torch.utils.data import DataLoader
    from wikipairs.export.torch_dataset import PairsIterableDataset

    pairs = PairsIterableDataset("out/sample", "ict")        # query, doc_title, doc_text, ids
    for batch in DataLoader(pairs, batch_size=32, num_workers=2):
        batch["query"], batch["doc_title"], batch["doc_text"]   # lists of 32 strings

    ids = PairsIterableDataset("out/enwiki", "wlp", token_ids=True)   # a build with --vocab
    loader = DataLoader(ids, batch_size=32, collate_fn=list)           # lists of different lengths

The Parquet shards (found by `wikipairs.shards.report.task_shards`) are read one row group at a
time; the (shard, row group) units are split between DataLoader workers round-robin, so with
any number of workers every pair comes exactly once, in shard order within a worker. Needs torch
(`pip install 'wikipairs[export-st]'`).
"""
from __future__ import annotations

from typing import Iterator, Sequence

from torch.utils.data import IterableDataset, get_worker_info

from .rows import (ExportError, available_columns, check_build, count_rows, read_row_group,
                   shard_row_groups)

TEXT_COLUMNS = ("pair_id", "query_id", "doc_id", "query", "doc_title", "doc_text")
ID_COLUMNS = ("query_ids", "doc_ids")


class PairsIterableDataset(IterableDataset):
    """Dicts of one task's pairs: `columns` (any shard column, plus `doc_id` and `query_id`,
    derived where the shards lack them); by default TEXT_COLUMNS, or with `token_ids=True`
    `pair_id` and the SentencePiece id lists `query_ids` and `doc_ids` (`[CLS] query [SEP]`,
    `[CLS] title [SEP] passage [SEP]`) of a build made with --vocab."""

    def __init__(self, folder: str, task: str, columns: Sequence[str] | None = None,
                 token_ids: bool = False):
        super().__init__()
        check_build(folder, [task], all_tasks=False)
        self.folder, self.task = folder, task
        if columns is None:
            columns = ("pair_id",) + ID_COLUMNS if token_ids else TEXT_COLUMNS
        elif token_ids:
            columns = tuple(columns) + tuple(c for c in ID_COLUMNS if c not in columns)
        self.columns = list(columns)
        self.units = shard_row_groups(folder, task)
        if self.units:
            present = available_columns(self.units[0][0])
            missing = [c for c in self.columns if c not in present]
            if missing:
                hint = " (a build with --vocab has the token ids)" if set(missing) & set(
                    ID_COLUMNS) else ""
                raise ExportError(f"{folder}: the {task} shards have no column "
                                  f"{', '.join(missing)}{hint}")
        self.num_rows = count_rows(folder, task)  # no __len__: a worker's share is not known

    def __iter__(self) -> Iterator[dict]:
        worker = get_worker_info()
        units = self.units if worker is None else self.units[worker.id::worker.num_workers]
        for shard, index in units:
            yield from read_row_group(shard, index, self.columns).to_pylist()
