"""cupy._util: CuPy's internal settings that the tests read at import time, with CuPy's defaults."""
from . import _shim

ENABLE_SLICE_COPY = False  # CuPy: CUPY_EXPERIMENTAL_SLICE_COPY, off by default


class PerformanceWarning(RuntimeWarning):
    """CuPy's warning class for slow paths (tests name it in warning filters)."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy._util.{name}")
