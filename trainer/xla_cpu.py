"""XLA's CPU settings for the JAX backend, applied before JAX starts (`apply_defaults`).

XLA:CPU's concurrency-optimized scheduler runs independent ops of a step at the same time. Each
of them (YNNPACK's matrix products above all) splits its own work over the same thread pool, so
on a machine with few cores they take the cores from one another: in a profile of the `small`
towers' training step on 2 cores, the big feed-forward products ran at about one core's speed
(~58 GFLOP/s against 125 for the same product alone). With the scheduler off the step took
11.3 s instead of 12.7 s (benchmarks/README.md).
The flag only changes how XLA:CPU orders a step's ops (not what they compute); GPU and TPU
compilations do not read it.

XLA aborts the process on an XLA_FLAGS entry it does not know, so the flag is added only for
jaxlib 0.4.30 (wikipairs' lowest jax) to 0.10.x (its name is in the libraries of 0.4.30, 0.4.38,
0.5.3, 0.6.2 and 0.10.2; test_xla_cpu starts the installed one with it), only when the
backend is JAX (TensorFlow's XLA reads XLA_FLAGS too, and its step got slower with it), and never
over a setting of the same flag already in XLA_FLAGS; WIKIPAIRS_XLA_CPU_DEFAULTS=0 turns it off.
Importing this module imports no JAX.
"""
from __future__ import annotations

import os
import re
from importlib import metadata

SCHEDULER_FLAG = "--xla_cpu_enable_concurrency_optimized_scheduler"
DEFAULT_FLAGS = (f"{SCHEDULER_FLAG}=false",)
OPT_OUT = "WIKIPAIRS_XLA_CPU_DEFAULTS"  # "0": XLA_FLAGS left as it is
# jaxlib releases whose XLA knows DEFAULT_FLAGS (lowest inclusive, highest exclusive)
KNOWN_JAXLIB = ((0, 4, 30), (0, 11, 0))


def _version_tuple(version: str) -> tuple[int, ...] | None:
    match = re.match(r"(\d+)\.(\d+)\.(\d+)", version)
    return tuple(int(part) for part in match.groups()) if match else None


def jaxlib_knows_flags(version: str | None = None) -> bool:
    """Whether the installed jaxlib (or `version`) is one whose XLA knows DEFAULT_FLAGS."""
    if version is None:
        try:
            version = metadata.version("jaxlib")
        except metadata.PackageNotFoundError:
            return False
    parsed = _version_tuple(version)
    return parsed is not None and KNOWN_JAXLIB[0] <= parsed < KNOWN_JAXLIB[1]


def apply_defaults(environ=None, jaxlib_version: str | None = None) -> list[str]:
    """Add DEFAULT_FLAGS to environ["XLA_FLAGS"] when KERAS_BACKEND is jax and the jaxlib knows
    them, unless environ[OPT_OUT] is "0"; a flag the user set (either value) is left as it is.
    Returns the flags added. Call it before JAX's first computation (XLA reads XLA_FLAGS once,
    when the backend starts)."""
    environ = os.environ if environ is None else environ
    if environ.get(OPT_OUT) == "0":
        return []
    if environ.get("KERAS_BACKEND", "").strip().lower() != "jax":
        return []
    if not jaxlib_knows_flags(jaxlib_version):
        return []
    current = environ.get("XLA_FLAGS", "")
    added = [flag for flag in DEFAULT_FLAGS if flag.split("=")[0] not in current]
    if added:
        environ["XLA_FLAGS"] = " ".join([current.strip(), *added]).strip()
    return added
