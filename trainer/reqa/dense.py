"""Two-tower retrieval with a SavedModel, and exact top-k by chunked matrix products.

The SavedModel (what trainer/export.py writes; ReQA's interface) has two signatures:

- `query_encoder`: input `input` (tf.string [n]) -> `outputs` (float [n, d]);
- `response_encoder`: inputs `input` (the candidate sentence, tf.string [n]) and `context`
  (its passage, tf.string [n]) -> `outputs` (float [n, d]).

Scores are inner products of the outputs (normalize inside the model for cosine). Candidates and
questions are encoded in batches (progress on stderr unless quiet); scores come a chunk of
questions at a time (numpy matmul), so memory is O(chunk x candidates). `top_k` is exact; with
backend="faiss" (only if faiss is installed) it uses an exact flat inner-product index instead.
"""
from __future__ import annotations

import os
from collections.abc import Iterator

import numpy as np

from wikipairs.progress import InPlaceLineWriter, ProgressLines

from .data import ReqaError

QUERY_SIGNATURE = "query_encoder"
RESPONSE_SIGNATURE = "response_encoder"


class _EncodingProgress:
    """Encoding progress on stderr, "reqa: <label>: done/total (rate/s)", in place on a terminal
    (the rule of when: wikipairs.progress; a log file gets the final line only)."""

    def __init__(self, label: str, total: int, quiet: bool, every: float = 0.5):
        self.label, self.total = label, total
        self.lines = ProgressLines(InPlaceLineWriter(), every, quiet)

    def update(self, done: int, final: bool = False) -> None:
        self.lines.report(done, lambda rate: (
            f"reqa: {self.label}: {done:,}/{self.total:,} ({rate:,.0f}/s)"), final)


class SavedModelEncoder:
    """The query and response encoders of a SavedModel directory."""

    def __init__(self, path: str):
        if not os.path.isdir(path):
            raise ReqaError(f"{path}: no such SavedModel folder (or use --model bm25)")
        if not os.path.isfile(os.path.join(path, "saved_model.pb")):
            raise ReqaError(f"{path}: not a SavedModel (no saved_model.pb)")
        import tensorflow as tf
        try:  # registers the SentencePiece ops of exports that tokenize in their graph
            import tensorflow_text  # noqa: F401
        except ImportError:
            pass

        self._tf = tf
        try:
            self.model = tf.saved_model.load(path)
        except Exception as e:  # TensorFlow raises many kinds
            message = str(e).strip().splitlines()
            raise ReqaError(f"{path}: cannot load the SavedModel ({type(e).__name__}: "
                            f"{message[0] if message else ''})") from None
        signatures = getattr(self.model, "signatures", {})
        missing = [s for s in (QUERY_SIGNATURE, RESPONSE_SIGNATURE) if s not in signatures]
        if missing:
            raise ReqaError(f"{path}: the SavedModel lacks the signature(s) {', '.join(missing)} "
                            f"(found: {', '.join(sorted(signatures)) or 'none'})")
        self.query_fn = signatures[QUERY_SIGNATURE]
        self.response_fn = signatures[RESPONSE_SIGNATURE]
        self.path = path

    def _outputs(self, result, signature: str) -> np.ndarray:
        if "outputs" not in result:
            raise ReqaError(f"{self.path}: signature {signature} returns "
                            f"{', '.join(sorted(result))}, expected 'outputs'")
        out = np.asarray(result["outputs"], dtype=np.float32)
        if out.ndim != 2:
            raise ReqaError(f"{self.path}: signature {signature} outputs have shape {out.shape}, "
                            f"expected [batch, dim]")
        return out

    def encode_queries(self, texts: list[str], batch_size: int = 256, quiet: bool = True
                       ) -> np.ndarray:
        tf, parts = self._tf, []
        progress = _EncodingProgress("questions encoded", len(texts), quiet)
        for i in range(0, len(texts), batch_size):
            batch = tf.constant(list(texts[i:i + batch_size]), dtype=tf.string)
            parts.append(self._outputs(self.query_fn(input=batch), QUERY_SIGNATURE))
            progress.update(min(i + batch_size, len(texts)))
        progress.update(len(texts), final=True)
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)

    def encode_candidates(self, sentences: list[str], passages: list[str], batch_size: int = 128,
                          quiet: bool = True) -> np.ndarray:
        tf, parts = self._tf, []
        progress = _EncodingProgress("candidates encoded", len(sentences), quiet)
        for i in range(0, len(sentences), batch_size):
            s = tf.constant(list(sentences[i:i + batch_size]), dtype=tf.string)
            c = tf.constant(list(passages[i:i + batch_size]), dtype=tf.string)
            parts.append(self._outputs(self.response_fn(input=s, context=c), RESPONSE_SIGNATURE))
            progress.update(min(i + batch_size, len(sentences)))
        progress.update(len(sentences), final=True)
        return np.concatenate(parts) if parts else np.zeros((0, 0), np.float32)


def score_chunks(queries: np.ndarray, candidates: np.ndarray, chunk_size: int = 1024
                 ) -> Iterator[tuple[int, np.ndarray]]:
    """(start, queries[start:start+chunk] @ candidates.T) for every chunk of query rows."""
    queries, candidates = np.asarray(queries, np.float32), np.asarray(candidates, np.float32)
    if queries.shape[1:] != candidates.shape[1:]:
        raise ReqaError(f"query and candidate encodings differ in size: {queries.shape[1:]} vs "
                        f"{candidates.shape[1:]}")
    for start in range(0, len(queries), chunk_size):
        yield start, queries[start:start + chunk_size] @ candidates.T


def top_k(queries: np.ndarray, candidates: np.ndarray, k: int = 100, chunk_size: int = 1024,
          backend: str = "numpy") -> tuple[np.ndarray, np.ndarray]:
    """Exact top-k by inner product: (indices int64 [n, k], scores float32 [n, k]), best first,
    ties broken by the lower candidate index. k is capped at the number of candidates."""
    queries, candidates = np.asarray(queries, np.float32), np.asarray(candidates, np.float32)
    if k < 1:
        raise ReqaError(f"top-k needs k >= 1, got {k}")
    k = min(k, len(candidates))
    if backend == "faiss":
        try:
            import faiss
        except ImportError:
            raise ReqaError("backend faiss: the faiss package is not installed") from None
        index = faiss.IndexFlatIP(candidates.shape[1])
        index.add(np.ascontiguousarray(candidates))
        scores, indices = index.search(np.ascontiguousarray(queries), k)
        return indices.astype(np.int64), scores.astype(np.float32)
    if backend != "numpy":
        raise ReqaError(f"unknown top-k backend {backend!r} (numpy or faiss)")
    all_indices, all_scores = [], []
    for _, scores in score_chunks(queries, candidates, chunk_size):
        # the k-th best score of each row, then every candidate at least that good (ties at the
        # boundary included), ordered by score then index, cut to k
        kth = -np.partition(-scores, k - 1, axis=1)[:, k - 1]
        indices = np.empty((len(scores), k), np.int64)
        for row, (values, bound) in enumerate(zip(scores, kth)):
            pool = np.flatnonzero(values >= bound)
            indices[row] = pool[np.lexsort((pool, -values[pool]))][:k]
        all_indices.append(indices)
        all_scores.append(np.take_along_axis(scores, indices, axis=1))
    if not all_indices:
        return np.zeros((0, k), np.int64), np.zeros((0, k), np.float32)
    return np.concatenate(all_indices).astype(np.int64), np.concatenate(all_scores)


__all__ = ["QUERY_SIGNATURE", "RESPONSE_SIGNATURE", "SavedModelEncoder", "score_chunks", "top_k"]
