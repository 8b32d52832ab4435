"""Experiment: the paper's Table (ReQA SQuAD, 5% fine-tuning split) at a scale this machine runs.

    .venv/bin/python benchmarks/reqa_small.py                       # defaults below, ~15 min on 2 CPUs
    .venv/bin/python benchmarks/reqa_small.py --methods No-SSL,ICT --temperature 0.05 --model-opt normalize=true

Steps (each a `wikipairs` command, so this is also an end-to-end run of the tool):
1. `wikipairs vocab` on the English real dumps in ../shared/data/wiki, then `wikipairs build --task all
   --vocab` on the same dumps (the pre-training pairs);
2. `wikipairs reqa build` on SQuAD v1.1 dev and `wikipairs reqa pairs --train-percent 5` (fine-tuning
   pairs: 5% of the questions; the other 95% are the test questions, cold start);
3. for each pre-training method, `tiny` towers: No-SSL (no pre-training: the fine-tuning alone, from
   random weights), MLM (`--objective mlm`), ICT, ICT+BFS+WLP; then `wikipairs train finetune` on the
   5% split, export (trainer/export.py) and `wikipairs reqa eval` on the 95% test split;
4. BM25 on the same split; prints the paper-style table (R@1/5/10/50/100, both protocols).
With `--squad-passages` the SQuAD dev paragraphs join the dumps as a passage corpus (step 1).
The numbers are what they are at this scale: a few hundred steps of a 2-layer model on ~100 articles.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
DUMPS = ["enwiki-sample-gensim.xml.bz2", "enwiki-minidump-dbpedia.xml.bz2",
         "enwiki-table-markup.xml.bz2"]
METHODS = {"No-SSL": None, "MLM": ("mlm", "ict,bfs,wlp"), "ICT": ("two-tower", "ict"),
           "ICT+BFS+WLP": ("two-tower", "ict,bfs,wlp")}


def wikipairs(*args, log: Path) -> None:
    cmd = [sys.executable, "-m", "wikipairs.cli", *map(str, args)]
    started = time.monotonic()
    with open(log, "a") as f:
        f.write("$ wikipairs " + " ".join(map(str, args)) + "\n")
        f.flush()
        result = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    print(f"  [{time.monotonic() - started:6.1f} s] wikipairs {args[0]} {args[1] if len(args) > 1 else ''}",
          flush=True)
    if result.returncode != 0:
        raise SystemExit(f"failed: wikipairs {' '.join(map(str, args))} (see {log})")


def export(model_dir: Path, out: Path) -> None:
    code = ("import sys; from wikipairs.trainer.train import load_model; "
            "from wikipairs.trainer.export import export_saved_model; "
            "export_saved_model(load_model(sys.argv[1]), sys.argv[1] + '/spm.model', sys.argv[2])")
    subprocess.run([sys.executable, "-c", code, str(model_dir), str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/wikipairs-reqa-small"))
    ap.add_argument("--pretrain-steps", type=int, default=1500)
    ap.add_argument("--finetune-steps", type=int, default=400)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--model-opt", action="append", default=["max_query_len=48", "max_doc_len=128", "dropout=0",
                                                       "attention_dropout=0"],
                    help="ModelConfig overrides (shorter documents keep the CPU run short; "
                         "without dropout tiny towers from scratch start learning ~3x sooner)")
    ap.add_argument("--pretrain-lr", default="1e-3")
    ap.add_argument("--finetune-lr", default="5e-4")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--temperature", default=None,
                    help="softmax temperature for pre-training and fine-tuning (with normalize=1)")
    ap.add_argument("--methods", default=",".join(METHODS),
                    help="comma-separated subset of: " + ", ".join(METHODS))
    ap.add_argument("--json", type=Path)
    ap.add_argument("--squad-passages", action="store_true",
                    help="add the SQuAD dev paragraphs (no questions) to the vocabulary and "
                         "pre-training corpus as a passage corpus (`wikipairs reqa passages`; "
                         "ICT and BFS pairs), as the paper's Wikipedia holds them; use a fresh "
                         "--work (its steps are cached there)")
    args = ap.parse_args()
    os.environ.setdefault("NLTK_DATA", str(SHARED / "nltk_data"))
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    log = work / "log.txt"
    inputs = [x for d in DUMPS for x in ("-i", SHARED / "wiki" / d)]
    if args.squad_passages:
        corpus = work / "squad-passages.jsonl"
        if not corpus.exists():
            wikipairs("reqa", "passages", "--squad", SHARED / "squad" / "dev-v1.1.json", "-o",
                      corpus, log=log)
        inputs += ["-i", corpus]
    model_opts = [x for o in args.model_opt for x in ("--model-opt", o)]
    methods = args.methods.split(",")
    if unknown := set(methods) - set(METHODS):
        ap.error(f"unknown methods: {', '.join(sorted(unknown))}")
    common = ["--batch-size", args.batch, "--quiet", "--no-tensorboard", "--checkpoint-every", 10**6,
              "--vocab", work / "spm.model"]
    print("data (steps whose output is already in --work are skipped)", flush=True)
    if not (work / "spm.model").exists():
        wikipairs("vocab", *inputs, "-o", work / "spm.model", "--vocab-size", args.vocab_size,
                  log=log)
    if not (work / "pairs" / "manifest.json").exists():
        wikipairs("build", *inputs, "-o", work / "pairs", "--vocab", work / "spm.model",
                  "--quiet", log=log)
    if not (work / "reqa" / "manifest.json").exists():
        wikipairs("reqa", "build", "--squad", SHARED / "squad" / "dev-v1.1.json", "-o",
                  work / "reqa", log=log)
    if not (work / "ft" / "split.json").exists():
        wikipairs("reqa", "pairs", "--data", work / "reqa", "--vocab", work / "spm.model",
                  "--train-percent", 5, "-o", work / "ft", log=log)
    results = {}
    if args.temperature:
        common += ["--temperature", args.temperature]
    for name in methods:
        method = METHODS[name]
        print(name, flush=True)
        slug = name.lower().replace("+", "-").replace(" ", "")
        tuned = work / f"ft-{slug}"
        if method is None:  # no pre-training: the same fine-tuning from random weights
            wikipairs("train", "pretrain", "-d", work / "ft", "-o", tuned, "--model", args.model,
                      *model_opts, "--tasks", "reqa", "--steps", args.finetune_steps, "--lr",
                      args.finetune_lr, *common, log=log)
        else:
            objective, tasks = method
            pre = work / f"pre-{slug}"
            wikipairs("train", "pretrain", "-d", work / "pairs", "-o", pre, "--model", args.model,
                      *model_opts, "--objective", objective, "--tasks", tasks, "--steps",
                      args.pretrain_steps, "--lr", args.pretrain_lr, *common, log=log)
            wikipairs("train", "finetune", "-d", work / "ft", "-o", tuned, "--init", pre,
                      "--tasks", "reqa", "--steps", args.finetune_steps, "--lr", args.finetune_lr,
                      *common, log=log)
        export(tuned, work / f"export-{slug}")
        out = work / f"eval-{slug}.json"
        wikipairs("reqa", "eval", "--model", work / f"export-{slug}", "--data", work / "reqa",
                  "--split", "test", "--train-percent", 5, "--json", out, "-q", log=log)
        results[name] = json.loads(out.read_text())
    out = work / "eval-bm25.json"
    wikipairs("reqa", "eval", "--model", "bm25", "--data", work / "reqa", "--split", "test",
              "--train-percent", 5, "--json", out, "-q", log=log)
    results["BM25"] = json.loads(out.read_text())
    print_table(results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                         "results": results}, indent=2) + "\n")


def print_table(results: dict) -> None:
    for protocol in ("paper", "reqa"):
        print(f"\nReQA SQuAD, 5% fine-tuning / 95% test, protocol {protocol!r}")
        print(f"{'method':<14}" + "".join(f"{h:>8}" for h in ("R@1", "R@5", "R@10", "R@50", "R@100",
                                                                "MRR")))
        for name, result in results.items():
            row = _protocol(result, protocol)
            print(f"{name:<14}" + "".join(f"{row.get(k, float('nan')):>8.2f}"
                                          for k in ("R@1", "R@5", "R@10", "R@50", "R@100", "MRR")))


def _protocol(result: dict, protocol: str) -> dict:
    """The recall row of one protocol from `wikipairs reqa eval --json` output (percentages)."""
    block = result.get("protocols", result).get(protocol, {})
    return {k: (v * 100 if isinstance(v, float) and v <= 1 else v) for k, v in block.items()}


if __name__ == "__main__":
    main()
