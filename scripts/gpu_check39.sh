#!/usr/bin/env bash
# gpu_check39.sh: device calls for session 39's GPU changes (joined phases, n-d flatv, narrow rows of 256+, rows a
# thread), each within the device tool's 600 s:
#   bash scripts/gpu_check39.sh ab      the package built, the changes' knobs A/B on the workloads they target
#                                       (fresh2 table) with torch and torch.compile, then Nsight Compute on
#                                       pairwise_sqdist_3d with what time is left
#   bash scripts/gpu_check39.sh quick   as `ab` with only keypoint_heatmaps / top1_accuracy, base and two knobs (~330 s)
#   bash scripts/gpu_check39.sh tests   every C test on the GPU (ctest -R gpu|cuda|cublas|loomrt) and the GPU
#                                       pytest a file a process
# (on the GPU machine, .devkit/ and build-gpukit/ carried)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
if [ "${1:-ab}" = tests ]; then
  LOOM_GPU_CTEST_ARGS="-R gpu|cuda|cublas|loomrt" LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0 LOOM_GPU_PYTEST_PER_FILE=1 \
    LOOM_GPU_PYTEST_JOBS=13 bash scripts/gpu_all.sh 2>&1 | tail -25
  echo "== done at $((SECONDS - t0)) s"
  exit 0
fi
LOOM_GPU_C=0 LOOM_GPU_PYTEST=0 LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0 bash scripts/gpu_all.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
# the GPU pytest files that reach the changed code (multi-phase reductions, elementwise n-d maps), a file a
# process; CHECK_PYTEST_FILES: another extended regex
(cd /tmp && ls "$OLDPWD"/tests/python/test_*.py | grep -E "${CHECK_PYTEST_FILES:-test_(gpu_joint|gpu_flat|phase_split|onepass_var|reduce|col_normalize|covariance|functional|numpy_parity|order_stats|gpu_walk_cols|gpu_rows6|gpu_odd_rows|gpu_online_max|strategies|ops|fuzz_numpy|ufunc)\.py}" |
  timeout 170 xargs -P 12 -I{} sh -c 'timeout 160 python3 -m pytest -q -p no:cacheprovider "{}" 2>&1 | tail -1 | sed "s|^|$(basename {}): |"')
echo "== build + GPU tests at $((SECONDS - t0)) s"
if [ "${1:-ab}" = quick ]; then
  CHECK_AB_ONLY=${CHECK_AB_ONLY:-keypoint_heatmaps,top1_accuracy}
  CHECK_AB_CONFIGS=${CHECK_AB_CONFIGS:-"base=|n256=LOOM_GPU_ROW_NARROW_MIN=256|noflatnd=LOOM_GPU_FLAT_ND=0"}
fi
AB_TABLE=fresh2 AB_ONLY=${CHECK_AB_ONLY:-top1_accuracy,keras_masking,keypoint_heatmaps,pairwise_sqdist_3d,box_volume_i32,tril_arange} \
  AB_CONFIGS=${CHECK_AB_CONFIGS:-"base=|n256=LOOM_GPU_ROW_NARROW_MIN=256|noflatnd=LOOM_GPU_FLAT_ND=0|items4=LOOM_GPU_ROW_ITEMS=4"} \
  AB_PEERS=torch,torch_compile AB_TIMEOUT_S=70 AB_PEERS_TIMEOUT_S=100 timeout 420 bash bench/suite/ab_knobs.sh 2>&1 | tail -11
echo "== A/B done at $((SECONDS - t0)) s"
left=$((${CHECK_TOTAL_S:-575} - (SECONDS - t0)))
if [ "$left" -gt 40 ]; then
  timeout $((left - 5)) ncu --clock-control none --profile-from-start off --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats python3 bench/suite/profile_probe.py pairwise_sqdist_3d 1 2>&1 |
    grep -v "^==PROF==" | grep -E "Duration|Throughput|Registers|Achieved Occ|Grid Size|Block Size|Stall|Warp Cycles|loom_|Issued|kernels" | head -40
fi
echo "== done at $((SECONDS - t0)) s"
