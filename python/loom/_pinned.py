"""Pinned (page-locked) host memory: CuPy's cupy.cuda.alloc_pinned_memory, PinnedMemoryPool and
set_pinned_memory_allocator, for staging buffers that NumPy arrays are built on (numpy.frombuffer).

Approach. A block is allocated by the CUDA driver (cuMemHostAlloc, portable) when loom drives a CUDA
device, so copies between it and the device run by DMA without a staging copy; without one (the host
device, or an AMD GPU, whose HIP host allocation loom does not call yet) it is ordinary host memory, which is
all that pinning means there. A PinnedMemoryPointer exposes a block through the buffer protocol: it is
a ctypes array over the block's bytes (ctypes gives Python 3.11 classes no other way to export a
buffer) that keeps the block alive; MemoryPointer.copy_from_host_async / copy_to_host_async take one, and
from pinned memory those copies run by DMA while the host goes on. The pool (CuPy's PinnedMemoryPool)
rounds sizes up to 512 bytes, keeps the blocks of dead pointers for reuse by size and gives them back on
free_all_blocks().
"""
import ctypes
import threading

_ROUND = 512


def _cuda_driver():
    """The CUDA driver with a current context when loom drives CUDA devices; else None."""
    from . import cuda
    if not cuda._available() or cuda._gpu_kind() != cuda._CUDA:
        return None
    lib = cuda._driver()
    if lib is None:
        return None
    cuda._ensure_context(lib, cuda.get_device_id())
    return lib


class PinnedMemory:
    """One block of pinned host memory of `size` bytes (CuPy's cupy.cuda.PinnedMemory); freed when the
    last reference goes. ptr is its address."""

    def __init__(self, size, flags=0):
        self.size = int(size)
        if self.size < 0:
            raise ValueError(f"PinnedMemory: the size must be >= 0, got {self.size}")
        self._driver = None
        self._buffer = None
        self.ptr = 0
        if self.size == 0:
            return
        lib = _cuda_driver()
        if lib is not None:
            p = ctypes.c_void_p()
            lib.cuMemHostAlloc.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_uint]
            rc = lib.cuMemHostAlloc(ctypes.byref(p), self.size, 1 | int(flags))  # CU_MEMHOSTALLOC_PORTABLE
            if rc == 2:
                raise MemoryError(f"out of pinned host memory allocating {self.size} bytes (cuMemHostAlloc)")
            if rc != 0:
                from .cuda import CUDARuntimeError
                raise CUDARuntimeError(f"cuMemHostAlloc({self.size}) failed with CUDA error {rc}")
            self._driver, self.ptr = lib, p.value
        else:
            self._buffer = (ctypes.c_ubyte * self.size)()
            self.ptr = ctypes.addressof(self._buffer)

    def __del__(self):
        if getattr(self, "_driver", None) is not None and self.ptr:
            self._driver.cuMemFreeHost.argtypes = [ctypes.c_void_p]
            self._driver.cuMemFreeHost(ctypes.c_void_p(self.ptr))
            self.ptr = 0


class PinnedMemoryPointer:
    """A pointer into pinned memory (CuPy's cupy.cuda.PinnedMemoryPointer): `mem` is the block it keeps
    alive, `ptr` its address (mem.ptr + offset), `size` the bytes from there to the block's end, which it
    exports through the buffer protocol (numpy.frombuffer(p, dtype, count)); p + n and p - n point n
    bytes further or back in the same block. Made by alloc_pinned_memory or PinnedMemoryPool.malloc."""

    mem: PinnedMemory
    size: int
    _offset: int

    def __new__(cls, mem, offset=0):
        offset = int(offset)
        size = max(int(mem.size) - offset, 0)
        view_type = _view_type(size)
        p = view_type.from_address(mem.ptr + offset) if size else view_type()
        p.mem, p.size, p._offset = mem, size, offset
        return p

    def __init__(self, *args):
        pass  # made by __new__; the ctypes array must not take mem as its elements

    @property
    def ptr(self):
        return self.mem.ptr + self._offset if self.mem.ptr else 0

    def __int__(self):
        return self.ptr

    def __add__(self, n):
        if not isinstance(n, int):
            return NotImplemented
        return PinnedMemoryPointer(self.mem, self._offset + n)

    __radd__ = __add__

    def __sub__(self, n):
        if not isinstance(n, int):
            return NotImplemented
        return PinnedMemoryPointer(self.mem, self._offset - n)

    def __repr__(self):
        return f"<loom.cuda.PinnedMemoryPointer {self.ptr:#x} ({self.size} bytes)>"


_view_types: dict = {}


def _view_type(size):
    """PinnedMemoryPointer's ctypes array class of `size` bytes (cached per size)."""
    t = _view_types.get(size)
    if t is None:
        t = type("PinnedMemoryPointer", (PinnedMemoryPointer, ctypes.c_ubyte * size),
                 {"__new__": ctypes.Array.__new__, "__module__": "loom.cuda"})
        if len(_view_types) < 4096:
            _view_types[size] = t
    return t


def _malloc(size):
    """The allocator without a pool: a new block of size bytes."""
    return PinnedMemoryPointer(PinnedMemory(size), 0)


class PooledPinnedMemory(PinnedMemory):
    """A pool's block lent out (CuPy's PooledPinnedMemory): free() (or its end) gives it back to the
    pool; a second free() does nothing."""

    def __init__(self, pool, block, size):
        self._pool, self._block, self.ptr, self.size = pool, block, block.ptr, size
        self._driver = self._buffer = None

    def free(self):
        pool, self._pool = self._pool, None
        if pool is not None:
            pool._give_back(self.size, self._block)
            self.ptr = 0

    def __del__(self):
        self.free()


class PinnedMemoryPool:
    """CuPy's cupy.cuda.PinnedMemoryPool: pinned blocks kept for reuse. allocator(size) makes a block
    (a PinnedMemoryPointer; default: a new PinnedMemory). malloc(size) lends a block of at least size
    bytes (rounded up to 512) as a PinnedMemoryPointer to a PooledPinnedMemory; when that dies (or is
    freed) its block is kept here for the next malloc of that size; free_all_blocks() drops the kept
    ones. used_bytes() counts the lent blocks, free_bytes() the kept ones, total_bytes() both."""

    def __init__(self, allocator=None):
        self._alloc = allocator or _malloc
        self._free = {}  # rounded size -> [block (PinnedMemoryPointer)]
        self._used = 0
        self._lock = threading.Lock()

    def malloc(self, size):
        size = int(size)
        if size < 0:
            raise ValueError(f"PinnedMemoryPool.malloc: the size must be >= 0, got {size}")
        if size == 0:
            return self._alloc(0)
        rounded = -(-size // _ROUND) * _ROUND
        with self._lock:
            kept = self._free.get(rounded)
            block = kept.pop() if kept else None
        if block is None:
            try:
                block = self._alloc(rounded)
            except MemoryError:
                self.free_all_blocks()
                block = self._alloc(rounded)
        with self._lock:
            self._used += rounded
        return PinnedMemoryPointer(PooledPinnedMemory(self, block, rounded), 0)

    def _give_back(self, size, block):
        with self._lock:
            self._used -= size
            self._free.setdefault(size, []).append(block)

    def free_all_blocks(self, stream=None):
        with self._lock:
            self._free = {}

    def n_free_blocks(self):
        with self._lock:
            return sum(len(v) for v in self._free.values())

    def used_bytes(self):
        return self._used

    def free_bytes(self):
        with self._lock:
            return sum(size * len(v) for size, v in self._free.items())

    def total_bytes(self):
        return self.used_bytes() + self.free_bytes()


_default_pool = PinnedMemoryPool()
_allocator = [_default_pool.malloc]


def get_default_pinned_memory_pool():
    """The pool alloc_pinned_memory draws from unless set_pinned_memory_allocator chose another."""
    return _default_pool


def set_pinned_memory_allocator(allocator=None):
    """Makes allocator(size) -> PinnedMemoryPointer the source of alloc_pinned_memory; None allocates
    each block directly, without a pool (CuPy's rule)."""
    _allocator[0] = _malloc if allocator is None else allocator


def alloc_pinned_memory(size):
    """A PinnedMemoryPointer to at least size bytes of pinned host memory, from the current allocator."""
    return _allocator[0](size)
