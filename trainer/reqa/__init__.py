"""ReQA evaluation (Chang et al., ICLR 2020, Section 4; Ahmad et al. 2019): SQuAD and Natural
Questions turned into sentence-retrieval data, BM25 and two-tower (SavedModel) retrievers,
Recall@k and MRR under two protocols, fine-tuning splits and pair shards.

- `data`: `reqa build` (SQuAD JSON -> candidates.parquet, questions.parquet, manifest.json),
  the seeded cold-start splits, the fine-tuning pair shards and the open-domain extra candidates.
- `nq`: Natural Questions (simplified or original jsonl[.gz]) -> SQuAD JSON, as ReQA's
  nq_to_squad.py does.
- `metrics`: gold sets per protocol ("paper", "reqa"), exact ranks, Recall@k and MRR.
- `bm25`: the bm25s baseline. `dense`: a SavedModel's query/response encoders, exact top-k.
- `compare`: two models' per-query ranks of the same questions: paired bootstrap intervals of
  the differences, McNemar and Wilcoxon tests (`reqa eval --ranks`, `reqa compare`).
- `cli`: the `reqa` click group (`build`, `eval`, `compare`, `pairs`, `passages`).

Installed as `wikipairs.trainer.reqa`; pure numpy/pyarrow except `dense` (TensorFlow, imported
when used), `bm25` (bm25s, imported when used) and `compare` (scipy).
"""
from .data import ReqaData, ReqaError, build_reqa, load_squad, read_reqa, split_questions, write_reqa
from .metrics import PROTOCOLS, RECALL_KS, EvalSet, evaluate_scores

__all__ = ["ReqaData", "ReqaError", "build_reqa", "load_squad", "read_reqa", "split_questions",
           "write_reqa", "PROTOCOLS", "RECALL_KS", "EvalSet", "evaluate_scores"]
