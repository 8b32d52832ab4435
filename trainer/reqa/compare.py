"""Two retrievers on the same questions: is the difference larger than the questions' noise?

`reqa eval --ranks FILE` keeps every query's rank (`write_ranks`); `reqa compare A B` reads two
such files of the same data, split and seed and gives, per ranking (the protocols "paper" and
"reqa", and the paper protocol's levels) and per metric (Recall@k, MRR):
- A, B and B - A;
- a 95% paired bootstrap interval of B - A: queries resampled with replacement, the same
  resample for both models (scipy.stats.bootstrap, percentile method, on the per-query
  differences), so what both models find hard or easy cancels;
- a two-sided p-value of "no difference": for Recall@k McNemar's exact test (a binomial test on
  the queries that only one model finds within k), for MRR the Wilcoxon signed-rank test on the
  per-query reciprocal ranks (queries with equal ranks dropped), as IR evaluation tests them.

A rank file is a Parquet table (`ranking`, `query`, `rank`; one row per query and ranking, in
the order `reqa eval` scores them) with the run's setting in the schema metadata; the query is
the question id (paper protocol and levels) or the question text (reqa protocol).
"""
from __future__ import annotations

import json

import numpy as np
import pyarrow as pa

from .data import ReqaError
from .metrics import RECALL_KS

RANKS_SCHEMA = pa.schema([("ranking", pa.string()), ("query", pa.string()),
                          ("rank", pa.float64())])
SETTING_KEY = b"wikipairs.reqa_ranks"
# what must be equal in both runs for their ranks to be comparable
SAME_SETTING = ("split", "train_percent", "seed", "candidates")


def write_ranks(path: str, ranks: dict[str, tuple[list[str], np.ndarray]], setting: dict) -> None:
    """ranks: {ranking: (query keys, ranks float [queries])}; setting: the run's data, split,
    train_percent, seed, candidates and model (JSON-serializable)."""
    from wikipairs.shards.output import write_parquet

    columns = {"ranking": [], "query": [], "rank": []}
    for ranking, (keys, values) in ranks.items():
        if len(keys) != len(values):
            raise ValueError(f"{ranking}: {len(keys)} keys for {len(values)} ranks")
        columns["ranking"] += [ranking] * len(keys)
        columns["query"] += [str(k) for k in keys]
        columns["rank"] += np.asarray(values, dtype=np.float64).tolist()
    schema = RANKS_SCHEMA.with_metadata({SETTING_KEY: json.dumps(setting).encode()})
    write_parquet(str(path), pa.table(columns, schema=schema))


def read_ranks(path: str) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict]:
    """({ranking: (query keys, ranks)}, setting) of a `reqa eval --ranks` file."""
    import pyarrow.parquet as pq

    from wikipairs import fileio

    try:  # as the shard readers do: gs:// too, and one thread (apache/arrow#34314)
        table = pq.read_table(fileio.arrow_input(path), use_threads=False)
    except FileNotFoundError:
        raise ReqaError(f"{path}: no such file") from None
    except (OSError, pa.ArrowInvalid) as e:
        raise ReqaError(f"{path}: not a rank file of `reqa eval --ranks` ({e})") from None
    meta = table.schema.metadata or {}
    if SETTING_KEY not in meta or not set(RANKS_SCHEMA.names) <= set(table.column_names):
        raise ReqaError(f"{path}: not a rank file of `reqa eval --ranks`")
    names = np.asarray(table.column("ranking").to_pylist(), dtype=object)
    keys = np.asarray(table.column("query").to_pylist(), dtype=object)
    values = table.column("rank").to_numpy()
    out = {}
    for ranking in dict.fromkeys(names.tolist()):  # first-seen order
        rows = names == ranking
        out[ranking] = (keys[rows], values[rows])
    return out, json.loads(meta[SETTING_KEY])


def paired_stats(ranks_a: np.ndarray, ranks_b: np.ndarray, ks=RECALL_KS,
                 resamples: int = 10_000, seed: int = 0) -> dict:
    """{metric: {"a", "b", "diff" (b - a), "ci95": [lo, hi], "p", "test", ...}} of two models'
    ranks of the same queries (float [queries] each, 1 = best); fractions, as `summarize`."""
    from scipy import stats

    a, b = np.asarray(ranks_a, dtype=np.float64), np.asarray(ranks_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"ranks of the same queries needed, got shapes {a.shape} and {b.shape}")
    out = {}
    for k in ks:
        hit_a, hit_b = a <= k, b <= k
        a_only, b_only = int((hit_a & ~hit_b).sum()), int((hit_b & ~hit_a).sum())
        p = stats.binomtest(b_only, a_only + b_only, 0.5).pvalue if a_only + b_only else 1.0
        out[f"R@{k}"] = {**_difference(hit_a.astype(float), hit_b.astype(float), resamples,
                                       seed), "p": float(p), "test": "McNemar exact",
                         "a_only": a_only, "b_only": b_only}
    rr_a, rr_b = 1.0 / a, 1.0 / b
    p = stats.wilcoxon(rr_b, rr_a).pvalue if np.any(rr_a != rr_b) else 1.0
    out["MRR"] = {**_difference(rr_a, rr_b, resamples, seed), "p": float(p),
                  "test": "Wilcoxon signed-rank"}
    return out


def _difference(a: np.ndarray, b: np.ndarray, resamples: int, seed: int) -> dict:
    """Means of a and b, mean(b - a) and its 95% paired bootstrap interval."""
    from scipy import stats

    diff = b - a
    if np.all(diff == diff[0]):  # no spread to resample (identical models, one query)
        lo = hi = float(diff[0])
    else:
        ci = stats.bootstrap((diff,), np.mean, n_resamples=resamples, method="percentile",
                             confidence_level=0.95, random_state=np.random.default_rng(seed),
                             batch=max(1, 4_000_000 // diff.size)).confidence_interval
        lo, hi = float(ci.low), float(ci.high)
    return {"a": float(a.mean()), "b": float(b.mean()), "diff": float(diff.mean()),
            "ci95": [lo, hi]}


def compare_files(path_a: str, path_b: str, ks=RECALL_KS, resamples: int = 10_000,
                  seed: int = 0) -> dict:
    """{"a": setting, "b": setting, "rankings": {ranking: {"queries": n, "metrics":
    paired_stats}}} of two rank files of the same questions (ReqaError where they are not)."""
    ranks_a, setting_a = read_ranks(path_a)
    ranks_b, setting_b = read_ranks(path_b)
    for key in SAME_SETTING:
        if setting_a.get(key) != setting_b.get(key):
            raise ReqaError(f"{path_a} and {path_b} rank different questions or candidates "
                            f"({key}: {setting_a.get(key)!r} against {setting_b.get(key)!r})")
    rankings = {}
    for ranking, (keys_a, values_a) in ranks_a.items():
        if ranking not in ranks_b:
            continue
        keys_b, values_b = ranks_b[ranking]
        if len(keys_a) != len(keys_b) or np.any(keys_a != keys_b):
            raise ReqaError(f"{path_a} and {path_b} rank different queries under {ranking!r} "
                            f"({len(keys_a):,} and {len(keys_b):,}): compare runs of one data "
                            "folder, split and seed")
        rankings[ranking] = {"queries": len(keys_a),
                             "metrics": paired_stats(values_a, values_b, ks, resamples, seed)}
    if not rankings:
        raise ReqaError(f"{path_a} and {path_b} share no ranking")
    return {"a": setting_a, "b": setting_b, "resamples": resamples, "seed": seed,
            "rankings": rankings}


def format_p(p: float) -> str:
    """A p-value in 3 significant digits; one below the smallest float reads "<1e-300"."""
    return f"{p:.3g}" if p > 0 else "<1e-300"


def format_comparison(result: dict) -> str:
    """One table per ranking: A, B, B - A and its interval in points, p and the test."""
    lines = []
    for ranking, entry in result["rankings"].items():
        lines.append(f"{ranking} ({entry['queries']:,} queries)")
        lines.append(f"{'metric':<8}{'A':>8}{'B':>8}{'B-A':>8}  {'95% CI of B-A':<18}"
                     f"{'p':>8}  test")
        for metric, m in entry["metrics"].items():
            lo, hi = (100 * v for v in m["ci95"])
            test = m["test"] + (f" (A only {m['a_only']:,}, B only {m['b_only']:,})"
                                if "a_only" in m else "")
            lines.append(f"{metric:<8}{100 * m['a']:>8.2f}{100 * m['b']:>8.2f}"
                         f"{100 * m['diff']:>+8.2f}  {f'[{lo:+.2f}, {hi:+.2f}]':<18}"
                         f"{format_p(m['p']):>8}  {test}")
    return "\n".join(lines)


__all__ = ["RANKS_SCHEMA", "write_ranks", "read_ranks", "paired_stats", "compare_files",
           "format_p", "format_comparison"]
