"""The pipeline graph of `wikipairs build` (the driver is pipelines/driver.py)."""
from __future__ import annotations

import apache_beam as beam

from wikipairs.shards.pair_shards import pair_row, shard_of, write_shard
from wikipairs.pairs.tasks import approx_token_count
from wikipairs.reading.splits import index_for

from .notes import save_note
from .transforms import IndexTitles, ParseAndPair, PrepareFile, UnionTitles, WlpJoin


class _ToRow(beam.DoFn):
    """Pair -> (shard index, row) with token counts (and ids with a vocabulary)."""

    def __init__(self, tokenizer, num_shards: int, query_max: int, doc_max: int):
        self.tokenizer, self.num_shards = tokenizer, num_shards
        self.query_max, self.doc_max = query_max, doc_max

    def process(self, pair):
        count = self.tokenizer.count_tokens if self.tokenizer else approx_token_count
        row = pair_row(pair, count, self.tokenizer, self.query_max, self.doc_max)
        yield shard_of(pair.pair_id, self.num_shards), row


class _WriteShard(beam.DoFn):
    def __init__(self, output: str, task: str, num_shards: int, formats, with_ids: bool):
        self.output, self.task, self.num_shards = output, task, num_shards
        self.formats, self.with_ids = tuple(formats), with_ids

    def process(self, item):
        index, rows = item
        rows = [r for r in rows if r is not None]  # None: the placeholder of an empty shard
        note = write_shard(self.output, self.task, index, self.num_shards, rows, self.formats,
                           self.with_ids)
        save_note(self.output, note)
        beam.metrics.Metrics.counter("wikipairs", f"{self.task}_pairs").inc(note["pairs"])
        yield note


class WriteShards(beam.PTransform):
    """Pairs of one task -> DIR/parquet/<task>/part-NNNNN-of-MMMMM.parquet and
    DIR/tfrecord/<task>/part-NNNNN-of-MMMMM.tfrecord.gz (wikipairs/shards/layout.py).

    Every shard index gets a file, even an empty one, so the set of files is fixed in advance."""

    def __init__(self, output, task, num_shards, formats, tokenizer, query_max, doc_max):
        super().__init__()
        self.output, self.task, self.num_shards, self.formats = output, task, num_shards, formats
        self.tokenizer, self.query_max, self.doc_max = tokenizer, query_max, doc_max

    def expand(self, pairs):
        rows = pairs | "ToRow" >> beam.ParDo(
            _ToRow(self.tokenizer, self.num_shards, self.query_max, self.doc_max))
        empty = (rows.pipeline | "ShardIndexes" >> beam.Create(
            [(i, None) for i in range(self.num_shards)]))
        return ((rows, empty) | "WithEmpty" >> beam.Flatten()
                | "ByShard" >> beam.GroupByKey()
                | "Write" >> beam.ParDo(_WriteShard(self.output, self.task, self.num_shards,
                                                    self.formats, self.tokenizer is not None)))


def build_pipeline(pipeline, *, splits, sites, splitter, parse, pairs, tasks, formats, tokenizer,
                   num_shards, output, title_capacity, workdir, progress_dir=None,
                   redirects_in_memory=False):
    """Add the whole build to `pipeline`. ICT and BFS get one shard per split; WLP `num_shards`.
    `redirects_in_memory`: WLP resolves link targets through one redirect table (a side input)
    instead of keyed joins (see WlpJoin)."""
    planned, indexed, per_file = [], [], {}
    for index, split in enumerate(splits):
        if split.whole_file:
            per_file.setdefault(split.path, []).append((index, split))
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
                     num_splits=len(splits), progress_dir=progress_dir),
        titles=beam.pvalue.AsSingleton(titles)).with_outputs(
            "wlp_query", "wlp_doc", "redirects", main="notes")
    if "wlp" in tasks:
        wlp = ((parsed.wlp_query, parsed.wlp_doc, parsed.redirects)
               | "WlpJoin" >> WlpJoin(pairs, redirects_in_memory))
        wlp | "Write_wlp" >> WriteShards(output, "wlp", num_shards, formats, tokenizer,
                                         pairs.query_max_tokens, pairs.doc_max_tokens)
    return parsed.notes
