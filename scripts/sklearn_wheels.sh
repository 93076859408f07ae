#!/usr/bin/env bash
# sklearn_wheels.sh: fetches, here, the wheels that tests/python/test_sklearn_array_api.py needs on the GPU
# machines (they have no network; their image has numpy, scipy, cupy, torch and jax but no scikit-learn)
# into .whl/sk/ (ignored by git; carry .whl: about 10 MB). A subfolder: .whl/*.whl is Dask's site
# (scripts/dask_wheels.sh). scikit-learn's own dependencies beyond numpy/scipy are joblib, threadpoolctl and
# (1.9+) narwhals; array-api-compat is what scikit-learn's array_api_dispatch uses to find loom's namespace.
# scikit-learn's dispatch needs scipy >= 1.14 there (it checks).
# There: python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/sk-site .whl/sk/*.whl
#        && export PYTHONPATH=/tmp/sk-site   (scripts/gpu_all.sh does it for its pytest phase when
#        .whl/sk/ holds wheels)
# PYVER: the GPU machines' Python (3.12). SKLEARN: the scikit-learn version (default: the one in .venv/,
# which the test passed with here, else the newest).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
py=${PYTHON:-}
if [ -z "$py" ]; then [ -x .venv/bin/python ] && py=.venv/bin/python || py=python3; fi
pin() { # name==version of what $py has installed, else the bare name (the newest)
  local v
  v=$("$py" -c "import importlib.metadata as m; print(m.version('$1'))" 2>/dev/null) && echo "$1==$v" || echo "$1"
}
rm -rf .whl/sk
mkdir -p .whl/sk
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version "${PYVER:-3.12}" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl/sk \
  "${SKLEARN:-$(pin scikit-learn)}" "$(pin array-api-compat)" "$(pin joblib)" "$(pin threadpoolctl)" "$(pin narwhals)"
du -sh .whl/sk && ls .whl/sk
