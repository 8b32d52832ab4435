"""`wikipairs download`: fetch a Wikipedia dump's pages-articles files, resumably and verified.

The dump's `dumpstatus.json` (`{base}/{wiki}/{date}/dumpstatus.json`, Wikimedia's layout; mirrors
keep it) lists every job of a dump run with its status and files (`size`, `url` relative to the
dumps root, `sha1`, `md5`). The files downloaded are those of one job:

- `--files multistream` (default): `articlesmultistreamdumprecombine` where the run has it (big
  wikis split their dumps into parts and recombine them: one `*-pages-articles-multistream.xml.bz2`
  and its `*-multistream-index.txt.bz2`, which `wikipairs build` reads in parallel by stream
  ranges), else `articlesmultistreamdump` (small wikis: the same two files, unsplit);
- `--files articles`: `articlesdumprecombine` where present, else `articlesdump`
  (`*-pages-articles.xml.bz2`);
- `--parts`: the split parts themselves (`articlesmultistreamdump` / `articlesdump`), never the
  recombined file.

`--date latest` reads the wiki's run listing (`{base}/{wiki}/`, an HTML index of `YYYYMMDD/`
folders) and takes the newest run whose job is "done" (`{wiki}/latest/` has no dumpstatus.json).

Each file goes to `DEST/NAME.part` (resumed with an HTTP Range request from its size; a server
that ignores Range sends the whole file and the part starts over), is hashed while it arrives
(sha1, or md5 where dumpstatus.json has no sha1) and is renamed to `DEST/NAME` only when the
checksum matches. A mismatch renames the part to `DEST/NAME.bad` (kept for inspection, replaced by
the next mismatch; the next run downloads from byte 0) and fails: no file with a wrong checksum
ever has its final name. A file already under its final name with the right checksum is not
requested again; one with a wrong checksum is moved to `NAME.bad` and downloaded again. Dropped
connections, timeouts and HTTP 5xx/429 are retried `--retries` times with exponential backoff
(1 s, 2 s, 4 s, ... at most 30 s; the count restarts whenever an attempt brought bytes),
resuming from the part's current size. `DEST/download.json` is removed at the start and written
last (wiki, date, job, every file with size, sha1, md5 and URL): it exists only after a complete,
verified download.

Output: one line per file and per retry on stdout (not with --quiet), a tqdm progress bar on
stderr when stderr is a terminal (not with --quiet), a summary line on stdout. Errors: one line,
exit status 2 (a `DownloadError`).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Callable


from . import __version__, fileio
from .errors import WikipairsError

DEFAULT_BASE_URL = "https://dumps.wikimedia.org"
FILE_SETS = ("multistream", "articles")
# --files -> (recombined job, job of the parts; the parts job is the whole dump of small wikis)
JOBS = {"multistream": ("articlesmultistreamdumprecombine", "articlesmultistreamdump"),
        "articles": ("articlesdumprecombine", "articlesdump")}
MANIFEST = "download.json"
CHUNK = 1 << 18  # bytes per read and write
BACKOFF_FIRST = 1.0  # seconds before the first retry, doubled each time ...
BACKOFF_MAX = 30.0  # ... up to this
LATEST_CANDIDATES = 10  # newest runs whose dumpstatus.json `latest` reads at most
WIKI_NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # enwiki, zh_yuewiki, enwiktionary, commonswiki
_DATE = re.compile(r"^\d{8}$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_RUN_LINK = re.compile(r"""href=["']?(?:\./)?(\d{8})/?["'>\s]""", re.IGNORECASE)


# ---- errors: one line each, exit status 2 -------------------------------------------------------

class DownloadError(WikipairsError):
    """A download that cannot go on (the CLI shows the one-line message, exit status 2)."""


class DumpNotFoundError(DownloadError):
    """No such wiki or dump run (HTTP 404 on the listing or dumpstatus.json)."""


class DumpNotReadyError(DownloadError):
    """The run exists but the job is not "done" (or has no files)."""


class ChecksumError(DownloadError):
    """A downloaded file whose sha1/md5 (or size) differs from dumpstatus.json."""


class NetworkError(DownloadError):
    """The server cannot be reached, or kept failing after the retries."""


# ---- what to download ---------------------------------------------------------------------------

@dataclass
class RemoteFile:
    name: str
    url: str  # absolute
    size: int | None
    sha1: str | None
    md5: str | None

    @property
    def checksum(self) -> tuple[str, str]:
        """(algorithm, expected hex digest): sha1 where known, else md5."""
        return ("sha1", self.sha1) if self.sha1 else ("md5", self.md5)


@dataclass
class DumpRun:
    wiki: str
    date: str
    job: str
    status_url: str
    files: list[RemoteFile]


@dataclass
class DownloadConfig:
    wiki: str
    date: str  # YYYYMMDD or "latest"
    dest: str
    files: str = "multistream"  # one of FILE_SETS
    base_url: str = DEFAULT_BASE_URL
    parts: bool = False  # the split parts, not the recombined file
    retries: int = 5
    timeout: float = 60.0  # seconds, for connecting and between received bytes
    quiet: bool = False
    # progress lines (stdout); None: print them unless quiet
    echo: Callable[[str], None] | None = None
    sleep: Callable[[float], None] = time.sleep


def dumpstatus_url(base_url: str, wiki: str, date: str) -> str:
    return f"{base_url.rstrip('/')}/{wiki}/{date}/dumpstatus.json"


def choose_job(jobs: dict, files: str, parts: bool = False) -> str:
    """The job whose files `--files` means in a run with these jobs (see the module doc)."""
    recombined, split = JOBS[files]
    return split if parts or recombined not in jobs else recombined


def remote_files(status: dict, job: str, base_url: str, wiki: str, date: str,
                 status_url: str) -> list[RemoteFile]:
    """The files of a "done" job, by name. Raises DumpNotReadyError or DownloadError."""
    info = status.get("jobs", {}).get(job)
    if not isinstance(info, dict):
        raise DumpNotReadyError(f"{wiki} {date}: {status_url} has no job {job!r}")
    state = info.get("status") or "unknown"
    if state != "done":
        raise DumpNotReadyError(f"{wiki} {date}: job {job} is {state!r}, not done yet "
                                f"(try an earlier --date, or --date latest)")
    entries = info.get("files") or {}
    if not isinstance(entries, dict) or not entries:
        raise DumpNotReadyError(f"{wiki} {date}: job {job} is done but lists no files")
    base = base_url.rstrip("/")
    result = []
    for name in sorted(entries):
        entry = entries[name]
        if not _SAFE_NAME.match(name) or not isinstance(entry, dict):
            raise DownloadError(f"{status_url}: unexpected file entry {name!r} in job {job}")
        url = entry.get("url") or f"/{wiki}/{date}/{name}"
        if url.startswith("/"):
            url = base + url  # relative to the dumps root (a mirror's base URL has its prefix)
        elif not re.match(r"^https?://", url):
            url = f"{base}/{wiki}/{date}/{url}"
        sha1, md5 = _hex(entry.get("sha1"), 40), _hex(entry.get("md5"), 32)
        if not sha1 and not md5:
            raise DownloadError(f"{status_url}: no sha1 or md5 for {name} (cannot verify it)")
        size = entry.get("size")
        result.append(RemoteFile(name=name, url=url, size=size if isinstance(size, int) and
                                 size >= 0 else None, sha1=sha1, md5=md5))
    return result


def _hex(value, length: int) -> str | None:
    if isinstance(value, str) and re.fullmatch(rf"[0-9a-fA-F]{{{length}}}", value.strip()):
        return value.strip().lower()
    return None


def run_dates(listing: str) -> list[str]:
    """YYYYMMDD run folders of a wiki's dump listing (HTML index), newest first."""
    return sorted(set(_RUN_LINK.findall(listing)), reverse=True)


# ---- HTTP ---------------------------------------------------------------------------------------

class _Retryable(Exception):
    """A failure worth another attempt (connection, timeout, HTTP 5xx/429, short body)."""


class _StartOver(Exception):
    """The part was emptied (bad range answer): request again from byte 0, at once."""


def _reason(error: BaseException, timeout: float | None = None) -> str:
    """A short one-line cause for a requests/urllib3 exception."""
    import requests

    if isinstance(error, _Retryable):
        return str(error)
    if isinstance(error, (requests.Timeout, TimeoutError)) or "timed out" in str(error).lower():
        return f"timed out (no data for {timeout:g} s)" if timeout else "timed out"
    text = str(error)
    if "IncompleteRead" in text:
        return "connection dropped mid-file"
    for pattern in (r"\[Errno -?\d+\] ([^'\"()\]]+)", r"(Remote end closed connection[^'\"()]*)",
                    r"(Connection broken: [A-Za-z]+)"):
        match = re.search(pattern, text)
        if match:
            return match.group(1).strip().rstrip(".")
    if isinstance(error, requests.exceptions.ChunkedEncodingError):
        return "connection dropped"
    first = text.splitlines()[0] if text.strip() else ""
    return f"{type(error).__name__}: {first}"[:200] if first else type(error).__name__


class _Client:
    def __init__(self, config: DownloadConfig):
        import requests

        self.config = config
        self.session = requests.Session()
        self.session.headers["User-Agent"] = (
            f"wikipairs/{__version__} (dump download; python-requests/{requests.__version__})")
        self.echo = config.echo or (
            (lambda line: None) if config.quiet else _echo_stdout)

    def close(self):
        self.session.close()

    def backoff(self, attempt: int) -> float:
        return min(BACKOFF_FIRST * 2 ** (attempt - 1), BACKOFF_MAX)

    def get_text(self, url: str) -> tuple[int, str]:
        """(HTTP status, body) of a small page, retrying connection errors and 5xx/429."""
        import requests

        attempt = 0
        while True:
            try:
                response = self.session.get(url, timeout=self.config.timeout)
                if response.status_code in (429,) or response.status_code >= 500:
                    raise _Retryable(f"HTTP {response.status_code}")
                return response.status_code, response.content.decode("utf-8", "replace")
            except (requests.RequestException, _Retryable) as e:
                reason = _reason(e, self.config.timeout)
                attempt += 1
                if attempt > self.config.retries:
                    host = re.sub(r"^https?://", "", url).split("/")[0]
                    tries = f" ({_after(self.config.retries)})" if self.config.retries else ""
                    if isinstance(e, _Retryable):
                        raise NetworkError(f"{url}: {reason}{tries}") from None
                    raise NetworkError(f"cannot reach {host}: {reason}{tries}") from None
                delay = self.backoff(attempt)
                self.echo(f"{url}: {reason}; retry {attempt}/{self.config.retries} in {delay:g} s")
                self.config.sleep(delay)

    def get_json(self, url: str, missing: str) -> dict:
        status, text = self.get_text(url)
        if status in (404, 410):
            raise DumpNotFoundError(f"{missing} ({url}: HTTP {status})")
        if status != 200:
            raise DownloadError(f"{url}: HTTP {status}")
        try:
            data = json.loads(text)
        except ValueError:
            raise DownloadError(f"{url}: not valid JSON") from None
        if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
            raise DownloadError(f"{url}: not a dumpstatus.json (no 'jobs')")
        return data


def _after(retries: int) -> str:
    return f"after {retries} retr{'y' if retries == 1 else 'ies'}"


def _echo_stdout(line: str) -> None:
    from tqdm import tqdm

    tqdm.write(line, file=sys.stdout)  # clears and redraws a progress bar on stderr


# ---- resolving the run --------------------------------------------------------------------------

def resolve_run(client: _Client, wiki: str, date: str, files: str, parts: bool = False) -> DumpRun:
    """The dump run to download: `date`, or for "latest" the newest run whose job is done."""
    base = client.config.base_url
    if date != "latest":
        url = dumpstatus_url(base, wiki, date)
        status = client.get_json(url, f"no dump of {wiki} for {date}")
        job = choose_job(status["jobs"], files, parts)
        return DumpRun(wiki, date, job, url, remote_files(status, job, base, wiki, date, url))
    listing_url = f"{base.rstrip('/')}/{wiki}/"
    code, text = client.get_text(listing_url)
    if code in (404, 410):
        raise DumpNotFoundError(f"no dumps of {wiki} ({listing_url}: HTTP {code})")
    if code != 200:
        raise DownloadError(f"{listing_url}: HTTP {code}")
    dates = run_dates(text)
    if not dates:
        raise DumpNotFoundError(f"no dump runs (YYYYMMDD/ folders) listed at {listing_url}")
    newest = None  # why the newest run was passed over
    for candidate in dates[:LATEST_CANDIDATES]:
        url = dumpstatus_url(base, wiki, candidate)
        try:
            status = client.get_json(url, "")
        except DumpNotFoundError:
            newest = newest or "no dumpstatus.json"
            continue
        job = choose_job(status["jobs"], files, parts)
        try:
            found = remote_files(status, job, base, wiki, candidate, url)
        except DumpNotReadyError:
            state = status["jobs"].get(job)
            newest = newest or (f"{job} is {state.get('status')!r}" if isinstance(state, dict)
                                else f"no job {job}")
            continue
        client.echo(f"latest {wiki} run with {job} done: {candidate}")
        return DumpRun(wiki, candidate, job, url, found)
    raise DumpNotReadyError(f"none of the {min(len(dates), LATEST_CANDIDATES)} newest {wiki} runs "
                            f"at {listing_url} has its {files} files done (newest, {dates[0]}: "
                            f"{newest})")


# ---- one file -----------------------------------------------------------------------------------

class _Hashes:
    """sha1 (always: download.json records it) and md5 (when it is the check) of a byte prefix."""

    def __init__(self, md5: bool):
        self.want_md5 = md5
        self.reset()

    def reset(self) -> None:
        self.sha1 = hashlib.sha1()
        self.md5 = hashlib.md5() if self.want_md5 else None
        self.length = 0

    def update(self, data: bytes) -> None:
        self.sha1.update(data)
        if self.md5 is not None:
            self.md5.update(data)
        self.length += len(data)

    def hexdigest(self, algorithm: str) -> str:
        return (self.sha1 if algorithm == "sha1" else self.md5).hexdigest()


def _hash_file(path: str, md5: bool) -> _Hashes:
    hashes = _Hashes(md5)
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            if not block:
                return hashes
            hashes.update(block)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return -1


def _matches(hashes: _Hashes, file: RemoteFile) -> bool:
    algorithm, expected = file.checksum
    return ((file.size is None or hashes.length == file.size)
            and hashes.hexdigest(algorithm) == expected)


def human_size(n: int | None) -> str:
    """A byte count for people: 1.5 GiB."""
    if n is None:
        return "? bytes"
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n:,} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} bytes"


class _Progress:
    """A tqdm bar on stderr, only on a terminal and without --quiet."""

    def __init__(self, file: RemoteFile, initial: int, quiet: bool):
        from tqdm import tqdm

        enabled = not quiet and sys.stderr.isatty()
        self.bar = tqdm(total=file.size, initial=initial, unit="B", unit_scale=True,
                        unit_divisor=1024, desc=file.name, file=sys.stderr, leave=True,
                        dynamic_ncols=True, disable=not enabled)

    def reset(self):
        self.bar.reset(total=self.bar.total)

    def update(self, n: int):
        self.bar.update(n)

    def close(self):
        self.bar.close()


def fetch_file(client: _Client, file: RemoteFile, dest: str) -> tuple[str, str]:
    """Download `file` into `dest` (see the module doc).

    Returns ("skipped" or "downloaded", the file's sha1)."""
    final = os.path.join(dest, file.name)
    part, bad = final + ".part", final + ".bad"
    algorithm, expected = file.checksum
    want_md5 = algorithm == "md5"
    if os.path.isfile(final):
        if file.size is None or _size(final) == file.size:
            hashes = _hash_file(final, want_md5)
            if _matches(hashes, file):
                client.echo(f"{file.name}: already complete ({algorithm} ok), skipped")
                return "skipped", hashes.sha1.hexdigest()
        _replace(final, bad)
        client.echo(f"{file.name}: the existing file does not match dumpstatus.json; "
                    f"moved to {os.path.basename(bad)}, downloading again")

    offset = _size(part)
    if offset < 0 or (file.size is not None and offset > file.size):
        _truncate(part)
        offset = 0
    hashes = _hash_file(part, want_md5) if offset else _Hashes(want_md5)
    progress = _Progress(file, offset, client.config.quiet)
    try:
        if offset and offset == file.size:
            client.echo(f"{file.name}: {file.name}.part is complete, verifying")
        else:
            verb = f"resuming at {human_size(offset)} of" if offset else "downloading"
            client.echo(f"{file.name}: {verb} {human_size(file.size)}")
            _download_with_retries(client, file, part, hashes, progress)
    finally:
        progress.close()

    if hashes.length != _size(part):  # never happens; but the file on disk is what counts
        hashes = _hash_file(part, want_md5)
    if not _matches(hashes, file):
        got = hashes.hexdigest(algorithm)
        _replace(part, bad)
        what = (f"size {hashes.length:,} instead of {file.size:,}"
                if file.size is not None and hashes.length != file.size
                else f"{algorithm} {got} instead of {expected}")
        raise ChecksumError(f"{file.name}: checksum mismatch ({what}); the bytes are kept in "
                            f"{bad} (delete it and run again, or try another --base-url)")
    _replace(part, final)
    client.echo(f"{file.name}: {algorithm} ok")
    return "downloaded", hashes.sha1.hexdigest()


def _download_with_retries(client: _Client, file: RemoteFile, part: str, hashes: _Hashes,
                           progress: _Progress) -> None:
    attempt = 0
    while True:
        before = hashes.length
        try:
            if _attempt(client, file, part, hashes, progress):
                return
            reason = f"connection closed at {hashes.length:,} of {file.size:,} bytes"
        except _StartOver:
            continue  # from byte 0, without a Range header: this cannot happen twice in a row
        except _Retryable as e:
            reason = str(e)
        if hashes.length > before:
            attempt = 0  # it made progress: a flaky connection, not a dead one
        attempt += 1
        retries = client.config.retries
        if attempt > retries:
            tries = f" {_after(retries)}" if retries else ""
            raise NetworkError(f"{file.name}: download failed{tries}: {reason} (run again to "
                               f"resume from {human_size(hashes.length)})")
        delay = client.backoff(attempt)
        client.echo(f"{file.name}: {reason}; retry {attempt}/{retries} in {delay:g} s, "
                    f"from byte {hashes.length:,}")
        client.config.sleep(delay)


def _attempt(client: _Client, file: RemoteFile, part: str, hashes: _Hashes,
             progress: _Progress) -> bool:
    """One request from the part's current size. True when the body ended at the expected size
    (or, size unknown, ended cleanly); False on a short body; _Retryable on transient errors."""
    import http.client

    import requests
    import urllib3

    offset = hashes.length
    headers = {"Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        response = client.session.get(file.url, headers=headers, stream=True,
                                      timeout=client.config.timeout)
    except requests.RequestException as e:
        raise _Retryable(_reason(e, client.config.timeout)) from None
    with response:
        code = response.status_code
        if code == 416 and offset:  # the range starts at or after the end: start over
            _restart(client, file, part, hashes, progress, "HTTP 416 for the resumed range")
            raise _StartOver()
        if code == 429 or code >= 500:
            raise _Retryable(f"HTTP {code}")
        if code in (404, 410):
            raise DownloadError(f"{file.name}: not on the server ({file.url}: HTTP {code})")
        if code not in (200, 206):
            raise DownloadError(f"{file.name}: {file.url}: HTTP {code}")
        if offset and code == 200:
            _restart(client, file, part, hashes, progress,
                     "the server does not support Range requests")
        elif code == 206:
            start = _range_start(response.headers.get("Content-Range", ""))
            if start != offset:
                if not offset:
                    raise _Retryable(f"HTTP 206 from byte {start} for a request without Range")
                _restart(client, file, part, hashes, progress,
                         f"the server sent a range from byte {start} instead of {offset}")
                raise _StartOver()
        mode = "ab" if hashes.length else "wb"
        try:
            out = open(part, mode)
        except OSError as e:
            raise DownloadError(f"cannot write {part}: {e.strerror or e}") from None
        with out:
            try:
                for block in _body(response):
                    try:
                        out.write(block)
                    except OSError as e:
                        raise DownloadError(f"cannot write {part}: {e.strerror or e}") from None
                    hashes.update(block)
                    progress.update(len(block))
            except (requests.RequestException, urllib3.exceptions.HTTPError,
                    http.client.HTTPException, OSError) as e:  # the network's, not the disk's
                _flush(out, part)
                raise _Retryable(_reason(e, client.config.timeout)) from None
            _flush(out, part)
    if file.size is None:
        return True
    return hashes.length >= file.size


def _body(response):
    """The body's blocks as they arrive: what came before a dropped connection is kept (read1
    returns what is there; iter_content, on older urllib3, may lose up to a block)."""
    raw = response.raw
    if not hasattr(raw, "read1"):  # urllib3 < 2.3
        yield from (block for block in response.iter_content(CHUNK) if block)
        return
    while True:
        block = raw.read1(CHUNK, decode_content=True)
        if not block:
            return
        yield block


def _flush(out, part: str) -> None:
    try:
        out.flush()
        os.fsync(out.fileno())
    except OSError as e:
        raise DownloadError(f"cannot write {part}: {e.strerror or e}") from None


def _range_start(content_range: str) -> int | None:
    match = re.match(r"\s*bytes\s+(\d+)-", content_range)
    return int(match.group(1)) if match else None


def _restart(client: _Client, file: RemoteFile, part: str, hashes: _Hashes, progress: _Progress,
             why: str) -> None:
    client.echo(f"{file.name}: {why}; downloading from byte 0")
    _truncate(part)
    hashes.reset()
    progress.reset()


def _truncate(path: str) -> None:
    try:
        with open(path, "wb"):
            pass
    except OSError as e:
        raise DownloadError(f"cannot write {path}: {e.strerror or e}") from None


def _replace(source: str, target: str) -> None:
    try:
        os.replace(source, target)
    except OSError as e:
        raise DownloadError(f"cannot rename {source} to {target}: {e.strerror or e}") from None


# ---- the whole download -------------------------------------------------------------------------

def download(config: DownloadConfig) -> dict:
    """Resolve the run, download and verify its files into config.dest, write download.json.

    Returns download.json's content plus "downloaded" and "skipped" (file names)."""
    if config.files not in JOBS:
        raise DownloadError(f"--files must be one of {', '.join(FILE_SETS)}, not {config.files!r}")
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

    client = _Client(config)
    try:
        run = resolve_run(client, config.wiki, config.date, config.files, config.parts)
        try:
            os.makedirs(config.dest, exist_ok=True)
        except OSError as e:
            raise DownloadError(f"cannot create {config.dest}: {e.strerror or e}") from None
        manifest_path = os.path.join(config.dest, MANIFEST)
        try:  # only a complete download has one
            if os.path.lexists(manifest_path):
                os.remove(manifest_path)
        except OSError as e:
            raise DownloadError(f"cannot remove {manifest_path}: {e.strerror or e}") from None
        total = sum(f.size or 0 for f in run.files)
        client.echo(f"{run.wiki} {run.date}, job {run.job}: {len(run.files)} files, "
                    f"{human_size(total)}")
        outcome = {"downloaded": [], "skipped": []}
        records = []
        for file in run.files:
            how, sha1 = fetch_file(client, file, config.dest)
            outcome[how].append(file.name)
            records.append({"name": file.name,
                            "size": os.path.getsize(os.path.join(config.dest, file.name)),
                            "sha1": sha1, "md5": file.md5, "url": file.url})
    finally:
        client.close()
    manifest = {
        "wiki": run.wiki, "date": run.date, "requested_date": config.date,
        "files_option": config.files, "job": run.job, "base_url": config.base_url,
        "dumpstatus_url": run.status_url, "verified_with": sorted({f.checksum[0] for f in
                                                                   run.files}),
        "completed_at": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "wikipairs_version": __version__, "files": records,
    }
    try:
        fileio.write_atomic(manifest_path, (json.dumps(manifest, indent=2) + "\n").encode())
    except OSError as e:
        raise DownloadError(f"cannot write {manifest_path}: {e.strerror or e}") from None
    return {**manifest, **outcome}


def valid_date(value: str) -> bool:
    if not _DATE.match(value):
        return False
    try:
        datetime.strptime(value, "%Y%m%d")
    except ValueError:
        return False
    return True


__all__ = ["DownloadConfig", "DownloadError", "DumpNotFoundError", "DumpNotReadyError",
           "ChecksumError", "NetworkError", "RemoteFile", "DumpRun", "download",
           "fetch_file", "valid_date", "WIKI_NAME", "human_size", "MANIFEST", "FILE_SETS", "resolve_run", "run_dates", "choose_job",
           "remote_files", "dumpstatus_url", "DEFAULT_BASE_URL"]
