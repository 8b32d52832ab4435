"""`reqa eval --ranks` and `reqa compare`: paired statistics of two models on the same questions."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from wikipairs.trainer.reqa.compare import compare_files, paired_stats, read_ranks, write_ranks
from wikipairs.trainer.reqa.data import ReqaError
from wikipairs.trainer.reqa.metrics import summarize

SQUAD_MINI = os.path.join(os.path.dirname(__file__), "fixtures", "reqa", "squad-mini.json")
SETTING = {"data": "d", "model": {"kind": "bm25"}, "split": "test", "train_percent": 80.0,
           "seed": 0, "candidates": 100}


def test_identical_models_differ_by_nothing():
    ranks = np.array([1.0, 3.0, 12.0, 150.0, 2.5])
    for metric, m in paired_stats(ranks, ranks.copy(), resamples=200).items():
        assert m["diff"] == 0 and m["ci95"] == [0.0, 0.0] and m["p"] == 1.0, metric


def test_means_are_the_metrics_of_each_model():
    rng = np.random.default_rng(3)
    a, b = rng.integers(1, 300, 500).astype(float), rng.integers(1, 300, 500).astype(float)
    stats = paired_stats(a, b, resamples=500)
    for metric in ("R@1", "R@10", "R@100", "MRR"):
        assert stats[metric]["a"] == pytest.approx(summarize(a)[metric])
        assert stats[metric]["b"] == pytest.approx(summarize(b)[metric])
        assert stats[metric]["diff"] == pytest.approx(summarize(b)[metric] - summarize(a)[metric])


def test_mcnemar_counts_only_the_discordant_queries():
    # 40 queries both find at rank 1, 10 only A finds (B ranks them 500), 50 neither finds
    a = np.array([1.0] * 50 + [500.0] * 50)
    b = np.array([1.0] * 40 + [500.0] * 60)
    r1 = paired_stats(a, b, resamples=1000)["R@1"]
    assert (r1["a_only"], r1["b_only"]) == (10, 0)
    assert r1["p"] == pytest.approx(2 * 0.5 ** 10)  # exact two-sided binomial, all 10 one way
    assert r1["diff"] == pytest.approx(-0.10)
    assert r1["ci95"][0] < -0.10 < r1["ci95"][1] < 0


def test_bootstrap_interval_matches_the_normal_approximation_and_is_seeded():
    rng = np.random.default_rng(0)
    n = 4000
    a = np.where(rng.random(n) < 0.6, 1.0, 1000.0)
    b = np.where(rng.random(n) < 0.1, 1000.0, a)  # B loses 10% of A's hits at random
    first = paired_stats(a, b, ks=(1,), resamples=4000, seed=7)["R@1"]
    again = paired_stats(a, b, ks=(1,), resamples=4000, seed=7)["R@1"]
    assert first == again
    diff = (b <= 1).astype(float) - (a <= 1)
    half = 1.96 * diff.std(ddof=1) / np.sqrt(n)
    assert first["ci95"][0] == pytest.approx(diff.mean() - half, abs=0.25 * half)
    assert first["ci95"][1] == pytest.approx(diff.mean() + half, abs=0.25 * half)


def test_rank_files_round_trip_and_refuse_other_questions(tmp_path):
    keys = ["q1", "q2", "q3"]
    write_ranks(tmp_path / "a.parquet", {"paper": (keys, [1.0, 2.0, 30.0]),
                                         "reqa": (["x", "y"], [1.0, 4.5])}, SETTING)
    ranks, setting = read_ranks(str(tmp_path / "a.parquet"))
    assert setting == SETTING and list(ranks) == ["paper", "reqa"]
    assert ranks["paper"][0].tolist() == keys and ranks["reqa"][1].tolist() == [1.0, 4.5]
    write_ranks(tmp_path / "b.parquet", {"paper": (keys, [2.0, 2.0, 1.0])}, SETTING)
    result = compare_files(str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"),
                           resamples=200)
    assert list(result["rankings"]) == ["paper"]  # the rankings both files hold
    assert result["rankings"]["paper"]["metrics"]["R@1"]["diff"] == pytest.approx(0.0)
    write_ranks(tmp_path / "c.parquet", {"paper": (["q1", "q3", "q2"], [1.0, 1.0, 1.0])},
                SETTING)
    with pytest.raises(ReqaError, match="different queries under 'paper'"):
        compare_files(str(tmp_path / "a.parquet"), str(tmp_path / "c.parquet"))
    write_ranks(tmp_path / "d.parquet", {"paper": (keys, [1.0, 1.0, 1.0])},
                {**SETTING, "seed": 1})
    with pytest.raises(ReqaError, match=r"seed: 0 against 1"):
        compare_files(str(tmp_path / "a.parquet"), str(tmp_path / "d.parquet"))
    with pytest.raises(ReqaError, match="no such file"):
        read_ranks(str(tmp_path / "missing.parquet"))
    (tmp_path / "e.parquet").write_text("not parquet")
    with pytest.raises(ReqaError, match="not a rank file"):
        read_ranks(str(tmp_path / "e.parquet"))


def test_cli_eval_ranks_then_compare(tmp_path):
    from click.testing import CliRunner

    from wikipairs.trainer.reqa.cli import reqa

    def invoke(*args):
        result = CliRunner().invoke(reqa, [str(a) for a in args], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        return result.output

    data = tmp_path / "mini"
    invoke("build", "--squad", SQUAD_MINI, "--output", data)
    for name, k1 in (("a", "1.2"), ("b", "0.3")):
        invoke("eval", "--model", "bm25", "--data", data, "--k1", k1, "--bm25-text", "sentence",
               "--ranks", tmp_path / f"{name}.parquet", "--json", tmp_path / f"{name}.json")
    ranks, setting = read_ranks(str(tmp_path / "a.parquet"))
    report = json.loads((tmp_path / "a.json").read_text())
    assert setting["candidates"] == report["candidates"] == 10 and setting["model"]["k1"] == 1.2
    assert set(ranks) == {"paper", "reqa", "paragraph", "article", "in_paragraph"}
    for name in ("paper", "reqa"):  # the file's ranks give the report's metrics
        assert summarize(ranks[name][1]) == pytest.approx(report["protocols"][name])
    output = invoke("compare", tmp_path / "a.parquet", tmp_path / "b.parquet", "--resamples",
                    "500", "--json", tmp_path / "cmp.json")
    assert "paper (8 queries)" in output and "reqa (7 queries)" in output
    assert "McNemar exact" in output and "Wilcoxon" in output
    cmp = json.loads((tmp_path / "cmp.json").read_text())
    assert cmp["b"]["model"]["k1"] == 0.3 and cmp["rankings"]["paper"]["queries"] == 8
    invoke("eval", "--model", "bm25", "--data", data, "--split", "test", "--train-percent", "50",
           "--ranks", tmp_path / "test.parquet")
    result = CliRunner().invoke(reqa, ["compare", str(tmp_path / "a.parquet"),
                                       str(tmp_path / "test.parquet")])
    assert isinstance(result.exception, ReqaError)
    assert "split: 'all' against 'test'" in str(result.exception)


def test_p_values_print_without_underflowing_to_zero():
    from wikipairs.trainer.reqa.compare import format_p

    assert format_p(0.0248) == "0.0248" and format_p(3.2e-15) == "3.2e-15"
    assert format_p(0.0) == "<1e-300"
