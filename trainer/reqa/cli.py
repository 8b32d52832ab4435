"""`wikipairs reqa build|eval|compare|pairs|passages`: the click group (wikipairs/cli.py adds it to
`main`).

Errors are ReqaError (a WikipairsError): `main` prints them as one line and exits with status 2.
"""
from __future__ import annotations

import json
import os

import click

from wikipairs import fileio
from wikipairs.cli_options import DOC_MAX_TOKENS_HELP, QUERY_MAX_TOKENS_HELP, verbosity_options
from wikipairs.trainer.cli import config_option, make_config, model_opt_option, temperature_option

from .data import PAPER_TRAIN_PERCENTS, SPLITS, ReqaError

HELP = {"help_option_names": ["-h", "--help"]}


@click.group(context_settings=HELP)
def reqa():
    """ReQA retrieval QA evaluation (SQuAD, Natural Questions), after Chang et al. Section 4."""


def _print_counts(counts: dict, extra: list[tuple[str, str]] = ()) -> None:
    for label, key in (("candidates", "candidates"), ("QA inputs", "qa_inputs"),
                       ("questions (ids)", "questions"),
                       ("distinct questions", "distinct_questions")):
        click.echo(f"{label:<22}{counts[key]:>10,}")
    for label, value in extra:
        click.echo(f"{label:<22}{value}")


@reqa.command(context_settings=HELP)
@click.option("--squad", "squad_paths", multiple=True, metavar="FILE.json",
              help="SQuAD v1.1-format JSON (e.g. dev-v1.1.json, xquad.hi.json); repeatable: "
                   "several files make one multilingual pool with a lang column (LAReQA).")
@click.option("--nq", "nq_patterns", multiple=True, metavar="FILE.jsonl.gz",
              help="Natural Questions file or glob (simplified or original layout); repeatable. "
                   "Converted as ReQA's nq_to_squad.py does.")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False),
              help="Output folder: candidates.parquet, questions.parquet, manifest.json.")
@click.option("--write-squad", type=click.Path(dir_okay=False), default=None,
              help="With --nq: also write the converted SQuAD JSON here.")
@click.option("--lang", "langs", default=None, metavar="L[,L...]",
              help="Language of the text (en, es, hi...), one per --squad in order; default: "
                   "detected from the text as `wikipairs build` checks it (--nq: en).")
@click.option("--sentence-splitter", default="auto", show_default=True,
              type=click.Choice(["auto", "punkt", "sentencex", "punkt-trained"]),
              help="As in `wikipairs build`: auto is the language's punkt_tab model where "
                   "installed (NLTK_DATA), else sentencex.")
@verbosity_options()
def build(squad_paths, nq_patterns, output, write_squad, langs, sentence_splitter, quiet, verbose):
    """Build ReQA candidates (unique sentence, passage pairs) and questions with their golds,
    split into sentences in the language of the text (detected, or --lang)."""
    from wikipairs.text.sentences import missing_model_warning

    from .data import build_reqa, build_squad_files, language_lines, parse_langs, write_reqa

    if bool(squad_paths) == bool(nq_patterns):
        raise ReqaError("give either --squad FILE.json or --nq FILE.jsonl.gz (one of the two)")
    langs = parse_langs(langs, len(squad_paths) or 1)
    extra = []
    if squad_paths:
        data = build_squad_files(squad_paths, langs, sentence_splitter)
    else:
        from .nq import convert_nq

        squad, nq_counts = convert_nq(nq_patterns)
        source = ",".join(nq_patterns)
        skipped = {k: v for k, v in nq_counts.items() if k not in ("records", "kept")}
        extra.append(("NQ records", f"{nq_counts['records']:>10,}   kept {nq_counts['kept']:,}"
                      + "".join(f"; {reason}: {n:,}" for reason, n in sorted(skipped.items()))))
        if write_squad:
            with open(write_squad, "w", encoding="utf-8") as f:
                json.dump(squad, f)
        if not squad["data"]:
            raise ReqaError(f"{source}: no questions to build from")
        data = build_reqa(squad, source=source, lang=langs[0] or "en", method=sentence_splitter)
        if data.num_questions == 0:
            raise ReqaError(f"{source}: no answered questions found")
    for lang in data.manifest.get("langs") or [data.manifest["lang"]]:
        warning = missing_model_warning(lang, sentence_splitter)
        if warning:
            click.echo(warning, err=True)
    manifest = write_reqa(data, output, squad_paths[0] if len(squad_paths) == 1 else None)
    _print_counts(manifest["counts"], extra + language_lines(manifest)
                  + [("output", os.path.abspath(output))])


@reqa.command(context_settings=HELP)
@click.option("--squad", "squad_path", required=True, metavar="FILE.json",
              help="SQuAD v1.1-format JSON (e.g. dev-v1.1.json).")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="The passage corpus to write (JSON lines), for `wikipairs build -i`.")
@click.option("--sections/--no-sections", default=True, show_default=True,
              help="Each paragraph a section of its own (the first is the lead: ICT and BFS, "
                   "one document per paragraph); without, all in the lead (ICT only).")
@verbosity_options()
def passages(squad_path, output, sections, quiet, verbose):
    """Write the paragraphs of a SQuAD file as a passage corpus (id, title, text, order,
    section): no questions, for unsupervised pre-training on the target corpus."""
    from wikipairs.reading.passages import squad_passages, write_jsonl

    from .data import load_squad

    squad = load_squad(squad_path)
    n = write_jsonl(squad_passages(squad, sections=sections), output)
    if n == 0:
        raise ReqaError(f"{squad_path}: no paragraphs")
    pages = len({str(a.get("title")) for a in squad["data"]})
    click.echo(f"{'passages':<22}{n:>10,}")
    click.echo(f"{'pages (titles)':<22}{pages:>10,}")
    click.echo(f"{'output':<22}{os.path.abspath(output)}")


def _train_percent(split: str, train_percent: float | None) -> float:
    if split in ("train", "valid", "test") and train_percent is None:
        raise ReqaError(f"--split {split} needs --train-percent (the paper's: "
                        f"{', '.join(map(str, PAPER_TRAIN_PERCENTS))})")
    return train_percent


@reqa.command("eval", context_settings=HELP)
@click.option("--model", required=True, metavar="bm25|SAVEDMODEL",
              help="bm25, or a SavedModel folder with query_encoder and response_encoder.")
@click.option("--data", "data_dir", required=True, metavar="DIR", help="A reqa build output.")
@click.option("--split", type=click.Choice(SPLITS), default="all", show_default=True,
              help="Questions to evaluate: all, or a part of the cold-start split.")
@click.option("--train-percent", type=click.FloatRange(0, 100, min_open=True, max_open=True),
              default=None, help="Training share of the split, in percent (paper: 1, 5, 10, 80).")
@click.option("--seed", default=0, show_default=True, type=int, help="Split seed.")
@click.option("--extra-candidates", "extra", multiple=True, metavar="SHARDS",
              help="Open-domain: add the sentences of the passages of these Parquet pair shards "
                   "(a wikipairs build output folder or a glob); repeatable.")
@click.option("--bm25-text", type=click.Choice(("both", "sentence", "passage")), default="both",
              show_default=True, help="BM25: what is indexed (both = sentence + passage).")
@click.option("--k1", default=1.2, show_default=True, type=click.FloatRange(0), help="BM25 k1.")
@click.option("--b", "b", default=0.75, show_default=True, type=click.FloatRange(0, 1),
              help="BM25 b.")
@click.option("--stemmer", type=click.Choice(("on", "off")), default="on", show_default=True,
              help="BM25: the language's Snowball stemmer (PyStemmer), where it has one.")
@click.option("--stopwords", type=click.Choice(("on", "off")), default="off", show_default=True,
              help="BM25: drop the language's stopwords, where a list exists.")
@click.option("--analyzer", default="auto", show_default=True, metavar="auto|none|LANG",
              help="BM25 analysis: auto (each text's language), none (words only), or one "
                   "language's rules for all (e.g. en).")
@click.option("--batch-size", default=128, show_default=True, type=click.IntRange(1),
              help="SavedModel: texts per encoder call.")
@click.option("--chunk-size", default=1024, show_default=True, type=click.IntRange(1),
              help="Questions scored at once against all candidates.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the results as JSON here.")
@click.option("--ranks", "ranks_path", type=click.Path(dir_okay=False), default=None,
              metavar="FILE.parquet",
              help="Also write every query's rank here, for `reqa compare` (paired tests).")
@verbosity_options()
def eval_command(model, data_dir, split, train_percent, seed, extra, bm25_text, k1, b, stemmer,
                 stopwords, analyzer, batch_size, chunk_size, json_path, ranks_path, quiet,
                 verbose):
    """Recall@1/5/10/50/100 and MRR under the "paper" and "reqa" protocols."""
    from wikipairs.trainer.native_logs import native_logs

    with native_logs(None, verbose):  # no run folder to keep TensorFlow's log lines in
        _evaluate(model, data_dir, split, train_percent, seed, extra, bm25_text, k1, b, stemmer,
                  stopwords, analyzer, batch_size, chunk_size, json_path, ranks_path, quiet)


def _evaluate(model, data_dir, split, train_percent, seed, extra, bm25_text, k1, b, stemmer,
              stopwords, analyzer, batch_size, chunk_size, json_path, ranks_path, quiet):
    from .data import add_extra_candidates, read_reqa, select_split
    from .metrics import (PROTOCOL_NOTES, EvalSet, RankCollector, format_languages,
                          format_table)

    train_percent = _train_percent(split, train_percent)
    data = read_reqa(data_dir)
    data = select_split(data, split, train_percent, seed)
    if data.num_questions == 0:
        raise ReqaError(f"{data_dir}: split {split} has no questions")
    added = add_extra_candidates(data, extra) if extra else 0
    eval_set = EvalSet.from_data(data)
    if model == "bm25":
        from .bm25 import BM25Config, BM25Scorer

        scorer = BM25Scorer(data.candidates, BM25Config(
            text=bm25_text, k1=k1, b=b, stemmer=stemmer == "on", stopwords=stopwords == "on",
            analyzer=analyzer), lang=data.manifest.get("lang", "en"))
        chunks = scorer.score_chunks(eval_set.texts, chunk_size, eval_set.text_langs)
        model_info = {"kind": "bm25", **scorer.describe()}
    else:
        from .dense import SavedModelEncoder, score_chunks

        encoder = SavedModelEncoder(model)
        cand = encoder.encode_candidates(data.candidates["sentence"], data.candidates["passage"],
                                         batch_size, quiet)
        queries = encoder.encode_queries(eval_set.texts, batch_size, quiet)
        chunks = score_chunks(queries, cand, chunk_size)
        model_info = {"kind": "savedmodel", "path": os.path.abspath(model),
                      "dim": int(cand.shape[1])}
    collector = RankCollector(eval_set, same_lang=eval_set.multilingual, levels=True)
    for start, scores in chunks:
        collector.add(start, scores)
    results, levels = collector.results(), collector.results_by_level()
    by_lang = collector.results_by_lang() if eval_set.multilingual else None
    report = {"model": model_info, "data": os.path.abspath(data_dir), "split": split,
              "lang": data.manifest.get("lang", "en"), "langs": eval_set.langs,
              "train_percent": train_percent, "seed": seed,
              "candidates": eval_set.num_candidates, "extra_candidates": added,
              "distinct_questions": len(eval_set.texts), "protocols": results,
              "protocol_notes": PROTOCOL_NOTES, "ties": "average rank (scipy rankdata)"}
    if levels:
        report["levels"] = levels
    if by_lang is not None:
        report["by_lang"] = by_lang
    where = f"split {split}" + (f" ({train_percent:g}% train, seed {seed})" if split != "all" else "")
    click.echo(f"ReQA {os.path.basename(os.path.abspath(data_dir))}, {where}: "
               f"{eval_set.num_candidates:,} candidates ({added:,} extra), "
               f"{len(eval_set.texts):,} distinct questions; model "
               + (f"bm25 ({bm25_text}, k1={k1:g}, b={b:g}, analyzer {analyzer}: "
                  + "; ".join(f"{lang} stemmer {a['stemmer']}, stopwords {a['stopwords']}"
                              for lang, a in model_info["analysis"].items()) + ")"
                  if model == "bm25" else model))
    click.echo(format_table(results))
    if levels:  # the paper protocol's queries: context, topic, sentence in its paragraph
        click.echo(format_table(levels, label="level"))
    if by_lang is not None:
        click.echo(format_languages(by_lang))
    if json_path:
        fileio.write_atomic(json_path, json.dumps(report, indent=2).encode())
    if ranks_path:
        _write_ranks(ranks_path, data, eval_set, collector, report)


def _write_ranks(path, data, eval_set, collector, report) -> None:
    """Every query's rank, keyed by question id (paper protocol, levels) or text (reqa)."""
    from .compare import SAME_SETTING, write_ranks

    ids = data.questions["question_id"]
    ranks = {"paper": (ids, collector.ranks["paper"]), "reqa": (eval_set.texts,
                                                                collector.ranks["reqa"])}
    ranks.update({level: (ids, values) for level, values in collector.level_ranks.items()})
    write_ranks(path, ranks, {key: report[key] for key in ("data", "model", *SAME_SETTING)})


@reqa.command(context_settings=HELP)
@click.argument("rank_a", metavar="A.parquet", type=click.Path(dir_okay=False))
@click.argument("rank_b", metavar="B.parquet", type=click.Path(dir_okay=False))
@click.option("--resamples", default=10_000, show_default=True, type=click.IntRange(100),
              help="Bootstrap resamples of the questions.")
@click.option("--seed", default=0, show_default=True, type=int, help="Bootstrap seed.")
@click.option("--json", "json_path", type=click.Path(dir_okay=False), default=None,
              help="Also write the comparison as JSON here.")
@verbosity_options()
def compare(rank_a, rank_b, resamples, seed, json_path, quiet, verbose):
    """B against A on the same questions (two `reqa eval --ranks` files): B - A of each
    Recall@k and MRR, its 95% paired bootstrap interval and a paired test's p-value."""
    from .compare import compare_files, format_comparison

    result = compare_files(rank_a, rank_b, resamples=resamples, seed=seed)
    click.echo(f"A: {rank_a} ({_model_label(result['a'])})")
    click.echo(f"B: {rank_b} ({_model_label(result['b'])})")
    click.echo(format_comparison(result))
    if json_path:
        fileio.write_atomic(json_path, json.dumps(result, indent=2).encode())


def _model_label(setting: dict) -> str:
    model = setting.get("model") or {}
    return str(model.get("path") or model.get("kind") or "?")


@reqa.command(context_settings=HELP)
@click.option("--data", "data_dir", required=True, metavar="DIR", help="A reqa build output.")
@click.option("--vocab", required=True, type=click.Path(dir_okay=False),
              help="SentencePiece model (wikipairs vocab) for the token ids.")
@click.option("--train-percent", required=True,
              type=click.FloatRange(0, 100, min_open=True, max_open=True),
              help="Training share of the distinct questions, in percent (paper: 1, 5, 10, 80).")
@click.option("--seed", default=0, show_default=True, type=int, help="Split seed.")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False),
              help="OUT/{parquet,tfrecord}/reqa/part-*: training pairs; OUT/valid/...: validation.")
@click.option("--query-max-tokens", default=64, show_default=True, type=click.IntRange(4),
              help=QUERY_MAX_TOKENS_HELP)
@click.option("--doc-max-tokens", default=288, show_default=True, type=click.IntRange(8),
              help=DOC_MAX_TOKENS_HELP)
@verbosity_options()
def pairs(data_dir, vocab, train_percent, seed, output, query_max_tokens, doc_max_tokens, quiet,
          verbose):
    """Fine-tuning pairs of the training part (query: question; document: [CLS] sentence [SEP]
    passage [SEP]) as Parquet and TFRecord shards, for `wikipairs train finetune --data OUT`."""
    from .data import read_reqa, write_finetune_pairs

    record = write_finetune_pairs(read_reqa(data_dir), output, vocab, train_percent, seed,
                                  query_max=query_max_tokens, doc_max=doc_max_tokens)
    for split in ("train", "valid", "test"):
        click.echo(f"{split + ' questions':<22}{record['distinct_questions'][split]:>10,}"
                   + (f"   pairs {record['pairs'][split]['pairs']:,}" if split in record["pairs"]
                      else "   (evaluate with --split test)"))
    click.echo(f"{'output':<22}{os.path.abspath(output)}")


@reqa.command(context_settings=HELP)
@click.option("--data", "data_dir", required=True, metavar="DIR", help="A reqa build output.")
@click.option("--init", required=True, type=click.Path(file_okay=False),
              help="A pre-trained `wikipairs train` run folder (its spm.model is the vocabulary).")
@click.option("--train-percent", default=5.0, show_default=True,
              type=click.FloatRange(0, 100, min_open=True, max_open=True),
              help="Training share of the distinct questions (paper: 1, 5, 10, 80).")
@click.option("--seed", default=0, show_default=True, type=int, help="Split seed.")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False),
              help="OUT/pairs (training pairs), OUT/run (the fine-tuned model), OUT/export "
                   "(SavedModel), OUT/eval.json, OUT/ranks.parquet (for `reqa compare`).")
@click.option("--steps", default=None, type=click.IntRange(1), help="Default: 2,000 (the paper).")
@click.option("--batch-size", default=None, type=click.IntRange(2), help="Default: 512.")
@click.option("--lr", "learning_rate", default=None, type=float, help="Default: 5e-5.")
@temperature_option
@model_opt_option
@config_option
@verbosity_options()
def finetune(data_dir, init, train_percent, seed, output, steps, batch_size, learning_rate,
             temperature, model_opts, config_file, quiet, verbose):
    """Fine-tune a pre-trained model on the training part of a split, then evaluate the
    SavedModel export on its test part (cold start: no test question is seen in training)."""
    from wikipairs.trainer.native_logs import native_logs
    from wikipairs.trainer.train_config import NATIVE_LOG, check_run

    from .data import read_reqa, write_finetune_pairs

    vocab = os.path.join(init, "spm.model")
    if not os.path.isfile(vocab):
        raise ReqaError(f"{init}: no spm.model (not a `wikipairs train` run folder?)")
    data = read_reqa(data_dir)
    pairs_dir, run_dir = os.path.join(output, "pairs"), os.path.join(output, "run")
    config = make_config(config_file, model_opts, data=[pairs_dir], output=run_dir, init=init,
                         tasks=["reqa"], mode="finetune", steps=steps, batch_size=batch_size,
                         learning_rate=learning_rate, temperature=temperature, seed=seed,
                         vocab=vocab, quiet=quiet, tensorboard=False).resolved()
    check_run(config)  # before TensorFlow prints its start-up lines
    write_finetune_pairs(data, pairs_dir, vocab, train_percent, seed)
    export_dir = os.path.join(output, "export")
    with native_logs(os.path.join(output, NATIVE_LOG), verbose):
        from wikipairs.trainer.export import export_saved_model
        from wikipairs.trainer.train import finetune as run_finetune, load_model

        run_finetune(config)
        export_saved_model(load_model(run_dir), vocab, export_dir)
        args = ["--model", export_dir, "--data", data_dir, "--split", "test", "--train-percent",
                repr(train_percent), "--seed", str(seed), "--json",
                os.path.join(output, "eval.json"), "--ranks",
                os.path.join(output, "ranks.parquet")] + (["--quiet"] if quiet else [])
        with eval_command.make_context("eval", args, parent=click.get_current_context()) as ctx:
            settings = dict(ctx.params)  # eval's defaults for the rest
        settings.pop("verbose")
        _evaluate(**settings)


__all__ = ["reqa"]
