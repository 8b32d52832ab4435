"""Where a run computes: `distribution` (TPUStrategy, MirroredStrategy or JAX DataParallel, and
the number of replicas) and `set_random_seed` (which leaves TensorFlow unimported off its
backend). TensorFlow and JAX are imported only when the backend is theirs."""
from __future__ import annotations

import contextlib
import sys

import keras
import numpy as np

from .train_config import TrainConfig, TrainError


def distribution(config: TrainConfig):
    """(context manager for building and fitting, number of replicas).

    TensorFlow: TPUStrategy with `tpu`, MirroredStrategy with >1 GPU, else the default
    strategy. JAX: keras.distribution.DataParallel over all devices when there are >1."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        strategy = _tf_strategy(config)
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


def _tf_strategy(config: TrainConfig):
    """TPUStrategy with `config.tpu`, MirroredStrategy with >1 GPU, else the default strategy."""
    import tensorflow as tf

    if config.tpu:
        try:
            resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu=config.tpu)
            tf.config.experimental_connect_to_cluster(resolver)
            tf.tpu.experimental.initialize_tpu_system(resolver)
            return tf.distribute.TPUStrategy(resolver)
        except (ValueError, RuntimeError, tf.errors.OpError) as e:
            message = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise TrainError(f"cannot connect to TPU {config.tpu!r}: {message}") from None
    if len(tf.config.list_logical_devices("GPU")) > 1:
        return tf.distribute.MirroredStrategy()
    return tf.distribute.get_strategy()


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
