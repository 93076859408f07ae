"""cupy_backends: CuPy's low-level CUDA bindings. The shim maps one query of them (cuda.stream's default
stream handle) onto loom; any other name is a stub that raises (NeedsCudaDevice without a GPU)."""
from cupy import _shim


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy_backends.{name}")
