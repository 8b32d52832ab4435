"""--to sentence-transformers: OUT/<task>/, a `datasets.Dataset` (save_to_disk) with exactly the
columns `anchor` (the query) and `positive` (the document), which SentenceTransformerTrainer
takes as it is, e.g. with MultipleNegativesRankingLoss (in-batch negatives; the build has no
hard negatives, so there is no `negative` column).

The document keeps the framing the build and the trainer give it: `doc_ids` are
`[CLS] title [SEP] passage [SEP]`, so `positive` is "title [SEP] passage" (`frame_document`),
which a BERT WordPiece tokenizer encodes to exactly that layout ([SEP] is its special token).
For a tokenizer with another separator, pass it (`--title-sep "</s>"`), or "" for a space."""
from __future__ import annotations

import pyarrow as pa

from . import TITLE_SEP
from .hf import import_datasets, save_dataset
from .rows import iter_tables

SCHEMA = pa.schema([("anchor", pa.string()), ("positive", pa.string())])


def frame_document(title: str, text: str, sep: str = TITLE_SEP) -> str:
    """The document as one string: "title [SEP] passage" (the build's doc_ids layout)."""
    return f"{title} {sep} {text}" if sep else f"{title} {text}"


def _frame(table: pa.Table, sep: str) -> pa.Table:
    docs = [frame_document(t, x, sep) for t, x in zip(table.column("doc_title").to_pylist(),
                                                       table.column("doc_text").to_pylist())]
    return pa.Table.from_arrays([table.column("query").cast(pa.string()),
                                 pa.array(docs, pa.string())], schema=SCHEMA)


def write_task(folder: str, task: str, dest: str, title_sep: str = TITLE_SEP, **_) -> dict:
    import_datasets("sentence-transformers")
    tables = (_frame(t, title_sep) for t in iter_tables(folder, task,
                                                         ["query", "doc_title", "doc_text"]))
    return {"pairs": save_dataset(tables, SCHEMA, dest, "sentence-transformers")}
