#!/usr/bin/env bash
# gpu_check40.sh: one device call (600 s) for session 40's GPU defaults: joined reductions on
# (codegen/gpu_joint.c) with the fuser's shared-walk siblings (passes/fuse_place.c), narrow ROW blocks from
# rows of 256, four short rows a thread. Builds the package, runs the GPU pytest files of the changed code a
# file a process, then times every workload of the four bench tables, Loom alone, new defaults against the old
# ones (one process each), and prints the workloads whose time moved by more than 3 %:
#   bash scripts/gpu_check40.sh            (on the GPU machine, .devkit/ and build-gpukit/ carried)
# CHECK_TABLES: the tables (default suite,probe,fresh,fresh2); CHECK_OLD: the old defaults' environment.
#   bash scripts/gpu_check40.sh final      the GPU pytest of reductions, n-d flatv and log10, then the n-d flatv
#                                           hoist on and off on fresh2's workloads (CHECK_AB_PEERS=torch,torch_compile)
#   bash scripts/gpu_check40.sh probe      the GPU pytest of float32 log10 and the ufuncs, the remaining misses
#                                           (fresh / fresh2) against torch and torch.compile with the knobs that
#                                           may close them, Nsight Compute on the two broadcast-heavy ones
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
t0=$SECONDS
LOOM_GPU_C=0 LOOM_GPU_PYTEST=0 LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0 bash scripts/gpu_all.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
if [ "${1:-}" = final ]; then
  (cd /tmp && ls "$OLDPWD"/tests/python/test_*.py | grep -E "test_(gpu_joint|gpu_flat|phase_split|reduce|strategies|gpu_walk_cols|gpu_rows6|gpu_odd_rows|gpu_online_max|order_stats|log10_f32|fuzz_numpy|ops|onepass_var|col_normalize)\.py" |
    timeout 90 xargs -P 14 -I{} sh -c 'timeout 85 python3 -m pytest -q -p no:cacheprovider "{}" 2>&1 | tail -1 | sed "s|^|$(basename {}): |"')
  echo "== tests at $((SECONDS - t0)) s"
  AB_TABLE=fresh2 AB_ONLY=${CHECK_AB_ONLY:-pairwise_sqdist_3d,keypoint_heatmaps,top1_accuracy,keras_masking,seg_argmax_nchw,nanmean_cols_f64,minmax_scale_cols,instance_norm_nchw} \
    AB_CONFIGS="base=|hoist0=LOOM_GPU_FLAT_HOIST=0" AB_PEERS=${CHECK_AB_PEERS:-} AB_TIMEOUT_S=60 AB_PEERS_TIMEOUT_S=200 \
    timeout 300 bash bench/suite/ab_knobs.sh 2>&1 | grep -E "^\|"
  echo "== done at $((SECONDS - t0)) s"
  exit 0
fi
if [ "${1:-}" = probe ]; then
  (cd /tmp && for f in test_log10_f32 test_ufunc test_ops test_complex test_float_divmod; do
     timeout 100 python3 -m pytest -q -p no:cacheprovider "$OLDPWD/tests/python/$f.py" 2>&1 | tail -1 | sed "s|^|$f: |" &
   done; wait)
  echo "== tests at $((SECONDS - t0)) s"
  for t in fresh2 fresh; do
    only=keypoint_heatmaps,pairwise_sqdist_3d,entropy_bits_rows,instance_norm_nchw,poincare_dist,seg_argmax_nchw,power_to_db
    [ $t = fresh ] && only=point_centroid
    AB_TABLE=$t AB_ONLY=$only AB_CONFIGS="base=|cache128=LOOM_GPU_CACHE_BYTES=128|libdevlog10=LOOM_GPU_POLY_LOG10=0|magic2=LOOM_GPU_MAGIC_DIV=2" \
      AB_PEERS=torch,torch_compile AB_TIMEOUT_S=60 AB_PEERS_TIMEOUT_S=120 timeout 330 bash bench/suite/ab_knobs.sh 2>&1 | grep -E "^\|" | sed "s/^/$t /"
    echo "== A/B $t at $((SECONDS - t0)) s"
  done
  for w in keypoint_heatmaps pairwise_sqdist_3d; do
    LOOM_CUDA_JIT_TIERS=0 timeout 60 ncu --clock-control none --profile-from-start off --section SpeedOfLight --section MemoryWorkloadAnalysis \
      --section LaunchStats --section Occupancy --section InstructionStats python3 bench/suite/profile_probe.py $w 1 2>&1 |
      grep -v "^==PROF==" | grep -E "Duration|Throughput|Registers|Achieved Occ|Grid Size|Block Size|Executed Ipc|Issued|Mem Busy|Max Bandwidth|L1/TEX Hit|L2 Hit|loom_|kernels" | head -30
  done
  echo "== done at $((SECONDS - t0)) s"
  exit 0
fi
(cd /tmp && ls "$OLDPWD"/tests/python/test_*.py | grep -E "${CHECK_PYTEST_FILES:-test_(gpu_joint|gpu_flat|phase_split|onepass_var|reduce|col_normalize|covariance|functional|numpy_parity|order_stats|gpu_walk_cols|gpu_rows6|gpu_odd_rows|gpu_online_max|strategies|ops|fuzz_numpy|ufunc|suite_schedule|fuse|fusion)\.py}" |
  timeout 150 xargs -P 12 -I{} sh -c 'timeout 140 python3 -m pytest -q -x -p no:cacheprovider "{}" 2>&1 | tail -1 | sed "s|^|$(basename {}): |"')
echo "== build + GPU tests at $((SECONDS - t0)) s"
old=${CHECK_OLD:-"LOOM_GPU_ROW_NARROW_MIN=2048 LOOM_GPU_ROW_ITEMS=1 LOOM_GPU_JOINT=0 LOOM_FUSE_SHARED_WALK=0 LOOM_GPU_MAGIC_DIV=2"}
out=${OUT:-/tmp}/ab40
mkdir -p "$out"
export LOOM_CUDA_JIT_TIERS=0 PYTHONUNBUFFERED=1
for t in ${CHECK_TABLES:-suite probe fresh fresh2}; do
  for cfg in new old; do
    envs=""; [ "$cfg" = old ] && envs=$old
    mkdir -p "$out/$t-$cfg" "/tmp/cache40-$cfg"
    env $envs LOOM_CACHE_DIR="/tmp/cache40-$cfg" timeout -k 5 "${CHECK_TABLE_S:-110}" python3 bench/suite/run.py --machine h200 \
      --table "$t" --libs loom --min-time "${CHECK_MIN_TIME:-0.04}" --out-dir "$out/$t-$cfg" > "$out/$t-$cfg.log" 2>&1 ||
      echo "  $t $cfg: exit $? at $((SECONDS - t0)) s"
  done
  echo "== $t at $((SECONDS - t0)) s"
done
python3 - "$out" <<'PY'
import glob, json, math, os, sys
out = sys.argv[1]
def load(tag):
    res = {}
    for js in glob.glob(os.path.join(out, f"*-{tag}", "*.json")):
        for w in json.load(open(js))["workloads"]:
            if "loom" in w.get("ms", {}):
                res[w["name"]] = (w["ms"]["loom"], w.get("kernels", {}).get("loom") if isinstance(w.get("kernels"), dict) else w.get("kernels"))
    return res
new, old = load("new"), load("old")
both = sorted(set(new) & set(old))
logs = []
for n in both:
    a, b = new[n][0], old[n][0]
    if a and b:
        logs.append(math.log(b / a))
        if abs(a / b - 1) > 0.03:
            print(f"{n:32s} new {a:.4f} old {b:.4f} ms  x{b / a:.2f}  kernels {new[n][1]} / {old[n][1]}")
print(f"{len(both)} workloads timed both ways; geomean old/new {math.exp(sum(logs) / max(len(logs), 1)):.3f}; "
      f"only new: {sorted(set(new) - set(old))[:8]} only old: {sorted(set(old) - set(new))[:8]}")
PY
echo "== done at $((SECONDS - t0)) s"
