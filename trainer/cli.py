"""`wikipairs train pretrain|finetune`: the click group `train` (registered by wikipairs.cli with
`main.add_command(train)`). Settings come from the defaults, then `--config FILE` (JSON, the
TrainConfig field names), then the options given on the command line. Bad input raises
WikipairsError subclasses, which the main command prints as one line (exit status 2).

Keras and TensorFlow are imported only when a run starts, after every setting was checked (a
typo is one line, before TensorFlow prints anything), so `--help` is fast; their own log lines
go to the run's native.log (export: nowhere) unless -v/--verbose.
"""
from __future__ import annotations

import os

import click

from wikipairs.cli_options import verbosity_options
from wikipairs.errors import WikipairsError


class TrainUsageError(WikipairsError):
    """A bad option value of `wikipairs train`."""


def _csv(value: str | None) -> list[str] | None:
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise TrainUsageError(f"expected a comma-separated list, got {value!r}")
    return items


def _weights(value: str | None) -> list[float] | None:
    items = _csv(value)
    if items is None:
        return None
    try:
        return [float(v) for v in items]
    except ValueError:
        raise TrainUsageError(f"--task-weights: expected comma-separated numbers, got {value!r}"
                              ) from None


def _model_options(pairs: tuple[str, ...]) -> dict:
    from .configs import ModelConfig

    try:
        return ModelConfig.parse_overrides(pairs)
    except ValueError as e:
        raise TrainUsageError(str(e)) from None


# The options of a run's settings that `wikipairs reqa finetune` shares (with `make_config`).
config_option = click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), metavar="FILE",
    help="JSON file of settings (TrainConfig field names); options given on the command line "
         "win.")
model_opt_option = click.option(
    "--model-opt", "model_opts", multiple=True, metavar="KEY=VALUE",
    help="Change a ModelConfig field (max_doc_len=128, dropout=0.0, ...); repeatable.")
temperature_option = click.option(
    "--temperature", type=click.FloatRange(0, min_open=True),
    help="Softmax temperature (default: the model config's, 1.0).")


def make_config(config_file: str | None, model_opts: tuple[str, ...], **settings):
    """The TrainConfig of a command: the defaults, then --config FILE, then the command line's
    settings (those not None) and --model-opt KEY=VALUE pairs. Not resolved or checked yet."""
    from .train_config import TrainConfig

    model_overrides = _model_options(model_opts)
    if config_file:
        config = TrainConfig.from_json_file(config_file, **settings)
        if model_overrides:
            config.model_overrides = {**config.model_overrides, **model_overrides}
        return config
    values = {k: v for k, v in settings.items() if v is not None}
    if model_overrides:
        values["model_overrides"] = model_overrides
    return TrainConfig(**values)


def _common(f):
    """Options shared by pretrain and finetune (applied bottom-up, so listed in reverse)."""
    options = [
        click.option("--data", "-d", "data", multiple=True, metavar="DIR",
                     help="Folder of pair shards (DIR/{parquet,tfrecord}/<task>/part-*), e.g. a "
                          "`wikipairs build` output; repeatable."),
        click.option("--output", "-o", metavar="DIR",
                     help="Run folder: checkpoints, logs, model.weights.h5, model_config.json, "
                          "train_config.json, spm.model. Running the same command again "
                          "resumes from its last checkpoint."),
        config_option,
        click.option("--tasks", metavar="LIST",
                     help="Tasks to mix, comma-separated (default: every task folder found)."),
        click.option("--task-weights", metavar="LIST",
                     help="Mixing weights in --tasks order (default: uniform)."),
        model_opt_option,
        click.option("--batch-size", type=click.IntRange(1), help="Global batch size."),
        click.option("--steps", type=click.IntRange(1), help="Training steps in all."),
        click.option("--learning-rate", "--lr", "learning_rate", type=click.FloatRange(0,
                     min_open=True), help="Peak learning rate."),
        click.option("--warmup-fraction", type=click.FloatRange(0, 1, max_open=True),
                     help="Share of the steps with linear warm-up, then linear decay to 0 "
                          "[default: 0.1]."),
        click.option("--weight-decay", type=click.FloatRange(0), help="AdamW weight decay "
                     "[default: 0.01]."),
        temperature_option,
        click.option("--seed", type=int, help="Seed of initialization, data order and dropout "
                     "[default: 0]."),
        click.option("--checkpoint-every", type=click.IntRange(1), metavar="STEPS",
                     help="Checkpoint interval [default: 1000]."),
        click.option("--log-every", type=click.IntRange(1), metavar="STEPS",
                     help="Loss and speed log interval [default: 100]."),
        click.option("--eval-percent", type=click.IntRange(0, 99),
                     help="Held-out share of query pages for builds without a split column "
                          "(newer builds: their own split) [default: 5]."),
        click.option("--eval-batches", type=click.IntRange(0),
                     help="Held-out batches scored at the end [default: 10]."),
        click.option("--eval-batch-size", type=click.IntRange(1),
                     help="Candidates per held-out query (in-batch) [default: 32]."),
        click.option("--shuffle-buffer", type=click.IntRange(0),
                     help="Examples per task in the shuffle buffer [default: 10000]."),
        click.option("--clean-negatives/--no-clean-negatives", default=None,
                     help="Leave out of each query's in-batch negatives the rows with the same "
                          "document, passage or query text [default: on]."),
        click.option("--chunk-size", type=click.IntRange(1), metavar="N",
                     help="GradCache: embed the batch N rows at a time (the loss and gradients "
                          "of the whole batch, the memory of N rows); divides the batch per "
                          "replica."),
        click.option("--hard-negatives", type=click.IntRange(0), metavar="H",
                     help="Up to H hard negatives per pair as extra negatives of every query "
                          "(shards of `wikipairs build --hard-negatives N`) [default: 0]."),
        click.option("--page-negatives", is_flag=True, default=None,
                     help="Clean negatives by page too: leave out of a BFS query's softmax the "
                          "other BFS rows of its page, and of a WLP query's the other WLP rows "
                          "of its query page (positives by the tasks' definitions) "
                          "[default: off]."),
        click.option("--distinct-pages", is_flag=True, default=None,
                     help="Batches without duplicate query pages: B rows chosen from 2B "
                          "candidates, the first of each query page, filled with duplicates "
                          "only when fewer than B pages are distinct [default: off]."),
        click.option("--task-batches", is_flag=True, default=None,
                     help="Each batch from one task, drawn by the task mix per batch (in-batch "
                          "negatives of the query's own task); without it tasks mix per row "
                          "[default: off]."),
        click.option("--bf16/--no-bf16", "mixed_precision", default=None,
                     help="mixed_bfloat16 compute (TPUs, recent GPUs)."),
        click.option("--tpu", metavar="NAME", help="TPU name or grpc:// address: TPUStrategy "
                     "(TensorFlow backend). Without it: MirroredStrategy over several GPUs, "
                     "DataParallel over several JAX devices."),
        click.option("--vocab", type=click.Path(dir_okay=False), metavar="SPM.model",
                     help="SentencePiece model (default: the shard folder's manifest, or the "
                          "--init run's copy)."),
        click.option("--data-format", type=click.Choice(["auto", "tfrecord", "parquet"]),
                     help="Shards to read: auto = TFRecord on TensorFlow, Parquet on JAX."),
        click.option("--jit-compile", type=click.Choice(["auto", "on", "off"]),
                     help="XLA compilation [default: auto: Keras' rule, which leaves a "
                          "CPU-only TensorFlow without XLA; on this project's 2-core CPU `on` "
                          "made `small` towers 1.5x faster, `base` slower: README, "
                          "Training speed]."),
        click.option("--steps-per-execution", type=click.IntRange(1),
                     help="Steps per compiled call (TPUs) [default: 1]."),
        click.option("--run-eagerly", is_flag=True, default=None, hidden=True),
        click.option("--tensorboard/--no-tensorboard", default=None,
                     help="TensorBoard scalars in OUTPUT/logs (any backend)."),
    ]
    for option in reversed(options):
        f = option(f)
    return verbosity_options(quiet_default=None)(f)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def train():
    """Train the two-tower retriever on pair shards (pre-training, fine-tuning)."""


def _precheck(config) -> None:
    """Everything the settings can get wrong (folders, model name, --model-opt keys, the
    vocabulary), found without importing Keras or TensorFlow."""
    from . import data as data_lib
    from .train_config import check_run

    if config.init and not os.path.isdir(config.init):
        raise TrainUsageError(f"{config.init}: no such pre-trained model folder")
    for d in config.data:
        try:
            data_lib.find_shards([d], None, "tfrecord")
        except data_lib.DataError:
            data_lib.find_shards([d], None, "parquet")  # raises the DataError to show
    if config.hard_negatives and config.objective == "two-tower":
        try:  # the Parquet shards here (TFRecord-only data: when the run reads it)
            shards = data_lib.find_shards(config.data, config.tasks, "parquet")
        except data_lib.DataError:
            shards = None
        if shards:
            data_lib.check_hard_negatives(shards, keys=config.clean_negatives)
    check_run(config)


def _run(mode: str, config_file, data, output, tasks, task_weights, model_opts, jit_compile,
         verbose, **options):
    from .native_logs import native_logs
    from .train_config import NATIVE_LOG, TrainError

    config = make_config(config_file, model_opts, **options, data=list(data) or None,
                         output=output, tasks=_csv(tasks), task_weights=_weights(task_weights),
                         mode=mode, jit_compile={"on": True, "off": False, "auto": "auto",
                                                 None: None}[jit_compile])
    if not config.data:
        raise TrainError("no training data: --data DIR (or \"data\" in --config)")
    if not config.output:
        raise TrainError("no output folder: --output DIR (or \"output\" in --config)")
    config = config.resolved()
    _precheck(config)  # before TensorFlow prints its start-up lines
    with native_logs(os.path.join(config.output, NATIVE_LOG), verbose):
        from .train import train as run_train

        return run_train(config)


@train.command()
@_common
@click.option("--model", metavar="NAME|FILE",
              help="Model config: tiny, small, base (the paper's towers), bow (the BoW-MLP "
                   "baseline), or a model_config.json [default: base].")
@click.option("--objective", type=click.Choice(["two-tower", "mlm"]),
              help="two-tower: in-batch softmax on the pairs; mlm: the masked-LM baseline on "
                   "the documents (both towers start from its encoder) [default: two-tower].")
@click.option("--mask-rate", type=click.FloatRange(0, 1, min_open=True, max_open=True),
              help="MLM: share of tokens selected [default: 0.15].")
def pretrain(**options):
    """Pre-train on ICT/BFS/WLP pairs (defaults: lr 1e-4, batch 8192, 100,000 steps)."""
    _run("pretrain", **options)


@train.command()
@_common
@click.option("--init", metavar="DIR", type=click.Path(file_okay=False),
              help="Pre-trained run folder (`train pretrain --output`); its model_config.json, "
                   "model.weights.h5 and spm.model are used.  [required]")
def finetune(**options):
    """Fine-tune a pre-trained model on (question, sentence + passage) pair shards
    (defaults: lr 5e-5, batch 512, 2,000 steps)."""
    _run("finetune", **options)


@train.command()
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--output", "-o", required=True, type=click.Path(file_okay=False),
              help="SavedModel folder to write.")
@verbosity_options()
def export(run, output, quiet, verbose):
    """Export a run's towers as a SavedModel that takes raw strings (tokenizing in its graph):
    signatures query_encoder(input), response_encoder(input, context), document_encoder(title,
    text), each returning `outputs`, as ReQA-style tools expect; serving_default is
    query_encoder. Loading it needs `import tensorflow_text` first (the last line printed)."""
    vocab = os.path.join(run, "spm.model")
    if not os.path.isfile(vocab):
        raise TrainUsageError(f"{run}: no spm.model (not a `wikipairs train` run folder?)")
    from .native_logs import native_logs

    with native_logs(None, verbose):  # the run folder is not this command's to write in
        from .export import export_saved_model, load_hint
        from .train import load_model

        export_saved_model(load_model(run), vocab, output)
    click.echo(f"SavedModel  {os.path.abspath(output)}")
    click.echo(load_hint(output))
