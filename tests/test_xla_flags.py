"""trainer/xla_flags.py: the XLA:CPU scheduler flag and the XLA:GPU Triton GEMM flag go into
XLA_FLAGS only for the JAX backend, a jaxlib that knows them, and never over the user's own
setting; the installed jaxlib accepts them (XLA aborts on a flag it does not know) and the trainer
package applies them on import."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import result_json

from trainer.xla_flags import SCHEDULER_FLAG, TRITON_GEMM_FLAG, apply_defaults, known_flags

REPO = Path(__file__).resolve().parents[1]


BOTH = f"{SCHEDULER_FLAG}=false {TRITON_GEMM_FLAG}=false"


@pytest.mark.parametrize("environ, version, expected_flags", [
    ({"KERAS_BACKEND": "jax"}, "0.10.2", BOTH),
    ({"KERAS_BACKEND": "JAX", "XLA_FLAGS": "--xla_force_host_platform_device_count=2"}, "0.4.30",
     "--xla_force_host_platform_device_count=2 " + BOTH),
    ({"KERAS_BACKEND": "jax", "XLA_FLAGS": f"{SCHEDULER_FLAG}=true"}, "0.10.2",
     f"{SCHEDULER_FLAG}=true {TRITON_GEMM_FLAG}=false"),            # the user's value stays
    ({"KERAS_BACKEND": "jax", "XLA_FLAGS": f"{TRITON_GEMM_FLAG}=true"}, "0.10.2",
     f"{TRITON_GEMM_FLAG}=true {SCHEDULER_FLAG}=false"),
    ({"KERAS_BACKEND": "jax"}, "0.11.2", f"{TRITON_GEMM_FLAG}=false"),  # ran on the H200
    ({"KERAS_BACKEND": "tensorflow"}, "0.10.2", None),              # TensorFlow's XLA: slower
    ({}, "0.10.2", None),                                           # no backend named
    ({"KERAS_BACKEND": "jax"}, "0.4.29", None),                     # not known to be there
    ({"KERAS_BACKEND": "jax"}, "0.12.0", None),
    ({"KERAS_BACKEND": "jax"}, "nightly", None),
    ({"KERAS_BACKEND": "jax", "WIKIPAIRS_XLA_DEFAULTS": "0"}, "0.10.2", None),
])
def test_apply_defaults(environ, version, expected_flags):
    environ = dict(environ)
    before = environ.get("XLA_FLAGS")
    added = apply_defaults(environ, jaxlib_version=version)
    assert environ.get("XLA_FLAGS", None) == (expected_flags if added else before)
    assert bool(added) == (expected_flags is not None and expected_flags != before)


def test_version_ranges():
    assert known_flags("0.4.30") == known_flags("0.10.9") == BOTH.split()
    assert known_flags("0.11.0") == [f"{TRITON_GEMM_FLAG}=false"]
    assert known_flags("0.4.28") == known_flags("1.0.0") == []


CHILD = r'''
import json, os
import trainer                      # applies the defaults on import
import jax, jax.numpy as jnp        # XLA parses XLA_FLAGS here and aborts on an unknown flag
print("RESULT " + json.dumps({"xla_flags": os.environ.get("XLA_FLAGS", ""),
                              "sum": float(jnp.arange(4.0).sum())}))
'''


@pytest.mark.parametrize("backend", ["jax", "tensorflow"])
def test_the_installed_jaxlib_accepts_the_flags_the_trainer_sets(backend):
    """In a fresh process: importing the trainer package sets the flags for the JAX backend only,
    and XLA starts with them (an unknown flag would kill the process)."""
    pytest.importorskip("jax")
    env = {k: v for k, v in os.environ.items()
           if k not in ("XLA_FLAGS", "WIKIPAIRS_XLA_DEFAULTS")}
    env.update(KERAS_BACKEND=backend, JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES="")
    proc = subprocess.run([sys.executable, "-c", CHILD], cwd=REPO, env=env, text=True,
                          capture_output=True, timeout=300)
    r = result_json(proc.returncode, proc.stdout, proc.stderr)
    assert r["sum"] == 6.0
    for flag in (f"{SCHEDULER_FLAG}=false", f"{TRITON_GEMM_FLAG}=false"):
        assert (flag in r["xla_flags"]) == (backend == "jax" and flag in known_flags())
