"""Benchmark: `wikipairs build` with one worker against one per core, on inputs from tiny to a
few tens of MB, and which of the two the default (`--workers 0`: reading.splits.auto_workers)
takes.

    .venv/bin/python benchmarks/build_workers.py            # ~4 min on 2 cores
    .venv/bin/python benchmarks/build_workers.py --rounds 3 --json out/workers.json

A DirectRunner worker process costs seconds to start (Beam's and wikipairs' imports, then a
bundle per stage on every worker), so on a small input one process beats two; on a large one two
win. For each input it prints the best wall time of `--workers 1` and of `--workers <cores>`
over `--rounds` runs (alternating, so a slow spell of the host hits both), the count the
default takes (the driver passes exactly that to Beam: tests/test_auto_workers.py) and its time
over the better one's (1.00: the default takes the faster). The break-even it shows is where
pipelines.driver.BYTES_PER_WORKER comes from. Inputs: the bundled 48-page sample, the gensim
sample (206 pages, 1.7 MB bz2) and the gensim sample scaled x10 (one bz2 stream, 17 MB;
cached as build_throughput.py caches it).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_throughput import DEFAULT_INPUT, REPO, run_build, scaled  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=10, help="the scaled copy of the gensim sample")
    ap.add_argument("--rounds", type=int, default=2, help="runs of each count; the best is kept")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    from wikipairs.pipelines.driver import BYTES_PER_WORKER
    from wikipairs.reading.splits import auto_workers, input_work_bytes, plan_splits
    cores = os.cpu_count() or 1
    inputs = [REPO / "wikipairs" / "data" / "sample.xml.bz2", DEFAULT_INPUT,
              scaled(DEFAULT_INPUT, args.copies)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for path in inputs:
            chosen = auto_workers(cores, input_work_bytes([str(path)]), BYTES_PER_WORKER,
                                  units=len(plan_splits([str(path)])))
            counts = sorted({1, chosen, cores})
            walls = {n: [] for n in counts}
            for _ in range(args.rounds):
                for n in counts:
                    walls[n].append(run_build(path, n, Path(tmp) / f"out-{n}")["wall_s"])
            best = {n: min(w) for n, w in walls.items()}
            row = {"input": path.name, "mb": round(path.stat().st_size / 2**20, 2),
                   "wall_s": walls, "default_workers": chosen,
                   "default_over_best": round(best[chosen] / min(best.values()), 2)}
            rows.append(row)
            times = "  ".join(f"{n} worker{'s' * (n > 1)} {best[n]:6.1f} s" for n in counts)
            print(f"{row['input']:<48} {row['mb']:>6.2f} MB  {times}  default: {chosen}, "
                  f"over the best {row['default_over_best']:.2f}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"cores": cores, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
