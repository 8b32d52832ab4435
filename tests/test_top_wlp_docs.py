"""TopWlpDocs (pipelines/transforms.py), the Beam build's cap on WLP documents per query page,
against two oracles: the core's `select_wlp_docs` (the in-memory path's rule) and the scan it
replaced (the worst kept page found by `max` over all kept pages after each document), including
rank ties, repeated linking pages, self-links, and accumulators split and merged."""
from __future__ import annotations

import random

import pytest

from wikipairs.pairs.tasks import PairConfig, WlpDoc, is_self_link, select_wlp_docs
from wikipairs.pipelines import transforms
from wikipairs.pipelines.transforms import TopWlpDocs

TITLE = "Query page"


def _docs(n: int, pages: int, seed: int) -> list[WlpDoc]:
    rng = random.Random(seed)
    docs = []
    for i in range(n):
        page = rng.randrange(pages)
        title = TITLE if page == 0 else f"Page {page}"  # page 0 links to itself
        docs.append(WlpDoc(page_id=page, title=title, lang="en", section=0, passage=0,
                           text=f"text {i}", anchor="a", link_in_text=True,
                           order=rng.randrange(50) * n + i))  # a page's links: distinct orders
    return docs


class _ScanTopDocs(TopWlpDocs):
    """The rule before the heap: after each document, drop the kept page of the largest rank,
    found by scanning them all (ties: the earliest kept page)."""

    def create_accumulator(self):
        return {}

    def add_input(self, acc, element):
        return self._add(acc, *element)

    def _add(self, acc, title, doc):
        if is_self_link(title, doc):
            return acc
        old = acc.get(doc.page_id)
        if old is None or doc.order < old[1].order:
            acc[doc.page_id] = (title, doc)
        cap = self.config.wlp_docs_per_page
        if cap > 0 and len(acc) > cap:
            worst = max(acc, key=lambda pid: transforms.wlp_rank(self.config, title, pid))
            del acc[worst]
        return acc

    def merge_accumulators(self, accs):
        merged = {}
        for acc in accs:
            for title, doc in acc.values():
                merged = self._add(merged, title, doc)
        return merged

    def extract_output(self, acc):
        return [doc for _, doc in acc.values()]


def _combined(fn, docs, parts: int):
    """Beam's lifted combine: `parts` accumulators over slices of the input, then merged."""
    accs = []
    for k in range(parts):
        acc = fn.create_accumulator()
        for doc in docs[k::parts]:
            acc = fn.add_input(acc, (TITLE, doc))
        accs.append(acc)
    return fn.extract_output(fn.merge_accumulators(accs))


def _combine(fn, docs, parts: int):
    out = _combined(fn, docs, parts)
    return out[0] if isinstance(out, tuple) else out  # TopWlpDocs: (docs, links, self_links)


def _key(docs):
    return [(d.page_id, d.order, d.text) for d in docs]


@pytest.mark.parametrize("cap,parts,seed", [(5, 1, 0), (5, 3, 1), (40, 2, 2), (0, 2, 3),
                                            (1000, 1, 4)])
def test_same_documents_as_the_scan_and_the_core_rule(cap, parts, seed):
    config = PairConfig(wlp_docs_per_page=cap, seed=seed)
    docs = _docs(600, 120, seed)
    got = _combine(TopWlpDocs(config), docs, parts)
    assert _key(got) == _key(_combine(_ScanTopDocs(config), docs, parts))
    # the core rule on each linking page's first link (smallest order; the first one on ties)
    first = {}
    for doc in docs:
        if not is_self_link(TITLE, doc) and (doc.page_id not in first
                                             or doc.order < first[doc.page_id].order):
            first[doc.page_id] = doc
    expected = select_wlp_docs(first.values(), TITLE, config)
    assert sorted(_key(got)) == sorted(_key(expected))
    assert len(got) == (min(cap, len(first)) if cap > 0 else len(first))
    assert all(d.page_id != 0 for d in got)  # the self-link is gone


@pytest.mark.parametrize("parts", [1, 2, 5])
def test_counts_are_the_in_memory_paths_whatever_the_bundles(parts):
    """The links given and the self-links among them are counted exactly however the input is
    split; the Beam build's wlp_capped and wlp_skipped_self_link then equal the in-memory
    path's (`PairBuilder.wlp_pairs`), which counted nothing on the Beam path before."""
    from collections import Counter

    from wikipairs.pairs.tasks import PairBuilder, WlpQuery
    config = PairConfig(wlp_docs_per_page=5, seed=7)
    docs = _docs(600, 120, 7)
    kept, links, self_links = _combined(TopWlpDocs(config), docs, parts)
    assert links == len(docs) and self_links == sum(d.page_id == 0 for d in docs)
    counts = Counter()
    query = WlpQuery(page_id=0, title=TITLE, lang="en",
                     lead=[(0, 0, "A lead sentence of the query page.")], counts=[8])
    PairBuilder(config, counts=counts).wlp_pairs(query, docs)
    assert counts["wlp_skipped_self_link"] == self_links
    assert counts["wlp_capped"] == links - self_links - len(kept)


def test_rank_ties_leave_in_arrival_order(monkeypatch):
    """With ranks of 4 values (ties everywhere) the heap drops the same pages as the scan."""
    monkeypatch.setattr(transforms, "wlp_rank", lambda config, title, pid: pid % 4)
    config = PairConfig(wlp_docs_per_page=7)
    for seed in range(5):
        docs = _docs(300, 60, seed)
        for parts in (1, 2, 4):
            assert _key(_combine(TopWlpDocs(config), docs, parts)) == \
                _key(_combine(_ScanTopDocs(config), docs, parts))


def test_each_page_is_ranked_once(monkeypatch):
    calls = []

    def counting_rank(config, title, pid):
        calls.append(pid)
        return pid * 2654435761 % 1000003

    monkeypatch.setattr(transforms, "wlp_rank", counting_rank)
    docs = [WlpDoc(page_id=i, title=f"Page {i}", lang="en", section=0, passage=0, text="t",
                   anchor="a", link_in_text=True, order=0) for i in range(1, 3001)]
    got = _combine(TopWlpDocs(PairConfig(wlp_docs_per_page=10)), docs, 1)
    assert len(got) == 10
    # one rank per page, and the merge re-ranks the 10 kept ones; the scan: ~33,000
    assert len(calls) == 3000 + 10
