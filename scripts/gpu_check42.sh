#!/usr/bin/env bash
# gpu_check42.sh: one device call (600 s) for session 42's GPU code: reductions of short packed rows read as flat
# vectors (codegen/gpu_rowflat.c, LOOM_GPU_ROWF). Builds the package, runs the GPU pytest files of the changed code
# a file a process, then times the workloads the new entry reaches with it on (base) and off (old), Loom alone, one
# process each, and the peers (torch, torch.compile) beside them:
#   bash scripts/gpu_check42.sh            (on the GPU machine, .devkit/ and build-gpukit/ carried)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
LOOM_GPU_C=0 LOOM_GPU_PYTEST=0 LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0 bash scripts/gpu_all.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
(cd /tmp && ls "$OLDPWD"/tests/python/test_*.py | grep -E "${CHECK_PYTEST_FILES:-test_(row_flat|small_rows|col_packed|reduce|strategies|gpu_odd_rows|gpu_rows6|gpu_stage_rows|col_normalize|onepass_var|order_stats|numpy_parity|fuzz_numpy)\.py}" |
  timeout 150 xargs -P 13 -I{} sh -c 'timeout 145 python3 -m pytest -q -x -p no:cacheprovider "{}" 2>&1 | tail -1 | sed "s|^|$(basename {}): |"')
echo "== build + GPU tests at $((SECONDS - t0)) s"
old="old=LOOM_GPU_ROWF=0"
ab() { # table, workloads, peers, timeout
  AB_TABLE=$1 AB_ONLY=$2 AB_CONFIGS="base=|$old" AB_PEERS=$3 AB_TIMEOUT_S=75 AB_PEERS_TIMEOUT_S=120 AB_MIN_TIME=0.04 \
    timeout "$4" bash bench/suite/ab_knobs.sh 2>&1 | grep -E "^\|" | sed "s/^/$1 /"
  echo "== $1 at $((SECONDS - t0)) s"
}
ab fresh2 poincare_dist,normalize_normals,box_volume_i32 torch,torch_compile 150
ab suite kmeans_argmin,router_softmax_short,softmax_rows torch,torch_compile 150
ab probe l1_normalize_short,router_log_softmax_f16 torch,torch_compile 130
echo "== done at $((SECONDS - t0)) s"
