"""wikipairs.trainer (configs, model, losses) on CPU: towers, in-batch softmax, MLM pieces, and
the cross-replica oracle (2 replicas x 4 == 1 replica x 8), which runs in a subprocess with two
logical CPUs so that it does not depend on how TensorFlow was initialized in this process.
"""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

keras = pytest.importorskip("keras")
from conftest import result_json  # noqa: E402
from keras import ops  # noqa: E402

from wikipairs.special_tokens import CLS_ID, MASK_ID, PAD_ID, SEP_ID, UNK_ID  # noqa: E402
from wikipairs.trainer.configs import NAMED_CONFIGS, ModelConfig  # noqa: E402
from wikipairs.trainer.losses import (cross_replica_in_batch_loss,  # noqa: E402
                                      in_batch_softmax_loss, masked_lm_loss)
from wikipairs.trainer.model import (BowEncoder, MaskedLMHead, TransformerEncoder,  # noqa: E402
                                     TwoTower, gather_predictions, mask_tokens)

SMALL = dict(vocab_size=200, max_query_len=12, max_doc_len=20, embedding_dim=16)

# The oracle, run as `python -c ORACLE`: float64, so that only real differences exceed rtol 1e-5
# (in float32, cancellation in a near-uniform softmax leaves ~1e-7 absolute noise in gradients).
ORACLE = r'''
import json
import tensorflow as tf
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
import numpy as np
import keras
keras.config.set_floatx("float64")
keras.utils.set_random_seed(0)
from wikipairs.trainer.configs import ModelConfig
from wikipairs.trainer.losses import cross_replica_in_batch_loss, in_batch_softmax_loss
from wikipairs.trainer.model import TwoTower

config = ModelConfig.from_name("tiny", vocab_size=100, dropout=0.0, attention_dropout=0.0,
                               max_query_len=12, max_doc_len=20, embedding_dim=16,
                               normalize=True, temperature=0.1, initializer_range=0.2)
rng = np.random.default_rng(0)
B = 8
def ids(length):
    x = rng.integers(5, config.vocab_size, (B, length)).astype("int32")
    x[:, 0] = 1
    for row, n in enumerate(rng.integers(3, length + 1, B)):
        x[row, n:] = 0
    return x
batch = {"query_ids": ids(12), "doc_ids": ids(20)}

strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
with strategy.scope():
    dist_model = TwoTower(config)
    dist_model.build()
model = TwoTower(config)
model.build()
model.set_weights(dist_model.get_weights())
w0 = model.get_weights()
with tf.GradientTape() as tape:  # one replica, the whole batch of 8
    out = model(batch, training=True)
    loss = in_batch_softmax_loss(out["query_emb"], out["doc_emb"], config.temperature)
    loss_fn_1 = cross_replica_in_batch_loss(out["query_emb"], out["doc_emb"], config.temperature)
variables = model.trainable_variables
grads = [np.asarray(tf.convert_to_tensor(g)) for g in tape.gradient(loss, variables)]

def local(ctx):  # replica i gets rows 4i..4i+3
    i, n = ctx.replica_id_in_sync_group, B // ctx.num_replicas_in_sync
    return {k: v[i * n:(i + 1) * n] for k, v in batch.items()}

@tf.function
def dist_step(x):
    def replica_fn(x):
        with tf.GradientTape() as tape:
            out = dist_model(x, training=True)
            loss = cross_replica_in_batch_loss(out["query_emb"], out["doc_emb"],
                                               config.temperature)
        return loss, tape.gradient(loss, dist_model.trainable_variables)
    losses, grads = strategy.run(replica_fn, args=(x,))
    return (strategy.reduce("SUM", losses, axis=None),
            [strategy.reduce("SUM", g, axis=None) for g in grads])
dist_loss, dist_grads = dist_step(strategy.experimental_distribute_values_from_function(local))
dist_grads = [np.asarray(tf.convert_to_tensor(g)) for g in dist_grads]

with strategy.scope():  # Keras fit: one SGD(1.0) step on 2 replicas x 4 moves w0 by -grads
    dist_model.compile(optimizer=keras.optimizers.SGD(1.0), jit_compile=False)
history = dist_model.fit(tf.data.Dataset.from_tensors(batch), verbose=0)
stepped = [w - g for w, g in zip(w0, grads)]  # all weights are trainable, in the same order

with strategy.scope():  # the same step, GradCache in chunks of 2 rows of each replica's 4
    chunked_model = TwoTower(config)
    chunked_model.build()
    chunked_model.set_weights(w0)
    chunked_model.chunk_size = 2
    chunked_model.compile(optimizer=keras.optimizers.SGD(1.0), jit_compile=False)
chunked_history = chunked_model.fit(tf.data.Dataset.from_tensors(batch), verbose=0)

scale = max(np.abs(g).max() for g in grads)
def worst(a, b):  # max of |a - b| / (1e-5 |b| + 1e-9 max|grad|): allclose when < 1
    return max(float(np.max(np.abs(x - y) / (1e-5 * np.abs(y) + 1e-9 * scale)))
               for x, y in zip(a, b))
print("RESULT " + json.dumps({
    "replicas": strategy.num_replicas_in_sync, "num_variables": len(variables),
    "num_weights": len(w0),
    "grad_shapes_equal": [g.shape for g in grads] == [g.shape for g in dist_grads],
    "loss": float(loss), "loss_fn_1_replica": float(loss_fn_1), "dist_loss": float(dist_loss),
    "fit_loss": history.history["loss"][0], "grad_scale": float(scale),
    "grad_worst": worst(dist_grads, grads),
    "chunked_fit_loss": chunked_history.history["loss"][0],
    "chunked_fit_worst": worst(chunked_model.get_weights(), stepped),
    "fit_worst": worst(dist_model.get_weights(), stepped)}))
'''


@pytest.fixture(scope="module")
def oracle():
    """The oracle subprocess, started when the first test of this module runs, so that it runs
    alongside the in-process tests; `oracle()` waits for it and returns its RESULT dict."""
    env = dict(os.environ, KERAS_BACKEND="tensorflow", TF_CPP_MIN_LOG_LEVEL="2",
               CUDA_VISIBLE_DEVICES="")
    proc = subprocess.Popen([sys.executable, "-c", ORACLE], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def result() -> dict:
        out, err = proc.communicate(timeout=300)
        return result_json(proc.returncode, out, err)

    yield result
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


@pytest.fixture(autouse=True)
def _start_oracle_early(request):
    if "oracle" in request.module.__dict__ and any(
            item.name == "test_two_replicas_equal_one_replica" for item in request.session.items):
        request.getfixturevalue("oracle")


def tiny(**overrides) -> ModelConfig:
    return ModelConfig.from_name("tiny", **{**SMALL, **overrides})


def random_ids(rng, batch, length, vocab=200, min_len=3):
    """[CLS] tokens..., then [PAD]s: int32 [batch, length], row lengths in [min_len, length]."""
    x = rng.integers(5, vocab, (batch, length)).astype("int32")
    x[:, 0] = CLS_ID
    for row, n in enumerate(rng.integers(min_len, length + 1, batch)):
        x[row, n - 1] = SEP_ID
        x[row, n:] = PAD_ID
    return x


def np_(x):
    if isinstance(x, keras.Variable):
        return np.asarray(x.numpy())
    return np.asarray(ops.convert_to_numpy(x))


# ---- configs ----------------------------------------------------------------------------------

def test_named_configs_and_json_round_trip():
    t, b = ModelConfig.from_name("tiny"), ModelConfig.from_name("base")
    assert (t.num_layers, t.hidden_size, t.num_heads, t.ff_size) == (2, 128, 2, 512)
    assert (b.num_layers, b.hidden_size, b.num_heads, b.ff_size) == (12, 768, 12, 3072)
    assert (b.max_query_len, b.max_doc_len, b.embedding_dim, b.encoder) == (64, 288, 512,
                                                                            "transformer")
    assert ModelConfig.from_name("bow").encoder == "bow"
    assert {"tiny", "base", "bow"} <= set(NAMED_CONFIGS)
    c = ModelConfig.from_name("tiny", normalize=True, temperature=0.05, shared_towers=True)
    assert c.name == "tiny" and c.normalize and c.temperature == 0.05 and c.shared_towers
    assert ModelConfig.from_json(c.to_json()) == c == ModelConfig.from_dict(c.to_dict())
    with pytest.raises(ValueError, match="unknown model config"):
        ModelConfig.from_name("huge")
    with pytest.raises(ValueError, match="unknown ModelConfig fields"):
        ModelConfig.from_dict({**c.to_dict(), "colour": "red"})
    with pytest.raises(ValueError, match="multiple"):
        ModelConfig.from_name("tiny", num_heads=3)
    with pytest.raises(ValueError, match="encoder"):
        ModelConfig.from_name("tiny", encoder="lstm")
    assert t.pooling == "cls"  # the paper's [CLS] unless asked
    with pytest.raises(ValueError, match="pooling"):
        ModelConfig.from_name("tiny", pooling="max")


def test_special_ids_match_the_vocabulary():
    from wikipairs.pairs import vocab
    assert (PAD_ID, CLS_ID, SEP_ID, MASK_ID, UNK_ID) == (
        vocab.PAD_ID, vocab.CLS_ID, vocab.SEP_ID, vocab.MASK_ID, vocab.UNK_ID)


# ---- losses -----------------------------------------------------------------------------------

def numpy_loss(q, d, temperature=1.0, d_all=None, offset=0):
    d_all = d if d_all is None else d_all
    s = q.astype(np.float64) @ d_all.T.astype(np.float64) / temperature
    log_softmax = s - s.max(1, keepdims=True)
    log_softmax -= np.log(np.exp(log_softmax).sum(1, keepdims=True))
    return -np.mean(log_softmax[np.arange(len(q)), np.arange(len(q)) + offset])


def test_in_batch_softmax_loss_matches_numpy():
    rng = np.random.default_rng(1)
    q, d = rng.normal(size=(6, 5)).astype("float32"), rng.normal(size=(6, 5)).astype("float32")
    for t in (1.0, 0.5, 0.05):
        loss = in_batch_softmax_loss(q, d, temperature=t)
        assert tuple(loss.shape) == ()
        np.testing.assert_allclose(np_(loss), numpy_loss(q, d, t), rtol=1e-5)
    assert np_(in_batch_softmax_loss(q, d, 0.05)) != pytest.approx(np_(in_batch_softmax_loss(q, d)))
    d_all = rng.normal(size=(18, 5)).astype("float32")
    d_all[6:12] = d
    np.testing.assert_allclose(np_(in_batch_softmax_loss(q, d, 0.5, d_all, offset=6)),
                               numpy_loss(q, d, 0.5, d_all, 6), rtol=1e-5)
    # no strategy: the cross-replica loss is the in-batch loss
    np.testing.assert_allclose(np_(cross_replica_in_batch_loss(q, d, 0.5)),
                               numpy_loss(q, d, 0.5), rtol=1e-5)
    # perfectly separated embeddings give ~0 loss; identical ones give log B
    eye = 10 * np.eye(4, dtype="float32")
    assert np_(in_batch_softmax_loss(eye, eye)) < 1e-6
    np.testing.assert_allclose(np_(in_batch_softmax_loss(np.ones((4, 3)), np.ones((4, 3)))),
                               np.log(4), rtol=1e-6)


def planted_keys(rng, n: int, dups=((0, 3, 0), (1, 5, 1), (2, 6, 2), (4, 6, 0))):
    """int32 [n, 3, 2] random (distinct) keys with rows (i, j) equal in key k for each (i, j, k)
    of `dups`: same document (k 0), passage (1) or query text (2)."""
    keys = rng.integers(-2 ** 31, 2 ** 31 - 1, (n, 3, 2)).astype("int32")
    for i, j, k in dups:
        keys[j, k] = keys[i, k]
    return keys


def numpy_clean_loss(q, d, t, keys):
    """The oracle of clean negatives: each row's softmax over its positive and the columns that
    share no key with it, the duplicate columns REMOVED (not masked), float64."""
    s = q.astype(np.float64) @ d.astype(np.float64).T / t
    losses = []
    for i in range(len(q)):
        keep = [j for j in range(len(d)) if j == i or not any(
            (keys[i, k] == keys[j, k]).all() for k in range(keys.shape[1]))]
        row = s[i, keep]
        losses.append(np.log(np.exp(row - row.max()).sum()) + row.max() - s[i, i])
    return float(np.mean(losses)), len(q) * len(d) - sum(
        1 for i in range(len(q)) for j in range(len(d)) if j == i or not any(
            (keys[i, k] == keys[j, k]).all() for k in range(keys.shape[1])))


CLEAN_LOSS = r'''
import json, sys
import numpy as np
q, d, keys = (np.asarray(x) for x in json.loads(sys.stdin.read()))
import keras
from wikipairs.trainer.losses import in_batch_softmax_loss, cross_replica_in_batch_loss
q, d, keys = q.astype("float32"), d.astype("float32"), keys.astype("int32")
out = {"backend": keras.backend.backend(),
       "plain": float(in_batch_softmax_loss(q, d, 0.1)),
       "clean": float(in_batch_softmax_loss(q, d, 0.1, keys=keys)),
       "cross_replica": float(cross_replica_in_batch_loss(q, d, 0.1, keys)),
       "halves": [float(in_batch_softmax_loss(q[h:h + 4], d[h:h + 4], 0.1, d, h, keys[h:h + 4],
                                              keys)) for h in (0, 4)]}
print("RESULT " + json.dumps(out))
'''


def run_script(code: str, backend: str, stdin: str | None = None) -> dict:
    """The RESULT JSON of `python -c code` on `backend` (KERAS_BACKEND; CPU only)."""
    pytest.importorskip(backend)
    env = dict(os.environ, KERAS_BACKEND=backend, JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3",
               CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([sys.executable, "-c", code], env=env, text=True, input=stdin,
                          capture_output=True, timeout=500)
    return result_json(proc.returncode, proc.stdout, proc.stderr)


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_clean_negatives_equal_the_loss_without_the_duplicates(backend):
    """Planted duplicates (same document, passage or query text) are removed from the
    negatives: the masked loss equals a NumPy softmax over the other columns only, also when
    the batch is split as 2 replicas x 4 (keys gathered with the documents: offset 0 and 4);
    keys without duplicates give the plain in-batch loss. Both backends (subprocesses)."""
    rng = np.random.default_rng(11)
    q = rng.normal(size=(8, 6))
    d = q + 0.5 * rng.normal(size=(8, 6))  # positives score high
    d[3], q[6] = d[0], q[2]  # planted duplicates below: they score like the positive
    q, d = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (q, d))
    keys = planted_keys(rng, 8)
    unique = planted_keys(rng, 8, dups=())
    expected, removed = numpy_clean_loss(q, d, 0.1, keys)
    assert removed == 8  # (0, 3) (1, 5) (2, 6) (4, 6), each both ways; no transitivity
    plain, _ = numpy_clean_loss(q, d, 0.1, unique)
    assert abs(expected - plain) > 0.05  # the planted duplicates matter
    dup, nodup = (run_script(CLEAN_LOSS, backend,
                             json.dumps([q.tolist(), d.tolist(), k.tolist()]))
                  for k in (keys, unique))
    assert dup["backend"] == backend
    assert dup["clean"] == pytest.approx(expected, rel=1e-5)
    assert dup["cross_replica"] == pytest.approx(expected, rel=1e-5)
    assert np.mean(dup["halves"]) == pytest.approx(expected, rel=1e-5)
    assert dup["plain"] == pytest.approx(plain, rel=1e-5)
    for key in ("plain", "clean", "cross_replica"):
        assert nodup[key] == pytest.approx(plain, rel=1e-5)


def test_held_out_accuracy_leaves_out_duplicate_documents():
    """`in_batch_accuracy` on a batch with "negative_keys": row 1 (the same query text as row 0)
    has a document that scores above query 0's own; it does not push query 0 to rank 2, and the
    loss is the softmax without that column; without the keys it does."""
    from types import SimpleNamespace

    from wikipairs.trainer.evaluation import in_batch_accuracy

    class Embeddings:  # a TwoTower whose "ids" are the embeddings
        config = SimpleNamespace(temperature=1.0)
        encode_queries = encode_docs = staticmethod(lambda x, training=False: x)
        score = staticmethod(lambda q, d: np.asarray(q) @ np.asarray(d).T)

    rng = np.random.default_rng(5)
    q = 2 * np.eye(4) + 0.1 * rng.normal(size=(4, 4))
    q[1] = q[0]  # rows 0 and 1: the same query text (a WLP query page's lead, twice)
    d = q.copy()
    d[1] = 1.5 * q[0]  # row 1's document scores higher than row 0's for query 0
    keys = planted_keys(rng, 4, dups=((0, 1, 2),))
    plain = in_batch_accuracy(Embeddings(), [{"query_ids": q, "doc_ids": d}])
    clean = in_batch_accuracy(Embeddings(), [{"query_ids": q, "doc_ids": d,
                                               "negative_keys": keys}])
    assert plain["accuracy"] == 0.75 and not plain["clean_negatives"]
    assert clean["accuracy"] == 1 and clean["clean_negatives"]
    s = q @ d.T
    keep = np.ones((4, 4), bool)
    keep[0, 1] = keep[1, 0] = False
    expected = np.mean([np.log(np.exp(s[i, keep[i]]).sum()) - s[i, i] for i in range(4)])
    assert clean["loss"] == pytest.approx(expected, rel=1e-9)


def test_losses_of_bfloat16_inputs_are_computed_in_float32():
    """Under --bf16 (mixed_bfloat16) the embeddings may arrive as bfloat16: the scores, the
    softmax and the loss are float32, equal (1e-6) to the float64 loss of the bfloat16-rounded
    embeddings. (Scores left in bfloat16 keep ~3 significant digits: here that shifts the loss by
    1e-4 to 1e-3, and a near-zero loss rounds to 0.)"""
    rng = np.random.default_rng(4)
    q = rng.normal(size=(32, 128))
    d = q + 3.0 * rng.normal(size=(32, 128))  # losses ~0.4 at temperature 0.05
    q, d = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (q, d))
    q16, d16 = ops.cast(q, "bfloat16"), ops.cast(d, "bfloat16")
    rounded_q, rounded_d = (np_(ops.cast(x, "float32")).astype(np.float64) for x in (q16, d16))
    for t in (1.0, 0.05):
        for loss in (in_batch_softmax_loss(q16, d16, t), cross_replica_in_batch_loss(q16, d16, t)):
            assert keras.backend.standardize_dtype(loss.dtype) == "float32"
            np.testing.assert_allclose(np_(loss), numpy_loss(rounded_q, rounded_d, t), rtol=1e-6)
    logits = ops.cast(rng.normal(size=(2, 5, 7)), "bfloat16")
    mlm = masked_lm_loss(np.zeros((2, 5), "int32"), logits, np.ones((2, 5), "float32"))
    assert keras.backend.standardize_dtype(mlm.dtype) == "float32"


# ---- towers -----------------------------------------------------------------------------------

def test_two_tower_shapes_normalization_and_encode_methods():
    rng = np.random.default_rng(2)
    q, d = random_ids(rng, 5, 12), random_ids(rng, 5, 20)
    for encoder, normalize in (("transformer", True), ("bow", False)):
        model = TwoTower(tiny(encoder=encoder, normalize=normalize, dropout=0.0))
        out = model({"query_ids": q, "doc_ids": d})
        assert set(out) == {"query_emb", "doc_emb"}
        assert tuple(out["query_emb"].shape) == (5, 16) == tuple(out["doc_emb"].shape)
        assert out["query_emb"].dtype == "float32"
        norms = np.linalg.norm(np_(out["query_emb"]), axis=1)
        if normalize:
            np.testing.assert_allclose(norms, 1.0, rtol=1e-5)
            np.testing.assert_allclose(np.linalg.norm(np_(out["doc_emb"]), axis=1), 1.0, rtol=1e-5)
        else:
            assert np.abs(norms - 1).max() > 1e-2
        np.testing.assert_allclose(np_(model.encode_queries(q)), np_(out["query_emb"]), atol=1e-6)
        np.testing.assert_allclose(np_(model.encode_docs(d)), np_(out["doc_emb"]), atol=1e-6)
        scores = np_(model.score(out["query_emb"], out["doc_emb"]))
        np.testing.assert_allclose(scores, np_(out["query_emb"]) @ np_(out["doc_emb"]).T,
                                   rtol=1e-5, atol=1e-6)
    # the Keras config round trip rebuilds the same model configuration
    assert TwoTower.from_config(model.get_config()).config == model.config


def test_shared_and_separate_towers():
    separate, shared = TwoTower(tiny()), TwoTower(tiny(shared_towers=True))
    separate.build()
    shared.build()
    assert shared.query_tower is shared.doc_tower
    q_vars = {id(v) for v in separate.query_tower.trainable_variables}
    d_vars = {id(v) for v in separate.doc_tower.trainable_variables}
    assert q_vars and not q_vars & d_vars
    assert len(separate.trainable_variables) == len(q_vars) + len(d_vars)
    assert len(shared.trainable_variables) == len(q_vars)
    assert separate.count_params() == 2 * shared.count_params()
    # a shared tower embeds the same ids the same way as query and as document
    ids = random_ids(np.random.default_rng(3), 3, 12)
    np.testing.assert_allclose(np_(shared.encode_queries(ids)), np_(shared.encode_docs(ids)))
    assert not np.allclose(np_(separate.encode_queries(ids)), np_(separate.encode_docs(ids)))


def test_keras_save_and_load_round_trip(tmp_path):
    model = TwoTower(tiny(encoder="bow", normalize=True))
    model.build()  # an unbuilt model has no weights to save
    ids = random_ids(np.random.default_rng(8), 3, 20)
    path = str(tmp_path / "model.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, TwoTower) and loaded.config == model.config
    np.testing.assert_allclose(np_(loaded.encode_docs(ids)), np_(model.encode_docs(ids)),
                               atol=1e-6)


@pytest.mark.parametrize("encoder,pooling", [("transformer", "cls"), ("transformer", "mean"),
                                             ("bow", "cls")])
def test_appended_padding_leaves_embeddings_unchanged(encoder, pooling):
    rng = np.random.default_rng(4)
    model = TwoTower(tiny(encoder=encoder, pooling=pooling, dropout=0.0, attention_dropout=0.0))
    q = random_ids(rng, 4, 8)
    padded = np.concatenate([q, np.zeros((4, 4), "int32")], axis=1)
    np.testing.assert_allclose(np_(model.encode_queries(padded)), np_(model.encode_queries(q)),
                               rtol=1e-5, atol=1e-6)
    d = random_ids(rng, 4, 10)
    padded = np.concatenate([d, np.zeros((4, 10), "int32")], axis=1)
    np.testing.assert_allclose(np_(model.encode_docs(padded)), np_(model.encode_docs(d)),
                               rtol=1e-5, atol=1e-6)
    # ...while a real token in place of a pad does change it
    changed = d.copy()
    changed[:, -1] = 7
    assert not np.allclose(np_(model.encode_docs(changed)), np_(model.encode_docs(d)), atol=1e-6)


def test_mean_pooling_projects_the_mean_of_the_non_pad_hidden_states():
    model = TwoTower(tiny(pooling="mean", dropout=0.0, attention_dropout=0.0))
    model.build()
    ids = np.array([[1, 9, 11, 2, 0, 0], [1, 12, 2, 0, 0, 0]], "int32")
    embedded = np_(model.encode_queries(ids))
    tower = model.query_tower
    sequence = np_(tower.encoder(ids))
    projection = np_(tower.projection.kernel), np_(tower.projection.bias)
    for row, n in ((0, 4), (1, 3)):
        expected = sequence[row, :n].mean(0) @ projection[0] + projection[1]
        np.testing.assert_allclose(embedded[row], expected,
                                   rtol=1e-5, atol=1e-6)
    cls = TwoTower(tiny(dropout=0.0, attention_dropout=0.0))
    cls.build()
    cls.set_weights(model.get_weights())  # the same weights, [CLS] pooling: another embedding
    np.testing.assert_allclose(np_(cls.encode_queries(ids))[0],
                               sequence[0, 0] @ projection[0] + projection[1], rtol=1e-5, atol=1e-6)


def test_bow_encoder_is_a_masked_mean_then_two_tanh_layers():
    config = tiny(encoder="bow", dropout=0.0)
    encoder = BowEncoder(config)
    ids = np.array([[1, 9, 11, 2, 0, 0], [1, 12, 2, 0, 0, 0]], "int32")
    out = np_(encoder(ids))
    assert out.shape == (2, config.embedding_dim) and np.abs(out).max() < 1
    table = np_(encoder.token_embedding.embeddings)
    mean = table[[1, 9, 11, 2]].mean(0)
    h = np.tanh(mean @ np_(encoder.hidden.kernel) + np_(encoder.hidden.bias))
    expected = np.tanh(h @ np_(encoder.output_layer.kernel) + np_(encoder.output_layer.bias))
    np.testing.assert_allclose(out[0], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np_(encoder(ids[:, :4])), out, rtol=1e-5, atol=1e-6)  # fewer pads
    assert TwoTower(config).query_tower.projection is None


def test_base_config_has_bert_base_size_towers():
    """Built (one shared tower, to halve the time), never trained: ~110M parameters per tower
    with the 32k vocabulary, as BERT-base (110M with 30.5k pieces, type embeddings and pooler)."""
    config = ModelConfig.from_name("base", shared_towers=True)
    model = TwoTower(config)
    model.build()
    count = model.count_params()
    h, ff, v, p, n = 768, 3072, config.vocab_size, config.max_positions, 12
    layer = 4 * (h * h + h) + 2 * 2 * h + (h * ff + ff) + (ff * h + h)
    expected = v * h + p * h + 2 * h + n * layer + (h * 512 + 512)
    assert count == expected
    assert 105e6 < count < 115e6
    assert len(model.query_tower.encoder.blocks) == 12


# ---- MLM ---------------------------------------------------------------------------------------

def test_mask_tokens_is_seeded_and_masks_15_percent_of_ordinary_tokens():
    rng = np.random.default_rng(5)
    ids = random_ids(rng, 64, 128, vocab=1000, min_len=20)
    masked, labels, weights = map(np_, mask_tokens(ids, 1000, seed=42))
    again = list(map(np_, mask_tokens(ids, 1000, seed=42)))
    other = np_(mask_tokens(ids, 1000, seed=43)[0])
    assert np.array_equal(masked, again[0]) and np.array_equal(labels, again[1])
    assert not np.array_equal(masked, other)
    assert masked.shape == labels.shape == weights.shape == ids.shape
    selected = weights > 0
    special = np.isin(ids, [PAD_ID, CLS_ID, SEP_ID])
    assert not (selected & special).any()
    assert np.array_equal(masked[special], ids[special])
    rate = selected.sum() / (~special).sum()
    assert 0.135 < rate < 0.165, rate
    assert np.array_equal(labels[selected], ids[selected]) and not labels[~selected].any()
    assert np.array_equal(masked[~selected], ids[~selected])
    to_mask = (masked == MASK_ID)[selected].mean()
    kept = (masked == ids)[selected].mean()
    randomized = selected & (masked != MASK_ID) & (masked != ids)
    assert 0.76 < to_mask < 0.84 and 0.07 < kept < 0.13, (to_mask, kept)
    assert (masked[randomized] >= 5).all() and (masked[randomized] < 1000).all()
    # a SeedGenerator gives fresh masks on every call, reproducibly from its seed
    g1, g2 = keras.random.SeedGenerator(7), keras.random.SeedGenerator(7)
    a, b = np_(mask_tokens(ids, 1000, g1)[0]), np_(mask_tokens(ids, 1000, g1)[0])
    assert not np.array_equal(a, b) and np.array_equal(a, np_(mask_tokens(ids, 1000, g2)[0]))


def test_mlm_head_is_tied_to_the_token_embeddings():
    config = tiny(dropout=0.0)
    encoder, head = TransformerEncoder(config), MaskedLMHead(config)
    ids = random_ids(np.random.default_rng(6), 3, 10)
    masked, labels, weights = mask_tokens(ids, config.vocab_size, seed=0, mask_rate=0.5)
    table = encoder.token_embedding
    logits = head(encoder(masked), table.embeddings)
    assert tuple(logits.shape) == (3, 10, config.vocab_size)
    h = np_(head.norm(head.transform(encoder(masked))))
    np.testing.assert_allclose(np_(logits), h @ np_(table.embeddings).T + np_(head.bias),
                               rtol=1e-4, atol=1e-5)
    assert len(head.trainable_variables) == 5  # transform kernel/bias, norm gamma/beta, bias
    loss = np_(masked_lm_loss(labels, logits, weights))
    assert np.isfinite(loss) and 0.5 * np.log(config.vocab_size) < loss < 3 * np.log(
        config.vocab_size)


def test_max_predictions_caps_each_row_and_changes_nothing_below_the_cap():
    """At most P tokens a row are selected, among those the uncapped masks select; rows that
    select at most P are unchanged; P >= L is no cap."""
    rng = np.random.default_rng(8)
    ids = random_ids(rng, 64, 40, vocab=1000, min_len=30)
    free = list(map(np_, mask_tokens(ids, 1000, seed=3, mask_rate=0.3)))
    capped = list(map(np_, mask_tokens(ids, 1000, seed=3, mask_rate=0.3, max_predictions=9)))
    same = list(map(np_, mask_tokens(ids, 1000, seed=3, mask_rate=0.3, max_predictions=40)))
    n_free, n_capped = (free[2] > 0).sum(1), (capped[2] > 0).sum(1)
    assert (n_free > 9).any() and (n_free <= 9).any()  # both kinds of rows are tested
    assert (n_capped == np.minimum(n_free, 9)).all()
    assert not ((capped[2] > 0) & (free[2] == 0)).any()
    below = n_free <= 9
    for a, b in zip(free, capped):
        assert np.array_equal(a[below], b[below])
    for a, b in zip(free, same):
        assert np.array_equal(a, b)
    over = ~below  # a token left unselected by the cap is left as it was
    assert np.array_equal(capped[0][over][capped[2][over] == 0], ids[over][capped[2][over] == 0])


def test_gathered_mlm_loss_equals_the_loss_over_all_positions():
    """The head on the P gathered positions (gather_predictions) gives the loss of the head on
    all L positions, and MaskedLM.compute_loss is that loss (oracle: the full [B, L, V] path)."""
    from wikipairs.trainer.masked_lm import MaskedLM
    config = tiny(dropout=0.0, attention_dropout=0.0)
    ids = random_ids(np.random.default_rng(9), 6, config.max_doc_len, min_len=8)
    encoder, head = TransformerEncoder(config), MaskedLMHead(config)
    masked, labels, weights = mask_tokens(ids, config.vocab_size, seed=1, mask_rate=0.3,
                                          max_predictions=7)
    sequence = encoder(masked)
    full = np_(masked_lm_loss(labels, head(sequence, encoder.token_embedding.embeddings), weights))
    hidden, g_labels, g_weights = gather_predictions(sequence, labels, weights, 7)
    assert tuple(hidden.shape) == (6, 7, config.hidden_size)
    assert np_(g_weights).sum() == np_(weights).sum()
    gathered = np_(masked_lm_loss(g_labels, head(hidden, encoder.token_embedding.embeddings),
                                  g_weights))
    np.testing.assert_allclose(gathered, full, rtol=1e-5)
    # the model: its own masks (seeded), the same loss as the full path on those masks
    model = MaskedLM(config, seed=4, max_predictions=7)
    model.build()
    out = model({"doc_ids": ids})
    assert tuple(out["logits"].shape) == (6, 7, config.vocab_size)
    again = keras.random.SeedGenerator(4)  # the model's first masks again
    m, lab, w = mask_tokens(ids, config.vocab_size, again, mask_rate=0.15, max_predictions=7)
    logits = model.head(model.encoder(m), model.encoder.token_embedding.embeddings)
    np.testing.assert_allclose(np_(masked_lm_loss(lab, logits, w)),
                               np_(masked_lm_loss(out["labels"], out["logits"], out["weights"])),
                               rtol=1e-5)
    assert MaskedLM(config).max_predictions == min(config.max_doc_len,
                                                   math.ceil(1.5 * 0.15 * config.max_doc_len))


# ---- training ----------------------------------------------------------------------------------

def test_a_few_adamw_steps_decrease_the_in_batch_loss():
    """Six eager AdamW steps on one random batch through `TwoTower.compute_loss` (Keras `fit`
    is exercised by the oracle; its first call traces for ~15 s)."""
    tf = pytest.importorskip("tensorflow")
    if keras.backend.backend() != "tensorflow":
        pytest.skip("the eager loop uses tf.GradientTape")
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(7)
    model = TwoTower(tiny(dropout=0.0, attention_dropout=0.0))
    batch = {"query_ids": random_ids(rng, 16, 12), "doc_ids": random_ids(rng, 16, 20)}
    optimizer = keras.optimizers.AdamW(3e-3, weight_decay=0.01)
    losses = []
    for _ in range(6):
        with tf.GradientTape() as tape:
            loss = model.compute_loss(x=batch, y_pred=model(batch, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        losses.append(float(loss))
    out = model(batch)
    after = float(np_(in_batch_softmax_loss(out["query_emb"], out["doc_emb"])))
    assert losses[0] == pytest.approx(np.log(16), abs=0.05)  # near-uniform scores at init
    assert after < losses[0] - 0.15, (losses, after)


# the start of the fit-step scripts below: a batch of B rows of ids, and the largest gradient
# difference relative to the largest gradient
STEP_SCRIPT = r'''
import json
import numpy as np
import keras
from wikipairs.trainer.configs import ModelConfig
from wikipairs.trainer.model import TransformerEncoder, TwoTower

B = 8
def ids(rng, length, lengths=None):
    """[B, length]: [CLS] and random ids, right-padded after `lengths` (random if None)."""
    x = rng.integers(5, 100, (B, length)).astype("int32")
    x[:, 0] = 1
    for row, n in enumerate(rng.integers(3, length + 1, B) if lengths is None else lengths):
        x[row, n:] = 0
    return x

def worst(a, b):
    return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b)) / max(
        float(np.max(np.abs(y))) for y in b)
'''

GRADCACHE = STEP_SCRIPT + r'''
rng = np.random.default_rng(0)
keys = rng.integers(-2 ** 31, 2 ** 31 - 1, (B, 3, 2)).astype("int32")
keys[5, 0], keys[6, 2] = keys[1, 0], keys[2, 2]  # a duplicate document, a duplicate query
batch = {"query_ids": ids(rng, 12), "doc_ids": ids(rng, 20), "negative_keys": keys}

def step(chunk, dropout, jit=False):
    """loss and gradient (SGD 1.0: w0 - w1) of one Keras fit step from the same weights."""
    keras.utils.set_random_seed(0)
    config = ModelConfig.from_name("tiny", vocab_size=100, dropout=dropout,
                                   attention_dropout=dropout, max_query_len=12, max_doc_len=20,
                                   embedding_dim=16, num_layers=1, normalize=True,
                                   temperature=0.1, initializer_range=0.2)
    model = TwoTower(config)
    model.build()
    w0 = model.get_weights()
    model.chunk_size = chunk
    model.compile(optimizer=keras.optimizers.SGD(1.0), jit_compile=jit)
    loss = model.fit(batch, batch_size=B, epochs=1, shuffle=False, verbose=0).history["loss"][0]
    return loss, [a - b for a, b in zip(w0, model.get_weights())]

out = {"backend": keras.backend.backend()}
plain_loss, plain = step(None, 0.0)
out["loss"] = plain_loss
for chunk in (1, 2, 4):
    loss, grads = step(chunk, 0.0)
    out[f"loss_{chunk}"], out[f"worst_{chunk}"] = loss, worst(grads, plain)
loss, grads = step(None, 0.3)
one_loss, one = step(B, 0.3)
out["dropout_loss"], out["dropout_one_chunk_loss"] = loss, one_loss
out["dropout_one_chunk_worst"] = worst(one, grads)
if out["backend"] == "tensorflow":  # under XLA TensorFlow's masks are hashed (fast_layers)
    loss, grads = step(None, 0.3, True)
    one_loss, one = step(B, 0.3, True)
    out["xla_dropout_loss"], out["xla_dropout_one_chunk_loss"] = loss, one_loss
    out["xla_dropout_one_chunk_worst"] = worst(one, grads)
print("RESULT " + json.dumps(out))
'''


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_gradcache_step_equals_the_plain_step(backend):
    """GradCache (`TwoTower.chunk_size`, trainer.gradcache) like sentence-transformers' CachedMNRL
    tests: one Keras fit step (SGD 1.0, so the weights move by the gradient) on a batch of 8
    with clean-negative keys, in chunks of 1, 2 and 4 rows, reports the plain step's loss and
    moves the weights by its gradients (to float32 rounding, 1e-5 of the largest), dropout 0.
    With dropout 0.3 and one chunk of 8 it is the plain step too: the second (gradient) pass
    replays the first pass's dropout masks (on TensorFlow also under XLA, where the masks are
    hashed). Both backends, in subprocesses."""
    r = run_script(GRADCACHE, backend)
    assert r["backend"] == backend and r["loss"] > 0.5, r
    for chunk in (1, 2, 4):
        assert r[f"loss_{chunk}"] == pytest.approx(r["loss"], rel=1e-5), r
        assert r[f"worst_{chunk}"] < 1e-5, r
    assert r["dropout_one_chunk_loss"] == pytest.approx(r["dropout_loss"], rel=1e-5), r
    assert r["dropout_one_chunk_worst"] < 1e-5, r
    if backend == "tensorflow":
        assert r["xla_dropout_one_chunk_loss"] == pytest.approx(r["xla_dropout_loss"], rel=1e-5)
        assert r["xla_dropout_one_chunk_worst"] < 1e-5, r


# ---- the oracle --------------------------------------------------------------------------------

def test_two_replicas_equal_one_replica(oracle):
    """MirroredStrategy over 2 logical CPUs, batch 8 as 2 x 4, tiny TwoTower, dropout 0:
    - SUM over replicas of `cross_replica_in_batch_loss` == the one-replica loss of the batch of 8
      (each replica returns its local mean / 2);
    - SUM over replicas of the gradients (strategy.reduce) == the one-replica gradients of all
      trainable weights (rtol 1e-5), i.e. the gather's negatives and gradients are right;
    - one Keras `fit` step (SGD 1.0) under the strategy moves the weights by exactly those
      gradients, and reports the global-batch loss;
    - so does a GradCache step (`chunk_size` 2: each replica embeds its 4 rows as 2 chunks)."""
    r = oracle()
    assert r["replicas"] == 2 and r["num_variables"] == r["num_weights"] > 70
    assert r["grad_shapes_equal"]
    assert r["loss"] > 0.1  # not a degenerate case
    for key in ("loss_fn_1_replica", "dist_loss", "fit_loss", "chunked_fit_loss"):
        assert r[key] == pytest.approx(r["loss"], rel=1e-5), (key, r)
    assert r["grad_worst"] < 1, r
    assert r["fit_worst"] < 1, r
    assert r["chunked_fit_worst"] < 1, r


def test_every_layer_of_the_model_module_is_registered_for_loading():
    """Saved models name their layers `wikipairs>Class`; a layer class that lost its registration
    (e.g. to a helper inserted under the decorator) would not load from a .keras file."""
    import inspect

    import keras

    from wikipairs.trainer import fast_layers
    from wikipairs.trainer import model as model_module
    classes = [c for module in (model_module, fast_layers)
               for _, c in inspect.getmembers(module, inspect.isclass)
               if issubclass(c, keras.layers.Layer) and c.__module__ == module.__name__]
    assert {c.__name__ for c in classes} >= {"TransformerBlock", "TransformerEncoder", "Tower",
                                             "SelfAttention", "Dropout"}
    for c in classes:
        assert keras.saving.get_registered_name(c) == f"wikipairs>{c.__name__}", c
    assert keras.saving.get_registered_object("wikipairs>masked_mean") is None  # a function


FIRST_ONLY = STEP_SCRIPT + r'''
rng = np.random.default_rng(1)
batch = {"query_ids": ids(rng, 12, [1, 2, 3, 12, 5, 11, 7, 4]),
         "doc_ids": ids(rng, 20, [1, 2, 3, 20, 5, 19, 7, 4])}

def step(pooling):
    """loss, embeddings and gradient (SGD 1.0: w0 - w1) of one fit step from the same weights."""
    keras.utils.set_random_seed(0)
    config = ModelConfig.from_name("tiny", vocab_size=100, dropout=0.0, attention_dropout=0.0,
                                   max_query_len=12, max_doc_len=20, embedding_dim=16,
                                   pooling=pooling, temperature=0.1, initializer_range=0.2)
    model = TwoTower(config)
    model.build()
    w0 = model.get_weights()
    emb = np.asarray(model.encode_docs(batch["doc_ids"]))
    model.compile(optimizer=keras.optimizers.SGD(1.0), jit_compile=False)
    loss = model.fit(batch, batch_size=B, epochs=1, shuffle=False, verbose=0).history["loss"][0]
    return loss, emb, [a - b for a, b in zip(w0, model.get_weights())]

out = {"backend": keras.backend.backend()}
calls = []
encoder_call = TransformerEncoder.call
def spy(self, token_ids, training=False, first_only=False):
    calls.append(first_only)
    return encoder_call(self, token_ids, training=training, first_only=first_only)
TransformerEncoder.call = spy
fast_loss, fast_emb, fast = step("cls")
out["first_only_used"] = bool(calls) and all(calls)
def every_position(self, token_ids, training=False, first_only=False):
    sequence = encoder_call(self, token_ids, training=training)  # the last layer everywhere
    return sequence[:, :1, :] if first_only else sequence
TransformerEncoder.call = every_position
loss, emb, full = step("cls")
out.update(loss=loss, fast_loss=fast_loss, emb_worst=float(np.abs(fast_emb - emb).max()),
           grad_worst=worst(fast, full))
TransformerEncoder.call = spy
calls.clear()
step("mean")
out["mean_pooling_first_only"] = any(calls)
print("RESULT " + json.dumps(out))
'''


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_cls_towers_run_the_last_layer_at_position_0_only(backend):
    """[CLS] pooling runs the last layer at position 0 only (`first_only`): the embeddings, the
    loss and one fit step's gradients (SGD 1.0) equal those with the last layer run at every
    position (float32 rounding), on rows of 1 to L real tokens; mean pooling runs it
    everywhere. Both backends, in subprocesses."""
    r = run_script(FIRST_ONLY, backend)
    assert r["backend"] == backend and r["first_only_used"], r
    assert not r["mean_pooling_first_only"], r
    assert r["fast_loss"] == pytest.approx(r["loss"], rel=1e-5), r
    assert r["emb_worst"] < 1e-5 and r["grad_worst"] < 1e-5, r
