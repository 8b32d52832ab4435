"""Check: the fused attention path (trainer.fast_layers.SelfAttention with key lengths: blocks
of rows on a CPU, cuDNN on a GPU in bf16) computes what Keras' masked MultiHeadAttention path
computes, on right-padded rows.

    KERAS_BACKEND=jax python benchmarks/fused_attention_check.py [--config base] [--bf16]
        [--unblocked]      # on a CPU, XLA's dot_product_attention instead of the blocks

One encoder, random ids with rows padded to random lengths (one row unpadded, one of length 1);
the sequence output at the real positions by both paths, and the gradient of a scalar of it
with respect to every weight: ||fused - keras|| / ||keras||. Expected: float32 on XLA ~1e-7
(the same ops), bf16 on cuDNN ~1e-2 (bf16 operands; METHOD.md's band). Exit 1 above --tol.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", default="base")
    p.add_argument("--bf16", action="store_true")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--length", type=int, default=288)
    p.add_argument("--unblocked", action="store_true",
                   help="check jax.nn.dot_product_attention with key lengths (the GPU's path "
                        "where cuDNN declines) rather than blocked_attention, on a CPU")
    p.add_argument("--tol", type=float, default=None,
                   help="largest relative error accepted (default 3e-2 with --bf16, else 1e-5)")
    args = p.parse_args(argv)
    os.environ.setdefault("KERAS_BACKEND", "jax")
    import jax
    import keras
    import numpy as np

    if keras.backend.backend() != "jax":
        raise SystemExit("fused_attention_check: needs KERAS_BACKEND=jax")
    if args.bf16:
        keras.mixed_precision.set_global_policy("mixed_bfloat16")
    sys.path.insert(0, str(REPO))
    from trainer.configs import ModelConfig
    from trainer.fast_layers import SelfAttention
    from trainer.model import TransformerEncoder

    SelfAttention.use_blocked = not args.unblocked

    # initializer_range 0.2: attention logits far from 0, so a wrong mask or scale shows
    config = ModelConfig.from_name(args.config, vocab_size=8000, attention_dropout=0.0,
                                   initializer_range=0.2,
                                   max_doc_len=args.length)
    encoder = TransformerEncoder(config)
    rng = np.random.default_rng(0)
    ids = rng.integers(5, 8000, (args.batch, args.length)).astype("int32")
    lengths = rng.integers(1, args.length + 1, args.batch)
    lengths[0], lengths[-1] = args.length, 1
    for row, n in enumerate(lengths):
        ids[row, n:] = 0
    real = ids != 0
    encoder(ids)  # build
    weights = [v.value for v in encoder.trainable_variables]
    probe = rng.normal(size=(args.batch, args.length, config.hidden_size)).astype("float32")
    probe *= real[:, :, None]

    def forward(values, use_fused):
        SelfAttention.use_fused = use_fused
        out, _ = encoder.stateless_call(values, [v.value for v in encoder.non_trainable_variables],
                                        ids, training=False)
        return out.astype("float32")

    def scalar(values, use_fused):
        return (forward(values, use_fused) * probe).sum()

    results = {}
    for use_fused in (True, False):
        out = np.asarray(forward(weights, use_fused))[real]
        grads = jax.grad(scalar)(weights, use_fused)
        results[use_fused] = (out, np.concatenate([np.ravel(np.asarray(g, "float32"))
                                                   for g in grads]))
    rel = lambda a, b: float(np.linalg.norm(a - b) / np.linalg.norm(b))  # noqa: E731
    out_err = rel(results[True][0], results[False][0])
    grad_err = rel(results[True][1], results[False][1])
    tol = args.tol if args.tol is not None else (3e-2 if args.bf16 else 1e-5)
    finite = all(np.isfinite(x).all() for pair in results.values() for x in pair)
    path = "unblocked" if args.unblocked else "blocked" if jax.default_backend() == "cpu" else "fused"
    print(f"fused_attention_check {args.config} {'bf16' if args.bf16 else 'float32'} {path} on "
          f"{jax.devices()[0].platform}: output rel. error {out_err:.2e}, gradient rel. error "
          f"{grad_err:.2e} (tol {tol:g}), finite {finite}")
    return 0 if finite and out_err <= tol and grad_err <= tol else 1


if __name__ == "__main__":
    sys.exit(main())
