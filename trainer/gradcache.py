"""Gradient-cached in-batch softmax (GradCache, Gao et al. 2021): a two-tower training step whose
memory is that of `chunk_size` examples, whatever the batch size (`--chunk-size N`).

The in-batch softmax couples every query with every document of the batch, so a batch of 8192
cannot be split into independent micro-batches. GradCache splits the step instead:

1. embed the batch in chunks of N rows without gradients (activations freed chunk by chunk):
   the embeddings Q, D [B, D] are all that is kept;
2. compute the loss from Q and D (the clean-negative mask, the cross-replica gather) and its
   gradients dL/dQ, dL/dD, which are cheap ([B, D]);
3. embed each chunk again, with gradients, and back-propagate dL/dQ, dL/dD of its rows (the
   gradient of sum(q * dL/dq) + sum(d * dL/dd)); the parameter gradients of the chunks add up
   to the gradient of the whole-batch loss, which the optimizer applies once.

The towers run twice (about 1.3-1.5x the compute of a plain step); the loss, the gradients and
so the trained weights are those of the plain step (to float32 rounding). Chunk c holds the rows
c, c + B/N, c + 2B/N, ... (strided, so that under data parallelism every chunk is spread over
all devices); the batch size (per replica on TensorFlow) must be a multiple of N.

Dropout: pass 3 replays the random numbers of pass 1 (sentence-transformers' CachedMNRL does
the same with its RandContext). Every non-trainable variable of a TwoTower is a dropout seed
state: on TensorFlow they are saved before pass 1 and restored before pass 3; on JAX both passes
start from the same state, threaded through the chunks in the same order. So each chunk sees the
same dropout masks in both passes and the gradients are those of the loss that was computed.
(The masks differ from the plain step's: they are drawn per chunk.)

Both loops are sequential (tf.while_loop with parallel_iterations=1, jax.lax.scan), so only one
chunk's activations are alive at a time.

Hard negatives (a batch with "hard_negative_ids" [B, H, Ld]): each chunk also embeds its rows'
H negatives (N * (1 + H) documents a chunk), kept as [B, H, D] like the other embeddings; their
mask and keys go to the loss as they are.
"""
from __future__ import annotations

import keras

from .configs import HARD_NEGATIVE_IDS
from .losses import cross_replica_in_batch_loss

OUTPUTS = ("query_emb", "doc_emb", "hard_negative_emb")


def _inputs(data):
    """(the inputs to embed, the whole batch)."""
    x = data[0] if isinstance(data, (tuple, list)) else data
    embedded = {k: x[k] for k in ("query_ids", "doc_ids", HARD_NEGATIVE_IDS) if k in x}
    return embedded, x


def _outputs(out, rows):
    """The embeddings of a model call on `rows` examples, each [rows, ...]: the hard negatives'
    [rows * H, D] as [rows, H, D]."""
    embs = [out["query_emb"], out["doc_emb"]]
    if "hard_negative_emb" in out:
        h = out["hard_negative_emb"]
        embs.append(keras.ops.reshape(h, (rows, -1, h.shape[-1])))
    return embs


def _loss(model, embs, x):
    """The batch loss of the embeddings [B, ...] (hard negatives [B, H, D] flattened)."""
    from .model import loss_inputs

    hard = None if len(embs) < 3 else keras.ops.reshape(embs[2], (-1, embs[2].shape[-1]))
    return cross_replica_in_batch_loss(embs[0], embs[1], model.config.temperature,
                                       **loss_inputs(x, hard))


def _predictions(embs):
    out = dict(zip(OUTPUTS, embs))
    if len(embs) > 2:
        out["hard_negative_emb"] = keras.ops.reshape(embs[2], (-1, embs[2].shape[-1]))
    return out


def chunk_count(batch_size: int, chunk_size: int) -> int:
    if batch_size % chunk_size:
        raise ValueError(f"the batch of {batch_size} (per replica) is not a multiple of the "
                         f"chunk size {chunk_size}")
    return batch_size // chunk_size


# ---- TensorFlow --------------------------------------------------------------------------------

def train_step_tf(model, data, chunk_size: int):
    """`TwoTower.train_step` on the TensorFlow backend (also in a tf.distribute replica)."""
    import tensorflow as tf
    from keras.src.losses import loss as loss_module

    x, full = _inputs(data)
    batch = x["query_ids"].shape[0]  # None in a tf.distribute replica: then dynamic
    if batch is not None:
        chunk_count(batch, chunk_size)
    else:
        batch = tf.shape(x["query_ids"])[0]
    chunks = batch // chunk_size

    def chunked(t):  # [B, ...] -> [C, N, ...], chunk c = rows c, c + C, ...
        t = tf.reshape(t, tf.concat([[chunk_size, -1], tf.shape(t)[1:]], 0))
        return tf.transpose(t, [1, 0, *range(2, len(t.shape))])

    def unchunked(t):  # [C, N, ...] -> [B, ...]
        t = tf.transpose(t, [1, 0, *range(2, len(t.shape))])
        rest = [n if n is not None else tf.shape(t)[i + 2] for i, n in enumerate(t.shape[2:])]
        return tf.reshape(t, [-1, *rest])

    parts = {k: chunked(v) for k, v in x.items()}
    rng_state = [tf.identity(v.value) for v in model.non_trainable_variables]

    def embed(i):
        return _outputs(model({k: v[i] for k, v in parts.items()}, training=True), chunk_size)

    def forward(i, *arrays):
        return (i + 1, *[a.write(i, tf.stop_gradient(e)) for a, e in zip(arrays, embed(i))])

    dtype = keras.backend.result_type(model.compute_dtype, "float32")  # the towers' output
    shapes = [[chunk_size, None]] * 2
    if HARD_NEGATIVE_IDS in x:
        shapes.append([chunk_size, x[HARD_NEGATIVE_IDS].shape[1], None])
    arrays = [tf.TensorArray(dtype, size=chunks, element_shape=shape) for shape in shapes]
    _, *arrays = tf.while_loop(lambda i, *_: i < chunks, forward, (tf.constant(0), *arrays),
                               parallel_iterations=1)
    embs = [unchunked(a.stack()) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(embs)
        loss = _loss(model, embs, full)
        scaled = model.optimizer.scale_loss(loss) if model.optimizer is not None else loss
    grads_emb = [chunked(g) for g in tape.gradient(scaled, embs)]

    with tf.control_dependencies(grads_emb):  # replay pass 1's dropout
        for v, value in zip(model.non_trainable_variables, rng_state):
            v.assign(value)
    variables = model.trainable_variables

    def backward(i, *acc):
        with tf.GradientTape() as chunk_tape:
            surrogate = tf.add_n([tf.reduce_sum(e * g[i]) for e, g in zip(embed(i), grads_emb)])
        grads = chunk_tape.gradient(surrogate, variables)
        return (i + 1, *[a + (tf.zeros_like(a) if g is None else tf.convert_to_tensor(g))
                         for a, g in zip(acc, grads)])

    zeros = [tf.zeros(v.shape, v.dtype) for v in variables]
    _, *grads = tf.while_loop(lambda i, *_: i < chunks, backward, (tf.constant(0), *zeros),
                              parallel_iterations=1)
    model.optimizer.apply_gradients(zip(grads, variables))
    model._loss_tracker.update_state(loss_module.unscale_loss_for_distribution(loss),
                                     sample_weight=batch)
    return model.compute_metrics(x, None, _predictions(embs), sample_weight=None)


# ---- JAX ---------------------------------------------------------------------------------------

def train_step_jax(model, state, data, chunk_size: int):
    """`TwoTower.train_step` on the JAX backend (stateless: state in, state out)."""
    import jax
    import jax.numpy as jnp

    trainable, non_trainable, optimizer_vars, metrics_vars = state
    x, full = _inputs(data)
    batch = x["query_ids"].shape[0]
    chunks = chunk_count(batch, chunk_size)

    def chunked(t):
        t = jnp.reshape(t, (chunk_size, chunks, *t.shape[1:]))
        return jnp.swapaxes(t, 0, 1)

    def unchunked(t):
        return jnp.reshape(jnp.swapaxes(t, 0, 1), (batch, *t.shape[2:]))

    parts = {k: chunked(v) for k, v in x.items()}

    def embed(weights, rng, chunk):
        out, rng = model.stateless_call(weights, rng, chunk, training=True)
        return _outputs(out, chunk_size), rng

    def forward(rng, chunk):
        embs, rng = embed(trainable, rng, chunk)
        return rng, embs

    _, embs = jax.lax.scan(forward, non_trainable, parts)
    embs = [unchunked(e) for e in embs]

    def batch_loss(embs):
        return _loss(model, embs, full)

    loss, grads_emb = jax.value_and_grad(batch_loss)(embs)
    grads_emb = [chunked(g) for g in grads_emb]

    def backward(carry, inputs):
        rng, acc = carry
        chunk, gs = inputs

        def surrogate(weights):
            es, new_rng = embed(weights, rng, chunk)
            return sum(jnp.sum(e * g) for e, g in zip(es, gs)), new_rng

        grads, rng = jax.grad(surrogate, has_aux=True)(trainable)
        return (rng, [a + g for a, g in zip(acc, grads)]), None

    zeros = [jnp.zeros_like(v) for v in trainable]
    (non_trainable, grads), _ = jax.lax.scan(backward, (non_trainable, zeros),
                                             (parts, grads_emb))
    trainable, optimizer_vars = model.optimizer.stateless_apply(optimizer_vars, grads, trainable)
    logs, metrics_vars = model._update_metrics_variables(
        metrics_vars, loss, x, None, _predictions(embs), None)
    return logs, (trainable, non_trainable, optimizer_vars, metrics_vars)


BACKENDS = ("tensorflow", "jax")  # the backends with a gradient-cached step (see train.py)


def train_step(model, *args):
    """Dispatch on the backend: (data) on TensorFlow, (state, data) on JAX; train.py refuses
    --chunk-size on any other backend before the model is built."""
    if keras.backend.backend() == "jax":
        return train_step_jax(model, *args, model.chunk_size)
    return train_step_tf(model, *args, model.chunk_size)
