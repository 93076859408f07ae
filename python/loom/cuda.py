"""loom.cuda: CuPy's device, stream, event and memory-pool API.

This build has the host backend only, so these are host stand-ins with CuPy's signatures: Device(0)
is the host, streams run in order (synchronize() evaluates every pending array), events record the
host clock after evaluating pending work, and the memory pool reports loom's live host arrays as 0
(host memory is returned to the system as soon as an array dies). CuPy code therefore runs unchanged.
"""
import time

from . import _core


class CUDARuntimeError(RuntimeError):
    pass


_device_stack = []


def _available():
    return False


class Device:
    """The host device (id 0) standing in for a CUDA device."""

    def __init__(self, device=None):
        if device is None:
            device = 0
        if isinstance(device, Device):
            device = device.id
        device = int(device)
        if device != 0:
            raise ValueError(f"device {device} is not available: this machine has no CUDA device; loom runs on "
                             "the host, which is Device(0)")
        self.id = device

    def use(self):
        return self

    def synchronize(self):
        _core.flush()

    @property
    def compute_capability(self):
        return "host"

    def __enter__(self):
        _device_stack.append(self)
        return self

    def __exit__(self, *exc):
        if _device_stack:
            _device_stack.pop()
        return False

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return hash(("loom.Device", self.id))

    def __int__(self):
        return self.id

    def __repr__(self):
        return f"<CUDA Device {self.id} (loom host stand-in)>"


def get_device_id():
    return 0


class Stream:
    """A stream stand-in: work is ordered; synchronize() evaluates pending arrays."""

    null = None

    def __init__(self, null=False, non_blocking=False, ptds=False):
        self.ptr = 0
        self._closed = False

    def _check(self):
        if self._closed:
            raise ValueError("this stream was closed; create a new loom.cuda.Stream")

    def use(self):
        self._check()
        return self

    def synchronize(self):
        self._check()
        _core.flush()

    def record(self, event=None):
        self._check()
        event = event or Event()
        event.record(self)
        return event

    def wait_event(self, event):
        self._check()

    @property
    def done(self):
        return True

    def close(self):
        self._closed = True

    def __enter__(self):
        self._check()
        return self

    def __exit__(self, *exc):
        return False


Stream.null = Stream(null=True)


def get_current_stream():
    return Stream.null


class Event:
    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self._t = None
        self.disable_timing = disable_timing

    def record(self, stream=None):
        _core.flush()
        self._t = time.perf_counter()

    def synchronize(self):
        _core.flush()

    @property
    def done(self):
        return True


def get_elapsed_time(start_event, end_event):
    """Milliseconds between two recorded events."""
    if start_event._t is None or end_event._t is None:
        raise RuntimeError("get_elapsed_time: both events must be recorded first")
    if start_event.disable_timing or end_event.disable_timing:
        raise RuntimeError("get_elapsed_time: an event was created with disable_timing=True")
    return (end_event._t - start_event._t) * 1e3


class MemoryPool:
    def used_bytes(self):
        return 0

    def total_bytes(self):
        return 0

    def free_bytes(self):
        return 0

    def free_all_blocks(self, stream=None):
        pass

    def n_free_blocks(self):
        return 0

    def set_limit(self, size=None, fraction=None):
        pass

    def get_limit(self):
        return 0


_pool = MemoryPool()
_pinned_pool = MemoryPool()


def get_default_memory_pool():
    return _pool


def get_default_pinned_memory_pool():
    return _pinned_pool


class runtime:
    @staticmethod
    def getDeviceCount():
        return 0

    @staticmethod
    def is_available():
        return False
