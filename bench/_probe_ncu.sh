#!/usr/bin/env bash
# _probe_ncu.sh: Nsight Compute metrics of the H200 suite's workloads under 85 % of copy bandwidth (on the
# GPU machine, after scripts/gpu_all.sh installed the package: LOOM_GPU_C=0 LOOM_GPU_PYTEST=0 ...).
#   bash bench/_probe_ncu.sh [workload ...]   -> $OUT/ncu-<workload>.txt (or ./ncu-*.txt)
set -uo pipefail
out=${OUT:-.}
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$ncu" ] || { echo "no ncu on this machine"; exit 0; }
names=${*:-symmetrize softmax_f16 bn2d_stats argmax_rows}
export LOOM_CUDA_JIT_TIERS=0 # the optimized kernel from the first call (no tier-0 stand-in while it compiles)
for w in $names; do
  cat > /tmp/ncu_$w.py <<PY
import sys; sys.path.insert(0, "$PWD")
import numpy as np, loom
from bench.suite import workloads as W, inputs as I
w = [x for x in W.WORKLOADS if x.name == "$w"][0]
args = [loom.asarray(a) for a in I.host_inputs(w, "h200")]
f = loom.fuse(kernel_name=w.name)(lambda *a: w.fn(loom, *a))
for _ in range(8):
    out = f(*args); loom.eval(*(out if isinstance(out, tuple) else (out,)))
loom.cuda.Device().synchronize()
PY
  timeout 120 "$ncu" --target-processes all --launch-skip 3 --launch-count 3 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
    python3 /tmp/ncu_$w.py > "$out/ncu-$w.txt" 2>&1
  echo "$w: exit $? ($(wc -l < "$out/ncu-$w.txt") lines)"
done
