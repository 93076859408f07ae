"""cupy_backends.cuda.libs: CuPy's bindings of the CUDA libraries. nvrtc is mapped (loom.cuda.nvrtc: the
NVRTC loom compiles raw kernels with); any other name is a stub."""
from cupy import _shim

from . import nvrtc  # noqa: F401


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy_backends.cuda.libs.{name}")
