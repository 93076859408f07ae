#!/usr/bin/env bash
# dask_wheels.sh: fetches, here, the wheels Dask on the GPU machines needs (they have no network and no
# dask, distributed or dask-cuda) into .whl/ (ignored by git; carry it: 3.2 MB). dask-cuda 26.10 pins dask and
# distributed 2026.7.1 through rapids-dask-dependency; the machines' image has the rest (numpy, pandas,
# numba, cupy, cloudpickle, fsspec, toolz, msgpack, psutil, pyyaml, click, jinja2, nvidia-ml-py, ...).
# There: python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl
#        && export PYTHONPATH=/tmp/site   (scripts/gpu_all.sh does it when .whl/ is there)
# PYVER: the GPU machines' Python (3.12).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mkdir -p .whl
py=${PYTHON:-python3}
"$py" -m pip download -q --no-deps --only-binary=:all: --python-version "${PYVER:-3.12}" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl \
  dask==2026.7.1 distributed==2026.7.1 dask-cuda==26.10.0 rapids-dask-dependency==26.10.0 \
  partd locket tblib tornado zict
du -sh .whl && ls .whl
