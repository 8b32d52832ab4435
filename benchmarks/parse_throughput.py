#!/usr/bin/env python3
"""Parse throughput of `wikipairs` against WikiExtractor 3.1, on a real dump and a scaled copy.

What is measured, for each file (the input dump, and a copy made `--scaled N` times larger with
`../shared/tools/scale_dump.py`, cached under /tmp so re-runs are quick):

* wikipairs: `wikipairs.parse.iter_articles` consumed to the end in this process, single-process:
  both passes (redirects, then articles), decompression and XML reading, wikitext cleaning,
  sentence splitting (Punkt, the installed punkt_tab model) and link resolution. Wall time with
  `time.perf_counter`, CPU time with `time.process_time` (user + system of this process, all its
  threads: the read-ahead decompression thread too, so CPU s may exceed wall s). The
  markup-leak check of the articles (`wikipairs.pairs.quality.leaking_sentences`) runs in the same loop
  but its time is taken out of both figures. Imports happen before the clock starts.
* wikiextractor: `python -m wikiextractor.WikiExtractor --no-templates --processes 1 -q -o DIR
  FILE` as a subprocess, including its interpreter start-up and writing its output files. Wall
  time around the subprocess, CPU time as the growth of `getrusage(RUSAGE_CHILDREN)` (user +
  system of the child and of the processes it waited for). Articles are the `<doc ` lines it
  wrote (it keeps disambiguation pages and lists, which wikipairs skips, so its count is higher).

How to read the table:

* `MB/s` is wikitext throughput: the raw wikitext of main-namespace pages that are not redirects
  (UTF-8, 1 MB = 10**6 bytes; the same figure for both tools, read once with
  `wikipairs.reading.read_pages`) divided by wall time. It compares the tools on the same input,
  whatever each counts as an article.
* `art/s` is articles per wall-clock second, `art/CPU-s` articles per CPU-second.
* Ratios are wikipairs / wikiextractor; above 1 means wikipairs is faster. Articles are what
  each tool outputs, and wikipairs skips disambiguation and list pages that WikiExtractor keeps
  (10 of 106 on the sample), so the articles ratios understate it by that share; the wikitext
  MB ratios compare the same input. WikiExtractor with
  `--processes 1` still runs three processes (the main one reads and decompresses the dump, one
  extracts, one writes; all joined, so their CPU time is counted), so on a machine with several
  cores its wall clock benefits from parallelism that wikipairs (one process, whose only helper
  is a decompression thread) mostly does not get. The per-CPU-second ratio ("per core") is the
  fair comparison of the work each does; the wall-clock ratio is what a user waits. Both are
  printed, with the MB/s ratio (the inverse ratio of wall times on the same input).
* Timings on a shared or virtual machine are noisy, a small file especially; use `--repeat 3`
  for figures to quote, and compare runs made on the same machine only.

Usage (from the repository root, or `make bench`):

    .venv/bin/python benchmarks/parse_throughput.py [--input DUMP] [--scaled N] [--repeat K]
                                                    [--json OUT] [--pinned]

`--pinned` adds the comparison of the two whole commands on one core (taskset -c 0), on the
largest file: `wikipairs parse` (both passes, writing its Parquet shards) against
`wikiextractor --no-templates --processes 1` (writing its text files).
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from importlib import metadata

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(REPO_ROOT), "shared")
DEFAULT_INPUT = os.path.join(SHARED, "data", "wiki", "enwiki-sample-gensim.xml.bz2")
SCALE_DUMP = os.path.join(SHARED, "tools", "scale_dump.py")
CACHE_DIR = os.path.join(tempfile.gettempdir(), "wikipairs-bench")

# English sentence splitting uses the installed punkt_tab model; set before importing wikipairs.
os.environ.setdefault("NLTK_DATA", os.path.join(SHARED, "data", "nltk_data"))

from wikipairs.reading import read_pages  # noqa: E402
from wikipairs.parse import ParseConfig, iter_articles  # noqa: E402
from wikipairs.pairs.quality import leaking_sentences  # noqa: E402


@dataclass
class Run:
    """One timed run of one tool on one file."""

    tool: str
    articles: int
    wall_s: float
    cpu_s: float
    extra: dict = field(default_factory=dict)  # wikipairs: counts, leak metric, splitter

    def rates(self, wikitext_mb: float) -> dict:
        return {"articles_per_s": self.articles / self.wall_s,
                "articles_per_cpu_s": self.articles / self.cpu_s,
                "wikitext_mb_per_s": wikitext_mb / self.wall_s,
                "wikitext_mb_per_cpu_s": wikitext_mb / self.cpu_s}


# ---------------------------------------------------------------- inputs

def sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def dump_suffix(path: str) -> str:
    """'.xml.bz2' for 'x.xml.bz2': the scaled copy keeps the input's format and compression."""
    name = os.path.basename(path)
    return name[name.index("."):] if "." in name else ""


def scaled_copy(path: str, copies: int) -> tuple[str, float | None]:
    """(path of the input scaled `copies` times, seconds it took to build; None when cached)."""
    os.makedirs(CACHE_DIR, exist_ok=True)
    target = os.path.join(CACHE_DIR, f"{sha256_file(path)[:16]}-x{copies}{dump_suffix(path)}")
    if os.path.exists(target):
        return target, None
    partial = f"{target}.{os.getpid()}.partial{dump_suffix(path)}"
    start = time.perf_counter()
    subprocess.run([sys.executable, SCALE_DUMP, path, partial, "--copies", str(copies)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.replace(partial, target)  # complete files only in the cache
    return target, time.perf_counter() - start


def wikitext_mb(path: str) -> float:
    """Raw wikitext of main-namespace, non-redirect pages, in MB (10**6 bytes) of UTF-8."""
    size = sum(len(page.text.encode("utf-8")) for page in read_pages([path])
               if page.ns == 0 and page.redirect is None)
    return size / 1e6


# ---------------------------------------------------------------- the two tools

def run_wikipairs(path: str) -> Run:
    """Parse `path` into Articles in this process; the leak check's own time is not counted."""
    counts, info = Counter(), {}
    sentences = leaking = 0
    skip_wall = skip_cpu = 0.0
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for article in iter_articles(ParseConfig(inputs=[path], output=""), counts, info):
        w, c = time.perf_counter(), time.process_time()
        total, leaks = leaking_sentences([article])
        sentences, leaking = sentences + total, leaking + len(leaks)
        skip_wall += time.perf_counter() - w
        skip_cpu += time.process_time() - c
    wall = time.perf_counter() - wall0 - skip_wall
    cpu = time.process_time() - cpu0 - skip_cpu
    extra = {"counts": parse_counts(counts), "sentence_splitter": info["sentence_splitter"],
             "leak": {"sentences": sentences, "leaking": leaking,
                      "share_percent": 100.0 * leaking / sentences if sentences else 0.0}}
    return Run("wikipairs", counts["articles"], wall, cpu, extra)


def parse_counts(counts: Counter) -> dict:
    """The counts `wikipairs parse` reports in parse_stats.json, plus its other counters."""
    main = ("pages_read", "articles", "redirects", "sentences", "links")
    return {
        "pages": counts["pages_read"], "articles": counts["articles"],
        "redirects": counts["redirects"],
        "skipped": {k[len("skipped_"):]: v for k, v in sorted(counts.items())
                    if k.startswith("skipped_")},
        "sentences": counts["sentences"], "links": counts["links"],
        "other": {k: v for k, v in sorted(counts.items())
                  if k not in main and not k.startswith("skipped_")},
    }


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_wikiextractor(path: str) -> Run:
    """WikiExtractor on `path` as a subprocess, writing into a temporary folder."""
    with tempfile.TemporaryDirectory(prefix="wikiextractor-") as out:
        command = [sys.executable, "-m", "wikiextractor.WikiExtractor", "--no-templates",
                   "--processes", "1", "-q", "-o", out, path]
        cpu0, wall0 = children_cpu(), time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
        wall, cpu = time.perf_counter() - wall0, children_cpu() - cpu0
        if done.returncode != 0:
            raise RuntimeError(f"wikiextractor failed ({done.returncode}): {done.stderr[-2000:]}")
        return Run("wikiextractor", count_docs(out), wall, cpu)


def run_command_pinned(tool: str, path: str, core: int) -> Run:
    """The whole command of `tool` ("wikipairs parse", writing its Parquet shards, or
    WikiExtractor) on `path`, pinned to one core with taskset: what a user waits for when one
    core is all there is. CPU time as in run_wikiextractor."""
    with tempfile.TemporaryDirectory(prefix="pinned-") as out:
        if tool == "wikipairs":
            command = [sys.executable, "-m", "wikipairs.cli", "parse", "-i", path, "-o",
                       os.path.join(out, "p"), "-q"]
        else:
            command = [sys.executable, "-m", "wikiextractor.WikiExtractor", "--no-templates",
                       "--processes", "1", "-q", "-o", out, path]
        cpu0, wall0 = children_cpu(), time.perf_counter()
        done = subprocess.run(["taskset", "-c", str(core), *command], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        wall, cpu = time.perf_counter() - wall0, children_cpu() - cpu0
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr[-2000:]}")
        if tool == "wikipairs":
            with open(os.path.join(out, "p", "parse_stats.json")) as f:
                articles = json.load(f)["articles"]
        else:
            articles = count_docs(out)
        return Run(f"{tool} (1 core)", articles, wall, cpu)


def bench_pinned(path: str, repeat: int, core: int = 0) -> dict:
    """`wikipairs parse` against WikiExtractor, both whole commands pinned to core `core`,
    alternating, best of `repeat` each."""
    best: dict[str, Run] = {}
    for _ in range(repeat):
        for tool in ("wikipairs", "wikiextractor"):
            run = run_command_pinned(tool, path, core)
            if tool not in best or run.wall_s < best[tool].wall_s:
                best[tool] = run
    ours, theirs = best["wikipairs"], best["wikiextractor"]
    ratio = theirs.wall_s / ours.wall_s
    print(f"\n== whole commands pinned to core {core} (taskset): {os.path.basename(path)}")
    for run in (ours, theirs):
        print(f"{run.tool:<26}{run.articles:>7,} articles {run.wall_s:>8.2f} s wall "
              f"{run.cpu_s:>8.2f} s CPU")
    print(f"`wikipairs parse` / WikiExtractor, wall time on one core: x{ratio:.2f} "
          f"(above 1: wikipairs is faster)")
    return {"path": path, "core": core, "runs": [asdict(ours), asdict(theirs)],
            "wall_ratio_wikipairs_over_wikiextractor": ratio}


def count_docs(folder: str) -> int:
    """Number of `<doc ` lines in WikiExtractor's output files (one per article)."""
    total = 0
    for name in glob.glob(os.path.join(folder, "**", "*"), recursive=True):
        if os.path.isfile(name):
            with open(name, encoding="utf-8", errors="replace") as f:
                total += sum(1 for line in f if line.startswith("<doc "))
    return total


def best_of(repeat: int, run_once, path: str) -> Run:
    """The fastest (by wall clock) of `repeat` runs."""
    return min((run_once(path) for _ in range(repeat)), key=lambda run: run.wall_s)


# ---------------------------------------------------------------- report

def ratios(ours: dict, theirs: dict) -> dict:
    """wikipairs / wikiextractor for each rate; above 1 means wikipairs is faster."""
    return {key: ours[key] / theirs[key] for key in ours}


def print_table(label: str, path: str, mb: float, runs: list[Run]) -> None:
    print(f"\n== {label}: {os.path.basename(path)} "
          f"({os.path.getsize(path) / 1e6:.1f} MB on disk, {mb:.2f} MB of article wikitext)")
    header = f"{'tool':<14}{'articles':>9}{'wall s':>9}{'CPU s':>9}{'art/s':>9}" \
             f"{'art/CPU-s':>11}{'MB/s':>8}"
    print(header)
    print("-" * len(header))
    for run in runs:
        r = run.rates(mb)
        print(f"{run.tool:<14}{run.articles:>9,}{run.wall_s:>9.2f}{run.cpu_s:>9.2f}"
              f"{r['articles_per_s']:>9.1f}{r['articles_per_cpu_s']:>11.1f}"
              f"{r['wikitext_mb_per_s']:>8.3f}")


def print_ratios(q: dict) -> None:
    print(f"wikipairs / wikiextractor: articles/s (wall) x{q['articles_per_s']:.2f}, "
          f"articles per CPU-second ('per core') x{q['articles_per_cpu_s']:.2f}, "
          f"wikitext MB/s (wall) x{q['wikitext_mb_per_s']:.2f}, "
          f"wikitext MB per CPU-second x{q['wikitext_mb_per_cpu_s']:.2f}")


def print_wikipairs_details(run: Run) -> None:
    c, leak = run.extra["counts"], run.extra["leak"]
    skipped = ", ".join(f"{k} {v:,}" for k, v in c["skipped"].items()) or "none"
    print(f"wikipairs counts: pages {c['pages']:,}, articles {c['articles']:,}, "
          f"redirects {c['redirects']:,}, skipped: {skipped}; sentences {c['sentences']:,}, "
          f"links {c['links']:,}")
    print(f"markup leak: {leak['leaking']:,} of {leak['sentences']:,} sentences "
          f"({leak['share_percent']:.3f}%)  [sentence splitter: {run.extra['sentence_splitter']}]")


# ---------------------------------------------------------------- main

def bench_file(label: str, path: str, repeat: int) -> dict:
    mb = wikitext_mb(path)
    runs = [best_of(repeat, run_wikipairs, path), best_of(repeat, run_wikiextractor, path)]
    ours, theirs = (run.rates(mb) for run in runs)
    print_table(label, path, mb, runs)
    q = ratios(ours, theirs)
    print_ratios(q)
    print_wikipairs_details(runs[0])
    return {"label": label, "path": path, "bytes": os.path.getsize(path), "wikitext_mb": mb,
            "runs": [asdict(run) | {"rates": run.rates(mb)} for run in runs],
            "ratios_wikipairs_over_wikiextractor": q}


def environment() -> dict:
    return {"python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "wikipairs": metadata.version("wikipairs"),
            "wikiextractor": metadata.version("wikiextractor"),
            "nltk_data": os.environ["NLTK_DATA"]}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", default=DEFAULT_INPUT,
                    help="dump file (default: ../shared/data/wiki/enwiki-sample-gensim.xml.bz2)")
    ap.add_argument("--scaled", type=int, default=10, metavar="N",
                    help="also benchmark a copy of the input scaled N times (0: skip; default 10)")
    ap.add_argument("--repeat", type=int, default=1, metavar="K",
                    help="run each tool K times per file and keep the fastest (default 1)")
    ap.add_argument("--json", metavar="OUT", help="write the figures to this JSON file")
    ap.add_argument("--pinned", action="store_true",
                    help="also time both whole commands pinned to one core (taskset) on the "
                         "largest file: `wikipairs parse` writing shards against WikiExtractor")
    args = ap.parse_args(argv)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    if not os.path.isfile(args.input):
        ap.error(f"{args.input}: no such file")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    env = environment()
    print(f"python {env['python']} on {env['cpus']} CPUs; wikipairs {env['wikipairs']}, "
          f"wikiextractor {env['wikiextractor']}; best of {args.repeat}")
    files = [("original", args.input)]
    scale = None
    if args.scaled > 1:
        scaled, seconds = scaled_copy(args.input, args.scaled)
        scale = {"copies": args.scaled, "path": scaled, "build_s": seconds}
        print(f"scaled copy x{args.scaled}: {scaled} "
              + ("(cached)" if seconds is None else f"(built in {seconds:.1f} s)"))
        files.append((f"scaled x{args.scaled}", scaled))
    results = [bench_file(label, path, args.repeat) for label, path in files]
    pinned = bench_pinned(files[-1][1], args.repeat) if args.pinned else None
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"environment": env, "repeat": args.repeat, "scaled": scale,
                       "files": results, "pinned": pinned}, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
