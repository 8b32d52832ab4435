"""Benchmark: two-tower training throughput (examples/s) and model FLOPs utilization (MFU).

    .venv/bin/python benchmarks/train_throughput.py --config tiny --backend jax
    .venv/bin/python benchmarks/train_throughput.py --config base --batch 8 --steps 3 --json
    KERAS_BACKEND=jax python benchmarks/train_throughput.py --config base --bf16 --batch 256 --steps 50
    .venv/bin/python benchmarks/train_throughput.py --config small --batch 256 --chunk-size 32
    .venv/bin/python benchmarks/train_throughput.py --config small --steps 5 --reference pytorch

The backend is --backend, else $KERAS_BACKEND, else tensorflow; KERAS_BACKEND is set before
keras is imported. With jax nothing from TensorFlow is imported (only jax, keras and numpy are
needed; `--no-tensorflow` makes `import tensorflow` fail to prove it), and the trainer is imported
as `wikipairs.trainer` when installed, else from this checkout's `trainer/`.

What it runs: `TwoTower(--config)` compiled with AdamW, trained by `model.fit` on one synthetic
batch repeated (int32 ids, [CLS] ... [SEP], no padding, the static shapes [batch, Lq] and
[batch, Ld]; a tf.data `from_tensors(...).repeat()` on tensorflow, a Python generator on jax).
`--warmup` steps (one `fit` call: tracing/compilation) come first, then one `fit` call of
`--steps` steps is timed, wall clock, including the final device sync when fit returns its logs.
`--bf16` sets `keras.mixed_precision.set_global_policy("mixed_bfloat16")` before the model is
built (float32 variables, bfloat16 compute). `--chunk-size N`: GradCache steps (trainer.gradcache,
`wikipairs train --chunk-size`): the same loss and gradients with the activations of N rows at a
time, for one more forward pass of the towers; the FLOPs and MFU below count the model's FLOPs
(6 per parameter and token), not the recomputed forward pass. Memory: `peak_rss_mb` is the
process's peak resident set (VmHWM, else ru_maxrss), `rss_before_fit_mb` its resident set after the model
was built, so their difference is what training added (activations, optimizer state, compiled
code); one configuration per process, so peaks do not carry over.

FLOPs per training example (forward + backward, matmuls only; the PaLM / Chinchilla convention):

    transformer:  sum over the two towers t (query: L = Lq, doc: L = Ld) of
                      6 * N_t * L                  N_t: the tower's non-embedding encoder
                                                   parameters (attention, feed-forward, norms;
                                                   not the token / position embeddings)
                    + 12 * layers * hidden * L^2   attention scores and weighted values
                    + 6 * P_t                      the [CLS] projection (P_t parameters), once
                  + 6 * B * D                      the in-batch score matrix (2*B*B*D forward,
                                                   x3 with backward, / B examples)
                  with [CLS] pooling the last layer runs at position 0 only (but its keys and
                  values): its other parameters count 6 * N_last once, its attention 12*hidden*L
    bow:          sum over the towers of 6 * P_mlp_t (the two tanh layers on the pooled
                  embedding) + 6 * B * D; embedding look-ups and mean pooling count 0.

`--xla-flops` (jax) also reports XLA's cost analysis of the loss gradient (every op): the formula
should be a little below it (base: 0.993 of it). `--model-opt KEY=VALUE` overrides a ModelConfig
field. benchmarks/gpu_mfu.sh runs the GPU sweep.

`--reference pytorch`: before the Keras run, the same training with PyTorch + transformers, the
obvious alternative, and the ratio wikipairs/reference of the examples/s (`ratio` in the JSON,
the reference's own figures under `reference`). Two `transformers.BertModel` towers (no pooler)
built from a local `BertConfig` of the config's sizes (layers, hidden, heads, intermediate, GELU,
vocabulary, max_positions, dropouts, layer-norm epsilon; never downloaded: HF_HUB_OFFLINE=1),
type_vocab_size 1 (BERT's token-type row, the only extra weights: hidden per tower), the
attention mask of the non-[PAD] ids, Linear(embedding_dim) of the [CLS] state, the same in-batch
softmax (scores / temperature in float32, cross-entropy against the diagonal; normalize and
shared_towers honoured), torch.optim.AdamW(fused=True) with keras.optimizers.AdamW(1e-4)'s
settings (weight decay 0.004, betas 0.9/0.999, eps 1e-7), train mode (dropout on), the same synthetic batch
(int64), the same --warmup then --steps, eager PyTorch with transformers' default attention
(sdpa), `torch.set_num_threads` = the cores this process may use (`os.sched_getaffinity`), which
is also what TensorFlow's and XLA's CPU thread pools take by default. `--bf16`: bfloat16
autocast (float32 weights, like mixed_bfloat16). It runs on CUDA when torch sees a GPU. It runs in
a subprocess of this script (`--reference-child`), so that TensorFlow's or XLA's thread pools
and the Keras run's memory are not in the process that PyTorch's OpenMP pool runs in (and the
other way round), and it imports no TensorFlow (made unimportable there; `tensorflow_imported` in its JSON). Without torch or
transformers it stops with one line before the Keras run. Not with bow or --chunk-size.

MFU = FLOPs per example x examples/s / peak. Peak (dense TFLOPS, per device): --peak-tflops, else
a table by device kind for bf16 (--bf16) or TF32 (float32 matmuls run as TF32 by default on
JAX/XLA and TensorFlow GPUs): H100 SXM / H200 989 / 495, H100 PCIe 756 / 378, A100 312 / 156.
On a CPU nothing is measured: MFU is n/a unless --peak-tflops is given.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CONFIGS = ("tiny", "small", "base", "bow")
BACKENDS = ("tensorflow", "jax")
REFERENCES = ("pytorch",)
NO_TF_MODULES = ("tensorflow", "tensorflow_text", "tf_keras", "tensorboard")

# device kind substring (lower case) -> (bf16 dense TFLOPS, TF32 dense TFLOPS); first match wins
PEAK_TFLOPS = (
    ("h100 pcie", (756.0, 378.0)),
    ("h100", (989.4, 494.7)),   # H100 SXM5 (also "H100 80GB HBM3")
    ("h200", (989.4, 494.7)),
    ("gh200", (989.4, 494.7)),
    ("a100", (312.0, 156.0)),
)
FORMULA = ("FLOPs/example = sum_towers[6*N_nonemb*L + 12*layers*hidden*L^2 + 6*P_proj] "
           "+ 6*B*D (in-batch scores); [CLS] pooling: the last layer's parameters but its "
           "keys' and values' and its attention at 1 position")
BOW_FORMULA = "FLOPs/example = sum_towers[6*P_mlp] + 6*B*D (in-batch scores)"


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", choices=CONFIGS, default="tiny")
    p.add_argument("--backend", choices=BACKENDS, default=None,
                   help="Keras backend (default: $KERAS_BACKEND, else tensorflow)")
    p.add_argument("--batch", type=int, default=32, help="global batch size (default 32)")
    p.add_argument("--steps", type=int, default=20, help="timed training steps (default 20)")
    p.add_argument("--warmup", type=int, default=2,
                   help="untimed steps first, compilation included (default 2)")
    p.add_argument("--bf16", action="store_true", help="mixed_bfloat16 policy")
    p.add_argument("--chunk-size", type=int, default=None, metavar="N",
                   help="GradCache steps embedding N rows at a time (divides --batch)")
    p.add_argument("--peak-tflops", type=float, default=None,
                   help="peak dense TFLOPS of the device for MFU (default: table by device kind)")
    p.add_argument("--vocab-size", type=int, default=32000)
    p.add_argument("--query-len", type=int, default=None, help="Lq (default: config, 64)")
    p.add_argument("--doc-len", type=int, default=None, help="Ld (default: config, 288)")
    p.add_argument("--model-opt", action="append", default=[], metavar="KEY=VALUE",
                   help="a ModelConfig override, as `wikipairs train --model-opt` (VALUE is "
                        "JSON, else a string), e.g. attention_dropout=0; repeatable")
    p.add_argument("--jit", choices=("auto", "on", "off"), default="auto",
                   help="model.compile(jit_compile=...) (default auto: XLA where Keras can)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", nargs="?", const="-", default=None, metavar="PATH",
                   help="also write the result as JSON to PATH (no PATH: to stdout)")
    p.add_argument("--no-tensorflow", action="store_true",
                   help="make `import tensorflow` fail (proves the jax path needs no TF)")
    p.add_argument("--xla-flops", action="store_true",
                   help="jax: also report XLA's own FLOP count of the loss gradient (every op, "
                        "not only matmuls): a check of the formula (one more compilation)")
    p.add_argument("--profile", type=int, default=0, metavar="STEPS",
                   help="jax: trace STEPS more steps with JAX's profiler and print where the "
                        "device time goes (kernel kinds, top kernels; kernel_profile.py)")
    p.add_argument("--dropout-rng", choices=("hash", "philox", "threefry"), default="hash",
                   help="jax: dropout masks from an index hash fused into their use (default, "
                        "trainer.fast_layers), XLA's Philox bits, or Keras' own jax.random "
                        "(threefry), to compare; tensorflow: the hash under XLA (--jit on), "
                        "else Keras' own")
    p.add_argument("--attention", choices=("fused", "unblocked", "blocked", "keras"),
                   default="fused",
                   help="jax: attention with key lengths (default, trainer.fast_layers: in "
                        "blocks of rows on a CPU, cuDNN on a GPU), the same without the CPU's "
                        "blocks (XLA's dot_product_attention; Keras' explicit path with dropout), "
                        "in blocks of rows on any device (to measure them on a GPU), "
                        "or Keras' MultiHeadAttention path with a [B, L, L] mask")
    p.add_argument("--block-elements", type=int, default=0, metavar="N",
                   help="jax: scores per block of the blocked attention (default "
                        "trainer.fast_layers.BLOCK_ELEMENTS, 2^21, sized for a CPU's caches)")
    p.add_argument("--xla-flags", default="", metavar="FLAGS",
                   help="more XLA_FLAGS for this run, as --xla-flags='--a=x --b=y' (set before "
                        "JAX starts; XLA aborts on a flag its version does not know)")
    p.add_argument("--no-xla-defaults", action="store_true",
                   help="jax: leave XLA_FLAGS as it is (without the trainer's XLA:CPU scheduler "
                        "and XLA:GPU Triton GEMM settings, trainer/xla_flags.py)")
    p.add_argument("--reference", choices=REFERENCES, default=None,
                   help="also train the same towers with PyTorch + transformers (BertModel) in a "
                        "subprocess and print wikipairs/reference examples/s")
    p.add_argument("--reference-child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.reference and args.config == "bow":
        p.error("--reference pytorch needs a Transformer config (tiny, small, base), not bow")
    if args.reference and args.chunk_size is not None:
        p.error("--reference pytorch compares plain steps: leave out --chunk-size")
    if args.batch < 1 or args.steps < 1 or args.warmup < 1:
        p.error("--batch, --steps and --warmup must be >= 1")
    if args.chunk_size is not None and (args.chunk_size < 1 or args.batch % args.chunk_size):
        p.error("--chunk-size must be >= 1 and divide --batch")
    return args


def import_trainer():
    """(TwoTower, ModelConfig, where): the installed wikipairs.trainer, else this checkout's."""
    try:
        from wikipairs.trainer.configs import ModelConfig
        from wikipairs.trainer.model import TwoTower
    except ImportError:
        sys.path.insert(0, str(REPO))
        from trainer.configs import ModelConfig
        from trainer.model import TwoTower
    module = TwoTower.__module__
    return TwoTower, ModelConfig, f"{module} ({sys.modules[module].__file__})"


def import_config():
    """ModelConfig alone (no keras, no TensorFlow): for the PyTorch reference."""
    try:
        from wikipairs.trainer.configs import ModelConfig
    except ImportError:
        sys.path.insert(0, str(REPO))
        from trainer.configs import ModelConfig
    return ModelConfig


def model_config(args, ModelConfig):
    """The ModelConfig of --config with --vocab-size, --query-len, --doc-len and --model-opt."""
    try:
        args.model_overrides = ModelConfig.parse_overrides(args.model_opt)
    except ValueError as e:
        raise SystemExit(f"train_throughput: {e}") from None
    overrides = {"vocab_size": args.vocab_size, **args.model_overrides}
    if args.query_len:
        overrides["max_query_len"] = args.query_len
    if args.doc_len:
        overrides["max_doc_len"] = args.doc_len
    try:
        return ModelConfig.from_name(args.config, **overrides)
    except (TypeError, ValueError) as e:
        raise SystemExit(f"train_throughput: bad --model-opt: {e}") from None


def flops_per_example(model, batch: int, lq: int, ld: int) -> dict:
    """Training FLOPs per example by the module docstring's formula, with its terms."""
    import numpy as np

    c = model.config

    def count(weights) -> int:
        return int(sum(np.prod(w.shape) for w in weights))

    terms = {}
    towers = (("query", model.query_tower, lq), ("doc", model.doc_tower, ld))
    for name, tower, length in towers:
        if c.encoder == "transformer":
            enc = tower.encoder
            embeddings = count(enc.token_embedding.weights) + count([enc.position_embeddings])
            n_nonemb = count(enc.weights) - embeddings
            proj = count(tower.projection.weights)
            # [CLS] pooling: the last layer runs its keys and values at every position, the
            # rest (query, output, feed-forward, norms) and the attention at position 0 only
            last = enc.blocks[-1] if c.pooling == "cls" else None
            first_only = 0 if last is None else count(last.weights) - count(
                last.attention._key_dense.weights + last.attention._value_dense.weights)
            full_layers = c.num_layers - (last is not None)
            terms[f"{name}_dense"] = 6 * (n_nonemb - first_only) * length + 6 * first_only
            terms[f"{name}_attention"] = (12 * full_layers * c.hidden_size * length ** 2
                                          + 12 * (last is not None) * c.hidden_size * length)
            terms[f"{name}_projection"] = 6 * proj
            terms[f"{name}_nonembedding_params"] = n_nonemb
        else:
            enc = tower.encoder
            mlp = count(enc.hidden.weights) + count(enc.output_layer.weights)
            terms[f"{name}_mlp"] = 6 * mlp
            terms[f"{name}_mlp_params"] = mlp
    terms["in_batch_scores"] = 6 * batch * c.embedding_dim
    total = sum(v for k, v in terms.items() if not k.endswith("_params"))
    return {"total": total, "terms": terms,
            "formula": FORMULA if c.encoder == "transformer" else BOW_FORMULA}


def xla_flops_per_example(model, batch: dict) -> float:
    """XLA's cost analysis of value_and_grad(in-batch loss) w.r.t. the trainable weights, per
    example (jax backend, dropout off). XLA counts every op, elementwise ones included, so the
    matmul-only formula should come out a little below it (measured on CPU: base 0.993, tiny
    0.966, bow 0.875 of it): a formula above it would inflate the MFU. Counted with the CPU's
    blocked attention off (the same function): XLA counts the body of its loop over blocks once,
    not once per block."""
    import jax

    trainable = [v.value for v in model.trainable_variables]
    other = [v.value for v in model.non_trainable_variables]
    attention = sys.modules[type(model).__module__.rsplit(".", 1)[0] + ".fast_layers"].SelfAttention

    def loss(trainable, other, x):
        y_pred, _ = model.stateless_call(trainable, other, x, training=False)
        return model.compute_loss(y_pred=y_pred)

    blocked, attention.use_blocked = attention.use_blocked, False
    try:
        cost = jax.jit(jax.value_and_grad(loss)).lower(trainable, other, batch).compile()
    finally:
        attention.use_blocked = blocked
    cost = cost.cost_analysis()
    if isinstance(cost, (list, tuple)):  # older jax: one dict per computation
        cost = cost[0]
    return float(cost["flops"]) / len(next(iter(batch.values())))


def device_info(backend: str) -> dict:
    """{"platform": "gpu"|"cpu"|..., "kind": device name, "count": devices used}."""
    if backend == "jax":
        import jax

        devices = jax.devices()
        return {"platform": devices[0].platform, "kind": devices[0].device_kind,
                "count": len(devices)}
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    if gpus:
        details = tf.config.experimental.get_device_details(gpus[0])
        return {"platform": "gpu", "kind": details.get("device_name", "GPU"), "count": 1}
    return {"platform": "cpu", "kind": platform.processor() or platform.machine(), "count": 1}


def peak_tflops(device: dict, bf16: bool, override: float | None):
    """(peak TFLOPS for the devices used, where it came from) or (None, why not)."""
    if override is not None:
        return override * device["count"], "--peak-tflops"
    if device["platform"] != "gpu":
        return None, f"no peak known for {device['platform']}; pass --peak-tflops"
    kind = device["kind"].lower()
    for key, (bf16_peak, tf32_peak) in PEAK_TFLOPS:
        if key in kind:
            peak = bf16_peak if bf16 else tf32_peak
            return peak * device["count"], f"table: {key} {'bf16' if bf16 else 'tf32'} dense"
    return None, f"no peak known for {device['kind']!r}; pass --peak-tflops"


def _rss_mb() -> dict:
    """{"now": resident set now, "peak": the process's peak resident set} in MB (Linux)."""
    import resource

    now = peak = None
    try:
        with open("/proc/self/statm") as f:
            now = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
        with open("/proc/self/status") as f:  # VmHWM: this process's peak since its exec
            # (ru_maxrss can carry the parent's peak into a subprocess)
            peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024
    except (OSError, ValueError, IndexError, StopIteration):
        pass
    if peak is None:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KB on Linux
    return {"now": None if now is None else round(now, 1), "peak": round(peak, 1)}


def _load_average():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        return None


def synthetic_batch(batch: int, lq: int, ld: int, vocab_size: int, seed: int) -> dict:
    """int32 ids [CLS] random pieces [SEP], every position a real token (no padding)."""
    import numpy as np

    rng = np.random.default_rng(seed)

    def ids(length):
        x = rng.integers(5, vocab_size, (batch, length), dtype=np.int32)
        x[:, 0], x[:, -1] = 1, 2
        return x

    return {"query_ids": ids(lq), "doc_ids": ids(ld)}


def dataset(backend: str, batch: dict):
    if backend == "tensorflow":
        import tensorflow as tf

        return tf.data.Dataset.from_tensors(batch).repeat()

    def forever():
        while True:
            yield (batch,)  # (inputs,): no targets, TwoTower.compute_loss needs none

    return forever()


def run(args) -> dict:
    backend = args.backend or os.environ.get("KERAS_BACKEND") or "tensorflow"
    if backend not in BACKENDS:
        raise SystemExit(f"train_throughput: unknown backend {backend!r} ({', '.join(BACKENDS)})")
    os.environ["KERAS_BACKEND"] = backend
    if args.no_xla_defaults:  # else the trainer package adds its XLA flags on import
        os.environ["WIKIPAIRS_XLA_DEFAULTS"] = "0"
    if args.xla_flops and backend != "jax":
        raise SystemExit("train_throughput: --xla-flops needs --backend jax")
    if args.profile and backend != "jax":
        raise SystemExit("train_throughput: --profile needs --backend jax")
    if args.no_tensorflow:
        if backend == "tensorflow":
            raise SystemExit("train_throughput: --no-tensorflow needs --backend jax")
        for name in NO_TF_MODULES:
            sys.modules[name] = None  # `import tensorflow` now raises ImportError
    if args.xla_flags:
        os.environ["XLA_FLAGS"] = f"{os.environ.get('XLA_FLAGS', '')} {args.xla_flags}".strip()
    # the trainer first, as `wikipairs train` imports it: its XLA_FLAGS before JAX starts
    TwoTower, ModelConfig, trainer_file = import_trainer()
    import keras
    import numpy as np

    if keras.backend.backend() != backend:
        raise SystemExit(f"train_throughput: keras runs {keras.backend.backend()!r}, not "
                         f"{backend!r} (keras was imported before KERAS_BACKEND was set)")
    if args.bf16:
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    if backend == "tensorflow":
        keras.utils.set_random_seed(args.seed)
    else:  # keras.utils.set_random_seed would import TensorFlow when it is installed
        np.random.seed(args.seed)
    fast_layers = sys.modules[TwoTower.__module__.rsplit(".", 1)[0] + ".fast_layers"]
    fast_layers.Dropout.rng = args.dropout_rng
    fast_layers.SelfAttention.use_fused = args.attention != "keras"
    fast_layers.SelfAttention.use_blocked = {"fused": True, "blocked": "always"}.get(
        args.attention, False)
    if args.block_elements > 0:
        fast_layers.BLOCK_ELEMENTS = args.block_elements
    config = model_config(args, ModelConfig)
    lq, ld = config.max_query_len, config.max_doc_len

    model = TwoTower(config)
    model.build()
    jit = {"auto": "auto", "on": True, "off": False}[args.jit]
    model.compile(optimizer=keras.optimizers.AdamW(1e-4), jit_compile=jit)
    model.chunk_size = args.chunk_size
    batch = synthetic_batch(args.batch, lq, ld, config.vocab_size, args.seed)
    data = dataset(backend, batch)
    rss_before = _rss_mb()["now"]

    start = time.perf_counter()
    model.fit(data, steps_per_epoch=args.warmup, epochs=1, verbose=0, shuffle=False)
    warmup_s = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    history = model.fit(data, steps_per_epoch=args.steps, epochs=1, verbose=0, shuffle=False)
    loss = float(history.history["loss"][-1])  # fit has synced the device by now
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu

    profile = None
    if args.profile:
        from kernel_profile import trace_kernels

        profile = trace_kernels(lambda: model.fit(data, steps_per_epoch=args.profile, epochs=1,
                                                  verbose=0, shuffle=False).history,
                                steps=args.profile)
    flops = flops_per_example(model, args.batch, lq, ld)
    xla_flops = None
    if args.xla_flops:
        xla_flops = xla_flops_per_example(model, batch)
    device = device_info(backend)
    peak, peak_source = peak_tflops(device, args.bf16, args.peak_tflops)
    examples_per_s = args.batch * args.steps / elapsed
    achieved = flops["total"] * examples_per_s / 1e12
    tf_loaded = sys.modules.get("tensorflow") is not None
    return {
        "config": args.config, "backend": backend, "keras": keras.__version__,
        "policy": keras.mixed_precision.global_policy().name,
        "jit_compile": args.jit, "model_overrides": args.model_overrides,
        "chunk_size": args.chunk_size, "rss_before_fit_mb": rss_before,
        "peak_rss_mb": _rss_mb()["peak"], "batch": args.batch, "query_len": lq, "doc_len": ld,
        "vocab_size": config.vocab_size, "steps": args.steps, "warmup_steps": args.warmup,
        "parameters": int(model.count_params()),
        "device": device, "warmup_s": round(warmup_s, 3), "timed_s": round(elapsed, 3),
        "timed_cpu_s": round(cpu, 3), "load_average": _load_average(),
        "step_s": round(elapsed / args.steps, 5),
        "examples_per_s": round(examples_per_s, 2),
        "gflops_per_example": round(flops["total"] / 1e9, 4), "flops_terms": flops["terms"],
        "formula": flops["formula"], "achieved_tflops": round(achieved, 4),
        "xla_gflops_per_example": None if xla_flops is None else round(xla_flops / 1e9, 4),
        "peak_tflops": peak, "peak_source": peak_source,
        "mfu": None if peak is None else round(achieved / peak, 5),
        "final_loss": round(loss, 4), "tensorflow_imported": tf_loaded,
        "dropout_rng": (args.dropout_rng if backend == "jax" else "hash"
                        if model.jit_compile and args.dropout_rng == "hash" else "keras"),
        "attention": args.attention if backend == "jax" else "keras", "profile": profile,
        "block_elements": fast_layers.BLOCK_ELEMENTS if backend == "jax" else None,
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "trainer": trainer_file, "python": platform.python_version(),
    }


def cpu_threads() -> int:
    """The cores this process may run on: TensorFlow's intra-op pool and XLA's CPU client size
    themselves to them by default, and the PyTorch reference is given as many threads."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def reference_argv(args) -> list[str]:
    """The command line of the reference subprocess: this script, the same sizes and steps."""
    argv = [sys.executable, str(Path(__file__).resolve()), "--reference-child",
            "--config", args.config, "--batch", str(args.batch), "--steps", str(args.steps),
            "--warmup", str(args.warmup), "--vocab-size", str(args.vocab_size),
            "--seed", str(args.seed)]
    if args.query_len:
        argv += ["--query-len", str(args.query_len)]
    if args.doc_len:
        argv += ["--doc-len", str(args.doc_len)]
    if args.bf16:
        argv.append("--bf16")
    for opt in args.model_opt:
        argv += ["--model-opt", opt]
    return argv


def check_reference_installed(reference: str) -> None:
    """One line and exit 2 when torch or transformers is missing (before the Keras run)."""
    import importlib.util

    missing = [m for m in ("torch", "transformers") if importlib.util.find_spec(m) is None]
    if missing:
        print(f"train_throughput: --reference {reference} needs {' and '.join(missing)} "
              f"(the dev extra: pip install -e '.[dev]'; torch CPU is enough)", file=sys.stderr)
        raise SystemExit(2)


def run_reference_subprocess(args) -> dict:
    """Runs `run_reference` in a fresh process (no TensorFlow, JAX or Keras thread pools in it,
    none of the Keras run's memory) and returns its JSON."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", USE_TF="0",
               USE_TORCH="1", TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run(reference_argv(args), env=env, capture_output=True, text=True)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"train_throughput: the {args.reference} reference failed (exit "
                         f"{proc.returncode}): {tail}")
    return json.loads(lines[-1])


def run_reference(args) -> dict:
    """The same training with PyTorch + transformers: two `BertModel` towers built from a local
    `BertConfig` of the config's sizes (never downloaded), Linear projection of the [CLS] state
    (or the mean of the non-pad states under `--model-opt pooling=mean`),
    the in-batch softmax (scores / temperature, cross-entropy against the diagonal), AdamW with
    Keras' defaults, the same synthetic batch, warm-up and timed steps. Imports no TensorFlow."""
    for name in NO_TF_MODULES:
        sys.modules[name] = None  # `import tensorflow` now raises ImportError
    import numpy as np
    import torch
    import transformers
    from torch import nn

    c = model_config(args, import_config())
    lq, ld = c.max_query_len, c.max_doc_len
    threads = cpu_threads()
    torch.set_num_threads(threads)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    bert = transformers.BertConfig(
        vocab_size=c.vocab_size, hidden_size=c.hidden_size, num_hidden_layers=c.num_layers,
        num_attention_heads=c.num_heads, intermediate_size=c.ff_size, hidden_act="gelu",
        hidden_dropout_prob=c.dropout, attention_probs_dropout_prob=c.attention_dropout,
        max_position_embeddings=c.max_positions, type_vocab_size=1,
        layer_norm_eps=c.layer_norm_epsilon, initializer_range=c.initializer_range,
        pad_token_id=0)

    class Tower(nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder = transformers.BertModel(bert, add_pooling_layer=False)
            self.projection = nn.Linear(c.hidden_size, c.embedding_dim)
            r = c.initializer_range  # Keras: TruncatedNormal(r) kernel, zero bias
            nn.init.trunc_normal_(self.projection.weight, std=r, a=-2 * r, b=2 * r)
            nn.init.zeros_(self.projection.bias)

        def forward(self, ids):
            mask = (ids != 0).long()
            hidden = self.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
            if c.pooling == "mean":  # as TransformerEncoder.pool: the mean of the non-pad states
                weights = mask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1.0)
            else:
                pooled = hidden[:, 0]
            out = self.projection(pooled).float()
            return nn.functional.normalize(out, dim=-1, eps=1e-6) if c.normalize else out

    class TwoTower(nn.Module):
        def __init__(self):
            super().__init__()
            self.query_tower = Tower()
            self.doc_tower = self.query_tower if c.shared_towers else Tower()

        def forward(self, query_ids, doc_ids):
            q, d = self.query_tower(query_ids), self.doc_tower(doc_ids)
            scores = q @ d.T / c.temperature  # float32 also under bf16 autocast's outputs
            labels = torch.arange(q.shape[0], device=q.device)
            return nn.functional.cross_entropy(scores.float(), labels)

    model = TwoTower().to(device).train()
    # keras.optimizers.AdamW(1e-4)'s defaults: weight_decay 0.004, betas 0.9/0.999, epsilon 1e-7;
    # fused (one kernel for all parameters, CPU too since torch 2.4): the fastest of torch's
    # three AdamW implementations here (tiny's 9M parameters on 2 cores: 0.21 s a step against
    # 0.27 for the default for-loop and 0.57 for foreach)
    adamw = dict(lr=1e-4, betas=(0.9, 0.999), eps=1e-7, weight_decay=0.004)
    try:
        optimizer, fused = torch.optim.AdamW(model.parameters(), fused=True, **adamw), True
    except (RuntimeError, TypeError):  # an older torch without fused AdamW on this device
        optimizer, fused = torch.optim.AdamW(model.parameters(), **adamw), False
    ids = synthetic_batch(args.batch, lq, ld, c.vocab_size, args.seed)
    query_ids = torch.from_numpy(ids["query_ids"].astype(np.int64)).to(device)
    doc_ids = torch.from_numpy(ids["doc_ids"].astype(np.int64)).to(device)
    autocast = torch.autocast(device.type, dtype=torch.bfloat16, enabled=args.bf16)

    def steps(n):
        for _ in range(n):
            optimizer.zero_grad(set_to_none=True)
            with autocast:
                loss = model(query_ids, doc_ids)
            loss.backward()
            optimizer.step()
        value = float(loss.item())  # waits for the device
        if device.type == "cuda":
            torch.cuda.synchronize()
        return value

    rss_before = _rss_mb()["now"]
    start = time.perf_counter()
    steps(args.warmup)
    warmup_s = time.perf_counter() - start
    start, cpu = time.perf_counter(), time.process_time()
    loss = steps(args.steps)
    elapsed = time.perf_counter() - start
    cpu = time.process_time() - cpu
    kind = (torch.cuda.get_device_name(device) if device.type == "cuda"
            else platform.processor() or platform.machine())
    return {
        "reference": "pytorch", "torch": torch.__version__,
        "transformers": transformers.__version__,
        "attn_implementation": model.query_tower.encoder.config._attn_implementation,
        "autocast": "bfloat16" if args.bf16 else None, "threads": torch.get_num_threads(),
        "fused_adamw": fused,
        "device": {"platform": "gpu" if device.type == "cuda" else device.type, "kind": kind,
                   "count": 1},
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "batch": args.batch, "query_len": lq, "doc_len": ld, "steps": args.steps,
        "warmup_steps": args.warmup, "warmup_s": round(warmup_s, 3),
        "timed_s": round(elapsed, 3), "timed_cpu_s": round(cpu, 3),
        "step_s": round(elapsed / args.steps, 5),
        "examples_per_s": round(args.batch * args.steps / elapsed, 2),
        "final_loss": round(loss, 4), "rss_before_fit_mb": rss_before,
        "peak_rss_mb": _rss_mb()["peak"], "load_average": _load_average(),
        "tensorflow_imported": sys.modules.get("tensorflow") is not None,
    }


def _rate(tflops: float) -> str:
    return f"{tflops:.1f} TFLOP/s" if tflops >= 1 else f"{1000 * tflops:.1f} GFLOP/s"


def summary(r: dict) -> str:
    mfu = "n/a" if r["mfu"] is None else f"{100 * r['mfu']:.1f}%"
    paths = (f"; attention {r['attention']}, dropout {r['dropout_rng']}"
             if r["config"] != "bow" else "")
    if r["backend"] == "jax":
        paths += f"; XLA_FLAGS {r['xla_flags'] or '(none)'}"
    return (f"train_throughput {r['config']} {r['backend']} {r['policy']} on "
            f"{r['device']['platform']}:{r['device']['kind']} batch {r['batch']} "
            + (f"chunks of {r['chunk_size']} " if r.get("chunk_size") else "") +
            f"peak RSS {r['peak_rss_mb']:,.0f} MB "
            f"Lq/Ld {r['query_len']}/{r['doc_len']}: {r['examples_per_s']:,.1f} examples/s "
            f"({1000 * r['step_s']:.1f} ms/step, {r['steps']} steps, warm-up "
            f"{r['warmup_s']:.1f} s), {r['gflops_per_example']:.3f} GFLOP/example, "
            f"{_rate(r['achieved_tflops'])}, MFU {mfu} "
            f"(peak {r['peak_tflops'] if r['peak_tflops'] is not None else 'n/a'} TFLOPS: "
            f"{r['peak_source']}){paths}")


def reference_summary(r: dict) -> str:
    ref = r["reference"]
    return (f"  reference {ref['reference']} (torch {ref['torch']}, transformers "
            f"{ref['transformers']} BertModel, {ref['attn_implementation']} attention, "
            f"{ref['threads']} threads, {ref['device']['platform']}"
            + (", bf16 autocast" if ref["autocast"] else "") +
            f"): {ref['examples_per_s']:,.2f} examples/s ({1000 * ref['step_s']:.1f} ms/step, "
            f"warm-up {ref['warmup_s']:.1f} s); wikipairs/reference = {r['ratio']:.2f}x "
            f"({r['examples_per_s']:,.2f} / {ref['examples_per_s']:,.2f} examples/s)")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.reference_child:
        print(json.dumps(run_reference(args), sort_keys=True))
        return 0
    if args.reference:
        check_reference_installed(args.reference)
    # The reference runs first, while this process holds no device memory: on a GPU, XLA takes
    # most of the card when the Keras run starts and keeps it until this process exits.
    reference = run_reference_subprocess(args) if args.reference else None
    result = run(args)
    result["threads"] = cpu_threads()
    if args.reference:
        result["reference"] = reference
        result["ratio"] = round(result["examples_per_s"] / result["reference"]["examples_per_s"], 3)
    print(summary(result))
    if args.reference:
        print(reference_summary(result))
    print(f"  {result['formula']}")
    if result["profile"]:
        from kernel_profile import format_table

        print(format_table(result["profile"]))
    if result["xla_gflops_per_example"] is not None:
        ratio = result["gflops_per_example"] / result["xla_gflops_per_example"]
        print(f"  XLA's count of every op: {result['xla_gflops_per_example']:.3f} GFLOP/example "
              f"(formula / XLA = {ratio:.3f})")
    if args.json == "-":
        print(json.dumps(result, sort_keys=True))
    elif args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(result, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
