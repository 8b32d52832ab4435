"""Pre-training and fine-tuning of the two-tower retriever (`wikipairs train pretrain|finetune`).

`pretrain(TrainConfig(...))` / `finetune(TrainConfig(..., init=DIR))` run `keras.Model.fit` on
the pair shards (`trainer.data`), on the TensorFlow backend (tf.data over TFRecord; TPUStrategy
with `tpu`, MirroredStrategy with several GPUs) or the JAX backend (Parquet through NumPy;
`keras.distribution.DataParallel` with several devices). The learning rate warms up linearly
over the first `warmup_fraction` of the steps, then decays linearly to 0 (AdamW, weight decay
0.01 except on biases and layer-norm parameters).

Checkpoints: every `checkpoint_every` steps, OUTPUT/checkpoints/step-NNNNNNNN/ holds the model
and optimizer state (`model.weights.h5`, with the step counter) and the dropout RNG states;
OUTPUT/checkpoints/checkpoint.json names the latest one and is written last. Running the same
configuration again after an interruption (also a SIGKILL) restores the latest checkpoint and
continues from its step, skipping the batches already seen, so the run ends after `steps` steps
in all (and, with a deterministic input pipeline, with the weights of an uninterrupted run).
Every file is written under a temporary name (NAME.tmp, a checkpoint as step-NNNNNNNN.tmp/,
weights as NAME.tmp.weights.h5) and renamed into place when complete; the previous checkpoint is
deleted only once checkpoint.json names the new one. A resumed run deletes the temporary names a
killed run left, and the train_log.jsonl records past the restored step (it logs them again).

At the end OUTPUT holds: model.weights.h5 (a `TwoTower`, no optimizer state), model_config.json,
train_config.json, spm.model (a copy of the vocabulary), eval.json (held-out in-batch
accuracy), train_log.jsonl (loss and speed every `log_every` steps) and TensorBoard scalars
(logs/: train/loss, train/learning_rate, train/steps_per_s, train/examples_per_s, eval/*; on
any backend, written by the tensorboard package without TensorFlow).

Objectives: "two-tower" (in-batch softmax, the paper's pre-training and fine-tuning) and "mlm"
(the paper's MLM baseline: BERT masked LM on the documents with the head tied to the token
embeddings; both towers of the saved TwoTower start from the trained encoder).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import shutil
import sys
import time
from dataclasses import dataclass, field

import keras
import numpy as np
from keras import ops

from wikipairs import fileio
from wikipairs.errors import WikipairsError
from wikipairs.tfrecord import frame_record

from . import data as data_lib
from .configs import ModelConfig, NAMED_CONFIGS

MODES = ("pretrain", "finetune")
OBJECTIVES = ("two-tower", "mlm")
# the paper's settings (Chang et al. 2020, section 4)
MODE_DEFAULTS = {
    "pretrain": dict(learning_rate=1e-4, batch_size=8192, steps=100_000),
    "finetune": dict(learning_rate=5e-5, batch_size=512, steps=2_000),
}
CHECKPOINTS = "checkpoints"
CHECKPOINT_STATE = "checkpoint.json"
RUN_STATE = "run.json"  # the run's identity settings, in the checkpoints folder
WEIGHTS = "model.weights.h5"
MODEL_CONFIG = "model_config.json"
TRAIN_CONFIG = "train_config.json"
VOCAB = "spm.model"
VOCAB_LISTING = "spm.vocab"
TRAIN_LOG = "train_log.jsonl"
EVAL = "eval.json"
KEEP_CHECKPOINTS = 2
# settings a resumed run must share with the run that wrote the checkpoint
_RUN_IDENTITY = ("mode", "objective", "model", "model_overrides", "data", "tasks",
                 "task_weights", "batch_size", "steps", "learning_rate", "warmup_fraction",
                 "weight_decay", "temperature", "seed", "eval_percent", "init",
                 "mixed_precision", "shuffle_buffer", "mask_rate")


class TrainError(WikipairsError):
    """A training run that cannot start: bad settings, a missing checkpoint or vocabulary."""


@dataclass
class TrainConfig:
    """Settings of one run. None means: the mode's default (`MODE_DEFAULTS`) or, for tasks, every
    task found in the data folders.

    data: folders of pair shards (DIR/<task>/part-*), several allowed.
    output: run folder (checkpoints, logs and the final model).
    model: a named ModelConfig (tiny, small, base, bow) or a model_config.json path;
        model_overrides: ModelConfig fields to change (e.g. {"max_doc_len": 128}).
        finetune: the model comes from `init` (its model_config.json), overrides still apply.
    objective: "two-tower" or "mlm" (pretrain only).
    tasks / task_weights: tasks to mix and their weights (uniform when None).
    warmup_fraction: share of the steps with a linear warm-up; then linear decay to 0.
    temperature: overrides the model config's softmax temperature.
    checkpoint_every / log_every: in steps. eval_percent: held-out share (by pair_id hash).
    eval_batches / eval_batch_size: held-out in-batch accuracy at the end (0: none).
    mixed_precision: "mixed_bfloat16" compute. tpu: TPU name or address (TPUStrategy).
    init: finetune: the run folder of a pre-trained model. vocab: the SentencePiece model
        (default: the init run's copy, else the shard folder's manifest).
    data_format: "auto" (TFRecord on TensorFlow, Parquet on JAX), "tfrecord" or "parquet".
    jit_compile: "auto" (Keras decides), True or False. run_eagerly: debugging only.
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
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise TrainError(f"unknown training settings: {', '.join(unknown)}")
        return cls(**values)

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


# ---- the learning rate -------------------------------------------------------------------------

@keras.saving.register_keras_serializable("wikipairs")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """peak * (step + 1) / warmup_steps for the first warmup_steps updates, then
    peak * (total_steps - step) / (total_steps - warmup_steps), reaching 0 at total_steps."""

    def __init__(self, peak: float, total_steps: int, warmup_steps: int):
        self.peak, self.total_steps = float(peak), int(total_steps)
        self.warmup_steps = int(warmup_steps)

    def __call__(self, step):
        step = ops.cast(step, "float32")
        warm = self.peak * (step + 1.0) / max(self.warmup_steps, 1)
        decay = self.peak * ops.maximum(self.total_steps - step, 0.0) / max(
            self.total_steps - self.warmup_steps, 1)
        return ops.where(step < self.warmup_steps, warm, decay)

    def get_config(self):
        return {"peak": self.peak, "total_steps": self.total_steps,
                "warmup_steps": self.warmup_steps}


def make_optimizer(config: TrainConfig):
    """AdamW on the warm-up + linear decay schedule; no weight decay on biases and norms."""
    schedule = WarmupLinearDecay(config.learning_rate, config.steps,
                                 int(config.warmup_fraction * config.steps))
    optimizer = keras.optimizers.AdamW(learning_rate=schedule, weight_decay=config.weight_decay,
                                       beta_1=0.9, beta_2=0.999, epsilon=1e-6)
    optimizer.exclude_from_weight_decay(var_names=["bias", "gamma", "beta"])
    return optimizer


# ---- the MLM baseline --------------------------------------------------------------------------

class MaskedLM(keras.Model):
    """The MLM baseline's model: TransformerEncoder + MaskedLMHead tied to the token embeddings,
    trained with BERT masking of the documents ({"doc_ids": int [B, L]}; queries are ignored).
    New masks every step (a SeedGenerator, checkpointed with the dropout RNG states)."""

    def __init__(self, config: ModelConfig, seed: int = 0, mask_rate: float = 0.15, **kwargs):
        from .model import MaskedLMHead, TransformerEncoder

        super().__init__(**kwargs)
        self.config, self.mask_rate = config, mask_rate
        self.encoder = TransformerEncoder(config, name="encoder")
        self.head = MaskedLMHead(config, name="mlm_head")
        self.mask_seed = keras.random.SeedGenerator(seed, name="mask_seed")

    def build(self, input_shape=None):
        ids = keras.KerasTensor((None, self.config.max_doc_len), dtype="int32")
        self.head(self.encoder(ids), self.encoder.token_embedding.embeddings)

    def call(self, inputs, training=False):
        from .model import mask_tokens

        ids = inputs["doc_ids"] if isinstance(inputs, dict) else inputs
        masked, labels, weights = mask_tokens(ids, self.config.vocab_size, self.mask_seed,
                                              mask_rate=self.mask_rate)
        sequence = self.encoder(masked, training=training)
        logits = self.head(sequence, self.encoder.token_embedding.embeddings)
        return {"logits": logits, "labels": labels, "weights": weights}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        from .losses import _tf_replica_context, masked_lm_loss

        if y_pred is None:
            y_pred = self(x, training=training)
        loss = masked_lm_loss(y_pred["labels"], y_pred["logits"], y_pred["weights"])
        found = _tf_replica_context()
        if found is not None:  # the per-replica scaling Keras expects under tf.distribute
            loss = loss / found[1].num_replicas_in_sync
        return loss


def two_tower_from_mlm(mlm, model_config: ModelConfig):
    """A TwoTower whose query and document encoders both start from the MLM-trained encoder
    (the projections keep their fresh initialization)."""
    from .model import TwoTower

    model = TwoTower(model_config)
    model.build()
    weights = mlm.encoder.get_weights()
    model.query_tower.encoder.set_weights(weights)
    model.doc_tower.encoder.set_weights(weights)
    return model


# ---- devices -----------------------------------------------------------------------------------

def distribution(config: TrainConfig):
    """(context manager for building and fitting, number of replicas).

    TensorFlow: TPUStrategy with `tpu`, MirroredStrategy with >1 GPU, else the default
    strategy. JAX: keras.distribution.DataParallel over all devices when there are >1."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf

        if config.tpu:
            try:
                resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=config.tpu)
                tf.config.experimental_connect_to_cluster(resolver)
                tf.tpu.experimental.initialize_tpu_system(resolver)
                strategy = tf.distribute.TPUStrategy(resolver)
            except (ValueError, RuntimeError, tf.errors.OpError) as e:
                message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
                raise TrainError(f"cannot connect to TPU {config.tpu!r}: {message}") from None
        elif len(tf.config.list_logical_devices("GPU")) > 1:
            strategy = tf.distribute.MirroredStrategy()
        else:
            strategy = tf.distribute.get_strategy()
        return strategy.scope(), strategy.num_replicas_in_sync
    if config.tpu:
        raise TrainError(f"--tpu needs the TensorFlow backend (KERAS_BACKEND={backend}: run on "
                         f"the TPU host, where its devices are found without --tpu)")
    if backend == "jax":
        import jax

        devices = jax.devices()
        if len(devices) > 1:
            keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))
        return contextlib.nullcontext(), len(devices)
    return contextlib.nullcontext(), 1


# ---- callbacks ---------------------------------------------------------------------------------

def _rng_variables(model) -> list:
    """The model's random-generator states (dropout, masking): variables that are not weights,
    so `save_weights` leaves them out."""
    weights = {id(v) for v in model.weights}
    return [v for v in model.variables if id(v) not in weights]


def save_checkpoint(model, folder: str, step: int) -> str:
    """Writes folder/step-NNNNNNNN/ (model + optimizer state, RNG states), then
    folder/checkpoint.json naming it; keeps the last KEEP_CHECKPOINTS. Returns the path."""
    name = f"step-{step:08d}"
    final = os.path.join(folder, name)
    tmp = _tmp_path(final)
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    model.save_weights(os.path.join(tmp, WEIGHTS))
    rng = {v.path: np.asarray(keras.ops.convert_to_numpy(v.value))
           for v in _rng_variables(model)}
    np.savez(os.path.join(tmp, "rng.npz"), **{f"v{i}": a for i, a in enumerate(rng.values())})
    _write_json(os.path.join(tmp, "rng.json"), list(rng))
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    _write_json(os.path.join(folder, CHECKPOINT_STATE), {"step": step, "path": name})
    old = sorted(d for d in os.listdir(folder) if d.startswith("step-") and d != name
                 and not d.endswith(".tmp"))
    for d in old[:max(0, len(old) - (KEEP_CHECKPOINTS - 1))]:
        shutil.rmtree(os.path.join(folder, d), ignore_errors=True)
    return final


def latest_checkpoint(folder: str) -> tuple[int, str] | None:
    """(step, path) of the checkpoint folder/checkpoint.json names, or None."""
    state_path = os.path.join(folder, CHECKPOINT_STATE)
    if not os.path.exists(state_path):
        return None
    with open(state_path, encoding="utf-8") as f:
        state = json.load(f)
    path = os.path.join(folder, state["path"])
    if not os.path.exists(os.path.join(path, WEIGHTS)):
        raise TrainError(f"{state_path} names {path}, which is missing: remove {folder} to start "
                         f"over")
    return int(state["step"]), path


def restore_checkpoint(model, path: str) -> None:
    """Model + optimizer state and RNG states from a `save_checkpoint` folder (the model is
    built and compiled)."""
    if model.optimizer is not None and not model.optimizer.built:
        model.optimizer.build(model.trainable_variables)
    model.load_weights(os.path.join(path, WEIGHTS))
    names_path = os.path.join(path, "rng.json")
    if os.path.exists(names_path):  # by position: auto-generated names differ between processes
        with open(names_path, encoding="utf-8") as f:
            count = len(json.load(f))
        saved = np.load(os.path.join(path, "rng.npz"))
        variables = _rng_variables(model)
        if count == len(variables):
            for i, v in enumerate(variables):
                if tuple(saved[f"v{i}"].shape) == tuple(v.shape):
                    v.assign(saved[f"v{i}"])


def _step_checkpoint(folder: str, every: int, initial_step: int):
    class StepCheckpoint(keras.callbacks.Callback):
        """Saves a checkpoint every `every` global steps and after the last one."""

        def __init__(self):
            super().__init__()
            self.step = self.saved = initial_step

        def on_train_batch_end(self, batch, logs=None):
            self.step = initial_step + batch + 1
            if self.step - self.saved >= every:
                save_checkpoint(self.model, folder, self.step)
                self.saved = self.step

        def on_train_end(self, logs=None):
            if self.step > self.saved:
                save_checkpoint(self.model, folder, self.step)
                self.saved = self.step

    return StepCheckpoint()


def _progress_logger(config: TrainConfig, initial_step: int, log_path: str, replicas: int,
                     events: "ScalarEvents | None" = None):
    class ProgressLogger(keras.callbacks.Callback):
        """Every `log_every` steps: mean loss over those steps, learning rate, steps/s and
        examples/s, on stdout (unless quiet), as a JSON line in train_log.jsonl and as
        TensorBoard scalars train/* (with `events`)."""

        def __init__(self):
            super().__init__()
            self.records = []

        def on_train_begin(self, logs=None):
            self.last_time, self.last_batch, self.last_sum = time.perf_counter(), 0, 0.0

        def on_train_batch_end(self, batch, logs=None):
            done = batch + 1
            step = initial_step + done
            if step % config.log_every and step != config.steps:
                return
            mean = float((logs or {}).get("loss", float("nan")))  # running mean of this fit
            window = done - self.last_batch
            if window <= 0:
                return
            loss = (mean * done - self.last_sum) / window
            now = time.perf_counter()
            rate = window / max(now - self.last_time, 1e-9)
            lr = float(keras.ops.convert_to_numpy(
                self.model.optimizer.learning_rate)) if self.model.optimizer else float("nan")
            record = {"step": step, "loss": round(loss, 6), "learning_rate": lr,
                      "steps_per_s": round(rate, 3),
                      "examples_per_s": round(rate * config.batch_size, 1)}
            self.records.append(record)
            with open(log_path, "a", encoding="utf-8") as f:
                f.write(json.dumps(record) + "\n")
            if events is not None:
                events.add(step, {f"train/{k}": v for k, v in record.items() if k != "step"})
            if not config.quiet:
                print(f"step {step:>7}/{config.steps}  loss {loss:8.4f}  lr {lr:.2e}  "
                      f"{rate:7.2f} steps/s  {rate * config.batch_size:9.1f} examples/s",
                      flush=True)
            self.last_time, self.last_batch, self.last_sum = now, done, mean * done

    return ProgressLogger()


def tensorboard_available() -> bool:
    """TensorBoard logs need the `tensorboard` package (TensorFlow 2.21 no longer installs it:
    `pip install tensorboard`); not TensorFlow: `ScalarEvents` writes them on any backend."""
    import importlib.util

    return importlib.util.find_spec("tensorboard") is not None


class ScalarEvents:
    """TensorBoard scalars in `log_dir`: `add(step, {"train/loss": 2.3, ...})`. The event file
    is TFRecord-framed `Event` protos (tensorboard's own proto classes, framed by
    wikipairs.tfrecord), written here rather than by tensorboard's writer, which imports
    TensorFlow whenever it is installed: a JAX run stays free of it. Steps are global steps,
    so a resumed run continues its curves (in a new event file)."""

    def __init__(self, log_dir: str):
        import socket

        from tensorboard.compat.proto import event_pb2, summary_pb2

        self._event, self._summary = event_pb2.Event, summary_pb2.Summary
        os.makedirs(log_dir, exist_ok=True)
        name = (f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}."
                f"{os.getpid()}.wikipairs")
        self._file = open(os.path.join(log_dir, name), "ab")
        self._write(self._event(wall_time=time.time(), file_version="brain.Event:2"))

    def _write(self, event) -> None:
        self._file.write(frame_record(event.SerializeToString()))
        self._file.flush()  # a killed run keeps what it logged

    def add(self, step: int, scalars: dict) -> None:
        values = [self._summary.Value(tag=tag, simple_value=float(value))
                  for tag, value in scalars.items() if value is not None]
        if values:
            self._write(self._event(wall_time=time.time(), step=int(step),
                                    summary=self._summary(value=values)))

    def close(self) -> None:
        self._file.close()


# ---- evaluation --------------------------------------------------------------------------------

def in_batch_accuracy(model, batches, max_batches: int | None = None) -> dict:
    """Held-out retrieval within each batch: every query against the batch's B documents.

    model: a TwoTower. batches: an iterable of {"query_ids", "doc_ids"} (NumPy or tensors).
    Returns {"accuracy": top-1 share of queries whose own document scores highest, "mrr",
    "loss": mean in-batch softmax loss (model temperature), "batches", "examples"}."""
    correct = rr = loss = 0.0
    n = count = 0
    for batch in batches:
        if max_batches is not None and count >= max_batches:
            break
        q = model.encode_queries(batch["query_ids"], training=False)
        d = model.encode_docs(batch["doc_ids"], training=False)
        scores = np.asarray(ops.convert_to_numpy(model.score(q, d)), dtype=np.float64)
        b = scores.shape[0]
        own = scores[np.arange(b), np.arange(b)]
        rank = (scores > own[:, None]).sum(axis=1) + 1
        correct += float((rank == 1).sum())
        rr += float((1.0 / rank).sum())
        z = scores / model.config.temperature
        z = z - z.max(axis=1, keepdims=True)
        loss += float((np.log(np.exp(z).sum(axis=1)) - np.diag(z)).sum())
        n += b
        count += 1
    if n == 0:
        return {"accuracy": None, "mrr": None, "loss": None, "batches": 0, "examples": 0}
    return {"accuracy": correct / n, "mrr": rr / n, "loss": loss / n, "batches": count,
            "examples": n}


def eval_batches(config: TrainConfig, model_config: ModelConfig, tasks, batch_size: int | None
                 = None, data_format: str = "parquet"):
    """The held-out batches of a run's data (split "eval", no repeat, no shuffle)."""
    return data_lib.make_batches(
        config.data, data_format=data_format, tasks=tasks, weights=config.task_weights,
        batch_size=batch_size or config.eval_batch_size,
        max_query_len=model_config.max_query_len, max_doc_len=model_config.max_doc_len,
        split="eval", eval_percent=config.eval_percent, seed=config.seed, shuffle=False,
        repeat=False)


# ---- loading and saving ------------------------------------------------------------------------

def load_model(folder: str):
    """The TwoTower a run saved in `folder` (model_config.json + model.weights.h5)."""
    from .model import TwoTower

    config_path, weights_path = os.path.join(folder, MODEL_CONFIG), os.path.join(folder, WEIGHTS)
    for path in (config_path, weights_path):
        if not os.path.exists(path):
            raise TrainError(f"{folder}: no {os.path.basename(path)} (not a `wikipairs train` "
                             f"output folder?)")
    with open(config_path, encoding="utf-8") as f:
        model_config = ModelConfig.from_json(f.read())
    model = TwoTower(model_config)
    model.build()
    model.load_weights(weights_path)
    return model


def _tmp_path(path: str) -> str:
    """Where `path` is written before it is renamed into place (Keras wants *.weights.h5)."""
    if path.endswith(".weights.h5"):
        return path[:-len(".weights.h5")] + ".tmp.weights.h5"
    return path + ".tmp"


def _write_text(path: str, text: str) -> None:
    fileio.write_atomic(path, text.encode("utf-8"))  # via path + ".tmp", as _tmp_path names it


def _write_json(path: str, value) -> None:
    _write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


def _copy_file(source: str, path: str) -> None:
    tmp = _tmp_path(path)
    shutil.copyfile(source, tmp)
    os.replace(tmp, path)


def _save_weights(model, path: str) -> None:
    tmp = _tmp_path(path)
    model.save_weights(tmp)
    os.replace(tmp, path)


def _remove_partial_writes(output: str, ckpt_dir: str) -> None:
    """Deletes the temporary names (`_tmp_path`) of a run's files: what a killed run was
    writing (other files in the output folder are left alone)."""
    paths = [os.path.join(output, n) for n in (WEIGHTS, MODEL_CONFIG, TRAIN_CONFIG, EVAL, VOCAB,
                                                VOCAB_LISTING, TRAIN_LOG)]
    paths += [os.path.join(ckpt_dir, n) for n in (CHECKPOINT_STATE, RUN_STATE)]
    paths += [os.path.join(ckpt_dir, d[:-len(".tmp")]) for d in os.listdir(ckpt_dir)
              if d.startswith("step-") and d.endswith(".tmp")]
    for tmp in map(_tmp_path, paths):
        if os.path.isdir(tmp):
            shutil.rmtree(tmp)
        elif os.path.exists(tmp):
            os.remove(tmp)


def _trim_log(path: str, step: int) -> None:
    """Keeps the train_log.jsonl records of steps <= `step`: a resumed run logs the later ones
    again, and a killed run may have logged steps past its last checkpoint (or half a line)."""
    if not os.path.exists(path):
        return
    kept = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:  # cut by the kill
                continue
            if isinstance(record, dict) and record.get("step", step + 1) <= step:
                kept.append(json.dumps(record) + "\n")
    if kept:
        _write_text(path, "".join(kept))
    else:
        os.remove(path)


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
    try:
        if config.mode == "finetune":
            with open(os.path.join(config.init, MODEL_CONFIG), encoding="utf-8") as f:
                base = ModelConfig.from_json(f.read())
            model_config = base.replace(**overrides)
        elif os.path.isfile(config.model):
            with open(config.model, encoding="utf-8") as f:
                model_config = ModelConfig.from_json(f.read()).replace(**overrides)
        elif config.model in NAMED_CONFIGS:
            model_config = ModelConfig.from_name(config.model,
                                                 **{"vocab_size": size, **overrides})
        else:
            raise TrainError(f"unknown model {config.model!r}: one of "
                             f"{', '.join(NAMED_CONFIGS)} or a model_config.json file")
    except (TypeError, ValueError) as e:  # unknown or bad fields
        raise TrainError(f"bad model configuration: {str(e).splitlines()[0]}") from None
    except OSError as e:
        raise TrainError(f"cannot read the model configuration: {e}") from None
    if model_config.vocab_size < size:
        raise TrainError(f"the model has {model_config.vocab_size} token embeddings but the "
                         f"vocabulary {vocab_path} has {size} pieces")
    if config.objective == "mlm" and model_config.encoder != "transformer":
        raise TrainError("--objective mlm trains a Transformer encoder; it does not apply to "
                         f"the {model_config.encoder} model")
    return model_config


def _identity(config: TrainConfig) -> dict:
    d = config.to_dict()
    out = {k: d[k] for k in _RUN_IDENTITY}
    out["data"] = [os.path.abspath(p) for p in out["data"]]
    out["init"] = os.path.abspath(out["init"]) if out["init"] else None
    return out


# ---- the run -----------------------------------------------------------------------------------

def pretrain(config: TrainConfig, callbacks=()) -> dict:
    """Pre-train (two-tower or MLM) with `config` (mode "pretrain"); see `train`."""
    return train(dataclasses.replace(config, mode="pretrain"), callbacks)


def finetune(config: TrainConfig, callbacks=()) -> dict:
    """Fine-tune the pre-trained model in `config.init` on the pairs in `config.data`."""
    return train(dataclasses.replace(config, mode="finetune"), callbacks)


def train(config: TrainConfig, extra_callbacks=()) -> dict:
    """Run (or resume) one training run; `callbacks`: extra Keras callbacks for `fit` (their
    batch index counts from the resumed step). Returns a summary: steps, initial_step (the restored
    checkpoint's step, 0 for a fresh run), log (train_log records of this call), eval (held-out
    in-batch accuracy), output, replicas, seconds. Raises WikipairsError on bad input."""
    config = config.resolved()
    data_format = config.data_format
    if data_format == "auto":  # TFRecord on TensorFlow when the shards have it
        data_format = ("tfrecord" if keras.backend.backend() == "tensorflow"
                       and _has_format(config.data, config.tasks, "tfrecord") else "parquet")
    if data_format == "tfrecord" and keras.backend.backend() != "tensorflow":
        raise TrainError("TFRecord input needs the TensorFlow backend; use --data-format parquet")
    shards = data_lib.find_shards(config.data, config.tasks, data_format)
    data_lib.check_token_ids(config.data, shards)
    tasks = list(shards)
    if config.task_weights is not None:
        data_lib.task_weights(tasks, config.task_weights)
    if config.mode == "finetune":
        if not os.path.isdir(config.init):
            raise TrainError(f"{config.init}: no such pre-trained model folder")
        for name in (MODEL_CONFIG, WEIGHTS):
            if not os.path.exists(os.path.join(config.init, name)):
                raise TrainError(f"{config.init}: no {name} (not a `wikipairs train pretrain` "
                                 f"output folder?)")
    vocab_path = find_vocab(config)
    model_config = model_config_for(config, vocab_path)

    output = config.output
    os.makedirs(output, exist_ok=True)
    ckpt_dir = os.path.join(output, CHECKPOINTS)
    os.makedirs(ckpt_dir, exist_ok=True)
    run_path = os.path.join(ckpt_dir, RUN_STATE)
    latest = latest_checkpoint(ckpt_dir)
    if latest is not None and os.path.exists(run_path):
        with open(run_path, encoding="utf-8") as f:
            previous = json.load(f)
        now = _identity(config)
        changed = [k for k in _RUN_IDENTITY if previous.get(k) != now.get(k)]
        if changed:
            raise TrainError(f"{output} holds a checkpoint of another run ({', '.join(changed)} "
                             f"differ): use another --output, or delete {ckpt_dir} to start over")
    _remove_partial_writes(output, ckpt_dir)
    _trim_log(os.path.join(output, TRAIN_LOG), min(latest[0], config.steps) if latest else 0)
    _write_json(run_path, _identity(config))

    previous_policy, events = keras.config.dtype_policy(), None
    if config.mixed_precision:
        keras.config.set_dtype_policy("mixed_bfloat16")
    started = time.perf_counter()
    try:
        set_random_seed(config.seed)
        scope, replicas = distribution(config)
        if config.batch_size % replicas:
            raise TrainError(f"batch size {config.batch_size} is not a multiple of the "
                             f"{replicas} replicas")
        with scope:
            model = _build_model(config, model_config)
            model.compile(optimizer=make_optimizer(config), jit_compile=config.jit_compile,
                          run_eagerly=config.run_eagerly,
                          steps_per_execution=config.steps_per_execution)
            initial_step = 0
            if latest is not None:
                initial_step, path = latest
                restore_checkpoint(model, path)
                iterations = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
                if iterations != initial_step:
                    raise TrainError(f"{path}: optimizer at step {iterations}, expected "
                                     f"{initial_step}")
            initial_step = min(initial_step, config.steps)
            if not config.quiet:
                _print_start(config, model_config, tasks, replicas, initial_step)
                if config.tensorboard and not tensorboard_available():
                    print("no TensorBoard logs: `pip install tensorboard`", flush=True)
            if config.tensorboard and tensorboard_available():
                events = ScalarEvents(os.path.join(output, "logs"))
            logger = _progress_logger(config, initial_step, os.path.join(output, TRAIN_LOG),
                                      replicas, events)
            if initial_step < config.steps:
                source = data_lib.make_batches(
                    config.data, data_format=data_format, tasks=tasks,
                    weights=config.task_weights, batch_size=config.batch_size,
                    max_query_len=model_config.max_query_len,
                    max_doc_len=model_config.max_doc_len, split="train",
                    eval_percent=config.eval_percent, seed=config.seed,
                    shuffle_buffer=config.shuffle_buffer, skip_batches=initial_step)
                batches = source if hasattr(source, "element_spec") \
                    else ((b,) for b in source)  # Keras wants (inputs,) tuples
                callbacks = [logger, _step_checkpoint(ckpt_dir, config.checkpoint_every,
                                                      initial_step)]
                try:
                    model.fit(batches, epochs=1, steps_per_epoch=config.steps - initial_step,
                              callbacks=callbacks + list(extra_callbacks), verbose=0,
                              shuffle=False)
                finally:
                    if hasattr(source, "close"):  # stops the Parquet prefetch thread now
                        source.close()
        two_tower = _final_two_tower(model, model_config, config)
        evaluation = _evaluate(config, model_config, two_tower, tasks)
        if events is not None:
            events.add(config.steps, {f"eval/{k}": evaluation.get(k)
                                      for k in ("accuracy", "mrr", "loss")})
        _save_outputs(config, model_config, two_tower, vocab_path, evaluation)
    finally:
        keras.config.set_dtype_policy(previous_policy)
        if events is not None:
            events.close()
    summary = {"output": os.path.abspath(output), "steps": config.steps,
               "initial_step": initial_step, "replicas": replicas, "log": logger.records,
               "eval": evaluation, "seconds": round(time.perf_counter() - started, 2)}
    if not config.quiet:
        acc = evaluation.get("accuracy")
        print(f"done: {config.steps} steps" + (f" (resumed at {initial_step})" if initial_step
                                                else "")
              + (f"; held-out in-batch top-1 {acc:.3f} (batches of {config.eval_batch_size})"
                 if acc is not None else "") + f"; model in {os.path.abspath(output)}",
              flush=True)
    return summary


def set_random_seed(seed: int) -> None:
    """keras.utils.set_random_seed, except that off the TensorFlow backend it does not import
    TensorFlow (Keras' own version seeds TensorFlow whenever it is installed)."""
    if keras.backend.backend() == "tensorflow" or "tensorflow" in sys.modules:
        keras.utils.set_random_seed(seed)
        return
    import random

    random.seed(seed)
    np.random.seed(seed)
    try:  # what keras.utils.set_random_seed does besides seeding TensorFlow
        from keras.src.backend.common import global_state
        from keras.src.random import seed_generator
        from keras.src.utils.rng_utils import GLOBAL_RANDOM_SEED

        global_state.set_global_attribute(GLOBAL_RANDOM_SEED, seed)
        global_state.set_global_attribute(seed_generator.GLOBAL_SEED_GENERATOR, None)
    except (ImportError, AttributeError):
        pass


def _build_model(config: TrainConfig, model_config: ModelConfig):
    from .model import TwoTower

    if config.objective == "mlm":
        model = MaskedLM(model_config, config.seed, config.mask_rate, name="masked_lm")
        model.build()
        return model
    model = TwoTower(model_config)
    model.build()
    if config.mode == "finetune":
        model.load_weights(os.path.join(config.init, WEIGHTS))
    return model


def _final_two_tower(model, model_config: ModelConfig, config: TrainConfig):
    """The trained TwoTower without optimizer state (the MLM encoder in both towers)."""
    from .model import TwoTower

    if config.objective == "mlm":
        return two_tower_from_mlm(model, model_config)
    plain = TwoTower(model_config)
    plain.build()
    plain.set_weights(model.get_weights())
    return plain


def _evaluate(config: TrainConfig, model_config: ModelConfig, model, tasks) -> dict:
    if config.eval_batches <= 0 or config.eval_percent <= 0:
        return {"accuracy": None, "batches": 0, "examples": 0}
    batches = eval_batches(config, model_config, tasks, data_format="parquet"
                           if _has_format(config.data, tasks) else "tfrecord")
    result = in_batch_accuracy(model, batches, config.eval_batches)
    result["batch_size"] = config.eval_batch_size
    return result


def _has_format(data_dirs, tasks, fmt: str = "parquet") -> bool:
    try:
        data_lib.find_shards(data_dirs, tasks, fmt)
        return True
    except data_lib.DataError:
        return False


def _save_outputs(config, model_config, model, vocab_path, evaluation) -> None:
    out = config.output
    _save_weights(model, os.path.join(out, WEIGHTS))
    _write_text(os.path.join(out, MODEL_CONFIG), model_config.to_json() + "\n")
    _write_json(os.path.join(out, TRAIN_CONFIG), config.to_dict())
    target = os.path.join(out, VOCAB)
    if os.path.abspath(vocab_path) != os.path.abspath(target):
        _copy_file(vocab_path, target)
        listing = os.path.splitext(vocab_path)[0] + ".vocab"
        if os.path.exists(listing):
            _copy_file(listing, os.path.join(out, VOCAB_LISTING))
    _write_json(os.path.join(out, EVAL), evaluation)  # last: the run is complete


def _print_start(config, model_config, tasks, replicas, initial_step) -> None:
    c = model_config
    shape = (f"{c.num_layers} layers x {c.hidden_size}" if c.encoder == "transformer"
             else f"BoW {c.hidden_size}")
    weights = data_lib.task_weights(tasks, config.task_weights)
    mix = ", ".join(f"{t} {w:.2f}" for t, w in zip(tasks, weights))
    print(f"{config.mode} ({config.objective}): {c.name} ({shape}, vocab {c.vocab_size}), "
          f"{replicas} replica(s); tasks {mix}; batch {config.batch_size}, {config.steps} steps, "
          f"lr {config.learning_rate:g}" + (f"; resuming at step {initial_step}"
                                            if initial_step else ""), flush=True)
    sys.stdout.flush()
