#!/usr/bin/env bash
# gpu_run.sh: build Loom and run its C tests on the GPU machine (one H200, driver 580, CUDA 13).
#
#   scripts/gpu_run.sh            # from anywhere; uses the repository this script lives in
#
# Sources .devkit/setup.sh (which sets LLVM_ROOT and friends), configures into build-gpu with
# -DLLVM_ROOT=$LLVM_ROOT, builds, runs ctest, and copies the logs into $OUT when OUT is set.
# Extra cmake arguments may be passed in LOOM_CMAKE_ARGS (e.g. "-DLOOM_SANITIZE=ON").
# Exits with ctest's status (or the failing step's).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

if [ -f .devkit/setup.sh ]; then
  # shellcheck disable=SC1091
  source .devkit/setup.sh
else
  echo "gpu_run.sh: .devkit/setup.sh not found; using the environment as it is" >&2
fi

logs=build-gpu/logs
mkdir -p "$logs"

# libcuda keeps allocations until exit by design: do not report them as leaks under ASan.
printf 'leak:libcuda.so\nleak:libnvidia-ptxjitcompiler.so\n' > build-gpu/lsan.supp
# The driver maps memory where ASan keeps its shadow gap: without this cuInit fails (seen on an
# H200 with driver 580: CUDA_ERROR_OUT_OF_MEMORY). Harmless in a build without sanitizers.
export ASAN_OPTIONS="protect_shadow_gap=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$PWD/build-gpu/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

{ nvidia-smi || echo "nvidia-smi not available"; } > "$logs/nvidia-smi.log" 2>&1

rc=0
# shellcheck disable=SC2086
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo ${LLVM_ROOT:+-DLLVM_ROOT="$LLVM_ROOT"} \
  ${LOOM_CMAKE_ARGS:-} 2>&1 | tee "$logs/configure.log" || rc=$?
if [ "$rc" -eq 0 ]; then
  cmake --build build-gpu -j"$(nproc)" 2>&1 | tee "$logs/build.log" || rc=$?
fi
if [ "$rc" -eq 0 ]; then
  ctest --test-dir build-gpu -j"$(nproc)" --output-on-failure 2>&1 | tee "$logs/ctest.log" || rc=$?
  cp build-gpu/Testing/Temporary/LastTest.log "$logs/LastTest.log" 2>/dev/null || true
fi

if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT" && cp "$logs"/*.log "$OUT"/ 2>/dev/null || true
fi
echo "gpu_run.sh: exit status $rc"
exit "$rc"
