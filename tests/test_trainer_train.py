"""wikipairs.trainer data, training loop and CLI on CPU, on pair shards built from the real
enwiki-sample-gensim dump (a session fixture runs `wikipairs vocab` and `wikipairs build` once).

Speed: the tiny Transformer costs ~0.2 s a step here and 15-45 s to trace, so only the
accuracy test runs it under tf.function for a few hundred steps; the other runs use short
sequences, the BoW model or run_eagerly.
"""
from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")

from conftest import (NLTK_DATA, REPO, assert_one_line_error, cli_command,  # noqa: E402
                      describe, native_log_lines, run_cli, wiki_file)

from wikipairs.errors import WikipairsError  # noqa: E402
from wikipairs.trainer import data  # noqa: E402
from wikipairs.trainer.checkpoints import latest_checkpoint  # noqa: E402
from wikipairs.trainer.evaluation import eval_batches, in_batch_accuracy  # noqa: E402
from wikipairs.trainer.train import TrainConfig, TrainError, load_model, pretrain  # noqa: E402

GENSIM = "enwiki-sample-gensim.xml.bz2"
SHORT = {"max_query_len": 32, "max_doc_len": 96}  # the tests' sequence lengths


@pytest.fixture(scope="session")
def shards(tmp_path_factory) -> Path:
    """Pair shards (Parquet + TFRecord, with token ids) of the gensim sample, 4,000 pieces."""
    root = tmp_path_factory.mktemp("trainer-shards")
    model = root / "vocab" / "spm.model"
    result = run_cli("vocab", "-i", wiki_file(GENSIM), "-o", model, "--vocab-size", "4000",
                     "--max-sentences", "20000")
    assert result.returncode == 0, describe(result)
    out = root / "pairs"
    result = run_cli("build", "-i", wiki_file(GENSIM), "-o", out, "--vocab", model,
                     "--workers", "1", "--quiet")
    assert result.returncode == 0, describe(result)
    return out


def _config(shards, output, **kw) -> TrainConfig:
    values = dict(data=[str(shards)], output=str(output), model="tiny", batch_size=16, steps=10,
                  learning_rate=1e-3, checkpoint_every=5, log_every=5, eval_batches=2,
                  jit_compile=False, quiet=True, model_overrides=dict(SHORT))
    values.update(kw)
    return TrainConfig(**values)


def _pair_tasks(shards: Path) -> dict[tuple, str]:
    """(query ids, doc ids) -> task, from the Parquet shards."""
    out = {}
    for path in sorted(shards.glob("parquet/*/part-*.parquet")):
        table = pq.read_table(path, columns=["task", "query_ids", "doc_ids"]).to_pydict()
        for task, q, d in zip(table["task"], table["query_ids"], table["doc_ids"]):
            out[(tuple(q), tuple(d))] = task
    return out


def _keys(batch) -> list[tuple]:
    q, d = np.asarray(batch["query_ids"]), np.asarray(batch["doc_ids"])
    return [(tuple(int(x) for x in qi if x), tuple(int(x) for x in di if x)) for qi, di in zip(q, d)]


# ---- data --------------------------------------------------------------------------------------

def test_tf_dataset_static_shapes_and_uniform_mixing(shards):
    ds = data.tf_dataset(shards, batch_size=32, seed=1, shuffle_buffer=1000)  # full lengths 64/288: nothing is cut
    spec = ds.element_spec
    assert spec["query_ids"].shape.as_list() == [32, 64]
    assert spec["doc_ids"].shape.as_list() == [32, 288]
    assert spec["query_ids"].dtype.name == "int32" and spec["doc_ids"].dtype.name == "int32"
    tasks = _pair_tasks(shards)
    counts = {"ict": 0, "bfs": 0, "wlp": 0}
    for batch in ds.take(30):
        for key in _keys(batch):
            counts[tasks[key]] += 1
    shares = {t: n / 960 for t, n in counts.items()}
    assert all(0.26 < s < 0.41 for s in shares.values()), shares  # 1/3 each, ~0.015 std
    weighted = data.tf_dataset(shards, batch_size=32, seed=1, tasks=["ict", "bfs"],
                               weights=[3, 1], shuffle_buffer=1000)
    ict = sum(tasks[k] == "ict" for b in weighted.take(10) for k in _keys(b))
    assert 0.65 < ict / 320 < 0.85


def test_numpy_batches_shapes_padding_and_mixing(shards):
    short = next(data.numpy_batches(shards, batch_size=32, max_query_len=16, max_doc_len=40))
    assert short["query_ids"].shape == (32, 16) and short["doc_ids"].shape == (32, 40)
    assert short["query_ids"].dtype == np.int32 and short["doc_ids"].dtype == np.int32
    assert (short["query_ids"][:, 0] == 1).all() and (short["doc_ids"][:, 0] == 1).all()
    assert set(short["doc_ids"][:, -1]) <= {0, 2}  # cut rows end with [SEP], others with [PAD]
    assert (short["doc_ids"][:, -1] == 2).any()
    tasks = _pair_tasks(shards)
    counts = {"ict": 0, "bfs": 0, "wlp": 0}
    batches = data.numpy_batches(shards, batch_size=32, seed=1, shuffle_buffer=1000)  # no cuts
    for _ in range(30):
        for key in _keys(next(batches)):
            counts[tasks[key]] += 1
    assert all(0.26 < n / 960 < 0.41 for n in counts.values()), counts


def test_both_readers_give_the_keys_of_clean_negatives(shards):
    """negative_keys=True: int32 [B, 3, 2] keys, equal between two rows of a batch exactly when
    their document (title and text), their passage (lang, page, passage index) or their query
    text is, and with page_keys=True [B, 4, 2], the fourth equal when the page that makes their
    documents positives is (BFS: the page; WLP: the query page; ICT: the document again), from
    the Parquet and the TFRecord reader; the ids are the batches without it."""
    columns = ["query_ids", "doc_ids", "doc_title", "doc_text", "lang", "doc_page_id",
               "doc_passage", "query", "task", "query_page_id"]
    texts = {}
    for path in sorted(shards.glob("parquet/*/part-*.parquet")):
        for r in pq.read_table(path, columns=columns).to_pylist():
            doc = (r["doc_title"], r["doc_text"])
            page = {"bfs": ("bfs", r["lang"], r["doc_page_id"]),
                    "wlp": ("wlp", r["lang"], r["query_page_id"])}.get(r["task"], doc)
            texts[(tuple(r["query_ids"]), tuple(r["doc_ids"]))] = (
                doc, (r["lang"], r["doc_page_id"], r["doc_passage"]), r["query"], page)
    kw = dict(batch_size=64, seed=2, shuffle_buffer=200, tasks=["ict", "bfs", "wlp"])
    readers = {"np": lambda **k: data.numpy_batches(shards, **kw, **k),
               "tf": lambda **k: data.tf_dataset(shards, **kw, **k).as_numpy_iterator()}
    found, page_only = [0, 0, 0, 0], 0
    for name, reader in readers.items():
        with_keys, without = reader(negative_keys=True, page_keys=True), reader()
        three = reader(negative_keys=True)
        for _ in range(3):
            b, plain, b3 = next(with_keys), next(without), next(three)
            assert (b3[data.NEGATIVE_KEYS] == b[data.NEGATIVE_KEYS][:, :3]).all(), name
            assert (b["doc_ids"] == plain["doc_ids"]).all() and set(plain) == {"query_ids",
                                                                               "doc_ids"}
            keys = b[data.NEGATIVE_KEYS]
            assert keys.shape == (64, 4, 2) and keys.dtype == np.int32, name
            rows = [texts[k] for k in _keys(b)]
            for k in range(4):
                same_key = (keys[:, None, k] == keys[None, :, k]).all(-1)
                same_text = np.array([[a[k] == c[k] for c in rows] for a in rows])
                assert (same_key == same_text).all(), (name, k)
                found[k] += int(same_text.sum()) - 64
            same = [(keys[:, None, k] == keys[None, :, k]).all(-1) for k in range(4)]
            page_only += int((same[3] & ~(same[0] | same[1] | same[2])).sum())
    assert min(found) > 0, found  # every kind of duplicate occurs in these batches
    assert page_only > 0  # rows of one BFS page or WLP query page with other lead sentences


def test_readers_are_deterministic_under_a_seed(shards):
    def tf_take(seed):
        return [b["doc_ids"].numpy() for b in data.tf_dataset(
            shards, batch_size=16, seed=seed, max_doc_len=96, shuffle_buffer=500).take(4)]

    def np_take(seed):
        it = data.numpy_batches(shards, batch_size=16, seed=seed, max_doc_len=96,
                                shuffle_buffer=500)
        return [next(it)["doc_ids"] for _ in range(4)]

    for take in (tf_take, np_take):
        a, b, c = take(7), take(7), take(8)
        assert all((x == y).all() for x, y in zip(a, b))
        assert not all((x == z).all() for x, z in zip(a, c))
    # skip_batches continues where a run stopped
    it = data.numpy_batches(shards, batch_size=16, seed=7, max_doc_len=96, shuffle_buffer=500,
                            skip_batches=2)
    assert (next(it)["doc_ids"] == np_take(7)[2]).all()
    skipped = data.tf_dataset(shards, batch_size=16, seed=7, max_doc_len=96, skip_batches=2,
                              shuffle_buffer=500)
    assert (next(iter(skipped))["doc_ids"].numpy() == tf_take(7)[2]).all()


def test_prefetched_parquet_batches_are_the_same_batches(shards):
    """A background thread makes the batches ahead (make_batches' default on Parquet): the same
    batches in the same order, with and without repeat, and resuming (skip_batches) too."""
    import threading

    def take(n, ahead=False, **kw):
        it = data.numpy_batches(shards, batch_size=16, seed=3, max_doc_len=96,
                                shuffle_buffer=500, **kw)
        it = data.prefetched(it, 2) if ahead else it
        return [next(it) for _ in range(n)] if n else list(it)

    for kw in ({}, {"skip_batches": 3}, {"repeat": False, "split": "eval"}):
        n = 0 if kw.get("repeat") is False else 10
        plain, ahead = take(n, **kw), take(n, ahead=True, **kw)
        assert len(plain) == len(ahead) > 0
        for a, b in zip(plain, ahead):
            assert (a["query_ids"] == b["query_ids"]).all() and (a["doc_ids"] == b["doc_ids"]).all()
    made = data.make_batches([shards], data_format="parquet", batch_size=16, seed=3,
                             max_doc_len=96, shuffle_buffer=500)
    assert (next(made)["doc_ids"] == take(1)[0]["doc_ids"]).all()
    assert any(t.name == "wikipairs-prefetch" for t in threading.enumerate())
    made.close()


def test_prefetched_raises_the_producer_s_error_and_stops_when_closed():
    import threading

    def two_then_fail():
        yield 1
        yield 2
        raise data.DataError("shard 3 is corrupt")

    got = []
    with pytest.raises(data.DataError, match="shard 3 is corrupt"):
        for item in data.prefetched(two_then_fail(), 2):
            got.append(item)
    assert got == [1, 2]

    def counting():
        n = 0
        while True:
            n += 1
            yield n

    it = data.prefetched(counting(), 3)
    assert [next(it) for _ in range(5)] == [1, 2, 3, 4, 5]
    it.close()
    deadline = time.monotonic() + 5
    while any(t.name == "wikipairs-prefetch" for t in threading.enumerate()):
        assert time.monotonic() < deadline, "the prefetch thread outlived its iterator"
        time.sleep(0.05)
    assert list(data.prefetched(iter([4, 5]), 0)) == [4, 5]


def test_eval_split_is_disjoint_and_the_same_in_both_readers(shards):
    def keys(reader, split):
        kwargs = dict(batch_size=1, split=split, repeat=False, shuffle=False)
        batches = (data.tf_dataset(shards, **kwargs).as_numpy_iterator() if reader == "tf"
                   else data.numpy_batches(shards, **kwargs))
        return [k for b in batches for k in _keys(b)]

    tasks = _pair_tasks(shards)
    eval_tf, eval_np = keys("tf", "eval"), keys("np", "eval")
    train_np = keys("np", "train")
    assert set(eval_tf) == set(eval_np)
    assert not set(eval_np) & set(train_np)
    assert set(eval_np) | set(train_np) == set(tasks)
    # 5% of query pages (issue 20): the pairs' share varies with the pages' sizes
    assert 0.02 < len(set(eval_np)) / len(tasks) < 0.12
    # the readers follow the build's split column
    rows = pq.read_table(shards / "parquet", columns=["query_ids", "doc_ids", "split",
                                                      "query_page_id"]).to_pylist()
    assert set(eval_np) == {(tuple(r["query_ids"]), tuple(r["doc_ids"])) for r in rows
                            if r["split"] == "eval"}
    # older builds (no split column): the page rule, identical in NumPy and TensorFlow
    import tensorflow as tf
    pages = sorted({r["query_page_id"] for r in rows})[:50]
    assert [int(data.tf_page_bucket(tf.constant(p, tf.int64))) for p in pages] == \
        data.page_buckets(pages).tolist()


def test_bad_data_folders(shards, tmp_path):
    with pytest.raises(data.DataError, match="no such data folder"):
        data.find_shards(tmp_path / "missing")
    with pytest.raises(data.DataError, match="no pair shards"):
        data.find_shards(tmp_path)
    with pytest.raises(data.DataError, match="no qa shards"):
        data.find_shards(shards, ["qa"])
    with pytest.raises(data.DataError, match="task weights"):
        data.task_weights(["ict", "bfs"], [1.0])


# ---- training ----------------------------------------------------------------------------------

def test_training_learns_to_retrieve_held_out_pairs(shards, tmp_path):
    """300 steps of batch 32 on ICT + BFS; held-out in-batch top-1 of 32 against an untrained
    model of the same configuration. The BoW-MLP towers: the tiny Transformer learns too slowly
    from scratch for a CPU test (0.2 s a step here, the loss leaves ln 32 only after ~100 steps)."""
    config = _config(shards, tmp_path / "run", model="bow", steps=300, batch_size=32,
                     learning_rate=1e-3, tasks=["ict", "bfs"], checkpoint_every=1000,
                     log_every=25, eval_batches=8, temperature=0.05,
                     model_overrides={**SHORT, "normalize": True})
    summary = pretrain(config)
    losses = [r["loss"] for r in summary["log"]]
    assert len(losses) == 12 and all(np.isfinite(losses))
    assert np.mean(losses[-2:]) < losses[0] - 1.0, losses
    trained = summary["eval"]
    resolved = config.resolved()
    model = load_model(config.output)
    keras.utils.set_random_seed(1)
    untrained = type(model)(model.config)
    untrained.build()
    before = in_batch_accuracy(untrained, eval_batches(resolved, model.config, ["ict", "bfs"]),
                               8)
    # 8 batches: the held-out share holds 9 (queries over 64 pieces are dropped, not cut)
    assert trained["examples"] == before["examples"] == 256
    print(f"held-out in-batch top-1 of 32: untrained {before['accuracy']:.3f}, "
          f"trained {trained['accuracy']:.3f}; losses {losses}")
    # Untrained BoW towers already score shared tokens a little above chance (0.027-0.051
    # measured as the sample's sentences changed): near chance, not at it.
    assert before["accuracy"] < 2 * CHANCE
    # The held-out pairs are those of held-out query pages (the build's split column): pages the
    # model never saw, with in-batch negatives mostly from the same few pages. Measured: 0.062
    # against 0.027 untrained and 1/32 chance (0.266 when held-out pairs were drawn by pair_id,
    # from pages also seen in training). The training loss shows what it learnt on its pages.
    assert trained["accuracy"] > max(before["accuracy"], CHANCE)


CHANCE = 1 / 32  # top-1 among the 32 documents of a batch


class _Interrupt(keras.callbacks.Callback):
    def __init__(self, after: int):
        super().__init__()
        self.after = after

    def on_train_batch_end(self, batch, logs=None):
        if batch + 1 == self.after:
            raise KeyboardInterrupt


def _weights(folder) -> list[np.ndarray]:
    return [np.asarray(w) for w in load_model(folder).get_weights()]


def test_resume_after_interruption_continues_from_the_checkpoint(shards, tmp_path):
    common = dict(model="bow", steps=20, checkpoint_every=5, batch_size=16,
                  model_overrides={**SHORT, "hidden_size": 64, "embedding_dim": 64},
                  eval_batches=1)
    straight = pretrain(_config(shards, tmp_path / "straight", **common))
    assert straight["initial_step"] == 0

    run = tmp_path / "interrupted"
    with pytest.raises(KeyboardInterrupt):
        pretrain(_config(shards, run, **common), callbacks=[_Interrupt(after=13)])
    step, path = latest_checkpoint(str(run / "checkpoints"))
    assert step == 10 and path.endswith("step-00000010")
    assert not (run / "model.weights.h5").exists()

    resumed = pretrain(_config(shards, run, **common))
    assert resumed["initial_step"] == 10
    assert [r["step"] for r in resumed["log"]] == [15, 20]  # 10 more steps, not 20
    assert latest_checkpoint(str(run / "checkpoints"))[0] == 20
    log = [json.loads(line) for line in (run / "train_log.jsonl").read_text().splitlines()]
    assert [r["step"] for r in log] == [5, 10, 15, 20]
    for a, b in zip(_weights(tmp_path / "straight"), _weights(run)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    # the optimizer's step counter was restored and ran to the end
    import h5py
    with h5py.File(run / "checkpoints" / "step-00000020" / "model.weights.h5") as f:
        assert int(f["optimizer"]["vars"]["0"][()]) == 20
    # the finished run is not trained again
    again = pretrain(_config(shards, run, **common))
    assert again["initial_step"] == 20 and again["log"] == []
    # another configuration does not silently reuse the checkpoint
    with pytest.raises(TrainError, match="batch_size"):
        pretrain(_config(shards, run, **{**common, "batch_size": 8}))


def test_a_rerun_discards_what_a_killed_run_half_wrote(shards, tmp_path):
    """What a SIGKILL can leave in a run folder, made by hand after an in-process interruption
    at step 7 (last checkpoint: step 5; log: steps 1-7): the next checkpoint half written under
    its temporary name (step-00000010.tmp/ with a truncated model.weights.h5), a cut
    checkpoint.json.tmp naming it, truncated final weights under their temporary name, and half
    a log line. The same run again resumes from step 5, the last complete checkpoint, has deleted
    every temporary name before its first step, and logs each step once."""
    common = dict(model="bow", steps=10, checkpoint_every=5, log_every=1, eval_batches=1,
                  model_overrides={**SHORT, "hidden_size": 64, "embedding_dim": 64})
    run = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        pretrain(_config(shards, run, **common), callbacks=[_Interrupt(after=7)])
    ckpt = run / "checkpoints"
    complete = (ckpt / "step-00000005" / "model.weights.h5").read_bytes()
    (ckpt / "step-00000010.tmp").mkdir()
    (ckpt / "step-00000010.tmp" / "model.weights.h5").write_bytes(complete[:len(complete) // 3])
    (ckpt / "checkpoint.json.tmp").write_text('{"path": "step-00000010", "st')
    (run / "model.tmp.weights.h5").write_bytes(complete[:4096])
    with open(run / "train_log.jsonl", "a") as f:
        f.write('{"step": 8, "loss": 2.77')
    assert latest_checkpoint(str(ckpt))[0] == 5

    class TemporaryNames(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.left = sorted(p.name for p in run.rglob("*.tmp*"))

    seen = TemporaryNames()
    resumed = pretrain(_config(shards, run, **common), callbacks=[seen])
    assert resumed["initial_step"] == 5 and [r["step"] for r in resumed["log"]] == [6, 7, 8, 9, 10]
    assert seen.left == [] and not list(run.rglob("*.tmp*"))
    assert _logged_steps(run / "train_log.jsonl") == list(range(1, 11))
    assert latest_checkpoint(str(ckpt))[0] == 10
    assert sorted(p.name for p in ckpt.glob("step-*")) == ["step-00000005", "step-00000010"]
    assert len(_weights(run)) == 10 and (run / "eval.json").is_file()


# the command the kill test runs three times: small BoW towers and a checkpoint every 2 steps
# (~17 steps/s here, checkpoints included), so the kill lands long before the 30th step
KILL_RUN = ("--model", "bow", "--model-opt", "max_query_len=32", "--model-opt", "max_doc_len=96",
            "--model-opt", "hidden_size=64", "--model-opt", "embedding_dim=64",
            "--batch-size", "16", "--steps", "30", "--lr", "1e-3", "--checkpoint-every", "2",
            "--log-every", "2", "--eval-batches", "2")


def _train_cli(shards, output) -> tuple[list[str], dict]:
    return cli_command("train", "pretrain", "--data", shards, "-o", output, *KILL_RUN)


def _h5_arrays(path) -> dict[str, np.ndarray]:
    """Every dataset of an HDF5 file by its path (weights and, in checkpoints, optimizer)."""
    import h5py

    out = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: out.__setitem__(name, obj[()])
                     if isinstance(obj, h5py.Dataset) else None)
    return out


def _logged_steps(path: Path) -> list[int]:
    """The steps in a train_log.jsonl that a running process appends to (a cut last line is
    skipped)."""
    steps = []
    for line in path.read_text().splitlines() if path.exists() else []:
        with contextlib.suppress(ValueError):
            steps.append(json.loads(line)["step"])
    return steps


def _kill_after_first_checkpoint(argv, env, output: Path, timeout: float = 180) -> dict:
    """Starts `argv` in its own process group and SIGKILLs the group once a checkpoint is
    complete on disk (checkpoint.json exists: train.py writes it last, by rename, after renaming
    the step folder it names into place) and the log has a later step (the logger runs just
    before the checkpoint callback, so the run is then writing its next checkpoint, or past it).
    Returns what the kill left: the checkpoint's step, the logged steps, the temporary names."""
    state, log = output / "checkpoints" / "checkpoint.json", output / "train_log.jsonl"
    console = output.parent / f"{output.name}.console.txt"
    with open(console, "w") as sink:
        process = subprocess.Popen(argv, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        try:
            deadline, first = time.monotonic() + timeout, None
            while first is None or max(_logged_steps(log), default=0) <= first:
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"the run was not caught after a checkpoint (status "
                                f"{process.poll()}):\n{console.read_text()[-3000:]}")
                if first is None and state.exists():
                    first = json.loads(state.read_text())["step"]
                time.sleep(0.002)
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == -signal.SIGKILL, "the run ended before it was killed"
    step, path = latest_checkpoint(str(output / "checkpoints"))
    assert set(os.listdir(path)) >= {"model.weights.h5", "rng.npz", "rng.json"}
    return {"step": step, "logged": _logged_steps(log),
            "temporary": sorted(p.name for p in output.rglob("*.tmp*"))}


def test_killed_cli_run_resumes_from_its_last_checkpoint(shards, tmp_path):
    """`wikipairs train pretrain` SIGKILLed (the whole process group) after its first checkpoint,
    typically while it writes the next one, then the same command again: it resumes at the
    checkpoint's step and ends with the weights, log, evaluation and files of an uninterrupted
    run of the command. The weights are compared exactly: the restored state (weights, AdamW
    moments and step counter, dropout RNG state) and the input position (the first `step`
    batches skipped) are those of the uninterrupted run at that step, and TensorFlow's CPU
    kernels give the same bits for the same shapes in a new process (every run here did). The
    log's losses are means over the logging window, summed in another order after the restart:
    1e-5."""
    straight, run = tmp_path / "straight", tmp_path / "killed"
    argv, env = _train_cli(shards, straight)
    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, describe(result)
    assert "resuming at" not in result.stdout and "done: 30 steps;" in result.stdout

    argv, env = _train_cli(shards, run)
    killed = _kill_after_first_checkpoint(argv, env, run)
    print("after the kill:", killed)  # mostly: the log one step ahead, step-N.tmp/ half written
    step = killed["step"]
    assert 2 <= step < 30 and step % 2 == 0, killed
    assert not (run / "model.weights.h5").exists() and not (run / "eval.json").exists()

    result = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, describe(result)
    assert f"resuming at step {step}" in result.stdout, describe(result)
    assert f"done: 30 steps (resumed at {step})" in result.stdout, describe(result)

    expected, got = _h5_arrays(straight / "model.weights.h5"), _h5_arrays(run / "model.weights.h5")
    assert sorted(got) == sorted(expected) and len(got) == 10
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
    # the run folder: the same files as the uninterrupted run's, nothing half-written
    assert sorted(p.name for p in run.iterdir()) == sorted(p.name for p in straight.iterdir())
    assert not [p for p in run.rglob("*") if ".tmp" in p.name]
    assert latest_checkpoint(str(run / "checkpoints"))[0] == 30
    steps_kept = sorted(p.name for p in (run / "checkpoints").glob("step-*"))
    assert steps_kept == ["step-00000028", "step-00000030"]
    assert json.loads((run / "eval.json").read_text()) == \
        json.loads((straight / "eval.json").read_text())
    log, reference = ([json.loads(line) for line in (folder / "train_log.jsonl").read_text()
                       .splitlines()] for folder in (run, straight))
    assert [r["step"] for r in log] == [r["step"] for r in reference] == list(range(2, 31, 2))
    np.testing.assert_allclose([r["loss"] for r in log], [r["loss"] for r in reference],
                               rtol=1e-5)


def test_mlm_objective_initializes_both_towers(shards, tmp_path):
    config = _config(shards, tmp_path / "mlm", objective="mlm", steps=3, run_eagerly=True,
                     model_overrides={"max_query_len": 16, "max_doc_len": 32}, eval_batches=1)
    summary = pretrain(config)
    assert all(np.isfinite(r["loss"]) and r["loss"] > 0 for r in summary["log"])
    model = load_model(config.output)
    for a, b in zip(model.query_tower.encoder.get_weights(),
                    model.doc_tower.encoder.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TrainError, match="mlm"):
        pretrain(_config(shards, tmp_path / "bow-mlm", objective="mlm", model="bow"))


# `python -c TRAIN_RUN SHARDS OUTPUT SETTINGS_JSON` under a chosen KERAS_BACKEND: a tiny run
# (SETTINGS override these) whose last stdout line is JSON: the backend, the log, whether
# tensorflow was imported, and what a callback saw during training: the dtype policy, the
# encoder's compute dtype, the dtypes of an encoder activation, a tower output and the loss,
# and the dtypes of the weights.
TRAIN_RUN = r'''
import json, sys
import keras
import numpy as np
from wikipairs.trainer.train import TrainConfig, pretrain
settings = dict(model="tiny", tasks=["wlp"], batch_size=16, steps=60, learning_rate=1e-3,
                checkpoint_every=30, log_every=15, eval_batches=0, quiet=True,
                model_overrides={"max_query_len": 32, "max_doc_len": 64, "dropout": 0.0,
                                 "attention_dropout": 0.0})
settings.update(json.loads(sys.argv[3]))
rng = np.random.default_rng(0)
query_ids = rng.integers(5, 4000, (4, 32)).astype("int32")
query_ids[:, 0] = 1
for row, n in enumerate((32, 20, 9, 3)):
    query_ids[row, n:] = 0
seen = {"query_ids": query_ids.tolist()}
class Dtypes(keras.callbacks.Callback):
    def on_train_end(self, logs=None):  # the trained query tower, in the run's dtype policy
        emb = self.model.encode_queries(query_ids)
        seen["query_emb"] = keras.ops.convert_to_numpy(emb).tolist()

    def on_train_batch_end(self, batch, logs=None):
        if "policy" in seen:
            return
        m, ids, dtype = self.model, np.ones((2, 8), "int32"), keras.backend.standardize_dtype
        out = m({"query_ids": ids, "doc_ids": ids})
        seen.update(policy=m.dtype_policy.name, compute=m.query_tower.encoder.compute_dtype,
                    activation=dtype(m.query_tower.encoder(ids).dtype),
                    tower=dtype(out["query_emb"].dtype),
                    loss=dtype(m.compute_loss(y_pred=out).dtype),
                    weights=sorted({dtype(v.dtype) for v in m.weights}))
summary = pretrain(TrainConfig(data=[sys.argv[1]], output=sys.argv[2], **settings),
                   callbacks=[Dtypes()])
print(json.dumps({"backend": keras.backend.backend(), "log": summary["log"], "seen": seen,
                  "eval": summary["eval"], "policy_after": keras.config.dtype_policy().name,
                  "tensorflow": "tensorflow" in sys.modules}))
'''


def _train_run(shards, output, backend: str, **settings) -> dict:
    env = dict(os.environ, KERAS_BACKEND=backend, JAX_PLATFORMS="cpu")
    result = subprocess.run([sys.executable, "-c", TRAIN_RUN, str(shards), str(output),
                             json.dumps(settings)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert out["backend"] == backend
    return out


def test_chunk_size_on_a_backend_without_gradcache_is_one_line(shards, tmp_path):
    """GradCache has a TensorFlow and a JAX step: on the torch backend `--chunk-size` stops the
    run with one line before a model is built, not with an error inside the training step."""
    pytest.importorskip("torch")
    argv, env = cli_command("train", "pretrain", "--data", shards, "-o", tmp_path / "torch",
                            "--model", "tiny", "--steps", "2", "--batch-size", "8",
                            "--chunk-size", "4", "--tasks", "wlp")
    result = subprocess.run(argv, env=dict(env, KERAS_BACKEND="torch"), capture_output=True,
                            text=True, timeout=300)
    assert_one_line_error(result, "--chunk-size needs the TensorFlow or JAX backend",
                          "KERAS_BACKEND=torch")


def test_tiny_trains_on_the_jax_backend_without_tensorflow(shards, tmp_path):
    pytest.importorskip("jax")
    out = _train_run(shards, tmp_path / "jax", "jax")
    assert out["tensorflow"] is False, "the JAX run imported tensorflow"
    losses = [r["loss"] for r in out["log"]]
    assert len(losses) == 4 and all(np.isfinite(losses)), losses
    assert losses[-1] < losses[0] - 0.2, losses  # 79 WLP train pairs seen ~12 times
    assert (tmp_path / "jax" / "model.weights.h5").exists()
    assert out["seen"]["policy"] == "float32" and out["seen"]["activation"] == "float32"
    scalars = _tensorboard_scalars(tmp_path / "jax" / "logs")  # written without TensorFlow
    assert [step for step, _ in scalars["train/loss"]] == [15, 30, 45, 60]
    np.testing.assert_allclose([v for _, v in scalars["train/loss"]], losses, rtol=1e-5)
    assert {"train/learning_rate", "train/examples_per_s"} <= set(scalars)


def test_chunked_pretrain_run_equals_the_plain_run(shards, tmp_path):
    """`pretrain(chunk_size=4)` (GradCache, --chunk-size) on JAX logs the losses of the same run
    without it (dropout 0: the same gradients, so nearly the same weights step after step), with the
    clean-negative keys on; a chunk size that does not divide the batch, or the MLM objective,
    is a one-line TrainError before anything runs."""
    pytest.importorskip("jax")
    settings = dict(steps=6, log_every=3, checkpoint_every=3)
    plain = _train_run(shards, tmp_path / "plain", "jax", **settings)
    chunked = _train_run(shards, tmp_path / "chunked", "jax", chunk_size=4, **settings)
    losses = [[r["loss"] for r in out["log"]] for out in (plain, chunked)]
    assert len(losses[0]) == 2 and np.isfinite(losses).all(), losses
    np.testing.assert_allclose(losses[1], losses[0], rtol=1e-4)
    # AdamW divides by sqrt(v): a weight whose gradient is at float32 noise level moves by up to
    # the learning rate (1e-3) either way, so the embeddings agree to ~1e-3, not to rounding (the
    # gradients themselves are compared to 1e-5 in tests/test_trainer_model.py -k gradcache)
    np.testing.assert_allclose(chunked["seen"]["query_emb"], plain["seen"]["query_emb"],
                               atol=2e-3)
    with pytest.raises(TrainError, match="not a multiple of the chunk size 5"):
        _config(shards, tmp_path / "x", chunk_size=5).resolved()
    with pytest.raises(TrainError, match="two-tower"):
        _config(shards, tmp_path / "x", chunk_size=4, objective="mlm").resolved()


def _tensorboard_scalars(log_dir: Path) -> dict[str, list[tuple[int, float]]]:
    """{tag: [(step, value), ...]} of the TensorBoard event files in log_dir."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    assert list(log_dir.glob("events.out.tfevents.*")), f"no event file in {log_dir}"
    events = EventAccumulator(str(log_dir), size_guidance={"scalars": 0})
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)]
            for tag in events.Tags()["scalars"]}


@pytest.mark.parametrize("backend", ["tensorflow", "jax"])
def test_bf16_computes_in_bfloat16_and_keeps_float32_weights(shards, tmp_path, backend):
    """`--bf16` (mixed_precision) on CPU, tiny towers, 4 steps: the layers compute in bfloat16
    while the variables, the tower outputs and the loss are float32 (losses.in_batch_scores);
    the loss is finite; the saved weights and checkpoints are float32 and reload under the
    default float32 policy (here, on TensorFlow) into the run's model: the same held-out loss and
    the same query embeddings up to bfloat16 rounding (not exactly: the run computed in
    bfloat16); the reloaded model exports, and the SavedModel gives Keras' embeddings."""
    if backend == "jax":
        pytest.importorskip("jax")
    run = tmp_path / backend
    out = _train_run(shards, run, backend, mixed_precision=True, steps=4, tasks=["ict"],
                     checkpoint_every=2, log_every=2, eval_batches=1, eval_batch_size=16)
    losses = [r["loss"] for r in out["log"]]
    assert len(losses) == 2 and all(np.isfinite(losses)), losses
    seen = out["seen"]
    trained, ids = np.array(seen.pop("query_emb")), np.array(seen.pop("query_ids"), "int32")
    assert seen == {"policy": "mixed_bfloat16", "compute": "bfloat16", "activation": "bfloat16",
                    "tower": "float32", "loss": "float32", "weights": ["float32"]}, seen
    assert out["policy_after"] == "float32"  # the run restores the global policy
    saved = [run / "model.weights.h5", *run.glob("checkpoints/step-*/model.weights.h5")]
    assert len(saved) == 3
    for path in saved:  # weights, and in checkpoints the AdamW moments
        assert {a.dtype.name for a in _h5_arrays(path).values() if a.dtype.kind == "f"} \
            == {"float32"}, path

    model = load_model(run)
    assert {v.dtype for v in model.weights} == {"float32"}
    config = TrainConfig.from_dict(json.loads((run / "train_config.json").read_text()))
    again = in_batch_accuracy(model, eval_batches(config, model.config, ["ict"]), 1)
    assert again["examples"] == out["eval"]["examples"] == 16
    assert again["loss"] == pytest.approx(out["eval"]["loss"], abs=0.02)
    reloaded = np.asarray(model.encode_queries(ids))
    err = np.abs(reloaded - trained).max()
    assert 0 < err < 0.02 * np.abs(trained).max(), err  # measured ~0.006 of the largest
    if backend != "tensorflow":  # the reloaded model is the same float32 TwoTower: export once
        return
    export = pytest.importorskip("wikipairs.trainer.export")
    pytest.importorskip("tensorflow_text")
    from wikipairs.pairs.vocab import Tokenizer

    export.export_saved_model(model, str(run / "spm.model"), str(tmp_path / "export"))
    questions = ["Who wrote the gensim library?", "topic models"]
    tokenizer, length = Tokenizer(str(run / "spm.model")), model.config.max_query_len
    ids = np.array([export.query_ids(tokenizer, q, length, pad=True) for q in questions], "int32")
    np.testing.assert_allclose(export.load_encoders(str(tmp_path / "export")).query(questions),
                               np.asarray(model.encode_queries(ids)), atol=1e-5)


# ---- command line ------------------------------------------------------------------------------

def test_cli_help():
    from click.testing import CliRunner

    from wikipairs.trainer.cli import train

    result = CliRunner().invoke(train, ["pretrain", "--help"])
    assert result.exit_code == 0, result.output
    for option in ("--data", "--output", "--config", "--model", "--objective", "--tasks",
                   "--task-weights", "--batch-size", "--steps", "--learning-rate", "--tpu",
                   "--bf16", "--checkpoint-every", "--vocab", "--quiet", "--chunk-size",
                   "--no-clean-negatives"):
        assert option in result.output
    result = CliRunner().invoke(train, ["finetune", "--help"])
    assert result.exit_code == 0 and "--init" in result.output


def test_cli_pretrain_then_finetune_writes_the_outputs(shards, tmp_path):
    from click.testing import CliRunner

    from wikipairs.trainer.cli import train

    settings = tmp_path / "settings.json"
    settings.write_text(json.dumps({"steps": 50, "batch_size": 8, "model": "bow",
                                    "model_config": {"max_query_len": 24, "max_doc_len": 48}}))
    pre = tmp_path / "pre"
    args = ["pretrain", "--config", str(settings), "--data", str(shards), "-o", str(pre),
            "--steps", "4", "--log-every", "2", "--checkpoint-every", "2", "--eval-batches", "1",
            "--run-eagerly", "--lr", "2e-4", "--tasks", "ict,wlp", "--task-weights", "1,1"]
    result = CliRunner().invoke(train, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "step       4/4" in result.output
    for name in ("model.weights.h5", "model_config.json", "train_config.json", "spm.model",
                 "eval.json", "train_log.jsonl"):
        assert (pre / name).is_file(), name
    saved = json.loads((pre / "train_config.json").read_text())
    assert saved["steps"] == 4 and saved["batch_size"] == 8 and saved["learning_rate"] == 2e-4
    scalars = _tensorboard_scalars(pre / "logs")
    logged = [json.loads(line) for line in (pre / "train_log.jsonl").read_text().splitlines()]
    assert scalars["train/loss"] == [(r["step"], pytest.approx(r["loss"], rel=1e-5))
                                     for r in logged] and len(logged) == 2
    evaluation = json.loads((pre / "eval.json").read_text())
    assert scalars["eval/accuracy"] == [(4, pytest.approx(evaluation["accuracy"]))]
    assert saved["tasks"] == ["ict", "wlp"]
    model_config = json.loads((pre / "model_config.json").read_text())
    assert model_config["encoder"] == "bow" and model_config["vocab_size"] == 4000
    assert model_config["max_doc_len"] == 48
    assert (pre / "spm.model").read_bytes() == (shards.parent / "vocab" / "spm.model").read_bytes()

    fine = tmp_path / "fine"
    result = CliRunner().invoke(train, ["finetune", "--init", str(pre), "--data", str(shards),
                                        "-o", str(fine), "--steps", "2", "--batch-size", "8",
                                        "--run-eagerly", "--quiet", "--eval-batches", "0"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert result.output == ""
    saved = json.loads((fine / "train_config.json").read_text())
    assert saved["mode"] == "finetune" and saved["learning_rate"] == 5e-5
    assert json.loads((fine / "model_config.json").read_text()) == model_config


def test_cli_bad_input_is_a_wikipairs_error(shards, tmp_path):
    from click.testing import CliRunner

    from wikipairs.trainer.cli import train

    cases = [
        (["pretrain", "--data", str(tmp_path / "nowhere"), "-o", str(tmp_path / "o")],
         "no such data folder"),
        (["pretrain", "--data", str(tmp_path), "-o", str(tmp_path / "o")], "no pair shards"),
        (["pretrain", "--data", str(shards), "-o", str(tmp_path / "o"), "--tasks", "qa"],
         "no qa shards"),
        (["pretrain", "--data", str(shards), "-o", str(tmp_path / "o"), "--model", "huge"],
         "unknown model"),
        (["pretrain", "--data", str(shards), "-o", str(tmp_path / "o"), "--model-opt", "x"],
         "KEY=VALUE"),
        (["finetune", "--data", str(shards), "-o", str(tmp_path / "o")], "--init"),
        (["finetune", "--data", str(shards), "-o", str(tmp_path / "o"), "--init",
          str(tmp_path)], "model_config.json"),
        (["pretrain", "--config", str(tmp_path / "none.json")], "cannot read"),
        (["pretrain", "--data", str(shards), "-o", str(tmp_path / "o"), "--batch-size", "8",
          "--chunk-size", "3", "--no-clean-negatives"], "not a multiple of the chunk size 3"),
        (["pretrain", "--data", str(shards), "-o", str(tmp_path / "o"), "--chunk-size", "4",
          "--objective", "mlm"], "two-tower"),
    ]
    for args, fragment in cases:
        result = CliRunner().invoke(train, args)
        assert isinstance(result.exception, WikipairsError), (args, result.exception)
        message = str(result.exception)
        assert fragment in message and "\n" not in message, (args, message)


MAIN = ("from wikipairs.cli import main; from wikipairs.trainer.cli import train; "
        "main.add_command(train); main(prog_name='wikipairs')")


def test_registered_cli_prints_one_line_errors(tmp_path):
    env = dict(os.environ, NLTK_DATA=str(NLTK_DATA))
    result = subprocess.run([sys.executable, "-c", MAIN, "train", "pretrain", "--data",
                             str(tmp_path / "nowhere"), "-o", str(tmp_path / "o")],
                            capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert_one_line_error(result, "no such data folder")


# a run of a few seconds once TensorFlow is loaded: small BoW towers, 4 steps
QUICK_RUN = ("--model", "bow", "--model-opt", "max_query_len=32", "--model-opt", "max_doc_len=64",
             "--model-opt", "hidden_size=32", "--model-opt", "embedding_dim=32",
             "--batch-size", "8", "--steps", "4", "--log-every", "2", "--checkpoint-every", "4",
             "--eval-batches", "1")


def test_eta_format():
    from wikipairs.trainer.events import format_duration

    assert [format_duration(s) for s in (0, 0.2, 59.1, 3600, 2 * 86400 + 3723, -1, float("inf"))
            ] == ["0:00:00", "0:00:01", "0:01:00", "1:00:00", "2d 1:02:03", "0:00:00", "0:00:00"]


def test_a_typo_is_one_line_before_tensorflow_loads(shards, tmp_path):
    """Bad settings are found before TensorFlow is imported: one stderr line, exit 2, nothing
    written; a --model-opt typo lists the valid keys, the closest first."""
    for args, fragment in [(("--model", "nope"), "unknown model 'nope'"),
                           (("--model", "tiny", "--model-opt", "hiden_size=8"),
                            "valid: hidden_size, ")]:
        result = run_cli("train", "pretrain", "--data", shards, "-o", tmp_path / "o", *args)
        assert_one_line_error(result, fragment)
        assert len(result.stderr.splitlines()) == 1 and result.stdout == "", describe(result)
        assert not (tmp_path / "o").exists()


def test_a_run_prints_no_native_log_lines(shards, tmp_path):
    """A real run (TensorFlow loaded, a TFRecord dataset, a failed cuInit here): stdout and
    stderr hold none of TensorFlow's, absl's or CUDA's own lines; they are in OUTPUT/native.log.
    With -v they reach the terminal, and no native.log is written."""
    run = tmp_path / "run"
    result = run_cli("train", "pretrain", "--data", shards, "-o", run, *QUICK_RUN)
    assert result.returncode == 0, describe(result)
    assert native_log_lines(result) == [], describe(result)
    assert "done: 4 steps" in result.stdout and (run / "native.log").is_file()
    progress = [line for line in result.stdout.splitlines() if line.startswith("step ")]
    assert [line.split()[1] for line in progress] == ["2/4", "4/4"], describe(result)
    assert all(" steps/s " in line and " eta " in line for line in progress), progress
    assert progress[-1].endswith("eta 0:00:00"), progress
    print("native.log:", (run / "native.log").read_text()[-2000:])

    loud = tmp_path / "loud"
    result = run_cli("train", "pretrain", "--data", shards, "-o", loud, *QUICK_RUN, "-v",
                     "--steps", "2")
    assert result.returncode == 0, describe(result)
    assert not (loud / "native.log").exists()
    assert "done: 2 steps" in result.stdout


def test_tiny_transformer_learns_its_pairs_and_reports_held_out_pages(shards, tmp_path):
    """`tiny` towers: 600 steps of batch 32 on ICT + BFS (no dropout, lr 1e-3: from scratch the
    [CLS] state needs ~100 steps to depend on the input). Measured: loss 3.47 -> 2.47."""
    config = _config(shards, tmp_path / "tiny", steps=600, batch_size=32, learning_rate=1e-3,
                     tasks=["ict", "bfs"], checkpoint_every=10_000, log_every=100,
                     eval_batches=10, jit_compile="auto",
                     model_overrides={**SHORT, "dropout": 0.0, "attention_dropout": 0.0})
    summary = pretrain(config)
    losses = [r["loss"] for r in summary["log"]]
    assert losses[-1] < losses[0] - 0.8, losses
    model = load_model(config.output)
    keras.utils.set_random_seed(1)
    untrained = type(model)(model.config)
    untrained.build()
    before = in_batch_accuracy(untrained, eval_batches(config.resolved(), model.config,
                                                       ["ict", "bfs"]), 10)
    trained = summary["eval"]
    print(f"tiny: held-out top-1 of 32 untrained {before['accuracy']:.3f}, trained "
          f"{trained['accuracy']:.3f}; losses {losses}")
    assert before["accuracy"] < 0.08
    # On held-out query pages (never seen: the build's split column) 600 steps on ~90 articles
    # do not carry over: measured 0.013 against 0.031 untrained (0.118 when held-out pairs were
    # drawn by pair_id from pages also trained on). The check is the loss above and a finite,
    # reported held-out figure; benchmarks/reqa_small.py is where retrieval is measured.
    assert 0.0 <= trained["accuracy"] <= 1.0 and trained["examples"] == before["examples"] > 0


# `python -c JAX_DATA_PARALLEL SHARDS OUTPUT` with KERAS_BACKEND=jax on 2 host CPU devices
# (XLA_FLAGS): (1) one SGD(0.01) `fit` step of a tiny TwoTower (dropout 0) on a batch of 8 under
# keras.distribution.DataParallel and on one device, from the same weights; (2) the trainer's
# own `pretrain` on the shards, which chooses DataParallel itself. Last stdout line: JSON.
JAX_DATA_PARALLEL = r'''
import json, sys
import jax, keras
import numpy as np
from wikipairs.trainer.configs import ModelConfig
from wikipairs.trainer.losses import in_batch_softmax_loss
from wikipairs.trainer.model import TwoTower
from wikipairs.trainer.train import TrainConfig, pretrain
devices = jax.devices()
config = ModelConfig.from_name("tiny", vocab_size=600, max_query_len=16, max_doc_len=24,
                               dropout=0.0, attention_dropout=0.0, initializer_range=0.05,
                               temperature=0.1)  # scores far from uniform: a real gradient
rng = np.random.default_rng(0)
def ids(length):
    x = rng.integers(5, 600, (8, length)).astype("int32")
    x[:, 0] = 1
    return x
batch = {"query_ids": ids(16), "doc_ids": ids(24)}
start = TwoTower(config)
start.build()
weights = start.get_weights()

def one_step(distribution):
    keras.distribution.set_distribution(distribution)
    model = TwoTower(config)
    model.build()
    model.set_weights(weights)
    model.compile(optimizer=keras.optimizers.SGD(0.01))
    history = model.fit(batch, batch_size=8, epochs=1, shuffle=False, verbose=0)
    devices_of_weights = len(model.weights[0].value.sharding.device_set)
    keras.distribution.set_distribution(None)
    return history.history["loss"][0], model.get_weights(), devices_of_weights

parallel = keras.distribution.DataParallel(devices=devices)
data_axes = list(parallel.get_data_layout((8, 16)).axes)
one_loss, one_weights, _ = one_step(None)
dp_loss, dp_weights, dp_devices = one_step(parallel)
out = start(batch)
halves = [float(in_batch_softmax_loss(out["query_emb"][i:i + 4], out["doc_emb"][i:i + 4]))
          for i in (0, 4)]
moved = max(float(np.abs(a - w).max()) for a, w in zip(one_weights, weights))
worst = max(float(np.abs(a - b).max()) for a, b in zip(one_weights, dp_weights))
summary = pretrain(TrainConfig(data=[sys.argv[1]], output=sys.argv[2], model="tiny",
                               tasks=["wlp"], batch_size=16, steps=4, learning_rate=1e-3,
                               checkpoint_every=2, log_every=2, eval_batches=1, quiet=True,
                               model_overrides={"max_query_len": 16, "max_doc_len": 32}))
print(json.dumps({"devices": len(devices), "data_axes": data_axes, "one_loss": one_loss,
                  "dp_loss": dp_loss, "local_negatives_loss": sum(halves) / 2,
                  "weights_moved": moved, "worst_weight_difference": worst,
                  "dp_weight_devices": dp_devices, "replicas": summary["replicas"],
                  "log": summary["log"], "tensorflow": "tensorflow" in sys.modules}))
'''


def test_jax_data_parallel_over_two_devices_equals_one_device(shards, tmp_path):
    """The issue's JAX path: keras.distribution.DataParallel shards the batch over devices and
    the in-batch softmax still sees the documents of ALL devices as negatives. On 2 host CPU
    devices, one SGD step on a batch of 8 gives one device's loss and weights (the loss with
    only the 4 local documents as negatives is far from it, so the oracle can tell), and
    `pretrain` picks DataParallel by itself (2 replicas) and trains."""
    pytest.importorskip("jax")
    env = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=2")
    result = subprocess.run([sys.executable, "-c", JAX_DATA_PARALLEL, str(shards),
                             str(tmp_path / "dp")], env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r["devices"] == 2 and r["data_axes"][0] is not None, r  # the batch axis is sharded
    assert r["dp_weight_devices"] == 2, r  # the step ran on both devices
    assert r["dp_loss"] == pytest.approx(r["one_loss"], rel=1e-5), r
    assert abs(r["local_negatives_loss"] - r["one_loss"]) > 0.3, r  # ~log 4 against ~log 8
    assert r["worst_weight_difference"] < 1e-4 * r["weights_moved"], r
    assert r["replicas"] == 2 and r["tensorflow"] is False, r
    losses = [record["loss"] for record in r["log"]]
    assert len(losses) == 2 and all(np.isfinite(losses)), r
    assert (tmp_path / "dp" / "model.weights.h5").exists()
