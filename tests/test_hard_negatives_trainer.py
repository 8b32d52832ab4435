"""Hard negatives in the trainer (issue 17, `wikipairs train pretrain --hard-negatives H`): the
loss against a NumPy oracle on both backends, GradCache with hard negatives, both readers on a
tiny shard written here (the columns of `build --hard-negatives N`), the one-line error on shards
without them, and short training runs.

Oracles as in sentence-transformers' tests: the loss with hard negatives is a float64 NumPy
softmax of each query over [its in-batch documents, the real hard negatives], where padding
negatives and a planted duplicate of a row's positive are REMOVED (not masked) for that row.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import assert_one_line_error, cli_command, describe, result_json, run_cli

from wikipairs.pairs.tasks import doc_id as make_doc_id
from wikipairs.schemas import pair_fields
from wikipairs.schemas.fields import Field, arrow_schema, example_kinds
from wikipairs.shards.tfrecord import RowEncoder, TFRecordWriter
from wikipairs.trainer import data

VOCAB = 64  # pieces of the test's SentencePiece model; ids are drawn in [4, VOCAB)
ROWS, LD, H = 16, 8, 2
NEG_FIELDS = (  # the columns of `build --vocab ... --hard-negatives N` (schemas/pair.py)
    Field("neg_doc_id", "list", "", item="string"),
    Field("neg_passage_id", "list", "", item="string"),
    Field("neg_page_id", "list", "", item="int64"),
    Field("neg_title", "list", "", item="string"),
    Field("neg_text", "list", "", item="string"),
    Field("neg_ids", "list", "", item="int32"),
    Field("neg_ids_lengths", "list", "", item="int32"),
)
ENV = dict(JAX_PLATFORMS="cpu", TF_CPP_MIN_LOG_LEVEL="3", CUDA_VISIBLE_DEVICES="")


# ---- a tiny shard ------------------------------------------------------------------------------

def _default(f: Field):
    return [] if f.type == "list" else {"string": "", "bool": False}.get(f.type, 0)


def _ids(rng, length: int) -> list[int]:
    return [1, *rng.integers(4, VOCAB, length - 2).tolist(), 2]


def make_rows(with_negatives: bool = True) -> list[dict]:
    """ROWS pairs; row i has i % 4 negatives of 3..11 ids (some longer than LD). Planted: row 3's
    first negative is row 5's positive (same doc_id, passage_id and ids), row 2's second
    negative is another text of row 2's own passage (same passage_id, another doc_id)."""
    rng = np.random.default_rng(7)
    rows = []
    for i in range(ROWS):
        row = {f.name: _default(f) for f in pair_fields(True)}
        title, text = f"Title {i}", f"passage text {i}"
        row.update(pair_id=f"pair-{i}", passage_id=f"passage-{i}", doc_id=make_doc_id(title, text),
                   task="ict", lang="en", query=f"query {i}", query_page_id=i + 1,
                   query_title=title, doc_page_id=1000 + i, doc_passage=i % 3, doc_title=title,
                   doc_text=text, split="train", query_ids=_ids(rng, 5),
                   doc_ids=_ids(rng, int(rng.integers(4, 12))))
        rows.append(row)
    if not with_negatives:
        return rows
    for i, row in enumerate(rows):
        negs = []
        for k in range(i % 4):
            title, text = f"Neg {i}-{k}", f"negative text {i} {k}"
            negs.append(dict(doc=make_doc_id(title, text), passage=f"neg-passage-{i}-{k}",
                             page=5000 + 10 * i + k, title=title, text=text,
                             ids=_ids(rng, int(rng.integers(3, 12)))))
        if i == 3:
            p = rows[5]
            negs[0] = dict(doc=p["doc_id"], passage=p["passage_id"], page=p["doc_page_id"],
                           title=p["doc_title"], text=p["doc_text"], ids=p["doc_ids"])
        if i == 2:
            negs[1].update(passage=row["passage_id"], page=row["doc_page_id"])
        row.update(neg_doc_id=[n["doc"] for n in negs], neg_passage_id=[n["passage"] for n in negs],
                   neg_page_id=[n["page"] for n in negs], neg_title=[n["title"] for n in negs],
                   neg_text=[n["text"] for n in negs],
                   neg_ids=[x for n in negs for x in n["ids"]],
                   neg_ids_lengths=[len(n["ids"]) for n in negs])
    return rows


def write_shards(folder: Path, rows: list[dict]) -> Path:
    """DIR/parquet/ict/part-00000.parquet and DIR/tfrecord/ict/part-00000.tfrecord.gz."""
    fields = pair_fields(True) + (NEG_FIELDS if "neg_ids" in rows[0] else ())
    (folder / "parquet" / "ict").mkdir(parents=True)
    (folder / "tfrecord" / "ict").mkdir(parents=True)
    pq.write_table(__import__("pyarrow").Table.from_pylist(rows, schema=arrow_schema(fields)),
                   folder / "parquet" / "ict" / "part-00000.parquet")
    encoder = RowEncoder(example_kinds(fields))
    with open(folder / "tfrecord" / "ict" / "part-00000.tfrecord.gz", "wb") as f:
        with TFRecordWriter(f) as writer:
            for row in rows:
                writer.write(encoder.encode(row))
    return folder


@pytest.fixture(scope="module")
def shards(tmp_path_factory) -> Path:
    return write_shards(tmp_path_factory.mktemp("hard-negatives"), make_rows())


@pytest.fixture(scope="module")
def plain_shards(tmp_path_factory) -> Path:
    return write_shards(tmp_path_factory.mktemp("no-hard-negatives"), make_rows(False))


@pytest.fixture(scope="module")
def vocab(tmp_path_factory) -> Path:
    import sentencepiece as spm

    folder = tmp_path_factory.mktemp("spm")
    words = [f"w{i}" for i in range(300)]
    rng = np.random.default_rng(0)
    lines = [" ".join(rng.choice(words, 12)) for _ in range(400)]
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_prefix=str(folder / "spm"),
                                   vocab_size=VOCAB, hard_vocab_limit=False,
                                   minloglevel=2)
    return folder / "spm.model"


def _fit(ids, max_len):
    out = np.zeros(max_len, np.int32)
    out[:min(len(ids), max_len)] = ids[:max_len]
    if len(ids) > max_len:
        out[-1] = 2
    return out


# ---- the readers -------------------------------------------------------------------------------

def test_both_readers_give_hard_negative_ids_mask_and_keys(shards):
    """hard_negatives=2: ids [B, 2, LD] (each negative split by neg_ids_lengths, cut with [SEP]
    like doc_ids, padding rows all [PAD]), mask [B, 2] = min(count, 2); keys [B, 2, 2, 2] equal
    to the rows' document / passage keys exactly at the planted duplicates. The Parquet and the
    TFRecord reader give the same batches; without the option, the batches of before."""
    rows = make_rows()
    kw = dict(tasks=None, batch_size=ROWS, max_query_len=8, max_doc_len=LD, split="all",
              shuffle=False, repeat=False, negative_keys=True)
    np_batch = next(data.numpy_batches(shards, hard_negatives=H, **kw))
    tf_batch = next(data.tf_dataset(shards, hard_negatives=H, **kw).as_numpy_iterator())
    expected_ids = np.zeros((ROWS, H, LD), np.int32)
    expected_mask = np.zeros((ROWS, H), bool)
    for i, row in enumerate(rows):
        starts = np.cumsum([0, *row["neg_ids_lengths"]])
        for k in range(min(len(row["neg_ids_lengths"]), H)):
            expected_ids[i, k] = _fit(row["neg_ids"][starts[k]:starts[k + 1]], LD)
            expected_mask[i, k] = True
    assert (expected_ids[:, :, -1] == 2).any()  # some negative was cut
    for name, b in (("np", np_batch), ("tf", tf_batch)):
        assert set(b) == {"query_ids", "doc_ids", "negative_keys", "hard_negative_ids",
                          "hard_negative_mask", "hard_negative_keys"}, name
        ids, mask, keys, hkeys = (b[k] for k in ("hard_negative_ids", "hard_negative_mask",
                                                  "negative_keys", "hard_negative_keys"))
        assert ids.shape == (ROWS, H, LD) and ids.dtype == np.int32, name
        assert mask.shape == (ROWS, H) and mask.dtype == bool, name
        assert hkeys.shape == (ROWS, H, 2, 2) and hkeys.dtype == np.int32, name
        np.testing.assert_array_equal(ids, expected_ids, err_msg=name)
        np.testing.assert_array_equal(mask, expected_mask, err_msg=name)
        np.testing.assert_array_equal(b["doc_ids"][5], _fit(rows[5]["doc_ids"], LD))
        # which (row, negative) shares which key with which row's positive
        same = (hkeys[None, :, :, :, :] == keys[:, None, None, :2, :]).all(-1)  # [B, B, H, 2]
        same &= mask[None, :, :, None]
        found = sorted(map(tuple, np.argwhere(same).tolist()))
        # row 5's positive = row 3's negative 0 (document and passage); row 2's own passage =
        # row 2's negative 1
        assert found == [(2, 2, 1, 1), (5, 3, 0, 0), (5, 3, 0, 1)], (name, found)
    without = next(data.numpy_batches(shards, **kw))
    assert set(without) == {"query_ids", "doc_ids", "negative_keys"}
    np.testing.assert_array_equal(without["doc_ids"], np_batch["doc_ids"])
    no_keys = next(data.numpy_batches(shards, hard_negatives=H, **{**kw, "negative_keys": False}))
    assert set(no_keys) == {"query_ids", "doc_ids", "hard_negative_ids", "hard_negative_mask"}
    np.testing.assert_array_equal(no_keys["hard_negative_ids"], expected_ids)


def test_shards_without_hard_negatives_are_one_data_error(plain_shards):
    kw = dict(tasks=None, batch_size=4, split="all", hard_negatives=2)
    for reader in (data.numpy_batches, data.tf_dataset):
        with pytest.raises(data.DataError, match="--hard-negatives") as e:
            next(iter(reader(plain_shards, **kw)))
        assert "\n" not in str(e.value) and "neg_ids" in str(e.value)
    assert next(data.numpy_batches(plain_shards, tasks=None, batch_size=4, split="all"))


# ---- the loss and the training step, on both backends ------------------------------------------

def numpy_hard_loss(q, d, h, mask, keys, hkeys, t):
    """Each row's softmax over its positive, the in-batch documents sharing no key with it and
    the real hard negatives sharing neither its document nor its passage key; the others are
    REMOVED. float64."""
    s = q.astype(np.float64) @ d.astype(np.float64).T / t
    sh = q.astype(np.float64) @ h.astype(np.float64).T / t
    losses = []
    for i in range(len(q)):
        cols = [s[i, j] for j in range(len(d)) if j == i or not any(
            (keys[i, k] == keys[j, k]).all() for k in range(keys.shape[1]))]
        cols += [sh[i, m] for m in range(len(h)) if mask[m] and not any(
            (keys[i, k] == hkeys[m, k]).all() for k in range(hkeys.shape[1]))]
        row = np.array(cols)
        losses.append(np.log(np.exp(row - row.max()).sum()) + row.max() - s[i, i])
    return float(np.mean(losses))


SCRIPT = r'''
import json, sys
import numpy as np
inp = {k: np.asarray(v) for k, v in json.loads(sys.stdin.read()).items()}
import keras
from wikipairs.trainer.losses import in_batch_softmax_loss as L, cross_replica_in_batch_loss as X
q, d, h = (inp[k].astype("float32") for k in ("q", "d", "h"))
mask = inp["mask"].astype(bool)
keys, hkeys = inp["keys"].astype("int32"), inp["hkeys"].astype("int32")
t = 0.1
f = lambda x: float(keras.ops.convert_to_numpy(x))
out = {"backend": keras.backend.backend(),
       "hard": f(L(q, d, t, keys=keys, hard_emb=h, hard_mask=mask, hard_keys=hkeys)),
       "mask_2d": f(L(q, d, t, keys=keys, hard_emb=h, hard_mask=mask.reshape(8, -1),
                      hard_keys=hkeys)),
       "cross_replica": f(X(q, d, t, keys, h, mask, hkeys)),
       "halves": [f(L(q[s:s + 4], d[s:s + 4], t, d, s, keys[s:s + 4], keys, h, mask, hkeys))
                  for s in (0, 4)],
       "padding_removed": f(L(q, d, t, keys=keys, hard_emb=h[mask], hard_keys=hkeys[mask])),
       "unmasked": f(L(q, d, t, keys=keys, hard_emb=h)),
       "plain": f(L(q, d, t, keys=keys)),
       "none": f(L(q, d, t, keys=keys, hard_emb=None, hard_mask=None, hard_keys=None)),
       "empty": f(L(q, d, t, keys=keys, hard_emb=h[:0], hard_mask=mask[:0], hard_keys=hkeys[:0]))}

# one Keras fit step (SGD 1.0) of a BoW TwoTower on a batch with hard negatives: plain, and
# GradCache in chunks of 2 and 4; its loss against the oracle of the initial embeddings
from wikipairs.trainer.configs import ModelConfig
from wikipairs.trainer.model import TwoTower
B, HN, LQ, LDOC = 8, 2, 10, 12
rng = np.random.default_rng(3)
def ids(shape, length):
    x = rng.integers(4, 100, (*shape, length)).astype("int32")
    x[..., 0] = 1
    n = rng.integers(3, length + 1, shape)
    x[np.arange(length) >= n[..., None]] = 0
    return x
hmask = np.array([[True, True], [True, False], [False, False], [True, True],
                  [True, False], [True, True], [False, False], [True, False]])
hids = ids((B, HN), LDOC)
hids[~hmask] = 0
bkeys = rng.integers(-2 ** 31, 2 ** 31 - 1, (B, 3, 2)).astype("int32")
bhkeys = rng.integers(-2 ** 31, 2 ** 31 - 1, (B, HN, 2, 2)).astype("int32")
bhkeys[3, 1, 0] = bkeys[6, 0]  # row 3's second negative is row 6's positive document
batch = {"query_ids": ids((B,), LQ), "doc_ids": ids((B,), LDOC), "negative_keys": bkeys,
         "hard_negative_ids": hids, "hard_negative_mask": hmask, "hard_negative_keys": bhkeys}
hids[3, 1] = batch["doc_ids"][6]

def model_for(chunk):
    keras.utils.set_random_seed(0)
    config = ModelConfig.from_name("bow", vocab_size=100, dropout=0.0, max_query_len=LQ,
                                   max_doc_len=LDOC, embedding_dim=16, hidden_size=16,
                                   normalize=True, temperature=0.1, initializer_range=0.5)
    model = TwoTower(config)
    model.build()
    model.chunk_size = chunk
    return model

def step(chunk):
    model = model_for(chunk)
    w0 = model.get_weights()
    model.compile(optimizer=keras.optimizers.SGD(1.0), jit_compile=False)
    loss = model.fit(batch, batch_size=B, epochs=1, shuffle=False, verbose=0).history["loss"][0]
    return loss, [a - b for a, b in zip(w0, model.get_weights())]

m = model_for(None)
emb = {k: keras.ops.convert_to_numpy(v).tolist() for k, v in m(batch).items()}
out["step_emb"] = emb
plain_loss, plain = step(None)
out["step_loss"] = plain_loss
for chunk in (2,):
    loss, grads = step(chunk)
    out[f"loss_{chunk}"] = loss
    out[f"worst_{chunk}"] = max(float(np.max(np.abs(x - y))) for x, y in zip(grads, plain)) / max(
        float(np.max(np.abs(y))) for y in plain)
out["batch"] = {k: np.asarray(v).tolist() for k, v in batch.items()}
print("RESULT " + json.dumps(out))
'''


def oracle_inputs():
    """q, d [8, 6], h [16, 6] (8 rows x 2 negatives), mask [16], keys [8, 3, 2], hkeys [16, 2, 2]
    with planted duplicates and padding that would weigh if it were not masked."""
    rng = np.random.default_rng(5)
    q = rng.normal(size=(8, 6))
    d = q + 0.5 * rng.normal(size=(8, 6))
    h = rng.normal(size=(16, 6))
    mask = rng.random(16) < 0.6
    mask[[6, 7, 9]] = [True, True, False]
    h[~mask] = 5 * q[np.flatnonzero(~mask) // 2]
    keys = rng.integers(-2 ** 31, 2 ** 31 - 1, (8, 3, 2))
    keys[4, 0] = keys[1, 0]  # an in-batch duplicate document
    hkeys = rng.integers(-2 ** 31, 2 ** 31 - 1, (16, 2, 2))
    h[6], hkeys[6, 0] = d[5], keys[5, 0]  # row 3's first negative is row 5's positive document
    h[7], hkeys[7, 1] = q[3], keys[3, 1]  # row 3's second negative is its own passage
    q, d, h = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (q, d, h))
    return {"q": q, "d": d, "h": h, "mask": mask, "keys": keys, "hkeys": hkeys}


@pytest.fixture(scope="module")
def oracle_runs():
    """backend -> a function waiting for SCRIPT's result there; both subprocesses start at once
    (the module's first use), so they run side by side."""
    inputs = json.dumps({k: v.tolist() for k, v in oracle_inputs().items()})
    procs = {}
    for backend in ("tensorflow", "jax"):
        try:
            __import__(backend)
        except ImportError:
            continue
        procs[backend] = subprocess.Popen(
            [sys.executable, "-c", SCRIPT], env=dict(os.environ, KERAS_BACKEND=backend, **ENV),
            text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs[backend].stdin.write(inputs)
        procs[backend].stdin.close()

    def result(backend):
        if backend not in procs:
            pytest.skip(f"no {backend}")
        proc = procs[backend]
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=300)
        return result_json(proc.returncode, out, err)

    yield result
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_hard_negative_loss_and_step_equal_the_numpy_oracle(backend, oracle_runs):
    """`in_batch_softmax_loss` with hard negatives [B*H, D] appended after the in-batch
    documents = the NumPy oracle (padding negatives and planted duplicates of a row's positive
    removed for that row); padding given as a [B, H] mask too; the cross-replica loss without a
    strategy and a 2 x 4 split of the batch (offset 0 and 4, hard negatives shared) give it;
    without hard negatives (None, or none at all) it is the plain loss. A Keras fit step of a
    TwoTower on a batch with hard negatives reports the oracle's loss of its embeddings, and
    A GradCache step (4 chunks of 2 rows, each with its negatives) reports it and moves the
    weights by the same gradients. Both backends, in subprocesses running side by side."""
    i = oracle_inputs()
    q, d, h, mask, keys, hkeys = (i[k] for k in ("q", "d", "h", "mask", "keys", "hkeys"))
    expected = numpy_hard_loss(q, d, h, mask, keys, hkeys, 0.1)
    kept_dups = numpy_hard_loss(q, d, h, mask, keys, np.full_like(hkeys, 7), 0.1)
    assert abs(expected - kept_dups) > 0.05  # the planted duplicates matter
    plain = numpy_hard_loss(q, d, h[:0], mask[:0], keys, hkeys[:0], 0.1)
    r = oracle_runs(backend)
    assert r["backend"] == backend
    for key in ("hard", "mask_2d", "cross_replica", "padding_removed"):
        assert r[key] == pytest.approx(expected, rel=1e-5), (key, r[key], expected)
    assert np.mean(r["halves"]) == pytest.approx(expected, rel=1e-5)
    assert abs(r["unmasked"] - expected) > 0.1
    for key in ("plain", "none", "empty"):
        assert r[key] == pytest.approx(plain, rel=1e-5), (key, r[key], plain)
    # the training step
    b, e = r["batch"], {k: np.asarray(v) for k, v in r["step_emb"].items()}
    assert e["hard_negative_emb"].shape == (16, 16)
    step_oracle = numpy_hard_loss(e["query_emb"], e["doc_emb"], e["hard_negative_emb"],
                                  np.asarray(b["hard_negative_mask"]).reshape(-1),
                                  np.asarray(b["negative_keys"]),
                                  np.asarray(b["hard_negative_keys"]).reshape(16, 2, 2), 0.1)
    assert r["step_loss"] == pytest.approx(step_oracle, rel=1e-5)
    for chunk in (2,):
        assert r[f"loss_{chunk}"] == pytest.approx(r["step_loss"], rel=1e-5), r
        assert r[f"worst_{chunk}"] < 1e-5, r


# ---- the command line --------------------------------------------------------------------------

def _train_args(shards, vocab, output, *extra, jit="off"):
    return ("train", "pretrain", "-d", shards, "-o", output, "--vocab", vocab, "--model", "tiny",
            "--model-opt", "num_layers=1", "--model-opt", "hidden_size=32", "--model-opt",
            "ff_size=64", "--model-opt", "embedding_dim=16", "--model-opt", "max_query_len=8",
            "--model-opt", f"max_doc_len={LD}", "--batch-size", "8", "--steps", "2",
            "--eval-batches", "0", "--no-tensorboard", "--jit-compile", jit,
            "--shuffle-buffer", "8", *extra)


def test_train_pretrain_with_hard_negatives(shards, plain_shards, vocab, tmp_path):
    """`train pretrain --hard-negatives 2 --chunk-size 4` trains on such shards (JAX, Parquet,
    GradCache; the TensorFlow step and reader are tested above, a run would double this test's
    time); on shards without them it is one error line before training."""
    result = run_cli(*_train_args(plain_shards, vocab, tmp_path / "bad", "--hard-negatives", "2"))
    assert_one_line_error(result, "--hard-negatives", "neg_ids")
    result = run_cli(*_train_args(shards, vocab, tmp_path / "mlm", "--hard-negatives", "2",
                                  "--objective", "mlm"))
    assert_one_line_error(result, "--hard-negatives", "two-tower")
    runs = {}
    for backend, extra, jit in (("jax", ("--chunk-size", "4"), "auto"),):  # XLA: faster here
        argv, env = cli_command(*_train_args(shards, vocab, tmp_path / backend,
                                             "--hard-negatives", "2", *extra, jit=jit))
        runs[backend] = subprocess.Popen(argv, env={**env, "KERAS_BACKEND": backend, **ENV},
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True, encoding="utf-8")
    for backend, proc in runs.items():
        stdout, stderr = proc.communicate(timeout=300)
        result = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
        assert result.returncode == 0, describe(result)
        out = tmp_path / backend
        config = json.loads((out / "train_config.json").read_text())
        assert config["hard_negatives"] == 2
        log = [json.loads(x) for x in (out / "train_log.jsonl").read_text().splitlines()]
        assert log and all(np.isfinite(x["loss"]) for x in log if "loss" in x), log
        assert (out / "model.weights.h5").is_file()
