"""Checkpoints and the crash safety of a run folder: the names of its files, their writing under
temporary names, saving / finding / restoring checkpoints, and the preparation of a resumed run.

Every `checkpoint_every` steps, OUTPUT/checkpoints/step-NNNNNNNN/ holds the model and optimizer
state (`model.weights.h5`, with the step counter) and the dropout RNG states;
OUTPUT/checkpoints/checkpoint.json names the latest one and is written last. Running the same
configuration again after an interruption (also a SIGKILL) restores the latest checkpoint and
continues from its step. Every file is written under a temporary name (NAME.tmp, a checkpoint as
step-NNNNNNNN.tmp/, weights as NAME.tmp.weights.h5) and renamed into place when complete; the
previous checkpoint is deleted only once checkpoint.json names the new one. A resumed run
deletes the temporary names a killed run left, and the train_log.jsonl records past the
restored step (it logs them again).
"""
from __future__ import annotations

import json
import os
import shutil

import keras
import numpy as np

from wikipairs import fileio

from .train_config import (EVAL, MODEL_CONFIG, NATIVE_LOG, TRAIN_CONFIG, TRAIN_LOG,  # noqa: F401
                           VOCAB, VOCAB_LISTING, WEIGHTS, TrainConfig, TrainError)

CHECKPOINTS = "checkpoints"
CHECKPOINT_STATE = "checkpoint.json"
RUN_STATE = "run.json"  # the run's identity settings, in the checkpoints folder
KEEP_CHECKPOINTS = 2
# settings a resumed run must share with the run that wrote the checkpoint
_RUN_IDENTITY = ("mode", "objective", "model", "model_overrides", "data", "tasks",
                 "task_weights", "batch_size", "steps", "learning_rate", "warmup_fraction",
                 "weight_decay", "temperature", "seed", "eval_percent", "init",
                 "mixed_precision", "shuffle_buffer", "mask_rate")


# ---- files written under a temporary name ------------------------------------------------------

def _tmp_path(path: str) -> str:
    """Where `path` is written before it is renamed into place (Keras wants *.weights.h5)."""
    if path.endswith(".weights.h5"):
        return path[:-len(".weights.h5")] + ".tmp.weights.h5"
    return path + ".tmp"


def write_text(path: str, text: str) -> None:
    fileio.write_atomic(path, text.encode("utf-8"))  # via path + ".tmp", as _tmp_path names it


def write_json(path: str, value) -> None:
    write_text(path, json.dumps(value, indent=2, sort_keys=True) + "\n")


def copy_file(source: str, path: str) -> None:
    tmp = _tmp_path(path)
    shutil.copyfile(source, tmp)
    os.replace(tmp, path)


def save_weights(model, path: str) -> None:
    tmp = _tmp_path(path)
    model.save_weights(tmp)
    os.replace(tmp, path)


# ---- checkpoints -------------------------------------------------------------------------------

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
    _save_rng(model, tmp)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(tmp, final)
    write_json(os.path.join(folder, CHECKPOINT_STATE), {"step": step, "path": name})
    _delete_old_checkpoints(folder, name)
    return final


def _save_rng(model, path: str) -> None:
    """path/rng.npz (the RNG states by position) and path/rng.json (their names)."""
    rng = {v.path: np.asarray(keras.ops.convert_to_numpy(v.value))
           for v in _rng_variables(model)}
    np.savez(os.path.join(path, "rng.npz"), **{f"v{i}": a for i, a in enumerate(rng.values())})
    write_json(os.path.join(path, "rng.json"), list(rng))


def _delete_old_checkpoints(folder: str, name: str) -> None:
    """Deletes the checkpoints before `name` but the last KEEP_CHECKPOINTS - 1."""
    old = sorted(d for d in os.listdir(folder) if d.startswith("step-") and d != name
                 and not d.endswith(".tmp"))
    for d in old[:max(0, len(old) - (KEEP_CHECKPOINTS - 1))]:
        shutil.rmtree(os.path.join(folder, d), ignore_errors=True)


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
    _restore_rng(model, path)


def _restore_rng(model, path: str) -> None:
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


def step_checkpoint(folder: str, every: int, initial_step: int):
    """The Keras callback that saves a checkpoint every `every` global steps and at the end."""
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


# ---- resuming ----------------------------------------------------------------------------------

def prepare_run_folder(config: TrainConfig) -> tuple[str, tuple[int, str] | None]:
    """Creates config.output and its checkpoints folder; when it holds a checkpoint, checks it is
    this run's and cleans up after a killed run (temporary names, log records past the
    checkpoint); writes run.json. Returns (checkpoints folder, `latest_checkpoint`)."""
    output = config.output
    os.makedirs(output, exist_ok=True)
    ckpt_dir = os.path.join(output, CHECKPOINTS)
    os.makedirs(ckpt_dir, exist_ok=True)
    run_path = os.path.join(ckpt_dir, RUN_STATE)
    latest = latest_checkpoint(ckpt_dir)
    if latest is not None and os.path.exists(run_path):
        _check_same_run(config, run_path, ckpt_dir)
    _remove_partial_writes(output, ckpt_dir)
    _trim_log(os.path.join(output, TRAIN_LOG), min(latest[0], config.steps) if latest else 0)
    write_json(run_path, _identity(config))
    return ckpt_dir, latest


def resume(model, latest: tuple[int, str] | None) -> int:
    """Restores the `latest_checkpoint` (if any) into the compiled model; returns its step."""
    if latest is None:
        return 0
    initial_step, path = latest
    restore_checkpoint(model, path)
    iterations = int(keras.ops.convert_to_numpy(model.optimizer.iterations))
    if iterations != initial_step:
        raise TrainError(f"{path}: optimizer at step {iterations}, expected "
                         f"{initial_step}")
    return initial_step


def _identity(config: TrainConfig) -> dict:
    d = config.to_dict()
    out = {k: d[k] for k in _RUN_IDENTITY}
    out["data"] = [os.path.abspath(p) for p in out["data"]]
    out["init"] = os.path.abspath(out["init"]) if out["init"] else None
    return out


def _check_same_run(config: TrainConfig, run_path: str, ckpt_dir: str) -> None:
    """TrainError when run.json's settings are not the ones of `config`."""
    with open(run_path, encoding="utf-8") as f:
        previous = json.load(f)
    now = _identity(config)
    changed = [k for k in _RUN_IDENTITY if previous.get(k) != now.get(k)]
    if changed:
        raise TrainError(f"{config.output} holds a checkpoint of another run "
                         f"({', '.join(changed)} differ): use another --output, or delete "
                         f"{ckpt_dir} to start over")


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
        write_text(path, "".join(kept))
    else:
        os.remove(path)
