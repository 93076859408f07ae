"""loom.cuda.device: which GPUs loom drives (LOOM_DEVICE, the drivers it finds), the calling thread's current
device, CuPy's Device, and the CUDA driver / HIP runtime reached through ctypes for what the C API does not
expose (compute capability, memory figures, device properties, foreign streams)."""
import ctypes
import os
import threading

from .. import _core


class CUDARuntimeError(RuntimeError):
    """An error of the CUDA (or HIP) runtime, as CuPy's cupy.cuda.runtime.CUDARuntimeError: status is the
    driver's error code when one is known (else 0)."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status


_HOST, _CUDA, _HIP = 0, 1, 2
_tls = threading.local()
_count_cache: list = []
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
_driver_cache: list = []


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
_hip_cache: list = []


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



def is_available():
    """True when a GPU is usable (CuPy's cupy.cuda.is_available; an AMD GPU on a ROCm machine)."""
    return _available()
