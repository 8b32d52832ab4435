"""`wikipairs stats` and `wikipairs show`: a build's Table-1 statistics, length histograms, and
pairs printed readably with their provenance. Reads only the build folder."""
from __future__ import annotations

import json
import textwrap
from collections import Counter

import pyarrow.parquet as pq

from wikipairs.schemas import current_pair_row

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


# What a length counts beside the text: [CLS] query [SEP]; [CLS] title [SEP] passage [SEP]
# (the title is in doc_tokens already). The limits --query-max-tokens/--doc-max-tokens count them.
FRAMING = {"query": 2, "doc": 3}
LENGTH_BINS = 48  # bins of a length histogram, up to a little past its limit


def _median(values: list[int]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if not n:
        return float("nan")
    return float(ordered[n // 2]) if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def _length_bins(limit: int) -> list[int]:
    """Edges of integer-width bins from 0 to a tenth past `limit`, the same for every task; a
    bin ends right after the limit (the lengths over it start a bin), and longer lengths fall
    into the last bin (their share is written as "over the limit")."""
    top = max(limit + limit // 10, 8)
    width = max(1, -(-top // LENGTH_BINS))
    first = (limit + 1) % width
    edges = ([0] if first else []) + list(range(first, top + width, width))
    return edges


def _page_bins(most: int) -> list[float]:
    """Edges of log-spaced bins of pairs per page, 1 .. `most`, each holding whole numbers."""
    edges, edge = [1.0], 1.0
    while edge <= most:
        edge = max(edge + 1, edge * 1.35)
        edges.append(float(int(edge)))
    return edges


def _histogram(values: list[int], edges: list[float], clip: bool) -> list[int]:
    """Counts per [edges[i], edges[i+1]); with `clip`, values past the end count in the last."""
    import bisect

    counts = [0] * (len(edges) - 1)
    for v in values:
        i = bisect.bisect_right(edges, v) - 1
        if i >= len(counts) and clip:
            i = len(counts) - 1
        if 0 <= i < len(counts):
            counts[i] += 1
    return counts


def build_identity(folder: str, stats: dict) -> dict:
    """What a figure's title says about a build, never a path: the wiki (dbname), the dump dates
    in the input file names, the token measure (a SentencePiece model by file name), the seed,
    and the length limits in force, from manifest.json (defaults where an old one lacks them)."""
    from .card import dump_date, wiki_name

    manifest = json.loads(fileio.read_text(fileio.join(folder, MANIFEST)))
    config = manifest.get("config") or {}
    pairs = config.get("pairs") or {}
    inputs = [e["path"] for e in manifest.get("inputs", [])]
    return {"wiki": wiki_name(inputs, stats.get("lang", "")),
            "dates": sorted({dump_date(p) for p in inputs} - {None}),
            "tokens": stats.get("tokens") or "", "seed": manifest.get("seed", pairs.get("seed")),
            "query": int(pairs.get("query_max_tokens", 64)),
            "doc": int(pairs.get("doc_max_tokens", 288))}


def plot_numbers(folder: str, tasks: list[str], limits: dict[str, int],
                 counters: dict | None = None) -> dict:
    """Everything `plot_stats` draws, computed from the Parquet shards: for "query" and "doc",
    the shared bin edges and per task the lengths with framing (query_tokens + 2, doc_tokens +
    3, the units of `limits`), their count n, median, the share exactly at the limit and the
    share over it (none in a build: it cuts documents to the limit and leaves longer queries
    out), and the histogram; for "per_page" (pairs per page: the query page for WLP, the
    document page otherwise), log-spaced edges and per task n (pages), median and histogram.
    From the build's `counters` (stats.json), what the shards cannot tell: per task "cut",
    the share of documents cut to the limit ({task}_doc_truncated / n), and "left_out", the
    query sentences left out as too long ({task}_skipped_long_query)."""
    counters = counters or {}
    columns = length_summary(folder, tasks)
    out: dict = {}
    for key in ("query", "doc"):
        lengths = {t: [v + FRAMING[key] for v in columns[t][key]] for t in tasks}
        edges = _length_bins(limits[key])
        limit = limits[key]
        out[key] = {"edges": edges, "limit": limit, "tasks": {}}
        for t, values in lengths.items():
            n = len(values)
            out[key]["tasks"][t] = {
                "n": n, "median": _median(values),
                "at_limit": sum(v == limit for v in values) / n if n else 0.0,
                "over_limit": sum(v > limit for v in values) / n if n else 0.0,
                "counts": _histogram(values, edges, clip=True)}
            if key == "doc":
                cut = counters.get(f"{t}_doc_truncated", 0)
                out[key]["tasks"][t]["cut"] = cut / n if n else 0.0
            else:
                out[key]["tasks"][t]["left_out"] = counters.get(f"{t}_skipped_long_query", 0)
    most = max((max(columns[t]["per_page"], default=0) for t in tasks), default=0)
    edges = _page_bins(most)
    out["per_page"] = {"edges": edges, "tasks": {
        t: {"n": len(columns[t]["per_page"]), "median": _median(columns[t]["per_page"]),
            "counts": _histogram(columns[t]["per_page"], edges, clip=False)} for t in tasks}}
    return out


def _percent(share: float) -> str:
    return "0%" if share == 0 else "<0.1%" if share < 0.001 else f"{100 * share:.1f}%"


def plot_title(identity: dict) -> str:
    dump = f"{identity['wiki']} dump" + (f" of {', '.join(identity['dates'])}"
                                         if identity["dates"] else "")
    return f"{dump}  ·  tokens: {identity['tokens']}  ·  seed {identity['seed']}"


def _log_scale(ax, which: str) -> None:
    """A log axis labelled 1, 10, 100, 1,000 (not 10^0, 10^1, ...)."""
    import matplotlib.ticker

    getattr(ax, f"set_{which}scale")("log")
    getattr(ax, f"{which}axis").set_major_formatter(matplotlib.ticker.FuncFormatter(
        lambda v, _pos: f"{v:,.0f}" if v >= 1 else ""))


def plot_stats(folder: str, tasks: list[str], path: str, stats: dict | None = None) -> None:
    """Small multiples, a row per task: query and document length distributions (share of the
    task's pairs, the same bins for every task) with the length limit, the share at and over it
    and the median, and pairs per page (log scale); the title names the dump, token measure and
    seed. Written as a PNG under a temporary name, then renamed."""
    import matplotlib
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt

    stats = stats if stats is not None else load_stats(folder)
    identity = build_identity(folder, stats)
    data = plot_numbers(folder, tasks, {"query": identity["query"], "doc": identity["doc"]},
                        stats.get("counters"))
    colors = {"ict": "#1f77b4", "bfs": "#2ca02c", "wlp": "#d62728"}
    rows = max(1, len(tasks))
    fig, axes = plt.subplots(rows, 3, figsize=(13, 2.6 * rows + 0.9), squeeze=False,
                             sharex="col")
    tops = {key: max([max(n["counts"], default=0) / (n["n"] if key != "per_page" else 1)
                      for n in data[key]["tasks"].values() if n["n"]], default=1)
            for key in ("query", "doc", "per_page")}
    titles = {"query": "query length (tokens, with [CLS] [SEP])",
              "doc": "document length (tokens, title and framing included)",
              "per_page": "pairs per page (pages; log-log)"}
    for row, task in enumerate(tasks):
        color = colors.get(task, "#555555")
        for col, key in enumerate(("query", "doc", "per_page")):
            ax, part = axes[row][col], data[key]
            numbers, edges = part["tasks"][task], part["edges"]
            if row == 0:
                ax.set_title(titles[key], fontsize=10)
            if not numbers["n"]:  # the axes of the column, the limit, and why it is empty
                ax.text(0.5, 0.5, f"no {task.upper()} pairs", transform=ax.transAxes,
                        ha="center", va="center", color="0.4")
                ax.set_yticks([])
                if key == "per_page":
                    _log_scale(ax, "x")
                else:
                    ax.axvline(part["limit"], color="black", linewidth=1.3)
                    ax.set_xlim(0, edges[-1])
                ax.tick_params(labelsize=8)
                continue
            total = numbers["n"]
            heights = [100 * c / total for c in numbers["counts"]]
            if key == "per_page":  # pages, on log axes: a few pages hold many pairs
                heights = numbers["counts"]
                ax.stairs(heights, edges, fill=True, color=color, alpha=0.35, baseline=0.5)
                ax.stairs(heights, edges, color=color, linewidth=1, baseline=0.5)
                _log_scale(ax, "x")
                _log_scale(ax, "y")
                ax.set_ylim(0.5, max(2, tops[key]) * 4)  # room above for the legend
            else:
                ax.stairs(heights, edges, fill=True, color=color, alpha=0.35)
                ax.stairs(heights, edges, color=color, linewidth=1)
            median = numbers["median"]
            ax.axvline(median, color="0.15", linestyle="--", linewidth=1,
                       label=f"median {median:g}")
            box = {"facecolor": "white", "edgecolor": "0.8"}
            if key == "per_page":
                ax.text(0.97, 0.95, f"{total:,} pages", transform=ax.transAxes, ha="right",
                        va="top", fontsize=8, bbox=box, zorder=5)
                legend_at = "upper left"
            else:
                limit = part["limit"]
                ax.axvline(limit, color="black", linewidth=1.3, label=f"limit {limit}")
                lines = [f"{total:,} pairs", f"at the limit {_percent(numbers['at_limit'])}"]
                if key == "doc":
                    lines.append(f"cut to it {_percent(numbers['cut'])}")
                else:
                    lines.append(f"longer, left out: {numbers['left_out']:,}")
                if numbers["over_limit"]:  # not from a build of this version
                    lines.append(f"over it {_percent(numbers['over_limit'])}")
                ax.text(0.03, 0.95, "\n".join(lines),
                        transform=ax.transAxes, ha="left", va="top", fontsize=8, bbox=box,
                        zorder=5)
                ax.set_xlim(0, edges[-1])
                ax.set_ylim(0, 100 * tops[key] * 1.45)  # the same for every task; room above
                legend_at = "upper right"
            ax.legend(loc=legend_at, fontsize=8, framealpha=1, edgecolor="0.8").set_zorder(5)
            ax.tick_params(labelsize=8)
        axes[row][0].set_ylabel(f"{task.upper()}\n% of pairs", fontsize=10)
        axes[row][2].set_ylabel("pages", fontsize=9)
    title = plot_title(identity)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    with fileio.local_atomic(path, suffix=".tmp.png") as tmp:
        fig.savefig(tmp, dpi=120, metadata={"Title": title, "Software": "wikipairs stats"})
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
        rows.extend(current_pair_row(r) for r in table.to_pylist() if r["pair_id"] in chosen)
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
        lines.append(f"  link     anchor {row['link_anchor']!r}, {where}")
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


__all__ = ["load_stats", "plot_stats", "plot_numbers", "build_identity", "plot_title",
           "pick_pairs", "format_pair", "stats_table", "built_tasks",
           "length_summary", "ReportError"]
