"""cupy.cuda.pinned_memory: CuPy's module of pinned host memory; its names are loom.cuda's."""
from loom.cuda import (PinnedMemory, PinnedMemoryPointer, PinnedMemoryPool, PooledPinnedMemory,  # noqa: F401
                       alloc_pinned_memory, set_pinned_memory_allocator)

from .. import _shim


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _shim.Missing(f"cupy.cuda.pinned_memory.{name}")
