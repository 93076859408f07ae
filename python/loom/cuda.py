"""loom.cuda: CuPy's device, stream, event and memory-pool API over the Loom C API.

Approach. When loom_device_count reports CUDA devices, Device(n) is GPU n: creation functions and
asarray place arrays on the current device (a thread-local, set by Device.use() or `with Device(n):`),
and operations run where their operands live (operands on two devices are a ValueError naming both).
With no GPU, Device(0) is the host stand-in, so CuPy-style code runs unchanged on a laptop.

Streams and events wrap loom_stream_* / loom_event_* (they exist on the host too and complete at
once). Loom arrays are lazy: work is enqueued when a value is evaluated, so entering and leaving
`with stream:` evaluates pending arrays first: what was written inside the block runs on that stream.
If the linked libloom predates the stream API, streams and events fall back to host stand-ins (the
host clock, synchronous evaluation) and the memory pool reports 0.

The compute capability is read from the CUDA driver (libcuda, through ctypes): the C API has no call
for it yet.

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
import ctypes
import os
import threading
import time

from . import _core
from ._pinned import (PinnedMemory, PinnedMemoryPointer, PinnedMemoryPool, PooledPinnedMemory,  # noqa: F401
                      alloc_pinned_memory, get_default_pinned_memory_pool, set_pinned_memory_allocator)


class CUDARuntimeError(RuntimeError):
    pass


_HOST, _CUDA, _HIP = 0, 1, 2
_tls = threading.local()
_count_cache = []
_DEVICE_NAMES = {"cuda": _CUDA, "nvidia": _CUDA, "hip": _HIP, "rocm": _HIP, "amd": _HIP, "host": _HOST, "cpu": _HOST}


def _wanted_kind():
    """The device kind LOOM_DEVICE asks for; None for 'auto' (or unset)."""
    v = os.environ.get("LOOM_DEVICE", "").strip().lower()
    if v in ("", "auto"):
        return None
    if v not in _DEVICE_NAMES:
        raise ValueError(f"LOOM_DEVICE={v!r} is not a device kind: use cuda, hip (AMD GPUs; also rocm, amd), host "
                         "or auto")
    return _DEVICE_NAMES[v]


def _no_device_reason(kind):
    """The runtime's own words for why there is no device of kind (e.g. 'no AMD device (hipInit: ...)')."""
    try:
        _core.device_synchronize(kind, 0)
    except Exception as e:  # the C API's message
        return str(e)
    return "no device"


def _selection():
    """(kind, count, wanted, why): the GPUs loom uses (kind _HOST and count 0 without any), the kind
    LOOM_DEVICE asked for (None: auto) and, when that kind has no device, why; cached."""
    if not _count_cache:
        want = _wanted_kind()
        kinds = (_CUDA, _HIP) if want is None else (() if want == _HOST else (want,))
        found, why = (_HOST, 0), None
        for kind in kinds:
            try:
                n = _core.device_count(kind)
            except Exception:
                n = 0
            if n > 0:
                found = (kind, n)
                break
        if want in (_CUDA, _HIP) and found[1] == 0:
            why = _no_device_reason(want)
        _count_cache.append((found[0], found[1], want, why))
    return _count_cache[0]


def _gpu_kind_count():
    """(kind, count) of the GPUs loom uses: LOOM_DEVICE's kind, else CUDA's when there are any, else AMD's
    (HIP), else (_HOST, 0)."""
    s = _selection()
    return s[0], s[1]


def _gpu_count():
    """Number of GPUs loom can use (0 without a driver or GPU)."""
    return _gpu_kind_count()[1]


def _gpu_kind():
    """The device kind of this machine's GPUs (_CUDA or _HIP; _HOST without a GPU)."""
    return _gpu_kind_count()[0]


def _available():
    return _gpu_count() > 0


def get_device_id():
    """The id of the current device (0 without a GPU: the host stand-in)."""
    return getattr(_tls, "device", 0)


def _current_key():
    """(kind, index) of the current device, as loom._core takes it. LOOM_DEVICE naming a kind this machine
    has no device of is an error here, where arrays are placed."""
    kind, n, want, why = _selection()
    if n == 0 and why is not None:
        name = "an AMD GPU (HIP)" if want == _HIP else "a CUDA device"
        raise CUDARuntimeError(f"LOOM_DEVICE={os.environ.get('LOOM_DEVICE', '').strip()} asks for {name}, but: "
                               f"{why}. Unset LOOM_DEVICE (or set it to auto or host) to run on the host")
    return (kind, get_device_id()) if n > 0 else (_HOST, 0)


# ---- the CUDA driver, for what the C API does not expose ---------------------------------------------
_driver_cache = []


def _driver():
    if not _driver_cache:
        lib = None
        try:
            lib = ctypes.CDLL("libcuda.so.1")
            if lib.cuInit(0) != 0:
                lib = None
        except OSError:
            lib = None
        _driver_cache.append(lib)
    return _driver_cache[0]


def _ensure_context(lib, device_id):
    dev = ctypes.c_int()
    ctx = ctypes.c_void_p()
    cur = ctypes.c_void_p()
    if lib.cuCtxGetCurrent(ctypes.byref(cur)) == 0 and cur.value:
        return
    if lib.cuDeviceGet(ctypes.byref(dev), device_id) == 0 and \
            lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0:
        lib.cuCtxSetCurrent(ctx)


# ---- the HIP runtime, the same for AMD GPUs -----------------------------------------------------------------
_hip_cache = []


def _hip():
    if not _hip_cache:
        lib = None
        for name in ("libamdhip64.so", "libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5"):
            try:
                lib = ctypes.CDLL(name)
                break
            except OSError:
                continue
        if lib is not None and lib.hipInit(0) != 0:
            lib = None
        _hip_cache.append(lib)
    return _hip_cache[0]


def _hip_arch(device_id):
    """gcnArchName of an AMD device ('gfx942:sramecc+:xnack-'), found in HIP's properties record."""
    lib = _hip()
    if lib is None:
        raise CUDARuntimeError("the HIP runtime (libamdhip64) cannot be loaded")
    props = getattr(lib, "hipGetDevicePropertiesR0600", None) or lib.hipGetDeviceProperties
    buf = ctypes.create_string_buffer(16384)
    if props(buf, int(device_id)) != 0:
        raise CUDARuntimeError(f"hipGetDeviceProperties failed for device {device_id}")
    raw = buf.raw
    i = raw.find(b"gfx")
    while i >= 0 and not raw[i + 3:i + 4].isdigit():
        i = raw.find(b"gfx", i + 1)
    if i < 0:
        raise CUDARuntimeError(f"the architecture of AMD device {device_id} is unknown")
    end = i
    while end < len(raw) and 32 < raw[end] < 127:
        end += 1
    return raw[i:end].decode()


def _sync_foreign_stream(stream, device_id=0):
    """Waits on the host for a producer's CUstream / hipStream_t (an int; 1 = legacy default, 2 =
    per-thread)."""
    if stream is None or stream == -1:
        return
    if _gpu_kind() == _HIP:
        lib = _hip()
        if lib is None:
            return
        lib.hipSetDevice(int(device_id))
        handle = None if int(stream) in (1, 2) else ctypes.c_void_p(int(stream))
        rc = lib.hipStreamSynchronize(handle)
        if rc != 0:
            raise CUDARuntimeError(f"hipStreamSynchronize({stream:#x}) failed with HIP error {rc}")
        return
    lib = _driver()
    if lib is None:
        return
    _ensure_context(lib, device_id)
    rc = lib.cuStreamSynchronize(ctypes.c_void_p(int(stream)))
    if rc != 0:
        raise CUDARuntimeError(f"cuStreamSynchronize({stream:#x}) failed with CUDA error {rc}")


class Device:
    """A GPU (CuPy's cupy.cuda.Device): an NVIDIA GPU, or an AMD one on a ROCm machine; the host
    stand-in (id 0) on a machine with no GPU."""

    def __init__(self, device=None):
        if device is None:
            device = get_device_id()
        if isinstance(device, Device):
            device = device.id
        device = int(device)
        n = _gpu_count()
        if n == 0 and device != 0:
            raise ValueError(f"device {device} is not available: this machine has no CUDA device (nor an AMD GPU); "
                             "loom runs on the host, which is Device(0)")
        if n > 0 and not 0 <= device < n:
            kind = "AMD" if _gpu_kind() == _HIP else "CUDA"
            raise ValueError(f"device {device} is not available: this machine has {n} {kind} device(s) "
                             f"(ids 0..{n - 1})")
        self.id = device
        self._prev = []

    @property
    def _key(self):
        return (_current_key()[0], self.id) if _available() else _current_key()

    def use(self):
        """Makes this the current device of the calling thread."""
        _tls.device = self.id
        return self

    def synchronize(self):
        """Evaluates pending arrays and waits until the device has finished all of loom's work."""
        _core.flush()
        _core.device_synchronize(*self._key)

    @property
    def compute_capability(self):
        """'90' on an H100/H200 (CuPy's format); the gfx number on an AMD GPU ('942' on an MI300X, '90a' on
        an MI250X); 'host' for the host stand-in."""
        if not _available():
            return "host"
        if _gpu_kind() == _HIP:
            return _hip_arch(self.id).split(":")[0][3:]
        lib = _driver()
        if lib is None:
            raise CUDARuntimeError("compute_capability: the CUDA driver (libcuda.so.1) cannot be loaded")
        dev, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        if lib.cuDeviceGet(ctypes.byref(dev), self.id) != 0 or \
                lib.cuDeviceGetAttribute(ctypes.byref(major), 75, dev) != 0 or \
                lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, dev) != 0:
            raise CUDARuntimeError(f"compute_capability: the driver could not describe device {self.id}")
        return f"{major.value}{minor.value}"

    @property
    def mem_info(self):
        """(free, total) bytes of the device, from the driver; (0, 0) for the host stand-in."""
        if _available() and _gpu_kind() == _HIP:
            lib = _hip()
            if lib is None:
                return (0, 0)
            free, total = ctypes.c_size_t(), ctypes.c_size_t()
            if lib.hipSetDevice(self.id) != 0 or lib.hipMemGetInfo(ctypes.byref(free), ctypes.byref(total)) != 0:
                raise CUDARuntimeError("mem_info: hipMemGetInfo failed")
            return (free.value, total.value)
        lib = _driver() if _available() else None
        if lib is None:
            return (0, 0)
        _ensure_context(lib, self.id)
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        if lib.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)) != 0:
            raise CUDARuntimeError("mem_info: cuMemGetInfo failed")
        return (free.value, total.value)

    def __enter__(self):
        self._prev.append(get_device_id())
        self.use()
        return self

    def __exit__(self, *exc):
        _tls.device = self._prev.pop() if self._prev else 0
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(("loom.Device", self.id))

    def __int__(self):
        return self.id

    def __index__(self):
        return self.id

    def __repr__(self):
        if _available():
            return f"<CUDA Device {self.id}>"
        return f"<CUDA Device {self.id} (loom host stand-in)>"


def _device_of(key):
    """The Device object for an array's (kind, index)."""
    return Device(key[1] if key[0] != _HOST else 0)


# ---- streams -----------------------------------------------------------------------------------------------
def _stream_stack():
    s = getattr(_tls, "streams", None)
    if s is None:
        s = _tls.streams = {}
    return s


def _with_stack():
    """The streams of this thread's open `with stream:` blocks, innermost last."""
    s = getattr(_tls, "with_streams", None)
    if s is None:
        s = _tls.with_streams = []
    return s


class Stream:
    """A CUDA stream (CuPy's cupy.cuda.Stream). Stream.null is loom's default stream of the current
    device; Stream.ptds, CUDA's per-thread default stream, is a second name for it (its ptr is CUDA's
    per-thread handle, 2, on a GPU: loom's work on it runs on the default stream, which orders it before
    anything later on either). Streams compare as CuPy's: the null streams equal each other, as do the
    per-thread ones; a stream made with Stream() equals only itself. `with s:` makes s current; pending
    arrays are evaluated on entry and exit, so that the work written inside the block runs on s. The
    stream is blocking, as CuPy's default Stream(): it and the default stream wait for each other's
    earlier work, so arrays made on one are read correctly on the other (non_blocking=True is accepted
    and gives the same blocking stream)."""

    null: "Stream"  # both set below the class
    ptds: "Stream"

    def __init__(self, null=False, non_blocking=False, ptds=False):
        if null and ptds:
            raise ValueError("Stream: null=True and ptds=True ask for two different default streams; pick one")
        self._closed = False
        self._null = bool(null or ptds)  # a default stream: no handle of its own, follows the current device
        self._default = "ptds" if ptds else ("null" if null else None)
        self._foreign_stream_ref = None
        self._h = None
        self.device_id = get_device_id()
        self._kind = None if self._null else _current_key()  # a default stream follows the current device
        if not self._null and _core.has_stream_api():
            self._h = _core.stream_create(*self._kind)

    def _check(self):
        if self._closed:
            raise ValueError("this stream was closed; create a new loom.cuda.Stream")

    @property
    def ptr(self):
        """The CUstream handle (0 for the null stream and on the host; 2, CUDA's per-thread default
        stream handle, for Stream.ptds on a GPU)."""
        self._check()
        if self._h is None:
            return _PTDS_HANDLE if self._default == "ptds" and _available() else 0
        return _core.stream_ptr(self._h) or 0

    def __cuda_stream__(self):
        """The CUDA stream protocol: (version 0, the stream's handle)."""
        return (0, self.ptr)

    @classmethod
    def from_external(cls, obj):
        """A stream for obj's CUDA stream, read through the CUDA stream protocol (obj.__cuda_stream__()
        returns (0, handle)); the result keeps obj alive and its device_id is -1 (the protocol does not
        say which device)."""
        if not hasattr(obj, "__cuda_stream__"):
            raise TypeError(f"Stream.from_external: {type(obj).__name__} does not implement __cuda_stream__()")
        got = obj.__cuda_stream__()
        if not isinstance(got, tuple) or len(got) != 2:
            raise TypeError(f"Stream.from_external: __cuda_stream__() must return a 2-tuple, got {got!r}")
        version, handle = got
        if not isinstance(version, int) or not isinstance(handle, int):
            raise TypeError(f"Stream.from_external: __cuda_stream__() must return (int, int), got {got!r}")
        if version != 0:
            raise TypeError(f"Stream.from_external: unsupported version {version} of the CUDA stream protocol "
                            "(loom reads version 0)")
        s = ExternalStream(handle, -1, _unknown_device=True)
        s._foreign_stream_ref = obj
        return s

    def launch_host_func(self, callback, arg):
        """Calls callback(arg) once the work enqueued on this stream so far has finished (CuPy's
        cudaLaunchHostFunc). Loom waits for the stream and then calls it, in the calling thread."""
        self.synchronize()
        callback(arg)

    def add_callback(self, callback, arg):
        """Calls callback(stream, status, arg) once the work enqueued so far has finished (CuPy's
        cudaStreamAddCallback; status 0: success), as launch_host_func does."""
        self.synchronize()
        callback(self, 0, arg)

    def _key_now(self):
        return _current_key() if self._null else self._kind

    def use(self):
        """Makes this the current stream of its device for the calling thread."""
        self._check()
        key = self._key_now()
        if _core.has_stream_api():
            _core.stream_use(key[0], key[1], self._h)
        _stream_stack()[key] = self
        return self

    def synchronize(self):
        self._check()
        _core.flush()
        if self._h is not None:
            _core.stream_synchronize(self._h)
        else:
            _core.device_synchronize(*self._key_now())

    def record(self, event=None):
        self._check()
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event):
        """Later work on this stream waits for event (done on the host: the C API has no
        stream-waits-event call yet)."""
        self._check()
        event.synchronize()

    @property
    def done(self):
        self._check()
        self.synchronize()
        return True

    def close(self):
        """Destroys the stream now (pending work still completes); using it afterwards is an error."""
        if self._closed:
            return
        if get_current_stream() is self:
            Stream.null.use()
        if self._h is not None:
            _core.flush()
            _core.close_handle(self._h)
        self._closed = True

    def __enter__(self):
        self._check()
        _core.flush()
        _with_stack().append(self)
        self.use()
        return self

    def __exit__(self, *exc):
        """Makes current the stream of the enclosing `with` block of this thread, or Stream.null outside
        any (CuPy's rule: a stream made current by use() inside a block is forgotten when it ends)."""
        _core.flush()
        stack = _with_stack()
        if stack:
            stack.pop()
        prev = stack[-1] if stack else Stream.null
        if prev._closed:
            prev = Stream.null
        prev.use()
        return False

    def _identity(self):
        """What tells streams apart: the default stream's kind (null or per-thread), else a made
        stream's handle (its object on the host, where handles are 0), else an external handle."""
        if self._default is not None:
            return ("default", self._default)
        ext = getattr(self, "_ext", None)
        if ext is not None:
            return ("handle", ext)
        ptr = self.ptr if not self._closed else 0
        return ("handle", ptr) if ptr else ("object", id(self))

    def __eq__(self, other):
        return isinstance(other, Stream) and (other is self or other._identity() == self._identity())

    def __hash__(self):
        return hash(self._identity())

    def __repr__(self):
        if self._default == "ptds":
            return "<loom.cuda.Stream ptds>"
        if self._null:
            return "<loom.cuda.Stream null>"
        return f"<loom.cuda.Stream {self.ptr:#x} (device {self.device_id})>" if not self._closed else \
            "<loom.cuda.Stream closed>"


_PTDS_HANDLE = 2  # cudaStreamPerThread / CU_STREAM_PER_THREAD
Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)


def get_current_stream(device_id=None):
    """The calling thread's current stream of the current device (Stream.null unless one is used)."""
    key = _current_key() if device_id is None else ((_gpu_kind(), int(device_id)) if _available() else (_HOST, 0))
    s = _stream_stack().get(key, Stream.null)
    return Stream.null if s._closed else s


class ExternalStream(Stream):
    """A stream made elsewhere (CuPy, PyTorch): accepted for API compatibility; loom synchronizes it
    on the host where it must order work with it."""

    def __init__(self, ptr, device_id=-1, _unknown_device=False):
        self._closed = False
        self._null = False
        self._default = None
        self._foreign_stream_ref = None
        self._h = None
        self._ext = int(ptr)
        self.device_id = -1 if _unknown_device else (get_device_id() if device_id < 0 else device_id)
        self._kind = _current_key()

    @property
    def ptr(self):
        return self._ext

    def use(self):
        raise NotImplementedError("loom cannot run its kernels on an external stream yet; use loom.cuda.Stream()")

    def synchronize(self):
        _sync_foreign_stream(self._ext, self.device_id if self.device_id >= 0 else get_device_id())


# ---- events -------------------------------------------------------------------------------------------------
class Event:
    """A CUDA event (CuPy's cupy.cuda.Event): record() evaluates pending arrays, then marks the stream."""

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.disable_timing = bool(disable_timing)
        self._recorded = False
        self._t = None
        self._h = _core.event_create(*_current_key()) if _core.has_stream_api() else None

    def record(self, stream=None):
        _core.flush()
        if stream is None:
            stream = get_current_stream()
        stream._check()
        if self._h is not None:
            _core.event_record(self._h, stream._h)
        self._t = time.perf_counter()
        self._recorded = True

    def synchronize(self):
        _core.flush()
        if self._h is not None and self._recorded:
            _core.event_synchronize(self._h)

    @property
    def done(self):
        self.synchronize()
        return True

    @property
    def ptr(self):
        return 0


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded events (CuPy's cupy.cuda.get_elapsed_time)."""
    if not start_event._recorded or not end_event._recorded:
        raise RuntimeError("get_elapsed_time: both events must be recorded first (event.record())")
    if start_event.disable_timing or end_event.disable_timing:
        raise RuntimeError("get_elapsed_time: an event was created with disable_timing=True")
    if start_event._h is not None and end_event._h is not None:
        end_event.synchronize()
        return _core.event_elapsed(start_event._h, end_event._h)
    return (end_event._t - start_event._t) * 1e3


# ---- memory pools ------------------------------------------------------------------------------------------
class MemoryPool:
    """Figures of loom's caching pool of the current device (the host pool without a GPU)."""

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
        if _core.has_stream_api():
            _core.pool_free_all(*_current_key())

    def n_free_blocks(self):
        return 0

    def set_limit(self, size=None, fraction=None):
        raise NotImplementedError("loom's memory pool has no limit setting yet")

    def get_limit(self):
        return 0


_pool = MemoryPool()


def get_default_memory_pool():
    """The memory pool of the current device (CuPy's cupy.get_default_memory_pool): figures and
    free_all_blocks of Loom's caching pool."""
    return _pool


def is_available():
    """True when a GPU is usable (CuPy's cupy.cuda.is_available; an AMD GPU on a ROCm machine)."""
    return _available()


class _Runtime:
    """CuPy's cupy.cuda.runtime, the part loom has."""

    @property
    def is_hip(self):
        """True when loom drives AMD GPUs (HIP): the machine's GPUs are AMD's, or LOOM_DEVICE=hip."""
        kind, _, want, _ = _selection()
        return want == _HIP or kind == _HIP

    @staticmethod
    def getDeviceCount():
        return _gpu_count()

    @staticmethod
    def is_available():
        return _available()

    @staticmethod
    def getDevice():
        return get_device_id()

    @staticmethod
    def setDevice(device):
        Device(device).use()

    @staticmethod
    def deviceSynchronize():
        Device().synchronize()


runtime = _Runtime()
