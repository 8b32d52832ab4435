"""Benchmark: an MLM training step with the head on the masked positions only (MaskedLM's
`max_predictions`, BERT's gather) against the head on every position, in one process.

    .venv/bin/python benchmarks/mlm_head.py                       # tiny, batch 128, 128 tokens
    .venv/bin/python benchmarks/mlm_head.py --model small --batch 32 --steps 5

Both models are the same MaskedLM (same encoder, same vocabulary of `--vocab-size`, mask rate
0.15); `max_predictions = L` is the old path ([B, L, V] logits), the default is 1.5 x 0.15 x L
positions a row ([B, P, V]). Each is compiled by Keras' `train_on_batch` (AdamW), warmed up with
two steps, then timed over `--steps`; it prints examples/s and the ratio.
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def step_rate(model_name: str, batch: int, length: int, vocab: int, steps: int,
              max_predictions: int | None) -> tuple[float, int]:
    import keras

    from wikipairs.trainer.configs import ModelConfig
    from wikipairs.trainer.masked_lm import MaskedLM
    config = ModelConfig.from_name(model_name, vocab_size=vocab, max_doc_len=length,
                                   dropout=0.0, attention_dropout=0.0)
    keras.utils.set_random_seed(0)
    model = MaskedLM(config, seed=0, max_predictions=max_predictions)
    model.build()
    model.compile(optimizer=keras.optimizers.AdamW(1e-4))
    rng = np.random.default_rng(0)
    ids = rng.integers(5, vocab, (batch, length)).astype("int32")
    ids[:, 0], ids[:, -1] = 1, 2  # [CLS] ... [SEP]
    data = {"doc_ids": ids}
    for _ in range(2):
        model.train_on_batch(data)
    start = time.perf_counter()
    for _ in range(steps):
        model.train_on_batch(data)
    return steps * batch / (time.perf_counter() - start), model.max_predictions


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="tiny")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--length", type=int, default=128)
    ap.add_argument("--vocab-size", type=int, default=8000)
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args()
    every, _ = step_rate(args.model, args.batch, args.length, args.vocab_size, args.steps,
                         args.length)
    gathered, p = step_rate(args.model, args.batch, args.length, args.vocab_size, args.steps,
                            None)
    print(f"{args.model}, batch {args.batch}, {args.length} tokens, vocabulary "
          f"{args.vocab_size}: head on all {args.length} positions {every:.1f} examples/s, "
          f"on {p} gathered positions {gathered:.1f} examples/s: {gathered / every:.2f}x")


if __name__ == "__main__":
    main()
