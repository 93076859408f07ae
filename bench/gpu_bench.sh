#!/usr/bin/env bash
# gpu_bench.sh: ONE device call that builds Loom, runs every C test (scripts/gpu_run.sh, test_gpu
# included) and the GPU benchmark (bench_gpu.c: Loom; bench_gpu.py: CuPy and PyTorch on the same
# shapes), then writes bench/results/<date>-h200.json and a markdown table beside it, and copies
# logs and results into $OUT when it is set.
#   run from the repository root:  bash bench/gpu_bench.sh
# LOOM_BENCH_QUICK=1 runs only the CUDA tests before the benchmark; LOOM_BENCH_ONLY=1 only the benchmark
# (build-gpu/ built already: scripts/gpu_all.sh builds and tests first); LOOM_BENCH_DATE=YYYY-MM-DD names
# the results file (default: today); notes under "## Notes" in that day's .md are kept.
# The devkit (.devkit/) gives LLVM; build-gpukit/ may hold a libsleefgnuabi.so.3 for machines without
# SLEEF (the host backend's vector math).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
source .devkit/setup.sh
# A device machine may keep ignored build outputs between calls while the copied sources keep older
# mtimes: a stale build-gpu/ would then be reused. Start clean unless asked not to.
[ "${LOOM_KEEP_BUILD:-0}" = 1 ] || [ "${LOOM_BENCH_ONLY:-0}" = 1 ] || rm -rf build-gpu
if [ -f build-gpukit/libsleefgnuabi.so.3 ] && ! ldconfig -p | grep -q libsleefgnuabi; then
  export LOOM_CMAKE_ARGS="-DLOOM_SLEEF_LIB=$PWD/build-gpukit/libsleefgnuabi.so.3 -DLOOM_SLEEF_SCALAR_LIB=$PWD/build-gpukit/libsleef.so.3 ${LOOM_CMAKE_ARGS:-}"
fi
export LOOM_CMAKE_ARGS="-DCMAKE_BUILD_TYPE=Release ${LOOM_CMAKE_ARGS:-}"
if [ "${LOOM_BENCH_ONLY:-0}" = 1 ]; then
  test_rc=0
elif [ "${LOOM_BENCH_QUICK:-0}" = 1 ]; then
  # short device leases: build, then only the CUDA tests (test_gpu, test_cuda, test_user_kernel)
  mkdir -p build-gpu/logs
  export ASAN_OPTIONS="protect_shadow_gap=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
  # shellcheck disable=SC2086
  { cmake -S . -B build-gpu ${LLVM_ROOT:+-DLLVM_ROOT="$LLVM_ROOT"} ${LOOM_CMAKE_ARGS:-} >build-gpu/logs/configure.log 2>&1 &&
    cmake --build build-gpu -j"$(nproc)" >build-gpu/logs/build.log 2>&1 &&
    ctest --test-dir build-gpu -R 'test_gpu|test_cuda|test_cublaslt|test_user_kernel|loomrt|test_bundle' --output-on-failure 2>&1 | tee build-gpu/logs/ctest.log; } ||
    { tail -30 build-gpu/logs/build.log; }
  test_rc=${PIPESTATUS[0]}
  grep -q "100% tests passed" build-gpu/logs/ctest.log 2>/dev/null || test_rc=1
else
  bash scripts/gpu_run.sh
  test_rc=$?
fi
date=${LOOM_BENCH_DATE:-$(date +%Y-%m-%d)}
res=bench/results
mkdir -p "$res" build-gpu/logs
# bench_gpu is a CMake target (bench/CMakeLists.txt), built by gpu_run.sh with the rest
(build-gpu/bench/bench_gpu 2>&1 | tee build-gpu/logs/bench_loom.txt) || true
(PYTHONUNBUFFERED=1 python3 bench/bench_gpu.py 2>&1 | tee build-gpu/logs/bench_ref.txt) || true
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > build-gpu/logs/gpu.txt 2>/dev/null || true
python3 - "$date" <<'PY'
import json, sys
date = sys.argv[1]
vals = {}
for f in ("build-gpu/logs/bench_loom.txt", "build-gpu/logs/bench_ref.txt"):
    for line in open(f):
        p = line.split()
        if len(p) == 2:
            try:
                vals[p[0]] = float(p[1])
            except ValueError:
                pass
# derived: how many times faster than CuPy a new kernel is ready (the issue asks for >= 5)
if vals.get("loom_cold_compile_ms"):
    for k in ("cupy_cold_compile_ms", "cupy_cold_compile_fresh_process_ms"):
        if vals.get(k):
            vals[k.replace("_ms", "_over_loom")] = round(vals[k] / vals["loom_cold_compile_ms"], 2)
gpu = open("build-gpu/logs/gpu.txt").read().strip()
out = {"date": date, "machine": gpu or "H200", "timing": "median of 20 after 3 warm-ups (CUDA events)", **vals}
json.dump(out, open(f"bench/results/{date}-h200.json", "w"), indent=2)
rows = [
    ("copy (ceiling)", "copy_GBps", None),
    ("2*x+exp(y) f32 2^28: Loom", "loom_elementwise_GBps", "torch_compile_elementwise_GBps"),
    ("  torch.compile", "torch_compile_elementwise_GBps", None),
    ("  cupy.fuse", "cupy_fuse_elementwise_GBps", None),
    ("  CuPy ElementwiseKernel", "cupy_elementwise_kernel_GBps", None),
    ("  CuPy unfused / torch eager", "cupy_unfused_elementwise_GBps", None),
    ("sum all 2^28: Loom", "loom_sum_all_GBps", "copy_GBps"),
    ("  CuPy / torch", "cupy_sum_all_GBps", None),
    ("sum axis 0 16384^2: Loom", "loom_sum_axis0_GBps", "copy_GBps"),
    ("sum axis 1 16384^2: Loom", "loom_sum_axis1_GBps", "copy_GBps"),
    ("softmax 16384x4096: Loom", "loom_softmax_GBps", "torch_softmax_GBps"),
    ("  torch.softmax", "torch_softmax_GBps", None),
    ("cold compile ms: Loom", "loom_cold_compile_ms", None),
    ("  Loom, 8 new reductions (softmax, norms, ...)", "loom_cold_compile_reduction_ms", None),
    ("  CuPy ElementwiseKernel (same process, after the CuPy runs)", "cupy_cold_compile_ms", None),
    ("  CuPy ElementwiseKernel (fresh process)", "cupy_cold_compile_fresh_process_ms", None),
    ("  CuPy (same process) / Loom", "cupy_cold_compile_over_loom", None),
    ("  CuPy (fresh process) / Loom", "cupy_cold_compile_fresh_process_over_loom", None),
    ("disk-cache hit ms (new process)", "loom_disk_cache_hit_ms", None),
    ("host overhead per call us: Loom eval", "loom_launch_overhead_us", None),
    ("  bare cuLaunchKernel", "raw_launch_us", None),
]
md = [f"# GPU benchmark {date} ({gpu})", "", "| case | value | ratio |", "| --- | --- | --- |"]
for name, key, ref in rows:
    v = vals.get(key)
    r = vals.get(ref) if ref else None
    md.append(f"| {name} ({key}) | {'' if v is None else '%.2f' % v} | {'' if not (v and r) else '%.2f' % (v / r)} |")
# keep the notes (predictions and outcomes) of an earlier run of the same day
import os
mdpath = f"bench/results/{date}-h200.md"
if os.path.exists(mdpath):
    old = open(mdpath).read()
    at = old.find("\n## Notes")
    if at >= 0:
        md += ["", old[at + 1:].rstrip("\n")]
open(mdpath, "w").write("\n".join(md) + "\n")
print("\n".join(md))
PY
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp "$res/$date-h200.json" "$res/$date-h200.md" "$OUT"/ 2>/dev/null
  tar -czf "$OUT/logs.tgz" build-gpu/logs 2>/dev/null
fi
echo "gpu_bench.sh: tests exit $test_rc"
