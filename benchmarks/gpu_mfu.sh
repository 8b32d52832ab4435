#!/usr/bin/env bash
# The issue-4 GPU figure in one command: MFU of `base` (bf16, Keras JAX backend) on a GPU machine
# that has JAX but neither TensorFlow nor keras. Here, first: `make gpu-wheels` (keras and its two
# missing needs, for Python 3.12, into .whl/). There, from the repository root:
#
#     bash benchmarks/gpu_mfu.sh            # device tool: run(command=..., carry=[".whl"])
#
# It installs .whl/*.whl (if any) into $SITE, prints the versions and the GPU, then runs
# benchmarks/train_throughput.py once per entry of $RUNS ("BATCH[:KEY=VALUE,...[:--FLAG=V,...]]":
# model options after the first colon, more train_throughput options after the second, e.g.
# "256:attention_dropout=0:--profile=3,--dropout-rng=philox") with --bf16 --no-tensorflow, each
# under `timeout $RUN_TIMEOUT`, so one that
# fails or runs out of memory does not stop the others. Each run's JSON and the whole log go to
# $OUT (default out/gpu). Defaults: CONFIG=base STEPS=50 RUNS="256 128 256:attention_dropout=0".
# EXTRA="--reference pytorch" adds the PyTorch + transformers run of the same towers (bf16
# autocast on CUDA) and the ratio wikipairs/reference, where torch and transformers are installed
# (the lent H200 had torch 2.11 and transformers 5.17; without them the run stops with one line,
# exit 2). Figures of 2026-11-27: benchmarks/README.md, "Measured on one NVIDIA H200".
set -uo pipefail

OUT=${OUT:-out/gpu}
PY=${PY:-python3}
SITE=${SITE:-/tmp/site}
CONFIG=${CONFIG:-base}
STEPS=${STEPS:-50}
RUNS=${RUNS:-"256 128 256:attention_dropout=0"}
RUN_TIMEOUT=${RUN_TIMEOUT:-170}
EXTRA=${EXTRA:-}
mkdir -p "$OUT"
LOG="$OUT/gpu_mfu.log"

if compgen -G ".whl/*.whl" >/dev/null; then
    "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target "$SITE" .whl/*.whl || { echo "gpu_mfu: installing .whl failed"; exit 2; }
    export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
fi
export KERAS_BACKEND=jax PYTHONUNBUFFERED=1
# base at batch 256 needs tens of GB of activations: let XLA take most of the card
export XLA_PYTHON_CLIENT_MEM_FRACTION=${XLA_PYTHON_CLIENT_MEM_FRACTION:-0.92}

"$PY" -c 'import jax, keras, numpy; print("jax", jax.__version__, "keras", keras.__version__,
          "numpy", numpy.__version__, "devices", jax.devices())' 2>&1 | tee "$LOG"
[[ ${PIPESTATUS[0]} == 0 ]] || { echo "gpu_mfu: cannot import jax and keras"; exit 2; }
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,power.limit --format=csv 2>&1 \
    | tee -a "$LOG" || true

status=0
for run in $RUNS; do
    batch=${run%%:*}
    name="${CONFIG}_bf16_b${batch}"
    opts=()
    model_opts="" flags=""
    if [[ $run == *:* ]]; then
        model_opts=${run#*:}
        if [[ $model_opts == *:* ]]; then flags=${model_opts#*:}; model_opts=${model_opts%%:*}; fi
    fi
    if [[ -n $model_opts ]]; then
        IFS=, read -ra pairs <<<"$model_opts"
        for pair in "${pairs[@]}"; do opts+=(--model-opt "$pair"); done
        name+="_$(tr ',=' '__' <<<"$model_opts")"
    fi
    if [[ -n $flags ]]; then
        IFS=, read -ra pairs <<<"$flags"
        opts+=("${pairs[@]}")
        name+="_$(tr -d '-' <<<"$flags" | tr ',=' '__')"
    fi
    echo "== $name" | tee -a "$LOG"
    # shellcheck disable=SC2086  # EXTRA is a list of options
    timeout "$RUN_TIMEOUT" "$PY" benchmarks/train_throughput.py --config "$CONFIG" --bf16 \
        --batch "$batch" --steps "$STEPS" --no-tensorflow "${opts[@]}" $EXTRA \
        --json "$OUT/$name.json" 2>&1 | grep -v -e '^WARNING: All log messages' | tee -a "$LOG"
    rc=${PIPESTATUS[0]}
    [[ $rc == 0 ]] || { echo "gpu_mfu: $name exited $rc" | tee -a "$LOG"; status=1; }
done
exit $status
