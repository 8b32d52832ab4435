"""benchmarks/kernel_profile.py: kernel time by name and kind, and the device's busy time, from
a JAX profiler trace (a fake trace with known events, and a real one on CPU)."""
import sys
from pathlib import Path
from types import SimpleNamespace as NS

import pytest
from conftest import result_json

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import kernel_profile  # noqa: E402


def event(name, start_ms, end_ms):
    return NS(name=name, start_ns=int(start_ms * 1e6), end_ns=int(end_ms * 1e6),
              duration_ns=int((end_ms - start_ms) * 1e6), stats=[])


def test_a_fake_trace_sums_kernels_by_kind_and_the_busy_time_once():
    """Two streams overlap for 1 ms; the XLA Ops line (the same work by op) is not counted;
    host planes are ignored when a device plane exists."""
    gpu = NS(name="/device:GPU:0", lines=[
        NS(name="Stream #13(Compute)", events=[
            event("nvjet_sm90_tst_128x160_64x5_2x1_v_bz_NNT", 0, 4),
            event("cudnn_generated_fort_native_sdpa_sm90_flash_fprop", 4, 5),
            event("loop_select_fusion_24", 5, 6)]),
        NS(name="Stream #14(Compute)", events=[event("input_transpose_fusion_72", 5, 7)]),
        NS(name="XLA Ops", events=[event("fusion.1", 0, 7)])])
    host = NS(name="/host:CPU", lines=[NS(name="tf_XLAEigen/1", events=[event("dot", 0, 50)])])
    table = kernel_profile.summarize(NS(planes=[host, gpu]), wall_s=0.016, steps=2)
    assert table["source"] == "device kernels"
    assert table["kernel_ms_per_step"] == 4.0  # 8 ms of kernels over 2 steps
    assert table["busy_ms_per_step"] == 3.5  # 0..7 ms once
    assert table["wall_ms_per_step"] == 8.0
    kinds = {k: v["ms_per_step"] for k, v in table["kinds"].items()}
    assert kinds == {"matmul": 2.0, "attention": 0.5, "fusion (elementwise)": 0.5,
                     "copy/transpose": 1.0}
    assert [k["kind"] for k in table["top"]][:2] == ["matmul", "copy/transpose"]
    assert "matmul" in kernel_profile.format_table(table)


REAL_TRACE = r"""
import json, sys
sys.path.insert(0, "benchmarks")
import jax, jax.numpy as jnp
import kernel_profile
f = jax.jit(lambda x: jnp.tanh(x @ x).sum())
x = jnp.ones((256, 256))
f(x).block_until_ready()
table = kernel_profile.trace_kernels(lambda: [f(x).block_until_ready() for _ in range(2)], 2)
print("RESULT " + json.dumps(table))
"""


def test_a_real_trace_on_cpu_lists_the_host_xla_ops():
    """JAX's profiler and ProfileData as they are (a subprocess: no other profiler in it)."""
    import os
    import subprocess

    pytest.importorskip("jax")
    proc = subprocess.run([sys.executable, "-c", REAL_TRACE], text=True, capture_output=True,
                          cwd=Path(__file__).resolve().parents[1], timeout=300,
                          env=dict(os.environ, JAX_PLATFORMS="cpu", CUDA_VISIBLE_DEVICES=""))
    table = result_json(proc.returncode, proc.stdout, proc.stderr)
    assert table["source"] == "host XLA ops (no device plane)"
    assert table["kernel_ms_per_step"] > 0 and table["top"]
