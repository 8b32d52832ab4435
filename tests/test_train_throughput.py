"""benchmarks/train_throughput.py: its FLOPs formula (the MFU numerator) against XLA's own count,
and a run on the JAX backend with TensorFlow made unimportable, as on the GPU machine."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("jax")
pytest.importorskip("keras")

BENCHMARK = REPO / "benchmarks" / "train_throughput.py"
JAX_ENV = dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu")

# `python -c FORMULA_AGAINST_XLA`: for each config, the formula's FLOPs per example and XLA's
# cost analysis of the loss gradient (no training step is run; base is only compiled).
FORMULA_AGAINST_XLA = r'''
import json, sys
sys.path.insert(0, sys.argv[1])
import train_throughput as bench
TwoTower, ModelConfig, _ = bench.import_trainer()
out = {}
for name, batch in (("tiny", 8), ("base", 4), ("bow", 8)):
    config = ModelConfig.from_name(name, vocab_size=32000)
    model = TwoTower(config)
    model.build()
    lq, ld = config.max_query_len, config.max_doc_len
    ids = bench.synthetic_batch(batch, lq, ld, config.vocab_size, 0)
    out[name] = {"formula": bench.flops_per_example(model, batch, lq, ld)["total"],
                 "xla": bench.xla_flops_per_example(model, ids)}
print(json.dumps(out))
'''


def test_flops_formula_is_just_below_xla_s_count_of_every_op():
    """The matmul-only formula must not exceed what XLA counts for value_and_grad of the loss
    (every op), or the MFU would be inflated; for the Transformer towers matmuls are nearly
    everything (base: 176.1 of 177.3 GFLOP; its [CLS]-pooled last layer at one position), for BoW the elementwise ops are a larger share."""
    result = subprocess.run([sys.executable, "-c", FORMULA_AGAINST_XLA, str(BENCHMARK.parent)],
                            env=JAX_ENV, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    counts = json.loads(result.stdout.strip().splitlines()[-1])
    ratios = {name: c["formula"] / c["xla"] for name, c in counts.items()}
    assert counts["base"]["formula"] == pytest.approx(176.07e9, rel=1e-3), counts
    assert 0.98 < ratios["base"] <= 1.0, ratios
    assert 0.94 < ratios["tiny"] <= 1.0, ratios
    assert 0.8 < ratios["bow"] <= 1.0, ratios


def _bench(*args, timeout=300):
    return subprocess.run([sys.executable, str(BENCHMARK), *args], env=JAX_ENV,
                          capture_output=True, text=True, timeout=timeout, cwd=REPO)


def test_benchmark_runs_on_jax_without_tensorflow():
    result = _bench("--config", "bow", "--backend", "jax", "--batch", "8", "--steps", "3",
                    "--warmup", "1", "--no-tensorflow", "--peak-tflops", "1e-4", "--model-opt",
                    "dropout=0", "--model-opt", "embedding_dim=256", "--xla-flops",
                    "--chunk-size", "4", "--xla-flags=--xla_gpu_enable_cudnn_layer_norm=true",
                    "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.strip().splitlines()
    r = json.loads(lines[-1])
    assert lines[0].startswith("train_throughput bow jax float32 on cpu:"), lines[0]
    assert r["tensorflow_imported"] is False and r["backend"] == "jax"
    # --xla-flags first, then the trainer's defaults (trainer/xla_flags.py) for this jaxlib
    from trainer.xla_flags import known_flags
    assert r["xla_flags"].split() == ["--xla_gpu_enable_cudnn_layer_norm=true", *known_flags()]
    assert r["model_overrides"] == {"dropout": 0, "embedding_dim": 256}
    assert r["flops_terms"]["in_batch_scores"] == 6 * 8 * 256  # the override reached the model
    assert r["examples_per_s"] > 0 and r["steps"] == 3
    assert r["chunk_size"] == 4 and r["peak_rss_mb"] > r["rss_before_fit_mb"] > 0  # GradCache
    flops = sum(v for k, v in r["flops_terms"].items() if not k.endswith("_params"))
    assert r["peak_tflops"] == 1e-4  # 0.1 GFLOP/s, so that the MFU's rounding does not matter
    assert r["mfu"] == pytest.approx(flops * r["examples_per_s"] / 1e8, rel=1e-3), r
    # BoW: the masked mean pooling, which the formula counts as 0, is a large share here
    assert 0.6 < flops / 1e9 / r["xla_gflops_per_example"] <= 1.01, r  # XLA's is rounded


@pytest.mark.parametrize("args, message", [
    (["--model-opt", "no_such_field=1"], "bad --model-opt"),
    (["--model-opt", "dropout"], "expected KEY=VALUE"),
    (["--backend", "tensorflow", "--xla-flops"], "--xla-flops needs --backend jax"),
    (["--batch", "8", "--chunk-size", "3"], "--chunk-size must be >= 1 and divide --batch"),
])
def test_benchmark_bad_options_say_why(args, message):
    result = _bench("--config", "bow", "--backend", "jax", *args, timeout=120)
    assert result.returncode != 0
    assert message in result.stderr, result.stderr[-2000:]


def test_blocked_attention_anywhere_runs_with_its_block_size():
    """`--attention blocked` (the blocks on any device, for a GPU measurement) with tiny blocks
    (`--block-elements 512`: one of the 8 rows per block of the 16-token documents) trains, and
    the JSON names the path and the block size (the blocks' function against the other path:
    tests/test_fast_layers.py)."""
    result = _bench("--config", "tiny", "--backend", "jax", "--batch", "8", "--steps", "2",
                    "--warmup", "1", "--query-len", "8", "--doc-len", "16", "--attention",
                    "blocked", "--block-elements", "512", "--json")
    assert result.returncode == 0, result.stderr[-3000:]
    r = json.loads(result.stdout.strip().splitlines()[-1])
    assert r["attention"] == "blocked" and r["block_elements"] == 512
    assert 0 < r["final_loss"] < 10 and r["examples_per_s"] > 0
