"""loom.cuda: CuPy's cupy.cuda (devices, streams, events, device memory, memory pools, pinned memory, the
CUDA runtime API) over the Loom C API, split as CuPy splits it: device, stream, memory, runtime,
pinned_memory.

Approach. When loom_device_count reports CUDA devices, Device(n) is GPU n: creation functions and
asarray place arrays on the current device (a thread-local, set by Device.use() or `with Device(n):`),
and operations run where their operands live (operands on two devices are a ValueError naming both).
With no GPU, Device(0) is the host stand-in, so CuPy-style code runs unchanged on a laptop.

Streams and events wrap loom_stream_* / loom_event_* (they exist on the host too and complete at once);
ExternalStream borrows another library's CUstream (loom_stream_wrap) for loom's kernels and copies. Device
memory (alloc, MemoryPointer, MemoryPool with its limit) is loom's caching pool's (memory.py); the CUDA
runtime calls are in runtime.py. Loom arrays are lazy: work is enqueued when a value is evaluated, so entering
and leaving `with stream:` evaluates pending arrays first: what was written inside the block runs on that
stream. If the linked libloom predates the stream API, streams and events fall back to host stand-ins (the
host clock, synchronous evaluation) and the memory pool reports 0.

The compute capability and device properties are read from the CUDA driver (libcuda, through ctypes):
the C API has no call for them yet.

AMD GPUs. On a ROCm machine (an AMD GPU and libamdhip64, no CUDA device) the same API drives loom's HIP
device, as CuPy keeps cupy.cuda on ROCm: Device(n) is AMD GPU n, streams and events are HIP's, arrays
live in HIP memory (DLPack device kDLROCM), and compute_capability is the chip's gfx number ('942' on an
MI300X, '90a' on an MI250X, '1100' on a Radeon RX 7900), read from HIP (libamdhip64, through ctypes).
As in CuPy, runtime.is_hip says which: True when loom drives AMD GPUs.

Which GPUs. By default (LOOM_DEVICE unset or 'auto') NVIDIA's when the machine has any, else AMD's, else
the host. LOOM_DEVICE=cuda or =hip (also 'rocm', 'amd') picks the kind; without such a GPU, making an
array then raises CUDARuntimeError with the driver's reason (never a silent fall back to the host).
LOOM_DEVICE=host keeps everything on the host even with GPUs. Read once, at the first device query.
"""
from . import compiler, device, driver, memory, pinned_memory, runtime, stream, texture  # noqa: F401
from .device import (_CUDA, _HIP, _HOST, CUDARuntimeError, Device, _available, _count_cache,  # noqa: F401
                     _current_key, _device_of, _driver, _ensure_context, _gpu_count, _gpu_kind, _gpu_kind_count, _hip,
                     _hip_arch, _no_device_reason, _selection, _sync_foreign_stream, _tls, _wanted_kind,
                     get_device_id, is_available)
from .memory import (BaseMemory, Memory, MemoryPointer, MemoryPool, OutOfMemoryError, UnownedMemory,  # noqa: F401
                     alloc, get_allocator, get_default_memory_pool, set_allocator)
from .pinned_memory import (PinnedMemory, PinnedMemoryPointer, PinnedMemoryPool, PooledPinnedMemory,  # noqa: F401
                            alloc_pinned_memory, get_default_pinned_memory_pool, set_pinned_memory_allocator)
from .stream import (_PTDS_HANDLE, Event, ExternalStream, Stream, _stream_stack, _with_stack,  # noqa: F401
                     get_current_stream, get_elapsed_time)
