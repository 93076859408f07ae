"""loom.cuda.pinned_memory: CuPy's module of pinned (page-locked) host memory; loom._pinned implements it."""
from .._pinned import (PinnedMemory, PinnedMemoryPointer, PinnedMemoryPool, PooledPinnedMemory,  # noqa: F401
                       alloc_pinned_memory, get_default_pinned_memory_pool, set_pinned_memory_allocator)
