#!/usr/bin/env bash
# gpu_check42b.sh: one device call (600 s): the fresh2 table with every peer (scripts/gpu_tables.sh's step), the
# GPU tests of the flat short rows, and an A/B of LOOM_GPU_CACHE_BYTES=128 (the cached row entry holding 32 float32
# points a thread instead of 16: rows up to 32768 read once) on the multi-phase row workloads, Loom alone:
#   bash scripts/gpu_check42b.sh            (on the GPU machine, .devkit/ and build-gpukit/ carried)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
GPU_TABLES="${CHECK_TABLES:-fresh2}" GPU_TABLE_BUDGET_S=140 GPU_TABLE_HARD_S=210 bash scripts/gpu_tables.sh
(cd /tmp && timeout 90 python3 -m pytest -q -x -p no:cacheprovider "$OLDPWD"/tests/python/test_row_flat.py 2>&1 | tail -1 |
  sed "s/^/test_row_flat.py: /")
echo "== tests at $((SECONDS - t0)) s"
ab() { # table, workloads, timeout
  AB_TABLE=$1 AB_ONLY=$2 AB_CONFIGS="base=|cb128=LOOM_GPU_CACHE_BYTES=128" AB_TIMEOUT_S=70 AB_MIN_TIME=0.04 \
    timeout "$3" bash bench/suite/ab_knobs.sh 2>&1 | grep -E "^\|" | sed "s/^/$1 /"
  echo "== $1 at $((SECONDS - t0)) s"
}
ab fresh2 instance_norm_nchw,entropy_bits_rows 80
ab suite layernorm,rmsnorm,softmax_rows,log_softmax_rows,cross_entropy,std_rows,l2normalize_rows 100
ab probe logsumexp_rows,softmax_f64,clip_row_norm,layernorm_small 90
echo "== done at $((SECONDS - t0)) s"
