#!/usr/bin/env bash
# gpu_all.sh: the whole GPU check in ONE device call (an H200 lease is short): builds Loom, runs every
# C test and the C/CuPy/PyTorch benchmark (bench/gpu_bench.sh), then builds the Python package there
# (no network: --no-build-isolation --no-deps), runs the Python suite (GPU tests included) and the
# Python GPU benchmark, and copies results and logs into $OUT.
#   on the GPU machine, from the repository root, with .devkit/ and build-gpukit/ carried:
#   bash scripts/gpu_all.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PYTHONUNBUFFERED=1
bash bench/gpu_bench.sh
c_rc=$?
# user kernels vs built-in loom on the GPU (bench_user_kernels is built by gpu_bench.sh with the rest)
date=${LOOM_BENCH_DATE:-$(date +%Y-%m-%d)}
mkdir -p build-gpu/logs
build-gpu/bench/bench_user_kernels --gpu "bench/results/$date-user-kernels-h200.json" \
  "bench/results/$date-user-kernels-h200.md" 2>&1 | tee build-gpu/logs/bench_user_kernels_gpu.log
# AOT bundles on the GPU (libloomrt): the bundle the ctest run made, checked and timed on device 0
build-gpu/tests/loomrt/loomrt_check build-gpu/tests/loomrt/loomrt_test.lbun 2>&1 | tee build-gpu/logs/loomrt_gpu.log
source .devkit/setup.sh
sleef=()
if [ -f build-gpukit/libsleefgnuabi.so.3 ] && ! ldconfig -p | grep -q libsleefgnuabi; then
  sleef=(--config-settings=cmake.define.LOOM_SLEEF_LIB="$PWD/build-gpukit/libsleefgnuabi.so.3")
  export LD_LIBRARY_PATH="$PWD/build-gpukit${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
mkdir -p build-gpu/logs
py_rc=0
python3 -m pip install -q --no-build-isolation --no-deps --config-settings=build-dir=build-gpu/python \
  "${sleef[@]}" . > build-gpu/logs/pip.log 2>&1 || { py_rc=$?; tail -30 build-gpu/logs/pip.log; }
if [ "$py_rc" -eq 0 ]; then
  (cd /tmp && python3 -m pytest "$OLDPWD/tests/python" -q -rfE -p no:cacheprovider > "$OLDPWD/build-gpu/logs/pytest_full.log" 2>&1)
  py_rc=$?
  grep -E "^(FAILED|ERROR) " build-gpu/logs/pytest_full.log | head -60 | tee build-gpu/logs/pytest.log
  tail -3 build-gpu/logs/pytest_full.log | tee -a build-gpu/logs/pytest.log
  python3 bench/bench_python_gpu.py 2>&1 | tee build-gpu/logs/bench_python_gpu.log
fi
[ "$py_rc" -eq 0 ] && [ "${LOOM_GPU_SUITE:-1}" != 0 ] && bash bench/suite/gpu.sh   # LOOM_GPU_SUITE=0 skips it; the workload suite vs torch/JAX/CuPy (~4 min); copies into $OUT
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp build-gpu/logs/pytest.log build-gpu/logs/bench_python_gpu.log build-gpu/logs/pip.log "$OUT"/ 2>/dev/null
  cp bench/results/*-python-h200.json "$OUT"/ 2>/dev/null
  cp bench/results/*-user-kernels-h200.* build-gpu/logs/bench_user_kernels_gpu.log "$OUT"/ 2>/dev/null
  cp build-gpu/logs/loomrt_gpu.log "$OUT"/ 2>/dev/null
  (cd build-gpu && tar czf "$OUT/gpu-logs.tgz" logs Testing/Temporary/LastTest.log 2>/dev/null)
fi
echo "gpu_all.sh: C tests exit $c_rc, Python exit $py_rc"
