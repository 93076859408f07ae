#!/usr/bin/env bash
# gpu_check42b.sh: one device call (600 s) for session 42's second GPU look: the GPU tests of the flat short rows
# (tests/python/test_row_flat.py, its children with LOOM_GPU_ROWF=0 / 2 and LOOM_GPU_ROWF_STAGE=1), an A/B of the
# staged form (codegen/gpu_rowflat.c: a wave's chunks through shared memory) on the workloads the flat rows reach,
# with torch / torch.compile, an A/B of LOOM_GPU_CACHE_BYTES=128 (the cached row entry holding 32 float32 points a
# thread: rows up to 32768 read once) on multi-phase row workloads, then the fresh2 table with every peer on what
# time is left (CHECK_DEADLINE_S, 560):
#   bash scripts/gpu_check42b.sh            (on the GPU machine, .devkit/ and build-gpukit/ carried)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
deadline=${CHECK_DEADLINE_S:-560}
LOOM_GPU_C=0 LOOM_GPU_PYTEST=0 LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0 bash scripts/gpu_all.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
(cd /tmp && timeout 120 python3 -m pytest -q -p no:cacheprovider "$OLDPWD"/tests/python/test_row_flat.py 2>&1 | tail -3 |
  sed "s/^/test_row_flat.py: /")
echo "== build + tests at $((SECONDS - t0)) s"
ab() { # table, workloads, configs, peers, timeout
  local left=$((deadline - (SECONDS - t0)))
  [ "$left" -gt 30 ] || { echo "== $1: no time left"; return; }
  [ "$5" -lt "$left" ] || set -- "$1" "$2" "$3" "$4" "$left"
  AB_TABLE=$1 AB_ONLY=$2 AB_CONFIGS="$3" AB_PEERS=$4 AB_TIMEOUT_S=70 AB_PEERS_TIMEOUT_S=110 AB_MIN_TIME=0.04 \
    timeout "$5" bash bench/suite/ab_knobs.sh 2>&1 | grep -E "^\|" | sed "s/^/$1 /"
  echo "== $1 at $((SECONDS - t0)) s"
}
rf="base=|st=LOOM_GPU_ROWF_STAGE=1|old=LOOM_GPU_ROWF=0"
ab fresh2 poincare_dist,normalize_normals,box_volume_i32 "$rf" torch,torch_compile 150
ab suite kmeans_argmin,router_softmax_short "$rf" torch_compile 110
ab probe l1_normalize_short,router_log_softmax_f16 "$rf" torch_compile 110
cb="base=|cb128=LOOM_GPU_CACHE_BYTES=128"
if [ -z "${CHECK_SKIP_CB:-}" ]; then # CHECK_SKIP_CB=1: not this A/B (a short call)
  ab fresh2 instance_norm_nchw,entropy_bits_rows "$cb" "" 60
  ab suite layernorm,rmsnorm,softmax_rows,log_softmax_rows,cross_entropy,std_rows "$cb" "" 80
fi
left=$((deadline - (SECONDS - t0)))
if [ "$left" -gt 120 ]; then
  GPU_TABLES=fresh2 GPU_TABLE_BUDGET_S=$((left - 80)) GPU_TABLE_HARD_S=$((left - 20)) bash scripts/gpu_tables.sh 2>&1 | grep -v "^== build"
fi
echo "== done at $((SECONDS - t0)) s"
