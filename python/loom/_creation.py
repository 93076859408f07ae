"""_creation.py: making loom arrays: from Python and NumPy data, from GPU objects (the CUDA Array
Interface, DLPack), filled (empty, zeros, ones, full, *_like), ranges (arange, linspace) and eye.
"""
import builtins
import math
import operator

import numpy

from . import _core
from ._common import (_trace_like, _np_dtype_of, _check_scalar_store, _code, _shape_tuple, _cur, _from_numpy, _order_name, _layout_perm,
                      _CODE, _BF16_CODE, _plain_shape,
                      _inverse_perm, _contiguous)
from ._ndarray import ndarray, _operand
from . import _temporal


# Python values whose NumPy conversion is always new memory (never a view of something else's buffer)
_FRESH_TYPES = (list, tuple, int, float, complex, bool)


def _adopt(r, device=None):
    """A loom array of r, a NumPy array that NumPy has just made and nothing else refers to, on device
    ((kind, index); None: the current one). On the host it is wrapped, zero-copy (loom's copy of host data
    is a graph evaluation, ~5 us for a few elements; the wrap ~0.2); elsewhere it is copied there."""
    kind = (_cur() if device is None else device)[0]
    if kind == 0 and type(r) is numpy.ndarray:
        code = _CODE.get(r.dtype)
        if code is not None and code != _BF16_CODE:
            return _core.from_buffer(r, False)
    return _from_numpy(r, copy=True, device=device)


def _host_np(a):
    """a._np() of a loom array in host memory, shorter: the NumPy view of its memory (a pending array is
    evaluated first)."""
    if a._dtype_code == _BF16_CODE:  # no buffer format: _np's bits-as-bfloat16 view
        return a._np()
    return numpy.asarray(_core.exportable(a))  # NumPy takes its buffer (~0.1 us less than a memoryview's)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, *, blocking=True):
    """A loom array from obj (a loom array, a NumPy array or scalar, nested lists, a CUDA Array Interface
    or DLPack object, an object with CuPy's __cupy_get_ndarray__) on the current device, laid out as order
    asks (NumPy's C, F, A, K). blocking= is CuPy's: False allows an asynchronous copy from host memory;
    loom's copies from the host are complete when array() returns, which satisfies both."""
    o = _order_name(order)
    obj = _cupy_like(obj)
    if isinstance(dtype, str):
        dtype = _np_dtype_of(dtype)  # "bfloat16" before ml_dtypes is imported (_common._bf16)
    r = None
    if type(obj) in _FRESH_TYPES:  # Python data: none of the array protocols below apply
        pass
    elif isinstance(obj, ndarray):
        # copy=None / False copy only when asked: 'A' then asks no layout (NumPy), 'C' / 'F' their own
        r = obj.astype(obj.dtype if dtype is None else dtype, order="K" if o == "A" and not copy else o,
                       copy=bool(copy))
        if copy is False and r is not obj:
            raise ValueError("Unable to avoid copy while creating an array as requested: the dtype or order "
                             "asked needs a copy; pass copy=None (or use loom.asarray) to allow one")
    elif _has_cai(obj):
        r = _from_cai(obj)
        if dtype is not None or copy:
            r = r.astype(r.dtype if dtype is None else dtype, order=o, copy=True)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, numpy.ndarray):
        r = from_dlpack(obj)
        if dtype is not None or copy:
            r = r.astype(r.dtype if dtype is None else dtype, order=o, copy=True)
    if r is None:  # Python data, NumPy data or another object NumPy converts
        try:
            a = numpy.asarray(obj, dtype=dtype, order=o)
        except TypeError:
            # loom arrays inside a list (0-d results of reductions, say), which refuse NumPy's implicit
            # conversion on a GPU: explicit host copies, as cupy.array takes its own arrays there
            a = numpy.asarray(_host_values(obj), dtype=dtype, order=o)
        if a.dtype == object and isinstance(obj, (list, tuple)):  # GPU array objects nested in lists
            a = numpy.asarray(_host_values(obj), dtype=dtype, order=o)
        if a.dtype == object:
            raise ValueError("Unsupported dtype object: loom arrays hold numbers (bool, int, float, complex), "
                             "not Python objects")
        if o == "F" and a.ndim > 1 and a.strides != _contiguous_strides(a.shape, a.itemsize, "F"):
            # NumPy's array(order='F') has F strides also where the data is C- and F-contiguous at once
            # (axes of size 1), which asarray leaves as they are: the reversed axes copied in C order
            r = _from_numpy(numpy.ascontiguousarray(a.T), copy=True).T
            r._base = None  # its own copy
        elif type(obj) in _FRESH_TYPES and a.base is None:  # new memory: no copy needed
            r = _adopt(a)
        else:
            r = _from_numpy(a, copy=True)
    if ndmin > r.ndim:
        r = r.reshape((1,) * (ndmin - r.ndim) + r.shape)
    return r


def _contiguous_strides(shape, itemsize, order):
    """The strides of a new `order` ('C' or 'F') array of shape, NumPy's (a size-1 axis too)."""
    strides, step = [0] * len(shape), itemsize
    for ax in (range(len(shape) - 1, -1, -1) if order == "C" else range(len(shape))):
        strides[ax] = step
        step *= builtins.max(shape[ax], 1)
    return tuple(strides)


def _check_new_strides(shape, dtype, strides):
    """ndarray(shape, dtype, strides=...) without memptr allocates what a contiguous array of that shape
    needs, as CuPy does: the strides must keep every element inside those bytes from offset 0 (so none is
    negative, which would need an offset), else ValueError (NumPy's ndarray refuses such strides too)."""
    import operator
    shape, itemsize = _shape_tuple(shape), _np_dtype_of(dtype).itemsize
    strides = tuple(operator.index(x) for x in strides)
    if len(strides) != len(shape):
        raise ValueError(f"ndarray() with strides {strides}: shape {shape} has {len(shape)} dimensions")
    if any(n == 0 for n in shape):
        return
    if any(s < 0 for n, s in zip(shape, strides) if n > 1):
        raise ValueError(f"ndarray() with strides {strides}: a negative stride needs an offset into memory; "
                         "pass memptr= (a MemoryPointer placed where the array starts)")
    size = itemsize
    for n in shape:
        size *= n
    reach = itemsize + sum((n - 1) * s for n, s in zip(shape, strides))
    if reach > size:
        raise ValueError(f"ndarray() with strides {strides} reaches byte {reach} of an array of shape {shape}, "
                         f"beyond the {size} bytes allocated for it; pass memptr= to place it in a larger block")


def _cupy_like(obj):
    """The array behind an object with CuPy's __cupy_get_ndarray__ protocol (a wrapper of a GPU array);
    obj itself otherwise."""
    get = getattr(type(obj), "__cupy_get_ndarray__", None)
    return obj.__cupy_get_ndarray__() if get is not None and not isinstance(obj, ndarray) else obj


def _host_values(obj):
    """obj with the loom arrays in it (nested in lists and tuples; also GPU array objects: CUDA Array
    Interface, __cupy_get_ndarray__) as NumPy arrays."""
    obj = _cupy_like(obj)
    if not isinstance(obj, ndarray) and _has_cai(obj):
        obj = _from_cai(obj)
    if isinstance(obj, ndarray):
        return obj.get()
    if isinstance(obj, (list, tuple)):
        return [_host_values(v) for v in obj]
    return obj


def asarray(a, dtype=None, order=None, *, blocking=True):
    """Loom arrays as they are (copied when dtype or order asks); objects with __cuda_array_interface__
    or a CUDA __dlpack__ (CuPy, PyTorch) zero-copy, and CuPy's __cupy_get_ndarray__ wrappers; anything else
    (NumPy, lists) copied onto the current device, keeping its layout (order=None or 'K'), or in the order
    asked. blocking= as array()'s."""
    if type(a) is ndarray and dtype is None and order is None:  # the common call, first
        return a
    if type(a) is numpy.ndarray and dtype is None and order is None and a.dtype.kind != "O":  # NumPy data, its layout
        return _from_numpy(a)
    if type(a) is list and dtype is None and order is None:  # a list of Python numbers: NumPy's new array
        try:                                                # adopted, what array() ends with for it
            h = numpy.asarray(a)
        except Exception:  # noqa: BLE001 (loom arrays in it, a ragged list: array() decides, with NumPy's error)
            h = None
        if h is not None and h.dtype in _CODE and h.base is None:
            return _adopt(h)
    o = _order_name(order)
    if type(a) in _FRESH_TYPES:  # Python data (asarray([1.0, 2.0])): no array protocol to ask
        return array(a, dtype, copy=True, order=o)
    a = _cupy_like(a)
    if isinstance(a, ndarray):
        r = a
    elif _has_cai(a):
        r = _from_cai(a)
    elif hasattr(a, "__dlpack__") and hasattr(a, "__dlpack_device__") and not isinstance(a, numpy.ndarray) \
            and a.__dlpack_device__()[0] == 2:
        r = from_dlpack(a)
    else:
        return array(a, dtype, copy=True, order=o)
    if (dtype is None or _np_dtype_of(dtype) == r.dtype) and (o in "AK" or _manipulation._satisfies(r, o)):
        return r  # as NumPy: only 'C' and 'F' ask for a copy of an array laid out otherwise
    return r.astype(r.dtype if dtype is None else dtype, order=o)


asanyarray = asarray


def ascontiguousarray(a, dtype=None):
    """a as a C-contiguous array of at least one dimension (a itself when it already is one)."""
    r = asarray(a, dtype, order="C")
    return r.reshape(1) if r.ndim == 0 else r


def asfortranarray(a, dtype=None):
    """a as a Fortran-contiguous (F-contiguous) array of at least one dimension (a itself when it
    already is one)."""
    r = asarray(a, dtype, order="F")
    return r.reshape(1) if r.ndim == 0 else r


def _has_cai(obj):
    if isinstance(obj, (ndarray, numpy.ndarray)):
        return False
    try:
        return hasattr(obj, "__cuda_array_interface__")
    except Exception:
        return False


def _from_cai(obj):
    """A zero-copy loom array over an object's __cuda_array_interface__ (v2 or v3) on the current
    device; the producer's stream is synchronized first."""
    from . import cuda
    cai = obj.__cuda_array_interface__
    if cai.get("mask") is not None:  # CuPy's error, before any device question
        raise ValueError("__cuda_array_interface__: loom does not support masked arrays (the 'mask' entry)")
    if not cuda._available():
        raise ValueError("__cuda_array_interface__: this machine has no CUDA device loom can use")
    dt = numpy.dtype(cai["typestr"])
    if dt.byteorder not in "=|" and dt.newbyteorder("=") != dt:
        raise TypeError(f"__cuda_array_interface__: byte order of {cai['typestr']} is not native")
    time = dt.kind in "Mm"  # datetime64 / timedelta64 ('<M8[s]' ...): int64 containers (loom/_temporal.py)
    code = _code(numpy.int64 if time else dt.newbyteorder("="))
    shape = tuple(int(n) for n in cai["shape"])
    strides = cai.get("strides")
    ptr = int(cai["data"][0] or 0)
    dev = cuda.get_device_id()
    cuda._sync_foreign_stream(cai.get("stream"), dev)
    r = _core.from_pointer(ptr, shape, None if strides is None else tuple(int(s) for s in strides), code,
                           1, dev, obj)
    return _temporal.wrap(r, dt.newbyteorder("=")) if time else r


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    """a as a NumPy array: loom arrays and GPU array objects (CUDA Array Interface, __cupy_get_ndarray__)
    copied to the host, anything else through numpy.asarray."""
    a = _cupy_like(a)
    if not isinstance(a, ndarray) and _has_cai(a):
        a = _from_cai(a)
    if isinstance(a, ndarray):
        return a.get(out=out, order=order)
    r = numpy.asarray(a, order=order)
    if out is not None:
        out[...] = r
        return out
    return r


def _creation_dtype(dtype):
    """The NumPy dtype of a new loom array (None: float64); loom arrays are in native byte order."""
    d = numpy.dtype(float if dtype is None else dtype)
    if d.byteorder not in "=|":
        raise ValueError(f"Unsupported dtype {d}: loom arrays hold values in the native byte-order")
    _code(d)
    return d


def _empty_in_order(shape, dtype, zero, device, perm=None):
    """A new array (zero-filled with zero) of that shape and dtype on device ((kind, index); None: the
    current device) whose axes lie in memory in the order perm (outermost first; None: C order): a
    C-contiguous allocation of the permuted shape, viewed through the inverse permutation. (An empty
    array has zero strides, as NumPy's: _core gives every new empty array those.)"""
    shape = _shape_tuple(shape)
    if dtype is not None and _np_dtype_of(dtype).kind in "Mm":  # int64 containers (loom/_temporal.py)
        d = _temporal.check_time_dtype(_np_dtype_of(dtype))
        return _temporal.wrap(_empty_in_order(shape, numpy.int64, zero, device, perm), d)
    d = _creation_dtype(dtype)
    n = len(shape)
    perm = tuple(range(n)) if perm is None else tuple(perm)
    code = _code(d)
    try:
        _NEW_CODES[dtype] = code  # for _new_c_order
    except TypeError:  # an unhashable dtype argument
        pass
    a = _core.empty(tuple(shape[p] for p in perm), code, zero, *(_cur() if device is None else device))
    if perm != tuple(range(n)):
        a = a.transpose(_inverse_perm(perm))
        a._base = None  # the allocation is this array's alone: it owns its memory (flags.owndata, .base)
    return a


def _cf_perm(ndim, order):
    """The memory order of a new array for order 'C' or 'F' (NumPy's creation functions take no other)."""
    if order is None:  # NumPy reads None as 'C' here
        order = "C"
    if not (isinstance(order, str) and order.upper() in ("C", "F")):
        raise ValueError("only 'C' or 'F' order is permitted")
    return tuple(range(ndim)) if order.upper() == "C" else tuple(reversed(range(ndim)))


_NEW_CODES: dict = {}  # a dtype argument _empty_in_order took before -> its code (plain dtypes: no datetimes)


def _new_c_order(shape, dtype, zero):
    """empty / zeros in C order of a shape of Python ints and a dtype argument seen before, straight to
    _core.empty (the general path's ~20 Python calls cost more than the allocation); None otherwise."""
    try:
        code = _NEW_CODES[dtype]
    except (KeyError, TypeError):  # TypeError: an unhashable dtype argument (a list of fields)
        return None
    shape = _plain_shape(shape)
    if shape is None:
        return None
    return _core.empty(shape, code, zero, *_cur())


def empty(shape, dtype=float, order="C"):
    if order == "C":
        a = _new_c_order(shape, dtype, False)
        if a is not None:
            return a
    shape = _shape_tuple(shape)
    return _empty_in_order(shape, dtype, False, None, _cf_perm(len(shape), order))


def zeros(shape, dtype=float, order="C"):
    if order == "C":
        a = _new_c_order(shape, dtype, True)
        if a is not None:
            return a
    shape = _shape_tuple(shape)
    return _empty_in_order(shape, dtype, True, None, _cf_perm(len(shape), order))


def full(shape, fill_value, dtype=None, order="C"):
    if dtype is None:
        dtype = numpy.asarray(fill_value.get() if isinstance(fill_value, ndarray) else fill_value).dtype
    a = _new_c_order(shape, dtype, False) if order == "C" else None
    if a is None:
        shape = _shape_tuple(shape)
        a = _empty_in_order(shape, dtype, False, None, _cf_perm(len(shape), order))
    if isinstance(a, _temporal._TimeArray):  # the value converted to the array's unit, as NumPy
        a[...] = fill_value
        return a
    dt = a.dtype
    kind = dt.kind
    _check_scalar_store(fill_value, dt, full=True)
    if type(fill_value) is int and kind == "b" and not -2**63 <= fill_value < 2**63:
        # NumPy's full() converts a Python int for bool through a C long (setitem and fill do not)
        raise OverflowError("Python int too large to convert to C long")
    if type(fill_value) is int and kind in "fc" and not -2**63 <= fill_value < 2**64:
        fill_value = float(fill_value)  # NumPy converts a Python int to the float dtype (2**70 into float64)
    _core.assign(a, _operand(fill_value))
    return a


def ones(shape, dtype=float, order="C"):
    return full(shape, 1, float if dtype is None else dtype, order)


def _empty_like(a, dtype, order, subok, shape, zero):
    """A new array like a (a loom or NumPy array): its dtype and shape unless given, and its layout
    for order 'K' (the same order of strides) or 'A' (F when a is F- and not C-contiguous)."""
    if subok is not None:
        raise TypeError("subok is not supported: loom arrays have no subclasses")
    if not isinstance(a, (ndarray, numpy.ndarray)):
        a = numpy.asarray(a)
    shape = a.shape if shape is None else _shape_tuple(shape)
    o = _order_name(order)
    if len(shape) != a.ndim:
        o = "F" if o == "F" or (o == "A" and _contiguous(a.shape, a.strides, a.itemsize, "F")
                                and not _contiguous(a.shape, a.strides, a.itemsize, "C")) else "C"
    perm = _layout_perm(a.shape, a.strides, a.itemsize, o) if len(shape) == a.ndim else \
        _cf_perm(len(shape), o)
    return _empty_in_order(shape, a.dtype if dtype is None else dtype, zero, None, perm)


def empty_like(a, dtype=None, order="K", subok=None, shape=None):
    return _empty_like(a, dtype, order, subok, shape, False)


def zeros_like(a, dtype=None, order="K", subok=None, shape=None):
    return _empty_like(a, dtype, order, subok, shape, True)


def ones_like(a, dtype=None, order="K", subok=None, shape=None):
    return full_like(a, 1, dtype, order, subok, shape)


def full_like(a, fill_value, dtype=None, order="K", subok=None, shape=None):
    r = _empty_like(a, dtype, order, subok, shape, False)
    _core.assign(r, _operand(fill_value))
    return r


def arange(start, stop=None, step=1, dtype=None):
    if stop is None and dtype is None and type(start) is int and type(step) is int and step == 1 and \
            0 < start < 2**63:  # arange(n): the iota that _index_arange makes of it, without its analysis
        return _core.iota((start,), _trace_like())
    np_dtype = None if dtype is None else _np_dtype_of(dtype)
    lazy = _index_arange(start, stop, step, np_dtype)
    if lazy is None:
        lazy = _float_arange(start, stop, step, np_dtype)
    if lazy is not None:
        return lazy
    return _adopt(numpy.arange(start, stop, step, dtype=np_dtype))


def _float_arange(start, stop, step, np_dtype):
    """arange with a Python float among start, stop, step, or a float dtype, computed from the point's index
    as NumPy fills it: values[0] = start and values[1] = start + step in the dtype, then start + i * delta
    with delta = values[1] - values[0], in the dtype (float32 / float64); the length ceil((stop - start) /
    step) in float64. None where NumPy's own path is needed (other types, fewer than 3 values, non-finite)."""
    if stop is None:
        start, stop = 0, start
    if not all(type(v) in (int, float) for v in (start, stop, step)):
        return None
    try:
        dt = numpy.arange(start, start + step, step, dtype=np_dtype).dtype if step else None
    except (TypeError, ValueError, OverflowError):
        return None
    if dt is None or dt.kind != "f" or dt.itemsize not in (4, 8):
        return None
    with numpy.errstate(all="ignore"):
        span = (float(stop) - float(start)) / float(step)
        if not math.isfinite(span) or span > 2**62:
            return None
        n = math.ceil(span)
        if n < 3:
            return None
        b0, b1 = dt.type(start), dt.type(float(start) + float(step))
        delta = b1 - b0
        if not (numpy.isfinite(b0) and numpy.isfinite(b1) and numpy.isfinite(delta * dt.type(n))):
            return None
    i = _core.iota((n,), _trace_like())
    y = _core.binary(_core.ops["add"], _operand(b0), _core.binary(_core.ops["mul"], _core.cast(i, _code(dt)),
                                                                   _operand(delta)))
    from ._indexing import where
    y = where(_core.binary(_core.ops["eq"], i, 1), _operand(b1), y)  # values[1] is start + step itself
    return where(_core.binary(_core.ops["eq"], i, 0), _operand(b0), y)


_INT = numpy.dtype(int)  # NumPy's dtype of Python ints (int64; C long before NumPy 2)
_INT_LIMITS: dict = {}  # integer dtype -> (min, max): numpy.iinfo costs ~1 us a call


def _int_limits(dt):
    lim = _INT_LIMITS.get(dt)
    if lim is None:
        info = numpy.iinfo(dt)
        lim = _INT_LIMITS[dt] = (int(info.min), int(info.max))
    return lim


def _index_arange(start, stop, step, np_dtype):
    """arange of integer start, stop and step as the index expression start + step * i (i an iota: no
    memory; the kernels that read it compute it from the point's index, where a stored arange would be
    copied to the device and loaded by every reader, e.g. one-hot masks `labels[:, None] == arange(C)`).
    Taken where every value is exact in the result dtype (integers in range; floats up to 2^(mantissa+1));
    None otherwise (NumPy computes it: float steps, empty results, values out of range)."""
    if stop is None:
        start, stop = 0, start
    if np_dtype is None and type(start) is int and type(stop) is int and type(step) is int:
        dt = _INT  # NumPy's for Python ints that fit it (checked below); the common call, without a probe
    elif all(isinstance(v, (int, numpy.integer)) and not isinstance(v, bool) for v in (start, stop, step)):
        dt = None
        start, stop, step = int(start), int(stop), int(step)
    else:
        return None
    if step == 0:
        return None
    n = builtins.max(0, -((start - stop) // step))  # len(range(...)), which overflows past 2**63
    last = start + (n - 1) * step
    if n == 0 or min(start, stop, step, last) < -2**63 or max(start, stop, step, last) >= 2**63:
        return None
    lo, hi = (start, last) if step > 0 else (last, start)
    try:
        if dt is None:
            dt = numpy.arange(start, start + step, step, dtype=np_dtype).dtype  # NumPy's dtype for these arguments
        if dt.kind in "iu":
            lim = _int_limits(dt)
            if lo < lim[0] or hi > lim[1]:
                return None
        elif dt.kind == "f" and dt.itemsize in (2, 4, 8):
            exact = 2 ** (numpy.finfo(dt).nmant + 1)
            if -lo > exact or hi > exact:
                return None
        else:
            return None
    except (TypeError, ValueError, OverflowError):  # NumPy's own error comes from its path below
        return None
    v = _core.iota((n,), _trace_like())
    if step != 1:
        v = _core.binary(_core.ops["mul"], v, step)
    if start != 0:
        v = _core.binary(_core.ops["add"], v, start)
    return v if dt is _INT or dt == numpy.int64 else _core.cast(v, _code(dt))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """numpy.linspace. Real scalar endpoints: computed where the array lives, as NumPy does it (start +
    i * step in the endpoints' float dtype, the last point stop, floored for an integer dtype) from the
    point's index: no host array, no copy to the device. Array or complex endpoints: NumPy computes it on
    the host and the result is copied."""
    lazy = _index_linspace(start, stop, num, endpoint, dtype)
    if lazy is not None:
        return (lazy[0], lazy[1]) if retstep else lazy[0]
    start, stop = (v.get() if isinstance(v, ndarray) else v for v in (start, stop))
    r = numpy.linspace(start, stop, num, endpoint, retstep, None if dtype is None else _np_dtype_of(dtype), axis)
    if retstep:
        return _adopt(r[0]), r[1]
    return _adopt(r)


def _real_scalar(v):
    return isinstance(v, (int, float, numpy.integer, numpy.floating)) and not isinstance(v, bool)


def _index_linspace(start, stop, num, endpoint, dtype):
    """(the lazy linspace, its step) for real scalar endpoints and num >= 2, else None (NumPy's path)."""
    if not (_real_scalar(start) and _real_scalar(stop)) or isinstance(num, bool):
        return None
    try:
        num = operator.index(num)
    except TypeError:
        return None
    div = num - 1 if endpoint else num
    if num < 2 or div < 1:
        return None
    dt = numpy.result_type(start, stop, float(num))  # NumPy's working dtype (float32 for float32 scalars)
    out = dt if dtype is None else _np_dtype_of(dtype)
    if dt.kind != "f" or out.kind not in "iuf" or dt.itemsize not in (4, 8):
        return None
    if out.kind in "iu":  # NumPy's float-to-integer casts of values out of range are not Loom's (saturating)
        info = numpy.iinfo(out)
        if not (info.min <= min(start, stop) and max(start, stop) < info.max):
            return None
    with numpy.errstate(all="ignore"):
        s0, s1 = dt.type(start), dt.type(stop)
        delta = s1 - s0
        step = delta / dt.type(div)
    if not numpy.isfinite(step) or step == 0:  # NumPy then divides by div and multiplies by delta
        return None
    y = _core.cast(_core.iota((num,), _trace_like()), _code(dt))
    y = _core.binary(_core.ops["mul"], y, _operand(step))
    y = _core.binary(_core.ops["add"], y, _operand(s0))
    if endpoint:
        from ._indexing import where
        last = _core.binary(_core.ops["eq"], _core.iota((num,), _trace_like()), num - 1)
        y = where(last, _operand(s1), y)
    if out.kind in "iu":
        y = _core.unary(_core.ops["floor"], y)
    if out != dt:
        y = _core.cast(y, _code(out))
    return y, (float(step) if dt == numpy.float64 else step)


def eye(N, M=None, k=0, dtype=float, order="C"):
    """numpy.eye: ones on diagonal k, computed from each point's row and column (no host array, no copy)."""
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    k = operator.index(k)
    if n < 0 or m < 0:
        raise ValueError("negative dimensions are not allowed")
    if order not in ("C", "F"):
        raise ValueError("order must be one of 'C' or 'F'")
    dt = numpy.dtype(float) if dtype is None else _np_dtype_of(dtype)
    if n == 0 or m == 0 or dt.kind not in "biufc":
        return _from_numpy(numpy.eye(n, m, k, dt, order), copy=True)
    rows = _core.iota((n, 1), _trace_like())
    cols = _core.iota((1, m), _trace_like())
    on = _core.binary(_core.ops["eq"], _core.binary(_core.ops["sub"], cols, rows), k)
    r = _core.cast(on, _code(dt))
    if order == "F":
        r = asfortranarray(r)
    return r


def identity(n, dtype=float):
    return eye(n, dtype=dtype)


def from_dlpack(x, *, device=None, copy=None):
    if isinstance(x, ndarray):
        return x
    if not hasattr(x, "__dlpack__"):
        raise TypeError(f"from_dlpack: {type(x).__name__} has no __dlpack__ method")
    dev = x.__dlpack_device__() if hasattr(x, "__dlpack_device__") else (1, 0)
    if dev[0] not in (1, 2, 10):
        raise BufferError(f"from_dlpack: device type {dev[0]} is neither the host (1), CUDA (2) nor ROCm (10)")
    if dev[0] in (2, 10):
        from . import cuda
        want = cuda._CUDA if dev[0] == 2 else cuda._HIP
        if not cuda._available() or cuda._gpu_kind() != want:
            raise BufferError(f"from_dlpack: a {'CUDA' if dev[0] == 2 else 'ROCm'} tensor, but loom has no "
                              f"{'CUDA device' if dev[0] == 2 else 'AMD GPU'} to use here")
        # The producer orders its work before the default stream (CUDA: the legacy default stream, 1;
        # ROCm: 0, the array API's number for it there); loom then waits for that stream on the host, so
        # the data is ready whichever stream loom runs on.
        s = 1 if dev[0] == 2 else 0
        cap = x.__dlpack__(stream=s)
        cuda._sync_foreign_stream(s, dev[1])
        return _core.from_dlpack_capsule(cap)
    try:
        cap = x.__dlpack__(stream=None)
    except TypeError:
        cap = x.__dlpack__()
    return _core.from_dlpack_capsule(cap)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]


from . import _manipulation  # noqa: E402 (it imports this module)
