"""--to beir: the BEIR layout, per task OUT/<task>/

- corpus.jsonl: {"_id", "title", "text"}, each document once (by doc_id);
- queries.jsonl: {"_id", "text"}, one query per pair (_id = pair_id);
- qrels/train.tsv: query-id, corpus-id, score (1), with a header line, one line per pair."""
from __future__ import annotations

import os

from .output import JsonLines
from .rows import iter_tables

COLUMNS = ["query_id", "query", "doc_id", "doc_title", "doc_text"]


def write_task(folder: str, task: str, dest: str, **_) -> dict:
    seen_docs: set[str] = set()
    seen_queries: set[str] = set()
    os.makedirs(os.path.join(dest, "qrels"))
    with JsonLines(os.path.join(dest, "corpus.jsonl")) as corpus, \
            JsonLines(os.path.join(dest, "queries.jsonl")) as queries, \
            open(os.path.join(dest, "qrels", "train.tsv"), "w", encoding="utf-8") as qrels:
        qrels.write("query-id\tcorpus-id\tscore\n")
        lines = 0
        for table in iter_tables(folder, task, COLUMNS):
            for qid, query, docid, title, text in zip(*(table.column(c).to_pylist()
                                                         for c in COLUMNS)):
                if qid not in seen_queries:
                    seen_queries.add(qid)
                    queries.write({"_id": qid, "text": query})
                if docid not in seen_docs:
                    seen_docs.add(docid)
                    corpus.write({"_id": docid, "title": title, "text": text})
                qrels.write(f"{qid}\t{docid}\t1\n")
                lines += 1
    return {"pairs": lines, "queries": queries.count, "documents": corpus.count}
