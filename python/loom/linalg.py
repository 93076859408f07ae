"""loom.linalg: norm (built from loom reductions, so it fuses with the expression it reads)."""
import numpy

from . import _array as _a


def norm(x, ord=None, axis=None, keepdims=False):
    x = _a.asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(numpy.float64)
    if axis is None and ord is None:
        r = _a.sqrt(_a.sum(x * x, axis=None, keepdims=keepdims))
        if keepdims:
            return r.reshape((1,) * x.ndim)
        return r
    if isinstance(axis, int) or (axis is None and x.ndim == 1):
        ax = axis
        if ord is None or ord == 2:
            return _a.sqrt(_a.sum(x * x, axis=ax, keepdims=keepdims))
        if ord == numpy.inf:
            return _a.amax(_a.absolute(x), axis=ax, keepdims=keepdims)
        if ord == -numpy.inf:
            return _a.amin(_a.absolute(x), axis=ax, keepdims=keepdims)
        if ord == 1:
            return _a.sum(_a.absolute(x), axis=ax, keepdims=keepdims)
        if ord == 0:
            return _a.sum((x != 0).astype(x.dtype), axis=ax, keepdims=keepdims)
        return _a.sum(_a.absolute(x) ** ord, axis=ax, keepdims=keepdims) ** (1.0 / ord)
    if ord in (None, "fro"):
        return _a.sqrt(_a.sum(x * x, axis=axis, keepdims=keepdims))
    return _a._from_numpy(numpy.linalg.norm(x.get(), ord, axis, keepdims), copy=True)
