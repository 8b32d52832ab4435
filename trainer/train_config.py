"""The settings of a training run: `TrainConfig` (defaults per mode, validation, JSON loading)
and `TrainError`, the error of a run that cannot start. Imports neither Keras nor TensorFlow."""
from __future__ import annotations

import dataclasses
import json
import math
import os
from dataclasses import dataclass, field

from wikipairs.errors import WikipairsError

from . import data as data_lib
from .configs import NAMED_CONFIGS, ModelConfig, from_known_fields, unknown_names_message

# the files of a run folder (trainer.checkpoints writes them)
WEIGHTS = "model.weights.h5"
MODEL_CONFIG = "model_config.json"
TRAIN_CONFIG = "train_config.json"
VOCAB = "spm.model"
VOCAB_LISTING = "spm.vocab"
TRAIN_LOG = "train_log.jsonl"
EVAL = "eval.json"
NATIVE_LOG = "native.log"  # TensorFlow's, absl's and CUDA's own log lines (not --verbose)
MODES = ("pretrain", "finetune")
OBJECTIVES = ("two-tower", "mlm")
# the paper's settings (Chang et al. 2020, section 4)
MODE_DEFAULTS = {
    "pretrain": dict(learning_rate=1e-4, batch_size=8192, steps=100_000),
    "finetune": dict(learning_rate=5e-5, batch_size=512, steps=2_000),
}


class TrainError(WikipairsError):
    """A training run that cannot start: bad settings, a missing checkpoint or vocabulary."""


@dataclass
class TrainConfig:
    """Settings of one run. None means: the mode's default (`MODE_DEFAULTS`) or, for tasks, every
    task found in the data folders.

    data: folders of pair shards (DIR/{parquet,tfrecord}/<task>/part-*), several allowed.
    output: run folder (checkpoints, logs and the final model).
    model: a named ModelConfig (tiny, small, base, bow) or a model_config.json path;
        model_overrides: ModelConfig fields to change (e.g. {"max_doc_len": 128}).
        finetune: the model comes from `init` (its model_config.json), overrides still apply.
    objective: "two-tower" or "mlm" (pretrain only).
    tasks / task_weights: tasks to mix and their weights (uniform when None).
    warmup_fraction: share of the steps with a linear warm-up; then linear decay to 0.
    temperature: overrides the model config's softmax temperature.
    checkpoint_every / log_every: in steps. eval_percent: held-out share of query pages, for
    builds without a `split` column.
    eval_batches / eval_batch_size: held-out in-batch accuracy at the end (0: none).
    mixed_precision: "mixed_bfloat16" compute. tpu: TPU name or address (TPUStrategy).
    init: finetune: the run folder of a pre-trained model. vocab: the SentencePiece model
        (default: the init run's copy, else the shard folder's manifest).
    data_format: "auto" (TFRecord on TensorFlow, Parquet on JAX), "tfrecord" or "parquet".
    jit_compile: "auto" (Keras decides), True or False. run_eagerly: debugging only.
    clean_negatives: two-tower: leave out of each query's in-batch softmax the other rows with
        the same document, the same passage or the same query text (`losses.duplicate_mask`):
        they are not negatives (WLP gives many pairs per query page, BFS many per page).
    chunk_size: two-tower: GradCache steps (trainer.gradcache) embedding this many rows at a
        time, so a batch of 8192 needs the memory of `chunk_size`; the batch size per replica
        must be a multiple of it. None: plain steps.
    hard_negatives: two-tower: up to this many hard negatives per pair from the shards of
        `wikipairs build --hard-negatives N` (their neg_ids columns) as extra negative columns of
        every query's softmax (`losses.in_batch_softmax_loss`); 0: none.
    distinct_pages: training batches without duplicate query pages where the data allows: B rows
        chosen from 2B candidates (`trainer.data`, the rule in its docstring).
    task_batches: each training batch from one task (drawn by the task mix per batch, as
        sentence-transformers' multi-dataset batch sampler draws a dataset per batch), so a
        query's in-batch negatives are documents of its own task; False: tasks mixed per row.
    page_negatives: with clean_negatives, also leave out of a BFS row's softmax the other BFS rows
        of its page, and of a WLP row's the other WLP rows of its query page (positives by the
        tasks' definitions; `trainer.data`'s page key). Off by default: on the SQuAD-in
        benchmark it did not help (README, "Clean negatives by page").
    """

    data: list[str] = field(default_factory=list)
    output: str = ""
    mode: str = "pretrain"
    objective: str = "two-tower"
    model: str = "base"
    model_overrides: dict = field(default_factory=dict)
    tasks: list[str] | None = None
    task_weights: list[float] | None = None
    batch_size: int | None = None
    steps: int | None = None
    learning_rate: float | None = None
    warmup_fraction: float = 0.1
    weight_decay: float = 0.01
    temperature: float | None = None
    seed: int = 0
    checkpoint_every: int = 1000
    log_every: int = 100
    eval_percent: int = data_lib.EVAL_PERCENT
    eval_batches: int = 10
    eval_batch_size: int = 32
    shuffle_buffer: int = 10_000
    mask_rate: float = 0.15
    mixed_precision: bool = False
    tpu: str | None = None
    init: str | None = None
    vocab: str | None = None
    data_format: str = "auto"
    jit_compile: str | bool = "auto"
    run_eagerly: bool = False
    steps_per_execution: int = 1
    clean_negatives: bool = True
    chunk_size: int | None = None
    hard_negatives: int = 0
    distinct_pages: bool = False
    task_batches: bool = False
    page_negatives: bool = False
    tensorboard: bool = True
    quiet: bool = False

    def resolved(self) -> "TrainConfig":
        """A copy with the mode's defaults filled in; TrainError on a bad value."""
        if self.mode not in MODES:
            raise TrainError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        filled = {k: v for k, v in MODE_DEFAULTS[self.mode].items() if getattr(self, k) is None}
        c = dataclasses.replace(self, **filled)
        c.data = [os.fspath(d) for d in ([c.data] if isinstance(c.data, (str, os.PathLike))
                                          else c.data)]
        if c.tasks is not None:
            c.tasks = list(c.tasks)
        if c.task_weights is not None:
            c.task_weights = [float(w) for w in c.task_weights]
        _check(c)
        return c

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "TrainConfig":
        return from_known_fields(cls, values, "unknown training settings", TrainError)

    @classmethod
    def from_json_file(cls, path: str, **overrides) -> "TrainConfig":
        """Settings from a JSON file (TrainConfig field names; `model_config` is accepted as a
        synonym of model_overrides), then `overrides` (those not None) on top."""
        try:
            with open(path, encoding="utf-8") as f:
                values = json.load(f)
        except OSError as e:
            raise TrainError(f"{path}: cannot read the config file ({e.strerror})") from None
        except ValueError as e:
            raise TrainError(f"{path}: not valid JSON ({e})") from None
        if not isinstance(values, dict):
            raise TrainError(f"{path}: expected a JSON object of training settings")
        if "model_config" in values:
            values["model_overrides"] = {**values.pop("model_config"),
                                         **values.get("model_overrides", {})}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.from_dict(values)


def _check(c: TrainConfig) -> None:
    def bad(message):
        raise TrainError(message)

    if not c.data:
        bad("no training data folder given (--data DIR)")
    if not c.output:
        bad("no output folder given (--output DIR)")
    if c.objective not in OBJECTIVES:
        bad(f"objective must be one of {', '.join(OBJECTIVES)}, not {c.objective!r}")
    if c.objective == "mlm" and c.mode != "pretrain":
        bad("the mlm objective is a pre-training objective (use `train pretrain --objective mlm`)")
    if c.mode == "finetune" and not c.init:
        bad("finetune needs a pre-trained model: --init DIR (a `train pretrain` output folder)")
    for name in ("batch_size", "steps", "checkpoint_every", "log_every", "steps_per_execution",
                 "eval_batch_size"):
        if not isinstance(getattr(c, name), int) or getattr(c, name) < 1:
            bad(f"{name.replace('_', ' ')} must be a positive integer, not {getattr(c, name)!r}")
    if c.chunk_size is not None:
        if not isinstance(c.chunk_size, int) or c.chunk_size < 1:
            bad(f"chunk size must be a positive integer, not {c.chunk_size!r}")
        if c.objective != "two-tower":
            bad("--chunk-size applies to the two-tower objective (GradCache), not mlm")
        if c.batch_size % c.chunk_size:
            bad(f"batch size {c.batch_size} is not a multiple of the chunk size {c.chunk_size}")
    if not isinstance(c.hard_negatives, int) or isinstance(c.hard_negatives, bool) or \
            c.hard_negatives < 0:
        bad(f"hard negatives must be an integer >= 0, not {c.hard_negatives!r}")
    if not isinstance(c.distinct_pages, bool):
        bad(f"distinct pages must be true or false, not {c.distinct_pages!r}")
    if not isinstance(c.task_batches, bool):
        bad(f"task batches must be true or false, not {c.task_batches!r}")
    if not isinstance(c.page_negatives, bool):
        bad(f"page negatives must be true or false, not {c.page_negatives!r}")
    if c.page_negatives and not (c.clean_negatives and c.objective == "two-tower"):
        bad("--page-negatives extends the clean negatives of the two-tower objective: it needs "
            "--clean-negatives and --objective two-tower")
    if c.hard_negatives and c.objective != "two-tower":
        bad("--hard-negatives applies to the two-tower objective, not mlm")
    if c.eval_batches < 0:
        bad(f"eval batches must be >= 0, not {c.eval_batches}")
    if not (c.learning_rate > 0 and math.isfinite(c.learning_rate)):
        bad(f"learning rate must be > 0, not {c.learning_rate}")
    if not 0 <= c.warmup_fraction < 1:
        bad(f"warm-up fraction must be in [0, 1), not {c.warmup_fraction}")
    if c.weight_decay < 0:
        bad(f"weight decay must be >= 0, not {c.weight_decay}")
    if c.temperature is not None and not c.temperature > 0:
        bad(f"temperature must be > 0, not {c.temperature}")
    if not 0 < c.mask_rate < 1:
        bad(f"mask rate must be in (0, 1), not {c.mask_rate}")
    if c.data_format not in ("auto", *data_lib.FORMATS):
        bad(f"data format must be auto, tfrecord or parquet, not {c.data_format!r}")
    if not 0 <= c.eval_percent < 100:
        bad(f"eval percent must be in [0, 100), not {c.eval_percent}")
    if c.jit_compile not in ("auto", True, False):
        bad(f"jit_compile must be auto, true or false, not {c.jit_compile!r}")
    if c.task_weights is not None and c.tasks is None:
        bad("task weights need the tasks they weigh (--tasks)")
    if c.task_weights is not None:
        data_lib.task_weights(c.tasks, c.task_weights)  # DataError on bad weights
    if c.mode == "pretrain" and c.model not in NAMED_CONFIGS and not os.path.isfile(c.model):
        bad(f"unknown model {c.model!r}: one of {', '.join(NAMED_CONFIGS)} or a "
            f"model_config.json file")
    unknown = unknown_names_message(c.model_overrides, [f.name for f in dataclasses.fields(
        ModelConfig)], "unknown --model-opt key")
    if unknown:
        bad(unknown)


# ---- a run's vocabulary and model (checked before Keras or TensorFlow is imported) ------

def find_vocab(config: TrainConfig) -> str:
    """The SentencePiece model: --vocab, else the init run's spm.model, else a data folder's
    manifest (config.vocab). TrainError when none is found."""
    if config.vocab:
        if not os.path.isfile(config.vocab):
            raise TrainError(f"{config.vocab}: no such SentencePiece model")
        return os.path.abspath(config.vocab)
    if config.init and os.path.isfile(os.path.join(config.init, VOCAB)):
        return os.path.abspath(os.path.join(config.init, VOCAB))
    for d in config.data:
        found = data_lib.manifest_vocab(d)
        if found:
            return found
    raise TrainError(f"no SentencePiece model found for {', '.join(config.data)} (the build "
                     f"manifest names none that exists): pass --vocab SPM.model")


def vocab_size(path: str) -> int:
    import sentencepiece as spm

    try:
        return spm.SentencePieceProcessor(model_file=path).get_piece_size()
    except (OSError, RuntimeError) as e:
        raise TrainError(f"{path}: not a SentencePiece model ({str(e).splitlines()[0]})") from None


def model_config_for(config: TrainConfig, vocab_path: str) -> ModelConfig:
    """The ModelConfig of a run: named (or a JSON file, or the init run's), plus overrides, the
    vocabulary's size and the temperature setting."""
    overrides = dict(config.model_overrides)
    if config.temperature is not None:
        overrides["temperature"] = config.temperature
    size = vocab_size(vocab_path)
    model_config = _read_model_config(config, overrides, size)
    if model_config.vocab_size < size:
        raise TrainError(f"the model has {model_config.vocab_size} token embeddings but the "
                         f"vocabulary {vocab_path} has {size} pieces")
    if config.objective == "mlm" and model_config.encoder != "transformer":
        raise TrainError("--objective mlm trains a Transformer encoder; it does not apply to "
                         f"the {model_config.encoder} model")
    return model_config


def _read_model_config(config: TrainConfig, overrides: dict, size: int) -> ModelConfig:
    """The init run's, a JSON file's or a named ModelConfig with `overrides` (named: with
    vocab_size `size` unless overridden)."""
    try:
        if config.mode == "finetune":
            with open(os.path.join(config.init, MODEL_CONFIG), encoding="utf-8") as f:
                base = ModelConfig.from_json(f.read())
            return base.replace(**overrides)
        if os.path.isfile(config.model):
            with open(config.model, encoding="utf-8") as f:
                return ModelConfig.from_json(f.read()).replace(**overrides)
        return ModelConfig.from_name(config.model, **{"vocab_size": size, **overrides})
    except (TypeError, ValueError) as e:  # unknown or bad fields
        raise TrainError(f"bad model configuration: {str(e).splitlines()[0]}") from None
    except OSError as e:
        raise TrainError(f"cannot read the model configuration: {e}") from None


def check_init(config: TrainConfig) -> None:
    """finetune: TrainError unless config.init is a `train pretrain` output folder."""
    if config.mode == "finetune":
        if not os.path.isdir(config.init):
            raise TrainError(f"{config.init}: no such pre-trained model folder")
        for name in (MODEL_CONFIG, WEIGHTS):
            if not os.path.exists(os.path.join(config.init, name)):
                raise TrainError(f"{config.init}: no {name} (not a `wikipairs train pretrain` "
                                 f"output folder?)")


def check_run(config: TrainConfig) -> tuple[str, ModelConfig]:
    """(vocabulary path, ModelConfig) of a resolved config, or the TrainError that stops the
    run: everything a run can get wrong from its settings, found without Keras or TensorFlow
    (the command line calls it before they are imported and print their start-up lines)."""
    check_init(config)
    vocab_path = find_vocab(config)
    return vocab_path, model_config_for(config, vocab_path)
