"""`wikipairs reqa finetune`: split, fine-tune a pre-trained run, export, evaluate the test part."""
import json
from pathlib import Path

from conftest import assert_one_line_error, describe, native_log_lines, run_cli

FIXTURE = Path(__file__).parent / "fixtures" / "reqa" / "squad-mini.json"


def test_reqa_finetune_end_to_end(tmp_path):
    steps = [
        ("vocab", "-o", tmp_path / "spm.model", "--vocab-size", 600),
        ("build", "-o", tmp_path / "pairs", "--vocab", tmp_path / "spm.model", "--workers", "1",
         "--task", "ict,bfs"),
        ("train", "pretrain", "-d", tmp_path / "pairs", "-o", tmp_path / "pre", "--model", "bow",
         "--steps", "4", "--batch-size", "4", "--quiet", "--no-tensorboard"),
        ("reqa", "build", "--squad", FIXTURE, "-o", tmp_path / "reqa"),
        ("reqa", "finetune", "--data", tmp_path / "reqa", "--init", tmp_path / "pre",
         "--train-percent", "50", "-o", tmp_path / "ft", "--steps", "3", "--batch-size", "2",
         "-q", "--temperature", "0.5", "--model-opt", "dropout=0.0", "--config",
         tmp_path / "settings.json"),
    ]
    (tmp_path / "settings.json").write_text(json.dumps({"eval_batches": 0}))
    for args in steps:
        result = run_cli(*args, timeout=600)
        assert result.returncode == 0, describe(result)
        assert native_log_lines(result) == [], describe(result)  # in OUT/native.log
    # --temperature, --model-opt and --config as `train finetune` takes them
    model_config = json.loads((tmp_path / "ft" / "run" / "model_config.json").read_text())
    assert model_config["temperature"] == 0.5 and model_config["dropout"] == 0.0
    assert json.loads((tmp_path / "ft" / "run" / "train_config.json").read_text()
                      )["eval_batches"] == 0
    typo = run_cli("reqa", "finetune", "--data", tmp_path / "reqa", "--init", tmp_path / "pre",
                   "-o", tmp_path / "typo", "--model-opt", "dropuot=0.1")
    assert_one_line_error(typo, "unknown --model-opt key: dropuot; valid: dropout, ")
    report = json.loads((tmp_path / "ft" / "eval.json").read_text())
    assert report["split"] == "test" and report["train_percent"] == 50
    split = json.loads((tmp_path / "ft" / "pairs" / "split.json").read_text())
    assert split["distinct_questions"]["test"] == report["distinct_questions"] > 0
    for protocol in ("paper", "reqa"):
        row = report["protocols"][protocol]
        assert 0 <= row["R@1"] <= row["R@5"] <= row["R@100"] <= 1
    assert (tmp_path / "ft" / "export" / "saved_model.pb").exists()
    from wikipairs.trainer.reqa.compare import read_ranks
    ranks, setting = read_ranks(str(tmp_path / "ft" / "ranks.parquet"))  # for `reqa compare`
    assert setting["split"] == "test" and len(ranks["reqa"][0]) == report["distinct_questions"]
    assert (tmp_path / "ft" / "native.log").is_file()
    assert "R@100" in result.stdout
    # the same export from the command line, then evaluated as any SavedModel
    result = run_cli("train", "export", tmp_path / "ft" / "run", "-o", tmp_path / "exported",
                     timeout=600)
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)  # stdout's last line names tensorflow_text
    result = run_cli("reqa", "eval", "--model", tmp_path / "exported", "--data", tmp_path / "reqa",
                     "--split", "test", "--train-percent", "50", "--json", tmp_path / "again.json",
                     "-q", timeout=600)
    assert result.returncode == 0, describe(result)
    assert native_log_lines(result) == [], describe(result)
    again = json.loads((tmp_path / "again.json").read_text())
    assert again["protocols"] == report["protocols"]
    (tmp_path / "empty").mkdir()
    missing = run_cli("train", "export", tmp_path / "empty", "-o", tmp_path / "x")
    assert missing.returncode == 2 and "no spm.model" in missing.stderr.splitlines()[-1]
