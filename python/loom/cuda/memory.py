"""loom.cuda.memory: CuPy's device-memory API (cupy.cuda.memory) over loom's caching pool.

Approach. A Memory is a block of bytes from loom's pool of a device (loom._core.mem_alloc: a uint8 array's
memory, so the pool's figures and limit count it like any array's); it goes back to the pool when the last
MemoryPointer into it dies. A MemoryPointer is an address inside a block (ptr = mem.ptr + offset); its
copies go through loom_memcpy (synchronous, or enqueued on a stream: `*_async`), its memset goes
through loom_memset (the driver's byte fill, ordered on the current or given stream). Pending loom arrays
are evaluated before every copy, so a copy reads what the program wrote before it.

With no GPU, Device(0) is the host stand-in (as everywhere in loom.cuda): alloc gives host memory from the
host pool, and every copy is a host copy; code written against cupy.cuda.alloc runs unchanged. The CUDA
runtime calls (loom.cuda.runtime.malloc, ...) are stricter: they need a CUDA device and raise
CUDARuntimeError without one.

MemoryPool is the pool of the current device: its figures, free_all_blocks and a limit (set_limit: past it,
an allocation gives the cached blocks back and then raises OutOfMemoryError). set_allocator changes what
cuda.alloc draws from; loom's own arrays always use loom's pool.
"""
import ctypes
import operator
import os

from .. import _core
from .device import _HOST, _current_key, _available, Device, get_device_id
from .stream import Stream, ExternalStream
from .._common import _np_dtype_of


class OutOfMemoryError(MemoryError):
    """Device (or, on the host stand-in, host) memory is exhausted or the pool's limit is reached (CuPy's
    cupy.cuda.memory.OutOfMemoryError). Every out-of-memory error of loom is one: loom._core raises it."""


_core.set_oom_error(OutOfMemoryError)


class BaseMemory:
    """A block of memory: ptr (its address), size (bytes), device_id, and (kind, index) in _key."""

    ptr = 0
    size = 0
    device_id = 0
    _key = (_HOST, 0)

    @property
    def device(self):
        return Device(self.device_id)

    def __int__(self):
        return self.ptr


class Memory(BaseMemory):
    """size bytes of the current device's memory from loom's pool (CuPy's cupy.cuda.Memory); given back
    to the pool when it dies."""

    def __init__(self, size):
        size = int(size)
        if size < 0:
            raise ValueError(f"Memory: the size must be >= 0, got {size}")
        self._key = _current_key()
        self.device_id = self._key[1]
        self.size = size
        self.ptr = _core.mem_alloc(self._key[0], self._key[1], size) or 0

    def __del__(self):
        ptr, self.ptr = getattr(self, "ptr", 0), 0
        if ptr and _core is not None:  # None: the interpreter is shutting down (the context frees everything)
            _core.mem_free(self._key[0], self._key[1], ptr, self.size)


class UnownedMemory(BaseMemory):
    """Memory that someone else owns (CuPy's cupy.cuda.UnownedMemory): kept alive through owner, never
    freed here. device_id: its GPU (-1: the current one)."""

    def __init__(self, ptr, size, owner, device_id=-1):
        self.ptr, self.size, self._owner = int(ptr), int(size), owner
        self.device_id = get_device_id() if device_id is None or device_id < 0 else int(device_id)
        key = _current_key()
        self._key = (key[0], self.device_id) if _available() else key


class MemoryPointer:
    """A pointer into device memory (CuPy's cupy.cuda.MemoryPointer): mem is the block it keeps alive, ptr
    its address (mem.ptr + offset), size the bytes from there to the block's end, device_id the block's
    device. p + n and p - n point n bytes further or back in the same block (staying inside it)."""

    def __init__(self, mem, offset):
        offset = int(offset)
        if not 0 <= offset <= mem.size:
            raise ValueError(f"MemoryPointer: offset {offset} lies outside the block of {mem.size} bytes")
        self.mem = mem
        self._offset = offset
        self.ptr = mem.ptr + offset if mem.ptr else 0
        self.device_id = mem.device_id

    @property
    def size(self):
        return self.mem.size - self._offset

    @property
    def device(self):
        return Device(self.device_id)

    def __int__(self):
        return self.ptr

    def __bool__(self):
        return self.ptr != 0

    def __add__(self, offset):
        if not isinstance(offset, int):
            return NotImplemented
        return MemoryPointer(self.mem, self._offset + offset)

    __radd__ = __add__

    def __sub__(self, offset):
        if not isinstance(offset, int):
            return NotImplemented
        return MemoryPointer(self.mem, self._offset - offset)

    def __repr__(self):
        return f"<loom.cuda.MemoryPointer {self.ptr:#x} ({self.size} bytes, device {self.device_id})>"

    # ---- copies -----------------------------------------------------------------------------------------
    def _span(self, size, what):
        size = int(size)
        if size < 0:
            raise ValueError(f"{what}: the size must be >= 0, got {size}")
        if size > self.size:
            raise ValueError(f"{what}: {size} bytes do not fit in the {self.size} bytes from this pointer to the "
                             "end of its block")
        return size

    def _copy(self, dst, dkey, src, skey, size, stream, async_):
        _core.flush()
        _core.memcpy(dst, dkey[0], dkey[1], src, skey[0], skey[1], size, _stream_handle(stream), async_)

    def copy_from_device(self, src, size):
        """Copies size bytes from device memory src (a MemoryPointer) here; done when it returns."""
        size = self._span(size, "copy_from_device")
        _check_source(src, size, "copy_from_device")
        self._copy(self.ptr, self.mem._key, src.ptr, src.mem._key, size, None, False)

    def copy_from_device_async(self, src, size, stream=None):
        """copy_from_device enqueued on stream (None: the current stream)."""
        size = self._span(size, "copy_from_device_async")
        _check_source(src, size, "copy_from_device_async")
        self._copy(self.ptr, self.mem._key, src.ptr, src.mem._key, size, stream, True)

    def copy_from_host(self, mem, size):
        """Copies size bytes from host memory mem (an address, a ctypes pointer, a PinnedMemoryPointer, a
        NumPy array or another buffer) here; done when it returns."""
        size = self._span(size, "copy_from_host")
        self._copy(self.ptr, self.mem._key, _host_address(mem, size, False), (_HOST, 0), size, None, False)

    def copy_from_host_async(self, mem, size, stream=None):
        """copy_from_host enqueued on stream (None: the current stream): mem must stay unchanged until the
        stream is synchronized; from pinned memory (alloc_pinned_memory) the copy overlaps other work."""
        size = self._span(size, "copy_from_host_async")
        self._copy(self.ptr, self.mem._key, _host_address(mem, size, False), (_HOST, 0), size, stream, True)

    def copy_from(self, mem, size):
        """copy_from_device when mem is a MemoryPointer, else copy_from_host."""
        if isinstance(mem, MemoryPointer):
            self.copy_from_device(mem, size)
        else:
            self.copy_from_host(mem, size)

    def copy_from_async(self, mem, size, stream=None):
        if isinstance(mem, MemoryPointer):
            self.copy_from_device_async(mem, size, stream)
        else:
            self.copy_from_host_async(mem, size, stream)

    def copy_to_host(self, mem, size):
        """Copies size bytes from here to host memory mem (as copy_from_host takes); done when it returns."""
        size = self._span(size, "copy_to_host")
        self._copy(_host_address(mem, size, True), (_HOST, 0), self.ptr, self.mem._key, size, None, False)

    def copy_to_host_async(self, mem, size, stream=None):
        """copy_to_host enqueued on stream (None: the current stream): read mem after synchronizing it."""
        size = self._span(size, "copy_to_host_async")
        self._copy(_host_address(mem, size, True), (_HOST, 0), self.ptr, self.mem._key, size, stream, True)

    # ---- memset ------------------------------------------------------------------------------------------
    def _fill(self, value, size, stream, what):
        size = self._span(size, what)
        value = int(value)
        if size == 0:
            return
        _core.flush()  # pending work on these bytes is enqueued before the fill
        _core.memset(self.ptr, self.mem._key[0], self.mem._key[1], value & 0xFF, size, _stream_handle(stream))
        return stream

    def memset(self, value, size):
        """Sets size bytes from here to value (its low byte, as cudaMemset); done when it returns."""
        self._fill(value, size, None, "memset")
        Device(self.device_id).synchronize()

    def memset_async(self, value, size, stream=None):
        """memset enqueued on stream (None: the current stream)."""
        self._fill(value, size, stream, "memset_async")


def _check_source(src, size, what):
    if not isinstance(src, MemoryPointer):
        raise TypeError(f"{what}: the source must be a loom.cuda.MemoryPointer, got {type(src).__name__}")
    if size > src.size:
        raise ValueError(f"{what}: {size} bytes do not fit in the {src.size} bytes from the source pointer to the "
                         "end of its block")


def _stream_handle(stream):
    """loom's stream handle for a stream argument: a Stream (an ExternalStream), an int CUstream (borrowed),
    None (the calling thread's current stream)."""
    if stream is None:
        return None
    if isinstance(stream, Stream):
        return stream._handle()
    if isinstance(stream, int):
        return ExternalStream(stream)._handle()
    raise TypeError(f"stream must be a loom.cuda.Stream (or an int CUstream), got {type(stream).__name__}")


def _host_address(mem, size, writable):
    """The address of host memory given as an int, a ctypes pointer / c_void_p / array, an object with .ptr
    (PinnedMemoryPointer) or a buffer (NumPy array, bytearray; checked to hold size bytes)."""
    if isinstance(mem, bool):
        raise TypeError("host memory must be an address or a buffer, not a bool")
    if isinstance(mem, int):
        if size and mem == 0:
            raise ValueError("host memory: NULL address")
        return mem
    if isinstance(mem, ctypes.c_void_p):
        if size and not mem.value:
            raise ValueError("host memory: NULL address")
        return mem.value or 0
    if isinstance(mem, (ctypes._Pointer, ctypes._SimpleCData)) and hasattr(mem, "contents"):
        return ctypes.cast(mem, ctypes.c_void_p).value or 0
    if isinstance(mem, MemoryPointer):
        raise TypeError("host memory expected, got a loom.cuda.MemoryPointer (device memory): use "
                        "copy_from_device")
    ptr = getattr(mem, "ptr", None)
    if isinstance(ptr, int) and not hasattr(mem, "__array_interface__"):
        n = getattr(mem, "size", None)
        if isinstance(n, int) and n < size:
            raise ValueError(f"host memory of {n} bytes is smaller than the {size} bytes asked for")
        return ptr
    try:
        view = memoryview(mem)
    except TypeError:
        raise TypeError(f"host memory must be an address, a ctypes pointer or a buffer, got {type(mem).__name__}") \
            from None
    if writable and view.readonly:
        raise ValueError("host memory: the buffer is read-only")
    if not view.c_contiguous:
        raise ValueError("host memory: the buffer must be contiguous")
    if view.nbytes < size:
        raise ValueError(f"host memory of {view.nbytes} bytes is smaller than the {size} bytes asked for")
    if view.nbytes == 0:
        return 0
    import numpy
    return numpy.frombuffer(view.cast("B"), numpy.uint8).ctypes.data  # no copy: mem's own bytes


# ---- arrays over memory (ndarray.data, ndarray(memptr=)) ------------------------------------------------
def _array_pointer(a):
    """ndarray.data: a loom.cuda.MemoryPointer at a's first element, over the bytes a's elements span (an
    UnownedMemory that keeps a alive)."""
    _core.eval(a)
    lo, hi = _byte_extent(a.shape, a.strides, a.itemsize)
    first = a._ptr or 0
    mem = UnownedMemory(first + lo if first else 0, hi - lo, a, a._device[1])
    mem._key = a._device
    return MemoryPointer(mem, -lo if first else 0)


def _byte_extent(shape, strides, itemsize):
    """(lo, hi): the bytes an array's elements span, relative to its first element (lo <= 0; hi - lo is 0 for
    an empty array)."""
    if 0 in shape:
        return 0, 0
    lo = hi = 0
    for n, st in zip(shape, strides):
        lo += min(0, (n - 1) * st)
        hi += max(0, (n - 1) * st)
    return lo, hi + itemsize


def _array_over(shape, dtype, memptr, strides, order):
    """ndarray(shape, dtype, memptr, strides): an array over memptr's memory (a new block from loom.cuda.alloc
    when memptr is None), checked to lie inside it."""
    import numpy
    from .._common import _code, _shape_tuple
    shape = _shape_tuple(shape)
    dt = _np_dtype_of(dtype)
    code = _code(dt)
    if order not in ("C", "F", None):
        raise ValueError(f"ndarray: order must be 'C' or 'F', got {order!r}")
    if strides is None:
        strides, step = [0] * len(shape), dt.itemsize
        for i in (range(len(shape) - 1, -1, -1) if order != "F" else range(len(shape))):
            strides[i] = step
            step *= max(shape[i], 1)
    strides = tuple(operator.index(x) for x in strides)
    if len(strides) != len(shape):
        raise ValueError(f"ndarray: strides {strides} and shape {shape} differ in length")
    if any(x % dt.itemsize for x in strides):
        raise ValueError(f"ndarray: strides {strides} must be multiples of the item size {dt.itemsize}")
    lo, hi = _byte_extent(shape, strides, dt.itemsize)
    if memptr is None:
        memptr = alloc(hi - lo) + (-lo)
    if not isinstance(memptr, MemoryPointer):
        raise TypeError(f"ndarray: memptr must be a loom.cuda.MemoryPointer, got {type(memptr).__name__}")
    if -lo > memptr._offset or hi > memptr.size:
        raise ValueError(f"ndarray: shape {shape} with strides {strides} reaches bytes [{lo}, {hi}) from the pointer, "
                         f"outside its block ({memptr._offset} bytes before it, {memptr.size} from it)")
    kind, index = memptr.mem._key
    return _core.from_pointer(memptr.ptr, shape, strides, code, kind, index, memptr)


# ---- the pool and the allocator ------------------------------------------------------------------------
class MemoryPool:
    """The caching pool of the current device (CuPy's cupy.cuda.MemoryPool; the host pool on the host
    stand-in): malloc lends blocks, the figures and free_all_blocks are loom's pool's, and set_limit bounds
    what it may hold."""

    def __init__(self, allocator=None):
        self._allocator = allocator  # accepted for CuPy compatibility: loom's pool allocates from the driver

    def malloc(self, size):
        """A MemoryPointer to size bytes of the current device's memory from the pool."""
        return MemoryPointer(Memory(size), 0)

    def _stats(self):
        if not _core.has_stream_api():
            return (0, 0)
        return _core.pool_stats(*_current_key())

    def used_bytes(self):
        return self._stats()[0]

    def total_bytes(self):
        return self._stats()[1]

    def free_bytes(self):
        used, total = self._stats()
        return total - used

    def free_all_blocks(self, stream=None):
        """Gives every cached block back to the device (after the device's pending work)."""
        if _core.has_stream_api():
            _core.flush()
            _core.pool_free_all(*_current_key())

    def n_free_blocks(self):
        """The number of cached (free) blocks kept for reuse."""
        return _core.pool_cached_blocks(*_current_key())

    def set_limit(self, size=None, fraction=None):
        """Bounds the bytes the pool may hold (used + cached): size in bytes, or fraction of the device's
        memory (of the host's physical memory on the host stand-in); 0 (or neither) lifts the limit. Past it,
        an allocation gives the cached blocks back, then raises OutOfMemoryError."""
        if size is not None and fraction is not None:
            raise ValueError("set_limit: give size or fraction, not both")
        if fraction is not None:
            fraction = float(fraction)
            if not 0.0 <= fraction <= 1.0:
                raise ValueError(f"set_limit: fraction must be within [0, 1], got {fraction}")
            size = int(fraction * _device_total_bytes())
        size = 0 if size is None else int(size)
        if size < 0:
            raise ValueError(f"set_limit: the size must be >= 0, got {size}")
        _core.pool_limit(*_current_key(), size)

    def get_limit(self):
        """The limit in bytes (0: none)."""
        return _core.pool_limit(*_current_key(), None)


def _device_total_bytes():
    if _available():
        total = Device().mem_info[1]
        if total:
            return total
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


_pool = MemoryPool()
_allocator = [None]  # None: the default pool's malloc


def get_default_memory_pool():
    """The memory pool of the current device (CuPy's cupy.get_default_memory_pool)."""
    return _pool


def set_allocator(allocator=None):
    """Makes allocator(size) -> MemoryPointer what alloc draws from (None: the default pool). Loom's own
    arrays always use loom's pool."""
    if allocator is not None and not callable(allocator):
        raise TypeError("set_allocator: the allocator must be callable (size -> MemoryPointer) or None")
    _allocator[0] = allocator


def get_allocator():
    return _allocator[0] or _pool.malloc


def alloc(size):
    """A MemoryPointer to size bytes of the current device's memory (CuPy's cupy.cuda.alloc), from the
    current allocator (the default memory pool)."""
    return get_allocator()(int(size))
