"""wikipairs.trainer.export: the ReQA-style SavedModel (in-graph SentencePiece, query/response
signatures) of a TwoTower, reloaded in a separate interpreter that imports only tensorflow and
tensorflow_text (`Reloader`: one per module, started with the first test so that its TensorFlow
import overlaps the vocabulary training; it loads each export on request).

Module artifacts, made once in a background thread started by the first test: a 4,000-piece
vocabulary of enwiki-sample-gensim (`wikipairs vocab`, ~13 s), then an ICT+BFS build with it
(`wikipairs build`, ~17 s), which runs while the untrained-export tests run.

- ids: the graph's tokenization (`make_id_functions`) equals `Tokenizer.encode` /
  `encode_pair` (and so the build's stored `query_ids` / `doc_ids`) on a few hundred real
  sentences and passages plus edge cases;
- an untrained tiny Transformer TwoTower, exported and reloaded: signature names, input names
  and dtypes, output shapes, embeddings equal to Keras' (1e-5) for batches of 17 and 1 with
  unicode and empty strings;
- every signature (serving_default is the query encoder) on a batch of 2 non-ASCII texts;
- a small BoW-MLP TwoTower trained for 150 steps (model.fit) on the build's pairs, saved as a run
  folder, exported by `wikipairs train export` (its last line: how to load it) and reloaded:
  the dot product of query_encoder and response_encoder (sentence = doc title, context = doc
  text, the pair layout) ranks the true document of 32 held-out ICT pairs (32 pages; no
  training pair has one of their documents) first far more often than chance (1/32):
  top-1 0.375, MRR 0.51 here. (The tiny Transformer needs several hundred steps on 2 CPUs
  before its ranking clearly beats chance; the BoW-MLP tower learns lexical overlap in 150.)
- a fresh interpreter without tensorflow_text fails to load an export with the error the README
  explains ("Op type not registered 'SentencepieceTokenizeOp'"), then runs the export command's
  printed load line and gets the same embeddings from serving_default.
"""
from __future__ import annotations

import glob
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

tf = pytest.importorskip("tensorflow")
pytest.importorskip("tensorflow_text")
keras = pytest.importorskip("keras")
if keras.backend.backend() != "tensorflow":
    pytest.skip("export needs the Keras TensorFlow backend", allow_module_level=True)

from conftest import REPO, describe, run_cli, wiki_file  # noqa: E402
from wikipairs.trainer.checkpoints import MODEL_CONFIG, WEIGHTS  # noqa: E402
from wikipairs.trainer.configs import ModelConfig  # noqa: E402
from wikipairs.trainer.export import (DOCUMENT_ENCODER, QUERY_ENCODER, QUERY_IDS,  # noqa: E402
                                      QUESTION_ENCODER, RESPONSE_ENCODER, RESPONSE_IDS,
                                      SERVING_DEFAULT, export_saved_model, load_encoders,
                                      load_hint, make_id_functions, query_ids, response_ids)
from wikipairs.trainer.model import TwoTower  # noqa: E402
from wikipairs.pairs.vocab import Tokenizer  # noqa: E402

GENSIM = "enwiki-sample-gensim.xml.bz2"
VOCAB_SIZE = 4000
LQ, LD = 64, 288

# A fresh interpreter with tensorflow and tensorflow_text only, started once per module
# (`python -c RELOAD`, see `Reloader`): each stdin line {"export_dir", "cases", "out"} loads an
# export, runs every case's signature, writes the output arrays to OUT (npz) and OUT.json
# (signature specs, output keys, which wikipairs-side modules are loaded) and answers one line.
RELOAD = r"""
import json, sys, traceback
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  registers the SentencePiece ops
print("ready", flush=True)
for line in sys.stdin:
    request = json.loads(line)
    try:
        loaded = tf.saved_model.load(request["export_dir"])
        info = {"signatures": {}, "outputs": []}
        for name, fn in loaded.signatures.items():
            _, inputs = fn.structured_input_signature
            info["signatures"][name] = {
                "inputs": {k: [v.dtype.name, v.shape.as_list()] for k, v in inputs.items()},
                "outputs": {k: [v.dtype.name, v.shape.as_list()]
                            for k, v in fn.structured_outputs.items()}}
        arrays = {}
        for i, case in enumerate(request["cases"]):
            out = loaded.signatures[case["signature"]](
                **{k: tf.constant(v, tf.string) for k, v in case["inputs"].items()})
            (key, value), = out.items()
            arrays[f"case{i}"] = value.numpy()
            info["outputs"].append([key, value.dtype.name])
        info["modules"] = sorted({m.split(".")[0] for m in sys.modules
                                  if m.split(".")[0] in ("wikipairs", "trainer", "sentencepiece")})
        np.savez(request["out"], **arrays)
        with open(request["out"] + ".json", "w") as f:
            json.dump(info, f)
        print("ok", flush=True)
    except Exception:
        print("error " + json.dumps(traceback.format_exc()), flush=True)
"""


class Reloader:
    """The RELOAD interpreter; `run(export_dir, cases, tmp)` -> ([array per case], info)."""

    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.stderr = open(workdir / "reload.stderr", "w+")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        self.proc = subprocess.Popen([sys.executable, "-c", RELOAD], cwd=workdir, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True, encoding="utf-8")
        self.lock = threading.Lock()
        self.ready = False

    def _answer(self) -> str:
        line = self.proc.stdout.readline()
        if not line:
            self.stderr.seek(0)
            pytest.fail(f"the reload interpreter died:\n{self.stderr.read()[-4000:]}",
                        pytrace=False)
        return line.strip()

    def run(self, export_dir: Path, cases: list[dict], tmp: Path):
        out = tmp / "out.npz"
        with self.lock:
            if not self.ready:
                assert self._answer() == "ready"
                self.ready = True
            self.proc.stdin.write(json.dumps({"export_dir": str(export_dir), "cases": cases,
                                              "out": str(out)}) + "\n")
            self.proc.stdin.flush()
            answer = self._answer()
        assert answer == "ok", "reload failed:\n" + json.loads(answer.split(" ", 1)[1])
        with np.load(out) as data:
            arrays = [data[f"case{i}"] for i in range(len(cases))]
        return arrays, json.loads(Path(str(out) + ".json").read_text())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(60)
        self.stderr.close()


# 17 inputs: unicode, empty and whitespace-only strings, literal special-token text, a text far
# longer than both max lengths, and ordinary sentences.
TEXTS = [
    "Who founded the city of Athens?",
    "",
    "   ",
    "Ελληνικά: η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "東京は日本の首都です。",
    "naïve café – “quotes” and emoji 😀🚀",
    "[CLS] [SEP] [MASK] [PAD] [UNK] are plain text here",
    " ".join(["anarchism and autism in the twentieth century"] * 80),
    "Albedo is the fraction of sunlight that is reflected.",
    "e\u0301 combining accent, zero\u200bwidth space, tab\tnewline\nend",
    "x",
    "What is the capital of France?",
    "12,345.67 km² at −40 °C",
    "עברית وعربي",
    "A",
    "\u00a0non-breaking\u00a0spaces\u00a0",
    "The quick brown fox jumps over the lazy dog.",
]
CONTEXTS = [
    "Athens was founded long ago. Many myths tell the story.",
    "",
    "context for a blank sentence",
    "",
    "東京都は本州にあります。",
    " ".join(["A very long passage about the history of the world."] * 60),
    "[SEP]",
    "short",
    "Albedo (from Latin albedo, whiteness) is the measure of diffuse reflection.",
    "   ",
    " ".join(["y"] * 400),
    "Paris is the capital and most populous city of France.",
    "—",
    "ελληνικό κείμενο",
    "B",
    "",
    "An English pangram.",
]
assert len(TEXTS) == len(CONTEXTS) == 17
# A batch of 2 non-ASCII texts for every signature: the first input (input / title) and the
# second (context / text).
TWO = {"input": [TEXTS[3], TEXTS[4]], "title": [TEXTS[3], TEXTS[4]],
       "context": [CONTEXTS[13], CONTEXTS[4]], "text": [CONTEXTS[13], CONTEXTS[4]]}
SIGNATURE_INPUTS = {QUERY_ENCODER: ["input"], QUESTION_ENCODER: ["input"],
                    SERVING_DEFAULT: ["input"], RESPONSE_ENCODER: ["input", "context"],
                    DOCUMENT_ENCODER: ["title", "text"], QUERY_IDS: ["input"],
                    RESPONSE_IDS: ["input", "context"]}


# ---- artifacts: vocabulary, then a build, in a background thread --------------------------------

class Artifacts:
    """`wikipairs vocab` then `wikipairs build` in one background thread."""

    def __init__(self, root: Path):
        self.root = root
        self.spm = root / "vocab" / "spm.model"
        self.build_dir = root / "build"
        self.vocab_done, self.build_done = threading.Event(), threading.Event()
        self.errors: dict[str, str] = {}
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        dump = wiki_file(GENSIM)
        try:
            result = run_cli("vocab", "-i", dump, "-o", self.spm, "--vocab-size", VOCAB_SIZE,
                             "--max-sentences", 20000)
            if result.returncode:
                self.errors["vocab"] = "wikipairs vocab failed" + describe(result)
        finally:
            self.vocab_done.set()
        try:
            if "vocab" not in self.errors:
                result = run_cli("build", "-i", dump, "-o", self.build_dir, "--vocab", self.spm,
                                 "--workers", 1, "--task", "ict,bfs")
                if result.returncode:
                    self.errors["build"] = "wikipairs build failed" + describe(result)
        finally:
            self.build_done.set()

    def vocab(self) -> Path:
        self.vocab_done.wait(600)
        if "vocab" in self.errors or not self.spm.is_file():
            pytest.fail(self.errors.get("vocab", "no vocabulary"), pytrace=False)
        return self.spm

    def build(self) -> Path:
        self.vocab()
        self.build_done.wait(600)
        if "build" in self.errors:
            pytest.fail(self.errors["build"], pytrace=False)
        return self.build_dir


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory):
    jobs = Artifacts(tmp_path_factory.mktemp("export_artifacts"))
    yield jobs
    jobs.thread.join(600)


@pytest.fixture(scope="module")
def reloader(artifacts, tmp_path_factory):
    """Started with the artifacts, so that its TensorFlow import overlaps the vocabulary."""
    proc = Reloader(tmp_path_factory.mktemp("reload"))
    yield proc
    proc.close()


@pytest.fixture(scope="module")
def spm_model(artifacts, reloader) -> Path:  # (reloader: start it before waiting)
    return artifacts.vocab()


@pytest.fixture(scope="module")
def tokenizer(spm_model) -> Tokenizer:
    return Tokenizer(str(spm_model))


@pytest.fixture(scope="module")
def pairs(artifacts) -> list[dict]:
    files = sorted(glob.glob(str(artifacts.build() / "parquet" / "*" / "part-*.parquet")))
    assert files, f"no parquet shards in {artifacts.build_dir}"
    columns = ["task", "query", "doc_title", "doc_text", "doc_page_id", "doc_section",
               "doc_passage", "query_ids", "doc_ids"]
    rows = []
    for f in files:
        rows.extend(pq.read_table(f, columns=columns).to_pylist())
    return rows


# ---- helpers -------------------------------------------------------------------------------------

def padded_query_ids(tok, texts, max_len=LQ) -> np.ndarray:
    return np.array([query_ids(tok, t, max_len, pad=True) for t in texts], np.int32)


def padded_response_ids(tok, sentences, contexts, max_len=LD) -> np.ndarray:
    return np.array([response_ids(tok, s, c, max_len, pad=True)
                     for s, c in zip(sentences, contexts)], np.int32)


def fit_length(ids, max_len: int) -> list[int]:
    """Stored ids padded (or cut, keeping the final [SEP]) to max_len."""
    ids = list(ids)
    if len(ids) > max_len:
        ids = ids[:max_len - 1] + [ids[-1]]
    return ids + [0] * (max_len - len(ids))


# ---- the layout helpers and the graph's ids ------------------------------------------------------

def test_response_ids_is_the_pair_layout(tokenizer):
    sentence, context = "It was founded in 1200.", "History. " * 200
    ids = response_ids(tokenizer, sentence, context, 40)
    assert ids == tokenizer.encode_pair(sentence, context, 40)
    assert ids[0] == 1 and ids[-1] == 2 and len(ids) == 40
    assert ids[1:ids.index(2)] == tokenizer.tokenize(sentence)  # the sentence survives the cut
    a = tokenizer.tokenize("a")
    assert response_ids(tokenizer, "a", "", 10, pad=True) == [1, *a, 2, 2, *[0] * (7 - len(a))]
    assert query_ids(tokenizer, "", 8, pad=True) == [1, 2, 0, 0, 0, 0, 0, 0]


def assert_ids_equal_up_to_ties(got, want, spm_model: Path) -> None:
    """Row by row the same ids, or different only where SentencePiece met an exact tie: the same
    text in pieces of the same total score ("111" as "1" + "11" or "11" + "1"), which TensorFlow
    Text's SentencePiece and the Python library break differently (5 of the 6,897 documents of
    the gensim sample's ICT and BFS pairs; a bag of pieces is the same either way)."""
    import sentencepiece
    sp = sentencepiece.SentencePieceProcessor(model_file=str(spm_model))
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    for a, b in zip(got, want):
        differ = np.flatnonzero(a != b)
        if not len(differ):
            continue
        span = slice(differ[0], differ[-1] + 1)
        assert "".join(map(sp.id_to_piece, a[span].tolist())) == \
            "".join(map(sp.id_to_piece, b[span].tolist())), (a[span], b[span])
        assert abs(sum(map(sp.get_score, a[span].tolist()))
                   - sum(map(sp.get_score, b[span].tolist()))) < 1e-4, (a[span], b[span])


def test_graph_ids_equal_python_tokenizer_on_real_text(tokenizer, spm_model, pairs):
    ids = make_id_functions(spm_model.read_bytes(), LQ, LD)
    rng = np.random.default_rng(0)
    sample = [pairs[i] for i in rng.choice(len(pairs), 300, replace=False)]
    queries = [r["query"] for r in sample] + TEXTS
    got = ids.query_ids(tf.constant(queries)).numpy()
    assert got.dtype == np.int32 and got.shape == (len(queries), LQ)
    assert_ids_equal_up_to_ties(got, padded_query_ids(tokenizer, queries), spm_model)
    # and so the build's own ids
    assert_ids_equal_up_to_ties(got[:len(sample)], [fit_length(r["query_ids"], LQ) for r in sample],
                                spm_model)

    titles = [r["doc_title"] for r in sample] + TEXTS + [""] * 17
    texts = [r["doc_text"] for r in sample] + CONTEXTS + CONTEXTS
    got = ids.response_ids(tf.constant(titles), tf.constant(texts)).numpy()
    assert got.dtype == np.int32 and got.shape == (len(titles), LD)
    assert_ids_equal_up_to_ties(got, padded_response_ids(tokenizer, titles, texts), spm_model)
    assert_ids_equal_up_to_ties(got[:len(sample)], [fit_length(r["doc_ids"], LD) for r in sample],
                                spm_model)
    # short maximum lengths: the title alone is cut, the final [SEP] stays
    short = make_id_functions(spm_model.read_bytes(), 5, 6)
    long_title = TEXTS[7]
    np.testing.assert_array_equal(short.response_ids(tf.constant([long_title, "a"]),
                                                     tf.constant(["b", CONTEXTS[5]])).numpy(),
                                  padded_response_ids(tokenizer, [long_title, "a"],
                                                      ["b", CONTEXTS[5]], 6))
    np.testing.assert_array_equal(short.query_ids(tf.constant(queries[:50])).numpy(),
                                  padded_query_ids(tokenizer, queries[:50], 5))


# ---- an untrained tiny Transformer, exported and reloaded ---------------------------------------

@pytest.fixture(scope="module")
def untrained(reloader, spm_model, tmp_path_factory):
    keras.utils.set_random_seed(1)
    model = TwoTower(ModelConfig.from_name("tiny", vocab_size=VOCAB_SIZE))
    model.build()
    export_dir = tmp_path_factory.mktemp("untrained") / "export"
    metadata = export_saved_model(model, str(spm_model), str(export_dir))
    cases = [
        {"signature": QUERY_ENCODER, "inputs": {"input": TEXTS}},
        {"signature": QUERY_ENCODER, "inputs": {"input": [TEXTS[3]]}},
        {"signature": RESPONSE_ENCODER, "inputs": {"input": TEXTS, "context": CONTEXTS}},
        {"signature": RESPONSE_ENCODER, "inputs": {"input": [TEXTS[5]], "context": [CONTEXTS[5]]}},
        {"signature": DOCUMENT_ENCODER, "inputs": {"title": TEXTS, "text": CONTEXTS}},
        {"signature": QUERY_IDS, "inputs": {"input": TEXTS}},
        {"signature": RESPONSE_IDS, "inputs": {"input": TEXTS, "context": CONTEXTS}},
        {"signature": QUERY_ENCODER, "inputs": {"input": ["", ""]}},
        {"signature": QUESTION_ENCODER, "inputs": {"input": TEXTS}},
    ] + [{"signature": name, "inputs": {k: TWO[k] for k in inputs}}
         for name, inputs in SIGNATURE_INPUTS.items()]
    arrays, info = reloader.run(export_dir, cases, tmp_path_factory.mktemp("reload"))
    return model, export_dir, metadata, arrays, info


def test_export_signatures(untrained):
    model, export_dir, metadata, _, info = untrained
    d = model.config.embedding_dim
    sigs = info["signatures"]
    assert set(sigs) == set(SIGNATURE_INPUTS) == set(metadata["signatures"])
    assert sigs[QUESTION_ENCODER] == sigs[QUERY_ENCODER] == sigs[SERVING_DEFAULT]
    for name, inputs in SIGNATURE_INPUTS.items():
        assert sorted(sigs[name]["inputs"]) == sorted(inputs), name
    assert sigs[QUERY_ENCODER] == {"inputs": {"input": ["string", [None]]},
                                   "outputs": {"outputs": ["float32", [None, d]]}}
    assert sigs[RESPONSE_ENCODER] == {
        "inputs": {"input": ["string", [None]], "context": ["string", [None]]},
        "outputs": {"outputs": ["float32", [None, d]]}}
    assert sigs[DOCUMENT_ENCODER]["inputs"] == {"title": ["string", [None]],
                                                "text": ["string", [None]]}
    assert sigs[QUERY_IDS]["outputs"] == {"ids": ["int32", [None, LQ]]}
    assert sigs[RESPONSE_IDS]["outputs"] == {"ids": ["int32", [None, LD]]}
    assert info["modules"] == [], "the reload must need no wikipairs code or sentencepiece"
    # self-contained: the vocabulary is in the graph; a copy of the model file is an asset
    assert (export_dir / "assets" / "spm.model").is_file()
    saved = json.loads((export_dir / "assets.extra" / "wikipairs_export.json").read_text())
    assert saved == json.loads(json.dumps(metadata))
    assert saved["query_max_len"] == LQ and saved["doc_max_len"] == LD
    assert saved["model_config"] == model.config.to_dict()


def test_reloaded_embeddings_equal_keras(untrained, tokenizer):
    model, _, _, arrays, info = untrained
    d = model.config.embedding_dim
    q_ids = padded_query_ids(tokenizer, TEXTS)
    r_ids = padded_response_ids(tokenizer, TEXTS, CONTEXTS)
    q_keras = np.asarray(model.encode_queries(q_ids))
    r_keras = np.asarray(model.encode_docs(r_ids))
    q17, q1, r17, r1, doc17, qids, rids, q_empty, question17 = arrays[:9]
    assert info["outputs"][:9] == [["outputs", "float32"]] * 5 + [["ids", "int32"]] * 2 + [
        ["outputs", "float32"]] * 2
    np.testing.assert_array_equal(qids, q_ids)
    np.testing.assert_array_equal(rids, r_ids)
    assert q17.shape == (17, d) and r17.shape == (17, d) and doc17.shape == (17, d)
    assert q1.shape == (1, d) and r1.shape == (1, d) and q_empty.shape == (2, d)
    np.testing.assert_allclose(q17, q_keras, rtol=0, atol=1e-5)
    np.testing.assert_allclose(r17, r_keras, rtol=0, atol=1e-5)
    np.testing.assert_allclose(doc17, r17, rtol=0, atol=1e-6)  # document == response layout
    np.testing.assert_allclose(question17, q17, rtol=0, atol=1e-6)  # the USE-QA name
    np.testing.assert_allclose(q1[0], q_keras[3], rtol=0, atol=1e-5)  # batch of 1
    np.testing.assert_allclose(r1[0], r_keras[5], rtol=0, atol=1e-5)
    np.testing.assert_allclose(q_empty, np.repeat(q_keras[1:2], 2, axis=0), rtol=0, atol=1e-5)
    assert np.isfinite(q17).all() and np.isfinite(r17).all()
    assert np.ptp(q17, axis=0).max() > 0  # different texts, different embeddings


def test_every_signature_on_two_non_ascii_texts(untrained, tokenizer):
    model, _, _, arrays, info = untrained
    two = dict(zip(SIGNATURE_INPUTS, arrays[9:]))
    assert len(two) == len(SIGNATURE_INPUTS) == len(arrays) - 9
    q_ids = padded_query_ids(tokenizer, TWO["input"])
    r_ids = padded_response_ids(tokenizer, TWO["input"], TWO["context"])
    assert (q_ids > 3).sum() >= 10 and (r_ids > 3).sum() >= 20  # real pieces, not only [UNK]
    expected = {"query": np.asarray(model.encode_queries(q_ids)),
                "response": np.asarray(model.encode_docs(r_ids))}
    d = model.config.embedding_dim
    for (name, out), (key, dtype) in zip(two.items(), info["outputs"][9:]):
        if name == QUERY_IDS:
            assert (key, dtype) == ("ids", "int32")
            np.testing.assert_array_equal(out, q_ids)
        elif name == RESPONSE_IDS:
            assert (key, dtype) == ("ids", "int32")
            np.testing.assert_array_equal(out, r_ids)
        else:
            assert (key, dtype, out.shape) == ("outputs", "float32", (2, d)), name
            assert np.isfinite(out).all(), name
            tower = "query" if SIGNATURE_INPUTS[name] == ["input"] else "response"
            np.testing.assert_allclose(out, expected[tower], rtol=0, atol=1e-5, err_msg=name)
    assert np.abs(two[SERVING_DEFAULT] - two[RESPONSE_ENCODER]).max() > 1e-4  # two towers


def test_export_errors(spm_model, tmp_path):
    model = TwoTower(ModelConfig.from_name("tiny", vocab_size=1000, max_positions=64,
                                           max_query_len=32, max_doc_len=64))
    with pytest.raises(ValueError, match="embeds only 1000"):  # (checked before building)
        export_saved_model(model, str(spm_model), str(tmp_path / "a"))
    model = TwoTower(ModelConfig.from_name("tiny", vocab_size=VOCAB_SIZE, max_positions=64,
                                           max_query_len=32, max_doc_len=64))
    with pytest.raises(ValueError, match="max_positions"):
        export_saved_model(model, str(spm_model), str(tmp_path / "b"), doc_max_len=128)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


# ---- a trained BoW-MLP TwoTower: ranking through the export ------------------------------------

HELD_OUT = 32
TRAIN_STEPS = 150
BATCH = 32


@pytest.fixture(scope="module")
def trained(reloader, pairs, spm_model, tmp_path_factory):
    rng = np.random.default_rng(0)
    held, pages = [], set()
    for i in rng.permutation(len(pairs)):  # ICT pairs of 32 different pages
        r = pairs[i]
        if r["task"] == "ict" and r["doc_page_id"] not in pages:
            held.append(r)
            pages.add(r["doc_page_id"])
            if len(held) == HELD_OUT:
                break
    held_docs = {(r["doc_page_id"], r["doc_section"], r["doc_passage"]) for r in held}
    # no training pair has a held-out document (nor, so, a held-out pair)
    train = [r for r in pairs
             if (r["doc_page_id"], r["doc_section"], r["doc_passage"]) not in held_docs]
    assert len(held) == HELD_OUT and len(train) > 2000
    data = {"query_ids": np.array([fit_length(r["query_ids"], LQ) for r in train], np.int32),
            "doc_ids": np.array([fit_length(r["doc_ids"], LD) for r in train], np.int32)}
    dataset = (tf.data.Dataset.from_tensor_slices(data).shuffle(len(train), seed=0).repeat()
               .batch(BATCH, drop_remainder=True))

    keras.utils.set_random_seed(0)
    config = ModelConfig.from_name("bow", vocab_size=VOCAB_SIZE, hidden_size=256,
                                   embedding_dim=128, normalize=True, temperature=0.1)
    model = TwoTower(config)
    model.build()
    model.compile(optimizer=keras.optimizers.AdamW(1e-3))
    history = model.fit(dataset, steps_per_epoch=TRAIN_STEPS // 3, epochs=3, verbose=0,
                        shuffle=False)  # (the dataset is shuffled)

    # a run folder as `wikipairs train` leaves it, exported by the command
    run = tmp_path_factory.mktemp("trained")
    model.save_weights(str(run / WEIGHTS))
    (run / MODEL_CONFIG).write_text(config.to_json(), encoding="utf-8")
    (run / "spm.model").write_bytes(spm_model.read_bytes())
    export_dir = run / "export"
    result = run_cli("train", "export", run, "-o", export_dir, timeout=600)
    assert result.returncode == 0, describe(result)
    assert result.stdout.splitlines()[-1] == load_hint(str(export_dir)), describe(result)
    queries = [r["query"] for r in held]
    titles, texts = [r["doc_title"] for r in held], [r["doc_text"] for r in held]
    cases = [{"signature": QUERY_ENCODER, "inputs": {"input": queries}},
             {"signature": RESPONSE_ENCODER, "inputs": {"input": titles, "context": texts}},
             {"signature": DOCUMENT_ENCODER, "inputs": {"title": titles, "text": texts}}]
    arrays, _ = reloader.run(export_dir, cases, tmp_path_factory.mktemp("reload_trained"))
    return model, export_dir, held, history.history["loss"], arrays, result.stdout


def test_trained_export_ranks_true_document_first(trained, tokenizer):
    model, _, held, losses, (q, r, doc), _ = trained
    assert losses[-1] < losses[0] - 0.3, f"training did not learn: {losses}"
    # the export agrees with the Keras model on the stored ids of the build
    q_keras = np.asarray(model.encode_queries(
        np.array([fit_length(x["query_ids"], LQ) for x in held], np.int32)))
    d_keras = np.asarray(model.encode_docs(
        np.array([fit_length(x["doc_ids"], LD) for x in held], np.int32)))
    np.testing.assert_allclose(q, q_keras, rtol=0, atol=1e-5)
    np.testing.assert_allclose(r, d_keras, rtol=0, atol=1e-5)
    np.testing.assert_allclose(doc, r, rtol=0, atol=1e-6)

    scores = q @ r.T  # [32 queries, 32 documents]
    ranks = (scores > np.diag(scores)[:, None]).sum(axis=1)  # 0: the true document first
    top1 = float(np.mean(ranks == 0))
    mrr = float(np.mean(1.0 / (ranks + 1)))
    print(f"held-out ranking through the export: top-1 {top1:.3f}, MRR {mrr:.3f} "
          f"(chance 0.031 / 0.127); loss {losses[0]:.3f} -> {losses[-1]:.3f}")
    # chance: top-1 1/32 = 0.031, MRR ~0.127
    assert top1 >= 8 / HELD_OUT, f"top-1 {top1:.3f}, MRR {mrr:.3f}, ranks {sorted(ranks)}"
    assert mrr >= 0.3, f"top-1 {top1:.3f}, MRR {mrr:.3f}, ranks {sorted(ranks)}"


def test_load_encoders(trained):
    _, export_dir, held, _, (q, r, _), _ = trained
    encoders = load_encoders(str(export_dir), batch_size=5)  # 32 inputs: 7 batches
    query, response = encoders
    queries = [x["query"] for x in held]
    titles, texts = [x["doc_title"] for x in held], [x["doc_text"] for x in held]
    np.testing.assert_allclose(query(queries), q, rtol=0, atol=1e-6)
    np.testing.assert_allclose(response(titles, texts), r, rtol=0, atol=1e-6)
    np.testing.assert_allclose(encoders.document(titles, texts), r, rtol=0, atol=1e-6)
    np.testing.assert_allclose(response(titles), response(titles, [""] * len(titles)),
                               rtol=0, atol=1e-6)
    assert query([]).shape == (0, encoders.embedding_dim)
    with pytest.raises(ValueError, match="different lengths"):
        response(titles, texts[:3])


# A fresh interpreter: load without tensorflow_text (the error the README explains), then run
# the export command's last line, "load it with: CODE", and the default signature.
WITHOUT_TF_TEXT = r"""
import json, sys
import tensorflow as tf
try:
    tf.saved_model.load(sys.argv[1])
    error = None
except Exception as e:
    error = f"{type(e).__name__}: {e}"
print(json.dumps({"error": error, "tensorflow_text": "tensorflow_text" in sys.modules}))
scope = {}
exec(sys.argv[2], scope)
out = scope["m"].signatures["serving_default"](input=tf.constant(json.loads(sys.argv[3])))
print(json.dumps(out["outputs"].numpy().tolist()))
"""


def test_load_needs_tensorflow_text_as_the_readme_says(trained):
    _, export_dir, held, _, (q, _, _), stdout = trained
    code = stdout.splitlines()[-1].removeprefix("load it with: ")
    assert code.startswith("import tensorflow as tf, tensorflow_text; ")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    queries = [held[0]["query"], held[1]["query"]]
    code = code.replace("tf.saved_model.load(", "m = tf.saved_model.load(", 1)
    result = subprocess.run([sys.executable, "-c", WITHOUT_TF_TEXT, str(export_dir), code,
                             json.dumps(queries)],
                            env=env, capture_output=True, text=True, encoding="utf-8", timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    first, second = result.stdout.splitlines()[-2:]
    failure = json.loads(first)
    assert failure["tensorflow_text"] is False
    # the README quotes the error; the op it names is tensorflow_text's SentencePiece tokenizer
    assert failure["error"] and failure["error"].startswith(
        "RuntimeError: Op type not registered 'SentencepieceTokenizeOp'"), failure["error"]
    np.testing.assert_allclose(np.array(json.loads(second)), q[:2], rtol=0, atol=1e-6)
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "Op type not registered 'SentencepieceTokenizeOp'" in readme
    assert "import tensorflow as tf, tensorflow_text" in readme
