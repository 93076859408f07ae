#!/usr/bin/env bash
# cupy_suite.sh: runs CuPy's own test suite (CuPy 14.2.0's tests/cupy_tests, vendored in tests/cupy/vendor
# with CuPy's MIT licence) against the installed loom package, through the shim in tests/cupy/shim that
# maps CuPy-internal names only (tests/cupy/README.md). Nothing is fetched: the tests are in the repository.
#
#   scripts/cupy_suite.sh                 the acceptance set (core incl. fusion, math, statistics, creation,
#                                         manipulation, indexing, logic, binary, linalg), full
#   scripts/cupy_suite.sh --all           every directory of cupy_tests
#   scripts/cupy_suite.sh --ci            CI's sample of the acceptance set (tests/cupy/ci_sample, about
#                                         1 test in 16 chosen by node-id hash): fails when its pass rate is
#                                         below tests/cupy/ci_threshold; writes no result files
#   scripts/cupy_suite.sh --no-complex    complex dtypes dropped from cupy.testing's dtype loops
#   scripts/cupy_suite.sh --gpu-only --tag h200 --jobs 12
#                                         on a GPU machine: only the tests a host run skips for want of a
#                                         CUDA device (tests/cupy/gpu_only_tests.txt), one process per module
#   scripts/cupy_suite.sh --merge DIR...  one summary of earlier runs' --work-dir directories (split runs)
#   --paths math_tests/test_arithmetic.py ...   chosen directories or files; --list-failures prints every
#   failing test with its reason; --jobs N runs N pytest processes at once; --help lists the rest.
# Results: bench/results/<date>-cupy-suite-<tag>.{json,md} (tag: host, or --tag). PYTHON picks the
# interpreter (default python3), which must import loom (scripts/setup.sh installs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
py=${PYTHON:-}
if [ -z "$py" ]; then [ -x .venv/bin/python ] && py=$PWD/.venv/bin/python || py=python3; fi
if ! (cd /tmp && "$py" -c "import loom, pytest, numpy") 2>/dev/null; then
  echo "cupy_suite: $py cannot import loom, pytest and numpy; run scripts/setup.sh (PYTHON=...) first" >&2
  exit 2
fi
args=()
for a in "$@"; do
  if [ "$a" = --ci ]; then
    args+=(--sample "$(cat tests/cupy/ci_sample)" --min-pass-rate "$(cat tests/cupy/ci_threshold)" --no-write)
  else
    args+=("$a")
  fi
done
exec "$py" tests/cupy/run_suite.py --python "$py" "${args[@]}"
