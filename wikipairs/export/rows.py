"""A build's pairs as Arrow tables, with the ids every export target needs.

Shards are found only through `wikipairs.shards.report.task_shards` (DIR/parquet/<task>/ or, in
older builds, DIR/<task>/) and read one row group at a time, so memory is bounded by a row group,
not by the build. Builds before `doc_id` have it derived here by the build's own rule
(`wikipairs.pairs.tasks.doc_id`); the query id of
a pair is its `pair_id` (one query sentence instance per pair: a WLP query page gives each linking
document its own seeded sentence).
"""
from __future__ import annotations

from typing import Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from .. import fileio
from ..errors import WikipairsError
from ..pairs.tasks import TASKS, doc_id
from ..pairs.heldout import split_of
from ..shards.report import built_tasks, load_stats, task_shards


class ExportError(WikipairsError):
    pass


def with_ids(table: pa.Table) -> pa.Table:
    """`table` with a `doc_id` column (derived where the shard has none) and `query_id` (=
    `pair_id`) at the end, where the columns they come from are there; every other column kept
    as it is."""
    names = table.column_names
    if "doc_id" not in names and {"doc_title", "doc_text"} <= set(names):
        ids = [doc_id(t, x) for t, x in zip(table.column("doc_title").to_pylist(),
                                                    table.column("doc_text").to_pylist())]
        table = table.append_column("doc_id", pa.array(ids, pa.string()))
    if "query_id" not in names and "pair_id" in names:
        table = table.append_column("query_id", table.column("pair_id").cast(pa.string()))
    if "split" not in names and "query_page_id" in names:  # older builds: the build's rule
        table = table.append_column("split", pa.array(
            [split_of(p) for p in table.column("query_page_id").to_pylist()], pa.string()))
    return table


def _parquet(shard: str) -> pq.ParquetFile:
    return pq.ParquetFile(fileio.arrow_input(shard))


def shard_row_groups(folder: str, task: str) -> list[tuple[str, int]]:
    """(shard, row group) units of a task, in shard order: what readers split between them."""
    units = []
    for shard in task_shards(folder, task):
        units.extend((shard, i) for i in range(_parquet(shard).num_row_groups))
    return units


def available_columns(shard: str) -> list[str]:
    """A shard's columns plus the ids `read_row_group` derives from them."""
    return with_ids(_parquet(shard).schema_arrow.empty_table()).column_names


def read_row_group(shard: str, index: int, columns: list[str] | None = None) -> pa.Table:
    """One row group of a shard with ids added. `columns` may name `doc_id`, `query_id` and
    columns a build may lack; those it lacks and cannot derive are left out."""
    parquet = _parquet(shard)
    names = parquet.schema_arrow.names
    wanted = None
    if columns is not None:
        wanted = [c for c in names if c in columns]
        if "doc_id" in columns and "doc_id" not in names:
            wanted += [c for c in ("doc_title", "doc_text") if c not in wanted]
        if "query_id" in columns and "pair_id" not in wanted:
            wanted.append("pair_id")
    table = with_ids(parquet.read_row_group(index, columns=wanted, use_threads=False))
    if columns is not None:
        table = table.select([c for c in columns if c in table.column_names])
    return table


def iter_tables(folder: str, task: str, columns: list[str] | None = None) -> Iterator[pa.Table]:
    """A task's pairs, one Arrow table per row group, in shard order."""
    for shard, index in shard_row_groups(folder, task):
        yield read_row_group(shard, index, columns)


def count_rows(folder: str, task: str) -> int:
    return sum(_parquet(shard).metadata.num_rows for shard in task_shards(folder, task))


def parse_tasks(value: str) -> list[str]:
    """`ict,bfs` or `all` -> the task names (unknown ones are an error); order as TASKS."""
    names = [t.strip().lower() for t in value.split(",") if t.strip()]
    if names == ["all"]:
        return list(TASKS)
    unknown = [t for t in names if t not in TASKS]
    if unknown or not names:
        raise ExportError(f"unknown task {unknown[0] if unknown else value!r}: expected "
                          f"{','.join(TASKS)} or all")
    return [t for t in TASKS if t in names]


def check_build(folder: str, tasks: list[str], all_tasks: bool) -> list[str]:
    """The tasks to export: the folder must be a finished build (manifest.json, stats.json)
    holding them; `all` means the tasks the build has."""
    stats = load_stats(folder)
    built = built_tasks(stats)
    if all_tasks:
        if not built:
            raise ExportError(f"{folder}: a build with no pair task (is it a parse output?)")
        return built
    missing = [t for t in tasks if t not in built]
    if missing:
        raise ExportError(f"{folder}: has no {missing[0]} pairs (built: "
                          f"{', '.join(built) or 'none'})")
    return tasks
