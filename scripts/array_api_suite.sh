#!/usr/bin/env bash
# array_api_suite.sh: runs data-apis/array-api-tests (tag 2025.05.23, the array API standard 2024.12;
# vendored in tests/array_api with its MIT licence) against the installed loom package
# (ARRAY_API_TESTS_MODULE=loom). Nothing is fetched: the tests are in the repository.
#
#   scripts/array_api_suite.sh                every test, 20 hypothesis examples each, derandomized;
#                                             writes bench/results/<date>-array-api.{json,md}
#   scripts/array_api_suite.sh --ci           CI's sample: 1 test in tests/array_api_loom/ci_sample_every
#                                             (by test-id CRC), 5 examples; fails when the pass rate is below
#                                             tests/array_api_loom/ci_threshold; writes nothing
#   --max-examples N, --list-failures, --machine TEXT, test files or ids (relative to tests/array_api);
#   --help lists the rest (tests/array_api_loom/run_suite.py).
# PYTHON picks the interpreter (default python3); it must import loom, pytest, hypothesis, ndindex and
# pytest_jsonreport (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
py=${PYTHON:-}
if [ -z "$py" ]; then [ -x .venv/bin/python ] && py=$PWD/.venv/bin/python || py=python3; fi
if ! (cd /tmp && "$py" -c "import loom, pytest, hypothesis, ndindex, pytest_jsonreport") 2>/dev/null; then
  echo "array_api_suite: $py cannot import loom, pytest, hypothesis, ndindex and pytest_jsonreport;" \
       "run scripts/setup.sh (PYTHON=...) first" >&2
  exit 2
fi
args=()
for a in "$@"; do
  if [ "$a" = --ci ]; then
    args+=(--sample-every "$(cat tests/array_api_loom/ci_sample_every)" --max-examples 5
           --min-pass-rate "$(cat tests/array_api_loom/ci_threshold)" --no-write)
  else
    args+=("$a")
  fi
done
exec "$py" tests/array_api_loom/run_suite.py --python "$py" "${args[@]}"
