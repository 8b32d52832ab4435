"""The redirect table of a dump, with chains collapsed and cycles dropped."""
from __future__ import annotations

from collections.abc import Iterable

from ..records import Redirect

MAX_DEPTH = 10  # MediaWiki follows one hop; dumps hold longer chains, we follow up to this many


class RedirectMap:
    """source title -> final target title. Chains are followed up to MAX_DEPTH hops; a cycle or a
    chain longer than that resolves to nothing (the link is kept unresolved: its own title)."""

    def __init__(self, redirects: Iterable[Redirect] = (), max_depth: int = MAX_DEPTH):
        self.direct: dict[str, str] = {}
        for redirect in redirects:  # a self-redirect is kept: a cycle of one, resolving to nothing
            self.direct[redirect.source] = redirect.target
        self.max_depth = max_depth
        self.final: dict[str, str | None] = {}
        self.cycles: set[str] = set()  # redirects that are part of a cycle
        for source in self.direct:
            self.final[source] = self._follow(source)

    def _follow(self, source: str) -> str | None:
        seen, title = [source], source
        for _ in range(self.max_depth):
            nxt = self.direct.get(title)
            if nxt is None:
                return title
            if nxt in seen:  # the cycle is seen[from nxt on]; pages before it only lead into it
                self.cycles.update(seen[seen.index(nxt):])
                return None
            seen.append(nxt)
            title = nxt
        return None if title in self.direct else title

    def resolve(self, title: str) -> str:
        """The page a link to `title` lands on (itself when it is no redirect or cannot resolve)."""
        final = self.final.get(title)
        return final if final is not None else title

    def __len__(self) -> int:
        return len(self.direct)

    def __contains__(self, title: str) -> bool:
        return title in self.direct

    def rows(self):
        """(source, target, resolved) for every redirect; resolved is None for cycles/too deep."""
        for source, target in sorted(self.direct.items()):
            yield source, target, self.final.get(source)
