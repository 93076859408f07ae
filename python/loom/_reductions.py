"""_reductions.py: reductions (sum, prod, mean, min, max, any, all, argmin, argmax) as fused graph
nodes, and those built from them (var, std, count_nonzero).
"""
import builtins
import functools
import math
import operator
import warnings

import numpy

from . import _core
from ._common import _np_dtype_of, _OPS, _code, _norm_axis, _axes_tuple
from ._ndarray import _finish, _ComplexWarning, ndarray
from ._creation import asarray
from ._math import sqrt

_RED = {"sum": 0, "prod": 1, "min": 2, "max": 3, "mean": 4, "any": 5, "all": 6, "argmin": 7, "argmax": 8}


def _reduce(name, a, axis, dtype, out, keepdims):
    if type(a) is ndarray and dtype is None and out is None:  # the common call, first (one C call)
        if axis is None:
            if a.size != 1:
                return _core.reduce(_RED[name], a, None, keepdims, -1)
        elif type(axis) is int and -a.ndim <= axis < a.ndim and a.shape[axis] != 1:
            return _core.reduce(_RED[name], a, (axis,), keepdims, -1)
    a = asarray(a)
    axes, code = _axes_tuple(axis), -1 if dtype is None else _code(dtype)
    if code >= 0 and a.dtype.kind == "c" and _np_dtype_of(dtype).kind not in "cb":  # NumPy's cast warning
        warnings.warn("Casting complex values to real discards the imaginary part", _ComplexWarning, stacklevel=3)
    if axes == ():
        # No axis reduced (NumPy's axis=()): each element is a reduction of itself, its identity combined
        # with it (sum: -0.0 + 0 is +0.0; any: x != 0), in the dtype the reduction gives. Computed as the
        # reduction over a length-1 axis of a (size, 1) view, reshaped back: an ordinary reduction kernel on
        # a's device (keepdims changes nothing: no axis goes).
        flat = _core.movement(0, a, (a.size, 1), None, None)
        r = _core.movement(0, _core.reduce(_RED[name], flat, (1,), False, code), a.shape, None, None)
    else:
        r = _core.reduce(_RED[name], a, axes, keepdims, code)
        if _reduced_extents_are_one(a.shape, axes):
            r = _one_element_reduction(name, a, r)
    return _finish(r, out, "unsafe")  # NumPy's reductions cast into out= whatever its dtype


def _reduced_extents_are_one(shape, axes):
    if axes is None:
        return builtins.all(n == 1 for n in shape)
    return builtins.all(shape[_norm_axis(x, len(shape))] == 1 for x in axes)


def _one_element_reduction(name, a, r):
    """The reduction r of a over axes of extent 1 (each result is its identity combined with one element)
    as the elementwise map it is, so that it fuses with what produced a: sum and mean x + 0 (NumPy's
    +0.0 for -0.0) in r's dtype, prod / min / max x itself, any / all x != 0. Dask's aggregate step over
    an axis of one chunk is such a reduction of the chunk step's keepdims result: as a map it joins the
    chunk step's kernel. r itself when the map would not give r's dtype."""
    x = _core.movement(0, a, r.shape, None, None)
    if name in ("any", "all"):
        m = _core.binary(_OPS["ne"], x, False if a.dtype == numpy.bool_ else 0)
    else:
        m = _core.cast(x, r._dtype_code) if a.dtype != r.dtype else x
        if name in ("sum", "mean") and r.dtype.kind in "fc":
            m = _core.binary(_OPS["add"], m, 0.0)
    return m if m.dtype == r.dtype and m.shape == r.shape else r


def sum(a, axis=None, dtype=None, out=None, keepdims=False):
    return _reduce("sum", a, axis, dtype, out, keepdims)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    return _reduce("prod", a, axis, dtype, out, keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """The mean; with an integer dtype, NumPy's: the sum in that dtype, divided as float64, cast back
    (truncated toward zero)."""
    if dtype is not None and _np_dtype_of(dtype).kind in "iu":
        a = asarray(a)
        n = _count(a, axis)
        s = _reduce("sum", a, axis, dtype, None, keepdims)
        return _finish(_core.cast(_core.binary(_OPS["truediv"], s, float(n)), _code(dtype)), out)
    return _reduce("mean", a, axis, dtype, out, keepdims)


def amin(a, axis=None, out=None, keepdims=False):
    return _reduce("min", a, axis, None, out, keepdims)


def amax(a, axis=None, out=None, keepdims=False):
    return _reduce("max", a, axis, None, out, keepdims)


min = amin
max = amax


def any(a, axis=None, out=None, keepdims=False):
    return _reduce("any", a, axis, None, out, keepdims)


def all(a, axis=None, out=None, keepdims=False):
    return _reduce("all", a, axis, None, out, keepdims)


def _count(a, axis):
    """The number of elements a reduction of a over axis (None, an int or a tuple) folds into each result."""
    return a.size if axis is None else math.prod(a.shape[_norm_axis(x, a.ndim)] for x in _axes_tuple(axis))


def _arg(name, a, axis, out, keepdims):
    if type(a) is ndarray and out is None and not keepdims and (
            axis is None or (type(axis) is int and -a.ndim <= axis < a.ndim)):
        return _core.reduce(_RED[name], a, None if axis is None else (axis,), False, -1)  # the common call
    a = asarray(a)
    if axis is None:
        r = _core.reduce(_RED[name], a, None, False, -1)
        if keepdims:
            r = r.reshape((1,) * a.ndim)
    else:
        r = _core.reduce(_RED[name], a, _axes_tuple(operator.index(axis)), keepdims, -1)
    return _finish(r, out)


def argmin(a, axis=None, out=None, keepdims=False):
    return _arg("argmin", a, axis, out, keepdims)


def argmax(a, axis=None, out=None, keepdims=False):
    return _arg("argmax", a, axis, out, keepdims)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a = asarray(a)
    m = mean(a, axis, dtype, None, True)
    d = a - m
    n = _count(a, axis)
    if a.dtype.kind == "c":  # NumPy: |x - mean|^2 = re^2 + im^2, a real result
        re, im = _core.unary(_OPS["real"], d), _core.unary(_OPS["imag"], d)
        d2 = _core.binary(_OPS["add"], _core.binary(_OPS["mul"], re, re), _core.binary(_OPS["mul"], im, im))
    else:
        d2 = d * d
    s = sum(d2, axis, None, None, keepdims)
    return _finish(_core.binary(_OPS["truediv"], s, float(builtins.max(n - ddof, 0))), out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return _finish(sqrt(var(a, axis, dtype, None, ddof, keepdims)), out)


def count_nonzero(a, axis=None, keepdims=False):
    a = asarray(a)
    return sum(_core.binary(_OPS["ne"], a, False if a.dtype == numpy.bool_ else 0), axis, None, None, keepdims)


def _numpy_method(fn, method):
    """fn, except that a NumPy array argument is reduced by its own method, as CuPy's reduction
    functions do (cupy.sum(numpy_array) is numpy_array.sum(): a NumPy result, computed by NumPy)."""
    @functools.wraps(fn)
    def f(a, *args, **kwargs):
        if isinstance(a, numpy.ndarray):
            return getattr(a, method)(*args, **kwargs)
        return fn(a, *args, **kwargs)
    return f


for _fn, _method in ((sum, "sum"), (prod, "prod"), (mean, "mean"), (amin, "min"), (amax, "max"), (any, "any"),
                     (all, "all"), (argmin, "argmin"), (argmax, "argmax"), (var, "var"), (std, "std")):
    globals()[_fn.__name__] = _numpy_method(_fn, _method)
min = amin = globals()["amin"]
max = amax = globals()["amax"]
del _fn, _method

__all__ = [_n for _n, _v in list(globals().items())
           if not _n.startswith("_") and getattr(_v, "__module__", None) == __name__]
