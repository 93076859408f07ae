"""cupy_backends.cuda: the submodules stream and libs (libs.nvrtc.getVersion) are mapped (cupy_backends/__init__.py)."""
from cupy import _shim

from . import libs, stream  # noqa: F401 (before __getattr__ could answer `from cupy_backends.cuda import stream`)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy_backends.cuda.{name}")
