"""The sha256 of every shard built from every real dump: the record that a refactoring changed
no byte of the output.

    python tools/shard_fingerprint.py -o before.json      # on the old commit
    python tools/shard_fingerprint.py -o after.json       # on the new one
    python tools/shard_fingerprint.py --compare before.json after.json

`--source CHECKOUT` runs the wikipairs of another checkout (e.g. a `git worktree` of the old
commit) with this environment's libraries, so both records can be taken side by side.

For each dump in ../shared/data/wiki: `wikipairs parse` and `wikipairs build` (all tasks, both
formats) with --workers 1 and --workers 2, and one build with a SentencePiece vocabulary trained
on the first dump (--vocab). Only the shards are hashed (Parquet, TFRecord): stats.json and the
manifest carry timings and paths.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
WIKI = os.path.join(HERE, "..", "..", "shared", "data", "wiki")
SHARDS = (".parquet", ".tfrecord.gz", ".tfrecord")
VOCAB_DUMP = "enwiki-sample-gensim.xml.bz2"


ENV = dict(os.environ)
PACKAGES = {"pipelines": "pipelines", "schemas": "schemas", "trainer": "trainer"}


def use_checkout(source: str, work: str) -> None:
    """Import wikipairs from `source`: a package folder of links laid out as installed
    (pipelines/, schemas/, trainer/ under wikipairs/), first on PYTHONPATH."""
    package = os.path.join(work, "src", "wikipairs")
    os.makedirs(package)
    core = os.path.join(os.path.abspath(source), "wikipairs")
    for name in os.listdir(core):
        os.symlink(os.path.join(core, name), os.path.join(package, name))
    for name, folder in PACKAGES.items():
        os.symlink(os.path.join(os.path.abspath(source), folder), os.path.join(package, name))
    ENV["PYTHONPATH"] = os.path.join(work, "src")


def wikipairs(*args: str) -> None:
    command = [sys.executable, "-m", "wikipairs.cli", *args]
    done = subprocess.run(command, capture_output=True, text=True, env=ENV)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")


def hashes(folder: str) -> dict[str, str]:
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(SHARDS):
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    found[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return dict(sorted(found.items()))


def fingerprint_dump(dump: str, work: str, vocab: str) -> dict[str, dict[str, str]]:
    name = os.path.basename(dump).split(".")[0]
    truncated = ["--allow-truncated"] if "truncated" in name else []
    runs = {
        "parse": ["parse", "-i", dump, *truncated],
        "build-w1": ["build", "-i", dump, "--workers", "1", *truncated],
        "build-w2": ["build", "-i", dump, "--workers", "2", *truncated],
    }
    if os.path.basename(dump) == VOCAB_DUMP:
        runs["build-vocab"] = ["build", "-i", dump, "--workers", "2", "--vocab", vocab]
    result = {}
    for run, args in runs.items():
        out = os.path.join(work, name, run)
        wikipairs(*args, "-o", out, "--quiet")
        result[f"{name}/{run}"] = hashes(out)
    return result


def record(output: str, jobs: int, source: str | None) -> None:
    dumps = sorted(os.path.join(WIKI, f) for f in os.listdir(WIKI))
    with tempfile.TemporaryDirectory() as work:
        if source:
            use_checkout(source, work)
        vocab = os.path.join(work, "spm.model")
        wikipairs("vocab", "-i", os.path.join(WIKI, VOCAB_DUMP), "-o", vocab, "--vocab-size", "2000")
        with ThreadPoolExecutor(jobs) as pool:
            parts = pool.map(lambda d: fingerprint_dump(d, work, vocab), dumps)
        table = {k: v for part in parts for k, v in part.items()}
    with open(output, "w") as f:
        json.dump(table, f, indent=1, sort_keys=True)
    print(f"{sum(len(v) for v in table.values())} shards from {len(dumps)} dumps -> {output}")


def compare(before: str, after: str) -> int:
    with open(before) as f:
        old = json.load(f)
    with open(after) as f:
        new = json.load(f)
    changed = 0
    for run in sorted(set(old) | set(new)):
        a, b = old.get(run, {}), new.get(run, {})
        for shard in sorted(set(a) | set(b)):
            if a.get(shard) != b.get(shard):
                changed += 1
                print(f"differs: {run}/{shard}")
    total = sum(len(v) for v in old.values())
    print(f"{changed} of {total} shards differ" if changed else f"all {total} shards identical")
    return 1 if changed else 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--source", help="a checkout whose wikipairs to run (default: installed)")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        raise SystemExit(compare(*args.compare))
    if not args.output:
        parser.error("-o or --compare")
    record(args.output, args.jobs, args.source)


if __name__ == "__main__":
    main()
