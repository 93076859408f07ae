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
c_rc=0
mkdir -p build-gpu/logs
if [ "${LOOM_GPU_C:-1}" != 0 ]; then  # LOOM_GPU_C=0: the Python half only (a short device call)
  bash bench/gpu_bench.sh
  c_rc=$?
  # user kernels vs built-in loom on the GPU (bench_user_kernels is built by gpu_bench.sh with the rest)
  date=${LOOM_BENCH_DATE:-$(date +%Y-%m-%d)}
  build-gpu/bench/bench_user_kernels --gpu "bench/results/$date-user-kernels-h200.json" \
    "bench/results/$date-user-kernels-h200.md" 2>&1 | tee build-gpu/logs/bench_user_kernels_gpu.log
  # AOT bundles on the GPU (libloomrt): the bundle the ctest run made, checked and timed on device 0
  build-gpu/tests/loomrt/loomrt_check build-gpu/tests/loomrt/loomrt_test.lbun 2>&1 | tee build-gpu/logs/loomrt_gpu.log
fi
source .devkit/setup.sh
sleef=()
if [ -f build-gpukit/libsleefgnuabi.so.3 ] && ! ldconfig -p | grep -q libsleefgnuabi; then
  sleef=(--config-settings=cmake.define.LOOM_SLEEF_LIB="$PWD/build-gpukit/libsleefgnuabi.so.3"
         --config-settings=cmake.define.LOOM_SLEEF_SCALAR_LIB="$PWD/build-gpukit/libsleef.so.3")
  export LD_LIBRARY_PATH="$PWD/build-gpukit${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
mkdir -p build-gpu/logs
# The Python side runs in a virtual environment, .venv-gpu/, that also sees the machine's packages
# (numpy, pytest, scikit-build-core, cupy, torch: the GPU machine has no network), made without pip
# of its own (the machine's pip installs into it). PYTHON overrides; python3 if no venv can be made.
py=${PYTHON:-}
if [ -z "$py" ]; then
  if python3 -m venv --clear --system-site-packages --without-pip .venv-gpu >build-gpu/logs/venv.log 2>&1; then
    py=$PWD/.venv-gpu/bin/python
  else
    echo "gpu_all.sh: no venv ($(tail -1 build-gpu/logs/venv.log)); using python3" >&2
    py=python3
  fi
fi
"$py" -c "import scikit_build_core, numpy, pytest" 2>/dev/null || py=python3  # a venv over a venv python (the H200 image's /opt/torch/.venv) misses its packages
py_rc=0
"$py" -m pip install -q --no-build-isolation --no-deps --config-settings=build-dir=build-gpu/python \
  "${sleef[@]}" . > build-gpu/logs/pip.log 2>&1 || { py_rc=$?; tail -30 build-gpu/logs/pip.log; }
if [ "$py_rc" -eq 0 ]; then
  (cd /tmp && "$py" -m pytest "$OLDPWD/tests/python" -q -rfE -p no:cacheprovider > "$OLDPWD/build-gpu/logs/pytest_full.log" 2>&1)
  py_rc=$?
  grep -E "^(FAILED|ERROR) " build-gpu/logs/pytest_full.log | head -60 | tee build-gpu/logs/pytest.log
  tail -3 build-gpu/logs/pytest_full.log | tee -a build-gpu/logs/pytest.log
  "$py" bench/bench_python_gpu.py 2>&1 | tee build-gpu/logs/bench_python_gpu.log
  # matrix products vs CuPy / PyTorch / torch.compile (issue 15; ~3 min): bench/results/<date>-matmul-h200.{json,md}
  "$py" bench/bench_matmul.py 2>&1 | tee build-gpu/logs/bench_matmul.log
  # cumsum (scan kernels) vs CuPy / PyTorch (issue 15; < 1 min): bench/results/<date>-scan-h200.json
  "$py" bench/bench_scan.py 2>&1 | tee build-gpu/logs/bench_scan.log
  # Dask with loom vs CuPy chunks (issue 18): needs the wheels of scripts/dask_wheels.sh carried in .whl/
  if ls .whl/dask-*.whl >/dev/null 2>&1; then
    if "$py" -m pip install -q --no-index --no-deps --no-compile --target /tmp/dask-site .whl/*.whl; then
      export PYTHONPATH=/tmp/dask-site${PYTHONPATH:+:$PYTHONPATH}
      (cd /tmp && "$py" -m pytest "$OLDPWD/tests/python/test_dask.py" -q -p no:cacheprovider -p no:logging 2>&1 |
        tail -15) | tee build-gpu/logs/dask_gpu.log
      LOOM_DASK_BENCH_GPUS=${LOOM_DASK_BENCH_GPUS:-1,2} "$py" bench/dask_gpu.py 2>&1 | tee -a build-gpu/logs/dask_gpu.log
    fi
  fi
fi
[ "$py_rc" -eq 0 ] && [ "${LOOM_GPU_SUITE:-1}" != 0 ] && bash bench/suite/gpu.sh   # LOOM_GPU_SUITE=0 skips it; the workload suite vs torch/JAX/CuPy (~4 min); copies into $OUT
if [ -n "${OUT:-}" ]; then
  mkdir -p "$OUT"
  cp build-gpu/logs/pytest.log build-gpu/logs/bench_python_gpu.log build-gpu/logs/pip.log "$OUT"/ 2>/dev/null
  cp bench/results/*-python-h200.json "$OUT"/ 2>/dev/null
  cp bench/results/*-user-kernels-h200.* build-gpu/logs/bench_user_kernels_gpu.log "$OUT"/ 2>/dev/null
  cp build-gpu/logs/loomrt_gpu.log "$OUT"/ 2>/dev/null
  cp bench/results/*-matmul-h200.* build-gpu/logs/bench_matmul.log "$OUT"/ 2>/dev/null
  cp bench/results/*-scan-h200.json build-gpu/logs/bench_scan.log "$OUT"/ 2>/dev/null
  cp build-gpu/logs/dask_gpu.log bench/results/*-dask-gpu.json "$OUT"/ 2>/dev/null
  (cd build-gpu && tar czf "$OUT/gpu-logs.tgz" logs Testing/Temporary/LastTest.log 2>/dev/null)
fi
echo "gpu_all.sh: C tests exit $c_rc, Python exit $py_rc"
