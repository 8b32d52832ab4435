"""trainer.fast_layers: the JAX fast paths compute what Keras' layers compute (oracles), and the
layers keep Keras' variables, so checkpoints written before load unchanged."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import result_json

REPO = Path(__file__).resolve().parents[1]
JAX_ENV = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3",
               CUDA_VISIBLE_DEVICES="")


def run_jax(code: str, *args: str) -> subprocess.CompletedProcess:
    pytest.importorskip("jax")
    return subprocess.run([sys.executable, *(("-c", code) if code else ()), *args], cwd=REPO,
                          env=JAX_ENV, text=True, capture_output=True, timeout=600)


def result(proc) -> dict:
    return result_json(proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.parametrize("path", ["blocked", "unblocked"])
def test_fused_attention_equals_keras_masked_attention_on_padded_rows(path):
    """benchmarks/fused_attention_check.py on CPU: the encoder's output at the real positions and
    the gradients of every weight, the fast path (blocked_attention, or XLA's
    dot_product_attention with key lengths) against Keras' masked MultiHeadAttention, rows of
    lengths 1..L; float32, so to rounding (tol 1e-5)."""
    proc = run_jax("", "benchmarks/fused_attention_check.py", "--config", "tiny", "--batch", "6",
                   "--length", "40", *(["--unblocked"] if path == "unblocked" else []))
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    assert "finite True" in proc.stdout and f"float32 {path} on cpu" in proc.stdout


WRONG_LENGTHS = r'''
import sys
sys.path.insert(0, "benchmarks")
import trainer.fast_layers as fast_layers
fused, blocked = fast_layers.fused_attention, fast_layers.blocked_attention
fast_layers.fused_attention = lambda q, k, v, lengths, scale: fused(q, k, v, lengths + 1, scale)
fast_layers.blocked_attention = lambda q, k, v, lengths, *a: blocked(q, k, v, lengths + 1, *a)
import fused_attention_check
sys.exit(fused_attention_check.main(["--config", "tiny", "--batch", "6", "--length", "40",
                                     *sys.argv[1:]]))
'''


@pytest.mark.parametrize("path", ["blocked", "unblocked"])
def test_the_check_fails_when_the_lengths_are_off_by_one(path):
    """The oracle above can fail: one more key per row (a pad attended) exceeds its tolerance."""
    proc = run_jax(WRONG_LENGTHS, *(["--unblocked"] if path == "unblocked" else []))
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert f"float32 {path} on cpu" in proc.stdout


DROPOUT = r"""
import json
import numpy as np
import keras
from trainer.fast_layers import Dropout, SelfAttention, hash_bits, uint16_bits
x = np.ones((200, 500), "float32")
a, b = Dropout(0.1, seed=7), Dropout(0.1, seed=7)
first, again, other = (np.asarray(layer(x, training=True)) for layer in (a, b, a))
inference = np.asarray(a(x, training=False))
Dropout.rng = "threefry"
threefry = np.asarray(Dropout(0.1, seed=7)(x, training=True))
Dropout.rng = "philox"
philox = np.asarray(Dropout(0.1, seed=7)(x, training=True))
philox_odd = np.asarray(Dropout(0.1, seed=5)(np.ones((101, 333), "float32"), training=True))
Dropout.rng = "hash"
# attention probabilities dropped under the MultiHeadAttention's own seed generator
attention = SelfAttention(2, 4, dropout=0.5, seed=3)
h = np.random.default_rng(0).normal(size=(2, 6, 8)).astype("float32")
mask = np.ones((2, 6, 6), bool)
dropped = [np.asarray(attention(h, mask, np.array([6, 6], "int32"), training=True))
           for _ in range(2)]
plain = np.asarray(attention(h, mask, np.array([6, 6], "int32"), training=False))
odd = np.asarray(Dropout(0.1, seed=5)(np.ones((101, 333), "float32"), training=True))
# the bits themselves: seeds one apart (a SeedGenerator's next draws), a 3-d shape
u = lambda seed: np.asarray(hash_bits(np.array(seed, "uint32"), (16, 160, 160))).ravel()
b0, b1, b2 = u([7, 0]), u([7, 1]), u([8, 0])
f = lambda v: v.astype("float64") / 2 ** 32
per_bit = [float(((b0 >> k) & 1).mean()) for k in range(32)]
bits16 = np.asarray(uint16_bits(np.array([1, 2, 3, 4], "uint32"), (400001,))).astype("float64")
corr = lambda v, w: float(np.corrcoef(v, w)[0, 1])
print("RESULT " + json.dumps({
    "odd_keep": float((odd > 0).mean()), "odd_shape": list(odd.shape),
    "philox_odd_keep": float((philox_odd > 0).mean()),
    "keep": float((first > 0).mean()), "philox_keep": float((philox > 0).mean()),
    "values": sorted({round(float(v), 5) for v in first.flat}),
    "same_seed_same_mask": bool((first == again).all()),
    "next_call_differs": float(((first > 0) == (other > 0)).mean()),
    "inference_identity": bool((inference == x).all()),
    "threefry_differs": bool((threefry != first).any()),
    "philox_differs": bool((philox != first).any()),
    "attention_dropped_differs": bool(np.abs(dropped[0] - dropped[1]).max() > 1e-3),
    "attention_plain_differs": bool(np.abs(dropped[0] - plain).max() > 1e-3),
    "finite": bool(all(np.isfinite(d).all() for d in dropped)),
    "variables": len(attention.weights),
    "bits_mean": float(f(b0).mean()), "per_bit_max_off": max(abs(p - 0.5) for p in per_bit),
    "neighbour_corr": corr(f(b0[:-1]), f(b0[1:])), "row_corr": corr(f(b0[:-160]), f(b0[160:])),
    "next_seed_corr": corr(f(b0), f(b1)), "other_word_corr": corr(f(b0), f(b2)),
    "next_seed_shifted_corr": max(abs(corr(f(v[:-d]), f(w[d:])))
                                  for d in (1, 2, 160) for v, w in ((b0, b1), (b1, b0))),
    "philox_bits_mean": float(bits16.mean() / 65535),
    "philox_neighbour_corr": corr(bits16[:-1], bits16[1:]),
}))
"""


def test_fast_dropout_keeps_the_rate_the_scale_and_the_seed():
    """On JAX, hashed masks (the default) and Philox's: keep fraction 0.9 of 100,000 (+-0.5%;
    also for an odd size), kept values scaled by 1/0.9; the same seed gives the same mask, the
    next call a new one (agreement ~0.9^2 + 0.1^2); identity at inference; neither is
    threefry's stream; attention probabilities dropped differently per call. The hashed bits
    of 409,600 elements: mean 0.5 and every one of the 32 bits set half the time (+-0.5%), and
    uncorrelated (|r| < 0.01) between neighbours, rows, seeds one apart in either word, and seeds
    one apart at positions shifted either way (a hash of index + seed would repeat the mask
    one element over)."""
    r = result(run_jax(DROPOUT))
    assert abs(r["keep"] - 0.9) < 0.005 and abs(r["philox_keep"] - 0.9) < 0.005
    assert r["values"] == [0.0, round(1 / 0.9, 5)]
    assert r["same_seed_same_mask"] and r["inference_identity"] and r["threefry_differs"]
    assert r["philox_differs"]
    assert abs(r["next_call_differs"] - 0.82) < 0.01
    assert r["attention_dropped_differs"] and r["attention_plain_differs"] and r["finite"]
    assert r["odd_shape"] == [101, 333] and abs(r["odd_keep"] - 0.9) < 0.01
    assert abs(r["philox_odd_keep"] - 0.9) < 0.01
    assert abs(r["bits_mean"] - 0.5) < 0.005 and r["per_bit_max_off"] < 0.005
    for name in ("neighbour_corr", "row_corr", "next_seed_corr", "other_word_corr",
                 "next_seed_shifted_corr", "philox_neighbour_corr"):
        assert abs(r[name]) < 0.01, (name, r[name])
    assert abs(r["philox_bits_mean"] - 0.5) < 0.005


TF_HASH = r"""
import json
import numpy as np
import tensorflow as tf
import keras
from trainer import fast_layers
from trainer.fast_layers import Dropout, SelfAttention, tf_hash_bits, tf_xla_step


def np_fmix(h):
    h = h ^ (h >> np.uint32(16))
    h = h * np.uint32(0x85EBCA6B)
    h = h ^ (h >> np.uint32(13))
    h = h * np.uint32(0xC2B2AE35)
    return h ^ (h >> np.uint32(16))


def np_bits(seed, shape):
    one = lambda v: np.array([v], np.uint32)
    k0 = np_fmix(one(seed[0]) ^ np.uint32(0x9E3779B9))
    k1 = np_fmix(one(seed[1]) + np_fmix(k0 ^ np.uint32(0x7F4A7C15)))
    index = np.arange(np.prod(shape), dtype=np.uint32).reshape(shape)
    return np_fmix(np_fmix(index ^ k0) + k1)


seed = np.array([7, 4294967295], np.uint32)
shape = (16, 33, 5)
oracle = np_bits(seed, shape)
eager = tf_hash_bits(tf.constant(seed), shape).numpy()
xla = tf.function(lambda s: tf_hash_bits(s, shape), jit_compile=True)(tf.constant(seed)).numpy()
import jax.numpy as jnp
from trainer.fast_layers import hash_bits
jax_bits = np.asarray(hash_bits(jnp.asarray(seed), shape))

calls = []
hashed = fast_layers._tf_hash_dropout
fast_layers._tf_hash_dropout = lambda *a: (calls.append(1), hashed(*a))[1]
x = tf.ones((200, 500))
layer, twin = Dropout(0.1, seed=7), Dropout(0.1, seed=7)


def under_xla(layer, flag=True):
    @tf.function(jit_compile=True)
    def step(x):
        with tf_xla_step(flag):
            return layer(x, training=True)
    return step(x).numpy()


first, again, other = under_xla(layer), under_xla(twin), under_xla(layer)
hashed_calls = len(calls)
keras_path = under_xla(Dropout(0.1, seed=7), flag=False)
eager_path = Dropout(0.1, seed=7)(x, training=True).numpy()
inference = Dropout(0.1, seed=7)(x, training=False).numpy()
calls_after_keras = len(calls)

# the whole TwoTower step: XLA -> hashed masks (dropout layers and attention), else Keras'
from trainer.configs import ModelConfig
from trainer.model import TwoTower
config = ModelConfig(num_layers=1, hidden_size=16, num_heads=2, ff_size=32, vocab_size=50,
                     max_query_len=8, max_doc_len=12)
rng = np.random.default_rng(0)
batch = {"query_ids": rng.integers(5, 50, (4, 8)).astype("int32"),
         "doc_ids": rng.integers(5, 50, (4, 12)).astype("int32")}
steps = {}
for jit in (True, False):
    before = len(calls)
    model = TwoTower(config)
    model.build()
    model.compile(optimizer=keras.optimizers.AdamW(1e-3), jit_compile=jit)
    data = tf.data.Dataset.from_tensor_slices(batch).batch(4).repeat()  # batch size: None
    loss = model.fit(data, steps_per_epoch=2, epochs=1, verbose=0).history["loss"][-1]
    steps[str(jit)] = {"hashed": len(calls) - before, "loss": float(loss)}
print("RESULT " + json.dumps({
    "oracle": bool((eager == oracle).all()), "xla": bool((xla == oracle).all()),
    "jax": bool((jax_bits == oracle).all()),
    "keep": float((first != 0).mean()), "values": sorted(set(np.round(first.ravel().astype("float64"), 5).tolist())),
    "same_seed_same_mask": bool((first == again).all()),
    "next_call_agrees": float(((first != 0) == (other != 0)).mean()),
    "hashed_calls": hashed_calls, "calls_after_keras": calls_after_keras,
    "keras_keep": float((keras_path != 0).mean()), "eager_keep": float((eager_path != 0).mean()),
    "inference_identity": bool((inference == 1).all()), "steps": steps}))
"""


def test_tensorflow_under_xla_hashes_the_masks_as_jax_does():
    """TensorFlow: `tf_hash_bits` gives JAX's `hash_bits` and a NumPy oracle bit for bit (eager
    and XLA); a Dropout traced inside an XLA step (tf_xla_step) takes the hash: keep 0.9 of
    100,000 (+-0.5%), scale 1/0.9, same seed same mask, the next call another (~0.82 agreement);
    outside XLA or at inference Keras' own path. A TwoTower compiled with jit_compile=True takes
    the hashed masks (its dropout layers and the attention's) and trains to a finite loss;
    compiled without XLA it never does. Its batches have no static batch size (as the
    trainer's), so the masks' shape is known only at run time."""
    env = dict(JAX_ENV, KERAS_BACKEND="tensorflow")
    proc = subprocess.run([sys.executable, "-c", TF_HASH], cwd=REPO, env=env, text=True,
                          capture_output=True, timeout=600)
    r = result(proc)
    assert r["oracle"] and r["xla"] and r["jax"]
    assert abs(r["keep"] - 0.9) < 0.005 and r["values"] == [0.0, round(1 / 0.9, 5)]
    assert r["same_seed_same_mask"] and abs(r["next_call_agrees"] - 0.82) < 0.01
    assert r["hashed_calls"] == 3 and r["calls_after_keras"] == 3
    assert abs(r["keras_keep"] - 0.9) < 0.01 and abs(r["eager_keep"] - 0.9) < 0.01
    assert r["inference_identity"]
    xla, plain = r["steps"]["True"], r["steps"]["False"]
    assert xla["hashed"] >= 2 and plain["hashed"] == 0, r["steps"]
    assert np.isfinite(xla["loss"]) and np.isfinite(plain["loss"])


def test_the_layers_keep_keras_variables():
    """SelfAttention has MultiHeadAttention's variables (paths and shapes) and Dropout has
    keras Dropout's (its seed generator's state): a checkpoint of the old layers loads."""
    import keras

    from trainer.fast_layers import Dropout, SelfAttention

    x = np.zeros((2, 5, 8), "float32")
    ours = SelfAttention(2, 4, name="attention")
    ours(x, np.ones((2, 5, 5), bool), np.array([5, 3], "int32"))
    theirs = keras.layers.MultiHeadAttention(2, 4, name="attention")
    theirs(x, x, attention_mask=np.ones((2, 5, 5), bool))
    shapes = lambda layer: sorted((v.path, tuple(v.shape)) for v in layer.weights)  # noqa: E731
    assert shapes(ours) == shapes(theirs) and len(shapes(ours)) == 8
    ours.set_weights(theirs.get_weights())
    for a, b in zip(ours.weights, theirs.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    drop, keras_drop = Dropout(0.1, name="d"), keras.layers.Dropout(0.1, name="d")
    described = lambda layer: [(v.name, tuple(v.shape), v.dtype)  # noqa: E731
                               for v in layer.variables]
    assert described(drop) == described(keras_drop)
    assert [name for name, _, _ in described(drop)] == ["seed_generator_state"]


BLOCKED = r"""
import json, sys
import numpy as np
import jax
import jax.numpy as jnp
from trainer import fast_layers
from trainer.fast_layers import SelfAttention, blocked_attention, block_rows

if len(sys.argv) > 1 and sys.argv[1] == "offset-0":  # the control: every block draws block 0's bits
    hash_bits = fast_layers.hash_bits
    fast_layers.hash_bits = lambda seed, shape, offset=0: hash_bits(seed, shape)
rng = np.random.default_rng(0)
B, L, D, N = 6, 40, 32, 4
x = jnp.asarray(rng.normal(size=(B, L, D)).astype("float32"))
lengths = np.array([1, 7, 40, 23, 39, 2], "int32")
mask = (np.arange(L)[None, None, :] < lengths[:, None, None]) & np.ones((1, L, 1), bool)


def run(layer_weights, blocked, rate, first_only, rows=None):
    '''The layer's output and the gradients of (output * probe).sum() w.r.t. x and every
    weight, blocked_attention (`rows` per block) or the layer's other path.'''
    SelfAttention.use_blocked = blocked
    layer = SelfAttention(N, D // N, dropout=rate, seed=11)
    layer(x, mask, lengths)
    layer.set_weights(layer_weights or layer.get_weights())
    if rows:
        block_rows = fast_layers.block_rows
        fast_layers.block_rows = lambda *a: rows
    state = [v.value for v in layer.non_trainable_variables]
    weights = [v.value for v in layer.trainable_variables]
    probe = jnp.asarray(np.random.default_rng(1).normal(
        size=(B, 1 if first_only else L, D)).astype("float32"))

    def scalar(weights, x):
        y, _ = layer.stateless_call(weights, state, x, mask, lengths, training=True,
                                    first_only=first_only)
        return (y * probe).sum(), y

    # jitted, as the trainer runs it (and one compile a run instead of one per primitive)
    (_, y), grads = jax.jit(jax.value_and_grad(scalar, argnums=(0, 1), has_aux=True))(weights, x)
    if rows:
        fast_layers.block_rows = block_rows
    return layer.get_weights(), np.asarray(y), [np.asarray(g) for g in jax.tree_util.tree_leaves(grads)]


def error(a, b):  # the largest difference, relative to the largest value (outputs; gradients)
    outs = float(np.abs(a[1] - b[1]).max() / np.abs(b[1]).max())
    grads = (max(float(np.abs(g - h).max()) for g, h in zip(a[2], b[2]))
             / max(float(np.abs(h).max()) for h in b[2]))
    return max(outs, grads)


out = {"rows": [block_rows(32, 8, 288, 288), block_rows(32, 12, 288, 288),
                block_rows(32, 8, 64, 64), block_rows(6, 4, 1, 40), block_rows(7, 8, 288, 288)]}
for rate in (0.0, 0.3):
    for first_only in (False, True):
        weights, *reference = run(None, False, rate, first_only)
        reference = [weights, *reference]
        for rows in (1, 2, 6):
            blocked = run(weights, True, rate, first_only, rows)
            out[f"{rate} {first_only} {rows}"] = error(blocked, reference)
# bfloat16 inputs: the softmax in float32, the products in bfloat16
q, k, v = (jnp.asarray(rng.normal(size=(B, L, N, 8)).astype("float32")) for _ in range(3))
full = blocked_attention(q, k, v, jnp.asarray(lengths), 0.35)
half = blocked_attention(*(t.astype(jnp.bfloat16) for t in (q, k, v)), jnp.asarray(lengths), 0.35)
out["bf16_dtype"] = str(half.dtype)
out["bf16_error"] = float(jnp.abs(half.astype(jnp.float32) - full).max() / jnp.abs(full).max())
print("RESULT " + json.dumps(out))
"""


def test_blocked_attention_equals_the_layers_other_path():
    """`blocked_attention` (the CPU's path) against the layer's other JAX path (XLA's
    dot_product_attention without dropout; Keras' explicit path with hashed dropout, whose
    [B, N, L, L] masks the blocks draw a block at a time): outputs and the gradients of x and of
    every weight, float32, rows of lengths 1..40, attention dropout 0 and 0.3, all positions and
    position 0 alone, blocks of 1, 2 and 6 rows: equal to 2e-5 of the largest output and of the
    largest gradient. Block sizes: 2 rows of
    `small`'s and `base`'s documents at batch 32, the whole batch for queries of 64 tokens and
    for position 0 alone, 1 for a prime batch. bfloat16 inputs give bfloat16 outputs within
    bfloat16's rounding (2%)."""
    r = result(run_jax(BLOCKED))
    assert r["rows"] == [2, 2, 32, 6, 1]
    for case in ("0.0 False", "0.0 True", "0.3 False", "0.3 True"):
        for rows in (1, 2, 6):
            assert r[f"{case} {rows}"] < 2e-5, (case, rows, r)
    assert r["bf16_dtype"] == "bfloat16" and r["bf16_error"] < 2e-2


def test_the_blocked_check_fails_when_blocks_repeat_the_first_blocks_masks():
    """The oracle above can fail: with every block drawing the bits of block 0 (no offset), the
    dropped outputs differ from the whole batch's masks (blocks of 1 and 2 rows), while one
    block of all 6 rows and the runs without dropout still agree."""
    r = result(run_jax(BLOCKED, "offset-0"))
    for case in ("0.3 False", "0.3 True"):
        assert r[f"{case} 1"] > 1e-2 and r[f"{case} 2"] > 1e-2, r
        assert r[f"{case} 6"] < 2e-5, r
    assert r["0.0 False 1"] < 2e-5 and r["0.0 True 2"] < 2e-5
