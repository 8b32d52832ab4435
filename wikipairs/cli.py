"""The `wikipairs` command line. Usage and input errors: one line on stderr, exit status 2."""
from __future__ import annotations

import difflib
import json
import os
import re
import sys
import traceback
from importlib import resources

import click

from . import __version__, fileio
from .download import DEFAULT_BASE_URL, FILE_SETS, MANIFEST as DOWNLOAD_MANIFEST, WIKI_NAME
from .download import human_size, valid_date
from .cli_options import (ALLOW_TRUNCATED_HELP, DOC_MAX_TOKENS_HELP, KEEP_TABLES_HELP,
                          NAMESPACES_HELP, QUERY_MAX_TOKENS_HELP, add_missing_verbosity_options,
                          check_storage, verbosity_options)
from .errors import WikipairsError
from .text.template_drops import lines as template_lines

EXIT_USAGE = 2
# Modules of the optional extras (pyproject.toml), by the extra that installs them.
_EXTRAS = {"apache_beam": "beam", "tensorflow": "train", "tensorflow_text": "train",
           "keras": "train", "bm25s": "train", "Stemmer": "train", "tensorboard": "train",
           "jax": "jax"}
LANG_HELP = ("Language code (ja, de, ...), overriding the dump's siteinfo: namespace aliases, "
             "image options and sentence splitting follow it.")


def sample_dump() -> str:
    """Path of the small dump bundled with the package (written for the project, CC0)."""
    return str(resources.files("wikipairs") / "data" / "sample.xml.bz2")


class _OneLineUsageError(click.UsageError):
    """A usage error shown as one line on stderr (click shows the usage, a hint and the error)."""

    def show(self, file=None):
        hint = f" (see '{self.ctx.command_path} --help')" if self.ctx is not None else ""
        message = self.format_message().strip().splitlines()
        click.echo(f"wikipairs: error: {message[0] if message else 'bad usage'}{hint}",
                   file=file, err=True)


# `wikipairs` alone shows the help (click >= 8.2 raises this UsageError for it): keep that.
_HELP_ERRORS = tuple(e for e in (getattr(click.exceptions, "NoArgsIsHelpError", None),) if e)


def _one_line(error: click.UsageError) -> click.UsageError:
    if isinstance(error, (_OneLineUsageError, *_HELP_ERRORS)):
        return error
    one = _OneLineUsageError(error.format_message(), ctx=error.ctx)
    one.exit_code = error.exit_code
    return one


DEBUG_HELP = "Show tracebacks instead of one-line errors."


def _set_debug(ctx: click.Context, param: click.Parameter, debug: bool) -> None:
    if debug:  # the root's obj: the flag _Group.invoke reads when the subcommand fails
        ctx.find_root().ensure_object(dict)["debug"] = True


def _add_debug_option(command: click.Command) -> None:
    """--debug after the subcommand too (`wikipairs build --debug ...`, where it is typed when
    a run fails), for the subcommands of subgroups as well."""
    if not any(param.name == "debug" for param in command.params):
        command.params.append(click.Option(["--debug"], is_flag=True, expose_value=False,
                                           callback=_set_debug, help=DEBUG_HELP))
    for subcommand in getattr(command, "commands", {}).values():
        _add_debug_option(subcommand)


class _Group(click.Group):
    """Turns every error into one line on stderr (a traceback only with --debug)."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        super().add_command(cmd, name)
        _add_debug_option(cmd)
        add_missing_verbosity_options(cmd)

    def make_context(self, info_name, args, parent=None, **extra):
        try:  # errors in the group's own options (`wikipairs --bogus`)
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as e:
            raise _one_line(e) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as e:  # unknown command, a subcommand's bad option or value
            raise _one_line(e) from None
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except WikipairsError as e:  # --debug: the traceback too, and the same exit status
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            _fail(str(e))
        except KeyboardInterrupt:
            click.echo("wikipairs: interrupted", err=True)
            sys.exit(130)
        except Exception as e:  # a bug, not bad input: still one line unless --debug
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            extra = _EXTRAS.get((getattr(e, "name", None) or "").split(".")[0])
            if isinstance(e, ModuleNotFoundError) and extra:
                _fail(f"'{ctx.command_path} {ctx.invoked_subcommand}' needs {e.name}, which is "
                      f"not installed: pip install 'wikipairs[{extra}]'")
            _fail(f"internal error: {type(e).__name__}: {e} (run with --debug for the traceback)",
                  status=1)


def _fail(message: str, status: int = EXIT_USAGE):
    click.echo(f"wikipairs: error: {message.splitlines()[0] if message else 'failed'}", err=True)
    sys.exit(status)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="wikipairs")
@click.option("--debug", is_flag=True, help=DEBUG_HELP)
@click.pass_context
def main(ctx, debug):
    """Wikipedia dumps to retrieval pre-training pairs, and a two-tower retriever."""
    ctx.obj = {"debug": debug}


# Shared by parse, build and vocab (the choices are wikipairs.text.sentences.METHODS).
_sentence_splitter_option = click.option(
    "--sentence-splitter", default="auto", show_default=True,
    type=click.Choice(["auto", "punkt", "sentencex", "punkt-trained"]),
    help="auto: NLTK Punkt where a punkt_tab model for the language is installed (NLTK_DATA), "
         "else sentencex; punkt-trained: Punkt trained on the dump (an extra pass).")


def _announce_splitting(inputs: list[str], lang: str | None, method: str, quiet: bool,
                        tokens: str | None = None) -> None:
    """Say before the run how it splits sentences (and measures tokens), and warn where
    `auto` falls back to sentencex for want of the language's Punkt model: the same command
    then gives other sentences elsewhere. The warning is not progress: --quiet keeps it."""
    from .parse import open_header
    from .reading import expand_inputs
    from .text.sentences import missing_model_warning, splitter_source

    try:
        lang = lang or open_header(expand_inputs(inputs)[0]).site.lang  # XML or Enterprise HTML
    except WikipairsError:
        return  # an input that cannot be read: the command says why when it reads it
    warning = missing_model_warning(lang, method)
    if warning:
        click.echo(warning, err=True)
    if not quiet:  # on stdout, with the summary: stderr keeps errors and warnings only
        line = f"sentences: {splitter_source(lang, method)}"
        click.echo(line + (f"; tokens: {tokens}" if tokens else ""))


def _namespaces(value: str) -> tuple[int, ...]:
    try:
        return tuple(sorted({int(v) for v in value.split(",") if v.strip()}))
    except ValueError:
        raise click.BadParameter("expected comma-separated namespace numbers, e.g. 0 or 0,14",
                                 param_hint="'--namespaces'") from None


@main.command()
@click.option("--input", "-i", "inputs", multiple=True, metavar="DUMP",
              help="Dump file or glob (.xml, .xml.bz2, .xml.gz, .xml.xz); repeatable. "
                   "Default: the bundled sample dump.")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False),
              help="Output folder (articles/*.parquet, redirects.parquet, manifest.json).")
@click.option("--namespaces", default="0", show_default=True, help=NAMESPACES_HELP)
@click.option("--lang", default=None, help=LANG_HELP)
@click.option("--allow-truncated", is_flag=True, help=ALLOW_TRUNCATED_HELP)
@click.option("--keep-tables", is_flag=True, help=KEEP_TABLES_HELP)
@click.option("--keep-disambiguation", is_flag=True, help="Keep disambiguation pages.")
@click.option("--keep-lists", is_flag=True, help="Keep list and index pages.")
@click.option("--rows-per-shard", default=50_000, show_default=True, type=click.IntRange(1),
              help="Articles per Parquet shard.")
@_sentence_splitter_option
@verbosity_options()
def parse(inputs, output, namespaces, lang, allow_truncated, keep_tables, keep_disambiguation,
          keep_lists, rows_per_shard, sentence_splitter, quiet, verbose):
    """Parse dumps into articles (sections, sentences, links) as Parquet shards."""
    from .reading import check_declared_language
    from .parse import ParseConfig, parse_dump

    config = ParseConfig(
        inputs=list(inputs) or [sample_dump()], output=output, namespaces=_namespaces(namespaces),
        lang=lang, allow_truncated=allow_truncated, keep_tables=keep_tables,
        keep_disambiguation=keep_disambiguation, keep_lists=keep_lists,
        sentence_splitter=sentence_splitter, rows_per_shard=rows_per_shard, quiet=quiet,
        command=sys.argv[:])
    check_declared_language(config.inputs, lang)
    _announce_splitting(config.inputs, lang, sentence_splitter, quiet)
    summary = parse_dump(config)
    _print_summary(summary, output)


def _print_summary(summary: dict, output: str) -> None:
    rows = [("pages read", summary["pages"], ""), ("articles written", summary["articles"], ""),
            ("redirects", summary["redirects"],
             f"{summary['redirect_cycles_or_too_deep']:,} in cycles or too deep")]
    rows += [(f"skipped: {reason}", n, "") for reason, n in summary["skipped"].items()]
    if summary["truncated_files"]:
        rows.append(("truncated files", summary["truncated_files"],
                     "complete pages before the cut kept"))
    rows += [("sentences", summary["sentences"], ""), ("links", summary["links"], "")]
    for label, value, note in rows:
        click.echo(f"{label:<24}{value:>10,}" + (f"   ({note})" if note else ""))
    click.echo(f"{'language':<24}{summary['lang']:>10}   sentences: {summary['sentence_splitter']}")
    for line in template_lines(summary.get("templates_dropped_inline"), summary["articles"]):
        click.echo(line)
    click.echo(f"{'output':<24}{os.path.abspath(output)}")


def _csv_choice(value: str, allowed: tuple[str, ...], option: str, all_word: str | None = None):
    items = [v.strip() for v in value.split(",") if v.strip()]
    if all_word and items == [all_word]:
        return allowed
    bad = [v for v in items if v not in allowed]
    if bad or not items:
        raise click.BadParameter(f"expected a comma-separated subset of {', '.join(allowed)}"
                                 + (f" or {all_word}" if all_word else "") + f", got {value!r}",
                                 param_hint=f"'{option}'")
    return tuple(v for v in allowed if v in items)


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.option("--task", "tasks", default="all", show_default=True,
              help="ict, bfs, wlp, a comma-separated list, or all.")
@click.option("--input", "-i", "inputs", multiple=True, metavar="DUMP",
              help="Dump file or glob; repeatable. A *-multistream.xml.bz2 with its index file "
                   "beside it is read in parallel by stream ranges. Default: the bundled sample.")
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False),
              help="Output folder, local or a Beam file system URL (gs://bucket/pairs).")
@click.option("--format", "formats", default="parquet,tfrecord", show_default=True,
              help="parquet, tfrecord or both (comma-separated).")
@click.option("--vocab", type=click.Path(dir_okay=False), default=None,
              help="SentencePiece model (wikipairs vocab): adds token ids, counts tokens with it.")
@click.option("--seed", default=0, show_default=True, type=int, help="Sampling seed.")
@click.option("--pairs-per-page", default=0, show_default=True, type=click.IntRange(0),
              help="Cap on ICT and BFS pairs per page (0: none).")
@click.option("--wlp-docs-per-page", default=1000, show_default=True, type=click.IntRange(0),
              help="Cap on WLP documents per query page (0: none).")
@click.option("--eval-percent", default=5.0, show_default=True, type=click.FloatRange(0, 100,
              max_open=True), help="Share of query pages whose pairs are the eval split (by a "
              "stable hash of the page id; an eval query that is also a train query is dropped).")
@click.option("--exclude", "exclude", multiple=True, metavar="FILE",
              help="An eval set (SQuAD/XQuAD JSON, BEIR folder, jsonl with `text`): its pages "
                   "and any pair sharing a 13-token n-gram with it are left out; repeatable.")
@click.option("--doc-max-tokens", default=288, show_default=True, type=click.IntRange(8),
              help=DOC_MAX_TOKENS_HELP)
@click.option("--query-max-tokens", default=64, show_default=True, type=click.IntRange(4),
              help=QUERY_MAX_TOKENS_HELP + " Longer query sentences are left out, never cut.")
@click.option("--min-query-tokens", default=4, show_default=True, type=click.IntRange(0),
              help="Query sentences with fewer tokens are left out.")
@click.option("--ict-keep-rate", default=0.0, show_default=True, type=click.FloatRange(0, 1),
              help="Share of ICT pairs whose document keeps the query sentence (ORQA: 0.1).")
@click.option("--ict-queries", default=1, show_default=True, type=click.IntRange(1),
              help="ICT pairs per passage, each with another query sentence (seeded): more "
                   "distinct queries from a small corpus.")
@click.option("--hard-negatives", default=0, show_default=True, type=click.IntRange(0),
              help="Hard negatives per pair, as neg_* columns: other passages of the query's "
                   "page (ICT, BFS); first passages of pages the query page links to that do "
                   "not link back (WLP).")
@click.option("--num-shards", default=0, show_default=True, type=click.IntRange(0),
              help="Shards per task (0: one per 128 MiB of input).")
@click.option("--streams-per-split", default=50, show_default=True, type=click.IntRange(1),
              help="Multistream dumps with an index: bz2 streams (~100 pages each) per split.")
@click.option("--parts-per-file", default=2, show_default=True, type=click.IntRange(1),
              help="Dumps without an index: splits per file (one shard each for ICT and BFS).")
@click.option("--redirects", "redirect_mode", default="auto", show_default=True,
              type=click.Choice(["auto", "memory", "join"]),
              help="Resolve WLP link targets through one in-memory redirect table (a side "
                   "input) or keyed joins (one per hop, for Wikipedia-size tables); auto: "
                   "memory below 1 GiB of compressed input.")
@click.option("--workers", default=0, show_default=True, type=click.IntRange(0),
              help="DirectRunner processes (0: one per core, fewer for a small input: at most one per split and per 8 MB of compressed dump) or Dataflow workers.")
@click.option("--runner", default="DirectRunner", show_default=True,
              help="Beam runner: DirectRunner, DataflowRunner, ...")
@click.option("--dry-run", is_flag=True,
              help="Build the job without running it (DataflowRunner: no network, no auth).")
@click.option("--namespaces", default="0", show_default=True, help=NAMESPACES_HELP)
@click.option("--lang", default=None, help=LANG_HELP)
@click.option("--allow-truncated", is_flag=True, help=ALLOW_TRUNCATED_HELP)
@click.option("--keep-tables", is_flag=True, help=KEEP_TABLES_HELP)
@_sentence_splitter_option
@verbosity_options()
@click.option("--progress/--no-progress", default=None,
              help="Progress lines on stderr (default: when stderr is a terminal).")
@click.pass_context
def build(ctx, tasks, inputs, output, formats, vocab, seed, pairs_per_page, wlp_docs_per_page,
          eval_percent, exclude, doc_max_tokens, query_max_tokens, min_query_tokens,
          ict_keep_rate, ict_queries, hard_negatives, num_shards,
          streams_per_split, parts_per_file, redirect_mode, workers, runner, dry_run, namespaces, lang,
          allow_truncated, keep_tables, sentence_splitter, quiet, verbose, progress):
    """Build ICT, BFS and WLP pairs as Parquet/TFRecord shards with a Beam pipeline.

    Options Beam knows (e.g. --project, --region, --temp_location) are passed through; any
    other option is an error."""
    from .pipelines.driver import BuildConfig, build as run_build, preflight
    from .reading import check_declared_language
    from .shards.pair_shards import FORMATS
    from .pairs.tasks import TASKS, PairConfig
    from .parse import ParseConfig
    from .text.tokens import token_measure

    _refuse_unknown_options(ctx)
    loud = verbose or (ctx.obj or {}).get("debug")
    if not loud:  # Beam's log lines would bury the one-line errors
        import logging
        logging.disable(logging.ERROR)  # a failed stage is reported as our one line instead
    inputs = list(inputs) or [sample_dump()]
    parse_config = ParseConfig(inputs=inputs, output=output, namespaces=_namespaces(namespaces),
                               lang=lang, allow_truncated=allow_truncated,
                               keep_tables=keep_tables, sentence_splitter=sentence_splitter)
    config = BuildConfig(
        inputs=inputs, output=output, tasks=_csv_choice(tasks, TASKS, "--task", "all"),
        formats=_csv_choice(formats, FORMATS, "--format"), vocab=vocab,
        pairs=PairConfig(seed=seed, doc_max_tokens=doc_max_tokens,
                         query_max_tokens=query_max_tokens, min_query_tokens=min_query_tokens,
                         ict_keep_rate=ict_keep_rate, ict_queries=ict_queries,
                         pairs_per_page=pairs_per_page,
                         wlp_docs_per_page=wlp_docs_per_page, eval_percent=eval_percent,
                         hard_negatives=hard_negatives),
        exclude=list(exclude), parse=parse_config, num_shards=num_shards,
        streams_per_split=streams_per_split,
        parts_per_file=parts_per_file, redirects=redirect_mode, runner=runner, workers=workers,
        dry_run=dry_run, beam_args=list(ctx.args), command=sys.argv[:],
        quiet=quiet or not (progress if progress is not None else sys.stderr.isatty()),
        log_to_file=not loud)
    config = preflight(config)  # runner, project, buckets; can GCS be reached: before reading
    if not dry_run:  # a dry run reads no input (nor a bucket)
        check_declared_language(inputs, lang)
    from .pipelines.offline import lang_from_name
    _announce_splitting(inputs, lang or (lang_from_name(inputs[0]) if dry_run else None),
                        sentence_splitter, quiet, tokens=token_measure(vocab))
    from .reading.passages import wlp_note
    note = wlp_note(inputs) if "wlp" in config.tasks and not dry_run else None
    if note:  # a passage corpus has no links: said, not an error
        click.echo(note, err=True)
    stats = run_build(config)
    if dry_run:
        done = "not submitted" if stats["runner"] == "DataflowRunner" else "not run"
        click.echo(f"dry run: {stats['runner']} job built ({stats['splits']} input split"
                   f"{'s' if stats['splits'] != 1 else ''}: one "
                   f"per input, none read; project and bucket names checked offline), {done}")
        return
    print_stats_table(stats)
    click.echo(f"{'output':<24}{fileio.abspath(output)}")


def _refuse_unknown_options(ctx: click.Context) -> None:
    """`build` hands the options it does not know itself to Beam, and Beam ignores those it
    does not know either: refuse them here, so that a typo (--wokers, --temp_locaton) is a usage
    error rather than a setting silently left at its default."""
    from .pipelines.options import BeamOptionError, beam_option_names, unknown_beam_args

    try:
        unknown = unknown_beam_args(ctx.args)
    except BeamOptionError as e:  # --num_workers=many, --project without its value
        raise click.UsageError(str(e), ctx=ctx) from None
    flags = [arg for arg in unknown if arg.startswith("-")]
    if flags:
        name = flags[0].split("=", 1)[0]
        ours = [opt for param in ctx.command.params for opt in param.opts + param.secondary_opts]
        closest = difflib.get_close_matches(name, ours + beam_option_names(), n=1)
        raise click.NoSuchOption(name, possibilities=closest, ctx=ctx)
    if unknown:
        raise click.UsageError(f"Got unexpected extra argument ({unknown[0]})", ctx=ctx)


def print_stats_table(stats: dict) -> None:
    """The columns of the paper's Table 1, per task."""
    from .shards.report import stats_table

    for line in stats_table(stats):
        click.echo(line)
    counters = stats.get("counters", {})
    click.echo(f"pages read {counters.get('pages_read', 0):,}, articles {counters.get('articles', 0):,}, "
               f"redirects {counters.get('redirects', 0):,}; tokens: {stats.get('tokens', '')}; "
               f"{stats.get('seconds', 0)} s")


@main.command()
@click.option("--input", "-i", "inputs", multiple=True, metavar="DUMP",
              help="Dump file or glob; repeatable. Default: the bundled sample dump.")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False),
              help="Model file to write (SPM.model; SPM.vocab is written beside it).")
@click.option("--vocab-size", default=32000, show_default=True, type=click.IntRange(6),
              help="Pieces in the vocabulary, the 5 special tokens included.")
@click.option("--max-sentences", default=1_000_000, show_default=True, type=click.IntRange(1),
              help="Sentences sampled (deterministically, by seed) from the articles.")
@click.option("--model-type", default="unigram", show_default=True,
              type=click.Choice(["unigram", "bpe", "char", "word"]),
              help="SentencePiece model type.")
@click.option("--seed", default=0, show_default=True, type=int,
              help="Which sentences are sampled.")
@click.option("--lang", default=None, help=LANG_HELP)
@click.option("--allow-truncated", is_flag=True, help=ALLOW_TRUNCATED_HELP)
@_sentence_splitter_option
@verbosity_options()
@click.option("--workers", default=0, show_default=True, type=click.IntRange(0),
              help="Processes sampling sentences (0: one per core, at most one per 4 MB of compressed dump); the model is the same for any.")
def vocab(inputs, output, vocab_size, max_sentences, model_type, seed, lang, allow_truncated,
          sentence_splitter, quiet, verbose, workers):
    """Train a SentencePiece vocabulary ([PAD] [CLS] [SEP] [MASK] [UNK]) on article sentences."""
    from collections import Counter

    from .reading import check_declared_language
    from .parse import ParseConfig
    from .pairs.vocab import VocabProgress, sample_dump_sentences, train_vocab

    config = ParseConfig(inputs=list(inputs) or [sample_dump()], output="", lang=lang,
                         allow_truncated=allow_truncated, sentence_splitter=sentence_splitter)
    check_declared_language(config.inputs, lang)
    _announce_splitting(config.inputs, lang, sentence_splitter, quiet)
    counts = Counter()
    progress = VocabProgress(counts, max_sentences, quiet)
    sentences = sample_dump_sentences(config, max_sentences, seed, workers, counts, progress,
                                      workdir=os.path.dirname(os.path.abspath(output)))
    progress.training(len(sentences), vocab_size, model_type)
    summary = train_vocab(sentences, output, vocab_size=vocab_size, model_type=model_type,
                          seed=seed)
    progress.trained()
    click.echo(f"vocabulary of {summary['vocab_size']:,} pieces ({model_type}) trained on "
               f"{summary['sentences']:,} sentences ({summary['characters']:,} characters)")
    click.echo(f"{'model':<8}{os.path.abspath(summary['model'])}")


@main.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="Write histograms of query/document lengths and pairs per page (PNG).")
@verbosity_options()
def stats(folder, plot, quiet, verbose):
    """The Table-1 statistics of a build (pairs, tokens, mean lengths), optionally plotted; of a
    parse output, its counts. Both with the templates the wikitext path dropped inline."""
    from .shards.report import ReportError, built_tasks, load_stats, plot_stats

    check_storage(folder)
    parse_stats = fileio.join(folder, "parse_stats.json")
    if not fileio.exists(fileio.join(folder, "stats.json")) and fileio.exists(parse_stats):
        if plot:
            raise ReportError(f"{folder}: a parse output; --plot draws a build's pairs")
        _print_summary(json.loads(fileio.read_text(parse_stats)), folder)
        return
    data = load_stats(folder)
    print_stats_table(data)
    skipped = {k: v for k, v in data.get("counters", {}).items() if "skipped" in k}
    if skipped:
        click.echo("skipped: " + ", ".join(f"{k} {v:,}" for k, v in sorted(skipped.items())))
    for line in template_lines(data.get("templates_dropped_inline"),
                               data.get("counters", {}).get("articles")):
        click.echo(line)
    if plot:
        plot_stats(folder, built_tasks(data), plot)
        click.echo(f"plot    {os.path.abspath(plot)}")


@main.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--task", default="wlp", show_default=True, type=click.Choice(["ict", "bfs", "wlp"]),
              help="The task whose pairs are shown.")
@click.option("-n", "count", default=5, show_default=True, type=click.IntRange(1),
              help="How many pairs.")
@click.option("--seed", default=0, show_default=True, type=int, help="Which pairs are shown.")
@verbosity_options()
def show(folder, task, count, seed, quiet, verbose):
    """Print pairs of a build readably, with their provenance."""
    from .shards.report import format_pair, load_stats, pick_pairs

    check_storage(folder)
    load_stats(folder)
    rows = pick_pairs(folder, task, count, seed)
    if not rows:  # the task was built and gave no pair: an answer, not an error (exit 0)
        click.echo(f"no {task} pairs in {folder}", err=True)
    for i, row in enumerate(rows):
        click.echo(("\n" if i else "") + format_pair(row))


@main.command()
@click.argument("folder", type=click.Path(file_okay=False))
@verbosity_options()
def verify(folder, quiet, verbose):
    """Check every file of a build or parse output against its manifest (exit 2 on any mismatch)."""
    from .shards.verify import verify_build

    check_storage(folder)
    checked = verify_build(folder)
    click.echo(f"ok: {checked} files match {fileio.join(folder, 'manifest.json')}")


@main.command()
@click.argument("folder", type=click.Path(file_okay=False))
@click.option("--against", "against", required=True, multiple=True, metavar="FILE",
              help="Eval set: SQuAD/XQuAD JSON, a BEIR folder (corpus.jsonl) or jsonl with a "
                   "`text` field; repeatable (one report each).")
@click.option("--task", "tasks", default="all", show_default=True,
              help="ict, bfs, wlp, a comma-separated list, or all.")
@click.option("--json", "as_json", is_flag=True, help="The report as JSON on stdout.")
@verbosity_options()
def audit(folder, against, tasks, as_json, quiet, verbose):
    """Contamination of a build by eval sets: per task, eval passages sharing a 13-token n-gram
    with a pair's query or document, eval answer sentences that are queries, the titles."""
    import json as json_lib
    from .shards.audit import audit as run_audit, format_audit, load_eval_set

    check_storage(folder)
    wanted = None if tasks == "all" else [t.strip() for t in tasks.split(",") if t.strip()]
    results = [run_audit(folder, load_eval_set(path), wanted) for path in against]
    if as_json:
        click.echo(json_lib.dumps(results[0] if len(results) == 1 else results, indent=2))
    else:
        click.echo("\n\n".join(format_audit(r) for r in results))


# ---- download (requests and tqdm load only when it runs) ----

def _date_option(ctx, param, value: str) -> str:
    if value != "latest" and not valid_date(value):
        raise click.BadParameter(f"expected latest or YYYYMMDD, got {value!r}")
    return value


def _wiki_option(ctx, param, value: str) -> str:
    if not WIKI_NAME.match(value):
        raise click.BadParameter(f"expected a wiki database name like enwiki, got {value!r}")
    return value


def _base_url_option(ctx, param, value: str) -> str:
    if not re.match(r"^https?://[^/]+", value):
        raise click.BadParameter(f"expected an http:// or https:// URL, got {value!r}")
    return value.rstrip("/")


@main.command("download")
@click.option("--wiki", required=True, callback=_wiki_option,
              help="Wiki database name: enwiki, simplewiki, elwiki, ...")
@click.option("--date", default="latest", show_default=True, callback=_date_option,
              help="Dump run YYYYMMDD, or latest: the newest run whose files are done.")
@click.option("--dest", required=True, type=click.Path(file_okay=False),
              help="Folder for the files, their .part while downloading, and download.json.")
@click.option("--files", "file_set", default="multistream", show_default=True,
              type=click.Choice(FILE_SETS),
              help="multistream: pages-articles-multistream.xml.bz2 and its index; "
                   "articles: pages-articles.xml.bz2; enterprise-html: the Wikimedia "
                   "Enterprise HTML dump WIKI-NS0-DATE-ENTERPRISE-HTML.json.tar.gz "
                   "(other/enterprise_html/runs/DATE/).")
@click.option("--parts", is_flag=True,
              help="The split parts (...1.xml-p1p41242.bz2, ...) instead of the recombined file.")
@click.option("--base-url", default=DEFAULT_BASE_URL, show_default=True,
              callback=_base_url_option, help="Dumps root: Wikimedia's, or a mirror's.")
@click.option("--retries", default=5, show_default=True, type=click.IntRange(0),
              help="Retries of a failed connection (backoff 1 s, 2 s, ... 30 s), resuming.")
@click.option("--timeout", default=60.0, show_default=True, type=click.FloatRange(0.1),
              help="Seconds to wait for a connection or for more data.")
@verbosity_options()
def download(wiki, date, dest, file_set, parts, base_url, retries, timeout, quiet, verbose):
    """Download a dump's pages-articles files, resumably, verified against dumpstatus.json (or
    an Enterprise HTML dump, verified by its size: its runs publish no checksum)."""
    from .download import DownloadConfig, download as run_download

    config = DownloadConfig(wiki=wiki, date=date, dest=dest, files=file_set, base_url=base_url,
                            parts=parts, retries=retries, timeout=timeout, quiet=quiet)
    result = run_download(config)
    size = sum(f["size"] for f in result["files"])
    click.echo(f"{result['wiki']} {result['date']} ({result['job']}): {len(result['files'])} "
               f"files, {human_size(size)}: {len(result['downloaded'])} downloaded, "
               f"{len(result['skipped'])} already complete")
    click.echo(f"{'dest':<8}{os.path.abspath(dest)} ({DOWNLOAD_MANIFEST})")


# The trainer's commands import TensorFlow/Keras/bm25s only when they run: a missing extra is a
# one-line error then (see _Group.invoke), never a command that silently is not there.
from .trainer.cli import train  # noqa: E402
from .trainer.reqa.cli import reqa  # noqa: E402
from .export.cli import export  # noqa: E402

main.add_command(train)
main.add_command(reqa)
main.add_command(export)


if __name__ == "__main__":  # python -m wikipairs.cli: same messages as the installed command
    main(prog_name="wikipairs")
