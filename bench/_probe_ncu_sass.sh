#!/usr/bin/env bash
# _probe_ncu_sass.sh: an H200 probe: build the package (scripts/gpu_all.sh, nothing else), then Nsight
# Compute metrics and SASS instruction counts of the named workloads' kernels.
#   SKIP_BUILD=1 (package already installed) bash bench/_probe_ncu_sass.sh w1 w2 ... -> $OUT/ncu-<w>.txt,
#   $OUT/sass.txt (SASS instruction counts per entry and opcode), $OUT/sass-all.txt (the SASS)
set -uo pipefail
out=${OUT:-.}
[ -n "${SKIP_BUILD:-}" ] || LOOM_GPU_C=0 LOOM_GPU_PYTEST=0 LOOM_GPU_BENCH=0 LOOM_GPU_FUZZ=0 LOOM_GPU_DEADLINE_S=300 bash scripts/gpu_all.sh > /tmp/ga.log 2>&1
tail -5 /tmp/ga.log
source .devkit/setup.sh
export LD_LIBRARY_PATH="$PWD/build-gpukit:$LD_LIBRARY_PATH" LOOM_CUDA_JIT_TIERS=0
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for w in "$@"; do
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
if len(sys.argv) > 1:
    ptx = loom.inspect(lambda *a: w.fn(loom, *a), *args, what=("ptx",))["ptx"]
    open("/tmp/sass_$w.ptx", "w").write(ptx)
PY
  python3 /tmp/ncu_$w.py dump > /dev/null 2>&1
  ptxas -arch=sm_90 /tmp/sass_$w.ptx -o /tmp/sass_$w.cubin 2>&1 | tail -2
  { echo "=== $w"; cuobjdump -sass /tmp/sass_$w.cubin | awk '/Function :/{f=$3} /\/\*[0-9a-f]{4}\*\//{n[f]++; split($0,a,";"); op=a[1]; sub(/^.*\*\/ */,"",op); sub(/^@!?U?P[0-9T] /,"",op); split(op,o," "); m[f" "o[1]]++} END{for(k in n) print "count", k, n[k]; for(k in m) print "op", k, m[k]}' | sort; } >> $out/sass.txt
  { echo "=== $w"; cuobjdump -sass /tmp/sass_$w.cubin; } >> $out/sass-all.txt 2>&1
  timeout 150 "$ncu" --clock-control none --target-processes all --launch-skip 3 --launch-count 2 --section SpeedOfLight \
    --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats --section WarpStateStats \
    --section ComputeWorkloadAnalysis --section InstructionStats \
    python3 /tmp/ncu_$w.py > "$out/ncu-$w.txt" 2>&1
  echo "$w: exit $? ($(wc -l < "$out/ncu-$w.txt") lines)"
done
