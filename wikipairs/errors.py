"""Errors a user can act on. The CLI prints them as one line on stderr and exits with status 2."""


class WikipairsError(Exception):
    """Bad input or usage: message is one line, meant for the user."""


class DumpError(WikipairsError):
    """A dump file that cannot be read."""


class TruncatedDumpError(DumpError):
    """A dump file that ends in the middle of a page (a cut download, a full disk)."""
