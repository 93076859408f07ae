"""cupy._core._cub_reduction: only CuPy's size threshold for its CUB reductions, which tests use to
size their inputs at import time (loom has no CUB path: cupy.cuda.cub.available is False)."""
from .. import _shim

_CUB_REDUCE_SIZE_THRESHOLD = 128


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy._core._cub_reduction.{name}")
