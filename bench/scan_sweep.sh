#!/usr/bin/env bash
# scan_sweep.sh: the look-back scan knob sweep (bench/scan_sweep.py) in ONE device call on the GPU machine:
# the Python package built as scripts/gpu_all.sh builds it (the devkit's LLVM, SLEEF from build-gpukit/,
# .venv-gpu seeing the machine's numpy / cupy / torch), then the sweep, its results copied into $OUT.
#   on the GPU machine, from the repository root, with .devkit/ and build-gpukit/ carried:
#   bash bench/scan_sweep.sh [repeats=10] [budget_s=100]
# Each knob setting runs in its own process with its own LOOM_CACHE_DIR (scan_sweep.py). LOOM_SWEEP_BENCH_SCAN=1
# also runs bench/bench_scan.py (defaults; ~20 s) afterwards. Exit: the sweep's status.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
[ -f .devkit/setup.sh ] && source .devkit/setup.sh
pip_args=()
if [ -f build-gpukit/libsleefgnuabi.so.3 ] && ! ldconfig -p | grep -q libsleefgnuabi; then
  pip_args=(--config-settings=cmake.define.LOOM_SLEEF_LIB="$PWD/build-gpukit/libsleefgnuabi.so.3"
            --config-settings=cmake.define.LOOM_SLEEF_SCALAR_LIB="$PWD/build-gpukit/libsleef.so.3")
  export LD_LIBRARY_PATH="$PWD/build-gpukit${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
py=${PYTHON:-python3}
if [ -z "${PYTHON:-}" ] && python3 -m venv --clear --system-site-packages --without-pip .venv-gpu >/dev/null 2>&1 &&
   .venv-gpu/bin/python -c "import scikit_build_core, numpy" 2>/dev/null; then
  py=$PWD/.venv-gpu/bin/python
fi
mkdir -p build-gpu/logs
t0=$SECONDS
if ! CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) timeout 400 "$py" -m pip install -q --no-build-isolation --no-deps \
     --config-settings=build-dir=build-gpu/python "${pip_args[@]}" . >build-gpu/logs/scan_sweep_pip.log 2>&1; then
  echo "scan_sweep.sh: pip install failed:"; tail -30 build-gpu/logs/scan_sweep_pip.log
  exit 1
fi
echo "scan_sweep.sh: package built in $((SECONDS - t0)) s"
date=$(date +%F)
PYTHONUNBUFFERED=1 LOOM_BENCH_DATE=$date "$py" bench/scan_sweep.py "${1:-10}" "${2:-100}"
rc=$?
if [ "${LOOM_SWEEP_BENCH_SCAN:-0}" = 1 ]; then
  PYTHONUNBUFFERED=1 LOOM_BENCH_DATE=$date timeout 90 "$py" bench/bench_scan.py
fi
[ -n "${OUT:-}" ] && cp bench/results/"$date"-scan-sweep-h200.* bench/results/"$date"-scan-h200.json "$OUT"/ 2>/dev/null
exit $rc
