"""Hard negatives (`build --hard-negatives N`): for each pair, up to N passages that are close to
its query but are not its document, chosen by seeded hash, so the same inputs and seed give the
same negatives on any runner and worker count.

Rules (also in the README):
- ICT and BFS: other passages of the query's own page (the same topic, another passage), those of
  other sections than the positive's first, then the rest of its section; BFS never takes the lead
  (its query comes from there). Within each group the order is `sample(seed, "neg", task, page
  id, positive passage, candidate passage)`.
- WLP (the link graph): the first passage of pages that the query page A links to and that do not
  link back to A (no WLP document of A comes from them), in the order of
  `sample(seed, "neg", "wlp", A, document page, candidate page)`. A candidate page must have a
  usable lead (a WLP query side), and is known through A's WLP documents of it: A is among the
  (at most `wlp_docs_per_page`) pages whose documents it keeps.
- A candidate whose text contains the query sentence is never a negative
  (`{task}_hard_negative_holds_query`); a pair with fewer than N candidates gets those it has
  (`{task}_hard_negatives_short` counts the missing ones).
Negatives are documents like the positives: the passage text capped at `doc_max_tokens` with the
title and framing, its doc_id the hash of (title, text).
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable

from ..records import Negative, Pair
from .sampling import sample


def choose_negatives(candidates: Iterable[tuple[tuple, object]], query: str, n: int, task: str,
                     counts: Counter, make: Callable[[object], Negative] | None = None
                     ) -> tuple[Negative, ...]:
    """The first `n` negatives by rank among (rank, candidate) pairs, `make(candidate)` giving
    each one's Negative (None: the candidates are Negatives), skipping those whose text holds the
    query; what is skipped and what is missing counted under `task`."""
    chosen = []
    for _, candidate in sorted(candidates, key=lambda c: c[0]):
        negative = make(candidate) if make is not None else candidate
        if query in negative.text:
            counts[f"{task}_hard_negative_holds_query"] += 1
            continue
        chosen.append(negative)
        if len(chosen) == n:
            break
    if len(chosen) < n:
        counts[f"{task}_hard_negatives_short"] += n - len(chosen)
    return tuple(chosen)


def page_negatives(pair: Pair, passages: list, negative_of: Callable[[object], Negative], n: int,
                   seed: int, counts: Counter) -> tuple[Negative, ...]:
    """ICT/BFS: up to `n` other passages of the pair's page (see the module rules).
    `passages`: the page's passages (tasks.Passage, by index); `negative_of(passage)`: its
    Negative."""
    task, positive = pair.task, pair.doc_passage
    section = passages[positive].section
    candidates = [
        ((x.section == section, sample(seed, "neg", task, pair.query_page_id, positive, x.index)), x)
        for x in passages
        if x.index != positive and not (task == "bfs" and x.section == 0)]
    return choose_negatives(candidates, pair.query, n, task, counts, negative_of)


def wlp_candidates(pairs: Iterable[Pair], first: Negative | None) -> Iterable[tuple[str, Negative]]:
    """(document page title, `first`) for each WLP pair of a query page A whose first passage is
    `first`: A is a page that the document's page links to, so a candidate negative of the
    pairs whose query page is the document's page."""
    if first is None:
        return []
    return [(pair.doc_title, first) for pair in pairs]


def attach_wlp_negatives(pairs: list[Pair], candidates: Iterable[Negative], n: int, seed: int,
                         counts: Counter) -> list[Pair]:
    """Sets `negatives` on the WLP pairs of one query page A from the candidates (first passages
    of pages A links to): those that link back to A (a document page of A's pairs) or are A are
    left out; see the module rules."""
    if not pairs:
        return pairs
    query_page = pairs[0].query_page_id
    linkers = {pair.doc_page_id for pair in pairs} | {query_page}
    unique = {c.page_id: c for c in candidates if c.page_id not in linkers}
    for pair in pairs:
        ranked = [((sample(seed, "neg", "wlp", query_page, pair.doc_page_id, page),), negative)
                  for page, negative in unique.items()]
        pair.negatives = choose_negatives(ranked, pair.query, n, "wlp", counts)
    return pairs


__all__ = ["choose_negatives", "page_negatives", "wlp_candidates", "attach_wlp_negatives"]
