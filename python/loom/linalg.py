"""loom.linalg: norm (built from loom reductions, so it fuses with the expression it reads)."""
import numpy

from ._common import _from_numpy
from ._creation import asarray
from ._math import absolute, sqrt
from ._reductions import amax, amin, sum


def norm(x, ord=None, axis=None, keepdims=False):
    x = asarray(x)
    if x.dtype.kind != "f":
        x = x.astype(numpy.float64)
    if axis is None and ord is None:
        r = sqrt(sum(x * x, axis=None, keepdims=keepdims))
        if keepdims:
            return r.reshape((1,) * x.ndim)
        return r
    if isinstance(axis, int) or (axis is None and x.ndim == 1):
        ax = axis
        if ord is None or ord == 2:
            return sqrt(sum(x * x, axis=ax, keepdims=keepdims))
        if ord == numpy.inf:
            return amax(absolute(x), axis=ax, keepdims=keepdims)
        if ord == -numpy.inf:
            return amin(absolute(x), axis=ax, keepdims=keepdims)
        if ord == 1:
            return sum(absolute(x), axis=ax, keepdims=keepdims)
        if ord == 0:
            return sum((x != 0).astype(x.dtype), axis=ax, keepdims=keepdims)
        return sum(absolute(x) ** ord, axis=ax, keepdims=keepdims) ** (1.0 / ord)
    if ord in (None, "fro"):
        return sqrt(sum(x * x, axis=axis, keepdims=keepdims))
    return _from_numpy(numpy.linalg.norm(x.get(), ord, axis, keepdims), copy=True)
