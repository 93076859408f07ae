#!/usr/bin/env bash
# gpu_check39.sh: one device call for session 39's GPU changes (joined phases, n-d flatv, narrow rows of 256+):
# the package built, the GPU pytest per file (every test), the A/B of the changes' knobs on the workloads they
# target with the peers, and Nsight Compute on pairwise_sqdist_3d. Each part bounded; ~560 s in all.
#   bash scripts/gpu_check39.sh      (on the GPU machine, .devkit/ and build-gpukit/ carried)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
LOOM_GPU_C=0 LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0 LOOM_GPU_PYTEST_PER_FILE=1 LOOM_GPU_PYTEST_JOBS=13 \
  LOOM_GPU_DEADLINE_S=${CHECK_PYTEST_S:-350} bash scripts/gpu_all.sh 2>&1 | grep -E "pytest|passed|failed|FAIL|Error" | tail -12
echo "== pytest done at $((SECONDS - t0)) s"
AB_TABLE=fresh2 AB_ONLY=${CHECK_AB_ONLY:-top1_accuracy,keras_masking,minmax_scale_cols,nanmean_cols_f64,instance_norm_nchw,keypoint_heatmaps} \
  AB_CONFIGS=${CHECK_AB_CONFIGS:-"base=|n256=LOOM_GPU_ROW_NARROW_MIN=256|nojoint=LOOM_GPU_JOINT=0|noflatnd=LOOM_GPU_FLAT_ND=0|cb128=LOOM_GPU_CACHE_BYTES=128"} \
  AB_PEERS=torch,torch_compile AB_TIMEOUT_S=60 AB_PEERS_TIMEOUT_S=90 timeout 190 bash bench/suite/ab_knobs.sh 2>&1 | tail -9
echo "== A/B done at $((SECONDS - t0)) s"
left=$((570 - (SECONDS - t0)))
if [ "$left" -gt 30 ]; then
  timeout $((left - 5)) ncu --clock-control none --profile-from-start off --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section WarpStateStats python3 bench/suite/profile_probe.py pairwise_sqdist_3d 1 2>&1 |
    grep -v "^==PROF==" | grep -E "Duration|Throughput|Registers|Achieved Occ|Grid Size|Block Size|Stall|Warp Cycles|loom_|Issued|kernels" | head -40
fi
echo "== done at $((SECONDS - t0)) s"
