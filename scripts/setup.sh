#!/usr/bin/env bash
# setup.sh: make a fresh Debian 12 able to build Loom, then build it into build/ (Release).
# Idempotent: packages already installed are detected with dpkg -s, and apt-get (update, install)
# runs only when something is missing; a second run installs nothing and rebuilds only what changed.
# Quiet: tool output goes to build logs that are printed only when a step fails.
# Environment: LOOM_JOBS (parallel build jobs, default: nproc), LOOM_BUILD_DIR (default: build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(build-essential cmake llvm-19-dev libsleef-dev python3-dev clang-19 libclang-rt-19-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# clang-19 + libclang-rt-19-dev build the snippet fuzzer (tests/fuzz) and, later, CUDA C++ sources of
# RawModule; the library itself needs only llvm-19-dev.

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

# ---- Python package `loom` (python/): its build and test dependencies, then the package itself into
# the python3 on PATH (PYTHON overrides). pip runs only for modules that do not import; the package
# build is incremental (build/python). LOOM_SKIP_PYTHON=1 skips this step.
if [ "${LOOM_SKIP_PYTHON:-0}" != 1 ]; then
  py=${PYTHON:-python3}
  pylog="$build_dir/python.log"
  missing_py=()
  for m in scikit_build_core numpy ml_dtypes pytest hypothesis; do
    "$py" -c "import $m" >/dev/null 2>&1 || missing_py+=("${m//_/-}")
  done
  if ((${#missing_py[@]})); then
    if ! "$py" -m pip install -q "${missing_py[@]}" >"$pylog" 2>&1; then
      cat "$pylog" >&2
      echo "setup: pip install ${missing_py[*]} failed (see above)" >&2
      exit 1
    fi
  fi
  if ! "$py" -m pip install -q --no-build-isolation --config-settings=build-dir="$build_dir/python" . \
       >"$pylog" 2>&1; then
    cat "$pylog" >&2
    echo "setup: pip install of the loom Python package failed (log: $pylog)" >&2
    exit 1
  fi
  echo "setup: installed the loom Python package into $("$py" -c 'import sys; print(sys.prefix)')"
fi
