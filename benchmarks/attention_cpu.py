"""Benchmark: where the JAX CPU step's attention stands, per FLOP, against its own feed-forward
product and against PyTorch, in one process.

    .venv/bin/python benchmarks/attention_cpu.py                    # `small`'s document tower
    .venv/bin/python benchmarks/attention_cpu.py --heads 12 --hidden 768 --ff 3072 --batch 8
    .venv/bin/python benchmarks/attention_cpu.py --reference pytorch --json out/attention.json

Two pieces of one Transformer layer, forward and backward (the gradients of a sum of squares
with respect to every input), on random float32 tensors of the document tower's shapes:
- attention: softmax(q k^T / sqrt(d)) v over [batch, length, heads, head_dim], XLA's
  `jax.nn.dot_product_attention` (what trainer/fast_layers.py ran on a CPU without attention
  dropout; with it, the same two batched products around the masked softmax), and
  `blocked attention`: trainer/fast_layers.py's `blocked_attention`, a few rows at a time with
  the probabilities recomputed backward (the CPU's path since 2026-12-02): 4 * B * H * L^2 * d
  FLOPs forward, x3 with the backward (the blocks' recomputation not counted);
- feed-forward: [B * L, hidden] x [hidden, ff], 2 * B * L * hidden * ff forward, x3.
Each runs under every `--options` set of XLA compile options (`default`: none; `no-ynn`: XLA's
YNNPACK dot fusions off), compiled once, then the rounds alternate the sets so the machine's load
falls on all alike; the best round counts. `--reference pytorch` times the same two pieces with
torch (`scaled_dot_product_attention` without dropout, its fused CPU kernel; and with
`--torch-dropout P` its dropout path as transformers trains) and a matmul, in the same rounds.
Prints ms and GFLOP/s per piece and the attention's rate over the feed-forward's.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

OPTION_SETS = {"default": {}, "no-ynn": {"xla_cpu_experimental_ynn_fusion_type": ""}}


def _fail(message: str) -> None:
    print(f"attention_cpu: {message}", file=sys.stderr)
    raise SystemExit(2)


def _jax_pieces(args, option_sets):
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    shape = (args.batch, args.length, args.heads, args.head_dim)
    q, k, v = (jax.random.normal(kk, shape) for kk in jax.random.split(key, 3))
    x = jax.random.normal(key, (args.batch * args.length, args.hidden))
    w = jax.random.normal(key, (args.hidden, args.ff))
    scale = args.head_dim ** -0.5

    def attention(q, k, v):
        out = jax.nn.dot_product_attention(q, k, v, scale=scale, implementation="xla")
        return jnp.sum(out * out)

    from trainer.fast_layers import blocked_attention
    lengths = jnp.full((args.batch,), args.length, jnp.int32)

    def blocked(q, k, v):
        out = blocked_attention(q, k, v, lengths, scale)
        return jnp.sum(out * out)

    def feed_forward(x, w):
        y = x @ w
        return jnp.sum(y * y)

    pieces = {}
    for name in option_sets:
        options = OPTION_SETS[name]
        grad_attention = jax.jit(jax.grad(attention, argnums=(0, 1, 2)))
        grad_ff = jax.jit(jax.grad(feed_forward, argnums=(0, 1)))
        grad_blocked = jax.jit(jax.grad(blocked, argnums=(0, 1, 2)))
        pieces[f"jax {name} attention"] = _runner(
            grad_attention.lower(q, k, v).compile(compiler_options=options), (q, k, v))
        pieces[f"jax {name} blocked attention"] = _runner(
            grad_blocked.lower(q, k, v).compile(compiler_options=options), (q, k, v))
        pieces[f"jax {name} feed-forward"] = _runner(
            grad_ff.lower(x, w).compile(compiler_options=options), (x, w))
    return pieces


def _runner(compiled, inputs):
    import jax

    def run():
        jax.block_until_ready(compiled(*inputs))
    run()  # first call: allocation, thread pools
    return run


def _torch_pieces(args):
    try:
        import torch
    except ImportError:
        _fail("--reference pytorch needs torch (the dev extra)")
    torch.manual_seed(0)
    shape = (args.batch, args.heads, args.length, args.head_dim)
    q, k, v = (torch.randn(shape, requires_grad=True) for _ in range(3))
    x = torch.randn(args.batch * args.length, args.hidden, requires_grad=True)
    w = torch.randn(args.hidden, args.ff, requires_grad=True)
    F = torch.nn.functional

    def attention(p):
        def run():
            out = F.scaled_dot_product_attention(q, k, v, dropout_p=p)
            (out * out).sum().backward()
        return run

    def feed_forward():
        y = x @ w
        (y * y).sum().backward()

    pieces = {"pytorch attention": attention(0.0), "pytorch feed-forward": feed_forward}
    if args.torch_dropout > 0:
        pieces[f"pytorch attention dropout {args.torch_dropout}"] = attention(args.torch_dropout)
    for run in pieces.values():
        run()
    return pieces


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--length", type=int, default=288)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--head-dim", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--ff", type=int, default=2048)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--options", default="default,no-ynn",
                    help=f"comma-separated XLA compile option sets: {', '.join(OPTION_SETS)}")
    ap.add_argument("--reference", choices=("none", "pytorch"), default="none")
    ap.add_argument("--torch-dropout", type=float, default=0.1,
                    help="with --reference pytorch: also its attention with this dropout (0: not)")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    names = [n.strip() for n in args.options.split(",") if n.strip()]
    unknown = sorted(set(names) - set(OPTION_SETS))
    if unknown or not names:
        _fail(f"unknown option set {', '.join(unknown) or '(none)'}; known: "
              f"{', '.join(OPTION_SETS)}")
    if min(args.batch, args.length, args.heads, args.head_dim, args.hidden, args.ff,
           args.rounds) < 1:
        _fail("sizes and --rounds must be positive")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import trainer  # noqa: F401  (the trainer's XLA defaults, set before JAX starts)
    pieces = _jax_pieces(args, names)
    if args.reference == "pytorch":
        pieces.update(_torch_pieces(args))
    flops = {"attention": 3 * 4 * args.batch * args.heads * args.length ** 2 * args.head_dim,
             "feed-forward": 3 * 2 * args.batch * args.length * args.hidden * args.ff}
    times = {name: [] for name in pieces}
    for r in range(args.rounds):
        for name, run in pieces.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
        print(f"round {r + 1}: " + ", ".join(f"{n} {times[n][-1] * 1e3:.0f} ms" for n in pieces),
              flush=True)
    out = {"shapes": {k: getattr(args, k) for k in ("batch", "length", "heads", "head_dim",
                                                   "hidden", "ff")},
           "rounds": args.rounds, "pieces": {}}
    rates = {}
    for name, values in times.items():
        kind = "feed-forward" if name.endswith("feed-forward") else "attention"
        best = min(values)
        rates[name] = flops[kind] / best / 1e9
        out["pieces"][name] = {"best_ms": round(best * 1e3, 3),
                               "gflop_per_s": round(rates[name], 3)}
    print(f"\n{'':38s}{'best ms':>9s}{'GFLOP/s':>9s}")
    for name, r in out["pieces"].items():
        print(f"{name:38s}{r['best_ms']:9.1f}{r['gflop_per_s']:9.1f}")
    prefixes = [f"jax {n}" for n in names] + (["pytorch"] if args.reference == "pytorch" else [])
    out["attention_over_feed_forward"] = {
        p: round(rates[f"{p} attention"] / rates[f"{p} feed-forward"], 3) for p in prefixes}
    for p, ratio in out["attention_over_feed_forward"].items():
        print(f"{p}: attention at {ratio:.2f} of the feed-forward product's FLOP rate")
    if args.reference == "pytorch":
        mine, theirs = min(times[f"jax {names[0]} attention"]), min(times["pytorch attention"])
        out["jax_attention_over_pytorch_time"] = round(mine / theirs, 3)
        print(f"jax {names[0]} attention takes {mine / theirs:.2f}x PyTorch's fused attention's time")
        blocked = min(times[f"jax {names[0]} blocked attention"])
        out["jax_blocked_attention_over_pytorch_time"] = round(blocked / theirs, 3)
        print(f"jax {names[0]} blocked attention takes {blocked / theirs:.2f}x its time")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
