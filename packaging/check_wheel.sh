#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# check_wheel.sh: install a built wheel (default: wheelhouse/*.whl from scripts/build_wheel.sh) into a
# fresh virtual environment and use it as a user would: packaging/wheel_smoke.py (README example
# against NumPy, SLEEF loaded from the package, llvmlite's LLVM and Loom's in one process, in both
# orders and with RTLD_GLOBAL), then pytest on tests/python (LOOM_WHEEL_TESTS: other paths or -k
# filters) with the test dependencies of pyproject.toml. Needs PyPI (numpy, pytest, llvmlite).
#   bash packaging/check_wheel.sh [WHEEL]
# Environment: PYTHON (the interpreter the venv is made from; default python3), LOOM_CHECK_LLVMLITE=0
# (skip the llvmlite part), LOOM_WHEEL_TESTS (default: tests/python), LOOM_CHECK_VENV (default
# build-wheel/check-venv).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo=$PWD
wheel=${1:-$(ls wheelhouse/*.whl 2>/dev/null | head -1)}
[ -f "$wheel" ] || { echo "check_wheel: no wheel (run scripts/build_wheel.sh first)" >&2; exit 1; }
wheel=$(cd "$(dirname "$wheel")" && pwd)/$(basename "$wheel")
venv=${LOOM_CHECK_VENV:-build-wheel/check-venv}
rm -rf "$venv"
mkdir -p "$(dirname "$venv")"
"${PYTHON:-python3}" -m venv "$venv"
venv=$(cd "$venv" && pwd)
py=$venv/bin/python
log=$venv/install.log
start=$SECONDS
"$py" -m pip install -q "$wheel" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
mapfile -t deps < <("$py" scripts/pydeps.py test)
if [ "${LOOM_CHECK_LLVMLITE:-1}" != 0 ]; then deps+=(llvmlite); fi
if ((${#deps[@]})); then
  "$py" -m pip install -q "${deps[@]}" >>"$log" 2>&1 || { cat "$log" >&2; exit 1; }
fi
echo "check_wheel: installed $(basename "$wheel") and ${deps[*]:-nothing else} ($((SECONDS - start)) s)"
status=0
cd "$(mktemp -d)" # away from the repository: `import loom` must find the installed package
for args in "--loom-first" "--llvmlite-first" "--loom-first --global" "--llvmlite-first --global"; do
  echo "== wheel_smoke.py $args"
  # shellcheck disable=SC2086
  "$py" "$repo/packaging/wheel_smoke.py" $args || status=1
done
echo "== loomc (the wheel's console script)"
if out=$("$venv/bin/loomc" --version 2>&1) && [[ $out == "loomc (loom "* ]]; then echo "ok: $out"; else
  echo "FAIL: loomc --version: $out" >&2; status=1; fi
echo "== pytest ${LOOM_WHEEL_TESTS:-tests/python} (installed wheel)"
# shellcheck disable=SC2086
(cd "$repo" && "$py" -m pytest ${LOOM_WHEEL_TESTS:-tests/python} -q -p no:cacheprovider 2>&1 | tail -n 5) ||
  status=1
[ "$status" -eq 0 ] && echo "check_wheel: all passed" || echo "check_wheel: FAILURES (see above)" >&2
exit "$status"
