#!/usr/bin/env bash
# gpu_check41.sh: one device call (600 s) for session 41's GPU code: short reduced rows compiled with their
# extent as a constant (LOOM_GPU_SMALL_ROWS), nsw walk offsets (LOOM_GPU_WALK_NSW), column reductions over packed
# rows of 2-4 columns read as flat vectors (LOOM_GPU_COLV). Builds the package, runs the GPU pytest files of the
# changed code a file a process, then times the reductions those reach (and a few they should not move) with the
# three on (base) and off (old), Loom alone, one process each, and the peers (torch, torch.compile) on the
# workloads they target:
#   bash scripts/gpu_check41.sh            (on the GPU machine, .devkit/ and build-gpukit/ carried)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
LOOM_GPU_C=0 LOOM_GPU_PYTEST=0 LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0 bash scripts/gpu_all.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
(cd /tmp && ls "$OLDPWD"/tests/python/test_*.py | grep -E "${CHECK_PYTEST_FILES:-test_(small_rows|col_packed|shared_walk|reduce|strategies|gpu_walk_cols|gpu_rows6|gpu_odd_rows|gpu_joint|onepass_var|order_stats|fuzz_numpy|numpy_parity)\.py}" |
  timeout 130 xargs -P 13 -I{} sh -c 'timeout 125 python3 -m pytest -q -x -p no:cacheprovider "{}" 2>&1 | tail -1 | sed "s|^|$(basename {}): |"')
echo "== build + GPU tests at $((SECONDS - t0)) s"
old="old=LOOM_GPU_SMALL_ROWS=0 LOOM_GPU_WALK_NSW=0 LOOM_GPU_COLV=0"
ab() { # table, workloads, peers, timeout
  AB_TABLE=$1 AB_ONLY=$2 AB_CONFIGS="base=|$old" AB_PEERS=$3 AB_TIMEOUT_S=75 AB_PEERS_TIMEOUT_S=120 AB_MIN_TIME=0.04 \
    timeout "$4" bash bench/suite/ab_knobs.sh 2>&1 | grep -E "^\|" | sed "s/^/$1 /"
  echo "== $1 at $((SECONDS - t0)) s"
}
ab fresh2 pairwise_sqdist_3d,channel_stats_hwc,seg_argmax_nchw,nanmean_cols_f64,minmax_scale_cols,poincare_dist torch,torch_compile 230
ab fresh point_centroid,var_mid_3d,col_totals_f64,max_cols_i64,any_cols_bool,argmax_cols,argmin_cols_f64,row_norms_f64,strided_col_mean,survival_prod torch 170
ab suite sum_rows,sum_cols,bn1d_stats,bn2d_stats,layernorm,argmax_rows,softmax_rows,var_all_f64 "" 100
ab probe sum_axes_0_2,min_cols_int32,l1_normalize_short,max_mid_3d,standardize_cols "" 70
echo "== done at $((SECONDS - t0)) s"
