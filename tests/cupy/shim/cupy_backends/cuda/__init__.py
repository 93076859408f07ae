"""cupy_backends.cuda: only the submodule stream is mapped (cupy_backends/__init__.py)."""
from cupy import _shim


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy_backends.cuda.{name}")
