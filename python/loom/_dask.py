"""_dask.py: loom arrays as Dask chunks (dask.array) and as values that cross processes (distributed).

Dask is the scheduler; Loom's part is to be a chunk type whose work inside a task stays lazy, so a
task's chain of elementwise operations and its reduction run as one fused kernel per chunk. Nothing
here imports Dask when loom is imported: install() puts a finder on sys.meta_path that waits for
`dask.array.dispatch` and `distributed.protocol.serialize` and, once either has run, registers loom
with it lazily (the registration itself runs the first time Dask meets a loom array), the way Dask
registers CuPy. When Dask was imported before loom, install() registers at once.

- dask.array's dispatch tables (concatenate, tensordot, einsum, take, percentile, empty, numel,
  nannumel, to_numpy / to_cupy conversions): loom's own function where the package has one, else
  NumPy's on the host (a GPU chunk is copied there and back: the docs' support table says which).
  Everything else reaches loom through __array_function__ / __array_ufunc__.
- distributed's serializer family "dask": a host array is one zero-copy frame of its memory (through
  distributed's NumPy serializer, so every dtype is handled the same way); a GPU array is copied to a
  host frame and comes back on the receiving process's current device.
- distributed's serializer family "cuda" (the one its UCX comm asks for, as it does for CuPy): a CUDA
  array is one device frame, a flat uint8 view of its memory (a C- or F-contiguous copy first where it
  is neither), described by its CUDA Array Interface; the header carries shape, typestr and strides as
  CuPy's does, so either library reads the other's frames. A host array is not the cuda family's
  (NotImplementedError: distributed moves on to "dask").
- A backend entry point (pyproject: dask.array.backends, name "loom"): with
  dask.config.set({"array.backend": "loom"}), da.ones/zeros/empty/full/arange and da.random make loom
  chunks on the workers (da.random on loom's counter-based stream).
- dask.array's "array_optimize" hook (set when dask.array is imported, unless set already): each task
  of an optimized graph ends with one evaluation of all the pending loom arrays it returns.
- Dask's normalize_token (when dask.base is imported): a loom array's token hashes its contents as
  Dask hashes a NumPy array's, in place of Dask's pickling fallback; Dask's sizeof (dask.sizeof): a
  loom array's nbytes, which distributed's memory accounting and transfer costs read.
"""
import importlib.abc
import importlib.machinery
import sys

import numpy

_HOOKS = {}  # module name -> callback run right after that module has executed


def _register_dispatch_lazily():
    from dask.array import dispatch as d
    for table in (d.concatenate_lookup, d.tensordot_lookup, d.einsum_lookup, d.take_lookup, d.empty_lookup,
                  d.percentile_lookup, d.numel_lookup, d.nannumel_lookup, d.to_numpy_dispatch):
        table.register_lazy("loom", register_dask_array)
    _install_task_finishing()


def _register_serializers_lazily():
    from distributed.protocol.serialize import dask_serialize, dask_deserialize
    dask_serialize.register_lazy("loom", register_distributed)
    dask_deserialize.register_lazy("loom", register_distributed)


def _register_cuda_serializers_lazily():
    from distributed.protocol.cuda import cuda_serialize, cuda_deserialize
    cuda_serialize.register_lazy("loom", register_distributed)
    cuda_deserialize.register_lazy("loom", register_distributed)


def _register_tokenize_lazily():
    from dask.base import normalize_token
    normalize_token.register_lazy("loom", register_tokenize)


def _register_sizeof_lazily():
    from dask.sizeof import sizeof
    sizeof.register_lazy("loom", register_sizeof)


_HOOKS["dask.array.dispatch"] = _register_dispatch_lazily
_HOOKS["dask.base"] = _register_tokenize_lazily
_HOOKS["dask.sizeof"] = _register_sizeof_lazily
_HOOKS["distributed.protocol.serialize"] = _register_serializers_lazily
_HOOKS["distributed.protocol.cuda"] = _register_cuda_serializers_lazily


class _AfterExec(importlib.abc.Loader):
    """Wraps a module's loader: runs the hook after the module's code."""

    def __init__(self, inner, hook):
        self._inner, self._hook = inner, hook

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        self._hook()

    def __getattr__(self, name):  # get_resource_reader, is_package, ...: the real loader's
        return getattr(self._inner, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        hook = _HOOKS.get(name)
        if hook is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _AfterExec(spec.loader, hook)
                return spec
        return None


def install():
    """Registers loom with Dask now for what is imported, and when imported for the rest."""
    for name, hook in _HOOKS.items():
        if name in sys.modules:
            hook()
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())


# ---- dask.array ------------------------------------------------------------------------------------
def _to_host(x):
    from ._ndarray import ndarray
    if isinstance(x, ndarray):
        return x._np()
    if isinstance(x, (list, tuple)):
        return type(x)(_to_host(v) for v in x)
    return x


def _first_device(args):
    from ._ndarray import ndarray
    for a in args:
        if isinstance(a, ndarray):
            return a._device
        if isinstance(a, (list, tuple)):
            d = _first_device(a)
            if d is not None:
                return d
    return None


def _loom_or_numpy(name):
    """loom's function `name` if the package has one, else NumPy's run on the host copies of the
    loom arrays among the arguments, the result a loom array on their device."""
    import loom
    fn = getattr(loom, name, None)
    if fn is not None:
        return fn
    np_fn = getattr(numpy, name)

    def on_host(*args, **kwargs):
        from ._common import _from_numpy
        r = np_fn(*_to_host(args), **{k: _to_host(v) for k, v in kwargs.items()})
        return _from_numpy(r, copy=True, device=_first_device(args))

    on_host.__name__ = name
    on_host.__doc__ = f"numpy.{name} on host copies of loom chunks (Dask's {name} for loom arrays)."
    return on_host


def register_dask_array():
    """Registers loom.ndarray in dask.array's dispatch tables (Dask calls it the first time it meets
    a loom array)."""
    import loom
    from dask.array import dispatch as d
    from dask.array.backends import _nannumel

    nd = loom.ndarray
    d.concatenate_lookup.register(nd, loom.concatenate)
    d.tensordot_lookup.register(nd, _loom_or_numpy("tensordot"))
    d.take_lookup.register(nd, _loom_or_numpy("take"))
    d.empty_lookup.register(nd, loom.empty)
    d.numel_lookup.register(nd, _numel_view)
    d.nannumel_lookup.register(nd, _nannumel)
    einsum = _loom_or_numpy("einsum")

    @d.einsum_lookup.register(nd)
    def _einsum(*args, **kwargs):
        kwargs.pop("casting", None)  # as for CuPy: the chunk einsum takes neither
        kwargs.pop("order", None)
        return einsum(*args, **kwargs)

    @d.percentile_lookup.register(nd)
    def _loom_percentile(a, q, method="linear"):
        # loom arrays on the chunk's device, as CuPy's registration keeps CuPy arrays: Dask's merge step
        # (merge_percentiles) then runs on loom arrays too (its np.array(..., like=) creations land in
        # loom through __array_function__), so a GPU chunk is never converted implicitly.
        n = len(a)
        if n == 0:
            return None, n
        if a.dtype.kind not in "biufc":  # as Dask's _percentile: no interpolation between non-numbers
            method = "nearest"
        return loom.percentile(a, _to_host(q), method=method), n

    @d.to_numpy_dispatch.register(nd)
    def _loom_to_numpy(data, **kwargs):
        return loom.asnumpy(data, **kwargs)

    @d.to_cupy_dispatch.register(nd)
    def _loom_to_cupy(data, **kwargs):
        import cupy
        return cupy.asarray(data, **kwargs)  # zero-copy on a GPU (__cuda_array_interface__)


def _numel_view(x, **kwargs):
    """Dask's numel (the element count of a chunk along the reduced axes, which mean, var, std and the
    moments divide by) as a broadcast view of one element on the chunk's device: no kernel (Dask's own
    array-like version fills a new array through np.full_like, and a pending broadcast of a constant is
    filled by a kernel of its own too: the fill is a map over the output shape, which the fusion pass
    does not join to the chunk's reduction kernel). Arguments as Dask's: axis, keepdims, dtype (default
    float64). On the host the element is a fresh NumPy scalar's memory (zero-copy). On a GPU it is a
    one-element device array kept per (count, dtype, device) (_DEVICE_COUNTS): copying it to the device
    in every task was a synchronous host-to-device copy, which on the default stream waits for all the
    work queued before it, so each mean / var chunk task stalled the worker until the GPU was idle and
    Dask's scheduling could not overlap the kernels. Contract: the view is read by Dask's reductions and
    never written (as NumPy's broadcast_to views are read-only); Dask's aggregation steps copy it
    (astype, concatenate, sum) before any arithmetic."""
    import math
    from . import _core
    from ._common import _from_numpy
    shape = x.shape
    keepdims = kwargs.get("keepdims", False)
    axis = kwargs.get("axis")
    dtype = numpy.dtype(kwargs.get("dtype", numpy.float64))
    if axis is None:
        count = math.prod(shape)
        if keepdims is False:
            return numpy.prod(shape, dtype=dtype)  # a NumPy scalar, as Dask returns for NumPy chunks
        new_shape = (1,) * len(shape)
    else:
        axes = [axis] if not isinstance(axis, (tuple, list)) else list(axis)
        axes = [a + len(shape) if a < 0 else a for a in axes]
        count = math.prod(shape[a] for a in axes)
        new_shape = tuple(1 if a in axes else n for a, n in enumerate(shape)) if keepdims else \
            tuple(n for a, n in enumerate(shape) if a not in axes)
    device = x._device
    if device[0] == 0:
        one = _from_numpy(numpy.array(count, dtype=dtype), copy=False)
    else:
        key = (count, dtype.str, device)
        one = _DEVICE_COUNTS.get(key)
        if one is None:
            if len(_DEVICE_COUNTS) >= _DEVICE_COUNTS_MAX:
                _DEVICE_COUNTS.clear()  # many distinct chunk shapes: start again rather than grow
            one = _DEVICE_COUNTS[key] = _from_numpy(numpy.array(count, dtype=dtype), copy=True, device=device)
    # the broadcast view made directly (every stride 0), without broadcast_to's NumPy geometry round trip
    return one._view_of_me(_core.view(one, 0, new_shape, (0,) * len(new_shape)))


_DEVICE_COUNTS: dict = {}  # (count, dtype string, device) -> a 0-d loom array on that device (_numel_view)
_DEVICE_COUNTS_MAX = 1024


class _on_device:
    """with _on_device((kind, index)): loom's current device is that one inside the block."""

    def __init__(self, device):
        from . import cuda
        kind, index = device
        self._ctx = cuda.Device(index) if kind != 0 and cuda.is_available() else None

    def __enter__(self):
        if self._ctx is not None:
            self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc) if self._ctx is not None else False


# ---- sizes and tokens ------------------------------------------------------------------------------------
def register_sizeof():
    """Registers loom.ndarray with Dask's sizeof: a chunk's size is its nbytes (as for NumPy and CuPy).
    Without it Dask saw sys.getsizeof of the Python object (a few hundred bytes for a chunk of any
    size): distributed's memory accounting, spilling (dask-cuda's device limit included) and its
    transfer-cost estimates (where a task runs, work stealing) treated loom chunks as free to hold
    and to move."""
    import loom
    from dask.sizeof import sizeof

    @sizeof.register(loom.ndarray)
    def _sizeof_loom(x):
        return int(x.nbytes)


def register_tokenize():
    """Registers loom.ndarray with Dask's normalize_token (tokenize: the names of da.from_array's
    chunks, of arguments to map_blocks, ...)."""
    import loom
    from dask.base import normalize_token
    normalize_token.register(loom.ndarray, _normalize_token)


def _normalize_token(x):
    """A loom array's token: its contents hashed as Dask hashes a NumPy array (bytes, dtype, shape), over
    the zero-copy host view or one host copy of a GPU array, and its device. Without it Dask's fallback
    pickles the array until two pickles agree: at least two full copies (two device-to-host copies on a
    GPU) and two unpicklings, ~4x NumPy's time for the same host data. Equal contents give equal tokens
    (as for NumPy); any change to the contents gives another token."""
    from dask.base import normalize_token
    return ("loom.ndarray", x._device, normalize_token(x._np()))


# ---- the end of a task: its loom results finished together ------------------------------------------
# Inside a task, loom stays lazy: the task's chain of operations (Dask's blockwise fusion puts an
# elementwise chain and a reduction's chunk step into one task) is one pending graph. A task's result is
# finished before the task ends, in ONE evaluation of every pending loom array it holds (the values of
# mean_chunk's / moment_chunk's dicts, a tuple's items), so they share one kernel. Left pending, a result
# would hold its inputs alive where Dask's memory accounting (sizeof: the result's nbytes) cannot see
# them, report its errors from whichever later task first read it, and be computed again by every
# consumer that fuses it. The hook is dask.array's graph optimization (config key "array_optimize"): the
# optimized graph's tasks are wrapped by _finished_result; set "array_optimize" to a function of your own
# to opt out. Workers need loom installed, as they do to hold loom chunks.
def _install_task_finishing():
    import dask
    if dask.config.get("array_optimize", None) is None:
        dask.config.set({"array_optimize": optimize_finishing_results})


def optimize_finishing_results(dsk, keys, **kwargs):
    """dask.array's own optimization (culling, blockwise and linear fusion), then every task wrapped so
    that the loom arrays it returns are evaluated, together, before it ends."""
    from dask.array.optimization import optimize
    dsk = optimize(dsk, keys, **kwargs)
    try:
        from dask._task_spec import Task
    except ImportError:  # a Dask older than its task spec (2024.12): tuple tasks, left as they are
        return dsk
    if not isinstance(dsk, dict):
        return dsk  # low-level fusion switched off (optimization.fuse.active): a graph left as it is
    out = {}
    for k, t in dsk.items():
        if type(t) is Task and not t.is_coro:
            producer = {"_data_producer": t.data_producer} if hasattr(t, "data_producer") else {}
            out[k] = Task(k, _finished_result, t, **producer)
        else:
            out[k] = t  # data, aliases, containers: nothing is computed there
    return out


def _finished_result(value):
    """value, its pending loom arrays (itself, or those among the items of its dicts, lists and tuples)
    evaluated in one evaluation."""
    from ._ndarray import ndarray
    pending = []
    _collect_pending(value, pending, ndarray, 0)
    if pending:
        _evaluate_together(pending)
    return value


def _collect_pending(value, found, ndarray, depth):
    if isinstance(value, ndarray):
        if value._lazy and not value._tracer:
            found.append(value)
    elif depth < 3 and isinstance(value, (list, tuple)):
        for v in value:
            _collect_pending(v, found, ndarray, depth + 1)
    elif depth < 3 and isinstance(value, dict):
        for v in value.values():
            _collect_pending(v, found, ndarray, depth + 1)


def _evaluate_together(arrays):
    """One loom.eval per device (an evaluation runs on one device)."""
    from . import _core
    by_device = {}
    for a in arrays:
        by_device.setdefault(a._device, []).append(a)
    for device, group in by_device.items():
        with _on_device(device):
            _core.eval(*group)


# ---- distributed -------------------------------------------------------------------------------------
def register_distributed():
    """Registers loom.ndarray with distributed's "dask" serializer family."""
    import loom
    from distributed.protocol.serialize import dask_serialize, dask_deserialize
    from distributed.protocol.numpy import serialize_numpy_ndarray, deserialize_numpy_ndarray
    from ._common import _from_numpy

    @dask_serialize.register(loom.ndarray)
    def _serialize(x):
        on_gpu = bool(x._on_gpu)
        a = x._np()  # evaluates a pending chunk; host memory itself (zero-copy), or a host copy of a GPU array
        header, frames = serialize_numpy_ndarray(a)
        header["loom-gpu"] = on_gpu
        return header, frames

    _register_cuda_family()

    @dask_deserialize.register(loom.ndarray)
    def _deserialize(header, frames):
        a = deserialize_numpy_ndarray(header, frames)
        if header.get("loom-gpu") and loom.cuda.is_available():
            return loom.asarray(a)  # onto this process's current device
        if a.flags.writeable and a.flags.c_contiguous and a.ctypes.data % max(a.itemsize, 1) == 0:
            return _from_numpy(a, copy=False)  # zero-copy over the received frame
        return _from_numpy(a, copy=True, device=(0, 0))


def _register_cuda_family():
    import loom
    from distributed.protocol.cuda import cuda_serialize, cuda_deserialize
    cuda_serialize.register(loom.ndarray, cuda_serialize_loom)
    cuda_deserialize.register(loom.ndarray, cuda_deserialize_loom)


def cuda_serialize_loom(x):
    """(header, [frame]): a CUDA loom array as one device frame (distributed's "cuda" family)."""
    from . import _core
    from ._common import _CODE
    if not x._on_gpu:
        raise NotImplementedError("loom: a host array travels through the 'dask' serializers, not 'cuda'")
    flags = x.flags
    if not (flags.c_contiguous or flags.f_contiguous):
        x = x.copy()
    _core.eval(x)
    header = {"shape": tuple(x.shape), "typestr": x.dtype.str, "strides": tuple(x.strides),
              "loom-dtype": int(x._dtype_code)}
    frame = _core.view(x, 0, (x.nbytes,), (1,), _CODE[numpy.dtype(numpy.uint8)])
    return header, [frame]


def cuda_deserialize_loom(header, frames):
    """A loom array over a received device frame (any object with __cuda_array_interface__: a loom
    or CuPy array, an rmm buffer, a Numba device array), zero-copy on the current device."""
    from . import _core, cuda
    from ._common import _code
    (frame,) = frames
    if not cuda.is_available():
        raise RuntimeError("loom: a device frame (distributed's 'cuda' serializers) arrived in a process "
                           "with no CUDA device loom can use")
    cai = frame.__cuda_array_interface__
    nbytes = int(numpy.prod(cai["shape"])) * numpy.dtype(cai["typestr"]).itemsize
    dev = cuda.get_device_id()
    cuda._sync_foreign_stream(cai.get("stream"), dev)
    code = header.get("loom-dtype")
    code = _code(numpy.dtype(header["typestr"])) if code is None else int(code)
    shape = tuple(int(n) for n in header["shape"])
    strides = tuple(int(s) for s in header["strides"]) if header.get("strides") is not None else None
    r = _core.from_pointer(int(cai["data"][0] or 0), shape, strides, code, 1, dev, frame)
    if r.nbytes != nbytes and r.size:
        raise ValueError(f"loom: the device frame holds {nbytes} bytes, the header describes {r.nbytes}")
    return r


# ---- the dask.array backend entry point ("array.backend": "loom") --------------------------------------
def _backend_class():
    from dask.array.backends import ArrayBackendEntrypoint

    class LoomBackendEntrypoint(ArrayBackendEntrypoint):
        """dask.config.set({"array.backend": "loom"}): Dask's creation functions make loom chunks."""

        def __init__(self):
            register_dask_array()

        @classmethod
        def to_backend_dispatch(cls):
            import loom
            return loom.asarray

        @classmethod
        def to_backend(cls, data, **kwargs):
            import loom
            if isinstance(data._meta, loom.ndarray):
                return data
            return data.map_blocks(loom.asarray, **kwargs)

        @property
        def RandomState(self):
            return _LoomRandomState

        @property
        def default_bit_generator(self):
            return numpy.random.PCG64

        @staticmethod
        def ones(*args, **kwargs):
            return _with_loom_meta("ones", *args, **kwargs)

        @staticmethod
        def zeros(*args, **kwargs):
            return _with_loom_meta("zeros", *args, **kwargs)

        @staticmethod
        def empty(*args, **kwargs):
            return _with_loom_meta("empty", *args, **kwargs)

        @staticmethod
        def full(*args, **kwargs):
            return _with_loom_meta("full", *args, **kwargs)

        @staticmethod
        def arange(*args, like=None, **kwargs):
            import dask
            import dask.array as da
            with dask.config.set({"array.backend": "numpy"}):
                return da.arange(*args, **kwargs).map_blocks(_asarray_chunk, meta=_meta())

    return LoomBackendEntrypoint


def _meta():
    import loom
    return loom.empty((0,))


def _asarray_chunk(x):
    import loom
    return loom.asarray(x)


def _with_loom_meta(name, *args, meta=None, **kwargs):
    """Dask's creation function with a loom meta: its chunks are made by loom.*_like on the workers."""
    import dask
    import dask.array as da
    import loom
    with dask.config.set({"array.backend": "numpy"}):
        return getattr(da, name)(*args, meta=loom.empty(()) if meta is None else meta, **kwargs)


class _LoomRandomState:
    """Dask's RandomState backend protocol for loom chunks: Dask makes one per chunk, on the worker, from
    the chunk's seed (an array of words) and calls one method with size=. A method loom.random.RandomState
    has draws from Loom's counter-based stream on the current device: a pending array, so the draw
    fuses into the task's kernel (no host data, no copy). Any other method draws from NumPy's RandomState
    with the same seed on the host, the result copied into a loom array."""

    def __init__(self, seed=None):
        self._seed = seed
        self._loom = self._numpy = None

    def __getattr__(self, name):
        from . import random as loom_random
        if name.startswith("_"):
            raise AttributeError(name)
        if hasattr(loom_random.RandomState, name):
            if self._loom is None:
                self._loom = loom_random.RandomState(self._seed)
            return getattr(self._loom, name)
        if self._numpy is None:
            self._numpy = numpy.random.RandomState(self._seed)
        fn = getattr(self._numpy, name)
        if not callable(fn):
            return fn

        def draw(*args, **kwargs):
            import loom
            r = fn(*args, **kwargs)
            return loom.asarray(r) if isinstance(r, numpy.ndarray) else r
        return draw


def __getattr__(name):  # the entry point's object, made only when Dask asks for it
    if name == "LoomBackendEntrypoint":
        return _backend_class()
    raise AttributeError(name)
