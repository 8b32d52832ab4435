"""benchmarks/dropout_rng.py: one model per way of drawing dropout masks, steps alternated; a tiny
run of the three ways on the JAX backend."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import REPO

pytest.importorskip("jax")
pytest.importorskip("keras")


def test_dropout_rng_alternates_the_ways_and_reports_the_ratio(tmp_path):
    out = tmp_path / "ways.json"
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "dropout_rng.py"), "--config", "tiny",
         "--batch", "4", "--rounds", "2", "--query-len", "8", "--doc-len", "16",
         "--ways", "hash,philox,threefry", "--json", str(out)],
        env=dict(os.environ, KERAS_BACKEND="jax", JAX_PLATFORMS="cpu"), cwd=REPO, text=True,
        capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert list(result["ways"]) == ["hash", "philox", "threefry"]
    assert result["ways"]["hash"]["wall_over_hash"] == 1.0
    for way in result["ways"].values():
        assert len(way["steps"]) == 2 and all(s["wall_s"] > 0 for s in way["steps"])
    assert proc.stdout.count("round ") == 6


@pytest.mark.parametrize("env, args, message", [
    ({"KERAS_BACKEND": "tensorflow"}, [], "KERAS_BACKEND=jax"),
    ({"KERAS_BACKEND": "jax"}, ["--ways", "hash,mersenne"], "unknown way mersenne"),
])
def test_dropout_rng_refuses_bad_input_in_one_line(env, args, message):
    proc = subprocess.run([sys.executable, str(REPO / "benchmarks" / "dropout_rng.py"), *args],
                          env=dict(os.environ, JAX_PLATFORMS="cpu", **env), cwd=REPO, text=True,
                          capture_output=True, timeout=120)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
