"""Where the pair shards of a `wikipairs build` folder lie: the one place writers and readers ask.

    DIR/parquet/<task>/part-NNNNN-of-MMMMM.parquet
    DIR/tfrecord/<task>/part-NNNNN-of-MMMMM.tfrecord.gz

One tree per format, so that any Parquet reader takes DIR/parquet/<task> (or DIR/parquet) as it
is: `pandas.read_parquet(DIR/parquet/ict)`, `datasets.load_dataset("parquet", data_dir=...)`.

A task's shards are its train shards, then its eval shards (the pairs of held-out query pages,
column `split`): ICT and BFS have one train shard per input split (`splits` in stats.json), WLP
`--num-shards` (`num_shards`); the eval shards number about the eval share of them, at least one
(none with `--eval-percent 0`). Builds of schema version 3 before WLP had eval shards of its own
wrote both splits into WLP's shards.

Builds before schema version 2 wrote both formats side by side, DIR/<task>/part-*.{parquet,
tfrecord.gz}; readers still take them (`task_shards`, `find_task_shards`).
"""
from __future__ import annotations

import glob
import math
import os

from .. import fileio

FORMATS = ("parquet", "tfrecord")
SUFFIXES = {"parquet": ".parquet", "tfrecord": ".tfrecord.gz"}


def task_folder(folder: str, fmt: str, task: str) -> str:
    """DIR/<format>/<task>: where a build writes a task's shards of one format."""
    return fileio.join(folder, fmt, task)


def replaced_folders(tasks) -> list[str]:
    """The subfolders (relative, "/"-separated) where a build writes the shards of `tasks`, and
    where an older build wrote them: what a new run into the same folder replaces."""
    return [f"{fmt}/{task}" for fmt in FORMATS for task in tasks] + list(tasks)


def remove_empty_format_folders(folder: str) -> None:
    """DIR/parquet and DIR/tfrecord where nothing is left in them (local; object stores have no
    folders)."""
    for fmt in FORMATS:
        path = fileio.join(folder, fmt)
        if fileio.isdir(path) and not os.listdir(path):
            os.rmdir(path)


def shard_pattern(task_dir: str, fmt: str) -> str:
    return fileio.join(task_dir, "part-*" + SUFFIXES[fmt])


def task_shards(folder: str, task: str, fmt: str = "parquet") -> list[str]:
    """A task's shard files of one format in a build folder, sorted: DIR/<format>/<task>/, or
    DIR/<task>/ in a build older than the per-format trees."""
    return (fileio.glob(shard_pattern(task_folder(folder, fmt, task), fmt))
            or fileio.glob(shard_pattern(fileio.join(folder, task), fmt)))


def find_task_shards(folder: str, fmt: str) -> dict[str, list[str]]:
    """task -> sorted shard files of one format in a local build folder, tasks by folder name:
    the subfolders of DIR/<format>/ and, for older builds, of DIR itself (where both hold a
    task, DIR/<format>/<task> wins)."""
    found: dict[str, list[str]] = {}
    for parent in (os.path.join(folder, fmt), folder):
        for sub in sorted(os.listdir(parent)) if os.path.isdir(parent) else []:
            files = sorted(glob.glob(shard_pattern(glob.escape(os.path.join(parent, sub)), fmt)))
            if files and os.path.isdir(os.path.join(parent, sub)):
                found.setdefault(sub, files)
    return found


def eval_shard_count(train_shards: int, eval_percent: float) -> int:
    """A task's eval shards after its `train_shards`: about the eval share of them, at least 1
    (0 with no eval split)."""
    return 0 if eval_percent <= 0 else max(1, math.ceil(train_shards * eval_percent / 100))


def train_shard_count(task: str, stats: dict, total: int) -> int | None:
    """How many of a task's `total` shards hold train pairs (the rest, after them, eval pairs),
    from a build's stats.json; None where the build does not have this layout (older builds,
    whose WLP shards hold both splits, or none of these counts)."""
    if not {"splits", "num_shards", "eval_percent"} <= set(stats):
        return None
    train = stats["num_shards"] if task == "wlp" else stats["splits"]
    return train if train + eval_shard_count(train, stats["eval_percent"]) == total else None


def shards_by_split(paths: list[str], train_shards: int) -> dict[str, list[str]]:
    """Shard paths (part-NNNNN-of-MMMMM.*) -> {"train": [...], "eval": [...]}, sorted, by index:
    the first `train_shards` indexes are train shards."""
    out: dict[str, list[str]] = {"train": [], "eval": []}
    for path in sorted(paths):
        index = int(os.path.basename(path).split("-")[1])
        out["train" if index < train_shards else "eval"].append(path)
    return out


__all__ = ["FORMATS", "SUFFIXES", "task_folder", "replaced_folders", "remove_empty_format_folders",
           "task_shards", "find_task_shards", "eval_shard_count", "train_shard_count",
           "shards_by_split"]
