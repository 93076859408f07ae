"""cupy._util: CuPy's internal settings that the tests read at import time, with CuPy's defaults, and
CUDA_ARRAY_INTERFACE_EXPORT_VERSION, which reads and sets loom.config.cuda_array_interface_version (the
CUDA Array Interface version loom's arrays export)."""
import sys
import types

import loom

from . import _shim

ENABLE_SLICE_COPY = False  # CuPy: CUPY_EXPERIMENTAL_SLICE_COPY, off by default


class PerformanceWarning(RuntimeWarning):
    """CuPy's warning class for slow paths (tests name it in warning filters)."""


def clear_memo():
    """CuPy: forgets its memoized kernels (tests call it to force recompiles). Loom's kernels are cached by
    their content, so nothing is stale after it: accepted, without effect."""


class _Util(types.ModuleType):
    @property
    def CUDA_ARRAY_INTERFACE_EXPORT_VERSION(self):
        return loom.config.cuda_array_interface_version

    @CUDA_ARRAY_INTERFACE_EXPORT_VERSION.setter
    def CUDA_ARRAY_INTERFACE_EXPORT_VERSION(self, version):
        loom.config.cuda_array_interface_version = version

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _shim.Missing(f"cupy._util.{name}")


sys.modules[__name__].__class__ = _Util
