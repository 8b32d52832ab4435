"""The BM25 baseline (bm25s).

What is indexed and how, all settable (`wikipairs reqa eval --model bm25 ...`):

- text (`--bm25-text`): "both" (default): the candidate's sentence followed by its passage (so the
  sentence's words count twice, which is what makes sentences of one passage differ);
  "sentence": the sentence alone; "passage": the passage alone (every sentence of a passage then
  gets the same score, and ties are averaged: see metrics).
- analysis (`--analyzer`): the language's (wikipairs.text.analysis.Analyzer): words with their
  combining marks, Han/kana/Hangul as character unigrams + bigrams, Thai words by PyThaiNLP,
  the language's bm25s stopword list where there is one and its Snowball stemmer (PyStemmer)
  where there is one, never English rules on another language. The language is the build's
  (each candidate's and question's `lang` in a multilingual pool); `--analyzer en` forces one
  language's rules, `--analyzer none` words alone; `--stemmer off` drops stemming.
  Stopwords are off by default (`--stopwords on`: the language's list where one exists):
  removing them lowered R@1 in three of the four languages with a list (SQuAD dev English
  69.62 -> 68.90, XQuAD Spanish 73.84 -> 72.74, Russian 73.86 -> 73.02; Turkish 69.09 ->
  69.85).
- scoring: bm25s's "lucene" variant, k1 = 1.2 (`--k1`; bm25s's own default is 1.5), b = 0.75
  (`--b`). Questions are tokenized the same way; words not in the index are dropped.

Scores are exact for every (question, candidate), computed a chunk of questions at a time.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict, dataclass

import numpy as np

from wikipairs.text.analysis import Analyzer

from .data import ReqaError

BM25_TEXTS = ("both", "sentence", "passage")


@dataclass
class BM25Config:
    text: str = "both"
    k1: float = 1.2
    b: float = 0.75
    stemmer: bool = True
    stopwords: bool = False  # the language's list, where one exists (see the module doc)
    analyzer: str = "auto"  # "auto" (each text's language), "none", or a language code
    method: str = "lucene"


def _bm25s():
    try:
        import bm25s
    except ImportError:
        raise ReqaError("--model bm25 needs the bm25s package: pip install 'bm25s>=0.2,<0.4' "
                        "PyStemmer") from None
    return bm25s


def candidate_texts(candidates: dict, text: str) -> list[str]:
    if text == "sentence":
        return list(candidates["sentence"])
    if text == "passage":
        return list(candidates["passage"])
    if text == "both":
        return [f"{s}\n{p}" for s, p in zip(candidates["sentence"], candidates["passage"])]
    raise ReqaError(f"unknown BM25 text {text!r} (expected one of {', '.join(BM25_TEXTS)})")


class BM25Scorer:
    """A bm25s index over the candidates; `scores(questions, langs)` gives float32
    [n, candidates]. Each text is analyzed in its language: the candidates' `lang` column
    (default: `lang`), the questions' `langs` (default: `lang`)."""

    def __init__(self, candidates: dict, config: BM25Config | None = None, lang: str = "en"):
        self.config = config = config or BM25Config()
        if config.text not in BM25_TEXTS:
            raise ReqaError(f"unknown BM25 text {config.text!r} (expected one of "
                            f"{', '.join(BM25_TEXTS)})")
        if not Analyzer.valid_spec(config.analyzer):
            raise ReqaError(f"--analyzer {config.analyzer}: expected auto, none or a language "
                            f"code (en, es, hi, zh...)")
        bm25s = _bm25s()
        self.lang = lang
        self._analyzers: dict[str, Analyzer] = {}
        n = len(candidates["sentence"])
        langs = candidates.get("lang") or [lang] * n
        self.num_candidates = n
        if not n:
            raise ReqaError("no candidates to index")
        passages: dict[tuple[str, str], list[str]] = {}  # a passage is analyzed once

        def passage_tokens(text: str, text_lang: str) -> list[str]:
            key = (text, text_lang)
            if key not in passages:
                passages[key] = self.analyzer(text_lang).tokens(text)
            return passages[key]

        corpus = []
        for sentence, passage, text_lang in zip(candidates["sentence"], candidates["passage"],
                                                langs):
            tokens = []
            if config.text in ("both", "sentence"):
                tokens = self.analyzer(text_lang).tokens(sentence)
            if config.text in ("both", "passage"):
                tokens = tokens + passage_tokens(passage, text_lang)
            corpus.append(tokens)
        self.retriever = bm25s.BM25(k1=config.k1, b=config.b, method=config.method)
        self.retriever.index(corpus, show_progress=False)

    def analyzer(self, lang: str) -> Analyzer:
        lang = lang or self.lang
        if lang not in self._analyzers:
            self._analyzers[lang] = Analyzer.named(
                self.config.analyzer, lang, stem=self.config.stemmer, stop=self.config.stopwords)
        return self._analyzers[lang]

    def scores(self, questions: list[str], langs: list[str] | None = None) -> np.ndarray:
        out = np.zeros((len(questions), self.num_candidates), dtype=np.float32)
        langs = langs or [self.lang] * len(questions)
        for i, (question, lang) in enumerate(zip(questions, langs)):
            tokens = [t for t in self.analyzer(lang).tokens(question) if t]
            if tokens and self.retriever.get_tokens_ids(tokens):
                out[i] = self.retriever.get_scores(tokens)
        return out

    def score_chunks(self, questions: list[str], chunk_size: int = 1024,
                     langs: list[str] | None = None) -> Iterator[tuple[int, np.ndarray]]:
        for start in range(0, len(questions), chunk_size):
            yield start, self.scores(questions[start:start + chunk_size],
                                     langs[start:start + chunk_size] if langs else None)

    def describe(self) -> dict:
        """The settings and, per language seen, its analysis; "stemmer"/"stopwords" are the
        first language's (the only one in a one-language build)."""
        analysis = {lang: a.describe() for lang, a in sorted(self._analyzers.items())}
        first = analysis.get(self.lang) or next(iter(analysis.values()))
        return dict(asdict(self.config), stemmer=first["stemmer"],
                    stopwords=first["stopwords"], analysis=analysis,
                    library="bm25s " + getattr(_bm25s(), "__version__", "?"))


__all__ = ["BM25_TEXTS", "BM25Config", "BM25Scorer", "candidate_texts"]
