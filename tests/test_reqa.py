"""ReQA (trainer/reqa): build, metrics under both protocols, BM25, a SavedModel retriever, splits,
fine-tuning pairs, open-domain candidates, Natural Questions conversion and the CLI.

The hand-made fixture tests/fixtures/reqa/squad-mini.json (2 articles, 5 paragraphs, one without
questions, 8 questions) has these candidates (Punkt sentences), checked by hand:

    c0 P0 The Eddystone Lighthouse stands on rocks south of Plymouth.
    c1 P0 Its first tower was built in 1698.
    c2 P0 The current tower was designed by James Douglass.
    c3 P1 Lighthouses guide ships at night.
    c4 P1 Many lighthouses are now automated.
    c5 P2 The Forth Bridge crosses the Firth of Forth.
    c6 P2 It opened in 1890.
    c7 P3 The Northgate Bridge is a smaller swing bridge.
    c8 P3 It opened in 1890.                      (same text as c6, another passage)
    c9 P3 Its swing span is now automated.

and questions (id: gold): q1: c1; q2: c2 (two answers, one sentence); q3: c1 (one answer starts
exactly at the sentence, one in the space before it); q4: c3; q7 "What is automated?": c4;
q6: c6; q8 "What is automated?" (the same text, another answer): c9; q9: c7 and c8 (two QA inputs).
So 10 candidates, 9 QA inputs, 8 question ids, 7 distinct questions.
"""
from __future__ import annotations

import gzip
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import NLTK_DATA, SHARED_DATA, assert_one_line_error, run_cli

from wikipairs.trainer.reqa import data as reqa_data
from wikipairs.trainer.reqa.data import (ReqaError, add_extra_candidates, build_reqa, load_squad,
                                         read_reqa, select_split, split_questions, write_reqa)
from wikipairs.trainer.reqa.metrics import (EvalSet, RankCollector, evaluate_chunks,
                                            evaluate_scores, gold_ranks,
                                            summarize)

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "reqa"
SQUAD_MINI = FIXTURES / "squad-mini.json"
SQUAD_DEV = SHARED_DATA / "squad" / "dev-v1.1.json"


@pytest.fixture(scope="module", autouse=True)
def punkt_tab():
    """The shared punkt_tab models, as the CLI tests get them (NLTK_DATA)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NLTK_DATA", str(NLTK_DATA))
        yield


@pytest.fixture(scope="module")
def mini(punkt_tab):
    return build_reqa(load_squad(str(SQUAD_MINI)), source="squad-mini")


@pytest.fixture(scope="module")
def dev(punkt_tab):
    if not SQUAD_DEV.is_file():
        pytest.fail(f"real test data missing: {SQUAD_DEV} (see ../shared/data/README.md)",
                    pytrace=False)
    return build_reqa(load_squad(str(SQUAD_DEV)), source="dev-v1.1.json")


def reqa_cli(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    """`wikipairs reqa ARGS` in a fresh interpreter (the group added to main if it is not yet)."""
    from wikipairs.cli import main
    if "reqa" in main.commands:
        return run_cli("reqa", *args, timeout=timeout)
    code = ("from wikipairs.cli import main; from wikipairs.trainer.reqa.cli import reqa; "
            "main.add_command(reqa); main()")
    env = dict(os.environ, NLTK_DATA=str(NLTK_DATA), PYTHONIOENCODING="utf-8")
    return subprocess.run([sys.executable, "-c", code, "reqa", *map(str, args)], env=env,
                          capture_output=True, text=True, encoding="utf-8", timeout=timeout)


# ---- build -----------------------------------------------------------------------------------

def test_build_fixture_candidates_and_golds(mini):
    c, q = mini.candidates, mini.questions
    assert mini.counts() == {"candidates": 10, "qa_inputs": 9, "questions": 8,
                             "distinct_questions": 7}
    assert c["candidate_id"] == list(range(10))
    assert c["sentence"][1] == "Its first tower was built in 1698."
    assert c["sentence"][6] == c["sentence"][8] == "It opened in 1890."
    assert c["passage"][6] != c["passage"][8]
    assert c["paragraph_id"] == [0, 0, 0, 1, 1, 2, 2, 3, 3, 3]
    assert c["title"][:5] == ["Lighthouse"] * 5 and c["title"][5:] == ["Bridge"] * 5
    assert not any("Paint" in s for s in c["sentence"])  # the paragraph without questions
    assert q["question_id"] == ["q1", "q2", "q3", "q4", "q7", "q6", "q8", "q9"]
    assert q["gold_candidate_ids"] == [[1], [2], [1], [3], [4], [6], [9], [7, 8]]
    assert q["answers"][2] == ["Its first tower", " Its first tower"]
    assert mini.manifest["stats"]["answers_between_sentences"] == 1
    assert mini.manifest["stats"]["paragraphs_without_questions"] == 1
    for i, golds in enumerate(q["gold_candidate_ids"]):  # spans hold the answer starts
        for start in q["answer_starts"][i]:
            cid = golds[0] if len(golds) == 1 else [g for g in golds
                                                   if c["start"][g] <= start < c["end"][g]][0]
            assert c["start"][cid] - 1 <= start < c["end"][cid]


def test_write_read_round_trip(mini, tmp_path):
    write_reqa(mini, str(tmp_path / "out"))
    back = read_reqa(str(tmp_path / "out"))
    assert back.candidates == mini.candidates and back.questions == mini.questions
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["counts"] == mini.counts()
    assert pq.read_schema(tmp_path / "out" / "questions.parquet").names[:3] == \
        ["question_id", "question", "gold_candidate_ids"]


def test_sentence_index_rule():
    starts, ends = [0, 10, 20], [8, 18, 25]
    assert reqa_data.sentence_index(starts, ends, 0) == (0, True)
    assert reqa_data.sentence_index(starts, ends, 7) == (0, True)
    assert reqa_data.sentence_index(starts, ends, 8) == (1, False)  # the gap: the next one
    assert reqa_data.sentence_index(starts, ends, 10) == (1, True)
    assert reqa_data.sentence_index(starts, ends, 30) == (2, False)


# ---- metrics ---------------------------------------------------------------------------------

def _ranking_scores(orders: list[list[int]], n: int) -> np.ndarray:
    """Scores giving each row the candidate order `orders[i]` first, the rest after (by index)."""
    scores = np.zeros((len(orders), n), np.float32)
    for i, order in enumerate(orders):
        rest = [j for j in range(n) if j not in order]
        for position, j in enumerate(order + rest):
            scores[i, j] = n - position
    return scores


def test_metrics_hand_made_ranking(mini):
    eval_set = EvalSet.from_data(mini)
    assert eval_set.texts[4] == "What is automated?" and len(eval_set.texts) == 7
    scores = _ranking_scores([
        [1],                       # q1 (gold c1): rank 1
        [0, 1, 2],                 # q2 (c2): 3
        [2, 3, 4, 5, 6, 7, 1],     # q3 (c1): 7
        [],                        # q4 (c3): tie below
        [9, 0, 1, 4],              # q7 (c4): 4, q8 (c9): 1; reqa {c4, c9}: 1
        [8, 5, 6],                 # q6 (c6): 3; reqa {c6, c8}: 1
        [0, 1, 6, 2, 8, 7],        # q9 (c7, c8): 5; reqa {c6, c7, c8}: 3
    ], 10)
    scores[3] = 0
    scores[3, [0, 3, 4]] = 10      # q4: c3 tied with c0 and c4 at the top: rank (3 + 1) / 2 = 2
    results = evaluate_scores(eval_set, scores)
    paper = [1, 3, 7, 2, 4, 3, 1, 5]  # q1 q2 q3 q4 q7 q6 q8 q9
    reqa = [1, 3, 7, 2, 1, 1, 3]
    assert results["paper"] == pytest.approx({
        "queries": 8, "R@1": 2 / 8, "R@5": 7 / 8, "R@10": 1.0, "R@50": 1.0, "R@100": 1.0,
        "MRR": sum(1 / r for r in paper) / 8})
    assert results["reqa"] == pytest.approx({
        "queries": 7, "R@1": 3 / 7, "R@5": 6 / 7, "R@10": 1.0, "R@50": 1.0, "R@100": 1.0,
        "MRR": sum(1 / r for r in reqa) / 7})
    # in chunks (rows 0-2, 3-4, 5-6) the same
    chunks = [(0, scores[:3]), (3, scores[3:5]), (5, scores[5:])]
    assert evaluate_chunks(eval_set, chunks) == results


def test_metrics_levels_hand_made_ranking(mini):
    """The same ranking as above at the paragraph and article levels and within the paragraph
    (paper protocol): candidates c0-c2 are paragraph 0, c3-c4 paragraph 1 (both Lighthouse),
    c5-c6 paragraph 2, c7-c9 paragraph 3 (both Bridge)."""
    eval_set = EvalSet.from_data(mini)
    scores = _ranking_scores([[1], [0, 1, 2], [2, 3, 4, 5, 6, 7, 1], [], [9, 0, 1, 4],
                              [8, 5, 6], [0, 1, 6, 2, 8, 7]], 10)
    scores[3] = 0
    scores[3, [0, 3, 4]] = 10
    # q1 q2 q3 q4 q7 q6 q8 q9
    want = {"paragraph": [1, 1, 1, 2, 4, 2, 1, 5],   # q7: c4 at 4 (c9, c0, c1 first)
            "article": [1, 1, 1, 2, 2, 1, 1, 3],     # q9: c6 (Bridge) at 3
            "in_paragraph": [1, 3, 2, 1.5, 1, 2, 1, 1]}  # q4: c3 tied with c4 in paragraph 1
    collector = RankCollector(eval_set, levels=True)
    for start, rows in [(0, scores[:2]), (2, scores[2:5]), (5, scores[5:])]:
        collector.add(start, rows)
    got = collector.results_by_level(ks=(1, 2, 5))
    assert list(got) == ["paragraph", "article", "in_paragraph"]
    for level, ranks in want.items():
        assert got[level] == pytest.approx(summarize(np.array(ranks, float), ks=(1, 2, 5))), level
    assert collector.results() == evaluate_scores(eval_set, scores)  # levels change nothing
    assert RankCollector(eval_set).results_by_level() == {}
    # every level is at least as easy as the sentence itself, the article at least as the paragraph
    paper = collector.ranks["paper"]
    assert (collector.level_ranks["paragraph"] <= paper).all()
    assert (collector.level_ranks["article"] <= collector.level_ranks["paragraph"]).all()
    assert (collector.level_ranks["in_paragraph"] <= paper).all()


def test_levels_articles_per_language_and_extra_candidates():
    """In a pool of two languages an article is its title in the question's language; a
    candidate without a paragraph (-1, an extra one) joins the article by its title only."""
    from wikipairs.trainer.reqa.metrics import Levels
    cand = {"paragraph_id": [0, 0, 1, 2, -1], "title": ["A", "A", "A", "A", "A"]}
    langs = ["es", "es", "ru", "es", "es"]
    ques = {"paragraph_id": [0, 1], "title": ["A", "A"], "gold_candidate_ids": [[1], [2]]}
    levels = Levels.build(ques, cand, ["es", "ru"], langs)
    assert [g.tolist() for g in levels.paragraph_gold] == [[0, 1], [2]]
    assert [g.tolist() for g in levels.article_gold] == [[0, 1, 3, 4], [2]]
    assert levels.query_paragraph.tolist() == [0, 1]


def test_gold_ranks_ties_and_summary():
    scores = np.array([[3, 3, 3, 3, 1], [5, 4, 3, 2, 1], [0, 0, 0, 0, 0]], np.float32)
    ranks = gold_ranks(scores, [np.array([2]), np.array([3, 4]), np.array([0])])
    assert ranks.tolist() == [2.5, 4.0, 3.0]
    assert summarize(np.array([1, 2, 6, 200.0]), ks=(1, 5)) == pytest.approx(
        {"queries": 4, "R@1": 0.25, "R@5": 0.5, "MRR": (1 + 0.5 + 1 / 6 + 1 / 200) / 4})


# ---- BM25 ------------------------------------------------------------------------------------

def test_bm25_fixture(mini):
    from wikipairs.trainer.reqa.bm25 import BM25Config, BM25Scorer

    eval_set = EvalSet.from_data(mini)
    scorer = BM25Scorer(mini.candidates, BM25Config(text="sentence"))
    scores = scorer.scores(eval_set.texts)
    assert scores.shape == (7, 10)
    assert scores[0].argmax() == 1  # "first Eddystone tower built" -> c1
    assert scorer.describe()["stemmer"] == "pystemmer:english"
    passage = BM25Scorer(mini.candidates, BM25Config(text="passage")).scores(eval_set.texts)
    assert passage[0, 0] == passage[0, 1] == passage[0, 2]  # one passage: one score


def test_real_squad_dev_counts_and_bm25(dev, capsys):
    """dev-v1.1.json: the ReQA reference (its own splitter) has 10,250 candidates and 11,426 QA
    inputs over 10,539 distinct questions; Punkt splits a little differently."""
    from wikipairs.trainer.reqa.bm25 import BM25Scorer
    from wikipairs.trainer.reqa.metrics import format_table

    counts = dev.counts()
    assert counts["distinct_questions"] == 10_539
    assert counts["questions"] == 10_570
    assert 10_000 <= counts["candidates"] <= 10_600
    assert 11_300 <= counts["qa_inputs"] <= 11_600
    assert dev.manifest["splitter"] == "punkt_tab:english"
    eval_set = EvalSet.from_data(dev)
    results = evaluate_chunks(eval_set, BM25Scorer(dev.candidates).score_chunks(eval_set.texts))
    with capsys.disabled():
        print(f"\nReQA SQuAD dev: {counts}\n{format_table(results)}")
    for name in ("paper", "reqa"):
        r = results[name]
        assert r["R@1"] < r["R@5"] < r["R@10"] < r["R@50"] < r["R@100"]
        assert 0.5 < r["R@1"] < r["MRR"] < r["R@5"]
    assert results["paper"]["queries"] == 10_570 and results["reqa"]["queries"] == 10_539


# ---- splits ----------------------------------------------------------------------------------

@pytest.mark.parametrize("percent", [1, 5, 10, 80])
def test_splits_disjoint_by_question_and_deterministic(dev, percent):
    texts = dev.questions["question"]
    of = split_questions(texts, percent, seed=0)
    n = len(set(texts))
    n_train_part = round(n * percent / 100)
    by = {s: {t for t, v in of.items() if v == s} for s in ("train", "valid", "test")}
    assert len(by["train"]) + len(by["valid"]) == n_train_part
    assert len(by["valid"]) == round(n_train_part * 0.1)
    assert len(by["test"]) == n - n_train_part
    shuffled = list(texts)
    random.Random(7).shuffle(shuffled)
    assert split_questions(shuffled, percent, seed=0) == of
    assert split_questions(texts, percent, seed=1) != of
    parts = {s: select_split(dev, s, percent, 0) for s in ("train", "valid", "test")}
    seen = [set(p.questions["question"]) for p in parts.values()]
    assert not (seen[0] & seen[1]) and not (seen[0] & seen[2]) and not (seen[1] & seen[2])
    assert sum(p.num_questions for p in parts.values()) == dev.num_questions
    assert all(p.num_candidates == dev.num_candidates for p in parts.values())


def test_split_rejects_bad_percent():
    with pytest.raises(ReqaError, match="train percent"):
        split_questions(["a"], 100)


# ---- fine-tuning pairs and open-domain candidates --------------------------------------------

def test_finetune_pairs_shards(dev, tmp_path):
    from wikipairs.schemas import pair_fields
    from wikipairs.pairs.vocab import CLS_ID, SEP_ID, Tokenizer, train_vocab

    spm = str(tmp_path / "spm.model")
    sentences = [s for s in dev.candidates["sentence"][:3000]] + dev.questions["question"][:2000]
    train_vocab(sentences, spm, vocab_size=400)
    out = tmp_path / "ft"
    record = reqa_data.write_finetune_pairs(dev, str(out), spm, train_percent=5, seed=0)
    train = pq.read_table(out / "parquet" / "reqa" / "part-00000-of-00001.parquet").to_pylist()
    valid = pq.read_table(out / "valid" / "parquet" / "reqa" / "part-00000-of-00001.parquet"
                          ).to_pylist()
    assert (out / "tfrecord" / "reqa" / "part-00000-of-00001.tfrecord.gz").is_file()
    assert pq.read_schema(out / "parquet" / "reqa" / "part-00000-of-00001.parquet").names == \
        [f.name for f in pair_fields(True)]
    of = split_questions(dev.questions["question"], 5, 0)
    assert {of[r["query"]] for r in train} == {"train"} and {of[r["query"]] for r in valid} == {"valid"}
    assert record["pairs"]["train"]["pairs"] == len(train) > 300
    tok = Tokenizer(spm)
    sentence_of = dict(zip(dev.candidates["candidate_id"], dev.candidates["sentence"]))
    for row in train[:50]:
        assert row["task"] == "reqa" and row["doc_title"] == sentence_of[row["doc_passage"]]
        assert row["doc_ids"][0] == CLS_ID and row["doc_ids"][-1] == SEP_ID
        title_ids = tok.tokenize(row["doc_title"])[:285]
        assert row["doc_ids"][1:1 + len(title_ids)] == title_ids
        assert row["query_ids"] == tok.encode(row["query"], 64)
    json.loads((out / "split.json").read_text())


def test_extra_candidates_from_pair_shards(mini, tmp_path):
    from wikipairs.shards.pair_shards import pair_row, write_shard
    from wikipairs.records import Pair

    texts = [mini.candidates["passage"][5],  # a ReQA passage: nothing new
             "Rivers flow to the sea. Some rivers freeze in winter.",
             "Rivers flow to the sea. Some rivers freeze in winter."]  # a duplicate passage
    rows = [pair_row(Pair(f"{i:016x}", "p", "d", "ict", "en", "q", 1, "T", 0, 0, 0, 2, f"Doc {i}",
                          0, 0, t),
                     lambda s: len(s.split())) for i, t in enumerate(texts)]
    write_shard(str(tmp_path), "ict", 0, 1, rows, ("parquet",), with_ids=False)
    data = reqa_data.ReqaData(mini.candidates, mini.questions, {})
    assert add_extra_candidates(data, [str(tmp_path)]) == 2
    assert data.candidates["sentence"][10:] == ["Rivers flow to the sea.", "Some rivers freeze in winter."]
    assert data.candidates["paragraph_id"][10:] == [-1, -1] and data.num_candidates == 12
    assert mini.num_candidates == 10  # the original is untouched
    with pytest.raises(ReqaError, match="no Parquet pair shards"):
        add_extra_candidates(data, [str(tmp_path / "nothing")])


# ---- dense (a fake SavedModel) ---------------------------------------------------------------

def _fake_savedmodel(path: str, dim: int = 64) -> None:
    """Hashed bag-of-words encoders with ReQA's signatures."""
    import tensorflow as tf

    class BowEncoder(tf.Module):
        def _embed(self, texts):
            text = tf.strings.regex_replace(tf.strings.lower(texts), r"[^a-z0-9 ]", " ")
            ids = tf.strings.to_hash_bucket_fast(tf.strings.split(text), dim)
            counts = tf.reduce_sum(tf.ragged.map_flat_values(tf.one_hot, ids, dim), axis=1)
            return tf.math.l2_normalize(tf.cast(counts, tf.float32), axis=-1)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def query_encoder(self, input):  # noqa: A002 (the signature's input name)
            return {"outputs": self._embed(input)}

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)] * 2)
        def response_encoder(self, input, context):  # noqa: A002
            return {"outputs": tf.math.l2_normalize(
                self._embed(input) + 0.25 * self._embed(context), axis=-1)}

    module = BowEncoder()
    tf.saved_model.save(module, path, signatures={"query_encoder": module.query_encoder,
                                                  "response_encoder": module.response_encoder})


@pytest.fixture(scope="module")
def fake_model(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("model") / "bow")
    _fake_savedmodel(path)
    return path


def test_dense_savedmodel_and_top_k(mini, fake_model, capsys):
    from wikipairs.trainer.reqa.dense import SavedModelEncoder, score_chunks, top_k

    encoder = SavedModelEncoder(fake_model)
    eval_set = EvalSet.from_data(mini)
    cand = encoder.encode_candidates(mini.candidates["sentence"], mini.candidates["passage"],
                                     batch_size=3, quiet=False)
    assert "candidates encoded: 10/10" in capsys.readouterr().err
    queries = encoder.encode_queries(eval_set.texts, batch_size=4)
    assert cand.shape == (10, 64) and queries.shape == (7, 64)
    full = queries @ cand.T
    assert evaluate_chunks(eval_set, score_chunks(queries, cand, chunk_size=2)) == \
        evaluate_scores(eval_set, full)
    indices, scores = top_k(queries, cand, k=4, chunk_size=3)
    expected = np.argsort(-full, axis=1, kind="stable")[:, :4]
    assert np.allclose(scores, np.take_along_axis(full, expected, axis=1))
    assert (indices == expected).all()
    tied = np.ones((2, 6), np.float32)
    assert top_k(np.ones((1, 2), np.float32), tied.T, k=3)[0].tolist() == [[0, 1, 2]]


def test_top_k_faiss_matches_numpy():
    pytest.importorskip("faiss")
    from wikipairs.trainer.reqa.dense import top_k

    rng = np.random.default_rng(0)
    q, c = rng.normal(size=(20, 16)).astype(np.float32), rng.normal(size=(500, 16)).astype(np.float32)
    assert (top_k(q, c, 10, backend="faiss")[0] == top_k(q, c, 10)[0]).all()


# ---- Natural Questions -----------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["original", "simplified"])
def test_nq_conversion(layout, tmp_path, punkt_tab):
    from wikipairs.trainer.reqa.nq import convert_nq

    source = FIXTURES / f"nq-{layout}.jsonl"
    gz = tmp_path / f"nq-{layout}.jsonl.gz"
    with gzip.open(gz, "wb") as f:
        f.write(source.read_bytes())
    squad, counts = convert_nq([str(gz)])
    assert counts == {"records": 5, "kept": 2, "not exactly one short answer": 2,
                      "long answer not a <P> paragraph": 1}
    context = {"original": "The Eiffel Tower, in Paris, opened in 1889.",
               "simplified": "The Eiffel Tower , in Paris , opened in 1889 ."}[layout]
    got = [(a["title"], a["paragraphs"][0]["context"], a["paragraphs"][0]["qas"][0])
           for a in squad["data"]]
    assert [g[0] for g in got] == ["Eiffel Tower", "Eiffel Tower"]
    assert all(g[1] == context for g in got)
    assert [g[2]["id"] for g in got] == ["101", "105"]
    for _, ctx, qa in got:
        answer = qa["answers"][0]
        assert ctx[answer["answer_start"]:].startswith(answer["text"])
    assert [g[2]["answers"][0]["text"] for g in got] == ["1889", "Paris"]
    assert squad_plain_equal(convert_nq([str(source)])[0], squad)
    data = build_reqa(squad, source="nq")
    assert data.counts() == {"candidates": 1, "qa_inputs": 2, "questions": 2,
                             "distinct_questions": 2}


def squad_plain_equal(a, b) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_nq_bad_line(tmp_path):
    from wikipairs.trainer.reqa.nq import convert_nq

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"example_id": 1}\n{not json\n')
    with pytest.raises(ReqaError, match="bad.jsonl:1: not a Natural Questions record"):
        convert_nq([str(bad)])
    bad.write_text("{not json\n")
    with pytest.raises(ReqaError, match=r"bad.jsonl:1: not JSON Lines"):
        convert_nq([str(bad)])


# ---- the command line ------------------------------------------------------------------------

def _invoke(*args) -> str:
    """`wikipairs reqa ARGS` in this process (the successful paths; TensorFlow is loaded once)."""
    from click.testing import CliRunner

    from wikipairs.trainer.reqa.cli import reqa

    result = CliRunner().invoke(reqa, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_build_eval_bm25_and_savedmodel(tmp_path, fake_model):
    out = tmp_path / "mini"
    output = _invoke("build", "--squad", SQUAD_MINI, "--output", out)
    for line in ("candidates                    10", "QA inputs                      9",
                 "distinct questions             7"):
        assert line in output, output
    report = tmp_path / "bm25.json"
    output = _invoke("eval", "--model", "bm25", "--data", out, "--json", report,
                     "--bm25-text", "sentence", "--k1", "1.5", "--stemmer", "off")
    assert "R@100" in output and "paper" in output and "reqa" in output
    got = json.loads(report.read_text())
    assert got["model"]["k1"] == 1.5 and got["model"]["stemmer"] == "none"
    assert got["protocols"]["paper"]["queries"] == 8 and got["protocols"]["reqa"]["queries"] == 7
    assert got["protocols"]["reqa"]["R@10"] == 1.0  # 10 candidates
    assert got["levels"]["article"]["queries"] == 8 and "in_paragraph" in got["levels"]
    assert "in_paragraph" in output
    assert got["levels"]["paragraph"]["R@1"] >= got["protocols"]["paper"]["R@1"]
    report = tmp_path / "dense.json"
    output = _invoke("eval", "--model", fake_model, "--data", out, "--json", report,
                     "--split", "test", "--train-percent", "50")
    got = json.loads(report.read_text())
    assert got["model"]["dim"] == 64 and got["split"] == "test"
    assert got["distinct_questions"] == 7 - round(7 * 0.5)


def test_cli_one_line_errors(tmp_path):
    """Real processes: exit status 2 and one line on stderr."""
    bad_json = tmp_path / "bad.json"
    bad_json.write_text("{ not json")
    shutil.copy(SQUAD_MINI, tmp_path / "squad-mini.json")
    cases = [
        (("build", "--squad", tmp_path / "missing.json", "-o", tmp_path / "o"), "no such file"),
        (("build", "--squad", bad_json, "-o", tmp_path / "o"), "not SQuAD JSON"),
        (("eval", "--model", "bm25", "--data", tmp_path / "nowhere"), "no such folder"),
    ]
    for args, fragment in cases:
        assert_one_line_error(reqa_cli(*args), fragment)
    _invoke("build", "--squad", tmp_path / "squad-mini.json", "-o", tmp_path / "d")
    assert_one_line_error(reqa_cli("eval", "--model", tmp_path, "--data", tmp_path / "d"),
                          "not a SavedModel")


def test_usage_errors_in_process(tmp_path):
    from click.testing import CliRunner

    from wikipairs.trainer.reqa.cli import reqa

    not_squad = tmp_path / "list.json"
    not_squad.write_text("[1, 2]")
    for args, fragment in [(("build", "--squad", not_squad, "-o", tmp_path / "o"), "not SQuAD"),
                           (("build", "-o", tmp_path / "o"), "--squad"),
                           (("eval", "--model", "bm25", "--data", tmp_path), "manifest.json"),
                           (("eval", "--model", "bm25", "--data", tmp_path, "--split", "test"),
                            "--train-percent")]:
        result = CliRunner().invoke(reqa, [str(a) for a in args])
        assert isinstance(result.exception, ReqaError), (args, result.output)
        assert fragment in str(result.exception) and "\n" not in str(result.exception)
