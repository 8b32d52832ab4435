#!/usr/bin/env python3
"""The token measure of wikipairs (no --vocab) against SentencePiece, on every real dump.

For each dump in ../shared/data/wiki/ (one per language, plus the English ones):
1. parse it (`wikipairs.parse.iter_articles`, both passes, links resolved);
2. train a SentencePiece model on it exactly as `wikipairs vocab` does (`sample_sentences`, then
   `train_vocab`: unigram, seed 0) with `--vocab-size` pieces. The default suits the dump's size:
   8000, or 16000 for a dump of more than 40,000 sentences (elwiki-sample, 4x the others: a
   vocabulary too large for its text memorizes whole phrases, too small splits common words;
   sentencepiece shrinks a size too large for a tiny dump, and the table shows the size it got).
   Models are cached under /tmp/wikipairs-bench/token-measure/ by dump sha256 and size;
3. build the ICT, BFS and WLP pairs in memory without a vocabulary (`PairBuilder(PairConfig())`,
   the measure of wikipairs.text.tokens) and compare, over all pairs of all tasks, the mean query and
   document length by the measure (`query_tokens`, `doc_tokens`: title + text) with the
   SentencePiece piece count of the same texts (query; title + doc_text).
It prints one table per dump (pairs, both means and measure / SentencePiece ratios) and a
summary; the quality bar is a ratio within [1/1.5, 1.5] for every language. `--json OUT` writes
the figures.

    .venv/bin/python benchmarks/token_measure.py                       # all dumps, sizes by dump
    .venv/bin/python benchmarks/token_measure.py --dump jawiki-sample --vocab-size 4000
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WIKI = REPO.parent / "shared" / "data" / "wiki"
CACHE = Path(tempfile.gettempdir()) / "wikipairs-bench" / "token-measure"
os.environ.setdefault("NLTK_DATA", str(REPO.parent / "shared" / "data" / "nltk_data"))

from wikipairs.pairs.tasks import PairBuilder, PairConfig, build_pairs_in_memory  # noqa: E402
from wikipairs.parse import ParseConfig, iter_articles  # noqa: E402
from wikipairs.pairs.vocab import Tokenizer, sample_sentences, train_vocab  # noqa: E402

DUMPS = ("jawiki-sample", "bnwiki-sample", "elwiki-sample", "frwiki-wikiplaintext-sample",
         "dewiki-minidump-dbpedia", "enwiki-sample-gensim", "enwiki-enwik8-head",
         "enwiki-apache-category", "enwiki-2019-head", "enwiki-wikibrain-p",
         "enwiki-minidump-dbpedia", "enwiki-table-markup")
BAR = 1.5
LARGE_DUMP_SENTENCES = 40_000


def parse(name: str) -> list:
    path = WIKI / f"{name}.xml.bz2"
    return list(iter_articles(ParseConfig(inputs=[str(path)], output=""), Counter(), {}))


def model_for(name: str, articles: list, vocab_size: int | None) -> Tokenizer:
    """The SentencePiece model of `wikipairs vocab --vocab-size N` on this dump (cached); N None:
    the size that suits the dump (see the module docstring)."""
    sentences = sample_sentences(articles, 1_000_000, 0)
    if vocab_size is None:
        vocab_size = 16000 if len(sentences) > LARGE_DUMP_SENTENCES else 8000
    digest = hashlib.sha256((WIKI / f"{name}.xml.bz2").read_bytes()).hexdigest()[:12]
    path = CACHE / f"{name}-{digest}-{vocab_size}.model"
    if not path.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        train_vocab(sentences, str(path), vocab_size=vocab_size)
    return Tokenizer(str(path))


def compare(articles: list, tokenizer: Tokenizer) -> dict:
    """Mean query and document lengths of all built pairs: measure vs SentencePiece pieces."""
    pairs = build_pairs_in_memory(articles, ("ict", "bfs", "wlp"), PairBuilder(PairConfig()))
    rows = [p for task in pairs.values() for p in task]
    if not rows:
        return {"pairs": 0}
    pieces = tokenizer.count_tokens
    sums = {"query_measure": sum(p.query_tokens for p in rows),
            "query_spm": sum(pieces(p.query) for p in rows),
            "doc_measure": sum(p.doc_tokens for p in rows),
            "doc_spm": sum(pieces(p.doc_title) + pieces(p.doc_text) for p in rows)}
    out = {"pairs": len(rows), **{f"mean_{k}": round(v / len(rows), 2) for k, v in sums.items()}}
    out["query_ratio"] = round(sums["query_measure"] / sums["query_spm"], 3)
    out["doc_ratio"] = round(sums["doc_measure"] / sums["doc_spm"], 3)
    return out


def print_table(name: str, vocab_size: int, figures: dict) -> None:
    print(f"\n{name} (SentencePiece unigram, {vocab_size:,} pieces): {figures['pairs']:,} pairs")
    if not figures["pairs"]:
        return
    print(f"  {'':8}{'measure':>10}{'spm':>10}{'ratio':>8}")
    for side in ("query", "doc"):
        print(f"  {side:8}{figures[f'mean_{side}_measure']:>10.1f}"
              f"{figures[f'mean_{side}_spm']:>10.1f}{figures[f'{side}_ratio']:>8.2f}")


def within_bar(figures: dict) -> bool:
    return all(1 / BAR <= figures[f"{side}_ratio"] <= BAR for side in ("query", "doc"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", action="append", choices=DUMPS, help="default: all; repeatable")
    ap.add_argument("--vocab-size", type=int, default=None,
                    help="default: 8000, 16000 for a dump of more than 40,000 sentences")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    results = {}
    for name in args.dump or DUMPS:
        articles = parse(name)
        tokenizer = model_for(name, articles, args.vocab_size)
        figures = {"vocab_size": tokenizer.vocab_size, **compare(articles, tokenizer)}
        print_table(name, tokenizer.vocab_size, figures)
        results[name] = figures
    measured = {n: f for n, f in results.items() if f["pairs"]}
    failing = [n for n, f in measured.items() if not within_bar(f)]
    print(f"\nratios within a factor {BAR}: {len(measured) - len(failing)} of {len(measured)} dumps"
          + (f"; outside: {', '.join(failing)}" if failing else ""))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())
