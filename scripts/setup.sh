#!/usr/bin/env bash
# setup.sh: make a fresh Debian 12 able to build Loom, then build it into build/ (Release) and install
# the Python package into the project virtual environment .venv/ (see the Python step below).
# Idempotent: packages already installed are detected with dpkg -s, and apt-get (update, install)
# runs only when something is missing; a second run installs nothing and rebuilds only what changed.
# Quiet: tool output goes to build logs that are printed only when a step fails.
# Environment: LOOM_JOBS (parallel build jobs, default: nproc), LOOM_BUILD_DIR (default: build),
# PYTHON (an interpreter to use instead of .venv/), LOOM_SKIP_PYTHON=1 (no Python step).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(build-essential cmake pkg-config llvm-19-dev libsleef-dev zlib1g-dev libzstd-dev python3-dev python3-venv
          clang-19 libclang-rt-19-dev llvm-19 lld-19 rocm-device-libs libamd-comgr2 libamdhip64-5)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# clang-19 + libclang-rt-19-dev build the snippet fuzzer (tests/fuzz) and, later, CUDA C++ sources of
# RawModule; the library itself needs only llvm-19-dev. pkg-config: tests/consumer. zlib1g-dev and
# libzstd-dev: the static archives the portable wheel links (scripts/build_wheel.sh). The AMD target
# (codegen/amdgpu*.c) uses, at run time and without an AMD GPU: ROCm's device libraries
# (rocm-device-libs: ocml.bc), comgr (libamd-comgr2) and ld.lld (lld-19) to link code objects;
# llvm-19's llvm-readelf / llvm-objdump check them in test_amdgpu; the HIP runtime (libamdhip64-5) is
# what runtime/hip/ loads (test_hip: no device here).

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      sudo=(sudo)
    else
      echo "setup: missing packages (${missing[*]}) and not root; run as root or install them" >&2
      exit 1
    fi
  fi
  log=$(mktemp)
  trap 'rm -f "$log"' EXIT
  export DEBIAN_FRONTEND=noninteractive
  if ! "${sudo[@]}" apt-get update -q >"$log" 2>&1 ||
     ! "${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: apt-get failed (see above)" >&2
    exit 1
  fi
fi

for tool in cmake cc; do
  command -v "$tool" >/dev/null 2>&1 || { echo "setup: $tool not found after install" >&2; exit 1; }
done

build_dir=${LOOM_BUILD_DIR:-build}
jobs=${LOOM_JOBS:-$(nproc 2>/dev/null || echo 2)}
mkdir -p "$build_dir"
if ! cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >"$build_dir/configure.log" 2>&1; then
  cat "$build_dir/configure.log" >&2
  echo "setup: cmake configure failed (log: $build_dir/configure.log)" >&2
  exit 1
fi
if ! cmake --build "$build_dir" -j"$jobs" >"$build_dir/build.log" 2>&1; then
  grep -E 'error|Error|undefined reference' "$build_dir/build.log" >&2 || tail -n 60 "$build_dir/build.log" >&2
  echo "setup: build failed (full log: $build_dir/build.log)" >&2
  exit 1
fi
# Warnings are not fatal, but they are shown: the code is meant to be -Wall -Wextra clean.
grep -E 'warning:' "$build_dir/build.log" >&2 || true
echo "setup: built $build_dir/ (Release)"

# ---- Python package `loom` (python/): a project virtual environment, .venv/ in the repository
# (ignored by git), made with the python3 on PATH; PYTHON=/path/to/python uses that interpreter instead.
# Nothing is ever installed into an externally managed (PEP 668) interpreter such as Debian's
# /usr/bin/python3. The Python dependencies are listed once, in pyproject.toml ([build-system],
# [project].dependencies, [dependency-groups].test); pip runs only when one is missing
# (scripts/pydeps.py). The package build is incremental (build/python). LOOM_SKIP_PYTHON=1 skips this.
if [ "${LOOM_SKIP_PYTHON:-0}" != 1 ]; then
  pylog="$build_dir/python.log"
  if [ -n "${PYTHON:-}" ]; then
    py=$PYTHON
  else
    py=.venv/bin/python
    if [ ! -x "$py" ] || ! "$py" -c 'import pip' >/dev/null 2>&1; then
      rm -rf .venv
      if ! python3 -m venv .venv >"$pylog" 2>&1; then
        cat "$pylog" >&2
        echo "setup: python3 -m venv .venv failed (on Debian: apt-get install python3-venv)" >&2
        exit 1
      fi
      echo "setup: made the project virtual environment .venv/ ($(.venv/bin/python -V 2>&1))"
    fi
  fi
  if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1; then
    echo "setup: $py is not a Python >= 3.11 (set PYTHON to one, or unset it to use .venv/)" >&2
    exit 1
  fi
  # PEP 668: an interpreter outside a venv whose stdlib holds EXTERNALLY-MANAGED belongs to the system
  if "$py" -c 'import os, sys, sysconfig
sys.exit(0 if sys.prefix == sys.base_prefix and
         os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")) else 1)'; then
    echo "setup: PYTHON=$py is an externally managed interpreter (PEP 668); unset PYTHON to use the" \
         "project venv .venv/, or point PYTHON at a virtual environment's python" >&2
    exit 1
  fi
  if ! needed=$("$py" scripts/pydeps.py build runtime test 2>"$pylog"); then
    cat "$pylog" >&2
    echo "setup: reading the Python dependencies from pyproject.toml failed" >&2
    exit 1
  fi
  missing_py=()
  [ -z "$needed" ] || mapfile -t missing_py <<<"$needed"
  if ((${#missing_py[@]})); then
    echo "setup: pip install ${missing_py[*]}"
    if ! "$py" -m pip install -q "${missing_py[@]}" >"$pylog" 2>&1; then
      cat "$pylog" >&2
      echo "setup: pip install ${missing_py[*]} failed (see above)" >&2
      exit 1
    fi
  fi
  if ! "$py" -m pip install -q --no-build-isolation --no-deps \
       --config-settings=build-dir="$build_dir/python" . >"$pylog" 2>&1; then
    cat "$pylog" >&2
    echo "setup: pip install of the loom Python package failed (log: $pylog)" >&2
    exit 1
  fi
  echo "setup: installed the loom Python package into $("$py" -c 'import sys; print(sys.prefix)')"
fi
