"""What Wikimedia publishes for a dump run, and finding the run to download.

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
Pages are fetched through an `http.Client`; this module only reads what they say.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from .errors import DownloadError, DumpNotFoundError, DumpNotReadyError

if TYPE_CHECKING:  # http imports this module (RemoteFile); resolving only calls a Client
    from .http import Client

DEFAULT_BASE_URL = "https://dumps.wikimedia.org"
FILE_SETS = ("multistream", "articles", "enterprise-html")  # the last: download/enterprise.py
# --files -> (recombined job, job of the parts; the parts job is the whole dump of small wikis)
JOBS = {"multistream": ("articlesmultistreamdumprecombine", "articlesmultistreamdump"),
        "articles": ("articlesdumprecombine", "articlesdump")}
LATEST_CANDIDATES = 10  # newest runs whose dumpstatus.json `latest` reads at most
WIKI_NAME = re.compile(r"^[a-z][a-z0-9_]*$")  # enwiki, zh_yuewiki, enwiktionary, commonswiki
_DATE = re.compile(r"^\d{8}$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_RUN_LINK = re.compile(r"""href=["']?(?:\./)?(\d{8})/?["'>\s]""", re.IGNORECASE)


@dataclass
class RemoteFile:
    name: str
    url: str  # absolute
    size: int | None
    sha1: str | None
    md5: str | None
    sha256: str | None = None
    # also hash with sha256 (download.json records it): Enterprise HTML dumps, whose runs
    # publish no checksum, so that the file can be checked again later
    record_sha256: bool = False

    @property
    def checksum(self) -> tuple[str, str | None]:
        """(algorithm, expected hex digest): sha1 where known, else sha256, else md5; ("size",
        None) where nothing is published (only the size is checked)."""
        for algorithm in ("sha1", "sha256", "md5"):
            if getattr(self, algorithm):
                return algorithm, getattr(self, algorithm)
        return "size", None

    @property
    def wants(self) -> tuple[bool, bool]:
        """(md5, sha256): which hashes besides sha1 to compute while the bytes arrive."""
        algorithm = self.checksum[0]
        return algorithm == "md5", algorithm == "sha256" or self.record_sha256


@dataclass
class DumpRun:
    wiki: str
    date: str
    job: str
    status_url: str
    files: list[RemoteFile]


def dumpstatus_url(base_url: str, wiki: str, date: str) -> str:
    return f"{base_url.rstrip('/')}/{wiki}/{date}/dumpstatus.json"


def valid_date(value: str) -> bool:
    """Whether `value` is a real date written YYYYMMDD (a run's name)."""
    if not _DATE.match(value):
        return False
    try:
        datetime.strptime(value, "%Y%m%d")
    except ValueError:
        return False
    return True


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
    return [_remote_file(name, entries[name], job, base_url, wiki, date, status_url)
            for name in sorted(entries)]


def _remote_file(name: str, entry, job: str, base_url: str, wiki: str, date: str,
                 status_url: str) -> RemoteFile:
    """One file entry of a job; its name becomes a local file name, so it must be a plain one."""
    if not _SAFE_NAME.match(name) or not isinstance(entry, dict):
        raise DownloadError(f"{status_url}: unexpected file entry {name!r} in job {job}")
    base = base_url.rstrip("/")
    url = entry.get("url") or f"/{wiki}/{date}/{name}"
    if url.startswith("/"):
        url = base + url  # relative to the dumps root (a mirror's base URL has its prefix)
    elif not re.match(r"^https?://", url):
        url = f"{base}/{wiki}/{date}/{url}"
    sha1, md5 = _hex(entry.get("sha1"), 40), _hex(entry.get("md5"), 32)
    if not sha1 and not md5:
        raise DownloadError(f"{status_url}: no sha1 or md5 for {name} (cannot verify it)")
    size = entry.get("size")
    return RemoteFile(name=name, url=url, size=size if isinstance(size, int) and size >= 0
                      else None, sha1=sha1, md5=md5)


def _hex(value, length: int) -> str | None:
    if isinstance(value, str) and re.fullmatch(rf"[0-9a-fA-F]{{{length}}}", value.strip()):
        return value.strip().lower()
    return None


def run_dates(listing: str) -> list[str]:
    """YYYYMMDD run folders of a wiki's dump listing (HTML index), newest first."""
    return sorted(set(_RUN_LINK.findall(listing)), reverse=True)


# ---- finding the run on a server ----------------------------------------------------------------

def resolve_run(client: Client, base_url: str, wiki: str, date: str, files: str,
                parts: bool = False) -> DumpRun:
    """The dump run to download: `date`, or for "latest" the newest run whose job is done."""
    if date == "latest":
        return _latest_run(client, base_url, wiki, files, parts)
    url = dumpstatus_url(base_url, wiki, date)
    status = read_status(client, url, f"no dump of {wiki} for {date}")
    job = choose_job(status["jobs"], files, parts)
    return DumpRun(wiki, date, job, url, remote_files(status, job, base_url, wiki, date, url))


def _latest_run(client: Client, base_url: str, wiki: str, files: str, parts: bool) -> DumpRun:
    listing_url = f"{base_url.rstrip('/')}/{wiki}/"
    dates = run_dates(_page(client, listing_url, f"no dumps of {wiki}"))
    if not dates:
        raise DumpNotFoundError(f"no dump runs (YYYYMMDD/ folders) listed at {listing_url}")
    newest = None  # why the newest run was passed over
    for candidate in dates[:LATEST_CANDIDATES]:
        url = dumpstatus_url(base_url, wiki, candidate)
        try:
            status = read_status(client, url, "")
        except DumpNotFoundError:
            newest = newest or "no dumpstatus.json"
            continue
        job = choose_job(status["jobs"], files, parts)
        try:
            found = remote_files(status, job, base_url, wiki, candidate, url)
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


def read_status(client: Client, url: str, missing: str) -> dict:
    """A run's dumpstatus.json; HTTP 404/410 is DumpNotFoundError(`missing`)."""
    text = _page(client, url, missing)
    try:
        data = json.loads(text)
    except ValueError:
        raise DownloadError(f"{url}: not valid JSON") from None
    if not isinstance(data, dict) or not isinstance(data.get("jobs"), dict):
        raise DownloadError(f"{url}: not a dumpstatus.json (no 'jobs')")
    return data


def _page(client: Client, url: str, missing: str) -> str:
    """The body of a listing or dumpstatus.json; HTTP 404/410 means the wiki or run is not
    there (DumpNotFoundError: `missing`), any other answer but 200 is an error."""
    code, text = client.get_text(url)
    if code in (404, 410):
        raise DumpNotFoundError(f"{missing} ({url}: HTTP {code})")
    if code != 200:
        raise DownloadError(f"{url}: HTTP {code}")
    return text
