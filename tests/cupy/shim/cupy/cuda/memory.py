"""cupy.cuda.memory: CuPy's device-memory module, as loom.cuda.memory provides it (MemoryPool, alloc,
MemoryPointer, Memory, set_allocator, ...). A name loom lacks is a stub (NeedsCudaDevice without a GPU,
MissingInLoom with one)."""
import loom.cuda.memory as _memory

from .. import _shim


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        return getattr(_memory, name)
    except AttributeError:
        return _shim.Missing(f"cupy.cuda.memory.{name}")
