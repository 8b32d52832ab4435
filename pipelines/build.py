"""The pipeline graph of `wikipairs build` (the driver is pipelines/driver.py)."""
from __future__ import annotations

import apache_beam as beam

# eval shards after a task's train shards (the layout's rule)
from wikipairs.shards.layout import eval_shard_count as eval_shards
from wikipairs.shards.pair_shards import pair_row, shard_of, write_shard
from wikipairs.pairs.tasks import approx_token_count
from wikipairs.reading.splits import index_for

from .notes import save_note
from wikipairs.pairs.heldout import query_key, split_of

from .transforms import EvalFilter, IndexTitles, ParseAndPair, PrepareFile, UnionTitles, WlpJoin


class _ToRow(beam.DoFn):
    """Pair -> (shard index, row) with token counts (and ids with a vocabulary)."""

    def __init__(self, tokenizer, num_shards: int, query_max: int, doc_max: int,
                 negatives: bool):
        self.tokenizer, self.num_shards = tokenizer, num_shards
        self.query_max, self.doc_max, self.negatives = query_max, doc_max, negatives

    def process(self, pair):
        count = self.tokenizer.count_tokens if self.tokenizer else approx_token_count
        row = pair_row(pair, count, self.tokenizer, self.query_max, self.doc_max, self.negatives)
        yield shard_of(pair.pair_id, self.num_shards), row


class _WriteShard(beam.DoFn):
    def __init__(self, output: str, task: str, num_shards: int, formats, with_ids: bool,
                 negatives: bool):
        self.output, self.task, self.num_shards = output, task, num_shards
        self.formats, self.with_ids, self.negatives = tuple(formats), with_ids, negatives

    def process(self, item):
        index, rows = item
        rows = [r for r in rows if r is not None]  # None: the placeholder of an empty shard
        note = write_shard(self.output, self.task, index, self.num_shards, rows, self.formats,
                           self.with_ids, self.negatives)
        save_note(self.output, note)
        beam.metrics.Metrics.counter("wikipairs", f"{self.task}_pairs").inc(note["pairs"])
        yield note


class WriteShards(beam.PTransform):
    """Pairs of one task -> DIR/parquet/<task>/part-NNNNN-of-MMMMM.parquet and
    DIR/tfrecord/<task>/part-NNNNN-of-MMMMM.tfrecord.gz (wikipairs/shards/layout.py).

    Every shard index gets a file, even an empty one, so the set of files is fixed in advance."""

    def __init__(self, output, task, num_shards, formats, tokenizer, query_max, doc_max,
                 first: int = 0, total: int | None = None, negatives: bool = False):
        """`first`, `total`: the shards are numbered first..first+num_shards-1 of `total` (the
        eval shards of ICT and BFS follow the splits' shards). `negatives`: rows have the
        hard-negative columns (`--hard-negatives`)."""
        super().__init__()
        self.negatives = negatives
        self.output, self.task, self.num_shards, self.formats = output, task, num_shards, formats
        self.tokenizer, self.query_max, self.doc_max = tokenizer, query_max, doc_max
        self.first, self.total = first, total or num_shards

    def expand(self, pairs):
        first = self.first
        rows = (pairs | "ToRow" >> beam.ParDo(
            _ToRow(self.tokenizer, self.num_shards, self.query_max, self.doc_max,
                   self.negatives))
                | "Number" >> beam.Map(lambda kv: (kv[0] + first, kv[1])))
        empty = (rows.pipeline | "ShardIndexes" >> beam.Create(
            [(first + i, None) for i in range(self.num_shards)]))
        return ((rows, empty) | "WithEmpty" >> beam.Flatten()
                | "ByShard" >> beam.GroupByKey()
                | "Write" >> beam.ParDo(_WriteShard(self.output, self.task, self.total,
                                                    self.formats, self.tokenizer is not None,
                                                    self.negatives)))


class _SplitWlp(beam.DoFn):
    """WLP pairs -> train pairs (main), eval pairs ("eval") and train query keys ("train_key");
    pairs sharing an eval set's n-gram (`exclude`) are dropped."""

    def __init__(self, eval_percent: float, exclude=None):
        self.eval_percent, self.exclude = eval_percent, exclude

    def process(self, pair):
        reason = self.exclude.pair_reason(pair) if self.exclude is not None else None
        if reason is not None:
            beam.metrics.Metrics.counter("wikipairs", f"wlp_excluded_eval_{reason}").inc()
            return
        pair.split = split_of(pair.query_page_id, self.eval_percent)
        if pair.split == "eval":
            yield beam.pvalue.TaggedOutput("eval", pair)
        else:
            yield beam.pvalue.TaggedOutput("train_key", query_key(pair.query))
            yield pair


def build_pipeline(pipeline, *, splits, sites, splitter, parse, pairs, tasks, formats, tokenizer,
                   num_shards, output, title_capacity, workdir, progress_dir=None,
                   redirects_in_memory=False, exclude=None):
    """Add the whole build to `pipeline`. ICT and BFS get one shard per split (train pairs) and
    `eval_shards` more (eval pairs, by pair_id hash); WLP `num_shards` train shards and
    `eval_shards(num_shards)` eval shards after them.
    `redirects_in_memory`: WLP resolves link targets through one redirect table (a side input)
    instead of keyed joins (see WlpJoin). `exclude`: shards.audit.Exclusion (`--exclude`)."""
    n_eval = eval_shards(len(splits), pairs.eval_percent)
    negatives = pairs.hard_negatives > 0
    planned, indexed, per_file = [], [], {}
    for index, split in enumerate(splits):
        if split.whole_file:
            per_file.setdefault(split.path, []).append((index, split))
        elif split.kind:  # a passage corpus: planned already, no index, no titles (no links)
            planned.append((index, split))
        else:
            planned.append((index, split))
            indexed.append(split.path)
    prepared = (pipeline
                | "FilesToPrepare" >> beam.Create(sorted(per_file.items()))
                | "PrepareFiles" >> beam.ParDo(PrepareFile(workdir, sites, title_capacity))
                .with_outputs("titles", main="splits"))
    index_blooms = (pipeline
                    | "Indexes" >> beam.Create(sorted({(p, index_for(p)) for p in indexed}))
                    | "IndexTitles" >> beam.ParDo(IndexTitles(sites, title_capacity)))
    titles = ((prepared.titles, index_blooms) | "AllTitles" >> beam.Flatten()
              | "TitleFilter" >> beam.CombineGlobally(UnionTitles(title_capacity)))
    all_splits = ((pipeline | "IndexedSplits" >> beam.Create(planned), prepared.splits)
                  | "Splits" >> beam.Flatten()
                  | "SpreadSplits" >> beam.Reshuffle())
    parsed = all_splits | "ParseAndPair" >> beam.ParDo(
        ParseAndPair(sites=sites, splitter=splitter, parse=parse, pairs=pairs, tasks=tuple(tasks),
                     tokenizer=tokenizer, output=output, formats=tuple(formats),
                     num_splits=len(splits), progress_dir=progress_dir,
                     num_shards=len(splits) + n_eval, exclude=exclude),
        titles=beam.pvalue.AsSingleton(titles)).with_outputs(
            "wlp_query", "wlp_doc", "redirects", "eval_pair", "train_key", main="notes")
    eval_pairs, train_keys = [parsed.eval_pair], [parsed.train_key]
    if "wlp" in tasks:
        wlp = ((parsed.wlp_query, parsed.wlp_doc, parsed.redirects)
               | "WlpJoin" >> WlpJoin(pairs, redirects_in_memory)
               | "WlpSplit" >> beam.ParDo(_SplitWlp(pairs.eval_percent, exclude)).with_outputs(
                   "eval", "train_key", main="train"))
        eval_pairs.append(wlp.eval)
        train_keys.append(wlp.train_key)
    kept = ((eval_pairs | "EvalPairs" >> beam.Flatten(),
             train_keys | "TrainKeys" >> beam.Flatten()) | "EvalFilter" >> EvalFilter())
    by_task = kept | "EvalByTask" >> beam.Partition(
        lambda pair, n: ("ict", "bfs", "wlp").index(pair.task), 3)
    if "wlp" in tasks:  # train shards, then the eval shards, as ICT and BFS
        n_wlp_eval = eval_shards(num_shards, pairs.eval_percent)
        wlp.train | "Write_wlp" >> WriteShards(
            output, "wlp", num_shards, formats, tokenizer, pairs.query_max_tokens,
            pairs.doc_max_tokens, total=num_shards + n_wlp_eval, negatives=negatives)
        if n_wlp_eval:
            by_task[2] | "Write_wlp_eval" >> WriteShards(
                output, "wlp", n_wlp_eval, formats, tokenizer, pairs.query_max_tokens,
                pairs.doc_max_tokens, first=num_shards, total=num_shards + n_wlp_eval,
                negatives=negatives)
    for i, task in enumerate(("ict", "bfs")):
        if task in tasks and n_eval:
            by_task[i] | f"Write_{task}_eval" >> WriteShards(
                output, task, n_eval, formats, tokenizer, pairs.query_max_tokens,
                pairs.doc_max_tokens, first=len(splits), total=len(splits) + n_eval,
                negatives=negatives)
    return parsed.notes
