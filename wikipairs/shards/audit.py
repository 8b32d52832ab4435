"""Contamination of a build by an evaluation set (issue 20): `wikipairs audit DIR --against FILE`
and `wikipairs build --exclude FILE`.

An eval set is read as passages (title, text) and answer sentences: SQuAD/XQuAD JSON (contexts;
the sentence of each answer's `answer_start`), a BEIR folder (corpus.jsonl: title and text) or
jsonl with a `text` field (and optionally `title`). Texts are compared by 13-token n-grams, as the
GPT-3 paper and datatrove decontaminate: lower-cased tokens (below), each hashed to 64 bits, an
n-gram a polynomial of its 13 token hashes mod 2^64 -- NumPy arrays of ints throughout, never a
Python set of strings; a whole Arrow batch of texts is tokenized, hashed and cut into n-grams by
vectorized NumPy steps over its UTF-8 bytes.
Answer sentences are compared with pair queries by `pairs.heldout.query_key` (case folded,
whitespace collapsed); answer sentences are cut at `.`, `!`, `?` followed by a space.
"""
from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import WikipairsError
from ..pairs.heldout import in_sorted, query_key
from .layout import find_task_shards

NGRAM = 13
_MULT = np.uint64(0x100000001B3)  # FNV prime: n-gram = sum token_hash[j] * M^(12-j) mod 2^64
_SENTENCE_END = re.compile(r"(?<=[.!?।։۔])[\"')\]]*\s+|(?<=[。！？])")


class AuditError(WikipairsError):
    pass


# ---- hashed n-grams ----------------------------------------------------------------------------
#
# Tokens are found and hashed on the UTF-8 bytes of a whole Arrow batch at once, in NumPy: after
# Arrow's utf8_lower, a token is a run of ASCII letters and digits or of non-ASCII characters
# (other scripts' letters and marks), except the punctuation blocks (_punctuation_bytes), and each
# character of the scripts written without spaces is a token alone (_solo_bytes); its hash is
# a polynomial of its bytes computed from prefix sums (B odd, so invertible mod 2^64), mixed by
# splitmix64. One code path for a batch of pairs and for one pair, so `audit` and `--exclude`
# always agree.

_B = np.uint64(0x9E3779B97F4A7C15 | 1)
_B_INV = np.uint64(pow(int(_B), -1, 1 << 64))
_WORD = np.zeros(256, bool)
_WORD[[ord(c) for c in "abcdefghijklmnopqrstuvwxyz0123456789"]] = True
_WORD[0x80:] = True
_POWERS = {}  # base -> its powers so far (grown as batches need)


def _punctuation_bytes(data: np.ndarray) -> np.ndarray:
    """bool [len(data)]: bytes of characters that separate tokens although not ASCII: General
    Punctuation U+2000-U+207F (dashes, quotes, ellipsis, spaces: E2 80/81 xx), Latin-1's
    U+00A0-U+00BF (no-break space, « » · ¿ ¡: C2 A0-BF), CJK Symbols and Punctuation
    U+3000-U+303F (E3 80 xx) and fullwidth ASCII punctuation U+FF01-U+FF0F, U+FF1A-U+FF20
    (EF BC 81-8F, 9A-A0)."""
    out = np.zeros(len(data), bool)
    if len(data) < 2:
        return out
    a, b = data[:-1], data[1:]
    two = (a == 0xC2) & (b >= 0xA0) & (b <= 0xBF)
    three = ((a == 0xE2) & ((b == 0x80) | (b == 0x81))) | ((a == 0xE3) & (b == 0x80))
    if len(data) >= 3:
        c = data[2:]
        full = (a[:-1] == 0xEF) & (b[:-1] == 0xBC) & (((c >= 0x81) & (c <= 0x8F))
                                                    | ((c >= 0x9A) & (c <= 0xA0)))
        three[:-1] |= full
    for shift, starts in ((2, two), (3, three)):
        idx = np.flatnonzero(starts)
        for k in range(shift):
            out[np.minimum(idx + k, len(data) - 1)] = True
    return out


# Scripts written without spaces between words: Han (with Extension A), kana, Thai, Lao, Myanmar,
# Khmer. A run of them is a clause or a whole sentence, so a 13-gram of runs would almost never
# exist (895 of the jawiki sample's 3,272 BFS documents had none): each character is a token.
_SOLO_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),
                (0x0E00, 0x0EFF), (0x1000, 0x109F), (0x1780, 0x17FF))


def _solo_bytes(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, last): bool [len(data)], the first and the last byte of each character of
    _SOLO_RANGES (all three bytes long in UTF-8)."""
    first = np.zeros(len(data), bool)
    if len(data) < 3:
        return first, first.copy()
    lead = np.flatnonzero((data[:-2] & 0xF0) == 0xE0)
    cp = ((data[lead].astype(np.int64) & 0x0F) << 12) | ((data[lead + 1].astype(np.int64) & 0x3F) << 6) \
        | (data[lead + 2].astype(np.int64) & 0x3F)
    solo = np.zeros(len(lead), bool)
    for lo, hi in _SOLO_RANGES:
        solo |= (cp >= lo) & (cp <= hi)
    first[lead[solo]] = True
    last = np.zeros(len(data), bool)
    last[lead[solo] + 2] = True
    return first, last


def _mix(h: np.ndarray) -> np.ndarray:
    """splitmix64's finalizer, vectorized (uint64, wrapping)."""
    with np.errstate(over="ignore"):
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


def _powers(base: np.uint64, n: int) -> np.ndarray:
    """base^0 .. base^(n-1) mod 2^64, from a table kept between calls."""
    have = _POWERS.get(int(base))
    if have is None or len(have) < n:
        size = max(n, 2 * len(have) if have is not None else 1 << 20)
        out = np.full(size, base, dtype=np.uint64)
        out[0] = 1
        with np.errstate(over="ignore"):
            have = _POWERS[int(base)] = np.cumprod(out, dtype=np.uint64)
    return have[:n]


def _tokens(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """(token hash uint64, row) of every token of a string array, in order."""
    low = pc.utf8_lower(arr.fill_null(""))
    if isinstance(low, pa.ChunkedArray):
        low = low.combine_chunks()
    low = low.cast(pa.large_string())
    _, offsets_buf, data_buf = low.buffers()
    offsets = np.frombuffer(offsets_buf, dtype=np.int64)[low.offset:low.offset + len(low) + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(data_buf, dtype=np.uint8)[start:end] if data_buf is not None \
        else np.zeros(0, np.uint8)
    offsets = offsets - start
    word = _WORD[data] & ~_punctuation_bytes(data)
    prev = np.empty_like(word)
    prev[1:] = word[:-1]
    if len(prev):
        prev[0] = False
    nxt = np.empty_like(word)
    nxt[:-1] = word[1:]
    if len(nxt):
        nxt[-1] = False
    first, last = _solo_bytes(data)
    if first.any():  # a character of a script without spaces stands alone
        prev[first] = False
        nxt[last] = False
        prev[1:][last[:-1]] = False
        nxt[:-1][first[1:]] = False
    inner = offsets[1:-1]
    inner = inner[(inner > 0) & (inner < len(data))]
    prev[inner] = False  # texts never join
    nxt[inner - 1] = False
    starts = np.flatnonzero(word & ~prev)
    ends = np.flatnonzero(word & ~nxt) + 1
    if not len(starts):
        return np.zeros(0, np.uint64), np.zeros(0, np.int64)
    n = len(data)
    with np.errstate(over="ignore"):
        inv = _powers(_B_INV, n + 1)
        prefix = np.zeros(n + 1, dtype=np.uint64)
        np.cumsum(data.astype(np.uint64) * inv[:n], dtype=np.uint64, out=prefix[1:])
        # sum_{j=s}^{e-1} b_j B^(e-1-j) = B^(e-1) * (prefix[e] - prefix[s])
        pw = _powers(_B, n + 1)
        h = pw[ends - 1] * (prefix[ends] - prefix[starts]) + (ends - starts).astype(np.uint64)
    rows = np.searchsorted(offsets, starts, side="right") - 1
    return _mix(h), rows


def _rolling(token: np.ndarray, rows: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    m = len(token) - n + 1
    if m <= 0:
        return np.zeros(0, np.int64), np.zeros(0, np.uint64)
    h = token[:m].copy()
    with np.errstate(over="ignore"):
        for j in range(1, n):
            h *= _MULT
            h += token[j:j + m]
    same = rows[:m] == rows[n - 1:]  # n-grams inside one text only
    return rows[:m][same].astype(np.int64), h[same]


def ngram_hashes(texts, n: int = NGRAM) -> tuple[np.ndarray, np.ndarray]:
    """(row, hash): the hashed n-grams of each text (uint64), with the index of its text. A text
    of fewer than n tokens has none."""
    arr = texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else pa.array(texts, pa.string())
    token, rows = _tokens(arr)
    return _rolling(token, rows, n)


def text_ngram_hashes(texts: list[str], n: int = NGRAM) -> np.ndarray:
    """The hashed n-grams of a few texts (uint64): what `build --exclude` checks per pair."""
    return ngram_hashes(texts, n)[1]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


# ---- eval sets ---------------------------------------------------------------------------------

@dataclass
class EvalSet:
    name: str
    titles: list[str] = field(default_factory=list)  # of each passage ("" where none)
    passages: list[str] = field(default_factory=list)
    answer_sentences: list[tuple[int, str]] = field(default_factory=list)  # (passage, sentence)

    def ngrams(self) -> tuple[np.ndarray, np.ndarray]:
        """(hashes sorted, their passage indexes) of every passage."""
        rows, hashes = ngram_hashes(self.passages)
        order = np.argsort(hashes, kind="stable")
        return hashes[order], rows[order]


def _answer_sentence(context: str, start: int) -> str | None:
    pos = 0
    for sentence in sentences(context):
        at = context.find(sentence, pos)
        if at < 0:
            continue
        if at <= start < at + len(sentence):
            return sentence
        pos = at + len(sentence)
    return None


def load_eval_set(path: str) -> EvalSet:
    """SQuAD/XQuAD JSON, a BEIR folder (corpus.jsonl) or jsonl with a `text` field."""
    out = EvalSet(os.path.basename(path.rstrip("/")))
    if not os.path.exists(path):
        raise AuditError(f"{path}: no such file or folder")
    if os.path.isdir(path):
        corpus = os.path.join(path, "corpus.jsonl")
        if not os.path.exists(corpus):
            raise AuditError(f"{path}: a BEIR folder holds corpus.jsonl; there is none")
        path = corpus
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(1 << 16).lstrip()
            f.seek(0)
            if head.startswith("{") and '"data"' in head and not path.endswith(".jsonl"):
                data = json.load(f)["data"]
                for article in data:
                    title = article.get("title", "").replace("_", " ")
                    for para in article.get("paragraphs", []):
                        index = len(out.passages)
                        out.titles.append(title)
                        out.passages.append(para["context"])
                        seen = set()
                        for qa in para.get("qas", []):
                            for answer in qa.get("answers", []):
                                s = _answer_sentence(para["context"], answer["answer_start"])
                                if s is not None and s not in seen:
                                    seen.add(s)
                                    out.answer_sentences.append((index, s))
                return out
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                row = json.loads(line)
                if "text" not in row:
                    raise AuditError(f"{path}:{number}: no `text` field")
                out.titles.append(str(row.get("title", "")).replace("_", " "))
                out.passages.append(row["text"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise AuditError(f"{path}: not a SQuAD/XQuAD JSON file, a BEIR folder or jsonl with a "
                         f"`text` field ({type(e).__name__}: {e})") from None
    return out


# ---- the audit ---------------------------------------------------------------------------------

_FILTER_BITS = 24


def _prefilter(sorted_keys: np.ndarray) -> np.ndarray:
    table = np.zeros(1 << _FILTER_BITS, bool)
    table[(sorted_keys >> np.uint64(64 - _FILTER_BITS)).astype(np.int64)] = True
    return table


def _contains(sorted_keys: np.ndarray, keys: np.ndarray, table: np.ndarray | None = None
              ) -> np.ndarray:
    """bool [len(keys)]: which keys are in `sorted_keys`; with `table` (_prefilter), only the
    few keys whose top 24 bits it has are looked up (a gather instead of a binary search)."""
    if table is None:
        return in_sorted(sorted_keys, keys)
    out = np.zeros(len(keys), bool)
    maybe = np.flatnonzero(table[(keys >> np.uint64(64 - _FILTER_BITS)).astype(np.int64)])
    out[maybe] = in_sorted(sorted_keys, keys[maybe])
    return out


def audit(folder: str, eval_set: EvalSet, tasks=None, batch_rows: int = 8192) -> dict:
    """Per task: eval passages sharing an n-gram with a pair's query or document
    (`passages_overlapping`), answer sentences that are pair queries, and the titles involved."""
    hashes, owners = eval_set.ngrams()
    unique = np.unique(hashes)
    table = _prefilter(unique)
    answer_keys = {}
    for index, sentence in eval_set.answer_sentences:
        answer_keys.setdefault(query_key(sentence), index)
    shards = find_task_shards(folder, "parquet")
    if not shards:
        raise AuditError(f"{folder}: no Parquet pair shards (DIR/parquet/<task>/)")
    result = {"against": eval_set.name, "passages": len(eval_set.passages),
              "answer_sentences": len(eval_set.answer_sentences), "ngram": NGRAM, "tasks": {}}
    for task, files in shards.items():
        if tasks and task not in tasks:
            continue
        hit_passages, hit_answers = set(), set()
        pages, pairs_overlapping, pairs, split_hits = Counter(), 0, 0, Counter()
        seen_docs: set[str] = set()
        for path in files:
            pf = pq.ParquetFile(path)
            names = pf.schema_arrow.names
            cols = [c for c in ("query", "doc_text", "doc_id", "query_title", "doc_title",
                                "split") if c in names]
            for batch in pf.iter_batches(batch_size=batch_rows, columns=cols):
                n = batch.num_rows
                pairs += n
                queries = batch.column("query")
                docs = batch.column("doc_text")
                if "doc_id" in names:  # each document once (remembered up to 2M documents)
                    if len(seen_docs) > 2_000_000:
                        seen_docs.clear()
                    ids = batch.column("doc_id").to_pylist()
                    fresh = [i for i, d in enumerate(ids) if d not in seen_docs]
                    seen_docs.update(ids)
                else:
                    fresh = list(range(n))
                rows_q, hq = ngram_hashes(queries)
                doc_idx = np.array(fresh, dtype=np.int64)
                rows_d, hd = ngram_hashes(docs.take(pa.array(doc_idx, pa.int64())) if fresh
                                          else pa.array([], pa.string()))
                rows_d = doc_idx[rows_d] if len(rows_d) else rows_d
                rows = np.concatenate([rows_q, rows_d])
                h = np.concatenate([hq, hd])
                hit = _contains(unique, h, table)
                row_hits = np.unique(rows[hit])
                if len(row_hits):
                    lo = np.searchsorted(hashes, h[hit], "left")
                    hi = np.searchsorted(hashes, h[hit], "right")
                    for a, b in zip(lo, hi):
                        hit_passages.update(owners[a:b].tolist())
                    qt = batch.column("query_title").to_pylist()
                    dt = batch.column("doc_title").to_pylist()
                    sp = batch.column("split").to_pylist() if "split" in names else [None] * n
                    for r in row_hits.tolist():
                        pairs_overlapping += 1
                        pages[qt[r]] += 1
                        if dt[r] != qt[r]:
                            pages[dt[r]] += 1
                        split_hits[sp[r] or "unknown"] += 1
                if answer_keys:
                    for q in queries.to_pylist():
                        index = answer_keys.get(query_key(q))
                        if index is not None:
                            hit_answers.add(q)
        eval_titles = Counter(eval_set.titles[i] for i in hit_passages)
        result["tasks"][task] = {
            "pairs": pairs, "passages_overlapping": len(hit_passages),
            "pairs_overlapping": pairs_overlapping,
            "pairs_overlapping_by_split": dict(sorted(split_hits.items())),
            "answer_sentences_as_queries": len(hit_answers),
            "eval_titles": [t for t, _ in eval_titles.most_common() if t],
            "build_titles": [t for t, _ in pages.most_common()]}
    return result


def format_audit(result: dict, top: int = 10) -> str:
    lines = [f"against {result['against']}: {result['passages']:,} passages, "
             f"{result['answer_sentences']:,} answer sentences; {result['ngram']}-token n-grams",
             f"{'task':<6}{'pairs':>12}{'passages_overlapping':>22}{'pairs_overlapping':>19}"
             f"{'answer_sentences_as_queries':>29}"]
    for task, t in result["tasks"].items():
        lines.append(f"{task:<6}{t['pairs']:>12,}{t['passages_overlapping']:>22,}"
                     f"{t['pairs_overlapping']:>19,}{t['answer_sentences_as_queries']:>29,}")
    for task, t in result["tasks"].items():
        if t["eval_titles"]:
            more = len(t["eval_titles"]) - top
            lines.append(f"  {task}: eval titles: " + "; ".join(t["eval_titles"][:top])
                         + (f" (+{more} more)" if more > 0 else ""))
        if t["build_titles"]:
            more = len(t["build_titles"]) - top
            lines.append(f"  {task}: build pages: " + "; ".join(t["build_titles"][:top])
                         + (f" (+{more} more)" if more > 0 else ""))
    return "\n".join(lines)


# ---- build --exclude ---------------------------------------------------------------------------

class Exclusion:
    """What `build --exclude` leaves out: pages whose normalized title is an eval set's title,
    pairs whose query or document shares a 13-token n-gram with an eval passage, and pairs whose
    query is an eval answer sentence (`query_key`; a short one has no n-gram). Small and
    picklable (sorted int arrays and a set of titles), so Beam ships it to every worker."""

    def __init__(self, eval_sets: list[EvalSet], normalize=None):
        hashes = [s.ngrams()[0] for s in eval_sets]
        self.ngrams = np.unique(np.concatenate(hashes)) if hashes else np.zeros(0, np.uint64)
        norm = normalize or (lambda t: t)
        self.titles = {n for s in eval_sets for t in s.titles if t
                       for n in [norm(t)] if n}
        self.answers = np.unique(np.array([query_key(t) for s in eval_sets
                                           for _, t in s.answer_sentences], dtype=np.int64))
        self.names = [s.name for s in eval_sets]

    def page_excluded(self, title: str) -> bool:
        return title in self.titles

    def pair_reason(self, pair) -> str | None:
        """Why `pair` is left out ("ngram" or "answer"), or None."""
        return self.reasons([pair])[0]

    def reasons(self, pairs) -> list[str | None]:
        """`pair_reason` of each pair, the texts of all of them hashed in one batch (a page's
        pairs: the per-call overhead is paid once, not per pair)."""
        if not pairs:
            return []
        texts = [t for pair in pairs for t in (pair.query, pair.doc_text)]
        rows, h = ngram_hashes(texts)
        out: list[str | None] = [None] * len(pairs)
        for i in np.unique(rows[_contains(self.ngrams, h)] // 2).tolist():
            out[i] = "ngram"
        if len(self.answers):
            keys = np.array([query_key(pair.query) for pair in pairs], dtype=np.int64)
            for i in np.flatnonzero(_contains(self.answers, keys)).tolist():
                out[i] = out[i] or "answer"
        return out

    def pair_excluded(self, pair) -> bool:
        return self.pair_reason(pair) is not None

    def summary(self) -> dict:
        return {"files": self.names, "titles": len(self.titles), "ngrams": int(len(self.ngrams)),
                "answer_sentences": int(len(self.answers))}


def load_exclusion(paths: list[str], normalize=None) -> Exclusion:
    return Exclusion([load_eval_set(p) for p in paths], normalize)


__all__ = ["NGRAM", "AuditError", "EvalSet", "Exclusion", "audit", "format_audit",
           "load_eval_set", "load_exclusion", "ngram_hashes", "text_ngram_hashes",
           "sentences"]
