"""loom.cuda.stream: CuPy's Stream, ExternalStream and Event over loom_stream_* / loom_event_* (they exist on
the host too and complete at once). Loom arrays are lazy: work is enqueued when a value is evaluated, so
entering and leaving `with stream:` evaluates pending arrays first: what was written inside the block runs
on that stream. An ExternalStream borrows a stream made elsewhere (CuPy, PyTorch: its CUstream handle):
loom_stream_wrap makes a loom stream over it that loom's kernels and copies run on and that never destroys
the handle."""
import time

from .. import _core
from .device import _available, _current_key, _gpu_kind, _sync_foreign_stream, _tls, get_device_id


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

    def _handle(self):
        """loom's stream handle (None: the default stream), for the C calls that take one."""
        self._check()
        return self._h

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
_LEGACY_HANDLE = 1  # cudaStreamLegacy / CU_STREAM_LEGACY: what loom's null stream exports (CUDA Array Interface)
Stream.null = Stream(null=True)
Stream.ptds = Stream(ptds=True)


def get_current_stream(device_id=None):
    """The calling thread's current stream of the current device (Stream.null unless one is used)."""
    key = _current_key() if device_id is None else ((_gpu_kind(), int(device_id)) if _available() else (0, 0))
    s = _stream_stack().get(key, Stream.null)
    return Stream.null if s._closed else s


class ExternalStream(Stream):
    """A stream made elsewhere (CuPy's cupy.cuda.ExternalStream): ptr is its CUstream (hipStream_t on an AMD
    GPU; 0 the legacy default stream, 2 the per-thread one). `with ExternalStream(p):` and .use() make
    loom's kernels and copies run on it, ordered with the owner's work there; loom never destroys it (the
    owner must keep it alive while loom uses it). device_id: the GPU it belongs to (-1: the current one)."""

    def __init__(self, ptr, device_id=-1, _unknown_device=False):
        self._closed = False
        self._null = False
        self._default = None
        self._foreign_stream_ref = None
        self._h = None  # loom's stream over the handle, made on first use (loom_stream_wrap)
        self._ext = int(ptr)
        if self._ext < 0:
            raise ValueError(f"ExternalStream: {ptr} is not a stream handle (an address, >= 0)")
        self.device_id = -1 if _unknown_device else (get_device_id() if device_id < 0 else int(device_id))
        if _available():
            self._kind = (_current_key()[0], get_device_id() if self.device_id < 0 else self.device_id)
        else:
            self._kind = _current_key()

    @property
    def ptr(self):
        return self._ext

    def _handle(self):
        """loom's stream over the borrowed handle (made once); None with a libloom without streams."""
        self._check()
        if self._h is None and _core.has_stream_api():
            self._h = _core.stream_wrap(self._kind[0], self._kind[1], self._ext)
        return self._h

    def use(self):
        self._handle()
        return Stream.use(self)

    def synchronize(self):
        """Evaluates pending arrays, then waits until the stream's work (loom's and the owner's) is done."""
        self._check()
        _core.flush()
        h = self._handle()
        if h is not None:
            _core.stream_synchronize(h)
        else:
            _sync_foreign_stream(self._ext, self._kind[1])

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
            _core.event_record(self._h, stream._handle())
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

