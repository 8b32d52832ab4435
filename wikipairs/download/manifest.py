"""`DEST/download.json`, the record of a complete download.

It is removed when a download starts and written last (wiki, date, job, every file with size,
sha1, md5, sha256 where computed, URL and what verified it) with fileio.write_atomic: it exists only after a complete, verified download,
and never half written.
"""
from __future__ import annotations

import json
import os
from datetime import datetime, timezone

from .. import __version__, fileio
from .dumps import DumpRun, RemoteFile
from .errors import DownloadError

MANIFEST = "download.json"


def clear(dest: str) -> str:
    """Remove `dest`'s download.json, if any, before anything is fetched; returns its path."""
    path = os.path.join(dest, MANIFEST)
    try:
        if os.path.lexists(path):
            os.remove(path)
    except OSError as e:
        raise DownloadError(f"cannot remove {path}: {e.strerror or e}") from None
    return path


def entry(dest: str, file: RemoteFile, digests: dict) -> dict:
    """The manifest's record of `file`, complete and verified in `dest` (`digests`: its sha1,
    and its sha256 where computed)."""
    record = {"name": file.name, "size": os.path.getsize(os.path.join(dest, file.name)),
              "sha1": digests["sha1"], "md5": file.md5, "url": file.url}
    if "sha256" in digests:
        record["sha256"] = digests["sha256"]
    record["verified_with"] = file.checksum[0]  # "size": nothing else was published
    return record


def write(path: str, run: DumpRun, entries: list[dict], requested_date: str, files_option: str,
          base_url: str) -> dict:
    """Write download.json for `run` (its files' `entries`, in order); returns its content."""
    content = {
        "wiki": run.wiki, "date": run.date, "requested_date": requested_date,
        "files_option": files_option, "job": run.job, "base_url": base_url,
        # XML: the run's dumpstatus.json; Enterprise HTML: the run folder (no dumpstatus.json)
        ("run_url" if run.job == "enterprise-html" else "dumpstatus_url"): run.status_url,
        "verified_with": sorted({f.checksum[0] for f in run.files}),
        "completed_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "wikipairs_version": __version__, "files": entries,
    }
    try:
        fileio.write_atomic(path, (json.dumps(content, indent=2) + "\n").encode())
    except OSError as e:
        raise DownloadError(f"cannot write {path}: {e.strerror or e}") from None
    return content
