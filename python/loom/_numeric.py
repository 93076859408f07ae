"""_numeric.py: differences, NaN replacement, products of vectors and the small elementwise helpers
NumPy defines outside its ufuncs.

On the device (loom graphs, fused): diff and ediff1d (shifted slices), nan_to_num, outer, kron,
vander, trapezoid, sinc, fix, isposinf, isneginf, unwrap, polyval (Horner), append (concatenate), cross,
pad (constant). Through NumPy on the host (the README lists them): convolve, correlate, interp (but of a
GPU array: _order_stats.py), trim_zeros, i0, real_if_close, insert, resize; delete keeps NumPy's index
rules (on the host, over positions) and gathers on the device.
"""
import numpy

from . import _core
from ._common import _OPS, _code, _kind, _norm_axis
from ._ndarray import ndarray, _operand, _finish, _host_function
from ._creation import asarray


def _u(name, x):
    return _core.unary(_OPS[name], x)


def _b(name, x, y):
    return _core.binary(_OPS[name], x, y)


def _slice_axis(a, axis, s):
    key = [slice(None)] * a.ndim
    key[axis] = s
    return a[tuple(key)]


def diff(a, n=1, axis=-1, prepend=numpy._NoValue, append=numpy._NoValue):
    """The n-th discrete difference along axis, a[1:] - a[:-1] applied n times (numpy.diff; booleans
    differ by not_equal). prepend/append are joined first (concatenate, through the host)."""
    if n == 0:
        return asarray(a)
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n!r}")
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = _norm_axis(axis, a.ndim)
    parts = []
    for v in (prepend, append):
        if v is numpy._NoValue:
            parts.append(None)
            continue
        v = asarray(v)
        if v.ndim == 0:
            from ._manipulation import broadcast_to
            shape = list(a.shape)
            shape[axis] = 1
            v = broadcast_to(v, tuple(shape))
        parts.append(v)
    if parts[0] is not None or parts[1] is not None:
        from ._manipulation import concatenate
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis=axis)
    op = "ne" if a.dtype == numpy.bool_ else "sub"
    for _ in range(n):
        a = _b(op, _slice_axis(a, axis, slice(1, None)), _slice_axis(a, axis, slice(None, -1)))
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """The differences of the flattened array, with to_begin/to_end joined around them (numpy.ediff1d)."""
    a = asarray(ary).ravel()
    d = _b("sub", a[1:], a[:-1])
    if to_begin is None and to_end is None:
        return d
    from ._manipulation import concatenate
    def part(v, name):
        v = asarray(v)
        if not numpy.can_cast(v.dtype, d.dtype, "same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the `same_kind` rule.")
        return v.astype(d.dtype).ravel()

    parts = [part(to_begin, "to_begin")] if to_begin is not None else []
    parts.append(d)
    if to_end is not None:
        parts.append(part(to_end, "to_end"))
    return concatenate(parts)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, +inf -> posinf (default: the dtype's largest), -inf -> neginf (its most negative), for
    the real and imaginary parts of complex values (numpy.nan_to_num); copy=False writes x in place."""
    x = _operand(x)
    scalar = not isinstance(x, ndarray)
    x = asarray(x)
    if _kind(x.dtype) not in "fc":
        return x.copy() if copy and not scalar else x

    def fix(v):
        fi = numpy.finfo(v.dtype)
        hi = float(fi.max) if posinf is None else _scalar(posinf)
        lo = float(fi.min) if neginf is None else _scalar(neginf)
        r = _core.where(_u("isnan", v), _scalar(nan), v)
        r = _core.where(_b("eq", v, numpy.inf), hi, r)
        return _core.cast(_core.where(_b("eq", v, -numpy.inf), lo, r), v._dtype_code)

    if x.dtype.kind == "c":
        r = _core.cast(_b("complex", fix(_u("real", x)), fix(_u("imag", x))), x._dtype_code)
    else:
        r = fix(x)
    if not copy:
        x[...] = r
        return x
    return r


def _scalar(v):
    """A replacement value of nan_to_num: a scalar as a Python number, an array (NumPy's broadcasting
    replacement values) as a loom array."""
    if isinstance(v, numpy.generic) or (isinstance(v, (ndarray, numpy.ndarray)) and v.ndim == 0):
        return v.item()
    return asarray(v) if isinstance(v, (ndarray, numpy.ndarray, list, tuple)) else v


def outer(a, b, out=None):
    """The outer product of the flattened a and b (numpy.outer): one fused elementwise kernel."""
    a, b = asarray(a), asarray(b)
    # the flattening reshapes as graph nodes (no views made, a pending operand not evaluated first)
    col = _core.movement(0, a, (a.size, 1), None, None)
    row = _core.movement(0, b, (1, b.size), None, None)
    return _finish(_b("mul", col, row), out)


def kron(a, b):
    """The Kronecker product (numpy.kron): a broadcast product reshaped, one fused kernel."""
    a, b = asarray(a), asarray(b)
    nd = max(a.ndim, b.ndim)
    a = a.reshape((1,) * (nd - a.ndim) + a.shape)
    b = b.reshape((1,) * (nd - b.ndim) + b.shape)
    ai = a.reshape(tuple(x for n in a.shape for x in (n, 1)))
    bi = b.reshape(tuple(x for n in b.shape for x in (1, n)))
    r = _b("mul", ai, bi)
    return r.reshape(tuple(m * n for m, n in zip(a.shape, b.shape)))


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-d x: columns x**(N-1) ... x**0 (numpy.vander), by repeated
    products as NumPy computes them (exact for integers), fused."""
    x = asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = x.shape[0] if N is None else int(N)
    if n < 0:
        raise ValueError("N must be non-negative")
    rt = numpy.promote_types(x.dtype, numpy.int64)  # NumPy's result dtype: float32 becomes float64
    xc = _core.cast(x, _code(rt)).reshape((x.shape[0], 1))
    cols, p = [], None
    from ._creation import ones
    for i in range(n):
        p = ones((x.shape[0], 1), rt) if i == 0 else (xc if i == 1 else _b("mul", p, xc))
        cols.append(p)
    if not increasing:
        cols.reverse()
    if not cols:
        from ._creation import empty
        return empty((x.shape[0], 0), rt)
    from ._manipulation import concatenate
    return concatenate(cols, axis=1)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The integral of y by the trapezoidal rule along axis (numpy.trapezoid), fused."""
    y = asarray(y)
    axis = _norm_axis(axis, y.ndim)
    if x is None:
        d = dx
    else:
        x = asarray(x)
        d = diff(x, axis=axis if x.ndim == y.ndim else -1)
        if x.ndim == 1 and y.ndim > 1:
            d = d.reshape(tuple(-1 if i == axis else 1 for i in range(y.ndim)))
    mid = _b("add", _slice_axis(y, axis, slice(1, None)), _slice_axis(y, axis, slice(None, -1)))
    from ._reductions import sum as _sum
    return _sum(_b("truediv", _b("mul", d, mid), 2.0), axis)


def sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (numpy.sinc), fused."""
    x = asarray(x)
    if _kind(x.dtype) in "biu":
        x = _core.cast(x, _code(numpy.float64))
    y = _b("mul", x, numpy.pi)
    r = _b("truediv", _u("sin", y), y)
    return _core.cast(_core.where(_b("eq", x, 0), 1, r), r._dtype_code)


def fix(x, out=None):
    """Rounds toward zero (numpy.fix): trunc, keeping the dtype."""
    from ._math import trunc
    return trunc(x, out=out)


def isposinf(x, out=None):
    """True where x is +inf (numpy.isposinf)."""
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("This operation is not supported for complex values because it would be ambiguous.")
    return _finish(_b("eq", x, numpy.inf) if _kind(x.dtype) == "f" else _b("ne", x, x), out)


def isneginf(x, out=None):
    """True where x is -inf (numpy.isneginf)."""
    x = asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("This operation is not supported for complex values because it would be ambiguous.")
    return _finish(_b("eq", x, -numpy.inf) if _kind(x.dtype) == "f" else _b("ne", x, x), out)




def common_type(*arrays):
    """The inexact scalar type all of arrays convert to (numpy.common_type: integers count as float64),
    from their dtypes alone: loom and NumPy arrays alike, no data read."""
    return numpy.common_type(*[numpy.empty(0, a.dtype if isinstance(a, (ndarray, numpy.ndarray))
                                           else numpy.asarray(a).dtype) for a in arrays])


for _name in ("convolve", "correlate", "interp", "unwrap", "cross", "trim_zeros", "i0", "real_if_close", "pad",
              "delete", "insert", "append", "resize", "polyval", "polyfit", "roots", "polyadd", "polysub",
              "polymul", "polyder", "polyint", "poly"):
    if hasattr(numpy, _name):
        globals()[_name] = _host_function(_name, __name__)
del _name
_host_pad = globals()["pad"]  # made by the loop above: every mode but a scalar constant
_host_interp = globals()["interp"]
_host_unwrap, _host_polyval, _host_append = globals()["unwrap"], globals()["polyval"], globals()["append"]
_host_cross = globals()["cross"]


_host_delete = globals()["delete"]


def delete(arr, obj, axis=None):
    """numpy.delete of a loom array on its device: the kept positions along the axis are NumPy's own
    (numpy.delete of an index range, so its index rules and errors), read by one gather (take)."""
    if not isinstance(arr, ndarray):
        return _host_delete(arr, obj, axis)
    a = arr.ravel() if axis is None else arr
    ax = 0 if axis is None else _norm_axis(axis, a.ndim)
    if a.ndim == 0:
        return _host_delete(arr, obj, axis)
    idx = obj.get() if isinstance(obj, ndarray) else obj
    kept = numpy.delete(numpy.arange(a.shape[ax]), idx)
    from ._selection import take
    return take(a, kept, axis=ax)


_CROSS_2D: list[bool] = []


def _numpy_cross_takes_2d():
    """Whether this NumPy still crosses 2-d vectors (deprecated in 2.0 with a warning, an error since 2.5):
    asked of NumPy once, so loom answers as the installed NumPy does."""
    if not _CROSS_2D:
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                numpy.cross(numpy.ones(2), numpy.ones(3))
                _CROSS_2D.append(True)
            except ValueError:
                _CROSS_2D.append(False)
    return _CROSS_2D[0]


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """numpy.cross of loom arrays on the device: NumPy's checks, warning and products in its order (each
    component a product minus a product in the promoted dtype), the components stacked along axisc."""
    if not (isinstance(a, ndarray) or isinstance(b, ndarray)):
        return _host_cross(a, b, axisa, axisb, axisc, axis)
    import warnings
    from ._manipulation import moveaxis, stack
    if axis is not None:
        axisa, axisb, axisc = (axis,) * 3
    a, b = asarray(a), asarray(b)
    if a.ndim < 1 or b.ndim < 1:
        raise ValueError("At least one array has zero dimension")
    a = moveaxis(a, _norm_axis(axisa, a.ndim), -1)
    b = moveaxis(b, _norm_axis(axisb, b.ndim), -1)
    na, nb = a.shape[-1], b.shape[-1]
    if na not in (2, 3) or nb not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    if (na == 2 or nb == 2) and not _numpy_cross_takes_2d():
        raise ValueError("Both input arrays must be (arrays of) 3-dimensional vectors, but they are "
                         f"{na} and {nb} dimensional instead.")
    if na == 2 or nb == 2:
        warnings.warn("Arrays of 2-dimensional vectors are deprecated. Use arrays of 3-dimensional vectors "
                      "instead. (deprecated in NumPy 2.0)", DeprecationWarning, stacklevel=2)
    dtype = numpy.promote_types(a.dtype, b.dtype)
    # no copy where the dtype is already right: indexing a pending copy would evaluate it on its own
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    a0, a1, b0, b1 = a[..., 0], a[..., 1], b[..., 0], b[..., 1]
    a2 = a[..., 2] if na == 3 else None
    b2 = b[..., 2] if nb == 3 else None
    if na == 2 and nb == 2:
        return a0 * b1 - a1 * b0
    if na == 2:
        comps = [a1 * b2, -(a0 * b2), a0 * b1 - a1 * b0]
    elif nb == 2:
        comps = [-(a2 * b1), a2 * b0, a0 * b1 - a1 * b0]
    else:
        comps = [a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0]
    cp = stack(comps, axis=-1)  # each component has the broadcast shape of a's and b's vectors
    return moveaxis(cp, -1, _norm_axis(axisc, cp.ndim))


def unwrap(p, discont=None, axis=-1, *, period=2 * numpy.pi):
    """numpy.unwrap of a loom array on its device, NumPy's steps as loom ops (diff, the wrapped difference,
    a cumulative sum of the corrections: a scan kernel); other inputs NumPy's on the host."""
    if not isinstance(p, ndarray) or p.ndim == 0:
        return _host_unwrap(p, discont, axis, period=period)
    ax = _norm_axis(axis, p.ndim)
    dd = diff(p, axis=ax)
    if discont is None:
        discont = period / 2
    dtype = numpy.result_type(numpy.empty(0, dd.dtype), period)
    if dtype.kind in "iu":
        high, rem = divmod(period, 2)
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    low = -high
    ddmod = (dd - low) % period + low
    if ambiguous:
        ddmod = _core.where((ddmod == low) & (dd > 0), _core.cast(asarray(high), ddmod._dtype_code), ddmod)
    correct = ddmod - dd
    correct = _core.where(abs(dd) < discont, _core.cast(asarray(0), correct._dtype_code), correct)
    from ._sorting import cumsum
    from ._manipulation import concatenate
    head = (slice(None),) * ax
    rest = p[head + (slice(1, None),)] + cumsum(correct, axis=ax)
    return concatenate((p[head + (slice(0, 1),)].astype(dtype), rest.astype(dtype)), axis=ax)


def polyval(p, x):
    """numpy.polyval by Horner's rule on the device when p or x is a loom array (one fused kernel: y = y * x +
    p[i], from zeros of x's dtype as NumPy starts); poly1d arguments NumPy's."""
    from ._polynomial import poly1d
    if any(isinstance(v, (numpy.poly1d, poly1d)) for v in (p, x)) or \
            not (isinstance(p, ndarray) or isinstance(x, ndarray)):
        return _host_polyval(p, x)  # a poly1d argument gives a poly1d (composition)
    x = asarray(x)
    coeffs = p if isinstance(p, ndarray) else numpy.asarray(p)
    y = _core.where(True, _core.cast(asarray(0), x._dtype_code), x)  # zeros_like(x): x's shape and dtype
    for i in range(len(coeffs)):  # a 0-d p raises TypeError, as NumPy's iteration does
        pv = coeffs[i] if isinstance(coeffs, ndarray) else asarray(coeffs[i])  # strong, as NumPy's scalars
        y = y * x + pv
    return y


def append(arr, values, axis=None):
    """numpy.append as loom's concatenate (on the device): both raveled when axis is None."""
    if not isinstance(arr, ndarray) and not isinstance(values, ndarray):
        return _host_append(arr, values, axis)
    from ._manipulation import concatenate
    arr = asarray(arr)
    if axis is None:
        arr = arr.ravel() if arr.ndim != 1 else arr
        values = asarray(values).ravel()
        axis = arr.ndim - 1
    return concatenate((arr, values), axis=axis)


def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy.interp: of a GPU array (any LOOM_SORT_ENGINE=network array, or a host array of many points) on its
    device, NumPy's float64 C loop point for point (_order_stats.py); period= and complex fp, and host
    arrays of few points, NumPy's on a host copy."""
    from . import _order_stats
    r = _order_stats.interp_or_none(x, xp, fp, left, right, period)
    return r if r is not None else _host_interp(x, xp, fp, left, right, period)


def pad(array, pad_width, mode="constant", **kwargs):
    """numpy.pad. mode='constant' with a scalar constant_values runs on the array's device: a new array,
    the input copied into its interior and the constant written into the pad slabs of each axis (the output
    written once). Other modes and per-axis constants are NumPy's on the host."""
    cv = kwargs.get("constant_values", 0)
    if not (isinstance(mode, str) and mode == "constant") or set(kwargs) - {"constant_values"} \
            or numpy.ndim(cv) != 0 or isinstance(cv, ndarray):
        return _host_pad(array, pad_width, mode, **kwargs)
    a = asarray(array)
    # NumPy's own checks and errors (pad_width's type, shape and sign; the constant for the dtype), on an
    # array of no elements of the same rank and dtype
    numpy.pad(numpy.empty((0,) * a.ndim, a.dtype), pad_width, constant_values=cv)
    pw = numpy.broadcast_to(numpy.asarray(pad_width), (a.ndim, 2)).astype(numpy.int64)
    from ._creation import _empty_in_order
    cv = numpy.asarray(cv)[()]  # as NumPy: a NumPy value, cast unsafely into the array's dtype (-3 into uint64 wraps)
    shape = tuple(int(n + b + e) for n, (b, e) in zip(a.shape, pw))
    out = _empty_in_order(shape, a.dtype, False, a._device)
    if a.size:
        out[tuple(slice(int(b), int(b) + n) for n, (b, _) in zip(a.shape, pw))] = a
    for ax, (b, e) in enumerate(pw.tolist()):
        lead = (slice(None),) * ax
        if b:
            out[lead + (slice(0, b),)] = cv
        if e:
            out[lead + (slice(shape[ax] - e, shape[ax]),)] = cv
    return out

def min_scalar_type(a, /):
    """numpy.min_scalar_type; for a loom array (or a GPU array object: __cupy_get_ndarray__, CUDA Array
    Interface), and for lists of them, the arrays' dtype, as CuPy: a value-based answer would read the
    device. Anything else is NumPy's answer."""
    from ._creation import _cupy_like, _has_cai, _from_cai
    items = a if isinstance(a, (list, tuple)) else [a]
    arrays = []
    for x in items:
        x = _cupy_like(x)
        if not isinstance(x, ndarray) and _has_cai(x):
            x = _from_cai(x)
        if not isinstance(x, ndarray):
            return numpy.min_scalar_type(a)
        arrays.append(x)
    if not arrays:
        return numpy.min_scalar_type(a)
    dt = arrays[0].dtype
    return dt if all(x.dtype == dt for x in arrays) else numpy.result_type(*arrays)


__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
