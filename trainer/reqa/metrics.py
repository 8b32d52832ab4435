"""Recall@k and MRR for ReQA, under two named protocols.

- "paper" (Chang et al., Section 4): one query per question row (a SQuAD question id); it is
  answered at rank r if one of its gold (sentence, passage) candidates is at rank r; any other
  candidate, even with the same sentence text, is wrong.
- "reqa" (ReQA's official squad_eval.py): one query per DISTINCT question text (a question asked
  twice, e.g. of two paragraphs or with different answers, counts once, with the union of its
  golds); any candidate whose sentence text equals a gold sentence text is correct.

Ranks are exact, over all candidates (not only a top-k list), with ties counted as ReQA counts
them (scipy's rankdata "average", which squad_eval.py applies to the negated scores): a
candidate with score s has rank #(scores > s) + (#(scores == s) + 1) / 2, and a query's rank is
that of its best-scored correct candidate. So a gold candidate tied with 9 others at the top has
rank 5.5 (in R@10, not in R@5), and a query whose golds all score 0 under BM25 with thousands of
zero scores gets a rank in the thousands. Recall@k is the share of queries with rank <= k; MRR
the mean of 1/rank.

A multilingual pool (candidates and questions of several languages, LAReQA / XQuAD-R) is also
reported per question language (`RankCollector(same_lang=True)`, `results_by_lang`): against
the whole pool (the ranks above, for that language's queries) and against the same-language
part (the same scores, with the other languages' candidates left out of the ranking). A distinct question text takes the
language of its first question row.

Where the data says which paragraph and article each question and candidate comes from (a
SQuAD-built set does), the paper protocol's queries are also ranked at three coarser or narrower
levels (`RankCollector(levels=True)`, `results_by_level`), which tell a model that finds the
topic from one that finds the sentence:
- "paragraph": correct = any candidate of the question's paragraph (the right context found);
- "article": correct = any candidate of the question's article (the right topic found);
- "in_paragraph": the gold's rank among the candidates of the question's own paragraph only
  (the right sentence picked once the paragraph is known; R@1 is sentence selection).
In a multilingual pool an article is its title in the question's language.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

RECALL_KS = (1, 5, 10, 50, 100)
LEVELS = ("paragraph", "article", "in_paragraph")
PROTOCOLS = ("paper", "reqa")
PROTOCOL_NOTES = {
    "paper": "one query per question id; correct = a gold (sentence, passage) candidate",
    "reqa": "one query per distinct question text; correct = any candidate whose sentence text "
            "equals a gold sentence (ReQA squad_eval.py)",
}


@dataclass
class Protocol:
    """Queries of one protocol: the row of the score matrix each reads (`text_index`, into
    EvalSet.texts) and each query's correct candidate indices (`gold`)."""

    name: str
    text_index: np.ndarray  # int64 [queries]
    gold: list[np.ndarray]  # int64 arrays of candidate indices
    langs: np.ndarray | None = None  # str [queries]: each query's language


@dataclass
class EvalSet:
    """The distinct question texts to score (rows of the score matrix, in this order) and the
    queries of each protocol."""

    texts: list[str]
    protocols: dict[str, Protocol]
    num_candidates: int
    text_langs: list[str] | None = None  # the language of each text (row)
    candidate_langs: np.ndarray | None = None  # str [candidates]
    levels: "Levels | None" = None  # paragraphs and articles, where the data has them

    @classmethod
    def from_data(cls, data) -> "EvalSet":
        """From a ReqaData (wikipairs.trainer.reqa.data): its question rows and candidates."""
        ques, cand = data.questions, data.candidates
        eval_set = cls.build(ques["question"], ques["gold_candidate_ids"], cand["sentence"],
                             ques.get("lang"), cand.get("lang"))
        if all(k in ques and k in cand for k in ("paragraph_id", "title")):
            eval_set.levels = Levels.build(ques, cand, ques.get("lang"), cand.get("lang"))
        return eval_set

    @property
    def langs(self) -> list[str]:
        """The question languages, sorted ([] where no languages were given)."""
        return sorted(set(self.text_langs or ()))

    @property
    def multilingual(self) -> bool:
        return self.candidate_langs is not None and len(set(self.candidate_langs.tolist())) > 1

    @classmethod
    def build(cls, questions: list[str], gold_ids: list[list[int]], sentences: list[str],
              question_langs: list[str] | None = None,
              candidate_langs: list[str] | None = None) -> "EvalSet":
        """questions[i] with gold candidate ids gold_ids[i] (rows); sentences: candidate texts;
        optionally the language of each question row and of each candidate."""
        texts, row_of, text_langs = [], {}, []
        for i, q in enumerate(questions):
            if q not in row_of:
                row_of[q] = len(texts)
                texts.append(q)
                text_langs.append(question_langs[i] if question_langs else "")
        paper = Protocol("paper", np.array([row_of[q] for q in questions], dtype=np.int64),
                         [np.unique(np.asarray(g, dtype=np.int64)) for g in gold_ids])
        by_sentence: dict[str, list[int]] = {}
        for j, s in enumerate(sentences):
            by_sentence.setdefault(s, []).append(j)
        gold_sentences: list[set[str]] = [set() for _ in texts]
        for q, golds in zip(questions, gold_ids):
            gold_sentences[row_of[q]].update(sentences[int(g)] for g in golds)
        reqa = Protocol("reqa", np.arange(len(texts), dtype=np.int64),
                        [np.unique(np.array([j for s in golds for j in by_sentence[s]],
                                            dtype=np.int64)) for golds in gold_sentences])
        if question_langs:
            paper.langs = np.asarray(list(question_langs), dtype=object)
            reqa.langs = np.asarray(text_langs, dtype=object)
        for protocol in (paper, reqa):
            bad = [g for g in protocol.gold if g.size and (g.min() < 0 or g.max() >= len(sentences))]
            if bad or any(g.size == 0 for g in protocol.gold):
                raise ValueError("every query needs gold candidate ids in range")
        return cls(texts, {"paper": paper, "reqa": reqa}, len(sentences),
                   text_langs if question_langs else None,
                   np.asarray(list(candidate_langs), dtype=object) if candidate_langs else None)


@dataclass
class Levels:
    """Where each paper-protocol query (question row) and candidate comes from: the candidate
    indices of each query's paragraph and article, and its paragraph id beside every
    candidate's (for the in-paragraph ranking)."""

    paragraph_gold: list[np.ndarray]  # int64 candidate indices, one array per query
    article_gold: list[np.ndarray]
    query_paragraph: np.ndarray  # int64 [queries]
    candidate_paragraph: np.ndarray  # int64 [candidates]; -1: no paragraph (extra candidates)

    @classmethod
    def build(cls, ques: dict, cand: dict, question_langs=None, candidate_langs=None) -> "Levels":
        """From the question and candidate columns (paragraph_id, title, and lang if given)."""
        candidate_paragraph = np.asarray(cand["paragraph_id"], dtype=np.int64)
        by_paragraph: dict[int, list[int]] = {}
        by_article: dict[tuple, list[int]] = {}
        for j, (paragraph, title) in enumerate(zip(cand["paragraph_id"], cand["title"])):
            by_paragraph.setdefault(int(paragraph), []).append(j)
            lang = candidate_langs[j] if candidate_langs else ""
            by_article.setdefault((lang, title), []).append(j)
        paragraphs, articles = [], []
        for i, (paragraph, title, golds) in enumerate(zip(
                ques["paragraph_id"], ques["title"], ques["gold_candidate_ids"])):
            lang = question_langs[i] if question_langs else ""
            # the golds too: a candidate shared by two paragraphs is listed under the first
            paragraphs.append(np.union1d(by_paragraph.get(int(paragraph), []), golds)
                              .astype(np.int64))
            articles.append(np.union1d(by_article.get((lang, title), []), paragraphs[-1])
                            .astype(np.int64))
        return cls(paragraphs, articles, np.asarray(ques["paragraph_id"], dtype=np.int64),
                   candidate_paragraph)


def gold_ranks(scores: np.ndarray, golds: list[np.ndarray]) -> np.ndarray:
    """Rank (1 = best, ties averaged) of the best-scored gold candidate of each row:
    scores float [n, candidates], golds[i] the correct candidate indices of row i."""
    scores = np.asarray(scores)
    best = np.array([scores[i, g].max() for i, g in enumerate(golds)], dtype=scores.dtype)
    greater = (scores > best[:, None]).sum(axis=1)
    equal = (scores == best[:, None]).sum(axis=1)
    return greater + (equal + 1) / 2.0


class RankCollector:
    """Collects exact ranks for every protocol from score chunks (rows start..start+n of the
    matrix [len(eval_set.texts), num_candidates]), so the full matrix never exists at once."""

    def __init__(self, eval_set: EvalSet, same_lang: bool = False, levels: bool = False):
        self.eval_set = eval_set
        # the paper protocol's queries at the paragraph and article levels (module doc)
        self.levels = eval_set.levels if levels else None
        n_paper = len(eval_set.protocols["paper"].text_index)
        self.level_ranks = {name: np.full(n_paper, np.nan) for name in LEVELS} \
            if self.levels is not None else {}
        self.ranks = {name: np.full(len(p.text_index), np.nan)
                      for name, p in eval_set.protocols.items()}
        # ranks among the candidates of the query's own language (multilingual pools)
        self.same_lang = same_lang and eval_set.candidate_langs is not None and all(
            p.langs is not None for p in eval_set.protocols.values())
        self.same_ranks = {name: np.full(len(p.text_index), np.nan)
                           for name, p in eval_set.protocols.items()} if self.same_lang else {}
        self._order = {name: np.argsort(p.text_index, kind="stable")
                       for name, p in eval_set.protocols.items()}
        self._sorted = {name: p.text_index[self._order[name]]
                        for name, p in eval_set.protocols.items()}

    def add(self, start: int, scores: np.ndarray) -> None:
        scores = np.asarray(scores)
        if scores.ndim != 2 or scores.shape[1] != self.eval_set.num_candidates:
            raise ValueError(f"expected scores [n, {self.eval_set.num_candidates}], "
                             f"got {scores.shape}")
        stop = start + scores.shape[0]
        for name, protocol in self.eval_set.protocols.items():
            lo, hi = np.searchsorted(self._sorted[name], [start, stop])
            queries = self._order[name][lo:hi]
            if queries.size == 0:
                continue
            rows = scores[protocol.text_index[queries] - start]
            golds = [protocol.gold[q] for q in queries]
            self.ranks[name][queries] = gold_ranks(rows, golds)
            if self.same_lang:
                same = self.eval_set.candidate_langs[None, :] == protocol.langs[queries][:, None]
                self.same_ranks[name][queries] = gold_ranks(np.where(same, rows, -np.inf), golds)
            if name == "paper" and self.levels is not None:
                self._add_levels(queries, rows, golds)

    def _add_levels(self, queries: np.ndarray, rows: np.ndarray, golds: list) -> None:
        levels = self.levels
        self.level_ranks["paragraph"][queries] = gold_ranks(
            rows, [levels.paragraph_gold[q] for q in queries])
        self.level_ranks["article"][queries] = gold_ranks(
            rows, [levels.article_gold[q] for q in queries])
        own = levels.candidate_paragraph[None, :] == levels.query_paragraph[queries][:, None]
        for i, g in enumerate(golds):  # a gold listed under another paragraph stays in
            own[i, g] = True
        self.level_ranks["in_paragraph"][queries] = gold_ranks(
            np.where(own, rows, -np.inf), golds)

    def results(self, ks=RECALL_KS) -> dict:
        return _summaries(self.ranks, ks)

    def results_by_level(self, ks=RECALL_KS) -> dict:
        """{level: metrics} of the paper protocol's queries (LEVELS; module doc); {} where the
        collector does not rank levels or the data has no paragraphs and articles."""
        return _summaries(self.level_ranks, ks)

    def results_by_lang(self, ks=RECALL_KS) -> dict:
        """{lang: {"pool": {protocol: metrics}, "same_lang": {...}}} for each question language
        ("same_lang" where the collector ranks that too)."""
        out = {}
        for lang in self.eval_set.langs:
            entry = {}
            for part, all_ranks in (("pool", self.ranks), ("same_lang", self.same_ranks)):
                if all_ranks:
                    entry[part] = {name: summarize(ranks[self.eval_set.protocols[name].langs
                                                         == lang], ks)
                                   for name, ranks in all_ranks.items()}
            out[lang] = entry
        return out


def _summaries(ranks_by_name: dict, ks) -> dict:
    """summarize() of each name's ranks, all of which must have been scored."""
    out = {}
    for name, ranks in ranks_by_name.items():
        if np.isnan(ranks).any():
            raise ValueError(f"{name}: {int(np.isnan(ranks).sum())} queries were not scored")
        out[name] = summarize(ranks, ks)
    return out


def summarize(ranks: np.ndarray, ks=RECALL_KS) -> dict:
    """{"queries": n, "R@k": share with rank <= k, ..., "MRR": mean 1/rank} (fractions)."""
    ranks = np.asarray(ranks, dtype=np.float64)
    out = {"queries": int(ranks.size)}
    for k in ks:
        out[f"R@{k}"] = float((ranks <= k).mean()) if ranks.size else 0.0
    out["MRR"] = float((1.0 / ranks).mean()) if ranks.size else 0.0
    return out


def evaluate_chunks(eval_set: EvalSet, chunks: Iterable[tuple[int, np.ndarray]],
                    ks=RECALL_KS) -> dict:
    """Metrics of both protocols from (start row, scores [n, candidates]) chunks covering every
    row of eval_set.texts."""
    collector = RankCollector(eval_set)
    for start, scores in chunks:
        collector.add(start, scores)
    return collector.results(ks)


def format_languages(by_lang: dict, ks=RECALL_KS) -> str:
    """One line per question language, candidates (whole pool, same language) and protocol."""
    head = (f"{'lang':<6}{'candidates':<12}{'protocol':<10}{'queries':>9}"
            + "".join(f"{f'R@{k}':>8}" for k in ks) + f"{'MRR':>8}")
    lines = [head]
    for lang, entry in by_lang.items():
        for part, label in (("pool", "whole pool"), ("same_lang", "same lang")):
            for name, r in entry.get(part, {}).items():
                lines.append(f"{lang:<6}{label:<12}{name:<10}{r['queries']:>9,}"
                             + "".join(f"{100 * r[f'R@{k}']:>8.2f}" for k in ks)
                             + f"{100 * r['MRR']:>8.2f}")
    return "\n".join(lines)


def evaluate_scores(eval_set: EvalSet, scores: np.ndarray, ks=RECALL_KS) -> dict:
    """Metrics of both protocols from a full score matrix [len(eval_set.texts), candidates]."""
    return evaluate_chunks(eval_set, [(0, scores)], ks)


def format_table(results: dict, ks=RECALL_KS, label: str = "protocol") -> str:
    """The paper's table: one line per protocol (or level), R@k and MRR in percent."""
    width = max([10, len(label) + 1, *(len(name) + 1 for name in results)])
    head = f"{label:<{width}}{'queries':>9}" + "".join(f"{f'R@{k}':>8}" for k in ks) + f"{'MRR':>8}"
    lines = [head]
    for name, r in results.items():
        lines.append(f"{name:<{width}}{r['queries']:>9,}"
                     + "".join(f"{100 * r[f'R@{k}']:>8.2f}" for k in ks)
                     + f"{100 * r['MRR']:>8.2f}")
    return "\n".join(lines)


__all__ = ["RECALL_KS", "PROTOCOLS", "PROTOCOL_NOTES", "LEVELS", "Protocol", "EvalSet", "Levels",
           "gold_ranks",
           "RankCollector", "summarize", "evaluate_chunks",
           "evaluate_scores", "format_table", "format_languages"]
