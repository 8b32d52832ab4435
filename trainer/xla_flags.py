"""XLA settings for the JAX backend, applied before JAX starts (`apply_defaults`).

- CPU: XLA:CPU's concurrency-optimized scheduler runs independent ops of a step at the same
  time. Each of them (YNNPACK's matrix products above all) splits its own work over the same
  thread pool, so on a machine with few cores they take the cores from one another: in a profile
  of the `small` towers' training step on 2 cores, the big feed-forward products ran at about one
  core's speed (~58 GFLOP/s against 125 for the same product alone). With the scheduler off the
  step took 11.3 s instead of 12.7 s (benchmarks/README.md).
- GPU: XLA:GPU's Triton GEMMs off (the matrix products go to cuBLAS). On an H200, `base` bf16 at
  batch 256 trained at 2,014 examples/s with it against 1,929 without (one machine, minutes
  apart; benchmarks/README.md, "A third H200: XLA flags and a stacked projection").
Each flag only changes how XLA runs a step (not what it computes); the other platforms'
compilations do not read it.

XLA aborts the process on an XLA_FLAGS entry it does not know, so each flag is added only for the
jaxlib releases known to have it (`FLAGS`: the scheduler flag's name is in the libraries of
0.4.30, 0.4.38, 0.5.3, 0.6.2 and 0.10.2, the Triton flag's in 0.4.30 and 0.10.2, and 0.11.2 ran
with it on the H200; test_xla_flags starts the installed one with them), only when the backend is
JAX (TensorFlow's XLA reads XLA_FLAGS too, and its CPU step got slower with the scheduler flag),
and never over a setting of the same flag already in XLA_FLAGS; WIKIPAIRS_XLA_DEFAULTS=0 turns
them off. Importing this module imports no JAX.
"""
from __future__ import annotations

import os
import re
from importlib import metadata

SCHEDULER_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler"
TRITON_GEMM_FLAG = "--xla_gpu_enable_triton_gemm"
# flag=value, and the jaxlib releases whose XLA knows the flag (lowest inclusive, highest exclusive)
FLAGS = (
    (f"{SCHEDULER_FLAG}=false", (0, 4, 30), (0, 11, 0)),
    (f"{TRITON_GEMM_FLAG}=false", (0, 4, 30), (0, 12, 0)),
)
OPT_OUT = "WIKIPAIRS_XLA_DEFAULTS"  # "0": XLA_FLAGS left as it is


def _version_tuple(version: str) -> tuple[int, ...] | None:
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    return tuple(int(part) for part in match.groups()) if match else None


def _installed_jaxlib() -> str | None:
    try:
        return metadata.version("jaxlib")
    except metadata.PackageNotFoundError:
        return None


def known_flags(version: str | None = None) -> list[str]:
    """The entries of FLAGS (flag=value) that the installed jaxlib (or `version`) knows."""
    parsed = _version_tuple(version or _installed_jaxlib() or "")
    if parsed is None:
        return []
    return [flag for flag, lowest, highest in FLAGS if lowest <= parsed < highest]


def apply_defaults(environ=None, jaxlib_version: str | None = None) -> list[str]:
    """Add the known FLAGS to environ["XLA_FLAGS"] when KERAS_BACKEND is jax, unless
    environ[OPT_OUT] is "0"; a flag the user set (either value) is left as it is.
    Returns the flags added. Call it before JAX's first computation (XLA reads XLA_FLAGS once,
    when the backend starts)."""
    environ = os.environ if environ is None else environ
    if environ.get(OPT_OUT) == "0":
        return []
    if environ.get("KERAS_BACKEND", "").strip().lower() != "jax":
        return []
    current = environ.get("XLA_FLAGS", "")
    added = [flag for flag in known_flags(jaxlib_version) if flag.split("=")[0] not in current]
    if added:
        environ["XLA_FLAGS"] = " ".join([current.strip(), *added]).strip()
    return added
