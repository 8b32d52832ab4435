"""Benchmark: `wikipairs build --task all` on a scaled real dump, against the parse rate x cores.

    .venv/bin/python benchmarks/build_throughput.py                 # gensim x100 and x200, both layouts
    .venv/bin/python benchmarks/build_throughput.py --copies 20 --json out/build.json

In one run it measures:
1. the single-process parse rate (pages/s): `wikipairs.parse.iter_articles` (both passes) on the
   dump scaled `--parse-copies` times (default copies/10, to keep the run short);
2. `wikipairs build --task all` (DirectRunner, `--workers` processes, default all cores) as a
   subprocess on the dump scaled `--copies` times: wall time, pages/s, pairs/s, and the peak RSS
   of the whole process tree (runner and workers, summed, polled from /proc every 0.2 s);
3. the same build on a copy twice as large (skip with --no-double): the peak RSS ratio.
Both builds run for each `--layout`: the scaled dump as Wikimedia's multistream file with its
index (what dumps.wikimedia.org publishes for large wikis: splits by stream offsets, no serial
stage), and as one bz2 stream (decompressed once by a first stage, then cut into parts).
It prints the ratio of (2) to (1) x cores; the targets are >= 0.75 (issue 15; 0.6 before) and a
peak RSS ratio < 1.2. It also runs one parse per core at once (1b): how far the host's cores
scale independent work, and the build's ratio against that.
Scaled copies come from ../shared/tools/scale_dump.py, cached in /tmp/wikipairs-bench/.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DEFAULT_INPUT = SHARED / "data" / "wiki" / "enwiki-sample-gensim.xml.bz2"
CACHE = Path(tempfile.gettempdir()) / "wikipairs-bench"


def scaled(path: Path, copies: int) -> Path:
    if copies <= 1:
        return path
    import hashlib
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    out = CACHE / f"{path.name.split('.')[0]}-{digest}-x{copies}.xml.bz2"
    if not out.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp.bz2")
        subprocess.run([sys.executable, str(SHARED / "tools" / "scale_dump.py"), str(path),
                        str(tmp), "--copies", str(copies)], check=True, stdout=subprocess.DEVNULL)
        os.replace(tmp, out)
    return out


def parse_rate(path: Path) -> dict:
    from collections import Counter

    from wikipairs.parse import ParseConfig, iter_articles
    counts = Counter()
    start, cpu = time.monotonic(), time.process_time()
    articles = sum(1 for _ in iter_articles(ParseConfig(inputs=[str(path)], output=""), counts))
    wall = time.monotonic() - start
    return {"pages": counts["pages_read"], "articles": articles, "wall_s": round(wall, 2),
            "cpu_s": round(time.process_time() - cpu, 2),
            "pages_per_s": round(counts["pages_read"] / wall, 1)}


def concurrent_parse_rate(path: Path, processes: int) -> dict:
    """`processes` single-process parses of `path` started together (one per core): their pages
    over the slowest one's wall time, what the cores give to independent parses at once. Against
    the single-process rate x cores it says how the host scales two busy processes (shared
    caches, memory bandwidth, a hypervisor's vCPUs)."""
    cmd = [sys.executable, __file__, "--parse-only", str(path)]
    start = time.monotonic()
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) for _ in range(processes)]
    runs = [json.loads(proc.communicate()[0]) for proc in procs]
    wall = time.monotonic() - start
    pages = sum(r["pages"] for r in runs)
    return {"processes": processes, "pages": pages, "wall_s": round(wall, 2),
            "pages_per_s": round(pages / max(r["wall_s"] for r in runs), 1), "runs": runs}


def multistream(path: Path, pages_per_stream: int = 100) -> Path:
    """A Wikimedia-style multistream copy of `path` with its index beside it (cached): a header
    stream, streams of `pages_per_stream` pages, a closing stream, and NAME-multistream-index.txt.bz2
    with `offset:page_id:title` per page, as dumps.wikimedia.org publishes them."""
    from wikipairs.reading.splits import write_multistream
    stem = path.name.split(".")[0]
    dump = CACHE / f"{stem}-multistream.xml.bz2"
    index = CACHE / f"{stem}-multistream-index.txt.bz2"
    if not (dump.exists() and index.exists()):
        tmp = dump.with_suffix(".tmp")
        write_multistream(str(path), str(tmp), str(index), pages_per_stream)
        os.replace(tmp, dump)
    return dump


def _tree_rss(root: int) -> int:
    """Summed RSS (bytes) of `root` and all its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
            rss[int(entry)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack.extend(children.get(pid, []))
    return total


def run_build(path: Path, workers: int, output: Path) -> dict:
    cmd = [sys.executable, "-m", "wikipairs.cli", "build", "--task", "all", "-i", str(path),
           "-o", str(output), "--quiet", "--format", "parquet,tfrecord"]
    if workers:
        cmd += ["--workers", str(workers)]
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = [0]

    def poll():
        while proc.poll() is None:
            peak[0] = max(peak[0], _tree_rss(proc.pid))
            time.sleep(0.2)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    out, err = proc.communicate()
    wall = time.monotonic() - start
    poller.join()
    if proc.returncode != 0:
        raise SystemExit(f"build failed ({proc.returncode}):\n{err[-3000:]}")
    stats = json.loads((output / "stats.json").read_text())
    pairs = sum(t["pairs"] for t in stats["tasks"].values())
    pages = stats["counters"]["pages_read"]
    return {"pages": pages, "pairs": pairs, "wall_s": round(wall, 1),
            "pages_per_s": round(pages / wall, 1), "pairs_per_s": round(pairs / wall, 1),
            "peak_rss_mb": round(peak[0] / 2**20), "tasks": stats["tasks"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--input", type=Path, default=DEFAULT_INPUT)
    ap.add_argument("--copies", type=int, default=100)
    ap.add_argument("--parse-copies", type=int, default=0, help="default: copies / 10")
    ap.add_argument("--workers", type=int, default=0, help="default: all cores")
    ap.add_argument("--layout", choices=("multistream", "single", "both"), default="both",
                    help="multistream: the scaled dump as Wikimedia's multistream file + index "
                         "(split by stream offsets); single: one bz2 stream (decompressed once "
                         "by a first stage, then cut); default both")
    ap.add_argument("--no-double", action="store_true")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--parse-only", type=Path, help=argparse.SUPPRESS)  # a concurrent parse
    args = ap.parse_args()
    os.environ.setdefault("NLTK_DATA", str(SHARED / "data" / "nltk_data"))
    if args.parse_only:
        print(json.dumps(parse_rate(args.parse_only)))
        return
    cores = args.workers or os.cpu_count() or 1
    small = scaled(args.input, args.parse_copies or max(1, args.copies // 10))
    print(f"single-process parse on {small.name} ...", flush=True)
    parse = parse_rate(small)
    print(f"  {parse}", flush=True)
    print(f"{cores} such parses at once ...", flush=True)
    together = concurrent_parse_rate(small, cores)
    scaling = together["pages_per_s"] / (parse["pages_per_s"] * cores)
    print(f"  {together['pages_per_s']} pages/s: {scaling:.2f} of {cores} x one", flush=True)
    results = {"cores": cores, "parse": parse, "concurrent_parse": together,
               "parse_scaling": round(scaling, 2), "layouts": {}}
    layouts = ("multistream", "single") if args.layout == "both" else (args.layout,)
    sizes = [args.copies] + ([] if args.no_double else [args.copies * 2])
    with tempfile.TemporaryDirectory(prefix="wikipairs-build-bench-") as tmp:
        for layout in layouts:
            runs = results["layouts"][layout] = {}
            for copies in sizes:
                path = scaled(args.input, copies)
                if layout == "multistream":
                    path = multistream(path)
                print(f"build --task all on {path.name} ({cores} workers) ...", flush=True)
                runs[copies] = run_build(path, args.workers, Path(tmp) / f"{layout}-x{copies}")
                print(f"  {runs[copies]}", flush=True)
    print()
    print(f"{'':<34}{'pages':>9}{'wall s':>9}{'pages/s':>9}{'pairs/s':>10}{'peak RSS MB':>13}")
    print(f"{'parse, 1 process':<34}{parse['pages']:>9,}{parse['wall_s']:>9}"
          f"{parse['pages_per_s']:>9}{'':>10}{'':>13}")
    for layout, runs in results["layouts"].items():
        for copies, r in runs.items():
            print(f"{f'build all, {layout}, x{copies}':<34}{r['pages']:>9,}{r['wall_s']:>9}"
                  f"{r['pages_per_s']:>9}{r['pairs_per_s']:>10}{r['peak_rss_mb']:>13,}")
    print()
    for layout, runs in results["layouts"].items():
        first = runs[sizes[0]]
        ratio = first["pages_per_s"] / (parse["pages_per_s"] * cores)
        runs["ratio_to_parse_x_cores"] = round(ratio, 2)
        against_together = first["pages_per_s"] / together["pages_per_s"]
        runs["ratio_to_concurrent_parse"] = round(against_together, 2)
        line = f"{layout:<12} build pages/s / (parse pages/s x {cores} cores) = {ratio:.2f} " \
               f"(target >= 0.75); / {cores} parses at once = {against_together:.2f}"
        if len(sizes) > 1:
            rss = runs[sizes[1]]["peak_rss_mb"] / max(1, first["peak_rss_mb"])
            runs["peak_rss_ratio_2x"] = round(rss, 2)
            line += f"; peak RSS x{sizes[1]} / x{sizes[0]} = {rss:.2f} (target < 1.2)"
        print(line)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
