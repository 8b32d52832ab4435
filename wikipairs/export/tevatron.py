"""--to tevatron: Tevatron's training layout, per task OUT/<task>/

- train.jsonl: {"query_id", "query", "positive_passages": [{"docid", "title", "text"}],
  "negative_passages": []}, one line per pair (query_id = pair_id; no hard negatives: train
  with in-batch negatives);
- corpus.jsonl: {"docid", "title", "text"}, each document once (by doc_id)."""
from __future__ import annotations

import os

from .output import JsonLines
from .rows import iter_tables

COLUMNS = ["query_id", "query", "doc_id", "doc_title", "doc_text"]


def write_task(folder: str, task: str, dest: str, **_) -> dict:
    seen: set[str] = set()
    with JsonLines(os.path.join(dest, "train.jsonl")) as train, \
            JsonLines(os.path.join(dest, "corpus.jsonl")) as corpus:
        for table in iter_tables(folder, task, COLUMNS):
            for qid, query, docid, title, text in zip(*(table.column(c).to_pylist()
                                                         for c in COLUMNS)):
                passage = {"docid": docid, "title": title, "text": text}
                train.write({"query_id": qid, "query": query, "positive_passages": [passage],
                             "negative_passages": []})
                if docid not in seen:
                    seen.add(docid)
                    corpus.write(passage)
    return {"pairs": train.count, "documents": corpus.count}
