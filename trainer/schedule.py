"""The learning rate and optimizer of a run: `WarmupLinearDecay` (linear warm-up over the first
`warmup_fraction` of the steps, then linear decay to 0) and `make_optimizer` (AdamW on it)."""
from __future__ import annotations

import keras
from keras import ops

from .train_config import TrainConfig


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
