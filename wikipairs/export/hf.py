"""--to hf: OUT/<task>/, a `datasets.DatasetDict` with the splits `train` and `validation` (the
build's `split` column: train and eval pairs), written by `save_to_disk` (load it with
`datasets.load_from_disk("OUT/ict")`), every column of the shards plus `doc_id` (derived in older
builds), `query_id` (= pair_id) and, for older builds, `split` (by the query page rule).

The pairs go through Arrow files memory-mapped by `datasets` (one per shard row group, in a work
folder removed afterwards), so memory is bounded by a row group, not by the build."""
from __future__ import annotations

import json
import os
import shutil
from typing import Iterable

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .. import fileio
from ..schemas import arrow_schema, pair_fields
from ..shards.report import task_shards
from .rows import ExportError, iter_tables, with_ids


def import_datasets(target: str):
    try:
        import datasets
    except ModuleNotFoundError:
        raise ExportError(f"'wikipairs export --to {target}' needs datasets, which is not "
                          f"installed: pip install 'wikipairs[export]'") from None
    return datasets


def save_dataset(tables: Iterable[pa.Table], empty: pa.Schema, dest: str, target: str) -> int:
    """Writes the tables as one Dataset to `dest`; `empty` is the schema when there are none.
    Returns the number of rows."""
    datasets = import_datasets(target)
    work = dest + ".arrow-work"
    os.makedirs(work)
    parts = []
    try:
        for i, table in enumerate(tables):
            path = os.path.join(work, f"{i:06d}.arrow")
            with pa.OSFile(path, "wb") as sink, pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            parts.append(datasets.Dataset.from_file(path))
        if not parts:
            parts.append(datasets.Dataset(empty.empty_table()))
        dataset = parts[0] if len(parts) == 1 else datasets.concatenate_datasets(parts)
        bars = datasets.utils.logging.is_progress_bar_enabled()
        datasets.disable_progress_bars()  # the command prints one line per task
        try:
            dataset.save_to_disk(dest)
        finally:
            if bars:
                datasets.enable_progress_bars()
        return len(dataset)
    finally:
        del parts
        shutil.rmtree(work, ignore_errors=True)


def shard_schema(folder: str, task: str) -> pa.Schema:
    shards = task_shards(folder, task)
    schema = (pq.read_schema(fileio.arrow_input(shards[0])) if shards
              else arrow_schema(pair_fields(False)))
    return with_ids(schema.empty_table()).schema


HF_SPLITS = {"train": "train", "eval": "validation"}


def _split_tables(folder: str, task: str, split: str):
    for table in iter_tables(folder, task):
        yield table.filter(pc.equal(table.column("split"), split))


def write_task(folder: str, task: str, dest: str, **_) -> dict:
    """OUT/<task>/train and OUT/<task>/validation, with dataset_dict.json: a DatasetDict."""
    import_datasets("hf")
    os.makedirs(dest, exist_ok=True)
    counts = {}
    for split, name in HF_SPLITS.items():
        counts[name] = save_dataset(_split_tables(folder, task, split),
                                    shard_schema(folder, task), os.path.join(dest, name), "hf")
    with open(os.path.join(dest, "dataset_dict.json"), "w") as f:
        json.dump({"splits": list(HF_SPLITS.values())}, f)
    return {"pairs": sum(counts.values()), **counts}
