"""The BM25 baseline (bm25s).

What is indexed and how, all settable (`wikipairs reqa eval --model bm25 ...`):

- text (`--bm25-text`): "both" (default): the candidate's sentence followed by its passage (so the
  sentence's words count twice, which is what makes sentences of one passage differ);
  "sentence": the sentence alone; "passage": the passage alone (every sentence of a passage then
  gets the same score, and ties are averaged: see metrics).
- tokens: bm25s's tokenizer (lower-cased, the regex `(?u)\\b\\w\\w+\\b`: words of two or more
  word characters), bm25s's English stopword list, and the Snowball English stemmer from
  PyStemmer when it is installed and `--stemmer on` (default); with `--stemmer off` or without
  PyStemmer, no stemming (the result records which).
- scoring: bm25s's "lucene" variant, k1 = 1.2 (`--k1`; bm25s's own default is 1.5), b = 0.75
  (`--b`). Questions are tokenized the same way; words not in the index are dropped.

Scores are exact for every (question, candidate), computed a chunk of questions at a time.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np

from .data import ReqaError

BM25_TEXTS = ("both", "sentence", "passage")


@dataclass
class BM25Config:
    text: str = "both"
    k1: float = 1.2
    b: float = 0.75
    stemmer: bool = True
    stopwords: str = "en"
    method: str = "lucene"


def _bm25s():
    try:
        import bm25s
    except ImportError:
        raise ReqaError("--model bm25 needs the bm25s package: pip install 'bm25s>=0.2,<0.4' "
                        "PyStemmer") from None
    return bm25s


def _stemmer(wanted: bool):
    if not wanted:
        return None, "none"
    try:
        import Stemmer
    except ImportError:
        return None, "none (PyStemmer not installed)"
    return Stemmer.Stemmer("english"), "pystemmer:english"


def candidate_texts(candidates: dict, text: str) -> list[str]:
    if text == "sentence":
        return list(candidates["sentence"])
    if text == "passage":
        return list(candidates["passage"])
    if text == "both":
        return [f"{s}\n{p}" for s, p in zip(candidates["sentence"], candidates["passage"])]
    raise ReqaError(f"unknown BM25 text {text!r} (expected one of {', '.join(BM25_TEXTS)})")


class BM25Scorer:
    """A bm25s index over the candidates; `scores(questions)` gives float32 [n, candidates]."""

    def __init__(self, candidates: dict, config: BM25Config | None = None):
        self.config = config = config or BM25Config()
        bm25s = _bm25s()
        self._tokenize = bm25s.tokenize
        self.stemmer, self.stemmer_name = _stemmer(config.stemmer)
        texts = candidate_texts(candidates, config.text)
        self.num_candidates = len(texts)
        if not texts:
            raise ReqaError("no candidates to index")
        self.retriever = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
        self.retriever.index(self.tokens(texts), show_progress=False)

    def tokens(self, texts: list[str]) -> list[list[str]]:
        return self._tokenize(texts, stopwords=self.config.stopwords, stemmer=self.stemmer,
                              return_ids=False, show_progress=False)

    def scores(self, questions: list[str]) -> np.ndarray:
        out = np.zeros((len(questions), self.num_candidates), dtype=np.float32)
        for i, tokens in enumerate(self.tokens(list(questions))):
            tokens = [t for t in tokens if t]
            if tokens and self.retriever.get_tokens_ids(tokens):
                out[i] = self.retriever.get_scores(tokens)
        return out

    def score_chunks(self, questions: list[str], chunk_size: int = 1024
                     ) -> Iterator[tuple[int, np.ndarray]]:
        for start in range(0, len(questions), chunk_size):
            yield start, self.scores(questions[start:start + chunk_size])

    def describe(self) -> dict:
        return dict(asdict(self.config), stemmer=self.stemmer_name, tokenizer="bm25s",
                    library="bm25s " + getattr(_bm25s(), "__version__", "?"))


__all__ = ["BM25_TEXTS", "BM25Config", "BM25Scorer", "candidate_texts"]
