#!/usr/bin/env bash
# Install the CPU peers of the suite (numexpr, Numba, JAX, PyTorch with torch.compile) beside the
# project's .venv, into .bench-peers/ (pip --target; nothing in .venv changes, so the tests do not see
# them; matplotlib for the suite's chart). PyPI's torch wheel loads its CUDA libraries at import even on a CPU-only machine, so they come
# too (the versions its metadata pins; ~3 GB).
# Usage: bash bench/suite/cpu_peers.sh; then
#   PYTHONPATH=.bench-peers .venv/bin/python bench/suite/run.py --machine cpu \
#       --libs loom,numpy,numexpr,numba,jax,torch,torch_compile
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=.venv/bin/python
[ -x "$PY" ] || { echo "run scripts/setup.sh first (no .venv)" >&2; exit 1; }
T=.bench-peers
# numpy / scipy come from .venv (the versions the tests use); everything else pinned loosely.
$PY -m pip install -q --upgrade --target "$T" --no-deps \
    numexpr numba llvmlite jax jaxlib ml_dtypes opt_einsum \
    torch sympy mpmath networkx filelock jinja2 markupsafe fsspec typing_extensions setuptools \
    matplotlib contourpy cycler fonttools kiwisolver pillow pyparsing python-dateutil six packaging
# torch's own pins of its CUDA wheels, read from its metadata (no triton: Inductor's CPU path is C++)
DEPS=$($PY - "$T" <<'PY'
import glob, re, sys
meta = open(glob.glob(sys.argv[1] + "/torch-*.dist-info/METADATA")[0]).read()
for line in meta.splitlines():
    m = re.match(r"Requires-Dist: ((cuda|nvidia)[^;]*);", line)
    if m:
        print(m.group(1).replace(" ", ""))
PY
)
# with their own dependencies (cuda-toolkit[...] extras name the nvidia-* library wheels)
$PY -m pip install -q --upgrade --target "$T" $DEPS
PYTHONPATH=$T $PY - <<'PY'
import numexpr, numba, jax, torch
print("peers:", "numexpr", numexpr.__version__, "numba", numba.__version__, "jax", jax.__version__,
      "torch", torch.__version__)
PY
