"""Finding a Wikimedia Enterprise HTML dump to download (`--files enterprise-html`).

Wikimedia publishes them at `{base}/other/enterprise_html/runs/DATE/`, one file per wiki and
namespace: `WIKI-NS0-DATE-ENTERPRISE-HTML.json.tar.gz` (namespace 0: the articles). A run folder is
a plain HTML index: there is no dumpstatus.json, and the runs publish no sha1/md5 listing (unlike
the XML dumps' `*-sha1sums.txt` / `*-md5sums.txt`). So the file is checked by its size (the
server's Content-Length, asked with HEAD before the download) and download.json records its sha1
and sha256, so that a copy can be checked against it later. Where a run folder does list a
checksum file (`...sums...`, or `NAME.md5` / `.sha1` / `.sha256`: a mirror's, or a future
Wikimedia run's), its entry for the file is the check.

`--date latest` reads `{base}/other/enterprise_html/runs/` (an index of `YYYYMMDD/` folders) and
takes the newest run whose folder lists the wiki's file. Pages are fetched through an
`http.Client`; this module only reads what they say.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import unquote

from .dumps import LATEST_CANDIDATES, DumpRun, RemoteFile, _page, run_dates
from .errors import DownloadError, DumpNotFoundError

if TYPE_CHECKING:
    from .http import Client

JOB = "enterprise-html"  # download.json's "job" for these files
RUNS_PATH = "other/enterprise_html/runs"
NAMESPACE = 0
_LINK = re.compile(r"""href=["']?(?:\./)?([^"'>\s?#]+)""", re.IGNORECASE)
_SUMS = re.compile(r"(md5|sha1|sha256)", re.IGNORECASE)
_HEX_LENGTH = {32: "md5", 40: "sha1", 64: "sha256"}


def file_name(wiki: str, date: str, namespace: int = NAMESPACE) -> str:
    return f"{wiki}-NS{namespace}-{date}-ENTERPRISE-HTML.json.tar.gz"


def runs_url(base_url: str) -> str:
    return f"{base_url.rstrip('/')}/{RUNS_PATH}/"


def run_url(base_url: str, date: str) -> str:
    return f"{runs_url(base_url)}{date}/"


def listed_names(listing: str) -> list[str]:
    """The file names an HTML index links to (no folders, no parent link)."""
    names = (unquote(link).rsplit("/", 1)[-1] for link in _LINK.findall(listing)
             if not link.endswith("/"))
    return [name for name in names if name]


def resolve_enterprise_run(client: Client, base_url: str, wiki: str, date: str) -> DumpRun:
    """The Enterprise HTML dump of `wiki` to download: run `date`, or for "latest" the newest
    run that has it. Raises DumpNotFoundError (one line) when there is none."""
    if date == "latest":
        date, listing = _latest(client, base_url, wiki)
    else:
        listing = _page(client, run_url(base_url, date),
                        f"no Enterprise HTML dump run {date}")
        if file_name(wiki, date) not in listed_names(listing):
            raise DumpNotFoundError(f"no Enterprise HTML dump of {wiki} in run {date} "
                                    f"({run_url(base_url, date)} does not list "
                                    f"{file_name(wiki, date)})")
    return DumpRun(wiki, date, JOB, run_url(base_url, date),
                   [_remote_file(client, base_url, wiki, date, listing)])


def _latest(client: Client, base_url: str, wiki: str) -> tuple[str, str]:
    dates = run_dates(_page(client, runs_url(base_url), "no Enterprise HTML dump runs"))
    if not dates:
        raise DumpNotFoundError(f"no Enterprise HTML dump runs (YYYYMMDD/ folders) listed at "
                                f"{runs_url(base_url)}")
    for candidate in dates[:LATEST_CANDIDATES]:
        try:
            listing = _page(client, run_url(base_url, candidate), "")
        except DumpNotFoundError:
            continue
        if file_name(wiki, candidate) in listed_names(listing):
            client.echo(f"latest Enterprise HTML run with {wiki}: {candidate}")
            return candidate, listing
    raise DumpNotFoundError(f"none of the {min(len(dates), LATEST_CANDIDATES)} newest Enterprise "
                            f"HTML runs at {runs_url(base_url)} has a dump of {wiki} (newest: "
                            f"{dates[0]})")


def _remote_file(client: Client, base_url: str, wiki: str, date: str,
                 listing: str) -> RemoteFile:
    name = file_name(wiki, date)
    url = run_url(base_url, date) + name
    code, size = client.head_size(url)
    if code in (404, 410):
        raise DumpNotFoundError(f"no Enterprise HTML dump of {wiki} in run {date} "
                                f"({url}: HTTP {code})")
    if code != 200:
        raise DownloadError(f"{url}: HTTP {code}")
    published = published_checksums(client, base_url, date, name, listing)
    if size is None and not published:
        raise DownloadError(f"{url}: no size (Content-Length) and no published checksum "
                            f"(cannot verify it)")
    return RemoteFile(name=name, url=url, size=size, sha1=published.get("sha1"),
                      md5=published.get("md5"), sha256=published.get("sha256"),
                      record_sha256=True)


def published_checksums(client: Client, base_url: str, date: str, name: str,
                        listing: str) -> dict[str, str]:
    """{algorithm: hex} for `name` from the checksum files its run folder lists (none today)."""
    found: dict[str, str] = {}
    for listed in listed_names(listing):
        sidecar = listed.startswith(name + ".")
        if listed == name or not _SUMS.search(listed) or not (sidecar or "sums" in listed.lower()):
            continue
        code, text = client.get_text(run_url(base_url, date) + listed)
        if code == 200:
            for algorithm, digest in parse_checksums(text, name, sidecar).items():
                found.setdefault(algorithm, digest)
    return found


def parse_checksums(text: str, name: str, sidecar: bool = False) -> dict[str, str]:
    """{algorithm: hex} for `name` in a checksum listing (`HEX  NAME` or `HEX *NAME` lines; in a
    sidecar `NAME.md5` the name may be left out). The algorithm is told by the digest's length."""
    found = {}
    for line in text.splitlines():
        fields = line.split()
        if not fields:
            continue
        digest = fields[0].lower()
        named = fields[1].lstrip("*") if len(fields) > 1 else None
        if not re.fullmatch(r"[0-9a-f]+", digest) or len(digest) not in _HEX_LENGTH:
            continue
        if named == name or (sidecar and named is None):
            found.setdefault(_HEX_LENGTH[len(digest)], digest)
    return found
