"""cupy_backends.cuda.libs.nvrtc: CuPy's NVRTC binding; getVersion is loom's (loom.cuda.nvrtc.getVersion:
the version of the libnvrtc loom compiles raw kernels with, (0, 0) without one). Other names are stubs."""
from loom.cuda.nvrtc import getVersion  # noqa: F401

from cupy import _shim


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy_backends.cuda.libs.nvrtc.{name}")
