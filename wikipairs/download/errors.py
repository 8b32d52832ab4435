"""The errors of `wikipairs download`: each a one-line message the CLI prints, exit status 2."""
from __future__ import annotations

from ..errors import WikipairsError


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
