"""loom.cuda.runtime: the part of CuPy's cupy.cuda.runtime (the CUDA runtime API) that CuPy programs call,
over loom's C API and the CUDA driver.

Approach. Devices, synchronization and memory go through loom: malloc lends a block of loom's pool (so
MemoryPool's figures and limit count it) and free gives it back; memcpy / memcpyAsync / memset / memsetAsync
are loom_memcpy and a byte fill, on loom's streams (an int stream argument is a borrowed CUstream, 0 the
legacy default stream). Facts loom's C API does not give (device properties, versions, free memory) are read
from the CUDA driver through ctypes. Unlike loom.cuda.alloc, these calls are the CUDA runtime's: without a
CUDA device (getDeviceCount() == 0) the memory calls raise CUDARuntimeError saying so. Errors are
CUDARuntimeError; its status is the runtime's error code where one applies (cudaErrorInvalidValue 1,
cudaErrorMemoryAllocation 2, cudaErrorInvalidDevice 101, cudaErrorNoDevice 100).
"""
import ctypes
import threading

from .. import _core
from .device import (_CUDA, _HIP, _HOST, CUDARuntimeError, Device, _available, _driver, _ensure_context,
                     _gpu_count, _gpu_kind, _selection, get_device_id)
from .stream import Stream

# cudaMemcpyKind
memcpyHostToHost, memcpyHostToDevice, memcpyDeviceToHost, memcpyDeviceToDevice, memcpyDefault = range(5)
# cudaStream_t special handles
streamLegacy = 1
streamPerThread = 2
# error codes of the CUDA runtime that loom's errors carry
errorInvalidValue, errorMemoryAllocation, errorNoDevice, errorInvalidDevice = 1, 2, 100, 101

_blocks: dict = {}  # address -> (kind, index, size) of the blocks malloc lent
_blocks_lock = threading.Lock()


def __getattr__(name):
    if name == "is_hip":  # decided at the first device query (LOOM_DEVICE, the drivers present)
        kind, _, want, _ = _selection()
        return want == _HIP or kind == _HIP
    raise AttributeError(f"module 'loom.cuda.runtime' has no attribute {name!r}")


def _need_gpu(call):
    """(kind, index) of the current GPU; CUDARuntimeError when there is none."""
    if not _available():
        raise CUDARuntimeError(f"{call}: no CUDA device (runtime.getDeviceCount() is 0, cudaErrorNoDevice); loom runs "
                               "on the host here: use loom arrays, or loom.cuda.alloc, which gives host memory on the "
                               "host stand-in", errorNoDevice)
    return (_gpu_kind(), get_device_id())


def _runtime_error(call, e):
    status = errorMemoryAllocation if isinstance(e, MemoryError) else errorInvalidValue
    return CUDARuntimeError(f"{call}: {e}", status)


# ---- devices ---------------------------------------------------------------------------------------------
def getDeviceCount():
    """The number of GPUs loom drives (0 without one)."""
    return _gpu_count()


def is_available():
    return _available()


def getDevice():
    return get_device_id()


def setDevice(device):
    try:
        Device(device).use()
    except ValueError as e:
        raise CUDARuntimeError(f"setDevice: {e}", errorInvalidDevice) from None


def deviceSynchronize():
    """Evaluates pending arrays and waits for all work of the current device."""
    Device().synchronize()


def streamSynchronize(stream):
    """Waits for stream (an int CUstream or a loom Stream) after evaluating pending arrays."""
    _as_stream(stream).synchronize()


def _as_stream(stream):
    if isinstance(stream, Stream):
        return stream
    if isinstance(stream, bool) or not isinstance(stream, int):
        raise TypeError(f"stream must be an int handle (a CUstream) or a loom.cuda.Stream, got {type(stream).__name__}")
    if stream == 0:
        return Stream.null
    from .stream import ExternalStream
    return ExternalStream(stream)


def runtimeGetVersion():
    """Loom has no CUDA runtime library (it calls the driver): the driver's version stands for it, 0 on a
    machine without one."""
    return driverGetVersion()


def driverGetVersion():
    """The CUDA driver's version (e.g. 12040); 0 without a driver, as cudaDriverGetVersion."""
    lib = _driver() if _gpu_kind() != _HIP else None
    v = ctypes.c_int(0)
    if lib is None or lib.cuDriverGetVersion(ctypes.byref(v)) != 0:
        return 0
    return v.value


def memGetInfo():
    """(free, total) bytes of the current device."""
    _need_gpu("memGetInfo")
    return Device().mem_info


# cudaDeviceAttr (the runtime's names; the values are the driver's CUdevice_attribute, cuda.h)
cudaDevAttrMaxThreadsPerBlock, cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY, cudaDevAttrMaxBlockDimZ = 1, 2, 3, 4
cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY, cudaDevAttrMaxGridDimZ = 5, 6, 7
cudaDevAttrMaxSharedMemoryPerBlock, cudaDevAttrTotalConstantMemory, cudaDevAttrWarpSize = 8, 9, 10
cudaDevAttrMaxPitch, cudaDevAttrMaxRegistersPerBlock, cudaDevAttrClockRate = 11, 12, 13
cudaDevAttrTextureAlignment, cudaDevAttrGpuOverlap, cudaDevAttrMultiProcessorCount = 14, 15, 16
cudaDevAttrKernelExecTimeout, cudaDevAttrIntegrated, cudaDevAttrCanMapHostMemory = 17, 18, 19
cudaDevAttrComputeMode, cudaDevAttrConcurrentKernels, cudaDevAttrEccEnabled = 20, 31, 32
cudaDevAttrPciBusId, cudaDevAttrPciDeviceId, cudaDevAttrTccDriver, cudaDevAttrMemoryClockRate = 33, 34, 35, 36
cudaDevAttrGlobalMemoryBusWidth, cudaDevAttrL2CacheSize, cudaDevAttrMaxThreadsPerMultiProcessor = 37, 38, 39
cudaDevAttrAsyncEngineCount, cudaDevAttrUnifiedAddressing, cudaDevAttrPciDomainId = 40, 41, 50
cudaDevAttrComputeCapabilityMajor, cudaDevAttrComputeCapabilityMinor = 75, 76
cudaDevAttrMaxSharedMemoryPerMultiprocessor, cudaDevAttrMaxRegistersPerMultiprocessor = 81, 82
cudaDevAttrManagedMemory, cudaDevAttrIsMultiGpuBoard, cudaDevAttrMultiGpuBoardGroupID = 83, 84, 85
cudaDevAttrHostNativeAtomicSupported, cudaDevAttrSingleToDoublePrecisionPerfRatio = 86, 87
cudaDevAttrPageableMemoryAccess, cudaDevAttrConcurrentManagedAccess = 88, 89
cudaDevAttrComputePreemptionSupported, cudaDevAttrCanUseHostPointerForRegisteredMem = 90, 91
cudaDevAttrCooperativeLaunch, cudaDevAttrCooperativeMultiDeviceLaunch = 95, 96
cudaDevAttrMaxSharedMemoryPerBlockOptin, cudaDevAttrMaxBlocksPerMultiprocessor = 97, 106

# CuPy's property names -> CUdevice_attribute (cuda.h)
_ATTRIBUTES = {
    "sharedMemPerBlock": 8, "regsPerBlock": 12, "warpSize": 10, "memPitch": 11, "maxThreadsPerBlock": 1,
    "clockRate": 13, "totalConstMem": 9, "major": 75, "minor": 76, "textureAlignment": 14, "deviceOverlap": 15,
    "multiProcessorCount": 16, "kernelExecTimeoutEnabled": 17, "integrated": 18, "canMapHostMemory": 19,
    "computeMode": 20, "concurrentKernels": 31, "ECCEnabled": 32, "pciBusID": 33, "pciDeviceID": 34,
    "pciDomainID": 50, "asyncEngineCount": 40, "unifiedAddressing": 41, "memoryClockRate": 36,
    "memoryBusWidth": 37, "l2CacheSize": 38, "maxThreadsPerMultiProcessor": 39,
    "sharedMemPerMultiprocessor": 81, "regsPerMultiprocessor": 82, "managedMemory": 83, "isMultiGpuBoard": 84,
    "concurrentManagedAccess": 89, "sharedMemPerBlockOptin": 97, "maxBlocksPerMultiProcessor": 106,
}


def _cu_device(call, device):
    """(driver library, CUdevice) of CUDA device number `device`; CUDARuntimeError without a CUDA device, for a
    device that does not exist, or on AMD GPUs (loom reads these facts from the CUDA driver)."""
    if isinstance(device, bool) or not isinstance(device, int):
        device = int(device)
    if _gpu_kind() != _CUDA:
        if _gpu_kind() == _HOST:
            _need_gpu(call)
        raise CUDARuntimeError(f"{call}: loom reads device facts from the CUDA driver; this machine's GPUs are AMD's "
                               "(HIP)", errorInvalidValue)
    if not 0 <= device < _gpu_count():
        raise CUDARuntimeError(f"{call}: device {device} does not exist ({_gpu_count()} CUDA device(s))",
                               errorInvalidDevice)
    lib = _driver()
    if lib is None:
        raise CUDARuntimeError(f"{call}: the CUDA driver (libcuda.so.1) cannot be loaded", errorNoDevice)
    dev = ctypes.c_int()
    if lib.cuDeviceGet(ctypes.byref(dev), device) != 0:
        raise CUDARuntimeError(f"{call}: cuDeviceGet({device}) failed", errorInvalidDevice)
    return lib, dev


def deviceGetAttribute(attrib, device):
    """The value of device attribute attrib (a cudaDevAttr* constant) of CUDA device number device, as
    cudaDeviceGetAttribute; an attribute the driver does not know is CUDARuntimeError (cudaErrorInvalidValue)."""
    if isinstance(attrib, bool) or not isinstance(attrib, int):
        raise TypeError(f"deviceGetAttribute: attrib must be an int (a cudaDevAttr* constant), not {type(attrib).__name__}")
    lib, dev = _cu_device("deviceGetAttribute", device)
    v = ctypes.c_int()
    status = lib.cuDeviceGetAttribute(ctypes.byref(v), attrib, dev)
    if status != 0:
        raise CUDARuntimeError(f"deviceGetAttribute: the driver does not know device attribute {attrib} "
                               f"(cuDeviceGetAttribute status {status})", errorInvalidValue)
    return v.value


def deviceCanAccessPeer(device, peer_device):
    """1 when CUDA device `device` can access the memory of `peer_device` directly, else 0, as
    cudaDeviceCanAccessPeer (a device and itself: 0, as the runtime answers)."""
    lib, dev = _cu_device("deviceCanAccessPeer", device)
    _, peer = _cu_device("deviceCanAccessPeer", peer_device)
    if int(device) == int(peer_device):
        return 0
    v = ctypes.c_int()
    status = lib.cuDeviceCanAccessPeer(ctypes.byref(v), dev, peer)
    if status != 0:
        raise CUDARuntimeError(f"deviceCanAccessPeer: cuDeviceCanAccessPeer status {status}", errorInvalidValue)
    return v.value


def getDeviceProperties(device):
    """The properties of a CUDA device as CuPy's dict (name as bytes, totalGlobalMem, major, minor,
    multiProcessorCount, maxThreadsDim, maxGridSize, ... : cudaDeviceProp's fields), read from the driver."""
    lib, dev = _cu_device("getDeviceProperties", device)

    def attr(code):
        v = ctypes.c_int()
        return v.value if lib.cuDeviceGetAttribute(ctypes.byref(v), code, dev) == 0 else 0

    name = ctypes.create_string_buffer(256)
    lib.cuDeviceGetName(name, 256, dev)
    total = ctypes.c_size_t()
    lib.cuDeviceTotalMem_v2(ctypes.byref(total), dev)
    props = {"name": name.value, "totalGlobalMem": total.value}
    props.update({k: attr(code) for k, code in _ATTRIBUTES.items()})
    props["maxThreadsDim"] = (attr(2), attr(3), attr(4))
    props["maxGridSize"] = (attr(5), attr(6), attr(7))
    return props


# ---- memory ----------------------------------------------------------------------------------------------
def malloc(size):
    """The address of size bytes of the current CUDA device's memory (a block of loom's pool)."""
    key = _need_gpu("malloc")
    size = int(size)
    if size < 0:
        raise CUDARuntimeError(f"malloc: the size must be >= 0, got {size}", errorInvalidValue)
    try:
        ptr = _core.mem_alloc(key[0], key[1], size) or 0
    except MemoryError as e:
        raise CUDARuntimeError(f"malloc: {e}", errorMemoryAllocation) from None
    if ptr:
        with _blocks_lock:
            _blocks[ptr] = (key[0], key[1], size)
    return ptr


def free(ptr):
    """Gives a block of malloc back (0 does nothing)."""
    ptr = int(ptr)
    if ptr == 0:
        return
    with _blocks_lock:
        block = _blocks.pop(ptr, None)
    if block is None:
        raise CUDARuntimeError(f"free: {ptr:#x} was not allocated by loom.cuda.runtime.malloc (or was freed already)",
                               errorInvalidValue)
    _core.flush()
    _core.mem_free(block[0], block[1], ptr, block[2])


def _is_device_pointer(ptr):
    """Whether ptr is device memory, for memcpyDefault (unified addressing): the driver says."""
    lib = _driver()
    if lib is None:
        return False
    _ensure_context(lib, get_device_id())
    kind = ctypes.c_uint(0)
    rc = lib.cuPointerGetAttribute(ctypes.byref(kind), 2, ctypes.c_uint64(int(ptr)))  # CU_POINTER_ATTRIBUTE_MEMORY_TYPE
    return rc == 0 and kind.value == 2  # CU_MEMORYTYPE_DEVICE


def _sides(kind, dst, src, call):
    """((dkind, dindex), (skind, sindex)) for a cudaMemcpyKind."""
    host = (_HOST, 0)
    if isinstance(kind, bool) or kind not in (memcpyHostToHost, memcpyHostToDevice, memcpyDeviceToHost,
                                              memcpyDeviceToDevice, memcpyDefault):
        raise CUDARuntimeError(f"{call}: kind {kind!r} is not a cudaMemcpyKind (memcpyHostToHost .. memcpyDefault: "
                               "0..4)", errorInvalidValue)
    if kind == memcpyHostToHost:
        return host, host
    gpu = _need_gpu(call)
    if kind == memcpyHostToDevice:
        return gpu, host
    if kind == memcpyDeviceToHost:
        return host, gpu
    if kind == memcpyDeviceToDevice:
        return gpu, gpu
    if _gpu_kind() != _CUDA:  # memcpyDefault
        raise CUDARuntimeError(f"{call}: memcpyDefault needs CUDA's unified addressing; give the copy's kind",
                               errorInvalidValue)
    return (gpu if _is_device_pointer(dst) else host), (gpu if _is_device_pointer(src) else host)


def _copy(call, dst, src, size, kind, stream, async_):
    size = int(size)
    if size < 0:
        raise CUDARuntimeError(f"{call}: the size must be >= 0, got {size}", errorInvalidValue)
    d, s = _sides(kind, dst, src, call)
    handle = None if stream is None else _as_stream(stream)._handle()
    _core.flush()
    try:
        _core.memcpy(int(dst), d[0], d[1], int(src), s[0], s[1], size, handle, async_)
    except (ValueError, MemoryError, RuntimeError, NotImplementedError) as e:
        raise _runtime_error(call, e) from None


def memcpy(dst, src, size, kind):
    """Copies size bytes from address src to address dst (kind: memcpyHostToDevice, ...); done when it
    returns."""
    _copy("memcpy", dst, src, size, kind, None, False)


def memcpyAsync(dst, src, size, kind, stream):
    """memcpy enqueued on stream (an int CUstream, 0 the legacy default, or a loom Stream)."""
    _copy("memcpyAsync", dst, src, size, kind, stream, True)


def _fill(call, ptr, value, size, stream):
    key = _need_gpu(call)
    size = int(size)
    if size < 0:
        raise CUDARuntimeError(f"{call}: the size must be >= 0, got {size}", errorInvalidValue)
    if size == 0:
        return
    from .memory import MemoryPointer, UnownedMemory
    p = MemoryPointer(UnownedMemory(int(ptr), size, None, key[1]), 0)
    p._fill(value, size, None if stream is None else _as_stream(stream), call)


def memset(ptr, value, size):
    """Sets size bytes of device memory at ptr to value's low byte; done when it returns."""
    _fill("memset", ptr, value, size, None)
    Device().synchronize()


def memsetAsync(ptr, value, size, stream):
    _fill("memsetAsync", ptr, value, size, stream)
