"""The build driver's per-shard notes: each shard writer's summary (rows, files with sha256,
token sums), saved by the pipeline as DIR/.shards/<task>-<shard>.json when the shard is done, so
that the driver writes stats.json and then manifest.json without reading the shards back. The
folder is removed once the manifest is written."""
from __future__ import annotations

import json

from wikipairs import fileio

NOTES = ".shards"


def save_note(output: str, note: dict) -> None:
    fileio.write_atomic(fileio.join(output, NOTES, f"{note['task']}-{note['shard']:05d}.json"),
                        json.dumps(note).encode())


def read_notes(output: str) -> list[dict]:
    folder = fileio.join(output, NOTES)
    return [json.loads(fileio.read_text(fileio.join(folder, name)))
            for name in fileio.listdir(folder) if name.endswith(".json")]
