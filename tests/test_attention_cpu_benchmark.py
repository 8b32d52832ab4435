"""benchmarks/attention_cpu.py: attention and feed-forward pieces per XLA option set (and
PyTorch), rounds alternated; a tiny run and its one-line refusals."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("jax")
SCRIPT = str(REPO / "benchmarks" / "attention_cpu.py")
TINY = ["--batch", "2", "--length", "16", "--heads", "2", "--head-dim", "8", "--hidden", "16",
        "--ff", "32", "--rounds", "2"]


def test_attention_cpu_times_every_piece(tmp_path):
    out = tmp_path / "attention.json"
    reference = ["--reference", "pytorch"] if _has_torch() else []
    proc = subprocess.run([sys.executable, SCRIPT, *TINY, *reference, "--json", str(out)],
                          env=dict(os.environ, JAX_PLATFORMS="cpu"), cwd=REPO, text=True,
                          capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    expected = {f"jax {o} {p}" for o in ("default", "no-ynn")
                for p in ("attention", "blocked attention", "feed-forward")}
    if reference:
        expected |= {"pytorch attention", "pytorch feed-forward", "pytorch attention dropout 0.1"}
        assert result["jax_attention_over_pytorch_time"] > 0
        assert result["jax_blocked_attention_over_pytorch_time"] > 0
    assert set(result["pieces"]) == expected
    assert all(p["best_ms"] >= 0 and p["gflop_per_s"] > 0 for p in result["pieces"].values())
    assert set(result["attention_over_feed_forward"]) >= {"jax default", "jax no-ynn"}
    assert proc.stdout.count("round ") == 2


def _has_torch() -> bool:
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("args, message", [
    (["--options", "default,bogus"], "unknown option set bogus"),
    (["--rounds", "0"], "must be positive"),
])
def test_attention_cpu_refuses_bad_input_in_one_line(args, message):
    proc = subprocess.run([sys.executable, SCRIPT, *args], env=dict(os.environ, JAX_PLATFORMS="cpu"),
                          cwd=REPO, text=True, capture_output=True, timeout=120)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
