"""What a run reports while it trains: `progress_logger` (a Keras callback: loss, learning rate
and speed every `log_every` steps, on stdout, in train_log.jsonl and to TensorBoard) and
`ScalarEvents` (TensorBoard scalar event files, written without TensorFlow on any backend).
Importing this module imports neither Keras nor TensorFlow."""
from __future__ import annotations

import json
import math
import os
import time
from typing import TYPE_CHECKING

from wikipairs.shards.tfrecord import frame_record

if TYPE_CHECKING:
    from .train_config import TrainConfig


def progress_logger(config: TrainConfig, initial_step: int, log_path: str, replicas: int,
                    events: "ScalarEvents | None" = None):
    """The Keras callback that logs a run's progress (its `records`: this call's log lines)."""
    import keras

    class ProgressLogger(keras.callbacks.Callback):
        """Every `log_every` steps: mean loss over those steps, learning rate, steps/s and
        examples/s, on stdout (unless quiet, with the time left: `eta`), as a JSON line in
        train_log.jsonl and as TensorBoard scalars train/* (with `events`)."""

        def __init__(self):
            super().__init__()
            self.records = []

        def on_train_begin(self, logs=None):
            self.last_time, self.last_batch, self.last_sum = time.perf_counter(), 0, 0.0
            self.first_report = None  # (time, batch) of the first line: after tracing

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
            if self.first_report is None:  # the first window's rate includes compiling
                self.first_report, pace = (now, done), rate
            else:  # the mean since the first line: steadier than the last window's
                since, first = now - self.first_report[0], self.first_report[1]
                pace = (done - first) / since if since > 0 else rate
            self._report(step, loss, rate, (config.steps - step) / max(pace, 1e-9))
            self.last_time, self.last_batch, self.last_sum = now, done, mean * done

        def _report(self, step: int, loss: float, rate: float, seconds_left: float) -> None:
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
                      f"{rate:7.2f} steps/s  {rate * config.batch_size:9.1f} examples/s  "
                      f"eta {format_duration(seconds_left)}", flush=True)

    return ProgressLogger()


def format_duration(seconds: float) -> str:
    """H:MM:SS of a number of seconds, rounded up ("2d 3:04:05" past a day; 0:00:00 for a
    negative or infinite number)."""
    total = max(0, math.ceil(seconds)) if math.isfinite(seconds) else 0
    days, rest = divmod(total, 86400)
    text = f"{rest // 3600}:{rest % 3600 // 60:02d}:{rest % 60:02d}"
    return f"{days}d {text}" if days else text


def tensorboard_available() -> bool:
    """TensorBoard logs need the `tensorboard` package (TensorFlow 2.21 no longer installs it:
    `pip install tensorboard`); not TensorFlow: `ScalarEvents` writes them on any backend."""
    import importlib.util

    return importlib.util.find_spec("tensorboard") is not None


class ScalarEvents:
    """TensorBoard scalars in `log_dir`: `add(step, {"train/loss": 2.3, ...})`. The event file
    is TFRecord-framed `Event` protos (tensorboard's own proto classes, framed by
    wikipairs.shards.tfrecord), written here rather than by tensorboard's writer, which imports
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
