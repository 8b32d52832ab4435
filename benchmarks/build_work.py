"""Benchmark: the build worker's own work per page against the parse, in one process, no runner.

    .venv/bin/python benchmarks/build_work.py                  # gensim x20, multistream, 2 rounds
    .venv/bin/python benchmarks/build_work.py --copies 100 --rounds 3

`build_throughput.py` compares a whole build (runner, worker processes, two cores) with a
single-process parse, so its ratio mixes three things: the work a worker does per page, what the
runner and Beam's worker harness add, and how well the host runs two processes at once (this
host's speed moves by +-20% between identical runs, and up to 2x between hours). This one takes
the first alone: on the splits the build would make of the scaled multistream dump, it times in
the same process, alternating,
1. `parse`: reading each split's pages and `parse_page` (what the reference parse does per page,
   with the build's cleaner: links unresolved), and
2. `work`: `ParseAndPair.process` as a Beam worker runs it (parse, passages, ICT/BFS pairs and
   their rows written to Parquet and TFRecord shards, WLP sides made and pickled as the runner
   would, held-out keys, progress), with the real title filter from the multistream index.
`parse / work` (CPU time, best of `--rounds`) is the best a build can reach against the parse
rate x cores with a runner that cost nothing and cores that scaled perfectly: issue 15's target
of 0.75 needs this ceiling above 0.75.

`--breakdown`: the work's CPU time split by what a worker does per page (parse_page, the pair
builders, pair_row, the shard writers, query keys, pickling its outputs; the rest, mostly reading
and decompressing, by difference), each function timed around its calls (generators drained
inside the timer), and the elements the worker emits per output tag.
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_throughput import DEFAULT_INPUT, multistream, scaled  # noqa: E402


def _setup(path: str):
    from wikipairs.parse import ParseConfig, open_dump
    from wikipairs.pipelines.driver import title_capacity
    from wikipairs.reading.splits import index_for, index_titles, plan_splits
    from wikipairs.text.sentences import SentenceSplitter
    from wikipairs.text.titles import TitleParser
    parse = ParseConfig(inputs=[path], output="")
    site = open_dump(path).site
    splitter = SentenceSplitter.for_language(site.lang, [], method=parse.sentence_splitter)
    titles = index_titles(index_for(path), TitleParser(site), title_capacity(os.path.getsize(path)))
    return plan_splits([path]), site, splitter, parse, titles


def time_parse(path: str, setup) -> tuple[int, float]:
    from wikipairs.parse import cleaner_for, open_dump, parse_page
    from wikipairs.reading.splits import read_split
    from wikipairs.text.wikitext import ParseOptions
    splits, _, splitter, parse, _ = setup
    cleaner = cleaner_for(open_dump(path), splitter, ParseOptions(keep_tables=parse.keep_tables),
                          resolve=None)
    pages, counts, start = 0, Counter(), time.process_time()
    for split in splits:
        for page in read_split(split, counts, parse.allow_truncated, parse.lang):
            pages += 1
            parse_page(page, cleaner, parse, counts)
    return pages, time.process_time() - start


def time_work(path: str, setup, dumps=pickle.dumps, tags: Counter | None = None) -> float:
    import apache_beam as beam

    from wikipairs.pairs.tasks import PairConfig
    from wikipairs.pipelines.transforms import ParseAndPair
    splits, site, splitter, parse, titles = setup
    with tempfile.TemporaryDirectory() as out:
        fn = ParseAndPair(sites={path: site}, splitter=splitter, parse=parse, pairs=PairConfig(),
                          tasks=("ict", "bfs", "wlp"), tokenizer=None, output=out,
                          formats=("parquet", "tfrecord"), num_splits=len(splits))
        fn.setup()
        start = time.process_time()
        for index, split in enumerate(splits):
            for item in fn.process((index, split), titles):
                tagged = isinstance(item, beam.pvalue.TaggedOutput)
                if tags is not None:
                    tags[item.tag if tagged else "main"] += 1
                dumps(item.value if tagged else item)  # what leaves a worker is pickled
        return time.process_time() - start  # its counts go to Beam's metrics: no page count


def breakdown(path: str, setup) -> None:
    """One run of `time_work` with the worker's parts timed (process time) around their calls."""
    import wikipairs.pipelines.transforms as transforms
    from wikipairs.pairs.tasks import PairBuilder
    from wikipairs.shards.pair_shards import ShardWriter
    spent, tags = Counter(), Counter()

    def timed(owner, name, drain=False):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            start = time.process_time()
            result = original(*args, **kwargs)
            if drain:
                result = iter(list(result))
            spent[name] += time.process_time() - start
            return result
        setattr(owner, name, wrapper)
        return original

    parts = [(PairBuilder, n, True) for n in ("ict", "bfs", "wlp_documents")]
    parts += [(PairBuilder, "passages", False), (PairBuilder, "wlp_query", False),
              (transforms, "parse_page", False), (transforms, "pair_row", False),
              (transforms, "query_key", False), (ShardWriter, "write", False),
              (ShardWriter, "close", False)]
    originals = [(owner, name, timed(owner, name, drain)) for owner, name, drain in parts]

    def dumps(value):
        start = time.process_time()
        pickle.dumps(value)
        spent["pickle outputs"] += time.process_time() - start
    try:
        total = time_work(path, setup, dumps, tags)
    finally:
        for owner, name, original in originals:
            setattr(owner, name, original)
    spent["reading and the rest"] = total - sum(spent.values())
    print(f"\nthe worker's work, {total:.2f} CPU s, by part:")
    for name, cpu in spent.most_common():
        print(f"  {name:22s} {cpu:7.2f} s {100 * cpu / total:5.1f}%")
    print("elements emitted per tag:", ", ".join(f"{t} {n:,}" for t, n in tags.most_common()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", type=Path, default=DEFAULT_INPUT)
    ap.add_argument("--copies", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--breakdown", action="store_true",
                    help="also one run of the work with its parts timed")
    args = ap.parse_args()
    path = str(multistream(scaled(args.input, args.copies)))
    setup = _setup(path)
    if args.breakdown:
        breakdown(path, setup)
    best = {"parse": float("inf"), "work": float("inf")}
    for r in range(args.rounds):
        n, cpu = time_parse(path, setup)  # the same pages both ways
        for name, cpu in (("parse", cpu), ("work", time_work(path, setup))):
            best[name] = min(best[name], cpu)
            print(f"round {r + 1} {name:5s} {n:,} pages {cpu:7.2f} CPU s "
                  f"{1000 * cpu / n:6.2f} ms/page", flush=True)
    print(f"\n{Path(path).name}: {len(setup[0])} splits, {n:,} pages, best of {args.rounds}")
    print(f"parse {1000 * best['parse'] / n:.2f} ms/page, worker's work "
          f"{1000 * best['work'] / n:.2f} ms/page: work / parse = "
          f"{best['work'] / best['parse']:.2f}")
    print(f"ceiling of the build ratio (runner free, cores perfect) = parse / work = "
          f"{best['parse'] / best['work']:.2f} (issue 15 target 0.75)")


if __name__ == "__main__":
    main()
