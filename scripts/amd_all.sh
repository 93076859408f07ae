#!/usr/bin/env bash
# amd_all.sh: the whole AMD GPU check on a machine with an AMD GPU (an MI300X: gfx942) and ROCm 6.x, the twin
# of gpu_all.sh. Nothing of it has run yet: no machine Loom is developed on has an AMD GPU; what CI checks
# without one is in README.md ("Targets"). Run from the repository root:
#   bash scripts/amd_all.sh            (OUT=<dir> copies logs and results there)
# It needs LLVM 19 (llvm-19-dev and lld-19, or LLVM_ROOT) and Python 3.11+ with numpy and pytest.
#
# The checks run first-things-first, so that the first failure is the most telling one:
#   1. the machine: rocminfo / rocm-smi, libamdhip64 and comgr found, the device's gfx name;
#   2. build (Release, build-amd/);
#   3. test_hip: the HIP layer on the device (facts, memory, copies, streams, events, a raw LLVM IR kernel
#      compiled for the device's chip, loaded with hipModuleLoadData and checked against the host);
#   4. test_amdgpu: code objects for gfx90a / gfx942 / gfx1100 (with ROCm 6's comgr, gfx942 should now link
#      through comgr: the log's last column says which linker each took);
#   5. test_gpu with LOOM_TEST_GPU=hip: every GPU-vs-host differential check (every op and dtype, every
#      reduction strategy, float32 division and sqrt bit for bit against the host's IEEE results, determinism,
#      in-place, streams, events, pools, the disk cache across processes, two devices when there are two),
#      and test_threads_gpu with it: threads evaluating at once in separate contexts and in a shared one;
#   6. the rest of ctest, then the Python suite (tests/python/test_amd.py runs on the GPU; products go through
#      hipBLASLt and loom.fft through hipFFT there: test_products.py, test_fft.py; test_hip_libs checked the
#      bindings against mocks only);
#   7. the benchmark (bench/bench_amd.c): bandwidth of the H200's cases beside the device copy, cold compile,
#      disk-cache hit, into bench/results/<date>-<chip>.json.
# Settings worth trying when something fails: LOOM_AMDGPU_LINKER=lld (comgr) / comgr, LOOM_AMDGPU_CODE_OBJECT=4
# (an older ROCm), LOOM_ROCM_DEVICE_LIBS=<folder of ocml.bc> (device libraries newer than LLVM 19 do not parse:
# Debian's rocm-device-libs work), LOOM_DUMP=time (compile phases).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PYTHONUNBUFFERED=1
build=${LOOM_BUILD_DIR:-build-amd}
logs=$build/logs
mkdir -p "$logs"
py=${PYTHON:-python3}
status=0
step() { echo "== $*" | tee -a "$logs/summary.log"; }

# ---- 1. the machine -----------------------------------------------------------------------------------------
step "machine"
{
  command -v rocminfo >/dev/null && rocminfo | grep -E "Marketing Name|Name: +gfx|Compute Unit|Wavefront" | head -20
  command -v rocm-smi >/dev/null && rocm-smi --showproductname --showmeminfo vram 2>/dev/null | head -20
  ls -l /opt/rocm/lib/libamdhip64.so* /opt/rocm/lib/libamd_comgr.so* 2>/dev/null
  ls -l /opt/rocm/lib/libhipblaslt.so* /opt/rocm/lib/libhipfft.so* 2>/dev/null || echo "no hipBLASLt / hipFFT: products and FFTs on the GPU will fail"
  cat /opt/rocm/.info/version 2>/dev/null
} > "$logs/machine.log" 2>&1
cat "$logs/machine.log"
chip=$(grep -oE "gfx[0-9a-f]+" "$logs/machine.log" | head -1)
chip=${chip:-gfx942}
echo "chip: $chip" | tee -a "$logs/summary.log"

# ---- 2. build -----------------------------------------------------------------------------------------------
step "build ($build, Release)"
# shellcheck disable=SC2086
if ! cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release ${LLVM_ROOT:+-DLLVM_ROOT="$LLVM_ROOT"} ${LOOM_CMAKE_ARGS:-} \
     > "$logs/configure.log" 2>&1 || ! cmake --build "$build" -j"$(nproc)" > "$logs/build.log" 2>&1; then
  tail -40 "$logs/configure.log" "$logs/build.log"
  echo "amd_all.sh: build failed" | tee -a "$logs/summary.log"
  exit 1
fi

run() { # name, command...: runs it, tees the log, records the status
  local name=$1
  shift
  step "$name"
  "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  tail -25 "$logs/$name.log"
  echo "$name: exit $rc" | tee -a "$logs/summary.log"
  [ "$rc" -eq 0 ] || status=1
  return "$rc"
}

# ---- 3-5. the AMD checks first ----------------------------------------------------------------------------------
run test_hip "$build/tests/test_hip"
run test_amdgpu "$build/tests/test_amdgpu"
run test_amdgpu_api "$build/tests/test_amdgpu_api"
LOOM_TEST_GPU=hip run test_gpu_hip "$build/tests/test_gpu"
LOOM_TEST_GPU=hip run test_threads_gpu_hip "$build/tests/test_threads_gpu" # threads, shared and separate contexts

# ---- 6. everything else ---------------------------------------------------------------------------------------
run ctest ctest --test-dir "$build" --output-on-failure -j"$(nproc)" -E "test_gpu$|test_cuda"
step "python"
if "$py" -m pip install -q --no-build-isolation --no-deps --config-settings=build-dir="$build/python" . \
     > "$logs/pip.log" 2>&1; then
  (cd /tmp && "$py" -m pytest "$OLDPWD/tests/python" -q -p no:cacheprovider 2>&1 | tail -25) | tee "$logs/pytest.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
else
  tail -30 "$logs/pip.log"
  status=1
fi

# ---- 7. the benchmark -----------------------------------------------------------------------------------------
step "benchmark"
date=${LOOM_BENCH_DATE:-$(date +%Y-%m-%d)}
"$build/bench/bench_amd" 2>&1 | tee "$logs/bench_amd.txt"
mkdir -p bench/results
"$py" - "$logs/bench_amd.txt" "bench/results/$date-$chip.json" <<'EOF'
import json, sys
vals = {}
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 2:
        try:
            vals[parts[0]] = float(parts[1])
        except ValueError:
            pass
if vals:
    json.dump(vals, open(sys.argv[2], "w"), indent=1, sort_keys=True)
    print("wrote", sys.argv[2])
EOF

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp "$logs"/*.log "$logs"/*.txt "$OUT"/ 2>/dev/null
  cp "bench/results/$date-$chip.json" "$OUT"/ 2>/dev/null
fi
echo "amd_all.sh: $([ "$status" -eq 0 ] && echo "all passed" || echo "FAILURES (see $logs)")" | tee -a "$logs/summary.log"
exit "$status"
