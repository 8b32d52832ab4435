"""A build folder as an older wikipairs wrote it, made from a new one, for the readers' tests.

Before the per-format trees a build wrote DIR/<task>/part-*.parquet and .tfrecord.gz side by
side; `to_old_layout` moves the shards there and rewrites the manifest's paths (sizes and sha256
stay: the bytes are the same)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

FORMAT_FOLDERS = ("parquet", "tfrecord")


def to_old_layout(folder: Path) -> Path:
    """DIR/<format>/<task>/part-* -> DIR/<task>/part-*, the manifest following."""
    manifest_path = folder / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for entry in manifest["shards"]:
        fmt, task, name = Path(entry["path"]).parts
        assert fmt in FORMAT_FOLDERS, entry
        (folder / task).mkdir(exist_ok=True)
        (folder / fmt / task / name).rename(folder / task / name)
        entry["path"] = f"{task}/{name}"
    for fmt in FORMAT_FOLDERS:
        shutil.rmtree(folder / fmt, ignore_errors=True)
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return folder
