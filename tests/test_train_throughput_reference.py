"""benchmarks/train_throughput.py --reference pytorch: the same towers trained with PyTorch +
transformers in a subprocess, its examples/s and the ratio wikipairs/reference in the JSON."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from conftest import REPO

BENCHMARK = REPO / "benchmarks" / "train_throughput.py"
ENV = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")


def _bench(*args, env=ENV, timeout=300):
    return subprocess.run([sys.executable, str(BENCHMARK), *args], env=env,
                          capture_output=True, text=True, timeout=timeout, cwd=REPO)


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_reference_pytorch_trains_the_same_towers_and_reports_the_ratio(pooling):
    pytest.importorskip("jax")
    pytest.importorskip("keras")
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    # tiny with one layer and short sequences: the JAX compilation is most of the time
    result = _bench("--config", "tiny", "--backend", "jax", "--batch", "4", "--steps", "2",
                    "--warmup", "1", "--query-len", "8", "--doc-len", "16", "--model-opt",
                    "num_layers=1", "--model-opt", f"pooling={pooling}", "--reference", "pytorch",
                    "--no-tensorflow", "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    r = json.loads(lines[-1])
    ref = r["reference"]
    assert any(line.startswith("  reference pytorch (torch ") and "wikipairs/reference = " in line
               for line in lines), lines
    assert r["ratio"] == pytest.approx(r["examples_per_s"] / ref["examples_per_s"], rel=1e-2)
    assert r["ratio"] > 0 and ref["examples_per_s"] > 0
    for key in ("batch", "query_len", "doc_len", "steps", "warmup_steps", "threads"):
        assert ref[key] == r[key], key
    assert (ref["batch"], ref["query_len"], ref["doc_len"], ref["steps"]) == (4, 8, 16, 2)
    # the same sizes: BERT's only extra weights are its token-type row (hidden 128) per tower
    assert ref["parameters"] == r["parameters"] + 2 * 128, (ref["parameters"], r["parameters"])
    # the same loss at the same (0.02) initialization: both near ln(batch) after 3 steps
    for loss in (r["final_loss"], ref["final_loss"]):
        assert abs(loss - math.log(4)) < 0.3, (r["final_loss"], ref["final_loss"])
    assert ref["tensorflow_imported"] is False and r["tensorflow_imported"] is False
    assert ref["device"]["platform"] == "cpu" and ref["autocast"] is None


def test_reference_without_torch_is_one_line_before_the_keras_run(tmp_path):
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['torch'] = None\n")
    env = dict(ENV, PYTHONPATH=str(tmp_path))
    result = _bench("--config", "tiny", "--reference", "pytorch", env=env, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        "train_throughput: --reference pytorch needs torch (the dev extra: pip install -e "
        "'.[dev]'; torch CPU is enough)"], result.stderr[-2000:]
    assert result.stdout == ""


@pytest.mark.parametrize("args, message", [
    (["--config", "bow"], "needs a Transformer config"),
    (["--batch", "8", "--chunk-size", "4"], "leave out --chunk-size"),
])
def test_reference_bad_combinations_say_why(args, message):
    result = _bench("--reference", "pytorch", *args, timeout=120)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr[-2000:]
