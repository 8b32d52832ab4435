"""Beam transforms of `wikipairs build`. They only wire the core (wikipairs.*) together.

Stages: splits (byte ranges of a multistream dump; or parts of a file, which PrepareFile turns
into byte ranges of a plain copy, decompressing once) and a Bloom filter of titles (from the
index, or PrepareFile) -> ParseAndPair (per split: Articles, ICT/BFS pairs written to the
split's shard, the two WLP sides, redirects) -> ResolveRedirects (chains, by keyed joins) ->
WlpJoin (documents keyed by link target, resolved by a join, capped per target by a combiner,
joined with the query pages) -> WriteShards (WLP). Pages and ICT/BFS pairs are never shuffled.
Every skip is a Beam counter in the "wikipairs" namespace.
"""
from __future__ import annotations

import heapq
import json
import os
from collections import Counter

import apache_beam as beam
import numpy as np
from apache_beam.metrics import Metrics

from wikipairs import fileio
from wikipairs.reading.bloom import BloomFilter
from wikipairs.shards.pair_shards import ShardWriter, pair_row
from wikipairs.pairs.tasks import (PairBuilder, PairConfig, WlpDoc, approx_token_count, is_self_link,
                             wlp_rank)
from wikipairs.pairs.heldout import in_sorted, query_key, split_of
from wikipairs.pairs.negatives import attach_wlp_negatives, wlp_candidates
from wikipairs.parse import ParseConfig, cleaner_kind, page_redirects, parse_page
from wikipairs.progress import Throttle
from wikipairs.records import Redirect
from wikipairs.text.redirects import MAX_DEPTH, RedirectMap
from wikipairs.reading.splits import index_titles, prepare_file, read_split
from wikipairs.text import template_drops
from wikipairs.text.titles import TitleParser
from wikipairs.text.wikitext import ParseOptions

from .notes import save_note

NAMESPACE = "wikipairs"


def flush_counts(counts: Counter, held: Counter | None = None) -> None:
    """Move a core Counter's values into Beam counters (then clear it). The counts per
    template name go into `held` instead, where given: a split sends only its top names
    (template_drops.cap), not a counter per name of a wiki's thousands."""
    for name, value in counts.items():
        if value:
            if held is not None and template_drops.is_per_name(name):
                held[name] += value
                continue
            Metrics.counter(NAMESPACE, name).inc(value)
    counts.clear()


def flush_held(held: Counter) -> None:
    """A split's held counts per template name, its top names only, into Beam counters."""
    template_drops.cap(held)
    flush_counts(held)


class SplitProgress:
    """Pages and pairs done in one split, noted in a small JSON file every few seconds
    (wikipairs.progress.Throttle), which the local driver sums into progress lines (Beam's
    DirectRunner reports metrics only at the end). A no-op without a folder."""

    def __init__(self, folder: str | None, index: int, every: float = 2.0):
        self.path = os.path.join(folder, f"{index:05d}.json") if folder else None
        self.throttle, self.pages = Throttle(every), 0

    def update(self, pairs: dict, force: bool = False) -> None:
        if self.path is None or not self.throttle.due(force):
            return
        fileio.write_atomic(self.path, json.dumps({"pages": self.pages, "pairs": pairs}).encode())


class PrepareFile(beam.DoFn):
    """(path, [(index, Split)] planned for a file without an index) -> the same splits as byte
    ranges of a plain copy (decompressed once, into `workdir`), and a Bloom filter of the file's
    titles as the "titles" output. Where that cannot be done (a truncated or UTF-16 file) the
    planned splits go on unchanged, each reading the file itself, and the filter is None (then
    WLP does not filter links)."""

    def __init__(self, workdir: str, sites: dict, capacity: int):
        self.workdir, self.sites, self.capacity = workdir, sites, capacity

    def process(self, item):
        path, planned = item
        splits, bloom, pages = prepare_file(path, len(planned), self.workdir,
                                            TitleParser(self.sites[path]), self.capacity)
        if splits is None:
            yield from planned
        else:
            yield from ((index, split) for (index, _), split in zip(planned, splits))
        yield beam.pvalue.TaggedOutput("titles", bloom)


class IndexTitles(beam.DoFn):
    """(dump path, index path) -> a Bloom filter of the titles the multistream index lists."""

    def __init__(self, sites: dict, capacity: int):
        self.sites, self.capacity = sites, capacity

    def process(self, item):
        path, index = item
        yield index_titles(index, TitleParser(self.sites[path]), self.capacity)


class UnionTitles(beam.CombineFn):
    """The union of per-file Bloom filters; None (no filtering) if any file has none."""

    def __init__(self, capacity: int):
        self.capacity = capacity

    def create_accumulator(self):
        return BloomFilter(self.capacity)

    def add_input(self, acc, bloom):
        return None if acc is None or bloom is None else acc.union(bloom)

    def merge_accumulators(self, accs):
        merged = self.create_accumulator()
        for acc in accs:
            merged = self.add_input(merged, acc)
        return merged

    def extract_output(self, acc):
        return acc


class ParseAndPair(beam.DoFn):
    """Split -> its pages -> Articles -> ICT and BFS pairs, written at once to the split's own
    shard (DIR/<format>/<task>/part-<split>-of-<splits>; no shuffle of pairs or pages), and the
    two WLP sides as tagged outputs: "wlp_query" (title, WlpQuery) and "wlp_doc" (raw target,
    WlpDoc), the latter only for targets the title filter says may exist. Links stay unresolved
    here; a later join resolves them. The main output is the shard notes.

    Held-out split (pairs.heldout): only train pairs go to the split's shard; the ICT/BFS pairs
    of eval query pages are the "eval_pair" output, and the split's distinct train query keys
    the "train_key" output (EvalFilter drops eval pairs whose query is also a train query).
    `num_shards`: the shard count in the ICT/BFS file names (the splits, then the eval shards).
    `exclude` (shards.audit.Exclusion): pages and pairs left out for an eval set."""

    def __init__(self, *, sites: dict, splitter, parse: ParseConfig, pairs: PairConfig,
                 tasks: tuple[str, ...], tokenizer, output: str, formats: tuple[str, ...],
                 num_splits: int, progress_dir: str | None = None, num_shards: int | None = None,
                 exclude=None):
        self.sites, self.splitter, self.parse_config = sites, splitter, parse
        self.pair_config, self.tasks, self.tokenizer = pairs, tasks, tokenizer
        self.output, self.formats, self.num_splits = output, formats, num_splits
        self.num_shards = num_shards or num_splits
        self.progress_dir = progress_dir  # where each split notes how far it got (local runs)
        self.exclude = exclude

    def setup(self):
        self.cleaners = {}
        self.count = self.tokenizer.count_tokens if self.tokenizer else approx_token_count
        self.counts = Counter()
        self.builder = PairBuilder(self.pair_config, self.count, self.counts)
        self.negatives = self.pair_config.hard_negatives > 0  # rows with the neg_* columns

    def _may_exist(self, titles):
        """`target in titles`, remembered: link targets recur across pages (a bounded cache, per
        worker, of the filter the side input gives this bundle)."""
        if getattr(self, "_filter", None) is not titles:
            self._filter, self._answers = titles, {}
        answers = self._answers

        def may_exist(target: str) -> bool:
            known = answers.get(target)
            if known is None:
                if len(answers) >= 1_000_000:
                    answers.clear()
                known = answers[target] = target in titles
            return known
        return may_exist

    def _cleaner(self, page):
        """The source file's cleaner: wikitext, Parsoid HTML for an Enterprise HTML dump, or
        passages for a passage corpus."""
        source = page.source
        if source not in self.cleaners:
            self.cleaners[source] = cleaner_kind(page)(
                TitleParser(self.sites[source]), self.splitter,
                ParseOptions(keep_tables=self.parse_config.keep_tables), resolve=None)
        return self.cleaners[source]

    def process(self, indexed_split, titles=None):
        index, split = indexed_split
        writers = {task: ShardWriter(self.output, task, index, self.num_shards, self.formats,
                                     self.tokenizer is not None, with_negatives=self.negatives)
                   for task in ("ict", "bfs") if task in self.tasks}
        progress = SplitProgress(self.progress_dir, index)
        held = Counter()  # counts per template name, sent at the end (flush_held)
        self.train_keys = set()
        for page in read_split(split, self.counts, self.parse_config.allow_truncated,
                               self.parse_config.lang):
            for redirect in page_redirects(page):  # an HTML record lists its redirects
                yield beam.pvalue.TaggedOutput("redirects", (redirect.source, redirect.target))
            progress.pages += 1
            yield from self._page(page, writers, titles)
            if self.counts["pages_read"] >= 100:
                flush_counts(self.counts, held)
            progress.update({task: w.pairs for task, w in writers.items()})
        progress.update({task: w.pairs for task, w in writers.items()}, force=True)
        # The split's distinct train queries, as one array: one element per split, not one per
        # pair, through the runner (EvalFilter)
        yield beam.pvalue.TaggedOutput("train_key", key_array(self.train_keys))
        for task, writer in writers.items():
            note = writer.close()
            save_note(self.output, note)
            self.counts[f"{task}_pairs"] += note["pairs"]
            yield note
        flush_counts(self.counts, held)
        flush_held(held)

    def _page(self, page, writers, titles):
        article = parse_page(page, self._cleaner(page), self.parse_config, self.counts)
        if article is None:
            return
        if self.exclude is not None and self.exclude.page_excluded(article.title):
            self.counts["pages_excluded_eval_title"] += 1
            return
        self.counts["articles"] += 1
        passages = self.builder.passages(article)
        self.counts["passages"] += len(passages)
        cfg = self.pair_config
        split = split_of(article.id, cfg.eval_percent)
        for task, make in (("ict", self.builder.ict), ("bfs", self.builder.bfs)):
            if task in writers:
                made = list(make(article, passages))
                reasons = (self.exclude.reasons(made) if self.exclude is not None
                           else [None] * len(made))
                for pair, reason in zip(made, reasons):
                    if reason is not None:  # shares an n-gram, or its query is an answer's
                        self.counts[f"{task}_excluded_eval_{reason}"] += 1
                        continue
                    pair.split = split
                    if split == "eval":
                        yield beam.pvalue.TaggedOutput("eval_pair", pair)
                        continue
                    self.train_keys.add(query_key(pair.query))
                    writers[task].write(pair_row(pair, self.count, self.tokenizer,
                                                 cfg.query_max_tokens, cfg.doc_max_tokens,
                                                 self.negatives))
        if "wlp" in self.tasks:
            query = self.builder.wlp_query(article, passages)
            if query is not None:
                yield beam.pvalue.TaggedOutput("wlp_query", (query.title, query))
            may_exist = self._may_exist(titles) if titles is not None else None
            for target, doc in self.builder.wlp_documents(article, passages, may_exist):
                yield beam.pvalue.TaggedOutput("wlp_doc", (target, doc))


def key_array(keys) -> np.ndarray:
    """int64 keys -> one sorted NumPy array of the distinct keys."""
    return np.unique(np.fromiter(keys, dtype=np.int64, count=len(keys)))


class SortedKeys(beam.CombineFn):
    """int64 keys or arrays of them -> one sorted NumPy array of the distinct keys (a small side
    input)."""

    def create_accumulator(self):
        return [np.zeros(0, np.int64), []]  # distinct keys so far, keys not yet merged in

    def add_input(self, acc, key):
        if isinstance(key, np.ndarray):
            acc[1].extend(key.tolist())
        else:
            acc[1].append(int(key))
        # Merge when the pending keys reach the merged ones' number (at least 100,000): each key
        # is then sorted O(log n) times in all, where a fixed batch re-sorted all n keys per
        # batch (O(n^2 / batch): minutes for the millions of eval keys of a full dump).
        if len(acc[1]) >= max(100_000, len(acc[0])):
            acc = self._compact(acc)
        return acc

    @staticmethod
    def _compact(acc):
        return [np.unique(np.concatenate([acc[0], np.array(acc[1], dtype=np.int64)])), []]

    def merge_accumulators(self, accs):
        accs = [self._compact(acc) for acc in accs]
        return [np.unique(np.concatenate([acc[0] for acc in accs])), []]

    def extract_output(self, acc):
        return self._compact(acc)[0]


def _contains(keys: np.ndarray, key: int) -> bool:
    return bool(in_sorted(keys, np.array([key], np.int64))[0])


class EvalFilter(beam.PTransform):
    """(eval pairs, arrays of train query keys) -> the eval pairs whose query text is no train
    pair's query.

    The eval side is small (`--eval-percent` of pages): its query keys go to every worker as one
    sorted array, the train keys that hit it (few) are collected the same way, and the eval pairs
    are filtered by them; each drop is counted as `<task>_eval_dropped_query_on_train_page`."""

    def expand(self, inputs):
        eval_pairs, train_keys = inputs
        eval_keys = (eval_pairs | "EvalKeys" >> beam.Map(lambda p: query_key(p.query))
                     | "EvalKeySet" >> beam.CombineGlobally(SortedKeys()))
        hits = (train_keys
                | "TrainHits" >> beam.Map(_hits,
                                          keys=beam.pvalue.AsSingleton(eval_keys))
                | "HitSet" >> beam.CombineGlobally(SortedKeys()))
        return eval_pairs | "DropSeenQueries" >> beam.ParDo(
            _DropSeen(), hits=beam.pvalue.AsSingleton(hits))


def _hits(train_keys, keys: np.ndarray) -> np.ndarray:
    """The train keys (an array of a split's, or one key of a WLP pair) that are eval keys."""
    train_keys = np.atleast_1d(np.asarray(train_keys, dtype=np.int64))
    return train_keys[in_sorted(keys, train_keys)]


class _DropSeen(beam.DoFn):
    def process(self, pair, hits):
        if _contains(hits, query_key(pair.query)):
            Metrics.counter(NAMESPACE, f"{pair.task}_eval_dropped_query_on_train_page").inc()
        else:
            yield pair


class ResolveRedirects(beam.PTransform):
    """(source, target) redirects -> (source, final title) for every resolvable redirect.

    Same rule as wikipairs.text.redirects.RedirectMap: up to MAX_DEPTH hops; cycles and longer
    chains resolve to nothing (and are left out). One keyed join per hop over the redirects
    still pending, so no worker ever holds the redirect table (enwiki: ~11M redirects)."""

    def __init__(self, max_depth: int = MAX_DEPTH):
        super().__init__()
        self.max_depth = max_depth

    def expand(self, redirects):
        pending = redirects | "Start" >> beam.Map(lambda kv: (kv[1], (kv[0], 1)))
        finals = []
        for hop in range(1, self.max_depth + 1):
            step = ({"at": pending, "next": redirects}
                    | f"Join{hop}" >> beam.CoGroupByKey()
                    | f"Hop{hop}" >> beam.ParDo(_Hop(self.max_depth)).with_outputs(
                        "pending", main="final"))
            finals.append(step.final)
            pending = step.pending
        return tuple(finals) | "Finals" >> beam.Flatten()


class _Hop(beam.DoFn):
    def __init__(self, max_depth: int):
        self.max_depth = max_depth

    def process(self, item):
        title, groups = item
        nexts = list(groups["next"])
        for source, hops in groups["at"]:
            if not nexts:
                yield source, title
            elif hops < self.max_depth:
                yield beam.pvalue.TaggedOutput("pending", (nexts[0], (source, hops + 1)))
            else:
                Metrics.counter(NAMESPACE, "redirects_unresolved").inc()


class _ResolveTarget(beam.DoFn):
    """(raw target, {"doc": [WlpDoc], "final": [title]}) -> (resolved target, WlpDoc)."""

    def process(self, item):
        raw, groups = item
        finals = list(groups["final"])
        target = finals[0] if finals else raw
        for doc in groups["doc"]:
            yield target, doc


class TopWlpDocs(beam.CombineFn):
    """Per query title: at most `cap` WlpDocs, one per linking page (its first link), those
    with the smallest seeded rank; self-links dropped. Lifted before the shuffle, so a page
    linked from millions of pages never sends millions of documents to one worker.

    The accumulator is (docs by page id, a heap of (-rank, arrival, page id) over the same
    pages): each page's rank is hashed once, and the worst page leaves in O(log cap), where a
    scan of all kept pages per document made a page with a million links cost a billion hashes.
    The arrival number breaks rank ties as the scan did (the earliest kept page leaves first).
    It also counts the links it was given and the self-links among them (each link is added
    once, whatever the bundles: exact), output with the kept documents as
    (docs, links, self_links) for the counters the in-memory path keeps (`wlp_pairs`)."""

    def __init__(self, config: PairConfig):
        self.config = config

    def create_accumulator(self):
        return {}, [], 0, 0, 0

    def add_input(self, acc, element):
        title, doc = element
        kept, worst_first, arrivals, links, self_links = acc
        if is_self_link(title, doc):
            return kept, worst_first, arrivals, links + 1, self_links + 1
        kept, worst_first, arrivals = self._add((kept, worst_first, arrivals), title, doc)
        return kept, worst_first, arrivals, links + 1, self_links

    def _add(self, acc, title, doc: WlpDoc):
        kept, worst_first, arrivals = acc
        old = kept.get(doc.page_id)
        cap = self.config.wlp_docs_per_page
        if old is None and cap > 0:
            heapq.heappush(worst_first, (-wlp_rank(self.config, title, doc.page_id), arrivals,
                                         doc.page_id))
            arrivals += 1
        if old is None or doc.order < old[1].order:
            kept[doc.page_id] = (title, doc)
        if cap > 0 and len(kept) > cap:
            del kept[heapq.heappop(worst_first)[2]]
        return kept, worst_first, arrivals

    def merge_accumulators(self, accs):
        merged, links, self_links = ({}, [], 0), 0, 0
        for kept, _, _, n, n_self in accs:
            for title, doc in kept.values():
                merged = self._add(merged, title, doc)
            links, self_links = links + n, self_links + n_self
        return (*merged, links, self_links)

    def extract_output(self, acc):
        kept, _, _, links, self_links = acc
        return [doc for _, doc in kept.values()], links, self_links


class CollectRedirects(beam.CombineFn):
    """(source, target) redirects -> one RedirectMap (chains collapsed as `wikipairs parse`
    does), for builds whose redirect table fits in memory."""

    def create_accumulator(self):
        return []

    def add_input(self, acc, redirect):
        acc.append(redirect)
        return acc

    def merge_accumulators(self, accs):
        return [r for acc in accs for r in acc]

    def extract_output(self, acc):
        return RedirectMap(Redirect(source, target) for source, target in sorted(acc))


class WlpJoin(beam.PTransform):
    """Queries (title, WlpQuery) + documents (raw target, WlpDoc) + redirects (source, target)
    -> WLP Pairs. Link targets are resolved through the redirects either by one in-memory
    RedirectMap, a side input (`redirects_in_memory`: few stages, for tables that fit), or by
    ResolveRedirects' keyed joins and a join on the raw target (no worker holds the table)."""

    def __init__(self, config: PairConfig, redirects_in_memory: bool = False):
        super().__init__()
        self.config, self.in_memory = config, redirects_in_memory

    def expand(self, inputs):
        queries, docs, redirects = inputs
        if self.in_memory:
            table = redirects | "RedirectMap" >> beam.CombineGlobally(CollectRedirects())
            resolved = docs | "Resolve" >> beam.Map(
                lambda kv, table: (table.resolve(kv[0]), kv[1]),
                table=beam.pvalue.AsSingleton(table))
        else:
            finals = redirects | "ResolveRedirects" >> ResolveRedirects()
            resolved = ({"doc": docs, "final": finals}
                        | "ByRawTarget" >> beam.CoGroupByKey()
                        | "Resolve" >> beam.ParDo(_ResolveTarget()))
        capped = (resolved
                  | "WithTitle" >> beam.Map(lambda kv: (kv[0], kv))
                  | "TopDocs" >> beam.CombinePerKey(TopWlpDocs(self.config)))
        made = ({"query": queries, "docs": capped}
                | "ByTitle" >> beam.CoGroupByKey()
                | "Pairs" >> beam.ParDo(_WlpPairs(self.config)).with_outputs(
                    "candidate", main="pairs"))
        if self.config.hard_negatives <= 0:
            return made.pairs
        # Hard negatives from the link graph: a query page's candidates come from the groups of
        # the pages it links to (their first passages), met here with its pairs (pairs.negatives)
        return ({"pairs": made.pairs | "ByQueryTitle" >> beam.Map(lambda p: (p.query_title, p)),
                 "candidates": made.candidate}
                | "WithCandidates" >> beam.CoGroupByKey()
                | "HardNegatives" >> beam.ParDo(_WlpNegatives(self.config)))


class _WlpPairs(beam.DoFn):
    def __init__(self, config: PairConfig):
        self.config = config

    def setup(self):
        self.counts = Counter()
        self.builder = PairBuilder(self.config, counts=self.counts)

    def process(self, item):
        _, groups = item
        queries = list(groups["query"])
        docs = []
        for chunk, links, self_links in groups["docs"]:  # TopWlpDocs' one output
            docs.extend(chunk)
            if queries:  # what the in-memory path counts in `wlp_pairs`
                self.counts["wlp_skipped_self_link"] += self_links
                self.counts["wlp_capped"] += links - self_links - len(chunk)
        if not queries:
            if docs:
                self.counts["wlp_docs_without_query_page"] += 1
        else:
            pairs = self.builder.wlp_pairs(queries[0], docs)
            yield from pairs
            if self.config.hard_negatives > 0:
                for key, negative in wlp_candidates(pairs, queries[0].first):
                    yield beam.pvalue.TaggedOutput("candidate", (key, negative))
        flush_counts(self.counts)


class _WlpNegatives(beam.DoFn):
    """(query title, {"pairs": [Pair], "candidates": [Negative]}) -> the pairs with their hard
    negatives (pairs.negatives.attach_wlp_negatives)."""

    def __init__(self, config: PairConfig):
        self.config = config

    def setup(self):
        self.counts = Counter()

    def process(self, item):
        _, groups = item
        pairs = list(groups["pairs"])
        yield from attach_wlp_negatives(pairs, groups["candidates"], self.config.hard_negatives,
                                        self.config.seed, self.counts)
        flush_counts(self.counts)


__all__ = ["PrepareFile", "IndexTitles", "UnionTitles", "ParseAndPair", "ResolveRedirects",
           "CollectRedirects", "WlpJoin", "TopWlpDocs", "EvalFilter", "SortedKeys",
           "flush_counts", "NAMESPACE"]
