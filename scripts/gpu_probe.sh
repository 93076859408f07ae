#!/usr/bin/env bash
# gpu_probe.sh: compile-time probes on the GPU machine in ONE device call: builds Loom (Release), runs
# the CUDA C tests, then bench_gpu --cold (12 new kernels, graph to loaded function, median; disk-cache
# hit; elementwise bandwidth) once per setting in $LOOM_PROBE_SETTINGS (env assignments separated by
# ';', "-" for none), with LOOM_DUMP=time's per-kernel compile split summarized, and CuPy's cold
# compile of a new ElementwiseKernel as the anchor. Logs go to $OUT when set.
#   on the GPU machine, from the repository root, with .devkit/ (and build-gpukit/) carried:
#   bash scripts/gpu_probe.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source .devkit/setup.sh
[ "${LOOM_KEEP_BUILD:-0}" = 1 ] || rm -rf build-gpu
mkdir -p build-gpu/logs
args=(-DCMAKE_BUILD_TYPE=Release ${LLVM_ROOT:+-DLLVM_ROOT="$LLVM_ROOT"})
if [ -f build-gpukit/libsleefgnuabi.so.3 ] && ! ldconfig -p | grep -q libsleefgnuabi; then
  args+=(-DLOOM_SLEEF_LIB="$PWD/build-gpukit/libsleefgnuabi.so.3")
fi
export ASAN_OPTIONS="protect_shadow_gap=0"
{ cmake -S . -B build-gpu "${args[@]}" >build-gpu/logs/configure.log 2>&1 &&
  cmake --build build-gpu -j"$(nproc)" >build-gpu/logs/build.log 2>&1; } || { tail -40 build-gpu/logs/build.log; exit 1; }
ctest --test-dir build-gpu -R "${LOOM_PROBE_TESTS:-test_gpu|test_cuda|test_user_kernel|test_raw_kernel}" \
  --output-on-failure 2>&1 | tail -15 | tee build-gpu/logs/ctest.log
IFS=';' read -r -a settings <<< "${LOOM_PROBE_SETTINGS:--}"
for s in "${settings[@]}"; do
  [ "$s" = "-" ] && s=""
  echo "== setting: ${s:-default}"
  # shellcheck disable=SC2086
  env $s LOOM_DUMP=time build-gpu/bench/bench_gpu --cold >build-gpu/logs/probe.out 2>build-gpu/logs/probe.err
  grep -E "cold_compile|disk|elementwise" build-gpu/logs/probe.out | tr '\n' ' '; echo
  grep -E "loom_cold_k" build-gpu/logs/probe.out | sed 's/loom_cold_//; s/_GBps//' | tr '\n' ' '; echo
  python3 - build-gpu/logs/probe.err <<'PY'
import re, sys, statistics as st
rows = [l for l in open(sys.argv[1]) if l.startswith("# time gpu")]
keys = ["lower", "libdevice", "opt", "ptx", "jit", "load", "total"]
acc = {k: [] for k in keys}
for l in rows[1:]:  # the first is warm_driver's kernel
    for k in keys:
        m = re.search(k + r" ([0-9.]+)", l)
        if m: acc[k].append(float(m.group(1)))
print("  median ms per kernel: " + ", ".join("%s %.2f" % (k, st.median(v)) for k, v in acc.items() if v))
PY
  cat build-gpu/logs/probe.err >> build-gpu/logs/probe_all.err
done
if [ "${LOOM_PROBE_CUPY:-1}" = 1 ]; then
  python3 - <<'PY' 2>&1 | tail -3
import time, statistics, cupy as cp
a = cp.ones(1000, dtype=cp.float32); cp.cuda.Device().synchronize()
ts = []
for i in range(5):
    k = cp.ElementwiseKernel("float32 a", "float32 o", "o = a * %d.5f + sinf(a) * %d" % (i, time.time_ns() % 100000),
                             "probe_cold_%d_%d" % (i, time.time_ns()))
    t0 = time.perf_counter(); k(a); cp.cuda.Device().synchronize(); ts.append((time.perf_counter() - t0) * 1e3)
print("cupy_cold_compile_ms %.1f (all: %s)" % (statistics.median(ts), " ".join("%.0f" % t for t in ts)))
PY
fi
if [ -n "${OUT:-}" ]; then cp build-gpu/logs/*.log build-gpu/logs/probe_all.err "$OUT"/ 2>/dev/null; fi
