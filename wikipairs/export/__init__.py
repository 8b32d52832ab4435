"""`wikipairs export`: a build's pairs for other trainers and evaluation tools.

    wikipairs export DIR --to hf|sentence-transformers|tevatron|jsonl|beir -o OUT [--task ...]

One small module per target (hf, st, tevatron, jsonl, beir), each writing OUT/<task>/; rows.py
reads the Parquet shards (only through `wikipairs.shards.report.task_shards`) and adds the ids;
output.py writes OUT whole. `torch_dataset.PairsIterableDataset` reads a build from PyTorch
without TensorFlow. Nothing here imports Beam or TensorFlow; `datasets` only for hf and
sentence-transformers.
"""
from __future__ import annotations

import importlib
import os

# --to NAME -> module writing one task's folder (imported when it runs: the CLI loads this)
TARGETS = {"hf": "hf", "sentence-transformers": "st", "tevatron": "tevatron", "jsonl": "jsonl",
           "beir": "beir"}
TITLE_SEP = "[SEP]"  # sentence-transformers: "title [SEP] passage" (st.frame_document)


def export_build(folder: str, target: str, out: str, tasks: str = "all", **options) -> dict:
    """Exports the tasks (`ict,bfs` or `all`) of the build in `folder` to `out` in `target`'s
    layout; returns {"target", "source", "tasks": {task: counts}}. `options`: title_sep
    (sentence-transformers)."""
    from .output import check_output, output_folder
    from .rows import ExportError, check_build, parse_tasks

    if target not in TARGETS:
        raise ExportError(f"unknown target {target!r}: expected one of {', '.join(TARGETS)}")
    names = check_build(folder, parse_tasks(tasks), all_tasks=tasks.strip().lower() == "all")
    check_output(out)
    writer = importlib.import_module(f".{TARGETS[target]}", __name__)
    info = {"target": target, "source": os.path.abspath(folder), "tasks": {}}
    with output_folder(out, info) as tmp:
        for task in names:
            info["tasks"][task] = writer.write_task(folder, task, os.path.join(tmp, task),
                                                    **options)
    return info


__all__ = ["TARGETS", "TITLE_SEP", "export_build"]
