#!/usr/bin/env bash
# gpu_python.sh: only the Python half of scripts/gpu_all.sh (install, pytest with the GPU tests, the
# matmul benchmark), for a short device call; everything lands in one tarball $OUT/gpu-python.tgz.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
mkdir -p build-gpu/logs
source .devkit/setup.sh
sleef=()
if [ -f build-gpukit/libsleefgnuabi.so.3 ]; then
  sleef=(--config-settings=cmake.define.LOOM_SLEEF_LIB="$PWD/build-gpukit/libsleefgnuabi.so.3"
         --config-settings=cmake.define.LOOM_SLEEF_SCALAR_LIB="$PWD/build-gpukit/libsleef.so.3")
  export LD_LIBRARY_PATH="$PWD/build-gpukit${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
python3 -m venv --clear --system-site-packages --without-pip .venv-gpu >/dev/null 2>&1 && py=$PWD/.venv-gpu/bin/python || py=python3
"$py" -c "import scikit_build_core, numpy, pytest" 2>/dev/null || py=python3  # a venv over a venv python misses its packages
"$py" -m pip install -v --no-build-isolation --no-deps --config-settings=build-dir=build-gpu/python \
  "${sleef[@]}" . > build-gpu/logs/pip.log 2>&1
rc=$?
echo "pip exit $rc"; [ $rc -eq 0 ] || tail -40 build-gpu/logs/pip.log
if [ $rc -eq 0 ]; then
  (cd /tmp && timeout 300 "$py" -m pytest "$OLDPWD/tests/python" -q -rfE -p no:cacheprovider > "$OLDPWD/build-gpu/logs/pytest_full.log" 2>&1)
  grep -E "^(FAILED|ERROR) " build-gpu/logs/pytest_full.log | head -40; tail -2 build-gpu/logs/pytest_full.log
  timeout 200 "$py" bench/bench_matmul.py > build-gpu/logs/bench_matmul.log 2>&1; tail -25 build-gpu/logs/bench_matmul.log
fi
[ -n "${OUT:-}" ] && tar czf "$OUT/gpu-python.tgz" build-gpu/logs bench/results/*h200* 2>/dev/null
