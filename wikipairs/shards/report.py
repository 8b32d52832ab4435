"""`wikipairs stats` and `wikipairs show`: a build's Table-1 statistics, length histograms, and
pairs printed readably with their provenance. Reads only the build folder."""
from __future__ import annotations

import json
import textwrap
from collections import Counter

import pyarrow.parquet as pq

from .. import fileio
from ..errors import WikipairsError
from ..pairs.tasks import TASKS
from ..pairs.sampling import sample
from . import layout
from .output import MANIFEST


class ReportError(WikipairsError):
    pass


def load_stats(folder: str) -> dict:
    path = fileio.join(folder, "stats.json")
    try:
        if not fileio.exists(fileio.join(folder, MANIFEST)) or not fileio.exists(path):
            raise ReportError(f"{folder}: not a finished build (no manifest.json or stats.json)")
        return json.loads(fileio.read_text(path))
    except OSError as e:  # e.g. a remote file system that cannot be reached
        raise ReportError(f"{folder}: cannot read it ({e.strerror or e})") from None


def task_shards(folder: str, task: str) -> list[str]:
    """A task's Parquet shards in a build folder, sorted: DIR/parquet/<task>/part-*.parquet, or
    DIR/<task>/part-*.parquet in a build older than the per-format trees (layout.py)."""
    return layout.task_shards(folder, task, "parquet")


def _read_table(shard: str, columns: list[str] | None = None):
    # One thread: pyarrow's thread pool can abort the interpreter at exit ("terminate called
    # without an active exception", apache/arrow#34314): 1 `show` of 5 on gs:// shards did.
    return pq.read_table(fileio.arrow_input(shard), columns=columns, use_threads=False)


def read_columns(folder: str, task: str, columns: list[str]) -> dict[str, list]:
    """Columns of a task's Parquet shards, concatenated in shard order."""
    out: dict[str, list] = {c: [] for c in columns}
    for shard in task_shards(folder, task):
        table = _read_table(shard, columns)
        for c in columns:
            out[c].extend(table.column(c).to_pylist())
    return out


def length_summary(folder: str, tasks: list[str]) -> dict[str, dict]:
    """Per task: query and document token lengths, and pairs per page (query page for WLP,
    document page otherwise), from the shards."""
    summary = {}
    for task in tasks:
        cols = read_columns(folder, task, ["query_tokens", "doc_tokens", "query_page_id",
                                           "doc_page_id"])
        pages = Counter(cols["query_page_id"] if task == "wlp" else cols["doc_page_id"])
        summary[task] = {"query": cols["query_tokens"], "doc": cols["doc_tokens"],
                         "per_page": list(pages.values())}
    return summary


def plot_stats(folder: str, tasks: list[str], path: str) -> None:
    """Histograms of query and document lengths per task and of pairs per page, as a PNG."""
    import matplotlib
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    data = length_summary(folder, tasks)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for ax, key, title in zip(axes, ("query", "doc", "per_page"),
                              ("query length (tokens)", "document length (tokens)",
                               "pairs per page")):
        for task in tasks:
            values = data[task][key]
            if values:
                ax.hist(values, bins=40, alpha=0.55, label=f"{task} (n={len(values):,})")
        ax.set_title(title)
        ax.set_ylabel("pairs" if key != "per_page" else "pages")
        ax.legend()
    fig.suptitle(fileio.abspath(folder))
    fig.tight_layout()
    with fileio.local_atomic(path, suffix=".tmp.png") as tmp:
        fig.savefig(tmp, dpi=100)
    plt.close(fig)


def pick_pairs(folder: str, task: str, n: int, seed: int) -> list[dict]:
    """`n` pairs of a task: those with the smallest seeded hash of their pair_id."""
    if not task_shards(folder, task):
        raise ReportError(f"{folder}: no {task} shards")
    ids = read_columns(folder, task, ["pair_id"])["pair_id"]
    chosen = set(sorted(ids, key=lambda pid: sample(seed, "show", pid))[:n])
    rows = []
    for shard in task_shards(folder, task):
        table = _read_table(shard)
        rows.extend(r for r in table.to_pylist() if r["pair_id"] in chosen)
    return sorted(rows, key=lambda r: sample(seed, "show", r["pair_id"]))


def format_pair(row: dict, width: int = 100) -> str:
    """A pair as a few readable lines with its provenance."""
    wrap = lambda text, indent: textwrap.fill(text, width, initial_indent=indent,  # noqa: E731
                                              subsequent_indent=" " * len(indent))
    lines = [f"[{row['task']}] pair {row['pair_id']}  ({row['lang']})",
             f"  query    from {row['query_title']!r} (page {row['query_page_id']}, section "
             f"{row['query_section']}, paragraph {row['query_paragraph']}, sentence "
             f"{row['query_sentence']}; {row['query_tokens']} tokens)",
             wrap(row["query"], "    Q: "),
             f"  document {row['doc_title']!r} (page {row['doc_page_id']}, section "
             f"{row['doc_section']}, passage {row['doc_passage']}; {row['doc_tokens']} tokens)"]
    if row["task"] == "wlp":
        where = "in this passage" if row["link_in_doc"] else "outside the text"
        lines.append(f"  link     anchor {row['anchor']!r}, {where}")
    if row["task"] == "ict" and row["query_in_doc"]:
        lines.append("  (the query sentence was kept in the document)")
    lines.append(wrap(row["doc_text"], "    D: "))
    return "\n".join(lines)


def stats_table(stats: dict) -> list[str]:
    lines = [f"{'task':<8}{'pairs':>12}{'tokens':>14}{'query len':>11}{'doc len':>10}"]
    for task, row in stats["tasks"].items():
        lines.append(f"{task:<8}{row['pairs']:>12,}{row['tokens']:>14,}"
                     f"{row['mean_query_tokens']:>11.1f}{row['mean_doc_tokens']:>10.1f}")
    return lines


def built_tasks(stats: dict) -> list[str]:
    return [t for t in TASKS if t in stats.get("tasks", {})]


__all__ = ["load_stats", "plot_stats", "pick_pairs", "format_pair", "stats_table", "built_tasks",
           "length_summary", "ReportError"]
