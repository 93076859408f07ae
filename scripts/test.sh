#!/usr/bin/env bash
# test.sh: build and run every C test twice: a Release build (build/, via scripts/setup.sh) and a
# Debug build with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/). Prints ctest's
# summary lines; exits nonzero if any build or test fails. Both passes always run, so one report
# shows every failure. After the Release ctest, the Python suite (pytest tests/python) runs against the
# package setup.sh installed, then a sample of CuPy's own test suite (scripts/cupy_suite.sh --ci). Environment:
# LOOM_JOBS (default: nproc), LOOM_SKIP_ASAN=1 skips the second pass, LOOM_SKIP_PYTHON=1 skips the Python
# package and its tests, LOOM_SKIP_CUPY_SUITE=1 the CuPy sample, PYTHON picks the interpreter.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
jobs=${LOOM_JOBS:-$(nproc 2>/dev/null || echo 2)}
status=0

echo "== setup + Release build (build/)"
if ! bash scripts/setup.sh; then
  echo "test: Release build failed" >&2
  exit 1
fi

echo "== ctest (Release)"
(cd build && ctest --output-on-failure -j"$jobs") || status=1

if [ "${LOOM_SKIP_PYTHON:-0}" != 1 ]; then
  echo "== pytest (Python package, tests/python)"
  # from the repository root, the installed package is imported (python/ is not on sys.path)
  "${PYTHON:-python3}" -m pytest tests/python -q -p no:cacheprovider 2>&1 | tail -n 15 || status=1
  if [ "${LOOM_SKIP_CUPY_SUITE:-0}" != 1 ]; then
    echo "== CuPy's test suite, CI sample (scripts/cupy_suite.sh --ci; tests/cupy/README.md)"
    # fails when the sample's pass rate drops below tests/cupy/ci_threshold
    bash scripts/cupy_suite.sh --ci 2>&1 | tail -n 15 || status=1
  fi
fi

if [ "${LOOM_SKIP_ASAN:-0}" != 1 ]; then
  echo "== ASan/UBSan Debug build (build-asan/)"
  mkdir -p build-asan
  if ! cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLOOM_SANITIZE=ON -DLOOM_BUILD_BENCH=OFF \
       >build-asan/configure.log 2>&1; then
    cat build-asan/configure.log >&2
    echo "test: sanitizer configure failed" >&2
    exit 1
  fi
  if ! cmake --build build-asan -j"$jobs" >build-asan/build.log 2>&1; then
    grep -E 'error|Error|undefined reference' build-asan/build.log >&2 || tail -n 60 build-asan/build.log >&2
    echo "test: sanitizer build failed (full log: build-asan/build.log)" >&2
    exit 1
  fi
  echo "== ctest (ASan/UBSan)"
  # LLVM's own code is not instrumented; what it allocates and keeps reachable is not reported.
  (cd build-asan &&
   ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1 \
   UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
   ctest --output-on-failure -j"$jobs") || status=1
fi

if [ "$status" -eq 0 ]; then echo "test: all passed"; else echo "test: FAILURES (see above)" >&2; fi
exit "$status"
