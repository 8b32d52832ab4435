"""Pair quality on every real dump: link positions, WLP link claims, markup leaks per task.

For each dump in ../shared/data/wiki (or --input files) it parses the articles
(`wikipairs.parse.iter_articles`), builds the three tasks in memory (`build_pairs_in_memory`,
default PairConfig, no vocabulary) and prints one row per dump:

- links: in-text links whose `sentence[start:end]` is not their anchor (must be 0);
- wlp claims: WLP pairs with `link_in_doc` whose doc_text lacks the anchor (must be 0);
- over 400: share of sentences over 400 characters;
- leaks: the worst share, over the three tasks, of queries and of documents that hold markup
  (`wikipairs.pairs.quality.markup_leak` of the dump's language), with the task and side it is in.

    .venv/bin/python benchmarks/pair_quality.py [--input DUMP ...] [--lang DUMP=CODE ...] [--json OUT]

Dumps whose text is not in the language their siteinfo declares take `--lang NAME=CODE`
(default: dewiki-minidump-dbpedia.xml.bz2=de, as a user would pass --lang de).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WIKI = os.path.join(os.path.dirname(REPO_ROOT), "shared", "data", "wiki")
os.environ.setdefault("NLTK_DATA", os.path.join(os.path.dirname(WIKI), "nltk_data"))

from wikipairs.pairs.tasks import PairBuilder, PairConfig, build_pairs_in_memory  # noqa: E402
from wikipairs.parse import ParseConfig, iter_articles  # noqa: E402
from wikipairs.pairs.quality import markup_leak  # noqa: E402

DEFAULT_LANGS = {"dewiki-minidump-dbpedia.xml.bz2": "de"}


def misplaced_links(articles) -> tuple[int, int]:
    """(in-text links, those whose span in their sentence is not their anchor)."""
    total = bad = 0
    for article in articles:
        for link in article.links:
            if link.section < 0:
                continue
            total += 1
            try:
                sentence = article.sections[link.section].paragraphs[link.paragraph][link.sentence]
            except IndexError:
                bad += 1
                continue
            bad += sentence[link.start:link.end] != link.anchor
    return total, bad


def measure(path: str, lang: str | None) -> dict:
    started = time.monotonic()
    info: dict = {}
    config = ParseConfig(inputs=[path], output="", lang=lang, allow_truncated=True)
    articles = list(iter_articles(config, Counter(), info))
    links, bad_links = misplaced_links(articles)
    sentences = [s for a in articles for *_, s in a.sentences()]
    pairs = build_pairs_in_memory(articles, ["ict", "bfs", "wlp"], PairBuilder(PairConfig()))
    claims = [p for p in pairs["wlp"] if p.link_in_doc]
    pattern = markup_leak(info["lang"])
    leaks = {}
    for task, task_pairs in pairs.items():
        for side in ("query", "doc_text"):
            leaking = sum(1 for p in task_pairs if pattern.search(getattr(p, side)))
            leaks[f"{task} {side}"] = leaking / len(task_pairs) if task_pairs else 0.0
    worst = max(leaks, key=leaks.get)
    return {
        "dump": os.path.basename(path), "lang": info["lang"], "splitter": info["sentence_splitter"],
        "articles": len(articles), "links": links, "misplaced_links": bad_links,
        "wlp_claims": len(claims),
        "wlp_claims_without_anchor": sum(1 for p in claims if p.link_anchor not in p.doc_text),
        "sentences": len(sentences),
        "over_400_chars": sum(len(s) > 400 for s in sentences) / max(1, len(sentences)),
        "pairs": {task: len(p) for task, p in pairs.items()}, "leaks": leaks,
        "worst_leak": [worst, leaks[worst]], "seconds": round(time.monotonic() - started, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--input", action="append", help="dump file (default: every real dump)")
    parser.add_argument("--lang", action="append", default=[], metavar="NAME=CODE")
    parser.add_argument("--json", help="write the figures to this JSON file")
    args = parser.parse_args()
    paths = args.input or sorted(os.path.join(WIKI, n) for n in os.listdir(WIKI) if ".xml" in n)
    langs = dict(DEFAULT_LANGS, **dict(x.split("=", 1) for x in args.lang))
    rows = []
    print(f"{'dump':<38}{'lang':>5} {'splitter':<26}{'links':>8}{'bad':>5}{'wlp claims':>11}"
          f"{'bad':>5}{'>400ch':>8}  worst leak (task side)")
    for path in paths:
        row = measure(path, langs.get(os.path.basename(path)))
        rows.append(row)
        task_side, share = row["worst_leak"]
        print(f"{row['dump'][:37]:<38}{row['lang']:>5} {row['splitter'][:25]:<26}{row['links']:>8}"
              f"{row['misplaced_links']:>5}{row['wlp_claims']:>11}"
              f"{row['wlp_claims_without_anchor']:>5}{row['over_400_chars']:>8.2%}  "
              f"{share:.2%} ({task_side})", flush=True)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1, ensure_ascii=False)
    sys.exit(0)


if __name__ == "__main__":
    main()
