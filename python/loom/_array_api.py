"""_array_api.py: loom as an array API namespace (the standard, version 2024.12).

Loom itself is the namespace (`x.__array_namespace__()` is the `loom` module), as NumPy 2 is for its
arrays: the standard's names and keywords fit beside the CuPy/NumPy ones (array API keywords are
keyword-only, positional parameters keep NumPy's order), so one module serves both and no second set
of array types or wrappers is needed. This module adds what the CuPy-compatible layer lacks:
- the inspection namespace (`__array_namespace_info__`: devices = the host and each GPU, default
  dtypes, dtypes by kind, capabilities) and `isdtype`, `finfo`, `iinfo`;
- array attributes `__array_namespace__`, `mT`, `to_device`, and `device` that tells the host from
  GPU 0 when a GPU is present (on a machine without one the host is CuPy's stand-in Device(0));
- the standard's names for existing functions (acos, pow, concat, permute_dims, bitwise_invert, ...)
  and its keywords (device= on creation functions, copy= of asarray/astype/reshape, correction= of
  std/var, min=/max= of clip) as thin adapters around loom's own functions;
- the functions the layer does not have yet (on the device where loom's graph ops express them:
  vecdot, tril/triu, meshgrid, flip, take, diff, unstack, logaddexp, signbit, matrix_transpose; on a
  host copy through NumPy otherwise: tensordot, repeat, roll, tile; nextafter is the ufunc's).
Sorting, searching, sets and cumulative sums live in _sorting.py.

`export(namespace)` puts the names into loom's namespace; a name the CuPy layer already defines is
kept (its version wins) unless this module adapts it (ADAPTED: a wrapper that adds keywords and calls
the CuPy layer's function).
"""
import builtins
import inspect
import math
import operator

import numpy

from . import _core, cuda
from ._common import _cur, _norm_axis, _shape_tuple, _from_numpy, _is_bf16, _np_dtype_of, _OPS
from ._ndarray import ndarray, _host
from ._memory_ranges import may_share_memory, shares_memory  # noqa: F401 (the namespace's: _NEW lists them)

__array_api_version__ = "2024.12"
_HOST, _CUDA = 0, 1
_MAX_RANK = 16  # LOOM_MAX_RANK (include/loom/loom.h)


# ---- devices -----------------------------------------------------------------------------------------------
class HostDevice:
    """The host CPU as an array API device (loom.cpu) when GPUs are present; equal to itself only."""

    def __eq__(self, other):
        return isinstance(other, HostDevice)

    def __hash__(self):
        return hash("loom.cpu")

    def __repr__(self):
        return "loom.cpu"


cpu = HostDevice()


def _device_obj(key):
    """The device object of an array's (kind, index): a cuda.Device for GPUs and, on a machine without
    a GPU, for the host (CuPy's stand-in Device(0)); loom.cpu for the host beside GPUs."""
    if key[0] == _HOST and cuda.is_available():
        return cpu
    return cuda._device_of(key)


def _device_key(device):
    """(kind, index) of an array API device argument (a device object, "cpu", or an int GPU id)."""
    if isinstance(device, HostDevice) or (isinstance(device, str) and device.lower() == "cpu"):
        return (_HOST, 0)
    if isinstance(device, cuda.Device) or isinstance(device, (int, numpy.integer)):
        i = operator.index(device) if not isinstance(device, cuda.Device) else device.id
        if not cuda.is_available():
            if i != 0:
                raise ValueError(f"device {i}: this machine has no GPU; the only device is the host (Device(0))")
            return (_HOST, 0)
        return (_CUDA, i)
    raise ValueError(f"{device!r} is not a loom device (use x.device, loom.cpu, a loom.cuda.Device, or "
                     "one of __array_namespace_info__().devices())")


def _move(x, key):
    return x if x._device == tuple(key) else _core.to_device(x, *key)


def _on(device, fn, *args, **kw):
    """fn(*args, **kw) creating its result on `device` (None: the current one)."""
    if device is None:
        return fn(*args, **kw)
    key = _device_key(device)
    if key[0] == _CUDA:
        with cuda.Device(key[1]):
            return _move(fn(*args, **kw), key)
    return _move(fn(*args, **kw), key)


def _to_device(self, device, /, *, stream=None):
    """A copy of the array on `device` (itself when it is already there)."""
    return _move(self, _device_key(device))


# ---- inspection ----------------------------------------------------------------------------------------------
_KIND_NAMES = ("bool", "signed integer", "unsigned integer", "integral", "real floating",
               "complex floating", "numeric")
_STANDARD_DTYPES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                    "float32", "float64", "complex64", "complex128")


def _as_dtype(d):
    if isinstance(d, ndarray):
        return d.dtype
    return _np_dtype_of(d)


def isdtype(dtype, kind):
    """Whether dtype is of kind (a dtype, one of the standard's kind names, or a tuple of those)."""
    if isinstance(kind, tuple):
        return builtins.any(isdtype(dtype, k) for k in kind)
    d = _np_dtype_of(dtype)
    if not isinstance(kind, str):
        return d == numpy.dtype(kind)
    k = "f" if _is_bf16(d) else d.kind
    if kind == "bool":
        return k == "b"
    if kind == "signed integer":
        return k == "i"
    if kind == "unsigned integer":
        return k == "u"
    if kind == "integral":
        return k in "iu"
    if kind == "real floating":
        return k == "f"
    if kind == "complex floating":
        return k == "c"
    if kind == "numeric":
        return k in "iufc"
    raise ValueError(f"isdtype: unknown kind {kind!r} (one of {', '.join(_KIND_NAMES)})")


class finfo_object:
    """The standard's finfo: bits (int), eps, max, min, smallest_normal (Python floats), dtype."""

    def __init__(self, f):
        self.bits, self.dtype = int(f.bits), numpy.dtype(f.dtype)
        self.eps, self.max, self.min = float(f.eps), float(f.max), float(f.min)
        self.smallest_normal = float(f.smallest_normal)
        self.resolution, self.tiny = float(f.resolution), float(f.tiny)

    def __repr__(self):
        return f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, dtype={self.dtype})"


def finfo(type, /):
    """Machine limits of a floating dtype (or an array's); complex dtypes give their parts'."""
    d = _as_dtype(type)
    if _is_bf16(d):
        import ml_dtypes
        return finfo_object(ml_dtypes.finfo(d))
    return finfo_object(numpy.finfo(d))


def iinfo(type, /):
    """Limits of an integer dtype (or an array's): bits, max, min, dtype."""
    return numpy.iinfo(_as_dtype(type))


class _NamespaceInfo:
    """What __array_namespace_info__() returns (the standard's inspection API)."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": _MAX_RANK}

    def default_device(self):
        return _device_obj(_cur())

    def devices(self):
        if not cuda.is_available():
            return [cuda.Device(0)]  # the host (CuPy's stand-in)
        return [cpu] + [cuda.Device(i) for i in range(cuda.runtime.getDeviceCount())]

    def default_dtypes(self, *, device=None):
        if device is not None:
            _device_key(device)
        return {"real floating": numpy.dtype(numpy.float64), "complex floating": numpy.dtype(numpy.complex128),
                "integral": numpy.dtype(numpy.int64), "indexing": numpy.dtype(numpy.int64)}

    def dtypes(self, *, device=None, kind=None):
        if device is not None:
            _device_key(device)
        out = {}
        for name in _STANDARD_DTYPES:
            if kind is None or isdtype(numpy.dtype(name), kind):
                out[name] = numpy.dtype(name)
        return out


def __array_namespace_info__():
    return _NamespaceInfo()


# ---- adapters: the standard's keywords on loom's functions ---------------------------------------------------
def _signed(f, fn, extra=("device",)):
    """f named and documented as fn, its signature fn's plus keyword-only `extra` (default None)."""
    f.__name__, f.__qualname__, f.__doc__ = fn.__name__, fn.__name__, fn.__doc__
    try:
        sig = inspect.signature(fn)
        params = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD and p.name not in extra]
        var_kw = [p for p in sig.parameters.values() if p.kind == p.VAR_KEYWORD]
        params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None) for n in extra]
        f.__signature__ = sig.replace(parameters=params + var_kw)
    except (TypeError, ValueError):
        pass
    return f


def _drop_none_dtype(kw):
    if "dtype" in kw and kw["dtype"] is None:  # None: the function's own default (float64 for ones)
        del kw["dtype"]
    return kw


def _creation_with_device(fn):
    def f(*args, device=None, **kw):
        if device is None and not kw:  # the common call (zeros(100)): fn's own, no adapting
            return fn(*args)
        return _on(device, fn, *args, **_drop_none_dtype(kw))
    return _signed(f, fn)


def _like_with_device(fn):
    def f(x, /, *args, device=None, **kw):
        if device is None and isinstance(x, ndarray):
            return _move(fn(x, *args, **kw), x._device)
        return _on(device, fn, x, *args, **kw)
    return _signed(f, fn)


def _make_asarray(base):
    def asarray(obj, dtype=None, order=None, *, device=None, copy=None):
        """loom arrays as they are, other data copied onto the current device (or `device`). copy=True
        always copies; copy=False raises ValueError where a copy would be needed; None copies if needed."""
        key = None if device is None else _device_key(device)
        if isinstance(obj, ndarray):
            r = base(obj, dtype, order)  # obj itself when neither dtype nor order asks for a copy
            if key is not None:
                r = _move(r, key)
            if copy is False and r is not obj:
                raise ValueError("asarray(copy=False): a copy is needed (another dtype, order or device)")
            return obj.copy(order="K") if copy is True and r is obj else r
        if copy is False:
            return _share_host_buffer(obj, dtype, key or _cur())
        if isinstance(obj, (bool, int, float, complex)) and dtype is None:
            _check_python_scalar(obj)
        return base(obj, dtype, order) if key is None else _on(device, base, obj, dtype, order)
    asarray.__doc__ = (asarray.__doc__ or "") + "\n\n" + (base.__doc__ or "")
    return asarray


def _share_host_buffer(obj, dtype, key):
    """asarray(obj, copy=False) of data that is not a loom array: a loom array over obj's own memory (a
    NumPy array or another buffer-protocol object on the host), or ValueError saying why a copy is needed."""
    def refuse(why):
        raise ValueError(f"asarray(copy=False): a copy is needed ({why}); pass copy=None to allow one")
    if key[0] != _HOST:
        refuse("the data is in host memory and the requested device is a GPU")
    if isinstance(obj, numpy.ndarray):
        host = obj
    elif isinstance(obj, (numpy.generic, str, bytes)):  # immutable values, not buffers NumPy would share
        refuse(f"a {type(obj).__name__} is not an array")
    else:
        try:
            host = numpy.asarray(memoryview(obj))
        except TypeError:
            refuse(f"a {type(obj).__name__} is neither a loom array nor a buffer")
    if dtype is not None and _np_dtype_of(dtype) != host.dtype:
        refuse(f"the data is {host.dtype}, {_np_dtype_of(dtype)} was asked")
    if not host.flags.writeable:
        refuse("the buffer is read-only and loom arrays are writable")
    r = _from_numpy(host, copy=False)
    if r.size and not may_share_memory(r, host):  # byte-swapped or misaligned data is converted
        refuse(f"loom cannot address {host.dtype} data with strides {host.strides} in place")
    return r


def _check_python_scalar(v):
    if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**64:
        raise OverflowError(f"asarray: Python int {v} does not fit in int64 or uint64")


def _make_astype(base):
    def astype(x, dtype, /, copy=True, *, casting="unsafe", device=None):
        r = base(x, dtype, copy=copy)
        return r if device is None else _move(r, _device_key(device))
    return astype


def _make_reshape(base):
    def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
        if shape is None:
            shape = newshape
        return base(a, shape, order, copy=copy)
    return reshape


def _make_stat(base):
    def stat(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, correction=None):
        if correction is not None:
            ddof = correction
        return base(a, axis, dtype, out, ddof, keepdims)
    stat.__name__ = base.__name__
    return stat


def _make_clip(base):
    """clip as NumPy 2's np.clip (the CuPy layer's: x promoted with the bounds), plus the standard's
    min=/max= names and both bounds None. The standard leaves every case where the two differ unspecified
    (bounds of another dtype or kind than x, ints outside x's range), so one clip serves both: where the
    standard specifies the result (bounds of x's dtype, Python scalars of x's kind) NumPy's promotion
    gives x's dtype. docs/semantics.md ("One namespace")."""
    def clip(a, /, min=None, max=None, out=None, *, a_min=None, a_max=None, **kw):
        lo = a_min if min is None else min
        hi = a_max if max is None else max
        if isinstance(a, ndarray) and lo is None and hi is None:
            return a.copy() if out is None else base(a, lo, hi, out, **kw)
        return base(a, lo, hi, out, **kw)
    return clip


def _make_expand_dims(base):
    def expand_dims(a, axis=0):
        return base(a, axis)
    return expand_dims


ADAPTED = {"asarray": _make_asarray, "astype": _make_astype, "reshape": _make_reshape,
           "std": _make_stat, "var": _make_stat, "clip": _make_clip, "expand_dims": _make_expand_dims}
ADAPTED.update({n: _creation_with_device for n in ("arange", "empty", "eye", "full", "linspace", "ones", "zeros")})
ADAPTED.update({n: _like_with_device for n in ("empty_like", "full_like", "ones_like", "zeros_like")})


# ---- functions the standard names that loom's layer lacks ---------------------------------------------------
def _ns():
    import loom
    return loom


def concat(arrays, /, *, axis=0):
    xp = _ns()
    arrays = [xp.asarray(a) for a in arrays]
    if axis is None:
        return xp.concatenate([a.reshape(-1) for a in arrays], axis=0)
    return xp.concatenate(arrays, axis=axis)


def permute_dims(x, /, axes):
    return _ns().asarray(x).transpose(tuple(axes))


def matrix_transpose(x, /):
    x = _ns().asarray(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, not {x.ndim}")
    return x.swapaxes(-1, -2)


def _mT(self):
    return matrix_transpose(self)


def unstack(x, /, *, axis=0):
    x = _ns().asarray(x)
    ax = _norm_axis(axis, x.ndim)
    return tuple(x[(slice(None),) * ax + (i,)] for i in range(x.shape[ax]))


def moveaxis(x, source, destination, /):
    x = _ns().asarray(x)
    src = [_norm_axis(a, x.ndim) for a in ((source,) if numpy.ndim(source) == 0 else source)]
    dst = [_norm_axis(a, x.ndim) for a in ((destination,) if numpy.ndim(destination) == 0 else destination)]
    if len(src) != len(dst):
        raise ValueError("moveaxis: source and destination must have the same number of elements")
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x.transpose(tuple(order))


def flip(x, /, *, axis=None):
    x = _ns().asarray(x)
    axes = range(x.ndim) if axis is None else [_norm_axis(a, x.ndim) for a in
                                                ((axis,) if numpy.ndim(axis) == 0 else axis)]
    key = [slice(None)] * x.ndim
    for a in axes:
        key[a] = slice(None, None, -1)
    return x[tuple(key)]


def broadcast_arrays(*arrays):
    xp = _ns()
    arrays = [xp.asarray(a) for a in arrays]
    shape = numpy.broadcast_shapes(*[a.shape for a in arrays])
    return [xp.broadcast_to(a, shape) for a in arrays]


def meshgrid(*arrays, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError("meshgrid: indexing must be 'xy' or 'ij'")
    xp = _ns()
    arrays = [xp.asarray(a).reshape(-1) for a in arrays]
    n = len(arrays)
    shape = [a.shape[0] for a in arrays]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        s = [1] * n
        pos = i if not (indexing == "xy" and n >= 2 and i < 2) else 1 - i
        s[pos] = a.shape[0]
        out.append(xp.broadcast_to(a.reshape(tuple(s)), tuple(shape)))
    return out


def _tri_mask(x, k, lower):
    xp = _ns()
    if x.ndim < 2:
        raise ValueError("tril/triu: x must have at least 2 dimensions")
    n, m = x.shape[-2], x.shape[-1]
    rows = xp.arange(n, dtype=numpy.int64).reshape(n, 1)
    cols = xp.arange(m, dtype=numpy.int64).reshape(1, m)
    mask = (cols - rows <= k) if lower else (cols - rows >= k)
    return xp.where(_move(mask, x._device), x, xp.zeros((), dtype=x.dtype) if x.dtype != numpy.bool_ else False)


def tril(x, /, *, k=0):
    return _tri_mask(_ns().asarray(x), operator.index(k), True)


def triu(x, /, *, k=0):
    return _tri_mask(_ns().asarray(x), operator.index(k), False)


def take(x, indices, /, *, axis=None, out=None, mode=None):
    xp = _ns()
    x = xp.asarray(x)
    if axis is None:
        x, axis = x.reshape(-1), 0
    ax = _norm_axis(axis, x.ndim)
    idx = indices if isinstance(indices, ndarray) else xp.asarray(indices)
    r = x[(slice(None),) * ax + (idx,)]
    if out is not None:
        out[...] = r
        return out
    return r


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None):
    xp = _ns()
    x = xp.asarray(x)
    if x.ndim == 0:
        raise ValueError("diff: x must be at least 1-dimensional")
    ax = _norm_axis(axis, x.ndim)
    n = operator.index(n)
    if n < 0:
        raise ValueError(f"diff: n must be >= 0, not {n}")
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = xp.concatenate([xp.asarray(p) if p is x or xp.asarray(p).ndim else
                            xp.broadcast_to(xp.asarray(p), x.shape[:ax] + (1,) + x.shape[ax + 1:]) for p in parts], axis=ax)
    lead = (slice(None),) * ax
    for _ in range(n):
        hi, lo = x[lead + (slice(1, None),)], x[lead + (slice(None, -1),)]
        x = xp.not_equal(hi, lo) if x.dtype == numpy.bool_ else hi - lo
    return x


def vecdot(x1, x2, /, *, axis=-1):
    """sum(conj(x1) * x2) along axis, after broadcasting (a fused device reduction)."""
    xp = _ns()
    x1, x2 = xp.asarray(x1), xp.asarray(x2)
    shape = numpy.broadcast_shapes(x1.shape, x2.shape)
    if len(shape) == 0:
        raise ValueError("vecdot: the arrays must have at least one dimension")
    ax = _norm_axis(axis, len(shape))
    if x1.ndim and x2.ndim and x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: the sizes along axis {axis} differ ({x1.shape[axis]} and {x2.shape[axis]})")
    a = xp.conj(x1) if x1.dtype.kind == "c" else x1
    p = a * x2
    return xp.sum(p, axis=ax, dtype=p.dtype)  # the operands' dtype: no widening of small integers


def tensordot(x1, x2, /, *, axes=2):
    xp = _ns()
    x1, x2 = xp.asarray(x1), xp.asarray(x2)
    dt = numpy.result_type(x1.dtype, x2.dtype)
    return _host(lambda a, b: numpy.asarray(numpy.tensordot(a, b, axes=axes), dtype=dt), x1, x2)


def repeat(x, repeats, /, *, axis=None):
    xp = _ns()
    r = repeats.get() if isinstance(repeats, ndarray) else repeats
    return _host(lambda a: numpy.repeat(a, r, axis=axis), xp.asarray(x))


def roll(x, /, shift, *, axis=None):
    return _host(lambda a: numpy.roll(a, shift, axis=axis), _ns().asarray(x))


def tile(x, repetitions, /):
    return _host(lambda a: numpy.tile(a, repetitions), _ns().asarray(x))


def logaddexp(x1, x2, /):
    """log(exp(x1) + exp(x2)) without overflow: max + log1p(exp(-|x1 - x2|)) (device ops)."""
    xp = _ns()
    m = xp.maximum(x1, x2)
    d = xp.abs(xp.subtract(x1, x2))
    return xp.where(xp.equal(x1, x2), xp.add(m, math.log(2.0)),
                    xp.add(m, xp.log1p(xp.exp(xp.negative(d)))))


def signbit(x, /):
    """The sign bit of floats (True for -0.0 and NaNs with the bit set): copysign(1, x) < 0 on the device."""
    xp = _ns()
    x = xp.asarray(x)
    if x.dtype.kind in "iu":
        return x < 0
    if x.dtype == numpy.bool_:
        return xp.zeros(x.shape, dtype=bool)
    return xp.copysign(xp.ones((), dtype=x.dtype), x) < 0


def _weak_pair(x1, x2):
    """Two loom arrays; a Python scalar takes the other operand's dtype (the standard's scalar rule)."""
    xp = _ns()
    if isinstance(x1, ndarray) and isinstance(x2, (bool, int, float, complex)):
        return x1, xp.asarray(x2, dtype=x1.dtype)
    if isinstance(x2, ndarray) and isinstance(x1, (bool, int, float, complex)):
        return xp.asarray(x1, dtype=x2.dtype), x2
    return xp.asarray(x1), xp.asarray(x2)


def nextafter(x1, x2, /):
    """The next float after x1 towards x2: the ufunc loom.nextafter of the standard's scalar pair."""
    return _ns().nextafter(*_weak_pair(x1, x2))


_ALIASES = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
            "atanh": "arctanh", "atan2": "arctan2", "bitwise_left_shift": "left_shift",
            "bitwise_right_shift": "right_shift", "bitwise_invert": "invert", "pow": "power"}

_NEW = ["concat", "permute_dims", "matrix_transpose", "unstack", "moveaxis", "flip", "broadcast_arrays", "meshgrid",
        "tril", "triu", "take", "diff", "vecdot", "tensordot", "repeat", "roll", "tile",
        "logaddexp", "signbit", "nextafter", "may_share_memory", "shares_memory", "isdtype", "finfo", "iinfo", "__array_namespace_info__", "cpu"]


# The linalg extension's functions that are main-namespace functions or views of them (the standard's
# last-two-axes convention); the decompositions (solve, svd, ...) are linalg.py's.
def _linalg_diagonal(x, /, *, offset=0):
    return _ns().diagonal(x, offset, axis1=-2, axis2=-1)


def _linalg_trace(x, /, *, offset=0, dtype=None):
    return _ns().sum(_linalg_diagonal(x, offset=offset), axis=-1, dtype=dtype)


def _linalg_outer(x1, x2, /):
    xp = _ns()
    x1, x2 = xp.asarray(x1), xp.asarray(x2)
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError("linalg.outer: x1 and x2 must be 1-dimensional")
    return x1.reshape(-1, 1) * x2.reshape(1, -1)


def _linalg_vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    xp = _ns()
    x = xp.asarray(x)
    if axis is None:
        r = xp.linalg.norm(x.reshape(-1), ord=ord)
        return r.reshape((1,) * x.ndim) if keepdims else r
    return xp.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


def _linalg_matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return _ns().linalg.norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


_LINALG = {"matmul": lambda: _ns().matmul, "matrix_transpose": lambda: matrix_transpose,
           "tensordot": lambda: _ns().tensordot, "vecdot": lambda: _ns().vecdot,
           "diagonal": lambda: _linalg_diagonal, "trace": lambda: _linalg_trace, "outer": lambda: _linalg_outer,
           "vector_norm": lambda: _linalg_vector_norm, "matrix_norm": lambda: _linalg_matrix_norm}


def _array_namespace(self, /, *, api_version=None):
    if api_version is not None and api_version not in ("2021.12", "2022.12", "2023.12", "2024.12"):
        raise ValueError(f"loom implements the array API 2024.12 (asked for {api_version!r})")
    return _ns()


def export(ns):
    """Puts the standard's names into loom's namespace dict `ns` (see the module docstring)."""
    for name, make in ADAPTED.items():
        if name in ns:
            base = ns[name]
            ns[name] = make(base)
            ns[name].__doc__ = (base.__doc__ or f"numpy.{name}'s behaviour.") + \
                "\n\nArray API keywords (device=, copy=, correction=, min=/max=) as the 2024.12 standard defines them."
    for name, target in _ALIASES.items():
        if name not in ns and target in ns:
            ns[name] = ns[target]
    from . import _sorting
    for name in _sorting.__all__:
        if name in _sorting.OWNED or name not in ns:
            ns[name] = getattr(_sorting, name)
    g = globals()
    for name in _NEW:
        if name not in ns or name in ("__array_namespace_info__", "isdtype", "finfo", "iinfo", "cpu"):
            ns[name] = g[name]
    for name, get in _LINALG.items():
        if not hasattr(ns["linalg"], name):
            setattr(ns["linalg"], name, get())
    for name in list(_NEW) + list(_sorting.__all__):
        f = ns.get(name)
        if callable(f) and not isinstance(f, type) and not getattr(f, "__doc__", None):
            try:
                f.__doc__ = f"{name}: as the array API standard 2024.12 defines it (python/loom/_array_api.py)."
            except (AttributeError, TypeError):
                pass
    ns["bool"] = numpy.bool_
    ns["__array_api_version__"] = __array_api_version__
    ndarray.__array_namespace__ = _array_namespace
    ndarray.mT = property(_mT)
    ndarray.to_device = _to_device
    ndarray.device = property(lambda self: _device_obj(self._device))
