"""HTTP for the download: one requests session, retries, and the resumable fetch of one file.

Dropped connections, timeouts and HTTP 5xx/429 are retried `retries` times with exponential
backoff (first, 2 x first, ... at most max; the count restarts whenever an attempt brought bytes),
resuming from the part's current size. A file goes to its `.part` (resumed with an HTTP Range
request from the part's size; a server that ignores Range sends the whole file and the part starts
over), hashed while it arrives. Checking and renaming the part is the caller's. requests is
imported only when a Client is made.
"""
from __future__ import annotations

import os
import re
from typing import Callable

from .. import __version__
from .checksums import Hashes, hash_file
from .dumps import RemoteFile
from .errors import DownloadError, NetworkError
from .display import Progress, human_size

CHUNK = 1 << 18  # bytes per read and write


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


def _after(retries: int) -> str:
    return f"after {retries} retr{'y' if retries == 1 else 'ies'}"


class Client:
    """A requests session with the retry policy: `retries` retries, waits from `backoff`
    (first, max) seconds, `timeout` seconds for a connection or for more data."""

    def __init__(self, retries: int, timeout: float, backoff: tuple[float, float],
                 echo: Callable[[str], None], sleep: Callable[[float], None]):
        import requests

        self.retries, self.timeout, self.echo, self.sleep = retries, timeout, echo, sleep
        self.backoff_first, self.backoff_max = backoff
        self.session = requests.Session()
        self.session.headers["User-Agent"] = (
            f"wikipairs/{__version__} (dump download; python-requests/{requests.__version__})")

    def close(self):
        self.session.close()

    def wait(self, attempt: int, what: str, reason: str, resume: str = "") -> None:
        """Sleep before retry `attempt` of `what` (a URL or file name), saying why first."""
        delay = min(self.backoff_first * 2 ** (attempt - 1), self.backoff_max)
        self.echo(f"{what}: {reason}; retry {attempt}/{self.retries} in {delay:g} s{resume}")
        self.sleep(delay)

    def get_text(self, url: str) -> tuple[int, str]:
        """(HTTP status, body) of a small page, retrying connection errors and 5xx/429."""
        response = self._request("GET", url)
        return response.status_code, response.content.decode("utf-8", "replace")

    def head_size(self, url: str) -> tuple[int, int | None]:
        """(HTTP status, Content-Length or None) of a file, without its body (HEAD)."""
        response = self._request("HEAD", url)
        length = response.headers.get("Content-Length", "")
        return response.status_code, int(length) if length.strip().isdigit() else None

    def _request(self, method: str, url: str):
        """The answer to a body-less or small request, retrying connection errors and 5xx/429."""
        import requests

        attempt = 0
        while True:
            try:
                response = self.session.request(method, url, timeout=self.timeout,
                                                allow_redirects=True,
                                                headers={"Accept-Encoding": "identity"}
                                                if method == "HEAD" else None)
                if response.status_code in (429,) or response.status_code >= 500:
                    raise _Retryable(f"HTTP {response.status_code}")
                response.content  # the whole body, inside the retries
                return response
            except (requests.RequestException, _Retryable) as e:
                reason = _reason(e, self.timeout)
                attempt += 1
                if attempt > self.retries:
                    host = re.sub(r"^https?://", "", url).split("/")[0]
                    tries = f" ({_after(self.retries)})" if self.retries else ""
                    if isinstance(e, _Retryable):
                        raise NetworkError(f"{url}: {reason}{tries}") from None
                    raise NetworkError(f"cannot reach {host}: {reason}{tries}") from None
                self.wait(attempt, url, reason)


# ---- one file into its .part --------------------------------------------------------------------

def fetch_part(client: Client, file: RemoteFile, part: str, quiet: bool) -> Hashes:
    """Bring `part` to `file`'s size (resuming what is there) and return the Hashes of its bytes.
    Raises NetworkError when the retries run out, DownloadError when the part cannot be written."""
    offset = _size(part)
    if offset < 0 or (file.size is not None and offset > file.size):
        _truncate(part)
        offset = 0
    hashes = hash_file(part, *file.wants) if offset else Hashes(*file.wants)
    progress = Progress(file.name, file.size, offset, quiet)
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
        hashes = hash_file(part, *file.wants)
    return hashes


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return -1


def _download_with_retries(client: Client, file: RemoteFile, part: str, hashes: Hashes,
                           progress: Progress) -> None:
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
        if attempt > client.retries:
            tries = f" {_after(client.retries)}" if client.retries else ""
            raise NetworkError(f"{file.name}: download failed{tries}: {reason} (run again to "
                               f"resume from {human_size(hashes.length)})")
        client.wait(attempt, file.name, reason, f", from byte {hashes.length:,}")


def _attempt(client: Client, file: RemoteFile, part: str, hashes: Hashes,
             progress: Progress) -> bool:
    """One request from the part's current size. True when the body ended at the expected size
    (or, size unknown, ended cleanly); False on a short body; _Retryable on transient errors."""
    import requests

    offset = hashes.length
    headers = {"Accept-Encoding": "identity"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    try:
        response = client.session.get(file.url, headers=headers, stream=True,
                                      timeout=client.timeout)
    except requests.RequestException as e:
        raise _Retryable(_reason(e, client.timeout)) from None
    with response:
        _check_answer(client, file, part, hashes, progress, response)
        _append(client, response, part, hashes, progress)
    if file.size is None:
        return True
    return hashes.length >= file.size


def _check_answer(client: Client, file: RemoteFile, part: str, hashes: Hashes,
                  progress: Progress, response) -> None:
    """Raises for an answer whose bytes cannot go onto the part (_StartOver after emptying it,
    for a range that does not start at its size); empties it and goes on where the whole file
    comes instead (a server that ignores Range)."""
    offset, code = hashes.length, response.status_code
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


def _append(client: Client, response, part: str, hashes: Hashes, progress: Progress) -> None:
    """The response's body onto the part, as it arrives; flushed to disk also when the network
    fails, so that the next attempt resumes after every byte received."""
    import http.client

    import requests
    import urllib3

    try:
        out = open(part, "ab" if hashes.length else "wb")
    except OSError as e:
        raise _cannot_write(part, e) from None
    with out:
        try:
            for block in _body(response):
                try:
                    out.write(block)
                except OSError as e:
                    raise _cannot_write(part, e) from None
                hashes.update(block)
                progress.update(len(block))
        except (requests.RequestException, urllib3.exceptions.HTTPError,
                http.client.HTTPException, OSError) as e:  # the network's, not the disk's
            _flush(out, part)
            raise _Retryable(_reason(e, client.timeout)) from None
        _flush(out, part)


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
        raise _cannot_write(part, e) from None


def _range_start(content_range: str) -> int | None:
    match = re.match(r"\s*bytes\s+(\d+)-", content_range)
    return int(match.group(1)) if match else None


def _restart(client: Client, file: RemoteFile, part: str, hashes: Hashes, progress: Progress,
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
        raise _cannot_write(path, e) from None


def _cannot_write(path: str, error: OSError) -> DownloadError:
    return DownloadError(f"cannot write {path}: {error.strerror or error}")
