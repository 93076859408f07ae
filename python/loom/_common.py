"""_common.py: what every part of the array layer shares: dtype codes, shape and axis arguments, the
current device, and NumPy data entering loom. Nothing here depends on loom.ndarray.
"""
import builtins
import operator
import sys
import threading
from typing import Any

import numpy

from . import _core

try:
    from numpy.exceptions import AxisError
except ImportError:  # NumPy < 1.25
    AxisError = numpy.AxisError

# bfloat16 is ml_dtypes' NumPy dtype (the one JAX and TensorFlow use). Importing ml_dtypes costs ~1.1 s
# (0.7, with NumPy 2.4: it registers casts and ufunc loops for all its types), most of `import loom`, so
# it is imported when bfloat16 is first needed (_bf16): a "bfloat16" dtype name (_np_dtype_of, _code),
# loom.bfloat16, or a bfloat16 array read back. A bfloat16 dtype object can only exist once ml_dtypes is
# imported, so _is_bf16 loads it only then; when the program imported it before loom, it is loaded now.
_ml_dtypes = None
_BF16 = None  # numpy.dtype(ml_dtypes.bfloat16) once _bf16() has run; use _is_bf16 / _bf16(), not this name


def _bf16():
    """ml_dtypes' bfloat16 dtype, importing ml_dtypes on first use (TypeError when it is not installed)."""
    global _ml_dtypes, _BF16
    if _BF16 is None:
        try:
            import ml_dtypes
        except ImportError:  # pragma: no cover (a dependency of the package)
            raise TypeError("loom: bfloat16 needs the ml_dtypes package (pip install ml_dtypes)") from None
        _ml_dtypes, _BF16 = ml_dtypes, numpy.dtype(ml_dtypes.bfloat16)
        _DTYPES[_BF16_CODE] = _BF16
        _CODE[_BF16] = _BF16_CODE
    return _BF16


def _dtype_at(code):
    """The NumPy dtype of a _core dtype code (bfloat16's imports ml_dtypes on first use)."""
    return _DTYPES[code] or _bf16()


def _is_bf16(d):
    """Whether the NumPy dtype d is bfloat16 (ml_dtypes' types are kind 'V'; nothing is imported for
    the others)."""
    return d.kind == "V" and "ml_dtypes" in sys.modules and d == _bf16()


def _np_dtype_of(v):
    """numpy.dtype(v), also for the name "bfloat16" before ml_dtypes is imported."""
    if isinstance(v, str) and v == "bfloat16":
        return _bf16()
    return numpy.dtype(v)


_BF16_CODE = _core.dtype_names.index("bfloat16")
_DTYPES = [None if n == "bfloat16" else numpy.dtype(n) for n in _core.dtype_names]  # by _core code
_CODE = {d: i for i, d in enumerate(_DTYPES) if d is not None}
_COMPLEX_CODES = frozenset(i for i, d in enumerate(_DTYPES) if d is not None and d.kind == "c")
_INEXACT_CODES = frozenset(i for i, d in enumerate(_DTYPES) if d is not None and d.kind in "fc")  # no bfloat16
_INTEGER_CODES = frozenset(i for i, d in enumerate(_DTYPES) if d is not None and d.kind in "iu")
if "ml_dtypes" in sys.modules:
    _bf16()
_OPS = _core.ops


def _kind(dtype):
    """NumPy's dtype.kind, with 'f' for bfloat16 (ml_dtypes' types are kind 'V')."""
    d = _np_dtype_of(dtype)
    return "f" if _is_bf16(d) else d.kind


def _code(dtype):
    """The _core dtype code of a NumPy-style dtype (TypeError for dtypes loom lacks)."""
    try:  # a dtype argument seen before (a dtype, scalar type or name): one dict lookup, not numpy.dtype's
        return _CODE_OF[dtype]
    except (KeyError, TypeError):  # TypeError: an unhashable argument (a list of fields)
        pass
    try:
        d = _np_dtype_of(dtype)
    except TypeError as e:
        raise TypeError(f"loom: {dtype!r} is not a dtype ({e})") from None
    code = _CODE.get(d.newbyteorder("=") if d.byteorder not in "=|" else d)
    if code is None and _is_bf16(d):
        code = _BF16_CODE
    if code is None:
        raise TypeError(f"loom does not support dtype {d} (supported: {', '.join(_core.dtype_names)})")
    if isinstance(dtype, numpy.dtype) or type(dtype) is str or (type(dtype) is type and (
            dtype in _PY_TYPES or issubclass(dtype, numpy.generic))):
        _CODE_OF[dtype] = code  # immutable arguments only (an object's .dtype attribute could change)
    return code


_PY_TYPES = (bool, int, float, complex)
_CODE_OF: dict = {}  # _code's arguments seen -> their codes (equal arguments name the same dtype)


def _default_dtype(dtype, fallback):
    return _code(fallback if dtype is None else dtype)


def _shape_tuple(shape):
    """A shape argument as a tuple of Python ints, by NumPy's rules: an integer (a 0-d integer array
    too) or a sequence of them; bools and floats are TypeError."""
    plain = _plain_shape(shape)
    if plain is not None:
        return plain
    if shape is None:
        raise TypeError("Use () not None as shape arguments")
    try:
        if isinstance(shape, (int, numpy.integer)) or getattr(shape, "ndim", None) == 0:
            return (_shape_int(shape),)
        return tuple(_shape_int(s) for s in shape)
    except TypeError:
        raise TypeError(f"shape must be an int or a sequence of ints, not {shape!r}") from None


def _plain_shape(shape):
    """shape when it is a tuple of Python ints (the common argument, taken as it is), (shape,) for one
    Python int; None for anything else (_shape_tuple's rules decide those)."""
    if type(shape) is tuple:
        for s in shape:
            if type(s) is not int:
                return None
        return shape
    return (shape,) if type(shape) is int else None


def _shape_int(s):
    if isinstance(s, (bool, numpy.bool_)):
        raise TypeError("a bool is not a length")
    return operator.index(s)


def _norm_axis(axis, ndim):
    a = operator.index(axis)
    if a < -ndim or a >= ndim:
        raise AxisError(f"axis {a} is out of bounds for array of dimension {ndim}")
    return a + ndim if a < 0 else a


def _check_scalar_store(value, dtype, full=False):
    """NumPy's checks of a scalar stored into an integer array through fill or a basic index (full():
    Python ints only; an index array or mask: NumPy's own store checks): an int the dtype cannot hold
    is OverflowError, a float NaN ValueError, an infinity OverflowError, another float is truncated to
    an int and checked as one. NumPy converts Python scalars that way for every integer dtype and NumPy
    scalars for the signed ones only (into unsigned dtypes it casts them: np.int64(300) -> 44)."""
    if dtype.kind not in "iu" or isinstance(value, (bool, numpy.bool_)):
        return
    if full:
        if type(value) is not int:
            return
    elif not (type(value) in (int, float) or (dtype.kind == "i" and isinstance(value, (numpy.integer,
                                                                                       numpy.floating)))):
        return
    if isinstance(value, (float, numpy.floating)):  # converted to a Python int (truncating), then checked
        value = float(value)
        if value != value:
            raise ValueError("cannot convert float NaN to integer")
        if value in (float("inf"), float("-inf")):
            raise OverflowError("cannot convert float infinity to integer")
    value = int(value)
    info = numpy.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise OverflowError(f"Python integer {value} out of bounds for {dtype}")


def _axes_tuple(axis):
    """A reduction's axis argument as a tuple of ints (None stays None). As in NumPy, only a tuple names
    several axes: a list (axis=[0]) is a TypeError, like any other non-integer."""
    if axis is None:
        return None
    axes = tuple(operator.index(a) for a in axis) if isinstance(axis, tuple) else (operator.index(axis),)
    for a in axes:
        if not -2**31 <= a < 2**31:  # out of bounds for any rank (the C API's axes are 32-bit)
            raise AxisError(f"axis {a} is out of bounds for an array of any dimension")
    return axes


def _cur():
    """(kind, index) of the current device (see loom.cuda)."""
    global _current_key
    if _current_key is None:
        from . import cuda  # imported on first use (loom.cuda imports this module)
        _current_key = cuda._current_key
    return _current_key()


_current_key = None


def _from_numpy(a, copy=True, device=None):
    """A loom array from NumPy data: copy=False is a zero-copy host array; copy=True copies onto
    `device` ((kind, index); None: the current device), keeping the order of a's strides (NumPy's
    order 'K': an F-contiguous array stays F-contiguous)."""
    a = numpy.asarray(a)
    if a.dtype.kind in "Mm":  # datetime64 / timedelta64: int64 containers (loom/_temporal.py)
        from . import _temporal
        return _temporal.from_numpy(a, lambda ticks: _from_numpy(ticks, copy, device))
    if a.dtype.byteorder not in "=|" or a.dtype not in _CODE:
        _code(a.dtype)  # raises TypeError for unsupported dtypes
        a = a.astype(a.dtype.newbyteorder("="))
    c_order = a.flags.c_contiguous  # the common case: nothing to reorder
    if not c_order and builtins.any(s % a.itemsize for s in a.strides):
        a = numpy.ascontiguousarray(a)
    if copy and not c_order and a.ndim > 1 and a.size > 1:
        perm = _layout_perm(a.shape, a.strides, a.itemsize, "K")
        if perm != tuple(range(a.ndim)):  # copy the axes in memory order, then view them back
            r = _from_numpy(numpy.ascontiguousarray(a.transpose(perm)), True, device).transpose(_inverse_perm(perm))
            r._base = None  # a copy: it owns its memory (flags.owndata, .base)
            return r
    src = (a,) if not _is_bf16(a.dtype) else (a.view(numpy.uint16), False, _BF16_CODE)  # no buffer format
    if copy:
        kind, index = _cur() if device is None else device
        if kind != 0:
            return _core.to_device(_core.from_buffer(src[0], False, *src[2:]), kind, index)
    return _core.from_buffer(src[0], copy, *src[2:])


# ---- memory order ---------------------------------------------------------------------------------------
def _contiguous(shape, strides, itemsize, order):
    """NumPy's C_CONTIGUOUS ('C') or F_CONTIGUOUS ('F') flag: axes of size 1 may have any stride, and an
    empty array is both."""
    if 0 in shape:
        return True
    dims = list(zip(shape, strides))
    if order == "C":
        dims.reverse()
    expect = itemsize
    for n, s in dims:
        if n != 1 and s != expect:
            return False
        expect *= n
    return True


def _order_name(order, allowed="CFAK", what="order"):
    """NumPy's order argument as one upper-case letter (None is 'K'); ValueError for any other."""
    o = "K" if order is None else order
    if isinstance(o, str) and len(o) == 1 and o.upper() in allowed:
        return o.upper()
    names = ", ".join(repr(c) for c in allowed[:-1]) + f", or {allowed[-1]!r}" if len(allowed) > 1 else repr(allowed)
    raise ValueError(f"{what} must be one of {names} (got {order!r})")


def _layout_perm(shape, strides, itemsize, order):
    """The axes of an array with this geometry in memory order, outermost first, for NumPy's order
    argument: 'C' the axes as they are, 'F' reversed, 'A' as 'F' for an F- and not C-contiguous
    array else as 'C', 'K' by decreasing |stride| (the order its elements lie in memory; ties keep the
    C order)."""
    n = len(shape)
    order = _order_name(order)
    if n <= 1:  # one axis or none: every order's
        return tuple(range(n))
    if order in "AK":
        c = _contiguous(shape, strides, itemsize, "C")
        if c or order == "A" or _contiguous(shape, strides, itemsize, "F"):
            order = "F" if not c and _contiguous(shape, strides, itemsize, "F") else "C"
    if order == "C":
        return tuple(range(n))
    if order == "F":
        return tuple(reversed(range(n)))
    return tuple(sorted(range(n), key=lambda i: -abs(strides[i])))


def _inverse_perm(perm):
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


class _TraceState(threading.local):
    like: Any = None  # a tracer of the @loom.fuse trace this thread is running (_fuse.py); None outside traces
    # (a class default: reading an attribute a thread never set costs no AttributeError, ~0.3 us a call)


_trace = _TraceState()


def _trace_like():
    """A tracer of the @loom.fuse trace running on this thread, or None: constant-only values made inside
    a traced function (arange's iota) are built in the trace's graph with it, so the traced kernels
    compute them (an index, no memory) instead of capturing them as constant input arrays."""
    return _trace.like

