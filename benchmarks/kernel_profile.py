"""Where a JAX training step spends its device time: a kernel table from a profiler trace.

    from kernel_profile import trace_kernels
    table = trace_kernels(lambda: model.fit(data, steps_per_epoch=3, verbose=0), steps=3)

`trace_kernels` runs `work` under `jax.profiler.trace` (CUPTI on a GPU), reads the trace back
with JAX's own `ProfileData` (no TensorBoard needed) and sums the kernel time on the device
planes ("/device:GPU:N", the streams' kernel lines), by kernel name and by kind: matrix products
(cuBLAS/cuBLASLt, nvjet, CUTLASS, XLA's Triton GEMMs), attention (cuDNN fused attention), copies
and transposes, reductions, and XLA's other fusions (elementwise: layer norm, GELU, dropout and
its random bits, optimizer updates). `busy` is the union of kernel intervals over the traced wall
time: what is left is the device waiting for the host. Per step figures divide by `steps`.

Used by train_throughput.py --profile; no device-specific code beyond JAX's profiler. On a CPU
there are no device planes: the table says so and holds the host XLA ops instead.
"""
from __future__ import annotations

import glob
import re
import tempfile
import time

# kernel name pattern -> kind; the first match wins (names are lower-cased first)
KINDS = (
    ("attention", re.compile(r"fmha|sdpa|flash|attention|cudnn_generated")),
    ("matmul", re.compile(r"gemm|xmma|nvjet|cutlass|gemv|sm\d+_.*_tn|triton_.*dot|cublas")),
    ("copy/transpose", re.compile(r"memcpy|memset|copy|transpose|concatenate|dynamic_update")),
    ("reduction", re.compile(r"reduce|reduction|scatter")),
    ("rng", re.compile(r"rng|threefry|philox|random")),
    ("fusion (elementwise)", re.compile(r"fusion|loop_|input_|wrapped_|triton")),
)
SKIP_LINES = ("XLA Modules", "XLA Ops", "Launch Stats", "Steps", "Source", "XLA TraceMe",
              "TensorFlow Name Scope", "TensorFlow Ops", "Framework Name Scope",
              "Framework Ops", "Host Threads")


def kind_of(name: str) -> str:
    lowered = name.lower()
    for kind, pattern in KINDS:
        if pattern.search(lowered):
            return kind
    return "other"


def _union_ns(intervals: list[tuple[int, int]]) -> int:
    total, end = 0, None
    for start, stop in sorted(intervals):
        if end is None or start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total


def summarize(profile, wall_s: float, steps: int, top: int = 25) -> dict:
    """A `jax._src.profiler.ProfileData` -> {kinds, top kernels, busy}, in ms/step. (Kernel
    names only: on the H200 the events' op-name stat held the module, not the layer scope.)"""
    device_planes = [p for p in profile.planes if p.name.startswith("/device:")]
    if device_planes:
        source = "device kernels"
        lines = [line for plane in device_planes for line in plane.lines
                 if line.name not in SKIP_LINES and not line.name.startswith("XLA")]
    else:  # CPU: the host's XLA ops are the nearest thing
        source = "host XLA ops (no device plane)"
        lines = [line for plane in profile.planes for line in plane.lines
                 if line.name.startswith("tf_XLA")]
    by_name: dict[str, list] = {}
    intervals: list[tuple[int, int]] = []
    for line in lines:
        for event in line.events:
            entry = by_name.setdefault(event.name, [0, 0])
            entry[0] += event.duration_ns
            entry[1] += 1
            intervals.append((event.start_ns, event.end_ns))
    total_ns = sum(ns for ns, _ in by_name.values()) or 1
    kinds: dict[str, float] = {}
    for name, (ns, _) in by_name.items():
        kinds[kind_of(name)] = kinds.get(kind_of(name), 0) + ns
    per_step = lambda ns: round(ns / 1e6 / steps, 3)  # noqa: E731
    ranked = sorted(by_name.items(), key=lambda kv: -kv[1][0])
    return {
        "source": source, "steps": steps, "wall_ms_per_step": round(1000 * wall_s / steps, 3),
        "kernel_ms_per_step": per_step(total_ns),
        "busy_ms_per_step": per_step(_union_ns(intervals)) if device_planes else None,
        "kinds": {k: {"ms_per_step": per_step(ns), "share": round(ns / total_ns, 4)}
                  for k, ns in sorted(kinds.items(), key=lambda kv: -kv[1])},
        "top": [{"name": name[:160], "kind": kind_of(name), "ms_per_step": per_step(ns),
                 "calls_per_step": round(calls / steps, 2), "share": round(ns / total_ns, 4)}
                for name, (ns, calls) in ranked[:top]],
    }


def trace_kernels(work, steps: int, top: int = 25) -> dict:
    """Run `work()` (which must finish its device work before returning, e.g. a `fit` whose
    logs are read) under the JAX profiler and summarize it; `steps`: how many steps it ran."""
    import jax
    from jax._src.profiler import ProfileData

    with tempfile.TemporaryDirectory(prefix="kernel_profile_") as logdir:
        start = time.perf_counter()
        with jax.profiler.trace(logdir):
            work()
        wall_s = time.perf_counter() - start
        paths = glob.glob(f"{logdir}/**/*.xplane.pb", recursive=True)
        if not paths:
            return {"source": "no trace written", "steps": steps}
        return summarize(ProfileData.from_file(paths[0]), wall_s, steps, top)


def format_table(table: dict) -> str:
    if "kinds" not in table:
        return f"  profile: {table['source']}"
    busy = table["busy_ms_per_step"]
    lines = [f"  profile ({table['source']}, {table['steps']} steps): wall "
             f"{table['wall_ms_per_step']:.1f} ms/step, kernels {table['kernel_ms_per_step']:.1f}"
             + (f", device busy {busy:.1f}" if busy is not None else "")]
    for kind, v in table["kinds"].items():
        lines.append(f"    {kind:<22} {v['ms_per_step']:9.2f} ms/step {100 * v['share']:5.1f}%")
    lines.append("    top kernels (ms/step, calls/step, kind):")
    for k in table["top"]:
        lines.append(f"    {k['ms_per_step']:8.2f} {k['calls_per_step']:7.1f}  {k['kind']:<14} "
                     f"{k['name'][:100]}")
    return "\n".join(lines)
