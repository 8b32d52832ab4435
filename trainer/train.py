"""Pre-training and fine-tuning of the two-tower retriever (`wikipairs train pretrain|finetune`):
the training loop.

`pretrain(TrainConfig(...))` / `finetune(TrainConfig(..., init=DIR))` run `keras.Model.fit` on
the pair shards (`trainer.data`), on the TensorFlow backend (tf.data over TFRecord; TPUStrategy
with `tpu`, MirroredStrategy with several GPUs) or the JAX backend (Parquet through NumPy;
`keras.distribution.DataParallel` with several devices). The learning rate warms up linearly
over the first `warmup_fraction` of the steps, then decays linearly to 0 (AdamW, weight decay
0.01 except on biases and layer-norm parameters).

Checkpoints: every `checkpoint_every` steps (see trainer.checkpoints). Running the same
configuration again after an interruption (also a SIGKILL) restores the latest checkpoint and
continues from its step, skipping the batches already seen, so the run ends after `steps` steps
in all (and, with a deterministic input pipeline, with the weights of an uninterrupted run).

At the end OUTPUT holds: model.weights.h5 (a `TwoTower`, no optimizer state), model_config.json,
train_config.json, spm.model (a copy of the vocabulary), eval.json (held-out in-batch
accuracy), train_log.jsonl (loss and speed every `log_every` steps) and TensorBoard scalars
(logs/: train/loss, train/learning_rate, train/steps_per_s, train/examples_per_s, eval/*; on
any backend, written by the tensorboard package without TensorFlow).

Objectives: "two-tower" (in-batch softmax, the paper's pre-training and fine-tuning) and "mlm"
(the paper's MLM baseline: BERT masked LM on the documents with the head tied to the token
embeddings; both towers of the saved TwoTower start from the trained encoder).

The parts of a run: trainer.train_config (TrainConfig, TrainError), trainer.schedule (learning
rate, optimizer), trainer.masked_lm (the MLM baseline's model), trainer.devices (distribution,
seeding), trainer.checkpoints (checkpoints, resuming, the run folder's files), trainer.events
(progress log, TensorBoard scalars), trainer.evaluation (held-out in-batch accuracy); this module
resolves a run's inputs, runs the loop and saves the final model.
"""
from __future__ import annotations

import dataclasses
import os
import sys
import time

import keras

from . import data as data_lib
from . import gradcache
from .checkpoints import (EVAL, MODEL_CONFIG, TRAIN_CONFIG, TRAIN_LOG, VOCAB, VOCAB_LISTING,
                          WEIGHTS, copy_file, latest_checkpoint, prepare_run_folder, resume,
                          save_weights, step_checkpoint, write_json, write_text)
from .configs import ModelConfig
from .devices import distribution, set_random_seed
from .evaluation import eval_batches, in_batch_accuracy
from .events import ScalarEvents, progress_logger, tensorboard_available
from .schedule import make_optimizer
from .train_config import (TrainConfig, TrainError, check_run, find_vocab, model_config_for,
                           vocab_size)

__all__ = ["TrainConfig", "TrainError", "eval_batches", "finetune", "find_vocab",
           "in_batch_accuracy", "latest_checkpoint", "load_model", "model_config_for",
           "pretrain", "train", "vocab_size"]


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
    data_format, tasks = _input_shards(config)
    vocab_path, model_config = check_run(config)
    ckpt_dir, latest = prepare_run_folder(config)

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
        if config.chunk_size and keras.backend.backend() not in gradcache.BACKENDS:
            raise TrainError(f"--chunk-size needs the TensorFlow or JAX backend, not "
                             f"KERAS_BACKEND={keras.backend.backend()}")
        if config.chunk_size and (config.batch_size // replicas) % config.chunk_size:
            raise TrainError(f"the batch per replica ({config.batch_size // replicas}) is not "
                             f"a multiple of the chunk size {config.chunk_size}")
        with scope:
            model, initial_step = _compiled_model(config, model_config, latest)
            if not config.quiet:
                _print_start(config, model_config, tasks, replicas, initial_step)
            events = _open_events(config)
            logger = progress_logger(config, initial_step,
                                     os.path.join(config.output, TRAIN_LOG), replicas, events)
            if initial_step < config.steps:
                callbacks = [logger, step_checkpoint(ckpt_dir, config.checkpoint_every,
                                                     initial_step)]
                _fit(config, model_config, model, data_format, tasks, initial_step,
                     callbacks + list(extra_callbacks))
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
    summary = {"output": os.path.abspath(config.output), "steps": config.steps,
               "initial_step": initial_step, "replicas": replicas, "log": logger.records,
               "eval": evaluation, "seconds": round(time.perf_counter() - started, 2)}
    if not config.quiet:
        _print_done(config, initial_step, evaluation)
    return summary


def _input_shards(config: TrainConfig) -> tuple[str, list[str]]:
    """(data format, tasks) of the run's training shards (found, with token ids)."""
    data_format = config.data_format
    if data_format == "auto":  # TFRecord on TensorFlow when the shards have it
        data_format = ("tfrecord" if keras.backend.backend() == "tensorflow"
                       and _has_format(config.data, config.tasks, "tfrecord") else "parquet")
    if data_format == "tfrecord" and keras.backend.backend() != "tensorflow":
        raise TrainError("TFRecord input needs the TensorFlow backend; use --data-format parquet")
    shards = data_lib.find_shards(config.data, config.tasks, data_format)
    data_lib.check_token_ids(config.data, shards)
    if config.hard_negatives:  # two-tower only (TrainConfig refuses it with mlm)
        data_lib.check_hard_negatives(shards, keys=config.clean_negatives)
    tasks = list(shards)
    if config.task_weights is not None:
        data_lib.task_weights(tasks, config.task_weights)
    return data_format, tasks


def _compiled_model(config: TrainConfig, model_config: ModelConfig, latest):
    """(the compiled model, restored from the `latest` checkpoint, its step capped at steps)."""
    model = _build_model(config, model_config)
    model.compile(optimizer=make_optimizer(config), jit_compile=config.jit_compile,
                  run_eagerly=config.run_eagerly,
                  steps_per_execution=config.steps_per_execution)
    return model, min(resume(model, latest), config.steps)


def _open_events(config: TrainConfig) -> ScalarEvents | None:
    """The run's TensorBoard writer, or None (without the tensorboard package: a hint)."""
    if not config.quiet and config.tensorboard and not tensorboard_available():
        print("no TensorBoard logs: `pip install tensorboard`", flush=True)
    if config.tensorboard and tensorboard_available():
        return ScalarEvents(os.path.join(config.output, "logs"))
    return None


def _fit(config: TrainConfig, model_config: ModelConfig, model, data_format: str, tasks,
         initial_step: int, callbacks: list) -> None:
    """`model.fit` over the training batches from `initial_step` to config.steps."""
    source = data_lib.make_batches(
        config.data, data_format=data_format, tasks=tasks,
        weights=config.task_weights, batch_size=config.batch_size,
        max_query_len=model_config.max_query_len,
        max_doc_len=model_config.max_doc_len, split="train",
        eval_percent=config.eval_percent, seed=config.seed,
        shuffle_buffer=config.shuffle_buffer, skip_batches=initial_step,
        negative_keys=config.clean_negatives and config.objective == "two-tower",
        hard_negatives=config.hard_negatives, distinct_pages=config.distinct_pages,
        page_keys=config.page_negatives, task_batches=config.task_batches)
    batches = source if hasattr(source, "element_spec") \
        else ((b,) for b in source)  # Keras wants (inputs,) tuples
    try:
        model.fit(batches, epochs=1, steps_per_epoch=config.steps - initial_step,
                  callbacks=callbacks, verbose=0, shuffle=False)
    finally:
        if hasattr(source, "close"):  # stops the Parquet prefetch thread now
            source.close()


def _build_model(config: TrainConfig, model_config: ModelConfig):
    from .masked_lm import MaskedLM
    from .model import TwoTower

    if config.objective == "mlm":
        model = MaskedLM(model_config, config.seed, config.mask_rate, name="masked_lm")
        model.build()
        return model
    model = TwoTower(model_config)
    model.build()
    if config.mode == "finetune":
        model.load_weights(os.path.join(config.init, WEIGHTS))
    model.chunk_size = config.chunk_size  # GradCache steps (trainer.gradcache)
    return model


def _final_two_tower(model, model_config: ModelConfig, config: TrainConfig):
    """The trained TwoTower without optimizer state (the MLM encoder in both towers)."""
    from .masked_lm import two_tower_from_mlm
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
    save_weights(model, os.path.join(out, WEIGHTS))
    write_text(os.path.join(out, MODEL_CONFIG), model_config.to_json() + "\n")
    write_json(os.path.join(out, TRAIN_CONFIG), config.to_dict())
    target = os.path.join(out, VOCAB)
    if os.path.abspath(vocab_path) != os.path.abspath(target):
        copy_file(vocab_path, target)
        listing = os.path.splitext(vocab_path)[0] + ".vocab"
        if os.path.exists(listing):
            copy_file(listing, os.path.join(out, VOCAB_LISTING))
    write_json(os.path.join(out, EVAL), evaluation)  # last: the run is complete


def _print_start(config, model_config, tasks, replicas, initial_step) -> None:
    c = model_config
    shape = (f"{c.num_layers} layers x {c.hidden_size}" if c.encoder == "transformer"
             else f"BoW {c.hidden_size}")
    weights = data_lib.task_weights(tasks, config.task_weights)
    mix = ", ".join(f"{t} {w:.2f}" for t, w in zip(tasks, weights))
    if config.task_batches and len(tasks) > 1:
        mix += " per batch"
    print(f"{config.mode} ({config.objective}): {c.name} ({shape}, vocab {c.vocab_size}), "
          f"{replicas} replica(s); tasks {mix}; batch {config.batch_size}, {config.steps} steps, "
          f"lr {config.learning_rate:g}" + (f"; resuming at step {initial_step}"
                                            if initial_step else ""), flush=True)
    sys.stdout.flush()


def _print_done(config: TrainConfig, initial_step: int, evaluation: dict) -> None:
    acc = evaluation.get("accuracy")
    print(f"done: {config.steps} steps" + (f" (resumed at {initial_step})" if initial_step
                                            else "")
          + (f"; held-out in-batch top-1 {acc:.3f} (batches of {config.eval_batch_size})"
             if acc is not None else "") + f"; model in {os.path.abspath(config.output)}",
          flush=True)


# ---- a run's model -----------------------------------------------------------------------------

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

