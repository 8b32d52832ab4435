"""--to jsonl: OUT/<task>/pairs.jsonl, one JSON object per pair with every column of the shards
(token id lists too, in a build with --vocab) and `doc_id` (derived in older builds)."""
from __future__ import annotations

import os

from .output import JsonLines
from .rows import iter_tables


def write_task(folder: str, task: str, dest: str, **_) -> dict:
    with JsonLines(os.path.join(dest, "pairs.jsonl")) as out:
        for table in iter_tables(folder, task):
            for row in table.drop_columns(["query_id"]).to_pylist():  # query_id: the pair_id
                out.write(row)
    return {"pairs": out.count}
