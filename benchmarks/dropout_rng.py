"""Benchmark: the JAX training step with each way of drawing dropout masks, steps alternated in one
process (so the machine's load falls on every way alike).

    KERAS_BACKEND=jax .venv/bin/python benchmarks/dropout_rng.py                  # small, batch 32
    KERAS_BACKEND=jax .venv/bin/python benchmarks/dropout_rng.py --config base --batch 8 --rounds 3

One TwoTower per way (`trainer.fast_layers.Dropout.rng`: "hash", the default, an index hash that
XLA fuses into the op using the mask; "philox", XLA's RngBitGenerator bits; "threefry", Keras' own
`jax.random`), each compiled with its way (the class attribute is read when a step is traced),
then one `fit` step of each in turn for `--rounds` rounds on the synthetic batch of
train_throughput.py (float32, AdamW, the in-batch softmax, dropout on). Prints each step's wall
and CPU seconds, the medians, and each way's median wall time over the first way's.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", default="small")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ways", default="hash,philox", help="comma-separated: hash, philox, threefry")
    ap.add_argument("--query-len", type=int, default=0)
    ap.add_argument("--doc-len", type=int, default=0)
    ap.add_argument("--vocab-size", type=int, default=32000)
    ap.add_argument("--model-opt", action="append", default=[], metavar="KEY=VALUE",
                    help="a ModelConfig override, as train_throughput.py's; repeatable")
    ap.add_argument("--json", metavar="PATH")
    args = ap.parse_args(argv)
    if os.environ.setdefault("KERAS_BACKEND", "jax") != "jax":
        print("dropout_rng: the ways differ on the JAX backend only (KERAS_BACKEND=jax)",
              file=sys.stderr)
        raise SystemExit(2)
    sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]
    import trainer  # noqa: F401  (sets the trainer's XLA defaults before JAX starts)
    import keras
    from train_throughput import dataset, model_config, synthetic_batch
    from trainer import fast_layers
    from trainer.configs import ModelConfig
    from trainer.model import TwoTower

    config = model_config(args, ModelConfig)  # --config with --vocab-size, lengths, --model-opt
    data = dataset("jax", synthetic_batch(args.batch, config.max_query_len, config.max_doc_len,
                                          config.vocab_size, 0))  # the same batch forever
    ways = [w.strip() for w in args.ways.split(",") if w.strip()]
    unknown = sorted(set(ways) - {"hash", "philox", "threefry"})
    if unknown or not ways:
        print(f"dropout_rng: unknown way {', '.join(unknown) or '(none)'}; known: hash, philox, "
              f"threefry", file=sys.stderr)
        raise SystemExit(2)
    models = {}
    for way in ways:
        fast_layers.Dropout.rng = way
        model = TwoTower(config)
        model.build()
        model.compile(optimizer=keras.optimizers.AdamW(1e-4), jit_compile="auto")
        model.fit(data, steps_per_epoch=1, epochs=1, verbose=0)  # traced with this way
        models[way] = model
    fast_layers.Dropout.rng = "hash"
    steps = {way: [] for way in ways}
    for r in range(args.rounds):
        for way, model in models.items():
            wall, cpu = time.perf_counter(), time.process_time()
            model.fit(data, steps_per_epoch=1, epochs=1, verbose=0)
            steps[way].append({"wall_s": time.perf_counter() - wall,
                               "cpu_s": time.process_time() - cpu})
            print(f"round {r + 1} {way:8s} wall {steps[way][-1]['wall_s']:7.2f} s "
                  f"cpu {steps[way][-1]['cpu_s']:7.2f} s", flush=True)

    def median(values):
        values = sorted(values)
        return values[len(values) // 2]

    out = {"config": args.config, "batch": args.batch, "rounds": args.rounds,
           "load_average": list(os.getloadavg()), "ways": {}}
    first = median([s["wall_s"] for s in steps[ways[0]]])
    for way in ways:
        wall = median([s["wall_s"] for s in steps[way]])
        out["ways"][way] = {"median_wall_s": round(wall, 3),
                            "median_cpu_s": round(median([s["cpu_s"] for s in steps[way]]), 3),
                            f"wall_over_{ways[0]}": round(wall / first, 3), "steps": steps[way]}
        print(f"{way:8s} median wall {wall:7.2f} s  cpu {out['ways'][way]['median_cpu_s']:7.2f} s"
              f"  / {ways[0]} {wall / first:.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
