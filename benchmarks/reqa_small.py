"""Experiment: the paper's Table (ReQA SQuAD, fine-tuning splits, zero-shot) at a scale this machine runs.

    .venv/bin/python benchmarks/reqa_small.py --squad-passages --work /tmp/rs-in \\
        --model bow --model-opt normalize=true --temperature 0.05 --batch 128 --pretrain-steps 3000 \\
        --train-percents 5,80 --methods No-SSL,ICT,ICT+BFS+WLP,ICT+BFS+WLP+HN --json rs-in.json
    .venv/bin/python benchmarks/reqa_small.py --exclude-squad --work /tmp/rs-ex ...   # the other way
    .venv/bin/python benchmarks/reqa_small.py --dumps legacy --train-percents 5 --no-zero-shot \\
        --model tiny                                          # the first version's run (3 dumps, 5%)

Steps (each a `wikipairs` command, so this is also an end-to-end run of the tool):
1. `wikipairs vocab` and `wikipairs build --task all --vocab` on the English real dumps in
   ../shared/data/wiki (`--dumps all`: every enwiki-*.xml.bz2; `--dumps legacy`: the three of the
   first version). With `--squad-passages` the SQuAD dev paragraphs (no questions) join them as a
   passage corpus, as the paper's Wikipedia holds them; with `--exclude-squad` the build gets
   `--exclude dev-v1.1.json` instead (the pages SQuAD comes from and every pair sharing a 13-token
   n-gram with it are dropped; issue 20), and the vocabulary is trained on the dumps alone.
   A method with hard negatives (ICT+HN, ICT+BFS+WLP+HN) reads a second build with
   `--hard-negatives N` (--hard-negatives, default 3);
2. `wikipairs reqa build` on SQuAD v1.1 dev and, per `--train-percents` P, `wikipairs reqa pairs
   --train-percent P` (fine-tuning pairs: P% of the questions; the rest are its test questions);
3. per method: No-SSL (no pre-training: the fine-tuning alone, from random weights), MLM
   (`--objective mlm`), ICT, ICT+BFS+WLP, ICT+BFS+WLP+HN (`train pretrain --hard-negatives N`),
   ICT+HN (its baseline),
   and two ablations, ICT+BFS and ICT+WLP (which of the two costs ICT its paragraphs), and
   BFS+WLP>ICT (the tasks in sequence: BFS+WLP for --first-steps, then `train finetune --init`
   on ICT alone for --pretrain-steps).
   Each pre-trained model is exported and evaluated zero-shot on every split's test questions,
   then fine-tuned per split (`wikipairs train finetune`), exported (trainer/export.py) and
   evaluated (`wikipairs reqa eval`) on that split's test questions and on its training
   questions (recall on the training split beside the test recall: over- or under-fitting);
4. BM25 on the same test questions; prints the pre-training learning curves (train_log.jsonl,
   eval.json) and the table: method x (zero-shot, each split) with R@1, R@10, R@100 (protocol
   "paper"); `--json` writes everything. Each evaluation keeps its per-query ranks beside its
   eval-*.json as ranks-*.parquet: `wikipairs reqa compare A B` tests any two runs' difference.
Every step whose output is already in --work is skipped (a stopped run goes on where it was).

Settings sweep (choose on the validation questions, `--eval-split valid`): `--pretrain-steps`,
`--finetune-steps` and `--finetune-lr` take comma-separated values, and each pre-trained model is
fine-tuned with every (steps, lr) pair; a fine-tuning value may be given per split as P:V
(`--finetune-steps 5:100,80:400`). A swept setting (more than one value for a split) goes into
the directory names (pre-ict-p1000, ft-ict-p1000-5-s100-lr1e-3); with single values the names
are pre-<method> and ft-<method>-<P> as before. The run ends with the sweep grid and, per
setting, the mean over the methods.

Pair and mixing settings: `--ict-queries N` builds up to N ICT pairs per passage (`wikipairs build
--ict-queries`; a corpus setting, so a fresh --work); `--task-mix pairs` mixes the tasks of
ICT+BFS+WLP in proportion to their pairs (`train pretrain --task-weights`) instead of uniformly;
`--page-negatives` pre-trains with clean negatives by page (`train pretrain --page-negatives`).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
SQUAD = SHARED / "squad" / "dev-v1.1.json"
LEGACY_DUMPS = ["enwiki-sample-gensim.xml.bz2", "enwiki-minidump-dbpedia.xml.bz2",
                "enwiki-table-markup.xml.bz2"]
# name: (objective, tasks, with hard negatives: --hard-negatives of them) or None (no pre-training)
METHODS = {"No-SSL": None, "MLM": ("mlm", "ict,bfs,wlp", False),
           "ICT": ("two-tower", "ict", False),
           "ICT+BFS+WLP": ("two-tower", "ict,bfs,wlp", False),
           # ablations: which of BFS and WLP costs ICT its paragraphs (not in the paper's table)
           "ICT+BFS": ("two-tower", "ict,bfs", False), "ICT+WLP": ("two-tower", "ict,wlp", False),
           "ICT+BFS+WLP+HN": ("two-tower", "ict,bfs,wlp", True),
           # ICT with its hard negatives alone: the baseline +HN must beat (not in the paper)
           "ICT+HN": ("two-tower", "ict", True),
           # the tasks in sequence, not mixed: BFS+WLP for --first-steps, then ICT alone for
           # --pretrain-steps from those weights (a curriculum; not the paper's mixing)
           "BFS+WLP>ICT": ("two-tower", "bfs,wlp>ict", False)}
KEYS = ("R@1", "R@10", "R@100")


def wikipairs(*args, log: Path) -> float:
    cmd = [sys.executable, "-m", "wikipairs.cli", *map(str, args)]
    started = time.monotonic()
    with open(log, "a") as f:
        f.write("$ wikipairs " + " ".join(map(str, args)) + "\n")
        f.flush()
        result = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT)
    took = time.monotonic() - started
    print(f"  [{took:6.1f} s] wikipairs {args[0]} {args[1] if len(args) > 1 else ''}", flush=True)
    if result.returncode != 0:
        raise SystemExit(f"failed: wikipairs {' '.join(map(str, args))} (see {log})")
    return took


def export(model_dir: Path, out: Path) -> None:
    if (out / "saved_model.pb").exists():
        return
    code = ("import sys; from wikipairs.trainer.train import load_model; "
            "from wikipairs.trainer.export import export_saved_model; "
            "export_saved_model(load_model(sys.argv[1]), sys.argv[1] + '/spm.model', sys.argv[2])")
    subprocess.run([sys.executable, "-c", code, str(model_dir), str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def pretrain_batch_args(method, pretrain_batch: int | None, batch: int) -> tuple[str, list]:
    """(name tag, extra `train pretrain` args) for a pre-training batch other than `batch`; the
    args come after the common ones, so their --batch-size wins (click keeps the last)."""
    if method is None or not pretrain_batch or pretrain_batch == batch:
        return "", []
    return f"-b{pretrain_batch}", ["--batch-size", pretrain_batch]


def slug(name: str) -> str:
    return name.lower().replace("+", "-").replace(">", "-then-").replace(" ", "")


def pct(p: float) -> str:
    return f"{p:g}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=Path, default=Path("/tmp/wikipairs-reqa-small"))
    ap.add_argument("--dumps", default="all",
                    help="all: every ../shared/data/wiki/enwiki-*.xml.bz2; legacy: the three of "
                         "the first version; or comma-separated file names there")
    ap.add_argument("--pretrain-steps", default="1500",
                    help="pre-training steps, comma-separated to sweep")
    ap.add_argument("--finetune-steps", default="400",
                    help="fine-tuning steps, comma-separated to sweep; P:V for the P%% split only "
                         "(5:100,80:400)")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--pretrain-batch", type=int, default=None,
                    help="pre-training batch size if not --batch's (in the names as -b<N>; "
                         "fine-tuning keeps --batch)")
    ap.add_argument("--chunk-size", type=int, default=None,
                    help="GradCache chunk for pre-training (a batch larger than memory allows)")
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--model-opt", action="append", default=["max_query_len=48", "max_doc_len=128", "dropout=0",
                                                       "attention_dropout=0"],
                    help="ModelConfig overrides (shorter documents keep the CPU run short; "
                         "without dropout tiny towers from scratch start learning ~3x sooner)")
    ap.add_argument("--pretrain-lr", default="1e-3",
                    help="pre-training learning rate; comma-separated to sweep (in the names as "
                         "-plr<LR>)")
    ap.add_argument("--finetune-lr", default="5e-4",
                    help="fine-tuning learning rate, like --finetune-steps")
    ap.add_argument("--pretrain-seed", type=int, default=0,
                    help="seed of pre-training (initialization, data order); not 0: the runs' "
                         "names say it (pre-ict-pseed1, ft-ict-pseed1-5)")
    ap.add_argument("--finetune-seeds", default="0",
                    help="seeds of fine-tuning (initialization of No-SSL, data order), "
                         "comma-separated: each setting fine-tuned once per seed")
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--temperature", default=None,
                    help="softmax temperature for pre-training and fine-tuning (with normalize=1)")
    ap.add_argument("--methods", default="No-SSL,MLM,ICT,ICT+BFS+WLP",
                    help="comma-separated subset of: " + ", ".join(METHODS))
    ap.add_argument("--train-percents", default="5",
                    help="fine-tuning splits, comma-separated (paper: 1, 5, 10, 80)")
    ap.add_argument("--ict-queries", type=int, default=1,
                    help="`wikipairs build --ict-queries N`: ICT pairs per passage (a corpus "
                         "setting: a fresh --work per value)")
    ap.add_argument("--task-mix", default="uniform",
                    help="how methods of several tasks mix them in pre-training: uniform (each "
                         "task a third), pairs (in proportion to each task's pairs) or weights "
                         "in the method's task order, e.g. 8:1:1 (`--task-weights`); not "
                         "uniform: the runs' names say it (-mixpairs, -mix8-1-1)")
    ap.add_argument("--first-steps", type=int, default=1000,
                    help="sequential methods (BFS+WLP>ICT): steps of the first phase (default "
                         "1000; in the run's names as -f<N>)")
    ap.add_argument("--page-negatives", action="store_true",
                    help="`train pretrain --page-negatives`: clean negatives by page too (BFS "
                         "rows of one page, WLP rows of one query page); the runs' names say it "
                         "(-pagekeys)")
    ap.add_argument("--task-batches", action="store_true",
                    help="`train pretrain --task-batches`: each batch of a method of several "
                         "tasks from one task; the runs' names say it (-taskbatches)")
    ap.add_argument("--hard-negatives", type=int, default=3,
                    help="hard negatives of the +HN method (build and pre-training)")
    ap.add_argument("--no-zero-shot", dest="zero_shot", action="store_false",
                    help="skip the evaluation of the pre-trained models without fine-tuning")
    ap.add_argument("--no-train-recall", dest="train_recall", action="store_false",
                    help="skip the recall on each split's training questions")
    ap.add_argument("--eval-split", default="test", choices=("test", "valid"),
                    help="questions the table is computed on: test, or valid to choose settings "
                         "(learning rate, batch) without looking at the test questions")
    ap.add_argument("--json", type=Path)
    corpus_opts = ap.add_mutually_exclusive_group()
    corpus_opts.add_argument("--squad-passages", action="store_true",
                             help="add the SQuAD dev paragraphs (no questions) to the vocabulary and "
                                  "pre-training corpus as a passage corpus (`wikipairs reqa passages`; "
                                  "ICT and BFS pairs), as the paper's Wikipedia holds them")
    corpus_opts.add_argument("--exclude-squad", action="store_true",
                             help="`wikipairs build --exclude dev-v1.1.json`: no SQuAD page and no "
                                  "pair sharing a 13-token n-gram with SQuAD dev")
    args = ap.parse_args()
    os.environ.setdefault("NLTK_DATA", str(SHARED / "nltk_data"))
    methods = args.methods.split(",")
    if unknown := set(methods) - set(METHODS):
        ap.error(f"unknown methods: {', '.join(sorted(unknown))}")
    percents = [float(p) for p in args.train_percents.split(",")]
    try:
        pretrain_steps = [int(v) for v in args.pretrain_steps.split(",")]
        pretrain_lrs = args.pretrain_lr.split(",")
        ft_steps = per_split(args.finetune_steps, percents, int)
        ft_lrs = per_split(args.finetune_lr, percents, str)
        ft_seeds = [int(v) for v in args.finetune_seeds.split(",")]
    except ValueError as e:
        ap.error(str(e))
    if args.dumps == "all":
        dumps = sorted(p.name for p in (SHARED / "wiki").glob("enwiki-*.xml.bz2"))
    elif args.dumps == "legacy":
        dumps = LEGACY_DUMPS
    else:
        dumps = args.dumps.split(",")
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    corpus_key = {"dumps": dumps, "squad_passages": args.squad_passages,
                  "exclude_squad": args.exclude_squad, "vocab_size": args.vocab_size,
                  **({"ict_queries": args.ict_queries} if args.ict_queries != 1 else {})}
    key_file = work / "corpus.json"
    if key_file.exists() and json.loads(key_file.read_text()) != corpus_key:
        ap.error(f"{work} holds data of another corpus ({key_file}); use a fresh --work")
    key_file.write_text(json.dumps(corpus_key, indent=1) + "\n")
    log = work / "log.txt"
    times: dict[str, float] = {}
    inputs = [x for d in dumps for x in ("-i", SHARED / "wiki" / d)]
    print(f"corpus: {len(dumps)} English dumps ({', '.join(dumps)})"
          + (" + SQuAD dev paragraphs" if args.squad_passages else "")
          + (", SQuAD dev excluded" if args.exclude_squad else ""), flush=True)
    if args.squad_passages:
        corpus = work / "squad-passages.jsonl"
        if not corpus.exists():
            wikipairs("reqa", "passages", "--squad", SQUAD, "-o", corpus, log=log)
        inputs += ["-i", corpus]
    exclude = ["--exclude", SQUAD] if args.exclude_squad else []
    model_opts = [x for o in args.model_opt for x in ("--model-opt", o)]
    common = ["--batch-size", args.batch, "--quiet", "--no-tensorboard", "--checkpoint-every", 10**6,
              "--vocab", work / "spm.model"]
    if args.temperature:
        common += ["--temperature", args.temperature]
    print("data (steps whose output is already in --work are skipped)", flush=True)
    if not (work / "spm.model").exists():
        times["vocab"] = wikipairs("vocab", *inputs, "-o", work / "spm.model", "--vocab-size",
                                   args.vocab_size, log=log)
    builds = {0: work / "pairs"}
    if args.hard_negatives and any(METHODS[m] and METHODS[m][2] for m in methods):
        builds[args.hard_negatives] = work / f"pairs-hn{args.hard_negatives}"
    for hn, out in builds.items():
        if not (out / "manifest.json").exists():
            times[f"build{'-hn' if hn else ''}"] = wikipairs(
                "build", *inputs, "-o", out, "--vocab", work / "spm.model", *exclude,
                *(["--hard-negatives", hn] if hn else []),
                *(["--ict-queries", args.ict_queries] if args.ict_queries != 1 else []),
                "--quiet", log=log)
    corpus_stats = build_stats(builds[0])
    print("pre-training pairs: " + ", ".join(f"{k} {v}" for k, v in corpus_stats.items()), flush=True)
    if not (work / "reqa" / "manifest.json").exists():
        wikipairs("reqa", "build", "--squad", SQUAD, "-o", work / "reqa", log=log)
    for p in percents:
        if not (work / f"ft{pct(p)}" / "split.json").exists():
            wikipairs("reqa", "pairs", "--data", work / "reqa", "--vocab", work / "spm.model",
                      "--train-percent", p, "-o", work / f"ft{pct(p)}", log=log)

    def evaluate(model: Path, p: float, split: str, out: Path) -> dict:
        ranks = out.with_name(out.name.replace("eval-", "ranks-", 1)).with_suffix(".parquet")
        if not out.exists() or not ranks.exists():  # runs from before --ranks: scored again
            wikipairs("reqa", "eval", "--model", model, "--data", work / "reqa", "--split", split,
                      "--train-percent", p, "--json", out, "--ranks", ranks, "-q", log=log)
        return {**json.loads(out.read_text()), "ranks_file": str(ranks)}

    results: dict = {"zero-shot": {}, **{pct(p): {} for p in percents}}
    curves, heldout = {}, {}
    for name in methods:
        method, s = METHODS[name], slug(name)
        print(name, flush=True)
        started = time.monotonic()
        # No-SSL has no pre-training: one pass, its fine-tuning starts from random weights
        for steps, plr in (itertools.product(pretrain_steps, pretrain_lrs) if method is not None
                           else [(None, None)]):
            ptag = f"-p{steps}" if steps is not None and len(pretrain_steps) > 1 else ""
            if plr is not None and len(pretrain_lrs) > 1:
                ptag += f"-plr{plr}"
            if method is not None and args.pretrain_seed:  # seed 0: the names of before
                ptag += f"-pseed{args.pretrain_seed}"
            weights = task_weights(method, args.task_mix, corpus_stats)
            if weights:
                ptag += f"-mix{args.task_mix.replace(':', '-')}"
            page_negatives = args.page_negatives and method is not None \
                and method[0] == "two-tower"
            if page_negatives:
                ptag += "-pagekeys"
            task_batches = args.task_batches and method is not None and method[0] == "two-tower" \
                and "," in method[1] and ">" not in method[1]
            if task_batches:
                ptag += "-taskbatches"
            if method is not None and ">" in method[1]:
                ptag += f"-f{args.first_steps}"
            btag, batch_args = pretrain_batch_args(method, args.pretrain_batch, args.batch)
            ptag += btag
            label = labelled(name, ptag)
            pre = None
            if method is not None:
                objective, tasks, with_hn = method
                hn = args.hard_negatives if with_hn else 0  # the key of `builds`
                pre = work / f"pre-{s}{ptag}"
                seeded_pre = ["--seed", args.pretrain_seed] if args.pretrain_seed else []
                first = None
                if ">" in tasks:  # phase 1 on the first tasks; phase 2 below from its weights
                    tasks, second = tasks.split(">")
                    first = work / f"pre-{s}{ptag}-first"
                    if not (first / "eval.json").exists():
                        wikipairs("train", "pretrain", "-d", builds[hn], "-o", first, "--model",
                                  args.model, *model_opts, "--tasks", tasks, "--steps",
                                  args.first_steps, "--lr", plr, *common, *batch_args,
                                  *seeded_pre, log=log)
                if first is not None and not (pre / "eval.json").exists():
                    wikipairs("train", "finetune", "-d", builds[hn], "-o", pre, "--init", first,
                              "--tasks", second, "--steps", steps, "--lr", plr,
                              *common, *batch_args, *seeded_pre, log=log)
                elif not (pre / "eval.json").exists():
                    wikipairs("train", "pretrain", "-d", builds[hn], "-o", pre, "--model",
                              args.model, *model_opts, "--objective", objective, "--tasks", tasks,
                              "--steps", steps, "--lr", plr, *common, *batch_args,
                              *seeded_pre, *(["--hard-negatives", hn] if hn else []),
                              *(["--task-weights", weights] if weights else []),
                              *(["--page-negatives"] if page_negatives else []),
                              *(["--task-batches"] if task_batches else []),
                              *(["--chunk-size", args.chunk_size] if args.chunk_size else []),
                              log=log)
                curves[label] = learning_curve(pre)
                heldout[label] = json.loads((pre / "eval.json").read_text())
                if args.zero_shot:
                    export(pre, work / f"export-pre-{s}{ptag}")
                    results["zero-shot"][label] = {
                        pct(p): {args.eval_split: evaluate(
                            work / f"export-pre-{s}{ptag}", p, args.eval_split,
                            work / f"eval-pre-{s}{ptag}-{pct(p)}-{args.eval_split}.json")}
                        for p in percents}
            for p in percents:
                data = work / f"ft{pct(p)}"
                for ft_step, lr, seed in itertools.product(ft_steps[p], ft_lrs[p], ft_seeds):
                    ftag = ((f"-s{ft_step}" if len(ft_steps[p]) > 1 else "")
                            + (f"-lr{lr}" if len(ft_lrs[p]) > 1 else "")
                            + (f"-seed{seed}" if seed else ""))  # seed 0: the names of before
                    seeded = ["--seed", seed] if seed else []
                    run = f"{s}{ptag}-{pct(p)}{ftag}"
                    tuned = work / f"ft-{run}"
                    if not (tuned / "eval.json").exists():
                        if pre is None:
                            wikipairs("train", "pretrain", "-d", data, "-o", tuned, "--model",
                                      args.model, *model_opts, "--tasks", "reqa", "--steps",
                                      ft_step, "--lr", lr, *seeded, *common, log=log)
                        else:
                            wikipairs("train", "finetune", "-d", data, "-o", tuned, "--init", pre,
                                      "--tasks", "reqa", "--steps", ft_step, "--lr", lr, *seeded,
                                      *common, log=log)
                    export(tuned, work / f"export-{run}")
                    row = {"settings": {"pretrain_steps": steps, "pretrain_lr": plr,
                                        "finetune_steps": ft_step, "finetune_lr": lr,
                                        "seed": seed},
                           args.eval_split: evaluate(work / f"export-{run}", p, args.eval_split,
                                                     work / f"eval-{run}-{args.eval_split}.json")}
                    if args.train_recall:
                        row["train"] = evaluate(work / f"export-{run}", p, "train",
                                                work / f"eval-{run}-train.json")
                    results[pct(p)][labelled(name, ptag + ftag)] = row
        times[name] = time.monotonic() - started
        print(f"  {name}: {times[name] / 60:.1f} min", flush=True)
    for p in percents:
        results[pct(p)]["BM25"] = {args.eval_split: evaluate(
            "bm25", p, args.eval_split, work / f"eval-bm25-{pct(p)}-{args.eval_split}.json")}
    print_curves(curves, heldout)
    print("\nfine-tuning settings: " + "; ".join(
        f"{pct(p)}%: steps {','.join(map(str, ft_steps[p]))}, lr {','.join(ft_lrs[p])}"
        for p in percents) + f"; pre-training steps {args.pretrain_steps}")
    print_table(results, percents, args.eval_split)
    print_sweep(results, percents, args.eval_split)
    paired = print_order_tests(results, percents, args.eval_split)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                         "corpus": {**corpus_key, **corpus_stats},
                                         "seconds": times, "learning_curves": curves,
                                         "heldout": heldout, "results": results,
                                         "paired_tests": paired}, indent=2) + "\n")


def task_weights(method, mix: str, pair_counts: dict) -> str | None:
    """`--task-weights` of a pre-training method: None for uniform mixing, a single task or
    tasks in sequence; else each task's pair count (`build_stats` keys `<task>_pairs`) in the
    method's order, or with `mix` "W1:W2:..." those weights."""
    if method is None or mix == "uniform" or "," not in method[1] or ">" in method[1]:
        return None
    tasks = method[1].split(",")
    if mix != "pairs":  # explicit weights, one per task
        weights = mix.split(":")
        if len(weights) != len(tasks):
            raise ValueError(f"--task-mix {mix}: {len(tasks)} weights needed for {method[1]}")
        return ",".join(weights)
    return ",".join(str(pair_counts[f"{task}_pairs"]) for task in tasks)


def labelled(name: str, tags: str) -> str:
    """A method's row name with its run's tags: ("ICT", "-p1000-s100-lr5e-4") -> "ICT [p1000 s100
    lr5e-4]" (split before each "-<letter>", so "5e-4" stays whole)."""
    words = [t for t in re.split(r"-(?=[a-z])", tags) if t]
    return name + (f" [{' '.join(words)}]" if words else "")


def per_split(spec: str, percents: list, cast) -> dict:
    """`--finetune-steps`/`--finetune-lr` values per split: "V1,V2" for every split, "P:V" for the
    P% split alone (a split with P:V items takes only those)."""
    general: list = []
    specific: dict = {}
    for item in spec.split(","):
        if ":" in item:
            p, v = item.split(":", 1)
            if float(p) not in percents:
                raise ValueError(f"{item}: {p}% is not in --train-percents")
            specific.setdefault(float(p), []).append(cast(v))
        else:
            general.append(cast(item))
    out = {p: specific.get(p, general) for p in percents}
    if missing := [pct(p) for p, v in out.items() if not v]:
        raise ValueError(f"{spec}: no value for the {', '.join(missing)}% split")
    return out


def build_stats(pairs: Path) -> dict:
    """Pages, articles and pairs per task of a build (its stats.json), as far as it says."""
    out: dict = {}
    try:
        stats = json.loads((pairs / "stats.json").read_text())
    except (OSError, ValueError):
        return out
    counters = stats.get("counters", {})
    for key, value in counters.items():
        if key in ("pages_read", "articles", "redirects") or "exclu" in key:
            out[key] = value
    tasks = stats.get("tasks", {})
    if isinstance(tasks, dict):
        for task, block in tasks.items():
            if isinstance(block, dict) and isinstance(block.get("pairs"), int):
                out[f"{task}_pairs"] = block["pairs"]
    return out


def learning_curve(run: Path, points: int = 8) -> list:
    """(step, loss) from a run's train_log.jsonl, about `points` of them, the last included."""
    path = run / "train_log.jsonl"
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    rows = [(r["step"], r["loss"]) for r in rows if "step" in r and "loss" in r]
    every = max(1, len(rows) // points)
    picked = rows[::every]
    if rows and (not picked or picked[-1] != rows[-1]):
        picked.append(rows[-1])
    return picked


def print_curves(curves: dict, heldout: dict) -> None:
    if not curves:
        return
    print("\npre-training loss (train_log.jsonl: mean over the last log interval) and held-out "
          "in-batch top-1 (eval.json)")
    for name, curve in curves.items():
        points = "  ".join(f"{step}:{loss:.3g}" for step, loss in curve)
        ev = heldout.get(name, {})
        acc = next((f"{k} {v:.3f}" for k, v in ev.items() if "acc" in k or "top" in k), "")
        print(f"{name:<16}{points}   {acc}")


def print_table(results: dict, percents: list, split: str = "test") -> None:
    print(f"\nReQA SQuAD dev, recall in % on each split's {split} questions (protocol 'paper'; "
          "R@1/R@10/R@100); ZS = zero-shot (pre-trained only), FT = fine-tuned on P% of the questions")
    print_grid(results, percents, split, cell)
    print(f"\nthe same questions by level (reqa eval's levels): R@1 of the right paragraph / the "
          "right article / the sentence within its paragraph")
    print_grid(results, percents, split, level_cell)
    print(f"\nrecall on the fine-tuning (training) questions beside the {split} questions (R@1/R@10/R@100)")
    for p in percents:
        for name, entry in results.get(pct(p), {}).items():
            if "train" in entry:
                print(f"  {pct(p):>3}% {name:<16} train {cell(entry['train']):>20}   "
                      f"{split} {cell(entry.get(split)):>20}")


# the paper's order, each (B, A) read as "B >= A?", and the best dense model against BM25
ORDER_PAIRS = (("ICT+BFS+WLP", "ICT"), ("ICT", "MLM"), ("MLM", "No-SSL"), ("ICT", "No-SSL"))


def print_order_tests(results: dict, percents: list, split: str) -> dict:
    """B - A at R@100 with its 95% paired bootstrap interval and McNemar's p
    (`wikipairs reqa compare`) for the paper's order and the best dense model against BM25, on
    each fine-tuned split's questions; methods with several rows (a sweep) are left out."""
    from wikipairs.trainer.reqa.compare import compare_files, format_p

    out: dict = {}
    for p in percents:
        rows: dict = {}
        for name, entry in results.get(pct(p), {}).items():
            if split in entry and "ranks_file" in entry[split]:
                rows.setdefault(name.split(" [")[0], []).append(entry[split])
        rows = {name: found[0] for name, found in rows.items() if len(found) == 1}
        dense = [n for n in rows if n != "BM25"]
        pairs = [(b, a) for b, a in ORDER_PAIRS if a in rows and b in rows]
        if dense and "BM25" in rows:
            best = max(dense, key=lambda n: _protocol(rows[n], "paper").get("R@100", 0))
            pairs.append((best, "BM25"))
        if not pairs:
            continue
        print(f"\npaired tests, {pct(p)}% split ({split} questions, protocol 'paper', R@100): "
              "B - A in points, its 95% paired bootstrap interval, McNemar's exact p")
        for b, a in pairs:
            m = compare_files(rows[a]["ranks_file"], rows[b]["ranks_file"], ks=(100,),
                              resamples=2000)["rankings"]["paper"]["metrics"]["R@100"]
            lo, hi = (100 * v for v in m["ci95"])
            print(f"  {b + ' - ' + a:<28}{100 * m['diff']:>+7.1f}  [{lo:+.1f}, {hi:+.1f}]  "
                  f"p {format_p(m['p'])}")
            out.setdefault(pct(p), {})[f"{b} - {a}"] = m
    return out


def print_grid(results: dict, percents: list, split: str, fmt) -> None:
    """One line per method, one column per zero-shot and fine-tuned split: fmt(eval result)."""
    cols = [("zero-shot", pct(p)) for p in percents] + [(pct(p), pct(p)) for p in percents]
    head = "".join(f"{(('ZS ' if c == 'zero-shot' else 'FT ') + p + '%'):>24}" for c, p in cols)
    print(f"{'method':<16}{head}")
    names = list(dict.fromkeys(n for c in results.values() for n in c))
    for name in names:
        cells = []
        for c, p in cols:
            entry = results.get(c, {}).get(name, {})
            entry = entry.get(p, entry) if c == "zero-shot" else entry
            cells.append(fmt(entry.get(split)))
        print(f"{name:<16}" + "".join(f"{x:>24}" for x in cells))


def print_sweep(results: dict, percents: list, split: str) -> None:
    """With more than one setting per method: R@100 per setting and method, and the mean over the
    methods of each setting (No-SSL has no pre-training steps: it joins every p<steps> mean)."""
    for p in percents:
        rows = [(name, e["settings"], _protocol(e[split], "paper").get("R@100"))
                for name, e in results.get(pct(p), {}).items() if "settings" in e and split in e]
        methods = list(dict.fromkeys(n.split(" [")[0] for n, _, _ in rows))
        if len(rows) <= len(methods):
            continue
        several_lrs = len({st.get("pretrain_lr") for _, st, _ in rows
                           if st.get("pretrain_lr")}) > 1

        def pre_key(st):  # pre-training steps, and its lr when that was swept too
            if not st["pretrain_steps"] or not several_lrs:
                return st["pretrain_steps"]
            return f"{st['pretrain_steps']} lr{st['pretrain_lr']}"

        grid: dict = {}
        for name, st, r100 in rows:
            key = (st["finetune_steps"], st["finetune_lr"], st.get("seed", 0))
            grid.setdefault(key, {}).setdefault(name.split(" [")[0], {})[pre_key(st)] = r100
        pre_values = sorted({pre_key(st) for _, st, _ in rows if st["pretrain_steps"]}, key=str)
        print(f"\nsweep, {pct(p)}% split: R@100 on the {split} questions per (fine-tuning steps, "
              "lr, seed)")
        cols = [(m, ps) for m in methods for ps in (pre_values if m != "No-SSL" else [None])]
        head = "".join(f"{m + (f' p{ps}' if ps and len(pre_values) > 1 else ''):>22}"
                       for m, ps in cols)
        width = max([12, *(len(f"mean p{ps}") + 2 for ps in pre_values)])
        means = "".join(f"{'mean p' + str(ps):>{width}}" for ps in pre_values) or f"{'mean':>12}"
        print(f"{'steps':>6} {'lr':>7} {'seed':>4}{head}{means}")
        for (steps, lr, seed), by_method in grid.items():
            vals = [by_method.get(m, {}).get(ps) for m, ps in cols]
            line = "".join(f"{v:>22.1f}" if v is not None else f"{'-':>22}" for v in vals)
            for ps in pre_values or [None]:
                xs = [by_method.get(m, {}).get(None if m == "No-SSL" else ps) for m in methods]
                xs = [x for x in xs if x is not None]
                line += f"{sum(xs) / len(xs):>{width}.1f}" if xs else f"{'-':>{width}}"
            print(f"{steps:>6} {lr:>7} {seed:>4}{line}")


def cell(result: dict | None) -> str:
    if not result:
        return "-"
    row = _protocol(result, "paper")
    return "/".join(f"{row.get(k, float('nan')):.1f}" for k in KEYS)


def level_cell(result: dict | None) -> str:
    """paragraph / article / in-paragraph R@1 in % ("-" for results without levels)."""
    levels = (result or {}).get("levels")
    if not levels:
        return "-"
    return "/".join(f"{100 * levels[k]['R@1']:.1f}" for k in ("paragraph", "article",
                                                                "in_paragraph"))


def _protocol(result: dict, protocol: str) -> dict:
    """The recall row of one protocol from `wikipairs reqa eval --json` output (percentages)."""
    block = result.get("protocols", result).get(protocol, {})
    return {k: (v * 100 if isinstance(v, float) and v <= 1 else v) for k, v in block.items()}


if __name__ == "__main__":
    main()
