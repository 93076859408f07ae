#!/usr/bin/env bash
# gpu_asan_pytest.sh [PYTEST ARGS...]: the Python package built with AddressSanitizer + UBSan (LOOM_SANITIZE)
# into build-asan-py/, then pytest with the ASan runtime preloaded into python3: for memory errors that
# show only on a GPU machine (a "double free" at interpreter exit). On the GPU machine, from the repository
# root, with .devkit/ and build-gpukit/ carried (as scripts/gpu_all.sh); the report is ASan's, on stderr.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -f .devkit/setup.sh ] && source .devkit/setup.sh
args=(--config-settings=build-dir=build-asan-py --config-settings=cmake.define.LOOM_SANITIZE=ON
      --config-settings=cmake.build-type=Debug)
if [ -f build-gpukit/libsleefgnuabi.so.3 ]; then
  args+=(--config-settings=cmake.define.LOOM_SLEEF_LIB="$PWD/build-gpukit/libsleefgnuabi.so.3"
         --config-settings=cmake.define.LOOM_SLEEF_SCALAR_LIB="$PWD/build-gpukit/libsleef.so.3")
  export LD_LIBRARY_PATH="$PWD/build-gpukit${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
py=${PYTHON:-python3}
CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) "$py" -m pip install -q --no-build-isolation --no-deps "${args[@]}" . >/tmp/asan-pip.log 2>&1 ||
  { tail -30 /tmp/asan-pip.log; exit 2; }
asan=$(gcc -print-file-name=libasan.so)
ubsan=$(gcc -print-file-name=libubsan.so)
cd /tmp && LD_PRELOAD="$asan $ubsan" ASAN_OPTIONS=protect_shadow_gap=0:detect_leaks=0:abort_on_error=0 \
  "$py" -m pytest -q -p no:cacheprovider "$@"
