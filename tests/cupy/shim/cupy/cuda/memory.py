"""cupy.cuda.memory: CuPy's device-memory module. Its pool class is loom.cuda.MemoryPool (the figures of
loom's caching pool); the rest is CuPy's raw device-memory API (malloc, MemoryPointer, ...), which loom
does not expose: stubs (NeedsCudaDevice without a GPU, MissingInLoom with one)."""
from loom.cuda import MemoryPool  # noqa: F401

from .. import _shim


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy.cuda.memory.{name}")
