"""benchmarks/reqa_small.py's sweep options: values per fine-tuning split, and the run labels."""
import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[1] / "benchmarks" / "reqa_small.py"
_SPEC = importlib.util.spec_from_file_location("reqa_small", _PATH)
reqa_small = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(reqa_small)


def test_values_apply_to_every_split_unless_a_split_names_its_own():
    assert reqa_small.per_split("100,200", [5.0, 80.0], int) == {5.0: [100, 200], 80.0: [100, 200]}
    assert reqa_small.per_split("5:100,5:200,80:400", [5.0, 80.0], int) == \
        {5.0: [100, 200], 80.0: [400]}
    assert reqa_small.per_split("5:1e-3,5e-4", [5.0, 80.0], str) == {5.0: ["1e-3"], 80.0: ["5e-4"]}


@pytest.mark.parametrize("spec", ["5:100", "10:100,100"])
def test_a_split_without_a_value_or_an_unknown_split_is_refused(spec):
    with pytest.raises(ValueError):
        reqa_small.per_split(spec, [5.0, 80.0], int)


def test_sweep_grid_keeps_seeds_apart(capsys):
    def entry(pre, steps, lr, r100, seed=0):
        return {"settings": {"pretrain_steps": pre, "finetune_steps": steps, "finetune_lr": lr,
                             "seed": seed}, "valid": {"paper": {"R@1": 0.01, "R@10": 0.1,
                                                                "R@100": r100}}}
    results = {"5": {"ICT [p1000 s100 lr5e-4]": entry(1000, 100, "5e-4", 0.30),
                     "ICT [p1000 s100 lr5e-4 seed1]": entry(1000, 100, "5e-4", 0.34, 1)}}
    reqa_small.print_sweep(results, [5.0], "valid")
    rows = [line.split() for line in capsys.readouterr().out.splitlines()[3:]]
    assert rows == [["100", "5e-4", "0", "30.0", "30.0"], ["100", "5e-4", "1", "34.0", "34.0"]]


def test_run_labels_keep_learning_rates_whole():
    assert reqa_small.labelled("ICT", "-p1000-s100-lr5e-4-seed1") == "ICT [p1000 s100 lr5e-4 seed1]"
    assert reqa_small.labelled("ICT", "-pseed1") == "ICT [pseed1]"
    assert reqa_small.labelled("No-SSL", "") == "No-SSL"


def test_task_mix_by_pairs_weights_each_task_by_its_pair_count():
    counts = {"ict_pairs": 300, "bfs_pairs": 20, "wlp_pairs": 1}
    several = reqa_small.METHODS["ICT+BFS+WLP"]
    assert reqa_small.task_weights(several, "pairs", counts) == "300,20,1"
    assert reqa_small.task_weights(several, "uniform", counts) is None
    assert reqa_small.task_weights(reqa_small.METHODS["ICT"], "pairs", counts) is None
    assert reqa_small.task_weights(None, "pairs", counts) is None  # No-SSL: no pre-training
    assert reqa_small.labelled("ICT+BFS+WLP", "-mixpairs") == "ICT+BFS+WLP [mixpairs]"
    assert reqa_small.task_weights(several, "8:1:1", counts) == "8,1,1"  # given weights
    assert reqa_small.labelled("ICT+BFS+WLP", "-mix8-1-1") == "ICT+BFS+WLP [mix8-1-1]"
    with pytest.raises(ValueError):
        reqa_small.task_weights(several, "8:1", counts)


def test_a_sequential_method_is_not_mixed_and_names_its_first_phase():
    """BFS+WLP>ICT trains its phases one after the other: no --task-weights for either."""
    counts = {"ict_pairs": 300, "bfs_pairs": 20, "wlp_pairs": 1}
    sequential = reqa_small.METHODS["BFS+WLP>ICT"]
    assert sequential[1].split(">") == ["bfs,wlp", "ict"]
    assert reqa_small.task_weights(sequential, "pairs", counts) is None
    assert reqa_small.labelled("BFS+WLP>ICT", "-f1000") == "BFS+WLP>ICT [f1000]"
    assert reqa_small.slug("BFS+WLP>ICT") == "bfs-wlp-then-ict"  # no ">" in a folder name


def test_sweep_grid_keeps_pretraining_learning_rates_apart(capsys):
    def entry(plr, r100):
        return {"settings": {"pretrain_steps": 600, "pretrain_lr": plr, "finetune_steps": 400,
                             "finetune_lr": "5e-4", "seed": 0},
                "valid": {"paper": {"R@1": 0.01, "R@10": 0.1, "R@100": r100}}}
    results = {"80": {"ICT [plr3e-4]": entry("3e-4", 0.70), "ICT [plr3e-3]": entry("3e-3", 0.80)}}
    reqa_small.print_sweep(results, [80.0], "valid")
    lines = capsys.readouterr().out.splitlines()
    assert "ICT p600 lr3e-3" in lines[2] and "ICT p600 lr3e-4" in lines[2]
    assert lines[3].split() == ["400", "5e-4", "0", "80.0", "70.0", "80.0", "70.0"]


def test_a_pretraining_batch_of_its_own_is_named_and_wins_over_the_common_one():
    ict = reqa_small.METHODS["ICT"]
    assert reqa_small.pretrain_batch_args(ict, 512, 128) == ("-b512", ["--batch-size", 512])
    assert reqa_small.pretrain_batch_args(ict, 128, 128) == ("", [])  # the names of before
    assert reqa_small.pretrain_batch_args(ict, None, 128) == ("", [])
    assert reqa_small.pretrain_batch_args(None, 512, 128) == ("", [])  # No-SSL: no pre-training
    assert reqa_small.labelled("ICT", "-b512") == "ICT [b512]"


def test_order_tests_pair_the_papers_order_and_the_best_dense_model_against_bm25(tmp_path,
                                                                                 capsys):
    from wikipairs.trainer.reqa.compare import write_ranks

    setting = {"data": "d", "model": {}, "split": "test", "train_percent": 80.0, "seed": 0,
               "candidates": 500}
    keys = [f"q{i}" for i in range(200)]

    def entry(name, ranks):
        path = tmp_path / f"{name}.parquet"
        write_ranks(path, {"paper": (keys, ranks)}, setting)
        return {"test": {"protocols": {"paper": {"R@100": sum(r <= 100 for r in ranks) / 200}},
                         "ranks_file": str(path)}}

    results = {"80": {"ICT": entry("ict", [50.0] * 180 + [300.0] * 20),
                      "ICT+BFS+WLP": entry("all", [50.0] * 170 + [300.0] * 30),
                      "No-SSL [s400]": entry("a", [300.0] * 200),  # two rows: a sweep
                      "No-SSL [s800]": entry("b", [300.0] * 200),
                      "BM25": entry("bm25", [1.0] * 200)}}
    paired = reqa_small.print_order_tests(results, [80.0], "test")["80"]
    assert list(paired) == ["ICT+BFS+WLP - ICT", "ICT - BM25"]  # No-SSL: swept, left out
    assert paired["ICT+BFS+WLP - ICT"]["diff"] == pytest.approx(-0.05)
    assert (paired["ICT+BFS+WLP - ICT"]["a_only"], paired["ICT+BFS+WLP - ICT"]["b_only"]) == (10, 0)
    assert paired["ICT - BM25"]["diff"] == pytest.approx(-0.10)
    assert "ICT+BFS+WLP - ICT" in capsys.readouterr().out
