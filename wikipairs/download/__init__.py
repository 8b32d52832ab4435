"""`wikipairs download`: fetch a Wikipedia dump's pages-articles files, resumably and verified.

The run and its files come from the dump's dumpstatus.json (`dumps`: which job `--files`,
`--parts` and `--date latest` mean); with `--files enterprise-html`, the wiki's Wikimedia
Enterprise HTML dump of that run from its run folder (`enterprise`: no published checksum, so
the size is checked and the sha256 recorded). Each file goes to `DEST/NAME.part`, resumed and retried
(`http`), is hashed while it arrives (sha1, or md5 where dumpstatus.json has no sha1:
`checksums`) and is renamed to `DEST/NAME` only when the checksum matches. A mismatch renames the
part to `DEST/NAME.bad` (kept for inspection, replaced by the next mismatch; the next run
downloads from byte 0) and fails: no file with a wrong checksum ever has its final name. A file
already under its final name with the right checksum is not requested again; one with a wrong
checksum is moved to `NAME.bad` and downloaded again. `DEST/download.json` is removed at the
start and written last (`manifest`): it exists only after a complete, verified download.

Output: one line per file and per retry on stdout (not with --quiet), a tqdm progress bar on
stderr when stderr is a terminal (not with --quiet) (`display`), a summary line on stdout (the
CLI's). Errors: one line, exit status 2 (a `DownloadError`: `errors`).

This module owns the options (DownloadConfig), the retry policy, taking each file from its part
to its final name, and the names the CLI and the tests import from `wikipairs.download`.
"""
from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass
from typing import Callable

from . import manifest
from .checksums import hash_file, mismatch
from .enterprise import resolve_enterprise_run
from .dumps import (DEFAULT_BASE_URL, FILE_SETS, JOBS, WIKI_NAME, DumpRun, RemoteFile,
                    choose_job, dumpstatus_url, remote_files, resolve_run, run_dates, valid_date)
from .errors import (ChecksumError, DownloadError, DumpNotFoundError, DumpNotReadyError,
                     NetworkError)
from .http import Client, fetch_part
from .manifest import MANIFEST
from .display import echo_stdout, human_size

# Seconds before the first retry, doubled each time up to BACKOFF_MAX (--retries counts them).
# Read when a download starts, so that the tests can shorten them here.
BACKOFF_FIRST = 1.0
BACKOFF_MAX = 30.0


@dataclass
class DownloadConfig:
    wiki: str
    date: str  # YYYYMMDD or "latest"
    dest: str
    files: str = "multistream"  # one of FILE_SETS; "enterprise-html": enterprise.py
    base_url: str = DEFAULT_BASE_URL
    parts: bool = False  # the split parts, not the recombined file
    retries: int = 5
    timeout: float = 60.0  # seconds, for connecting and between received bytes
    quiet: bool = False
    # progress lines (stdout); None: print them unless quiet
    echo: Callable[[str], None] | None = None
    sleep: Callable[[float], None] = time.sleep


def download(config: DownloadConfig) -> dict:
    """Resolve the run, download and verify its files into config.dest, write download.json.

    Returns download.json's content plus "downloaded" and "skipped" (file names)."""
    _check(config)
    echo = config.echo or ((lambda line: None) if config.quiet else echo_stdout)
    client = Client(config.retries, config.timeout, (BACKOFF_FIRST, BACKOFF_MAX), echo,
                    config.sleep)
    try:
        if config.files == "enterprise-html":
            run = resolve_enterprise_run(client, config.base_url, config.wiki, config.date)
        else:
            run = resolve_run(client, config.base_url, config.wiki, config.date, config.files,
                              config.parts)
        try:
            os.makedirs(config.dest, exist_ok=True)
        except OSError as e:
            raise DownloadError(f"cannot create {config.dest}: {e.strerror or e}") from None
        manifest_path = manifest.clear(config.dest)
        total = sum(f.size or 0 for f in run.files)
        echo(f"{run.wiki} {run.date}, job {run.job}: {len(run.files)} files, "
             f"{human_size(total)}")
        outcome = {"downloaded": [], "skipped": []}
        entries = []
        for file in run.files:
            how, digests = fetch_file(client, file, config.dest, config.quiet)
            outcome[how].append(file.name)
            entries.append(manifest.entry(config.dest, file, digests))
    finally:
        client.close()
    written = manifest.write(manifest_path, run, entries, config.date, config.files,
                             config.base_url)
    return {**written, **outcome}


def _check(config: DownloadConfig) -> None:
    """The CLI checks its options too; this is for callers of the API."""
    if config.files not in FILE_SETS:
        raise DownloadError(f"--files must be one of {', '.join(FILE_SETS)}, not {config.files!r}")
    if config.parts and config.files not in JOBS:
        raise DownloadError(f"--parts is for the XML dumps' split files, not --files "
                            f"{config.files}")
    if not WIKI_NAME.match(config.wiki):
        raise DownloadError(f"--wiki: expected a wiki database name like enwiki, "
                            f"not {config.wiki!r}")
    if config.date != "latest" and not valid_date(config.date):
        raise DownloadError(f"--date: expected latest or YYYYMMDD, not {config.date!r}")
    if not re.match(r"^https?://[^/]+", config.base_url):
        raise DownloadError(f"--base-url: expected an http:// or https:// URL, "
                            f"not {config.base_url!r}")
    if os.path.exists(config.dest) and not os.path.isdir(config.dest):
        raise DownloadError(f"--dest {config.dest} exists and is not a folder")


def fetch_file(client: Client, file: RemoteFile, dest: str, quiet: bool = False
               ) -> tuple[str, dict]:
    """Download `file` into `dest` (see the module doc).

    Returns ("skipped" or "downloaded", the file's digests: {"sha1": hex, "sha256": hex where
    recorded})."""
    final = os.path.join(dest, file.name)
    part, bad = final + ".part", final + ".bad"
    algorithm = file.checksum[0]
    digests = _already_complete(client, file, final, bad)
    if digests:
        return "skipped", digests
    hashes = fetch_part(client, file, part, quiet)
    wrong = mismatch(hashes, file)
    if wrong:
        _replace(part, bad)
        raise ChecksumError(f"{file.name}: checksum mismatch ({wrong}); the bytes are kept in "
                            f"{bad} (delete it and run again, or try another --base-url)")
    _replace(part, final)
    client.echo(f"{file.name}: {_checked(file)} ok")
    return "downloaded", hashes.digests()


def _checked(file: RemoteFile) -> str:
    """What was checked: "sha1", or "size (no published checksum; sha256 recorded)"."""
    algorithm = file.checksum[0]
    return (f"size {file.size:,} (no published checksum; sha256 recorded)"
            if algorithm == "size" else algorithm)


def _already_complete(client: Client, file: RemoteFile, final: str, bad: str) -> dict | None:
    """The digests of `final` when it is already `file`; a wrong one is moved to `bad` (None)."""
    if not os.path.isfile(final):
        return None
    if file.size is None or os.path.getsize(final) == file.size:
        hashes = hash_file(final, *file.wants)
        if mismatch(hashes, file) is None:
            client.echo(f"{file.name}: already complete ({_checked(file)} ok), skipped")
            return hashes.digests()
    _replace(final, bad)
    client.echo(f"{file.name}: the existing file does not match "
                f"{'its size' if file.checksum[0] == 'size' else 'the published checksum'}; "
                f"moved to {os.path.basename(bad)}, downloading again")
    return None


def _replace(source: str, target: str) -> None:
    try:
        os.replace(source, target)
    except OSError as e:
        raise DownloadError(f"cannot rename {source} to {target}: {e.strerror or e}") from None


__all__ = ["DownloadConfig", "DownloadError", "DumpNotFoundError", "DumpNotReadyError",
           "ChecksumError", "NetworkError", "RemoteFile", "DumpRun", "download", "fetch_file",
           "valid_date", "WIKI_NAME", "human_size", "MANIFEST", "FILE_SETS", "resolve_run",
           "run_dates", "choose_job", "remote_files", "dumpstatus_url", "DEFAULT_BASE_URL",
           "BACKOFF_FIRST", "BACKOFF_MAX", "resolve_enterprise_run"]
